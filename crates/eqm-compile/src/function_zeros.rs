//! Outputs of user functions that are provably constant once the arguments known at
//! translation are known: a partial evaluation of the function body in which every other
//! argument is unknown. A device model that computes its capacitances from the node voltages
//! with a function (`cc = capacitances(parameters..., v1, v2)`) gives exactly zero for every
//! voltage when the parameters switch every capacitance off; such an output is a coefficient
//! that is zero by the parameters' values, as [`crate::zero_coefficients`] treats them.
//!
//! Input: the flat model, a user function call (callee and argument expressions) and the value
//! of each argument where it is known (`None` for one that reads a variable changing during the
//! run). Output: per output of the function, its value when every path through the body gives
//! that same value whatever the unknown arguments are, otherwise unknown.
//!
//! The evaluation is exact, never a guess: a value is known only when the operations that give
//! it are. An operation on unknown operands is unknown, except a product with a factor known to
//! be zero (Modelica's Real values are finite, so it is zero), `false and x` and `true or x`. A
//! branch whose condition is unknown is evaluated on both sides and a variable keeps a known
//! value only where both sides agree on it. It deliberately gives up (every output unknown) on
//! what it does not follow: a `while` loop or a loop over a range known only during the run makes
//! every variable it assigns unknown; `break` and `return`, external functions, calls nested
//! deeper than [`MAX_DEPTH`] and anything else make the result unknown.

use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, FxHashMap, Node, UnOp};
use eqm_ir::flat::{FlatModel, Place, Statement};
use eqm_ir::symbolic::eval;

/// How deep calls of user functions are followed.
pub const MAX_DEPTH: usize = 16;

/// A value of the partial evaluation: known (its bits) or unknown.
type Value = Option<f64>;

/// The outputs of calls already evaluated, by callee and the bits of their arguments.
type Memo = FxHashMap<(FuncId, Vec<Option<u64>>), Option<Vec<Value>>>;

/// The partial evaluation of one model's functions, with the calls it evaluated kept.
pub struct PartialEvaluator<'a> {
    flat: &'a FlatModel,
    memo: Memo,
}

/// A path that the evaluation does not follow (`break`, `return`, too deep a call): its
/// function's outputs are all unknown.
struct GiveUp;

impl<'a> PartialEvaluator<'a> {
    pub fn new(flat: &'a FlatModel) -> Self {
        PartialEvaluator {
            flat,
            memo: Memo::default(),
        }
    }

    /// The outputs of `function` called with `args` (each known or not), or `None` when the
    /// evaluation gave up.
    pub fn outputs(&mut self, function: FuncId, args: &[Value]) -> Option<Vec<Value>> {
        self.call(function, args, 0)
    }

    fn call(&mut self, function: FuncId, args: &[Value], depth: usize) -> Option<Vec<Value>> {
        let key = (function, args.iter().map(|a| a.map(f64::to_bits)).collect::<Vec<_>>());
        if let Some(known) = self.memo.get(&key) {
            return known.clone();
        }
        let result = (depth < MAX_DEPTH)
            .then(|| self.body(function, args, depth).ok())
            .flatten();
        self.memo.insert(key, result.clone());
        result
    }

    /// The body of `function` run on `args`: its outputs, or [`GiveUp`].
    fn body(&mut self, function: FuncId, args: &[Value], depth: usize) -> Result<Vec<Value>, GiveUp> {
        let f = self.flat.functions.get(function.0 as usize).ok_or(GiveUp)?;
        let (inputs, outputs) = (f.inputs as usize, f.outputs as usize);
        if args.len() != inputs {
            return Err(GiveUp);
        }
        let mut locals: Vec<Value> = vec![None; f.slots.len()];
        locals[..inputs].copy_from_slice(args);
        for k in inputs..f.slots.len() {
            if let Some(default) = f.slots[k].default {
                locals[k] = self.expr(default, &locals, depth)?;
            }
        }
        let body = &f.body;
        self.statements(body, &mut locals, depth)?;
        Ok(locals[inputs..inputs + outputs].to_vec())
    }

    fn statements(&mut self, body: &[Statement], locals: &mut Vec<Value>, depth: usize) -> Result<(), GiveUp> {
        for statement in body {
            self.statement(statement, locals, depth)?;
        }
        Ok(())
    }

