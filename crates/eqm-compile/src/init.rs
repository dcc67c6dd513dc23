//! The initialization problem: which equations determine the initial values of every variable.
//!
//! Input: a [`Dae`] in the hybrid stage and its simulation [`Plan`]. Output: an [`InitPlan`]: the
//! initial system (the DAE's equations, the initial equations, `x = start` for every variable
//! with `fixed = true`, and `x = start` assumed for states the user left free; parameters with
//! `fixed = false` and no binding are unknowns of it) and its causal
//! [`Plan`], in which states are unknowns like the algebraic variables and the derivatives; or
//! diagnostics when the initial system cannot be made square. The initial system's DAE is in
//! algebraic form (each state an algebraic variable, each `der(x)` a variable named `der(x)`),
//! so that the executable program and the interpreter run it like any other system.
//!
//! States without a fixed start value are completed the way mature Modelica tools do: the
//! system is matched first without them, then `x = start` is offered for each free state in
//! variable order and kept when it determines something the other equations leave open (one
//! augmenting path each). Those assumptions are reported as a warning naming the states. When
//! equations remain unmatched, the initial system is over-determined, and the diagnostic names
//! the fixed start values and initial equations involved; when an unknown other than a state
//! remains undetermined, the diagnostic names it. This module does not solve anything
//! numerically: consistent values come from the simulation core running the plan.

mod discrete;
mod dummy_starts;
mod parameters;
mod whens;

use parameters::free_parameters;
pub(crate) use parameters::initialization_parameters;

pub use whens::drop_initial_from_active_branches;

use crate::dae::{Dae, Equation, Origin, VarKind};
use crate::events::Hybrid;
use crate::plan::{self, Block, Plan, TornLoop, Unknown};
use crate::structure;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, FxHashMap, VarId};
use eqm_ir::flat::ScalarType;
use eqm_structural::incidence::{EqIdx, VarIdx};
use eqm_structural::matching::{Augmenter, maximum_matching_masked, singular_parts};

/// The analysed initialization problem.
#[derive(Debug, Clone)]
pub struct InitPlan {
    pub system: InitSystem,
    /// Variables whose `fixed = true` start value is an equation of the system.
    pub fixed: Vec<VarId>,
    /// States whose start value had to be assumed fixed.
    pub assumed: Vec<VarId>,
}

/// What the initial values are computed from.
#[derive(Debug, Clone)]
pub enum InitSystem {
    /// The initial system's own algebraic DAE and causal plan: its equations are the model's
    /// equations followed by the initial equations and the start-value equations; every state
    /// and derivative is an algebraic variable of it (`VarId`s of the model's variables are
    /// kept).
    Own { dae: Box<Dae<Hybrid>>, plan: Plan },
    /// The simulation system itself: every state is given by a start value that depends on
    /// parameters only and nothing else is given, so the initial values are the start values
    /// of the states and what the simulation's own plan computes from them. No second system
    /// is built (for a large model it would double the compiler's memory).
    Simulation {
        /// Each state's start value (simplified, in the model's arena) with the number of its
        /// equation in the initial system: after the model's equations, fixed ones first.
        starts: Vec<StartValue>,
        /// The unknowns the initial system has: the simulation's and every state.
        unknowns: usize,
    },
}

/// The start value of a state as an equation of an initial system that is the simulation
/// system.
#[derive(Debug, Clone, Copy)]
pub struct StartValue {
    pub var: VarId,
    pub eq: usize,
    pub value: ExprId,
}

impl InitPlan {
    /// The initial system's own DAE, unless it is the simulation system.
    pub fn dae(&self) -> Option<&Dae<Hybrid>> {
        match &self.system {
            InitSystem::Own { dae, .. } => Some(dae),
            InitSystem::Simulation { .. } => None,
        }
    }

    /// The initial system's own plan, unless it is the simulation system.
    pub fn plan(&self) -> Option<&Plan> {
        match &self.system {
            InitSystem::Own { plan, .. } => Some(plan),
            InitSystem::Simulation { .. } => None,
        }
    }
}

/// Builds and analyses the initial system of `dae`. Warnings (assumed start values) are
/// returned with the plan. With `shared` the initial system is the simulation system itself
/// when it can be ([`InitSystem::Simulation`]; the start values are added to `dae`'s arena);
/// without it (the model is simulated in another form than `dae`'s, whose states differ) it
/// always has a DAE of its own.
pub fn analyze(
    dae: &mut Dae<Hybrid>,
    simulation: &Plan,
    shared: bool,
) -> Result<(InitPlan, Vec<Diagnostic>), Vec<Diagnostic>> {
    if shared && let Some(shared) = shared_with_simulation(dae, simulation) {
        return Ok(shared);
    }
    own_system(dae, Some(simulation))
}

