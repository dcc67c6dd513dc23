//! String inputs whose texts hold values known only during the run (`error("order = " +
//! String(n) + " is out of range")`): the function is instantiated for the shape of the String
//! (its texts, and the type and format of each value), and the values are passed as hidden
//! scalar inputs, so that the function's body reads the input as the same String with its
//! values taken from those inputs. Modelica passes a String by value; a String whose texts
//! are all known is a String whose shape has no values, and that case stays with the texts the
//! instance is made for (`calls::known_string_inputs`).
//!
//! Input: the values a call gives the String inputs of a function. Output: the key of their
//! shapes, the hidden scalar arguments of the call, and, while the function is instantiated,
//! the slots of the hidden inputs with the String the body reads. It deliberately builds no
//! String from values at compile time (a String with no value is a known text) and passes no
//! such String to C (an external function takes the texts known when the model is compiled).

use crate::flattener::Flattener;
use crate::function_table::LocalVar;
use crate::value::Value;
use eqm_ir::expr::{ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType};

/// The String inputs of a function instance that carry values known only during the run, by
/// name, with the String each call gives (its values are the caller's expressions; only its
/// shape matters to the instance).
pub(crate) type StringTemplates = Vec<(String, Message)>;

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
}
