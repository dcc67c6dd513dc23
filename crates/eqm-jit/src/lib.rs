//! Native code for expression assignments, algorithm statements and solver kernels, through
//! Cranelift.
//!
//! Input: an expression arena, the model's user functions, a map from variables to their
//! run-time [`Slot`]s, and [`Segment`]s: ordered lists of assignments `slot := expression`,
//! optionally followed by the statements of an algorithm section and by result expressions.
//! Output: a [`CompiledModule`] holding one or more native functions per segment, each of the
//! shape `extern "C" fn(t: f64, x: *const f64, p: *const f64, dx: *mut f64, work: *mut f64,
//! out: *mut f64, status: *mut u64)` (see [`crate::slot`]), and a safe [`CompiledModule::run`]
//! that checks the slice lengths before running them. Results (residuals, partial derivatives)
//! go to `out`; failures (a failed `assert`, `terminate`, a zero `for` step, the iteration and
//! recursion limits) are reported through `status` and come back as [`JitError::Failed`] with
//! the same [`FailureKind`] the interpreter reports.
//!
//! The compiled code computes exactly what the reference evaluator
//! ([`eqm_ir::symbolic::eval::evaluate_in`]) and the interpreter compute, bit for bit: arithmetic
//! is the same IEEE operations, and every other function is a host function (`eqm_sin`,
//! `eqm_pow`, ...) that calls the evaluator's own Rust function. Booleans are 0.0 and 1.0, and
//! any non-zero value (NaN included) is true. `if` expressions are real branches, so the branch
//! not taken is not evaluated (a division by zero there does not matter, and a costly branch
//! costs nothing).
//!
//! Per function, each state, parameter or work slot is loaded from memory once; a value
//! written earlier in the same function is reused from its register, and shared
//! subexpressions are computed once. Algorithm statements are the exception: they read and
//! write memory at every use, because their loops and branches can change a slot at any time.
//! Long segments are split into functions of about a thousand assignments (or ten thousand
//! Cranelift instructions), the size at which Cranelift compiles fastest per equation on this
//! project's machines (see the Cranelift probe notes); the safe wrapper calls them in order.
//! Runs of assignments that repeat with a fixed stride in every slot (the stages of an array
//! of components) are emitted as loops whose body is one repetition ([`reroll`]), so code size
//! does not grow with the number of stages; within a loop, slots are kept in registers for one
//! repetition only.
//!
//! User functions (`Callee::User`) become native functions `fn(inputs: *const f64, outputs:
//! *mut f64, status: *mut u64)` compiled from their statements (see [`function`]); a call site
//! passes its arguments and receives its outputs through a stack slot, and `CallOutput` reads
//! further outputs from it. The iteration budget and the call depth live in the status block
//! and follow the interpreter's rules (see [`crate::interp`]): the budget is reset at the start
//! of every expression that calls a user function (of every statement list for algorithms),
//! which then computes its calls itself rather than reusing those of earlier expressions, every
//! call and every backward jump of a loop spends one unit, and calls nest at most
//! [`eqm_ir::failure::MAX_CALL_DEPTH`] deep.
//!
//! What it deliberately does not do: decide which variable lives in which slot or order the
//! assignments (the executable program does), iterate implicit blocks (the solvers in
//! [`crate::interp`] do, calling the residuals and partial derivatives compiled here), or
//! handle events. Event operators (`edge`, `change`, `initial`, `sample`, `reinit`, ...) are a
//! [`JitError`] for now, so the instructions that use them stay with the interpreter; `pre(x)`
//! reads the current value of `x`, and `noEvent`/`smooth` are the identity. `der(x)` of a state
//! `x[i]` reads `dx[i]`. It does not compile segments in parallel yet.

#![allow(unsafe_code)]

mod function;
mod host;
mod reroll;
mod shared;
mod translate;

pub use translate::SliceLengths;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, UserFuncName, Value, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, ModuleError};
use eqm_ir::expr::{ExprArena, ExprId, FuncId, FxHashMap, VarId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::{self, Statement};
use eqm_ir::slot::Slot;
use reroll::{Piece, Rolled};
use shared::Shared;
use std::collections::HashSet;
use translate::{Hoist, Leaves, SegmentLeaves, Translator};

/// Code run in one call: each assignment's expression is evaluated and stored into its slot, in
/// order; then the statements run (an algorithm section: they may assign slots); then each
/// result expression is evaluated into `out[k]`. An expression may read slots written earlier
/// in the same segment.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub assignments: Vec<(Slot, ExprId)>,
    pub statements: Vec<Statement>,
    pub results: Vec<ExprId>,
}