/// Builds and analyses the initial system of `blended`, the DAE whose `homotopy` calls blend
/// their arguments with the variable `$homotopy` (see [`crate::homotopy::split`]). Its system
/// is always its own: the simulation's equations hold the actual expressions only, so neither
/// the simulation system nor its plan can stand for it.
pub fn analyze_with_homotopy(blended: &mut Dae<Hybrid>) -> Result<(InitPlan, Vec<Diagnostic>), Vec<Diagnostic>> {
    own_system(blended, None)
}

/// The initial system of `dae` as a DAE of its own, analysed; with the `simulation` plan to
/// reuse when the initial system is the simulation system with every state given.
///
/// A variable that when-equations assign holds its start value during the initialization
/// unless an initial equation names it. When that makes the system over-determined (an
/// initial equation determines it through the model's equations: `y = 4` with `y = x^2`), the
/// system is analysed once more with the `pre` value of every such variable without
/// `fixed = true` an unknown, as Modelica's section 8.6 has it, each offered its start value
/// only where nothing else determines it.
fn own_system(
    dae: &mut Dae<Hybrid>,
    simulation: Option<&Plan>,
) -> Result<(InitPlan, Vec<Diagnostic>), Vec<Diagnostic>> {
    match own_system_with(dae, simulation, false) {
        Err(diagnostics) if diagnostics.iter().any(|d| d.code == "E0504") => {
            own_system_with(dae, None, true).map_err(|_| diagnostics)
        }
        result => result,
    }
}

/// [`own_system`], with every held when-assigned variable free when `free_held`.
fn own_system_with(
    dae: &mut Dae<Hybrid>,
    simulation: Option<&Plan>,
    free_held: bool,
) -> Result<(InitPlan, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (mut init, has_delays) = initialization_dae(dae);
    // The when-clauses on `initial()` are active during the initialization: their equations
    // join the model's.
    let active = whens::add_active_equations(dae, &mut init);
    let has_active_whens = active.iter().any(|&a| a);
    let n_model = init.equations.len();
    let has_free_parameters = free_parameters(&mut init);
    init.equations.extend(init.initial_equations.iter().cloned());
    let free_pre = discrete::discrete_unknowns(dae, &mut init, &active, free_held);
    let n_given = init.equations.len();

    let (fixed, candidates, n_fixed) = start_equations(&dae.kinds, &mut init, &active);
    // The `pre` values made unknowns are completed after the states, as Modelica's tools do:
    // `pre(v) = v.start` where nothing else determines them.
    for &p in &free_pre {
        let equation = start_equation(&mut init, p, Origin::AssumedStart { var: p });
        init.equations.push(equation);
    }
    // (Not with delays: the simulation's blocks read the delayed values, which the
    // initialization replaces by their expressions.)
    // (Nor with parameters the initialization solves for: the simulation's plan computes
    // none of them, so one that nothing determines would keep its start value unreported.)
    // (Nor with when-clauses active at the initialization: their equations are not the
    // simulation's.)
    if let Some(simulation) = simulation.filter(|_| !has_delays && !has_free_parameters && !has_active_whens)
        && is_simulation_system_with_starts(&init, n_model, &fixed)
    {
        // Every state is given and nothing else is: the simulation plan already causalises
        // the rest, so it is reused instead of solving and matching the system a second time.
        let plan = reuse_simulation_plan(&mut init, n_model, simulation);
        let warnings = assumed_warning(&init, &candidates).into_iter().collect();
        return Ok((
            InitPlan {
                system: InitSystem::Own {
                    dae: Box::new(init),
                    plan,
                },
                fixed,
                assumed: candidates,
            },
            warnings,
        ));
    }
    let unknowns = initial_unknowns(&init);
    let offered: Vec<VarId> = candidates.iter().chain(&free_pre).copied().collect();
    let dummy = dummy_starts::dummy_fixed_starts(dae, &init, n_given..n_fixed);
    let (mut assumed, keep, repeated) =
        choose_assumed_starts(&mut init, &unknowns, &offered, &dummy, (n_model, n_given, n_fixed))?;
    // A dropped fixed start value of a dummy state is no equation of the system.
    let fixed: Vec<VarId> = fixed
        .iter()
        .enumerate()
        .filter(|&(k, _)| keep.get(n_given + k) != Some(&false))
        .map(|(_, &v)| v)
        .collect();
    // The default `pre(v) = v.start` of a discrete variable is Modelica's own rule, not an
    // assumption to warn about; only states are reported.
    let mut is_state = vec![false; init.kinds.len()];
    for v in &candidates {
        is_state[v.0 as usize] = true;
    }
    assumed.retain(|v| is_state[v.0 as usize]);
    init.retain_equations(&keep);
    let (unknowns, _) = algebraic_form(&mut init);
    let plan = plan::analyze_system(&mut init, unknowns, true)?;
    let mut warnings: Vec<Diagnostic> = assumed_warning(&init, &assumed).into_iter().collect();
    warnings.extend(repeated);
    Ok((
        InitPlan {
            system: InitSystem::Own {
                dae: Box::new(init),
                plan,
            },
            fixed,
            assumed,
        },
        warnings,
    ))
}

