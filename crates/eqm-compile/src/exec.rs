//! The executable program: what the reference interpreter and the JIT run.
//!
//! Input: a [`Dae`] (after alias elimination and, later, index reduction) and its causalisation
//! [`Plan`]. Output: an [`ExecProgram`], or diagnostics (`E06xx`) when something in the model
//! cannot be executed. The program decides the run-time layout ([`Slot`]): states in `x` (in
//! variable order), their derivatives in `dx` (same index), independent parameters in `p` with
//! their default values, and everything else in `work` (algebraic variables, dependent
//! parameters and constants, discrete variables, and the variables alias elimination removed).
//! It holds five straight-line programs over that layout, all as expressions of one arena:
//!
//! - the parameter program: dependent parameters and constants in dependency order, run once
//!   per parameter change, followed by the run-time [`ParamCondition`]s of the plan;
//! - the start-value program: start values of states (`x`), and of algebraic and discrete
//!   variables (`work`, the first guesses of every Newton iteration and the held values of
//!   discrete variables);
//! - the right-hand side: the plan's blocks as [`Instr`]uctions (explicit assignments, scalar
//!   Newton iterations with symbolic derivatives, torn algebraic loops with the symbolic partial
//!   derivatives needed to assemble their Jacobian by the chain rule, algorithm sections);
//! - the outputs program: the values of the variables alias elimination removed;
//! - the algorithm sections, rewritten so that they never read a removed variable.
//!
//! The program's contract for every back end: each expression reachable from it reads only
//! variables that have a slot, and those slots hold the current values when the expression is
//! evaluated; `der(x)` reads `dx`; `pre(v)` reads `v` itself, and `edge`, `change`, `initial`,
//! `terminal` and `sample` are false (the driver refuses models that use them; discrete
//! variables and relation variables hold what the last event gave them, see `hybrid`); `noEvent(e)` and `smooth(n, e)` are `e`; every built-in function
//! is evaluated through its numeric implementation in [`crate::builtins`], the operators through
//! [`eqm_ir::symbolic::eval::unary`] and [`eqm_ir::symbolic::eval::binary`]. Every value an
//! instruction assigns must be finite, or evaluation fails with an [`EvalFailure`].
//!
//! Building is a pure function of its input, linear in the size of the model (plus the symbolic
//! derivatives of implicit equations and loops). Parameter values are run-time inputs: changing
//! a parameter in `p` never needs a new program. This module deliberately does not evaluate
//! anything at run time (see `interp`; the event program of surfaces and when-clauses is
//! built here and run by `hybrid`), does not handle assertions of equation sections or initial
//! equations (the initialization problem), and does not know which
//! parameters the flattener used structurally (array sizes): those cannot be changed without
//! flattening again, but nothing here records them.

use crate::dae::{Dae, VarKind};
use crate::plan::{Block, Plan, Unknown};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::{Builtin, BuiltinKind, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, VarId};
use eqm_ir::failure::{EvalFailure, FailureKind, FailureSite};
use eqm_ir::flat::{self, ScalarType, Statement};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::{Condition, diff_var};
use std::collections::BTreeMap;

/// `target := value` for one variable: an instruction of the parameter, start-value and outputs
/// programs and of the resets at the start of an algorithm section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VarAssign {
    pub var: VarId,
    pub target: Slot,
    pub value: ExprId,
}

/// One instruction of the right-hand side, in evaluation order. `eq` indexes `Dae::equations`.
#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    /// `target := value`, solved symbolically from equation `eq`.
    Assign { target: Slot, value: ExprId, eq: usize },
    /// `residual(target) = 0` (the equation's `lhs - rhs`), solved by a damped Newton iteration
    /// that starts from the value the target holds. `derivative` is the symbolic derivative of
    /// the residual with respect to the target; `None` when it could not be built (a
    /// user-defined function of the target), in which case back ends use a difference quotient.
    Newton1 {
        target: Slot,
        residual: ExprId,
        derivative: Option<ExprId>,
        eq: usize,
    },
    /// An algebraic loop (boxed: it is much larger than the other instructions).
    Loop(Box<LoopBlock>),
    /// Run algorithm section `index` of [`ExecProgram::algorithms`]; it assigns its outputs.
    Algorithm { index: usize },
}

/// A torn algebraic loop: given values of the tearing unknowns, the inner assignments compute
/// the other unknowns in order, and the residuals must vanish.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopBlock {
    /// Every equation of the loop, and every unknown (as its slot), for messages.
    pub eqs: Vec<usize>,
    pub unknowns: Vec<Slot>,
    /// The slots of the tearing unknowns, the iteration variables.
    pub tearing: Vec<Slot>,
    /// `target := value` from equation `eq`, in evaluation order.
    pub inner: Vec<LoopAssign>,
    /// `lhs - rhs` of each residual equation, with the equation.
    pub residuals: Vec<(ExprId, usize)>,
    /// Every equation is affine in the loop's unknowns: one Newton step (an LU solve) suffices.
    pub linear: bool,
    /// The symbolic partial derivatives for the chain rule; `None` when some partial derivative
    /// could not be built, in which case back ends use difference quotients.
    pub jacobian: Option<LoopJacobian>,
}

/// One inner assignment of a loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopAssign {
    pub target: Slot,
    pub value: ExprId,
    pub eq: usize,
}

/// An unknown of a loop as the Jacobian sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LoopVar {
    /// The `j`-th tearing unknown.
    Tearing(u32),
    /// The unknown of the `k`-th inner assignment.
    Inner(u32),
}

/// Sparse partial derivatives of a loop. With `t` the tearing unknowns and `z_k` the inner ones,
/// `dz_k/dt = ∂g_k/∂t + Σ_{l<k} ∂g_k/∂z_l · dz_l/dt` and the Jacobian of the torn residuals is
/// `∂r_i/∂t + Σ_k ∂r_i/∂z_k · dz_k/dt`; only the partial derivatives that are not zero are
/// listed, and an inner one only refers to earlier inner unknowns.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopJacobian {
    /// For each inner assignment, the partial derivatives of its value.
    pub inner: Vec<Vec<(LoopVar, ExprId)>>,
    /// For each residual, the partial derivatives of `lhs - rhs`.
    pub residuals: Vec<Vec<(LoopVar, ExprId)>>,
}

/// An algorithm section as the program runs it.
#[derive(Debug, Clone)]
pub struct ExecAlgorithm {
    /// The index of the section in the flat model.
    pub index: usize,
    /// The statements, with variables removed by alias elimination replaced by their values.
    pub statements: Vec<Statement>,
    /// Continuous outputs are set to their start values before the statements run (Modelica's
    /// rule); discrete ones keep their values, which are their `pre` values.
    pub resets: Vec<VarAssign>,
    /// The slots the section assigns, checked to be finite after it ran.
    pub outputs: Vec<(VarId, Slot)>,
    pub span: Span,
}

/// A condition on parameters that a symbolic solution of the plan needs (a divisor that must
/// not be zero), with the equation whose solution needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamCondition {
    pub condition: Condition,
    pub eq: usize,
}

/// A zero-crossing surface as the program evaluates it: `expr` after the right-hand side and
/// the outputs program, and the relation variables (work slots) that read its sign.
#[derive(Debug, Clone)]
pub struct ExecSurface {
    pub expr: ExprId,
    pub relations: Vec<(Slot, crate::events::Test)>,
    /// The relation variables, parallel to `relations`.
    pub relation_vars: Vec<VarId>,
    pub span: Span,
    pub text: String,
    /// `T` when the surface is `time - T` with `T` a parameter expression (a time event).
    pub time_event: Option<ExprId>,
}

/// A when-clause: each branch's condition (reading relation variables) and actions; the first
/// branch whose condition becomes true fires. The actions are the flat model's, checked here:
/// an assignment's variable has a work slot, a reinit's variable is a state.
#[derive(Debug, Clone)]
pub struct ExecWhen {
    pub branches: Vec<(ExprId, Vec<flat::WhenAction>)>,
    pub span: Span,
}

