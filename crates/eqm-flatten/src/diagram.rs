//! The component diagram of a model: its parts and how they are connected, as `eqm diagram`
//! draws them.
//!
//! Input: a class table and the name of a model. The model is flattened as for a simulation,
//! with the flattener keeping each `connect` written in the model's own class or inherited from
//! its base classes, as it resolved them: for-loops unrolled, if-equations with parameter
//! conditions decided, connects to conditional components that are absent dropped, one record
//! per pair of connector elements.
//!
//! Output: a [`Diagram`]: the model's top-level components in declaration order (name, array
//! dimensions, the full name of the class simulation uses, after imports, short class
//! definitions and redeclarations, its base classes and kind), the model's own connectors, and
//! every connection as its two ends (which component or connector, which array element, which
//! connector inside it, and whether that end is an input or an output). A model that does not
//! flatten gives its diagnostics instead, as for `eqm flatten`.
//!
//! What it deliberately does not do: it has no geometry (the drawing and its layout belong to
//! the front ends' library, `eqm::diagram`), it does not look inside components (their own
//! connects are part of their class), and it lists no variables that are not connectors: a
//! diagram shows the structure of a model, not its equations.

use crate::flattener::Flattener;
use crate::layout::Member;
use crate::layout::Target;
use crate::resolve::{ClassId, ClassTable, TypeRef};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{FxHashMap, VarId};
use eqm_ir::flat::{Causality, InstanceId};
use eqm_syntax::ast;

/// The components of a model, its own connectors and the connections between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagram {
    /// The model's full name.
    pub model: String,
    /// The top-level components that are not connectors, in declaration order (inherited ones
    /// where their `extends` clause stands).
    pub components: Vec<Element>,
    /// The model's own connectors, in declaration order.
    pub connectors: Vec<Element>,
    /// Each connected pair of connector elements, in the order the connects are written (a
    /// for-loop's in the order of its iterations).
    pub connections: Vec<Connection>,
}

/// A top-level component or connector of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    /// The sizes of its array dimensions; empty for a scalar component.
    pub dims: Vec<usize>,
    /// The full name of its class, as simulation resolves it.
    pub class_name: String,
    /// The full names of the classes its class extends, directly or through other bases,
    /// nearest first: a drawing recognises a library component a user class extends.
    pub bases: Vec<String>,
    /// The keyword of its class: `model`, `block`, `class` or `connector`.
    pub kind: &'static str,
    pub is_connector: bool,
    pub description: Option<String>,
    /// Where its declaration's `Placement` annotation puts it in the model's diagram, if it
    /// has one.
    pub placement: Option<Placement>,
    /// Where it is declared.
    pub span: Span,
}

/// A component's place in its model's diagram, from `annotation(Placement(transformation(origin
/// = {x, y}, extent = {{x1, y1}, {x2, y2}})))`: the centre and the size of its extent, in the
/// diagram's coordinates (y upwards). A missing extent is the usual `{{-10, -10}, {10, 10}}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Eq for Placement {}

impl Element {
    /// The number of elements (1 for a scalar component).
    pub fn count(&self) -> usize {
        self.dims.iter().product()
    }
}

/// What an end of a connection belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// `Diagram::components[k]`.
    Component(usize),
    /// `Diagram::connectors[k]`.
    Connector(usize),
}

/// One end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub owner: Owner,
    /// The subscripts (from 1) of the array element it belongs to; empty for a scalar owner.
    pub index: Vec<usize>,
    /// The connector inside the component (`flange_a`, `pin[2]`, `bus.p`); for an end at the
    /// model's own connector, the part of it that is connected (empty for the whole connector).
    pub path: String,
    /// Whether the connected element is declared as an input or an output.
    pub causality: Causality,
}

impl End {
    /// Whether this end gives the signal of a causal connection: the output of a component,
    /// or an input of the model itself (which its components read).
    pub fn drives(&self) -> bool {
        match self.owner {
            Owner::Component(_) => self.causality == Causality::Output,
            Owner::Connector(_) => self.causality == Causality::Input,
        }
    }
}

/// `connect(a, b)` for one pair of connector elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub a: End,
    pub b: End,
    /// The `connect` equation.
    pub span: Span,
}

impl Diagram {
    /// The component or connector an end belongs to.
    pub fn element(&self, owner: Owner) -> &Element {
        match owner {
            Owner::Component(k) => &self.components[k],
            Owner::Connector(k) => &self.connectors[k],
        }
    }

    /// An end as written in a connect: `m[2].flange_a`, `p`.
    pub fn end_text(&self, end: &End) -> String {
        let mut text = self.element(end.owner).name.clone();
        push_subscripts(&mut text, &end.index);
        if !end.path.is_empty() {
            text.push('.');
            text.push_str(&end.path);
        }
        text
    }
}

/// Appends `[i,j]` for a non-empty list of subscripts.
pub fn push_subscripts(text: &mut String, index: &[usize]) {
    if index.is_empty() {
        return;
    }
    text.push('[');
    for (k, i) in index.iter().enumerate() {
        if k > 0 {
            text.push(',');
        }
        text.push_str(&i.to_string());
    }
    text.push(']');
}