/// The DAE of the initialization problem, before its start equations: the model's without
/// when-clauses, invariants and state-choice check, with `delay(e, d)` replaced by `e`; and
/// whether there were delays.
fn initialization_dae(dae: &Dae<Hybrid>) -> (Dae<Hybrid>, bool) {
    let mut init = dae.clone();
    // The initialization runs no events: its relation variables are set from the model's
    // surfaces by the simulation (`sim::initial_states`), and when-clauses do not fire.
    init.flat.whens.clear();
    // Invariants and the state-choice check belong to the simulation, which evaluates them;
    // so do the assertions of the model's equations. The initial system's own assertions are
    // the checks of repeated initial equations.
    init.flat.invariants.clear();
    init.flat.assertions.clear();
    init.stage = Hybrid::default();
    // Before the start time plus its delay, `delay(e, d)` is `e` at the start time: in the
    // initialization it is `e` itself.
    let mut delayed: FxHashMap<ExprId, ExprId> = dae
        .stage
        .events
        .delays
        .iter()
        .map(|d| (init.flat.exprs.var(d.var), d.expr))
        .collect();
    // At the start a profile of `spatialDistribution` has not moved: its values at 0 and at 1
    // are its first and last initial values.
    for s in &dae.stage.events.spatials {
        let first = init.flat.exprs.real(s.values.first().copied().unwrap_or(0.0));
        let last = init.flat.exprs.real(s.values.last().copied().unwrap_or(0.0));
        for (k, &v) in s.vars.iter().enumerate() {
            let value = if k % 2 == 0 { first } else { last };
            delayed.insert(init.flat.exprs.var(v), value);
        }
    }
    init.substitute_in_equations(&delayed);
    init.substitute_in_algorithms(&delayed);
    // An integer part held between events (`integer(delay(x, d))`) whose argument reads a
    // delayed value is an unknown of the initialization, the integer part of its expression
    // there: the simulation cannot settle it before the initialization (the delayed value is
    // not known before the values it delays are), and takes the value found.
    for p in dae.stage.events.previous.iter().filter(|p| p.integer_part) {
        let at_start = eqm_ir::symbolic::substitute(&mut init.flat.exprs, p.expr, &|_, id| delayed.get(&id).copied());
        if at_start != p.expr {
            init.kinds[p.var.0 as usize] = VarKind::Algebraic;
            let lhs = init.flat.exprs.var(p.var);
            init.equations.push(Equation {
                lhs,
                rhs: at_start,
                origin: Origin::IntegerPartAtStart { var: p.var },
                span: p.span,
            });
        }
    }
    (init, !delayed.is_empty())
}

/// Appends the equations of the start values: one per fixed start value, then one per start
/// value of a free state (the candidates of assumed starts). Returns the variables of both and
/// the number of equations before the candidates'. `model_kinds` are the kinds of the model's
/// variables, before the initialization made some discrete ones unknowns.
fn start_equations(
    model_kinds: &[VarKind],
    init: &mut Dae<Hybrid>,
    active: &[bool],
) -> (Vec<VarId>, Vec<VarId>, usize) {
    // Fixed start values are equations; the start values of free states are candidates.
    let mut fixed = Vec::new();
    let mut candidates: Vec<VarId> = Vec::new();
    for i in 0..init.kinds.len() {
        let v = VarId(i as u32);
        if init.eliminated[i].is_some() || !matches!(init.kinds[i], VarKind::State | VarKind::Algebraic) {
            continue;
        }
        let var = init.flat.var(v);
        let a = &var.attributes;
        // An Integer or Boolean defined by an ordinary equation is a discrete-time variable:
        // its fixed start value is the value of `pre` at the start (Modelica,
        // `pre(v) = v.start`), which the variable of `pre(v)` starts with already, not an
        // equation on `v`, which its own equation determines.
        let discrete_time = matches!(var.ty, ScalarType::Integer | ScalarType::Boolean);
        if a.fixed == Some(true) && model_kinds.get(i) == Some(&VarKind::Algebraic) && discrete_time {
            continue;
        }
        // A variable a when-clause active at the initialization assigns is determined by that
        // clause; its fixed start value is the one of its `pre` value (Modelica's rule for
        // discrete variables), which holds it already.
        if a.fixed == Some(true) && model_kinds.get(i) == Some(&VarKind::Discrete) && active.get(i) == Some(&true) {
            continue;
        }
        if a.fixed == Some(true) {
            fixed.push(v);
            let equation = start_equation(init, v, Origin::FixedStart { var: v });
            init.equations.push(equation);
        } else if init.kinds[i] == VarKind::State {
            candidates.push(v);
        }
    }
    let n_fixed = init.equations.len();
    for &v in &candidates {
        let equation = start_equation(init, v, Origin::AssumedStart { var: v });
        init.equations.push(equation);
    }
    (fixed, candidates, n_fixed)
}

