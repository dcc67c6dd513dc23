//! The executable program: what the reference interpreter and the JIT run.
//!
//! Input: a [`Dae`] in the hybrid stage (aliases removed, index at most one, relations read
//! event variables) and its causalisation [`Plan`]. Output: an [`ExecProgram`], or diagnostics
//! (`E06xx`) when something in the model cannot be executed. The program decides the run-time
//! layout ([`Slot`]): states in `x` (in variable order), their derivatives in `dx` (same
//! index), independent parameters in `p` with their default values, and everything else in
//! `work` (algebraic variables, dependent parameters and constants, discrete and event
//! variables, and the variables alias elimination removed). It holds straight-line programs
//! over that layout, all as expressions of one arena:
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
//! - the algorithm sections, rewritten so that they never read a removed variable;
//! - the event program ([`ExecEvents`]): zero-crossing surfaces, samples, when-clauses;
//! - the invariants and, for a dummy-derivative form, the check of its state choice.
//!
//! It keeps what later stages need to name things (a [`Symbols`] table and the equations), not
//! the DAE itself.
//!
//! The program's contract for every back end: each expression reachable from it reads only
//! variables that have a slot, and those slots hold the current values when the expression is
//! evaluated; `der(x)` reads `dx`; `pre(v)` reads `v` itself; the event operators (`edge`,
//! `change`, `initial`, `terminal`, `sample`) were replaced by event variables when the events
//! were extracted, which hold what the last event gave them (the simulation's event handling
//! sets them); `noEvent(e)` and `smooth(n, e)` are `e`; every built-in function is evaluated
//! through its numeric implementation in [`eqm_ir::builtins`], the operators through
//! [`eqm_ir::symbolic::eval::unary`] and [`eqm_ir::symbolic::eval::binary`]. Every value an
//! instruction assigns must be finite, or evaluation fails with an
//! [`EvalFailure`](eqm_ir::failure::EvalFailure).
//!
//! Building is a pure function of its input, linear in the size of the model (plus the symbolic
//! derivatives of implicit equations and loops), and runs no model code. Parameter values and
//! start values are run-time inputs: changing them never needs a new program (parameters the
//! flattener used structurally are marked in the symbols: those need flattening again). This
//! module deliberately evaluates nothing at run time (the simulation crate does, assertions
//! included), and does not handle initial equations (the initialization problem).

mod build;
mod delay_reads;
mod diagnose;
mod events;
pub mod jacobian;
mod link;
mod validate;

pub use link::InitLink;

use crate::dae::{Dae, Equation};
use crate::events::Hybrid;
use crate::plan::Plan;
use crate::symbols::Symbols;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprArena, ExprId, VarId};
use eqm_ir::flat::{self, ModelSymbols, Statement};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::Condition;

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
    /// The magnitude each tearing unknown is measured by (its `nominal` attribute when that is
    /// a positive finite number, else 1): the solver scales its steps and tests its
    /// convergence in units of it.
    pub nominal: Vec<f64>,
    /// The tearing unknowns whose `nominal` is an expression of parameters (their entry of
    /// `nominal` is 1 until then): the index into `tearing` and the expression, which the back
    /// ends evaluate once the parameters are bound and use instead, by its absolute value when
    /// that is finite and nonzero.
    pub nominal_exprs: Vec<(usize, ExprId)>,
    /// `target := value` from equation `eq`, in evaluation order.
    pub inner: Vec<LoopAssign>,
    /// `lhs - rhs` of each residual equation, with the equation.
    pub residuals: Vec<(ExprId, usize)>,
    /// Every equation is affine in the loop's unknowns: one Newton step (an LU solve) suffices.
    pub linear: bool,
    /// The symbolic partial derivatives for the chain rule; `None` when some partial derivative
    /// could not be built, in which case back ends use difference quotients.
    pub jacobian: Option<LoopJacobian>,
    /// When an inner value or a residual can leave its domain (a logarithm, a square root, an
    /// inverse sine or cosine, a division or a power of the loop's unknowns): `lhs - rhs` of
    /// each inner assignment's equation as written, in the order of `inner`. Where the torn
    /// residuals cannot be evaluated or solved, back ends solve these with `residuals`, every
    /// unknown of the loop an iteration variable (the tearing unknowns, then the inner ones),
    /// from the values the unknowns hold.
    pub untorn: Option<Vec<ExprId>>,
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
    /// Before the statements run, continuous outputs are set to their start values and
    /// discrete-time ones to their values before the event (Modelica's rule).
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
    /// `T` when the surface is `time - T` with `T` an expression that changes only at events
    /// (a time event).
    pub time_event: Option<ExprId>,
    /// Whether that `T` reads discrete-time variables, so that it is recomputed after every
    /// event (a `T` of parameters alone is computed once, at the start).
    pub time_moves: bool,
}