/// Flattens `model` and returns its diagram when no error was found, and all diagnostics.
pub fn diagram(table: &ClassTable<'_>, model: &str, options: &crate::Options) -> (Option<Diagram>, Vec<Diagnostic>) {
    crate::flattener::run_flattener(table, model, options, true, Flattener::diagram)
}

/// Where a top-level instance or variable belongs in the diagram: its owner and its position in
/// the owner's elements (row-major).
type Place = (Owner, usize);

impl<'t, 'a> Flattener<'t, 'a> {
    /// The diagram of the flattened model; see the module documentation.
    fn diagram(mut self) -> Diagram {
        let root = InstanceId(0);
        let state = &self.instances[root.0 as usize];
        let layout = state.layout.clone();
        let first = state.first_member;
        let mut components = Vec::new();
        let mut connectors = Vec::new();
        let mut instance_place: FxHashMap<InstanceId, Place> = FxHashMap::default();
        let mut variable_place: FxHashMap<VarId, Place> = FxHashMap::default();
        for (k, declared) in layout.elements.iter().enumerate() {
            let (dims, instances, variables): (Vec<usize>, Vec<InstanceId>, Vec<VarId>) = match &self.members[first + k]
            {
                Member::Inst(i) => (Vec::new(), vec![*i], Vec::new()),
                Member::InstArray(array) => (array.dims.to_vec(), array.elements.to_vec(), Vec::new()),
                Member::Var(v) => (Vec::new(), Vec::new(), vec![*v]),
                Member::VarArray(array) => (array.dims.to_vec(), Vec::new(), array.elements.to_vec()),
                // Absent conditional components, and members that are no component.
                _ => continue,
            };
            // A variable is part of the diagram only as a connector (`RealInput u`).
            if let Some(v) = variables.first()
                && !self.var_kinds[v.0 as usize].is_connector_type
            {
                continue;
            }
            let class = match instances.first() {
                Some(i) => Some(self.instances[i.0 as usize].class),
                // The class of a connector that is a variable, or of an empty array.
                None => match self.table.lookup(declared.class, &declared.clause.type_name) {
                    Ok(TypeRef::Class(c)) => Some(c),
                    _ => None,
                },
            };
            let Some(class) = class else {
                continue;
            };
            let entry = self.table.get(class);
            let is_connector = match instances.first() {
                Some(i) => self.instances[i.0 as usize].is_connector,
                None => !variables.is_empty() || entry.def.kind.is_connector(),
            };
            // Records, types and the like are data, not parts.
            if !is_connector
                && !matches!(
                    entry.def.kind,
                    ast::ClassKind::Model | ast::ClassKind::Block | ast::ClassKind::Class
                )
            {
                continue;
            }
            let element = Element {
                name: declared.decl.name.name.clone(),
                dims,
                class_name: entry.full_name.clone(),
                bases: self.base_class_names(class),
                kind: if is_connector {
                    "connector"
                } else {
                    entry.def.kind.keyword()
                },
                is_connector,
                description: declared.decl.description.as_ref().map(|d| d.text.clone()),
                placement: declared.decl.annotation.as_ref().and_then(placement),
                span: declared.decl.span,
            };
            let owner = if is_connector {
                connectors.push(element);
                Owner::Connector(connectors.len() - 1)
            } else {
                components.push(element);
                Owner::Component(components.len() - 1)
            };
            for (position, i) in instances.into_iter().enumerate() {
                instance_place.insert(i, (owner, position));
            }
            for (position, v) in variables.into_iter().enumerate() {
                variable_place.insert(v, (owner, position));
            }
        }
        let mut diagram = Diagram {
            model: self.model.name.clone(),
            components,
            connectors,
            connections: Vec::new(),
        };
        for connect in self.connections.root_connects.take().unwrap_or_default() {
            for (l, r) in connect.left.iter().zip(&connect.right) {
                let ends = (
                    self.diagram_end(l, &diagram, &instance_place, &variable_place),
                    self.diagram_end(r, &diagram, &instance_place, &variable_place),
                );
                if let (Some(a), Some(b)) = ends {
                    diagram.connections.push(Connection {
                        a,
                        b,
                        span: connect.span,
                    });
                }
            }
        }
        diagram
    }

