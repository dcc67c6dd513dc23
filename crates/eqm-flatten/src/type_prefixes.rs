//! The rules on where the type prefixes `input`, `output`, `parameter`, `constant` and
//! `discrete` may be written (Modelica 4.4.2.1 and 9.3).
//!
//! Input: a component's prefixes (those of its declaration merged with those of the short
//! class definitions of its type), its resolved type and the state of the enclosing instance.
//! Output: E0344 for a prefix on a component of a model or block, `parameter` or `constant` on a
//! connector component, `input` with `parameter` or `constant`, or `input`/`output` on an element
//! of a component that is already `input` or `output` (and `flow` on an element of one that is). It deliberately leaves `flow` and `stream` on their own to
//! `variables` (E0335, E0340), and classes of the general kind `class` unchecked, since external
//! objects are of that kind and take `parameter`.

use crate::flattener::Flattener;
use crate::layout::ResolvedType;
use crate::resolve::TypeRef;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::flat::{self, InstanceId};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether the type prefixes of a component are allowed; reports E0344 when not.
    pub(crate) fn type_prefixes_allowed(
        &mut self,
        instance: InstanceId,
        prefixes: ast::TypePrefix,
        resolved: &ResolvedType<'a>,
        span: Span,
    ) -> bool {
        let words = prefix_words(prefixes);
        let kind = match resolved.target {
            TypeRef::Class(class) => Some(self.table.get(class).def.kind),
            TypeRef::Builtin(_) => None,
        };
        let variability_word = match prefixes.variability {
            ast::Variability::Parameter => Some("parameter"),
            ast::Variability::Constant => Some("constant"),
            _ => None,
        };
        let state = &self.instances[instance.0 as usize];
        let why = if let Some(kind) = kind
            && matches!(kind, ast::ClassKind::Model | ast::ClassKind::Block)
            && !words.is_empty()
        {
            format!(
                "`{}` applies to components of types, records and connectors, not to a component of a {}",
                words.join(" "),
                if kind == ast::ClassKind::Model {
                    "model"
                } else {
                    "block"
                }
            )
        } else if let Some(word) = variability_word
            && (resolved.is_connector || kind.is_some_and(|k| k.is_connector()))
        {
            format!("a connector component cannot be `{word}`")
        } else if let Some(word) = variability_word
            && prefixes.causality == ast::Causality::Input
        {
            format!("an `input` cannot be `{word}`")
        } else if prefixes.causality != ast::Causality::None && state.causality != flat::Causality::None {
            // An element with a causality inside a `flow` component is accepted, so that
            // models written for tools that allow it (`flow C c` of a connector `C` with an
            // output) keep working.
            let outer = if state.causality == flat::Causality::Input {
                "input"
            } else {
                "output"
            };
            format!("it is an element of a component that is `{outer}` already")
        } else if prefixes.connection == ast::Connection::Flow && state.causality != flat::Causality::None {
            let outer = if state.causality == flat::Causality::Input {
                "input"
            } else {
                "output"
            };
            format!("`flow` is not allowed on an element of a component that is `{outer}`")
        } else {
            return true;
        };
        self.diagnostics.push(Diagnostic::error(
            "E0344",
            format!("this type prefix is not allowed: {why}"),
            span,
            "prefix not allowed here",
        ));
        false
    }
}

/// The type prefixes written on a component, as words.
fn prefix_words(prefixes: ast::TypePrefix) -> Vec<&'static str> {
    let mut words = Vec::new();
    match prefixes.variability {
        ast::Variability::Discrete => words.push("discrete"),
        ast::Variability::Parameter => words.push("parameter"),
        ast::Variability::Constant => words.push("constant"),
        ast::Variability::Continuous => {}
    }
    match prefixes.causality {
        ast::Causality::Input => words.push("input"),
        ast::Causality::Output => words.push("output"),
        ast::Causality::None => {}
    }
    words
}