/// `sample(start, interval)`: its variable's work slot and the parameter expressions of its
/// times.
#[derive(Debug, Clone)]
pub struct ExecSample {
    pub slot: u32,
    pub start: ExprId,
    pub interval: ExprId,
    pub span: Span,
}

/// What the event handling of a simulation evaluates.
#[derive(Debug, Clone, Default)]
pub struct ExecEvents {
    pub surfaces: Vec<ExecSurface>,
    pub samples: Vec<ExecSample>,
    /// For `edge` and `change`: the work slot holding an expression's value before the current
    /// pass of the event iteration, and the expression.
    pub previous: Vec<(u32, ExprId)>,
    /// The work slots and variables of `initial()` and `terminal()`, if used.
    pub initial: Option<(u32, VarId)>,
    pub terminal: Option<(u32, VarId)>,
    pub whens: Vec<ExecWhen>,
    /// The work slots of every discrete variable (relation variables included): the state an
    /// event changes besides `x`.
    pub discrete: Vec<u32>,
}

impl ExecEvents {
    pub fn is_empty(&self) -> bool {
        self.surfaces.is_empty()
            && self.whens.is_empty()
            && self.samples.is_empty()
            && self.previous.is_empty()
            && self.initial.is_none()
            && self.terminal.is_none()
    }
}

/// An invariant `g = 0` the solution keeps (declared in an `invariant` section, or a
/// constraint index reduction differentiated away): `lhs - rhs` with removed variables replaced
/// by their values, evaluated after the right-hand side.
#[derive(Debug, Clone)]
pub struct ExecInvariant {
    pub residual: ExprId,
    /// `Σ_j ∂g/∂x_j · der(x_j)` over the states `x_j` the residual reads, when it reads nothing
    /// but states and parameters: the rate of `g` along the field, whose Jacobian is
    /// `H + G ∂f/∂x` with `H` the second derivatives of `g` along `f` (what the Jacobian of the
    /// projected field needs).
    pub rate: Option<ExprId>,
    pub span: Span,
    /// The invariant as written, for messages.
    pub text: String,
}

/// The check of a dummy-derivative form's static state choice: the partial derivatives of the
/// differentiated constraints with respect to the variables that are no longer states
/// (`matrix`, rows × variables, row-major) and the norm of each constraint's whole gradient
/// (`norms`). The choice is singular where the rows, each divided by its norm, lose rank.
#[derive(Debug, Clone)]
pub struct ExecStateChoice {
    pub matrix: Vec<ExprId>,
    pub norms: Vec<ExprId>,
    pub variables: Vec<VarId>,
    pub states: Vec<VarId>,
    pub span: Span,
}

/// The sizes of the evaluation arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Length of `x` and of `dx`.
    pub states: usize,
    /// Length of `p`.
    pub params: usize,
    /// Length of `work`.
    pub work: usize,
}

/// The executable form of a model; see the module documentation.
#[derive(Debug, Clone)]
pub struct ExecProgram {
    /// The DAE the program was built from; its arena also holds the residuals and derivatives
    /// built here, and it names variables and equations in messages.
    dae: Dae,
    slots: Vec<Option<Slot>>,
    layout: Layout,
    states: Vec<VarId>,
    params: Vec<VarId>,
    p0: Vec<f64>,
    work_vars: Vec<VarId>,
    param_program: Vec<VarAssign>,
    start_program: Vec<VarAssign>,
    rhs: Vec<Instr>,
    outputs: Vec<VarAssign>,
    algorithms: Vec<ExecAlgorithm>,
    /// For each flat algorithm section, its index in `algorithms`, if it is run.
    algorithm_of_section: Vec<Option<usize>>,
    conditions: Vec<ParamCondition>,
    events: ExecEvents,
    names: BTreeMap<String, VarId>,
    invariants: Vec<ExecInvariant>,
    state_choice: Option<ExecStateChoice>,
    /// The symbolic Jacobian, when it was asked for and could be built.
    jacobian: Option<crate::jacobian::ExecJacobian>,
}

impl ExecProgram {
    /// Builds the program of `dae` with causalisation `plan`; a pure function. Fails with
    /// diagnostics naming the equations, bindings or statements that cannot be executed.
    pub fn build(dae: Dae, plan: &Plan) -> Result<ExecProgram, Vec<Diagnostic>> {
        let mut b = Builder::new(dae);
        b.layout();
        b.parameter_program();
        b.start_program();
        b.rhs(plan);
        b.outputs();
        b.conditions(plan);
        b.events();
        b.invariants();
        b.state_choice();
        b.validate();
        if !b.diagnostics.is_empty() {
            return Err(b.diagnostics);
        }
        Ok(b.finish())
    }

    /// The DAE the program was built from (with the extended arena).
    pub fn dae(&self) -> &Dae {
        &self.dae
    }

    /// The arena, for stages that add expressions to the program (the Jacobian).
    pub(crate) fn arena_mut(&mut self) -> &mut ExprArena {
        &mut self.dae.flat.exprs
    }

    /// Adds the symbolic Jacobian of the right-hand side and of the invariants (see
    /// [`crate::jacobian`]), with the expressions of the state-choice check evaluated alongside;
    /// on failure the program has none and the reason is returned.
    pub fn add_jacobian(&mut self) -> Result<(), String> {
        self.jacobian = None;
        let invariants: Vec<ExprId> = self.invariants.iter().map(|g| g.residual).collect();
        // The rates are only useful when every invariant has one.
        let rates: Vec<ExprId> = self.invariants.iter().map_while(|g| g.rate).collect();
        let rates = if rates.len() == invariants.len() {
            rates
        } else {
            Vec::new()
        };
        let extra: Vec<ExprId> = self
            .state_choice
            .iter()
            .flat_map(|c| c.matrix.iter().chain(&c.norms))
            .copied()
            .collect();
        self.jacobian = Some(crate::jacobian::build(self, &invariants, &rates, &extra)?);
        Ok(())
    }

    /// The invariants `g = 0` of the model, in declaration order.
    pub fn invariants(&self) -> &[ExecInvariant] {
        &self.invariants
    }

    /// The check of the static state choice of a dummy-derivative form, if it has one.
    pub fn state_choice(&self) -> Option<&ExecStateChoice> {
        self.state_choice.as_ref()
    }

    /// The symbolic Jacobian, if [`ExecProgram::add_jacobian`] built one.
    pub fn jacobian(&self) -> Option<&crate::jacobian::ExecJacobian> {
        self.jacobian.as_ref()
    }

    /// The arena that holds every expression of the program.
    pub fn exprs(&self) -> &ExprArena {
        &self.dae.flat.exprs
    }

    /// The user-defined functions the program calls (`Callee::User(FuncId(i))` is entry `i`).
    pub fn functions(&self) -> &[flat::Function] {
        &self.dae.flat.functions
    }

    /// Where variable `v` lives at run time; `None` for variables that have no numeric value
    /// (String variables).
    pub fn slot_of(&self, v: VarId) -> Option<Slot> {
        self.slots.get(v.0 as usize).copied().flatten()
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The zero-crossing surfaces, when-clauses and discrete slots of the model.
    pub fn events(&self) -> &ExecEvents {
        &self.events
    }

    /// The state variable of each index of `x` (and `dx`).
    pub fn states(&self) -> &[VarId] {
        &self.states
    }

    /// The parameter of each index of `p`.
    pub fn params(&self) -> &[VarId] {
        &self.params
    }

    /// The default value of each parameter in `p`.
    pub fn p0(&self) -> &[f64] {
        &self.p0
    }

    /// The variable of each index of `work`.
    pub fn work_vars(&self) -> &[VarId] {
        &self.work_vars
    }

    /// Dependent parameters and constants, in dependency order.
    pub fn parameter_program(&self) -> &[VarAssign] {
        &self.param_program
    }

    /// Start values of states, algebraic and discrete variables.
    pub fn start_program(&self) -> &[VarAssign] {
        &self.start_program
    }

    /// The right-hand side in evaluation order.
    pub fn rhs(&self) -> &[Instr] {
        &self.rhs
    }

    /// The values of the variables alias elimination removed, computed after the right-hand
    /// side.
    pub fn outputs(&self) -> &[VarAssign] {
        &self.outputs
    }

    /// The algorithm sections the right-hand side runs.
    pub fn algorithms(&self) -> &[ExecAlgorithm] {
        &self.algorithms
    }

    /// The conditions checked after the parameter program.
    pub fn conditions(&self) -> &[ParamCondition] {
        &self.conditions
    }

    /// The variable with full name `name`.
    pub fn lookup(&self, name: &str) -> Option<VarId> {
        self.names.get(name).copied()
    }

    /// Every variable with a value, by full name in sorted order, with its slot and, for
    /// variables removed by alias elimination, the expression that the outputs program
    /// evaluates into that slot. Names starting with `$` are variables the compiler introduced.
    pub fn variables(&self) -> impl Iterator<Item = (&str, VarId, Slot, Option<ExprId>)> + '_ {
        self.names.iter().filter_map(|(name, &v)| {
            let slot = self.slot_of(v)?;
            let eliminated = self.dae.eliminated.get(v.0 as usize).copied().flatten();
            Some((name.as_str(), v, slot, eliminated))
        })
    }