impl Segment {
    /// A segment of assignments only.
    pub fn assignments(assignments: Vec<(Slot, ExprId)>) -> Segment {
        Segment {
            assignments,
            ..Segment::default()
        }
    }
}

/// The status block compiled code reports through: byte offsets of its `u64` fields.
pub(crate) mod status {
    /// 0 while nothing failed; else one of the codes below.
    pub const CODE: i32 = 0;
    /// With [`TABLE`]: the index of the failure in the module's table of statements.
    pub const PAYLOAD: i32 = 8;
    /// The root (assignment, statement list or result) of the segment that failed, counted
    /// from 0 in the order the segment runs them.
    pub const SITE: i32 = 16;
    /// The iteration budget left in the current root.
    pub const BUDGET: i32 = 24;
    /// The budget every root starts with.
    pub const LIMIT: i32 = 32;
    /// User-function frames active now.
    pub const DEPTH: i32 = 40;
    /// The number of fields.
    pub const FIELDS: usize = 6;
    /// A statement of the table failed (assert, terminate, zero step).
    pub const TABLE: i64 = 1;
    pub const ITERATION_LIMIT: i64 = 2;
    pub const RECURSION_LIMIT: i64 = 3;
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
    /// A re-rolled loop counts as the assignments of its body.
    pub max_instructions_per_function: usize,
    /// Emit runs of assignments that repeat with a fixed stride as loops ([`reroll`]); the
    /// results are bit for bit those of straight-line code.
    pub reroll: bool,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            verify: cfg!(debug_assertions),
            max_assignments_per_function: 1000,
            max_instructions_per_function: 10_000,
            reroll: true,
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
    /// The compiled code failed in root `site` of the segment, counting from 0 each assignment,
    /// the statements (one root together) and each result, in the order they run.
    Failed {
        site: usize,
        kind: FailureKind,
    },
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
            JitError::Failed { site, kind } => write!(f, "the compiled code failed in root {site}: {kind:?}"),
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
type SegmentFn = unsafe extern "C" fn(f64, *const f64, *const f64, *mut f64, *mut f64, *mut f64, *mut u64);

struct CompiledSegment {
    functions: Vec<SegmentFn>,
    lengths: SliceLengths,
    /// The number of results, the length `out` needs.
    results: usize,
    /// The number of re-rolled loops in the segment's code.
    loops: usize,
}

/// Compiled segments and the module that owns their code (freed on drop).
pub struct CompiledModule {
    /// Always `Some` until dropped.
    module: Option<JITModule>,
    segments: Vec<CompiledSegment>,
    /// The failures statements can report, by [`status::PAYLOAD`].
    faults: Vec<FailureKind>,
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
    /// The number of re-rolled loops in the code of `segment` (see [`JitOptions::reroll`]).
    pub fn loops(&self, segment: usize) -> Option<usize> {
        self.segments.get(segment).map(|s| s.loops)
    }

    pub fn lengths(&self, segment: usize) -> Option<SliceLengths> {
        self.segments.get(segment).map(|s| s.lengths)
    }

    /// The number of results of segment `segment`.
    pub fn results(&self, segment: usize) -> Option<usize> {
        self.segments.get(segment).map(|s| s.results)
    }

    /// Runs segment `segment` at time `t` without results, with the interpreter's default
    /// iteration limit; see [`CompiledModule::run`].
    pub fn call(
        &self,
        segment: usize,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), JitError> {
        self.run(
            segment,
            t,
            [x, p],
            [dx, work],
            &mut [],
            eqm_ir::failure::DEFAULT_ITERATION_LIMIT,
        )
    }

