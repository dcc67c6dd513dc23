//! The dependencies of an FMU's outputs, state derivatives and initial unknowns on its knowns,
//! with the kind of each dependency, from the compiled programs' evaluation order.
//!
//! Input: a compiled [`Model`] and its [`FmiVariable`]s. Output: for each output and each state
//! derivative, the value references of the continuous states and inputs its value depends on
//! at an instant, each with its [`DependencyKind`]; for each initial unknown, the knowns of the
//! initialization it depends on; or `None` when that is not known exactly (the value goes
//! through an algorithm section, a delay or a transport profile): FMI then assumes it depends
//! on every known.
//!
//! The right-hand side is a straight-line program, so one pass in evaluation order gives each
//! slot it assigns what it depends on, from the slots its expression reads: a state depends on
//! itself, an input on itself, time and parameters on nothing, a discrete variable (held
//! between events) on nothing. A Newton iteration's target depends on what its residual reads
//! besides the target; every unknown of an algebraic loop on what any of its equations reads
//! besides the loop's unknowns. The pass is linear in the size of the program.
//!
//! The kind says how a known enters (FMI's `dependenciesKind`): `constant` when the unknown is
//! `c·v` plus terms without `v` and the factor `c` is built from literals only, `fixed`,
//! `tunable` or `discrete` when the factor also reads fixed parameters, tunable parameters or
//! values that change only at events, `dependent` otherwise. An expression is walked from its
//! root with the class of the factor its subexpression is multiplied by: a sum passes it on, a
//! product `a·b` multiplies it by the class of the other operand, the numerator of a quotient
//! by the class of the denominator, the branches of an `if` by the class of the condition;
//! anything else (a function, a power, a denominator, a condition, an implicit equation) makes
//! it `dependent`. A class is the coarsest of what an expression reads, so the kind is never
//! finer than the truth, only sometimes coarser (a relation's operands are `dependent` even
//! when the relation is constant between events). FMI allows kinds for Real unknowns and knowns
//! only: any other pair is `dependent`.
//!
//! The initial unknowns (outputs, states and derivatives whose initial value is computed, and
//! calculated parameters) get theirs from a second pass whose knowns are the inputs, the
//! parameters with an exact initial value and the states with one. When the model's
//! initialization is its start values, the pass runs over the simulation program, a state
//! without an exact start being what its start expression reads; when the model has an
//! initialization problem of its own (initial equations, states without a fixed start), the
//! pass runs over that problem's program, in which the states and derivatives are unknowns like
//! any other and the model's variables are found by name. Initially FMI allows the kinds
//! `constant` and `dependent` only. Discrete initial unknowns (set by the initial event) are
//! listed without dependencies. This module evaluates nothing.

use crate::Model;
use crate::fmi::variables::{FmiCausality, FmiInitial, FmiSource, FmiType, FmiVariability, FmiVariable};
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, FxHashMap, FxHashSet, Node};
use eqm_ir::ids::{BinOp, UnOp};
use eqm_ir::slot::Slot;

/// How a known enters an unknown (FMI's `dependenciesKind`), from the finest to the coarsest:
/// as the class of a factor, each kind also holds every finer one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DependencyKind {
    /// `c·v`, `c` built from literals.
    Constant,
    /// `p·v`, `p` fixed after the initialization.
    Fixed,
    /// `p·v`, `p` changed only by setting tunable parameters.
    Tunable,
    /// `d·v`, `d` changed only at events.
    Discrete,
    /// Any other way.
    Dependent,
}

impl DependencyKind {
    /// The attribute value FMI writes.
    pub fn text(self) -> &'static str {
        match self {
            DependencyKind::Constant => "constant",
            DependencyKind::Fixed => "fixed",
            DependencyKind::Tunable => "tunable",
            DependencyKind::Discrete => "discrete",
            DependencyKind::Dependent => "dependent",
        }
    }
}

/// The knowns an unknown depends on, by value reference (sorted) with their kinds; `None` for
/// "every known".
pub type Dependencies = Option<Vec<(u32, DependencyKind)>>;

/// The dependencies of every output (in value-reference order), of every state derivative (in
/// state order) and of every initial unknown (in value-reference order), each paired with the
/// unknown's value reference.
pub struct Structure {
    pub outputs: Vec<(u32, Dependencies)>,
    pub derivatives: Vec<(u32, Dependencies)>,
    pub initial_unknowns: Vec<(u32, Dependencies)>,
}

