//! The reference interpreter of an [`ExecProgram`]: the oracle the JIT is tested against.
//!
//! Input: an [`ExecProgram`] and the evaluation arrays `t, x, p, dx, work` of its layout.
//! Output: the values the program's instructions define: dependent parameters
//! ([`Interpreter::parameters`]), start values ([`Interpreter::start_values`]), state
//! derivatives and every algebraic variable ([`Interpreter::rhs`]), and the variables alias
//! elimination removed ([`Interpreter::outputs`]); or an [`EvalFailure`] naming the equations,
//! the variables and the time (a singular Jacobian, Newton without convergence, a value that is
//! not finite, a failed `assert`). [`Instance`] binds an interpreter to a parameter vector and
//! implements [`OdeRhs`], the shape integrators call.
//!
//! [`Interpreter::new`] compiles every expression of the program once into a small register
//! code: each node of an expression becomes one operation, shared subexpressions are computed
//! once per evaluation, `if` evaluates only the branch it takes, and statements (`if`, `for`,
//! `while`, `break`, `return`) become jumps. Built-in functions are called through the function
//! pointers of the built-in table and operators through [`eqm_ir::symbolic::eval`], the same Rust
//! functions the JIT calls, so both agree bit for bit. User functions run on an explicit frame
//! stack, so deep recursion cannot overflow the Rust stack; loops and recursion have limits, so
//! evaluation always ends. Evaluation allocates nothing once the buffers have grown to their
//! working size: Newton and LU buffers are allocated when the interpreter is built.
//!
//! Implicit equations are solved by Newton's method with a backtracking line search, starting
//! from the value the unknown holds (so successive calls warm-start); linear loops take one
//! Newton step (an LU solve with partial pivoting, the triangular solves by nalgebra) and fall
//! back to Newton if the result does not satisfy the equations; nonlinear loops run Newton on
//! the torn residuals with the Jacobian assembled by the chain rule from the program's symbolic
//! partial derivatives (difference quotients where those could not be built).
//!
//! The same iterations drive native code. [`NativeCode`] (in `native`) compiles the program's
//! instructions with the JIT; once attached ([`Interpreter::attach_native`]), every compiled
//! instruction runs natively: a run of explicit assignments is one call, and a Newton block or
//! a loop is solved by the very functions the interpreter uses (`solve_scalar`,
//! `LoopSolver::run`), which see the equations only through the `ScalarProblem` and
//! `LoopProblem` traits, implemented once by the register code and once by native
//! residuals and partial derivatives. Values a run computes are checked to be finite after it,
//! and failures of compiled code (an `assert`, `terminate`, a zero `for` step, the iteration
//! and recursion limits) come back as the [`FailureKind`] the register code reports, so both
//! back ends give the same bits and the same failures. Instructions the JIT could not compile
//! stay with the register code. Native code is optional: the interpreter alone remains the
//! reference. This module deliberately does not integrate (integrators call [`OdeRhs`]) and does
//! not decide events: it evaluates the event program's surfaces and expressions on request
//! (`hybrid` drives them); those and the start-value program are always interpreted.

use eqm_compile::exec::{ExecProgram, Instr, LoopVar, ParamCondition};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::{Builtin, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp};
use eqm_ir::failure::{DEFAULT_ITERATION_LIMIT, EvalFailure, FailureKind, FailureSite, MAX_CALL_DEPTH};
use eqm_ir::flat::{Place, Statement};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::eval::{binary, unary};
use nalgebra::{DMatrix, DVector};

mod jacobian;
mod native;

use eqm_jit::{CompiledModule, JitError};
pub use native::NativeCode;
use native::NativeStep;
use std::sync::Arc;

/// Newton iterations before an implicit equation or a loop is reported as not converging.
pub const NEWTON_MAX_ITERATIONS: u32 = 50;

/// A Newton step `s` at point `z` is converged when `|s| <= STEP_RTOL*|z| + STEP_ATOL` (for
/// loops: in every component): Newton converges quadratically, so the error after such a step
/// is far below it. The absolute part is small so that variables of small magnitude keep their
/// relative accuracy; a root at 0 ends with a residual of exactly 0 or a stalled line search.
pub const STEP_RTOL: f64 = 1e-10;
pub const STEP_ATOL: f64 = 1e-14;
/// When the line search cannot reduce the residual (33 halvings of the step), a full step
/// `|s| <= STALL_RTOL*|z| + STALL_ATOL` means the residual is at the level of rounding errors,
/// and the current point is accepted; a larger one is a failure to converge.
pub const STALL_RTOL: f64 = 1e-6;
pub const STALL_ATOL: f64 = 1e-10;
/// Sufficient decrease of the line search: a trial point with step factor `λ` is accepted when
/// `|r_new| <= (1 - ARMIJO*λ)·|r|` (scalar) or `‖r_new‖² <= (1 - 2·ARMIJO*λ)·‖r‖²` (loops).
pub const ARMIJO: f64 = 1e-4;

/// A right-hand side `dx = f(t, x)`: what an integrator needs of a model.
pub trait OdeRhs {
    /// The number of states.
    fn dim(&self) -> usize;
    /// Computes `dx` at `(t, x)`.
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure>;
}

/// One compiled expression: its first operation and the register that holds its value.
#[derive(Debug, Clone, Copy)]
struct Code {
    start: u32,
    result: u32,
}

/// One operation of the register code. Registers are relative to the current frame.
#[derive(Debug, Clone)]
enum Op {
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
    Assert {
        cond: u32,
        message: u32,
        span: Span,
    },
    Terminate {
        message: u32,
        span: Span,
    },
    /// Ends the current function, or the evaluation when no function is running.
    Return,
}

/// A compiled user function.
#[derive(Debug, Clone, Copy)]
struct FunctionCode {
    start: u32,
    /// Registers of one frame: the function's slots, then temporaries.
    frame: u32,
    inputs: u32,
    outputs: u32,
    slots: u32,
}

/// A failure inside the register code, before the caller adds where it happened.
#[derive(Debug, Clone, Copy)]
enum Fault {
    Assert { message: u32, span: Span },
    Terminate { message: u32, span: Span },
    IterationLimit,
    RecursionLimit,
    ZeroStep { span: Span },
}

/// A function frame to return to.
#[derive(Debug, Clone, Copy)]
struct Frame {
    ret: u32,
    base: u32,
    frame: u32,
    out: u32,
    func: u32,
}

/// The evaluation arrays of one call.
struct Mem<'a> {
    t: f64,
    x: &'a [f64],
    p: &'a [f64],
    dx: &'a mut [f64],
    work: &'a mut [f64],
}

impl Mem<'_> {
    /// Runs `segment` of `module` on these arrays, its results into `out`.
    fn native(&mut self, module: &CompiledModule, segment: usize, out: &mut [f64], limit: u64) -> Result<(), JitError> {
        module.run(
            segment,
            self.t,
            [self.x, self.p],
            [&mut *self.dx, &mut *self.work],
            out,
            limit,
        )
    }

    fn read(&self, slot: Slot) -> f64 {
        match slot {
            Slot::Time => self.t,
            Slot::State(i) => self.x[i as usize],
            Slot::Param(i) => self.p[i as usize],
            Slot::Der(i) => self.dx[i as usize],
            Slot::Work(i) => self.work[i as usize],
        }
    }

    /// Writes a writable slot; the program never targets the others.
    fn write(&mut self, slot: Slot, value: f64) {
        match slot {
            Slot::Der(i) => self.dx[i as usize] = value,
            Slot::Work(i) => self.work[i as usize] = value,
            Slot::Time | Slot::State(_) | Slot::Param(_) => {}
        }
    }
}

/// The register machine: code, registers and the call stack.
struct Machine {
    ops: Vec<Op>,
    functions: Vec<FunctionCode>,
    messages: Vec<String>,
    /// Registers of the frame of model-level code.
    model_frame: u32,
    regs: Vec<f64>,
    calls: Vec<Frame>,
    iteration_limit: u64,
}

