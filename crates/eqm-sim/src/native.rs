//! Native code for the instructions of an executable program, run by the interpreter.
//!
//! Input: an [`ExecProgram`]. Output: a [`NativeCode`]: one Cranelift module holding, for every
//! instruction of the right-hand side that the JIT can translate, the code the interpreter would
//! otherwise evaluate, and the same for the outputs program. Runs of explicit assignments
//! become one segment each; a scalar implicit equation becomes its residual and (when the
//! program has it) its symbolic derivative; an algebraic loop becomes one segment computing the
//! inner assignments and the residuals from the tearing values, and one computing every partial
//! derivative of its symbolic Jacobian; an algorithm section becomes its resets followed by its
//! statements; the outputs program becomes one segment, and the parameter program another,
//! with the expressions of the parameter conditions as its results. The Newton and LU iterations
//! stay in Rust (the interpreter's solvers, which see native residuals through the same traits
//! as register code), so both back ends take the same steps.
//!
//! When the JIT cannot translate an instruction (an event operator, for now), that instruction
//! stays with the interpreter and the rest is still native: compiling everything at once is
//! tried first, and only when that fails are the instructions compiled in halves until the
//! failing ones are found. This module does not run anything (the interpreter calls the code)
//! and does not compile the start-value program: it runs once per simulation and writes the
//! states, which compiled code only reads.

use eqm_compile::exec::{ExecProgram, Instr};
use eqm_ir::slot::Slot;
use eqm_jit::{self, CompiledModule, JitOptions, Segment};

/// How the interpreter runs one instruction natively; indices are segments of the module.
#[derive(Debug, Clone, Copy)]
pub(super) enum NativeStep {
    /// This instruction and the ones before `end` are explicit assignments computed by one
    /// segment, in order.
    Run { segment: usize, end: usize },
    /// A scalar implicit equation: segments with the residual and the derivative as result.
    Newton1 { residual: usize, derivative: Option<usize> },
    /// An algebraic loop: the segment from tearing values to residuals, the one computing
    /// the partial derivatives, and the one computing the untorn residuals (see
    /// [`eqm_compile::exec::LoopBlock::untorn`]) when the loop has them.
    Loop {
        evaluate: usize,
        partials: Option<usize>,
        untorn: Option<usize>,
    },
    /// An algorithm section: resets and statements.
    Algorithm { segment: usize },
}

/// The native code of a program's right-hand side and outputs; see the module documentation.
pub struct NativeCode {
    pub(super) module: CompiledModule,
    /// For each instruction of the right-hand side, how to run it natively, if at all; an
    /// instruction inside a run has no step of its own (the run's first one computes it).
    pub(super) steps: Vec<Option<NativeStep>>,
    /// Whether each instruction is computed by native code (runs included).
    native: Vec<bool>,
    /// The segment computing the outputs program, if it compiled.
    pub(super) outputs: Option<usize>,
    /// The segment computing the parameter program (its assignments) and the expressions of
    /// the parameter conditions (its results), if it compiled.
    pub(super) parameters: Option<usize>,
    /// The segment computing every zero-crossing function of the event program (its
    /// results), if it compiled.
    pub(super) surfaces: Option<usize>,
    /// The segments computing the values of the symbolic Jacobian's partial derivatives (their
    /// results, in order, at most [`PARTIALS_PER_SEGMENT`] each), in the module of
    /// [`NativeCode::partial_code`] only.
    pub(super) partials: Option<Vec<usize>>,
    /// That module: compiled on first use, so that a run that never needs a Jacobian (an
    /// explicit method, or `auto` on a problem that never turns stiff) never pays for it, and
    /// shared by every instance.
    partial_code: std::sync::OnceLock<Option<Box<NativeCode>>>,
    /// The slots each segment assigns, for the check for non-finite values after a run.
    pub(super) written: Vec<Written>,
}

/// Partial derivatives per segment: a segment's results live in one function, and functions
/// of about a thousand expressions keep Cranelift's compile time linear.
pub(super) const PARTIALS_PER_SEGMENT: usize = 1000;