/// The unknowns of the initialization problem: every state and its derivative, every
/// algebraic variable, every discrete variable an algorithm section computes.
fn initial_unknowns(init: &Dae<Hybrid>) -> Vec<Unknown> {
    let mut unknowns = Vec::new();
    let computed = init.discrete_algorithm_outputs(true);
    for i in 0..init.kinds.len() {
        let v = VarId(i as u32);
        if init.eliminated[i].is_some() {
            continue;
        }
        match init.kinds[i] {
            VarKind::Algebraic => unknowns.push(Unknown::Var(v)),
            VarKind::Discrete if computed.get(i) == Some(&true) => unknowns.push(Unknown::Var(v)),
            VarKind::State => {
                unknowns.push(Unknown::Var(v));
                unknowns.push(Unknown::Der(v));
            }
            _ => {}
        }
    }
    unknowns
}

/// The start values assumed, whether each equation is kept, and the warnings about repeated
/// initial equations (see [`choose_assumed_starts`]).
type Completion = (Vec<VarId>, Vec<bool>, Vec<Diagnostic>);

/// Matches the given equations first, then as many candidate start equations as the system
/// can take: the start values of `candidates` that are assumed and, per equation, whether it is
/// kept. `counts` are the numbers of model equations, given equations and equations before the
/// candidates'. An over- or under-determined system is an error, except for initial equations
/// on discrete values that repeat what the others determine (see [`discrete::repeated_discrete`]): those
/// are dropped and checked after the initialization, with the warnings returned last. The
/// fixed start values of dummy states (`dummy`, per equation) are offered after the other given
/// equations and before the candidates; those the system cannot take are dropped and checked
/// the same way (see [`dummy_starts`]).
fn choose_assumed_starts(
    init: &mut Dae<Hybrid>,
    unknowns: &[Unknown],
    candidates: &[VarId],
    dummy: &[bool],
    counts: (usize, usize, usize),
) -> Result<Completion, Vec<Diagnostic>> {
    let (n_model, n_given, n_fixed) = counts;
    let leaves: Vec<ExprId> = unknowns
        .iter()
        .map(|&u| structure::unknown_leaf(&mut init.flat.exprs, u))
        .collect();
    let index_of = structure::LeafIndex::new(&leaves);
    let n_rows_eqs = init.equations.len();
    let graph = structure::structure_graph(init, &index_of, unknowns.len(), true).map_err(|d| vec![d])?;
    let is_candidate = |e: usize| (n_fixed..n_rows_eqs).contains(&e) || dummy.get(e) == Some(&true);
    let given_mask: Vec<bool> = (0..graph.n_eqs()).map(|e| !is_candidate(e)).collect();
    let mut matching = maximum_matching_masked(&graph, Some(&given_mask), None);

    // Over-determined: some given equation is left without an unknown of its own.
    let unmatched_given: Vec<usize> = (0..graph.n_eqs())
        .filter(|&e| !is_candidate(e) && matching.var_of(EqIdx(e as u32)).is_none())
        .collect();
    let mut keep = vec![true; init.equations.len()];
    let repeated = discrete::repeated_discrete(init, &graph, unknowns, n_model, &unmatched_given);
    if repeated.len() != unmatched_given.len() {
        return Err(vec![over_determined(
            init,
            (&graph, &matching, &index_of),
            n_model,
            n_given,
            unknowns,
        )]);
    }
    let mut warnings: Vec<Diagnostic> = repeated
        .iter()
        .map(|&e| discrete::repeated_equation_check(init, e))
        .collect();
    for &e in &repeated {
        keep[e] = false;
    }
    let mut search = Augmenter::new();
    let mut dropped = Vec::new();
    for e in (0..dummy.len()).filter(|&e| dummy[e]) {
        if !search.augment(&graph, &mut matching, EqIdx(e as u32), |_| true) {
            keep[e] = false;
            dropped.push(e);
        }
    }
    warnings.extend(dummy_starts::dropped_starts(init, &dropped));
    let mut assumed = Vec::new();
    for (k, &v) in candidates.iter().enumerate() {
        let e = n_fixed + k;
        if search.augment(&graph, &mut matching, EqIdx(e as u32), |_| true) {
            assumed.push(v);
        } else {
            keep[e] = false;
        }
    }
    let undetermined: Vec<usize> = (0..unknowns.len())
        .filter(|&u| matching.eq_of(VarIdx(u as u32)).is_none())
        .collect();
    if !undetermined.is_empty() {
        let undetermined = free_parameters_left_open(init, &graph, &matching, unknowns, undetermined);
        return Err(vec![under_determined(init, unknowns, &undetermined)]);
    }
    Ok((assumed, keep, warnings))
}

