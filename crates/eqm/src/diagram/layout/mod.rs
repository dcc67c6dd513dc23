//! A layered (Sugiyama-style) layout of boxes and the edges between them, left to right.
//!
//! Input: a [`Graph`]: boxes with their least sizes, and edges between them with an optional
//! port at each end. A *routed* edge decides the layers (it points from a layer to a later one)
//! and gets an orthogonal route from port to port; a *free* edge is drawn by the caller as a
//! direct line and only pulls its boxes together. A *satellite* box (a converter of a System
//! Dynamics model) that no routed edge touches is kept out of the layers and placed in rows
//! above and below them, near the boxes it is linked to.
//!
//! Output: a [`Layout`]: a rectangle per box (no two overlap), where each port sits on its
//! box's left or right side, and a polyline per routed edge from its `from` box to its `to` box.
//!
//! The steps, each linear or `n log n` in the size of the graph: connected parts are laid out
//! one below the other (boxes without any edge packed in rows at the end); a depth-first search
//! reverses the edges that close cycles; longest-path layering, with each source pulled next to
//! its nearest successor; dummy boxes carry an edge across the layers it spans (up to a budget);
//! barycentre sweeps order each layer, the order with the fewest crossings kept; vertical
//! positions come from isotonic regression (pool adjacent violators) towards the neighbours'
//! positions in the order found, so chains run straight; ports on a side are ordered by the
//! position of the other end; vertical segments get tracks in the gap between two layers, edges
//! that share a port sharing a track. Every order comes from vectors and indices, so the same
//! graph gives the same layout.
//!
//! What it deliberately does not do: it measures no text and knows nothing of what a box
//! stands for (the caller gives sizes), and it does not route free edges.

mod layers;
mod order;
mod placed;
mod routes;

pub use placed::{Placement, placed};

use eqm_ir::disjoint_sets::DisjointSets;
use std::cmp::Ordering;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// The space between two boxes of a layer.
const BOX_GAP: f64 = 26.0;
/// The space between a dummy box and anything else in a layer.
const DUMMY_GAP: f64 = 10.0;
/// The height of a dummy box: the edge passes through its middle.
const DUMMY_HEIGHT: f64 = 2.0;
/// The least space between two layers.
const LAYER_GAP: f64 = 56.0;
/// The space between two tracks of vertical segments, and between a track and a layer.
const TRACK_PITCH: f64 = 10.0;
/// The distance between two ports on a side.
pub const PORT_PITCH: f64 = 18.0;
/// The space between the first or last port and the end of its side's port region.
const PORT_PAD: f64 = 6.0;
/// The space between the satellite rows and the layers, and between satellites in a row.
const SATELLITE_GAP: f64 = 30.0;
/// Rows of satellites above and below the layers, each side.
const SATELLITE_ROWS: usize = 3;
/// The space between two connected parts, and between packed boxes.
const PART_GAP: f64 = 40.0;
/// Barycentre sweeps per part (each down and up).
const SWEEPS: usize = 12;
/// Sweeps of the vertical placement.
const PLACEMENT_SWEEPS: usize = 10;
/// The most dummy boxes of a layout; longer edges beyond it are drawn straight across layers.
const DUMMY_BUDGET: usize = 200_000;
/// The number of edges that makes a box a hub for [`meeting_order`].
const HUB_DEGREE: usize = 4;
/// How far a self-connection loops out of its box.
const LOOP_REACH: f64 = 12.0;

/// A box to place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeSpec {
    pub width: f64,
    /// Its least height; ports may make it taller.
    pub height: f64,
    /// Where its ports begin, from its top (the part above holds its title).
    pub port_top: f64,
    /// Where edges without a port attach, from its top (the middle of a symbol drawn above its
    /// label); `None`: the middle of its port region.
    pub anchor: Option<f64>,
    /// Whether it goes into a row above or below the layers when no routed edge touches it.
    pub satellite: bool,
}

/// An edge between two boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EdgeSpec {
    pub from: usize,
    pub to: usize,
    /// The port at each end (numbered by the caller per box); `None` attaches the edge to the
    /// middle of the box's port region.
    pub from_port: Option<u32>,
    pub to_port: Option<u32>,
    /// Whether it decides the layers and is routed; otherwise the caller draws it directly.
    pub routed: bool,
    /// Whether it has a direction (a signal, a flow of material); an undirected edge (between
    /// physical connectors) may point either way in the layers.
    pub directed: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<EdgeSpec>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

    /// Whether the two rectangles share interior points.
    #[cfg(test)]
    pub fn overlaps(&self, other: &Rect) -> bool {
        self.x < other.right() && other.x < self.right() && self.y < other.bottom() && other.y < self.bottom()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    Left,
    Right,
}

