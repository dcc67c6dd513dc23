//! Building an interpreter: every expression, statement and user function of a program
//! compiled once to register code, the loops' solvers and every buffer an evaluation needs
//! allocated, so that evaluating allocates nothing.
//!
//! Input: an [`ExecProgram`]. Output: an [`Interpreter`] ready to evaluate, or a diagnostic when
//! something cannot be compiled. It evaluates nothing.

use super::*;

impl<'p> Interpreter<'p> {
    /// Compiles `program`. Fails only when the program breaks its own contract (an internal
    /// error), since [`ExecProgram::build`] checked every expression.
    pub fn new(program: &'p ExecProgram) -> Result<Interpreter<'p>, Diagnostic> {
        let mut c = Compiler::new(program);
        let internal = |what: String| internal_error(program, what);
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
        let rhs_code = rhs_steps(&mut c, program)?;
        let events = program.events();
        let surfaces = events
            .surfaces
            .iter()
            .map(|s| c.expression(s.expr))
            .collect::<CompileResult<Vec<_>>>()
            .map_err(internal)?;
        let event_exprs = event_expressions(program);
        let event_exprs = event_exprs
            .into_iter()
            .map(|e| Ok((e, c.expression(e)?)))
            .collect::<CompileResult<Vec<_>>>()
            .map_err(internal)?;
        let jacobian = match program.jacobian() {
            Some(j) => Some(Box::new(JacobianCode {
                partials: c.shared_expressions(&j.partials).map_err(internal)?,
                values: vec![0.0; j.partials.len()],
                tangents: jacobian::Tangents::new(j, program.layout().states, program.layout().work),
            })),
            None => None,
        };
        let model_frame = c.max.max(1);
        // Model-level code runs in frame 0; function frames start above it.
        let regs = vec![0.0; model_frame as usize + function_max as usize];
        Ok(Interpreter {
            bracketing: false,
            program,
            m: Machine {
                ops: {
                    // Moved, not copied: a copy would double the peak memory of a large model.
                    let mut ops = c.ops;
                    ops.shrink_to_fit();
                    std::sync::Arc::new(ops)
                },
                functions,
                messages: c.messages,
                fault_values: Vec::new(),
                model_frame,
                regs,
                calls: Vec::new(),
                iteration_limit: DEFAULT_ITERATION_LIMIT,
                objects: Default::default(),
                external_message: None,
                printed: Vec::new(),
            },
            code: Arc::new(Tables {
                params,
                conditions,
                starts,
                outputs,
                rhs: rhs_code.steps,
                algorithms,
                loop_code: rhs_code.loop_code,
                surfaces,
                event_exprs,
            }),
            scalar_sound: vec![SoundPoints::default(); rhs_code.scalars],
            loop_sound: vec![SoundPoints::default(); rhs_code.loops.len()],
            loops: rhs_code.loops,
            dx_guess: vec![0.0; program.layout().states],
            finite_checks: FiniteChecks::default(),
            iterates: program.rhs().iter().any(|i| !matches!(i, Instr::Assign { .. })),
            native: None,
            jacobian,
            start_overrides: vec![None; program.start_program().len()],
            given: Vec::new(),
            scalar_recoveries: Vec::new(),
        })
    }
}

/// The diagnostic of a program that breaks its own contract: `what` could not be compiled.
fn internal_error(program: &ExecProgram, what: String) -> Diagnostic {
    Diagnostic::error(
        "E0699",
        format!("internal error while compiling the executable program: {what}"),
        program.model_span(),
        "in this model",
    )
    .with_help("please report this model")
}

/// The right-hand side compiled: its steps in program order, and the solver and the code of
/// each algebraic loop (a step `Step::Loop(l)` runs `loops[l]` on `loop_code[l]`).
struct RhsCode {
    steps: Vec<Step>,
    loops: Vec<LoopSolver>,
    loop_code: Vec<LoopCode>,
    /// The number of scalar Newton blocks.
    scalars: usize,
}

/// Compiles the right-hand side of `program` (see [`RhsCode`]).
fn rhs_steps(c: &mut Compiler, program: &ExecProgram) -> Result<RhsCode, Diagnostic> {
    let internal = |what: String| internal_error(program, what);
    let mut rhs = Vec::with_capacity(program.rhs().len());
    let mut loops = Vec::new();
    let mut loop_code = Vec::new();
    let mut scalars = 0;
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
            } => {
                scalars += 1;
                Step::Newton1 {
                    target: *target,
                    residual: c.expression(*residual).map_err(internal)?,
                    derivative: derivative.map(|d| c.expression(d)).transpose().map_err(internal)?,
                    sound: scalars - 1,
                }
            }
            Instr::Algorithm { index } => Step::Algorithm(*index),
            Instr::Loop(b) => {
                if b.residuals.len() != b.tearing.len() {
                    return Err(internal("a loop with more residuals than tearing unknowns".to_string()));
                }
                let partials: Vec<ExprId> = match &b.jacobian {
                    Some(j) => j.inner.iter().chain(&j.residuals).flatten().map(|(_, e)| *e).collect(),
                    None => Vec::new(),
                };
                let partials = c.shared_expressions(&partials).map_err(internal)?;
                let mut codes = |list: &mut dyn Iterator<Item = ExprId>| -> Result<Vec<Code>, Diagnostic> {
                    list.map(|e| c.expression(e))
                        .collect::<CompileResult<_>>()
                        .map_err(internal)
                };
                let inner_codes = codes(&mut b.inner.iter().map(|a| a.value))?;
                let residuals = codes(&mut b.residuals.iter().map(|(r, _)| *r))?;
                let untorn = codes(&mut b.untorn.iter().flatten().copied())?;
                let nominal = b
                    .nominal_exprs
                    .iter()
                    .map(|&(j, e)| Ok((j, c.expression(e)?)))
                    .collect::<CompileResult<Vec<_>>>()
                    .map_err(internal)?;
                loop_code.push(LoopCode {
                    nominal,
                    tearing: b.tearing.clone(),
                    inner: b.inner.iter().map(|a| a.target).zip(inner_codes).collect(),
                    residuals,
                    partials,
                    untorn,
                });
                loops.push(LoopSolver::new(b));
                Step::Loop(loops.len() - 1)
            }
        });
    }
    Ok(RhsCode {
        steps: rhs,
        loops,
        loop_code,
        scalars,
    })
}

