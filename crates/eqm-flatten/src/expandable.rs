//! Expandable connectors (buses) as Modelica defines them.
//!
//! Input: the connects that name an expandable connector, a member of one, or a member that no
//! declaration of one has, recorded while instantiating ([`Flattener::expandable_sides`]).
//! Output, once every instance is made ([`Flattener::elaborate_expandable`]): the members each
//! connect makes present (new variables for members no declaration has, with the type of what
//! they are connected to), the members present in one connector of a set of connected
//! expandable connectors made present in all of them, the scalar pairs of these connects in the
//! connection state, and for each declared member that no connect makes present its default
//! value (zero, `false`), or an error when an expression reads it. It deliberately builds no
//! connection sets (that is `connect`) and resolves only the names of connects.
//!
//! A member is named by its path from the outermost expandable connector holding it (`sub.x`,
//! `speed[2]`, `cellBus[1,2].v`), taken from the flat variable names, so that a member reached
//! through a declared sub-connector and the same member added by a connect are one member.

use crate::connect::Side;
use crate::connections::{BusConnect, End, Place};
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::{Member, Target};
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::disjoint_sets::DisjointSets;
use eqm_ir::expr::{FxHashMap, VarId};
use eqm_ir::flat::{self, ConnectorRole, InstanceId, Origin, ScalarType};
use eqm_syntax::ast;
use std::collections::BTreeMap;

/// A scalar member of an expandable connector while the connects are elaborated.
struct Signal {
    /// The declared or created variable.
    var: Option<VarId>,
    /// A variable of the type a member without a declaration takes.
    template: Option<VarId>,
    present: bool,
}

/// The members of each outermost expandable connector, by path.
type Signals = FxHashMap<InstanceId, BTreeMap<String, Signal>>;

/// One end of a scalar pair before the variables of added members exist.
#[derive(Clone)]
enum PairEnd {
    Var(VarId),
    Signal(InstanceId, String),
}

fn join(path: &str, rest: &str) -> String {
    match (path.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => path.to_string(),
        _ => format!("{path}.{rest}"),
    }
}

/// The part of `name` after the name `prefix` of an enclosing instance and its dot.
fn relative(name: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        return name.to_string();
    }
    name.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('.'))
        .unwrap_or(name)
        .to_string()
}

/// The error for a misused expandable connector.
fn misuse(message: String, span: Span, label: &str) -> Diagnostic {
    Diagnostic::error("E0333", message, span, label)
}

impl<'t, 'a> Flattener<'t, 'a> {
    pub(crate) fn is_expandable(&self, instance: InstanceId) -> bool {
        let class = self.instances[instance.0 as usize].class;
        self.table.get(class).def.kind == ast::ClassKind::ExpandableConnector
    }

    /// Whether a member declared with `dims_from` in `instance` takes its size from the connects:
    /// `instance` is an expandable connector, the declaration has a size `:` and nothing binds
    /// it (MLS 9.1.3, `Real x[:];` in a bus).
    pub(crate) fn sized_by_connects(
        &self,
        instance: InstanceId,
        dims_from: (&ast::ComponentClause, &ast::ComponentDecl, Scope),
        modifier: &crate::modifier::Modifier<'_>,
    ) -> bool {
        let (clause, decl, _) = dims_from;
        let colon = |s: &ast::Subscript| matches!(s, ast::Subscript::Colon(_));
        self.is_expandable(instance)
            && modifier.binding.is_none()
            && (decl.dims.iter().any(colon) || clause.type_dims.iter().any(colon))
    }

    /// Whether `name` in expandable connector `instance` is a member a connect sizes
    /// ([`Self::sized_by_connects`]), which connects treat as a member no declaration has.
    pub(crate) fn is_unsized_member(&self, instance: InstanceId, name: &str) -> bool {
        !self.expandable.unsized_members.is_empty()
            && self.expandable.unsized_members.contains(&(instance, name.to_string()))
    }

