//! The flat model: one model's scalar variables and equations, with provenance.
//!
//! Input: built by `flatten`. Output: read by `eqm flatten` (through [`FlatModel::print`]) and by
//! DAE lowering. Every equation keeps its origin (which component's equation, which connection
//! set, which binding, which unconnected flow) and its source span, so that errors found much
//! later can still point at the source. Arrays are expanded to scalars; an equation produced by
//! a for-loop or an array equation remembers that source and its index, so that a later stage
//! can emit loops again. This module holds data and its printer only.

mod format;
mod message;
mod print;

pub use format::{CFormat, StringFormat};
pub use message::{Message, MessagePart};

use crate::expr::{ExprArena, ExprId, FuncId, VarId};
use eqm_diag::source::Span;
use std::sync::Arc;

/// A component instance in the model's hierarchy; instance 0 is the model itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct InstanceId(pub u32);

#[derive(Debug, Clone)]
pub struct Instance {
    /// Full path (`m[3].flange_a`); empty for the model itself.
    pub name: String,
    /// The class it instantiates, fully qualified; shared by all instances of the class.
    pub class_name: Arc<str>,
    pub parent: Option<InstanceId>,
    pub is_connector: bool,
    /// Where it is declared (the model's class name for instance 0).
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variability {
    Continuous,
    Discrete,
    Parameter,
    Constant,
}

impl Variability {
    /// Whether a variable of this variability changes during a simulation (an unknown, or a
    /// connectable variable); parameters and constants do not.
    pub fn is_time_varying(self) -> bool {
        matches!(self, Variability::Continuous | Variability::Discrete)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    Real,
    Integer,
    Boolean,
    String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    None,
    Input,
    Output,
}

/// The role of a connector variable in connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectorRole {
    /// Not a connector variable.
    None,
    Potential,
    Flow,
    /// A `stream` variable: carried by its connector's flow variable; a connection set of them
    /// gives no equations of equality or sum (Modelica chapter 15).
    Stream,
}

/// Modelica's `stateSelect` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateSelect {
    Never,
    Avoid,
    Default,
    Prefer,
    Always,
}

/// The attributes of a scalar variable; expressions are in the model's arena.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AttributeValues {
    pub start: Option<ExprId>,
    pub fixed: Option<bool>,
    pub min: Option<ExprId>,
    pub max: Option<ExprId>,
    pub nominal: Option<ExprId>,
    /// Units and descriptions are shared (`Arc`) by every variable declared with the same text:
    /// large models repeat a few of them for 10^5 variables.
    pub unit: Option<Arc<str>>,
    pub display_unit: Option<Arc<str>>,
    pub state_select: Option<StateSelect>,
}

/// A variable's attributes, shared (`Arc`) by variables that have the same ones: the variables
/// of a large model have the few attribute sets of their declarations, and a variable stays
/// small. Read through `Deref`; a write first copies attributes that are shared
/// (`Arc::make_mut`), so that it changes this variable's attributes only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attributes(Arc<AttributeValues>);

impl Attributes {
    pub fn new(values: AttributeValues) -> Attributes {
        Attributes(Arc::new(values))
    }
}

impl std::ops::Deref for Attributes {
    type Target = AttributeValues;

    fn deref(&self) -> &AttributeValues {
        &self.0
    }
}

impl std::ops::DerefMut for Attributes {
    fn deref_mut(&mut self) -> &mut AttributeValues {
        Arc::make_mut(&mut self.0)
    }
}

#[derive(Debug, Clone)]
pub struct Variable {
    /// Full name with indices: `m[3].flange_a.s`.
    pub name: String,
    pub instance: InstanceId,
    pub variability: Variability,
    pub ty: ScalarType,
    pub causality: Causality,
    pub role: ConnectorRole,
    pub attributes: Attributes,
    /// The binding of a parameter or constant (`parameter Real c = 2*k`). Bindings of other
    /// variables become equations with [`Origin::Binding`].
    pub binding: Option<ExprId>,
    /// The binding's value when it could be evaluated at compile time.
    pub value: Option<f64>,
    pub description: Option<Arc<str>>,
    /// The declaration.
    pub span: Span,
}