    /// Whether `v` can be changed with a new value in `p` (an independent parameter).
    pub fn is_settable(&self, v: VarId) -> bool {
        matches!(self.slot_of(v), Some(Slot::Param(_)))
    }

    /// The name of the variable or derivative in `slot`, for messages.
    pub fn slot_name(&self, slot: Slot) -> String {
        let name = |v: Option<&VarId>| v.map_or_else(|| "?".to_string(), |v| self.dae.flat.var(*v).name.clone());
        match slot {
            Slot::Time => "time".to_string(),
            Slot::State(i) => name(self.states.get(i as usize)),
            Slot::Der(i) => format!("der({})", name(self.states.get(i as usize))),
            Slot::Param(i) => name(self.params.get(i as usize)),
            Slot::Work(i) => name(self.work_vars.get(i as usize)),
        }
    }

    /// The span of the model's declaration, for messages about the model as a whole.
    pub fn model_span(&self) -> Span {
        model_span(&self.dae)
    }

    /// The algorithm of a flat algorithm section, if the right-hand side runs it.
    pub fn algorithm_of_section(&self, section: usize) -> Option<&ExecAlgorithm> {
        let k = self.algorithm_of_section.get(section).copied().flatten()?;
        self.algorithms.get(k)
    }
}

/// Parameters and constants: variables whose values do not change during a simulation.
fn is_parameter_kind(kind: VarKind) -> bool {
    matches!(kind, VarKind::Parameter | VarKind::Constant)
}

struct Builder {
    dae: Dae,
    slots: Vec<Option<Slot>>,
    states: Vec<VarId>,
    params: Vec<VarId>,
    p0: Vec<f64>,
    work_vars: Vec<VarId>,
    /// The defining expression of each dependent parameter or constant.
    dependent: Vec<(VarId, ExprId)>,
    param_program: Vec<VarAssign>,
    start_program: Vec<VarAssign>,
    rhs: Vec<Instr>,
    outputs: Vec<VarAssign>,
    algorithms: Vec<ExecAlgorithm>,
    algorithm_of_section: Vec<Option<usize>>,
    conditions: Vec<ParamCondition>,
    events: ExecEvents,
    diagnostics: Vec<Diagnostic>,
    /// Removed variables' nodes and their values, built when the first algorithm needs them.
    replace: Option<FxHashMap<ExprId, ExprId>>,
    invariants: Vec<ExecInvariant>,
    state_choice: Option<ExecStateChoice>,
}

impl Builder {
    fn new(dae: Dae) -> Builder {
        let n = dae.flat.variables.len();
        let sections = dae.flat.algorithms.len();
        Builder {
            dae,
            slots: vec![None; n],
            states: Vec::new(),
            params: Vec::new(),
            p0: Vec::new(),
            work_vars: Vec::new(),
            dependent: Vec::new(),
            param_program: Vec::new(),
            start_program: Vec::new(),
            rhs: Vec::new(),
            outputs: Vec::new(),
            algorithms: Vec::new(),
            algorithm_of_section: vec![None; sections],
            conditions: Vec::new(),
            events: ExecEvents::default(),
            diagnostics: Vec::new(),
            replace: None,
            invariants: Vec::new(),
            state_choice: None,
        }
    }

    fn kind(&self, v: VarId) -> VarKind {
        self.dae.kinds.get(v.0 as usize).copied().unwrap_or(VarKind::Algebraic)
    }

    fn eliminated(&self, v: VarId) -> Option<ExprId> {
        self.dae.eliminated.get(v.0 as usize).copied().flatten()
    }