/// The derivative and work slots a segment assigns. After a native run, every assigned value
/// must be finite; scanning these two index lists answers that without a branch on the kind of
/// each slot, which mispredicts on alternating kinds and used to cost more than the native run
/// itself. Only when something is not finite does the interpreter look for the first failing
/// assignment in program order, to report the same failure as the interpreter would.
#[derive(Debug, Clone, Default)]
pub(super) struct Written {
    der: Box<[u32]>,
    work: Box<[u32]>,
}

impl Written {
    fn of(targets: impl Iterator<Item = Slot>) -> Written {
        let (mut der, mut work) = (Vec::new(), Vec::new());
        for target in targets {
            match target {
                Slot::Der(i) => der.push(i),
                Slot::Work(i) => work.push(i),
                Slot::Time | Slot::State(_) | Slot::Param(_) => {}
            }
        }
        Written {
            der: der.into(),
            work: work.into(),
        }
    }

    /// Whether every assigned value is finite. Slots outside the arrays count as not finite,
    /// so that the precise check reports them.
    pub(super) fn all_finite(&self, dx: &[f64], work: &[f64]) -> bool {
        let finite = |values: &[f64], i: &u32| values.get(*i as usize).is_some_and(|v| v.is_finite());
        self.der.iter().all(|i| finite(dx, i)) && self.work.iter().all(|i| finite(work, i))
    }
}

/// A piece of the program compiled as a whole, or left to the interpreter as a whole.
#[derive(Debug, Clone, Copy)]
enum Unit {
    /// Right-hand-side instructions `begin..end`, explicit assignments.
    Run { begin: usize, end: usize },
    /// Right-hand-side instruction `k`, which is not an explicit assignment.
    Solve(usize),
    /// The outputs program.
    Outputs,
    /// The parameter program and the parameter conditions.
    Parameters,
    /// The zero-crossing functions of the event program.
    Surfaces,
    /// The partial derivatives of the symbolic Jacobian.
    Partials,
}

impl NativeCode {
    /// Compiles every instruction of `program` that the JIT can translate; `None` when none
    /// can (or the host has no JIT).
    pub fn compile(program: &ExecProgram) -> Option<NativeCode> {
        let n = program.rhs().len();
        let grouped = units(program, &vec![true; n], [true; 3]);
        if let Ok(code) = NativeCode::build(program, &grouped) {
            return Some(code);
        }
        // Something does not compile: find it, one instruction a unit.
        let singles: Vec<Unit> = (0..n)
            .map(|k| match program.rhs()[k] {
                Instr::Assign { .. } => Unit::Run { begin: k, end: k + 1 },
                _ => Unit::Solve(k),
            })
            .chain([Unit::Outputs, Unit::Parameters, Unit::Surfaces])
            .collect();
        let mut ok = vec![false; singles.len()];
        compilable(program, &singles, &mut ok);
        let surfaces = ok.pop().unwrap_or(false);
        let parameters = ok.pop().unwrap_or(false);
        let outputs = ok.pop().unwrap_or(false);
        let grouped = units(program, &ok, [outputs, parameters, surfaces]);
        if grouped.is_empty() {
            return None;
        }
        NativeCode::build(program, &grouped).ok()
    }