/// Where a port is drawn: on `side` of box `node`, at height `y`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortPlace {
    pub node: usize,
    pub port: u32,
    pub side: Side,
    pub y: f64,
}

pub type Point = (f64, f64);

#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// One rectangle per box of the graph.
    pub boxes: Vec<Rect>,
    /// Every port used by a routed edge, once per side it is used on, by box and side.
    pub ports: Vec<PortPlace>,
    /// Per edge, its route from `from` to `to`; empty for free edges.
    pub routes: Vec<Vec<Point>>,
    pub width: f64,
    pub height: f64,
}

/// Lays `graph` out; see the module documentation.
pub fn layout(graph: &Graph) -> Layout {
    let n = graph.nodes.len();
    let mut out = Layout {
        boxes: vec![Rect::default(); n],
        ports: Vec::new(),
        routes: vec![Vec::new(); graph.edges.len()],
        width: 0.0,
        height: 0.0,
    };
    // Connected parts, numbered in the order of their first box.
    let mut sets = DisjointSets::new(n);
    for e in &graph.edges {
        if e.from != e.to && e.from < n && e.to < n {
            sets.union(e.from, e.to);
        }
    }
    let mut part_of_root = vec![usize::MAX; n];
    let mut parts: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for v in 0..n {
        let root = sets.find(v);
        if part_of_root[root] == usize::MAX {
            part_of_root[root] = parts.len();
            parts.push((Vec::new(), Vec::new()));
        }
        parts[part_of_root[root]].0.push(v);
    }
    for (k, e) in graph.edges.iter().enumerate() {
        if e.from < n && e.to < n {
            parts[part_of_root[sets.find(e.from)]].1.push(k);
        }
    }
    let mut y = 0.0;
    let mut width: f64 = 0.0;
    let mut singles = Vec::new();
    let mut local = vec![usize::MAX; n];
    for (nodes, edges) in &parts {
        if nodes.len() == 1 && edges.is_empty() {
            singles.push(nodes[0]);
            continue;
        }
        for (i, &v) in nodes.iter().enumerate() {
            local[v] = i;
        }
        let part = Part::new(graph, nodes, edges, &local).place();
        for (i, &v) in nodes.iter().enumerate() {
            let r = part.boxes[i];
            out.boxes[v] = Rect { y: r.y + y, ..r };
        }
        for p in &part.ports {
            out.ports.push(PortPlace {
                node: nodes[p.node],
                y: p.y + y,
                ..*p
            });
        }
        for (route, &k) in part.routes.into_iter().zip(edges) {
            out.routes[k] = route.into_iter().map(|(px, py)| (px, py + y)).collect();
        }
        width = width.max(part.width);
        y += part.height + PART_GAP;
    }
    // Boxes without edges, in rows as wide as the parts above (or a page).
    let limit = width.max(720.0);
    let (mut x, mut row_height) = (0.0, 0.0f64);
    for &v in &singles {
        let spec = graph.nodes[v];
        if x > 0.0 && x + spec.width > limit {
            y += row_height + PART_GAP;
            x = 0.0;
            row_height = 0.0;
        }
        out.boxes[v] = Rect {
            x,
            y,
            w: spec.width,
            h: spec.height,
        };
        x += spec.width + PART_GAP;
        row_height = row_height.max(spec.height);
        width = width.max(x - PART_GAP);
    }
    let height = if singles.is_empty() {
        y - PART_GAP
    } else {
        y + row_height
    };
    out.width = width.max(0.0);
    out.height = height.max(0.0);
    out
}

/// One connected part being laid out, with indices local to it: its boxes first, then the
/// dummy boxes.
struct Part<'g> {
    graph: &'g Graph,
    /// Global index of each real box.
    nodes: &'g [usize],
    edges: &'g [usize],
    /// Local index of every global box of this part.
    local: &'g [usize],
    /// Per local box (dummies included): its layer, or `usize::MAX` for a satellite.
    layer: Vec<usize>,
    /// Per local box: width, height, port region top.
    size: Vec<(f64, f64, f64)>,
    /// Per real box: its fixed anchor, if it has one (see [`NodeSpec::anchor`]).
    fixed_anchor: Vec<Option<f64>>,
    /// Per edge of `edges`: its boxes in layer order, dummies between (empty when free or a
    /// self-connection), and whether that order is against the edge's direction.
    chains: Vec<(Vec<usize>, bool)>,
    /// Neighbours in the previous and in the next layer, by segment (one per edge).
    up: Vec<Vec<usize>>,
    down: Vec<Vec<usize>>,
    /// The number of real boxes.
    real: usize,
}