/// Where a flat equation comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// An equation written in a class, instantiated for this instance.
    Equation { instance: InstanceId },
    /// The binding `Real y = e;` of a non-parameter variable.
    Binding { var: VarId },
    /// Equal potentials of a connection set.
    ConnectPotential { set: u32 },
    /// The flow sum of a connection set.
    ConnectFlow { set: u32 },
    /// `flow = 0` for a flow variable that is not connected.
    UnconnectedFlow { var: VarId },
    /// `0 = equalityConstraint(a, b)` of a connect of overdetermined instances that is no
    /// edge of the connection graph's spanning trees.
    EqualityConstraint,
    /// `$inStream(var) = ...`: the mixing of the connection set in which the stream variable
    /// `var` is an inside member.
    InStream { var: VarId },
    /// `var = ...`: the value carried out through stream variable `var` of an outside connector.
    OutsideStream { var: VarId },
    /// `$actualStream(var) = if flow > 0 then $inStream(var) else var`.
    ActualStream { var: VarId },
}

/// An equation that came from an array equation or a for-loop: its source and index.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayOrigin {
    pub source: Span,
    pub index: Vec<i64>,
}

#[derive(Debug, Clone)]
pub struct Equation {
    pub lhs: ExprId,
    pub rhs: ExprId,
    pub origin: Origin,
    pub span: Span,
    /// Boxed: most equations have none, and this keeps every equation small.
    pub array: Option<Box<ArrayOrigin>>,
}

/// One connection set: connector variables that are connected together.
#[derive(Debug, Clone)]
pub struct ConnectionSet {
    pub role: ConnectorRole,
    /// Members with their sign in the flow sum (+1 inside, -1 outside connector).
    pub members: Vec<(VarId, i8)>,
    /// The `connect` equations that formed the set.
    pub connects: Vec<Span>,
}

/// `when c then ... elsewhen d then ... end when;`
#[derive(Debug, Clone)]
pub struct WhenClause {
    pub branches: Vec<WhenBranch>,
    pub instance: InstanceId,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct WhenBranch {
    pub condition: ExprId,
    pub actions: Vec<WhenAction>,
}

#[derive(Debug, Clone)]
pub enum WhenAction {
    /// `v = e` inside a when-clause: `v` is assigned at the event.
    Assign {
        var: VarId,
        value: ExprId,
        span: Span,
    },
    Reinit {
        var: VarId,
        value: ExprId,
        span: Span,
    },
    Assert {
        condition: ExprId,
        message: Message,
        span: Span,
    },
    Terminate {
        message: Message,
        span: Span,
    },
    /// `Modelica.Utilities.Streams.print(message)`: the message is handed to the front end,
    /// with the values it has at the event, when the `guard` (the conditions of the
    /// if-statements around it in a when-statement) holds then.
    Print {
        message: Message,
        guard: Option<ExprId>,
        span: Span,
    },
    /// A call statement of a function that prints (`Streams.print` in its body or in a function
    /// it calls) in a when-clause or when-statement: `call` is evaluated once at the event, when
    /// the `guard` holds, for what it does; its outputs are not used.
    Call {
        call: ExprId,
        guard: Option<ExprId>,
        span: Span,
    },
}

impl WhenAction {
    /// The message of an assertion or `terminate`, whose values are read when it is reported.
    pub fn message_mut(&mut self) -> Option<&mut Message> {
        match self {
            WhenAction::Assert { message, .. }
            | WhenAction::Terminate { message, .. }
            | WhenAction::Print { message, .. } => Some(message),
            WhenAction::Assign { .. } | WhenAction::Reinit { .. } | WhenAction::Call { .. } => None,
        }
    }

    /// The condition under which a print or call runs at the event, if it has one.
    pub fn guard(&self) -> Option<ExprId> {
        match self {
            WhenAction::Print { guard, .. } | WhenAction::Call { guard, .. } => *guard,
            _ => None,
        }
    }

    /// Every expression the action evaluates: [`WhenAction::expr`] and the values of its
    /// message.
    pub fn exprs(&self) -> impl Iterator<Item = ExprId> + '_ {
        let message = match self {
            WhenAction::Assert { message, .. }
            | WhenAction::Terminate { message, .. }
            | WhenAction::Print { message, .. } => Some(message),
            WhenAction::Assign { .. } | WhenAction::Reinit { .. } | WhenAction::Call { .. } => None,
        };
        self.expr()
            .into_iter()
            .chain(self.guard())
            .chain(message.into_iter().flat_map(Message::exprs))
    }

