//! Expressions to Cranelift IR, for segment functions and user-function bodies alike.
//!
//! The translator walks an expression iteratively (an explicit task stack, like the evaluator,
//! so that deep expressions cannot overflow the stack) and keeps a memo of the value of every
//! composite node it has emitted, because the arena is a DAG and shared subexpressions must be
//! computed once. Values computed inside a branch of an `if` do not dominate the code after the
//! `if`, so the memo is scoped: entering a branch opens a scope, and leaving it forgets whatever
//! the branch added. Literals are not memoised but emitted at each use, which keeps their live
//! ranges short. Leaves (variables, time, function locals) are read through [`Leaves`].
//!
//! Input: expression nodes of the arena, in a Cranelift function being built. Output: the
//! Cranelift value of each, computed with the evaluator's semantics bit for bit, or a
//! [`JitError`] for a node the JIT does not translate (found before any of its code is
//! emitted). This module walks expressions and emits operators; reading and writing slots is in
//! `slots`, the status block (roots, failures, the iteration budget, call depth) in `checks`,
//! built-in and user-function calls in `calls`. It deliberately translates no statement (that is
//! `function`) and decides nothing about which assignments a function holds (that is
//! `segment`).

mod calls;
mod checks;
mod slots;

pub use slots::SliceLengths;
pub(crate) use slots::{Leaves, SegmentLeaves};

use super::JitError;
use super::host;
use super::shared::Shared;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlot, Value, types};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::Module;
use eqm_ir::builtins::{Builtin, BuiltinKind, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp};

/// The most Cranelift instructions one function may hold; see `Translator::emit`.
pub const MAX_INSTRUCTIONS_PER_FUNCTION: usize = 1_000_000;

/// An entry of the scope log: what to forget when a branch scope closes.
enum Undo {
    Expr(ExprId),
    Call(ExprId),
    /// A slot first loaded inside the branch.
    Slot(eqm_ir::slot::Slot),
}

enum Task {
    Visit(ExprId),
    Emit(ExprId),
    /// The condition's operands are known: branch on it. `shared` is the merge block of the
    /// enclosing `if` when this `if` is the whole value of one of its branches (see
    /// [`Translator::branch`]); otherwise the `if` gets a merge block of its own.
    IfCondition {
        e: ExprId,
        shared: Option<Block>,
    },
    /// The `then` value is known (or, with `then_jumped`, the `then` branch already ended in a
    /// jump to `merge`): close its scope and start the `else` branch.
    IfThen {
        e: ExprId,
        otherwise: Block,
        merge: Block,
        shared: bool,
        then_jumped: bool,
        else_jumped: bool,
    },
    /// The `else` value is known (or the branch already jumped to `merge`): close its scope
    /// and continue at the merge block, unless the merge block belongs to an enclosing `if`.
    IfElse {
        e: ExprId,
        merge: Block,
        shared: bool,
        else_jumped: bool,
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
    /// The status block (`*mut u64`, see `status`).
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

    /// Finishes the function (all blocks must be terminated and sealed).
    pub fn finish(self) {
        let config = self.sh.module.target_config();
        self.b.finalize(config);
    }

    pub(crate) fn arena(&self) -> &'a ExprArena {
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
                Undo::Slot(slot) => {
                    if let Leaves::Segment(seg) = &mut self.leaves {
                        seg.values.remove(&slot);
                    }
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
            Node::Binary(BinOp::Add, ..) if let Some((a, b)) = self.subtraction(e) => vec![a, b],
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
                    if let Node::If(..) = arena.get(e) {
                        self.push_if(&mut stack, e, None);
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
                Task::IfCondition { e, shared } => {
                    let Node::If(c, then, other) = arena.get(e) else {
                        continue;
                    };
                    let c = self.condition_value(*c)?;
                    let yes = self.b.create_block();
                    let otherwise = self.b.create_block();
                    let merge = shared.unwrap_or_else(|| {
                        let merge = self.b.create_block();
                        self.b.append_block_param(merge, types::F64);
                        merge
                    });
                    let then_jumped = self.is_tail_if(*then);
                    let else_jumped = self.is_tail_if(*other);
                    if else_jumped && !then_jumped {
                        // The chain goes on in the `else` branch: name it first (see
                        // `Self::is_tail_if`).
                        let not = self.b.ins().icmp_imm_u(IntCC::Equal, c, 0);
                        self.b.ins().brif(not, otherwise, &[], yes, &[]);
                    } else {
                        self.b.ins().brif(c, yes, &[], otherwise, &[]);
                    }
                    self.b.switch_to_block(yes);
                    self.open_scope();
                    stack.push(Task::IfThen {
                        e,
                        otherwise,
                        merge,
                        shared: shared.is_some(),
                        then_jumped,
                        else_jumped,
                    });
                    self.branch(&mut stack, *then, merge, then_jumped);
                }
                Task::IfThen {
                    e,
                    otherwise,
                    merge,
                    shared,
                    then_jumped,
                    else_jumped,
                } => {
                    let Node::If(_, then, other) = arena.get(e) else {
                        continue;
                    };
                    if !then_jumped {
                        let v = self.operand(*then)?;
                        self.b.ins().jump(merge, &[BlockArg::Value(v)]);
                    }
                    self.close_scope();
                    self.b.switch_to_block(otherwise);
                    self.open_scope();
                    stack.push(Task::IfElse {
                        e,
                        merge,
                        shared,
                        else_jumped,
                    });
                    self.branch(&mut stack, *other, merge, else_jumped);
                }
                Task::IfElse {
                    e,
                    merge,
                    shared,
                    else_jumped,
                } => {
                    let Node::If(_, _, other) = arena.get(e) else { continue };
                    if !else_jumped {
                        let v = self.operand(*other)?;
                        self.b.ins().jump(merge, &[BlockArg::Value(v)]);
                    }
                    self.close_scope();
                    if !shared {
                        self.b.switch_to_block(merge);
                        let v = self.b.block_params(merge)[0];
                        self.remember(e, v);
                    }
                }
            }
        }
        self.operand(root)
    }