/// Every expression the event handling evaluates (surfaces, time events, samples, `pre`
/// values, delays, when-clauses and assertions), sorted and without repetitions.
fn event_expressions(program: &ExecProgram) -> Vec<ExprId> {
    let events = program.events();
    let mut event_exprs: Vec<ExprId> = events.surfaces.iter().map(|s| s.expr).collect();
    event_exprs.extend(events.surfaces.iter().filter_map(|s| s.time_event));
    for sample in &events.samples {
        event_exprs.push(sample.start);
        event_exprs.push(sample.interval);
    }
    event_exprs.extend(events.previous.iter().map(|p| p.expr));
    event_exprs.extend(
        events
            .delays
            .iter()
            .flat_map(|d| [d.expr, d.delay].into_iter().chain(d.max)),
    );
    event_exprs.extend(events.spatials.iter().flat_map(|s| [s.in0, s.in1, s.x, s.positive]));
    for w in &events.whens {
        for (condition, actions) in &w.branches {
            event_exprs.push(*condition);
            event_exprs.extend(actions.iter().flat_map(|a| a.exprs()));
        }
    }
    event_exprs.extend(
        program
            .assertions()
            .iter()
            .flat_map(|a| std::iter::once(a.condition).chain(a.message.exprs())),
    );
    event_exprs.sort_unstable();
    event_exprs.dedup();
    event_exprs
}
