//! Integration tests of `eqm-jit`: what the native code computes, checked against values
//! worked out in the test by hand or with Rust's `f64` functions. Expressions (arithmetic,
//! comparisons, branches, built-in functions, time and derivative slots), algorithm statements
//! and user functions (written in `.eqm` and flattened), calls of external C functions at
//! their address, and re-rolled loops. The bit-for-bit
//! comparisons with the interpreter are the simulator's tests (`eqm-sim`), which has both.
//!
//! One test binary for the crate; each module is one family of tests.

mod expressions;
mod external;
mod functions;
mod reroll;

use eqm_ir::expr::{ExprArena, ExprId, VarId};
use eqm_ir::flat::FlatModel;
use eqm_ir::slot::Slot;
use eqm_jit::{CompiledModule, JitOptions, Segment, compile};

/// The evaluation arrays of the expression tests: variables 0 and 1 are the states `x[0..2]`,
/// 2 and 3 the parameters `p[0..2]`; results go to `work[k]`.
fn slot_of(v: VarId) -> Option<Slot> {
    match v.0 {
        0 | 1 => Some(Slot::State(v.0)),
        2 | 3 => Some(Slot::Param(v.0 - 2)),
        _ => None,
    }
}

/// Compiles `exprs` as one segment assigning `work[k] := exprs[k]`.
fn compile_exprs(arena: &ExprArena, exprs: &[ExprId]) -> CompiledModule {
    let assignments = exprs
        .iter()
        .enumerate()
        .map(|(k, e)| (Slot::Work(k as u32), *e))
        .collect();
    compile(
        arena,
        &[],
        &[],
        &slot_of,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .unwrap_or_else(|e| panic!("compiles: {e}"))
}

/// The values of `exprs` at time `t`, states `x` and parameters `p`, computed by native code.
fn values(arena: &ExprArena, exprs: &[ExprId], t: f64, x: [f64; 2], p: [f64; 2]) -> Vec<f64> {
    let module = compile_exprs(arena, exprs);
    let mut work = vec![f64::NAN; exprs.len()];
    module.call(0, t, &x, &p, &mut [], &mut work).expect("runs");
    work
}

/// The flat model of `text` (no standard library), or a panic with its diagnostics.
fn flatten(text: &str) -> FlatModel {
    let mut sources = eqm_flatten::Sources::new();
    sources.add_file("test.eqm", text);
    let flat = sources.flatten(None, &eqm_flatten::Options::default());
    flat.unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)))
}
