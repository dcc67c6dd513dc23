//! Derivatives of calls of user-defined functions, for index reduction and the checks of its
//! result.
//!
//! Input: the functions of a flat model with their `derivative` annotations, and a call whose
//! arguments vary (from [`super::diff_time_through`] or [`super::diff_var_through`], through
//! [`CallDerivative`]). Output: the call's derivative (with respect to time or to a leaf: the
//! derivative function is linear in the arguments' derivatives, so both are the same
//! directional derivative), or why it has none, naming the function. A call is differentiated
//! as Modelica lets a tool do it: through the function's `derivative` annotation when one
//! applies (a call of the derivative function with the arguments and their derivatives; an
//! annotation whose `zeroDerivative` inputs vary does not apply), otherwise through its body:
//! the statements are run symbolically from the arguments (an assignment replaces a local's
//! value, an `if` becomes an if-expression of its branches' values, an expanded `for` runs each
//! iteration), and the value of the output is differentiated, which differentiates the calls
//! it makes in turn. `Modelica.Math`'s elementary functions are such bodies: one assignment of
//! a built-in.
//!
//! It deliberately does not differentiate an external C function without an annotation, nor
//! a body with a loop whose iterations are known only during the run, a `break` or a `return`
//! inside a branch: their values are not one expression, and the diagnostic says so.

use super::diff::{Again, CallDerivative, CallSite};
use super::{reachable, substitute};
use crate::expr::{Callee, ExprArena, ExprId, FuncId, Node};
use crate::external::ExternalFunction;
use crate::flat::{Function, FunctionDerivative, Place, ScalarType, Statement};
use std::cell::{Cell, RefCell};

/// How deep bodies are differentiated inside bodies before the function is taken to be
/// recursive.
const MAX_NESTING: u32 = 64;

/// The functions of a model as the differentiation of their calls needs them.
pub struct FunctionCalls<'f> {
    functions: &'f [Function],
    derivatives: &'f [FunctionDerivative],
    externals: &'f [ExternalFunction],
    /// Why the last call that could not be differentiated could not, naming the function.
    why: RefCell<Option<String>>,
    nesting: Cell<u32>,
}

impl<'f> FunctionCalls<'f> {
    pub fn new(
        functions: &'f [Function],
        derivatives: &'f [FunctionDerivative],
        externals: &'f [ExternalFunction],
    ) -> Self {
        FunctionCalls {
            functions,
            derivatives,
            externals,
            why: RefCell::new(None),
            nesting: Cell::new(0),
        }
    }

    /// Why the last call that could not be differentiated could not, if a call was the reason.
    pub fn take_why(&self) -> Option<String> {
        self.why.borrow_mut().take()
    }

    /// Records why the call of `function` has no derivative, unless a call inside it already
    /// said (the innermost reason is the precise one), in which case it names `function` too.
    fn fail(&self, function: &str, why: &str) {
        let mut slot = self.why.borrow_mut();
        *slot = Some(match slot.take() {
            Some(inner) => format!("{inner}, called by `{function}`"),
            None => format!("`{function}` {why}"),
        });
    }

    /// The first `derivative` annotation of `f` that applies to a call whose argument
    /// derivatives are `dargs`: none of its `zeroDerivative` inputs varies.
    fn annotation(&self, f: FuncId, dargs: &[Option<ExprId>]) -> Option<&'f FunctionDerivative> {
        self.derivatives.iter().find(|d| {
            d.function == f
                && d.zero_derivative
                    .iter()
                    .all(|&s| dargs.get(s as usize).is_none_or(Option::is_none))
        })
    }

    /// The derivative of `call` by annotation `d`: output `call.output` of the derivative
    /// function called with the arguments and the derivatives of the differentiated ones.
    fn by_annotation(&self, arena: &mut ExprArena, d: &FunctionDerivative, call: &CallSite<'_>) -> ExprId {
        let f = &self.functions[d.function.0 as usize];
        // The derivative function returns the derivatives of the Real outputs only, in order.
        let first_output = f.inputs as usize;
        let real = |k: usize| f.slots.get(first_output + k).is_some_and(|s| s.ty == ScalarType::Real);
        if !real(call.output as usize) {
            // An Integer or Boolean output is piecewise constant.
            return arena.real(0.0);
        }
        let index = (0..call.output as usize).filter(|&k| real(k)).count() as u32;
        let zero = arena.real(0.0);
        let mut args = call.args.to_vec();
        args.extend(
            d.differentiated
                .iter()
                .map(|&s| call.dargs.get(s as usize).copied().flatten().unwrap_or(zero)),
        );
        let result = arena.call(Callee::User(d.derivative), args);
        if index == 0 {
            result
        } else {
            arena.add(Node::CallOutput(result, index))
        }
    }
}

