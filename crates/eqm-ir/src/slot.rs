//! Where a value lives at run time: the memory layout shared by the executable program, the
//! reference interpreter and the JIT.
//!
//! A model is evaluated by functions of the shape `f(t, x, p, dx, work)`: `x` are the states,
//! `p` the run-time parameters (so that changing a non-structural parameter never recompiles),
//! `dx` the state derivatives and `work` every other computed value (algebraic variables,
//! dependent parameters, discrete variables, temporaries). This module only names the places;
//! it does not decide which variable goes where.

/// One scalar place in the evaluation arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    /// The simulation time `t`.
    Time,
    /// `x[i]`: a state, read-only for the evaluation functions.
    State(u32),
    /// `p[i]`: a run-time parameter, read-only for the evaluation functions.
    Param(u32),
    /// `dx[i]`: the derivative of state `i`, written by the right-hand side.
    Der(u32),
    /// `work[i]`: an algebraic variable, dependent parameter, discrete variable or temporary.
    Work(u32),
}

impl Slot {
    /// Whether evaluation functions may write this slot.
    pub fn is_writable(self) -> bool {
        matches!(self, Slot::Der(_) | Slot::Work(_))
    }
}
