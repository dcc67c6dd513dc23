//! Native code for expression assignments, through Cranelift.
//!
//! Input: an expression arena, the model's user functions, a map from variables to their
//! run-time [`Slot`]s, and [`Segment`]s: ordered lists of assignments `slot := expression`.
//! Output: a [`CompiledModule`] holding one or more native functions per segment, each of the
//! shape `extern "C" fn(t: f64, x: *const f64, p: *const f64, dx: *mut f64, work: *mut f64)`
//! (see [`crate::slot`]), and a safe [`CompiledModule::call`] that checks the slice lengths
//! before running them.
//!
//! The compiled code computes exactly what the reference evaluator
//! ([`crate::symbolic::eval::evaluate_in`]) computes, bit for bit: arithmetic is the same IEEE
//! operations, and every other function is a host function (`eqm_sin`, `eqm_pow`, ...) that
//! calls the evaluator's own Rust function. Booleans are 0.0 and 1.0, and any non-zero value
//! (NaN included) is true. `if` expressions are real branches, so the branch not taken is not
//! evaluated (a division by zero there does not matter, and a costly branch costs nothing).
//!
//! Per function, each state, parameter or work slot is loaded from memory once; a value
//! written earlier in the same function is reused from its register, and shared
//! subexpressions are computed once. Long segments are split into functions of about a
//! thousand assignments (or ten thousand Cranelift instructions), the size at which Cranelift
//! compiles fastest per equation on this project's machines (see the Cranelift probe notes);
//! the safe wrapper calls them in order.
//!
//! User functions (`Callee::User`) become native functions `fn(inputs: *const f64, outputs:
//! *mut f64)` compiled from their statements (see [`function`]); a call site passes its
//! arguments and receives its outputs through a stack slot, and `CallOutput` reads further
//! outputs from it.
//!
//! What it deliberately does not do: decide which variable lives in which slot or order the
//! assignments (the executable program does), solve implicit blocks, or handle events. Event
//! operators (`edge`, `change`, `initial`, `sample`, `reinit`, ...) are a [`JitError`] for now;
//! `pre(x)` reads the current value of `x`, and `noEvent`/`smooth` are the identity. `der(x)` of
//! a state `x[i]` reads `dx[i]`. It does not compile segments in parallel yet.

#![allow(unsafe_code)]

mod function;
mod host;
mod shared;
mod translate;

pub use translate::SliceLengths;

use crate::expr::{ExprArena, ExprId, FuncId, FxHashMap, VarId};
use crate::flat;
use crate::slot::Slot;
use cranelift_codegen::ir::{InstBuilder, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, ModuleError};
use shared::Shared;
use std::collections::HashSet;
use translate::{Leaves, SegmentLeaves, Translator};

/// Straight-line code: each expression is evaluated and stored into its slot, in order. An
/// expression may read slots written earlier in the same segment.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub assignments: Vec<(Slot, ExprId)>,
}

/// How much Cranelift optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptLevel {
    /// No optimisation passes: the fastest compilation. The probe measured no run-time gain
    /// from `Speed` on generated model code once loads are de-duplicated, which this module does.
    None,
    /// Cranelift's `speed` level (e-graph optimisations), about 25% more compile time.
    Speed,
}

#[derive(Debug, Clone, Copy)]
pub struct JitOptions {
    pub opt_level: OptLevel,
    /// Run Cranelift's IR verifier on every function (about +80% compile time): on in debug
    /// builds, off in release builds.
    pub verify: bool,
    /// A segment function ends after this many assignments ...
    pub max_assignments_per_function: usize,
    /// ... or once it holds this many Cranelift instructions, whichever comes first (a
    /// function always holds at least one assignment). `usize::MAX` for both never splits.
    pub max_instructions_per_function: usize,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            verify: cfg!(debug_assertions),
            max_assignments_per_function: 1000,
            max_instructions_per_function: 10_000,
        }
    }
}

/// Why compiling or calling failed.
#[derive(Debug, Clone, PartialEq)]
pub enum JitError {
    /// A variable the expressions read has no slot.
    NoSlot(VarId),
    /// An assignment to a slot that compiled code may not write (time, a state, a parameter).
    ReadOnlyTarget(Slot),
    /// A slot index too large for a 32-bit byte offset.
    SlotOutOfRange(Slot),
    /// An expression (or statement) the JIT does not translate.
    Unsupported {
        node: Option<ExprId>,
        what: String,
    },
    UnknownFunction(FuncId),
    /// An error inside the body of a user function.
    InFunction {
        name: String,
        error: Box<JitError>,
    },
    /// Cranelift rejected the code (a verifier error is a bug in this module).
    Codegen(String),
    /// The host machine is not supported by Cranelift.
    Host(String),
    NoSuchSegment(usize),
    /// A slice given to [`CompiledModule::call`] is shorter than the segment needs.
    SliceTooShort {
        segment: usize,
        slice: &'static str,
        needed: usize,
        got: usize,
    },
}

