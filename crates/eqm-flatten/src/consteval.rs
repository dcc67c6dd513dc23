//! Compile-time evaluation of flat expressions: literals, parameters and constants.
//!
//! Input: an expression of the flat model. Output: its value when it depends only on literals
//! and on parameters and constants whose bindings can be evaluated, else `None` (and which
//! variable blocked it, for messages). Used for structural parameters (array sizes, for ranges,
//! parameter-only conditions) and to show parameter values. Iterative over the arena (children
//! have smaller ids than parents), memoised per variable, with a guard against cyclic bindings.
//! It deliberately evaluates nothing that depends on time or on other variables.

use eqm_ir::builtins::{Builtin, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprId, Node, VarId};
use eqm_ir::flat::{FlatModel, Variability};
use std::collections::BTreeMap;

#[derive(Default)]
pub struct ConstCache {
    vars: BTreeMap<VarId, Option<f64>>,
    in_progress: Vec<VarId>,
}

impl ConstCache {
    /// The value of `e`, or `None` when it depends on time, a non-parameter variable or a
    /// parameter without an evaluable binding.
    pub fn eval(&mut self, model: &FlatModel, e: ExprId) -> Option<f64> {
        let node = model.exprs.get(e).clone();
        Some(match node {
            Node::Real(bits) => f64::from_bits(bits),
            Node::Int(v) => v as f64,
            Node::Bool(b) => f64::from(u8::from(b)),
            Node::Var(v) => return self.var(model, v),
            Node::Str(_) | Node::Local(_) | Node::Time | Node::CallOutput(..) => return None,
            Node::Unary(op, a) => eqm_ir::symbolic::eval::unary(op, self.eval(model, a)?),
            // `false and x` is false and `true or x` is true whatever `x` is, also when `x`
            // is not known at compile time (a String function of a parameter, say).
            Node::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let a = self.eval(model, a)?;
                match (op, a != 0.0) {
                    (BinOp::And, false) => 0.0,
                    (BinOp::Or, true) => 1.0,
                    _ => eqm_ir::symbolic::eval::binary(op, a, self.eval(model, b)?),
                }
            }
            Node::Binary(op, a, b) => {
                let a = self.eval(model, a)?;
                let b = self.eval(model, b)?;
                eqm_ir::symbolic::eval::binary(op, a, b)
            }
            Node::If(c, a, b) => {
                if self.eval(model, c)? != 0.0 {
                    self.eval(model, a)?
                } else {
                    self.eval(model, b)?
                }
            }
            Node::Call(Callee::Builtin(f), args) => {
                let values: Option<Vec<f64>> = args.iter().map(|a| self.eval(model, *a)).collect();
                let values = values?;
                match (f.info().eval, values.as_slice()) {
                    (Eval::Unary(g), [x]) => g(*x),
                    (Eval::Binary(g), [x, y]) => g(*x, *y),
                    _ if matches!(f, Builtin::NoEvent | Builtin::Smooth) => *values.last()?,
                    _ => return None,
                }
            }
            Node::Call(Callee::User(_) | Callee::External(_), _) => return None,
        })
    }

    fn var(&mut self, model: &FlatModel, v: VarId) -> Option<f64> {
        if let Some(value) = self.vars.get(&v) {
            return *value;
        }
        let var = model.var(v);
        if !matches!(var.variability, Variability::Parameter | Variability::Constant) || self.in_progress.contains(&v) {
            return None;
        }
        let binding = var.binding?;
        self.in_progress.push(v);
        let value = self.eval(model, binding);
        self.in_progress.pop();
        self.vars.insert(v, value);
        value
    }

    /// The first variable that keeps `e` from being a compile-time constant, for messages.
    pub fn blocker(&mut self, model: &FlatModel, e: ExprId) -> Option<VarId> {
        let mut vars = Vec::new();
        model.exprs.vars_in(e, &mut vars);
        vars.into_iter().find(|v| self.var(model, *v).is_none())
    }
}