    /// Runs segment `segment` at time `t` on `x, p` (read) and `dx, work` (read and written),
    /// its results into `out`, each root allowed `iteration_limit` loop iterations and calls.
    /// Every slice is first checked to be long enough for the largest index the segment reads
    /// or writes. A failure of the code stops it at once and is [`JitError::Failed`].
    ///
    /// Inlined, with the failures built out of line: a small model's right-hand side runs in
    /// tens of nanoseconds, and a caller that only asks whether it succeeded then carries no
    /// error value (whose construction and drop cost as much as the code).
    #[inline]
    pub fn run(
        &self,
        segment: usize,
        t: f64,
        [x, p]: [&[f64]; 2],
        [dx, work]: [&mut [f64]; 2],
        out: &mut [f64],
        iteration_limit: u64,
    ) -> Result<(), JitError> {
        let Some(seg) = self.segments.get(segment) else {
            return Err(JitError::NoSuchSegment(segment));
        };
        let l = seg.lengths;
        let lengths = [
            ("x", l.x, x.len()),
            ("p", l.p, p.len()),
            ("dx", l.dx, dx.len()),
            ("work", l.work, work.len()),
            ("out", seg.results, out.len()),
        ];
        if lengths.iter().any(|&(_, needed, got)| got < needed) {
            return Err(too_short(segment, &lengths));
        }
        let mut state = [0u64; status::FIELDS];
        state[status::LIMIT as usize / 8] = iteration_limit;
        state[status::BUDGET as usize / 8] = iteration_limit;
        for f in &seg.functions {
            // SAFETY: `f` was compiled by this module, whose code lives as long as `self`, with
            // exactly this signature. It reads and writes only the slots recorded in
            // `seg.lengths` and the first `seg.results` entries of `out`, and every slice was
            // just checked to be at least that long; `dx`, `work`, `out` and `state` are
            // distinct mutable borrows, so the stores alias nothing else. `state` has the
            // `status::FIELDS` fields the code addresses. The host functions it calls do not
            // unwind.
            unsafe {
                f(
                    t,
                    x.as_ptr(),
                    p.as_ptr(),
                    dx.as_mut_ptr(),
                    work.as_mut_ptr(),
                    out.as_mut_ptr(),
                    state.as_mut_ptr(),
                )
            };
            if state[status::CODE as usize / 8] != 0 {
                return Err(self.failure(&state, iteration_limit));
            }
        }
        Ok(())
    }

    /// The failure a status block reports.
    #[cold]
    fn failure(&self, state: &[u64; status::FIELDS], iteration_limit: u64) -> JitError {
        let site = state[status::SITE as usize / 8] as usize;
        let kind = match state[status::CODE as usize / 8] as i64 {
            status::ITERATION_LIMIT => FailureKind::IterationLimit { limit: iteration_limit },
            status::RECURSION_LIMIT => FailureKind::RecursionLimit {
                limit: eqm_ir::failure::MAX_CALL_DEPTH,
            },
            _ => {
                let k = state[status::PAYLOAD as usize / 8] as usize;
                match self.faults.get(k) {
                    Some(f) => f.clone(),
                    None => return JitError::Codegen(format!("an unknown failure {k} (internal error)")),
                }
            }
        };
        JitError::Failed { site, kind }
    }
}

// SAFETY: the only field that is not `Sync` is the `JITModule`, and no method taking `&self`
// touches it: shared references only read the function pointers, slice lengths and failure
// table, which are immutable after `compile`, and call code that writes nothing but the
// slices of its own call. The module itself is used only by `Drop`, which has `&mut self`.
// This lets the instances of one program share their native code (`Arc`) across threads.
unsafe impl Sync for CompiledModule {}

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
    let Shared { mut module, faults, .. } = sh;
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
        .zip(segments)
        .map(|((ids, lengths, loops), segment)| CompiledSegment {
            functions: ids
                .into_iter()
                .map(|id| {
                    let code = module.get_finalized_function(id);
                    // SAFETY: `id` was defined with the segment signature (`f64` and six
                    // pointers, no result, the host's C calling convention), which is
                    // `SegmentFn`, and the module was finalized, so `code` is executable.
                    unsafe { std::mem::transmute::<*const u8, SegmentFn>(code) }
                })
                .collect(),
            lengths,
            results: segment.results.len(),
            loops,
        })
        .collect();
    Ok(CompiledModule {
        module: Some(module),
        segments,
        faults,
    })
}

/// Per segment: its functions, the slice lengths it needs and its number of re-rolled loops.
type SegmentIds = Vec<(Vec<cranelift_module::FuncId>, SliceLengths, usize)>;

