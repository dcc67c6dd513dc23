//! From a flat model to an executable program, and the explanation of what was done.
//!
//! Input: a [`eqm_ir::flat::FlatModel`]. The passes run in this order: DAE lowering ([`dae`]),
//! alias elimination ([`alias`]), index reduction ([`index`]), event extraction ([`events`]),
//! causalisation ([`plan`]), the initialization problem ([`init`]), the executable program
//! ([`exec`]) and, on demand, its symbolic Jacobian ([`jacobian`]). Output: an
//! [`exec::ExecProgram`] or diagnostics (`E05xx`, `E06xx`); [`explain`] and [`graphview`] turn
//! the analysis into text and drawings. Nothing here runs the program.

pub mod alias;
pub mod analysis;
pub mod dae;
pub mod events;
pub mod exec;
pub mod explain;
pub mod graphview;
pub mod index;
pub mod init;
pub mod jacobian;
pub mod modes;
pub mod plan;
pub mod symbols;