/// The ports of routed edges per (box, side): each port with the boxes at the other end of its
/// segments.
type SidePorts = BTreeMap<(usize, Side), Vec<(u32, Vec<usize>)>>;

/// Where edges meet boxes: at a port's height, or at the box's anchor.
struct Ends<'a> {
    anchor: &'a [f64],
    port_y: BTreeMap<(usize, Side, u32), f64>,
}

impl Ends<'_> {
    fn y(&self, v: usize, side: Side, port: Option<u32>) -> f64 {
        port.and_then(|p| self.port_y.get(&(v, side, p)).copied())
            .unwrap_or(self.anchor[v])
    }
}

/// A vertical segment of a route in a gap between two layers: segment `index` of the chain of
/// edge `edge`, from height `ys.0` at its left end to `ys.1` at its right end, each end a box
/// and its port.
#[derive(Clone, Copy)]
struct Segment {
    edge: usize,
    index: usize,
    ys: (f64, f64),
    ends: ((usize, Option<u32>), (usize, Option<u32>)),
}

/// The layers as columns: each as wide as its widest box, the gaps after them as wide as
/// their tracks need.
struct Columns {
    x: Vec<f64>,
    width: Vec<f64>,
}

impl Columns {
    fn new(part: &Part, layers: &[Vec<usize>], tracks_in_gap: &[usize]) -> Columns {
        let width: Vec<f64> = layers
            .iter()
            .map(|layer| layer.iter().map(|&v| part.size[v].0).fold(8.0, f64::max))
            .collect();
        let mut x = vec![0.0; layers.len()];
        for l in 1..layers.len() {
            let gap = LAYER_GAP.max((tracks_in_gap[l - 1] + 3) as f64 * TRACK_PITCH);
            x[l] = x[l - 1] + width[l - 1] + gap;
        }
        Columns { x, width }
    }

    /// Where track `t` of the gap after layer `l` runs.
    fn track_x(&self, l: usize, t: usize) -> f64 {
        self.x[l] + self.width[l] + (2 + t) as f64 * TRACK_PITCH
    }
}

/// What placing a part gives, in the part's own coordinates.
struct Placed {
    boxes: Vec<Rect>,
    ports: Vec<PortPlace>,
    routes: Vec<Vec<Point>>,
    width: f64,
    height: f64,
}

impl Placed {
    /// The placed part moved so that its top left corner is at (0, 0).
    fn at_origin(mut boxes: Vec<Rect>, mut ports: Vec<PortPlace>, mut routes: Vec<Vec<Point>>) -> Placed {
        let mut min = (f64::INFINITY, f64::INFINITY);
        let mut max = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        let corners = boxes.iter().flat_map(|r| [(r.x, r.y), (r.right(), r.bottom())]);
        for (x, y) in corners.chain(routes.iter().flatten().copied()) {
            min = (min.0.min(x), min.1.min(y));
            max = (max.0.max(x), max.1.max(y));
        }
        if !min.0.is_finite() {
            (min, max) = ((0.0, 0.0), (0.0, 0.0));
        }
        for r in &mut boxes {
            r.x -= min.0;
            r.y -= min.1;
        }
        for p in &mut ports {
            p.y -= min.1;
        }
        for p in routes.iter_mut().flatten() {
            *p = (p.0 - min.0, p.1 - min.1);
        }
        Placed {
            boxes,
            ports,
            routes,
            width: max.0 - min.0,
            height: max.1 - min.1,
        }
    }
}

