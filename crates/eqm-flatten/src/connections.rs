//! The connection state the flattener owns while it instantiates: the connects found so far,
//! their scalar pairs, what `cardinality` counts, the connects of the model's own class
//! that a diagram shows, and the expandable connectors with the connects that involve them
//! (which `expandable` elaborates).
//!
//! Input: the connects `equations` resolves. Output: the state `connect` turns into connection
//! sets once every instance is made, and `diagram` into the model's connections. It
//! deliberately checks and joins nothing itself: `connect` does.

use crate::layout::Target;
use crate::modifier::Scope;
use eqm_diag::source::Span;
use eqm_ir::expr::{FxHashMap, VarId};
use eqm_ir::flat::InstanceId;
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

/// The expandable connectors of the model and the connects that involve them.
#[derive(Default)]
pub(crate) struct ExpandableState {
    /// Every instance of an expandable connector class, in the order they were made.
    pub(crate) instances: Vec<InstanceId>,
    pub(crate) connects: Vec<BusConnect>,
}

/// A place in an expandable connector: the outermost expandable connector holding it and the
/// path from there (empty for that connector itself).
#[derive(Clone)]
pub(crate) struct Place {
    pub(crate) root: InstanceId,
    pub(crate) path: String,
}

/// One side of a connect, element by element.
pub(crate) enum End {
    /// A connector outside every expandable connector: its scalar variables with their paths
    /// relative to it (empty for a connector that is one variable).
    Element(Vec<(String, VarId)>),
    /// An expandable connector.
    Node(Place),
    /// A member of an expandable connector: its declared scalar variables, or `None` for a
    /// member that no declaration has.
    Member(Place, Option<Vec<(String, VarId)>>),
}

pub(crate) struct BusConnect {
    pub(crate) left: End,
    pub(crate) right: End,
    pub(crate) outside: (bool, bool),
    pub(crate) span: Span,
}