    /// The expression the action evaluates: an assignment's or reinit's value, an assertion's
    /// condition, a call's call (`terminate` and `print` evaluate none but their messages).
    pub fn expr(&self) -> Option<ExprId> {
        match self {
            WhenAction::Assign { value, .. } | WhenAction::Reinit { value, .. } => Some(*value),
            WhenAction::Call { call, .. } => Some(*call),
            WhenAction::Assert { condition, .. } => Some(*condition),
            WhenAction::Terminate { .. } | WhenAction::Print { .. } => None,
        }
    }

    /// The expression the action evaluates, to rewrite it.
    pub fn expr_mut(&mut self) -> Option<&mut ExprId> {
        match self {
            WhenAction::Assign { value, .. } | WhenAction::Reinit { value, .. } => Some(value),
            WhenAction::Call { call, .. } => Some(call),
            WhenAction::Assert { condition, .. } => Some(condition),
            WhenAction::Terminate { .. } | WhenAction::Print { .. } => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            WhenAction::Assign { span, .. }
            | WhenAction::Reinit { span, .. }
            | WhenAction::Assert { span, .. }
            | WhenAction::Terminate { span, .. }
            | WhenAction::Print { span, .. }
            | WhenAction::Call { span, .. } => *span,
        }
    }
}

/// What a false `assert` does: stop the run (`AssertionLevel.error`, the default) or report
/// and go on (`AssertionLevel.warning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AssertionLevel {
    #[default]
    Error,
    Warning,
}

/// `assert(condition, message[, level])` in an equation section.
#[derive(Debug, Clone)]
pub struct Assertion {
    pub condition: ExprId,
    pub message: Message,
    pub level: AssertionLevel,
    /// An assertion of an initial section (`initial equation`, `initial algorithm`): it holds
    /// for the initial values only, so it is checked once, at the start.
    pub initial: bool,
    pub instance: InstanceId,
    pub span: Span,
}

/// Where an algorithm statement stores its value: a function's local slot or a model variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Local(u32),
    Var(VarId),
}

/// A statement of an algorithm section or a function body, with arrays expanded to scalars.
/// Expressions refer to model variables (`Node::Var`) and, inside functions, to local slots
/// (`Node::Local`).
#[derive(Debug, Clone)]
pub enum Statement {
    Assign {
        target: Place,
        value: ExprId,
        span: Span,
    },
    If {
        branches: Vec<(ExprId, Vec<Statement>)>,
        else_branch: Vec<Statement>,
        span: Span,
    },
    /// A for-loop whose range is known at compile time, expanded: one body per iteration.
    /// `break` leaves the whole statement.
    Unrolled {
        iterations: Vec<Vec<Statement>>,
        span: Span,
    },
    /// A for-loop whose range is only known at run time (inside functions): the index lives in
    /// a local slot.
    For {
        index: u32,
        start: ExprId,
        step: ExprId,
        stop: ExprId,
        body: Vec<Statement>,
        span: Span,
    },
    While {
        condition: ExprId,
        body: Vec<Statement>,
        span: Span,
    },
    Assert {
        condition: ExprId,
        message: Message,
        span: Span,
    },
    Terminate {
        message: Message,
        span: Span,
    },
    /// `Modelica.Utilities.Streams.print(message)` in a function: the line is printed each
    /// time the statement runs. The flattener lets a function that prints be called only where
    /// it runs once per event (a when-clause's action), so no evaluation of a solver repeats it.
    Print {
        message: Message,
        span: Span,
    },
    /// A call of a function whose outputs, if any, are not used: made for what it does (an
    /// assertion or `terminate` in its body, or in a function it calls the same way), since
    /// Modelica runs the statement.
    Call {
        function: FuncId,
        args: Vec<ExprId>,
        span: Span,
    },
    Break {
        span: Span,
    },
    Return {
        span: Span,
    },
}

