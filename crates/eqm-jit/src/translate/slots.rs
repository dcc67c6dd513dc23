//! Slots and leaves: where the values an expression reads come from and where assignments go.
//!
//! Input: the slot a leaf or an assignment names, and the function being built (a segment
//! function with its four arrays and time, or a user-function body with one Cranelift variable
//! per local). Output: loads and stores at the slot's address (moved by the loop pointer inside
//! a re-rolled loop), each slot loaded at most once per function where registers may keep it,
//! and the slice lengths the safe wrapper checks. It deliberately emits no arithmetic.

use super::{Translator, Undo};
use crate::interface::JitError;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::Variable;
use eqm_ir::expr::{FxBuild, FxHashMap, VarId};
use eqm_ir::slot::Slot;
use std::collections::HashSet;

/// The largest index whose byte offset (`8 * index`) fits the 32-bit offset of a load.
const MAX_INDEX: u32 = (i32::MAX / 8) as u32;

/// How many instructions back a slot's value is reused from a register; a read further on
/// loads the slot again. A value kept for the whole function is live across all of it: in a
/// dense block (each of k rows reading the same k unknowns) that is k values live at once
/// through k² instructions, and the register allocator's time grows with their product, while
/// a load from the slot array costs what a reload from a spill slot costs. Within this
/// distance, neighbouring assignments (a stage of a chain and the next) still share values.
const REUSE_DISTANCE: usize = 256;

/// How many elements of each array a segment touches (the largest index used, plus one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceLengths {
    pub x: usize,
    pub p: usize,
    pub dx: usize,
    pub work: usize,
}

impl SliceLengths {
    pub(crate) fn record(&mut self, slot: Slot) {
        let (field, i) = match slot {
            Slot::Time => return,
            Slot::State(i) => (&mut self.x, i),
            Slot::Param(i) => (&mut self.p, i),
            Slot::Der(i) => (&mut self.dx, i),
            Slot::Work(i) => (&mut self.work, i),
        };
        *field = (*field).max(i as usize + 1);
    }
}

/// The leaves of a segment function: time, and the four arrays of `f(t, x, p, dx, work)`.
pub(crate) struct SegmentLeaves<'a> {
    pub slot_of: &'a dyn Fn(VarId) -> Option<Slot>,
    pub t: Value,
    /// Base pointers of `x`, `p`, `dx`, `work`.
    pub base: [Value; 4],
    /// Inside the body of a re-rolled loop: the pointer each slot of the body's template is
    /// addressed from (the base of its array moved by the repetitions so far); see
    /// `reroll`.
    pub rolled: Option<FxHashMap<Slot, Value>>,
    /// The current value of each slot read or written so far in this function, with the
    /// number of instructions the function had when it was loaded or stored (see
    /// [`Translator::read_slot`]); after a write the stored value is reused.
    pub values: FxHashMap<Slot, (Value, usize)>,
    /// Slots whose value some memoised node depends on. Writing such a slot again makes those
    /// nodes stale, so the memo is cleared (causalised programs write each slot once, so this
    /// is rare).
    pub observed: HashSet<Slot, FxBuild>,
    /// Whether slot values are kept in registers (`values`). Off for algorithm statements,
    /// whose loops and branches make a register value stale at their joins: there every read
    /// loads and every write stores.
    pub cache: bool,
    pub lengths: &'a mut SliceLengths,
}

impl SegmentLeaves<'_> {
    /// The address of `slot`, element `i` of the array at `base`, as pointer and byte offset
    /// (inside a re-rolled loop the pointer the slot moves with), recording the slice length it
    /// needs.
    fn address(&mut self, slot: Slot, base: Value, i: u32) -> Result<(Value, i32), JitError> {
        let base = match &self.rolled {
            Some(rolled) => *rolled.get(&slot).ok_or(JitError::SlotOutOfRange(slot))?,
            None => base,
        };
        if i > MAX_INDEX {
            return Err(JitError::SlotOutOfRange(slot));
        }
        self.lengths.record(slot);
        Ok((base, i as i32 * 8))
    }
}

/// Where the leaves of an expression come from.
pub(crate) enum Leaves<'a> {
    Segment(SegmentLeaves<'a>),
    /// A user-function body: one Cranelift variable per function slot.
    Function(Vec<Variable>),
}

impl<'s, 'f, 'a> Translator<'s, 'f, 'a> {
    /// The base pointers of `x`, `p`, `dx` and `work` in a segment function.
    pub fn segment_bases(&self) -> Option<[Value; 4]> {
        match &self.leaves {
            Leaves::Segment(seg) => Some(seg.base),
            Leaves::Function(_) => None,
        }
    }