impl Machine {
    /// Runs the code starting at `start` until its final `Return`.
    fn run(&mut self, start: u32, mem: &mut Mem) -> Result<(), Fault> {
        let Machine {
            ops,
            functions,
            regs,
            calls,
            model_frame,
            iteration_limit,
            ..
        } = self;
        calls.clear();
        let mut budget = *iteration_limit;
        let mut pc = start as usize;
        let mut base = 0usize;
        let mut frame = *model_frame as usize;
        loop {
            let here = pc;
            pc += 1;
            match &ops[here] {
                Op::Const { dst, value } => regs[base + *dst as usize] = *value,
                Op::Load { dst, slot } => regs[base + *dst as usize] = mem.read(*slot),
                Op::Store { slot, src } => mem.write(*slot, regs[base + *src as usize]),
                Op::Move { dst, src } => regs[base + *dst as usize] = regs[base + *src as usize],
                Op::Unary { op, dst, a } => regs[base + *dst as usize] = unary(*op, regs[base + *a as usize]),
                Op::Binary { op, dst, a, b } => {
                    regs[base + *dst as usize] = binary(*op, regs[base + *a as usize], regs[base + *b as usize]);
                }
                Op::Call1 { f, dst, a } => regs[base + *dst as usize] = f(regs[base + *a as usize]),
                Op::Call2 { f, dst, a, b } => {
                    regs[base + *dst as usize] = f(regs[base + *a as usize], regs[base + *b as usize]);
                }
                Op::Jump { target } => {
                    if (*target as usize) <= here {
                        budget = budget.checked_sub(1).ok_or(Fault::IterationLimit)?;
                    }
                    pc = *target as usize;
                }
                Op::JumpIfFalse { cond, target } => {
                    if regs[base + *cond as usize] == 0.0 {
                        pc = *target as usize;
                    }
                }
                Op::ForTest {
                    index,
                    step,
                    stop,
                    exit,
                    span,
                } => {
                    let (i, step, stop) = (
                        regs[base + *index as usize],
                        regs[base + *step as usize],
                        regs[base + *stop as usize],
                    );
                    if step == 0.0 || step.is_nan() {
                        return Err(Fault::ZeroStep { span: *span });
                    }
                    if (step > 0.0 && i > stop) || (step < 0.0 && i < stop) {
                        pc = *exit as usize;
                    }
                }
                Op::Call { func, args, out } => {
                    // Calls count against the budget too: recursion that branches (a naive
                    // Fibonacci) never loops but can still run for ever.
                    budget = budget.checked_sub(1).ok_or(Fault::IterationLimit)?;
                    if calls.len() >= MAX_CALL_DEPTH {
                        return Err(Fault::RecursionLimit);
                    }
                    let f = functions[*func as usize];
                    let new_base = base + frame;
                    let need = new_base + f.frame as usize;
                    if regs.len() < need {
                        regs.resize(need, 0.0);
                    }
                    for (i, a) in args.iter().enumerate() {
                        regs[new_base + i] = regs[base + *a as usize];
                    }
                    // Outputs and protected variables start at 0 (the body then assigns their
                    // declared initial values), so that a result never depends on an earlier call.
                    regs[new_base + f.inputs as usize..new_base + f.slots as usize].fill(0.0);
                    calls.push(Frame {
                        ret: pc as u32,
                        base: base as u32,
                        frame: frame as u32,
                        out: *out,
                        func: *func,
                    });
                    base = new_base;
                    frame = f.frame as usize;
                    pc = f.start as usize;
                }
                Op::Assert { cond, message, span } => {
                    if regs[base + *cond as usize] == 0.0 {
                        return Err(Fault::Assert {
                            message: *message,
                            span: *span,
                        });
                    }
                }
                Op::Terminate { message, span } => {
                    return Err(Fault::Terminate {
                        message: *message,
                        span: *span,
                    });
                }
                Op::Return => match calls.pop() {
                    None => return Ok(()),
                    Some(c) => {
                        let f = functions[c.func as usize];
                        let from = base + f.inputs as usize;
                        let to = c.base as usize + c.out as usize;
                        regs.copy_within(from..from + f.outputs as usize, to);
                        pc = c.ret as usize;
                        base = c.base as usize;
                        frame = c.frame as usize;
                    }
                },
            }
        }
    }

    /// Evaluates one compiled expression.
    fn eval(&mut self, code: Code, mem: &mut Mem) -> Result<f64, Fault> {
        self.run(code.start, mem)?;
        Ok(self.regs[code.result as usize])
    }
}

/// Pending work of the iterative expression compiler.
#[derive(Debug, Clone, Copy)]
enum Task {
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
struct Compiler<'a> {
    program: &'a ExecProgram,
    arena: &'a ExprArena,
    ops: Vec<Op>,
    messages: Vec<String>,
    /// The register of each node compiled in the current expression, with an undo log so that
    /// nodes compiled inside a branch of `if` are forgotten after it (they may not have run).
    memo: FxHashMap<ExprId, u32>,
    undo: Vec<ExprId>,
    tasks: Vec<Task>,
    /// Registers below `floor` are locals and loop bounds; temporaries start there.
    floor: u32,
    next: u32,
    max: u32,
    /// The number of local slots of the function being compiled (0 outside functions).
    locals: Option<u32>,
    /// For each enclosing loop, the jumps that `break` must patch.
    breaks: Vec<Vec<usize>>,
    returns: Vec<usize>,
}

type CompileResult<T> = Result<T, String>;