    fn statement(&mut self, statement: &Statement, locals: &mut Vec<Value>, depth: usize) -> Result<(), GiveUp> {
        match statement {
            Statement::Assign {
                target: Place::Local(k),
                value,
                ..
            } => {
                let v = self.expr(*value, locals, depth)?;
                *locals.get_mut(*k as usize).ok_or(GiveUp)? = v;
            }
            Statement::If {
                branches, else_branch, ..
            } => self.branches(branches, else_branch, locals, depth)?,
            Statement::Unrolled { iterations, .. } => {
                for body in iterations {
                    self.statements(body, locals, depth)?;
                }
            }
            Statement::For { index, body, .. } => {
                forget_assigned(body, locals);
                if let Some(slot) = locals.get_mut(*index as usize) {
                    *slot = None;
                }
            }
            Statement::While { body, .. } => forget_assigned(body, locals),
            // An assertion that fails stops the run; it changes no value.
            Statement::Assert { .. }
            | Statement::Terminate { .. }
            | Statement::Print { .. }
            | Statement::Call { .. } => {}
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    /// The branches of an if-statement from the first of `branches` on: a known condition
    /// chooses, an unknown one runs both sides and keeps what they agree on.
    fn branches(
        &mut self,
        branches: &[(ExprId, Vec<Statement>)],
        else_branch: &[Statement],
        locals: &mut Vec<Value>,
        depth: usize,
    ) -> Result<(), GiveUp> {
        let Some(((condition, body), rest)) = branches.split_first() else {
            return self.statements(else_branch, locals, depth);
        };
        match self.expr(*condition, locals, depth)? {
            Some(c) if c != 0.0 => self.statements(body, locals, depth),
            Some(_) => self.branches(rest, else_branch, locals, depth),
            None => {
                let mut other = locals.clone();
                self.statements(body, locals, depth)?;
                self.branches(rest, else_branch, &mut other, depth)?;
                for (a, b) in locals.iter_mut().zip(other) {
                    if *a != b {
                        *a = None;
                    }
                }
                Ok(())
            }
        }
    }

    /// The value of `e` with the function's `locals`. Iterative over the children would not
    /// pay: function bodies are shallow expressions.
    fn expr(&mut self, e: ExprId, locals: &[Value], depth: usize) -> Result<Value, GiveUp> {
        let flat = self.flat;
        Ok(match flat.exprs.get(e) {
            Node::Real(bits) => Some(f64::from_bits(*bits)),
            Node::Int(i) => Some(*i as f64),
            Node::Bool(b) => Some(f64::from(u8::from(*b))),
            Node::Local(k) => locals.get(*k as usize).copied().flatten(),
            Node::Var(v) => {
                let var = flat.var(*v);
                match (var.variability, var.binding) {
                    (eqm_ir::flat::Variability::Constant, Some(b)) => self.expr(b, locals, depth)?,
                    _ => None,
                }
            }
            Node::Unary(op, a) => {
                let a = self.expr(*a, locals, depth)?;
                a.map(|a| eval::unary(*op, a))
                    .filter(|_| matches!(op, UnOp::Neg | UnOp::Not))
            }
            Node::Binary(op, a, b) => {
                let (a, b) = (self.expr(*a, locals, depth)?, self.expr(*b, locals, depth)?);
                match (op, a, b) {
                    (_, Some(a), Some(b)) => Some(eval::binary(*op, a, b)),
                    (BinOp::Mul, Some(z), None) | (BinOp::Mul, None, Some(z)) if z == 0.0 => Some(0.0),
                    (BinOp::And, Some(z), None) | (BinOp::And, None, Some(z)) if z == 0.0 => Some(0.0),
                    (BinOp::Or, Some(t), None) | (BinOp::Or, None, Some(t)) if t != 0.0 => Some(1.0),
                    _ => None,
                }
            }
            Node::If(c, x, y) => match self.expr(*c, locals, depth)? {
                Some(c) if c != 0.0 => self.expr(*x, locals, depth)?,
                Some(_) => self.expr(*y, locals, depth)?,
                None => {
                    let (x, y) = (self.expr(*x, locals, depth)?, self.expr(*y, locals, depth)?);
                    x.filter(|_| x == y)
                }
            },
            Node::Call(Callee::Builtin(b), args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args.iter() {
                    values.push(self.expr(*a, locals, depth)?);
                }
                match (b, values.as_slice()) {
                    // `noEvent` and `smooth` do not change a value.
                    (Builtin::NoEvent, [v]) | (Builtin::Smooth, [_, v]) => *v,
                    _ => values
                        .iter()
                        .copied()
                        .collect::<Option<Vec<f64>>>()
                        .and_then(|known| eval::builtin(*b, &known)),
                }
            }
            Node::Call(Callee::User(f), _) => self.user_call(e, *f, 0, locals, depth)?,
            Node::CallOutput(call, k) => match flat.exprs.get(*call) {
                Node::Call(Callee::User(f), _) => self.user_call(*call, *f, *k as usize, locals, depth)?,
                _ => None,
            },
            _ => None,
        })
    }

    /// Output `k` of the user function call `call` (a [`Node::Call`] of `f`).
    fn user_call(
        &mut self,
        call: ExprId,
        f: FuncId,
        k: usize,
        locals: &[Value],
        depth: usize,
    ) -> Result<Value, GiveUp> {
        let Node::Call(_, args) = self.flat.exprs.get(call) else {
            return Ok(None);
        };
        let args = args.clone();
        let mut values = Vec::with_capacity(args.len());
        for a in args.iter() {
            values.push(self.expr(*a, locals, depth)?);
        }
        Ok(self
            .call(f, &values, depth + 1)
            .and_then(|outputs| outputs.get(k).copied().flatten()))
    }
}

/// Makes every local that `body` assigns (at any depth) unknown: a loop the evaluation does not
/// follow may run any number of times.
fn forget_assigned(body: &[Statement], locals: &mut [Value]) {
    for statement in body {
        match statement {
            Statement::Assign {
                target: Place::Local(k),
                ..
            } => {
                if let Some(slot) = locals.get_mut(*k as usize) {
                    *slot = None;
                }
            }
            Statement::If {
                branches, else_branch, ..
            } => {
                for (_, b) in branches {
                    forget_assigned(b, locals);
                }
                forget_assigned(else_branch, locals);
            }
            Statement::Unrolled { iterations, .. } => {
                for b in iterations {
                    forget_assigned(b, locals);
                }
            }
            Statement::For { index, body, .. } => {
                if let Some(slot) = locals.get_mut(*index as usize) {
                    *slot = None;
                }
                forget_assigned(body, locals);
            }
            Statement::While { body, .. } => forget_assigned(body, locals),
            _ => {}
        }
    }
}
