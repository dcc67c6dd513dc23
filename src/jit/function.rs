//! User functions (`flat::Function`) to native functions `fn(inputs: *const f64, outputs: *mut
//! f64)`.
//!
//! Every slot of the function (inputs, outputs, protected variables, run-time loop indices) is a
//! Cranelift variable, so the SSA construction of the frontend handles assignments in branches
//! and loops. Inputs are loaded from the input array on entry; outputs and protected variables
//! without an initial value start at 0.0 (Modelica leaves them undefined; zero is deterministic).
//! The outputs are stored through the output pointer at the single return block, which every
//! `return` and the end of the body jump to.
//!
//! Semantics of the statements (from `flat::Statement` and `flatten::functions`):
//! - `for i in start:step:stop`: the range is evaluated once before the loop; `i` takes the
//!   values `start, start + step, ...` while `i <= stop` (`step > 0`) or `i >= stop` (`step <
//!   0`); a zero (or NaN) step runs no iteration.
//! - `break` leaves the innermost `for`, `while` or unrolled for-loop; `return` leaves the
//!   function with the outputs as they are.
//! - A failed `assert` makes every output NaN and returns: compiled code has no other error
//!   channel, and NaN makes the caller (a solver) reject the step.
//! - `terminate` is not supported by the JIT yet.

use super::JitError;
use super::shared::Shared;
use super::translate::{Leaves, Translator};
use crate::expr::{ExprId, FuncId};
use crate::flat::{self, Place, Statement};
use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, UserFuncName, Value, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::Module;

/// Compiles user function `f` (already declared by [`Shared::user_function`]) into the module.
pub(super) fn compile(
    sh: &mut Shared<'_>,
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    f: FuncId,
) -> Result<(), JitError> {
    let function = sh.function(f)?;
    let id = sh.user_function(f)?;
    let within = |error: JitError| JitError::InFunction {
        name: function.name.clone(),
        error: Box::new(error),
    };
    ctx.func.signature = sh.user_signature();
    ctx.func.name = UserFuncName::user(1, id.as_u32());
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (input, output) = match b.block_params(entry) {
        [i, o] => (*i, *o),
        _ => return Err(within(JitError::Codegen("unexpected function parameters".into()))),
    };
    let vars: Vec<Variable> = function.slots.iter().map(|_| b.declare_var(types::F64)).collect();
    for (k, var) in vars.iter().enumerate() {
        let v = if k < function.inputs as usize {
            b.ins()
                .load(types::F64, MemFlagsData::trusted().with_readonly(), input, k as i32 * 8)
        } else {
            b.ins().f64const(Ieee64::with_bits(0))
        };
        b.def_var(*var, v);
    }
    let ret = b.create_block();
    let mut body = Body {
        t: Translator::new(sh, b, Leaves::Function(vars.clone())),
        function,
        vars,
        output,
        ret,
        fail: None,
        breaks: Vec::new(),
    };
    body.statements(&function.body).map_err(within)?;
    body.t.b.ins().jump(ret, &[]);
    body.t.b.switch_to_block(ret);
    let outputs: Vec<Value> = (0..function.outputs as usize)
        .map(|k| body.t.b.use_var(body.vars[function.inputs as usize + k]))
        .collect();
    body.store_outputs(&outputs);
    if let Some(fail) = body.fail {
        body.t.b.switch_to_block(fail);
        let nan = body.t.real(f64::NAN);
        body.store_outputs(&vec![nan; function.outputs as usize]);
    }
    body.t.b.seal_all_blocks();
    body.t.finish();
    sh.module
        .define_function(id, ctx)
        .map_err(JitError::codegen)
        .map_err(within)?;
    sh.module.clear_context(ctx);
    Ok(())
}

struct Body<'s, 'f, 'a> {
    t: Translator<'s, 'f, 'a>,
    function: &'a flat::Function,
    vars: Vec<Variable>,
    output: Value,
    /// The block that stores the outputs and returns.
    ret: Block,
    /// The block that stores NaN outputs after a failed assertion, created on first use.
    fail: Option<Block>,
    /// The exit block of each enclosing loop, innermost last.
    breaks: Vec<Block>,
}