    /// The end of a connection at `target`: the top-level element it is part of, and its path
    /// inside that element. `None` for a target outside every element of the diagram (a
    /// connector inside a record, say), which the flattener does not give for a valid model.
    fn diagram_end(
        &self,
        target: &Target,
        diagram: &Diagram,
        instance_place: &FxHashMap<InstanceId, Place>,
        variable_place: &FxHashMap<VarId, Place>,
    ) -> Option<End> {
        let instances = &self.model.instances;
        // The top-level instance the target is inside, walked up through the parents (a path
        // is as deep as the connector is nested, a few levels).
        let top_of = |mut i: InstanceId| -> Option<InstanceId> {
            loop {
                let parent = instances[i.0 as usize].parent?;
                if parent == InstanceId(0) {
                    return Some(i);
                }
                i = parent;
            }
        };
        let (place, causality, path) = match *target {
            Target::Var(v) => {
                let variable = self.model.var(v);
                match variable_place.get(&v) {
                    Some(place) => (*place, variable.causality, String::new()),
                    None => {
                        let top = top_of(variable.instance)?;
                        let prefix = &instances[top.0 as usize].name;
                        (
                            *instance_place.get(&top)?,
                            variable.causality,
                            relative(&variable.name, prefix),
                        )
                    }
                }
            }
            Target::Inst(i) => {
                let causality = self.instances[i.0 as usize].causality;
                match instance_place.get(&i) {
                    Some(place) => (*place, causality, String::new()),
                    None => {
                        let top = top_of(i)?;
                        let prefix = &instances[top.0 as usize].name;
                        let name = &instances[i.0 as usize].name;
                        (*instance_place.get(&top)?, causality, relative(name, prefix))
                    }
                }
            }
        };
        let (owner, position) = place;
        Some(End {
            owner,
            index: element_subscripts(&diagram.element(owner).dims, position),
            path,
            causality,
        })
    }

    /// The full names of the classes `class` extends, nearest first, each once.
    fn base_class_names(&self, class: ClassId) -> Vec<String> {
        let mut seen = vec![class];
        let mut names = Vec::new();
        let mut next = 0;
        let mut queue = vec![class];
        // Breadth first, so that a direct base comes before the bases of bases; a class table
        // with a cycle of `extends` was reported when it was built, and `seen` stops it here.
        while let Some(&c) = queue.get(next) {
            next += 1;
            for extends in self.table.get(c).extends() {
                if let Ok(TypeRef::Class(base)) = self.table.extends_base(c, extends)
                    && !seen.contains(&base)
                {
                    seen.push(base);
                    queue.push(base);
                    names.push(self.table.get(base).full_name.clone());
                }
            }
        }
        names
    }
}

/// `name` without the prefix `prefix.` (a path inside a component).
/// The placement an element's annotation gives, from literal numbers only; `None` when it has
/// no `Placement(transformation(...))` with an `origin` or an `extent`.
fn placement(annotation: &ast::Annotation) -> Option<Placement> {
    let transformation = arguments(&annotation.modification, "Placement")
        .and_then(|placement| arguments(placement, "transformation"))?;
    let origin = binding(transformation, "origin").and_then(point);
    let extent = binding(transformation, "extent").and_then(|e| match &e.kind {
        ast::ExprKind::Array(corners) if corners.len() == 2 => Some((point(&corners[0])?, point(&corners[1])?)),
        _ => None,
    });
    if origin.is_none() && extent.is_none() {
        return None;
    }
    let (ox, oy) = origin.unwrap_or((0.0, 0.0));
    let ((x1, y1), (x2, y2)) = extent.unwrap_or(((-10.0, -10.0), (10.0, 10.0)));
    Some(Placement {
        x: ox + (x1 + x2) / 2.0,
        y: oy + (y1 + y2) / 2.0,
        width: (x2 - x1).abs(),
        height: (y2 - y1).abs(),
    })
}

/// The class modification of the argument `name` of `modification`.
fn arguments<'m>(modification: &'m ast::ClassModification, name: &str) -> Option<&'m ast::ClassModification> {
    let argument = modification.arguments.iter().find(|a| a.name.parts[0].name == name)?;
    argument.modification.as_ref()?.class_modification.as_ref()
}

/// The bound value of the argument `name` of `modification`.
fn binding<'m>(modification: &'m ast::ClassModification, name: &str) -> Option<&'m ast::Expr> {
    let argument = modification.arguments.iter().find(|a| a.name.parts[0].name == name)?;
    argument.modification.as_ref()?.binding.as_ref()
}

/// `{x, y}` of literal numbers.
fn point(e: &ast::Expr) -> Option<(f64, f64)> {
    match &e.kind {
        ast::ExprKind::Array(xy) if xy.len() == 2 => Some((
            crate::experiment::literal_number(&xy[0])?,
            crate::experiment::literal_number(&xy[1])?,
        )),
        _ => None,
    }
}

fn relative(name: &str, prefix: &str) -> String {
    name.strip_prefix(prefix)
        .map(|rest| rest.strip_prefix('.').unwrap_or(rest))
        .unwrap_or(name)
        .to_string()
}

/// The subscripts (from 1) of element `position` of an array with `dims`, row-major.
pub fn element_subscripts(dims: &[usize], mut position: usize) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (k, &size) in dims.iter().enumerate().rev() {
        let size = size.max(1);
        index[k] = position % size + 1;
        position /= size;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscripts_are_row_major_from_one() {
        assert_eq!(element_subscripts(&[], 0), Vec::<usize>::new());
        assert_eq!(element_subscripts(&[3], 2), vec![3]);
        assert_eq!(element_subscripts(&[2, 3], 4), vec![2, 2]);
    }

    #[test]
    fn relative_paths_drop_the_component() {
        assert_eq!(relative("m[3].flange_a.s", "m[3]"), "flange_a.s");
        assert_eq!(relative("x", "m"), "x");
    }
}