/// What one slot's value depends on, and the class of the value itself (what it reads at its
/// coarsest, as a factor's class).
#[derive(Debug, Clone)]
struct Info {
    deps: Dependencies,
    class: DependencyKind,
}

impl Info {
    fn none(class: DependencyKind) -> Info {
        Info {
            deps: Some(Vec::new()),
            class,
        }
    }

    fn known(reference: u32, class: DependencyKind) -> Info {
        Info {
            deps: Some(vec![(reference, DependencyKind::Constant)]),
            class,
        }
    }
}

/// The dependencies of each slot of one program in one pass; see the module documentation.
struct Pass<'p> {
    program: &'p ExecProgram,
    work: Vec<Info>,
    der: Vec<Info>,
    states: Vec<Info>,
    params: Vec<Info>,
    /// The slots that hold knowns: what the program assigns to them does not change that they
    /// are given.
    pinned: FxHashSet<Slot>,
}

/// The structure of `model` with variables `variables` (from [`crate::fmi::variables`]).
pub fn structure(model: &Model, variables: &[FmiVariable]) -> Structure {
    let program = model.program();
    let continuous = continuous_pass(program, variables);
    let real = |vr: u32| variables.get(vr as usize).is_some_and(|v| v.ty == FmiType::Real);
    let finish = |unknown: &FmiVariable, deps: Dependencies, initial: bool| {
        deps.map(|deps| {
            deps.into_iter()
                .map(|(known, kind)| {
                    let allowed =
                        unknown.ty == FmiType::Real && real(known) && (!initial || kind == DependencyKind::Constant);
                    (known, if allowed { kind } else { DependencyKind::Dependent })
                })
                .collect()
        })
    };
    let outputs = variables
        .iter()
        .filter(|v| v.causality == FmiCausality::Output)
        .map(|v| {
            let deps = match v.source {
                // An output that is a state is known itself: it has no dependencies (the
                // convention of FMI's own examples).
                FmiSource::Variable {
                    slot: Slot::State(_), ..
                } => Some(Vec::new()),
                FmiSource::Variable { slot, .. } => continuous.of(slot).deps,
                _ => None,
            };
            (v.value_reference, finish(v, deps, false))
        })
        .collect();
    let derivatives = variables
        .iter()
        .filter_map(|v| match v.source {
            FmiSource::Derivative { state } => {
                let deps = continuous.der[state as usize].deps.clone();
                Some((v.value_reference, finish(v, deps, false)))
            }
            _ => None,
        })
        .collect();
    let initial = match model.init_program() {
        None => Initial::Starts(starts_pass(program, variables)),
        Some(init) => Initial::Own(own_pass(program, init, variables), init),
    };
    let initial_unknowns = variables
        .iter()
        .filter(|v| is_initial_unknown(v))
        .map(|v| {
            let deps = match v.variability {
                FmiVariability::Discrete => None,
                _ => initial.of(program, v),
            };
            (v.value_reference, finish(v, deps, true))
        })
        .collect();
    Structure {
        outputs,
        derivatives,
        initial_unknowns,
    }
}

/// The pass of the initialization, over the simulation program or the initialization's own.
enum Initial<'p> {
    Starts(Pass<'p>),
    Own(Pass<'p>, &'p ExecProgram),
}

impl Initial<'_> {
    /// What FMI variable `v` depends on at the initialization.
    fn of(&self, program: &ExecProgram, v: &FmiVariable) -> Dependencies {
        match (self, v.source) {
            (Initial::Starts(pass), FmiSource::Variable { slot, .. }) => pass.of(slot).deps,
            (Initial::Starts(pass), FmiSource::Derivative { state }) => pass.der[state as usize].deps.clone(),
            (Initial::Own(pass, init), source) => {
                let slot = init_slot(program, init, v, source)?;
                pass.of(slot).deps
            }
            _ => None,
        }
    }
}

/// The slot in the initialization program `init` of FMI variable `v` of `program`: the variable
/// of the same name, and for a derivative the variable `der(x)` that the initialization solves
/// for (a derivative named apart, `$der(x)`, has none).
fn init_slot(program: &ExecProgram, init: &ExecProgram, v: &FmiVariable, source: FmiSource) -> Option<Slot> {
    let name = match source {
        FmiSource::Variable { var, .. } => program.symbols().get(var).name.clone(),
        FmiSource::Derivative { .. } if v.name.starts_with('$') => return None,
        FmiSource::Derivative { .. } => v.name.clone(),
        _ => return None,
    };
    init.slot_of(init.lookup(&name)?)
}