/// The initialization when its system is the simulation system with every state at a start
/// value that depends on parameters only ([`InitSystem::Simulation`]); `None` when anything
/// else takes part: initial equations or algorithms, fixed start values of algebraic
/// variables, parameters with `fixed = false`, delays (the initialization reads a delayed value
/// as its expression), or a start value that depends on a variable. The same conditions as
/// [`is_simulation_system_with_starts`], checked on the model's DAE without copying it.
fn shared_with_simulation(dae: &mut Dae<Hybrid>, simulation: &Plan) -> Option<(InitPlan, Vec<Diagnostic>)> {
    if !dae.initial_equations.is_empty()
        || dae.flat.algorithms.iter().any(|a| a.initial)
        || whens::any_active(dae)
        || !dae.stage.events.delays.is_empty()
        || !dae.stage.events.spatials.is_empty()
    {
        return None;
    }
    let mut fixed = Vec::new();
    let mut candidates = Vec::new();
    for (i, kind) in dae.kinds.iter().enumerate() {
        let v = VarId(i as u32);
        let attributes = &dae.flat.var(v).attributes;
        match kind {
            VarKind::Parameter if attributes.fixed == Some(false) => return None,
            _ if dae.eliminated[i].is_some() => {}
            VarKind::Algebraic if attributes.fixed == Some(true) => return None,
            VarKind::State if attributes.fixed == Some(true) => fixed.push(v),
            VarKind::State => candidates.push(v),
            _ => {}
        }
    }
    let n_model = dae.equations.len();
    let mut simplifier = eqm_ir::symbolic::Simplifier::new();
    let mut starts = Vec::with_capacity(fixed.len() + candidates.len());
    for (k, &var) in fixed.iter().chain(&candidates).enumerate() {
        let given = start_equation(dae, var, Origin::FixedStart { var }).rhs;
        if !dae.is_parameter_expression(given) {
            return None;
        }
        starts.push(StartValue {
            var,
            eq: n_model + k,
            value: given,
        });
    }
    for start in &mut starts {
        start.value = simplifier.simplify(&mut dae.flat.exprs, start.value);
    }
    // The initial system's unknowns: the simulation's (its algebraic variables, the
    // derivatives and the discrete variables algorithms compute), and the states.
    let unknowns = simulation.unknowns.len() + starts.len();
    let warnings = assumed_warning(dae, &candidates).into_iter().collect();
    Some((
        InitPlan {
            system: InitSystem::Simulation { starts, unknowns },
            fixed,
            assumed: candidates,
        },
        warnings,
    ))
}

/// W0502 for the states whose start values had to be assumed, if there are any.
fn assumed_warning(init: &Dae<Hybrid>, assumed: &[VarId]) -> Option<Diagnostic> {
    let first = init.flat.var(*assumed.first()?);
    // A large model may assume millions: the message names the first few and counts the rest.
    const NAMED: usize = 20;
    let mut names: Vec<String> = assumed.iter().take(NAMED).map(|v| start_text(init, *v)).collect();
    if assumed.len() > NAMED {
        names.push(format!("and {} more", assumed.len() - NAMED));
    }
    let mut d = Diagnostic::warning(
        "W0502",
        format!(
            "the initial conditions are not fully specified: assuming fixed start values for {}",
            names.join(", ")
        ),
        first.span,
        format!("`{}` has no fixed start value", first.name),
    );
    for v in assumed.iter().skip(1).take(5) {
        let var = init.flat.var(*v);
        d = d.with_label(var.span, format!("`{}` has no fixed start value", var.name));
    }
    Some(d.with_help("give these states `fixed = true` start values or initial equations"))
}

/// Whether the initial system (equations `0..n_model` of the model, then one start equation
/// per state) is the simulation system with every state given by a start value that depends on
/// parameters only: no initial equations or initial algorithms, no fixed algebraic variables.
/// Such a system needs no matching of its own.
fn is_simulation_system_with_starts(init: &Dae<Hybrid>, n_model: usize, fixed: &[VarId]) -> bool {
    init.initial_equations.is_empty()
        && !init.flat.algorithms.iter().any(|a| a.initial)
        && fixed.iter().all(|v| init.kinds[v.0 as usize] == VarKind::State)
        && init.equations[n_model..]
            .iter()
            .all(|eq| init.is_parameter_expression(eq.rhs))
}