impl JitError {
    fn codegen(e: ModuleError) -> JitError {
        JitError::Codegen(e.to_string())
    }
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::NoSlot(v) => write!(f, "variable #{} has no slot in the evaluation arrays", v.0),
            JitError::ReadOnlyTarget(s) => write!(f, "cannot assign {s:?}: compiled code only writes dx and work"),
            JitError::SlotOutOfRange(s) => write!(f, "{s:?} is beyond the largest index the JIT addresses"),
            JitError::Unsupported { node: Some(n), what } => write!(f, "expression #{}: {what}", n.0),
            JitError::Unsupported { node: None, what } => f.write_str(what),
            JitError::UnknownFunction(id) => write!(f, "no user function #{}", id.0),
            JitError::InFunction { name, error } => write!(f, "in function `{name}`: {error}"),
            JitError::Codegen(m) => write!(f, "code generation failed: {m}"),
            JitError::Host(m) => write!(f, "this machine is not supported by the JIT: {m}"),
            JitError::NoSuchSegment(s) => write!(f, "no segment {s}"),
            JitError::SliceTooShort {
                segment,
                slice,
                needed,
                got,
            } => write!(
                f,
                "segment {segment} needs `{slice}` of length {needed} or more, got {got}"
            ),
        }
    }
}

impl std::error::Error for JitError {}

/// The native form of a segment function.
type SegmentFn = unsafe extern "C" fn(f64, *const f64, *const f64, *mut f64, *mut f64);

struct CompiledSegment {
    functions: Vec<SegmentFn>,
    lengths: SliceLengths,
}

/// Compiled segments and the module that owns their code (freed on drop).
pub struct CompiledModule {
    /// Always `Some` until dropped.
    module: Option<JITModule>,
    segments: Vec<CompiledSegment>,
}

impl CompiledModule {
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// How many native functions segment `segment` was split into.
    pub fn function_count(&self, segment: usize) -> Option<usize> {
        self.segments.get(segment).map(|s| s.functions.len())
    }

    /// The slice lengths segment `segment` needs.
    pub fn lengths(&self, segment: usize) -> Option<SliceLengths> {
        self.segments.get(segment).map(|s| s.lengths)
    }

    /// Runs segment `segment` at time `t`, after checking that every slice is long enough for
    /// the largest index the segment reads or writes.
    pub fn call(
        &self,
        segment: usize,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), JitError> {
        let seg = self.segments.get(segment).ok_or(JitError::NoSuchSegment(segment))?;
        let l = seg.lengths;
        for (slice, needed, got) in [
            ("x", l.x, x.len()),
            ("p", l.p, p.len()),
            ("dx", l.dx, dx.len()),
            ("work", l.work, work.len()),
        ] {
            if got < needed {
                return Err(JitError::SliceTooShort {
                    segment,
                    slice,
                    needed,
                    got,
                });
            }
        }
        for f in &seg.functions {
            // SAFETY: `f` was compiled by this module, whose code lives as long as `self`, with
            // exactly this signature. It reads and writes only the slots recorded in
            // `seg.lengths`, and every slice was just checked to be at least that long; `dx`
            // and `work` are distinct mutable borrows, so the stores alias nothing else. The
            // host functions it calls do not unwind.
            unsafe { f(t, x.as_ptr(), p.as_ptr(), dx.as_mut_ptr(), work.as_mut_ptr()) };
        }
        Ok(())
    }
}

impl Drop for CompiledModule {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the function pointers into this module are private to `self` and only
            // called through `call`, which borrows `self`; being dropped, no call can be running
            // or happen later.
            unsafe { module.free_memory() };
        }
    }
}

