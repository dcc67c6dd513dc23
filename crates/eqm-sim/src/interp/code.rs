//! The register code of the interpreter and its compiler: every expression of a program becomes
//! a short sequence of operations on registers, each node once, shared subexpressions computed
//! once per evaluation, `if` evaluating only the branch it takes, statements as jumps.
//!
//! Input: an [`ExecProgram`]'s expressions, statements and user functions. Output: the
//! operations and the [`Code`] handles of the roots. The code is run by `machine`; nothing here
//! evaluates anything.

use super::*;

/// One compiled expression: a constant or a variable read directly, or its first operation and
/// the register that holds its value. Most expressions of a large model are leaves (start
/// values, outputs that copy a variable, constant partial derivatives); keeping them out of the
/// operations saves two operations each, a third of the code of a long chain.
#[derive(Debug, Clone, Copy)]
pub(super) enum Code {
    Const(f64),
    Load(Slot),
    Run { start: u32, result: u32 },
}

/// Several expressions compiled as one unit ([`Compiler::shared_expressions`]): running the
/// code from `start` leaves each value where its [`SharedValue`] says.
#[derive(Debug, Clone)]
pub(super) struct Shared {
    pub(super) start: u32,
    pub(super) values: Vec<SharedValue>,
}

/// Where one value of a [`Shared`] unit is after its code ran.
#[derive(Debug, Clone, Copy)]
pub(super) enum SharedValue {
    Const(f64),
    Load(Slot),
    Register(u32),
}

/// One operation of the register code. Registers are relative to the current frame.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Const {
        dst: u32,
        value: f64,
    },
    Load {
        dst: u32,
        slot: Slot,
    },
    Store {
        slot: Slot,
        src: u32,
    },
    Move {
        dst: u32,
        src: u32,
    },
    Unary {
        op: UnOp,
        dst: u32,
        a: u32,
    },
    Binary {
        op: BinOp,
        dst: u32,
        a: u32,
        b: u32,
    },
    Call1 {
        f: fn(f64) -> f64,
        dst: u32,
        a: u32,
    },
    Call2 {
        f: fn(f64, f64) -> f64,
        dst: u32,
        a: u32,
        b: u32,
    },
    Jump {
        target: u32,
    },
    JumpIfFalse {
        cond: u32,
        target: u32,
    },
    /// Leaves a `for` loop when `index` has passed `stop` in the direction of `step`.
    ForTest {
        index: u32,
        step: u32,
        stop: u32,
        exit: u32,
        span: Span,
    },
    /// Calls a user function with the argument registers; its outputs land in `out..`.
    Call {
        func: u32,
        args: Box<[u32]>,
        out: u32,
    },
    /// Calls a linked external C function (boxed: its symbols are several times the size of
    /// every other instruction, and a model's code holds one instruction per operation).
    External(Box<ExternalCall>),
    Assert {
        cond: u32,
        message: u32,
        span: Span,
    },
    Terminate {
        message: u32,
        span: Span,
    },
    /// `Streams.print` in a function: the machine renders the message with the values it has
    /// now and keeps the line until the caller takes it.
    Print {
        message: u32,
    },
    /// Ends the current function, or the evaluation when no function is running.
    Return,
}

// A model's register code holds one instruction per operation of every equation: the
// instruction's size is most of the interpreter's memory on a large model.
const _: () = assert!(std::mem::size_of::<Op>() <= 32);

/// A call of a linked external C function with the argument registers (as many as it reads,
/// checked when the call is compiled); its result lands in `dst`.
#[derive(Debug, Clone)]
pub(super) struct ExternalCall {
    pub(super) symbol: eqm_ir::external::LinkedSymbol,
    /// For the constructor of an external object: its destructor (the call then goes through
    /// the run's object store).
    pub(super) destructor: Option<eqm_ir::external::LinkedSymbol>,
    /// The function's index among the program's external functions, for messages.
    pub(super) external: u32,
    pub(super) args: Box<[u32]>,
    pub(super) dst: u32,
}

/// A compiled user function.
#[derive(Debug, Clone, Copy)]
pub(super) struct FunctionCode {
    pub(super) start: u32,
    /// Registers of one frame: the function's slots, then temporaries.
    pub(super) frame: u32,
    pub(super) inputs: u32,
    pub(super) outputs: u32,
    pub(super) slots: u32,
}