/// The plan of an initial system that [`is_simulation_system_with_starts`]: the start
/// assignments first (states are known before anything else, as in the simulation), then the
/// simulation's blocks with each `der(x)` read as the initial system's variable `der(x)`.
fn reuse_simulation_plan(init: &mut Dae<Hybrid>, n_model: usize, simulation: &Plan) -> Plan {
    let (unknowns, derivatives) = algebraic_form(init);
    let mut unknown_of_var = vec![usize::MAX; init.kinds.len()];
    for (k, u) in unknowns.iter().enumerate() {
        if let Unknown::Var(v) = u {
            unknown_of_var[v.0 as usize] = k;
        }
    }
    let mut derivative_of = vec![VarId(u32::MAX); init.kinds.len()];
    for &(x, d) in &derivatives {
        derivative_of[x.0 as usize] = d;
    }
    // The simulation's unknowns in the initial system's numbering.
    let map_unknown = |u: usize| match simulation.unknowns[u] {
        Unknown::Var(v) => unknown_of_var[v.0 as usize],
        Unknown::Der(x) => unknown_of_var[derivative_of[x.0 as usize].0 as usize],
    };
    let replacement: FxHashMap<ExprId, ExprId> = derivatives
        .iter()
        .map(|&(x, d)| {
            let node = init.flat.exprs.var(x);
            let der = init.flat.exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![node]);
            (der, init.flat.exprs.var(d))
        })
        .collect();
    let rename = |init: &mut Dae<Hybrid>, e: ExprId| {
        eqm_ir::symbolic::substitute(&mut init.flat.exprs, e, &|_, id| replacement.get(&id).copied())
    };
    // Algorithm rows are numbered after the equations, of which the initial system has more.
    let n_init = init.equations.len();
    let map_eq = |eq: usize| if eq < n_model { eq } else { eq - n_model + n_init };
    let mut blocks = Vec::with_capacity(simulation.blocks.len() + n_init - n_model);
    let mut simplifier = eqm_ir::symbolic::Simplifier::new();
    for eq in n_model..n_init {
        let (Origin::FixedStart { var } | Origin::AssumedStart { var }) = init.equations[eq].origin else {
            continue;
        };
        // The start value of a discrete-time variable is given to its `pre` value, the
        // variable the equation writes (its origin names the variable whose start it is).
        let var = match init.flat.exprs.get(init.equations[eq].lhs) {
            eqm_ir::expr::Node::Var(written) => *written,
            _ => var,
        };
        let rhs = init.equations[eq].rhs;
        let value = simplifier.simplify(&mut init.flat.exprs, rhs);
        blocks.push(Block::Explicit {
            eq,
            unknown: unknown_of_var[var.0 as usize],
            value,
        });
    }
    for block in &simulation.blocks {
        blocks.push(match block {
            Block::Explicit { eq, unknown, value } => Block::Explicit {
                eq: map_eq(*eq),
                unknown: map_unknown(*unknown),
                value: rename(init, *value),
            },
            Block::Implicit { eq, unknown } => Block::Implicit {
                eq: map_eq(*eq),
                unknown: map_unknown(*unknown),
            },
            Block::Algorithm { eq, unknown, algorithm } => Block::Algorithm {
                eq: map_eq(*eq),
                unknown: map_unknown(*unknown),
                algorithm: *algorithm,
            },
            Block::Loop(l) => Block::Loop(TornLoop {
                eqs: l.eqs.iter().map(|&e| map_eq(e)).collect(),
                unknowns: l.unknowns.iter().map(|&u| map_unknown(u)).collect(),
                tearing: l.tearing.iter().map(|&u| map_unknown(u)).collect(),
                residuals: l.residuals.iter().map(|&e| map_eq(e)).collect(),
                inner: l
                    .inner
                    .iter()
                    .map(|&(e, u, value)| (map_eq(e), map_unknown(u), rename(init, value)))
                    .collect(),
                linear: l.linear,
            }),
        });
    }
    let n_rows = n_init + (simulation.matching.len() - n_model);
    let mut matching = vec![usize::MAX; n_rows];
    for block in &blocks {
        match block {
            Block::Explicit { eq, unknown, .. }
            | Block::Implicit { eq, unknown }
            | Block::Algorithm { eq, unknown, .. } => {
                matching[*eq] = *unknown;
            }
            Block::Loop(l) => {
                // A loop's equations and unknowns are matched within the loop; the simulation
                // plan's matching says how.
                for &e in &l.eqs {
                    let sim_eq = if e < n_model { e } else { e - n_init + n_model };
                    matching[e] = map_unknown(simulation.matching[sim_eq]);
                }
            }
        }
    }
    let leaves = unknowns
        .iter()
        .map(|&u| structure::unknown_leaf(&mut init.flat.exprs, u))
        .collect();
    Plan {
        unknowns,
        leaves,
        matching,
        blocks,
        parameter_conditions: simulation.parameter_conditions.clone(),
    }
}

