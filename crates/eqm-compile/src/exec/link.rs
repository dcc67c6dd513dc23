//! How the variables of an initialization program correspond to those of the program it
//! initializes.
//!
//! Input: the program of a model and the program of its initialization problem. Output: an
//! [`InitLink`]: for each variable the initialization hands over to the model (the states, the
//! unknowns of the model's iterations as their first guesses, the parameters with `fixed = false`
//! it determines and those computed from them, the discrete variables with their `pre` values,
//! and the event variables that both programs read), the slot of the same variable in the
//! initialization program. The two programs may come from different forms of the model (a
//! high-index model simulated in its embedding form is initialized by its dummy-derivative
//! form's problem), so their variable ids differ; the model's variables are the same by name.
//! Event variables are numbered by each form's own event extraction, so the same name may
//! stand for another relation: they correspond by what they hold (their description names the
//! relation), never by their number. It evaluates nothing.

use super::ExecProgram;
use eqm_ir::expr::VarId;
use eqm_ir::slot::Slot;
use std::collections::BTreeMap;

/// The slot in the initialization program of each variable of a model's program.
#[derive(Debug, Clone, Default)]
pub struct InitLink {
    slots: Vec<Option<Slot>>,
}

impl InitLink {
    pub fn new(program: &ExecProgram, init: &ExecProgram) -> InitLink {
        // The variables the compiler introduced (`$relN`, `$heldN`, ...) by what they hold.
        let mut introduced: BTreeMap<&str, Vec<VarId>> = BTreeMap::new();
        for (v, s) in init.symbols().iter().filter(|(_, s)| s.name.starts_with('$')) {
            if let Some(description) = s.description.as_deref() {
                introduced.entry(description).or_default().push(v);
            }
        }
        let events = program.events();
        // The unknowns the model's iterations solve for (implicit equations, loops): their
        // consistent values are the first guesses of those iterations. No other variable needs
        // one, and a large model has many.
        let iterated: Vec<VarId> = program
            .rhs()
            .iter()
            .flat_map(|instr| match instr {
                super::Instr::Newton1 { target, .. } => std::slice::from_ref(target),
                super::Instr::Loop(block) => block.unknowns.as_slice(),
                _ => &[],
            })
            .filter_map(|slot| match slot {
                Slot::Work(k) => program.work_vars().get(*k as usize).copied(),
                _ => None,
            })
            .collect();
        // The work variables handed over by their kind: discrete variables (the initialization
        // holds them at their start values or, where initial equations determine them, solves
        // for them and their `pre` values); Booleans and Integers defined by ordinary equations
        // (the values the initialization gave them, with `initial()` true and the `pre` values
        // of the start, are the mode a variable-structure model starts in; the model computes
        // them again at its first evaluation); and parameters computed from those the
        // initialization solves for (`fixed = false`), which are solved there with them.
        let handed_work: Vec<VarId> = program
            .work_vars()
            .iter()
            .copied()
            .filter(|v| {
                let symbol = program.symbols().get(*v);
                match symbol.kind {
                    crate::dae::VarKind::Discrete | crate::dae::VarKind::Parameter => true,
                    crate::dae::VarKind::Algebraic => matches!(
                        symbol.ty,
                        eqm_ir::flat::ScalarType::Boolean | eqm_ir::flat::ScalarType::Integer
                    ),
                    _ => false,
                }
            })
            .collect();
        let handed_over = program
            .states()
            .iter()
            .chain(&iterated)
            .chain(&handed_work)
            .chain(program.params())
            .chain(events.surfaces.iter().flat_map(|s| &s.relation_vars))
            .chain(events.initial.as_ref().map(|(_, v)| v));
        let mut slots = vec![None; program.symbols().len()];
        for &v in handed_over {
            let symbol = program.symbols().get(v);
            let linked = (|| {
                let w = if symbol.name.starts_with('$') {
                    // Of the variables holding the same thing, the one of the same name; else
                    // the only one.
                    let candidates = introduced.get(symbol.description.as_deref()?)?;
                    match candidates.iter().find(|w| init.symbols().get(**w).name == symbol.name) {
                        Some(w) => Some(*w),
                        None if candidates.len() == 1 => Some(candidates[0]),
                        None => None,
                    }
                } else {
                    init.lookup(&symbol.name)
                }?;
                init.slot_of(w)
            })();
            slots[v.0 as usize] = linked;
        }
        InitLink { slots }
    }

    /// The relations the initialization program reads that no relation of the model's program
    /// sets (by their descriptions): the simulation could not make them consistent with the
    /// initial values, so a program with one cannot be initialized by `init`.
    pub fn unset_relations(&self, program: &ExecProgram, init: &ExecProgram) -> Vec<String> {
        let set: std::collections::BTreeSet<Slot> = program
            .events()
            .surfaces
            .iter()
            .flat_map(|s| &s.relation_vars)
            .filter_map(|v| self.slot(*v))
            .collect();
        init.symbols()
            .iter()
            .filter(|(_, s)| s.name.starts_with("$rel"))
            .filter_map(|(w, s)| {
                let slot = init.slot_of(w)?;
                let unset = !set.contains(&slot);
                unset.then(|| s.description.as_deref().map_or_else(|| s.name.clone(), str::to_string))
            })
            .collect()
    }

    /// The slot of the model's variable `v` in the initialization program, if it has one and is
    /// handed over.
    pub fn slot(&self, v: VarId) -> Option<Slot> {
        self.slots.get(v.0 as usize).copied().flatten()
    }
}
