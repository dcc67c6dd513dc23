//! Statements to native code: user functions (`flat::Function`) as native functions
//! `fn(inputs: *const f64, outputs: *mut f64, status: *mut u64)`, and the statements of model
//! algorithm sections inside a segment function.
//!
//! Input: a user function of the flat model (or the statements of an algorithm section) and the
//! translator of the function being built. Output: the function defined in the shared module
//! (or the statements' code in the segment function), failures reported through the status
//! block. Expressions inside statements are translated by `translate`; this module deliberately
//! only builds the control flow and the places statements assign.
//!
//! Every slot of a user function (inputs, outputs, protected variables, run-time loop indices)
//! is a Cranelift variable, so the SSA construction of the frontend handles assignments in
//! branches and loops. Inputs are loaded from the input array on entry; outputs and protected
//! variables without an initial value start at 0.0 (Modelica leaves them undefined; zero is
//! deterministic, and the interpreter does the same). The outputs are stored through the output
//! pointer at the single return block, which every `return` and the end of the body jump to.
//! Algorithm sections have no locals: they read and write model slots in memory (see
//! `SegmentLeaves::cache`).
//!
//! Semantics of the statements, those of `flat::Statement` as the flattener builds them and the
//! simulator's interpreter runs them:
//! - `for i in start:step:stop`: the range is evaluated once before the loop; a zero (or NaN)
//!   step fails ([`FailureKind::ZeroStep`]); `i` takes the values `start, start + step, ...`
//!   and the loop ends once `i > stop` (`step > 0`) or `i < stop` (`step < 0`).
//! - `break` leaves the innermost `for`, `while` or unrolled for-loop; `return` leaves the
//!   function (the algorithm section) with the outputs as they are.
//! - A failed `assert` and `terminate` report their message and span and stop the evaluation.
//! - Every call and every backward jump of a `for` or `while` loop spends one unit of the
//!   iteration budget, and calls nest at most [`eqm_ir::failure::MAX_CALL_DEPTH`] deep.

use super::shared::Shared;
use super::translate::{Leaves, Translator};
use crate::interface::JitError;
use crate::status;
use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, UserFuncName, Value, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::Module;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, FuncId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::{Place, Statement};

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
    let (input, output, status) = match b.block_params(entry) {
        [i, o, s] => (*i, *o, *s),
        _ => return Err(within(JitError::Codegen("unexpected function parameters".into()))),
    };
    // A failure returns at once: the status block says what happened, and the caller stops too.
    let exit = b.create_block();
    b.append_block_param(exit, types::I64);
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
    let mut t = Translator::new(sh, b, Leaves::Function(vars.clone()), status, exit);
    // The interpreter counts a call against the budget before it checks the depth.
    t.spend_budget();
    t.enter_frame();
    let mut body = Body {
        t: &mut t,
        vars,
        ret,
        breaks: Vec::new(),
    };
    body.statements(&function.body).map_err(within)?;
    body.t.b.ins().jump(ret, &[]);
    body.t.b.switch_to_block(ret);
    body.t.leave_frame();
    for k in 0..function.outputs as usize {
        let v = body.t.b.use_var(body.vars[function.inputs as usize + k]);
        body.t.b.ins().store(MemFlagsData::trusted(), v, output, k as i32 * 8);
    }
    t.b.ins().return_(&[]);
    t.b.switch_to_block(exit);
    t.b.ins().return_(&[]);
    t.b.seal_all_blocks();
    t.finish();
    sh.module
        .define_function(id, ctx)
        .map_err(JitError::codegen)
        .map_err(within)?;
    sh.module.clear_context(ctx);
    Ok(())
}

/// Translates the statements of a model algorithm section as root `site` of the segment function
/// `t` is building; code continues after them (where `return` leads too).
pub(super) fn algorithm(t: &mut Translator<'_, '_, '_>, site: u64, statements: &[Statement]) -> Result<(), JitError> {
    if let Leaves::Segment(seg) = &mut t.leaves {
        seg.cache = false;
        seg.values.clear();
    }
    t.forget();
    t.begin_statements(site);
    let ret = t.b.create_block();
    let mut body = Body {
        t,
        vars: Vec::new(),
        ret,
        breaks: Vec::new(),
    };
    body.statements(statements)?;
    body.t.b.ins().jump(ret, &[]);
    body.t.b.switch_to_block(ret);
    // Results after the statements read slots the statements wrote: memory, not registers.
    body.t.forget();
    Ok(())
}

/// A statement list being translated.
struct Body<'x, 's, 'f, 'a> {
    t: &'x mut Translator<'s, 'f, 'a>,
    /// The slots of the user function; none in an algorithm section.
    vars: Vec<Variable>,
    /// The block `return` jumps to.
    ret: Block,
    /// The exit block of each enclosing loop, innermost last.
    breaks: Vec<Block>,
}

impl Body<'_, '_, '_, '_> {
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

    /// The statements in order; the assignments of the outputs of one call (`(a, b) := f(x)`)
    /// run the call once.
    fn statements(&mut self, statements: &[Statement]) -> Result<(), JitError> {
        use eqm_ir::shared_call::Segment;
        for segment in eqm_ir::shared_call::segments(self.t.arena(), statements) {
            match segment {
                Segment::SharedCall(call, run) => self.shared_call(call, run)?,
                Segment::One(statement) => self.statement(statement)?,
            }
        }
        Ok(())
    }

