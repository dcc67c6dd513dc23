//! Calls in expressions: built-in functions (native instructions where they give the same bits
//! as the evaluator, host functions otherwise), `der`, and calls of user functions through a
//! stack slot per call site, and calls of linked external C functions at their address.
//!
//! Input: a call node whose arguments are emitted. Output: the call's value (a user function's
//! first output; further outputs are read from its stack slot), with a check for a failure the
//! callee reported. It deliberately compiles no user function (that is `function`, which
//! `Shared` asks for the functions still to be compiled).

use super::{Translator, Undo, unsupported};
use crate::host::{self, HostFn};
use crate::interface::JitError;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{AbiParam, FuncRef, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types};
use cranelift_module::Module;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, FuncId, Node};
use eqm_ir::slot::Slot;

impl<'s, 'f, 'a> Translator<'s, 'f, 'a> {
    /// A reference to `id` usable in the function being built, declared once per function.
    pub fn func_ref(&mut self, id: cranelift_module::FuncId) -> FuncRef {
        if let Some(r) = self.refs.get(&id) {
            return *r;
        }
        let r = self.sh.module.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    pub(super) fn call_host(&mut self, f: HostFn, args: &[Value]) -> Result<Value, JitError> {
        let id = self.sh.host(f)?;
        let r = self.func_ref(id);
        let call = self.b.ins().call(r, args);
        Ok(self.b.inst_results(call)[0])
    }

    pub(super) fn builtin(&mut self, e: ExprId, b: Builtin, args: &[ExprId]) -> Result<Value, JitError> {
        match b {
            Builtin::NoEvent | Builtin::Smooth | Builtin::Pre => {
                let arg = args
                    .last()
                    .ok_or_else(|| unsupported(e, "an operator without an argument"))?;
                return self.operand(*arg);
            }
            Builtin::Der => return self.derivative(e, args),
            _ => {}
        }
        let values = args.iter().map(|a| self.operand(*a)).collect::<Result<Vec<_>, _>>()?;
        // Native instructions only where they give the same bits as the table's function:
        // `sqrt` and `abs` are exact IEEE operations; `min` and `max` are comparisons and
        // selects because Cranelift's `fmin`/`fmax` differ from them on signed zeros.
        match (b, values.as_slice()) {
            (Builtin::Sqrt, [x]) => return Ok(self.b.ins().sqrt(*x)),
            (Builtin::Abs, [x]) => return Ok(self.b.ins().fabs(*x)),
            (Builtin::Min | Builtin::Max, [x, y]) => {
                let cc = if b == Builtin::Min {
                    FloatCC::LessThanOrEqual
                } else {
                    FloatCC::GreaterThanOrEqual
                };
                let pick_x = self.b.ins().fcmp(cc, *x, *y);
                let picked = self.b.ins().select(pick_x, *x, *y);
                let unordered = self.b.ins().fcmp(FloatCC::Unordered, *x, *y);
                let nan = self.real(f64::NAN);
                return Ok(self.b.ins().select(unordered, nan, picked));
            }
            _ => {}
        }
        let host = host::builtin(b).ok_or_else(|| unsupported(e, "a built-in without a numeric implementation"))?;
        if host.arity != values.len() {
            return Err(unsupported(
                e,
                &format!("`{}` with {} argument(s)", b.name(), values.len()),
            ));
        }
        self.call_host(host, &values)
    }

    /// `der(x)` of a state `x[i]` is `dx[i]`.
    fn derivative(&mut self, e: ExprId, args: &[ExprId]) -> Result<Value, JitError> {
        let state = match args.first().map(|a| self.arena().get(*a)) {
            Some(Node::Var(v)) => match self.var_slot(*v)? {
                Slot::State(i) => Some(i),
                _ => None,
            },
            _ => None,
        };
        match state {
            Some(i) => self.read_slot(Slot::Der(i)),
            None => Err(unsupported(e, "`der` of something that is not a state")),
        }
    }

    pub(super) fn call_outputs(&self, call: ExprId) -> Result<u32, JitError> {
        match self.arena().get(call) {
            Node::Call(Callee::User(f), _) => Ok(self.sh.function(*f)?.outputs),
            _ => Err(unsupported(call, "not a user-function call")),
        }
    }

    /// A call of external function `k`: its arguments go through a stack slot to the linked
    /// wrapper's address, exactly as `call_external` passes them for the interpreter.
    pub(super) fn external_call(&mut self, e: ExprId, k: u32, args: &[ExprId]) -> Result<Value, JitError> {
        let external = self
            .sh
            .externals
            .get(k as usize)
            .ok_or_else(|| unsupported(e, "a call of an unknown external function"))?;
        if external.destructor.is_some() {
            // Creating an external object is the run's business: the interpreter's object store
            // creates each object once and destroys it at the end of the run.
            return Err(unsupported(e, "the constructor of an external object"));
        }
        let (address, arity) = (external.symbol.address(), external.symbol.arity());
        if args.len() != arity || address == 0 {
            return Err(unsupported(e, "a call of an external function that does not fit it"));
        }
        let values = args.iter().map(|a| self.operand(*a)).collect::<Result<Vec<_>, _>>()?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (values.len() as u32 + 1) * 8,
            3,
        ));
        let ptr = self.sh.ptr;
        let addr = self.b.ins().stack_addr(ptr, slot, 0);
        for (j, v) in values.iter().enumerate() {
            self.b.ins().store(MemFlagsData::trusted(), *v, addr, j as i32 * 8);
        }
        let mut signature = self.sh.module.make_signature();
        signature.params.push(AbiParam::new(ptr));
        signature.returns.push(AbiParam::new(types::F64));
        let signature = self.b.import_signature(signature);
        let callee = self.b.ins().iconst(ptr, address as i64);
        let call = self.b.ins().call_indirect(signature, callee, &[addr]);
        Ok(self.b.inst_results(call)[0])
    }

    /// A call of a user function: inputs and outputs go through one stack slot per call site.
    pub(super) fn user_call(&mut self, e: ExprId, f: FuncId, args: &[ExprId]) -> Result<Value, JitError> {
        let function = self.sh.function(f)?;
        let (inputs, outputs) = (function.inputs, function.outputs);
        if args.len() != inputs as usize {
            return Err(unsupported(
                e,
                &format!("a call of `{}` with {} argument(s)", function.name, args.len()),
            ));
        }
        if outputs == 0 {
            return Err(unsupported(
                e,
                &format!("`{}` has no output to use as a value", function.name),
            ));
        }
        let values = args.iter().map(|a| self.operand(*a)).collect::<Result<Vec<_>, _>>()?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (inputs + outputs) * 8,
            3,
        ));
        let ptr = self.sh.ptr;
        let addr = self.b.ins().stack_addr(ptr, slot, 0);
        for (k, v) in values.iter().enumerate() {
            self.b.ins().store(MemFlagsData::trusted(), *v, addr, k as i32 * 8);
        }
        let out = self.b.ins().stack_addr(ptr, slot, inputs as i32 * 8);
        let id = self.sh.user_function(f)?;
        let r = self.func_ref(id);
        self.b.ins().call(r, &[addr, out, self.status]);
        self.check_failure();
        self.calls.insert(e, (slot, inputs));
        if !self.scopes.is_empty() {
            self.undo.push(Undo::Call(e));
        }
        Ok(self.b.ins().load(types::F64, MemFlagsData::trusted(), out, 0))
    }

    /// A call statement: the function called for what it does (an assertion, `terminate`), its
    /// outputs, if any, dropped. Like the interpreter, it is not shared with a call of the same
    /// node elsewhere: a statement runs each time it is reached.
    pub(crate) fn call_for_effect(&mut self, f: FuncId, args: &[ExprId]) -> Result<(), JitError> {
        let function = self.sh.function(f)?;
        let (inputs, outputs) = (function.inputs, function.outputs);
        if args.len() != inputs as usize {
            return Err(JitError::Unsupported {
                node: None,
                what: format!("a call of `{}` with {} argument(s)", function.name, args.len()),
            });
        }
        let values = args.iter().map(|a| self.operand(*a)).collect::<Result<Vec<_>, _>>()?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (inputs + outputs).max(1) * 8,
            3,
        ));
        let ptr = self.sh.ptr;
        let addr = self.b.ins().stack_addr(ptr, slot, 0);
        for (k, v) in values.iter().enumerate() {
            self.b.ins().store(MemFlagsData::trusted(), *v, addr, k as i32 * 8);
        }
        let out = self.b.ins().stack_addr(ptr, slot, inputs as i32 * 8);
        let id = self.sh.user_function(f)?;
        let r = self.func_ref(id);
        self.b.ins().call(r, &[addr, out, self.status]);
        self.check_failure();
        Ok(())
    }
}
