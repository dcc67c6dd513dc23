//! The dependencies of an FMU's outputs and state derivatives on its states and inputs, from
//! the compiled program's evaluation order.
//!
//! Input: a compiled [`Model`] and its [`FmiVariable`]s. Output: for each output and each state
//! derivative, the value references of the continuous states and inputs its value depends on
//! at an instant, or `None` when that is not known exactly (the value goes through an algorithm
//! section, a delay or a transport profile): FMI then assumes it depends on every known.
//!
//! The right-hand side is a straight-line program, so one pass in evaluation order gives each
//! slot it assigns the union of the dependencies of the slots its expression reads: a state
//! depends on itself, an input on itself, time and parameters on nothing, a discrete variable
//! (held between events) on nothing. A Newton iteration's target depends on what its residual
//! reads besides the target; every unknown of an algebraic loop on what any of its equations
//! reads besides the loop's unknowns. The pass is linear in the size of the program.
//!
//! The initial unknowns (outputs, states and derivatives whose initial value is computed, and
//! calculated parameters) get their dependencies from a second pass in which the knowns are
//! the inputs, the parameters with an exact initial value and the states with one; a state
//! without one depends on what its start expression reads. That holds when the model's
//! initialization is its start values (no initialization problem of its own); otherwise, and
//! for discrete initial unknowns (set by the initial event), the dependencies are not listed.

use crate::Model;
use crate::fmi::variables::{FmiCausality, FmiInitial, FmiSource, FmiVariability, FmiVariable};
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, Node};
use eqm_ir::slot::Slot;

/// A set of value references, sorted; `None` for "every known".
pub type Dependencies = Option<Vec<u32>>;

/// The dependencies of every output (in value-reference order), of every state derivative (in
/// state order) and of every initial unknown (in value-reference order), each paired with the
/// unknown's value reference.
pub struct Structure {
    pub outputs: Vec<(u32, Dependencies)>,
    pub derivatives: Vec<(u32, Dependencies)>,
    pub initial_unknowns: Vec<(u32, Dependencies)>,
}

/// The dependencies of each work and derivative slot in one pass; see the module documentation.
struct Pass<'p> {
    program: &'p ExecProgram,
    work: Vec<Dependencies>,
    der: Vec<Dependencies>,
    /// What each state is as a known: itself, or (for a state whose initial value is
    /// computed, in the initialization pass) what its start expression reads.
    states: Vec<Dependencies>,
    /// The value reference of each parameter slot that is a known: the inputs, and in the
    /// initialization pass the parameters too.
    param_refs: Vec<Option<u32>>,
}

/// The structure of `model` with variables `variables` (from [`crate::fmi::variables`]).
pub fn structure(model: &Model, variables: &[FmiVariable]) -> Structure {
    let program = model.program();
    let continuous = pass(program, variables, false);
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
                FmiSource::Variable { slot, .. } => continuous.of(slot),
                _ => None,
            };
            (v.value_reference, deps)
        })
        .collect();
    let derivatives = variables
        .iter()
        .filter_map(|v| match v.source {
            FmiSource::Derivative { state } => Some((v.value_reference, continuous.der[state as usize].clone())),
            _ => None,
        })
        .collect();
    let initial = model.init_program().is_none().then(|| pass(program, variables, true));
    let initial_unknowns = variables
        .iter()
        .filter(|v| is_initial_unknown(v))
        .map(|v| {
            let deps = match (&initial, v.source) {
                (Some(initial), FmiSource::Variable { slot, .. }) if v.variability != FmiVariability::Discrete => {
                    initial.of(slot)
                }
                (Some(initial), FmiSource::Derivative { state }) => initial.der[state as usize].clone(),
                _ => None,
            };
            (v.value_reference, deps)
        })
        .collect();
    Structure {
        outputs,
        derivatives,
        initial_unknowns,
    }
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

