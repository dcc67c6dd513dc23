//! Compile-time evaluation of flat expressions: literals, parameters, constants and calls of
//! the model's own functions on them.
//!
//! Input: an expression of the flat model. Output: its value when it depends only on literals
//! and on parameters and constants whose bindings can be evaluated, else `None` (and which
//! variable blocked it, for messages). Used for structural parameters (array sizes, for ranges,
//! parameter-only conditions, `parameter Integer n = f(p)`) and to show parameter values.
//! Memoised per variable, with a guard against cyclic bindings. A call of a user function is
//! run here statement by statement with the interpreter's arithmetic (the same operators and
//! built-ins, locals starting at 0), within a budget of steps and a depth of calls. It
//! deliberately evaluates nothing that depends on time or on other variables, no external
//! function (C code is linked later, and an impure one must run during the simulation) and no
//! function that is still being flattened.

use eqm_ir::builtins::{Builtin, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node, VarId};
use eqm_ir::flat::{FlatModel, Place, Statement, Variability};
use std::collections::BTreeMap;

/// The most statements and calls one compile-time evaluation runs before it gives up (a loop
/// that does not end, or one too long to run while compiling).
const STEP_BUDGET: u64 = 10_000_000;

/// The deepest nesting of calls one compile-time evaluation follows.
const MAX_CALL_DEPTH: usize = 64;

#[derive(Default)]
pub struct ConstCache {
    vars: BTreeMap<VarId, Option<f64>>,
    in_progress: Vec<VarId>,
    /// The functions whose bodies are still being flattened: a call of one is not evaluated.
    pub(crate) unfinished: Vec<FuncId>,
    /// The outputs of the calls evaluated so far, by function and argument bits.
    calls: BTreeMap<(FuncId, Vec<u64>), Option<Outputs>>,
    /// The steps left to the evaluation under way, and its depth of calls.
    steps: u64,
    depth: usize,
}

/// The values of the outputs of a call, in order.
type Outputs = std::rc::Rc<[f64]>;

/// How a statement list ended: normally, by `break` or by `return`.
enum Flow {
    Next,
    Break,
    Return,
}

impl ConstCache {
    /// The value of `e`, or `None` when it depends on time, a non-parameter variable or a
    /// parameter without an evaluable binding.
    pub fn eval(&mut self, model: &FlatModel, e: ExprId) -> Option<f64> {
        if self.depth == 0 {
            self.steps = STEP_BUDGET;
        }
        self.eval_in(model, e, &[])
    }

