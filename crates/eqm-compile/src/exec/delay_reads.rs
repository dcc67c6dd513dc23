//! What the delay times that change during the run read through the equations: for each such
//! delay, whether its time reads something the right-hand side or the outputs program computes
//! (an algebraic variable, a derivative, a removed alias, another delayed value), and which
//! delayed values it reads that way, directly or through the equations that compute what it
//! reads.
//!
//! Input: the builder after the right-hand side, the outputs program and the layout. Output:
//! per delay, [`DelayReads`]. The simulation settles such delay times by substitution (the
//! delayed values written from the last times, the equations solved, the times computed again),
//! which ends after as many passes as the delays read each other in a chain; a delay time that
//! reads its own delayed value, directly or through other delays, has no such order and is
//! reported by the caller. Deliberately not here: deciding what a delay may read otherwise
//! (parameters for a fixed delay, a parameter `delayMax`).

use super::build::Builder;
use super::*;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, FxHashMap, FxHashSet, Node};

/// What one delay time reads through the equations.
#[derive(Debug, Clone, Default)]
pub(super) struct DelayReads {
    /// It reads a value computed by the right-hand side or the outputs program.
    pub(super) reads_equations: bool,
    /// The delays (indices into the program's delays) whose delayed values it reads.
    pub(super) delays: Vec<usize>,
}

impl Builder {
    /// For each delay of `delay_vars` (the delays' variables, in the program's order) whose
    /// time is one of `times` (`None` for a fixed delay), what that time reads through the
    /// equations. Each walk visits each instruction of the program at most once, so the cost
    /// is the size of the program per delay time that changes.
    pub(super) fn delay_reads(&self, delay_vars: &[VarId], times: &[Option<ExprId>]) -> Vec<DelayReads> {
        // Without a delay time that changes there is nothing to follow, and the map of the
        // whole program below would cost an allocation per instruction of every model.
        if times.iter().all(Option::is_none) {
            return vec![DelayReads::default(); times.len()];
        }
        let arena = &self.dae.flat.exprs;
        // The expressions each computed slot is found from: an instruction's (for a loop or an
        // algorithm, all of its own), keyed by the slots it writes.
        let mut sources: Vec<Vec<ExprId>> = Vec::new();
        let mut written_by: FxHashMap<Slot, usize> = FxHashMap::default();
        for instr in &self.rhs {
            let (targets, exprs): (Vec<Slot>, Vec<ExprId>) = match instr {
                Instr::Assign { target, value, .. } => (vec![*target], vec![*value]),
                Instr::Newton1 { target, residual, .. } => (vec![*target], vec![*residual]),
                Instr::Loop(l) => (
                    l.unknowns.clone(),
                    l.inner
                        .iter()
                        .map(|a| a.value)
                        .chain(l.residuals.iter().map(|r| r.0))
                        .collect(),
                ),
                Instr::Algorithm { index } => {
                    let Some(section) = self.algorithms.get(*index) else {
                        continue;
                    };
                    let mut exprs = Vec::new();
                    for statement in &section.statements {
                        statement.for_each_expr(&mut |e, _| exprs.push(e));
                    }
                    (section.outputs.iter().map(|o| o.1).collect(), exprs)
                }
            };
            for target in targets {
                written_by.insert(target, sources.len());
            }
            sources.push(exprs);
        }
        for assign in &self.outputs {
            written_by.insert(assign.target, sources.len());
            sources.push(vec![assign.value]);
        }
        let delay_of: FxHashMap<VarId, usize> = delay_vars.iter().enumerate().map(|(k, &v)| (v, k)).collect();
        let mut out = Vec::with_capacity(times.len());
        for time in times {
            let mut reads = DelayReads::default();
            let Some(time) = *time else {
                out.push(reads);
                continue;
            };
            let mut stack = vec![time];
            let mut seen_exprs: FxHashSet<ExprId> = FxHashSet::default();
            let mut seen_sources: FxHashSet<usize> = FxHashSet::default();
            let mut seen_delays: FxHashSet<usize> = FxHashSet::default();
            while let Some(id) = stack.pop() {
                if !seen_exprs.insert(id) {
                    continue;
                }
                let slot = match arena.get(id) {
                    Node::Var(v) => {
                        if let Some(&k) = delay_of.get(v) {
                            // A delayed value is written before the equations, from its own
                            // delay time: the walk stops there.
                            reads.reads_equations = true;
                            if seen_delays.insert(k) {
                                reads.delays.push(k);
                            }
                            continue;
                        }
                        self.slot(*v)
                    }
                    Node::Call(Callee::Builtin(Builtin::Der), args) => match args.first().map(|a| arena.get(*a)) {
                        Some(Node::Var(v)) => match self.slot(*v) {
                            Some(Slot::State(i)) => Some(Slot::Der(i)),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => {
                        stack.extend(arena.children(id));
                        continue;
                    }
                };
                if let Some(&source) = slot.and_then(|s| written_by.get(&s)) {
                    reads.reads_equations = true;
                    if seen_sources.insert(source) {
                        stack.extend(sources[source].iter().copied());
                    }
                }
            }
            reads.delays.sort_unstable();
            out.push(reads);
        }
        out
    }
}
