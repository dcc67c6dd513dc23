//! The guards of the branches of an if-statement inside a when-statement: the condition under
//! which each branch runs (`c1`, `not c1 and c2`, ..., `not c1 and not c2` for the else-branch),
//! which a print or a call of a function that prints there carries as its when-action's guard.
//!
//! Input: the flat conditions of the if-statement's branches, in order, and the stack of guards
//! of the if-statements around it. Output: that stack with the guard of the branch being
//! flattened on top. It deliberately makes nothing outside when-statements (a function's or an
//! ordinary section's if-statements run their branches directly) and does not simplify the
//! conditions.

use eqm_ir::expr::{BinOp, ExprArena, ExprId, UnOp};

/// The guards of the branches of one if-statement in a when-statement: each branch runs when
/// its condition holds and those of the branches before it do not.
pub(crate) struct IfGuard {
    /// Whether the statement is in a when-statement of a model's algorithm (else no guard is
    /// made).
    active: bool,
    /// The number of assignments of the section before the if-statement: its conditions are
    /// read at the end of the event, so the section may not assign what they read after this.
    before: usize,
    /// `not c` of each condition seen so far.
    negated: Vec<ExprId>,
    pushed: bool,
}

impl IfGuard {
    /// The guards of an if-statement after `before` assignments of its section; `active` when
    /// it is in a when-statement of a model's algorithm.
    pub(crate) fn new(active: bool, before: usize) -> Self {
        IfGuard {
            active,
            before,
            negated: Vec::new(),
            pushed: false,
        }
    }

    /// Enters the branch of `condition` (`None`: the else-branch): its guard is on the stack
    /// `guards` until [`IfGuard::leave`].
    pub(crate) fn enter(
        &mut self,
        condition: Option<ExprId>,
        arena: &mut ExprArena,
        guards: &mut Vec<(ExprId, usize)>,
    ) {
        if !self.active {
            return;
        }
        let guard = self
            .negated
            .iter()
            .copied()
            .chain(condition)
            .reduce(|a, b| arena.binary(BinOp::And, a, b));
        if let Some(c) = condition {
            self.negated.push(arena.unary(UnOp::Not, c));
        }
        // An else-branch after no condition known only during the run always runs.
        if let Some(guard) = guard {
            guards.push((guard, self.before));
            self.pushed = true;
        }
    }

    pub(crate) fn leave(&mut self, guards: &mut Vec<(ExprId, usize)>) {
        if std::mem::take(&mut self.pushed) {
            guards.pop();
        }
    }
}
