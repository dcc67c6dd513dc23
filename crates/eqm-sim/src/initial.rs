//! Consistent initial values: the initialization program solved at the start time, with the
//! relations, the values `edge` and `change` compare with, the delayed values and the discrete
//! variables made consistent with its solution.
//!
//! Input: the model's instance, the initialization program (none when the initialization is
//! the model's own program at the states' start values) and the run options. Output: the
//! initial states and the parameters with `fixed = false` the initialization determined (set
//! in the model's instance, whose discrete values and first guesses it also sets); or a
//! [`SimError`]. It does not integrate.

mod continuation;

use crate::instance::Instance;
use crate::interp::OdeRhs;
use crate::run::{RecoveryNote, RunOptions, SimError, instance_with_objects_of};
use eqm_compile::exec::ExecProgram;
use eqm_ir::expr::FxHashMap;
use eqm_ir::failure::EvalFailure;
use eqm_ir::slot::Slot;

/// The parameters with `fixed = false` the initialization determined, by name.
pub type Determined = Vec<(String, f64)>;

/// Consistent initial values: the states, the parameters the initialization determined, and
/// the blocks plain Newton did not solve with how they were solved.
pub type Initial = (Vec<f64>, Determined, Vec<RecoveryNote>);

/// Consistent initial states: the initialization program solved at the start time. The
/// model's own start values (from `model`) stand in for any state the initial system lacks.
/// The parameters with `fixed = false` it determined are set in `model` and returned, with the
/// blocks of the last pass that plain Newton did not solve.
///
/// Relations are frozen in both programs. Their first values are those at the start values
/// (so that an implicit equation through `abs` or an `if` keeps the root on the side of its
/// start value, and `if x <= 0 then 0 else log(x)` at `x = 0` takes the branch its relation
/// holds); the initialization is then solved again with the relations its solution gives (a
/// few passes at most) until they agree, so that the initial values and the relations are
/// consistent with each other.
///
/// Without an initialization program the initial system is the model's own: every state is
/// given by its start value and the model's program computes everything else from them. The
/// relations are then made consistent the same way, on the model's instance alone.
pub fn initial_states(
    model: &mut Instance<'_>,
    init: Option<&ExecProgram>,
    options: &RunOptions,
) -> Result<Initial, SimError> {
    initial_states_reported(model, init, options, &mut None)
}

/// [`initial_states`], with the path of the homotopy continuation (for `-v`) written to
/// `report` when the initialization's equations call `homotopy`: from the simplified problem
/// (λ = 0) to the actual one (λ = 1), see [`continuation`].
pub fn initial_states_reported(
    model: &mut Instance<'_>,
    init: Option<&ExecProgram>,
    options: &RunOptions,
    report: &mut Option<String>,
) -> Result<Initial, SimError> {
    match init {
        Some(init) => solve_initialization(model, init, options, report),
        None => at_start_values(model, options),
    }
}

/// How many times the initial values are computed again with the relations their last values
/// gave, at most.
const PASSES: usize = 10;

/// The initial values when the initial system is the model's own program with every state at
/// its start value (see [`initial_states`]).
fn at_start_values(model: &mut Instance<'_>, options: &RunOptions) -> Result<Initial, SimError> {
    let carried = held_previous(options);
    let start = options.start;
    let program = model.program();
    let surfaces = &program.events().surfaces;
    let mut d = vec![0.0; surfaces.len()];
    let mut dx = vec![0.0; program.layout().states];
    let x0 = model
        .start_values()
        .map_err(|f| failed_at_start(program, start, "the start values could not be computed", &f))?;
    // `initial()` holds here as in an initialization program of its own (not where a run
    // resumes after a switch of structure): `if not initial() then assert(...)` is not
    // checked with the start values, and an `edge(not initial())` rises right after.
    if let Some((slot, _)) = program.events().initial.filter(|_| carried.is_none()) {
        model.set_work(slot, 1.0);
    }
    if !surfaces.is_empty() && model.surfaces_at_start(start, &x0, &mut dx, &mut d).is_ok() {
        set_relations(model, None, &d);
    }
    settle_previous(model, None, carried.as_ref(), start, &x0, &mut dx);
    let mut recoveries = Vec::new();
    for pass in 0..PASSES {
        // As the initialization program would: a scalar equation Newton cannot solve from its
        // start value is searched for the nearest bracketed root, and the values found are the
        // first guesses of the run's own iterations.
        model.interpreter().set_bracketing(true);
        model.interpreter().clear_recoveries();
        let evaluated = model.rhs(start, &x0, &mut dx);
        model.interpreter().set_bracketing(false);
        evaluated.map_err(|f| unsolved_at_start(program, start, &f))?;
        recoveries = recovery_notes(program, model);
        if surfaces.is_empty() || pass + 1 == PASSES {
            break;
        }
        model
            .surfaces(start, &x0, &mut dx, &mut d)
            .map_err(|f| failed_at_start(program, start, "the relations at the start could not be evaluated", &f))?;
        let changed = set_relations(model, None, &d);
        settle_previous(model, None, carried.as_ref(), start, &x0, &mut dx);
        if !changed {
            break;
        }
    }
    leave_initial(model, carried.as_ref());
    // The run's own solves start counting afresh.
    model.interpreter().clear_recoveries();
    Ok((x0, Vec::new(), recoveries))
}