    /// Compiles `units` into one module.
    fn build(program: &ExecProgram, units: &[Unit]) -> Result<NativeCode, eqm_jit::JitError> {
        let n = program.rhs().len();
        let mut segments: Vec<Segment> = Vec::new();
        let mut steps = vec![None; n];
        let mut native = vec![false; n];
        let mut outputs = None;
        let mut parameters = None;
        let mut surfaces = None;
        let mut partials = None;
        let mut add = |segment: Segment| {
            segments.push(segment);
            segments.len() - 1
        };
        for unit in units {
            match *unit {
                Unit::Run { begin, end } => {
                    let assignments = program.rhs()[begin..end]
                        .iter()
                        .filter_map(|i| match i {
                            Instr::Assign { target, value, .. } => Some((*target, *value)),
                            _ => None,
                        })
                        .collect();
                    let segment = add(Segment::assignments(assignments));
                    steps[begin] = Some(NativeStep::Run { segment, end });
                    native[begin..end].fill(true);
                }
                Unit::Solve(k) => {
                    steps[k] = Some(solve_step(program, k, &mut add));
                    native[k] = true;
                }
                Unit::Outputs => {
                    let assignments = program.outputs().iter().map(|a| (a.target, a.value)).collect();
                    outputs = Some(add(Segment::assignments(assignments)));
                }
                Unit::Surfaces => {
                    surfaces = Some(add(Segment {
                        results: program.events().surfaces.iter().map(|s| s.expr).collect(),
                        ..Segment::default()
                    }));
                }
                Unit::Partials => {
                    let list = program.jacobian().map_or(&[][..], |j| &j.partials[..]);
                    partials = Some(
                        list.chunks(PARTIALS_PER_SEGMENT)
                            .map(|chunk| {
                                add(Segment {
                                    results: chunk.to_vec(),
                                    ..Segment::default()
                                })
                            })
                            .collect(),
                    );
                }
                Unit::Parameters => {
                    parameters = Some(add(Segment {
                        assignments: program
                            .parameter_program()
                            .iter()
                            .map(|a| (a.target, a.value))
                            .collect(),
                        statements: Vec::new(),
                        results: program.conditions().iter().map(|c| c.condition.expr()).collect(),
                    }));
                }
            }
        }
        let module = eqm_jit::compile(
            program.exprs(),
            program.functions(),
            program.externals(),
            &|v| program.slot_of(v),
            &segments,
            &JitOptions::default(),
        )?;
        // Parameters are computed without states and derivatives (there are none yet); code
        // that would read them stays with the interpreter, which reports the contract broken.
        let parameters = parameters.filter(|&s| module.lengths(s).is_some_and(|l| l.x == 0 && l.dx == 0));
        let written = segments
            .iter()
            .map(|s| Written::of(s.assignments.iter().map(|a| a.0)))
            .collect();
        Ok(NativeCode {
            module,
            steps,
            native,
            outputs,
            parameters,
            surfaces,
            partials,
            partial_code: std::sync::OnceLock::new(),
            written,
        })
    }

    /// Whether right-hand-side instruction `k` runs as native code.
    pub fn is_native(&self, k: usize) -> bool {
        self.native.get(k).copied().unwrap_or(false)
    }

    /// How many right-hand-side instructions run as native code.
    pub fn native_instructions(&self) -> usize {
        self.native.iter().filter(|n| **n).count()
    }

    /// Whether every right-hand-side instruction runs as native code.
    pub fn is_complete(&self) -> bool {
        self.native.iter().all(|n| *n)
    }

    /// The number of loops the JIT made of runs of repeated assignments (see
    /// [`JitOptions::reroll`]).
    pub fn loops(&self) -> usize {
        (0..self.module.segment_count())
            .filter_map(|k| self.module.loops(k))
            .sum()
    }

    /// Whether the outputs program runs as native code.
    pub fn outputs_native(&self) -> bool {
        self.outputs.is_some()
    }

    /// Whether the parameter program (and the parameter conditions) runs as native code.
    pub fn parameters_native(&self) -> bool {
        self.parameters.is_some()
    }

    /// Whether the zero-crossing functions run as native code.
    pub fn surfaces_native(&self) -> bool {
        self.surfaces.is_some()
    }

    /// The native code of the symbolic Jacobian's partial derivatives of `program` (the program
    /// this code was compiled from), compiled on the first call; `None` when the program has no
    /// Jacobian or its partials do not compile (the interpreter evaluates them then).
    pub(super) fn partial_code(&self, program: &ExecProgram) -> Option<&NativeCode> {
        self.partial_code
            .get_or_init(|| {
                let has = program.jacobian().is_some_and(|j| !j.partials.is_empty());
                has.then(|| NativeCode::build(program, &[Unit::Partials]).ok().map(Box::new))
                    .flatten()
            })
            .as_deref()
    }