    /// The outermost expandable connector that holds `instance` (or is it), through connectors
    /// only.
    fn expandable_root(&self, instance: InstanceId) -> Option<InstanceId> {
        let mut root = None;
        let mut current = Some(instance);
        while let Some(i) = current {
            if self.is_expandable(i) {
                root = Some(i);
            }
            let state = &self.model.instances[i.0 as usize];
            if !state.is_connector {
                break;
            }
            current = state.parent;
        }
        root
    }

    /// Resolves both sides of a connect when the model has expandable connectors. Returns the
    /// sides of an ordinary connect for the caller to add; a connect that involves an expandable
    /// connector is recorded for [`Self::elaborate_expandable`] (or reported) and gives `None`.
    pub(crate) fn expandable_sides(
        &mut self,
        a: &'a ast::ComponentRef,
        b: &'a ast::ComponentRef,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Side, Side)> {
        let added_a = self.undeclared_member(a, scope, loops);
        let added_b = self.undeclared_member(b, scope, loops);
        let outside_a = self.is_outside(a, scope);
        let outside_b = self.is_outside(b, scope);
        let left = match added_a {
            Some(_) => None,
            None => Some(self.connector_side(a, scope, loops)?),
        };
        let right = match added_b {
            Some(_) => None,
            None => Some(self.connector_side(b, scope, loops)?),
        };
        // Most connects name no expandable connector: they leave here at the cost of a walk up
        // from each element to its enclosing component.
        let in_bus = |f: &Self, side: &Option<Side>| {
            side.as_ref()
                .is_none_or(|s| s.elements.iter().any(|t| f.expandable_root(f.owner(t)).is_some()))
        };
        if !in_bus(self, &left) && !in_bus(self, &right) {
            return Some((left?, right?));
        }
        // A member no declaration has, connected to an array of connectors, is made an array
        // of the same size (MLS 9.1.3): one member per element, named by the element's
        // subscripts.
        let subscripts_a = self.element_subscripts(left.as_ref(), a);
        let subscripts_b = self.element_subscripts(right.as_ref(), b);
        let ends = |f: &mut Self, side: Option<Side>, added: Option<Place>, other: &[String]| match side {
            Some(side) => side.elements.iter().map(|t| f.classify(t)).collect::<Vec<_>>(),
            None => added.map_or_else(Vec::new, |place| added_members(place, other)),
        };
        let left_ends = ends(self, left, added_a, &subscripts_b);
        let right_ends = ends(self, right, added_b, &subscripts_a);
        if left_ends.len() != right_ends.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0302",
                format!(
                    "cannot connect `{}` ({} connectors) with `{}` ({})",
                    eqm_syntax::pretty::print_ref(a),
                    left_ends.len(),
                    eqm_syntax::pretty::print_ref(b),
                    right_ends.len()
                ),
                span,
                "array sizes differ",
            ));
            return None;
        }
        for (left, right) in left_ends.into_iter().zip(right_ends) {
            self.expandable.connects.push(BusConnect {
                left,
                right,
                outside: (outside_a, outside_b),
                span,
            });
        }
        None
    }

    /// The subscripts that name each element of an array of connectors, `side`, which `c`
    /// names without subscripts of its own: those of the element's name in the parts `c` names
    /// (`m.ro` of `RealOutput ro[3]` gives `[1]`, `[2]`, `[3]`; `rr.u` of `Reader rr[2, 2]`
    /// gives `[1,1]` to `[2,2]`); counted from 1 where `c` picks elements with subscripts of its
    /// own. Empty for one connector.
    fn element_subscripts(&self, side: Option<&Side>, c: &ast::ComponentRef) -> Vec<String> {
        let Some(side) = side.filter(|s| s.elements.len() > 1) else {
            return Vec::new();
        };
        let whole = c.parts.iter().all(|p| p.subscripts.is_empty());
        (side.elements.iter().enumerate())
            .map(|(k, target)| {
                let name = match *target {
                    Target::Var(v) => &self.model.var(v).name,
                    Target::Inst(i) => &self.model.instances[i.0 as usize].name,
                };
                match whole {
                    true => format!("[{}]", trailing_subscripts(name, c.parts.len()).join(",")),
                    false => format!("[{}]", k + 1),
                }
            })
            .collect()
    }

    /// Whether the connector `c` names is an outside connector of the instance writing the
    /// connect (its first part is a connector of that instance).
    fn is_outside(&mut self, c: &ast::ComponentRef, scope: Scope) -> bool {
        let Some(instance) = scope.instance else {
            return false;
        };
        self.is_connector_member(instance, &c.parts[0].name.name)
    }

    /// The instance that holds a connector element (the element itself for an instance).
    fn owner(&self, target: &Target) -> InstanceId {
        match *target {
            Target::Var(v) => self.model.var(v).instance,
            Target::Inst(i) => i,
        }
    }

    /// What a resolved connector element is with respect to expandable connectors.
    fn classify(&mut self, target: &Target) -> End {
        match *target {
            Target::Var(v) => {
                let owner = self.model.var(v).instance;
                match self.expandable_root(owner) {
                    Some(root) => {
                        let path = relative(&self.model.var(v).name, &self.model.instances[root.0 as usize].name);
                        End::Member(Place { root, path }, Some(vec![(String::new(), v)]))
                    }
                    None => End::Element(vec![(String::new(), v)]),
                }
            }
            Target::Inst(i) => {
                let leaves = self.relative_leaves(i);
                match self.expandable_root(i) {
                    None => End::Element(leaves),
                    Some(root) => {
                        let path = if root == i {
                            String::new()
                        } else {
                            relative(
                                &self.model.instances[i.0 as usize].name,
                                &self.model.instances[root.0 as usize].name,
                            )
                        };
                        let place = Place { root, path };
                        if self.is_expandable(i) {
                            End::Node(place)
                        } else {
                            End::Member(place, Some(leaves))
                        }
                    }
                }
            }
        }
    }

    /// The time-varying scalar variables of connector instance `i`, with their paths relative to
    /// it taken from their flat names.
    fn relative_leaves(&mut self, i: InstanceId) -> Vec<(String, VarId)> {
        let leaves = self.connector_leaves(&Target::Inst(i));
        let prefix = self.model.instances[i.0 as usize].name.clone();
        leaves
            .into_iter()
            .map(|(_, v)| (relative(&self.model.var(v).name, &prefix), v))
            .collect()
    }

    /// The place `c` names when it goes through an expandable connector to a member that no
    /// declaration has (`bus.speed`, `bus.sub.x`, `bus.speed[2]`); `None` for every other
    /// reference, which ordinary name resolution handles (and reports).
    fn undeclared_member(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Place> {
        let mut instance = scope.instance?;
        for (k, part) in c.parts.iter().enumerate() {
            let state = &self.instances[instance.0 as usize];
            if k > 0
                && self.is_expandable(instance)
                && (state.layout.index(&part.name.name).is_none() || self.is_unsized_member(instance, &part.name.name))
            {
                let root = self.expandable_root(instance)?;
                let mut path = if root == instance {
                    String::new()
                } else {
                    relative(
                        &self.model.instances[instance.0 as usize].name,
                        &self.model.instances[root.0 as usize].name,
                    )
                };
                for part in &c.parts[k..] {
                    let mut name = part.name.name.clone();
                    if !part.subscripts.is_empty() {
                        let index = self.constant_indices(&part.subscripts, scope, loops)?;
                        name = crate::value::element_name(&name, &index);
                    }
                    path = join(&path, &name);
                }
                return Some(Place { root, path });
            }
            instance = match self.ensure_member(instance, &part.name.name)? {
                Member::Inst(i) if part.subscripts.is_empty() => i,
                Member::InstArray(array) if part.subscripts.len() == array.dims.len() => {
                    let index = self.constant_indices(&part.subscripts, scope, loops)?;
                    let mut flat_index = 0;
                    for (i, n) in index.iter().zip(array.dims.iter()) {
                        if i >= n {
                            return None;
                        }
                        flat_index = flat_index * n + i;
                    }
                    array.elements[flat_index]
                }
                _ => return None,
            };
        }
        None
    }

    /// Subscripts that are each one Integer known now, from 0; `None` otherwise (then ordinary
    /// name resolution reports what is wrong).
    fn constant_indices(
        &mut self,
        subscripts: &'a [ast::Subscript],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<usize>> {
        let mut index = Vec::with_capacity(subscripts.len());
        for s in subscripts {
            let ast::Subscript::Expr(e) = s else {
                return None;
            };
            let Some(Value::Scalar(x, ScalarType::Integer)) = self.eval(e, scope, loops) else {
                return None;
            };
            let i = self.model.exprs.literal(x)?;
            if i < 1.0 {
                return None;
            }
            index.push(i as usize - 1);
        }
        Some(index)
    }
}