/// FMI's list of initial unknowns: outputs, states and derivatives whose initial value is
/// computed (approx or calculated), and calculated parameters.
pub(crate) fn is_initial_unknown(v: &FmiVariable) -> bool {
    let computed = matches!(v.initial, Some(FmiInitial::Approx | FmiInitial::Calculated));
    match v.causality {
        FmiCausality::CalculatedParameter => true,
        FmiCausality::Output => computed,
        _ => computed && (v.is_state || v.derivative_of.is_some()),
    }
}

/// The class of a parameter as a factor: its variability (an input's: `dependent` when
/// continuous, `discrete` when set at events only).
fn parameter_class(v: &FmiVariable) -> DependencyKind {
    match v.variability {
        FmiVariability::Constant => DependencyKind::Constant,
        FmiVariability::Fixed => DependencyKind::Fixed,
        FmiVariability::Tunable => DependencyKind::Tunable,
        FmiVariability::Discrete => DependencyKind::Discrete,
        FmiVariability::Continuous => DependencyKind::Dependent,
    }
}

/// The empty pass over `program`: every slot depends on nothing, time and the states are
/// continuous, a parameter without a variable is taken as tunable, and a work slot the program
/// does not assign holds a value set at events.
fn empty_pass(program: &ExecProgram) -> Pass<'_> {
    let layout = program.layout();
    Pass {
        program,
        work: vec![Info::none(DependencyKind::Discrete); layout.work],
        der: vec![
            Info {
                deps: None,
                class: DependencyKind::Dependent
            };
            layout.states
        ],
        states: vec![Info::none(DependencyKind::Dependent); layout.states],
        params: vec![Info::none(DependencyKind::Tunable); layout.params],
        pinned: FxHashSet::default(),
    }
}

/// Delayed values and transport profiles depend on the past in ways an instant's dependencies
/// do not describe: every known.
fn mark_history(pass: &mut Pass<'_>) {
    let events = pass.program.events();
    for delay in &events.delays {
        pass.work[delay.slot as usize].deps = None;
    }
    for spatial in &events.spatials {
        for slot in spatial.slots {
            pass.work[slot as usize].deps = None;
        }
    }
}

/// Runs the parameter program, the right-hand side and the outputs program of `pass`'s program.
fn run(pass: &mut Pass<'_>, starts: Option<&[u32]>) {
    let program = pass.program;
    mark_history(pass);
    // A dependent parameter depends on what its binding reads.
    for assign in program.parameter_program() {
        let info = pass.reads(&[assign.value], &[]);
        pass.set(assign.target, info);
    }
    if let Some(computed) = starts {
        // A state whose initial value is computed is its start expression.
        for assign in program.start_program() {
            if let Slot::State(i) = assign.target
                && computed.binary_search(&i).is_ok()
            {
                pass.states[i as usize] = pass.reads(&[assign.value], &[]);
            }
        }
    }
    for instr in program.rhs() {
        pass.instruction(instr);
    }
    for assign in program.outputs() {
        let info = pass.reads(&[assign.value], &[]);
        pass.set(assign.target, info);
    }
}

/// The pass of the continuous-time equations: the knowns are the states and the inputs.
fn continuous_pass<'p>(program: &'p ExecProgram, variables: &[FmiVariable]) -> Pass<'p> {
    let mut pass = empty_pass(program);
    for v in variables {
        if let FmiSource::Variable { slot, .. } = v.source {
            match slot {
                Slot::State(i) => pass.states[i as usize] = Info::known(v.value_reference, DependencyKind::Dependent),
                Slot::Param(i) if v.causality == FmiCausality::Input => {
                    pass.params[i as usize] = Info::known(v.value_reference, parameter_class(v));
                    pass.pinned.insert(slot);
                }
                Slot::Param(i) => pass.params[i as usize].class = parameter_class(v),
                _ => {}
            }
        }
    }
    run(&mut pass, None);
    pass
}

/// Whether FMI variable `v` is a known of the initialization: an input, or a parameter or
/// state with an exact initial value.
fn initially_known(v: &FmiVariable) -> bool {
    v.causality == FmiCausality::Input
        || (v.initial == Some(FmiInitial::Exact) && (v.causality == FmiCausality::Parameter || v.is_state))
}