    /// Whether the partial derivatives of the symbolic Jacobian of `program` run as native code
    /// (compiling them if that has not happened yet).
    pub fn partials_native(&self, program: &ExecProgram) -> bool {
        self.partial_code(program).is_some_and(|c| c.partials.is_some())
    }
}

/// The segments of instruction `k` (not an explicit assignment), added with `add`.
fn solve_step(program: &ExecProgram, k: usize, add: &mut dyn FnMut(Segment) -> usize) -> NativeStep {
    let results = |results: Vec<_>| Segment {
        results,
        ..Segment::default()
    };
    match &program.rhs()[k] {
        Instr::Newton1 {
            residual, derivative, ..
        } => NativeStep::Newton1 {
            residual: add(results(vec![*residual])),
            derivative: derivative.map(|d| add(results(vec![d]))),
        },
        Instr::Loop(b) => {
            let evaluate = add(Segment {
                assignments: b.inner.iter().map(|a| (a.target, a.value)).collect(),
                statements: Vec::new(),
                results: b.residuals.iter().map(|(r, _)| *r).collect(),
            });
            let partials = b.jacobian.as_ref().map(|j| {
                let all = j.inner.iter().chain(&j.residuals).flatten().map(|(_, e)| *e).collect();
                add(results(all))
            });
            let untorn = b.untorn.as_ref().map(|list| {
                let torn = b.residuals.iter().map(|(r, _)| *r);
                add(results(list.iter().copied().chain(torn).collect()))
            });
            NativeStep::Loop {
                evaluate,
                partials,
                untorn,
            }
        }
        Instr::Algorithm { index } => {
            let (resets, statements) = match program.algorithms().get(*index) {
                Some(a) => (
                    a.resets.iter().map(|r| (r.target, r.value)).collect::<Vec<(Slot, _)>>(),
                    a.statements.clone(),
                ),
                None => (Vec::new(), Vec::new()),
            };
            NativeStep::Algorithm {
                segment: add(Segment {
                    assignments: resets,
                    statements,
                    results: Vec::new(),
                }),
            }
        }
        Instr::Assign { target, value, .. } => NativeStep::Run {
            segment: add(Segment::assignments(vec![(*target, *value)])),
            end: k + 1,
        },
    }
}

/// The units for the instructions marked in `native`: maximal runs of explicit assignments,
/// and every other instruction alone; then the outputs program, the parameter program and the
/// zero-crossing functions where `[outputs, parameters, surfaces]` say so.
fn units(program: &ExecProgram, native: &[bool], [outputs, parameters, surfaces]: [bool; 3]) -> Vec<Unit> {
    let rhs = program.rhs();
    let mut units = Vec::new();
    let mut k = 0;
    while k < rhs.len() {
        if !native.get(k).copied().unwrap_or(false) {
            k += 1;
            continue;
        }
        if !matches!(rhs[k], Instr::Assign { .. }) {
            units.push(Unit::Solve(k));
            k += 1;
            continue;
        }
        let begin = k;
        while k < rhs.len() && native.get(k).copied().unwrap_or(false) && matches!(rhs[k], Instr::Assign { .. }) {
            k += 1;
        }
        units.push(Unit::Run { begin, end: k });
    }
    if outputs && !program.outputs().is_empty() {
        units.push(Unit::Outputs);
    }
    if parameters && !(program.parameter_program().is_empty() && program.conditions().is_empty()) {
        units.push(Unit::Parameters);
    }
    if surfaces && !program.events().surfaces.is_empty() {
        units.push(Unit::Surfaces);
    }
    units
}

/// Marks in `ok` which of `units` compile, compiling halves of a failing list until the
/// failing units are alone: a few compilations when few units fail.
fn compilable(program: &ExecProgram, units: &[Unit], ok: &mut [bool]) {
    if units.is_empty() {
        return;
    }
    if NativeCode::build(program, units).is_ok() {
        ok.fill(true);
        return;
    }
    if units.len() == 1 {
        return;
    }
    let half = units.len() / 2;
    let (left, right) = ok.split_at_mut(half);
    compilable(program, &units[..half], left);
    compilable(program, &units[half..], right);
}
