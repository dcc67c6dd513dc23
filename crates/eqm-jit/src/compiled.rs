//! Compiled segments and the safe way to run them.
//!
//! Input: the finalized Cranelift module with the functions of every segment. Output: a
//! [`CompiledModule`] that owns the code (freed on drop) and runs a segment through
//! [`CompiledModule::run`]: it checks that every slice is long enough for the indices the
//! segment uses, calls the segment's native functions in order, and turns a failure the code
//! reported in its status block into [`JitError::Failed`]. It deliberately builds no code (that
//! is `segment` and `function`).

use crate::interface::{JitError, Segment};
use crate::segment::SegmentIds;
use crate::status;
use crate::translate::SliceLengths;
use cranelift_jit::JITModule;
use eqm_ir::failure::FailureKind;

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
    /// The module of `segments`, whose functions are `ids` (see [`build`](crate::segment::build))
    /// in the finalized `module`, with the failures their statements can report.
    pub(crate) fn finalized(
        module: JITModule,
        ids: SegmentIds,
        segments: &[Segment],
        faults: Vec<FailureKind>,
    ) -> CompiledModule {
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
        CompiledModule {
            module: Some(module),
            segments,
            faults,
        }
    }

    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// How many native functions segment `segment` was split into.
    pub fn function_count(&self, segment: usize) -> Option<usize> {
        self.segments.get(segment).map(|s| s.functions.len())
    }

    /// The number of re-rolled loops in the code of `segment` (see
    /// [`JitOptions::reroll`](crate::JitOptions::reroll)).
    pub fn loops(&self, segment: usize) -> Option<usize> {
        self.segments.get(segment).map(|s| s.loops)
    }

    /// The slice lengths segment `segment` needs.
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