impl Statement {
    /// The statements directly inside this one (the branches of an if, the iterations of an
    /// unrolled loop, the body of a loop), in no particular order; none for the others.
    pub fn nested(&self) -> Box<dyn Iterator<Item = &Statement> + '_> {
        match self {
            Statement::If {
                branches, else_branch, ..
            } => Box::new(branches.iter().flat_map(|(_, body)| body).chain(else_branch)),
            Statement::Unrolled { iterations, .. } => Box::new(iterations.iter().flatten()),
            Statement::For { body, .. } | Statement::While { body, .. } => Box::new(body.iter()),
            _ => Box::new(std::iter::empty()),
        }
    }

    /// Whether `found` holds for one of `statements` or one nested in them, at any depth.
    pub fn any_in(statements: &[Statement], mut found: impl FnMut(&Statement) -> bool) -> bool {
        let mut stack: Vec<&Statement> = statements.iter().collect();
        while let Some(statement) = stack.pop() {
            if found(statement) {
                return true;
            }
            stack.extend(statement.nested());
        }
        false
    }

    /// Calls `f` on every expression of this statement and the statements nested in it, with
    /// the span of the statement each expression belongs to.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(ExprId, Span)) {
        let span = self.span();
        match self {
            Statement::Assign { value, .. } => f(*value, span),
            Statement::If {
                branches, else_branch, ..
            } => {
                for (c, body) in branches {
                    f(*c, span);
                    body.iter().for_each(|s| s.for_each_expr(f));
                }
                else_branch.iter().for_each(|s| s.for_each_expr(f));
            }
            Statement::Unrolled { iterations, .. } => iterations.iter().flatten().for_each(|s| s.for_each_expr(f)),
            Statement::For {
                start,
                step,
                stop,
                body,
                ..
            } => {
                f(*start, span);
                f(*step, span);
                f(*stop, span);
                body.iter().for_each(|s| s.for_each_expr(f));
            }
            Statement::While { condition, body, .. } => {
                f(*condition, span);
                body.iter().for_each(|s| s.for_each_expr(f));
            }
            Statement::Assert { condition, message, .. } => {
                f(*condition, span);
                message.exprs().for_each(|e| f(e, span));
            }
            Statement::Terminate { message, .. } | Statement::Print { message, .. } => {
                message.exprs().for_each(|e| f(e, span))
            }
            Statement::Call { args, .. } => args.iter().for_each(|a| f(*a, span)),
            Statement::Break { .. } | Statement::Return { .. } => {}
        }
    }

    /// This statement with every expression (nested statements' included) replaced by
    /// `f(expression)`.
    pub fn map_exprs(&self, f: &mut dyn FnMut(ExprId) -> ExprId) -> Statement {
        let map_all = |body: &[Statement], f: &mut dyn FnMut(ExprId) -> ExprId| -> Vec<Statement> {
            body.iter().map(|s| s.map_exprs(f)).collect()
        };
        match self {
            Statement::Assign { target, value, span } => Statement::Assign {
                target: *target,
                value: f(*value),
                span: *span,
            },
            Statement::If {
                branches,
                else_branch,
                span,
            } => Statement::If {
                branches: branches.iter().map(|(c, body)| (f(*c), map_all(body, f))).collect(),
                else_branch: map_all(else_branch, f),
                span: *span,
            },
            Statement::Unrolled { iterations, span } => Statement::Unrolled {
                iterations: iterations.iter().map(|b| map_all(b, f)).collect(),
                span: *span,
            },
            Statement::For {
                index,
                start,
                step,
                stop,
                body,
                span,
            } => Statement::For {
                index: *index,
                start: f(*start),
                step: f(*step),
                stop: f(*stop),
                body: map_all(body, f),
                span: *span,
            },
            Statement::While { condition, body, span } => Statement::While {
                condition: f(*condition),
                body: map_all(body, f),
                span: *span,
            },
            Statement::Assert {
                condition,
                message,
                span,
            } => Statement::Assert {
                condition: f(*condition),
                message: message.map_exprs(f),
                span: *span,
            },
            Statement::Terminate { message, span } => Statement::Terminate {
                message: message.map_exprs(f),
                span: *span,
            },
            Statement::Print { message, span } => Statement::Print {
                message: message.map_exprs(f),
                span: *span,
            },
            Statement::Call { function, args, span } => Statement::Call {
                function: *function,
                args: args.iter().map(|a| f(*a)).collect(),
                span: *span,
            },
            Statement::Break { .. } | Statement::Return { .. } => self.clone(),
        }
    }

    /// The source span of the statement.
    pub fn span(&self) -> Span {
        match self {
            Statement::Assign { span, .. }
            | Statement::If { span, .. }
            | Statement::Unrolled { span, .. }
            | Statement::For { span, .. }
            | Statement::While { span, .. }
            | Statement::Assert { span, .. }
            | Statement::Terminate { span, .. }
            | Statement::Print { span, .. }
            | Statement::Call { span, .. }
            | Statement::Break { span }
            | Statement::Return { span } => *span,
        }
    }
}