/// Pending work of the iterative expression compiler.
#[derive(Debug, Clone, Copy)]
pub(super) enum Task {
    Visit(ExprId),
    Emit(ExprId),
    /// The condition of `if` is compiled: branch on it and compile the `then` branch.
    IfCond {
        e: ExprId,
    },
    /// The `then` branch is compiled: jump over the `else` branch and compile it.
    IfThen {
        e: ExprId,
        jump: usize,
        dst: u32,
        mark: usize,
    },
    IfElse {
        e: ExprId,
        jump: usize,
        dst: u32,
        mark: usize,
    },
}

/// Compiles expressions and statements into register code.
pub(super) struct Compiler<'a> {
    pub(super) program: &'a ExecProgram,
    pub(super) arena: &'a ExprArena,
    pub(super) ops: Vec<Op>,
    /// Messages of assertions and `terminate`, each with the registers holding its values.
    pub(super) messages: Vec<(eqm_ir::flat::Message, Vec<u32>)>,
    /// The register of each node compiled in the current expression, with an undo log so that
    /// nodes compiled inside a branch of `if` are forgotten after it (they may not have run).
    pub(super) memo: FxHashMap<ExprId, u32>,
    pub(super) undo: Vec<ExprId>,
    pub(super) tasks: Vec<Task>,
    /// Registers below `floor` are locals and loop bounds; temporaries start there.
    pub(super) floor: u32,
    pub(super) next: u32,
    pub(super) max: u32,
    /// The number of local slots of the function being compiled (0 outside functions).
    pub(super) locals: Option<u32>,
    /// For each enclosing loop, the jumps that `break` must patch.
    pub(super) breaks: Vec<Vec<usize>>,
    pub(super) returns: Vec<usize>,
}

pub(super) type CompileResult<T> = Result<T, String>;