/// The subscripts in the last `parts` parts of the flat name `name`, in order (`comps[2].rr[1,
/// 2].u` with two parts gives `1` and `2`).
fn trailing_subscripts(name: &str, parts: usize) -> Vec<&str> {
    let mut depth = 0;
    let mut starts = vec![0];
    for (at, ch) in name.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => starts.push(at + 1),
            _ => {}
        }
    }
    let first = starts[starts.len().saturating_sub(parts)];
    let mut out = Vec::new();
    let mut rest = &name[first..];
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        out.extend(rest[open + 1..open + close].split(',').map(str::trim));
        rest = &rest[open + close + 1..];
    }
    out
}

/// The ends of a member no declaration has: the member itself, or, connected to an array of
/// connectors whose elements `subscripts` name, one member per element.
fn added_members(place: Place, subscripts: &[String]) -> Vec<End> {
    if subscripts.is_empty() {
        return vec![End::Member(place, None)];
    }
    (subscripts.iter())
        .map(|s| {
            let path = format!("{}{s}", place.path);
            End::Member(Place { root: place.root, path }, None)
        })
        .collect()
}

/// What a recorded connect becomes once the members are known.
enum Planned {
    /// Scalar pairs.
    Pairs(Vec<(PairEnd, PairEnd)>),
    /// Two connected expandable connectors (nodes): every member present in one pairs with the
    /// same member of the other.
    Nodes(usize, usize),
}