/// An `algorithm` section of a model instance: it computes its `outputs` (the variables it
/// assigns) and counts as one equation per output.
#[derive(Debug, Clone)]
pub struct Algorithm {
    pub statements: Vec<Statement>,
    /// Every model variable assigned somewhere in the section, in first-assignment order.
    pub outputs: Vec<VarId>,
    /// The outputs assigned inside when-statements (discrete-time variables).
    pub when_assigned: Vec<VarId>,
    /// The outputs assigned somewhere outside the when-statements, in first-assignment order:
    /// a when-assigned output not among them is the value before the event whenever no
    /// when-statement fires (at the initialization, for instance).
    pub assigned_outside_when: Vec<VarId>,
    /// For each discrete-time output, the variable holding its value before the event (set
    /// when events are extracted): the section starts from it, which holds the output between
    /// events.
    pub previous: Vec<(VarId, VarId)>,
    pub instance: InstanceId,
    pub initial: bool,
    pub span: Span,
}

/// A scalar slot of a function: an input, output or protected variable element.
#[derive(Debug, Clone)]
pub struct FunctionSlot {
    /// `x` or `x[2]` for an array element.
    pub name: String,
    pub ty: ScalarType,
    /// The default of an input, or the initial value of an output or protected variable; may
    /// refer to input slots.
    pub default: Option<ExprId>,
}

/// The name (a prefix) of the hidden slot of a function that holds the result of a call made
/// for its effect (a function without outputs called as a statement): the function acts on
/// something besides its outputs.
pub const EFFECT_SLOT: &str = "$effect";

/// A user-defined function, instantiated once per model where it is called. Slots are numbered
/// inputs first, then outputs, then protected variables and run-time loop indices.
#[derive(Debug, Clone)]
pub struct Function {
    /// Fully qualified class name.
    pub name: String,
    pub inputs: u32,
    pub outputs: u32,
    pub slots: Vec<FunctionSlot>,
    pub body: Vec<Statement>,
    pub span: Span,
}

/// A function's `derivative` annotation, Modelica's: `derivative(order = 1, noDerivative = a,
/// zeroDerivative = b) = f_der` on function `f`. The derivative function takes the inputs of
/// `f` followed by the derivatives of the input slots `differentiated`, and returns the
/// derivative of each Real output slot of `f`, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDerivative {
    /// The function annotated.
    pub function: FuncId,
    /// The derivative function.
    pub derivative: FuncId,
    /// Which derivative the annotation declares (1 for the first; a derivative of order `n` is
    /// declared on the one of order `n - 1`).
    pub order: u32,
    /// The input slots of `function` whose derivatives `derivative` takes after the inputs of
    /// `function`, in order.
    pub differentiated: Vec<u32>,
    /// Input slots of `function` whose derivatives must be 0 for the annotation to apply
    /// (`zeroDerivative`).
    pub zero_derivative: Vec<u32>,
}

/// An enumeration type a variable is declared with: the type's full name and its literals,
/// whose values are their positions (1, 2, ...), each with its description.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumerationType {
    pub name: String,
    pub literals: Vec<(String, Option<String>)>,
}

