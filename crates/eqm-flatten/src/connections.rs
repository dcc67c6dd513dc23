//! The connection state the flattener owns while it instantiates: the connects found so far,
//! their scalar pairs, what `cardinality` counts, and the connects of the model's own class
//! that a diagram shows.
//!
//! Input: the connects `equations` resolves. Output: the state `connect` turns into connection
//! sets once every instance is made, and `diagram` into the model's connections. It
//! deliberately checks and joins nothing itself: `connect` does.

use crate::layout::Target;
use crate::modifier::Scope;
use eqm_diag::source::Span;
use eqm_ir::expr::{FxHashMap, VarId};
use eqm_syntax::ast;

/// One scalar pair joined by a connect: (variable, outside) on each side.
pub type ConnectPair = ((VarId, bool), (VarId, bool));

/// A resolved connect: its pairs are `pairs` in [`ConnectionState::pairs`], which holds the
/// pairs of all connects in one vector instead of a small one per connect.
pub struct ResolvedConnect {
    pub pairs: std::ops::Range<usize>,
    pub span: Span,
}

/// What the flattener knows of the connections while it instantiates: the connects found so far
/// (turned into connection sets once every instance is made) and what `cardinality` needs.
#[derive(Default)]
pub(crate) struct ConnectionState<'a> {
    /// Resolved `connect` equations, turned into connection sets after instantiation.
    pub(crate) connects: Vec<ResolvedConnect>,
    /// The scalar pairs of all connects.
    pub(crate) pairs: Vec<ConnectPair>,
    /// How many connects name each connector (`cardinality`): counted only once a class
    /// calling `cardinality` is instantiated. Its connectors are connected in its own equations
    /// or in those of the enclosing class, both flattened after it, so no connect is missed.
    pub(crate) connector_uses: Option<FxHashMap<Target, u32>>,
    /// The equations calling `cardinality`, flattened after all others (see
    /// [`ClassLayout::counting_equations`](crate::layout::ClassLayout::counting_equations)).
    pub(crate) counting_equations: Vec<(&'a ast::Equation, Scope, bool)>,
    /// Set while they are flattened: only then is `cardinality` known, and a `connect` wrong.
    pub(crate) counting: bool,
    /// The connects written in the model's own class (and its base classes), kept only when a
    /// diagram is asked for ([`crate::diagram::diagram`]); `None` otherwise, so flattening pays
    /// nothing.
    pub(crate) root_connects: Option<Vec<RootConnect>>,
}

/// A connect written in the model's own class, as the flattener resolved it: the connector
/// elements of both sides, pair by pair (a side with the wrong number of elements is reported by
/// the flattener, and the diagram is then not made).
pub(crate) struct RootConnect {
    pub(crate) left: Vec<Target>,
    pub(crate) right: Vec<Target>,
    pub(crate) span: Span,
}