fn new_module(options: &JitOptions) -> Result<JITModule, JitError> {
    let mut flags = settings::builder();
    let level = match options.opt_level {
        OptLevel::None => "none",
        OptLevel::Speed => "speed",
    };
    let verify = if options.verify { "true" } else { "false" };
    // `is_pic` and `use_colocated_libcalls` must be false for cranelift-jit (what
    // `JITBuilder::with_flags` sets, which would panic on an unsupported host instead of
    // returning an error).
    for (name, value) in [
        ("opt_level", level),
        ("enable_verifier", verify),
        ("is_pic", "false"),
        ("use_colocated_libcalls", "false"),
    ] {
        flags
            .set(name, value)
            .map_err(|e| JitError::Codegen(format!("setting {name}: {e}")))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|m| JitError::Host(m.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Host(e.to_string()))?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    // Every host function is registered under its own name, so that no symbol is left to the
    // JIT's fallback lookup in the process (which panics when it fails).
    for f in host::all() {
        builder.symbol(f.symbol, f.address);
    }
    Ok(JITModule::new(builder))
}

/// Compiles `segments` (and the user functions they call) into native code.
pub fn compile(
    arena: &ExprArena,
    functions: &[flat::Function],
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
    options: &JitOptions,
) -> Result<CompiledModule, JitError> {
    let mut sh = Shared::new(new_module(options)?, arena, functions);
    let result = build(&mut sh, slot_of, segments, options);
    let Shared { mut module, .. } = sh;
    let ids = match result.and_then(|ids| module.finalize_definitions().map_err(JitError::codegen).map(|()| ids)) {
        Ok(ids) => ids,
        Err(e) => {
            // SAFETY: no pointer into the module's code was taken yet.
            unsafe { module.free_memory() };
            return Err(e);
        }
    };
    let segments = ids
        .into_iter()
        .map(|(ids, lengths)| CompiledSegment {
            functions: ids
                .into_iter()
                .map(|id| {
                    let code = module.get_finalized_function(id);
                    // SAFETY: `id` was defined with the segment signature (`f64` and four
                    // pointers, no result, the host's C calling convention), which is
                    // `SegmentFn`, and the module was finalized, so `code` is executable.
                    unsafe { std::mem::transmute::<*const u8, SegmentFn>(code) }
                })
                .collect(),
            lengths,
        })
        .collect();
    Ok(CompiledModule {
        module: Some(module),
        segments,
    })
}

type SegmentIds = Vec<(Vec<cranelift_module::FuncId>, SliceLengths)>;

/// Defines every segment function and the user functions they need; returns the functions of
/// each segment and the lengths it needs.
fn build(
    sh: &mut Shared<'_>,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
    options: &JitOptions,
) -> Result<SegmentIds, JitError> {
    let mut ctx = sh.module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let sig = sh.signature(&[types::F64, sh.ptr, sh.ptr, sh.ptr, sh.ptr], &[]);
    let mut out = Vec::with_capacity(segments.len());
    let mut names = 0usize;
    for segment in segments {
        let mut lengths = SliceLengths::default();
        let mut ids = Vec::new();
        let mut rest = segment.assignments.as_slice();
        while !rest.is_empty() {
            let id = sh
                .module
                .declare_function(&format!("eqm_segment_{names}"), Linkage::Local, &sig)
                .map_err(JitError::codegen)?;
            names += 1;
            ctx.func.signature = sig.clone();
            ctx.func.name = UserFuncName::user(0, id.as_u32());
            let done = segment_function(sh, &mut ctx.func, &mut fctx, slot_of, rest, &mut lengths, options)?;
            rest = &rest[done..];
            sh.module.define_function(id, &mut ctx).map_err(JitError::codegen)?;
            sh.module.clear_context(&mut ctx);
            ids.push(id);
        }
        out.push((ids, lengths));
    }
    let mut compiled = HashSet::new();
    while let Some(f) = sh.pending.pop() {
        if compiled.insert(f) {
            function::compile(sh, &mut ctx, &mut fctx, f)?;
        }
    }
    Ok(out)
}

/// Builds one segment function from the first assignments of `assignments` (as many as the
/// options allow) and returns how many it took.
fn segment_function(
    sh: &mut Shared<'_>,
    func: &mut cranelift_codegen::ir::Function,
    fctx: &mut FunctionBuilderContext,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    assignments: &[(Slot, ExprId)],
    lengths: &mut SliceLengths,
    options: &JitOptions,
) -> Result<usize, JitError> {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (t, base) = match b.block_params(entry) {
        [t, x, p, dx, work] => (*t, [*x, *p, *dx, *work]),
        _ => return Err(JitError::Codegen("unexpected segment parameters".into())),
    };
    let leaves = Leaves::Segment(SegmentLeaves {
        slot_of,
        t,
        entry,
        base,
        values: FxHashMap::default(),
        observed: HashSet::default(),
        lengths,
    });
    let mut tr = Translator::new(sh, b, leaves);
    let mut done = 0;
    for &(slot, e) in assignments {
        if !slot.is_writable() {
            return Err(JitError::ReadOnlyTarget(slot));
        }
        let v = tr.expr(e)?;
        tr.write_slot(slot, v)?;
        done += 1;
        if done >= options.max_assignments_per_function
            || tr.b.func.dfg.num_insts() >= options.max_instructions_per_function
        {
            break;
        }
    }
    tr.b.ins().return_(&[]);
    tr.b.seal_all_blocks();
    tr.finish();
    Ok(done)
}
