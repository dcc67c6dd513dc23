//! The component diagram of a model drawn as SVG: `eqm diagram`.
//!
//! Input: a [`Diagram`] (from [`crate::Session::diagram`]: the model's components, its own
//! connectors and its connections, names resolved by the flattener). Output: [`svg`], a
//! standalone SVG 1.1 document. Each component is a box with its name and the short name of its
//! class, and the connectors it is connected at as ports on its sides; each connection is an
//! orthogonal line from port to port, with an arrow from output to input for signals. Components
//! of the library package `SystemDynamics` get the symbols of System Dynamics instead
//! ([`Symbol`]): stocks as rectangles, sources and sinks as clouds, flows as a pipe with a
//! valve, converters as circles; mass connections are thick pipes with an arrow in the direction
//! of the flow, information links thin curved arrows. The mass connections decide the layers, so
//! the chain of stocks and flows runs from left to right, with the converters in rows above
//! and below it. The layout (`layout`) is automatic and deterministic: the same diagram gives
//! the same bytes. A model whose every component has a `Placement` annotation is drawn where
//! the annotations put its components instead (an imported Stella or Vensim model keeps the
//! layout of its file), unless two of them would overlap.
//!
//! Every element of an array of components is a box of its own while all of them fit in
//! [`DRAW_LIMIT`] boxes; beyond that each array is one box, and beyond that only the first
//! [`DRAW_LIMIT`] boxes are drawn, which the drawing says in its heading.
//!
//! What it deliberately does not do: it reads no icons or graphics annotations (only the
//! placements), draws nothing inside components, and does no IO.

mod layout;
mod svg;

pub use eqm_flatten::diagram::{Connection, Diagram, Element, End, Owner};

use eqm_flatten::diagram::{element_subscripts, push_subscripts};
use eqm_ir::flat::Causality;
use layout::{EdgeSpec, Graph, NodeSpec};
use std::collections::BTreeMap;

/// The most boxes a drawing holds; see the module documentation.
pub const DRAW_LIMIT: usize = 600;

/// The characters of a name or class shown in a box.
const LABEL_CHARS: usize = 36;
/// The characters of a port's label.
const PORT_CHARS: usize = 20;
/// Horizontal advance of one character of the monospace font, at the sizes used.
const ADVANCE: f64 = 7.2;
const SMALL_ADVANCE: f64 = 6.0;
/// The height of a box's title (its name and class) above its ports.
const TITLE_HEIGHT: f64 = 40.0;

/// How a component is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbol {
    /// A box with ports: any component outside System Dynamics.
    Block,
    /// A connector of the model itself.
    Connector,
    /// A System Dynamics reservoir: a rectangle.
    Stock(StockKind),
    /// A source or sink outside the model's boundary.
    Cloud,
    /// A rate between reservoirs: a pipe with a valve.
    Flow,
    /// Anything else of System Dynamics: a circle.
    Converter,
}

/// The variants of a stock, each with its mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockKind {
    Plain,
    /// Updated at sampling instants (`StockD`, `SaturatedStockD`).
    Discrete,
    Oven,
    Conveyor,
    Queue,
}

impl Symbol {
    /// The name of the symbol in the drawing (`data-symbol`).
    pub fn name(self) -> &'static str {
        match self {
            Symbol::Block => "block",
            Symbol::Connector => "connector",
            Symbol::Stock(_) => "stock",
            Symbol::Cloud => "cloud",
            Symbol::Flow => "flow",
            Symbol::Converter => "converter",
        }
    }

    /// Whether the symbol carries material (mass connections attach to it).
    fn carries_mass(self) -> bool {
        matches!(self, Symbol::Stock(_) | Symbol::Cloud | Symbol::Flow)
    }

    fn is_system_dynamics(self) -> bool {
        self.carries_mass() || self == Symbol::Converter
    }
}

