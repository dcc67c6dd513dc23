//! Instantiation and flattening: a class becomes one flat model.
//!
//! Input: a [`ClassTable`] and the name of the model to simulate. Output: a [`FlatModel`] with
//! scalar variables and equations (each with origin and span), connection sets, when-clauses and
//! assertions, plus diagnostics (`E02xx` names, `E03xx` instantiation and connections, `E04xx`
//! balance). Components are instantiated on demand, so declaration order never matters;
//! structural parameters (array sizes, for ranges, parameter-only if conditions) are evaluated at
//! compile time. This stage deliberately does no symbolic simplification and no alias
//! elimination: the flat model shows the equations exactly as the model produces them.
//!
//! The crate root holds the entry points and the `Flattener` state; each job has its module:
//! class layouts, instances and their members (`layout`), what a declared element becomes
//! (`instantiate`), variables with the modifiers applied to them (`variables`), expressions
//! (`eval`, with references in `names` and calls in `calls`), equations (`equations`),
//! connection sets (`connect`), user functions (`functions`) and algorithm statements
//! (`statements`), compile-time evaluation (`consteval`), data files read at compile time
//! (`datafiles`), the experiment annotation (`experiment`) and the balance check (`balance`).
//! `diagram` gives, instead of the flat model, the model's component diagram, from the same
//! instances and connects.

pub mod diagram;
pub mod resolve;
pub mod sources;
pub mod stdlib;

mod balance;
mod caches;
mod calls;
mod connect;
mod consteval;
mod datafiles;
mod enumerations;
mod equations;
mod eval;
mod experiment;
mod flattener;
mod functionals;
mod functions;
mod instantiate;
mod iterators;
mod layout;
mod modifier;
mod names;
mod records;
mod redeclare;
mod statements;
mod value;
mod variables;

pub use datafiles::{DataFiles, ReadFile};
pub use flattener::Options;
pub use sources::Sources;

use eqm_diag::Diagnostic;
use eqm_ir::flat::FlatModel;
use eqm_syntax::ast;
use resolve::ClassTable;

/// Flattens `model`. Returns the model when no error was found, and all diagnostics.
pub fn flatten(table: &ClassTable<'_>, model: &str, options: &Options) -> (Option<FlatModel>, Vec<Diagnostic>) {
    flattener::run_flattener(table, model, options, false, |f| f.model)
}

/// Names the single top-level model among the user's classes, for commands without `--model`.
pub fn default_model(files: &[&ast::StoredDefinition]) -> Result<String, Vec<String>> {
    let candidates: Vec<String> = files
        .iter()
        .flat_map(|f| &f.classes)
        .filter(|c| {
            matches!(
                c.kind,
                ast::ClassKind::Model | ast::ClassKind::Block | ast::ClassKind::Class
            ) && !c.partial
        })
        .map(|c| c.name.name.clone())
        .collect();
    if candidates.len() == 1 {
        Ok(candidates[0].clone())
    } else {
        Err(candidates)
    }
}