    /// Schedules `if` node `e`: its condition's operands, then the branch. With `shared`, the
    /// `if` is the whole value of a branch of an enclosing `if` and its branches jump straight
    /// to that `if`'s merge block.
    fn push_if(&self, stack: &mut Vec<Task>, e: ExprId, shared: Option<Block>) {
        let Node::If(c, ..) = self.arena().get(e) else { return };
        stack.push(Task::IfCondition { e, shared });
        stack.extend(self.condition_operands(*c).into_iter().map(Task::Visit));
    }

    /// Whether branch value `e` is an `if` still to be emitted, which then shares the merge
    /// block of the `if` whose branch it is. An `elseif` chain, or `if` nested in `if`, of n
    /// levels thus makes one merge block instead of n merge blocks that each only jump to the
    /// next: Cranelift resolves such a chain of forwarding jumps label by label, in time n^2.
    /// The inner `if` gets no value of its own, which nothing needs: it is the last thing its
    /// branch computes, and the branch's values are forgotten when the branch ends.
    ///
    /// The branch that goes on with the chain is the first target of the conditional jump.
    /// The register allocator finds the merge block's dominator by walking from each
    /// predecessor towards the previous one's, in the order the blocks are laid out; Cranelift
    /// lays out the second target's subtree first, so the predecessors come deepest first and
    /// each walk is a few steps. The other order makes each walk go up the whole chain, in
    /// time n^2.
    fn is_tail_if(&self, e: ExprId) -> bool {
        matches!(self.arena().get(e), Node::If(..)) && !self.memo.contains_key(&e)
    }

    /// Schedules the value of a branch whose merge block is `merge`: a tail `if` (see
    /// [`Self::is_tail_if`]) branches to `merge` itself, any other value is visited and the
    /// branch's end task jumps to `merge` with it.
    fn branch(&self, stack: &mut Vec<Task>, value: ExprId, merge: Block, tail: bool) {
        if tail {
            self.push_if(stack, value, Some(merge));
        } else {
            stack.push(Task::Visit(value));
        }
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
        // One function past this size would take gigabytes to build and minutes to compile
        // (an algorithm whose loops over thousands of elements are written out): its code is
        // left to the interpreter instead.
        if self.b.func.dfg.num_insts() > MAX_INSTRUCTIONS_PER_FUNCTION {
            return Err(JitError::Unsupported {
                node: Some(e),
                what: format!("a function of more than {MAX_INSTRUCTIONS_PER_FUNCTION} instructions"),
            });
        }
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
            Node::Binary(BinOp::Add, ..) if let Some((a, b)) = self.subtraction(e) => {
                let (a, b) = (self.operand(a)?, self.operand(b)?);
                Ok(self.b.ins().fsub(a, b))
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
            Node::Call(Callee::External(k), args) => self.external_call(e, *k, args),
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

    /// `a + b` as the subtraction `(minuend, subtrahend)` when an operand is a negation `-y`
    /// not computed yet: `a + (-y)` and `(-y) + a` are `a - y`, which IEEE 754 defines as that
    /// very sum, rounded once, so the value is the same; the negation is never computed (on
    /// x86 it costs three instructions: loading the sign mask, moving it, the `xor`). The
    /// simplifier writes every difference as such a sum. A negation computed already (shared
    /// with another expression) is added as it is. Asked twice for one node, before its
    /// operands are emitted and when it is emitted, the answer differs only when the second
    /// time finds the negation computed by its other operand; then both operands are
    /// computed and the plain sum is emitted.
    fn subtraction(&self, e: ExprId) -> Option<(ExprId, ExprId)> {
        let arena = self.arena();
        let Node::Binary(BinOp::Add, a, b) = arena.get(e) else {
            return None;
        };
        let negated = |x: ExprId| match arena.get(x) {
            Node::Unary(UnOp::Neg, y) if !self.memo.contains_key(&x) => Some(*y),
            _ => None,
        };
        match (negated(*a), negated(*b)) {
            (Some(y), _) => Some((*b, y)),
            (None, Some(y)) => Some((*a, y)),
            (None, None) => None,
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