    /// Assigns every variable its slot, in variable order within each array.
    fn layout(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let v = VarId(i as u32);
            let var = &self.dae.flat.variables[i];
            if var.ty == ScalarType::String {
                continue;
            }
            let kind = self.kind(v);
            let slot = if self.eliminated(v).is_some() {
                self.work(v)
            } else if kind == VarKind::State {
                self.states.push(v);
                Slot::State(self.states.len() as u32 - 1)
            } else if kind == VarKind::Parameter {
                // A parameter is independent when its value is a number known now: a literal
                // binding, or the start value of a parameter without a binding (0 without one).
                let definition = var.binding.or(var.attributes.start);
                match definition.map(|e| (e, constant_value(&self.dae.flat.exprs, e))) {
                    Some((e, None)) => {
                        self.dependent.push((v, e));
                        self.work(v)
                    }
                    known => {
                        self.params.push(v);
                        self.p0.push(known.and_then(|(_, value)| value).unwrap_or(0.0));
                        Slot::Param(self.params.len() as u32 - 1)
                    }
                }
            } else if kind == VarKind::Constant {
                let zero = self.dae.flat.exprs.real(0.0);
                let e = var.binding.or(var.attributes.start).unwrap_or(zero);
                self.dependent.push((v, e));
                self.work(v)
            } else {
                self.work(v)
            };
            self.slots[i] = Some(slot);
        }
    }

    fn work(&mut self, v: VarId) -> Slot {
        self.work_vars.push(v);
        Slot::Work(self.work_vars.len() as u32 - 1)
    }

    fn slot(&self, v: VarId) -> Option<Slot> {
        self.slots.get(v.0 as usize).copied().flatten()
    }

    /// The dependent parameters and constants in dependency order (Kahn's algorithm, ties in
    /// variable order); a cycle is a diagnostic naming its members.
    fn parameter_program(&mut self) {
        let n = self.dependent.len();
        let mut index_of: FxHashMap<VarId, usize> = FxHashMap::default();
        for (k, (v, _)) in self.dependent.iter().enumerate() {
            index_of.insert(*v, k);
        }
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut waiting = vec![0usize; n];
        let mut vars = Vec::new();
        let dependent = std::mem::take(&mut self.dependent);
        for (k, &(v, e)) in dependent.iter().enumerate() {
            vars.clear();
            self.dae.flat.exprs.vars_in(e, &mut vars);
            for u in &vars {
                if let Some(&d) = index_of.get(u) {
                    users[d].push(k);
                    waiting[k] += 1;
                }
            }
            if !self.is_parameter_expression(e) {
                let var = self.dae.flat.var(v);
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0603",
                        format!(
                            "the value of `{}` depends on a variable that changes during the simulation",
                            var.name
                        ),
                        var.span,
                        format!("`{} = {}`", var.name, self.dae.flat.expr_text(e)),
                    )
                    .with_help("a parameter's value may only use parameters, constants and literals"),
                );
            }
        }
        self.dependent = dependent;
        let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&k| waiting[k] == 0).collect();
        let mut done = vec![false; n];
        while let Some(k) = ready.pop_first() {
            done[k] = true;
            let (var, value) = self.dependent[k];
            if let Some(target) = self.slot(var) {
                self.param_program.push(VarAssign { var, target, value });
            }
            for &u in &users[k] {
                waiting[u] -= 1;
                if waiting[u] == 0 {
                    ready.insert(u);
                }
            }
        }
        let cyclic: Vec<VarId> = (0..n).filter(|&k| !done[k]).map(|k| self.dependent[k].0).collect();
        if let Some(&first) = cyclic.first() {
            let names: Vec<String> = cyclic
                .iter()
                .take(8)
                .map(|v| format!("`{}`", self.dae.flat.var(*v).name))
                .collect();
            let var = self.dae.flat.var(first);
            let mut d = Diagnostic::error(
                "E0601",
                format!(
                    "the values of these parameters depend on each other in a cycle: {}{}",
                    names.join(", "),
                    if cyclic.len() > 8 { " and more" } else { "" }
                ),
                var.span,
                format!("`{}` is part of the cycle", var.name),
            );
            for v in cyclic.iter().skip(1).take(7) {
                let var = self.dae.flat.var(*v);
                d = d.with_label(var.span, format!("`{}` is part of the cycle", var.name));
            }
            self.diagnostics
                .push(d.with_help("give one of them a value that does not depend on the others"));
        }
    }

    /// Whether `e` depends only on parameters, constants, literals and pure function calls.
    fn is_parameter_expression(&self, e: ExprId) -> bool {
        let arena = &self.dae.flat.exprs;
        let mut stack = vec![e];
        let mut seen = eqm_ir::symbolic::FxHashSet::default();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            match arena.get(id) {
                Node::Var(v) if !is_parameter_kind(self.kind(*v)) => return false,
                Node::Time | Node::Local(_) => return false,
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => {
                    if !matches!(b, Builtin::NoEvent | Builtin::Smooth) {
                        return false;
                    }
                    stack.extend(arena.children(id));
                }
                _ => stack.extend(arena.children(id)),
            }
        }
        true
    }

    /// Start values: states into `x`, algebraic and discrete variables into `work`; 0 where a
    /// variable has no start value (Modelica's default).
    fn start_program(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let var = VarId(i as u32);
            let Some(target) = self.slot(var) else { continue };
            if self.eliminated(var).is_some() || is_parameter_kind(self.kind(var)) {
                continue;
            }
            let value = match self.dae.flat.variables[i].attributes.start {
                Some(e) => e,
                None => self.dae.flat.exprs.real(0.0),
            };
            if !self.is_parameter_expression(value) {
                let v = self.dae.flat.var(var);
                self.diagnostics.push(Diagnostic::error(
                    "E0603",
                    format!(
                        "the start value of `{}` depends on a variable that changes during the simulation",
                        v.name
                    ),
                    v.span,
                    format!("start = {}", self.dae.flat.expr_text(value)),
                ));
                continue;
            }
            self.start_program.push(VarAssign { var, target, value });
        }
    }

    /// The slot of an unknown of the plan.
    fn unknown_slot(&self, u: Unknown) -> Option<Slot> {
        match u {
            Unknown::Var(v) => self.slot(v),
            Unknown::Der(v) => match self.slot(v) {
                Some(Slot::State(i)) => Some(Slot::Der(i)),
                _ => None,
            },
        }
    }

    fn plan_slot(&mut self, plan: &Plan, unknown: usize, eq: usize) -> Option<Slot> {
        let slot = plan.unknowns.get(unknown).and_then(|&u| self.unknown_slot(u));
        if slot.is_none() {
            let span = self.equation_span(eq);
            self.diagnostics
                .push(internal(span, "the plan names an unknown without a place at run time"));
        }
        slot
    }

    fn equation_span(&self, eq: usize) -> Span {
        self.dae
            .equations
            .get(eq)
            .map_or_else(|| model_span(&self.dae), |e| e.span)
    }

    fn residual(&mut self, eq: usize) -> Option<ExprId> {
        let e = self.dae.equations.get(eq)?;
        let (lhs, rhs) = (e.lhs, e.rhs);
        Some(self.dae.flat.exprs.binary(BinOp::Sub, lhs, rhs))
    }

    fn rhs(&mut self, plan: &Plan) {
        for block in &plan.blocks {
            match block {
                Block::Explicit { eq, unknown, value } => {
                    if let Some(target) = self.plan_slot(plan, *unknown, *eq) {
                        self.rhs.push(Instr::Assign {
                            target,
                            value: *value,
                            eq: *eq,
                        });
                    }
                }
                Block::Implicit { eq, unknown } => {
                    let (Some(target), Some(residual)) = (self.plan_slot(plan, *unknown, *eq), self.residual(*eq))
                    else {
                        continue;
                    };
                    let leaf = plan.leaves[*unknown];
                    let derivative = diff_var(&mut self.dae.flat.exprs, residual, leaf).ok();
                    self.rhs.push(Instr::Newton1 {
                        target,
                        residual,
                        derivative,
                        eq: *eq,
                    });
                }
                Block::Algorithm { algorithm, .. } => {
                    // One block per output of the section: it runs once, at its first block,
                    // where everything it reads is already computed.
                    if self.algorithm_of_section.get(*algorithm).copied().flatten().is_none() {
                        self.algorithm(*algorithm);
                    }
                }
                Block::Loop {
                    eqs,
                    unknowns,
                    tearing,
                    residuals,
                    inner,
                    linear,
                } => {
                    if let Some(block) = self.loop_block(plan, eqs, unknowns, tearing, residuals, inner, *linear) {
                        self.rhs.push(Instr::Loop(Box::new(block)));
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn loop_block(
        &mut self,
        plan: &Plan,
        eqs: &[usize],
        unknowns: &[usize],
        tearing: &[usize],
        residuals: &[usize],
        inner: &[(usize, usize, ExprId)],
        linear: bool,
    ) -> Option<LoopBlock> {
        let first = eqs.first().copied().unwrap_or(0);
        let mut slots = Vec::with_capacity(unknowns.len());
        for &u in unknowns {
            slots.push(self.plan_slot(plan, u, first)?);
        }
        let mut tearing_slots = Vec::with_capacity(tearing.len());
        let mut leaf_var: FxHashMap<ExprId, LoopVar> = FxHashMap::default();
        for (j, &u) in tearing.iter().enumerate() {
            tearing_slots.push(self.plan_slot(plan, u, first)?);
            leaf_var.insert(plan.leaves[u], LoopVar::Tearing(j as u32));
        }
        let mut assigns = Vec::with_capacity(inner.len());
        for (k, &(eq, u, value)) in inner.iter().enumerate() {
            assigns.push(LoopAssign {
                target: self.plan_slot(plan, u, eq)?,
                value,
                eq,
            });
            leaf_var.insert(plan.leaves[u], LoopVar::Inner(k as u32));
        }
        let mut residual_exprs = Vec::with_capacity(residuals.len());
        for &eq in residuals {
            residual_exprs.push((self.residual(eq)?, eq));
        }
        let leaf_of: FxHashMap<LoopVar, ExprId> = leaf_var.iter().map(|(l, v)| (*v, *l)).collect();
        // Partial derivatives with respect to the loop unknowns that occur; one that cannot be
        // built (a user function of an unknown) leaves the Jacobian to difference quotients.
        let partials = |exprs: &mut ExprArena, root: ExprId, before: u32| -> Option<Vec<(LoopVar, ExprId)>> {
            let mut out = Vec::new();
            for lv in loop_vars_in(exprs, root, &leaf_var) {
                if matches!(lv, LoopVar::Inner(l) if l >= before) {
                    return None;
                }
                let d = diff_var(exprs, root, *leaf_of.get(&lv)?).ok()?;
                if exprs.literal(d) != Some(0.0) {
                    out.push((lv, d));
                }
            }
            Some(out)
        };
        let exprs = &mut self.dae.flat.exprs;
        let jacobian = (|| {
            let mut jac = LoopJacobian {
                inner: Vec::with_capacity(assigns.len()),
                residuals: Vec::with_capacity(residual_exprs.len()),
            };
            for (k, a) in assigns.iter().enumerate() {
                jac.inner.push(partials(exprs, a.value, k as u32)?);
            }
            for &(r, _) in &residual_exprs {
                jac.residuals.push(partials(exprs, r, u32::MAX)?);
            }
            Some(jac)
        })();
        Some(LoopBlock {
            eqs: eqs.to_vec(),
            unknowns: slots,
            tearing: tearing_slots,
            inner: assigns,
            residuals: residual_exprs,
            linear,
            jacobian,
        })
    }

    /// The map from each variable alias elimination removed to its value, built once.
    fn ensure_replace(&mut self) {
        if self.replace.is_none() {
            let mut replace = FxHashMap::default();
            for i in 0..self.dae.eliminated.len() {
                if let Some(value) = self.dae.eliminated[i] {
                    replace.insert(self.dae.flat.exprs.var(VarId(i as u32)), value);
                }
            }
            self.replace = Some(replace);
        }
    }

    /// Adds flat algorithm section `section` to the program: its statements with removed
    /// variables replaced by their values, and the resets of its continuous outputs.
    fn algorithm(&mut self, section: usize) {
        let Some(a) = self.dae.flat.algorithms.get(section).cloned() else {
            return;
        };
        self.ensure_replace();
        let replace = self.replace.as_ref().filter(|r| !r.is_empty());
        let statements = match replace {
            None => a.statements.clone(),
            Some(replace) => {
                let exprs = &mut self.dae.flat.exprs;
                map_statements(&a.statements, &mut |e| {
                    eqm_ir::symbolic::substitute(exprs, e, &|_, id| replace.get(&id).copied())
                })
            }
        };
        let mut resets = Vec::new();
        let mut outputs = Vec::new();
        for &v in &a.outputs {
            let (name, start) = {
                let var = self.dae.flat.var(v);
                (var.name.clone(), var.attributes.start)
            };
            let slot = match self.slot(v) {
                Some(slot @ Slot::Work(_)) if self.eliminated(v).is_none() && !is_parameter_kind(self.kind(v)) => slot,
                _ => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0604",
                            format!("the algorithm section assigns `{name}`, which the simulation does not compute here"),
                            a.span,
                            format!("assigns `{name}`"),
                        )
                        .with_note(
                            "an algorithm may assign algebraic and discrete variables, not states, parameters or variables the compiler replaced by an alias",
                        ),
                    );
                    continue;
                }
            };
            outputs.push((v, slot));
            if self.kind(v) == VarKind::Algebraic {
                let value = match start {
                    Some(e) => e,
                    None => self.dae.flat.exprs.real(0.0),
                };
                resets.push(VarAssign {
                    var: v,
                    target: slot,
                    value,
                });
            }
        }
        self.algorithm_of_section[section] = Some(self.algorithms.len());
        self.rhs.push(Instr::Algorithm {
            index: self.algorithms.len(),
        });
        self.algorithms.push(ExecAlgorithm {
            index: section,
            statements,
            resets,
            outputs,
            span: a.span,
        });
    }

    /// The values of the variables alias elimination removed.
    fn outputs(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let var = VarId(i as u32);
            if let (Some(value), Some(target)) = (self.eliminated(var), self.slot(var)) {
                self.outputs.push(VarAssign { var, target, value });
            }
        }
    }

    fn conditions(&mut self, plan: &Plan) {
        self.conditions = plan
            .parameter_conditions
            .iter()
            .map(|&(condition, eq)| ParamCondition { condition, eq })
            .collect();
    }

    /// Checks that every expression of the program can be executed (see the module
    /// documentation for what that means), with one diagnostic per offending place.
    /// The invariants of the flat model as residuals over the program's slots.
    fn invariants(&mut self) {
        self.ensure_replace();
        let equations = self.dae.flat.invariants.clone();
        for eq in &equations {
            let residual = self.dae.flat.exprs.binary(BinOp::Sub, eq.lhs, eq.rhs);
            let residual = match self.replace.as_ref().filter(|r| !r.is_empty()) {
                Some(replace) => {
                    eqm_ir::symbolic::substitute(&mut self.dae.flat.exprs, residual, &|_, id| replace.get(&id).copied())
                }
                None => residual,
            };
            let residual = eqm_ir::symbolic::simplify(&mut self.dae.flat.exprs, residual);
            let rate = self.invariant_rate(residual);
            let text = format!(
                "{} = {}",
                self.dae.flat.expr_text(eq.lhs),
                self.dae.flat.expr_text(eq.rhs)
            );
            self.invariants.push(ExecInvariant {
                residual,
                rate,
                span: eq.span,
                text,
            });
        }
    }

    /// The rate `Σ_j ∂g/∂x_j · der(x_j)` of an invariant residual that reads only states and
    /// parameters (see [`ExecInvariant::rate`]); `None` otherwise.
    fn invariant_rate(&mut self, residual: ExprId) -> Option<ExprId> {
        let (exprs, slots, kinds) = (&mut self.dae.flat.exprs, &self.slots, &self.dae.kinds);
        let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(exprs.get(n));
        let mut states = Vec::new();
        for n in eqm_ir::symbolic::reachable(exprs, residual, &stop) {
            match exprs.get(n) {
                Node::Var(v) => match slots.get(v.0 as usize).copied().flatten() {
                    Some(Slot::State(_)) => states.push((n, *v)),
                    Some(Slot::Param(_)) => {}
                    Some(Slot::Work(_))
                        if matches!(kinds.get(v.0 as usize), Some(VarKind::Parameter | VarKind::Constant)) => {}
                    _ => return None,
                },
                Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _) => return None,
                _ => {}
            }
        }
        let mut rate = exprs.real(0.0);
        for (leaf, v) in states {
            let d = diff_var(exprs, residual, leaf).ok()?;
            let leaf_var = exprs.var(v);
            let der = exprs.builtin(Builtin::Der, vec![leaf_var]);
            let term = exprs.binary(BinOp::Mul, d, der);
            rate = exprs.binary(BinOp::Add, rate, term);
        }
        Some(eqm_ir::symbolic::simplify(exprs, rate))
    }

    /// The check of the static state choice, when index reduction made one.
    fn state_choice(&mut self) {
        let Some(choice) = self.dae.state_choice.clone() else {
            return;
        };
        let kinds = self.dae.kinds.clone();
        let exprs = &mut self.dae.flat.exprs;
        let mut matrix = Vec::new();
        let mut norms = Vec::new();
        let mut span = None;
        for &e in &choice.constraints {
            let Some(eq) = self.dae.equations.get(e) else { continue };
            span.get_or_insert(eq.span);
            let residual = exprs.binary(BinOp::Sub, eq.lhs, eq.rhs);
            // Every time-varying leaf of the constraint: variables and derivatives.
            let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(exprs.get(n));
            let leaves: Vec<ExprId> = eqm_ir::symbolic::reachable(exprs, residual, &stop)
                .into_iter()
                .filter(|&n| match exprs.get(n) {
                    Node::Var(v) => matches!(kinds.get(v.0 as usize), Some(VarKind::State | VarKind::Algebraic)),
                    Node::Call(Callee::Builtin(Builtin::Der), _) => true,
                    _ => false,
                })
                .collect();
            let mut squares = exprs.real(0.0);
            for leaf in leaves {
                let Ok(d) = diff_var(exprs, residual, leaf) else { return };
                let square = exprs.binary(BinOp::Mul, d, d);
                squares = exprs.binary(BinOp::Add, squares, square);
            }
            let norm = exprs.builtin(Builtin::Sqrt, vec![squares]);
            norms.push(eqm_ir::symbolic::simplify(exprs, norm));
            for &v in &choice.demoted {
                let leaf = exprs.var(v);
                let Ok(d) = diff_var(exprs, residual, leaf) else { return };
                matrix.push(d);
            }
        }
        let Some(span) = span else { return };
        self.state_choice = Some(ExecStateChoice {
            matrix,
            norms,
            variables: choice.demoted,
            states: self.states.clone(),
            span,
        });
    }

    fn validate(&mut self) {
        let mut v = Validator {
            arena: &self.dae.flat.exprs,
            slots: &self.slots,
            functions: &self.dae.flat.functions,
            checked_model: vec![false; self.dae.flat.exprs.len()],
            checked_function: vec![false; self.dae.flat.exprs.len()],
            stack: Vec::new(),
        };
        let mut problems: Vec<(Span, String, &'static str)> = Vec::new();
        let mut check = |v: &mut Validator, e: ExprId, in_function: bool, span: Span, what: &dyn Fn() -> String| {
            if let Err(reason) = v.check(e, in_function) {
                problems.push((span, what(), reason));
            }
        };
        let var_text = |var: VarId| self.dae.flat.var(var).name.clone();
        for a in self
            .param_program
            .iter()
            .chain(&self.start_program)
            .chain(&self.outputs)
        {
            check(&mut v, a.value, false, self.dae.flat.var(a.var).span, &|| {
                format!("the value of `{}`", var_text(a.var))
            });
        }
        let eq_text = |eq: usize| format!("equation `{}`", self.dae.equation_text(&self.dae.equations[eq]));
        for c in &self.conditions {
            let span = self.dae.equations[c.eq].span;
            check(&mut v, c.condition.expr(), false, span, &|| eq_text(c.eq));
        }
        for instr in &self.rhs {
            match instr {
                Instr::Assign { value, eq, .. } => {
                    check(&mut v, *value, false, self.dae.equations[*eq].span, &|| eq_text(*eq))
                }
                Instr::Newton1 {
                    residual,
                    derivative,
                    eq,
                    ..
                } => {
                    let span = self.dae.equations[*eq].span;
                    check(&mut v, *residual, false, span, &|| eq_text(*eq));
                    if let Some(d) = derivative {
                        check(&mut v, *d, false, span, &|| eq_text(*eq));
                    }
                }
                Instr::Loop(b) => {
                    for a in &b.inner {
                        check(&mut v, a.value, false, self.dae.equations[a.eq].span, &|| eq_text(a.eq));
                    }
                    for &(r, eq) in &b.residuals {
                        check(&mut v, r, false, self.dae.equations[eq].span, &|| eq_text(eq));
                    }
                    let partials = b
                        .jacobian
                        .iter()
                        .flat_map(|j| j.inner.iter().chain(&j.residuals))
                        .flatten();
                    for &(_, d) in partials {
                        check(&mut v, d, false, self.dae.equations[b.eqs[0]].span, &|| {
                            eq_text(b.eqs[0])
                        });
                    }
                }
                Instr::Algorithm { .. } => {}
            }
        }
        for g in &self.invariants {
            check(&mut v, g.residual, false, g.span, &|| format!("invariant `{}`", g.text));
        }
        for a in &self.algorithms {
            for r in &a.resets {
                check(&mut v, r.value, false, self.dae.flat.var(r.var).span, &|| {
                    format!("the start value of `{}`", var_text(r.var))
                });
            }
            for_each_statement_expr(&a.statements, &mut |e, span| {
                check(&mut v, e, false, span, &|| "this statement".to_string())
            });
        }
        for f in &self.dae.flat.functions {
            for_each_statement_expr(&f.body, &mut |e, span| {
                check(&mut v, e, true, span, &|| {
                    format!("this statement of function `{}`", f.name)
                })
            });
        }
        for &(_, e) in &self.events.previous {
            check(&mut v, e, false, model_span(&self.dae), &|| {
                "the argument of edge or change".to_string()
            });
        }
        for sample in &self.events.samples {
            for e in [sample.start, sample.interval] {
                check(&mut v, e, false, sample.span, &|| "this sample".to_string());
            }
        }
        for surface in &self.events.surfaces {
            if let Some(t) = surface.time_event {
                check(&mut v, t, false, surface.span, &|| {
                    format!("the time of `{}`", surface.text)
                });
            }
            check(&mut v, surface.expr, false, surface.span, &|| {
                format!("the zero-crossing function of `{}`", surface.text)
            });
        }
        for w in &self.events.whens {
            for (condition, actions) in &w.branches {
                check(&mut v, *condition, false, w.span, &|| "this when-condition".to_string());
                for action in actions {
                    match action {
                        flat::WhenAction::Assign { value, span, .. } | flat::WhenAction::Reinit { value, span, .. } => {
                            check(&mut v, *value, false, *span, &|| "this when-equation".to_string())
                        }
                        flat::WhenAction::Assert { condition, span, .. } => {
                            check(&mut v, *condition, false, *span, &|| "this assertion".to_string())
                        }
                        flat::WhenAction::Terminate { .. } => {}
                    }
                }
            }
        }
        for (span, what, reason) in problems {
            self.diagnostics.push(Diagnostic::error(
                "E0602",
                format!("{what} cannot be computed at run time: {reason}"),
                span,
                reason,
            ));
        }
    }

    /// The event program: surfaces with the slots of their relation variables, when-clauses
    /// with their targets (a reinit of something that is not a state, or an assignment to a
    /// variable without a work slot, is a diagnostic), and the discrete slots.
    fn events(&mut self) {
        let set = std::mem::take(&mut self.dae.events);
        for s in &set.surfaces {
            let (relations, relation_vars) = s
                .relations
                .iter()
                .filter_map(|&(v, test)| self.slot(v).map(|slot| ((slot, test), v)))
                .unzip();
            self.events.surfaces.push(ExecSurface {
                expr: s.expr,
                relations,
                relation_vars,
                span: s.span,
                text: s.text.clone(),
                time_event: s.time_event,
            });
        }
        for sample in &set.samples {
            let start_ok = self.is_parameter_expression(sample.start);
            let interval_ok = self.is_parameter_expression(sample.interval);
            match self.slot(sample.var) {
                Some(Slot::Work(slot)) if start_ok && interval_ok => self.events.samples.push(ExecSample {
                    slot,
                    start: sample.start,
                    interval: sample.interval,
                    span: sample.span,
                }),
                _ => self.diagnostics.push(Diagnostic::error(
                    "E0606",
                    "the start and interval of `sample` must be parameter expressions",
                    sample.span,
                    "in this sample(start, interval)",
                )),
            }
        }
        for p in &set.previous {
            if let Some(Slot::Work(slot)) = self.slot(p.var) {
                self.events.previous.push((slot, p.expr));
            }
        }
        let slots = &self.slots;
        let work_slot = |v: Option<VarId>| match v.map(|v| (slots.get(v.0 as usize).copied().flatten(), v)) {
            Some((Some(Slot::Work(slot)), v)) => Some((slot, v)),
            _ => None,
        };
        let (initial, terminal) = (work_slot(set.initial), work_slot(set.terminal));
        self.events.initial = initial;
        self.events.terminal = terminal;
        let whens = self.dae.flat.whens.clone();
        for (w, conditions) in whens.iter().zip(&set.when_conditions) {
            let mut branches = Vec::new();
            for (b, &condition) in w.branches.iter().zip(conditions) {
                let mut actions = Vec::new();
                for a in &b.actions {
                    let problem = match a {
                        flat::WhenAction::Assign { var, .. }
                            if !(matches!(self.slot(*var), Some(Slot::Work(_))) && self.eliminated(*var).is_none()) =>
                        {
                            Some((
                                *var,
                                "a when-equation can only assign a variable that changes at events",
                            ))
                        }
                        flat::WhenAction::Reinit { var, .. } if !matches!(self.slot(*var), Some(Slot::State(_))) => {
                            Some((*var, "reinit needs a state (a variable that appears differentiated)"))
                        }
                        _ => None,
                    };
                    match problem {
                        Some((var, why)) => {
                            let span = match a {
                                flat::WhenAction::Assign { span, .. } | flat::WhenAction::Reinit { span, .. } => *span,
                                _ => w.span,
                            };
                            self.when_target_error(var, span, why);
                        }
                        None => actions.push(a.clone()),
                    }
                }
                let actions = self.when_order(actions);
                branches.push((condition, actions));
            }
            self.events.whens.push(ExecWhen { branches, span: w.span });
        }
        for (k, &v) in self.work_vars.iter().enumerate() {
            if self.kind(v) == VarKind::Discrete && self.eliminated(v).is_none() {
                self.events.discrete.push(k as u32);
            }
        }
        self.dae.events = set;
    }

    /// The assignments of one when-branch in an order in which each one reads the new values of
    /// those it depends on and `pre(v)` is read before `v` is assigned (when-equations are
    /// equations, not statements); other actions keep their places after the assignments. A
    /// cycle is a diagnostic (`E0607`), and the written order is kept.
    fn when_order(&mut self, actions: Vec<flat::WhenAction>) -> Vec<flat::WhenAction> {
        let arena = &self.dae.flat.exprs;
        let assigned: Vec<Option<VarId>> = actions
            .iter()
            .map(|a| match a {
                flat::WhenAction::Assign { var, .. } => Some(*var),
                _ => None,
            })
            .collect();
        let n = actions.len();
        // before[i] lists the actions that must come before action i.
        let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, a) in actions.iter().enumerate() {
            let value = match a {
                flat::WhenAction::Assign { value, .. } | flat::WhenAction::Reinit { value, .. } => *value,
                flat::WhenAction::Assert { condition, .. } => *condition,
                flat::WhenAction::Terminate { .. } => continue,
            };
            let (now, previous) = reads_split_by_pre(arena, value);
            for (j, target) in assigned.iter().enumerate() {
                let Some(target) = target else { continue };
                if j != i && now.contains(target) {
                    before[i].push(j);
                }
                if j != i && previous.contains(target) {
                    before[j].push(i);
                }
            }
        }
        let mut waiting: Vec<usize> = before.iter().map(Vec::len).collect();
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, list) in before.iter().enumerate() {
            for &j in list {
                users[j].push(i);
            }
        }
        let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &u in &users[i] {
                waiting[u] -= 1;
                if waiting[u] == 0 {
                    ready.insert(u);
                }
            }
        }
        if order.len() < n {
            let span =
                actions
                    .iter()
                    .enumerate()
                    .find(|(i, _)| !order.contains(i))
                    .map_or(model_span(&self.dae), |(_, a)| match a {
                        flat::WhenAction::Assign { span, .. }
                        | flat::WhenAction::Reinit { span, .. }
                        | flat::WhenAction::Assert { span, .. }
                        | flat::WhenAction::Terminate { span, .. } => *span,
                    });
            self.diagnostics.push(
                Diagnostic::error(
                    "E0607",
                    "the equations of this when-clause depend on each other in a cycle",
                    span,
                    "part of the cycle",
                )
                .with_help("break the cycle with pre(...) on one of the variables"),
            );
            return actions;
        }
        let mut slots: Vec<Option<flat::WhenAction>> = actions.into_iter().map(Some).collect();
        order.into_iter().filter_map(|i| slots[i].take()).collect()
    }

    fn when_target_error(&mut self, var: VarId, span: Span, why: &str) {
        let name = self.dae.flat.var(var).name.clone();
        self.diagnostics.push(Diagnostic::error(
            "E0605",
            format!("`{name}` cannot be changed by this when-clause"),
            span,
            why.to_string(),
        ));
    }

    fn finish(self) -> ExecProgram {
        let mut names = BTreeMap::new();
        for (i, var) in self.dae.flat.variables.iter().enumerate() {
            names.insert(var.name.clone(), VarId(i as u32));
        }
        ExecProgram {
            layout: Layout {
                states: self.states.len(),
                params: self.params.len(),
                work: self.work_vars.len(),
            },
            dae: self.dae,
            slots: self.slots,
            states: self.states,
            params: self.params,
            p0: self.p0,
            work_vars: self.work_vars,
            param_program: self.param_program,
            start_program: self.start_program,
            rhs: self.rhs,
            outputs: self.outputs,
            algorithms: self.algorithms,
            algorithm_of_section: self.algorithm_of_section,
            conditions: self.conditions,
            events: self.events,
            names,
            invariants: self.invariants,
            state_choice: self.state_choice,
            jacobian: None,
        }
    }
}