/// The work slot of the homotopy parameter λ in the initialization program, when its equations
/// call `homotopy`.
fn lambda_slot(init: &ExecProgram) -> Option<u32> {
    let v = init.symbols().lookup(eqm_compile::homotopy::LAMBDA)?;
    match init.slot_of(v)? {
        Slot::Work(k) => Some(k),
        _ => None,
    }
}

/// The initialization program solved with relations made consistent with its solution; the
/// path of the homotopy continuation, when it took one, goes to `report`.
fn solve_initialization(
    model: &mut Instance<'_>,
    init: &ExecProgram,
    options: &RunOptions,
    report: &mut Option<String>,
) -> Result<Initial, SimError> {
    let start = options.start;
    // The initialization works on the model's own external objects: what it makes them
    // remember (a table's first event interval) is what the simulation goes on from.
    let mut solver = instance_with_objects_of(init, options, Some(model))?;
    // The initialization's guesses are only start values: a scalar equation Newton cannot
    // solve from one is searched for the nearest bracketed root.
    solver.interpreter().set_bracketing(true);
    let program = model.program();
    // The initialization problem may come from another form of the model (the
    // dummy-derivative form of a model simulated in its embedding form): the link says which
    // of its variables is which.
    let link = eqm_compile::exec::InitLink::new(program, init);
    let in_init = |v: eqm_ir::expr::VarId| link.slot(v);
    let surfaces = &program.events().surfaces;
    let mut d = vec![0.0; surfaces.len()];
    let mut dx = vec![0.0; program.layout().states];
    // `initial()` holds during the initialization, but not in that of a run resumed after a
    // switch of structure: that run continues an event at a later time, where `initial()` is
    // false (a friction element's `initial() and w_rel > 0` would start it sliding again).
    let carried = held_previous(options);
    let carried = carried.as_ref();
    if let Some((_, v)) = program.events().initial
        && carried.is_none()
        && let Some(Slot::Work(k)) = in_init(v)
    {
        solver.set_work(k, 1.0);
    }
    let handed_over = handed_over(program, init, &link);
    // The start values (computed once: computing them again would reset the relations, which
    // are discrete variables, to theirs).
    let x_start = model
        .start_values()
        .map_err(|f| failed_at_start(program, start, "the start values could not be computed", &f))?;
    // The model's program computes the relations at the initialization's values below: it
    // must see `initial()` as the initialization does, or a condition such as
    // `change(x) and not initial()` rises there alone, and the relations and `pre` values it
    // leaves come from a when-statement that fired nowhere else.
    if let Some((slot, _)) = program.events().initial.filter(|_| carried.is_none()) {
        model.set_work(slot, 1.0);
    }
    // The relations at the start values; where they cannot be evaluated (a start value outside
    // a function's domain), the first pass starts from false ones.
    // (A delayed value is its expression there; where that cannot be evaluated, the run's own
    // first evaluation reports why.)
    let _ = model.delays_at_start(start, &x_start, &mut dx);
    if !surfaces.is_empty() && model.surfaces_at_start(start, &x_start, &mut dx, &mut d).is_ok() {
        set_relations(model, Some((&mut solver, &link)), &d);
    }
    settle_previous(model, Some((&mut solver, &link)), carried, start, &x_start, &mut dx);
    let lambda = lambda_slot(init);
    for pass in 0..PASSES {
        solver.interpreter().clear_recoveries();
        let mut evaluate = |solver: &mut Instance<'_>| {
            let mut none: [f64; 0] = [];
            solver.rhs(start, &[], &mut none)
        };
        match lambda {
            // The first pass follows the homotopy from the simplified problem; later passes
            // (with other relations) start from its solution at λ = 1.
            Some(lambda) if pass == 0 => {
                let path = continuation::follow(&mut solver, lambda, &mut evaluate).map_err(|lost| {
                    let message = format!(
                        "the homotopy continuation of the initialization could not go on from λ = {}",
                        eqm_diag::text::format_number(lost.lambda)
                    );
                    failed_at_start(init, start, &message, &lost.failure)
                })?;
                *report = Some(path.describe());
            }
            _ => evaluate(&mut solver).map_err(|f| unsolved_at_start(init, start, &f))?,
        }
        let (x0, determined) = take_solution(model, &solver, &link, &handed_over, &x_start)?;
        if surfaces.is_empty() || pass + 1 == PASSES {
            leave_initial(model, carried);
            repeated_equations_hold(init, &mut solver, start)?;
            return Ok((x0, determined, recovery_notes(init, &mut solver)));
        }
        let _ = model.delays_at_start(start, &x0, &mut dx);
        model
            .surfaces(start, &x0, &mut dx, &mut d)
            .map_err(|f| failed_at_start(program, start, "the relations at the start could not be evaluated", &f))?;
        let changed = set_relations(model, Some((&mut solver, &link)), &d);
        if !changed {
            // The model holds the initialization's values again (evaluating its relations
            // overwrote them with values computed as after the initialization), with the
            // `pre` values the event right after the initialization starts from.
            for &(k, j) in &handed_over {
                if let Some(value) = solver.work().get(j as usize) {
                    model.set_work(k, *value);
                }
            }
        }
        settle_previous(model, Some((&mut solver, &link)), carried, start, &x0, &mut dx);
        if !changed {
            leave_initial(model, carried);
            repeated_equations_hold(init, &mut solver, start)?;
            return Ok((x0, determined, recovery_notes(init, &mut solver)));
        }
    }
    unreachable!("the last pass returns")
}

