//! Expressions of [`crate::ir`] written as `.eqm` expressions, with the state variables that
//! builtins with memory (smooths, material delays, trend, `INIT`) need.
//!
//! Input: an expression and the identifiers of the model's variables. Output: its `.eqm`
//! text, and helper declarations and equations appended to [`Helpers`]. Every relation is
//! wrapped in `noEvent`: system-dynamics tools evaluate a condition once per DT and never
//! stop a step where it changes, so neither may the imported model. XMILE's logical values
//! are numbers (true is 1), so every expression has a numeric form and a Boolean form.
//! `DELAY` and `PREVIOUS` read the history the simulation keeps of their input (`delay`),
//! exact on the grid of steps. Builtins without a written form here (`NPV`, `STDDEV`, ...)
//! are E1002 diagnostics, never approximated.

use super::arrays::{Arrays, Element};
use super::start::StartValues;
use crate::ir::{BinaryOp, Builtin, Expr, ExprKind, Function, GraphKind, GraphicalFunction, Macro, Subscript, UnaryOp};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use std::collections::HashMap;

/// The declarations, equations and initial equations of the hidden state variables and
/// tables the expressions of a model need.
#[derive(Debug, Default)]
pub(crate) struct Helpers {
    pub(crate) declarations: Vec<String>,
    pub(crate) equations: Vec<String>,
    pub(crate) initial_equations: Vec<String>,
    count: usize,
    /// The macros being written out, innermost last (a macro may not call itself).
    pub(crate) inlining: Vec<String>,
    /// Functions the helpers call, each its lines, written in the model once.
    pub(crate) functions: Vec<String>,
    /// The helper array of each call written out as an array (`ALLOCATE BY PRIORITY`), by the
    /// call's text: the elements of one group share it.
    pub(crate) arrays: HashMap<String, String>,
    /// The identifier of each function of the model's own (`Writer::model_function`), once
    /// written.
    model_functions: HashMap<ModelFunction, String>,
    /// The random calls without a seed so far: each takes its place as its seed.
    pub(crate) unseeded_random_calls: usize,
}

/// The functions the writer adds to a model for the builtins that need one, each written once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ModelFunction {
    /// Vensim's `VECTOR SORT ORDER` and `VECTOR RANK`.
    VectorOrder,
    /// Vensim's `VECTOR REORDER`.
    VectorElement,
    /// Vensim's `VECTOR SELECT`.
    VectorSelect,
    /// The complementary error function of `ALLOCATE AVAILABLE`.
    Erfc,
    AllocateByPriority,
    AllocateAvailable,
    /// The value of a step of a random stream.
    RandomDraw,
    /// Vensim's `LOOKUP INVERT`.
    LookupInvert,
}

impl Helpers {
    /// A fresh identifier of a helper, `'<base> k'` (a space cannot occur in a name the
    /// writer gives a variable of the file without quotes, and the counter keeps them apart).
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        self.count += 1;
        format!("'{base} {}'", self.count)
    }
}

/// What an expression writer needs to know of the model.
pub(crate) struct Scope<'a> {
    /// The identifier of each variable, by canonical key.
    pub(crate) ids: &'a HashMap<String, String>,
    /// The identifier of the table parameter of each graphical function, by canonical key.
    pub(crate) tables: &'a HashMap<String, (String, GraphKind)>,
    pub(crate) dt: &'a str,
    pub(crate) start: &'a str,
    pub(crate) stop: &'a str,
    pub(crate) arrays: &'a Arrays,
    /// The function of each macro with an expression as its value, by the macro's canonical
    /// name.
    pub(crate) macros: &'a HashMap<String, String>,
    /// Every macro of the file, by its canonical name (those whose value is a variable of
    /// their body are written out at each call).
    pub(crate) macro_bodies: &'a HashMap<String, &'a Macro>,
    /// Whether the expressions are a macro's body (a function: no time, no memory).
    pub(crate) in_function: bool,
    /// The values at the start of the run that shape the model (the orders of `SMTHN` and
    /// `DELAYN`).
    pub(crate) start_values: &'a StartValues,
}

pub(crate) fn unsupported(expr: &Expr, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E1002",
        format!("EQM does not import {what}"),
        expr.span,
        "not supported",
    )
}