/// The symbol of a component: by the first of its class and that class's bases that is in the
/// package `SystemDynamics` (so a user's class extending a library stock is a stock); a
/// component of no such class is a plain box.
pub fn symbol(element: &Element) -> Symbol {
    if element.is_connector {
        return Symbol::Connector;
    }
    let Some(class) = std::iter::once(&element.class_name)
        .chain(&element.bases)
        .find(|name| name.starts_with("SystemDynamics."))
    else {
        return Symbol::Block;
    };
    let mut parts = class.split('.').skip(1);
    let package = parts.next().unwrap_or("");
    let last = class.rsplit('.').next().unwrap_or("");
    let stock = |last: &str| {
        let kind = if last.starts_with("Oven") {
            StockKind::Oven
        } else if last.starts_with("Conveyor") {
            StockKind::Conveyor
        } else if last.starts_with("Queue") {
            StockKind::Queue
        } else if last.ends_with('D') {
            StockKind::Discrete
        } else {
            StockKind::Plain
        };
        Symbol::Stock(kind)
    };
    match package {
        "Reservoirs" if last.starts_with("Cloud") => Symbol::Cloud,
        "Reservoirs" => stock(last),
        "Flows" => Symbol::Flow,
        "Converters" => Symbol::Converter,
        // Base classes outside the three packages (`Interfaces.GenericStock`) by their names.
        _ if last.contains("Cloud") => Symbol::Cloud,
        _ if ["Stock", "Reservoir", "Oven", "Conveyor", "Queue"]
            .iter()
            .any(|w| last.contains(w)) =>
        {
            stock(last)
        }
        _ if last.contains("Flow") => Symbol::Flow,
        _ => Symbol::Converter,
    }
}

/// The SVG drawing of `diagram`; see the module documentation.
pub fn svg(diagram: &Diagram) -> String {
    let scene = Scene::new(diagram);
    let layout = placements(diagram, &scene)
        .and_then(|placements| layout::placed(&scene.graph, &placements))
        .unwrap_or_else(|| layout::layout(&scene.graph));
    svg::render(diagram, &scene, &layout)
}

/// The model's own placement of every box, when each component has a `Placement` annotation
/// and no array is drawn element by element (its elements share one placement).
fn placements(diagram: &Diagram, scene: &Scene) -> Option<Vec<layout::Placement>> {
    scene
        .nodes
        .iter()
        .map(|node| {
            let element = diagram.element(node.owner);
            let p = element.placement?;
            (element.count() == 1).then_some(layout::Placement {
                x: p.x,
                y: p.y,
                width: p.width,
                height: p.height,
            })
        })
        .collect()
}

/// A box of the drawing.
struct Node {
    /// The component's name, with the element's subscripts or the array's sizes.
    label: String,
    owner: Owner,
    symbol: Symbol,
    /// The port labels, by port number.
    ports: Vec<String>,
}

/// How a connection is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EdgeKind {
    /// Between physical connectors: a plain line.
    Physical,
    /// From an output to an input: a line with an arrow.
    Signal,
    /// Material between reservoirs and flows: a pipe with an arrow.
    Mass,
    /// A System Dynamics information link: a thin curved arrow.
    Info,
}

/// A connection that is drawn, and how; with arrays drawn as one box each, also the number of
/// connections of their elements it stands for.
struct Drawn {
    connection: usize,
    kind: EdgeKind,
    count: usize,
}

/// What the drawing shows: its boxes, the graph the layout places, and what was left out.
struct Scene {
    nodes: Vec<Node>,
    graph: Graph,
    /// Per edge of the graph.
    drawn: Vec<Drawn>,
    /// Whether every array element is a box of its own.
    expanded: bool,
    /// The boxes a full drawing would have.
    wanted_boxes: usize,
}

