//! Overconstrained connections: connectors whose potential variables are redundant (an
//! orientation held as a 3 x 3 matrix, a reference angle that every pin of an AC circuit
//! carries), and the virtual connection graph the Modelica language defines for them (section
//! 9.4 of its specification).
//!
//! Input: the connects of connectors that hold an instance of an overdetermined type or record
//! (one whose class declares a function `equalityConstraint`), and the equations
//! `Connections.branch(a.R, b.R)`, `Connections.root(a.R)` and
//! `Connections.potentialRoot(a.R, priority)`. Output: the nodes and edges of the graph
//! ([`ConnectionGraph`](crate::connections::ConnectionGraph)); `spanning_trees` cuts it once every connect is known and answers
//! `Connections.isRoot(a.R)` and `Connections.rooted(a.R)` (and the older `rooted(a.R)`) for
//! the equations that ask, which are flattened after it (see [`is_late_equation`]). A connect
//! diverts the scalars of its overdetermined instances from the connection sets into an edge
//! of the graph; what the edge becomes is decided with the trees. It deliberately builds no
//! connection set and writes no equation: `connect` and `spanning_trees` do.

use crate::connections::{GraphNode, NodeShape, OptionalEdge};
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::{Member, Target};
use crate::modifier::Scope;
use crate::resolve::{ClassId, TypeRef};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::VarId;
use eqm_ir::flat::InstanceId;
use eqm_syntax::ast;

/// The operators of the built-in package `Connections`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraphOperator {
    Branch,
    Root,
    PotentialRoot,
    IsRoot,
    Rooted,
}

impl GraphOperator {
    fn name(self) -> &'static str {
        match self {
            GraphOperator::Branch => "Connections.branch",
            GraphOperator::Root => "Connections.root",
            GraphOperator::PotentialRoot => "Connections.potentialRoot",
            GraphOperator::IsRoot => "Connections.isRoot",
            GraphOperator::Rooted => "Connections.rooted",
        }
    }
}

/// Whether an equation asks the cut graph or counts connects (`cardinality`) without adding to
/// the graph or the connects itself: such an equation is flattened after every connect is known
/// and the graph is cut. One that does both (`if enforceStates then Connections.branch(a, b);
/// if Connections.rooted(a) then ... end if; end if;`) is flattened in turn, and the equations
/// inside it that ask wait instead (see [`Flattener::waits_for_graph`]).
/// An equation that counts connects is always late: a connect in it is an error.
pub(crate) fn is_late_equation(e: &ast::Equation) -> bool {
    graph_use(e) == GraphUse::Late
}

/// How an equation depends on the connection graph.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GraphUse {
    /// It neither asks the graph nor counts connects.
    Independent,
    /// It asks the graph or counts connects and adds nothing to it: flattened after the cut.
    Late,
    /// It adds to the graph and asks it: flattened in turn, and its nested equations that ask
    /// wait for the cut.
    BuildsAndAsks,
}

/// How `e` depends on the connection graph (see [`is_late_equation`]).
pub(crate) fn graph_use(e: &ast::Equation) -> GraphUse {
    let equations = std::slice::from_ref(e);
    if eqm_syntax::visit::equations_call(equations, "cardinality") {
        return GraphUse::Late;
    }
    let asks = eqm_syntax::visit::equations_call_matching(equations, &|c| {
        let names: Vec<&str> = c.parts.iter().map(|p| p.name.name.as_str()).collect();
        matches!(names.as_slice(), ["rooted"] | ["Connections", "isRoot" | "rooted"])
    });
    match (asks, builds_graph(e)) {
        (false, _) => GraphUse::Independent,
        (true, false) => GraphUse::Late,
        (true, true) => GraphUse::BuildsAndAsks,
    }
}

