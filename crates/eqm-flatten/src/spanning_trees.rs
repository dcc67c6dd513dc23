//! The virtual connection graph cut into spanning trees, and what the cut decides: which
//! connects of overdetermined instances make their scalars equal, which give
//! `0 = equalityConstraint(a, b)` instead, and the answers of `Connections.isRoot` and
//! `Connections.rooted`.
//!
//! Input: the graph `overconstrained` collected while the model was instantiated (every
//! connect and `Connections` equation is known). Output: the pairs of the tree edges, added to
//! the connects (whose connection sets `connect` builds), the flat equations of the edges
//! outside every tree, and [`Trees`]. The cut follows the Modelica language (section 9.4.2 of
//! its specification): a connect that repeats what the connects before it joined already is
//! redundant and dropped; every `Connections.root` is the root of a tree (two of them joined by
//! branches, or branches that close a cycle, are an error); optional edges join trees until one
//! would close a cycle or join two roots; a tree left without a root takes the potential root
//! with the lowest priority number (the first written among equals), or else its first node.
//! Each step is a union-find pass, so the cut is linear in the size of the graph (up to the
//! inverse Ackermann factor). It deliberately does not decide which variables become states:
//! the trees only say which equations are written.

use crate::connections::ResolvedConnect;
use crate::connections::{NodeShape, OptionalEdge, Trees};
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::overconstrained::GraphOperator;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::disjoint_sets::DisjointSets;
use eqm_ir::flat::{self, Origin};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Cuts the graph into spanning trees and writes what each connect of overdetermined
    /// instances becomes (see the module's documentation).
    pub(crate) fn cut_connection_graph(&mut self) {
        let graph = &mut self.connections.graph;
        let n = graph.nodes.len();
        let optional = without_redundant_connects(std::mem::take(&mut graph.optional), n);
        // A union-find over the graph's nodes and one more, the ground every root hangs from:
        // two nodes whose trees both have a root are then already joined, so an edge between
        // them would close a cycle through the ground.
        let ground = n;
        let mut forest = DisjointSets::new(n + 1);
        let mut is_root = vec![false; n];
        for &(node, _) in &graph.roots {
            is_root[node as usize] = true;
            forest.union(node as usize, ground);
        }
        let mut tree_edges: Vec<(u32, u32)> = Vec::with_capacity(graph.required.len() + optional.len());
        let mut errors = Vec::new();
        for &(a, b, span) in &graph.required {
            if !forest.union(a as usize, b as usize) {
                errors.push(span);
            }
            tree_edges.push((a, b));
        }
        let mut broken = Vec::new();
        for edge in optional {
            let [(a, _), (b, _)] = edge.ends;
            if forest.union(a as usize, b as usize) {
                tree_edges.push((a, b));
                let start = self.connections.pairs.len();
                self.connections.pairs.extend_from_slice(&edge.pairs);
                let pairs = start..self.connections.pairs.len();
                self.connections
                    .connects
                    .push(ResolvedConnect { pairs, span: edge.span });
            } else {
                broken.push(edge);
            }
        }
        let graph = &mut self.connections.graph;
        let mut potential = graph.potential_roots.clone();
        potential.sort_by_key(|&(_, priority, _)| priority);
        for (node, _, _) in potential {
            if forest.union(node as usize, ground) {
                is_root[node as usize] = true;
            }
        }
        for node in 0..n as u32 {
            if forest.union(node as usize, ground) {
                is_root[node as usize] = true;
            }
        }
        let depth = tree_depths(n, &tree_edges, &is_root);
        let mut branches_from = vec![(0u32, 0u32); n];
        for &(a, b, _) in &graph.required {
            let from = &mut branches_from[a as usize];
            *from = (from.0 + 1, b);
        }
        graph.trees = Some(Trees {
            is_root,
            depth,
            branches_from,
        });
        for span in errors {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0334",
                    "this `Connections.branch` closes a cycle of branches, or joins two roots",
                    span,
                    "no spanning tree",
                )
                .with_help(
                    "the branches of the connection graph must form trees, each with at most one `Connections.root`",
                ),
            );
        }
        for edge in broken {
            self.equality_constraint_equations(&edge);
        }
    }

    /// `0 = equalityConstraint(a, b)` for a connect outside every tree: one equation per
    /// element of the residue (none for a residue of size 0).
    fn equality_constraint_equations(&mut self, edge: &OptionalEdge<'a>) {
        let [(a, _), (b, _)] = edge.ends;
        let function = self.connections.graph.nodes[a as usize].function;
        let (Some(left), Some(right)) = (self.node_value(a, edge), self.node_value(b, edge)) else {
            return;
        };
        let declared = self.input_declarations(function);
        let name = self.table.get(function).full_name.clone();
        if declared.len() != 2 {
            self.diagnostics.push(Diagnostic::error(
                "E0334",
                format!("`{name}` must take two inputs, the two instances it compares"),
                edge.span,
                "not an equality constraint",
            ));
            return;
        }
        let given = vec![Some((left, edge.span)), Some((right, edge.span))];
        let passed = [None, None];
        let Some((_, outputs)) = self.instance_call(function, &name, &declared, given, &passed, (None, edge.span))
        else {
            return;
        };
        let Some(residue) = outputs.first() else {
            self.diagnostics.push(Diagnostic::error(
                "E0334",
                format!("`{name}` must have one output, the residue"),
                edge.span,
                "not an equality constraint",
            ));
            return;
        };
        for element in residue.elements() {
            let zero = self.model.exprs.int(0);
            self.model.equations.push(flat::Equation {
                lhs: zero,
                rhs: element,
                origin: Origin::EqualityConstraint,
                span: edge.span,
                array: None,
            });
        }
    }

    /// The value a node gives its `equalityConstraint`.
    fn node_value(&mut self, node: u32, edge: &OptionalEdge<'a>) -> Option<Value> {
        let graph = &self.connections.graph;
        let leaves = &graph.nodes[node as usize].leaves;
        match &graph.nodes[node as usize].shape {
            NodeShape::Record(instance) => {
                let instance = *instance;
                self.record_value(instance, edge.at)
            }
            NodeShape::Value(dims, ty) => {
                let (dims, ty, leaves) = (dims.clone(), *ty, leaves.clone());
                let elements: Vec<_> = leaves.iter().map(|&v| self.model.exprs.var(v)).collect();
                Some(match dims.is_empty() {
                    true => Value::Scalar(elements[0], ty),
                    false => Value::Array(dims, elements, ty),
                })
            }
        }
    }

    /// `Connections.isRoot(a)` or `Connections.rooted(a)` in an expression: a Boolean known
    /// once the graph is cut. `None` when the call is neither; `Some(None)` after a diagnostic.
    pub(crate) fn graph_query(
        &mut self,
        e: &'a ast::Expr,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let operator = self.graph_operator(function, scope)?;
        let rooted = match operator {
            GraphOperator::IsRoot => false,
            GraphOperator::Rooted => true,
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0310",
                    format!(
                        "`{}` is an equation, not a value",
                        eqm_syntax::pretty::print_ref(function)
                    ),
                    e.span,
                    "cannot be used in an expression",
                ));
                return Some(None);
            }
        };
        if self.connections.graph.trees.is_none() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0334",
                    format!(
                        "`{}` is only allowed in the equations of a model",
                        eqm_syntax::pretty::print_ref(function)
                    ),
                    e.span,
                    "not allowed here",
                )
                .with_help("it asks the connection graph, which is known only once every connect is"),
            );
            return Some(None);
        }
        let ([arg], []) = (&args.positional[..], &args.named[..]) else {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{}` takes one instance of an overdetermined type or record",
                    eqm_syntax::pretty::print_ref(function)
                ),
                e.span,
                "wrong arguments",
            ));
            return Some(None);
        };
        let node = self.graph_node_of(arg, scope, loops);
        let answer = node.and_then(|node| match rooted {
            false => Some(
                self.connections
                    .graph
                    .trees
                    .as_ref()?
                    .is_root
                    .get(node as usize)
                    .copied()
                    .unwrap_or(true),
            ),
            true => self.rooted(node, arg.span),
        });
        Some(answer.map(|b| Value::Scalar(self.model.exprs.boolean(b), eqm_ir::flat::ScalarType::Boolean)))
    }

    /// Whether `node`, the first argument of exactly one `Connections.branch`, is closer to
    /// its root than the branch's other end.
    fn rooted(&mut self, node: u32, span: Span) -> Option<bool> {
        let trees = self.connections.graph.trees.as_ref()?;
        let Some(&(1, other)) = trees.branches_from.get(node as usize) else {
            self.diagnostics.push(Diagnostic::error(
                "E0334",
                "`Connections.rooted` needs exactly one `Connections.branch` whose first argument is its argument",
                span,
                "no single branch",
            ));
            return None;
        };
        let depth_of = |n: u32| trees.depth.get(n as usize).copied().unwrap_or(0);
        Some(depth_of(node) < depth_of(other))
    }
}

/// The optional edges that join what the connects before them have not joined yet, taking each
/// node inside and outside the connect as the connection sets do: a connect that repeats a
/// connection (a connector connected to itself, the same connect twice, the third side of a
/// triangle) is dropped and gives no equation.
fn without_redundant_connects(edges: Vec<OptionalEdge<'_>>, nodes: usize) -> Vec<OptionalEdge<'_>> {
    let mut sets = DisjointSets::new(2 * nodes);
    let key = |(node, outside): (u32, bool)| 2 * node as usize + usize::from(outside);
    edges
        .into_iter()
        .filter(|edge| sets.union(key(edge.ends[0]), key(edge.ends[1])))
        .collect()
}

/// How many tree edges separate each node from its root, by a breadth-first walk from the
/// roots over the edges kept in the trees.
fn tree_depths(n: usize, edges: &[(u32, u32)], is_root: &[bool]) -> Vec<u32> {
    let mut degree = vec![0usize; n + 1];
    for &(a, b) in edges {
        degree[a as usize + 1] += 1;
        degree[b as usize + 1] += 1;
    }
    for k in 1..=n {
        degree[k] += degree[k - 1];
    }
    let mut next = degree.clone();
    let mut neighbours = vec![0u32; 2 * edges.len()];
    for &(a, b) in edges {
        neighbours[next[a as usize]] = b;
        next[a as usize] += 1;
        neighbours[next[b as usize]] = a;
        next[b as usize] += 1;
    }
    let mut depth = vec![u32::MAX; n];
    let mut queue: std::collections::VecDeque<u32> = (0..n as u32).filter(|&k| is_root[k as usize]).collect();
    for &root in &queue {
        depth[root as usize] = 0;
    }
    while let Some(node) = queue.pop_front() {
        for &other in &neighbours[degree[node as usize]..degree[node as usize + 1]] {
            if depth[other as usize] == u32::MAX {
                depth[other as usize] = depth[node as usize] + 1;
                queue.push_back(other);
            }
        }
    }
    depth
}
