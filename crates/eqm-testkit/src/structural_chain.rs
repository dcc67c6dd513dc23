//! Generator of a chain-shaped incidence, shared by the tests of `eqm-structural` and
//! `benches/structural.rs`.
//!
//! Each stage has 11 equations and 11 unknowns, shaped like a mass-spring-damper stage after
//! alias elimination: a link to the previous stage, two explicit assignments, an algebraic loop
//! of three equations, one of two equations, a one-equation implicit block and a few explicit
//! equations. The BLT of a stage is therefore 8 blocks, two of which need one tearing variable.

use eqm_structural::incidence::{EdgeKind, Incidence, IncidenceBuilder, VarIdx};

/// Equations (and unknowns) per stage.
pub const STAGE: usize = 11;
/// BLT blocks per stage.
pub const BLOCKS_PER_STAGE: usize = 8;

/// A chain of `stages` stages (`11 * stages` equations).
pub fn chain(stages: usize) -> Incidence {
    use EdgeKind::{Implicit as I, Solvable as S};
    let n = stages * STAGE;
    let mut b = IncidenceBuilder::new(n).expect("size fits");
    b.reserve(n, n * 3);
    for s in 0..stages {
        let a = |k: usize| VarIdx((s * STAGE + k) as u32);
        // The previous stage's last variable, or this stage's own first for the first stage.
        let prev = if s == 0 { a(0) } else { VarIdx((s * STAGE - 1) as u32) };
        let eqs: [&[(VarIdx, EdgeKind)]; STAGE] = [
            &[(a(0), S), (prev, I)],
            &[(a(1), S), (a(0), I)],
            &[(a(2), S), (a(4), I), (a(1), I)],
            &[(a(3), S), (a(2), I)],
            &[(a(4), I), (a(3), I)],
            &[(a(5), S), (a(4), I)],
            &[(a(6), S), (a(7), I), (a(5), I)],
            &[(a(7), I), (a(6), I)],
            &[(a(8), S), (a(7), I), (a(0), I)],
            &[(a(9), I), (a(8), I)],
            &[(a(10), S), (a(9), I), (a(8), I)],
        ];
        for eq in eqs {
            b.add_equation(eq.iter().copied()).expect("valid ids");
        }
    }
    b.build()
}