/// The connected expandable connectors: each a node, the connected ones in one set.
#[derive(Default)]
struct Nodes {
    places: Vec<Place>,
    index: FxHashMap<(InstanceId, String), usize>,
    sets: DisjointSets,
}

impl Nodes {
    fn node(&mut self, place: &Place) -> usize {
        let key = (place.root, place.path.clone());
        if let Some(&n) = self.index.get(&key) {
            return n;
        }
        let n = self.sets.add();
        self.places.push(place.clone());
        self.index.insert(key, n);
        n
    }

    fn find(&mut self, n: usize) -> usize {
        self.sets.find(n)
    }

    fn union(&mut self, a: usize, b: usize) {
        self.sets.union(a, b);
    }
}

/// Marks member `path` of `root` present; a member without a declaration is made with
/// `template`'s type. Returns whether it was not present before.
fn mark(signals: &mut Signals, root: InstanceId, path: String, template: Option<VarId>) -> bool {
    let members = signals.entry(root).or_default();
    match members.get_mut(&path) {
        Some(s) => {
            if s.template.is_none() {
                s.template = template;
            }
            !std::mem::replace(&mut s.present, true)
        }
        None => {
            members.insert(
                path,
                Signal {
                    var: None,
                    template,
                    present: true,
                },
            );
            true
        }
    }
}