impl CallDerivative for FunctionCalls<'_> {
    fn call_derivative(
        &self,
        arena: &mut ExprArena,
        call: CallSite<'_>,
        again: Again<'_>,
    ) -> Result<ExprId, &'static str> {
        let f = match call.callee {
            Callee::User(f) => f,
            Callee::External(k) => {
                let name = self.externals.get(k as usize).map_or("?", |e| e.c_function.as_str());
                self.fail(name, "is an external C function without a `derivative` annotation");
                return Err("an external function without a `derivative` annotation");
            }
            Callee::Builtin(_) => return Err("not a user-defined function"),
        };
        if let Some(d) = self.annotation(f, call.dargs) {
            return Ok(self.by_annotation(arena, d, &call));
        }
        let function = &self.functions[f.0 as usize];
        if self.nesting.get() >= MAX_NESTING {
            self.fail(
                &function.name,
                "calls itself too deeply to be differentiated through its body",
            );
            return Err("a recursive function");
        }
        let value = match output_value(arena, function, call.args, call.output) {
            Ok(v) => v,
            Err(why) => {
                self.fail(&function.name, &format!("has no `derivative` annotation and {why}"));
                return Err("a function whose body cannot be differentiated");
            }
        };
        self.nesting.set(self.nesting.get() + 1);
        let derivative = again(arena, value);
        self.nesting.set(self.nesting.get() - 1);
        derivative.map_err(|e| {
            self.fail(
                &function.name,
                &format!("has no `derivative` annotation and its body {}", e.reason),
            );
            "a function whose body cannot be differentiated"
        })
    }
}

/// Modelica's partial derivative of a function (`function f_T = der(f, T);`): the derivative
/// of the first output of `function` (the function `calls` knows as `f`) with respect to its
/// input slots `wrt`, taken in order (`der(f, x, y)` is the derivative by `y` of the
/// derivative by `x`), as one expression of `f`'s input slots (`Node::Local`), which the
/// derivative function shares. The body is run symbolically on its own inputs, as for a
/// call's derivative; the calls it makes are differentiated through `calls`. `Err` says why
/// the body cannot be differentiated ("its body ...", or naming the function called inside
/// it that cannot be).
pub fn partial_derivative_of_body(
    arena: &mut ExprArena,
    calls: &FunctionCalls<'_>,
    f: FuncId,
    wrt: &[u32],
) -> Result<ExprId, String> {
    let function = &calls.functions[f.0 as usize];
    let own_inputs: Vec<ExprId> = (0..function.inputs).map(|k| arena.add(Node::Local(k))).collect();
    let mut value = output_value(arena, function, &own_inputs, 0)?;
    for &slot in wrt {
        let leaf = arena.add(Node::Local(slot));
        value = super::diff_var_through(arena, value, leaf, calls)
            .map_err(|e| calls.take_why().unwrap_or_else(|| format!("its body {}", e.reason)))?;
    }
    Ok(value)
}

