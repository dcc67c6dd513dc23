//! The virtual machine of the register code: registers, an explicit frame stack for user
//! functions (so that deep recursion cannot overflow the Rust stack) and the limits that make
//! every evaluation end.
//!
//! Input: the operations `code` compiled and the evaluation arrays. Output: the values of the
//! registers, or a [`Fault`] (`assert`, `terminate`) or a failure kind (a limit). It knows
//! nothing about equations, Newton iterations or native code.

use super::*;

/// A failure inside the register code, before the caller adds where it happened.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fault {
    Assert {
        message: u32,
        span: Span,
    },
    Terminate {
        message: u32,
        span: Span,
    },
    IterationLimit,
    RecursionLimit,
    ZeroStep {
        span: Span,
    },
    /// External function `external` (an index into the program's) stopped with
    /// `ModelicaError`; the message is the machine's `external_message`.
    External {
        external: u32,
    },
}

/// A function frame to return to.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame {
    pub(super) ret: u32,
    pub(super) base: u32,
    pub(super) frame: u32,
    pub(super) out: u32,
    pub(super) func: u32,
}

/// The evaluation arrays of one call.
pub(super) struct Mem<'a> {
    pub(super) t: f64,
    pub(super) x: &'a [f64],
    pub(super) p: &'a [f64],
    pub(super) dx: &'a mut [f64],
    pub(super) work: &'a mut [f64],
}

impl Mem<'_> {
    /// Runs `segment` of `module` on these arrays, its results into `out`.
    pub(super) fn native(
        &mut self,
        module: &CompiledModule,
        segment: usize,
        out: &mut [f64],
        limit: u64,
    ) -> Result<(), JitError> {
        module.run(
            segment,
            self.t,
            [self.x, self.p],
            [&mut *self.dx, &mut *self.work],
            out,
            limit,
        )
    }

    pub(super) fn read(&self, slot: Slot) -> f64 {
        match slot {
            Slot::Time => self.t,
            Slot::State(i) => self.x[i as usize],
            Slot::Param(i) => self.p[i as usize],
            Slot::Der(i) => self.dx[i as usize],
            Slot::Work(i) => self.work[i as usize],
        }
    }

    /// Writes a writable slot; the program never targets the others.
    pub(super) fn write(&mut self, slot: Slot, value: f64) {
        match slot {
            Slot::Der(i) => self.dx[i as usize] = value,
            Slot::Work(i) => self.work[i as usize] = value,
            Slot::Time | Slot::State(_) | Slot::Param(_) => {}
        }
    }
}

/// The register machine: code, registers and the call stack.
#[derive(Clone)]
pub(super) struct Machine {
    /// The code, read-only once compiled and shared by the instances of one program (a large
    /// model's code is the largest thing a run keeps).
    pub(super) ops: std::sync::Arc<Vec<Op>>,
    pub(super) functions: Vec<FunctionCode>,
    pub(super) messages: Vec<(eqm_ir::flat::Message, Vec<u32>)>,
    /// The values of the message of the assertion or `terminate` that failed last.
    pub(super) fault_values: Vec<f64>,
    /// Registers of the frame of model-level code.
    pub(super) model_frame: u32,
    pub(super) regs: Vec<f64>,
    pub(super) calls: Vec<Frame>,
    pub(super) iteration_limit: u64,
    /// The external objects of the run, shared by the clones of this machine.
    pub(super) objects: std::sync::Arc<std::sync::Mutex<super::objects::ObjectStore>>,
    /// The message of the external function that stopped the last evaluation.
    pub(super) external_message: Option<String>,
    /// The lines `Streams.print` in a function printed and the caller has not taken yet.
    pub(super) printed: Vec<String>,
}

impl Machine {
    /// Runs the code starting at `start` until its final `Return`.
    pub(super) fn run(&mut self, start: u32, mem: &mut Mem) -> Result<(), Fault> {
        let Machine {
            ops,
            functions,
            messages,
            fault_values,
            regs,
            calls,
            model_frame,
            iteration_limit,
            objects,
            external_message,
            printed,
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
                Op::External(call) => {
                    let ExternalCall {
                        symbol,
                        destructor,
                        external,
                        args,
                        dst,
                    } = &**call;
                    let values: Vec<f64> = args.iter().map(|a| regs[base + *a as usize]).collect();
                    match call_external_op(symbol, destructor.as_ref(), objects, &values) {
                        Ok(y) => regs[base + *dst as usize] = y,
                        Err(message) => {
                            *external_message = Some(message);
                            return Err(Fault::External { external: *external });
                        }
                    }
                }
                Op::Assert { cond, message, span } => {
                    if regs[base + *cond as usize] == 0.0 {
                        keep_values(fault_values, messages, *message, regs, base);
                        return Err(Fault::Assert {
                            message: *message,
                            span: *span,
                        });
                    }
                }
                Op::Terminate { message, span } => {
                    keep_values(fault_values, messages, *message, regs, base);
                    return Err(Fault::Terminate {
                        message: *message,
                        span: *span,
                    });
                }
                Op::Print { message } => {
                    keep_values(fault_values, messages, *message, regs, base);
                    let mut values = fault_values.iter().copied();
                    if let Some((m, _)) = messages.get(*message as usize) {
                        printed.push(m.render(&mut |_| values.next()));
                    }
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
    /// Runs a [`Shared`] unit once and writes its values into `out`, in order.
    pub(super) fn eval_shared(&mut self, shared: &Shared, mem: &mut Mem, out: &mut [f64]) -> Result<(), Fault> {
        self.run(shared.start, mem)?;
        for (o, value) in out.iter_mut().zip(&shared.values) {
            *o = match *value {
                SharedValue::Const(value) => value,
                SharedValue::Load(slot) => mem.read(slot),
                SharedValue::Register(r) => self.regs[r as usize],
            };
        }
        Ok(())
    }

    pub(super) fn eval(&mut self, code: Code, mem: &mut Mem) -> Result<f64, Fault> {
        match code {
            Code::Const(value) => Ok(value),
            Code::Load(slot) => Ok(mem.read(slot)),
            Code::Run { start, result } => {
                self.run(start, mem)?;
                Ok(self.regs[result as usize])
            }
        }
    }
}

/// Keeps the values the message `k` shows, read from the registers of the failing frame.
fn keep_values(kept: &mut Vec<f64>, messages: &[(eqm_ir::flat::Message, Vec<u32>)], k: u32, regs: &[f64], base: usize) {
    kept.clear();
    if let Some((_, values)) = messages.get(k as usize) {
        kept.extend(values.iter().map(|&r| regs[base + r as usize]));
    }
}

/// The value of an external call: a constructor's through the run's object store, which
/// creates the object once; any other function's by calling it. `Err` with the C code's
/// message when it stopped with `ModelicaError` (a wrapper then returns NaN).
fn call_external_op(
    symbol: &eqm_ir::external::LinkedSymbol,
    destructor: Option<&eqm_ir::external::LinkedSymbol>,
    objects: &std::sync::Mutex<super::objects::ObjectStore>,
    values: &[f64],
) -> Result<f64, String> {
    if let Some(destructor) = destructor {
        let mut store = objects.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        return store.construct(symbol, destructor, values);
    }
    let y =
        eqm_jit::call_external(symbol, values).expect("the number of arguments is checked when the call is compiled");
    match y.is_nan().then(|| eqm_jit::external_error(symbol)).flatten() {
        Some(message) => Err(message),
        None => Ok(y),
    }
}