/// The present members under `place`, with their paths relative to it and the variable whose
/// type they have.
fn present_under(signals: &Signals, place: &Place) -> Vec<(String, Option<VarId>)> {
    let Some(members) = signals.get(&place.root) else {
        return Vec::new();
    };
    let present = |(path, s): (&String, &Signal)| s.present.then(|| (path.clone(), s.var.or(s.template)));
    if place.path.is_empty() {
        return members.iter().filter_map(present).collect();
    }
    let prefix = format!("{}.", place.path);
    members
        .range(prefix.clone()..)
        .take_while(|(path, _)| path.starts_with(&prefix))
        .filter_map(present)
        .map(|(path, t)| (path[prefix.len()..].to_string(), t))
        .collect()
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Elaborates the recorded connects of expandable connectors (see the module doc): once
    /// every instance is made, before the connection sets are built.
    pub(crate) fn elaborate_expandable(&mut self) {
        if self.expandable.instances.is_empty() {
            return;
        }
        let connects = std::mem::take(&mut self.expandable.connects);
        let mut signals = self.declared_signals();
        let mut nodes = Nodes::default();
        let mut planned = Vec::with_capacity(connects.len());
        for c in connects {
            if let Some(plan) = self.plan(c.left, c.right, c.span, &mut signals, &mut nodes) {
                planned.push((plan, c.outside, c.span));
            }
        }
        // Members present in one connector of a set are present in all: repeated until nothing
        // changes, since a member added to a connector can be under another node of it.
        loop {
            let mut classes: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for n in 0..nodes.places.len() {
                classes.entry(nodes.find(n)).or_default().push(n);
            }
            let mut changed = false;
            for members in classes.values().filter(|m| m.len() > 1) {
                let mut union: BTreeMap<String, Option<VarId>> = BTreeMap::new();
                for &n in members {
                    for (rel, template) in present_under(&signals, &nodes.places[n]) {
                        union.entry(rel).or_insert(template);
                    }
                }
                for &n in members {
                    let place = &nodes.places[n];
                    for (rel, template) in &union {
                        changed |= mark(&mut signals, place.root, join(&place.path, rel), *template);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        self.make_added_members(&mut signals);
        self.absent_members(&signals);
        for (plan, (outside_left, outside_right), span) in planned {
            let pairs: Vec<(PairEnd, PairEnd)> = match plan {
                Planned::Pairs(pairs) => pairs,
                Planned::Nodes(a, b) => {
                    let (a, b) = (&nodes.places[a], &nodes.places[b]);
                    present_under(&signals, a)
                        .into_iter()
                        .map(|(rel, _)| {
                            (
                                PairEnd::Signal(a.root, join(&a.path, &rel)),
                                PairEnd::Signal(b.root, join(&b.path, &rel)),
                            )
                        })
                        .collect()
                }
            };
            let var = |end: &PairEnd| match end {
                PairEnd::Var(v) => Some(*v),
                PairEnd::Signal(root, path) => signals.get(root).and_then(|m| m.get(path)).and_then(|s| s.var),
            };
            let start = self.connections.pairs.len();
            for (l, r) in &pairs {
                let (Some(l), Some(r)) = (var(l), var(r)) else {
                    continue;
                };
                let (x, y) = (self.var_kinds[l.0 as usize], self.var_kinds[r.0 as usize]);
                if (x.ty == ScalarType::Boolean) != (y.ty == ScalarType::Boolean) || x.role != y.role {
                    self.diagnostics.push(Diagnostic::error(
                        "E0303",
                        format!(
                            "`{}` and `{}` are not compatible connectors",
                            self.model.var(l).name,
                            self.model.var(r).name
                        ),
                        span,
                        "incompatible connect",
                    ));
                    continue;
                }
                self.connections.pairs.push(((l, outside_left), (r, outside_right)));
            }
            self.connections.connects.push(crate::connections::ResolvedConnect {
                pairs: start..self.connections.pairs.len(),
                span,
            });
        }
    }

    /// The declared time-varying members of every outermost expandable connector, none present
    /// yet. Reports flow variables declared in an expandable connector itself.
    fn declared_signals(&mut self) -> Signals {
        let mut signals = Signals::default();
        for i in self.expandable.instances.clone() {
            if self.expandable_root(i) != Some(i) {
                continue;
            }
            let mut members = BTreeMap::new();
            for (path, v) in self.relative_leaves(i) {
                let var = self.model.var(v);
                if var.role == ConnectorRole::Flow && self.is_expandable(var.instance) {
                    let (name, span) = (var.name.clone(), var.span);
                    self.diagnostics.push(
                        misuse(
                            format!("`{name}` is a flow variable declared in an expandable connector"),
                            span,
                            "flow in an expandable connector",
                        )
                        .with_help("an expandable connector may hold connectors with flow variables, not flow variables of its own"),
                    );
                }
                members.insert(
                    path,
                    Signal {
                        var: Some(v),
                        template: None,
                        present: false,
                    },
                );
            }
            signals.insert(i, members);
        }
        signals
    }
}

/// A side of a connect that is not an expandable connector: scalar variables (with the place of
/// the member they are, inside an expandable connector), or a member no declaration has.
enum Scalars {
    Known(Vec<(String, VarId)>, Option<Place>),
    Undeclared(Place),
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// What a recorded connect becomes; marks the members it makes present.
    fn plan(&mut self, left: End, right: End, span: Span, signals: &mut Signals, nodes: &mut Nodes) -> Option<Planned> {
        let scalars = |end: End| match end {
            End::Element(leaves) => Some(Scalars::Known(leaves, None)),
            End::Member(place, Some(leaves)) => Some(Scalars::Known(leaves, Some(place))),
            End::Member(place, None) => Some(Scalars::Undeclared(place)),
            End::Node(_) => None,
        };
        match (left, right) {
            (End::Node(a), End::Node(b) | End::Member(b, None)) | (End::Member(a, None), End::Node(b)) => {
                let (a, b) = (nodes.node(&a), nodes.node(&b));
                nodes.union(a, b);
                Some(Planned::Nodes(a, b))
            }
            (End::Node(_), _) | (_, End::Node(_)) => {
                self.diagnostics.push(
                    misuse(
                        "an expandable connector connected to a connector that is not expandable".to_string(),
                        span,
                        "not both expandable",
                    )
                    .with_help("connect a member of the expandable connector instead (`connect(bus.signal, c)`)"),
                );
                None
            }
            (left, right) => match (scalars(left)?, scalars(right)?) {
                (Scalars::Undeclared(_), Scalars::Undeclared(_)) => {
                    self.diagnostics.push(
                        misuse(
                            "neither side of the connect is a declared component".to_string(),
                            span,
                            "both undeclared",
                        )
                        .with_help("a member of an expandable connector that no declaration has takes its type from the other side, which must be declared"),
                    );
                    None
                }
                (Scalars::Known(l, lp), Scalars::Known(r, rp)) => {
                    let same = l.len() == r.len() && l.iter().zip(&r).all(|((a, _), (b, _))| a == b);
                    if !same {
                        self.diagnostics.push(Diagnostic::error(
                            "E0303",
                            "the two sides of the connect are not compatible connectors",
                            span,
                            "incompatible connect",
                        ));
                        return None;
                    }
                    for (leaves, place) in [(&l, lp), (&r, rp)] {
                        if let Some(place) = place {
                            for (path, v) in leaves {
                                mark(signals, place.root, join(&place.path, path), Some(*v));
                            }
                        }
                    }
                    let pairs = l
                        .iter()
                        .zip(&r)
                        .map(|((_, a), (_, b))| (PairEnd::Var(*a), PairEnd::Var(*b)));
                    Some(Planned::Pairs(pairs.collect()))
                }
                (Scalars::Known(leaves, place), Scalars::Undeclared(added)) => {
                    Some(Planned::Pairs(added_pairs(signals, &leaves, place, &added, false)))
                }
                (Scalars::Undeclared(added), Scalars::Known(leaves, place)) => {
                    Some(Planned::Pairs(added_pairs(signals, &leaves, place, &added, true)))
                }
            },
        }
    }

    /// Makes the variables of present members that no declaration has, with the type of the
    /// variable they were connected to.
    fn make_added_members(&mut self, signals: &mut Signals) {
        let mut roots: Vec<InstanceId> = signals.keys().copied().collect();
        roots.sort_unstable_by_key(|r| r.0);
        for root in roots {
            let root_name = self.model.instances[root.0 as usize].name.clone();
            let Some(members) = signals.get_mut(&root) else {
                continue;
            };
            for (path, signal) in members.iter_mut() {
                let (true, None, Some(template)) = (signal.present, signal.var, signal.template) else {
                    continue;
                };
                let t = self.model.var(template);
                let (ty, variability, span) = (t.ty, t.variability, t.span);
                if t.role == ConnectorRole::Flow {
                    let name = t.name.clone();
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        format!("the flow variable `{name}` connected to a member of an expandable connector that no declaration has"),
                        span,
                        "not supported",
                    ).with_help("declare the connector in the expandable connector (`Pin p;`)"));
                    continue;
                }
                let v = VarId(self.model.variables.len() as u32);
                self.model.variables.push(flat::Variable {
                    name: format!("{root_name}.{path}"),
                    instance: root,
                    variability,
                    ty,
                    causality: flat::Causality::None,
                    role: ConnectorRole::Potential,
                    attributes: self.caches.no_attributes.clone(),
                    binding: None,
                    value: None,
                    description: Some("a member an expandable connector has through a connect".into()),
                    span,
                });
                self.var_kinds.push(crate::layout::VarKind {
                    variability,
                    role: ConnectorRole::Potential,
                    causality: flat::Causality::None,
                    ty,
                    is_connector_type: false,
                });
                signal.var = Some(v);
            }
        }
    }

    /// Declared members that no connect makes present: an error when an expression reads one,
    /// otherwise the default value Modelica allows (zero, `false`).
    fn absent_members(&mut self, signals: &Signals) {
        let mut roots: Vec<InstanceId> = signals.keys().copied().collect();
        roots.sort_unstable_by_key(|r| r.0);
        for root in roots {
            for signal in signals[&root].values() {
                let (false, Some(v)) = (signal.present, signal.var) else {
                    continue;
                };
                let var = self.model.var(v);
                let (ty, span) = (var.ty, var.span);
                if self.model.exprs.var_if_present(v).is_some() {
                    let name = var.name.clone();
                    self.diagnostics.push(
                        misuse(
                            format!(
                                "`{name}` is read, but no connect makes this member of an expandable connector present"
                            ),
                            span,
                            "not present",
                        )
                        .with_help("connect a source to it, or read a member that a connect provides"),
                    );
                    continue;
                }
                let lhs = self.model.exprs.var(v);
                let default = match ty {
                    ScalarType::Boolean => self.model.exprs.boolean(false),
                    _ => self.model.exprs.int(0),
                };
                self.model.equations.push(flat::Equation {
                    lhs,
                    rhs: default,
                    origin: Origin::Binding { var: v },
                    span,
                    array: None,
                });
            }
        }
    }
}

/// The pairs of a connect between known scalar variables and a member no declaration has; marks
/// the members present (`swapped` when the added member is the left side).
fn added_pairs(
    signals: &mut Signals,
    leaves: &[(String, VarId)],
    place: Option<Place>,
    added: &Place,
    swapped: bool,
) -> Vec<(PairEnd, PairEnd)> {
    let mut pairs = Vec::with_capacity(leaves.len());
    for (path, v) in leaves {
        if let Some(place) = &place {
            mark(signals, place.root, join(&place.path, path), Some(*v));
        }
        let key = join(&added.path, path);
        mark(signals, added.root, key.clone(), Some(*v));
        let (known, new) = (PairEnd::Var(*v), PairEnd::Signal(added.root, key));
        pairs.push(if swapped { (new, known) } else { (known, new) });
    }
    pairs
}