impl Scene {
    fn new(diagram: &Diagram) -> Scene {
        let owners: Vec<(Owner, &Element)> = (diagram.components.iter().enumerate())
            .map(|(k, e)| (Owner::Component(k), e))
            .chain(
                diagram
                    .connectors
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (Owner::Connector(k), e)),
            )
            .collect();
        let (mut nodes, first, expanded, wanted_boxes) = boxes(&owners);
        let owner_of: Vec<Owner> = nodes.iter().map(|n: &Node| n.owner).collect();
        let node_of = |end: &End| -> Option<usize> {
            let base = *first.get(&end.owner)?;
            let dims = &diagram.element(end.owner).dims;
            let k = if expanded {
                base + position_of(dims, &end.index)?
            } else {
                base
            };
            (owner_of.get(k) == Some(&end.owner)).then_some(k)
        };
        let mut port_numbers: BTreeMap<(usize, String), u32> = BTreeMap::new();
        let mut edges = Vec::new();
        let mut drawn = Vec::new();
        let mut merged: BTreeMap<(EdgeSpec, EdgeKind), usize> = BTreeMap::new();
        for (c, connection) in diagram.connections.iter().enumerate() {
            let (Some(na), Some(nb)) = (node_of(&connection.a), node_of(&connection.b)) else {
                continue;
            };
            let (a, b) = (&connection.a, &connection.b);
            let (kind, a_first) = classify(diagram, (a, nodes[na].symbol), (b, nodes[nb].symbol));
            // A port on a box; symbols and the model's own connectors are their own port.
            let mut port = |node: usize, end: &End| -> Option<u32> {
                if nodes[node].symbol != Symbol::Block || kind == EdgeKind::Info {
                    return None;
                }
                // An array drawn as one box has one port per connector of its elements.
                let text = end.path.clone();
                let next = nodes[node].ports.len() as u32;
                let number = *port_numbers.entry((node, text.clone())).or_insert(next);
                if number == next {
                    nodes[node].ports.push(text);
                }
                Some(number)
            };
            let (pa, pb) = (port(na, a), port(nb, b));
            let (from, to, from_port, to_port) = if a_first { (na, nb, pa, pb) } else { (nb, na, pb, pa) };
            // Between arrays drawn as one box each, the connections of their elements are one
            // line each way.
            let edge = EdgeSpec {
                from,
                to,
                from_port,
                to_port,
                routed: kind != EdgeKind::Info,
                directed: kind != EdgeKind::Physical,
            };
            if !expanded {
                if let Some(&k) = merged.get(&(edge, kind)) {
                    let d: &mut Drawn = &mut drawn[k];
                    d.count += 1;
                    continue;
                }
                merged.insert((edge, kind), drawn.len());
            }
            edges.push(edge);
            drawn.push(Drawn {
                connection: c,
                kind,
                count: 1,
            });
        }
        let specs = nodes.iter().map(|node| node_spec(node, diagram)).collect();
        Scene {
            nodes,
            graph: Graph { nodes: specs, edges },
            drawn,
            expanded,
            wanted_boxes,
        }
    }
}

/// The boxes of a drawing of `owners` (the components, then the connectors): one per element
/// while they fit in [`DRAW_LIMIT`], else one per owner, and at most [`DRAW_LIMIT`]; with the
/// first box of each owner that has all its boxes, whether elements have boxes of their own,
/// and the number of boxes a full drawing would have.
fn boxes(owners: &[(Owner, &Element)]) -> (Vec<Node>, BTreeMap<Owner, usize>, bool, usize) {
    let elements: usize = owners.iter().map(|(_, e)| e.count()).sum();
    let expanded = elements <= DRAW_LIMIT;
    let wanted_boxes = if expanded { elements } else { owners.len() };
    // The first box of each owner (`None` past the limit).
    let mut first: BTreeMap<Owner, usize> = BTreeMap::new();
    let mut nodes = Vec::new();
    'owners: for &(owner, element) in owners {
        first.insert(owner, nodes.len());
        let boxes = if expanded { element.count() } else { 1 };
        let symbol = symbol(element);
        for position in 0..boxes {
            if nodes.len() == DRAW_LIMIT {
                first.remove(&owner);
                break 'owners;
            }
            let mut label = element.name.clone();
            if expanded {
                push_subscripts(&mut label, &element_subscripts(&element.dims, position));
            } else {
                push_subscripts(&mut label, &element.dims);
            }
            nodes.push(Node {
                label,
                owner,
                symbol,
                ports: Vec::new(),
            });
        }
    }
    (nodes, first, expanded, wanted_boxes)
}

/// How a connection between ends `a` and `b` (each with the symbol of its box) is drawn, and
/// whether it runs from `a` to `b`: material between reservoirs and flows from upstream to
/// downstream, a signal from the end that drives it, a physical connection as written.
fn classify(diagram: &Diagram, (a, sa): (&End, Symbol), (b, sb): (&End, Symbol)) -> (EdgeKind, bool) {
    let causal = a.causality != Causality::None || b.causality != Causality::None;
    if !causal && (sa.carries_mass() || sb.carries_mass()) {
        return (EdgeKind::Mass, upstream_is_a(diagram, a, sa, b, sb));
    }
    let a_drives = !b.drives() || a.drives();
    if causal && (sa.is_system_dynamics() || sb.is_system_dynamics()) {
        (EdgeKind::Info, a_drives)
    } else if causal {
        (EdgeKind::Signal, a_drives)
    } else {
        (EdgeKind::Physical, true)
    }
}