/// The variables `e` reads directly, and those it reads only through `pre(...)`.
fn reads_split_by_pre(arena: &ExprArena, e: ExprId) -> (Vec<VarId>, Vec<VarId>) {
    let (mut now, mut previous) = (Vec::new(), Vec::new());
    let mut stack = vec![(e, false)];
    while let Some((id, in_pre)) = stack.pop() {
        match arena.get(id) {
            Node::Var(v) if in_pre => previous.push(*v),
            Node::Var(v) => now.push(*v),
            Node::Call(Callee::Builtin(Builtin::Pre), args) => stack.extend(args.iter().map(|a| (*a, true))),
            _ => stack.extend(arena.children(id).map(|c| (c, in_pre))),
        }
    }
    (now, previous)
}

fn model_span(dae: &Dae) -> Span {
    dae.flat.instances.first().map_or_else(Span::default, |i| i.span)
}

/// The value of an expression without variables, operators or user functions, if it is one.
fn constant_value(arena: &ExprArena, e: ExprId) -> Option<f64> {
    if let Some(v) = arena.literal(e) {
        return Some(v);
    }
    let mut vars = Vec::new();
    arena.vars_in(e, &mut vars);
    if !vars.is_empty() {
        return None;
    }
    eqm_ir::symbolic::evaluate(arena, e, &|_| f64::NAN, 0.0)
        .ok()
        .filter(|v| v.is_finite())
}