/// The experiment annotation's settings, with those of EQM's own annotation
/// `__eqm(solver = "...", step = h)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Experiment {
    pub start_time: Option<f64>,
    pub stop_time: Option<f64>,
    pub tolerance: Option<f64>,
    pub interval: Option<f64>,
    /// The gain of the constraint projection, from `annotation(stabilize(K = k))`.
    pub stabilize: Option<f64>,
    /// The integration method a run uses unless told otherwise (`__eqm(solver = "euler")`), by
    /// its `--solver` name; the flattener does not know the methods, the library API checks it.
    pub solver: Option<String>,
    /// The step of a fixed-step method unless told otherwise (`__eqm(step = h)`), also the
    /// output interval when `Interval` is not given.
    pub step: Option<f64>,
    /// Where each value is written, for diagnostics about it.
    pub spans: ExperimentSpans,
}

/// The locations of an [`Experiment`]'s values in the source.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ExperimentSpans {
    pub start_time: Option<Span>,
    pub stop_time: Option<Span>,
    pub tolerance: Option<Span>,
    pub interval: Option<Span>,
    pub solver: Option<Span>,
    pub step: Option<Span>,
}

#[derive(Debug, Clone, Default)]
pub struct FlatModel {
    pub name: String,
    pub exprs: ExprArena,
    pub instances: Vec<Instance>,
    pub variables: Vec<Variable>,
    pub equations: Vec<Equation>,
    pub initial_equations: Vec<Equation>,
    pub connection_sets: Vec<ConnectionSet>,
    pub whens: Vec<WhenClause>,
    pub assertions: Vec<Assertion>,
    /// Declared invariants `g(x) = 0` (EQM extension) kept for constraint stabilisation.
    pub invariants: Vec<Equation>,
    pub algorithms: Vec<Algorithm>,
    /// User-defined functions called by the model; `Callee::User(FuncId(i))` is `functions[i]`.
    pub functions: Vec<Function>,
    /// External C functions the model's functions call, linked; `Callee::External(k)` is
    /// `externals[k]`.
    pub externals: Vec<crate::external::ExternalFunction>,
    /// The `derivative` annotations of the functions in `functions`, in the order written.
    pub function_derivatives: Vec<FunctionDerivative>,
    /// The variables that hold external objects (components of a class extending
    /// `ExternalObject`): parameters whose value is a C pointer's bits, never a number.
    pub objects: Vec<VarId>,
    pub experiment: Experiment,
    /// The parameters and constants whose values the flattener used (array sizes, for ranges,
    /// conditions of if-equations and conditional components, subscripts), and those their
    /// bindings read, sorted: changing one changes the flat model itself, so it needs flattening
    /// again rather than a new value at run time.
    pub structural: Vec<VarId>,
    /// The if-equations whose branch the flattener chose because their conditions are known
    /// at translation (parameter expressions, Modelica), in the order they were met, each
    /// once per place and choice; `check` tells them.
    pub branch_choices: Vec<BranchChoice>,
    /// The variables declared with an enumeration type, with the type, sorted by variable (the
    /// flat model keeps their values as Integers; an FMU exports the type).
    pub enumerations: Vec<(VarId, std::sync::Arc<EnumerationType>)>,
}

/// An if-equation whose branch was chosen at translation: where it is, the branch, and the
/// conditions that decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchChoice {
    /// The if-equation.
    pub span: Span,
    /// The branch taken, from 1 in the order written (the `else` branch is the last, counted
    /// also when it is not written: then the if-equation gives no equation).
    pub chosen: usize,
    /// Whether the chosen branch is the `else` branch.
    pub is_else: bool,
    /// Each condition evaluated, as written, with its value: those before the chosen branch
    /// are false, the chosen branch's own (if it is not `else`) is true.
    pub conditions: Vec<(String, bool)>,
}

impl BranchChoice {
    /// The choice in words, after the location: `branch 2 (else) chosen at translation because
    /// `useX` = false`.
    pub fn describe(&self) -> String {
        let reasons: Vec<String> = self
            .conditions
            .iter()
            .map(|(text, value)| format!("`{text}` = {value}"))
            .collect();
        format!(
            "branch {}{} chosen at translation because {}",
            self.chosen,
            if self.is_else { " (else)" } else { "" },
            reasons.join(" and ")
        )
    }
}

impl FlatModel {
    pub fn var(&self, v: VarId) -> &Variable {
        &self.variables[v.0 as usize]
    }

