//! Tests of the symbolic core: evaluation, simplification rules, derivative rules of every
//! built-in against finite differences, solving, huge expressions, and property tests over
//! random expressions (simplification keeps values, derivatives agree with finite differences,
//! solutions make the residual vanish).

use eqm_ir::builtins::{ALL, Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FuncId, Node, UnOp, VarId};
use eqm_ir::symbolic::{
    Condition, Env, Simplifier, Solution, diff_time, diff_var, evaluate, evaluate_in, gradient, linear_form, simplify,
    solve_for, solve_for_var, unsolvable_leaves,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;

mod derivatives;
mod evaluation;
mod huge;
mod properties;
mod simplification;
mod solving;

const NAMES: [&str; 5] = ["x", "y", "z", "p", "q"];

fn name(v: VarId) -> String {
    NAMES
        .get(v.0 as usize)
        .map_or_else(|| format!("v{}", v.0), |s| s.to_string())
}

fn show(a: &ExprArena, e: ExprId) -> String {
    a.display(e, &name)
}

/// An environment with given variable values, time, and der values per argument node.
struct TestEnv<'a> {
    vars: &'a [f64],
    time: f64,
    der: &'a dyn Fn(ExprId) -> f64,
}

impl Env for TestEnv<'_> {
    fn var(&self, v: VarId) -> f64 {
        self.vars.get(v.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn der(&self, arg: ExprId) -> Option<f64> {
        Some((self.der)(arg))
    }
}

fn eval_at(a: &ExprArena, e: ExprId, vars: &[f64]) -> f64 {
    evaluate(a, e, &|v| vars.get(v.0 as usize).copied().unwrap_or(f64::NAN), 0.0).unwrap_or(f64::NAN)
}

/// A small parser-free builder: `ex(&mut a, |b| ...)`.
struct B<'a>(&'a mut ExprArena);

impl B<'_> {
    fn v(&mut self, i: u32) -> ExprId {
        self.0.var(VarId(i))
    }
    fn r(&mut self, x: f64) -> ExprId {
        self.0.real(x)
    }
    fn bin(&mut self, op: BinOp, x: ExprId, y: ExprId) -> ExprId {
        self.0.binary(op, x, y)
    }
    fn add(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Add, x, y)
    }
    fn sub(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Sub, x, y)
    }
    fn mul(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Mul, x, y)
    }
    fn div(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Div, x, y)
    }
    fn pow(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Pow, x, y)
    }
    fn neg(&mut self, x: ExprId) -> ExprId {
        self.0.unary(UnOp::Neg, x)
    }
    fn f(&mut self, b: Builtin, args: Vec<ExprId>) -> ExprId {
        self.0.builtin(b, args)
    }
    fn der(&mut self, x: ExprId) -> ExprId {
        self.0.builtin(Builtin::Der, vec![x])
    }
}

fn simplified(build: impl FnOnce(&mut B) -> ExprId) -> String {
    let mut a = ExprArena::new();
    let e = build(&mut B(&mut a));
    let s = simplify(&mut a, e);
    show(&a, s)
}

// ---------------------------------------------------------------------------------------------
// Solving

fn solved(sol: &Solution) -> (ExprId, Vec<Condition>) {
    match sol {
        Solution::Solved { value, conditions } => (*value, conditions.clone()),
        other => panic!("not solved: {other:?}"),
    }
}
