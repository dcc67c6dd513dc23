//! Expressions to Cranelift IR, for segment functions and user-function bodies alike.
//!
//! The translator walks an expression iteratively (an explicit task stack, like the evaluator,
//! so that deep expressions cannot overflow the stack) and keeps a memo of the value of every
//! composite node it has emitted, because the arena is a DAG and shared subexpressions must be
//! computed once. Values computed inside a branch of an `if` do not dominate the code after the
//! `if`, so the memo is scoped: entering a branch opens a scope, and leaving it forgets whatever
//! the branch added. Literals are not memoised but emitted at each use, which keeps their live
//! ranges short. Leaves (variables, time, function locals) are read through [`Leaves`].

use super::host::{self, HostFn};
use super::shared::Shared;
use super::{JitError, status};
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{
    Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::Module;
use eqm_ir::builtins::{Builtin, BuiltinKind, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FuncId, FxBuild, FxHashMap, Node, UnOp, VarId};
use eqm_ir::slot::Slot;
use std::collections::HashSet;

/// The largest index whose byte offset (`8 * index`) fits the 32-bit offset of a load.
const MAX_INDEX: u32 = (i32::MAX / 8) as u32;

/// How many elements of each array a segment touches (the largest index used, plus one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceLengths {
    pub x: usize,
    pub p: usize,
    pub dx: usize,
    pub work: usize,
}

impl SliceLengths {
    pub(super) fn record(&mut self, slot: Slot) {
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
pub(super) struct SegmentLeaves<'a> {
    pub slot_of: &'a dyn Fn(VarId) -> Option<Slot>,
    pub t: Value,
    /// Where loads first needed inside a branch are placed.
    pub hoist: Hoist,
    /// Base pointers of `x`, `p`, `dx`, `work`.
    pub base: [Value; 4],
    /// Inside the body of a re-rolled loop: the pointer each slot of the body's template is
    /// addressed from (the base of its array moved by the repetitions so far); see
    /// [`super::reroll`].
    pub rolled: Option<FxHashMap<Slot, Value>>,
    /// The current value of each slot read or written so far in this function (see
    /// [`Translator::read_slot`]); after a write the stored value is reused.
    pub values: FxHashMap<Slot, Value>,
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

/// Where a load is placed when its value is first needed inside a branch: somewhere that
/// dominates every later use in the function (or in the body of a loop).
#[derive(Debug, Clone, Copy)]
pub(super) enum Hoist {
    /// At the top of this block (the function's entry, or the block after a loop).
    Top(Block),
    /// Before the terminator of this block (the header of a loop, whose parameters the loads
    /// use).
    BeforeEnd(Block),
}

/// Where the leaves of an expression come from.
pub(super) enum Leaves<'a> {
    Segment(SegmentLeaves<'a>),
    /// A user-function body: one Cranelift variable per function slot.
    Function(Vec<Variable>),
}

/// An entry of the scope log: what to forget when a branch scope closes.
enum Undo {
    Expr(ExprId),
    Call(ExprId),
}

enum Task {
    Visit(ExprId),
    Emit(ExprId),
    /// The condition's operands are known: branch on it.
    IfCondition(ExprId),
    /// The `then` value is known: close its scope and start the `else` branch.
    IfThen {
        e: ExprId,
        otherwise: Block,
        merge: Block,
    },
    /// The `else` value is known: close its scope and continue at the merge block.
    IfElse {
        e: ExprId,
        merge: Block,
    },
}

/// Translates expressions into one Cranelift function being built.
pub(super) struct Translator<'s, 'f, 'a> {
    pub sh: &'s mut Shared<'a>,
    pub b: FunctionBuilder<'f>,
    pub leaves: Leaves<'s>,
    memo: FxHashMap<ExprId, Value>,
    /// The stack slot holding the inputs and then the outputs of each user-function call node.
    calls: FxHashMap<ExprId, (StackSlot, u32)>,
    undo: Vec<Undo>,
    scopes: Vec<usize>,
    refs: FxHashMap<cranelift_module::FuncId, FuncRef>,
    /// The status block (`*mut u64`, see [`status`]).
    pub status: Value,
    /// Where code goes after a failure, with the failing root as its `i64` argument.
    exit: Block,
    /// The root being translated.
    site: u64,
    /// Inside the body of a re-rolled loop: the repetition counter and the number of roots per
    /// repetition, so that the failing root is `site + counter * period`.
    site_step: Option<(Value, i64)>,
}

impl<'s, 'f, 'a> Translator<'s, 'f, 'a> {
    pub fn new(sh: &'s mut Shared<'a>, b: FunctionBuilder<'f>, leaves: Leaves<'s>, status: Value, exit: Block) -> Self {
        Translator {
            sh,
            b,
            leaves,
            memo: FxHashMap::default(),
            calls: FxHashMap::default(),
            undo: Vec::new(),
            scopes: Vec::new(),
            refs: FxHashMap::default(),
            status,
            exit,
            site: 0,
            site_step: None,
        }
    }

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

