//! The text of an assertion's or a print's message: literal text and values known only
//! during the run, each shown as its format says when the message is reported.
//!
//! Input: built by the flattener from String expressions. Output: the message's text for a
//! given evaluation of its values. It deliberately evaluates nothing itself: the caller hands
//! in each value.

use super::{ScalarType, StringFormat};
use crate::expr::ExprId;

/// The text of an assertion's message, whose parts may be values known only during the run
/// (`"x = " + String(x)`): each is shown with the value it has when the assertion fails.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    pub parts: Vec<MessagePart>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MessagePart {
    Text(String),
    /// `String(e)` of a value that changes during the run, with `e` as written.
    Value {
        expr: ExprId,
        ty: ScalarType,
        written: String,
    },
    /// `String(e, ...)` of a value that changes during the run, shown as `format` says.
    Formatted {
        expr: ExprId,
        ty: ScalarType,
        written: String,
        format: Box<StringFormat>,
    },
}

impl MessagePart {
    /// The expression, type and written text of a value (`None` for a text).
    fn value(&self) -> Option<(ExprId, ScalarType, &str)> {
        match self {
            MessagePart::Text(_) => None,
            MessagePart::Value { expr, ty, written } | MessagePart::Formatted { expr, ty, written, .. } => {
                Some((*expr, *ty, written))
            }
        }
    }
}

impl Message {
    /// A text known when the model is compiled.
    pub fn literal(text: impl Into<String>) -> Message {
        let text = text.into();
        Message {
            parts: if text.is_empty() {
                Vec::new()
            } else {
                vec![MessagePart::Text(text)]
            },
        }
    }

    /// The text, when no part of it changes during the run.
    pub fn as_literal(&self) -> Option<String> {
        self.parts
            .iter()
            .map(|p| match p {
                MessagePart::Text(t) => Some(t.as_str()),
                MessagePart::Value { .. } | MessagePart::Formatted { .. } => None,
            })
            .collect()
    }

    /// `self + other`, adjacent texts joined.
    pub fn concat(&self, other: &Message) -> Message {
        let mut parts = self.parts.clone();
        for p in &other.parts {
            match (parts.last_mut(), p) {
                (Some(MessagePart::Text(a)), MessagePart::Text(b)) => a.push_str(b),
                _ => parts.push(p.clone()),
            }
        }
        Message { parts }
    }

    /// The text with each value shown as the expression it is, in brackets (`"x = [x]"`),
    /// where no values are at hand.
    pub fn written(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                MessagePart::Text(t) => t.clone(),
                MessagePart::Value { written, .. } | MessagePart::Formatted { written, .. } => format!("[{written}]"),
            })
            .collect()
    }

    /// The text with each value given by `value` (a value that cannot be computed is shown as
    /// written).
    pub fn render(&self, value: &mut dyn FnMut(ExprId) -> Option<f64>) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                MessagePart::Text(t) => t.clone(),
                MessagePart::Value { expr, ty, written } => match value(*expr) {
                    Some(v) if *ty == ScalarType::Boolean => (if v != 0.0 { "true" } else { "false" }).to_string(),
                    Some(v) if *ty == ScalarType::Integer => format!("{}", v as i64),
                    Some(v) => eqm_diag::text::format_number(v),
                    None => format!("[{written}]"),
                },
                MessagePart::Formatted {
                    expr,
                    ty,
                    written,
                    format,
                } => match value(*expr) {
                    Some(v) => format.render(v, *ty),
                    None => format!("[{written}]"),
                },
            })
            .collect()
    }

    /// The expressions of its values.
    pub fn exprs(&self) -> impl Iterator<Item = ExprId> + '_ {
        self.parts.iter().filter_map(|p| p.value().map(|(expr, ..)| expr))
    }

    /// The message with `f` applied to the expression of each value.
    pub fn map_exprs(&self, f: &mut dyn FnMut(ExprId) -> ExprId) -> Message {
        Message {
            parts: self
                .parts
                .iter()
                .map(|p| match p {
                    MessagePart::Value { expr, ty, written } => MessagePart::Value {
                        expr: f(*expr),
                        ty: *ty,
                        written: written.clone(),
                    },
                    MessagePart::Formatted {
                        expr,
                        ty,
                        written,
                        format,
                    } => MessagePart::Formatted {
                        expr: f(*expr),
                        ty: *ty,
                        written: written.clone(),
                        format: format.clone(),
                    },
                    text => text.clone(),
                })
                .collect(),
        }
    }
}