/// The size of a box, from the texts it shows.
fn node_spec(node: &Node, diagram: &Diagram) -> NodeSpec {
    let element = diagram.element(node.owner);
    let chars = |text: &str| text.chars().count().min(LABEL_CHARS) as f64;
    let name = chars(&node.label) * ADVANCE;
    let class = chars(short_class(&element.class_name)) * SMALL_ADVANCE;
    let fixed = |width: f64, height: f64, anchor: f64, satellite: bool| NodeSpec {
        width,
        height,
        port_top: 0.0,
        anchor: Some(anchor),
        satellite,
    };
    match node.symbol {
        Symbol::Block => {
            let port = node
                .ports
                .iter()
                .map(|p| p.chars().count().min(PORT_CHARS))
                .max()
                .unwrap_or(0) as f64
                * SMALL_ADVANCE;
            NodeSpec {
                width: (name.max(class).max(2.0 * port + 24.0) + 20.0).max(96.0),
                height: TITLE_HEIGHT + 16.0,
                port_top: TITLE_HEIGHT,
                anchor: None,
                satellite: false,
            }
        }
        Symbol::Connector => fixed(name.max(class).max(48.0) + 28.0, 42.0, 21.0, false),
        Symbol::Stock(_) => fixed(name.max(class).max(72.0) + 24.0, 54.0, 27.0, false),
        Symbol::Cloud => fixed(name.max(60.0) + 8.0, 58.0, 20.0, false),
        Symbol::Flow => fixed(name.max(48.0) + 12.0, 54.0, 20.0, false),
        Symbol::Converter => fixed(name.max(34.0) + 8.0, 56.0, 18.0, true),
    }
}

/// The last part of a dotted class name.
fn short_class(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Whether material flows from end `a` to end `b` of a mass connection. Port names say it: the
/// component whose port is an outlet (`outflow`, `out`) is upstream, the one whose port is an
/// inlet (`inflow`, `in`) downstream; a flow's ports are asked first, since they name the
/// direction of the flow itself. For the model's own connector it is the other way round (its
/// outlet is where material leaves the model, so it is downstream of what is inside). Without
/// such names, the order of the connect decides.
fn upstream_is_a(diagram: &Diagram, a: &End, sa: Symbol, b: &End, sb: Symbol) -> bool {
    let vote = |end: &End| -> Option<bool> {
        let name = if end.path.is_empty() {
            diagram.element(end.owner).name.as_str()
        } else {
            end.path.rsplit('.').next().unwrap_or(&end.path)
        };
        let name = name.to_ascii_lowercase();
        let outlet = if name.contains("out") {
            true
        } else if name.contains("in") {
            false
        } else {
            return None;
        };
        Some(if matches!(end.owner, Owner::Connector(_)) {
            !outlet
        } else {
            outlet
        })
    };
    let a_flow = (sa == Symbol::Flow).then(|| vote(a)).flatten();
    let b_flow = (sb == Symbol::Flow).then(|| vote(b).map(|up| !up)).flatten();
    a_flow
        .or(b_flow)
        .or_else(|| vote(a))
        .or_else(|| vote(b).map(|up| !up))
        .unwrap_or(true)
}

/// The row-major position of the element with subscripts `index` (from 1).
fn position_of(dims: &[usize], index: &[usize]) -> Option<usize> {
    if dims.len() != index.len() {
        return None;
    }
    let mut position = 0;
    for (&size, &i) in dims.iter().zip(index) {
        if i == 0 || i > size {
            return None;
        }
        position = position * size + (i - 1);
    }
    Some(position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_subscripts_agree() {
        let dims = [2, 3];
        for position in 0..6 {
            assert_eq!(position_of(&dims, &element_subscripts(&dims, position)), Some(position));
        }
        assert_eq!(position_of(&dims, &[3, 1]), None);
    }
}
