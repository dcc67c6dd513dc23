//! Tests of the JIT (`eqm_jit`) against the reference evaluator (`symbolic::evaluate_in`):
//! every operator and numeric built-in on special values, random expressions, branches that
//! must not run, user functions written in `.eqm`, splitting of long segments, and the checks
//! of the safe wrapper.

use crate::pipeline::Pipeline;
use eqm_compile::exec::Instr;
use eqm_flatten::Sources;
use eqm_ir::builtins::{ALL, Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FuncId, Node, UnOp, VarId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::FlatModel;
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::{Env, evaluate_in};
use eqm_jit::{CompiledModule, JitError, JitOptions, OptLevel, Segment, compile};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::Duration;

mod branches;
mod expressions;
mod functions;
mod results;
mod segments;
mod wrapper;

// ---------------------------------------------------------------------------------------------
// A small model of the evaluation arrays: variables 0 and 1 are states, 2 and 3 parameters,
// 4 and 5 work slots written before the segment runs. Results go to work[RESULTS + k].

const VARS: u32 = 6;
const RESULTS: u32 = 8;

fn slot_of(v: VarId) -> Option<Slot> {
    match v.0 {
        0 | 1 => Some(Slot::State(v.0)),
        2 | 3 => Some(Slot::Param(v.0 - 2)),
        4 | 5 => Some(Slot::Work(v.0 - 4)),
        _ => None,
    }
}

/// Variable values and time, as the evaluator sees them and as arrays for the JIT.
#[derive(Debug, Clone)]
struct Point {
    vars: [f64; VARS as usize],
    time: f64,
}

impl Env for Point {
    fn var(&self, v: VarId) -> f64 {
        self.vars.get(v.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.time
    }
}

struct Arrays {
    x: Vec<f64>,
    p: Vec<f64>,
    dx: Vec<f64>,
    work: Vec<f64>,
}

impl Arrays {
    fn new(point: &Point, results: usize) -> Arrays {
        let mut work = vec![f64::NAN; RESULTS as usize + results];
        work[..2].copy_from_slice(&point.vars[4..6]);
        Arrays {
            x: point.vars[0..2].to_vec(),
            p: point.vars[2..4].to_vec(),
            dx: Vec::new(),
            work,
        }
    }

    fn run(&mut self, module: &CompiledModule, segment: usize, t: f64) -> Result<(), JitError> {
        module.call(segment, t, &self.x, &self.p, &mut self.dx, &mut self.work)
    }
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn segment_of(exprs: &[ExprId]) -> Segment {
    Segment::assignments(
        exprs
            .iter()
            .enumerate()
            .map(|(k, e)| (Slot::Work(RESULTS + k as u32), *e))
            .collect(),
    )
}

/// Compiles `exprs` into one segment, runs it at each point and compares every result with the
/// evaluator, bit for bit (any NaN matches any NaN).
fn check_against_evaluator(arena: &ExprArena, exprs: &[ExprId], points: &[Point]) -> Result<(), String> {
    let module = compile(arena, &[], &[], &slot_of, &[segment_of(exprs)], &JitOptions::default())
        .map_err(|e| format!("compile: {e}"))?;
    for point in points {
        let mut arrays = Arrays::new(point, exprs.len());
        arrays.run(&module, 0, point.time).map_err(|e| e.to_string())?;
        for (k, e) in exprs.iter().enumerate() {
            let expected = evaluate_in(arena, *e, point).map_err(|e| e.to_string())?;
            let got = arrays.work[RESULTS as usize + k];
            if !same(got, expected) {
                let name = |v: VarId| format!("v{}", v.0);
                return Err(format!(
                    "{} at {point:?}: JIT {got:e} ({:#x}), evaluator {expected:e} ({:#x})",
                    arena.display(*e, &name),
                    got.to_bits(),
                    expected.to_bits()
                ));
            }
        }
    }
    Ok(())
}

fn flatten(text: &str) -> FlatModel {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("test.eqm", text);
    let flat = session.flatten(None, &eqm_flatten::Options::default());
    flat.unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}