/// A number as `.eqm` writes it, exactly (Rust's shortest representation that reads back
/// as the same double).
pub(crate) fn number(value: f64) -> String {
    let text = format!("{value:?}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

/// The table parameter of a graphical function: `[x1, y1; x2, y2; ...]`.
pub(crate) fn table(graph: &GraphicalFunction) -> String {
    let rows: Vec<String> = graph
        .x
        .iter()
        .zip(&graph.y)
        .map(|(x, y)| format!("{}, {}", number(*x), number(*y)))
        .collect();
    format!("[{}]", rows.join("; "))
}

/// The call of the library's table lookup for a graphical function of `kind`.
pub(crate) fn lookup_call(table: &str, input: &str, kind: GraphKind) -> String {
    let (interpolation, extrapolation) = graph_options(kind);
    if kind != GraphKind::Raw {
        return format!("SystemDynamics.Converters.graphLookup({table}, {input}, {interpolation}, {extrapolation})");
    }
    // The last x at or left of the input, read from the table of the x values against
    // themselves: the input is a point's x where it is that x. The times of a run are sums
    // of binary fractions and a data file's are decimals (3*0.1 is not 0.3), so "is" allows a
    // relative 1e-9.
    let tolerance = format!("1e-9*max(1, abs({input}))");
    let near = format!("{input} + {tolerance}");
    let value = format!("SystemDynamics.Converters.graphLookup({table}, {near}, {interpolation}, {extrapolation})");
    let at = format!(
        "SystemDynamics.Converters.graphLookup([{table}[:, 1], {table}[:, 1]], {near}, {interpolation}, {extrapolation})"
    );
    // No event: the tolerance's `max` and `abs` switch where no step needs to end.
    format!(
        "noEvent(if abs({at} - ({input})) <= {tolerance} then {value} else {})",
        number(crate::vensim::VENSIM_NA)
    )
}

/// The library's interpolation and extrapolation of a graphical function of `kind`.
pub(crate) fn graph_options(kind: GraphKind) -> (&'static str, &'static str) {
    match kind {
        GraphKind::Continuous => (
            "SystemDynamics.Converters.Interpolation.linear",
            "SystemDynamics.Converters.Extrapolation.clamp",
        ),
        GraphKind::Extrapolate => (
            "SystemDynamics.Converters.Interpolation.linear",
            "SystemDynamics.Converters.Extrapolation.linear",
        ),
        GraphKind::Discrete | GraphKind::Raw => (
            "SystemDynamics.Converters.Interpolation.step",
            "SystemDynamics.Converters.Extrapolation.clamp",
        ),
    }
}

/// Binding strength of an operator in `.eqm` (higher binds tighter).
fn precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Or => 1,
        BinaryOp::And => 2,
        BinaryOp::Eq
        | BinaryOp::NotEq
        | BinaryOp::Less
        | BinaryOp::LessEq
        | BinaryOp::Greater
        | BinaryOp::GreaterEq => 4,
        BinaryOp::Add | BinaryOp::Sub => 5,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => 6,
        BinaryOp::Pow => 8,
    }
}

fn is_logical(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Binary { op, .. } => precedence(*op) <= 4,
        ExprKind::Unary { op: UnaryOp::Not, .. } => true,
        _ => false,
    }
}

pub(crate) struct Writer<'s, 'h> {
    pub(crate) scope: &'s Scope<'s>,
    pub(crate) helpers: &'h mut Helpers,
    /// The element being defined (empty for a scalar).
    pub(crate) element: &'s Element,
}