    /// The value of `e` in a function body whose locals hold `locals` (empty outside).
    fn eval_in(&mut self, model: &FlatModel, e: ExprId, locals: &[f64]) -> Option<f64> {
        let node = model.exprs.get(e).clone();
        Some(match node {
            Node::Real(bits) => f64::from_bits(bits),
            Node::Int(v) => v as f64,
            Node::Bool(b) => f64::from(u8::from(b)),
            Node::Var(v) => return self.var(model, v),
            Node::Local(slot) => return locals.get(slot as usize).copied(),
            Node::Str(_) | Node::Time => return None,
            Node::Call(Callee::User(f), args) => return self.call(model, f, &args, locals)?.first().copied(),
            Node::CallOutput(call, k) => {
                let Node::Call(Callee::User(f), args) = model.exprs.get(call).clone() else {
                    return None;
                };
                return self.call(model, f, &args, locals)?.get(k as usize).copied();
            }
            Node::Unary(op, a) => eqm_ir::symbolic::eval::unary(op, self.eval_in(model, a, locals)?),
            // `false and x` is false and `true or x` is true whatever `x` is, also when `x`
            // is not known at compile time (a String function of a parameter, say).
            Node::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let a = self.eval_in(model, a, locals)?;
                match (op, a != 0.0) {
                    (BinOp::And, false) => 0.0,
                    (BinOp::Or, true) => 1.0,
                    _ => eqm_ir::symbolic::eval::binary(op, a, self.eval_in(model, b, locals)?),
                }
            }
            Node::Binary(op, a, b) => {
                let a = self.eval_in(model, a, locals)?;
                let b = self.eval_in(model, b, locals)?;
                eqm_ir::symbolic::eval::binary(op, a, b)
            }
            Node::If(c, a, b) => {
                if self.eval_in(model, c, locals)? != 0.0 {
                    self.eval_in(model, a, locals)?
                } else {
                    self.eval_in(model, b, locals)?
                }
            }
            Node::Call(Callee::Builtin(f), args) => {
                let values: Option<Vec<f64>> = args.iter().map(|a| self.eval_in(model, *a, locals)).collect();
                let values = values?;
                match (f.info().eval, values.as_slice()) {
                    (Eval::Unary(g), [x]) => g(*x),
                    (Eval::Binary(g), [x, y]) => g(*x, *y),
                    _ if matches!(f, Builtin::NoEvent | Builtin::Smooth) => *values.last()?,
                    _ => return None,
                }
            }
            Node::Call(Callee::External(_), _) => return None,
        })
    }

    /// The outputs of a call of the user function `f` with the arguments `args` (evaluated
    /// with `locals`), run statement by statement; `None` when an argument is not known, the
    /// function is still being flattened, its body needs what is not known at compile time, an
    /// assertion fails, or it runs past the budget.
    fn call(&mut self, model: &FlatModel, f: FuncId, args: &[ExprId], locals: &[f64]) -> Option<Outputs> {
        if self.unfinished.contains(&f) || self.depth >= MAX_CALL_DEPTH {
            return None;
        }
        let function = model.functions.get(f.0 as usize)?;
        let mut values = Vec::with_capacity(function.slots.len());
        for a in args {
            values.push(self.eval_in(model, *a, locals)?);
        }
        let key = (f, values.iter().map(|v| v.to_bits()).collect());
        if let Some(known) = self.calls.get(&key) {
            return known.clone();
        }
        if values.len() != function.inputs as usize {
            return None;
        }
        // Outputs and protected variables start at 0, as in the interpreter.
        values.resize(function.slots.len(), 0.0);
        self.depth += 1;
        let ran = self.run(model, &function.body, &mut values);
        self.depth -= 1;
        let outputs: Option<Outputs> = ran.map(|_| {
            let first = function.inputs as usize;
            values[first..first + function.outputs as usize].into()
        });
        self.calls.insert(key, outputs.clone());
        outputs
    }

    /// Runs `statements` on the locals `slots`; `None` when they cannot run at compile time.
    fn run(&mut self, model: &FlatModel, statements: &[Statement], slots: &mut Vec<f64>) -> Option<Flow> {
        for statement in statements {
            self.steps = self.steps.checked_sub(1)?;
            match statement {
                Statement::Assign {
                    target: Place::Local(slot),
                    value,
                    ..
                } => {
                    let v = self.eval_in(model, *value, slots)?;
                    *slots.get_mut(*slot as usize)? = v;
                }
                Statement::Assign {
                    target: Place::Var(_), ..
                } => return None,
                Statement::If {
                    branches, else_branch, ..
                } => {
                    let mut taken = else_branch;
                    for (condition, body) in branches {
                        if self.eval_in(model, *condition, slots)? != 0.0 {
                            taken = body;
                            break;
                        }
                    }
                    match self.run(model, taken, slots)? {
                        Flow::Next => {}
                        flow => return Some(flow),
                    }
                }
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        match self.run(model, body, slots)? {
                            Flow::Next => {}
                            Flow::Break => break,
                            Flow::Return => return Some(Flow::Return),
                        }
                    }
                }
                Statement::For {
                    index,
                    start,
                    step,
                    stop,
                    body,
                    ..
                } => {
                    let mut i = self.eval_in(model, *start, slots)?;
                    let step = self.eval_in(model, *step, slots)?;
                    let stop = self.eval_in(model, *stop, slots)?;
                    if step == 0.0 || step.is_nan() {
                        return None;
                    }
                    while !((step > 0.0 && i > stop) || (step < 0.0 && i < stop)) {
                        self.steps = self.steps.checked_sub(1)?;
                        *slots.get_mut(*index as usize)? = i;
                        match self.run(model, body, slots)? {
                            Flow::Next => {}
                            Flow::Break => break,
                            Flow::Return => return Some(Flow::Return),
                        }
                        i += step;
                    }
                }
                Statement::While { condition, body, .. } => {
                    while self.eval_in(model, *condition, slots)? != 0.0 {
                        self.steps = self.steps.checked_sub(1)?;
                        match self.run(model, body, slots)? {
                            Flow::Next => {}
                            Flow::Break => break,
                            Flow::Return => return Some(Flow::Return),
                        }
                    }
                }
                Statement::Assert { condition, .. } => {
                    if self.eval_in(model, *condition, slots)? == 0.0 {
                        return None;
                    }
                }
                // A print happens during the run, once per event, never while compiling.
                Statement::Terminate { .. } | Statement::Print { .. } => return None,
                // A call statement runs its function for what it does: known at compile time
                // only when that function's call completes (its assertions hold).
                Statement::Call { function, args, .. } => {
                    self.call(model, *function, args, slots)?;
                }
                Statement::Break { .. } => return Some(Flow::Break),
                Statement::Return { .. } => return Some(Flow::Return),
            }
        }
        Some(Flow::Next)
    }

    fn var(&mut self, model: &FlatModel, v: VarId) -> Option<f64> {
        if let Some(value) = self.vars.get(&v) {
            return *value;
        }
        let var = model.var(v);
        if !matches!(var.variability, Variability::Parameter | Variability::Constant) || self.in_progress.contains(&v) {
            return None;
        }
        // A parameter that nothing gives a value has its start value (Modelica 8.6: its
        // `fixed` is true by default), the value it has during the run (W0302 says so), so a
        // condition or size that reads it is decided with that value too. One computed by the
        // initial equations (`fixed = false`) is known only then.
        let binding = match var.binding {
            Some(binding) => binding,
            None if var.variability == Variability::Parameter && var.attributes.fixed != Some(false) => {
                var.attributes.start?
            }
            None => return None,
        };
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