/// Whether an equation (nested ones included) writes a connect or an operator that adds to
/// the connection graph.
fn builds_graph(e: &ast::Equation) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ast::EquationKind::Connect { .. } => return true,
            ast::EquationKind::Call { function, .. } => {
                let names: Vec<&str> = function.parts.iter().map(|p| p.name.name.as_str()).collect();
                if matches!(names.as_slice(), ["Connections", "branch" | "root" | "potentialRoot"]) {
                    return true;
                }
            }
            ast::EquationKind::If { branches, else_branch } => {
                stack.extend(branches.iter().flat_map(|(_, body)| body).chain(else_branch))
            }
            ast::EquationKind::For { body, .. } => stack.extend(body),
            ast::EquationKind::When { branches } => stack.extend(branches.iter().flat_map(|(_, body)| body)),
            ast::EquationKind::Simple { .. } => {}
        }
    }
    false
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The operator of `Connections` a call names, unless a class of the model's own takes the
    /// name (`Connections` is a built-in package of the global scope, which a package of that
    /// name in scope hides for the operators it declares).
    pub(crate) fn graph_operator(&self, function: &ast::ComponentRef, scope: Scope) -> Option<GraphOperator> {
        let names: Vec<&str> = function.parts.iter().map(|p| p.name.name.as_str()).collect();
        let operator = match names.as_slice() {
            ["rooted"] if !function.global => {
                return self
                    .class_named(function, scope)
                    .is_none()
                    .then_some(GraphOperator::Rooted);
            }
            ["Connections", op] => match *op {
                "branch" => GraphOperator::Branch,
                "root" => GraphOperator::Root,
                "potentialRoot" => GraphOperator::PotentialRoot,
                "isRoot" => GraphOperator::IsRoot,
                "rooted" => GraphOperator::Rooted,
                _ => return None,
            },
            _ => return None,
        };
        let own = match self.table.lookup_simple(scope.class, "Connections") {
            Some(TypeRef::Class(package)) if !function.global => self.table.member_class(package, names[1], 0),
            _ => None,
        };
        own.is_none().then_some(operator)
    }

    /// Whether `eq`, met inside an equation being flattened, asks the connection graph before it
    /// is cut: it is then kept with its loop indices and flattened once the graph is cut. Only
    /// where the library has overdetermined classes at all, and not inside a when-clause or a
    /// branch decided during the run (whose conditions the deferred equation would lose; the
    /// question is then refused there).
    pub(crate) fn waits_for_graph(
        &mut self,
        eq: &'a ast::Equation,
        scope: Scope,
        loops: &Loops,
        initial: bool,
    ) -> bool {
        let graph = &self.connections.graph;
        if !graph.nested_may_wait || graph.trees.is_some() || graph.when_depth > 0 || !self.branch_guards.is_empty() {
            return false;
        }
        if !self.may_hold_nodes() {
            return false;
        }
        if !is_late_equation(eq) {
            return false;
        }
        let late = crate::connections::LateEquation {
            equation: eq,
            scope,
            initial,
            loops: loops.clone(),
        };
        self.connections.counting_equations.push(late);
        true
    }

    /// The `equalityConstraint` of an overdetermined type or record class (also through short
    /// class definitions), or `None` for any other class.
    pub(crate) fn equality_constraint(&self, class: ClassId) -> Option<ClassId> {
        let overdetermined_kind = |c: ClassId| {
            matches!(
                self.table.get(c).def.kind,
                ast::ClassKind::Type | ast::ClassKind::Record | ast::ClassKind::Connector
            )
        };
        self.table
            .short_definition_chain(class)
            .map_while(|link| match link {
                TypeRef::Class(c) if overdetermined_kind(c) => Some(c),
                _ => None,
            })
            .find_map(|c| {
                let f = self.table.member_class(c, "equalityConstraint", 0)?;
                self.table.get(f).def.kind.is_function().then_some(f)
            })
    }

    /// The connect `l` = `r` of two compatible connector elements, for its overdetermined
    /// instances: an optional edge between each pair of them. Returns the scalars of `l`'s
    /// instances, which the connect leaves out of the connection sets.
    pub(crate) fn overdetermined_connect(
        &mut self,
        (l, r): (&Target, &Target),
        outside: (bool, bool),
        at: &'a ast::ComponentRef,
        span: Span,
    ) -> Vec<VarId> {
        if !self.may_hold_nodes() {
            return Vec::new();
        }
        let (left, right) = (self.connector_nodes(l), self.connector_nodes(r));
        if left.is_empty() && right.is_empty() {
            return Vec::new();
        }
        let graph = &self.connections.graph;
        let same_kinds = left.len() == right.len()
            && left.iter().zip(&right).all(|(&a, &b)| {
                let (a, b) = (&graph.nodes[a as usize], &graph.nodes[b as usize]);
                a.function == b.function && a.leaves.len() == b.leaves.len()
            });
        if !same_kinds {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0334",
                    format!(
                        "`{}` connects instances of overdetermined types or records with instances of other types",
                        eqm_syntax::pretty::print_ref(at)
                    ),
                    span,
                    "different overdetermined types",
                )
                .with_help("the connected connectors must hold instances of the same overdetermined types and records"),
            );
            return Vec::new();
        }
        let mut diverted = Vec::new();
        for (&a, &b) in left.iter().zip(&right) {
            let graph = &mut self.connections.graph;
            let (la, lb) = (&graph.nodes[a as usize].leaves, &graph.nodes[b as usize].leaves);
            let pairs = la
                .iter()
                .zip(lb)
                .map(|(&x, &y)| ((x, outside.0), (y, outside.1)))
                .collect();
            diverted.extend_from_slice(la);
            graph.optional.push(OptionalEdge {
                ends: [(a, outside.0), (b, outside.1)],
                pairs,
                at,
                span,
            });
        }
        diverted
    }

    /// Whether any class of the library is an overdetermined type or record, found once.
    pub(crate) fn may_hold_nodes(&mut self) -> bool {
        if let Some(any) = self.connections.graph.any_overdetermined {
            return any;
        }
        let any = self
            .table
            .classes
            .iter()
            .any(|c| c.def.name.name == "equalityConstraint");
        self.connections.graph.any_overdetermined = Some(any);
        any
    }

    /// The nodes a connector element holds, in declaration order (nested connectors and
    /// records after the element's own components), registered on first sight.
    fn connector_nodes(&mut self, target: &Target) -> Vec<u32> {
        let Target::Inst(connector) = *target else {
            return Vec::new();
        };
        let class = self.instances[connector.0 as usize].class;
        if self.connections.graph.holds_nodes.get(&class) == Some(&false) {
            return Vec::new();
        }
        let mut nodes = Vec::new();
        let mut stack = vec![connector];
        while let Some(instance) = stack.pop() {
            let mut nested = Vec::new();
            let count = self.instances[instance.0 as usize].layout.elements.len();
            for k in 0..count {
                let member = self.ensure_member_at(instance, k);
                match self.element_constraint(instance, k, &member) {
                    Some(function) => nodes.extend(self.member_nodes(&member, function)),
                    None => match member {
                        Member::Inst(i) => nested.push(i),
                        Member::InstArray(array) => nested.extend(array.elements.iter().copied()),
                        _ => {}
                    },
                }
            }
            stack.extend(nested.into_iter().rev());
        }
        self.connections.graph.holds_nodes.insert(class, !nodes.is_empty());
        nodes
    }

    /// The `equalityConstraint` of the class of element `k` of `instance`, when it is an
    /// overdetermined type or record.
    pub(crate) fn element_constraint(&mut self, instance: InstanceId, k: usize, member: &Member) -> Option<ClassId> {
        match member {
            Member::Inst(i) => self.equality_constraint(self.instances[i.0 as usize].class),
            Member::InstArray(array) => {
                let first = *array.elements.first()?;
                self.equality_constraint(self.instances[first.0 as usize].class)
            }
            Member::Var(_) | Member::VarArray(_) => {
                let layout = self.instances[instance.0 as usize].layout.clone();
                let element = &layout.elements[k];
                match self.table.lookup(element.class, &element.clause.type_name) {
                    Ok(TypeRef::Class(class)) => self.equality_constraint(class),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The nodes of a member of an overdetermined class: one per instance, an array of an
    /// overdetermined type being one node.
    fn member_nodes(&mut self, member: &Member, function: ClassId) -> Vec<u32> {
        match member {
            Member::Inst(i) => self.record_node(*i, function).into_iter().collect(),
            Member::InstArray(array) => {
                let elements = array.elements.clone();
                elements.iter().filter_map(|&i| self.record_node(i, function)).collect()
            }
            Member::Var(v) => vec![self.value_node(Vec::new(), vec![*v], function)],
            Member::VarArray(array) => {
                let (dims, vars) = (array.dims.to_vec(), array.elements.to_vec());
                if vars.is_empty() {
                    return Vec::new();
                }
                vec![self.value_node(dims, vars, function)]
            }
            _ => Vec::new(),
        }
    }

    /// The node of an instance of an overdetermined record (`None` for one without scalars).
    fn record_node(&mut self, instance: InstanceId, function: ClassId) -> Option<u32> {
        let leaves: Vec<VarId> = self
            .connector_leaves(&Target::Inst(instance))
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        let first = *leaves.first()?;
        Some(self.node(first, || GraphNode {
            leaves,
            function,
            shape: NodeShape::Record(instance),
        }))
    }

    /// The node of a scalar or an array of an overdetermined type.
    fn value_node(&mut self, dims: Vec<usize>, leaves: Vec<VarId>, function: ClassId) -> u32 {
        let ty = self.model.var(leaves[0]).ty;
        self.node(leaves[0], || GraphNode {
            leaves,
            function,
            shape: NodeShape::Value(dims, ty),
        })
    }

    fn node(&mut self, first: VarId, make: impl FnOnce() -> GraphNode) -> u32 {
        let graph = &mut self.connections.graph;
        *graph.node_of.entry(first).or_insert_with(|| {
            graph.nodes.push(make());
            (graph.nodes.len() - 1) as u32
        })
    }

    /// The node an argument of an operator of `Connections` names: an instance of an
    /// overdetermined type or record, a whole array of a type being one.
    pub(crate) fn graph_node_of(&mut self, arg: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> Option<u32> {
        let not_a_node = |f: &mut Self| {
            f.diagnostics.push(
                Diagnostic::error(
                    "E0334",
                    "the operators of `Connections` take an instance of an overdetermined type or record",
                    arg.span,
                    "not overdetermined",
                )
                .with_help("an overdetermined type or record declares a function `equalityConstraint`"),
            );
            None
        };
        let ast::ExprKind::Ref(c) = &arg.kind else {
            return not_a_node(self);
        };
        let (dims, targets) = self.resolve_targets(c, scope, loops)?;
        let member = match targets.as_slice() {
            [Target::Inst(i)] => Member::Inst(*i),
            [] => return not_a_node(self),
            vars if vars.iter().all(|t| matches!(t, Target::Var(_))) => {
                let vars: Vec<VarId> = vars
                    .iter()
                    .filter_map(|t| match t {
                        Target::Var(v) => Some(*v),
                        Target::Inst(_) => None,
                    })
                    .collect();
                match dims.is_empty() {
                    true => Member::Var(vars[0]),
                    false => Member::VarArray(crate::layout::ArrayMember::new(dims, vars)),
                }
            }
            _ => return not_a_node(self),
        };
        let function = match &member {
            Member::Inst(i) => self.equality_constraint(self.instances[i.0 as usize].class),
            _ => self.declared_constraint(c, &member),
        };
        let Some(function) = function else {
            return not_a_node(self);
        };
        self.member_nodes(&member, function).first().copied()
    }

    /// The `equalityConstraint` of the type a variable (or array) `c` is declared with.
    fn declared_constraint(&mut self, c: &ast::ComponentRef, member: &Member) -> Option<ClassId> {
        let first = match member {
            Member::Var(v) => *v,
            Member::VarArray(array) => *array.elements.first()?,
            _ => return None,
        };
        let owner = self.model.var(first).instance;
        let name = &c.parts.last()?.name.name;
        let k = self.instances.get(owner.0 as usize)?.layout.index(name)?;
        self.element_constraint(owner, k, member)
    }

    /// `Connections.branch`, `root` or `potentialRoot` written as an equation: an edge or a
    /// root of the graph. False when the call is none of them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn graph_equation(
        &mut self,
        eq: &'a ast::Equation,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
        initial: bool,
    ) -> bool {
        let Some(operator) = self.graph_operator(function, scope) else {
            return false;
        };
        if matches!(operator, GraphOperator::IsRoot | GraphOperator::Rooted) {
            return false;
        }
        if !self.graph_equation_allowed(operator, eq.span, initial) {
            return true;
        }
        let arity = match operator {
            GraphOperator::PotentialRoot => 1..=2,
            GraphOperator::Branch => 2..=2,
            _ => 1..=1,
        };
        let priority = args.named.iter().find(|(n, _)| n.name == "priority").map(|(_, e)| e);
        let named_ok = args.named.len() == usize::from(priority.is_some());
        let positional = args.positional.len() + usize::from(priority.is_some());
        if !named_ok || !arity.contains(&positional) || (priority.is_some() && args.positional.len() > 1) {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("`{}` takes {}", operator.name(), arity_text(operator)),
                args.span,
                "wrong arguments",
            ));
            return true;
        }
        let mut nodes = Vec::new();
        for arg in &args.positional[..*arity.start()] {
            match self.graph_node_of(arg, scope, loops) {
                Some(node) => nodes.push(node),
                None => return true,
            }
        }
        let graph = &mut self.connections.graph;
        match operator {
            GraphOperator::Branch => graph.required.push((nodes[0], nodes[1], eq.span)),
            GraphOperator::Root => graph.roots.push((nodes[0], eq.span)),
            _ => {
                let priority = priority.or(args.positional.get(1));
                let value = match priority {
                    Some(p) => self.eval_structural_int(p, scope, "the priority of a potential root"),
                    None => Some(0),
                };
                match value {
                    Some(p) if p >= 0 => self.connections.graph.potential_roots.push((nodes[0], p, eq.span)),
                    Some(p) => self.diagnostics.push(Diagnostic::error(
                        "E0334",
                        format!("the priority of a potential root must not be negative, found {p}"),
                        priority.map_or(eq.span, |p| p.span),
                        "negative priority",
                    )),
                    None => {}
                }
            }
        }
        true
    }

    /// Whether an operator that adds to the graph may stand where it is: not in an initial
    /// equation, a when-clause, an if-equation decided during the run, or an equation flattened
    /// after the graph is cut (one that counts connects or asks the trees).
    fn graph_equation_allowed(&mut self, operator: GraphOperator, span: Span, initial: bool) -> bool {
        let place = if initial {
            "an initial equation section"
        } else if self.connections.graph.when_depth > 0 {
            "a when-clause"
        } else if !self.branch_guards.is_empty() {
            "an if-equation whose condition is decided during the run"
        } else if self.connections.graph.trees.is_some() {
            "an equation that uses `cardinality`, `Connections.isRoot` or `Connections.rooted`"
        } else {
            return true;
        };
        self.diagnostics.push(
            Diagnostic::error(
                "E0334",
                format!("`{}` is not allowed in {place}", operator.name()),
                span,
                "not allowed here",
            )
            .with_help("the connection graph is fixed at translation: write it where a `connect` may stand"),
        );
        false
    }
}

fn arity_text(operator: GraphOperator) -> &'static str {
    match operator {
        GraphOperator::Branch => "two instances of an overdetermined type or record",
        GraphOperator::PotentialRoot => "one instance of an overdetermined type or record and an optional priority",
        _ => "one instance of an overdetermined type or record",
    }
}
