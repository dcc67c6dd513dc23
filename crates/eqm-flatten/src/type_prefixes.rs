//! The rules on where the type prefixes `input`, `output`, `parameter`, `constant` and
//! `discrete` may be written (Modelica 4.4.2.1 and 9.3).
//!
//! Input: a component's prefixes (those of its declaration merged with those of the short
//! class definitions of its type), its resolved type and the state of the enclosing instance.
//! Output: E0344 for a prefix on a component of a model or block, `parameter` or `constant` on a
//! connector component, `input` with `parameter` or `constant`, or `input`/`output` on an element
//! of a component that is already `input` or `output` (and `flow` on an element of one that is);
//! and, once the model is flattened, a variable of a block's public connector that is neither
//! input nor output. It deliberately leaves `flow` and `stream` on their own to
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

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0344 for each variable of a public connector of a block that is neither input nor
    /// output (Modelica 4.7: a block's public connectors have `input` or `output` on every
    /// variable, so that blocks connect only as block diagrams do), once per connector
    /// declaration. Expandable connectors, whose members' causality the connections decide,
    /// are left out.
    pub(crate) fn check_block_connectors(&mut self) {
        let mut reported = eqm_ir::expr::FxHashSet::default();
        let mut found = Vec::new();
        for v in &self.model.variables {
            if !v.variability.is_time_varying() || v.causality != flat::Causality::None {
                continue;
            }
            let Some((connector, block)) = self.block_connector_of(v.instance) else {
                continue;
            };
            let span = self.model.instances[connector.0 as usize].span;
            if reported.insert(span) {
                found.push((
                    span,
                    v.name.clone(),
                    self.table.get(self.instances[block.0 as usize].class).full_name.clone(),
                ));
            }
        }
        for (span, name, block) in found {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0344",
                    format!("`{name}` is neither input nor output, in a public connector of the block `{block}`"),
                    span,
                    "a connector of a block",
                )
                .with_help("a block's public connectors give every variable `input` or `output`; make the class a model, or the connector protected, to connect it otherwise"),
            );
        }
    }

    /// The outermost connector instance holding `instance` and the block it is a public
    /// component of, when there is one (and it is not an expandable connector).
    fn block_connector_of(&self, instance: InstanceId) -> Option<(InstanceId, InstanceId)> {
        let mut connector = None;
        let mut current = instance;
        loop {
            let state = &self.instances[current.0 as usize];
            let parent = self.model.instances[current.0 as usize].parent;
            if !state.is_connector {
                break;
            }
            if self.table.get(state.class).def.kind == ast::ClassKind::ExpandableConnector {
                return None;
            }
            connector = Some(current);
            current = parent?;
        }
        let connector = connector?;
        let block = current;
        let holder = &self.instances[block.0 as usize];
        if self.table.get(holder.class).def.kind != ast::ClassKind::Block {
            return None;
        }
        let full = &self.model.instances[connector.0 as usize].name;
        let own = full.rsplit('.').next().unwrap_or(full);
        let own = own.split('[').next().unwrap_or(own);
        (!holder.layout.is_protected(own)).then_some((connector, block))
    }
}