/// The loop unknowns occurring in `root`: `der(x)` nodes are leaves of their own, and nothing
/// inside `der(...)` or `pre(...)` is an unknown.
fn loop_vars_in(arena: &ExprArena, root: ExprId, leaf_var: &FxHashMap<ExprId, LoopVar>) -> Vec<LoopVar> {
    let mut out = Vec::new();
    let mut seen = eqm_ir::symbolic::FxHashSet::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let Some(&lv) = leaf_var.get(&e) {
            out.push(lv);
            continue;
        }
        if !matches!(
            arena.get(e),
            Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _)
        ) {
            stack.extend(arena.children(e));
        }
    }
    out.sort_unstable();
    out
}

/// Checks expressions against the program's contract, each node once per context.
struct Validator<'a> {
    arena: &'a ExprArena,
    slots: &'a [Option<Slot>],
    functions: &'a [flat::Function],
    checked_model: Vec<bool>,
    checked_function: Vec<bool>,
    stack: Vec<ExprId>,
}

impl Validator<'_> {
    fn check(&mut self, root: ExprId, in_function: bool) -> Result<(), &'static str> {
        self.stack.clear();
        self.stack.push(root);
        while let Some(e) = self.stack.pop() {
            let checked = if in_function {
                &mut self.checked_function
            } else {
                &mut self.checked_model
            };
            match checked.get_mut(e.0 as usize) {
                Some(true) => continue,
                Some(c) => *c = true,
                None => return Err("an expression the compiler did not build"),
            }
            let slot = |v: &VarId| self.slots.get(v.0 as usize).copied().flatten();
            match self.arena.get(e) {
                Node::Str(_) => return Err("a String has no numeric value"),
                Node::Var(v) if slot(v).is_none() => return Err("a String variable has no numeric value"),
                Node::Local(_) if !in_function => return Err("a function local outside a function"),
                Node::Call(Callee::Builtin(b), args) => {
                    let info = b.info();
                    match (b, info.eval, args.len()) {
                        (Builtin::Der, _, 1) => match self.arena.get(args[0]) {
                            Node::Var(v) if matches!(slot(v), Some(Slot::State(_))) => {}
                            _ => return Err("der(...) of something that is not a state"),
                        },
                        (Builtin::Pre, _, 1) => match self.arena.get(args[0]) {
                            Node::Var(v) if slot(v).is_some() => {}
                            _ => return Err("pre(...) of something that is not a variable"),
                        },
                        (Builtin::NoEvent | Builtin::Smooth, _, _) => {
                            self.stack.extend(args.last().copied());
                        }
                        (
                            Builtin::Edge | Builtin::Change | Builtin::Initial | Builtin::Terminal | Builtin::Sample,
                            ..,
                        ) => {}
                        (_, Eval::Unary(_), 1) | (_, Eval::Binary(_), 2) => self.stack.extend(args.iter().copied()),
                        _ => return Err("this built-in cannot be evaluated numerically"),
                    }
                }
                Node::Call(Callee::User(f), args) => {
                    let Some(function) = self.functions.get(f.0 as usize) else {
                        return Err("a call of an unknown function");
                    };
                    if function.outputs == 0 {
                        return Err("a function without outputs has no value");
                    }
                    if args.len() != function.inputs as usize {
                        return Err("a call with the wrong number of arguments");
                    }
                    self.stack.extend(args.iter().copied());
                }
                Node::CallOutput(call, k) => match self.arena.get(*call) {
                    Node::Call(Callee::User(f), _)
                        if self.functions.get(f.0 as usize).is_some_and(|func| *k < func.outputs) =>
                    {
                        self.stack.push(*call);
                    }
                    _ => return Err("an output that the called function does not have"),
                },
                _ => self.stack.extend(self.arena.children(e)),
            }
        }
        Ok(())
    }
}