/// Defines every segment function and the user functions they need; returns the functions of
/// each segment, the lengths it needs and its number of loops.
fn build(
    sh: &mut Shared<'_>,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
    options: &JitOptions,
) -> Result<SegmentIds, JitError> {
    let mut ctx = sh.module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let sig = sh.signature(&[types::F64, sh.ptr, sh.ptr, sh.ptr, sh.ptr, sh.ptr, sh.ptr], &[]);
    let mut out = Vec::with_capacity(segments.len());
    let mut names = 0usize;
    for segment in segments {
        let mut lengths = SliceLengths::default();
        let mut ids = Vec::new();
        let pieces = if options.reroll {
            reroll::pieces(sh.arena, slot_of, &segment.assignments)
        } else {
            (0..segment.assignments.len()).map(Piece::Single).collect()
        };
        let mut rest = pieces.as_slice();
        // Statements and results go into the last function, which exists even when the
        // segment has no assignments.
        let mut last = false;
        while !last {
            let id = sh
                .module
                .declare_function(&format!("eqm_segment_{names}"), Linkage::Local, &sig)
                .map_err(JitError::codegen)?;
            names += 1;
            ctx.func.signature = sig.clone();
            ctx.func.name = UserFuncName::user(0, id.as_u32());
            let code = SegmentCode {
                assignments: &segment.assignments,
                pieces: rest,
                statements: &segment.statements,
                results: &segment.results,
            };
            let done = segment_function(sh, &mut ctx.func, &mut fctx, slot_of, code, &mut lengths, options)?;
            rest = &rest[done..];
            last = rest.is_empty();
            sh.module.define_function(id, &mut ctx).map_err(JitError::codegen)?;
            sh.module.clear_context(&mut ctx);
            ids.push(id);
        }
        let loops = pieces.iter().filter(|p| matches!(p, Piece::Rolled(_))).count();
        out.push((ids, lengths, loops));
    }
    let mut compiled = HashSet::new();
    while let Some(f) = sh.pending.pop() {
        if compiled.insert(f) {
            function::compile(sh, &mut ctx, &mut fctx, f)?;
        }
    }
    Ok(out)
}

/// What one segment function computes: the assignments of the first `pieces` (those left for
/// this function and the next ones), then (if it takes them all) the statements and the
/// results.
struct SegmentCode<'c> {
    /// Every assignment of the segment; pieces and roots index it.
    assignments: &'c [(Slot, ExprId)],
    pieces: &'c [Piece],
    statements: &'c [Statement],
    results: &'c [ExprId],
}

/// Builds one segment function from the first pieces of `code` (as many as the options allow),
/// and the statements and results once every piece is in; returns how many pieces it took.
fn segment_function(
    sh: &mut Shared<'_>,
    func: &mut cranelift_codegen::ir::Function,
    fctx: &mut FunctionBuilderContext,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    code: SegmentCode<'_>,
    lengths: &mut SliceLengths,
    options: &JitOptions,
) -> Result<usize, JitError> {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (t, base, out, status) = match b.block_params(entry) {
        [t, x, p, dx, work, out, status] => (*t, [*x, *p, *dx, *work], *out, *status),
        _ => return Err(JitError::Codegen("unexpected segment parameters".into())),
    };
    // Every failure leaves through this block, which records the root that failed.
    let exit = b.create_block();
    b.append_block_param(exit, types::I64);
    let leaves = Leaves::Segment(SegmentLeaves {
        slot_of,
        t,
        hoist: Hoist::Top(entry),
        base,
        values: FxHashMap::default(),
        observed: HashSet::default(),
        cache: true,
        rolled: None,
        lengths,
    });
    let mut tr = Translator::new(sh, b, leaves, status, exit);
    let (mut done, mut emitted) = (0, 0);
    for piece in code.pieces {
        match piece {
            Piece::Single(k) => {
                assignment(&mut tr, code.assignments, *k)?;
                emitted += 1;
            }
            Piece::Rolled(run) => {
                rolled_loop(&mut tr, code.assignments, run)?;
                emitted += run.period;
            }
        }
        done += 1;
        if done < code.pieces.len()
            && (emitted >= options.max_assignments_per_function
                || tr.b.func.dfg.num_insts() >= options.max_instructions_per_function)
        {
            break;
        }
    }
    let mut site = code.assignments.len() as u64;
    if done == code.pieces.len() {
        if !code.statements.is_empty() {
            function::algorithm(&mut tr, site, code.statements)?;
            site += 1;
        }
        for (k, &e) in code.results.iter().enumerate() {
            tr.begin_root(site + k as u64, e);
            let v = tr.expr(e)?;
            tr.b.ins().store(MemFlagsData::trusted(), v, out, k as i32 * 8);
        }
    }
    tr.b.ins().return_(&[]);
    tr.b.switch_to_block(exit);
    let failed = tr.b.block_params(exit)[0];
    tr.b.ins().store(MemFlagsData::trusted(), failed, status, status::SITE);
    tr.b.ins().return_(&[]);
    tr.b.seal_all_blocks();
    tr.finish();
    Ok(done)
}