impl<'a> Compiler<'a> {
    fn new(program: &'a ExecProgram) -> Compiler<'a> {
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

    fn alloc(&mut self, n: u32) -> u32 {
        let r = self.next;
        self.next += n;
        self.max = self.max.max(self.next);
        r
    }

    fn emit(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn here(&self) -> u32 {
        self.ops.len() as u32
    }

    fn patch(&mut self, at: usize, to: u32) {
        match &mut self.ops[at] {
            Op::Jump { target } | Op::JumpIfFalse { target, .. } => *target = to,
            Op::ForTest { exit, .. } => *exit = to,
            _ => {}
        }
    }

    fn remember(&mut self, e: ExprId, r: u32) {
        self.memo.insert(e, r);
        self.undo.push(e);
    }

    fn forget_since(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some(e) = self.undo.pop() {
                self.memo.remove(&e);
            }
        }
    }

    fn reg(&self, e: ExprId) -> CompileResult<u32> {
        self.memo
            .get(&e)
            .copied()
            .ok_or_else(|| format!("expression #{} was not compiled before its use", e.0))
    }

    fn slot(&self, v: eqm_ir::expr::VarId) -> CompileResult<Slot> {
        self.program
            .slot_of(v)
            .ok_or_else(|| format!("`{}` has no place at run time", self.program.symbols().get(v).name))
    }

    /// A model-level expression as a unit of its own, ending in `Return`.
    fn expression(&mut self, e: ExprId) -> CompileResult<Code> {
        self.floor = 0;
        self.locals = None;
        let start = self.here();
        let result = self.root(e)?;
        self.emit(Op::Return);
        Ok(Code { start, result })
    }

    /// Compiles `root` into the current code and returns its register. Registers from `floor`
    /// on are reused by the next root: values do not live from one root to the next.
    fn root(&mut self, root: ExprId) -> CompileResult<u32> {
        // Only the entries of the previous root are removed: clearing the whole table would cost
        // its capacity, which one huge expression can make large for every small one after it.
        self.forget_since(0);
        self.next = self.floor;
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
    fn visit(&mut self, e: ExprId) -> CompileResult<()> {
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
            Node::Call(Callee::User(_), args) => {
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
    fn finish(&mut self, e: ExprId) -> CompileResult<()> {
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
            Node::CallOutput(call, k) => {
                let r = self.reg(*call)? + *k;
                self.remember(e, r);
            }
            _ => return Err("an unexpected expression".to_string()),
        }
        Ok(())
    }

    /// A user function's body: its slots are the first registers of its frame.
    fn function(&mut self, f: &eqm_ir::flat::Function) -> CompileResult<FunctionCode> {
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
    fn algorithm(&mut self, statements: &[Statement]) -> CompileResult<u32> {
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

    fn statements(&mut self, statements: &[Statement]) -> CompileResult<()> {
        statements.iter().try_for_each(|s| self.statement(s))
    }

    fn local(&self, k: u32) -> CompileResult<u32> {
        match self.locals {
            Some(n) if k < n => Ok(k),
            _ => Err("an assignment to a function local outside its function".to_string()),
        }
    }

    fn statement(&mut self, s: &Statement) -> CompileResult<()> {
        match s {
            Statement::Assign { target, value, .. } => {
                let src = self.root(*value)?;
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
            }
            Statement::If {
                branches, else_branch, ..
            } => {
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
            }
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
            } => {
                // The range is evaluated once; its step and end live in registers reserved
                // above the locals while the body runs.
                let index = self.local(*index)?;
                let first = self.root(*start)?;
                self.emit(Op::Move { dst: index, src: first });
                let step_value = self.root(*step)?;
                let step_reg = self.floor;
                self.emit(Op::Move {
                    dst: step_reg,
                    src: step_value,
                });
                self.floor += 1;
                let stop_value = self.root(*stop)?;
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
                    span: *span,
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
            }
            Statement::Assert {
                condition,
                message,
                span,
            } => {
                let cond = self.root(*condition)?;
                let message = self.message(message);
                self.emit(Op::Assert {
                    cond,
                    message,
                    span: *span,
                });
            }
            Statement::Terminate { message, span } => {
                let message = self.message(message);
                self.emit(Op::Terminate { message, span: *span });
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

    /// Patches the exits of the innermost loop to the current position.
    fn end_loop(&mut self) {
        let to = self.here();
        for at in self.breaks.pop().unwrap_or_default() {
            self.patch(at, to);
        }
    }

    fn message(&mut self, text: &str) -> u32 {
        self.messages.push(text.to_string());
        self.messages.len() as u32 - 1
    }
}

/// One step of the compiled right-hand side.
#[derive(Debug, Clone)]
enum Step {
    Assign {
        target: Slot,
        code: Code,
    },
    Newton1 {
        target: Slot,
        residual: Code,
        derivative: Option<Code>,
    },
    Loop(usize),
    Algorithm(usize),
}

/// A compiled algorithm section.
#[derive(Debug, Clone)]
struct AlgorithmCode {
    start: u32,
    resets: Vec<(Slot, Code)>,
    outputs: Vec<Slot>,
}

/// What went wrong while solving, before the site is added.
enum SolveError {
    Fault(Fault),
    Kind(FailureKind),
}

impl From<Fault> for SolveError {
    fn from(f: Fault) -> SolveError {
        SolveError::Fault(f)
    }
}

/// Native code failed: its failure as the interpreter reports it. Only a failure of the code
/// is expected; a length error cannot happen, because the arrays were checked against the
/// layout the code was compiled for, but it is reported rather than ignored.
impl From<JitError> for SolveError {
    fn from(e: JitError) -> SolveError {
        match e {
            JitError::Failed { kind, .. } => SolveError::Kind(kind),
            _ => SolveError::Kind(FailureKind::Dimension {
                array: "native code",
                expected: 0,
                found: 0,
            }),
        }
    }
}

/// What the scalar Newton iteration needs of an implicit equation `residual(target) = 0`. The
/// interpreter's register code and native code both provide it, so that both back ends run
/// the one iteration of `solve_scalar`.
trait ScalarProblem {
    /// Writes `z` into the target and evaluates the residual there.
    fn residual(&mut self, z: f64) -> Result<f64, SolveError>;
    /// The symbolic derivative of the residual at the point evaluated last; `None` when there
    /// is none, and a difference quotient is used instead.
    fn derivative(&mut self) -> Option<Result<f64, SolveError>>;
}

/// Scalar Newton with a backtracking line search on `|residual|`, starting from `guess` (the
/// value the target holds); when that fails to converge, the homotopy of [`homotopy_steps`]
/// from the same start. On success the target holds the solution.
fn solve_scalar(guess: f64, f: &mut dyn ScalarProblem) -> Result<(), SolveError> {
    let start = if guess.is_finite() { guess } else { 0.0 };
    let failure = match newton_scalar(start, f) {
        Ok(_) => return Ok(()),
        Err(e) if !may_recover(&e) => return Err(e),
        Err(e) => e,
    };
    let r0 = f.residual(start)?;
    let mut z = start;
    let found = homotopy_steps(|lambda| {
        let mut shifted = ShiftedScalar {
            inner: &mut *f,
            offset: (1.0 - lambda) * r0,
        };
        newton_scalar(z, &mut shifted).map(|solution| z = solution).is_ok()
    });
    if found { Ok(()) } else { Err(failure) }
}

/// Whether a failed Newton iteration may succeed by homotopy: it stopped for lack of progress
/// (not converging, or a singular derivative on the way), not because the model failed.
fn may_recover(e: &SolveError) -> bool {
    matches!(
        e,
        SolveError::Kind(FailureKind::NoConvergence { .. } | FailureKind::Singular)
    )
}

/// Newton homotopy, the fallback when Newton from the start point `s` fails: the residuals
/// `F(z) - (1 - λ) F(s)` vanish at `s` for λ = 0 and are the problem's own for λ = 1. `solve_at`
/// solves the problem at one λ, starting from the last solution, and says whether it converged;
/// λ advances from 0 to 1 in steps that double after a success and halve after a failure.
/// Returns whether λ = 1 was reached (the problem's own solution is then the last one found).
fn homotopy_steps(mut solve_at: impl FnMut(f64) -> bool) -> bool {
    let (mut lambda, mut step) = (0.0f64, HOMOTOPY_FIRST_STEP);
    while lambda < 1.0 {
        let next = (lambda + step).min(1.0);
        if solve_at(next) {
            lambda = next;
            step = (2.0 * step).min(HOMOTOPY_MAX_STEP);
        } else {
            step /= 2.0;
            if step < HOMOTOPY_MIN_STEP {
                return false;
            }
        }
    }
    true
}

/// The first step of λ, the largest, and the smallest before the homotopy gives up.
const HOMOTOPY_FIRST_STEP: f64 = 0.1;
const HOMOTOPY_MAX_STEP: f64 = 0.5;
const HOMOTOPY_MIN_STEP: f64 = 1e-4;

/// A scalar problem with its residual shifted by a constant: one stage of the homotopy.
struct ShiftedScalar<'x> {
    inner: &'x mut dyn ScalarProblem,
    offset: f64,
}

impl ScalarProblem for ShiftedScalar<'_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        Ok(self.inner.residual(z)? - self.offset)
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        self.inner.derivative()
    }
}

/// The damped Newton iteration of [`solve_scalar`]; returns the solution, which the target holds.
fn newton_scalar(start: f64, f: &mut dyn ScalarProblem) -> Result<f64, SolveError> {
    let mut z = start;
    let mut r = f.residual(z)?;
    if !r.is_finite() {
        return Err(SolveError::Kind(FailureKind::NotFinite { value: r }));
    }
    let mut outcome = Err(SolveError::Kind(FailureKind::NoConvergence {
        iterations: NEWTON_MAX_ITERATIONS,
        residual: r.abs(),
    }));
    for iteration in 0..NEWTON_MAX_ITERATIONS {
        if r == 0.0 {
            outcome = Ok(z);
            break;
        }
        let d = match f.derivative() {
            Some(d) => d?,
            None => {
                let h = f64::EPSILON.sqrt() * z.abs().max(1.0);
                (f.residual(z + h)? - r) / h
            }
        };
        if !d.is_finite() || d == 0.0 {
            outcome = Err(SolveError::Kind(FailureKind::Singular));
            break;
        }
        let step = -r / d;
        let mut lambda = 1.0;
        let (z_new, r_new) = loop {
            let z_new = z + lambda * step;
            let r_new = f.residual(z_new)?;
            if r_new.is_finite() && r_new.abs() <= (1.0 - ARMIJO * lambda) * r.abs() {
                break (z_new, r_new);
            }
            lambda *= 0.5;
            if lambda < 1e-10 {
                break (f64::NAN, f64::NAN);
            }
        };
        if z_new.is_nan() {
            // The residual cannot be reduced: at the level of rounding errors that means z
            // is the solution; otherwise Newton has failed.
            outcome = if step.abs() <= STALL_RTOL * z.abs() + STALL_ATOL {
                f.residual(z)?;
                Ok(z)
            } else {
                Err(SolveError::Kind(FailureKind::NoConvergence {
                    iterations: iteration + 1,
                    residual: r.abs(),
                }))
            };
            break;
        }
        let converged = (lambda * step).abs() <= STEP_RTOL * z_new.abs() + STEP_ATOL;
        z = z_new;
        r = r_new;
        if converged {
            outcome = Ok(z);
            break;
        }
        outcome = Err(SolveError::Kind(FailureKind::NoConvergence {
            iterations: iteration + 1,
            residual: r.abs(),
        }));
    }
    outcome
}

/// A scalar implicit equation evaluated by the register code.
struct InterpretedScalar<'x, 'm> {
    m: &'x mut Machine,
    mem: &'x mut Mem<'m>,
    target: Slot,
    residual: Code,
    derivative: Option<Code>,
}

impl ScalarProblem for InterpretedScalar<'_, '_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        self.mem.write(self.target, z);
        Ok(self.m.eval(self.residual, self.mem)?)
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        let code = self.derivative?;
        Some(self.m.eval(code, self.mem).map_err(SolveError::from))
    }
}

/// A scalar implicit equation evaluated by native code: segments with one result each.
struct NativeScalar<'x, 'm> {
    module: &'x CompiledModule,
    mem: &'x mut Mem<'m>,
    target: Slot,
    residual: usize,
    derivative: Option<usize>,
    limit: u64,
}

impl ScalarProblem for NativeScalar<'_, '_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        self.mem.write(self.target, z);
        let mut out = [0.0];
        self.mem.native(self.module, self.residual, &mut out, self.limit)?;
        Ok(out[0])
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        let segment = self.derivative?;
        let mut out = [0.0];
        Some(
            self.mem
                .native(self.module, segment, &mut out, self.limit)
                .map(|()| out[0])
                .map_err(SolveError::from),
        )
    }
}

/// What the loop solver needs of a torn algebraic loop; the register code and native code both
/// provide it, so that both back ends run the one iteration of `LoopSolver::run`.
trait LoopProblem {
    /// The value tearing unknown `j` holds (the first guess).
    fn guess(&self, j: usize) -> f64;
    /// Writes the tearing values `t` into their slots, runs the inner assignments and
    /// evaluates the residuals into `f`.
    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError>;
    /// Evaluates the partial derivatives of the loop's symbolic Jacobian at the point
    /// evaluated last, in the order of [`eqm_compile::exec::LoopJacobian`] (the inner rows, then the
    /// residual rows), into `out`. Only called when the loop has a symbolic Jacobian.
    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError>;
}

/// The compiled code of an algebraic loop: tearing slots, inner assignments, residuals and the
/// partial derivatives in the order of [`eqm_compile::exec::LoopJacobian`].
#[derive(Debug, Clone)]
struct LoopCode {
    tearing: Vec<Slot>,
    inner: Vec<(Slot, Code)>,
    residuals: Vec<Code>,
    partials: Vec<Code>,
}

/// An algebraic loop evaluated by the register code.
struct InterpretedLoop<'x, 'm> {
    code: &'x LoopCode,
    m: &'x mut Machine,
    mem: &'x mut Mem<'m>,
}

impl LoopProblem for InterpretedLoop<'_, '_> {
    fn guess(&self, j: usize) -> f64 {
        self.mem.read(self.code.tearing[j])
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        for (slot, value) in self.code.tearing.iter().zip(t) {
            self.mem.write(*slot, *value);
        }
        for &(slot, code) in &self.code.inner {
            let v = self.m.eval(code, self.mem)?;
            self.mem.write(slot, v);
        }
        for (r, code) in f.iter_mut().zip(&self.code.residuals) {
            *r = self.m.eval(*code, self.mem)?;
        }
        Ok(())
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        for (d, code) in out.iter_mut().zip(&self.code.partials) {
            *d = self.m.eval(*code, self.mem)?;
        }
        Ok(())
    }
}

/// An algebraic loop evaluated by native code: one segment computes the inner assignments and
/// the residuals, another the partial derivatives.
struct NativeLoop<'x, 'm> {
    module: &'x CompiledModule,
    tearing: &'x [Slot],
    mem: &'x mut Mem<'m>,
    evaluate: usize,
    partials: Option<usize>,
    limit: u64,
}

impl LoopProblem for NativeLoop<'_, '_> {
    fn guess(&self, j: usize) -> f64 {
        self.mem.read(self.tearing[j])
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        for (slot, value) in self.tearing.iter().zip(t) {
            self.mem.write(*slot, *value);
        }
        Ok(self.mem.native(self.module, self.evaluate, f, self.limit)?)
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        match self.partials {
            Some(segment) => Ok(self.mem.native(self.module, segment, out, self.limit)?),
            None => Ok(()),
        }
    }
}

/// Which partial derivatives an inner value or residual has (see [`LoopVar`]).
type Pattern = Vec<Vec<LoopVar>>;

/// The Newton and LU solver of one algebraic loop with its buffers, shared by both back ends.
#[derive(Debug, Clone)]
struct LoopSolver {
    n: usize,
    linear: bool,
    /// The non-zero partial derivatives of the inner values and of the residuals, when the
    /// loop has a symbolic Jacobian; their values come in this order.
    pattern: Option<(Pattern, Pattern)>,
    partials: Vec<f64>,
    /// Current point and its residuals; the trial point and its residuals.
    t: Vec<f64>,
    f: Vec<f64>,
    trial: Vec<f64>,
    f_trial: Vec<f64>,
    step: DVector<f64>,
    /// `dz[k*n + j]`: the derivative of inner unknown `k` with respect to tearing unknown `j`.
    dz: Vec<f64>,
    jm: DMatrix<f64>,
    pivots: Vec<usize>,
    /// The guesses a solve started from (the homotopy's starting point).
    start: Vec<f64>,
}

/// A loop with its residuals shifted by constants and its own first guesses: one stage of the
/// homotopy.
struct ShiftedLoop<'x> {
    inner: &'x mut dyn LoopProblem,
    from: &'x [f64],
    offset: &'x [f64],
}

