//! State shared by all functions of one compilation: the Cranelift module, the declared host
//! imports and the user functions still to be compiled.

use super::JitError;
use super::host::HostFn;
use crate::expr::{ExprArena, FuncId};
use crate::flat;
use cranelift_codegen::ir::{AbiParam, Signature, Type, types};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use std::collections::HashMap;

pub(super) struct Shared<'a> {
    pub module: JITModule,
    pub arena: &'a ExprArena,
    pub functions: &'a [flat::Function],
    /// The pointer type of the host.
    pub ptr: Type,
    /// Host functions declared as imports, by symbol.
    hosts: HashMap<&'static str, cranelift_module::FuncId>,
    /// The native function of each user function, once a call needs it.
    users: Vec<Option<cranelift_module::FuncId>>,
    /// User functions declared but not compiled yet.
    pub pending: Vec<FuncId>,
}

impl<'a> Shared<'a> {
    pub fn new(module: JITModule, arena: &'a ExprArena, functions: &'a [flat::Function]) -> Self {
        let ptr = module.target_config().pointer_type();
        Shared {
            module,
            arena,
            functions,
            ptr,
            hosts: HashMap::new(),
            users: vec![None; functions.len()],
            pending: Vec::new(),
        }
    }

    /// A signature with the host's calling convention.
    pub fn signature(&self, params: &[Type], returns: &[Type]) -> Signature {
        let mut sig = self.module.make_signature();
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        sig.returns.extend(returns.iter().map(|t| AbiParam::new(*t)));
        sig
    }

    /// `fn(inputs: *const f64, outputs: *mut f64)`: the native form of every user function.
    pub fn user_signature(&self) -> Signature {
        self.signature(&[self.ptr, self.ptr], &[])
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
