//! String inputs whose texts hold values known only during the run (`error("order = " +
//! String(n) + " is out of range")`): the function is instantiated for the shape of the String
//! (its texts, and the type and format of each value), and the values are passed as hidden
//! scalar inputs, so that the function's body reads the input as the same String with its
//! values taken from those inputs. Modelica passes a String by value; a String whose texts
//! are all known is a String whose shape has no values, and that case stays with the texts the
//! instance is made for (`calls::known_string_inputs`).
//!
//! The String variables of a function that are not inputs (a protected `String line;`, a
//! String output) hold texts known when the model is compiled: the flattener keeps the text
//! each holds as it flattens the body statement by statement (`line := readLine(file, 3)`
//! with the file and the line number known then), so that what is computed from it is known
//! too. Such a variable is assigned only where the statement always runs when the function
//! does (not inside an if-, while- or for-statement decided during the run), and only a text
//! known then; anything else is a diagnostic, never a text that could be stale.
//!
//! Input: the values a call gives the String inputs of a function, and the assignments of its
//! String variables. Output: the key of their shapes, the hidden scalar arguments of the call,
//! and, while the function is instantiated, the slots of the hidden inputs with the String the
//! body reads, and the texts of its String variables. It deliberately builds no String from
//! values at compile time (a String with no value is a known text) and passes no such String
//! to C (an external function takes the texts known when the model is compiled).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::function_table::{KnownIntegers, LocalVar, StringTemplates};
use crate::modifier::Scope;
use crate::resolve::{ClassId, TypeRef};
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType};
use eqm_syntax::ast;

/// The key of the shapes of `templates`: one text per input naming its texts and, for each
/// value, its type and format, so that two calls share an instance exactly when their Strings
/// differ only in the values.
pub(crate) fn template_key(templates: &StringTemplates) -> Vec<(String, String)> {
    templates
        .iter()
        .map(|(name, message)| {
            let shape = message
                .parts
                .iter()
                .map(|part| match part {
                    MessagePart::Text(text) => format!("T{text:?}"),
                    MessagePart::Value { ty, .. } => format!("V{ty:?}"),
                    MessagePart::Formatted { ty, format, .. } => format!("F{ty:?}{format:?}"),
                })
                .collect::<Vec<_>>()
                .join(",");
            (name.clone(), shape)
        })
        .collect()
}

/// The values of a String given to a templated input, in the order of its parts: the hidden
/// arguments of the call.
pub(crate) fn template_arguments(message: &Message) -> Vec<ExprId> {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            MessagePart::Text(_) => None,
            MessagePart::Value { expr, .. } | MessagePart::Formatted { expr, .. } => Some(*expr),
        })
        .collect()
}