/// The dependencies of every slot: of the continuous-time equations, or (`initial`) of the
/// initialization by start values.
fn pass<'p>(program: &'p ExecProgram, variables: &[FmiVariable], initial: bool) -> Pass<'p> {
    let layout = program.layout();
    let mut pass = Pass {
        program,
        work: vec![Some(Vec::new()); layout.work],
        der: vec![None; layout.states],
        states: vec![Some(Vec::new()); layout.states],
        param_refs: vec![None; layout.params],
    };
    let mut computed_states = Vec::new();
    for v in variables {
        if let FmiSource::Variable { slot, .. } = v.source {
            match slot {
                Slot::State(i) if initial && v.initial != Some(FmiInitial::Exact) => computed_states.push(i),
                Slot::State(i) => pass.states[i as usize] = Some(vec![v.value_reference]),
                Slot::Param(i) if initial || v.causality == FmiCausality::Input => {
                    pass.param_refs[i as usize] = Some(v.value_reference);
                }
                _ => {}
            }
        }
    }
    // Delayed values and transport profiles depend on the past in ways an instant's
    // dependencies do not describe: every known.
    let events = program.events();
    for delay in &events.delays {
        pass.work[delay.slot as usize] = None;
    }
    for spatial in &events.spatials {
        for slot in spatial.slots {
            pass.work[slot as usize] = None;
        }
    }
    // A dependent parameter computed from an input (or, initially, a parameter) depends on it.
    for assign in program.parameter_program() {
        let deps = pass.reads(&[assign.value], &[]);
        pass.set(assign.target, deps);
    }
    if initial {
        // A state whose initial value is computed is its start expression.
        computed_states.sort_unstable();
        for assign in program.start_program() {
            if let Slot::State(i) = assign.target
                && computed_states.binary_search(&i).is_ok()
            {
                pass.states[i as usize] = pass.reads(&[assign.value], &[]);
            }
        }
    }
    for instr in program.rhs() {
        pass.instruction(instr);
    }
    for assign in program.outputs() {
        let deps = pass.reads(&[assign.value], &[]);
        pass.set(assign.target, deps);
    }
    pass
}

impl Pass<'_> {
    /// What one instruction's targets depend on.
    fn instruction(&mut self, instr: &Instr) {
        match instr {
            Instr::Assign { target, value, .. } => {
                let deps = self.reads(&[*value], &[]);
                self.set(*target, deps);
            }
            Instr::Newton1 { target, residual, .. } => {
                let deps = self.reads(&[*residual], &[*target]);
                self.set(*target, deps);
            }
            Instr::Loop(block) => {
                let exprs: Vec<ExprId> = block
                    .inner
                    .iter()
                    .map(|a| a.value)
                    .chain(block.residuals.iter().map(|r| r.0))
                    .collect();
                let deps = self.reads(&exprs, &block.unknowns);
                for &unknown in &block.unknowns {
                    self.set(unknown, deps.clone());
                }
            }
            Instr::Algorithm { index } => {
                // The statements of an algorithm are not followed here: its outputs depend on
                // every known.
                if let Some(algorithm) = self.program.algorithms().get(*index) {
                    for &(_, slot) in &algorithm.outputs {
                        self.set(slot, None);
                    }
                }
            }
        }
    }

    fn set(&mut self, slot: Slot, deps: Dependencies) {
        match slot {
            Slot::Work(i) => self.work[i as usize] = deps,
            Slot::Der(i) => self.der[i as usize] = deps,
            _ => {}
        }
    }

    /// The dependencies of the value in `slot` as computed so far.
    fn of(&self, slot: Slot) -> Dependencies {
        match slot {
            Slot::Time => Some(Vec::new()),
            Slot::State(i) => self.states[i as usize].clone(),
            Slot::Param(i) => Some(self.param_refs[i as usize].into_iter().collect()),
            Slot::Der(i) => self.der[i as usize].clone(),
            Slot::Work(i) => self.work[i as usize].clone(),
        }
    }

    /// The union of the dependencies of every slot `exprs` read, leaving out `excluded`.
    /// Iterative: an explicit stack walks the expressions.
    fn reads(&self, exprs: &[ExprId], excluded: &[Slot]) -> Dependencies {
        let mut excluded = excluded.to_vec();
        excluded.sort_unstable();
        let arena = self.program.exprs();
        let mut stack: Vec<ExprId> = exprs.to_vec();
        let mut union: Vec<u32> = Vec::new();
        while let Some(e) = stack.pop() {
            let slot = match arena.get(e) {
                Node::Var(v) => self.program.slot_of(*v),
                Node::Call(Callee::Builtin(Builtin::Der), args) => match args.first().map(|&a| arena.get(a)) {
                    Some(Node::Var(v)) => match self.program.slot_of(*v) {
                        Some(Slot::State(i)) => Some(Slot::Der(i)),
                        other => other,
                    },
                    _ => {
                        stack.extend(arena.children(e));
                        None
                    }
                },
                _ => {
                    stack.extend(arena.children(e));
                    None
                }
            };
            let Some(slot) = slot else { continue };
            if excluded.binary_search(&slot).is_ok() {
                continue;
            }
            union.extend(self.of(slot)?);
        }
        union.sort_unstable();
        union.dedup();
        Some(union)
    }
}