impl<'a> Compiler<'a> {
    pub(super) fn new(program: &'a ExecProgram) -> Compiler<'a> {
        Compiler {
            program,
            arena: program.exprs(),
            ops: Vec::new(),
            messages: Vec::new(),
            memo: FxHashMap::default(),
            undo: Vec::new(),
            tasks: Vec::new(),
            floor: 0,
            next: 0,
            max: 0,
            locals: None,
            breaks: Vec::new(),
            returns: Vec::new(),
        }
    }

    pub(super) fn alloc(&mut self, n: u32) -> u32 {
        let r = self.next;
        self.next += n;
        self.max = self.max.max(self.next);
        r
    }

    pub(super) fn emit(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    pub(super) fn here(&self) -> u32 {
        self.ops.len() as u32
    }

    pub(super) fn patch(&mut self, at: usize, to: u32) {
        match &mut self.ops[at] {
            Op::Jump { target } | Op::JumpIfFalse { target, .. } => *target = to,
            Op::ForTest { exit, .. } => *exit = to,
            _ => {}
        }
    }

    pub(super) fn remember(&mut self, e: ExprId, r: u32) {
        self.memo.insert(e, r);
        self.undo.push(e);
    }

    pub(super) fn forget_since(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some(e) = self.undo.pop() {
                self.memo.remove(&e);
            }
        }
    }

    pub(super) fn reg(&self, e: ExprId) -> CompileResult<u32> {
        self.memo
            .get(&e)
            .copied()
            .ok_or_else(|| format!("expression #{} was not compiled before its use", e.0))
    }

    pub(super) fn slot(&self, v: eqm_ir::expr::VarId) -> CompileResult<Slot> {
        self.program
            .slot_of(v)
            .ok_or_else(|| format!("`{}` has no place at run time", self.program.symbols().get(v).name))
    }

    /// A model-level expression as a unit of its own: a constant or a variable read directly,
    /// otherwise its operations, ending in `Return`.
    pub(super) fn expression(&mut self, e: ExprId) -> CompileResult<Code> {
        if let Some(value) = self.arena.literal(e) {
            return Ok(Code::Const(value));
        }
        match self.arena.get(e) {
            Node::Var(v) => return Ok(Code::Load(self.slot(*v)?)),
            Node::Time => return Ok(Code::Load(Slot::Time)),
            _ => {}
        }
        self.floor = 0;
        self.locals = None;
        let start = self.here();
        let result = self.root(e)?;
        self.emit(Op::Return);
        Ok(Code::Run { start, result })
    }

    /// Model-level expressions as one unit that computes each node they share once (the
    /// partial derivatives of a row share the derivative of its outer function, so compiled
    /// one by one, n^2 partials of rows of n terms would take n^3 operations). Their values stay
    /// in registers until the next evaluation; see [`Shared`]. Each node is evaluated by the same
    /// operation as in a unit of its own, so the values are the same bit for bit.
    pub(super) fn shared_expressions(&mut self, roots: &[ExprId]) -> CompileResult<Shared> {
        self.floor = 0;
        self.locals = None;
        self.forget_since(0);
        self.next = self.floor;
        let start = self.here();
        let mut values = Vec::with_capacity(roots.len());
        for &e in roots {
            let value = match (self.arena.literal(e), self.arena.get(e)) {
                (Some(value), _) => SharedValue::Const(value),
                (None, Node::Var(v)) => SharedValue::Load(self.slot(*v)?),
                (None, Node::Time) => SharedValue::Load(Slot::Time),
                _ => SharedValue::Register(self.walk(e)?),
            };
            values.push(value);
        }
        self.emit(Op::Return);
        Ok(Shared { start, values })
    }

    /// Compiles `root` into the current code and returns its register. Registers from `floor`
    /// on are reused by the next root: values do not live from one root to the next.
    pub(super) fn root(&mut self, root: ExprId) -> CompileResult<u32> {
        // Only the entries of the previous root are removed: clearing the whole table would cost
        // its capacity, which one huge expression can make large for every small one after it.
        self.forget_since(0);
        self.next = self.floor;
        self.walk(root)
    }

    /// Compiles `root` after what the current root has compiled, reusing the registers of the
    /// nodes it already computed, and returns its register.
    fn walk(&mut self, root: ExprId) -> CompileResult<u32> {
        self.tasks.clear();
        self.tasks.push(Task::Visit(root));
        while let Some(task) = self.tasks.pop() {
            match task {
                Task::Visit(e) => {
                    if !self.memo.contains_key(&e) {
                        self.visit(e)?;
                    }
                }
                Task::Emit(e) => self.finish(e)?,
                Task::IfCond { e } => {
                    let Node::If(c, a, _) = *self.arena.get(e) else {
                        return Err("if expected".to_string());
                    };
                    let cond = self.reg(c)?;
                    let dst = self.alloc(1);
                    let jump = self.emit(Op::JumpIfFalse { cond, target: 0 });
                    let mark = self.undo.len();
                    self.tasks.push(Task::IfThen { e, jump, dst, mark });
                    self.tasks.push(Task::Visit(a));
                }
                Task::IfThen { e, jump, dst, mark } => {
                    let Node::If(_, a, b) = *self.arena.get(e) else {
                        return Err("if expected".to_string());
                    };
                    let src = self.reg(a)?;
                    self.emit(Op::Move { dst, src });
                    self.forget_since(mark);
                    let over = self.emit(Op::Jump { target: 0 });
                    let to = self.here();
                    self.patch(jump, to);
                    let mark = self.undo.len();
                    self.tasks.push(Task::IfElse {
                        e,
                        jump: over,
                        dst,
                        mark,
                    });
                    self.tasks.push(Task::Visit(b));
                }
                Task::IfElse { e, jump, dst, mark } => {
                    let Node::If(_, _, b) = *self.arena.get(e) else {
                        return Err("if expected".to_string());
                    };
                    let src = self.reg(b)?;
                    self.emit(Op::Move { dst, src });
                    self.forget_since(mark);
                    let to = self.here();
                    self.patch(jump, to);
                    self.remember(e, dst);
                }
            }
        }
        self.reg(root)
    }

    /// First visit of a node: leaves are emitted now, inner nodes after their children.
    pub(super) fn visit(&mut self, e: ExprId) -> CompileResult<()> {
        let constant = |c: &mut Self, value: f64| {
            let dst = c.alloc(1);
            c.emit(Op::Const { dst, value });
            c.remember(e, dst);
        };
        let load = |c: &mut Self, slot: Slot| {
            let dst = c.alloc(1);
            c.emit(Op::Load { dst, slot });
            c.remember(e, dst);
        };
        match self.arena.get(e) {
            Node::Real(bits) => constant(self, f64::from_bits(*bits)),
            Node::Int(v) => constant(self, *v as f64),
            Node::Bool(b) => constant(self, if *b { 1.0 } else { 0.0 }),
            Node::Str(_) => return Err("a String has no numeric value".to_string()),
            Node::Var(v) => {
                let slot = self.slot(*v)?;
                load(self, slot);
            }
            Node::Local(i) => match self.locals {
                Some(n) if *i < n => self.remember(e, *i),
                _ => return Err("a function local outside its function".to_string()),
            },
            Node::Time => load(self, Slot::Time),
            Node::Unary(_, a) => {
                let a = *a;
                self.tasks.push(Task::Emit(e));
                self.tasks.push(Task::Visit(a));
            }
            Node::Binary(_, a, b) => {
                let (a, b) = (*a, *b);
                self.tasks.push(Task::Emit(e));
                self.tasks.push(Task::Visit(b));
                self.tasks.push(Task::Visit(a));
            }
            Node::If(c, _, _) => {
                let c = *c;
                self.tasks.push(Task::IfCond { e });
                self.tasks.push(Task::Visit(c));
            }
            Node::Call(Callee::Builtin(b), args) => match b {
                Builtin::Der => {
                    let slot = match args.first().map(|a| self.arena.get(*a)) {
                        Some(Node::Var(v)) => match self.slot(*v)? {
                            Slot::State(i) => Slot::Der(i),
                            _ => return Err("der(...) of something that is not a state".to_string()),
                        },
                        _ => return Err("der(...) of something that is not a state".to_string()),
                    };
                    load(self, slot);
                }
                Builtin::Pre => {
                    // Without events a discrete variable keeps its value: pre(v) is v.
                    let slot = match args.first().map(|a| self.arena.get(*a)) {
                        Some(Node::Var(v)) => self.slot(*v)?,
                        _ => return Err("pre(...) of something that is not a variable".to_string()),
                    };
                    load(self, slot);
                }
                // Without events these are false between events, which is always.
                Builtin::Edge | Builtin::Change | Builtin::Initial | Builtin::Terminal | Builtin::Sample => {
                    constant(self, 0.0);
                }
                Builtin::NoEvent | Builtin::Smooth => {
                    let last = args.last().copied().ok_or("noEvent or smooth without an argument")?;
                    self.tasks.push(Task::Emit(e));
                    self.tasks.push(Task::Visit(last));
                }
                _ => {
                    let args: Vec<ExprId> = args.to_vec();
                    self.tasks.push(Task::Emit(e));
                    self.tasks.extend(args.iter().rev().map(|a| Task::Visit(*a)));
                }
            },
            Node::Call(Callee::User(_) | Callee::External(_), args) => {
                let args: Vec<ExprId> = args.to_vec();
                self.tasks.push(Task::Emit(e));
                self.tasks.extend(args.iter().rev().map(|a| Task::Visit(*a)));
            }
            Node::CallOutput(call, _) => {
                let call = *call;
                self.tasks.push(Task::Emit(e));
                self.tasks.push(Task::Visit(call));
            }
        }
        Ok(())
    }

    /// Emits an inner node whose children are compiled.
    pub(super) fn finish(&mut self, e: ExprId) -> CompileResult<()> {
        match self.arena.get(e) {
            Node::Unary(op, a) => {
                let (op, a) = (*op, self.reg(*a)?);
                let dst = self.alloc(1);
                self.emit(Op::Unary { op, dst, a });
                self.remember(e, dst);
            }
            Node::Binary(op, a, b) => {
                let (op, a, b) = (*op, self.reg(*a)?, self.reg(*b)?);
                let dst = self.alloc(1);
                self.emit(Op::Binary { op, dst, a, b });
                self.remember(e, dst);
            }
            Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), args) => {
                let last = args.last().copied().ok_or("noEvent or smooth without an argument")?;
                let r = self.reg(last)?;
                self.remember(e, r);
            }
            Node::Call(Callee::Builtin(b), args) => {
                let op = match (b.info().eval, &args[..]) {
                    (Eval::Unary(f), [a]) => {
                        let a = self.reg(*a)?;
                        let dst = self.alloc(1);
                        Op::Call1 { f, dst, a }
                    }
                    (Eval::Binary(f), [a, c]) => {
                        let (a, b) = (self.reg(*a)?, self.reg(*c)?);
                        let dst = self.alloc(1);
                        Op::Call2 { f, dst, a, b }
                    }
                    _ => return Err(format!("`{}` cannot be evaluated numerically here", b.name())),
                };
                let dst = match op {
                    Op::Call1 { dst, .. } | Op::Call2 { dst, .. } => dst,
                    _ => 0,
                };
                self.emit(op);
                self.remember(e, dst);
            }
            Node::Call(Callee::User(f), args) => {
                let function = self
                    .program
                    .functions()
                    .get(f.0 as usize)
                    .ok_or("a call of an unknown function")?;
                if args.len() != function.inputs as usize || function.outputs == 0 {
                    return Err(format!(
                        "a call of `{}` that does not fit its declaration",
                        function.name
                    ));
                }
                let regs: Vec<u32> = args.iter().map(|a| self.reg(*a)).collect::<CompileResult<_>>()?;
                let out = self.alloc(function.outputs);
                self.emit(Op::Call {
                    func: f.0,
                    args: regs.into_boxed_slice(),
                    out,
                });
                self.remember(e, out);
            }
            Node::Call(Callee::External(k), args) => {
                let external = self
                    .program
                    .externals()
                    .get(*k as usize)
                    .ok_or("a call of an unknown external function")?;
                if args.len() != external.symbol.arity() {
                    return Err(format!(
                        "a call of the external function `{}` that does not fit it",
                        external.c_function
                    ));
                }
                let symbol = external.symbol.clone();
                let destructor = external.destructor.clone();
                let regs: Vec<u32> = args.iter().map(|a| self.reg(*a)).collect::<CompileResult<_>>()?;
                let dst = self.alloc(1);
                self.emit(Op::External(Box::new(ExternalCall {
                    symbol,
                    destructor,
                    external: *k,
                    args: regs.into_boxed_slice(),
                    dst,
                })));
                self.remember(e, dst);
            }
            Node::CallOutput(call, k) => {
                let r = self.reg(*call)? + *k;
                self.remember(e, r);
            }
            _ => return Err("an unexpected expression".to_string()),
        }
        Ok(())
    }

    /// A user function's body: its slots are the first registers of its frame.
    pub(super) fn function(&mut self, f: &eqm_ir::flat::Function) -> CompileResult<FunctionCode> {
        let slots = f.slots.len() as u32;
        self.locals = Some(slots);
        self.floor = slots;
        self.next = slots;
        self.max = slots;
        self.returns.clear();
        let start = self.here();
        self.statements(&f.body)?;
        let end = self.here();
        for at in std::mem::take(&mut self.returns) {
            self.patch(at, end);
        }
        self.emit(Op::Return);
        Ok(FunctionCode {
            start,
            frame: self.max,
            inputs: f.inputs,
            outputs: f.outputs,
            slots,
        })
    }

    /// A model algorithm section as a unit of its own.
    pub(super) fn algorithm(&mut self, statements: &[Statement]) -> CompileResult<u32> {
        self.locals = None;
        self.floor = 0;
        self.next = 0;
        self.returns.clear();
        let start = self.here();
        self.statements(statements)?;
        let end = self.here();
        for at in std::mem::take(&mut self.returns) {
            self.patch(at, end);
        }
        self.emit(Op::Return);
        Ok(start)
    }

    /// The statements in order; the assignments of the outputs of one call (`(a, b) := f(x)`)
    /// run the call once.
    pub(super) fn statements(&mut self, statements: &[Statement]) -> CompileResult<()> {
        use eqm_ir::shared_call::Segment;
        for segment in eqm_ir::shared_call::segments(self.arena, statements) {
            match segment {
                Segment::SharedCall(call, run) => self.shared_call(call, run)?,
                Segment::One(statement) => self.statement(statement)?,
            }
        }
        Ok(())
    }

    /// Assignments that each take an output of `call`: the call computed once, its output
    /// registers then stored, while no other expression is compiled in between.
    fn shared_call(&mut self, call: ExprId, assignments: &[Statement]) -> CompileResult<()> {
        self.root(call)?;
        for s in assignments {
            let Statement::Assign { target, value, .. } = s else {
                return Err("an assignment expected".to_string());
            };
            let src = self.walk(*value)?;
            self.store(target, src)?;
        }
        Ok(())
    }

    pub(super) fn local(&self, k: u32) -> CompileResult<u32> {
        match self.locals {
            Some(n) if k < n => Ok(k),
            _ => Err("an assignment to a function local outside its function".to_string()),
        }
    }

    pub(super) fn statement(&mut self, s: &Statement) -> CompileResult<()> {
        match s {
            Statement::Assign { target, value, .. } => self.assignment(target, *value)?,
            Statement::If {
                branches, else_branch, ..
            } => self.if_statement(branches, else_branch)?,
            Statement::Unrolled { iterations, .. } => {
                self.breaks.push(Vec::new());
                for body in iterations {
                    self.statements(body)?;
                }
                self.end_loop();
            }
            Statement::While { condition, body, .. } => {
                let head = self.here();
                let cond = self.root(*condition)?;
                let exit = self.emit(Op::JumpIfFalse { cond, target: 0 });
                self.breaks.push(vec![exit]);
                self.statements(body)?;
                self.emit(Op::Jump { target: head });
                self.end_loop();
            }
            Statement::For {
                index,
                start,
                step,
                stop,
                body,
                span,
            } => self.for_loop(*index, (*start, *step, *stop), body, *span)?,
            Statement::Assert {
                condition,
                message,
                span,
            } => {
                let kept = self.message_values(message)?;
                let cond = self.root(*condition)?;
                self.floor -= kept.len() as u32;
                let message = self.message(message, kept);
                self.emit(Op::Assert {
                    cond,
                    message,
                    span: *span,
                });
            }
            Statement::Terminate { message, span } => {
                let kept = self.message_values(message)?;
                self.floor -= kept.len() as u32;
                let message = self.message(message, kept);
                self.emit(Op::Terminate { message, span: *span });
            }
            Statement::Print { message, .. } => {
                let kept = self.message_values(message)?;
                self.floor -= kept.len() as u32;
                let message = self.message(message, kept);
                self.emit(Op::Print { message });
            }
            Statement::Call { function: f, args, .. } => {
                let function = self
                    .program
                    .functions()
                    .get(f.0 as usize)
                    .ok_or("a call of an unknown function")?;
                if args.len() != function.inputs as usize {
                    return Err(format!(
                        "a call of `{}` that does not fit its declaration",
                        function.name
                    ));
                }
                let outputs = function.outputs;
                let kept = self.kept_values(args.iter().copied())?;
                // The outputs land above the arguments and are never read.
                self.next = self.floor;
                let out = self.alloc(outputs);
                self.floor -= kept.len() as u32;
                self.emit(Op::Call {
                    func: f.0,
                    args: kept.into_boxed_slice(),
                    out,
                });
            }
            Statement::Break { .. } => {
                let at = self.emit(Op::Jump { target: 0 });
                self.breaks.last_mut().ok_or("`break` outside a loop")?.push(at);
            }
            Statement::Return { .. } => {
                let at = self.emit(Op::Jump { target: 0 });
                self.returns.push(at);
            }
        }
        Ok(())
    }

    /// An assignment of `value` to a local or to a variable computed here.
    fn assignment(&mut self, target: &Place, value: ExprId) -> CompileResult<()> {
        let src = self.root(value)?;
        self.store(target, src)
    }

    /// Register `src` into `target`.
    fn store(&mut self, target: &Place, src: u32) -> CompileResult<()> {
        match target {
            Place::Local(k) => {
                let dst = self.local(*k)?;
                self.emit(Op::Move { dst, src });
            }
            Place::Var(v) => {
                let slot = self.slot(*v)?;
                if !slot.is_writable() {
                    return Err("an assignment to a variable that is not computed here".to_string());
                }
                self.emit(Op::Store { slot, src });
            }
        }
        Ok(())
    }

    /// An `if` statement: each branch's test skips to the next one, each body jumps to the end.
    fn if_statement(&mut self, branches: &[(ExprId, Vec<Statement>)], else_branch: &[Statement]) -> CompileResult<()> {
        let mut ends = Vec::with_capacity(branches.len());
        for (c, body) in branches {
            let cond = self.root(*c)?;
            let skip = self.emit(Op::JumpIfFalse { cond, target: 0 });
            self.statements(body)?;
            ends.push(self.emit(Op::Jump { target: 0 }));
            let to = self.here();
            self.patch(skip, to);
        }
        self.statements(else_branch)?;
        let to = self.here();
        for at in ends {
            self.patch(at, to);
        }
        Ok(())
    }

    /// A `for` loop over `start:step:stop` with the local `index`.
    fn for_loop(
        &mut self,
        index: u32,
        (start, step, stop): (ExprId, ExprId, ExprId),
        body: &[Statement],
        span: Span,
    ) -> CompileResult<()> {
        // The range is evaluated once; its step and end live in registers reserved
        // above the locals while the body runs.
        let index = self.local(index)?;
        let first = self.root(start)?;
        self.emit(Op::Move { dst: index, src: first });
        let step_value = self.root(step)?;
        let step_reg = self.floor;
        self.emit(Op::Move {
            dst: step_reg,
            src: step_value,
        });
        self.floor += 1;
        let stop_value = self.root(stop)?;
        let stop_reg = self.floor;
        self.emit(Op::Move {
            dst: stop_reg,
            src: stop_value,
        });
        self.floor += 1;
        self.max = self.max.max(self.floor);
        let head = self.here();
        let test = self.emit(Op::ForTest {
            index,
            step: step_reg,
            stop: stop_reg,
            exit: 0,
            span,
        });
        self.breaks.push(vec![test]);
        self.statements(body)?;
        self.emit(Op::Binary {
            op: BinOp::Add,
            dst: index,
            a: index,
            b: step_reg,
        });
        self.emit(Op::Jump { target: head });
        self.end_loop();
        self.floor -= 2;
        Ok(())
    }

    /// Patches the exits of the innermost loop to the current position.
    pub(super) fn end_loop(&mut self) {
        let to = self.here();
        for at in self.breaks.pop().unwrap_or_default() {
            self.patch(at, to);
        }
    }

    /// The message of an assertion or `terminate` with the registers holding its values.
    pub(super) fn message(&mut self, message: &eqm_ir::flat::Message, values: Vec<u32>) -> u32 {
        self.messages.push((message.clone(), values));
        self.messages.len() as u32 - 1
    }

    /// Computes the values a message shows into registers reserved above the locals (each root
    /// reuses the registers from the floor up, so they are kept below it). The caller lowers
    /// the floor again after computing the statement's condition.
    fn message_values(&mut self, message: &eqm_ir::flat::Message) -> CompileResult<Vec<u32>> {
        let values: Vec<ExprId> = message.exprs().collect();
        self.kept_values(values)
    }

    /// The values of `exprs`, each computed and kept in a register of its own above the floor
    /// (which rises by their count), so that all of them are at hand together.
    fn kept_values(&mut self, exprs: impl IntoIterator<Item = ExprId>) -> CompileResult<Vec<u32>> {
        let mut kept = Vec::new();
        for e in exprs {
            let value = self.root(e)?;
            let keep = self.floor;
            self.emit(Op::Move { dst: keep, src: value });
            self.floor += 1;
            self.max = self.max.max(self.floor);
            kept.push(keep);
        }
        Ok(kept)
    }
}

/// One step of the compiled right-hand side.
#[derive(Debug, Clone)]
pub(super) enum Step {
    Assign {
        target: Slot,
        code: Code,
    },
    /// An assignment of a start value that a run overrides (see
    /// [`super::Interpreter::set_start_values`]): the value is given, not computed.
    Given {
        target: Slot,
        value: f64,
    },
    Newton1 {
        target: Slot,
        residual: Code,
        derivative: Option<Code>,
        /// The index of the block's restart points in the interpreter's `scalar_sound`.
        sound: usize,
    },
    Loop(usize),
    Algorithm(usize),
}

/// A compiled algorithm section.
#[derive(Debug, Clone)]
pub(super) struct AlgorithmCode {
    pub(super) start: u32,
    pub(super) resets: Vec<(Slot, Code)>,
    pub(super) outputs: Vec<Slot>,
}