impl<'s> Writer<'s, '_> {
    /// The identifier of the model's function `kind`, written the first time (as `base` with
    /// a number, described by `what`, its declarations and algorithm `body`).
    pub(crate) fn model_function(&mut self, kind: ModelFunction, base: &str, what: &str, body: &str) -> String {
        if let Some(id) = self.helpers.model_functions.get(&kind) {
            return id.clone();
        }
        let id = self.helpers.fresh(base);
        self.helpers
            .functions
            .push(format!("  function {id} \"{what}\"\n{body}  end {id};\n"));
        self.helpers.model_functions.insert(kind, id.clone());
        id
    }

    /// The numeric form of `expr`: logical values as 1 and 0.
    pub(crate) fn real(&mut self, expr: &Expr) -> Result<String, Diagnostic> {
        if is_logical(expr) {
            let condition = self.boolean(expr)?;
            return Ok(format!("(if {condition} then 1 else 0)"));
        }
        self.numeric(expr, 0)
    }

    /// The Boolean form of `expr`: a number is true where it is not 0.
    pub(crate) fn boolean(&mut self, expr: &Expr) -> Result<String, Diagnostic> {
        match &expr.kind {
            ExprKind::Binary { op, left, right } if matches!(op, BinaryOp::And | BinaryOp::Or) => {
                let word = if *op == BinaryOp::And { "and" } else { "or" };
                let l = self.boolean(left)?;
                let r = self.boolean(right)?;
                Ok(format!("({l} {word} {r})"))
            }
            ExprKind::Binary { op, left, right } if precedence(*op) == 4 => {
                let symbol = match op {
                    BinaryOp::Eq => "==",
                    BinaryOp::NotEq => "<>",
                    BinaryOp::Less => "<",
                    BinaryOp::LessEq => "<=",
                    BinaryOp::Greater => ">",
                    _ => ">=",
                };
                // An operand that is an `if` expression is parenthesised: it would take the
                // comparison into its `else` branch.
                let l = self.numeric_operand(left, 5)?;
                let r = self.numeric_operand(right, 5)?;
                Ok(format!("noEvent({l} {symbol} {r})"))
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand,
            } => {
                let inner = self.boolean(operand)?;
                Ok(format!("not {inner}"))
            }
            _ => {
                let value = self.real(expr)?;
                Ok(format!("noEvent({value} <> 0)"))
            }
        }
    }

    /// The numeric text of a non-logical expression, parenthesised where its context of
    /// binding strength `context` needs it.
    fn numeric(&mut self, expr: &Expr, context: u8) -> Result<String, Diagnostic> {
        let (text, own) = match &expr.kind {
            // A sign binds like `+` and `-` in `.eqm`: inside a product or after `^` it is
            // parenthesised (`a*(-3)`).
            ExprKind::Number(v) if *v < 0.0 => (number(*v), 5),
            ExprKind::Number(v) => (number(*v), 9),
            ExprKind::Variable { name, subscripts } => {
                let id = self.id_of(expr, name)?;
                let reference = self.scope.arrays.reference(expr, id, name, subscripts, self.element)?;
                (reference, 9)
            }
            ExprKind::Unary { op, operand } => {
                let inner = self.numeric_operand(operand, 7)?;
                match op {
                    UnaryOp::Minus => (format!("-{inner}"), 5),
                    _ => (inner, 7),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let p = precedence(*op);
                // `.eqm` does not chain `^`: a power as the base is parenthesised too.
                let l = self.numeric_operand(left, if *op == BinaryOp::Pow { p + 1 } else { p })?;
                // The right operand of `-`, `/` and `^` binds tighter than the operator.
                let r = self.numeric_operand(right, p + 1)?;
                match op {
                    BinaryOp::Add => (format!("{l} + {r}"), p),
                    BinaryOp::Sub => (format!("{l} - {r}"), p),
                    BinaryOp::Mul => (format!("{l}*{r}"), p),
                    BinaryOp::Div => (format!("{l}/{r}"), p),
                    BinaryOp::Pow => (format!("{l}^{r}"), p),
                    BinaryOp::Mod => {
                        let l = self.real(left)?;
                        let r = self.real(right)?;
                        (format!("noEvent(mod({l}, {r}))"), 9)
                    }
                    _ => unreachable!("logical operators are written by `boolean`"),
                }
            }
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => {
                let c = self.boolean(condition)?;
                let t = self.real(then)?;
                let o = self.real(otherwise)?;
                (format!("if {c} then {t} else {o}"), 0)
            }
            ExprKind::Call { function, args } => (self.call(expr, function, args)?, 9),
        };
        Ok(if own < context || (own == 0 && context > 0) {
            format!("({text})")
        } else {
            text
        })
    }

    /// The identifier of the variable `name` (canonical), or E1004.
    pub(super) fn id_of(&self, expr: &Expr, name: &str) -> Result<&'s str, Diagnostic> {
        self.scope.ids.get(name).map(String::as_str).ok_or_else(|| {
            Diagnostic::error(
                "E1004",
                format!("`{name}` is no variable of this model"),
                expr.span,
                "unknown name",
            )
        })
    }

    /// An array builtin (`SUM`, `MEAN`, `PROD`, `MIN` and `MAX` of one argument, `SIZE`) of
    /// the elements its argument covers, written out.
    fn array_call(&mut self, expr: &Expr, builtin: Builtin, arg: &Expr) -> Result<String, Diagnostic> {
        let items = match &arg.kind {
            ExprKind::Variable { name, subscripts } => {
                let id = self.id_of(arg, name)?;
                self.scope.arrays.expand(arg, id, name, subscripts, self.element)?
            }
            _ => self.expression_items(expr, arg)?,
        };
        let n = items.len();
        if n == 0 {
            return Err(unsupported(expr, "an array function of no elements"));
        }
        Ok(match builtin {
            Builtin::Sum => format!("({})", items.join(" + ")),
            Builtin::Mean => format!("({})/{n}", items.join(" + ")),
            Builtin::Prod => format!("({})", items.join("*")),
            Builtin::Size => n.to_string(),
            // The population's standard deviation (divided by n, as XMILE's STDDEV).
            Builtin::Stddev => {
                let mean = format!("(({})/{n})", items.join(" + "));
                let squares: Vec<String> = items.iter().map(|x| format!("({x} - {mean})^2")).collect();
                format!("sqrt(({})/{n})", squares.join(" + "))
            }
            Builtin::Min | Builtin::Max => {
                let f = if builtin == Builtin::Min { "min" } else { "max" };
                let mut text = items[n - 1].clone();
                for item in items[..n - 1].iter().rev() {
                    text = format!("{f}({item}, {text})");
                }
                format!("noEvent({text})")
            }
            _ => return Err(unsupported(expr, &format!("the array function {builtin:?}"))),
        })
    }

    /// The values an array function of an expression (`SUM(a[d!] * b[d!])`) runs over: the
    /// expression written once for each element of the dimensions its wildcards name, each
    /// of them bound to that element.
    fn expression_items(&mut self, expr: &Expr, arg: &Expr) -> Result<Vec<String>, Diagnostic> {
        let mut ranges: Vec<String> = Vec::new();
        wildcard_ranges(expr, arg, &mut ranges)?;
        let Some(elements) = self.scope.arrays.elements_of(&ranges) else {
            return Err(unsupported(expr, "an array function over an unknown dimension"));
        };
        let mut items = Vec::with_capacity(elements.len());
        for bound in elements {
            let mut context = self.element.clone();
            context.extend(bound);
            let mut writer = Writer {
                scope: self.scope,
                helpers: &mut *self.helpers,
                element: &context,
            };
            let text = writer.real(arg)?;
            items.push(if is_atom(&text) { text } else { format!("({text})") });
        }
        Ok(items)
    }

    /// An operand: its numeric form, in parentheses unless it binds at least as tightly as
    /// `context`.
    fn numeric_operand(&mut self, expr: &Expr, context: u8) -> Result<String, Diagnostic> {
        if is_logical(expr) {
            return self.real(expr);
        }
        self.numeric(expr, context)
    }

    /// The numeric forms of `args`, each in parentheses unless it is a name, a number or a
    /// call, so that it can stand as an operand anywhere.
    fn args(&mut self, args: &[Expr]) -> Result<Vec<String>, Diagnostic> {
        args.iter()
            .map(|a| {
                let text = self.real(a)?;
                Ok(if is_atom(&text) { text } else { format!("({text})") })
            })
            .collect()
    }

    // Long function: one arm per builtin, each a line or two of `.eqm` text.
    fn call(&mut self, expr: &Expr, function: &Function, args: &[Expr]) -> Result<String, Diagnostic> {
        let builtin = match function {
            Function::Builtin(b) => *b,
            Function::Lookup(name) => {
                let Some((table, kind)) = self.scope.tables.get(name) else {
                    return Err(unsupported(expr, "the call of a graphical function that has no table"));
                };
                let input = self.real(&args[0])?;
                return Ok(lookup_call(table, &input, *kind));
            }
            Function::SubscriptedLookup(name, subscripts) => {
                // Each element's table is keyed by the table's name with the element's
                // indices, as the reference to that element reads.
                let element = self
                    .scope
                    .arrays
                    .reference(expr, name, name, subscripts, self.element)?;
                let found = self.scope.tables.get(&element).or_else(|| self.scope.tables.get(name));
                let Some((table, kind)) = found else {
                    return Err(unsupported(
                        expr,
                        "the call of an element of a lookup table that has no table",
                    ));
                };
                let input = self.real(&args[0])?;
                return Ok(lookup_call(table, &input, *kind));
            }
            Function::Macro(name) => {
                if let Some(m) = self
                    .scope
                    .macro_bodies
                    .get(name)
                    .filter(|m| m.value.is_none() || !m.variables.is_empty())
                {
                    return self.inline_macro(expr, m, args);
                }
                let Some(id) = self.scope.macros.get(name) else {
                    return Err(unsupported(expr, &format!("the macro `{name}`")));
                };
                let a = self.args(args)?;
                let a: Vec<&str> = a.iter().map(|x| unwrap(x)).collect();
                return Ok(format!("{id}({})", a.join(", ")));
            }
        };
        if self.scope.in_function && has_memory_or_time(builtin) {
            return Err(unsupported(
                expr,
                &format!("{builtin:?} in a macro (a macro is a function of its parameters)"),
            ));
        }
        if builtin == Builtin::InvertMatrix {
            return self.invert_matrix(expr, args);
        }
        if builtin == Builtin::VectorSelect {
            return self.vector_select(expr, args);
        }
        if matches!(builtin, Builtin::VectorSortOrder | Builtin::VectorRank) {
            return self.vector_order(expr, builtin == Builtin::VectorRank, args);
        }
        if builtin == Builtin::VectorReorder {
            return self.vector_reorder(expr, args);
        }
        if builtin == Builtin::AllocateByPriority {
            return self.allocate_by_priority(expr, args);
        }
        if builtin == Builtin::AllocateAvailable {
            return self.allocate_available(expr, args);
        }
        if is_random(builtin) {
            return self.random(expr, builtin, args);
        }
        if matches!(
            builtin,
            Builtin::LookupExtrapolate | Builtin::LookupForward | Builtin::LookupBackward | Builtin::LookupInvert
        ) {
            return self.lookup_read(expr, builtin, args);
        }
        let whole_array = matches!(
            builtin,
            Builtin::Sum | Builtin::Mean | Builtin::Prod | Builtin::Size | Builtin::Stddev
        ) || (matches!(builtin, Builtin::Min | Builtin::Max) && args.len() == 1);
        if whole_array && args.len() == 1 {
            return self.array_call(expr, builtin, &args[0]);
        }
        let a = self.args(args)?;
        let one = |f: &str| format!("{f}({})", unwrap(&a[0]));
        let dt = self.scope.dt;
        Ok(match builtin {
            Builtin::Abs => format!("noEvent(abs({}))", a[0]),
            Builtin::Sqrt => one("sqrt"),
            Builtin::Exp => one("exp"),
            Builtin::Ln => one("log"),
            Builtin::Log10 => one("log10"),
            Builtin::Sin => one("sin"),
            Builtin::Cos => one("cos"),
            Builtin::Tan => one("tan"),
            Builtin::ArcSin => one("asin"),
            Builtin::ArcCos => one("acos"),
            Builtin::ArcTan => one("atan"),
            Builtin::Sinh => one("sinh"),
            Builtin::Cosh => one("cosh"),
            Builtin::Tanh => one("tanh"),
            Builtin::Int => format!("noEvent(floor({}))", a[0]),
            // Half away from zero.
            Builtin::Round => format!("noEvent(sign({0})*floor(abs({0}) + 0.5))", a[0]),
            Builtin::Sign => format!("noEvent(sign({}))", a[0]),
            Builtin::Min | Builtin::Max if a.len() == 2 => {
                let f = if builtin == Builtin::Min { "min" } else { "max" };
                format!("noEvent({f}({}, {}))", unwrap(&a[0]), unwrap(&a[1]))
            }
            Builtin::Pi => number(std::f64::consts::PI),
            Builtin::Xidz | Builtin::Zidz => {
                let fallback = a.get(2).cloned().unwrap_or_else(|| "0".to_string());
                format!("(if noEvent({1} == 0) then {2} else {0}/{1})", a[0], a[1], fallback)
            }
            Builtin::Time => "time".to_string(),
            Builtin::Dt => dt.to_string(),
            Builtin::StartTime => self.scope.start.to_string(),
            Builtin::StopTime => self.scope.stop.to_string(),
            Builtin::Init => {
                let id = self.helpers.fresh("initial value");
                self.helpers.declarations.push(format!(
                    "parameter Real {id}(fixed = false) \"The value of {} at the start\";",
                    a[0]
                ));
                self.helpers.initial_equations.push(format!("{id} = {};", a[0]));
                id
            }
            Builtin::Step => format!("(if noEvent(time >= {1}) then {0} else 0)", a[0], a[1]),
            Builtin::Ramp => match a.get(2) {
                Some(end) => format!(
                    "(if noEvent(time >= {1}) then {0}*(noEvent(min(time, {2})) - {1}) else 0)",
                    a[0], a[1], end
                ),
                None => format!("(if noEvent(time >= {1}) then {0}*(time - {1}) else 0)", a[0], a[1]),
            },
            Builtin::PulseVolume => self.pulse(&a),
            // Vensim's PULSE(start, width): 1 from `start` for `width`, at least one step; the
            // half-DT margins make the test exact on the grid of steps.
            Builtin::PulseWidth => format!(
                "(if noEvent(time >= {0} - {dt}/2 and time < {0} + max({1}, {dt}) - {dt}/2) then 1 else 0)",
                a[0], a[1]
            ),
            // Vensim's PULSE TRAIN(start, width, interval, end): the pulse of `width` (at
            // least one step) repeated every `interval` from `start` until `end`.
            Builtin::PulseTrain => format!(
                "(if noEvent(time >= {0} - {dt}/2 and time <= {3} + {dt}/2 and mod(time - {0} + {dt}/2, {2}) < max({1}, {dt})) then 1 else 0)",
                a[0], a[1], a[2], a[3]
            ),
            // ACTIVE INITIAL: the initial argument during the initialization only (so a
            // stock's initial value may read it), the value after.
            Builtin::ActiveInitial => format!("(if initial() then {} else {})", a[1], a[0]),
            // SAMPLE IF TRUE: the input where the condition holds, else the value of the step
            // before (the initial value in the first step), kept by a helper that reads its
            // own history one DT back.
            Builtin::SampleIfTrue => {
                let id = self.helpers.fresh("sample");
                self.helpers
                    .declarations
                    .push(format!("Real {id} \"The sample of {} while {} holds\";", a[1], a[0]));
                self.helpers.equations.push(format!(
                    "{id} = if noEvent({0} <> 0) then {1} else if noEvent(time < {start} + {dt}/2) then {2} else delay({id}, {dt});",
                    a[0],
                    a[1],
                    a[2],
                    start = self.scope.start,
                ));
                id
            }
            // No one plays an imported model interactively: the game input is its default.
            Builtin::Game => a[0].clone(),
            Builtin::Smooth1 => self.smooth(&a, 1),
            Builtin::Smooth3 => self.smooth(&a, 3),
            Builtin::SmoothN => {
                let n = order(&args[2], self.scope.start_values)
                    .ok_or_else(|| unsupported(&args[2], "an order of SMTHN that is no whole number"))?;
                let rest = [a[0].clone(), a[1].clone()]
                    .into_iter()
                    .chain(a.get(3).cloned())
                    .collect::<Vec<_>>();
                self.smooth(&rest, n)
            }
            Builtin::Delay1 => self.material_delay(&a, 1),
            Builtin::Delay3 => self.material_delay(&a, 3),
            Builtin::DelayN | Builtin::DelayNStaged => {
                let mut n = order(&args[2], self.scope.start_values)
                    .ok_or_else(|| unsupported(&args[2], "an order of DELAYN that is no whole number"))?;
                // A stage shorter than a step is not kept: the order falls to the number of
                // whole steps in the delay time at the start (at least one), as Vensim's
                // `DELAY N` does.
                if let Some(time) = self.scope.start_values.value(&args[1]) {
                    let steps = (time / self.scope.start_values.dt()).floor().max(1.0);
                    if steps < n as f64 {
                        n = steps as usize;
                    }
                }
                let rest = [a[0].clone(), a[1].clone()]
                    .into_iter()
                    .chain(a.get(3).cloned())
                    .collect::<Vec<_>>();
                if builtin == Builtin::DelayNStaged && !matches!(args[1].kind, ExprKind::Number(_)) {
                    self.staged_delay(&rest, n)
                } else {
                    self.material_delay(&rest, n)
                }
            }
            // The pipeline delay: the input as it was `delay_time` earlier (the simulation keeps
            // its history at every step), the initial value before the start plus the delay
            // (the input's value at the start without one, as `delay` gives).
            Builtin::DelayFixed => match a.get(2) {
                Some(initial) => format!(
                    "(if noEvent(time < {start} + {1}) then {initial} else delay({0}, {1}))",
                    unwrap(&a[0]),
                    unwrap(&a[1]),
                    start = self.scope.start,
                ),
                None => format!("delay({}, {})", unwrap(&a[0]), unwrap(&a[1])),
            },
            // The value one DT earlier: the history the simulation keeps at every step, read
            // exactly on the grid; the initial value (the input's own without one) in the
            // first step.
            Builtin::Previous => {
                let initial = a
                    .get(1)
                    .map_or_else(|| unwrap(&a[0]).to_string(), |i| unwrap(i).to_string());
                format!(
                    "(if noEvent(time < {start} + {dt}/2) then {initial} else delay({0}, {dt}))",
                    unwrap(&a[0]),
                    start = self.scope.start,
                )
            }
            Builtin::Trend => self.trend(&a),
            Builtin::Forecast => {
                let trend_args: Vec<String> = [a[0].clone(), a[1].clone()]
                    .into_iter()
                    .chain(a.get(3).cloned())
                    .collect();
                let trend = self.trend(&trend_args);
                format!("{}*(1 + {trend}*{})", a[0], a[2])
            }
            Builtin::Npv => self.npv(&a),
            other => return Err(unsupported(expr, &format!("the builtin {other:?} here"))),
        })
    }

    /// `NPV(stream, discount_rate [, initial [, factor]])` as Vensim defines it: `(accumulated
    /// + stream*DT*df)*factor`, where the accumulated value starts at `initial` (0) and grows
    /// by `stream*df`, and the discount factor `df` starts at 1 and falls by
    /// `df*discount_rate/(1 + discount_rate*DT)` (so that Euler's steps discount by
    /// `1/(1 + discount_rate*DT)` each); `factor` is 1 without one.
    fn npv(&mut self, a: &[String]) -> String {
        let (stream, rate, dt) = (&a[0], &a[1], self.scope.dt);
        let initial = a.get(2).map_or("0", String::as_str);
        let factor = a.get(3).map_or("1", String::as_str);
        let df = self.helpers.fresh("discount factor");
        let accumulated = self.helpers.fresh("present value");
        for (id, what, start, rate_of_change) in [
            (
                &df,
                "The discount factor",
                "1".to_string(),
                format!("-{df}*{rate}/(1 + {rate}*{dt})"),
            ),
            (
                &accumulated,
                "The discounted sum",
                initial.to_string(),
                format!("{stream}*{df}"),
            ),
        ] {
            self.helpers
                .declarations
                .push(format!("Real {id} \"{what} of the net present value of {stream}\";"));
            self.helpers.initial_equations.push(format!("{id} = {start};"));
            self.helpers.equations.push(format!("der({id}) = {rate_of_change};"));
        }
        format!("(({accumulated} + {stream}*{dt}*{df})*{factor})")
    }

    /// XMILE's `PULSE(volume, first [, interval])`: `volume/DT` during the one step that
    /// starts at `first` (and at every `interval` after it), else 0. The half-DT margins make
    /// the test exact on the grid of steps despite rounding of `time`.
    fn pulse(&mut self, a: &[String]) -> String {
        let dt = self.scope.dt;
        let once = format!("noEvent(time >= {0} - {dt}/2 and time < {0} + {dt}/2)", a[1]);
        match a.get(2) {
            Some(interval) => format!(
                "(if (if noEvent({interval} > 0) then noEvent(time >= {1} - {dt}/2 and mod(time - {1} + {dt}/2, {interval}) < {dt}) else {once}) then {0}/{dt} else 0)",
                a[0], a[1]
            ),
            None => format!("(if {once} then {0}/{dt} else 0)", a[0]),
        }
    }

    /// An exponential smooth of order `n`: `n` first-order smooths in a row, each with a
    /// time constant of `averaging_time/n`, all starting at the initial value (the input's
    /// value at the start by default). Euler's method with the run's DT updates each exactly
    /// as a system-dynamics stock.
    fn smooth(&mut self, a: &[String], n: usize) -> String {
        let (input, time) = (&a[0], &a[1]);
        let initial = a.get(2).unwrap_or(input).clone();
        let mut previous = input.clone();
        let mut last = String::new();
        for _ in 0..n {
            let id = self.helpers.fresh("smooth");
            self.helpers
                .declarations
                .push(format!("Real {id} \"A stage of an exponential smooth of {input}\";"));
            self.helpers.initial_equations.push(format!("{id} = {initial};"));
            let stage_time = if n == 1 { time.clone() } else { format!("({time}/{n})") };
            self.helpers
                .equations
                .push(format!("der({id}) = ({previous} - {id})/{stage_time};"));
            previous = id.clone();
            last = id;
        }
        last
    }

    /// A material delay of order `n`: `n` stocks in a row, each drained at its content over
    /// `delay_time/n`; the outflow of the last is the value. Each starts with
    /// `initial*delay_time/n` (the input's value at the start by default), so the delay starts
    /// in equilibrium.
    fn material_delay(&mut self, a: &[String], n: usize) -> String {
        let (input, time) = (&a[0], &a[1]);
        let initial = a.get(2).unwrap_or(input).clone();
        let stage_time = if n == 1 { time.clone() } else { format!("({time}/{n})") };
        let mut inflow = input.clone();
        for _ in 0..n {
            inflow = self.delay_stage(input, &format!("{initial}*{stage_time}"), &inflow, &stage_time);
        }
        inflow
    }

    /// One stage of a material delay of `input`: a stock starting at `content`, filled by
    /// `inflow` and drained at its content over `stage_time`; the drain is returned, the next
    /// stage's inflow.
    fn delay_stage(&mut self, input: &str, content: &str, inflow: &str, stage_time: &str) -> String {
        let id = self.helpers.fresh("delay stage");
        self.helpers
            .declarations
            .push(format!("Real {id} \"A stage of a material delay of {input}\";"));
        self.helpers.initial_equations.push(format!("{id} = {content};"));
        self.helpers
            .equations
            .push(format!("der({id}) = {inflow} - {id}/{stage_time};"));
        format!("{id}/{stage_time}")
    }

    /// Vensim's `DELAY N` of a delay time that may change: the stages of
    /// [`Self::material_delay`], the `k`-th (from 1) drained at its content over `T_k/n`, where
    /// `T_k` is the delay time `k - 1` steps before (its value at the start before then), read
    /// from the history the simulation keeps on the grid of steps.
    fn staged_delay(&mut self, a: &[String], n: usize) -> String {
        let (input, time) = (&a[0], &a[1]);
        let initial = a.get(2).unwrap_or(input).clone();
        let (dt, start) = (self.scope.dt, self.scope.start);
        // Before the start plus `k` steps a stage reads the delay time's start value (the
        // history holds no value before the run is initialized).
        let at_start = self.helpers.fresh("initial value");
        self.helpers.declarations.push(format!(
            "parameter Real {at_start}(fixed = false) \"The value of {time} at the start\";"
        ));
        self.helpers.initial_equations.push(format!("{at_start} = {time};"));
        let mut inflow = input.clone();
        for k in 0..n {
            let stage_time = if k == 0 {
                format!("({time}/{n})")
            } else {
                format!(
                    "((if noEvent(time < {start} + {}*{dt}) then {at_start} else delay({}, {k}*{dt}))/{n})",
                    number(k as f64 - 0.5),
                    unwrap(time)
                )
            };
            inflow = self.delay_stage(input, &format!("{initial}*({time}/{n})"), &inflow, &stage_time);
        }
        inflow
    }

    /// XMILE's `TREND(input, averaging_time [, initial_trend])`: `(input - average)/(average*
    /// averaging_time)`, where the average is a first-order smooth of the input starting at
    /// `input/(1 + initial_trend*averaging_time)`.
    fn trend(&mut self, a: &[String]) -> String {
        let (input, time) = (&a[0], &a[1]);
        let initial_trend = a.get(2).cloned().unwrap_or_else(|| "0".to_string());
        let initial = format!("{input}/(1 + {initial_trend}*{time})");
        let average = self.smooth(&[input.clone(), time.clone(), initial], 1);
        format!("({input} - {average})/({average}*{time})")
    }
}