/// Root `k` of a segment: assignment `k`, stored into its slot.
fn assignment(tr: &mut Translator<'_, '_, '_>, assignments: &[(Slot, ExprId)], k: usize) -> Result<(), JitError> {
    let (slot, e) = assignments[k];
    if !slot.is_writable() {
        return Err(JitError::ReadOnlyTarget(slot));
    }
    tr.begin_root(k as u64, e);
    let v = tr.expr(e)?;
    tr.write_slot(slot, v)
}

/// A re-rolled run as a loop: the header carries the repetition counter and one pointer per
/// array and stride (the array's base moved by the repetitions so far); the body is the run's
/// first `period` assignments, which address every slot from its pointer with the template's
/// own offset. The run's assignments execute in the order straight-line code executes them, so
/// reading memory gives the same values; registers are only reused within one repetition.
fn rolled_loop(tr: &mut Translator<'_, '_, '_>, assignments: &[(Slot, ExprId)], run: &Rolled) -> Result<(), JitError> {
    let base = tr
        .segment_bases()
        .ok_or_else(|| JitError::Codegen("a loop outside a segment function (internal error)".into()))?;
    let array = |slot: Slot| match slot {
        Slot::State(_) => Ok(0),
        Slot::Param(_) => Ok(1),
        Slot::Der(_) => Ok(2),
        Slot::Work(_) => Ok(3),
        Slot::Time => Err(JitError::SlotOutOfRange(slot)),
    };
    let last = run.repeats as i64 - 1;
    let mut groups: Vec<(usize, i64)> = Vec::with_capacity(run.strides.len());
    for &(slot, stride) in &run.strides {
        groups.push((array(slot)?, stride));
        // Both ends of the slot's range, for the lengths the safe wrapper checks.
        tr.record_length(slot);
        let end = reroll::moved(slot, last * stride).ok_or(JitError::SlotOutOfRange(slot))?;
        tr.record_length(end);
    }
    groups.sort_unstable();
    groups.dedup();
    let ptr = tr.sh.ptr;
    let header = tr.b.create_block();
    let counter = tr.b.append_block_param(header, types::I64);
    let pointers: Vec<Value> = groups.iter().map(|_| tr.b.append_block_param(header, ptr)).collect();
    let zero = tr.b.ins().iconst(types::I64, 0);
    let start: Vec<BlockArg> = std::iter::once(zero)
        .chain(groups.iter().map(|(a, _)| base[*a]))
        .map(BlockArg::Value)
        .collect();
    tr.b.ins().jump(header, &start);
    tr.b.switch_to_block(header);
    let body = tr.b.create_block();
    tr.b.ins().jump(body, &[]);
    tr.b.switch_to_block(body);
    let mut pointer_of = FxHashMap::default();
    for &(slot, stride) in &run.strides {
        let group = groups
            .binary_search(&(array(slot)?, stride))
            .map_err(|_| JitError::Codegen("a loop slot without its pointer (internal error)".into()))?;
        pointer_of.insert(slot, pointers[group]);
    }
    tr.begin_rolled(pointer_of, header, counter, run.period as i64);
    for k in run.begin..run.begin + run.period {
        assignment(tr, assignments, k)?;
    }
    let next = tr.b.ins().iadd_imm_s(counter, 1);
    let mut again = vec![BlockArg::Value(next)];
    for (&pointer, &(_, stride)) in pointers.iter().zip(&groups) {
        let moved = if stride == 0 {
            pointer
        } else {
            tr.b.ins().iadd_imm_s(pointer, stride * 8)
        };
        again.push(BlockArg::Value(moved));
    }
    let more = tr.b.ins().icmp_imm_s(IntCC::SignedLessThan, next, run.repeats as i64);
    let after = tr.b.create_block();
    tr.b.ins().brif(more, header, &again, after, &[]);
    tr.b.switch_to_block(after);
    tr.end_rolled(after);
    Ok(())
}

/// The error for the first slice in `lengths` (name, needed, given) that is too short.
#[cold]
fn too_short(segment: usize, lengths: &[(&'static str, usize, usize)]) -> JitError {
    let (slice, needed, got) = lengths
        .iter()
        .copied()
        .find(|&(_, needed, got)| got < needed)
        .unwrap_or(("", 0, 0));
    JitError::SliceTooShort {
        segment,
        slice,
        needed,
        got,
    }
}