    /// Starts the body of a re-rolled loop whose header is `header`: from now on each slot is
    /// addressed from its pointer in `pointers`, loads first needed inside a branch go to the
    /// end of the header, and failing roots count repetitions. Nothing computed before the
    /// loop is reused inside it: the same template slot means another slot in each repetition.
    pub fn begin_rolled(&mut self, pointers: FxHashMap<Slot, Value>, header: Block, counter: Value, period: i64) {
        self.forget();
        if let Leaves::Segment(seg) = &mut self.leaves {
            seg.values.clear();
            seg.rolled = Some(pointers);
            seg.hoist = Hoist::BeforeEnd(header);
        }
        self.site_step = Some((counter, period));
    }

    /// Ends a re-rolled loop; code continues in block `after`. Values of the body's last
    /// repetition are forgotten, and loads first needed inside a branch go to the top of
    /// `after`, where the loop's writes are done.
    pub fn end_rolled(&mut self, after: Block) {
        self.forget();
        if let Leaves::Segment(seg) = &mut self.leaves {
            seg.values.clear();
            seg.rolled = None;
            seg.hoist = Hoist::Top(after);
        }
        self.site_step = None;
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

    /// Starts a statement list as root `site`, with the full iteration budget.
    pub fn begin_statements(&mut self, site: u64) {
        self.site = site;
        self.reset_budget();
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

    /// Finishes the function (all blocks must be terminated and sealed).
    pub fn finish(self) {
        let config = self.sh.module.target_config();
        self.b.finalize(config);
    }

    fn arena(&self) -> &'a ExprArena {
        self.sh.arena
    }

    /// Forgets every memoised value (user-function bodies do this before each expression,
    /// because locals change between statements).
    pub fn forget(&mut self) {
        self.memo.clear();
        self.calls.clear();
        if let Leaves::Segment(s) = &mut self.leaves {
            s.observed.clear();
        }
    }

    fn remember(&mut self, e: ExprId, v: Value) {
        self.memo.insert(e, v);
        if !self.scopes.is_empty() {
            self.undo.push(Undo::Expr(e));
        }
    }

    fn open_scope(&mut self) {
        self.scopes.push(self.undo.len());
    }

    fn close_scope(&mut self) {
        let start = self.scopes.pop().unwrap_or(0);
        for undo in self.undo.drain(start..) {
            match undo {
                Undo::Expr(e) => {
                    self.memo.remove(&e);
                }
                Undo::Call(e) => {
                    self.calls.remove(&e);
                }
            }
        }
    }

    pub fn real(&mut self, v: f64) -> Value {
        self.b.ins().f64const(Ieee64::with_bits(v.to_bits()))
    }

    /// A Boolean (`i8`) as the evaluator's number: 1.0 or 0.0.
    fn number(&mut self, c: Value) -> Value {
        let one = self.real(1.0);
        let zero = self.real(0.0);
        self.b.ins().select(c, one, zero)
    }

    /// The evaluator's `truth`: any value other than zero (NaN included) is true.
    pub fn truth(&mut self, v: Value) -> Value {
        let zero = self.real(0.0);
        self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
    }

    /// A reference to `id` usable in the function being built, declared once per function.
    pub fn func_ref(&mut self, id: cranelift_module::FuncId) -> FuncRef {
        if let Some(r) = self.refs.get(&id) {
            return *r;
        }
        let r = self.sh.module.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    fn call_host(&mut self, f: HostFn, args: &[Value]) -> Result<Value, JitError> {
        let id = self.sh.host(f)?;
        let r = self.func_ref(id);
        let call = self.b.ins().call(r, args);
        Ok(self.b.inst_results(call)[0])
    }

    /// The address of element `i` of a pointer argument, as base and byte offset.
    fn offset(slot: Slot, i: u32) -> Result<i32, JitError> {
        if i > MAX_INDEX {
            return Err(JitError::SlotOutOfRange(slot));
        }
        Ok(i as i32 * 8)
    }

    /// The current value of `slot` in a segment function. Each slot is loaded from memory at
    /// most once per function: a read at the top level is loaded where it happens (that code
    /// dominates the rest of the function), and a first read inside a branch is loaded at the
    /// top of the entry block instead, so that the value serves the rest of the function too.
    /// Loading early is correct: a slot this function writes before reading it is in the cache,
    /// so a load only ever happens for the value the slot had when the function started.
    fn read_slot(&mut self, slot: Slot) -> Result<Value, JitError> {
        let Leaves::Segment(seg) = &mut self.leaves else {
            return Err(JitError::Unsupported {
                node: None,
                what: "a model variable inside a function body".into(),
            });
        };
        seg.observed.insert(slot);
        if seg.cache
            && let Some(v) = seg.values.get(&slot)
        {
            return Ok(*v);
        }
        let (mut base, i, flags) = match slot {
            Slot::Time => return Ok(seg.t),
            Slot::State(i) => (seg.base[0], i, MemFlagsData::trusted().with_readonly()),
            Slot::Param(i) => (seg.base[1], i, MemFlagsData::trusted().with_readonly()),
            Slot::Der(i) => (seg.base[2], i, MemFlagsData::trusted()),
            Slot::Work(i) => (seg.base[3], i, MemFlagsData::trusted()),
        };
        if let Some(rolled) = &seg.rolled {
            base = *rolled.get(&slot).ok_or(JitError::SlotOutOfRange(slot))?;
        }
        let offset = Self::offset(slot, i)?;
        seg.lengths.record(slot);
        if !seg.cache {
            return Ok(self.b.ins().load(types::F64, flags, base, offset));
        }
        let v = if self.scopes.is_empty() {
            self.b.ins().load(types::F64, flags, base, offset)
        } else {
            let mut at = match seg.hoist {
                Hoist::Top(block) => FuncCursor::new(self.b.func).at_first_insertion_point(block),
                Hoist::BeforeEnd(block) => {
                    let end = self.b.func.layout.last_inst(block).ok_or_else(|| {
                        JitError::Codegen("a loop header without its terminator (internal error)".into())
                    })?;
                    FuncCursor::new(self.b.func).at_inst(end)
                }
            };
            at.ins().load(types::F64, flags, base, offset)
        };
        seg.values.insert(slot, v);
        Ok(v)
    }

    /// Stores `v` into `slot` (a top-level assignment of a segment) and makes it the slot's
    /// current value.
    pub fn write_slot(&mut self, slot: Slot, v: Value) -> Result<(), JitError> {
        let Leaves::Segment(seg) = &mut self.leaves else {
            return Err(JitError::ReadOnlyTarget(slot));
        };
        let (mut base, i) = match slot {
            Slot::Der(i) => (seg.base[2], i),
            Slot::Work(i) => (seg.base[3], i),
            _ => return Err(JitError::ReadOnlyTarget(slot)),
        };
        if let Some(rolled) = &seg.rolled {
            base = *rolled.get(&slot).ok_or(JitError::SlotOutOfRange(slot))?;
        }
        let offset = Self::offset(slot, i)?;
        seg.lengths.record(slot);
        let stale = seg.observed.contains(&slot);
        if seg.cache {
            seg.values.insert(slot, v);
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

    /// The value of a leaf or of an already emitted node.
    fn operand(&mut self, e: ExprId) -> Result<Value, JitError> {
        if let Some(v) = self.memo.get(&e) {
            return Ok(*v);
        }
        match self.arena().get(e) {
            Node::Real(bits) => Ok(self.real(f64::from_bits(*bits))),
            Node::Int(i) => Ok(self.real(*i as f64)),
            Node::Bool(b) => Ok(self.real(if *b { 1.0 } else { 0.0 })),
            Node::Var(v) => {
                let slot = self.var_slot(*v)?;
                self.read_slot(slot)
            }
            Node::Time => match &self.leaves {
                Leaves::Segment(seg) => Ok(seg.t),
                Leaves::Function(_) => Err(unsupported(e, "`time` inside a function body")),
            },
            Node::Local(k) => match &self.leaves {
                Leaves::Function(vars) => {
                    let var = *vars
                        .get(*k as usize)
                        .ok_or_else(|| unsupported(e, "a function local that does not exist"))?;
                    Ok(self.b.use_var(var))
                }
                Leaves::Segment(_) => Err(unsupported(e, "a function local outside a function body")),
            },
            _ => Err(unsupported(e, "an operand that was not translated (internal error)")),
        }
    }

    /// Whether `e` is a leaf, read by [`Self::operand`] where it is used.
    fn is_leaf(&self, e: ExprId) -> bool {
        matches!(
            self.arena().get(e),
            Node::Real(_) | Node::Int(_) | Node::Bool(_) | Node::Var(_) | Node::Time | Node::Local(_)
        )
    }

    /// The children that must be emitted before `e`; an error for nodes the JIT does not
    /// translate, found before any child is emitted.
    fn dependencies(&self, e: ExprId) -> Result<Vec<ExprId>, JitError> {
        let arena = self.arena();
        let deps = match arena.get(e) {
            Node::Str(_) => return Err(unsupported(e, "a string has no numeric value")),
            Node::Call(Callee::Builtin(b), args) => match b {
                Builtin::Der => Vec::new(),
                // The expression is the last argument of both `noEvent(e)` and `smooth(n, e)`.
                Builtin::NoEvent | Builtin::Smooth | Builtin::Pre => args.last().copied().into_iter().collect(),
                b if b.info().kind == BuiltinKind::Operator => {
                    return Err(unsupported(
                        e,
                        &format!("`{}` is not supported by the JIT yet", b.name()),
                    ));
                }
                b if matches!(b.info().eval, Eval::None) => {
                    return Err(unsupported(e, &format!("`{}` has no numeric implementation", b.name())));
                }
                _ => args.to_vec(),
            },
            Node::CallOutput(call, _) => vec![*call],
            _ => arena.children(e).collect(),
        };
        Ok(deps
            .into_iter()
            .filter(|c| !self.is_leaf(*c) && !self.memo.contains_key(c))
            .collect())
    }

    /// Translates `root` and returns its value. The builder stays in the block where the
    /// value is available.
    pub fn expr(&mut self, root: ExprId) -> Result<Value, JitError> {
        if self.is_leaf(root) {
            return self.operand(root);
        }
        let arena = self.arena();
        let mut stack = vec![Task::Visit(root)];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(e) => {
                    if self.memo.contains_key(&e) || self.is_leaf(e) {
                        continue;
                    }
                    if let Node::If(c, ..) = arena.get(e) {
                        stack.push(Task::IfCondition(e));
                        stack.extend(self.condition_operands(*c).into_iter().map(Task::Visit));
                    } else {
                        stack.push(Task::Emit(e));
                        stack.extend(self.dependencies(e)?.into_iter().map(Task::Visit));
                    }
                }
                Task::Emit(e) => {
                    if !self.memo.contains_key(&e) {
                        let v = self.emit(e)?;
                        self.remember(e, v);
                    }
                }
                Task::IfCondition(e) => {
                    let Node::If(c, then, _) = arena.get(e) else { continue };
                    let c = self.condition_value(*c)?;
                    let yes = self.b.create_block();
                    let otherwise = self.b.create_block();
                    let merge = self.b.create_block();
                    self.b.append_block_param(merge, types::F64);
                    self.b.ins().brif(c, yes, &[], otherwise, &[]);
                    self.b.switch_to_block(yes);
                    self.open_scope();
                    stack.push(Task::IfThen { e, otherwise, merge });
                    stack.push(Task::Visit(*then));
                }
                Task::IfThen { e, otherwise, merge } => {
                    let Node::If(_, then, other) = arena.get(e) else {
                        continue;
                    };
                    let v = self.operand(*then)?;
                    self.close_scope();
                    self.b.ins().jump(merge, &[BlockArg::Value(v)]);
                    self.b.switch_to_block(otherwise);
                    self.open_scope();
                    stack.push(Task::IfElse { e, merge });
                    stack.push(Task::Visit(*other));
                }
                Task::IfElse { e, merge } => {
                    let Node::If(_, _, other) = arena.get(e) else { continue };
                    let v = self.operand(*other)?;
                    self.close_scope();
                    self.b.ins().jump(merge, &[BlockArg::Value(v)]);
                    self.b.switch_to_block(merge);
                    let v = self.b.block_params(merge)[0];
                    self.remember(e, v);
                }
            }
        }
        self.operand(root)
    }

    /// What must be emitted before branching on condition `c`: the operands of a relation
    /// (compared directly, without materialising 0.0/1.0), or `c` itself.
    fn condition_operands(&self, c: ExprId) -> Vec<ExprId> {
        if self.memo.contains_key(&c) || self.is_leaf(c) {
            return Vec::new();
        }
        match self.arena().get(c) {
            Node::Binary(op, a, b) if op.is_relation() => [*a, *b].into_iter().filter(|x| !self.is_leaf(*x)).collect(),
            _ => vec![c],
        }
    }

    /// The truth (`i8`) of condition `c` once [`Self::condition_operands`] are emitted.
    fn condition_value(&mut self, c: ExprId) -> Result<Value, JitError> {
        if !self.memo.contains_key(&c)
            && let Node::Binary(op, a, b) = self.arena().get(c)
            && op.is_relation()
        {
            let (a, b) = (self.operand(*a)?, self.operand(*b)?);
            return Ok(self.b.ins().fcmp(float_cc(*op), a, b));
        }
        let v = self.operand(c)?;
        Ok(self.truth(v))
    }

    /// The truth of an expression used as a statement condition.
    pub fn condition(&mut self, c: ExprId) -> Result<Value, JitError> {
        for x in self.condition_operands(c) {
            self.expr(x)?;
        }
        self.condition_value(c)
    }

    /// Emits one composite node whose dependencies are emitted.
    fn emit(&mut self, e: ExprId) -> Result<Value, JitError> {
        let arena = self.arena();
        match arena.get(e) {
            Node::Unary(UnOp::Neg, a) => {
                let a = self.operand(*a)?;
                Ok(self.b.ins().fneg(a))
            }
            Node::Unary(UnOp::Not, a) => {
                let a = self.operand(*a)?;
                let zero = self.real(0.0);
                let c = self.b.ins().fcmp(FloatCC::Equal, a, zero);
                Ok(self.number(c))
            }
            Node::Binary(BinOp::Div, a, b) if self.arena().literal(*b).and_then(exact_reciprocal).is_some() => {
                // Dividing by a power of two is multiplying by its reciprocal, exactly: both
                // round the same real number once. A multiplication is several times cheaper.
                let reciprocal = self.arena().literal(*b).and_then(exact_reciprocal).unwrap_or(1.0);
                let a = self.operand(*a)?;
                let r = self.real(reciprocal);
                Ok(self.b.ins().fmul(a, r))
            }
            Node::Binary(BinOp::Pow, a, b) if self.arena().literal(*b) == Some(2.0) => {
                // A square is a multiplication, as in `symbolic::eval::binary`.
                let a = self.operand(*a)?;
                Ok(self.b.ins().fmul(a, a))
            }
            Node::Binary(op, a, b) => {
                let (a, b) = (self.operand(*a)?, self.operand(*b)?);
                self.binary(*op, a, b)
            }
            Node::Call(Callee::Builtin(b), args) => self.builtin(e, *b, args),
            Node::Call(Callee::User(f), args) => self.user_call(e, *f, args),
            Node::CallOutput(call, k) => {
                let (slot, inputs) = *self
                    .calls
                    .get(call)
                    .ok_or_else(|| unsupported(e, "an output of something that is not a user-function call"))?;
                let outputs = self.call_outputs(*call)?;
                if *k >= outputs {
                    return Err(unsupported(e, "an output the function does not have"));
                }
                let addr = self.b.ins().stack_addr(self.sh.ptr, slot, 0);
                let offset = (inputs + k) as i32 * 8;
                Ok(self.b.ins().load(types::F64, MemFlagsData::trusted(), addr, offset))
            }
            _ => Err(unsupported(e, "an expression the JIT does not translate")),
        }
    }

    /// One binary operator with the semantics of [`eqm_ir::symbolic::eval::binary`].
    fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Result<Value, JitError> {
        let ins = self.b.ins();
        Ok(match op {
            BinOp::Add => ins.fadd(a, b),
            BinOp::Sub => ins.fsub(a, b),
            BinOp::Mul => ins.fmul(a, b),
            BinOp::Div => ins.fdiv(a, b),
            BinOp::Pow => return self.call_host(host::pow(), &[a, b]),
            BinOp::And | BinOp::Or => {
                let (ta, tb) = (self.truth(a), self.truth(b));
                let c = if op == BinOp::And {
                    self.b.ins().band(ta, tb)
                } else {
                    self.b.ins().bor(ta, tb)
                };
                self.number(c)
            }
            relation => {
                let c = ins.fcmp(float_cc(relation), a, b);
                self.number(c)
            }
        })
    }

    fn builtin(&mut self, e: ExprId, b: Builtin, args: &[ExprId]) -> Result<Value, JitError> {
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

    fn call_outputs(&self, call: ExprId) -> Result<u32, JitError> {
        match self.arena().get(call) {
            Node::Call(Callee::User(f), _) => Ok(self.sh.function(*f)?.outputs),
            _ => Err(unsupported(call, "not a user-function call")),
        }
    }

    /// A call of a user function: inputs and outputs go through one stack slot per call site.
    fn user_call(&mut self, e: ExprId, f: FuncId, args: &[ExprId]) -> Result<Value, JitError> {
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
}

/// `1/c` when `c` is a power of two whose reciprocal is a normal number, so that `x / c` and
/// `x * (1/c)` are the same real number, rounded once: equal for every `x`.
fn exact_reciprocal(c: f64) -> Option<f64> {
    const MANTISSA: u64 = (1 << 52) - 1;
    let r = 1.0 / c;
    (c.is_normal() && c.to_bits() & MANTISSA == 0 && r.is_normal()).then_some(r)
}

fn float_cc(op: BinOp) -> FloatCC {
    match op {
        BinOp::Eq => FloatCC::Equal,
        BinOp::Ne => FloatCC::NotEqual,
        BinOp::Lt => FloatCC::LessThan,
        BinOp::Le => FloatCC::LessThanOrEqual,
        BinOp::Gt => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

fn unsupported(e: ExprId, what: &str) -> JitError {
    JitError::Unsupported {
        node: Some(e),
        what: what.to_string(),
    }
}