impl LoopProblem for ShiftedLoop<'_> {
    fn guess(&self, j: usize) -> f64 {
        self.from[j]
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate(t, f)?;
        for (r, o) in f.iter_mut().zip(self.offset) {
            *r -= o;
        }
        Ok(())
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        self.inner.partials(out)
    }
}

impl LoopSolver {
    fn new(b: &eqm_compile::exec::LoopBlock) -> LoopSolver {
        let n = b.tearing.len();
        let pattern = b.jacobian.as_ref().map(|j| {
            let rows = |list: &[Vec<(LoopVar, ExprId)>]| -> Pattern {
                list.iter().map(|row| row.iter().map(|(lv, _)| *lv).collect()).collect()
            };
            (rows(&j.inner), rows(&j.residuals))
        });
        let count = pattern
            .as_ref()
            .map_or(0, |(a, b)| a.iter().chain(b).map(Vec::len).sum());
        LoopSolver {
            n,
            linear: b.linear,
            pattern,
            partials: vec![0.0; count],
            t: vec![0.0; n],
            f: vec![0.0; n],
            trial: vec![0.0; n],
            f_trial: vec![0.0; n],
            step: DVector::zeros(n),
            dz: vec![0.0; b.inner.len() * n],
            jm: DMatrix::zeros(n, n),
            pivots: vec![0; n],
            start: vec![0.0; n],
        }
    }

    /// Evaluates the torn residuals at `trial` into `f_trial`; false when one is not finite.
    fn evaluate(&mut self, problem: &mut dyn LoopProblem) -> Result<bool, SolveError> {
        problem.evaluate(&self.trial, &mut self.f_trial)?;
        Ok(self.f_trial.iter().all(|r| r.is_finite()))
    }

    /// Makes the trial point the current one.
    fn accept(&mut self) {
        std::mem::swap(&mut self.t, &mut self.trial);
        std::mem::swap(&mut self.f, &mut self.f_trial);
    }

    /// The Jacobian of the torn residuals at the current point (whose values the slots hold)
    /// into `jm`; false when an entry is not finite.
    fn jacobian(&mut self, problem: &mut dyn LoopProblem) -> Result<bool, SolveError> {
        let n = self.n;
        match &self.pattern {
            Some((inner, residuals)) => {
                problem.partials(&mut self.partials)?;
                let mut values = self.partials.iter();
                self.dz.fill(0.0);
                for (k, row) in inner.iter().enumerate() {
                    for (&lv, &d) in row.iter().zip(&mut values) {
                        let (before, row) = self.dz.split_at_mut(k * n);
                        match lv {
                            LoopVar::Tearing(j) => row[j as usize] += d,
                            LoopVar::Inner(l) => {
                                let dl = &before[l as usize * n..l as usize * n + n];
                                for j in 0..n {
                                    row[j] += d * dl[j];
                                }
                            }
                        }
                    }
                }
                self.jm.fill(0.0);
                for (i, row) in residuals.iter().enumerate() {
                    for (&lv, &d) in row.iter().zip(&mut values) {
                        match lv {
                            LoopVar::Tearing(j) => self.jm[(i, j as usize)] += d,
                            LoopVar::Inner(k) => {
                                for j in 0..n {
                                    self.jm[(i, j)] += d * self.dz[k as usize * n + j];
                                }
                            }
                        }
                    }
                }
            }
            None => {
                // Forward differences, one column per tearing unknown.
                for j in 0..n {
                    self.trial.copy_from_slice(&self.t);
                    let h = f64::EPSILON.sqrt() * self.t[j].abs().max(1.0);
                    self.trial[j] += h;
                    self.evaluate(problem)?;
                    for i in 0..n {
                        self.jm[(i, j)] = (self.f_trial[i] - self.f[i]) / h;
                    }
                }
            }
        }
        Ok(self.jm.iter().all(|v| v.is_finite()))
    }

    /// LU factorisation of `jm` in place with partial pivoting; false when it is singular.
    fn factor(&mut self) -> bool {
        let n = self.n;
        let scale = self.jm.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if scale == 0.0 {
            return false;
        }
        for c in 0..n {
            let mut p = c;
            for r in c + 1..n {
                if self.jm[(r, c)].abs() > self.jm[(p, c)].abs() {
                    p = r;
                }
            }
            if self.jm[(p, c)].abs() <= scale * 1e-14 {
                return false;
            }
            self.pivots[c] = p;
            if p != c {
                self.jm.swap_rows(p, c);
            }
            let pivot = self.jm[(c, c)];
            for r in c + 1..n {
                let l = self.jm[(r, c)] / pivot;
                self.jm[(r, c)] = l;
                if l != 0.0 {
                    for k in c + 1..n {
                        let u = self.jm[(c, k)];
                        self.jm[(r, k)] -= l * u;
                    }
                }
            }
        }
        true
    }

    /// The Newton step `-J⁻¹ f` into `step`, with `jm` factored.
    fn solve(&mut self) -> bool {
        let n = self.n;
        for i in 0..n {
            self.step[i] = -self.f[i];
        }
        for c in 0..n {
            self.step.swap_rows(c, self.pivots[c]);
        }
        self.jm.solve_lower_triangular_with_diag_mut(&mut self.step, 1.0)
            && self.jm.solve_upper_triangular_mut(&mut self.step)
            && self.step.iter().all(|v| v.is_finite())
    }

    /// Solves the loop, starting from the values the tearing slots hold: Newton, and when that
    /// does not converge, the homotopy of [`homotopy_steps`] from the same start.
    fn run(&mut self, problem: &mut dyn LoopProblem) -> Result<(), SolveError> {
        for j in 0..self.n {
            let guess = problem.guess(j);
            self.start[j] = if guess.is_finite() { guess } else { 0.0 };
        }
        let failure = match self.newton(problem) {
            Ok(()) => return Ok(()),
            Err(e) if !may_recover(&e) => return Err(e),
            Err(e) => e,
        };
        let mut from = self.start.clone();
        let mut f0 = vec![0.0; self.n];
        problem.evaluate(&from, &mut f0)?;
        if !f0.iter().all(|v| v.is_finite()) {
            return Err(failure);
        }
        let mut offset = vec![0.0; self.n];
        let found = homotopy_steps(|lambda| {
            for (o, f) in offset.iter_mut().zip(&f0) {
                *o = (1.0 - lambda) * f;
            }
            let mut shifted = ShiftedLoop {
                inner: &mut *problem,
                from: &from,
                offset: &offset,
            };
            let solved = self.newton(&mut shifted).is_ok();
            if solved {
                from.copy_from_slice(&self.t);
            }
            solved
        });
        if found { Ok(()) } else { Err(failure) }
    }

    /// The damped Newton iteration of [`LoopSolver::run`], starting from the problem's guesses;
    /// on success `t` is the solution, which the slots hold.
    fn newton(&mut self, problem: &mut dyn LoopProblem) -> Result<(), SolveError> {
        let n = self.n;
        for j in 0..n {
            let guess = problem.guess(j);
            self.trial[j] = if guess.is_finite() { guess } else { 0.0 };
        }
        if !self.evaluate(problem)? {
            let value = self
                .f_trial
                .iter()
                .copied()
                .find(|v| !v.is_finite())
                .unwrap_or(f64::NAN);
            return Err(SolveError::Kind(FailureKind::NotFinite { value }));
        }
        self.accept();
        let initial = max_abs(&self.f);
        let mut norm = squared(&self.f);
        for iteration in 0..NEWTON_MAX_ITERATIONS {
            if norm == 0.0 {
                return Ok(());
            }
            if !self.jacobian(problem)? || !self.factor() || !self.solve() {
                return Err(SolveError::Kind(FailureKind::Singular));
            }
            // A linear loop is solved by the first full step; Newton's line search is only
            // for nonlinear ones (and for a loop wrongly believed linear).
            let first_linear = self.linear && iteration == 0;
            let mut lambda = 1.0;
            loop {
                for j in 0..n {
                    self.trial[j] = self.t[j] + lambda * self.step[j];
                }
                let finite = self.evaluate(problem)?;
                if finite && (first_linear || squared(&self.f_trial) <= (1.0 - 2.0 * ARMIJO * lambda) * norm) {
                    break;
                }
                lambda *= 0.5;
                if lambda < 1e-10 {
                    let stalled = (0..n).all(|j| self.step[j].abs() <= STALL_RTOL * self.t[j].abs() + STALL_ATOL);
                    if stalled {
                        // The residual is at the level of rounding: the current point is the
                        // solution, and the slots must hold its values again.
                        self.trial.copy_from_slice(&self.t);
                        self.evaluate(problem)?;
                        return Ok(());
                    }
                    return Err(SolveError::Kind(FailureKind::NoConvergence {
                        iterations: iteration + 1,
                        residual: norm.sqrt(),
                    }));
                }
            }
            let converged =
                (0..n).all(|j| (lambda * self.step[j]).abs() <= STEP_RTOL * self.trial[j].abs() + STEP_ATOL);
            self.accept();
            norm = squared(&self.f);
            if converged || norm == 0.0 || (first_linear && max_abs(&self.f) <= 1e-10 * initial) {
                return Ok(());
            }
        }
        Err(SolveError::Kind(FailureKind::NoConvergence {
            iterations: NEWTON_MAX_ITERATIONS,
            residual: norm.sqrt(),
        }))
    }
}

fn squared(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |a, x| a.max(x.abs()))
}