/// The pass of an initialization by start values over the simulation program.
fn starts_pass<'p>(program: &'p ExecProgram, variables: &[FmiVariable]) -> Pass<'p> {
    let mut pass = empty_pass(program);
    let mut computed_states = Vec::new();
    for v in variables {
        if let FmiSource::Variable { slot, .. } = v.source {
            match slot {
                Slot::State(i) if initially_known(v) => {
                    pass.states[i as usize] = Info::known(v.value_reference, DependencyKind::Dependent);
                }
                Slot::State(i) => computed_states.push(i),
                Slot::Param(i) if initially_known(v) => {
                    pass.params[i as usize] = Info::known(v.value_reference, parameter_class(v));
                    pass.pinned.insert(slot);
                }
                Slot::Param(i) => pass.params[i as usize].class = parameter_class(v),
                _ => {}
            }
        }
    }
    computed_states.sort_unstable();
    run(&mut pass, Some(&computed_states));
    pass
}

/// The pass over the initialization's own program `init`, whose knowns are found by name.
fn own_pass<'p>(program: &ExecProgram, init: &'p ExecProgram, variables: &[FmiVariable]) -> Pass<'p> {
    let mut pass = empty_pass(init);
    for v in variables {
        let FmiSource::Variable { .. } = v.source else { continue };
        let Some(slot) = init_slot(program, init, v, v.source) else {
            continue;
        };
        let class = if v.is_state {
            DependencyKind::Dependent
        } else {
            parameter_class(v)
        };
        let info = if initially_known(v) {
            pass.pinned.insert(slot);
            Info::known(v.value_reference, class)
        } else {
            Info::none(class)
        };
        match slot {
            Slot::Param(i) => pass.params[i as usize] = info,
            Slot::Work(i) if initially_known(v) => pass.work[i as usize] = info,
            Slot::State(i) => pass.states[i as usize] = info,
            _ => {}
        }
    }
    run(&mut pass, None);
    pass
}