/// Ends the initialization's `initial()` in the model's instance (set for a run's own
/// initialization, not a resumed one): it is false again, and so is its value before the event
/// right after the initialization, where it rises.
fn leave_initial(model: &mut Instance<'_>, carried: Option<&FxHashMap<&str, f64>>) {
    let program = model.program();
    let Some((slot, v)) = program.events().initial.filter(|_| carried.is_none()) else {
        return;
    };
    model.set_work(slot, 0.0);
    for p in &program.events().previous {
        if matches!(program.exprs().get(p.expr), eqm_ir::expr::Node::Var(w) if *w == v) {
            model.set_work(p.slot, 0.0);
        }
    }
}

/// Checks the assertions of the initialization program, which are the initial equations the
/// compiler dropped as repeating what the others determine: each must hold at the solution.
fn repeated_equations_hold(init: &ExecProgram, solver: &mut Instance<'_>, start: f64) -> Result<(), SimError> {
    for a in init.assertions() {
        let mut none: [f64; 0] = [];
        let holds = solver
            .event_value(a.condition, a.span, start, &[], &mut none)
            .map_err(|f| failed_at_start(init, start, "the initial values could not be computed", &f))?;
        if holds == 0.0 {
            let diagnostic = eqm_diag::Diagnostic::error(
                "E0705",
                format!("at t = {start} {}", a.message.written()),
                a.span,
                "this initial equation",
            );
            return Err(SimError::Failed {
                warnings: Vec::new(),
                time: start,
                message: "the initial values could not be computed".to_string(),
                diagnostic: Some(Box::new(diagnostic)),
            });
        }
    }
    Ok(())
}

