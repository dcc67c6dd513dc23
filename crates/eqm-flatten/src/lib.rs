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
//! The crate root holds only the public entry points ([`flatten`], [`default_model`],
//! [`diagram::diagram`], [`Sources`]) and re-exports. The state of one flattening is the
//! `Flattener` (module `flattener`), which owns its parts by concern; each part is a type of
//! its own module, and the work is done by `impl Flattener` blocks, one module per job. Imports
//! run one way only, without a circle, through three layers:
//!
//! - What the flattener is made of, none of which knows the flattener: `resolve` (the class
//!   table and class lookup), `conversion` (a library's conversion script, read) and
//!   `converted_lookup` (lookup inside classes written for an earlier version of a library),
//!   `modifier` (modifiers merged with their scopes), `value` (values of
//!   expressions and element-wise arithmetic), `consteval` (compile-time evaluation of flat
//!   expressions), `experiment` (the experiment annotation), `datafiles` (the data files
//!   `readMatrix` reads, parsed), `layout` (class layouts, instances, members, what a reference
//!   denotes, resolved types, what connecting needs of a variable), `connections` (the connection
//!   state), `function_table` (the function table, function locals and signatures, functions as
//!   values), `eval_context` (function frames, bound iterators, `end` sizes) and `caches` (what
//!   is computed once and shared, and the redeclarations checked).
//! - `flattener`: the `Flattener`, its [`Options`], the run and the order of its passes.
//! - The jobs: `instances` (layouts collected, instances made, members instantiated on demand),
//!   `instantiate` (what a declared element becomes), `limits` (the size and depth limits of one
//!   model), `missing_classes` (the diagnostic for a missing Modelica Standard Library class),
//!   `variables` (variables with the modifiers
//!   applied to them), `redeclare` (replaceable classes and redeclarations), `eval`
//!   (expressions), `names` (references), `calls` (calls and built-in functions), `iterators`
//!   (array constructors, reductions, `end`), `enumerations` (enumeration types and literals),
//!   `records` (records as values), `operators` and `overloads` (the constructors and operators
//!   of operator records), `functions` (user functions: interfaces, instances, locals,
//!   calls), `functionals` (functions as arguments and functional parameters), `statements`
//!   (algorithm statements), `algorithm_checks` (assertions and `terminate` of algorithm
//!   sections, and the sections that only check), `equations` (equations and connects), `connect` (connection sets),
//!   `balance` (the balance check).
//! - Beside flattening: `diagram` gives, instead of the flat model, the model's component
//!   diagram from the same instances and connects; `stdlib` is the embedded standard library
//!   and `sources` the parsed sources of one compilation, from which it flattens a model;
//!   `predefined` holds the predefined enumeration types (`StateSelect`, `AssertionLevel`).

pub mod diagram;
pub mod embedded;
pub mod library;
pub mod resolve;
pub mod sources;
pub mod stdlib;

mod algorithm_checks;
mod algorithm_loops;
mod algorithm_reinits;
mod assignments;
mod balance;
mod binding_sizes;
mod binding_variability;
mod caches;
mod calls;
mod class_modifiers;
mod class_restrictions;
mod connect;
mod connect_rules;
mod connections;
mod connector_sizes;
mod constant_lookup;
mod consteval;
mod conversion;
mod converted_lookup;
mod data_calls;
mod datafiles;
mod derived_types;
mod duplicate_modifiers;
mod enumeration_types;
mod enumerations;
mod equations;
mod eval;
mod eval_context;
mod expandable;
mod experiment;
mod final_modifiers;
mod flattener;
mod function_table;
mod functionals;
mod functions;
mod inheritance_rules;
mod inner_outer;
mod inner_types;
mod instances;
mod instantiate;
mod iterators;
mod layout;
mod limits;
mod masked_reductions;
mod matrix_power;
mod missing_classes;
mod modifier;
mod names;
mod operators;
mod overconstrained;
mod overloads;
mod package_views;
mod predefined;
mod printing;
mod range_assignments;
mod range_lengths;
mod range_values;
mod ranges;
mod real_loops;
mod records;
mod redeclare;
mod reduction_functions;
mod slices;
mod spanning_trees;
mod spatial;
mod statements;
mod stream_connectors;
mod streams;
mod string_options;
mod string_variables;
mod subscripts;
mod type_prefixes;
mod unbound_parameters;
mod value;
mod variables;
mod when_effects;
mod when_guards;

pub use datafiles::DataFiles;
pub use eqm_diag::source::ReadData;
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

/// Names the single model among the user's classes, for commands without `--model`: the one
/// top-level model (or block); where the files define none at the top level, the one inside
/// their packages (`package Circuit ... model Test ... end Circuit;` runs `Circuit.Test`).
/// Otherwise the candidates, by their full names.
pub fn default_model(files: &[&ast::StoredDefinition]) -> Result<String, Vec<String>> {
    let top: Vec<&ast::ClassDef> = files.iter().flat_map(|f| &f.classes).collect();
    let mut candidates: Vec<String> = top
        .iter()
        .filter(|c| is_runnable(c))
        .map(|c| c.name.name.clone())
        .collect();
    if candidates.is_empty() {
        for class in &top {
            packaged_models(class, &class.name.name, &mut candidates);
        }
    }
    if candidates.len() == 1 {
        Ok(candidates[0].clone())
    } else {
        Err(candidates)
    }
}

/// Whether a class can be run: a model, block or class that is not partial.
fn is_runnable(c: &ast::ClassDef) -> bool {
    matches!(
        c.kind,
        ast::ClassKind::Model | ast::ClassKind::Block | ast::ClassKind::Class
    ) && !c.partial
}

/// The runnable classes among the public elements of package `class` (named `name`) and of the
/// packages inside it, by their full names, in the order of the file. A loop over a stack of
/// the packages still to visit, so that the nesting depth costs no native stack.
fn packaged_models(class: &ast::ClassDef, name: &str, out: &mut Vec<String>) {
    let mut pending = vec![(class, name.to_string())];
    while let Some((package, prefix)) = pending.pop() {
        if package.kind != ast::ClassKind::Package {
            continue;
        }
        let ast::ClassBody::Long { sections, .. } = &package.body else {
            continue;
        };
        let mut nested = Vec::new();
        for section in sections {
            let ast::Section::Elements {
                visibility: ast::Visibility::Public,
                elements,
                ..
            } = section
            else {
                continue;
            };
            for element in elements {
                let ast::Element::Class(inner) = element else {
                    continue;
                };
                let full = format!("{prefix}.{}", inner.name.name);
                if is_runnable(inner) {
                    out.push(full);
                } else {
                    nested.push((&**inner, full));
                }
            }
        }
        // The packages inside in the file's order: the stack takes them back to front.
        pending.extend(nested.into_iter().rev());
    }
}