impl<'g> Part<'g> {
    fn new(graph: &'g Graph, nodes: &'g [usize], edges: &'g [usize], local: &'g [usize]) -> Part<'g> {
        let real = nodes.len();
        let size = nodes
            .iter()
            .map(|&v| {
                let s = graph.nodes[v];
                (s.width, s.height, s.port_top)
            })
            .collect();
        Part {
            graph,
            nodes,
            edges,
            local,
            layer: vec![0; real],
            size,
            fixed_anchor: nodes.iter().map(|&v| graph.nodes[v].anchor).collect(),
            chains: Vec::new(),
            up: Vec::new(),
            down: Vec::new(),
            real,
        }
    }

    fn spec(&self, k: usize) -> EdgeSpec {
        self.graph.edges[self.edges[k]]
    }

    /// The local ends of edge `k`.
    fn ends(&self, k: usize) -> (usize, usize) {
        let e = self.spec(k);
        (self.local[e.from], self.local[e.to])
    }

    fn place(mut self) -> Placed {
        let layering = self.layering_edges();
        let satellite = self.satellites(&layering);
        let reversed = self.orient(&layering, &satellite);
        self.assign_layers(&layering, &reversed, &satellite);
        self.add_dummies(&layering, &reversed);
        let layers = self.order();
        let ports = self.ports();
        let anchors = self.place_vertically(&layers);
        self.finish(&layers, &ports, &anchors, &satellite)
    }

    /// The ports of routed edges: per (box, side), the ports in use with the boxes at the other
    /// end of their segments; and each box's height grown to hold its ports.
    fn ports(&mut self) -> SidePorts {
        let mut sides: BTreeMap<(usize, Side), BTreeMap<u32, Vec<usize>>> = BTreeMap::new();
        for k in 0..self.edges.len() {
            let e = self.spec(k);
            if !e.routed {
                continue;
            }
            let chain = &self.chains[k].0;
            let (first_port, last_port) = self.chain_ports(k);
            // (box, side, port, the box at the other end of the segment)
            let uses = match chain.as_slice() {
                // A self-connection loops on the right side.
                [v] => [(*v, Side::Right, e.from_port, *v), (*v, Side::Right, e.to_port, *v)],
                [first, .., last] => [
                    (*first, Side::Right, first_port, chain[1]),
                    (*last, Side::Left, last_port, chain[chain.len() - 2]),
                ],
                [] => continue,
            };
            for (v, side, port, other) in uses {
                if let Some(port) = port {
                    sides.entry((v, side)).or_default().entry(port).or_default().push(other);
                }
            }
        }
        let mut out = BTreeMap::new();
        for ((v, side), ports) in sides {
            let needed = self.size[v].2 + ports.len() as f64 * PORT_PITCH + PORT_PAD;
            self.size[v].1 = self.size[v].1.max(needed);
            out.insert((v, side), ports.into_iter().collect());
        }
        out
    }

    /// The middle of a box's port region, from its top: where its edges without a port attach
    /// and what the vertical placement lines up.
    fn anchor_offset(&self, v: usize) -> f64 {
        if let Some(Some(fixed)) = self.fixed_anchor.get(v) {
            return *fixed;
        }
        let (_, h, top) = self.size[v];
        top + (h - top) / 2.0
    }

    /// The vertical position (of the anchor) of every layered box: the layers stacked, then
    /// sweeps that move each box towards the mean of its neighbours in the layer before (or
    /// after), keeping the order and the gaps (isotonic regression, pool adjacent violators).
    fn place_vertically(&self, layers: &[Vec<usize>]) -> Vec<f64> {
        let total = self.layer.len();
        let mut anchor = vec![0.0; total];
        let gap = |a: usize, b: usize| {
            if a >= self.real || b >= self.real {
                DUMMY_GAP
            } else {
                BOX_GAP
            }
        };
        for layer in layers {
            let mut top = 0.0;
            for (i, &v) in layer.iter().enumerate() {
                if i > 0 {
                    top += gap(layer[i - 1], v);
                }
                anchor[v] = top + self.anchor_offset(v);
                top += self.size[v].1;
            }
        }
        for sweep in 0..PLACEMENT_SWEEPS {
            let downwards = sweep % 2 == 0;
            let steps: Vec<usize> = if downwards {
                (0..layers.len()).collect()
            } else {
                (0..layers.len()).rev().collect()
            };
            for l in steps {
                let layer = &layers[l];
                if layer.is_empty() {
                    continue;
                }
                // Targets and weights of the anchors, as tops shifted by the boxes and gaps
                // before them, so that the order constraint becomes "non-decreasing".
                let mut offset = 0.0;
                let mut targets = Vec::with_capacity(layer.len());
                for (i, &v) in layer.iter().enumerate() {
                    if i > 0 {
                        offset += self.size[layer[i - 1]].1 + gap(layer[i - 1], v);
                    }
                    let (first, second) = if downwards {
                        (&self.up[v], &self.down[v])
                    } else {
                        (&self.down[v], &self.up[v])
                    };
                    let around = if first.is_empty() { second } else { first };
                    let (target, weight) = if around.is_empty() {
                        (anchor[v], 1e-3)
                    } else {
                        (
                            around.iter().map(|&u| anchor[u]).sum::<f64>() / around.len() as f64,
                            1.0,
                        )
                    };
                    targets.push((target - self.anchor_offset(v) - offset, weight));
                }
                let fitted = isotonic(&targets);
                let mut offset = 0.0;
                for (i, &v) in layer.iter().enumerate() {
                    if i > 0 {
                        offset += self.size[layer[i - 1]].1 + gap(layer[i - 1], v);
                    }
                    anchor[v] = fitted[i] + offset + self.anchor_offset(v);
                }
            }
        }
        anchor
    }
}