/// The reference interpreter of one program; see the module documentation.
pub struct Interpreter<'p> {
    program: &'p ExecProgram,
    m: Machine,
    params: Vec<(Slot, Code)>,
    conditions: Vec<Code>,
    starts: Vec<(Slot, Code)>,
    outputs: Vec<(Slot, Code)>,
    rhs: Vec<Step>,
    algorithms: Vec<AlgorithmCode>,
    /// The code of each algebraic loop, and its solver (shared with native code).
    loop_code: Vec<LoopCode>,
    loops: Vec<LoopSolver>,
    /// The derivatives of the last successful evaluation: Newton iterations and loops that
    /// compute a derivative start from there.
    dx_guess: Vec<f64>,
    /// Native code for the instructions it could compile, when attached (shared by the
    /// instances of one program: the code is read-only).
    native: Option<Arc<NativeCode>>,
    finite_checks: FiniteChecks,
    /// Whether the right-hand side has iterations (scalar Newton blocks, loops), which start
    /// from `dx_guess`, or algorithm sections, which may read derivatives before assigning them.
    iterates: bool,
    /// The zero-crossing functions of the event program, in its order.
    surfaces: Vec<Code>,
    /// The when-conditions, action values and assertion conditions, sorted by expression.
    event_exprs: Vec<(ExprId, Code)>,
    /// The symbolic Jacobian's partial derivatives and the buffers of its chain rule, when the
    /// program has one.
    /// Boxed: it is taken out and put back around every Jacobian, and a pointer moves faster
    /// than the buffers' handles.
    jacobian: Option<Box<JacobianCode>>,
}

/// What the interpreter keeps for the symbolic Jacobian.
struct JacobianCode {
    partials: Vec<Code>,
    values: Vec<f64>,
    tangents: jacobian::Tangents,
}

/// Where [`Interpreter::jacobian`] writes: `∂f/∂x`, the invariants `g` and `G = ∂g/∂x`, each
/// only when asked for.
#[derive(Default)]
pub struct JacobianOut<'a> {
    pub f_x: Option<&'a mut DMatrix<f64>>,
    /// `∂f/∂x` as the values of its pattern's entries row by row
    /// ([`eqm_compile::jacobian::ExecJacobian::rows`]).
    pub f_values: Option<&'a mut [f64]>,
    pub g: Option<&'a mut [f64]>,
    pub g_x: Option<&'a mut DMatrix<f64>>,
    /// The Jacobian of the invariants' rates (see [`eqm_compile::jacobian::ExecJacobian::rates`]);
    /// left untouched when the program has none.
    pub rate_x: Option<&'a mut DMatrix<f64>>,
    /// The values of the extra expressions (see [`eqm_compile::jacobian::ExecJacobian::extra`]).
    pub extra: Option<&'a mut [f64]>,
}

/// When the right-hand side checks that values are finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FiniteChecks {
    /// After every assignment: the first non-finite value is reported with its equation.
    #[default]
    EachAssignment,
    /// Only the derivatives, after the whole evaluation; when one is not finite, or anything
    /// fails, the evaluation is repeated with [`FiniteChecks::EachAssignment`] so the failure
    /// reported is the same. For the integrator's evaluations, where values that do not reach a
    /// derivative cannot change the solution (the rows written are still checked in full): it
    /// spares a check per assignment, which costs as much as a native assignment itself.
    Derivatives,
}

impl<'p> Interpreter<'p> {
    /// Compiles `program`. Fails only when the program breaks its own contract (an internal
    /// error), since [`ExecProgram::build`] checked every expression.
    pub fn new(program: &'p ExecProgram) -> Result<Interpreter<'p>, Diagnostic> {
        let mut c = Compiler::new(program);
        let internal = |what: String| {
            Diagnostic::error(
                "E0699",
                format!("internal error while compiling the executable program: {what}"),
                program.model_span(),
                "in this model",
            )
            .with_help("please report this model")
        };
        let mut functions = Vec::with_capacity(program.functions().len());
        let mut function_max = 0;
        for f in program.functions() {
            let code = c
                .function(f)
                .map_err(|e| internal(format!("function `{}`: {e}", f.name)))?;
            function_max = function_max.max(code.frame);
            functions.push(code);
        }
        c.max = 0;
        let assigns = |c: &mut Compiler, list: &[eqm_compile::exec::VarAssign]| -> Result<Vec<(Slot, Code)>, String> {
            list.iter().map(|a| Ok((a.target, c.expression(a.value)?))).collect()
        };
        let params = assigns(&mut c, program.parameter_program()).map_err(internal)?;
        let starts = assigns(&mut c, program.start_program()).map_err(internal)?;
        let outputs = assigns(&mut c, program.outputs()).map_err(internal)?;
        let conditions = program
            .conditions()
            .iter()
            .map(|pc| c.expression(pc.condition.expr()))
            .collect::<CompileResult<Vec<_>>>()
            .map_err(internal)?;
        let mut algorithms = Vec::with_capacity(program.algorithms().len());
        for a in program.algorithms() {
            let resets = assigns(&mut c, &a.resets).map_err(internal)?;
            let start = c.algorithm(&a.statements).map_err(internal)?;
            algorithms.push(AlgorithmCode {
                start,
                resets,
                outputs: a.outputs.iter().map(|(_, s)| *s).collect(),
            });
        }
        let mut rhs = Vec::with_capacity(program.rhs().len());
        let mut loops = Vec::new();
        let mut loop_code = Vec::new();
        for instr in program.rhs() {
            rhs.push(match instr {
                Instr::Assign { target, value, .. } => Step::Assign {
                    target: *target,
                    code: c.expression(*value).map_err(internal)?,
                },
                Instr::Newton1 {
                    target,
                    residual,
                    derivative,
                    ..
                } => Step::Newton1 {
                    target: *target,
                    residual: c.expression(*residual).map_err(internal)?,
                    derivative: derivative.map(|d| c.expression(d)).transpose().map_err(internal)?,
                },
                Instr::Algorithm { index } => Step::Algorithm(*index),
                Instr::Loop(b) => {
                    if b.residuals.len() != b.tearing.len() {
                        return Err(internal("a loop with more residuals than tearing unknowns".to_string()));
                    }
                    let mut codes = |list: &mut dyn Iterator<Item = ExprId>| -> Result<Vec<Code>, Diagnostic> {
                        list.map(|e| c.expression(e))
                            .collect::<CompileResult<_>>()
                            .map_err(internal)
                    };
                    let partials = match &b.jacobian {
                        Some(j) => codes(&mut j.inner.iter().chain(&j.residuals).flatten().map(|(_, e)| *e))?,
                        None => Vec::new(),
                    };
                    let inner_codes = codes(&mut b.inner.iter().map(|a| a.value))?;
                    let residuals = codes(&mut b.residuals.iter().map(|(r, _)| *r))?;
                    loop_code.push(LoopCode {
                        tearing: b.tearing.clone(),
                        inner: b.inner.iter().map(|a| a.target).zip(inner_codes).collect(),
                        residuals,
                        partials,
                    });
                    loops.push(LoopSolver::new(b));
                    Step::Loop(loops.len() - 1)
                }
            });
        }
        let events = program.events();
        let surfaces = events
            .surfaces
            .iter()
            .map(|s| c.expression(s.expr))
            .collect::<CompileResult<Vec<_>>>()
            .map_err(internal)?;
        let mut event_exprs: Vec<ExprId> = events.surfaces.iter().map(|s| s.expr).collect();
        event_exprs.extend(events.surfaces.iter().filter_map(|s| s.time_event));
        for sample in &events.samples {
            event_exprs.push(sample.start);
            event_exprs.push(sample.interval);
        }
        event_exprs.extend(events.previous.iter().map(|p| p.1));
        for w in &events.whens {
            for (condition, actions) in &w.branches {
                event_exprs.push(*condition);
                for a in actions {
                    match a {
                        eqm_ir::flat::WhenAction::Assign { value, .. }
                        | eqm_ir::flat::WhenAction::Reinit { value, .. } => event_exprs.push(*value),
                        eqm_ir::flat::WhenAction::Assert { condition, .. } => event_exprs.push(*condition),
                        eqm_ir::flat::WhenAction::Terminate { .. } => {}
                    }
                }
            }
        }
        event_exprs.sort_unstable();
        event_exprs.dedup();
        let event_exprs = event_exprs
            .into_iter()
            .map(|e| Ok((e, c.expression(e)?)))
            .collect::<CompileResult<Vec<_>>>()
            .map_err(internal)?;
        let jacobian = match program.jacobian() {
            Some(j) => Some(Box::new(JacobianCode {
                partials: j
                    .partials
                    .iter()
                    .map(|e| c.expression(*e))
                    .collect::<CompileResult<Vec<_>>>()
                    .map_err(internal)?,
                values: vec![0.0; j.partials.len()],
                tangents: jacobian::Tangents::new(j, program.layout().states, program.layout().work),
            })),
            None => None,
        };
        let model_frame = c.max.max(1);
        // Model-level code runs in frame 0; function frames start above it.
        let regs = vec![0.0; model_frame as usize + function_max as usize];
        Ok(Interpreter {
            program,
            m: Machine {
                ops: c.ops,
                functions,
                messages: c.messages,
                model_frame,
                regs,
                calls: Vec::new(),
                iteration_limit: DEFAULT_ITERATION_LIMIT,
            },
            params,
            conditions,
            starts,
            outputs,
            rhs,
            algorithms,
            loop_code,
            loops,
            dx_guess: vec![0.0; program.layout().states],
            finite_checks: FiniteChecks::default(),
            iterates: program.rhs().iter().any(|i| !matches!(i, Instr::Assign { .. })),
            native: None,
            surfaces,
            event_exprs,
            jacobian,
        })
    }

    /// Evaluates with `native` from now on: every instruction it compiled, and the outputs
    /// program if it compiled that. `native` must have been compiled from this program.
    pub fn attach_native(&mut self, native: Arc<NativeCode>) {
        self.native = Some(native);
    }

    /// The native code attached, if any.
    pub fn native(&self) -> Option<&NativeCode> {
        self.native.as_deref()
    }

    pub fn program(&self) -> &'p ExecProgram {
        self.program
    }

