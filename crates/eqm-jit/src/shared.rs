//! State shared by all functions of one compilation: the Cranelift module, the declared host
//! imports, the user functions still to be compiled and the failures statements can report.
//!
//! Input: the module, the expression arena and the model's user functions. Output: each host
//! function and user function declared once (a user function queued for compilation when a call
//! first needs it), the signatures of segment and user functions, the failure table, and
//! whether an expression calls a user function. It deliberately emits no code.

use super::host::HostFn;
use crate::interface::JitError;
use cranelift_codegen::ir::{AbiParam, Signature, Type, types};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use eqm_ir::expr::{Callee, ExprArena, ExprId, FuncId, Node};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat;
use std::collections::HashMap;

pub(super) struct Shared<'a> {
    pub module: JITModule,
    pub arena: &'a ExprArena,
    pub functions: &'a [flat::Function],
    /// The linked external functions, for their addresses.
    pub externals: &'a [eqm_ir::external::ExternalFunction],
    /// The pointer type of the host.
    pub ptr: Type,
    /// Host functions declared as imports, by symbol.
    hosts: HashMap<&'static str, cranelift_module::FuncId>,
    /// The native function of each user function, once a call needs it.
    users: Vec<Option<cranelift_module::FuncId>>,
    /// User functions declared but not compiled yet.
    pub pending: Vec<FuncId>,
    /// The failures compiled statements report, by index (`status::PAYLOAD`).
    pub faults: Vec<FailureKind>,
    /// For each node of the arena, whether it calls a user function; built on first use.
    calls: Vec<bool>,
}

impl<'a> Shared<'a> {
    pub fn new(
        module: JITModule,
        arena: &'a ExprArena,
        functions: &'a [flat::Function],
        externals: &'a [eqm_ir::external::ExternalFunction],
    ) -> Self {
        let ptr = module.target_config().pointer_type();
        Shared {
            module,
            arena,
            functions,
            externals,
            ptr,
            hosts: HashMap::new(),
            users: vec![None; functions.len()],
            pending: Vec::new(),
            faults: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// Records a failure a statement can report and returns its index.
    pub fn fault(&mut self, fault: FailureKind) -> u64 {
        self.faults.push(fault);
        self.faults.len() as u64 - 1
    }

    /// Whether evaluating `e` may call a user function (the only way an expression spends the
    /// iteration budget). One pass over the arena answers every node, because children have
    /// smaller ids than their parents.
    pub fn calls_user(&mut self, e: ExprId) -> bool {
        if self.calls.len() != self.arena.len() {
            let arena = self.arena;
            self.calls = Vec::with_capacity(arena.len());
            for k in 0..arena.len() {
                let id = ExprId(k as u32);
                let own = matches!(arena.get(id), Node::Call(Callee::User(_), _));
                let any = own
                    || arena
                        .children(id)
                        .any(|c| self.calls.get(c.0 as usize).copied().unwrap_or(true));
                self.calls.push(any);
            }
        }
        self.calls.get(e.0 as usize).copied().unwrap_or(true)
    }

    /// A signature with the host's calling convention.
    pub fn signature(&self, params: &[Type], returns: &[Type]) -> Signature {
        let mut sig = self.module.make_signature();
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        sig.returns.extend(returns.iter().map(|t| AbiParam::new(*t)));
        sig
    }

    /// `fn(inputs: *const f64, outputs: *mut f64, status: *mut u64)`: the native form of every
    /// user function.
    pub fn user_signature(&self) -> Signature {
        self.signature(&[self.ptr, self.ptr, self.ptr], &[])
    }

    /// The import of a host function, declared once per module.
    pub fn host(&mut self, f: HostFn) -> Result<cranelift_module::FuncId, JitError> {
        if let Some(id) = self.hosts.get(f.symbol) {
            return Ok(*id);
        }
        let sig = self.signature(&vec![types::F64; f.arity], &[types::F64]);
        let id = self
            .module
            .declare_function(f.symbol, Linkage::Import, &sig)
            .map_err(JitError::codegen)?;
        self.hosts.insert(f.symbol, id);
        Ok(id)
    }

    pub fn function(&self, f: FuncId) -> Result<&'a flat::Function, JitError> {
        self.functions.get(f.0 as usize).ok_or(JitError::UnknownFunction(f))
    }

    /// The native function of user function `f`, declared (and queued for compilation) on
    /// first use.
    pub fn user_function(&mut self, f: FuncId) -> Result<cranelift_module::FuncId, JitError> {
        self.function(f)?;
        if let Some(Some(id)) = self.users.get(f.0 as usize) {
            return Ok(*id);
        }
        let sig = self.user_signature();
        let id = self
            .module
            .declare_function(&format!("eqm_user_{}", f.0), Linkage::Local, &sig)
            .map_err(JitError::codegen)?;
        if let Some(entry) = self.users.get_mut(f.0 as usize) {
            *entry = Some(id);
        }
        self.pending.push(f);
        Ok(id)
    }
}