    /// How many equations the (non-initial) algorithm sections stand for: one per assigned
    /// variable.
    pub fn algorithm_equation_count(&self) -> usize {
        self.algorithms
            .iter()
            .filter(|a| !a.initial)
            .map(|a| a.outputs.len())
            .sum()
    }

    /// The variables the when-equations determine, each once: those assigned in the first
    /// branch of a when-clause (every branch assigns the same ones), as indices of `variables`.
    pub fn when_assigned(&self) -> std::collections::BTreeSet<u32> {
        self.whens
            .iter()
            .flat_map(|w| w.branches.first())
            .flat_map(|b| &b.actions)
            .filter_map(|a| match a {
                WhenAction::Assign { var, .. } => Some(var.0),
                _ => None,
            })
            .collect()
    }

    /// Variables that are unknowns of the simulation (not parameters, constants or top-level
    /// inputs).
    pub fn unknowns(&self) -> impl Iterator<Item = (VarId, &Variable)> {
        self.variables
            .iter()
            .enumerate()
            .filter(|(_, v)| v.variability.is_time_varying())
            .filter(|(_, v)| !self.is_top_level_input(v))
            .map(|(i, v)| (VarId(i as u32), v))
    }

    /// Whether `v` is an input of the simulated model itself (declared in it, or in one of its
    /// own connectors): its value comes from outside the model, like a parameter's, rather than
    /// from an equation. Inputs of components are unknowns, determined by connections.
    pub fn is_top_level_input(&self, v: &Variable) -> bool {
        if v.causality != Causality::Input {
            return false;
        }
        let instance = &self.instances[v.instance.0 as usize];
        v.instance.0 == 0 || (instance.is_connector && instance.parent == Some(InstanceId(0)))
    }

    /// `model M` for the model itself, `name (Class)` for a component instance.
    pub fn instance_label(&self, instance: InstanceId) -> String {
        ModelSymbols::instance_label(self, instance)
    }

    /// Names an equation's origin for listings and diagnostics.
    pub fn origin_label(&self, origin: &Origin) -> String {
        origin.label(self)
    }
}

/// What a listing or a diagnostic needs to name a model's variables and instances. The flat
/// model answers it, and so does the smaller symbol table a later stage keeps instead of the
/// whole model; the labels are written once, here and in the origins' `label`.
pub trait ModelSymbols {
    /// The full name of variable `v`.
    fn var_name(&self, v: VarId) -> &str;
    /// The full name of instance `instance` (empty for the model itself) and its class.
    fn instance_names(&self, instance: InstanceId) -> (&str, &str);

    /// `model M` for the model itself, `name (Class)` for a component.
    fn instance_label(&self, instance: InstanceId) -> String {
        let (name, class) = self.instance_names(instance);
        if instance.0 == 0 {
            format!("model {class}")
        } else {
            format!("{name} ({class})")
        }
    }
}

impl ModelSymbols for FlatModel {
    fn var_name(&self, v: VarId) -> &str {
        &self.var(v).name
    }

    fn instance_names(&self, instance: InstanceId) -> (&str, &str) {
        let inst = &self.instances[instance.0 as usize];
        (&inst.name, &inst.class_name)
    }
}

impl Origin {
    /// Names this origin for listings and diagnostics.
    pub fn label(&self, symbols: &impl ModelSymbols) -> String {
        match self {
            Origin::Equation { instance } => symbols.instance_label(*instance),
            Origin::Binding { var } => format!("binding of {}", symbols.var_name(*var)),
            Origin::ConnectPotential { set } => format!("connection set {} (equal potentials)", set + 1),
            Origin::ConnectFlow { set } => format!("connection set {} (flow sum)", set + 1),
            Origin::UnconnectedFlow { var } => format!("unconnected flow {}", symbols.var_name(*var)),
            Origin::EqualityConstraint => "equality constraint of a connect outside the spanning trees".into(),
            Origin::InStream { var } => format!("inStream of {}", symbols.var_name(*var)),
            Origin::OutsideStream { var } => format!("stream of outside connector {}", symbols.var_name(*var)),
            Origin::ActualStream { var } => format!("actualStream of {}", symbols.var_name(*var)),
        }
    }
}