/// What the initialization hands over besides the states, as (model slot, its slot): the
/// consistent values of the unknowns the program iterates on (the first guesses of its own
/// iterations: an implicit equation the initialization solved by bracketing would not converge
/// from the start value again), and the discrete variables with their `pre` values (their start
/// values, or what initial equations determined), and the parameters computed from those with
/// `fixed = false`, which the initialization solves for with them. Relations and the values
/// `edge` and `change` compare with are set in both programs already, except the `pre` values
/// of discrete-time variables that the initialization solved for (named by initial equations).
fn handed_over(program: &ExecProgram, init: &ExecProgram, link: &eqm_compile::exec::InitLink) -> Vec<(u32, u32)> {
    let mut pre_value = vec![false; program.symbols().len()];
    for p in &program.events().previous {
        if !p.settled_at_start || solved_by(init, p.var) {
            pre_value[p.var.0 as usize] = true;
        }
    }
    program
        .work_vars()
        .iter()
        .enumerate()
        .filter_map(|(k, v)| {
            let symbol = program.symbols().get(*v);
            // The compiler's own variables (`$relN`, `$preN`, ...) are set by the events; of
            // them only the `pre` values of discrete variables come from the initialization.
            let introduced = symbol.name.starts_with('$');
            let taken = match symbol.kind {
                eqm_compile::dae::VarKind::Algebraic => true,
                // A parameter computed from one with `fixed = false` is solved with it.
                eqm_compile::dae::VarKind::Parameter => solved_by(init, *v),
                eqm_compile::dae::VarKind::Discrete => !introduced || pre_value[v.0 as usize],
                _ => false,
            };
            match (taken, link.slot(*v)) {
                (true, Some(Slot::Work(j))) => Some((k as u32, j)),
                _ => None,
            }
        })
        .collect()
}

/// Whether the initialization program `init` solves for the model's variable `v` (an
/// unknown there, such as a `pre` value an initial equation names).
fn solved_by(init: &ExecProgram, v: eqm_ir::expr::VarId) -> bool {
    init.symbols().len() > v.0 as usize && init.symbols().get(v).kind == eqm_compile::dae::VarKind::Algebraic
}

/// The initial states and the parameters with `fixed = false` from the solution in `solver`
/// (the start values `x_start` for states the initial system lacks), with the values
/// `handed_over` and the parameters set in the model's instance.
fn take_solution(
    model: &mut Instance<'_>,
    solver: &Instance<'_>,
    link: &eqm_compile::exec::InitLink,
    handed_over: &[(u32, u32)],
    x_start: &[f64],
) -> Result<(Vec<f64>, Determined), SimError> {
    let program = model.program();
    let in_init = |v: eqm_ir::expr::VarId| link.slot(v);
    let mut x0 = x_start.to_vec();
    for (i, v) in program.states().iter().enumerate() {
        if let Some(Slot::Work(k)) = in_init(*v)
            && let Some(value) = solver.work().get(k as usize)
        {
            x0[i] = *value;
        }
    }
    for &(k, j) in handed_over {
        if let Some(value) = solver.work().get(j as usize) {
            model.set_work(k, *value);
        }
    }
    // Parameters with `fixed = false` are what the initialization found for them.
    let mut determined = Vec::new();
    for v in program.params() {
        if let Some(Slot::Work(j)) = in_init(*v)
            && let Some(value) = solver.work().get(j as usize)
        {
            let name = program.symbols().get(*v).name.clone();
            model
                .set_param(&name, *value)
                .map_err(|d| SimError::Model(Box::new(d)))?;
            determined.push((name, *value));
        }
    }
    Ok((x0, determined))
}

/// The blocks of `program` that plain Newton did not solve in `solver`'s evaluations since
/// its record was last cleared, with their unknowns by name.
fn recovery_notes(program: &ExecProgram, solver: &mut Instance<'_>) -> Vec<RecoveryNote> {
    solver
        .interpreter()
        .recoveries()
        .into_iter()
        .filter_map(|(site, recoveries)| match site {
            eqm_ir::failure::FailureSite::Equations { eqs, unknowns } => Some(RecoveryNote {
                equations: eqs.len(),
                unknowns: unknowns.iter().map(|s| program.slot_name(*s)).collect(),
                recoveries,
            }),
            _ => None,
        })
        .collect()
}

/// A failure of the initialization at time `start`, with the diagnostic of `program`'s failure.
fn failed_at_start(program: &ExecProgram, start: f64, message: &str, failure: &EvalFailure) -> SimError {
    SimError::Failed {
        warnings: Vec::new(),
        time: start,
        message: message.to_string(),
        diagnostic: Some(Box::new(program.failure_diagnostic(failure))),
    }
}

