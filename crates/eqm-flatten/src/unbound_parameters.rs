//! Parameters and constants that nothing gives a value: no binding, no modifier, no `--param`.
//!
//! Input: the flat model once it is complete. Output: one warning (W0302) per declaration
//! whose parameters have no value, naming them and the start value each then has, which is the
//! value Modelica gives such a parameter (its `fixed` is true by default). A model written as a
//! template (a component's parameters left for the user) then runs with these values, and the
//! warning says why its results, or an error such as a division by zero, follow from them.
//! Parameters with `fixed = false` are left out: the initial equations compute them. A constant
//! without a value is an error (E0206), since nothing may stand in for it. It deliberately
//! changes nothing in the model.

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{ScalarType, Variability};
use std::collections::BTreeMap;

/// How many names one warning lists before it counts the rest.
const NAMES_SHOWN: usize = 5;

impl Flattener<'_, '_> {
    /// Warns (W0302) once per declaration whose parameters have no value.
    pub(crate) fn warn_parameters_without_value(&mut self) {
        // Grouped by declaration, in the order of the first parameter of each: an array of
        // components repeats one declaration many times.
        let mut by_declaration: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut first_of_span = std::collections::HashMap::new();
        let mut constants: Vec<usize> = Vec::new();
        for (i, v) in self.model.variables.iter().enumerate() {
            if v.variability == Variability::Constant && v.binding.is_none() {
                constants.push(i);
            }
            if v.variability == Variability::Parameter && v.binding.is_none() && v.attributes.fixed != Some(false) {
                let first = *first_of_span.entry(v.span).or_insert(i);
                by_declaration.entry(first).or_default().push(i);
            }
        }
        for members in by_declaration.into_values() {
            let diagnostic = self.without_value(&members);
            self.diagnostics.push(diagnostic);
        }
        self.report_constants_without_value(&constants);
    }

    /// A constant needs a value from its declaration or a modifier (E0206): unlike a
    /// parameter's, no start value stands in for it. Reported once per declaration.
    fn report_constants_without_value(&mut self, constants: &[usize]) {
        let mut reported = std::collections::HashSet::new();
        for &i in constants {
            let v = &self.model.variables[i];
            if !reported.insert(v.span) {
                continue;
            }
            let message = format!("constant `{}` has no value", v.name);
            self.diagnostics.push(
                Diagnostic::error("E0206", message, v.span, "a constant needs a binding")
                    .with_help("give it a value in its declaration (`constant Real c = 1;`) or by a modifier"),
            );
        }
    }

    /// The warning for the parameters `members` of one declaration.
    fn without_value(&mut self, members: &[usize]) -> Diagnostic {
        let mut shown: Vec<String> = Vec::new();
        for &i in members.iter().take(NAMES_SHOWN) {
            let start = self.start_text(i);
            shown.push(format!("`{}` = {start}", self.model.variables[i].name));
        }
        let more = members.len().saturating_sub(NAMES_SHOWN);
        let mut list = shown.join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        let first = &self.model.variables[members[0]];
        let noun = if members.len() == 1 { "parameter" } else { "parameters" };
        let help = match first.name.rsplit_once('.') {
            Some((component, _)) => format!(
                "give it a value with a binding, a modifier (`{component}(... = ...)` in the model that uses it) or `--param NAME=VALUE`; a parameter the initialization computes needs `fixed = false`"
            ),
            None => "give it a value with a binding or `--param NAME=VALUE`; a parameter the initialization computes needs `fixed = false`".to_string(),
        };
        Diagnostic::warning(
            "W0302",
            format!("{noun} without a value: {list}; the start value is used as the value"),
            first.span,
            format!("nothing gives this {noun} a value"),
        )
        .with_help(help)
    }

    /// The start value of parameter `i` as text, or the default start of its type.
    fn start_text(&mut self, i: usize) -> String {
        let v = &self.model.variables[i];
        let (start, ty) = (v.attributes.start, v.ty);
        let value = match (start, ty) {
            (Some(_), ScalarType::String) => return "its start value".to_string(),
            (Some(start), _) => match self.consts.eval(&self.model, start) {
                Some(value) => value,
                None => return "its start value".to_string(),
            },
            (None, _) => 0.0,
        };
        match ty {
            ScalarType::Boolean => (if value != 0.0 { "true" } else { "false" }).to_string(),
            ScalarType::Integer => format!("{}", value as i64),
            ScalarType::String => "\"\"".to_string(),
            ScalarType::Real => eqm_diag::text::format_number(value),
        }
    }
}
