//! The status block of compiled code: which root is running, how failures leave the function,
//! and the iteration budget and call depth the interpreter's limits impose.
//!
//! Input: the function being built and its status pointer (see `status`). Output: code that
//! records the running root, reports a failure (with the failing root, counted across the
//! repetitions of a re-rolled loop) and jumps to the exit block, spends the budget and tracks
//! user-function frames, failing exactly where the interpreter fails. It deliberately decides no
//! failure itself: the statements and calls that can fail ask for these checks.

use super::Translator;
use crate::status;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Value, types};
use eqm_ir::expr::ExprId;

impl<'s, 'f, 'a> Translator<'s, 'f, 'a> {
    /// Starts root `site` (an assignment, a statement list or a result) whose code is `e`:
    /// like the interpreter, each root that can call a user function starts with the full
    /// iteration budget, and computes its calls itself (the interpreter shares nodes only within
    /// a root), so that it spends exactly the budget the interpreter spends.
    pub fn begin_root(&mut self, site: u64, e: ExprId) {
        self.site = site;
        if self.sh.calls_user(e) {
            self.forget();
            self.reset_budget();
        }
    }

    /// Starts a statement list as root `site`, with the full iteration budget.
    pub fn begin_statements(&mut self, site: u64) {
        self.site = site;
        self.reset_budget();
    }

    /// The failing root as an `i64` value.
    fn site_value(&mut self) -> Value {
        match self.site_step {
            None => self.b.ins().iconst(types::I64, self.site as i64),
            Some((counter, period)) => {
                let moved = self.b.ins().imul_imm_s(counter, period);
                self.b.ins().iadd_imm_s(moved, self.site as i64)
            }
        }
    }

    fn status_field(&mut self, offset: i32) -> Value {
        self.b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), self.status, offset)
    }

    fn set_status_field(&mut self, offset: i32, v: Value) {
        self.b.ins().store(MemFlagsData::trusted(), v, self.status, offset);
    }

    fn reset_budget(&mut self) {
        let limit = self.status_field(status::LIMIT);
        self.set_status_field(status::BUDGET, limit);
    }

    /// Leaves for the exit block if a failure was reported (after a call).
    pub fn check_failure(&mut self) {
        let code = self.status_field(status::CODE);
        let site = self.site_value();
        let next = self.b.create_block();
        self.b.ins().brif(code, self.exit, &[BlockArg::Value(site)], next, &[]);
        self.b.switch_to_block(next);
    }

    /// Reports failure `code` (with `payload` for [`status::TABLE`]) and leaves for the exit
    /// block; code after it is emitted into a fresh block that nothing reaches.
    pub fn fail(&mut self, code: i64, payload: u64) {
        let code = self.b.ins().iconst(types::I64, code);
        self.set_status_field(status::CODE, code);
        let payload = self.b.ins().iconst(types::I64, payload as i64);
        self.set_status_field(status::PAYLOAD, payload);
        let site = self.site_value();
        self.b.ins().jump(self.exit, &[BlockArg::Value(site)]);
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    /// Fails with `code` when `condition` (an `i8`) holds.
    pub fn fail_if(&mut self, condition: Value, code: i64, payload: u64) {
        let failing = self.b.create_block();
        let next = self.b.create_block();
        self.b.ins().brif(condition, failing, &[], next, &[]);
        self.b.switch_to_block(failing);
        self.fail(code, payload);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
    }

    /// Spends one unit of the iteration budget (a call or a backward jump of a loop), failing
    /// like the interpreter when none is left.
    pub fn spend_budget(&mut self) {
        let budget = self.status_field(status::BUDGET);
        let empty = self.b.ins().icmp_imm_s(IntCC::Equal, budget, 0);
        self.fail_if(empty, status::ITERATION_LIMIT, 0);
        let left = self.b.ins().iadd_imm_s(budget, -1);
        self.set_status_field(status::BUDGET, left);
    }

    /// Enters a user-function frame: fails like the interpreter when
    /// [`eqm_ir::failure::MAX_CALL_DEPTH`] frames are active already.
    pub fn enter_frame(&mut self) {
        let depth = self.status_field(status::DEPTH);
        let deep = self.b.ins().icmp_imm_s(
            IntCC::UnsignedGreaterThanOrEqual,
            depth,
            eqm_ir::failure::MAX_CALL_DEPTH as i64,
        );
        self.fail_if(deep, status::RECURSION_LIMIT, 0);
        let more = self.b.ins().iadd_imm_s(depth, 1);
        self.set_status_field(status::DEPTH, more);
    }

    /// Leaves a user-function frame.
    pub fn leave_frame(&mut self) {
        let depth = self.status_field(status::DEPTH);
        let less = self.b.ins().iadd_imm_s(depth, -1);
        self.set_status_field(status::DEPTH, less);
    }
}
