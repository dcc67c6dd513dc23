//! From a flat model to an executable program, and the explanation of what was done.
//!
//! Input: a [`eqm_ir::flat::FlatModel`] (whose unknowns with a coefficient zero by the
//! parameters' values the caller may first drop from their equations, [`zero_coefficients`]).
//! The passes run in this order: DAE lowering ([`dae`]),
//! start values that read other variables' start values rewritten ([`starts`]), alias
//! elimination ([`alias`]), index reduction ([`index`]), event extraction ([`events`]),
//! causalisation ([`plan`]) with the check that no Integer variable is solved from a Real
//! equation (`discrete_values`), `homotopy` split into the simulation's actual expressions and the
//! initialization's continuation ([`homotopy`]), the initialization problem ([`init`]), the executable program
//! ([`exec`]) and, on demand, its symbolic Jacobian ([`jacobian`]). The structure graph these
//! passes share (the unknowns, the rows of each equation, the bipartite graph) is in
//! [`structure`], below all of them, so that no pass imports from a later one. Output: an
//! [`exec::ExecProgram`] or diagnostics (`E05xx`, `E06xx`); [`explain`] and [`graphview`] turn
//! the analysis into text and drawings. [`analysis`] runs the passes as one function and
//! chooses the form a high-index model is simulated in, [`modes`] handles equations whose
//! branches change their unknowns during a run, and [`symbols`] is the symbol table of a
//! program; [`plan`] writes an algorithm section inside an algebraic loop as equations
//! (`algorithm_equations`). The structure counts a call's arguments only where its output can
//! depend on them (`function_reads`). Nothing here runs the program.

mod algorithm_equations;
pub mod alias;
pub mod analysis;
pub mod dae;
mod discrete_values;
mod edges;
pub mod events;
pub mod exec;
pub mod explain;
mod function_reads;
pub mod function_zeros;
pub mod graphview;
pub mod homotopy;
pub mod index;
pub mod init;
pub mod jacobian;
pub mod modes;
pub mod plan;
pub mod starts;
pub mod structure;
pub mod symbols;
pub mod zero_coefficients;