/// Adds to `ranges` the dimensions that the `dim!` subscripts in `arg` name (in the order they
/// are met, each once): the dimensions an array function of `arg` runs over.
pub(crate) fn wildcard_ranges(expr: &Expr, arg: &Expr, ranges: &mut Vec<String>) -> Result<(), Diagnostic> {
    let mut stack = vec![arg];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Variable { subscripts, .. } => {
                for s in subscripts {
                    match s {
                        Subscript::Wildcard(Some(r)) => {
                            let r = canonical(r);
                            if !ranges.contains(&r) {
                                ranges.push(r);
                            }
                        }
                        Subscript::Wildcard(None) => {
                            return Err(unsupported(expr, "an array function of an expression with `*`"));
                        }
                        Subscript::Index(i) => stack.push(i),
                        _ => {}
                    }
                }
            }
            ExprKind::Unary { operand, .. } => stack.push(operand),
            ExprKind::Binary { left, right, .. } => {
                stack.push(right);
                stack.push(left);
            }
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => stack.extend([otherwise.as_ref(), then, condition]),
            ExprKind::Call { args, .. } => stack.extend(args.iter().rev()),
            ExprKind::Number(_) => {}
        }
    }
    Ok(())
}

/// Whether a builtin reads the time or keeps state, which a function cannot.
fn has_memory_or_time(builtin: Builtin) -> bool {
    matches!(
        builtin,
        Builtin::Time
            | Builtin::Dt
            | Builtin::StartTime
            | Builtin::StopTime
            | Builtin::Init
            | Builtin::Previous
            | Builtin::Step
            | Builtin::Ramp
            | Builtin::PulseVolume
            | Builtin::PulseWidth
            | Builtin::PulseTrain
            | Builtin::ActiveInitial
            | Builtin::SampleIfTrue
            | Builtin::Smooth1
            | Builtin::Smooth3
            | Builtin::SmoothN
            | Builtin::Delay1
            | Builtin::Delay3
            | Builtin::DelayN
            | Builtin::DelayNStaged
            | Builtin::DelayFixed
            | Builtin::Trend
            | Builtin::Forecast
            | Builtin::Npv
    ) || is_random(builtin)
}