/// A when-clause: each branch's condition (reading relation variables) and actions; the first
/// branch whose condition becomes true fires. The actions are the flat model's, checked here:
/// an assignment's variable has a work slot, a reinit's variable is a state.
#[derive(Debug, Clone)]
pub struct ExecWhen {
    pub branches: Vec<(ExprId, Vec<flat::WhenAction>)>,
    /// Per branch: an assignment reads (not through `pre`) a variable that the continuous
    /// equations compute from a variable some when-clause assigns (`x + y = 5; when c then
    /// y = 7 - 2*x; end when;`). At an event such a branch's assignments are solved together
    /// with the continuous equations, not evaluated one after the other.
    pub coupled: Vec<bool>,
    /// The other clauses whose assignments a condition of this one reads at the same event
    /// (not through `pre`): directly, through a relation's surface, or through a variable the
    /// continuous equations compute from them. At an event its conditions are evaluated only
    /// after those clauses have fired or not.
    pub after: Vec<usize>,
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

/// `delay(expr, delay)` as the program evaluates it: its variable's work slot, the expression
/// whose history the simulation keeps (evaluated after the right-hand side and the outputs) and
/// the delay: a parameter expression, or (when `varying`) an expression evaluated at every point
/// and bounded by `max`, before the right-hand side when it reads only time, states, parameters
/// and discrete variables, and settled with the equations when it reads what they compute.
#[derive(Debug, Clone, Copy)]
pub struct ExecDelay {
    pub slot: u32,
    pub var: VarId,
    pub expr: ExprId,
    pub delay: ExprId,
    /// The largest delay (a parameter expression), when given.
    pub max: Option<ExprId>,
    /// The delay time changes during the run.
    pub varying: bool,
    /// The delay time reads something the equations compute (an algebraic variable, a
    /// derivative, another delayed value): the simulation settles it together with the
    /// equations, by substitution (the program has no cycle of delay times reading their own
    /// delayed values).
    pub reads_equations: bool,
    pub span: Span,
}

/// `spatialDistribution` as the program evaluates it: the work slots of its profile's first
/// value, last value, value at 0 and value at 1 (set by the simulation before the right-hand
/// side, from `x` there), the inflows `in0` and `in1` (evaluated after the right-hand side at
/// accepted points) and the initial profile. `x` reads only time, states, parameters and
/// discrete variables, so it is known before the equations.
#[derive(Debug, Clone)]
pub struct ExecSpatial {
    pub slots: [u32; 4],
    pub in0: ExprId,
    pub in1: ExprId,
    pub x: ExprId,
    /// `positiveVelocity`: the end a jump of the inflow enters at where the profile does not move.
    pub positive: ExprId,
    pub points: Vec<f64>,
    pub values: Vec<f64>,
    pub span: Span,
}

/// A value held from before the current pass of the event iteration: the work slot and
/// variable holding it and the expression it is set to between passes.
#[derive(Debug, Clone, Copy)]
pub struct ExecPrevious {
    pub slot: u32,
    pub var: VarId,
    pub expr: ExprId,
    /// At the start it is the expression's value at the initial point (`edge` and `change` of
    /// a condition already true at the start are false), not a start value (`pre(v)` is `v`'s
    /// start value).
    pub settled_at_start: bool,
    /// Set when an event starts, to the expression's value just before it (`pre(e)` of a
    /// continuous-time `e`), and held through the passes of the event iteration.
    pub left_limit: bool,
    /// The integer part of `floor`, `ceil`, `integer`, `div`, `mod` or `rem`: recomputed while
    /// the when-clauses that fire at an event are solved.
    pub integer_part: bool,
}

/// What the event handling of a simulation evaluates.
#[derive(Debug, Clone, Default)]
pub struct ExecEvents {
    pub surfaces: Vec<ExecSurface>,
    pub samples: Vec<ExecSample>,
    /// `delay(expr, delay)`: the work slot the simulation sets from the history of `expr`.
    pub delays: Vec<ExecDelay>,
    /// `spatialDistribution`: the profiles the simulation moves and reads into work slots.
    pub spatials: Vec<ExecSpatial>,
    /// The values before the current pass of the event iteration (`pre`, `edge`, `change`,
    /// held integer parts).
    pub previous: Vec<ExecPrevious>,
    /// The work slots and variables of `initial()` and `terminal()`, if used.
    pub initial: Option<(u32, VarId)>,
    pub terminal: Option<(u32, VarId)>,
    /// The work slot and variable that is true during the passes of an event iteration, if an
    /// algorithm section reads its tests literally at events.
    pub event: Option<(u32, VarId)>,
    pub whens: Vec<ExecWhen>,
    /// Every when-clause once, each after the clauses in its [`ExecWhen::after`]; clauses that
    /// read each other's assignments in a cycle keep their written order among themselves.
    pub when_order: Vec<usize>,
    /// The work slots of every discrete variable (relation variables included): the state an
    /// event changes besides `x`.
    pub discrete: Vec<u32>,
}

impl ExecEvents {
    pub fn is_empty(&self) -> bool {
        self.surfaces.is_empty()
            && self.whens.is_empty()
            && self.samples.is_empty()
            && self.delays.is_empty()
            && self.spatials.is_empty()
            && self.previous.is_empty()
            && self.initial.is_none()
            && self.terminal.is_none()
            && self.event.is_none()
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

/// An `assert` of an equation section: its condition over the program's slots (removed
/// variables replaced by their values), checked by the simulation at every accepted step and
/// event, or once before the run when it reads parameters only.
#[derive(Debug, Clone)]
pub struct ExecAssertion {
    pub condition: ExprId,
    /// Its values read the program's slots like the condition.
    pub message: flat::Message,
    /// The component whose equations hold it (`S2`); empty for the model's own.
    pub component: String,
    pub level: flat::AssertionLevel,
    /// An assertion of an initial section, checked at the start only.
    pub initial: bool,
    /// Whether the condition reads nothing but parameters and constants.
    pub parametric: bool,
    pub span: Span,
    /// The condition as written, for messages.
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
    /// Every expression of the program: the model's, and the residuals and derivatives built
    /// here and by the symbolic Jacobian.
    exprs: ExprArena,
    /// The user-defined functions the program calls.
    functions: Vec<flat::Function>,
    /// The external C functions the program calls, linked.
    externals: Vec<eqm_ir::external::ExternalFunction>,
    /// The names, kinds and units of the variables, for messages, results and changes.
    symbols: Symbols,
    /// The equations the instructions were solved from (`eq` indices), for messages.
    equations: Vec<Equation>,
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
    invariants: Vec<ExecInvariant>,
    assertions: Vec<ExecAssertion>,
    state_choice: Option<ExecStateChoice>,
    /// The magnitude of each state (its `nominal`, else 1), which scales its absolute
    /// tolerance.
    state_nominals: Vec<f64>,
    /// The symbolic Jacobian, when it was asked for and could be built.
    jacobian: Option<jacobian::ExecJacobian>,
}

impl ExecProgram {
    /// Builds the program of `dae` with causalisation `plan`; a pure function. Fails with
    /// diagnostics naming the equations, bindings or statements that cannot be executed.
    pub fn build(dae: Dae<Hybrid>, plan: &Plan) -> Result<ExecProgram, Vec<Diagnostic>> {
        let mut b = build::Builder::new(dae);
        b.layout();
        b.parameter_program();
        b.start_program();
        b.rhs(plan);
        b.outputs();
        b.conditions(plan);
        b.events();
        b.invariants();
        b.assertions();
        b.state_choice();
        b.validate();
        if !b.diagnostics.is_empty() {
            return Err(b.diagnostics);
        }
        Ok(b.finish())
    }

    /// The names, kinds and units of the model's variables.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// The equations the instructions were solved from, indexed by their `eq`.
    pub fn equations(&self) -> &[Equation] {
        &self.equations
    }

    /// An expression of the program as text, with full variable names.
    pub fn expr_text(&self, e: ExprId) -> String {
        self.exprs.display_with(e, &ProgramNames(self))
    }

    /// The text `lhs = rhs` of equation `eq`.
    pub fn equation_text(&self, eq: &Equation) -> String {
        format!("{} = {}", self.expr_text(eq.lhs), self.expr_text(eq.rhs))
    }

    /// The arena, for stages that add expressions to the program (the Jacobian).
    pub(crate) fn arena_mut(&mut self) -> &mut ExprArena {
        &mut self.exprs
    }

    /// The invariants `g = 0` of the model, in declaration order.
    pub fn invariants(&self) -> &[ExecInvariant] {
        &self.invariants
    }

    /// The assertions of the model's equation sections, in declaration order.
    pub fn assertions(&self) -> &[ExecAssertion] {
        &self.assertions
    }

    /// The check of the static state choice of a dummy-derivative form, if it has one.
    pub fn state_choice(&self) -> Option<&ExecStateChoice> {
        self.state_choice.as_ref()
    }

    /// Sets the symbolic Jacobian ([`crate::jacobian`] builds it).
    pub(crate) fn set_jacobian(&mut self, jacobian: Option<jacobian::ExecJacobian>) {
        self.jacobian = jacobian;
    }

    /// The symbolic Jacobian, if [`ExecProgram::add_jacobian`] built one.
    pub fn jacobian(&self) -> Option<&jacobian::ExecJacobian> {
        self.jacobian.as_ref()
    }

    /// The arena that holds every expression of the program.
    pub fn exprs(&self) -> &ExprArena {
        &self.exprs
    }

    /// The user-defined functions the program calls (`Callee::User(FuncId(i))` is entry `i`).
    pub fn functions(&self) -> &[flat::Function] {
        &self.functions
    }

    /// The external C functions the program calls (`Callee::External(k)` is entry `k`).
    pub fn externals(&self) -> &[eqm_ir::external::ExternalFunction] {
        &self.externals
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

    /// The magnitude of each state, in the order of [`Self::states`]: the absolute value of its
    /// `nominal` attribute with the model's parameter values, else 1. The simulation multiplies
    /// the absolute tolerance by it, so that a state of size 1e-4 is not measured with a
    /// tolerance meant for values of size 1.
    pub fn state_nominals(&self) -> &[f64] {
        &self.state_nominals
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
        self.symbols.lookup(name)
    }

    /// Every variable with a value, by full name in sorted order, with its slot and, for
    /// variables removed by alias elimination, the expression that the outputs program
    /// evaluates into that slot. Names starting with `$` are variables the compiler introduced.
    pub fn variables(&self) -> impl Iterator<Item = (&str, VarId, Slot, Option<ExprId>)> + '_ {
        self.symbols.by_name().filter_map(|(name, v)| {
            let slot = self.slot_of(v)?;
            Some((name, v, slot, self.symbols.get(v).eliminated))
        })
    }

    /// Whether `v` can be changed with a new value in `p` (an independent parameter).
    pub fn is_settable(&self, v: VarId) -> bool {
        matches!(self.slot_of(v), Some(Slot::Param(_)))
    }

    /// The name of the variable or derivative in `slot`, for messages.
    pub fn slot_name(&self, slot: Slot) -> String {
        let name = |v: Option<&VarId>| v.map_or_else(|| "?".to_string(), |v| self.symbols.var_name(*v).to_string());
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
        self.symbols.model_span()
    }

    /// The algorithm of a flat algorithm section, if the right-hand side runs it.
    pub fn algorithm_of_section(&self, section: usize) -> Option<&ExecAlgorithm> {
        let k = self.algorithm_of_section.get(section).copied().flatten()?;
        self.algorithms.get(k)
    }
}

/// Names for printing a program's expressions: variables by full name, functions by class
/// name.
struct ProgramNames<'p>(&'p ExecProgram);

impl eqm_ir::expr::Names for ProgramNames<'_> {
    fn var(&self, v: VarId) -> String {
        self.0.symbols.var_name(v).to_string()
    }

    fn function(&self, f: eqm_ir::expr::FuncId) -> String {
        match self.0.functions.get(f.0 as usize) {
            Some(function) => function.name.clone(),
            None => format!("function{}", f.0),
        }
    }
}