/// The value of output `output` of `function` called with `args`, as one expression of the
/// arguments: the body run symbolically.
fn output_value(arena: &mut ExprArena, function: &Function, args: &[ExprId], output: u32) -> Result<ExprId, String> {
    if args.len() != function.inputs as usize {
        return Err("is called with a different number of arguments than it has inputs".into());
    }
    let mut run = SymbolicBody {
        arena,
        values: vec![None; function.slots.len()],
    };
    run.values[..args.len()]
        .iter_mut()
        .zip(args)
        .for_each(|(v, a)| *v = Some(*a));
    run.statements(&function.body, true)?;
    let slot = (function.inputs + output) as usize;
    run.values
        .get(slot)
        .copied()
        .flatten()
        .ok_or_else(|| "its body does not assign the output on every path".into())
}

/// A function body run on expressions: the value of each local slot so far (`None` before it
/// is assigned).
struct SymbolicBody<'a> {
    arena: &'a mut ExprArena,
    values: Vec<Option<ExprId>>,
}

/// Whether a run of statements went on to its end or met a `return`.
#[derive(PartialEq)]
enum Flow {
    Next,
    Returned,
}

impl SymbolicBody<'_> {
    /// `e` with every local replaced by its value so far.
    fn current(&mut self, e: ExprId) -> Result<ExprId, String> {
        let locals: Vec<u32> = reachable(self.arena, e, &|_| false)
            .into_iter()
            .filter_map(|n| match self.arena.get(n) {
                Node::Local(k) => Some(*k),
                _ => None,
            })
            .collect();
        if locals
            .iter()
            .any(|&k| self.values.get(k as usize).copied().flatten().is_none())
        {
            return Err("its body reads a variable before assigning it".into());
        }
        let values = &self.values;
        Ok(substitute(self.arena, e, &|arena, n| match arena.get(n) {
            Node::Local(k) => values[*k as usize],
            _ => None,
        }))
    }

    fn statements(&mut self, statements: &[Statement], top_level: bool) -> Result<Flow, String> {
        for st in statements {
            match st {
                Statement::Assign {
                    target: Place::Local(slot),
                    value,
                    ..
                } => {
                    let value = self.current(*value)?;
                    let Some(place) = self.values.get_mut(*slot as usize) else {
                        return Err("its body assigns a slot it does not declare".into());
                    };
                    *place = Some(value);
                }
                Statement::Assign { .. } => return Err("its body assigns a model variable".into()),
                Statement::If {
                    branches, else_branch, ..
                } => self.if_statement(branches, else_branch)?,
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        self.statements(body, false)?;
                    }
                }
                // An assertion or `terminate` does not change any value the body computes;
                // the function's own call still checks it.
                Statement::Assert { .. }
                | Statement::Terminate { .. }
                | Statement::Print { .. }
                | Statement::Call { .. } => {}
                Statement::For { .. } | Statement::While { .. } => {
                    return Err("its body has a loop whose iterations are known only during the run".into());
                }
                Statement::Return { .. } if top_level => return Ok(Flow::Returned),
                Statement::Return { .. } | Statement::Break { .. } => {
                    return Err("its body leaves a branch or loop early (`return` or `break`)".into());
                }
            }
        }
        Ok(Flow::Next)
    }

    /// An `if` statement: each local's value afterwards is the if-expression of its values at
    /// the end of each branch (conditions read the values before the statement, in order); a
    /// local that some branch leaves unassigned stays unassigned.
    fn if_statement(&mut self, branches: &[(ExprId, Vec<Statement>)], else_branch: &[Statement]) -> Result<(), String> {
        let before = self.values.clone();
        let mut conditions = Vec::with_capacity(branches.len());
        let mut ends = Vec::with_capacity(branches.len());
        for (condition, body) in branches {
            conditions.push(self.current(*condition)?);
            self.statements(body, false)?;
            ends.push(std::mem::replace(&mut self.values, before.clone()));
        }
        self.statements(else_branch, false)?;
        for slot in 0..self.values.len() {
            let mut value = self.values[slot];
            for (condition, end) in conditions.iter().zip(&ends).rev() {
                value = match (end[slot], value) {
                    (Some(a), Some(b)) if a == b => Some(a),
                    (Some(a), Some(b)) => Some(self.arena.add(Node::If(*condition, a, b))),
                    _ => None,
                };
            }
            self.values[slot] = value;
        }
        Ok(())
    }
}
