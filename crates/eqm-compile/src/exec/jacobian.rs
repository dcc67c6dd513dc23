//! The symbolic Jacobian of a program as data: the partial derivatives (expressions of the
//! program's arena) and the chain-rule steps that combine them, as [`crate::jacobian`] builds
//! them and the back ends evaluate them.
//!
//! Input: nothing; these are the types. Output: [`ExecJacobian`] and its parts. It
//! deliberately differentiates nothing (that is [`crate::jacobian`]) and evaluates nothing.

use eqm_ir::expr::ExprId;
use eqm_ir::slot::Slot;

/// `partial · tangent(slot)`: one term of a chain rule sum. `partial` indexes
/// [`ExecJacobian::partials`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    pub slot: Slot,
    pub partial: u32,
}

/// How the tangents of one right-hand-side instruction follow from those it reads.
#[derive(Debug, Clone, PartialEq)]
pub enum TangentStep {
    /// `t(target) = Σ partial · t(slot)`.
    Assign { target: Slot, terms: Vec<Term> },
    /// `residual(target, ...) = 0`: `t(target) = −(Σ partial · t(slot)) / own`.
    Newton1 { target: Slot, own: u32, terms: Vec<Term> },
    /// A torn loop: inner assignments and residuals whose terms are split into those reading
    /// values outside the loop and those reading the loop's own unknowns.
    Loop(Box<LoopTangent>),
}

/// The tangent form of a torn loop; see [`TangentStep::Loop`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoopTangent {
    pub tearing: Vec<Slot>,
    /// Each inner assignment: its target, its outside terms and its loop terms.
    pub inner: Vec<(Slot, Vec<Term>, Vec<Term>)>,
    /// Each residual: its outside terms and its loop terms.
    pub residuals: Vec<(Vec<Term>, Vec<Term>)>,
}

/// An invariant `g = 0` evaluated after the right-hand side: its value (an index into
/// [`ExecJacobian::partials`], which holds the residual itself there) and its chain rule terms.
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantRow {
    pub value: u32,
    pub terms: Vec<Term>,
}

/// The symbolic Jacobian of a program; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecJacobian {
    /// Every expression evaluated for one Jacobian: partial derivatives and invariant values.
    pub partials: Vec<ExprId>,
    /// One step per right-hand-side instruction, in order.
    pub steps: Vec<TangentStep>,
    /// The invariants, in the order they were given.
    pub invariants: Vec<InvariantRow>,
    /// The rates `dg/dt = Σ ∂g/∂x_j · f_j` of the invariants, when every invariant reads only
    /// states: their Jacobian `H + G ∂f/∂x` (with `H` the second derivatives of `g` along `f`)
    /// is what the Jacobian of the projected field needs. Empty otherwise.
    pub rates: Vec<InvariantRow>,
    /// For each step, whether the invariants depend on its tangents: `G` alone (what the
    /// projection needs at every evaluation) runs only these.
    pub for_invariants: Vec<bool>,
    /// Further expressions evaluated with the partials (the state-choice check), as indices
    /// into `partials`.
    pub extra: Vec<u32>,
    /// For each state derivative `dx[i]`, the states it depends on (sorted): the rows of the
    /// pattern of `∂f/∂x`.
    pub rows: Vec<Vec<u32>>,
    /// The same for each invariant (the pattern of `G = ∂g/∂x`), followed by the same for each
    /// rate.
    pub invariant_rows: Vec<Vec<u32>>,
    /// The colour of each state (column): no two columns of one colour share a row of any of
    /// these patterns, so one forward pass seeded with all columns of a colour gives each of
    /// them.
    pub colors: Vec<u32>,
    pub n_colors: usize,
}

impl ExecJacobian {
    /// The number of nonzero entries of `∂f/∂x` in the pattern.
    pub fn nonzeros(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }
}
