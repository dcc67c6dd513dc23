//! Segment functions: the native code of one segment, its assignments (straight-line or in
//! re-rolled loops), then its statements and results.
//!
//! Input: the segments to compile, the slot of every variable and the options. Output: the
//! Cranelift functions of each segment (a long segment is split into several, called in order),
//! defined in the shared module, with the slice lengths each segment needs and its number of
//! re-rolled loops; the user functions they call are compiled afterwards by `function`. It
//! deliberately translates no expression itself (that is `translate`) and runs nothing.

use crate::interface::{JitError, JitOptions, Segment};
use crate::reroll::{self, Piece, Rolled};
use crate::shared::Shared;
use crate::translate::{Leaves, SegmentLeaves, SliceLengths, Translator};
use crate::{function, status};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, UserFuncName, Value, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{Linkage, Module};
use eqm_ir::expr::{ExprId, FxHashMap, VarId};
use eqm_ir::flat::Statement;
use eqm_ir::slot::Slot;
use std::collections::HashSet;

/// Per segment: its functions, the slice lengths it needs and its number of re-rolled loops.
pub(crate) type SegmentIds = Vec<(Vec<cranelift_module::FuncId>, SliceLengths, usize)>;

/// Defines every segment function and the user functions they need; returns the functions of
/// each segment, the lengths it needs and its number of loops.
pub(crate) fn build(
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
        // The assignments in the order the code computes them: one that runs consecutive loops
        // stage by stage, when there is one (which then has no failing roots to number).
        let (reordered, pieces) = if options.reroll {
            reroll::interleave(sh.arena, slot_of, &segment.assignments)
        } else {
            (None, (0..segment.assignments.len()).map(Piece::Single).collect())
        };
        let assignments = reordered.as_deref().unwrap_or(&segment.assignments);
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
                assignments,
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

/// A re-rolled run as a loop: the header carries the repetition counter `r` alone; the body
/// is the run's first `period` assignments, which address every slot from the base of its
/// array moved by `r` times the slot's stride (computed once per array and stride at the top of
/// the body) with the template's own offset. x86 folds such an address, `base + 8r + offset`
/// for the usual stride of one element, into the load or store itself, so the loop's own cost
/// is the counter's increment, comparison and branch, whatever the number of arrays. The run's
/// assignments execute in the order straight-line code executes them, so reading memory gives
/// the same values; registers are only reused within one repetition.
fn rolled_loop(tr: &mut Translator<'_, '_, '_>, assignments: &[(Slot, ExprId)], run: &Rolled) -> Result<(), JitError> {
    let base = tr
        .segment_bases()
        .ok_or_else(|| JitError::Codegen("a loop outside a segment function (internal error)".into()))?;
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
    let header = tr.b.create_block();
    let counter = tr.b.append_block_param(header, types::I64);
    let zero = tr.b.ins().iconst(types::I64, 0);
    tr.b.ins().jump(header, &[BlockArg::Value(zero)]);
    tr.b.switch_to_block(header);
    let body = tr.b.create_block();
    tr.b.ins().jump(body, &[]);
    tr.b.switch_to_block(body);
    let ptr = tr.sh.ptr;
    // The byte offset of each stride in this repetition, then the pointer of each group.
    let mut offsets: Vec<(i64, Value)> = Vec::new();
    let mut pointers: Vec<Value> = Vec::with_capacity(groups.len());
    for &(array, stride) in &groups {
        if stride == 0 {
            pointers.push(base[array]);
            continue;
        }
        let offset = match offsets.iter().find(|(s, _)| *s == stride) {
            Some(&(_, offset)) => offset,
            None => {
                let offset = if stride == 1 {
                    tr.b.ins().ishl_imm_u(counter, 3)
                } else {
                    tr.b.ins().imul_imm_s(counter, stride * 8)
                };
                offsets.push((stride, offset));
                offset
            }
        };
        let offset = if ptr == types::I64 {
            offset
        } else {
            tr.b.ins().ireduce(ptr, offset)
        };
        pointers.push(tr.b.ins().iadd(base[array], offset));
    }
    let mut pointer_of = FxHashMap::default();
    for &(slot, stride) in &run.strides {
        let group = groups
            .binary_search(&(array(slot)?, stride))
            .map_err(|_| JitError::Codegen("a loop slot without its pointer (internal error)".into()))?;
        pointer_of.insert(slot, pointers[group]);
    }
    tr.begin_rolled(pointer_of, counter, run.period as i64);
    for k in run.begin..run.begin + run.period {
        assignment(tr, assignments, k)?;
    }
    let next = tr.b.ins().iadd_imm_s(counter, 1);
    let more = tr.b.ins().icmp_imm_s(IntCC::SignedLessThan, next, run.repeats as i64);
    let after = tr.b.create_block();
    tr.b.ins().brif(more, header, &[BlockArg::Value(next)], after, &[]);
    tr.b.switch_to_block(after);
    tr.end_rolled();
    Ok(())
}

/// The array of `slot` as the index of its base pointer among a segment function's parameters.
fn array(slot: Slot) -> Result<usize, JitError> {
    match slot {
        Slot::State(_) => Ok(0),
        Slot::Param(_) => Ok(1),
        Slot::Der(_) => Ok(2),
        Slot::Work(_) => Ok(3),
        Slot::Time => Err(JitError::SlotOutOfRange(slot)),
    }
}