/// Calls `f` on every expression of `statements` (nested ones included) with the span of the
/// statement it belongs to.
fn for_each_statement_expr(statements: &[Statement], f: &mut dyn FnMut(ExprId, Span)) {
    for s in statements {
        let span = statement_span(s);
        match s {
            Statement::Assign { value, .. } => f(*value, span),
            Statement::If {
                branches, else_branch, ..
            } => {
                for (c, body) in branches {
                    f(*c, span);
                    for_each_statement_expr(body, f);
                }
                for_each_statement_expr(else_branch, f);
            }
            Statement::Unrolled { iterations, .. } => {
                for body in iterations {
                    for_each_statement_expr(body, f);
                }
            }
            Statement::For {
                start,
                step,
                stop,
                body,
                ..
            } => {
                f(*start, span);
                f(*step, span);
                f(*stop, span);
                for_each_statement_expr(body, f);
            }
            Statement::While { condition, body, .. } => {
                f(*condition, span);
                for_each_statement_expr(body, f);
            }
            Statement::Assert { condition, .. } => f(*condition, span),
            Statement::Terminate { .. } | Statement::Break { .. } | Statement::Return { .. } => {}
        }
    }
}

/// The source span of a statement.
pub fn statement_span(s: &Statement) -> Span {
    match s {
        Statement::Assign { span, .. }
        | Statement::If { span, .. }
        | Statement::Unrolled { span, .. }
        | Statement::For { span, .. }
        | Statement::While { span, .. }
        | Statement::Assert { span, .. }
        | Statement::Terminate { span, .. }
        | Statement::Break { span }
        | Statement::Return { span } => *span,
    }
}