/// Rewrites the initial system so that it has no states: each state becomes an algebraic
/// variable and each `der(x)` a new algebraic variable named `der(x)`, so the initial system is
/// an ordinary algebraic system that code generation and the interpreter run like any other.
/// Returns the unknowns (every algebraic variable) in variable order, and each former state
/// with the variable standing for its derivative.
fn algebraic_form(init: &mut Dae<Hybrid>) -> (Vec<Unknown>, Vec<(VarId, VarId)>) {
    let mut replacement: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut derivatives: Vec<(VarId, VarId)> = Vec::new();
    for i in 0..init.kinds.len() {
        if init.eliminated[i].is_some() || init.kinds[i] != VarKind::State {
            continue;
        }
        let x = VarId(i as u32);
        let node = init.flat.exprs.var(x);
        let der = init.flat.exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![node]);
        let name = init.flat.var(x).name.clone();
        let d = init.add_derivative_variable(
            x,
            format!("der({name})"),
            format!("the derivative of {name} at the start"),
            VarKind::Algebraic,
        );
        init.kinds[i] = VarKind::Algebraic;
        let d_node = init.flat.exprs.var(d);
        replacement.insert(der, d_node);
        derivatives.push((x, d));
    }
    init.substitute_in_equations(&replacement);
    let computed = init.discrete_algorithm_outputs(true);
    let unknowns = (0..init.kinds.len())
        .filter(|&i| init.eliminated[i].is_none() && (init.kinds[i] == VarKind::Algebraic || computed[i]))
        .map(|i| Unknown::Var(VarId(i as u32)))
        .collect();
    (unknowns, derivatives)
}

/// `v = start` (0 when the variable declares no start value).
fn start_equation(dae: &mut Dae<Hybrid>, v: VarId, origin: Origin) -> Equation {
    let lhs = dae.flat.exprs.var(v);
    let rhs = match dae.flat.var(v).attributes.start {
        Some(s) => s,
        None => dae.flat.exprs.real(0.0),
    };
    Equation {
        lhs,
        rhs,
        origin,
        span: dae.flat.var(v).span,
    }
}

/// `name = start` of variable `v` (`= 0` with a remark when it declares no start value).
pub(crate) fn start_text(dae: &Dae<Hybrid>, v: VarId) -> String {
    let var = dae.flat.var(v);
    match var.attributes.start {
        Some(s) => format!("{} = {}", var.name, dae.flat.expr_text(s)),
        None => format!("{} = 0 (no start value given)", var.name),
    }
}

/// The names of the variables the compiler introduces for `pre(v)` (`$pre3`) as the user wrote
/// them (`pre(v)`), for the texts of diagnostics: the user never wrote `$pre3`.
struct PreNames {
    /// `$preN` and `pre(v)`, from the variable's description.
    names: FxHashMap<String, String>,
}

impl PreNames {
    fn new(init: &Dae<Hybrid>) -> PreNames {
        let names = init
            .flat
            .variables
            .iter()
            .filter(|v| v.name.starts_with("$pre"))
            .filter_map(|v| {
                let written = v.description.as_deref()?.split(", the value").next()?;
                written
                    .starts_with("pre(")
                    .then(|| (v.name.clone(), written.to_string()))
            })
            .collect();
        PreNames { names }
    }

    /// `text` with every whole `$preN` replaced.
    fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("$pre") {
            out.push_str(&rest[..at]);
            let digits = rest[at + 4..].bytes().take_while(u8::is_ascii_digit).count();
            let token = &rest[at..at + 4 + digits];
            out.push_str(self.names.get(token).map_or(token, String::as_str));
            rest = &rest[at + 4 + digits..];
        }
        out.push_str(rest);
        out
    }
}

