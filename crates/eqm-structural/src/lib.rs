//! Structural analysis of the equation system: graph algorithms on integer ids only.
//!
//! Input: the bipartite incidence of equations and unknowns ([`incidence::Incidence`]), built by
//! a later stage from the flat DAE, plus for index reduction the derivative chains of variables.
//! Output: plans made of ids: matchings, BLT blocks, tearing sequences, the equations to
//! differentiate, the dummy derivatives chosen for state selection, and the dependency order of
//! values computed one from another (`order`).
//! This module never sees expressions: applying a plan symbolically (solving, differentiating,
//! substituting) is the caller's job. Following ModelingToolkit's StateSelection.jl, keeping the
//! algorithms symbolic-free makes them testable on random graphs and fast on huge models.
//!
//! Every algorithm is iterative with explicit stacks (a million equations must not overflow a
//! thread stack), runs in linear or near-linear time, and breaks ties by index so that the same
//! input always gives the same plan.

pub mod blt;
pub mod coloring;
pub mod dummy;
pub mod incidence;
pub mod matching;
pub mod order;
pub mod pantelides;
pub mod tearing;