    /// Changes how many loop iterations and function calls one evaluation may run
    /// ([`DEFAULT_ITERATION_LIMIT`]).
    pub fn set_iteration_limit(&mut self, limit: u64) {
        self.m.iteration_limit = limit;
    }

    /// Checks the lengths of the arrays against the program's layout.
    fn check(&self, t: f64, arrays: &[(&'static str, usize, usize)]) -> Result<(), EvalFailure> {
        for &(array, expected, found) in arrays {
            if expected != found {
                return Err(EvalFailure {
                    time: t,
                    kind: FailureKind::Dimension { array, expected, found },
                    site: FailureSite::Call,
                });
            }
        }
        Ok(())
    }

    /// Checks the four arrays of an evaluation at time `t`.
    fn check_all(&self, t: f64, x: &[f64], p: &[f64], dx: &[f64], work: &[f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        if x.len() == layout.states
            && p.len() == layout.params
            && dx.len() == layout.states
            && work.len() == layout.work
        {
            return Ok(());
        }
        self.check(
            t,
            &[
                ("x", layout.states, x.len()),
                ("p", layout.params, p.len()),
                ("dx", layout.states, dx.len()),
                ("work", layout.work, work.len()),
            ],
        )
    }

    fn fault(&self, fault: Fault) -> FailureKind {
        let message = |k: u32| self.m.messages.get(k as usize).cloned().unwrap_or_default();
        match fault {
            Fault::Assert { message: k, span } => FailureKind::Assert {
                message: message(k),
                span,
            },
            Fault::Terminate { message: k, span } => FailureKind::Terminate {
                message: message(k),
                span,
            },
            Fault::IterationLimit => FailureKind::IterationLimit {
                limit: self.m.iteration_limit,
            },
            Fault::RecursionLimit => FailureKind::RecursionLimit { limit: MAX_CALL_DEPTH },
            Fault::ZeroStep { span } => FailureKind::ZeroStep { span },
        }
    }

    /// Runs a list of `target := value` assignments, each value checked to be finite.
    fn assign_all(
        &mut self,
        which: fn(&Self) -> &[(Slot, Code)],
        mem: &mut Mem,
        site: impl Fn(usize) -> FailureSite,
    ) -> Result<(), EvalFailure> {
        for k in 0..which(self).len() {
            let (slot, code) = which(self)[k];
            let value = self.m.eval(code, mem).map_err(|f| EvalFailure {
                time: mem.t,
                kind: self.fault(f),
                site: site(k),
            })?;
            if !value.is_finite() {
                return Err(EvalFailure {
                    time: mem.t,
                    kind: FailureKind::NotFinite { value },
                    site: site(k),
                });
            }
            mem.write(slot, value);
        }
        Ok(())
    }

    /// Computes the dependent parameters and constants into `work` from the parameters `p`,
    /// then checks the parameter conditions of the plan.
    pub fn parameters(&mut self, p: &[f64], work: &mut [f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        self.check(
            f64::NAN,
            &[("p", layout.params, p.len()), ("work", layout.work, work.len())],
        )?;
        let mut mem = Mem {
            t: f64::NAN,
            x: &[],
            p,
            dx: &mut [],
            work,
        };
        let program = self.program;
        let parameter = |k: usize| FailureSite::Parameter {
            var: program.parameter_program()[k].var,
        };
        let condition = |k: usize| FailureSite::Condition {
            eq: program.conditions()[k].eq,
        };
        let failure = |kind: FailureKind, site: FailureSite| EvalFailure {
            time: f64::NAN,
            kind,
            site,
        };
        if let Some(native) = self.native.clone()
            && let Some(segment) = native.parameters
        {
            // The parameters are the segment's first roots, the conditions its results.
            let n = program.parameter_program().len();
            let mut values = vec![0.0; program.conditions().len()];
            let outcome = mem.native(&native.module, segment, &mut values, self.m.iteration_limit);
            let failed_at = match &outcome {
                Err(JitError::Failed { site, .. }) => *site,
                Err(_) => 0,
                Ok(()) => usize::MAX,
            };
            let targets = program.parameter_program().iter().map(|a| a.target);
            let assigned = if failed_at < n { outcome.clone() } else { Ok(()) };
            native_assignments(targets, &mem, assigned).map_err(|(k, e)| failure(self.kind(e), parameter(k)))?;
            for (k, value) in values.iter().enumerate().take(failed_at.saturating_sub(n)) {
                check_condition(program.conditions()[k], *value).map_err(|kind| failure(kind, condition(k)))?;
            }
            let at = failed_at.saturating_sub(n);
            return outcome.map_err(|e| failure(self.kind(SolveError::from(e)), condition(at)));
        }
        self.assign_all(|s| &s.params, &mut mem, parameter)?;
        for k in 0..self.conditions.len() {
            let value = self
                .m
                .eval(self.conditions[k], &mut mem)
                .map_err(|f| failure(self.fault(f), condition(k)))?;
            check_condition(program.conditions()[k], value).map_err(|kind| failure(kind, condition(k)))?;
        }
        Ok(())
    }

    /// Computes the start values: states into `x`, algebraic and discrete variables into
    /// `work` (the first guesses of Newton iterations, and the values discrete variables keep).
    /// Needs the dependent parameters in `work` ([`Interpreter::parameters`]).
    pub fn start_values(&mut self, p: &[f64], work: &mut [f64], x: &mut [f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        self.check(
            f64::NAN,
            &[
                ("p", layout.params, p.len()),
                ("work", layout.work, work.len()),
                ("x", layout.states, x.len()),
            ],
        )?;
        let program = self.program;
        for k in 0..self.starts.len() {
            let (slot, code) = self.starts[k];
            let site = || FailureSite::Start {
                var: program.start_program()[k].var,
            };
            let mut mem = Mem {
                t: f64::NAN,
                x: &[],
                p,
                dx: &mut [],
                work,
            };
            let value = self.m.eval(code, &mut mem).map_err(|f| EvalFailure {
                time: f64::NAN,
                kind: self.fault(f),
                site: site(),
            })?;
            if !value.is_finite() {
                return Err(EvalFailure {
                    time: f64::NAN,
                    kind: FailureKind::NotFinite { value },
                    site: site(),
                });
            }
            match slot {
                Slot::State(i) => x[i as usize] = value,
                _ => mem.write(slot, value),
            }
        }
        self.dx_guess.fill(0.0);
        Ok(())
    }

    /// Computes `dx` and every algebraic variable in `work` at time `t` and states `x`.
    pub fn rhs(&mut self, t: f64, x: &[f64], p: &[f64], dx: &mut [f64], work: &mut [f64]) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        // Derivatives computed by Newton iterations start from their last solutions; `dx`
        // belongs to the caller and may hold anything.
        if self.finite_checks == FiniteChecks::Derivatives
            && self.evaluate_rhs(Mem { t, x, p, dx, work }, false).is_ok()
            && all_finite(dx)
        {
            self.remember_guesses(dx);
            return Ok(());
        }
        self.evaluate_rhs(Mem { t, x, p, dx, work }, true)?;
        self.remember_guesses(dx);
        Ok(())
    }

    /// Keeps the derivatives of a successful evaluation as the next starting guesses; only
    /// iterations use them, so a right-hand side of explicit assignments skips the copy.
    fn remember_guesses(&mut self, dx: &[f64]) {
        if self.iterates {
            self.dx_guess.copy_from_slice(dx);
        }
    }

    /// Sets when the right-hand side checks values for being finite.
    pub fn set_finite_checks(&mut self, checks: FiniteChecks) {
        self.finite_checks = checks;
    }

    /// Runs the right-hand side once from the last good derivatives; `each_assignment` checks
    /// every assigned value for being finite.
    fn evaluate_rhs(&mut self, mut mem: Mem, each_assignment: bool) -> Result<(), EvalFailure> {
        if self.iterates {
            mem.dx.copy_from_slice(&self.dx_guess);
        }
        let mut k = 0;
        while k < self.rhs.len() {
            match self.step(k, &mut mem, each_assignment) {
                Ok(next) => k = next,
                Err((at, e)) => return Err(self.failure(at, e, mem.t)),
            }
        }
        Ok(())
    }

    /// Runs right-hand-side instruction `k` (natively when native code for it is attached) and
    /// returns the index of the next one, or the failing instruction and what went wrong.
    fn step(&mut self, k: usize, mem: &mut Mem, each_assignment: bool) -> Result<usize, (usize, SolveError)> {
        let limit = self.m.iteration_limit;
        let native = self
            .native
            .as_ref()
            .and_then(|n| Some((&n.module, (*n.steps.get(k)?)?)));
        let failed_here = |e: SolveError| (k, e);
        match (native, &self.rhs[k]) {
            (Some((module, NativeStep::Run { segment, end })), _) => {
                let outcome = mem.native(module, segment, &mut [], limit);
                if outcome.is_ok()
                    && (!each_assignment
                        || self
                            .native
                            .as_ref()
                            .is_some_and(|n| n.written[segment].all_finite(mem.dx, mem.work)))
                {
                    return Ok(end);
                }
                let targets = self.program.rhs()[k..end].iter().map(|i| match i {
                    Instr::Assign { target, .. } => *target,
                    _ => Slot::Time,
                });
                native_assignments(targets, mem, outcome).map_err(|(j, e)| (k + j, e))?;
                Ok(end)
            }
            (
                Some((
                    module,
                    NativeStep::Newton1 {
                        residual, derivative, ..
                    },
                )),
                Step::Newton1 { target, .. },
            ) => {
                let guess = mem.read(*target);
                let mut problem = NativeScalar {
                    module,
                    mem,
                    target: *target,
                    residual,
                    derivative,
                    limit,
                };
                solve_scalar(guess, &mut problem).map_err(failed_here)?;
                Ok(k + 1)
            }
            (Some((module, NativeStep::Loop { evaluate, partials })), Step::Loop(l)) => {
                let mut problem = NativeLoop {
                    module,
                    tearing: &self.loop_code[*l].tearing,
                    mem,
                    evaluate,
                    partials,
                    limit,
                };
                self.loops[*l].run(&mut problem).map_err(failed_here)?;
                Ok(k + 1)
            }
            (Some((module, NativeStep::Algorithm { segment })), Step::Algorithm(a)) => {
                mem.native(module, segment, &mut [], limit)
                    .map_err(SolveError::from)
                    .and_then(|()| check_finite(&self.algorithms[*a].outputs, mem))
                    .map_err(failed_here)?;
                Ok(k + 1)
            }
            (_, Step::Assign { target, code }) => match self.m.eval(*code, mem) {
                Ok(v) if v.is_finite() || !each_assignment => {
                    mem.write(*target, v);
                    Ok(k + 1)
                }
                Ok(value) => Err((k, SolveError::Kind(FailureKind::NotFinite { value }))),
                Err(f) => Err((k, SolveError::Fault(f))),
            },
            (
                _,
                Step::Newton1 {
                    target,
                    residual,
                    derivative,
                },
            ) => {
                let guess = mem.read(*target);
                let mut problem = InterpretedScalar {
                    m: &mut self.m,
                    mem,
                    target: *target,
                    residual: *residual,
                    derivative: *derivative,
                };
                solve_scalar(guess, &mut problem).map_err(failed_here)?;
                Ok(k + 1)
            }
            (_, Step::Loop(l)) => {
                let mut problem = InterpretedLoop {
                    code: &self.loop_code[*l],
                    m: &mut self.m,
                    mem,
                };
                self.loops[*l].run(&mut problem).map_err(failed_here)?;
                Ok(k + 1)
            }
            (_, Step::Algorithm(a)) => {
                let a = *a;
                self.algorithm(a, mem).map_err(failed_here)?;
                Ok(k + 1)
            }
        }
    }

    /// Runs algorithm section `a`: resets, statements, and the check of its outputs.
    fn algorithm(&mut self, a: usize, mem: &mut Mem) -> Result<(), SolveError> {
        let code = &self.algorithms[a];
        for &(slot, reset) in &code.resets {
            let v = self.m.eval(reset, mem)?;
            mem.write(slot, v);
        }
        self.m.run(code.start, mem)?;
        check_finite(&code.outputs, mem)
    }

    /// The failure of right-hand-side step `k`.
    fn failure(&self, k: usize, e: SolveError, t: f64) -> EvalFailure {
        let kind = self.kind(e);
        let site = match &self.program.rhs()[k] {
            Instr::Assign { target, eq, .. } | Instr::Newton1 { target, eq, .. } => FailureSite::Equations {
                eqs: vec![*eq],
                unknowns: vec![*target],
            },
            Instr::Loop(b) => FailureSite::Equations {
                eqs: b.eqs.clone(),
                unknowns: b.unknowns.clone(),
            },
            Instr::Algorithm { index } => FailureSite::Algorithm { index: *index },
        };
        EvalFailure { time: t, kind, site }
    }

    /// Computes the variables alias elimination removed into their `work` slots; call after
    /// [`Interpreter::rhs`] with the same arrays.
    pub fn outputs(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let mut mem = Mem { t, x, p, dx, work };
        let program = self.program;
        let site = |k: usize| FailureSite::Output {
            var: program.outputs()[k].var,
        };
        if let Some(native) = &self.native
            && let Some(segment) = native.outputs
        {
            let outcome = mem.native(&native.module, segment, &mut [], self.m.iteration_limit);
            if outcome.is_ok() && native.written[segment].all_finite(mem.dx, mem.work) {
                return Ok(());
            }
            let targets = program.outputs().iter().map(|a| a.target);
            return native_assignments(targets, &mem, outcome).map_err(|(k, e)| EvalFailure {
                time: t,
                kind: self.kind(e),
                site: site(k),
            });
        }
        self.assign_all(|s| &s.outputs, &mut mem, site)
    }

    /// Evaluates the zero-crossing functions of the event program into `out`; call after
    /// [`Interpreter::rhs`] and [`Interpreter::outputs`] with the same arrays.
    pub fn surfaces(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
        out: &mut [f64],
    ) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        self.check(t, &[("surfaces", self.surfaces.len(), out.len())])?;
        let mut mem = Mem { t, x, p, dx, work };
        // Native code computes them all at once; a failure is located by the register code,
        // which reports it the same way.
        if let Some(native) = &self.native
            && let Some(segment) = native.surfaces
            && mem.native(&native.module, segment, out, self.m.iteration_limit).is_ok()
        {
            return Ok(());
        }
        for (k, value) in out.iter_mut().enumerate() {
            *value = self.m.eval(self.surfaces[k], &mut mem).map_err(|f| EvalFailure {
                time: t,
                kind: self.fault(f),
                site: FailureSite::Event {
                    span: self.program.events().surfaces[k].span,
                },
            })?;
        }
        Ok(())
    }

    /// The symbolic Jacobian at the point of the last right-hand-side evaluation (whose values
    /// `dx` and `work` hold): the program's partial derivatives evaluated (natively when
    /// compiled) and combined by the chain rule into `out`. `Ok(false)` when the program has no
    /// symbolic Jacobian or it is not defined at this point (a partial derivative that is not
    /// finite, a singular loop): the caller then uses difference quotients. The invariant
    /// values and extra expressions are written whenever the program has a Jacobian.
    #[allow(clippy::too_many_arguments)]
    pub fn jacobian(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
        out: JacobianOut,
    ) -> Result<bool, EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let Some(mut code) = self.jacobian.take() else {
            return Ok(false);
        };
        let evaluated = self.partial_values(&mut code, Mem { t, x, p, dx, work });
        let result = evaluated.map(|()| {
            let jac = self.program.jacobian().expect("the code was built from it");
            // The values of the invariants and of the extra expressions are there even where
            // the chain rule is not defined (a singular state choice shows in them).
            if let Some(g) = out.g {
                for (gi, row) in g.iter_mut().zip(&jac.invariants) {
                    *gi = code.values[row.value as usize];
                }
            }
            if let Some(extra) = out.extra {
                for (e, &k) in extra.iter_mut().zip(&jac.extra) {
                    *e = code.values[k as usize];
                }
            }
            let rate_x = out.rate_x.filter(|_| !jac.rates.is_empty());
            code.tangents
                .run(jac, &code.values, out.f_x, out.f_values, out.g_x, rate_x)
                .is_ok()
        });
        self.jacobian = Some(code);
        result
    }

    /// The values of the partial derivatives into `code.values`.
    fn partial_values(&mut self, code: &mut JacobianCode, mut mem: Mem) -> Result<(), EvalFailure> {
        if let Some(native) = &self.native
            && let Some(native) = native.partial_code(self.program)
            && let Some(segments) = &native.partials
        {
            let mut at = 0;
            let mut ok = true;
            for &segment in segments {
                let len = native.module.results(segment).unwrap_or(0);
                let out = &mut code.values[at..at + len];
                if mem
                    .native(&native.module, segment, out, self.m.iteration_limit)
                    .is_err()
                {
                    ok = false;
                    break;
                }
                at += len;
            }
            if ok {
                return Ok(());
            }
        }
        // The register code evaluates them when there is no native code, and locates a
        // failure of native code the same way.
        for (value, partial) in code.values.iter_mut().zip(&code.partials) {
            *value = self.m.eval(*partial, &mut mem).map_err(|f| EvalFailure {
                time: mem.t,
                kind: self.fault(f),
                site: FailureSite::Call,
            })?;
        }
        Ok(())
    }

    /// Evaluates zero-crossing function `k` alone (register code: one expression), at the point
    /// of the last evaluation.
    pub fn surface(
        &mut self,
        k: usize,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        let program = self.program;
        let Some(surface) = program.events().surfaces.get(k) else {
            return Err(EvalFailure {
                time: t,
                kind: FailureKind::Dimension {
                    array: "surfaces",
                    expected: self.surfaces.len(),
                    found: k,
                },
                site: FailureSite::Event {
                    span: program.model_span(),
                },
            });
        };
        self.event_value(surface.expr, surface.span, t, x, p, dx, work)
    }

    /// Evaluates one expression of the event program (a zero-crossing function, a
    /// when-condition, an action's value or an assertion's condition); `span` locates a failure.
    #[allow(clippy::too_many_arguments)]
    pub fn event_value(
        &mut self,
        e: ExprId,
        span: Span,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let failure = |kind| EvalFailure {
            time: t,
            kind,
            site: FailureSite::Event { span },
        };
        let Ok(k) = self.event_exprs.binary_search_by_key(&e, |(id, _)| *id) else {
            // Only a caller that passes an expression of another program gets here.
            return Err(failure(FailureKind::Dimension {
                array: "event program",
                expected: self.event_exprs.len(),
                found: 0,
            }));
        };
        let code = self.event_exprs[k].1;
        let mut mem = Mem { t, x, p, dx, work };
        self.m.eval(code, &mut mem).map_err(|f| failure(self.fault(f)))
    }

    /// What went wrong, as reported.
    fn kind(&self, e: SolveError) -> FailureKind {
        match e {
            SolveError::Fault(f) => self.fault(f),
            SolveError::Kind(kind) => kind,
        }
    }
}

/// Checks parameter condition `c` on the value of its expression.
fn check_condition(c: ParamCondition, value: f64) -> Result<(), FailureKind> {
    if c.condition.holds(value) {
        Ok(())
    } else {
        Err(FailureKind::Condition {
            condition: c.condition,
            value,
        })
    }
}

/// Checks that the values of `slots` are finite.
fn check_finite(slots: &[Slot], mem: &Mem) -> Result<(), SolveError> {
    match slots.iter().map(|s| mem.read(*s)).find(|v| !v.is_finite()) {
        Some(value) => Err(SolveError::Kind(FailureKind::NotFinite { value })),
        None => Ok(()),
    }
}

/// The outcome of native code that computed explicit assignments to `targets` in order, as the
/// interpreter reports it: the first assignment whose value is not finite fails (the
/// interpreter stops there, and native code does not check), unless the code failed before
/// it; a failure names its assignment (the root of the segment).
fn native_assignments(
    targets: impl Iterator<Item = Slot>,
    mem: &Mem,
    outcome: Result<(), JitError>,
) -> Result<(), (usize, SolveError)> {
    let failed_at = match &outcome {
        Ok(()) => usize::MAX,
        Err(JitError::Failed { site, .. }) => *site,
        Err(_) => 0,
    };
    for (j, target) in targets.enumerate().take(failed_at) {
        let value = mem.read(target);
        if !value.is_finite() {
            return Err((j, SolveError::Kind(FailureKind::NotFinite { value })));
        }
    }
    outcome.map_err(|e| (failed_at, SolveError::from(e)))
}

/// Whether every value is finite. `v * 0.0` is zero for a finite `v` and NaN for an infinite or
/// NaN one, so the values are finite exactly when the sum of these products is zero; eight
/// independent sums, without an early exit, vectorise to two instructions per pair of values
/// (half the work of testing each value's class).
fn all_finite(values: &[f64]) -> bool {
    // Short arrays (the derivatives of a small model, just stored by native code one value at
    // a time) are tested one value at a time: the sums load two values at once, and such a load
    // of two separately stored values waits for both stores to retire instead of being
    // forwarded from them, which made this check a sixth of a small model's evaluation.
    if values.len() < 64 {
        return values.iter().all(|v| v.is_finite());
    }
    let mut sums = [0.0f64; 8];
    let chunks = values.chunks_exact(8);
    let tail = chunks.remainder().iter().fold(0.0, |sum, v| sum + v * 0.0);
    for chunk in chunks {
        for (sum, v) in sums.iter_mut().zip(chunk) {
            *sum += v * 0.0;
        }
    }
    sums.iter().fold(tail, |total, sum| total + sum) == 0.0
}

/// The start values of the states with the default parameters (NaN when those are not valid):
/// tests and callers that want the model's own initial point read them here.
pub fn default_start_values(program: &ExecProgram) -> Result<Vec<f64>, Diagnostic> {
    let mut interpreter = Interpreter::new(program)?;
    let layout = program.layout();
    let mut work = vec![0.0; layout.work];
    let mut x = vec![f64::NAN; layout.states];
    let ok = interpreter.parameters(program.p0(), &mut work).is_ok()
        && interpreter.start_values(program.p0(), &mut work, &mut x).is_ok();
    if !ok {
        x.fill(f64::NAN);
    }
    Ok(x)
}

/// An interpreter bound to a parameter vector and its work array: what an integrator calls, and
/// where parameters are changed without rebuilding anything.
pub struct Instance<'p> {
    interpreter: Interpreter<'p>,
    p: Vec<f64>,
    work: Vec<f64>,
}

impl<'p> Instance<'p> {
    /// An instance with the default parameters and the start values as first guesses.
    pub fn new(program: &'p ExecProgram) -> Result<Instance<'p>, Diagnostic> {
        let mut interpreter = Interpreter::new(program)?;
        let layout = program.layout();
        let p = program.p0().to_vec();
        let mut work = vec![0.0; layout.work];
        let mut x = vec![0.0; layout.states];
        interpreter
            .parameters(&p, &mut work)
            .and_then(|()| interpreter.start_values(&p, &mut work, &mut x))
            .map_err(|f| program.failure_diagnostic(&f))?;
        Ok(Instance { interpreter, p, work })
    }

    pub fn program(&self) -> &'p ExecProgram {
        self.interpreter.program
    }