/// The non-decreasing sequence nearest to the weighted targets (least squares): pool adjacent
/// violators, linear.
fn isotonic(targets: &[(f64, f64)]) -> Vec<f64> {
    // Blocks of (weighted sum, weight, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(targets.len());
    for &(t, w) in targets {
        blocks.push((t * w, w, 1));
        while blocks.len() > 1 {
            let (s1, w1, n1) = blocks[blocks.len() - 1];
            let (s0, w0, n0) = blocks[blocks.len() - 2];
            if s0 / w0 <= s1 / w1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s0 + s1, w0 + w1, n0 + n1);
        }
    }
    let mut out = Vec::with_capacity(targets.len());
    for (s, w, n) in blocks {
        out.extend(std::iter::repeat_n(s / w, n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> NodeSpec {
        NodeSpec {
            width: 80.0,
            height: 40.0,
            port_top: 0.0,
            anchor: None,
            satellite: false,
        }
    }

    fn edge(from: usize, to: usize) -> EdgeSpec {
        EdgeSpec {
            from,
            to,
            from_port: Some(0),
            to_port: Some(1),
            routed: true,
            directed: true,
        }
    }

    #[test]
    fn isotonic_pools_violators() {
        let fitted = isotonic(&[(1.0, 1.0), (3.0, 1.0), (2.0, 1.0), (4.0, 1.0)]);
        assert_eq!(fitted, vec![1.0, 2.5, 2.5, 4.0]);
    }

    #[test]
    fn a_chain_runs_straight_left_to_right() {
        let graph = Graph {
            nodes: vec![node(); 4],
            edges: vec![edge(0, 1), edge(1, 2), edge(2, 3)],
        };
        let layout = layout(&graph);
        for pair in layout.boxes.windows(2) {
            assert!(pair[0].right() < pair[1].x);
            assert!((pair[0].centre().1 - pair[1].centre().1).abs() < 1e-9);
        }
        for route in &layout.routes {
            assert_eq!(route.len(), 2, "{route:?}");
        }
    }

    #[test]
    fn cycles_and_fans_do_not_overlap() {
        let graph = Graph {
            nodes: vec![node(); 6],
            edges: vec![
                edge(0, 1),
                edge(1, 2),
                edge(2, 0),
                edge(0, 3),
                edge(0, 4),
                edge(4, 5),
                edge(3, 5),
            ],
        };
        let layout = layout(&graph);
        for (i, a) in layout.boxes.iter().enumerate() {
            for b in &layout.boxes[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
        }
        assert!(layout.routes.iter().all(|r| r.len() >= 2));
    }

    #[test]
    fn crossings_are_counted() {
        // Two segments from layer 0 to layer 1 that cross.
        let graph = Graph {
            nodes: vec![node(); 4],
            edges: vec![edge(0, 3), edge(1, 2)],
        };
        let nodes: Vec<usize> = (0..4).collect();
        let edges: Vec<usize> = (0..2).collect();
        let local: Vec<usize> = (0..4).collect();
        let mut part = Part::new(&graph, &nodes, &edges, &local);
        let layering = part.layering_edges();
        let reversed = vec![false; 2];
        part.assign_layers(&layering, &reversed, &[false; 4]);
        part.add_dummies(&layering, &reversed);
        let layers = vec![vec![0, 1], vec![2, 3]];
        let position = vec![0, 1, 0, 1];
        assert_eq!(part.crossings(&layers, &position), 1);
        let ordered = part.order();
        let mut position = vec![0; 4];
        for layer in &ordered {
            for (i, &v) in layer.iter().enumerate() {
                position[v] = i;
            }
        }
        assert_eq!(part.crossings(&ordered, &position), 0);
    }
}