/// The diagnostic for an over-determined initial system: the equations of the over-determined
/// part, led by the fixed start values and initial equations among them.
fn over_determined(
    init: &Dae<Hybrid>,
    (graph, matching, index_of): (
        &eqm_structural::incidence::Incidence,
        &eqm_structural::matching::Matching,
        &structure::LeafIndex,
    ),
    n_model: usize,
    n_given: usize,
    unknowns: &[Unknown],
) -> Diagnostic {
    let over: Vec<usize> = match singular_parts(graph, matching) {
        Ok(parts) => parts.over_eqs.iter().map(|e| e.index()).collect(),
        Err(e) => return structure::internal(e),
    };
    // The user can act on fixed values and initial equations; the model's own equations are
    // listed after them.
    let mut listed: Vec<usize> = over
        .iter()
        .copied()
        .filter(|&e| e >= n_model && e < init.equations.len())
        .collect();
    listed.extend(over.iter().copied().filter(|&e| e < n_model));
    // Rows past the equations are the outputs of algorithm sections, one row each.
    let mut section_of_row = Vec::new();
    for (section, outputs, _) in structure::algorithm_rows_of(init, index_of, true) {
        section_of_row.extend(std::iter::repeat_n(section, outputs.len()));
    }
    let n_eqs = init.equations.len();
    listed.extend(
        over.iter()
            .copied()
            .filter(|&e| e >= n_eqs && e - n_eqs < section_of_row.len()),
    );
    let fixed: Vec<String> = listed
        .iter()
        .filter(|&&e| e >= n_given && e < n_eqs)
        .filter_map(|&e| match init.equations[e].origin {
            Origin::FixedStart { var } => Some(start_text(init, var)),
            _ => None,
        })
        .collect();
    let vars: Vec<String> = {
        let mut vs: Vec<String> = Vec::new();
        for &e in &over {
            for &v in graph.eq_vars(EqIdx(e as u32)) {
                let name = structure::unknown_name(init, unknowns[v.index()]);
                if !vs.contains(&name) {
                    vs.push(name);
                }
            }
        }
        vs
    };
    let readable = PreNames::new(init);
    let vars: Vec<String> = vars.iter().map(|v| readable.apply(v)).collect();
    let message = format!(
        "the initial system is over-determined: these {} equations determine only {} unknown(s) ({}){}",
        over.len(),
        vars.len(),
        shorten(&vars, 8),
        if fixed.is_empty() {
            String::new()
        } else {
            format!("; conflicting fixed start values: {}", shorten(&fixed, 8))
        }
    );
    let label = |e: usize| {
        if e >= n_eqs {
            let a = &init.flat.algorithms[section_of_row[e - n_eqs]];
            let names: Vec<String> = a.outputs.iter().map(|&v| init.flat.var(v).name.clone()).collect();
            let kind = if a.initial { "initial algorithm" } else { "algorithm" };
            return (
                a.span,
                readable.apply(&format!("{kind} assigning {}", shorten(&names, 4))),
            );
        }
        let eq = &init.equations[e];
        (
            eq.span,
            readable.apply(&format!(
                "{} ({})",
                init.equation_text(eq),
                init.origin_label(&eq.origin)
            )),
        )
    };
    let Some(&first) = listed.first() else {
        return structure::internal_text("over-determined initial system without equations");
    };
    let (span, text) = label(first);
    let mut d = Diagnostic::error("E0504", message, span, text);
    for &e in listed.iter().skip(1).take(9) {
        let (span, text) = label(e);
        d = d.with_label(span, text);
    }
    if fixed.is_empty() {
        d.with_help(
            "remove one of these initial equations, or make one of them determine an unknown the others leave open",
        )
    } else {
        d.with_help("remove `fixed = true` from one of the start values, or an initial equation")
    }
}

/// The diagnostic for unknowns that no equation of the initial system determines.
/// Whether unknown `u` is a parameter with `fixed = false`.
fn is_free_parameter(init: &Dae<Hybrid>, u: Unknown) -> bool {
    let Unknown::Var(v) = u else { return false };
    let variable = init.flat.var(v);
    variable.variability == eqm_ir::flat::Variability::Parameter && variable.attributes.fixed == Some(false)
}

/// The unknowns to name as undetermined: the parameters with `fixed = false` that a maximum
/// matching can leave open instead of the `undetermined` ones it left, when there are any
/// (`der(k*x)` leaves either `k` or `der(x)` open, and the parameter is what lacks an initial
/// equation); else `undetermined` itself. Those are the unknowns reached from the open ones by
/// alternating paths (an equation that reads an open unknown, then the unknown that equation is
/// matched to), each visited once.
fn free_parameters_left_open(
    init: &Dae<Hybrid>,
    graph: &eqm_structural::incidence::Incidence,
    matching: &eqm_structural::matching::Matching,
    unknowns: &[Unknown],
    undetermined: Vec<usize>,
) -> Vec<usize> {
    let mut seen = vec![false; unknowns.len()];
    let mut stack = undetermined.clone();
    for &u in &undetermined {
        seen[u] = true;
    }
    let mut free = Vec::new();
    while let Some(u) = stack.pop() {
        if is_free_parameter(init, unknowns[u]) {
            free.push(u);
        }
        for &e in graph.var_eqs(VarIdx(u as u32)) {
            if let Some(w) = matching.var_of(e)
                && !seen[w.index()]
            {
                seen[w.index()] = true;
                stack.push(w.index());
            }
        }
    }
    if free.is_empty() {
        return undetermined;
    }
    free.sort_unstable();
    free
}

fn under_determined(init: &Dae<Hybrid>, unknowns: &[Unknown], undetermined: &[usize]) -> Diagnostic {
    let names: Vec<String> = undetermined
        .iter()
        .map(|&u| structure::unknown_name(init, unknowns[u]))
        .collect();
    let (Unknown::Var(var) | Unknown::Der(var)) = unknowns[undetermined[0]];
    let mut d = Diagnostic::error(
        "E0505",
        format!(
            "the initial system is under-determined: nothing determines the initial value of {}",
            shorten(&names, 8)
        ),
        init.flat.var(var).span,
        if is_free_parameter(init, unknowns[undetermined[0]]) {
            "a parameter with `fixed = false` needs an initial equation or algorithm"
        } else {
            "needs a start value with `fixed = true` or an initial equation"
        },
    );
    for &u in undetermined.iter().skip(1).take(5) {
        let (Unknown::Var(v) | Unknown::Der(v)) = unknowns[u];
        d = d.with_label(
            init.flat.var(v).span,
            format!("`{}` declared here", init.flat.var(v).name),
        );
    }
    d
}

fn shorten(names: &[String], max: usize) -> String {
    let mut s = names.iter().take(max).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}