/// `statements` with every expression replaced by `f(expression)`.
fn map_statements(statements: &[Statement], f: &mut dyn FnMut(ExprId) -> ExprId) -> Vec<Statement> {
    statements
        .iter()
        .map(|s| match s {
            Statement::Assign { target, value, span } => Statement::Assign {
                target: *target,
                value: f(*value),
                span: *span,
            },
            Statement::If {
                branches,
                else_branch,
                span,
            } => Statement::If {
                branches: branches
                    .iter()
                    .map(|(c, body)| (f(*c), map_statements(body, f)))
                    .collect(),
                else_branch: map_statements(else_branch, f),
                span: *span,
            },
            Statement::Unrolled { iterations, span } => Statement::Unrolled {
                iterations: iterations.iter().map(|b| map_statements(b, f)).collect(),
                span: *span,
            },
            Statement::For {
                index,
                start,
                step,
                stop,
                body,
                span,
            } => Statement::For {
                index: *index,
                start: f(*start),
                step: f(*step),
                stop: f(*stop),
                body: map_statements(body, f),
                span: *span,
            },
            Statement::While { condition, body, span } => Statement::While {
                condition: f(*condition),
                body: map_statements(body, f),
                span: *span,
            },
            Statement::Assert {
                condition,
                message,
                span,
            } => Statement::Assert {
                condition: f(*condition),
                message: message.clone(),
                span: *span,
            },
            other => other.clone(),
        })
        .collect()
}

fn internal(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(
        "E0699",
        format!("internal error while building the executable program: {text}"),
        span,
        "here",
    )
    .with_help("please report this model")
}

impl ExecProgram {
    /// The diagnostic for an evaluation failure of this program (`E07xx`), naming the
    /// equations, variables and time.
    pub fn failure_diagnostic(&self, failure: &EvalFailure) -> Diagnostic {
        let program = self;
        let dae = program.dae();
        let fallback = program.model_span();
        let at_time = if failure.time.is_nan() {
            String::new()
        } else {
            format!(" at time {}", failure.time)
        };
        let subject = match &failure.kind {
            FailureKind::Condition { condition, .. } => {
                format!("`{}`", dae.flat.expr_text(condition.expr()))
            }
            _ => String::new(),
        };
        let (code, what) = failure.kind.describe(&subject);
        let eq_label = |eq: usize| -> (Span, String) {
            match dae.equations.get(eq) {
                Some(e) => (
                    e.span,
                    format!(
                        "e{}: {} ({})",
                        eq + 1,
                        dae.equation_text(e),
                        dae.origin_label(&e.origin)
                    ),
                ),
                None => (fallback, format!("equation e{}", eq + 1)),
            }
        };
        let var_name = |v: VarId| dae.flat.var(v).name.clone();
        let (message, labels): (String, Vec<(Span, String)>) = match &failure.site {
            FailureSite::Equations { eqs, unknowns } => {
                let names: Vec<String> = unknowns.iter().take(8).map(|s| program.slot_name(*s)).collect();
                let solving = if eqs.len() == 1 {
                    format!("solving equation e{} for {}", eqs[0] + 1, names.join(", "))
                } else {
                    format!(
                        "solving the algebraic loop of {} equations for {}{}",
                        eqs.len(),
                        names.join(", "),
                        if unknowns.len() > 8 { " and more" } else { "" }
                    )
                };
                (
                    format!("{solving} failed{at_time}: {what}"),
                    eqs.iter().take(10).map(|&e| eq_label(e)).collect(),
                )
            }
            FailureSite::Algorithm { index } => {
                let span = program.algorithms().get(*index).map_or(fallback, |a| a.span);
                (
                    format!("the algorithm section failed{at_time}: {what}"),
                    vec![(span, "in this algorithm section".to_string())],
                )
            }
            FailureSite::Parameter { var } => (
                format!("computing parameter `{}` failed: {what}", var_name(*var)),
                vec![(dae.flat.var(*var).span, "declared here".to_string())],
            ),
            FailureSite::Start { var } => (
                format!("computing the start value of `{}` failed: {what}", var_name(*var)),
                vec![(dae.flat.var(*var).span, "declared here".to_string())],
            ),
            FailureSite::Output { var } => (
                format!("computing `{}` failed{at_time}: {what}", var_name(*var)),
                vec![(dae.flat.var(*var).span, "declared here".to_string())],
            ),
            FailureSite::Condition { eq } => {
                let (span, label) = eq_label(*eq);
                (
                    format!("the parameters are not valid: {what}"),
                    vec![(span, format!("needed to solve {label}"))],
                )
            }
            FailureSite::Call => (what.clone(), Vec::new()),
            FailureSite::Event { span } => (
                format!("handling an event failed{at_time}: {what}"),
                vec![(*span, "evaluated at the event".to_string())],
            ),
        };
        // A failure inside a statement points at the statement first.
        let statement = match &failure.kind {
            FailureKind::Assert { span, .. } | FailureKind::Terminate { span, .. } | FailureKind::ZeroStep { span } => {
                Some(*span)
            }
            _ => None,
        };
        let mut labels = labels.into_iter();
        let (primary, primary_label) = match statement {
            Some(span) => (span, "failed here".to_string()),
            None => labels.next().unwrap_or((fallback, "in this model".to_string())),
        };
        let mut d = Diagnostic::error(code, message, primary, primary_label);
        for (span, label) in labels {
            d = d.with_label(span, label);
        }
        if let FailureSite::Equations { unknowns, .. } = &failure.site {
            for s in unknowns.iter().take(4) {
                let var = match *s {
                    Slot::State(i) | Slot::Der(i) => program.states().get(i as usize),
                    Slot::Work(i) => program.work_vars().get(i as usize),
                    Slot::Param(i) => program.params().get(i as usize),
                    Slot::Time => None,
                };
                if let Some(v) = var {
                    d = d.with_label(
                        dae.flat.var(*v).span,
                        format!("`{}` declared here", program.slot_name(*s)),
                    );
                }
            }
        }
        d
    }
}
