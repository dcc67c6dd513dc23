//! The connection state the flattener owns while it instantiates: the connects found so far,
//! their scalar pairs, what `cardinality` counts, the connects of the model's own class
//! that a diagram shows, the expandable connectors with the connects that involve them
//! (which `expandable` elaborates), and the virtual graph of the overconstrained connections
//! (which `overconstrained` collects and `spanning_trees` cuts), and the stream operators used
//! (whose equations `stream_connectors` writes).
//!
//! Input: the connects `equations` resolves. Output: the state `connect` turns into connection
//! sets once every instance is made, and `diagram` into the model's connections. It
//! deliberately checks and joins nothing itself: `connect` does.

use crate::layout::Target;
use crate::modifier::Scope;
use crate::resolve::ClassId;
use eqm_diag::source::Span;
use eqm_ir::expr::{FxHashMap, FxHashSet, VarId};
use eqm_ir::flat::{InstanceId, ScalarType};
use eqm_syntax::ast;

/// The stream operators used so far (`inStream`, `actualStream`): the variable answering
/// each, whose equation `stream_connectors` writes once the connection sets are known.
#[derive(Default)]
pub(crate) struct StreamState {
    /// `$inStream(v)` by the stream variable `v`.
    pub(crate) in_stream: FxHashMap<VarId, VarId>,
    /// `$actualStream(v)` by the stream variable `v`.
    pub(crate) actual: FxHashMap<VarId, VarId>,
    /// The stream variables whose `$inStream` has no equation yet, in the order they were asked.
    pub(crate) pending: Vec<VarId>,
    /// The stream variables with their `$actualStream`, in the order they were asked.
    pub(crate) actual_order: Vec<(VarId, VarId)>,
}

/// Connected parameters or constants, checked for equal values once the bindings are known.
pub(crate) struct FixedPair {
    pub(crate) vars: (VarId, VarId),
    pub(crate) span: Span,
}

/// One scalar pair joined by a connect: (variable, outside) on each side.
pub type ConnectPair = ((VarId, bool), (VarId, bool));

/// An equation flattened once every connect is known and the connection graph is cut.
pub(crate) struct LateEquation<'a> {
    pub(crate) equation: &'a ast::Equation,
    pub(crate) scope: Scope,
    pub(crate) initial: bool,
    /// The loop indices in scope (`eval::Loops`), for one that waited inside a for-loop.
    pub(crate) loops: Vec<(String, i64)>,
}

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
    /// The equations calling `cardinality` (or asking the connection graph), flattened after
    /// all others (see
    /// [`ClassLayout::counting_equations`](crate::layout::ClassLayout::counting_equations)).
    pub(crate) counting_equations: Vec<LateEquation<'a>>,
    /// The bindings calling `cardinality` (`Integer n = cardinality(c)`): the variable, its
    /// binding, type and variability, evaluated just before those equations.
    pub(crate) counting_bindings: Vec<crate::modifier::LateBinding<'a>>,
    /// Set while they are flattened: only then is `cardinality` known, and a `connect` wrong.
    pub(crate) counting: bool,
    /// The connects written in the model's own class (and its base classes), kept only when a
    /// diagram is asked for ([`crate::diagram::diagram`]); `None` otherwise, so flattening pays
    /// nothing.
    pub(crate) root_connects: Option<Vec<RootConnect>>,
    /// The virtual connection graph of the overconstrained connections.
    pub(crate) graph: ConnectionGraph<'a>,
    /// Connected parameters and constants, whose values must be equal.
    pub(crate) fixed_pairs: Vec<FixedPair>,
    /// The variables connected as elements of protected outside connectors, which are no
    /// source of a signal.
    pub(crate) protected_outside: eqm_ir::expr::FxHashSet<VarId>,
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
    /// The members declared with a size `:` and no binding (`Real x[:];`), by their expandable
    /// connector instance and name: left out like a member no declaration has, so that a connect
    /// gives them their size (MLS 9.1.3).
    pub(crate) unsized_members: FxHashSet<(InstanceId, String)>,
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

/// The virtual connection graph of a model's overconstrained connections.
#[derive(Default)]
pub(crate) struct ConnectionGraph<'a> {
    /// Each node by its first scalar variable.
    pub(crate) node_of: FxHashMap<VarId, u32>,
    pub(crate) nodes: Vec<GraphNode>,
    /// The connects between overdetermined instances, in the order they were written.
    pub(crate) optional: Vec<OptionalEdge<'a>>,
    /// `Connections.branch(a, b)`: edges that every tree keeps.
    pub(crate) required: Vec<(u32, u32, Span)>,
    pub(crate) roots: Vec<(u32, Span)>,
    /// `Connections.potentialRoot(a, priority)`.
    pub(crate) potential_roots: Vec<(u32, i64, Span)>,
    /// Set once the graph is cut into trees (`spanning_trees`).
    pub(crate) trees: Option<Trees>,
    /// Whether instances of a connector class hold an overdetermined instance, for each class
    /// met so far: a model without them pays one look-up per connector.
    pub(crate) holds_nodes: FxHashMap<ClassId, bool>,
    /// Whether any class of the model's library is an overdetermined type or record: `None`
    /// until the first connect asks.
    pub(crate) any_overdetermined: Option<bool>,
    /// How many when-clauses enclose the equation being flattened (where the operators are not
    /// allowed).
    pub(crate) when_depth: u32,
    /// Whether the equation being flattened both adds to the graph and asks it
    /// ([`crate::overconstrained::GraphUse::BuildsAndAsks`]): only then can an equation nested
    /// in it have to wait for the cut, so only then are nested equations inspected.
    pub(crate) nested_may_wait: bool,
}

/// An instance of an overdetermined type or record: a node of the graph.
pub(crate) struct GraphNode {
    /// Its scalar variables in declaration order.
    pub(crate) leaves: Vec<VarId>,
    /// Its class's `equalityConstraint`.
    pub(crate) function: ClassId,
    pub(crate) shape: NodeShape,
}

/// How a node's value is given to its `equalityConstraint`.
pub(crate) enum NodeShape {
    /// An instance of an overdetermined record.
    Record(InstanceId),
    /// A scalar or an array of an overdetermined type (`type Orientation extends
    /// Real[3, 3]`): its dimensions (none for a scalar) and element type.
    Value(Vec<usize>, ScalarType),
}

/// A connect between two overdetermined instances: a tree edge makes their scalars equal, one
/// outside every tree gives `0 = equalityConstraint(a, b)`.
pub(crate) struct OptionalEdge<'a> {
    /// The nodes with whether each is an outside element of the connect.
    pub(crate) ends: [(u32, bool); 2],
    pub(crate) pairs: Vec<ConnectPair>,
    /// The connect's first side, named in messages.
    pub(crate) at: &'a ast::ComponentRef,
    pub(crate) span: Span,
}

/// The spanning trees: which nodes are roots and how far each is from its root.
pub(crate) struct Trees {
    pub(crate) is_root: Vec<bool>,
    pub(crate) depth: Vec<u32>,
    /// Per node, how many `Connections.branch` have it as first argument and the other end of
    /// the last of them: what `Connections.rooted` reads, counted once instead of per question.
    pub(crate) branches_from: Vec<(u32, u32)>,
}