/// Whether a String value holds values known only during the run (and so is passed as a
/// template), rather than a text known now.
pub(crate) fn is_template(value: &Value) -> Option<&Message> {
    match value {
        Value::Str(message) if message.as_literal().is_none() => Some(message),
        _ => None,
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The String inputs among `declared` whose arguments in `given` hold values known only
    /// during the run.
    pub(super) fn template_string_inputs(
        &self,
        declared: &[(&'a str, bool, Option<crate::resolve::ClassId>)],
        given: &[Option<(Value, eqm_diag::source::Span)>],
    ) -> StringTemplates {
        declared
            .iter()
            .zip(given)
            .filter_map(|((name, _, functional), value)| {
                if functional.is_some() {
                    return None;
                }
                let message = is_template(&value.as_ref()?.0)?;
                Some((name.to_string(), message.clone()))
            })
            .collect()
    }

    /// The hidden input slots of String input `name` of function `id` when the instance was
    /// made for a String with values known only during the run: one slot per value, of its
    /// type. The String the body reads, with its values read from those slots, is kept in the
    /// current frame. `None` for any other input.
    pub(super) fn template_local(&mut self, id: FuncId, name: &str) -> Option<LocalVar> {
        let template = self
            .functions
            .string_templates
            .get(id.0 as usize)?
            .iter()
            .find(|(n, _)| n == name)?
            .1
            .clone();
        let mut slots = Vec::new();
        let mut parts = Vec::with_capacity(template.parts.len());
        for part in template.parts {
            let (ty, written) = match &part {
                MessagePart::Text(_) => {
                    parts.push(part);
                    continue;
                }
                MessagePart::Value { ty, written, .. } | MessagePart::Formatted { ty, written, .. } => {
                    (*ty, written.clone())
                }
            };
            let function = &mut self.model.functions[id.0 as usize];
            let slot = function.slots.len() as u32;
            function.slots.push(flat::FunctionSlot {
                name: format!("{name}.{}", slots.len() + 1),
                ty,
                default: None,
            });
            slots.push(slot);
            let expr = self.model.exprs.add(Node::Local(slot));
            parts.push(match part {
                MessagePart::Formatted { format, .. } => MessagePart::Formatted {
                    expr,
                    ty,
                    written,
                    format,
                },
                _ => MessagePart::Value { expr, ty, written },
            });
        }
        if let Some(frame) = self.context.frames.last_mut() {
            frame.templates.push((name.to_string(), Message { parts }));
        }
        Some(LocalVar {
            dims: Vec::new(),
            slots,
            ty: ScalarType::String,
            assignable: false,
            record: None,
            function: None,
            elements: None,
        })
    }

    /// Handles `target := value` when `target` is a String variable of the function being
    /// flattened (not an input): its text is kept, and no statement is made. Returns whether
    /// the assignment was one (reported when it cannot be done).
    pub(crate) fn string_variable_assignment(
        &mut self,
        target: &'a ast::ComponentRef,
        value: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
        cx: &StatementContext,
    ) -> bool {
        if cx.function.is_none() || scope.instance.is_some() {
            return false;
        }
        let [part] = target.parts.as_slice() else {
            return false;
        };
        let name = part.name.name.as_str();
        let is_string_variable = self.context.frames.last().is_some_and(|f| {
            f.locals
                .get(name)
                .is_some_and(|v| v.ty == ScalarType::String && v.assignable && v.dims.is_empty() && v.record.is_none())
        });
        if !is_string_variable || !part.subscripts.is_empty() {
            return false;
        }
        if cx.run_time_depth > 0 || cx.left_early {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("the String variable `{name}` is assigned inside a statement decided during the run, or after a `return` or `break`"),
                    target.span,
                    "assigned here",
                )
                .with_help("EQM keeps the texts of a function's String variables while compiling it: assign them outside if-, while- and for-statements whose conditions or ranges are known only during the run, and before any `return` or `break`"),
            );
            return true;
        }
        self.string_variable_text(name, value, scope, loops);
        true
    }

    /// Evaluates `value` as the text String variable `name` holds from here on, reporting a
    /// value that is not a text known when the model is compiled.
    pub(crate) fn string_variable_text(&mut self, name: &str, value: &'a ast::Expr, scope: Scope, loops: &mut Loops) {
        let Some(v) = self.eval(value, scope, loops) else {
            return;
        };
        let text = self.known_string(&v).filter(|m| m.as_literal().is_some());
        let Some(text) = text else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("the text assigned to the String variable `{name}` must be known when the model is compiled"),
                    value.span,
                    "known only during the run",
                )
                .with_help("EQM keeps the texts of a function's String variables while compiling it; a String made from values of the run can be a message (`assert`, `terminate`, `print`) or the argument of a String input"),
            );
            return;
        };
        if let Some(frame) = self.context.frames.last_mut() {
            frame.texts.retain(|(n, _)| n != name);
            frame.texts.push((name.to_string(), text));
        }
    }

    /// Adds to `known` the Integer and Boolean inputs of a call whose arguments are constants of
    /// literals (`2*j - 1` in an unrolled loop) or whose literal defaults the call leaves, when
    /// the instance is made for the texts of String inputs too: a function on texts known when
    /// the model is compiled (`Strings.scanInteger(line, 3)`) is evaluated then, and needs the
    /// numbers it is given as well. Parameters are left out (they stay parameters).
    pub(super) fn literal_scalar_inputs(
        &mut self,
        class: ClassId,
        given: &[Option<(Value, eqm_diag::source::Span)>],
        known: &mut KnownIntegers,
    ) {
        let inputs: Vec<_> = self
            .function_components(class)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .collect();
        for (k, (clause, decl, part)) in inputs.into_iter().enumerate() {
            if known.iter().any(|(n, _)| *n == decl.name.name) || !clause.type_dims.is_empty() || !decl.dims.is_empty()
            {
                continue;
            }
            let scalar = self.resolve_type(part, &clause.type_name, 0).is_some_and(|r| {
                r.dims.is_empty()
                    && r.enumeration.is_none()
                    && matches!(r.target, TypeRef::Builtin(ScalarType::Integer | ScalarType::Boolean))
            });
            if !scalar {
                continue;
            }
            let value = match given.get(k) {
                Some(Some((Value::Scalar(x, _), _))) => self.literal_value(*x),
                Some(None) => decl
                    .modification
                    .as_ref()
                    .and_then(|m| m.binding.as_ref())
                    .and_then(|b| self.default_now(b, part))
                    .and_then(|v| match v {
                        Value::Scalar(x, _) => self.literal_value(x),
                        _ => None,
                    }),
                _ => None,
            };
            if let Some(v) = value
                && v.fract() == 0.0
            {
                known.push((decl.name.name.clone(), v as i64));
            }
        }
    }

    /// The value of `x` when it reads no variable and is known at compile time.
    fn literal_value(&mut self, x: ExprId) -> Option<f64> {
        let mut vars = Vec::new();
        self.model.exprs.vars_in(x, &mut vars);
        if !vars.is_empty() {
            return None;
        }
        self.consts.eval(&self.model, x)
    }
}