impl Pass<'_> {
    /// What one instruction's targets depend on.
    fn instruction(&mut self, instr: &Instr) {
        match instr {
            Instr::Assign { target, value, .. } => {
                let info = self.reads(&[*value], &[]);
                self.set(*target, info);
            }
            Instr::Newton1 { target, residual, .. } => {
                let info = implicit(self.reads(&[*residual], &[*target]));
                self.set(*target, info);
            }
            Instr::Loop(block) => {
                let exprs: Vec<ExprId> = block
                    .inner
                    .iter()
                    .map(|a| a.value)
                    .chain(block.residuals.iter().map(|r| r.0))
                    .collect();
                let info = implicit(self.reads(&exprs, &block.unknowns));
                for &unknown in &block.unknowns {
                    self.set(unknown, info.clone());
                }
            }
            Instr::Algorithm { index } => {
                // The statements of an algorithm are not followed here: its outputs depend on
                // every known.
                if let Some(algorithm) = self.program.algorithms().get(*index) {
                    for &(_, slot) in &algorithm.outputs {
                        self.set(
                            slot,
                            Info {
                                deps: None,
                                class: DependencyKind::Dependent,
                            },
                        );
                    }
                }
            }
        }
    }

    fn set(&mut self, slot: Slot, info: Info) {
        if self.pinned.contains(&slot) {
            return;
        }
        match slot {
            Slot::Work(i) => self.work[i as usize] = info,
            Slot::Der(i) => self.der[i as usize] = info,
            Slot::Param(i) => self.params[i as usize] = info,
            _ => {}
        }
    }

    /// What the value in `slot` depends on as computed so far.
    fn of(&self, slot: Slot) -> Info {
        match slot {
            Slot::Time => Info::none(DependencyKind::Dependent),
            Slot::State(i) => self.states[i as usize].clone(),
            Slot::Param(i) => self.params[i as usize].clone(),
            Slot::Der(i) => self.der[i as usize].clone(),
            Slot::Work(i) => self.work[i as usize].clone(),
        }
    }

    /// The slot a variable node (or `der` of a state) reads, if any.
    fn slot_read(&self, e: ExprId) -> Option<Slot> {
        let arena = self.program.exprs();
        match arena.get(e) {
            Node::Var(v) => self.program.slot_of(*v),
            Node::Call(Callee::Builtin(Builtin::Der), args) => match args.first().map(|&a| arena.get(a)) {
                Some(Node::Var(v)) => match self.program.slot_of(*v)? {
                    Slot::State(i) => Some(Slot::Der(i)),
                    other => Some(other),
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// The class of every subexpression of `roots`, bottom-up with an explicit stack: a literal
    /// is constant, a variable its slot's class, time continuous, a call at least discrete (a
    /// function of nothing, such as `initial()` or `sample`, changes at events), anything else
    /// the coarsest class of its operands.
    fn classes(&self, roots: &[ExprId]) -> FxHashMap<ExprId, DependencyKind> {
        let arena = self.program.exprs();
        let mut class: FxHashMap<ExprId, DependencyKind> = FxHashMap::default();
        let mut stack: Vec<(ExprId, bool)> = roots.iter().map(|&e| (e, false)).collect();
        while let Some((e, expanded)) = stack.pop() {
            if class.contains_key(&e) {
                continue;
            }
            if let Some(slot) = self.slot_read(e) {
                class.insert(e, self.of(slot).class);
                continue;
            }
            let leaf = match arena.get(e) {
                Node::Real(_) | Node::Int(_) | Node::Bool(_) | Node::Str(_) => Some(DependencyKind::Constant),
                Node::Var(_) | Node::Local(_) | Node::Time => Some(DependencyKind::Dependent),
                _ => None,
            };
            if let Some(leaf) = leaf {
                class.insert(e, leaf);
                continue;
            }
            if !expanded {
                stack.push((e, true));
                stack.extend(arena.children(e).map(|c| (c, false)));
                continue;
            }
            let floor = match arena.get(e) {
                Node::Call(..) | Node::CallOutput(..) => DependencyKind::Discrete,
                _ => DependencyKind::Constant,
            };
            let coarsest = arena.children(e).map(|c| class[&c]).fold(floor, DependencyKind::max);
            class.insert(e, coarsest);
        }
        class
    }

    /// What the values of `exprs` depend on (leaving out the slots `excluded`) and their class;
    /// see the module documentation. The walk from the roots visits each subexpression at most
    /// once per factor class, so it is linear in the expressions' size.
    fn reads(&self, exprs: &[ExprId], excluded: &[Slot]) -> Info {
        let mut excluded = excluded.to_vec();
        excluded.sort_unstable();
        let arena = self.program.exprs();
        let class = self.classes(exprs);
        let of = |e: ExprId| class[&e];
        let whole = exprs
            .iter()
            .map(|&e| of(e))
            .fold(DependencyKind::Constant, DependencyKind::max);
        let mut visited: FxHashSet<(ExprId, DependencyKind)> = FxHashSet::default();
        let mut stack: Vec<(ExprId, DependencyKind)> = exprs.iter().map(|&e| (e, DependencyKind::Constant)).collect();
        let mut found: Vec<(u32, DependencyKind)> = Vec::new();
        let dependent = DependencyKind::Dependent;
        while let Some((e, factor)) = stack.pop() {
            if !visited.insert((e, factor)) {
                continue;
            }
            if let Some(slot) = self.slot_read(e) {
                if excluded.binary_search(&slot).is_err() {
                    let Some(deps) = self.of(slot).deps else {
                        return Info {
                            deps: None,
                            class: whole,
                        };
                    };
                    found.extend(deps.into_iter().map(|(known, kind)| (known, kind.max(factor))));
                }
                continue;
            }
            match arena.get(e) {
                Node::Unary(UnOp::Neg, a) => stack.push((*a, factor)),
                Node::Binary(BinOp::Add | BinOp::Sub, a, b) => stack.extend([(*a, factor), (*b, factor)]),
                Node::Binary(BinOp::Mul, a, b) => {
                    stack.extend([(*a, factor.max(of(*b))), (*b, factor.max(of(*a)))]);
                }
                Node::Binary(BinOp::Div, a, b) => stack.extend([(*a, factor.max(of(*b))), (*b, dependent)]),
                Node::If(c, a, b) => {
                    let branch = factor.max(of(*c));
                    stack.extend([(*c, dependent), (*a, branch), (*b, branch)]);
                }
                _ => stack.extend(arena.children(e).map(|c| (c, dependent))),
            }
        }
        found.sort_unstable();
        // Of a known's entries, sorted by kind, the last is the coarsest: the kind of the sum.
        let mut deps: Vec<(u32, DependencyKind)> = Vec::with_capacity(found.len());
        for (known, kind) in found {
            match deps.last_mut() {
                Some(last) if last.0 == known => last.1 = kind,
                _ => deps.push((known, kind)),
            }
        }
        Info {
            deps: Some(deps),
            class: whole,
        }
    }
}

/// The dependencies of an unknown an iteration solves for: every known is `dependent` (an
/// implicit equation's solution is not `c·v` in general).
fn implicit(info: Info) -> Info {
    Info {
        deps: info
            .deps
            .map(|deps| deps.into_iter().map(|(k, _)| (k, DependencyKind::Dependent)).collect()),
        class: info.class,
    }
}