    /// Records that the segment touches `slot` (for the slice lengths the safe wrapper checks).
    pub fn record_length(&mut self, slot: Slot) {
        if let Leaves::Segment(seg) = &mut self.leaves {
            seg.lengths.record(slot);
        }
    }

    /// Starts the body of a re-rolled loop: from now on each slot is addressed from its pointer
    /// in `pointers`, and failing roots count repetitions. Nothing computed before the loop is
    /// reused inside it: the same template slot means another slot in each repetition.
    pub fn begin_rolled(&mut self, pointers: FxHashMap<Slot, Value>, counter: Value, period: i64) {
        self.forget();
        if let Leaves::Segment(seg) = &mut self.leaves {
            seg.values.clear();
            seg.rolled = Some(pointers);
        }
        self.site_step = Some((counter, period));
    }

    /// Ends a re-rolled loop. Values of the body's last repetition are forgotten.
    pub fn end_rolled(&mut self) {
        self.forget();
        if let Leaves::Segment(seg) = &mut self.leaves {
            seg.values.clear();
            seg.rolled = None;
        }
        self.site_step = None;
    }

    /// The current value of `slot` in a segment function. Each slot is loaded from memory at
    /// most once per [`REUSE_DISTANCE`] instructions where registers may keep it: a read at the top level is loaded
    /// where it happens (that code dominates the rest of the function) and serves every later
    /// read; a first read inside a branch is loaded inside the branch and serves the rest of
    /// that branch only, because its value does not dominate the code after the branch. Loading
    /// such a read at the top of the function instead would keep one value alive from the entry
    /// to each branch: with a chain of n branches that is n values live across n blocks, whose
    /// register allocation takes time n^2.
    pub(super) fn read_slot(&mut self, slot: Slot) -> Result<Value, JitError> {
        let Leaves::Segment(seg) = &mut self.leaves else {
            return Err(JitError::Unsupported {
                node: None,
                what: "a model variable inside a function body".into(),
            });
        };
        seg.observed.insert(slot);
        let now = self.b.func.dfg.num_insts();
        if seg.cache
            && let Some(&(v, since)) = seg.values.get(&slot)
            && now - since <= REUSE_DISTANCE
        {
            return Ok(v);
        }
        let (base, i, flags) = match slot {
            Slot::Time => return Ok(seg.t),
            Slot::State(i) => (seg.base[0], i, MemFlagsData::trusted().with_readonly()),
            Slot::Param(i) => (seg.base[1], i, MemFlagsData::trusted().with_readonly()),
            Slot::Der(i) => (seg.base[2], i, MemFlagsData::trusted()),
            Slot::Work(i) => (seg.base[3], i, MemFlagsData::trusted()),
        };
        let (base, offset) = seg.address(slot, base, i)?;
        let v = self.b.ins().load(types::F64, flags, base, offset);
        if seg.cache {
            seg.values.insert(slot, (v, now));
            if !self.scopes.is_empty() {
                self.undo.push(Undo::Slot(slot));
            }
        }
        Ok(v)
    }

    /// Stores `v` into `slot` (a top-level assignment of a segment) and makes it the slot's
    /// current value.
    pub fn write_slot(&mut self, slot: Slot, v: Value) -> Result<(), JitError> {
        let Leaves::Segment(seg) = &mut self.leaves else {
            return Err(JitError::ReadOnlyTarget(slot));
        };
        let (base, i) = match slot {
            Slot::Der(i) => (seg.base[2], i),
            Slot::Work(i) => (seg.base[3], i),
            _ => return Err(JitError::ReadOnlyTarget(slot)),
        };
        let (base, offset) = seg.address(slot, base, i)?;
        let stale = seg.observed.contains(&slot);
        if seg.cache {
            seg.values.insert(slot, (v, self.b.func.dfg.num_insts()));
        }
        self.b.ins().store(MemFlagsData::trusted(), v, base, offset);
        if stale {
            self.forget();
        }
        Ok(())
    }

    pub fn var_slot(&self, v: VarId) -> Result<Slot, JitError> {
        match &self.leaves {
            Leaves::Segment(seg) => (seg.slot_of)(v).ok_or(JitError::NoSlot(v)),
            Leaves::Function(_) => Err(JitError::Unsupported {
                node: None,
                what: format!("model variable #{} inside a function body", v.0),
            }),
        }
    }
}
