//! The guesses a run's iterations start from: the values of the iteration variables (the
//! unknowns of scalar Newton blocks and the tearing unknowns of algebraic loops) and the
//! derivatives at the points the integrator accepted.
//!
//! Input: an instance whose program iterates, and the moments its integrator accepts a step
//! or restarts. Output: the integrator's instance starts its iterations from the last accepted
//! point's values whenever an evaluation goes back in time (a step tried again after a rejected
//! trial, an event searched for by bisection), and from the evaluation before otherwise (the
//! stages of one trial follow each other, so that a trial can cross from one solution of a loop
//! to another). The rows' instance starts the first row after each accepted point from the
//! values of the last accepted point at or before the row (a row inside a step from the step's
//! start, a row at its end or at an event from that point), and each further row from the row
//! before. Without this a trial
//! step that the integrator rejected could leave an algebraic loop with several solutions (a
//! comparator with positive feedback, a Schmitt trigger) on another solution for the rest of
//! the run, and the rows could follow a third. It deliberately keeps nothing else (discrete
//! variables change only at events, which end in a restart that keeps their new values).

use super::Instance;
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_ir::slot::Slot;
use std::sync::{Arc, Mutex};

/// The guesses of the last two accepted points; see the module documentation.
#[derive(Debug)]
pub struct KeptGuesses {
    /// The work slots of the iteration variables.
    slots: Vec<u32>,
    /// The values at the last accepted point and at the one before, each the work slots'
    /// values followed by the derivatives, with the time of each point.
    last: Vec<f64>,
    before: Vec<f64>,
    last_at: f64,
    before_at: f64,
    /// How many points were kept, so that the rows see when a step was accepted.
    generation: u64,
}

/// The kept guesses of a run, shared by its integrator's instance (which keeps them) and its
/// rows' instance (which starts from them too).
pub type SharedGuesses = Arc<Mutex<KeptGuesses>>;

impl KeptGuesses {
    /// The guesses of `program`, `None` when its right-hand side has no iteration.
    pub fn of(program: &ExecProgram) -> Option<KeptGuesses> {
        let mut slots = Vec::new();
        let mut iterates = false;
        for instr in program.rhs() {
            match instr {
                Instr::Assign { .. } | Instr::Algorithm { .. } => {}
                Instr::Newton1 { target, .. } => {
                    iterates = true;
                    slots.extend(work_slot(*target));
                }
                Instr::Loop(block) => {
                    iterates = true;
                    slots.extend(block.tearing.iter().filter_map(|s| work_slot(*s)));
                }
            }
        }
        let size = slots.len() + program.layout().states;
        iterates.then(|| KeptGuesses {
            slots,
            last: vec![0.0; size],
            before: vec![0.0; size],
            last_at: f64::NEG_INFINITY,
            before_at: f64::NEG_INFINITY,
            generation: 0,
        })
    }
}

fn work_slot(slot: Slot) -> Option<u32> {
    match slot {
        Slot::Work(k) => Some(k),
        _ => None,
    }
}

/// How an instance uses the kept guesses.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GuessUse {
    /// The integrator's instance: keeps them, and starts from the last accepted point's when an
    /// evaluation goes back before the time of the one before. `last_solved` tells whether the
    /// last evaluation succeeded: one that failed (a difference quotient's point where a loop
    /// has no solution) leaves an iterate that is no guess, and is not kept.
    Keeps { last_time: f64, last_solved: bool },
    /// The rows' instance: starts from the kept values after each new accepted point.
    Follows { generation: u64 },
}

impl Instance<'_> {
    /// From now on the iterations of this instance start from `guesses` as the module
    /// documentation says; it keeps them at once (the run's consistent initial point) and again
    /// at each [`Instance::keep_guesses`].
    pub fn attach_guesses(&mut self, guesses: SharedGuesses) {
        let using = GuessUse::Keeps {
            last_time: f64::NEG_INFINITY,
            last_solved: true,
        };
        self.guesses = Some((guesses, using));
        self.keep_guesses();
    }

    /// The rows' instance starts the first row of each step from the values of the step's start
    /// in `guesses`, which it never keeps.
    pub fn follow_guesses(&mut self, guesses: SharedGuesses) {
        let generation = guesses.lock().unwrap_or_else(|e| e.into_inner()).generation;
        self.guesses = Some((guesses, GuessUse::Follows { generation }));
    }

    /// Keeps the values the last evaluation left as the guesses: the integrator accepted the
    /// step whose end it evaluated, or the run restarted at the point it evaluated last.
    pub fn keep_guesses(&mut self) {
        let Some((
            shared,
            GuessUse::Keeps {
                last_solved: true,
                last_time,
            },
        )) = &self.guesses
        else {
            return;
        };
        let mut kept = shared.lock().unwrap_or_else(|e| e.into_inner());
        let kept = &mut *kept;
        std::mem::swap(&mut kept.last, &mut kept.before);
        kept.before_at = std::mem::replace(&mut kept.last_at, *last_time);
        let (work, derivatives) = kept.last.split_at_mut(kept.slots.len());
        for (value, &slot) in work.iter_mut().zip(&kept.slots) {
            *value = self.work[slot as usize];
        }
        derivatives.copy_from_slice(self.interpreter.derivative_guess());
        kept.generation += 1;
    }

    /// Notes whether the evaluation after [`Instance::restore_guesses`] solved its equations.
    pub(super) fn note_solved(&mut self, solved: bool) {
        if let Some((_, GuessUse::Keeps { last_solved, .. })) = &mut self.guesses {
            *last_solved = solved;
        }
    }

    /// Puts kept guesses back before an evaluation at time `t` where the module documentation
    /// says so.
    pub(super) fn restore_guesses(&mut self, t: f64) {
        let Some((shared, using)) = &mut self.guesses else {
            return;
        };
        // Most evaluations of the integrator's instance go forward in time: they restore
        // nothing and take no lock.
        if let GuessUse::Keeps { last_time, .. } = using
            && std::mem::replace(last_time, t) <= t
        {
            return;
        }
        let kept = shared.lock().unwrap_or_else(|e| e.into_inner());
        let values = match using {
            GuessUse::Keeps { .. } => &kept.last,
            GuessUse::Follows { generation } => {
                if std::mem::replace(generation, kept.generation) == kept.generation {
                    return;
                }
                if t >= kept.last_at { &kept.last } else { &kept.before }
            }
        };
        let (work, derivatives) = values.split_at(kept.slots.len());
        for (&value, &slot) in work.iter().zip(&kept.slots) {
            self.work[slot as usize] = value;
        }
        self.interpreter.derivative_guess().copy_from_slice(derivatives);
    }
}