    /// Evaluates with native code from now on (see [`Interpreter::attach_native`]).
    pub fn attach_native(&mut self, native: Arc<NativeCode>) {
        self.interpreter.attach_native(native);
    }

    pub fn interpreter(&mut self) -> &mut Interpreter<'p> {
        &mut self.interpreter
    }

    /// The parameter vector.
    pub fn p(&self) -> &[f64] {
        &self.p
    }

    /// The work array as the last evaluation left it.
    pub fn work(&self) -> &[f64] {
        &self.work
    }

    /// Sets `work[k]`: how events change discrete variables and relation values, which no
    /// evaluation writes.
    pub fn set_work(&mut self, k: u32, value: f64) {
        if let Some(w) = self.work.get_mut(k as usize) {
            *w = value;
        }
    }

    /// The zero-crossing functions at `(t, x)` into `out`: evaluates the right-hand side and
    /// the outputs first, so `dx` and every variable are those of this point.
    pub fn surfaces(&mut self, t: f64, x: &[f64], dx: &mut [f64], out: &mut [f64]) -> Result<(), EvalFailure> {
        self.interpreter.rhs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.surfaces(t, x, &self.p, dx, &mut self.work, out)
    }

    /// The symbolic Jacobian at `(t, x)` (see [`Interpreter::jacobian`]): evaluates the
    /// right-hand side first, so `dx` holds `f(t, x)` afterwards.
    pub fn jacobian(&mut self, t: f64, x: &[f64], dx: &mut [f64], out: JacobianOut) -> Result<bool, EvalFailure> {
        if self.interpreter.jacobian.is_none() {
            return Ok(false);
        }
        self.interpreter.rhs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.jacobian(t, x, &self.p, dx, &mut self.work, out)
    }

