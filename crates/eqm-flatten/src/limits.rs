//! The limits of one model's size that protect the machine from hostile or mistaken sizes: the
//! elements of one array, the scalar variables and equations of the flat model, and the depth of
//! nested components.
//!
//! Input: a size or depth the flattener is about to make, or the size an array of components
//! built alike will reach (predicted from its second element). Output: whether it may, with
//! E0316 reported (once per model for the whole-model limits) when not. It deliberately does
//! not decide what happens after a refusal: the caller stops making that part of the model,
//! and past a whole-model limit the flattener builds and reports nothing more.

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_ir::flat::InstanceId;

/// The most scalar elements one array value may have (an array size, `fill`, a range). An
/// element is at least a 4-byte expression id, so this bounds one array at 400 MB instead of
/// letting `Real x[10^9]` or `sum(1:10^9)` fail to allocate or run for minutes.
pub(crate) const MAX_ARRAY_ELEMENTS: usize = 100_000_000;

/// The most scalar variables, and the most scalar equations, of one flat model. A flat
/// variable with its equation takes about 2 KB through the whole pipeline (a model of 10^6 of
/// each needs 2.3 GB), so larger models would exhaust the memory of any workstation.
pub(crate) const MAX_MODEL_SCALARS: usize = 10_000_000;

/// The deepest nesting of components (a component of a component of a component, and so on).
/// Each instance is named by its whole dotted path, so the names of a chain of components take
/// memory in the square of its depth; a thousand levels is far beyond any model written by hand
/// and keeps that under a few megabytes.
pub(crate) const MAX_COMPONENT_DEPTH: u32 = 1000;

/// The size of a flat model, or of what one part of it added, in the units the limits count.
#[derive(Clone, Copy)]
pub(crate) struct ModelSize {
    pub(crate) variables: usize,
    pub(crate) equations: usize,
    pub(crate) components: usize,
}

impl ModelSize {
    /// What was added since `before`.
    pub(crate) fn minus(self, before: ModelSize) -> ModelSize {
        ModelSize {
            variables: self.variables - before.variables,
            equations: self.equations - before.equations,
            components: self.components - before.components,
        }
    }
}

impl Flattener<'_, '_> {
    /// The number of elements of an array of size `dims`, or E0316 when it exceeds
    /// [`MAX_ARRAY_ELEMENTS`] (or does not even fit in a machine word).
    pub(crate) fn check_array_size(&mut self, dims: &[usize], at: eqm_diag::source::Span, what: &str) -> Option<usize> {
        let count = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        match count {
            Some(n) if n <= MAX_ARRAY_ELEMENTS => Some(n),
            _ => {
                let size = match count {
                    Some(n) => format!("{n} elements"),
                    None => "more elements than a machine word counts".to_string(),
                };
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0316",
                        format!("{what} would have {size}, more than the limit of {MAX_ARRAY_ELEMENTS} scalar elements per array"),
                        at,
                        "too large",
                    )
                    .with_help("EQM expands arrays into scalars; split the model or use a smaller size"),
                );
                None
            }
        }
    }

    /// False, after reporting E0316 once, when the flat model would have more than
    /// [`MAX_MODEL_SCALARS`] scalar variables or equations with `adding` more `what`
    /// (`"variables"` or `"equations"`) than `existing`.
    pub(crate) fn model_has_room(
        &mut self,
        existing: usize,
        adding: usize,
        span: eqm_diag::source::Span,
        what: &str,
    ) -> bool {
        if existing.saturating_add(adding) <= MAX_MODEL_SCALARS {
            return true;
        }
        self.report_model_limit_once(|| model_limit_error(what, span));
        false
    }

    /// What the flat model holds so far, in the units the limits count.
    pub(crate) fn model_size(&self) -> ModelSize {
        ModelSize {
            variables: self.model.variables.len(),
            equations: self.model.equations.len(),
            components: self.model.instances.len(),
        }
    }

    /// False, after reporting E0316 once, when `rest` more elements of the array component
    /// `name`, each adding `one`, would take the flat model past a limit: the refusal comes
    /// before they are built rather than after the time and memory of building them.
    pub(crate) fn predicted_size_has_room(
        &mut self,
        one: ModelSize,
        rest: usize,
        span: eqm_diag::source::Span,
        name: &str,
    ) -> bool {
        let now = self.model_size();
        let counts = [
            (now.variables, one.variables, "variables"),
            (now.equations, one.equations, "equations"),
            (now.components, one.components, "components"),
        ];
        for (existing, each, what) in counts {
            let adding = each.saturating_mul(rest);
            if existing.saturating_add(adding) <= MAX_MODEL_SCALARS {
                continue;
            }
            self.report_model_limit_once(|| {
                model_limit_error(what, span).with_note(format!(
                    "the elements of `{name}` are built alike, each with {each} scalar {what}; {rest} more would make {} in all",
                    existing.saturating_add(adding)
                ))
            });
            return false;
        }
        true
    }

    /// False, after reporting E0316 once, when a component of `instance` would be nested more
    /// than [`MAX_COMPONENT_DEPTH`] levels deep.
    pub(crate) fn component_depth_allowed(&mut self, instance: InstanceId, span: eqm_diag::source::Span) -> bool {
        if self.instances[instance.0 as usize].depth < MAX_COMPONENT_DEPTH {
            return true;
        }
        self.report_model_limit_once(|| {
            Diagnostic::error(
                "E0316",
                format!("components nested more than {MAX_COMPONENT_DEPTH} levels deep, the limit of one model"),
                span,
                "this component is one level too deep",
            )
            .with_help("a component of a component of ...: flatten the hierarchy, or use an array of components")
        });
        false
    }

    /// Reports the diagnostic `make` gives unless a limit of the whole model was reported
    /// already: past one, every later part of the model would pass it again.
    fn report_model_limit_once(&mut self, make: impl FnOnce() -> Diagnostic) {
        if !self.too_large_reported {
            self.too_large_reported = true;
            self.diagnostics.push(make());
            self.diagnostics_at_limit = self.diagnostics.len();
        }
    }
}

/// E0316 for a flat model that would have more than [`MAX_MODEL_SCALARS`] scalar `what`.
fn model_limit_error(what: &str, span: eqm_diag::source::Span) -> Diagnostic {
    Diagnostic::error(
        "E0316",
        format!("the flat model would have more than {MAX_MODEL_SCALARS} scalar {what}, the limit of one model"),
        span,
        "the limit is passed here",
    )
    .with_help("EQM expands arrays and for-loops into scalars; split the model or use smaller sizes")
}