impl Body<'_, '_, '_> {
    /// Stores `values` as the outputs and returns.
    fn store_outputs(&mut self, values: &[Value]) {
        for (k, v) in values.iter().enumerate() {
            self.t
                .b
                .ins()
                .store(MemFlagsData::trusted(), *v, self.output, k as i32 * 8);
        }
        self.t.b.ins().return_(&[]);
    }

    /// The value of `e` with the locals as they are now. The memo is cleared first because
    /// locals change between statements (and between iterations of a loop).
    fn value(&mut self, e: ExprId) -> Result<Value, JitError> {
        self.t.forget();
        self.t.expr(e)
    }

    fn condition(&mut self, e: ExprId) -> Result<Value, JitError> {
        self.t.forget();
        self.t.condition(e)
    }

    /// Continues in a fresh block after a jump (`break`, `return`): statements after it are
    /// unreachable but must still be emitted somewhere.
    fn continue_unreachable(&mut self) {
        let dead = self.t.b.create_block();
        self.t.b.switch_to_block(dead);
    }

    fn statements(&mut self, statements: &[Statement]) -> Result<(), JitError> {
        statements.iter().try_for_each(|s| self.statement(s))
    }

    fn statement(&mut self, s: &Statement) -> Result<(), JitError> {
        match s {
            Statement::Assign {
                target: Place::Local(k),
                value,
                ..
            } => {
                let v = self.value(*value)?;
                let var = *self.vars.get(*k as usize).ok_or_else(|| JitError::Unsupported {
                    node: Some(*value),
                    what: "an assignment to a function local that does not exist".into(),
                })?;
                self.t.b.def_var(var, v);
            }
            Statement::Assign {
                target: Place::Var(v), ..
            } => {
                return Err(JitError::Unsupported {
                    node: None,
                    what: format!("an assignment to model variable #{} in a function body", v.0),
                });
            }
            Statement::If {
                branches, else_branch, ..
            } => {
                let merge = self.t.b.create_block();
                for (c, body) in branches {
                    let c = self.condition(*c)?;
                    let yes = self.t.b.create_block();
                    let next = self.t.b.create_block();
                    self.t.b.ins().brif(c, yes, &[], next, &[]);
                    self.t.b.switch_to_block(yes);
                    self.statements(body)?;
                    self.t.b.ins().jump(merge, &[]);
                    self.t.b.switch_to_block(next);
                }
                self.statements(else_branch)?;
                self.t.b.ins().jump(merge, &[]);
                self.t.b.switch_to_block(merge);
            }
            Statement::Unrolled { iterations, .. } => {
                let exit = self.t.b.create_block();
                self.breaks.push(exit);
                for body in iterations {
                    self.statements(body)?;
                }
                self.breaks.pop();
                self.t.b.ins().jump(exit, &[]);
                self.t.b.switch_to_block(exit);
            }
            Statement::For {
                index,
                start,
                step,
                stop,
                body,
                ..
            } => self.for_loop(*index, *start, *step, *stop, body)?,
            Statement::While { condition, body, .. } => {
                let header = self.t.b.create_block();
                let inside = self.t.b.create_block();
                let exit = self.t.b.create_block();
                self.t.b.ins().jump(header, &[]);
                self.t.b.switch_to_block(header);
                let c = self.condition(*condition)?;
                self.t.b.ins().brif(c, inside, &[], exit, &[]);
                self.t.b.switch_to_block(inside);
                self.breaks.push(exit);
                self.statements(body)?;
                self.breaks.pop();
                self.t.b.ins().jump(header, &[]);
                self.t.b.switch_to_block(exit);
            }
            Statement::Assert { condition, .. } => {
                let c = self.condition(*condition)?;
                let fail = match self.fail {
                    Some(block) => block,
                    None => *self.fail.insert(self.t.b.create_block()),
                };
                let next = self.t.b.create_block();
                self.t.b.ins().brif(c, next, &[], fail, &[]);
                self.t.b.switch_to_block(next);
            }
            Statement::Terminate { .. } => {
                return Err(JitError::Unsupported {
                    node: None,
                    what: "`terminate` is not supported by the JIT yet".into(),
                });
            }
            Statement::Break { .. } => {
                let exit = *self.breaks.last().ok_or_else(|| JitError::Unsupported {
                    node: None,
                    what: "`break` outside a loop".into(),
                })?;
                self.t.b.ins().jump(exit, &[]);
                self.continue_unreachable();
            }
            Statement::Return { .. } => {
                self.t.b.ins().jump(self.ret, &[]);
                self.continue_unreachable();
            }
        }
        Ok(())
    }

    fn for_loop(
        &mut self,
        index: u32,
        start: ExprId,
        step: ExprId,
        stop: ExprId,
        body: &[Statement],
    ) -> Result<(), JitError> {
        let index = *self.vars.get(index as usize).ok_or_else(|| JitError::Unsupported {
            node: None,
            what: format!("a loop index that is not a local of `{}`", self.function.name),
        })?;
        // The range is evaluated once, before the first iteration.
        let start = self.value(start)?;
        let step = self.value(step)?;
        let stop = self.value(stop)?;
        // A hidden counter, so that the loop does not depend on what the body does with the
        // index variable.
        let counter = self.t.b.declare_var(types::F64);
        self.t.b.def_var(counter, start);
        let header = self.t.b.create_block();
        let inside = self.t.b.create_block();
        let exit = self.t.b.create_block();
        self.t.b.ins().jump(header, &[]);
        self.t.b.switch_to_block(header);
        let i = self.t.b.use_var(counter);
        let zero = self.t.real(0.0);
        let up = self.t.b.ins().fcmp(FloatCC::GreaterThan, step, zero);
        let down = self.t.b.ins().fcmp(FloatCC::LessThan, step, zero);
        let below = self.t.b.ins().fcmp(FloatCC::LessThanOrEqual, i, stop);
        let above = self.t.b.ins().fcmp(FloatCC::GreaterThanOrEqual, i, stop);
        let rising = self.t.b.ins().band(up, below);
        let falling = self.t.b.ins().band(down, above);
        let go = self.t.b.ins().bor(rising, falling);
        self.t.b.ins().brif(go, inside, &[], exit, &[]);
        self.t.b.switch_to_block(inside);
        self.t.b.def_var(index, i);
        self.breaks.push(exit);
        self.statements(body)?;
        self.breaks.pop();
        let i = self.t.b.use_var(counter);
        let next = self.t.b.ins().fadd(i, step);
        self.t.b.def_var(counter, next);
        self.t.b.ins().jump(header, &[]);
        self.t.b.switch_to_block(exit);
        Ok(())
    }
}