    /// Whether the program has a symbolic Jacobian.
    pub fn has_jacobian(&self) -> bool {
        self.interpreter.jacobian.is_some()
    }

    /// Zero-crossing function `k` alone at `(t, x)` (after the right-hand side and the outputs).
    pub fn surface_at(&mut self, k: usize, t: f64, x: &[f64], dx: &mut [f64]) -> Result<f64, EvalFailure> {
        self.interpreter.rhs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.surface(k, t, x, &self.p, dx, &mut self.work)
    }

    /// One expression of the event program at the point of the last evaluation.
    pub fn event_value(
        &mut self,
        e: ExprId,
        span: Span,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        self.interpreter.event_value(e, span, t, x, &self.p, dx, &mut self.work)
    }

    /// Sets parameter `name` and recomputes the parameters that depend on it, checking the
    /// parameter conditions. On failure the previous value is kept.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), Diagnostic> {
        let program = self.program();
        let fallback = program.model_span();
        let Some(v) = program.lookup(name) else {
            let params = program
                .params()
                .iter()
                .map(|v| program.symbols().get(*v).name.as_str());
            let mut d = Diagnostic::error(
                "E0707",
                format!("there is no parameter `{name}`"),
                fallback,
                "in this model",
            );
            if let Some(s) = eqm_diag::did_you_mean(name, params) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d);
        };
        let var = program.symbols().get(v);
        let Some(Slot::Param(i)) = program.slot_of(v) else {
            let why = match var.kind {
                eqm_compile::dae::VarKind::Parameter => match var.binding {
                    Some(b) => format!(
                        "its value `{}` is computed from other parameters; change those instead",
                        program.expr_text(b)
                    ),
                    None => "its value is computed from other parameters".to_string(),
                },
                eqm_compile::dae::VarKind::Constant => "it is a constant".to_string(),
                _ => "it is not a parameter".to_string(),
            };
            return Err(Diagnostic::error(
                "E0707",
                format!("`{name}` cannot be set: {why}"),
                var.span,
                "declared here",
            ));
        };
        if !value.is_finite() {
            return Err(Diagnostic::error(
                "E0707",
                format!("`{name}` cannot be set to {value}: a parameter must be a finite number"),
                var.span,
                "declared here",
            ));
        }
        let old = self.p[i as usize];
        self.p[i as usize] = value;
        if let Err(failure) = self.interpreter.parameters(&self.p, &mut self.work) {
            self.p[i as usize] = old;
            // The old values passed before, so they pass again and restore `work`.
            let _ = self.interpreter.parameters(&self.p, &mut self.work);
            return Err(program.failure_diagnostic(&failure));
        }
        Ok(())
    }

    /// The value of parameter `name` (independent or dependent).
    pub fn param(&self, name: &str) -> Option<f64> {
        let v = self.program().lookup(name)?;
        match self.program().slot_of(v)? {
            Slot::Param(i) => self.p.get(i as usize).copied(),
            Slot::Work(i) => self.work.get(i as usize).copied(),
            _ => None,
        }
    }

    /// The start values of the states with the current parameters; also resets the guesses of
    /// every iteration to the start values.
    pub fn start_values(&mut self) -> Result<Vec<f64>, EvalFailure> {
        let mut x = vec![0.0; self.program().layout().states];
        self.interpreter.start_values(&self.p, &mut self.work, &mut x)?;
        Ok(x)
    }

    /// Computes the variables alias elimination removed, after [`OdeRhs::rhs`] at the same point.
    pub fn outputs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)
    }

    /// The value of variable `name` at states `x`, as the last evaluation left it (removed
    /// variables after [`Instance::outputs`]).
    pub fn value(&self, name: &str, x: &[f64]) -> Option<f64> {
        let v = self.program().lookup(name)?;
        match self.program().slot_of(v)? {
            Slot::State(i) => x.get(i as usize).copied(),
            Slot::Param(i) => self.p.get(i as usize).copied(),
            Slot::Work(i) => self.work.get(i as usize).copied(),
            Slot::Der(_) | Slot::Time => None,
        }
    }
}

impl OdeRhs for Instance<'_> {
    fn dim(&self) -> usize {
        self.program().layout().states
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.interpreter.rhs(t, x, &self.p, dx, &mut self.work)
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    #[test]
    fn all_finite_finds_every_kind_of_non_finite_value_anywhere() {
        assert!(all_finite(&[]));
        for n in [1, 7, 8, 9, 16, 21] {
            let values: Vec<f64> = (0..n)
                .map(|k| [f64::MAX, -f64::MAX, 0.0, -0.0, 5e-324][k % 5])
                .collect();
            assert!(all_finite(&values), "{values:?}");
            for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
                for at in 0..n {
                    let mut v = values.clone();
                    v[at] = bad;
                    assert!(!all_finite(&v), "{v:?}");
                }
            }
        }
    }
}