/// Whether a builtin draws a random number at every step.
fn is_random(builtin: Builtin) -> bool {
    matches!(
        builtin,
        Builtin::RandomUniform
            | Builtin::RandomNormal
            | Builtin::Normal
            | Builtin::Exprnd
            | Builtin::Lognormal
            | Builtin::Poisson
            | Builtin::Beta
            | Builtin::Binomial
            | Builtin::Gamma
            | Builtin::Triangular
            | Builtin::Weibull
            | Builtin::RandomExponential
            | Builtin::RandomPoisson
            | Builtin::RandomTriangular
            | Builtin::RandomWeibull
            | Builtin::RandomGamma
            | Builtin::RandomBeta
            | Builtin::RandomBinomial
            | Builtin::RandomNegativeBinomial
    )
}

/// Whether `text` is a name, a number or a call, which never needs parentheses as an operand.
fn is_atom(text: &str) -> bool {
    if text.starts_with('(') && text.ends_with(')') && balanced_inside(text) {
        return true;
    }
    let head_end = text.find('(').unwrap_or(text.len());
    let head = &text[..head_end];
    let head_plain = !head.is_empty() && !head.contains([' ', '+', '-', '*', '/', '^', '<', '>', '='])
        || head.starts_with('\'') && head.ends_with('\'');
    head_plain && (head_end == text.len() || (text.ends_with(')') && balanced_inside(&text[head_end..])))
}

/// Whether the parenthesis that opens `text` closes at its end.
fn balanced_inside(text: &str) -> bool {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 != text.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// `text` without the parentheses around it, where they enclose the whole of it.
pub(super) fn unwrap(text: &str) -> &str {
    if text.starts_with('(') && text.ends_with(')') && balanced_inside(text) {
        &text[1..text.len() - 1]
    } else {
        text
    }
}

/// The order of a `DELAYN` or `SMTHN`: a positive whole number written as such.
/// The order of `SMTHN` or `DELAYN`: its argument's value at the start (a tool reads it
/// once), which must be a whole number from 1 to 1000.
fn order(expr: &Expr, start_values: &StartValues) -> Option<usize> {
    let v = start_values.value(expr)?;
    (v >= 1.0 && v.fract() == 0.0 && v <= 1000.0).then_some(v as usize)
}
