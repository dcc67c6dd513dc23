//! The options of `String(v, ...)`: `significantDigits`, `minimumLength`,
//! `leftJustified` and `format`.
//!
//! Input: the named arguments of a `String` call and the type of the value converted. Output:
//! the [`StringFormat`] the text is made with (when the model is compiled for a value known
//! then, when the message is reported for one that changes during the run), or a diagnostic:
//! an option must be known when the model is compiled, `format` must be a valid C specifier for
//! the value's type, and an option the type does not take is refused. It deliberately knows
//! nothing of where the text is used.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{CFormat, ScalarType, StringFormat};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The format the named arguments `named` of `String(v, ...)` give a value of type `ty`;
    /// `None` after a diagnostic.
    pub(crate) fn string_format(
        &mut self,
        named: &'a [(ast::Ident, ast::Expr)],
        ty: ScalarType,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<StringFormat> {
        let mut format = StringFormat::default();
        let mut failed = false;
        for (name, value) in named {
            let refuse = |diagnostics: &mut Vec<Diagnostic>, why: String, label: &str| {
                diagnostics.push(
                    Diagnostic::error("E0309", why, value.span, label.to_string())
                        .with_help("`String(r, significantDigits = 6, minimumLength = 0, leftJustified = true)` for a Real, `String(v, minimumLength = 0, leftJustified = true)` for an Integer, Boolean or enumeration value, or `String(r, format = \"8.3f\")`"),
                );
            };
            let option = name.name.as_str();
            let allowed = match option {
                "significantDigits" => ty == ScalarType::Real,
                "minimumLength" | "leftJustified" => true,
                "format" => matches!(ty, ScalarType::Real | ScalarType::Integer),
                _ => {
                    refuse(
                        &mut self.diagnostics,
                        format!("`String` has no option `{option}`"),
                        "unknown option",
                    );
                    failed = true;
                    continue;
                }
            };
            if !allowed {
                refuse(
                    &mut self.diagnostics,
                    format!("`{option}` is not an option of `String` of a {} value", type_name(ty)),
                    "not an option here",
                );
                failed = true;
                continue;
            }
            let evaluated = self.eval(value, scope, loops);
            if option == "format" {
                let text = evaluated
                    .as_ref()
                    .and_then(|v| self.known_string(v))
                    .and_then(|m| m.as_literal());
                let Some(text) = text else {
                    refuse(
                        &mut self.diagnostics,
                        "the `format` of `String` must be a String known when the model is compiled".to_string(),
                        "not known at compile time",
                    );
                    failed = true;
                    continue;
                };
                match CFormat::parse(&text) {
                    Ok(c) if c.is_integer() == (ty == ScalarType::Integer) => format.c_format = Some(c),
                    Ok(c) => {
                        refuse(
                            &mut self.diagnostics,
                            format!(
                                "the format `{text}` converts {}, and the value is {} {}",
                                if c.is_integer() { "an Integer" } else { "a Real" },
                                if ty == ScalarType::Integer { "an" } else { "a" },
                                type_name(ty)
                            ),
                            "wrong conversion",
                        );
                        failed = true;
                    }
                    Err(why) => {
                        refuse(
                            &mut self.diagnostics,
                            format!("bad `format` of `String`: {why}"),
                            "bad format",
                        );
                        failed = true;
                    }
                }
                continue;
            }
            let known = match evaluated {
                Some(Value::Scalar(x, _)) => self.model.exprs.literal(x).or_else(|| self.consts.eval(&self.model, x)),
                _ => None,
            };
            let Some(known) = known else {
                refuse(
                    &mut self.diagnostics,
                    format!("the option `{option}` of `String` must be known when the model is compiled"),
                    "not known at compile time",
                );
                failed = true;
                continue;
            };
            match option {
                "leftJustified" => format.left_justified = known != 0.0,
                _ if !(0.0..=1000.0).contains(&known) || known.fract() != 0.0 => {
                    refuse(
                        &mut self.diagnostics,
                        format!(
                            "`{option}` of `String` is {}, not an Integer from 0 to 1000",
                            eqm_diag::text::format_number(known)
                        ),
                        "out of range",
                    );
                    failed = true;
                }
                "significantDigits" => format.significant_digits = known as usize,
                _ => format.minimum_length = known as usize,
            }
        }
        (!failed).then_some(format)
    }
}

/// The name of a value's type in a message.
fn type_name(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Real => "Real",
        ScalarType::Integer => "Integer",
        ScalarType::Boolean => "Boolean",
        ScalarType::String => "String",
    }
}