/// A failure of the initialization's own evaluation at time `start`: when a block of equations
/// was not solved, the diagnostic says which methods were tried, so that no one looks for a
/// method that was not.
fn unsolved_at_start(program: &ExecProgram, start: f64, failure: &EvalFailure) -> SimError {
    let mut error = failed_at_start(program, start, "the initial values could not be computed", failure);
    let unsolved = matches!(
        failure.kind,
        eqm_ir::failure::FailureKind::Singular | eqm_ir::failure::FailureKind::NoConvergence { .. }
    ) && matches!(failure.site, eqm_ir::failure::FailureSite::Equations { .. });
    if unsolved
        && let SimError::Failed {
            diagnostic: Some(d),
            message,
            ..
        } = &mut error
    {
        message.push_str(": no method reached a solution of the block from its start values");
        let note = "from the start values, Newton's method, the trust-region method (for a loop), the continuation on the start values (the fixed-point homotopy followed from λ = 0 to 1) and the Newton homotopy (and, for one equation, a search for a change of sign) were tried; none reached a solution";
        **d = d.as_ref().clone().with_note(note);
    }
    error
}

/// The initialization program's instance and where the model's variables are in it.
type InitSolver<'a, 'p> = Option<(&'a mut Instance<'p>, &'a eqm_compile::exec::InitLink)>;

/// Writes the relations that the surface values `d` give into the model's instance and the
/// initialization's, if there is one; true when one of the model's changed.
fn set_relations(model: &mut Instance<'_>, mut solver: InitSolver<'_, '_>, d: &[f64]) -> bool {
    let surfaces = &model.program().events().surfaces;
    let mut changed = false;
    for (surface, value) in surfaces.iter().zip(d) {
        let sign = crate::hybrid::sign_of(*value);
        for (&(slot, test), v) in surface.relations.iter().zip(&surface.relation_vars) {
            let holds = f64::from(u8::from(test.holds(sign)));
            if let Slot::Work(k) = slot
                && model.work().get(k as usize) != Some(&holds)
            {
                changed = true;
                model.set_work(k, holds);
            }
            if let Some((solver, link)) = solver.as_mut()
                && let Some(Slot::Work(k)) = link.slot(*v)
            {
                solver.set_work(k, holds);
            }
        }
    }
    changed
}

/// For a run resumed after a switch of structure, the `pre` values of the pass that switched by
/// the name of their variable; `None` for a run's own initialization.
fn held_previous(options: &RunOptions) -> Option<FxHashMap<&str, f64>> {
    options.watch.resume.then(|| {
        options
            .watch
            .previous
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
            .collect()
    })
}

/// Writes the values `edge`, `change` and the held integer parts compare with: those at the
/// initial point itself (a condition true at the start has no edge there), into the model's
/// instance and the initialization's, after the relations they read. `carried` holds, for a
/// run resumed after a switch of structure, the `pre` values of the pass that switched (`None`
/// for a run's own initialization).
///
/// A resumed run continues the event iteration of the switch at a later time than the start:
/// there `initial()` is false, and `pre(v)` of a discrete variable `v` is its value in the pass
/// that switched, which the new mode solves again with its own equations; not `v`'s value in the
/// new mode's initialization, which would let a friction element's `mode` keep whatever value
/// its equation repeats (`pre(mode) == Forward and w_rel > 0` gives Forward again for a clutch
/// that just locked), and not `v`'s value that pass computed with the previous mode's equations
/// (a `startForward` found with the acceleration of sliding backward).
fn settle_previous(
    model: &mut Instance<'_>,
    mut solver: InitSolver<'_, '_>,
    carried: Option<&FxHashMap<&str, f64>>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) {
    let program = model.program();
    let initial_var = program.events().initial.map(|(_, v)| v);
    for p in program.events().previous.iter().filter(|p| p.settled_at_start) {
        let held = match (carried, program.exprs().get(p.expr)) {
            (Some(carried), eqm_ir::expr::Node::Var(w)) if !p.left_limit && !p.integer_part => {
                carried.get(program.symbols().get(*w).name.as_str()).copied()
            }
            _ => None,
        };
        let value = match held {
            Some(value) => value,
            None => match model.event_value(p.expr, program.model_span(), t, x, dx) {
                Ok(value) => value,
                Err(_) => continue,
            },
        };
        model.set_work(p.slot, value);
        // `initial()` is true throughout the initialization, so it has no edge there: its
        // edge is the model's event right after the initialization.
        let is_initial = carried.is_none()
            && matches!(program.exprs().get(p.expr), eqm_ir::expr::Node::Var(w) if Some(*w) == initial_var);
        // A `pre` value the initialization solves for (one an initial equation names) is
        // its own unknown there.
        if let Some((solver, link)) = solver.as_mut()
            && let Some(Slot::Work(k)) = link.slot(p.var)
            && !solved_by(solver.program(), p.var)
        {
            solver.set_work(k, if is_initial { 1.0 } else { value });
        }
    }
}