    /// Assignments that each take an output of `call`: the call made once, every output read
    /// from it before any is written (a write may clear the memo of values).
    fn shared_call(&mut self, call: ExprId, assignments: &[Statement]) -> Result<(), JitError> {
        self.value(call)?;
        let mut values = Vec::with_capacity(assignments.len());
        for s in assignments {
            let Statement::Assign { target, value, .. } = s else {
                return Err(JitError::Unsupported {
                    node: None,
                    what: "a statement that is not an assignment among the outputs of a call".into(),
                });
            };
            values.push((*target, *value, self.t.expr(*value)?));
        }
        for (target, node, v) in values {
            match target {
                Place::Local(k) => {
                    let var = *self.vars.get(k as usize).ok_or_else(|| JitError::Unsupported {
                        node: Some(node),
                        what: "an assignment to a function local that does not exist".into(),
                    })?;
                    self.t.b.def_var(var, v);
                }
                Place::Var(var) => {
                    let slot = self.t.var_slot(var)?;
                    self.t.write_slot(slot, v)?;
                }
            }
        }
        Ok(())
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
                target: Place::Var(v),
                value,
                ..
            } => {
                let value = self.value(*value)?;
                let slot = self.t.var_slot(*v)?;
                self.t.write_slot(slot, value)?;
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
                span,
            } => self.for_loop(*index, [*start, *step, *stop], body, *span)?,
            Statement::While { condition, body, .. } => {
                let test = |s: &mut Self, inside: Block, exit: Block| {
                    let c = s.condition(*condition)?;
                    s.t.b.ins().brif(c, inside, &[], exit, &[]);
                    Ok(())
                };
                self.repeat(body, test, |_| {})?;
            }
            Statement::Assert {
                condition,
                message,
                span,
            } => {
                let c = self.condition(*condition)?;
                let fault = self.t.sh.fault(FailureKind::Assert {
                    message: message.written(),
                    span: *span,
                });
                let failed = self.t.b.ins().bxor_imm_s(c, 1);
                self.t.fail_if(failed, status::TABLE, fault);
            }
            Statement::Terminate { message, span } => {
                let fault = self.t.sh.fault(FailureKind::Terminate {
                    message: message.written(),
                    span: *span,
                });
                self.t.fail(status::TABLE, fault);
            }
            // A function that prints runs only in an action of a when-clause, which the
            // interpreter evaluates once at the event; native code never needs to print.
            Statement::Print { .. } => {
                return Err(JitError::Unsupported {
                    node: None,
                    what: "`Streams.print` in a function".into(),
                });
            }
            Statement::Call { function, args, .. } => self.t.call_for_effect(*function, args)?,
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

    /// A `for` loop over a run-time range, with the interpreter's semantics: the index is the
    /// local itself, advanced by `step` after each iteration.
    fn for_loop(&mut self, index: u32, range: [ExprId; 3], body: &[Statement], span: Span) -> Result<(), JitError> {
        let index = *self.vars.get(index as usize).ok_or_else(|| JitError::Unsupported {
            node: None,
            what: "a loop index that is not a function local".into(),
        })?;
        // The range is evaluated once, before the first iteration.
        let start = self.value(range[0])?;
        self.t.b.def_var(index, start);
        let step = self.value(range[1])?;
        let stop = self.value(range[2])?;
        let zero = self.t.real(0.0);
        // `step == 0` is false for NaN, `step != step` true only for NaN.
        let is_zero = self.t.b.ins().fcmp(FloatCC::Equal, step, zero);
        let is_nan = self.t.b.ins().fcmp(FloatCC::Unordered, step, step);
        let no_step = self.t.b.ins().bor(is_zero, is_nan);
        let fault = self.t.sh.fault(FailureKind::ZeroStep { span });
        self.t.fail_if(no_step, status::TABLE, fault);
        // The loop ends once `i` is beyond `stop` in the direction of `step`.
        let test = |s: &mut Self, inside: Block, exit: Block| {
            let i = s.t.b.use_var(index);
            let zero = s.t.real(0.0);
            let b = &mut s.t.b;
            let up = b.ins().fcmp(FloatCC::GreaterThan, step, zero);
            let down = b.ins().fcmp(FloatCC::LessThan, step, zero);
            let beyond = b.ins().fcmp(FloatCC::GreaterThan, i, stop);
            let before = b.ins().fcmp(FloatCC::LessThan, i, stop);
            let rising_done = b.ins().band(up, beyond);
            let falling_done = b.ins().band(down, before);
            let done = b.ins().bor(rising_done, falling_done);
            b.ins().brif(done, exit, &[], inside, &[]);
            Ok(())
        };
        let advance = |s: &mut Self| {
            let i = s.t.b.use_var(index);
            let next = s.t.b.ins().fadd(i, step);
            s.t.b.def_var(index, next);
        };
        self.repeat(body, test, advance)
    }

    /// A loop: the header block runs `test`, which branches to the body block or to the exit
    /// block (its arguments, in that order); the body runs the statements, then `advance`,
    /// spends one unit of the iteration budget and jumps back to the header. `break` leads to
    /// the exit block, where code continues.
    fn repeat(
        &mut self,
        body: &[Statement],
        test: impl FnOnce(&mut Self, Block, Block) -> Result<(), JitError>,
        advance: impl FnOnce(&mut Self),
    ) -> Result<(), JitError> {
        let header = self.t.b.create_block();
        let inside = self.t.b.create_block();
        let exit = self.t.b.create_block();
        self.t.b.ins().jump(header, &[]);
        self.t.b.switch_to_block(header);
        test(self, inside, exit)?;
        self.t.b.switch_to_block(inside);
        self.breaks.push(exit);
        self.statements(body)?;
        self.breaks.pop();
        advance(self);
        self.t.spend_budget();
        self.t.b.ins().jump(header, &[]);
        self.t.b.switch_to_block(exit);
        Ok(())
    }
}
