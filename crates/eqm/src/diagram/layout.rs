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
    let mut sets = UnionFind::new(n);
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

    /// Which edges decide the layers: the routed ones, or, in a part without any, every edge
    /// (a network of free edges is laid out along them).
    fn layering_edges(&self) -> Vec<bool> {
        let any_routed = (0..self.edges.len()).any(|k| self.spec(k).routed && self.ends(k).0 != self.ends(k).1);
        (0..self.edges.len())
            .map(|k| {
                let (a, b) = self.ends(k);
                a != b && (self.spec(k).routed || !any_routed)
            })
            .collect()
    }

    /// The satellites: boxes that may be one and that no layering edge touches.
    fn satellites(&self, layering: &[bool]) -> Vec<bool> {
        let mut touched = vec![false; self.real];
        for (k, &l) in layering.iter().enumerate() {
            if l {
                let (a, b) = self.ends(k);
                touched[a] = true;
                touched[b] = true;
            }
        }
        let any = touched.iter().any(|&t| t);
        (0..self.real)
            .map(|i| any && !touched[i] && self.graph.nodes[self.nodes[i]].satellite)
            .collect()
    }

    /// Which layering edges run against `from → to` in the layers: an undirected edge points
    /// from the box a search meets first to the other (see [`meeting_order`]; it starts at the
    /// boxes that only send directed edges, such as signal sources, and follows directed edges
    /// forwards and undirected ones both ways, so that a chain of physical connections goes on
    /// in the direction of the signals or material that reach it); then the edges a depth-first
    /// search finds closing a cycle are turned around, so that the rest has none.
    fn orient(&self, layering: &[bool], satellite: &[bool]) -> Vec<bool> {
        let mut reversed = vec![false; self.edges.len()];
        let mut along: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.real];
        let (mut sends, mut receives) = (vec![false; self.real], vec![false; self.real]);
        for (k, &l) in layering.iter().enumerate() {
            if !l {
                continue;
            }
            let (a, b) = self.ends(k);
            along[a].push((k, b));
            if self.spec(k).directed {
                (sends[a], receives[b]) = (true, true);
            } else {
                along[b].push((k, a));
            }
        }
        let sources = (0..self.real).filter(|&v| sends[v] && !receives[v]);
        let met = meeting_order(&along, sources.chain(0..self.real), satellite);
        let mut rank = vec![0; self.real];
        for (i, &v) in met.iter().enumerate() {
            rank[v] = i;
        }
        let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.real];
        for (k, &l) in layering.iter().enumerate() {
            if l {
                let (a, b) = self.ends(k);
                reversed[k] = !self.spec(k).directed && rank[b] < rank[a];
                let (from, to) = if reversed[k] { (b, a) } else { (a, b) };
                out[from].push((k, to));
            }
        }
        depth_first(&out, 0..self.real, satellite, |k, _, on_path| {
            if on_path {
                reversed[k] = !reversed[k];
            }
        });
        reversed
    }

    /// The boxes each real box shares an edge with (by any edge but a self-connection).
    fn neighbours(&self) -> Vec<Vec<usize>> {
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); self.real];
        for k in 0..self.edges.len() {
            let (a, b) = self.ends(k);
            if a != b {
                neighbours[a].push(b);
                neighbours[b].push(a);
            }
        }
        neighbours
    }

    /// The layering edge `k` as (earlier, later) box.
    fn directed(&self, k: usize, reversed: &[bool]) -> (usize, usize) {
        let (a, b) = self.ends(k);
        if reversed[k] { (b, a) } else { (a, b) }
    }

    /// Longest-path layers, sources pulled next to their successors, boxes without layering
    /// edges in the median layer of their neighbours, satellites in none.
    fn assign_layers(&mut self, layering: &[bool], reversed: &[bool], satellite: &[bool]) {
        let n = self.real;
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut indegree = vec![0usize; n];
        let mut has_layering = vec![false; n];
        for (k, &l) in layering.iter().enumerate() {
            if l {
                let (a, b) = self.directed(k, reversed);
                succ[a].push(b);
                indegree[b] += 1;
                has_layering[a] = true;
                has_layering[b] = true;
            }
        }
        let mut layer = vec![0usize; n];
        let mut remaining = indegree.clone();
        let mut order: Vec<usize> = (0..n).filter(|&v| remaining[v] == 0).collect();
        let mut next = 0;
        while let Some(&v) = order.get(next) {
            next += 1;
            for &w in &succ[v] {
                layer[w] = layer[w].max(layer[v] + 1);
                remaining[w] -= 1;
                if remaining[w] == 0 {
                    order.push(w);
                }
            }
        }
        for &v in order.iter().rev() {
            if indegree[v] == 0
                && let Some(nearest) = succ[v].iter().map(|&w| layer[w]).min()
            {
                layer[v] = nearest.saturating_sub(1);
            }
        }
        // Boxes reached only by free edges: the median layer of the neighbours placed before
        // them, breadth first from the layered boxes.
        let neighbours = self.neighbours();
        let mut placed: Vec<bool> = (0..n).map(|v| has_layering[v]).collect();
        let mut queue: Vec<usize> = (0..n).filter(|&v| placed[v]).collect();
        let mut next = 0;
        while let Some(&v) = queue.get(next) {
            next += 1;
            for &w in &neighbours[v] {
                if placed[w] || satellite[w] {
                    continue;
                }
                let mut around: Vec<usize> = neighbours[w]
                    .iter()
                    .filter(|&&u| placed[u])
                    .map(|&u| layer[u])
                    .collect();
                around.sort_unstable();
                layer[w] = around[(around.len() - 1) / 2];
                placed[w] = true;
                queue.push(w);
            }
        }
        for v in 0..n {
            if satellite[v] {
                layer[v] = usize::MAX;
            }
        }
        self.layer = layer;
    }

    /// The chain of boxes of every routed or layering edge, with dummy boxes in the layers a
    /// long edge crosses, and the neighbours of each box in the layers before and after it.
    fn add_dummies(&mut self, layering: &[bool], reversed: &[bool]) {
        let mut budget = DUMMY_BUDGET;
        let mut chains = Vec::with_capacity(self.edges.len());
        for k in 0..self.edges.len() {
            let (a, b) = self.ends(k);
            if a == b {
                chains.push((vec![a], false));
                continue;
            }
            if !layering[k] {
                chains.push((Vec::new(), false));
                continue;
            }
            let (from, to) = self.directed(k, reversed);
            let (lf, lt) = (self.layer[from], self.layer[to]);
            let mut chain = vec![from];
            let span = lt.saturating_sub(lf);
            if span > 1 && span - 1 <= budget {
                budget -= span - 1;
                for l in lf + 1..lt {
                    chain.push(self.layer.len());
                    self.layer.push(l);
                    self.size.push((0.0, DUMMY_HEIGHT, 0.0));
                }
            }
            chain.push(to);
            chains.push((chain, reversed[k]));
        }
        let total = self.layer.len();
        self.up = vec![Vec::new(); total];
        self.down = vec![Vec::new(); total];
        for (chain, _) in &chains {
            for pair in chain.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                if self.layer[b] == self.layer[a] + 1 {
                    self.down[a].push(b);
                    self.up[b].push(a);
                }
            }
        }
        self.chains = chains;
    }

    /// The boxes of each layer in order: first as a depth-first search along the segments
    /// meets them (chains stay together), then barycentre sweeps; the order with the fewest
    /// crossings wins.
    fn order(&self) -> Vec<Vec<usize>> {
        let total = self.layer.len();
        let count = self
            .layer
            .iter()
            .filter(|&&l| l != usize::MAX)
            .max()
            .map_or(0, |&l| l + 1);
        let mut rank = vec![usize::MAX; total];
        let mut seen = 0;
        for start in 0..total {
            if rank[start] != usize::MAX || self.layer[start] == usize::MAX {
                continue;
            }
            let mut stack = vec![start];
            while let Some(v) = stack.pop() {
                if rank[v] != usize::MAX {
                    continue;
                }
                rank[v] = seen;
                seen += 1;
                // Reversed, so that the first neighbour is visited first.
                for &w in self.down[v].iter().chain(&self.up[v]).rev() {
                    if rank[w] == usize::MAX {
                        stack.push(w);
                    }
                }
            }
        }
        let mut layers: Vec<Vec<usize>> = vec![Vec::new(); count];
        for v in 0..total {
            if self.layer[v] != usize::MAX {
                layers[self.layer[v]].push(v);
            }
        }
        for layer in &mut layers {
            layer.sort_by_key(|&v| rank[v]);
        }
        let mut position = vec![0usize; total];
        let renumber = |layers: &[Vec<usize>], position: &mut [usize]| {
            for layer in layers {
                for (i, &v) in layer.iter().enumerate() {
                    position[v] = i;
                }
            }
        };
        renumber(&layers, &mut position);
        let mut best = layers.clone();
        let mut best_crossings = self.crossings(&layers, &position);
        for sweep in 0..SWEEPS {
            if best_crossings == 0 {
                break;
            }
            let downwards = sweep % 2 == 0;
            let steps: Vec<usize> = if downwards {
                (1..count).collect()
            } else {
                (0..count.saturating_sub(1)).rev().collect()
            };
            for l in steps {
                let keys: Vec<(f64, usize)> = layers[l]
                    .iter()
                    .map(|&v| {
                        let around = if downwards { &self.up[v] } else { &self.down[v] };
                        let key = if around.is_empty() {
                            position[v] as f64
                        } else {
                            around.iter().map(|&u| position[u] as f64).sum::<f64>() / around.len() as f64
                        };
                        (key, v)
                    })
                    .collect();
                let mut sorted = keys;
                sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(position[a.1].cmp(&position[b.1])));
                layers[l] = sorted.into_iter().map(|(_, v)| v).collect();
                for (i, &v) in layers[l].iter().enumerate() {
                    position[v] = i;
                }
            }
            let crossings = self.crossings(&layers, &position);
            if crossings < best_crossings {
                best_crossings = crossings;
                best = layers.clone();
            }
        }
        best
    }

    /// The number of crossings of segments between adjacent layers (each pair of layers by
    /// counting inversions with a Fenwick tree).
    fn crossings(&self, layers: &[Vec<usize>], position: &[usize]) -> usize {
        let mut total = 0;
        for l in 0..layers.len().saturating_sub(1) {
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            for &v in &layers[l] {
                for &w in &self.down[v] {
                    pairs.push((position[v], position[w]));
                }
            }
            pairs.sort_unstable();
            let size = layers[l + 1].len();
            let mut tree = vec![0usize; size + 1];
            for (seen, &(_, w)) in pairs.iter().enumerate() {
                // Segments seen so far that end right of `w` cross this one.
                let mut at_most = 0;
                let mut i = w + 1;
                while i > 0 {
                    at_most += tree[i];
                    i -= i & i.wrapping_neg();
                }
                total += seen - at_most;
                let mut i = w + 1;
                while i <= size {
                    tree[i] += 1;
                    i += i & i.wrapping_neg();
                }
            }
        }
        total
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

    /// The ports at the first and the last box of edge `k`'s chain (its `to` port first when
    /// the chain runs against the edge).
    fn chain_ports(&self, k: usize) -> (Option<u32>, Option<u32>) {
        let e = self.spec(k);
        if self.chains[k].1 {
            (e.to_port, e.from_port)
        } else {
            (e.from_port, e.to_port)
        }
    }

    /// Columns, tracks, routes and satellites: the finished part in its own coordinates, with
    /// its top left corner at (0, 0).
    fn finish(&self, layers: &[Vec<usize>], ports: &SidePorts, anchor: &[f64], satellite: &[bool]) -> Placed {
        let (ends, places) = self.place_ports(ports, anchor);
        let (tracks, tracks_in_gap) = self.assign_tracks(layers.len(), &ends);
        let columns = Columns::new(self, layers, &tracks_in_gap);
        let mut boxes = vec![Rect::default(); self.real];
        for (l, layer) in layers.iter().enumerate() {
            for &v in layer.iter().filter(|&&v| v < self.real) {
                let (w, h, _) = self.size[v];
                boxes[v] = Rect {
                    x: columns.x[l] + (columns.width[l] - w) / 2.0,
                    y: anchor[v] - self.anchor_offset(v),
                    w,
                    h,
                };
            }
        }
        let routes = (0..self.edges.len())
            .map(|k| self.route(k, &boxes, &columns, &tracks, &ends))
            .collect();
        self.place_satellites(&mut boxes, satellite);
        Placed::at_origin(boxes, places, routes)
    }

    /// The height of every port: the ports of a side in the order of their other ends, spread
    /// around the middle of the side's port region.
    fn place_ports<'s>(&self, ports: &SidePorts, anchor: &'s [f64]) -> (Ends<'s>, Vec<PortPlace>) {
        let mut ends = Ends {
            anchor,
            port_y: BTreeMap::new(),
        };
        let mut places = Vec::new();
        for (&(v, side), list) in ports {
            let mut sorted: Vec<(f64, u32)> = list
                .iter()
                .map(|(port, others)| {
                    let mean = others.iter().map(|&o| anchor[o]).sum::<f64>() / others.len().max(1) as f64;
                    (mean, *port)
                })
                .collect();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let first = anchor[v] - (sorted.len() as f64 - 1.0) * PORT_PITCH / 2.0;
            for (i, &(_, port)) in sorted.iter().enumerate() {
                let y = first + i as f64 * PORT_PITCH;
                ends.port_y.insert((v, side, port), y);
                if v < self.real {
                    places.push(PortPlace { node: v, port, side, y });
                }
            }
        }
        (ends, places)
    }

    /// Tracks for the vertical segments of the routes in each gap between two layers: a net is
    /// the segments of a gap that share an end, and nets whose spans overlap get different
    /// tracks (interval partitioning, the track that is free soonest first). Returns the track
    /// of each (edge, segment) and the number of tracks of each gap.
    fn assign_tracks(&self, count: usize, ends: &Ends) -> (BTreeMap<(usize, usize), usize>, Vec<usize>) {
        let mut gaps: Vec<Vec<Segment>> = vec![Vec::new(); count];
        for k in 0..self.edges.len() {
            let chain = &self.chains[k].0;
            if !self.spec(k).routed || chain.len() < 2 {
                continue;
            }
            let (first_port, last_port) = self.chain_ports(k);
            for i in 0..chain.len() - 1 {
                let (a, b) = (chain[i], chain[i + 1]);
                let pa = if i == 0 { first_port } else { None };
                let pb = if i + 2 == chain.len() { last_port } else { None };
                let (ya, yb) = (ends.y(a, Side::Right, pa), ends.y(b, Side::Left, pb));
                if (ya - yb).abs() > 0.5 {
                    gaps[self.layer[a]].push(Segment {
                        edge: k,
                        index: i,
                        ys: (ya, yb),
                        ends: ((a, pa), (b, pb)),
                    });
                }
            }
        }
        let mut track_of = BTreeMap::new();
        let mut tracks_in_gap = vec![0usize; count];
        for (g, segments) in gaps.iter().enumerate() {
            let mut nets = UnionFind::new(segments.len());
            let mut by_end: BTreeMap<(bool, (usize, Option<u32>)), usize> = BTreeMap::new();
            for (i, segment) in segments.iter().enumerate() {
                for key in [(false, segment.ends.0), (true, segment.ends.1)] {
                    match by_end.get(&key) {
                        Some(&j) => nets.union(i, j),
                        None => {
                            by_end.insert(key, i);
                        }
                    }
                }
            }
            let mut spans: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
            for (i, segment) in segments.iter().enumerate() {
                let (lo, hi) = (segment.ys.0.min(segment.ys.1), segment.ys.0.max(segment.ys.1));
                let span = spans.entry(nets.find(i)).or_insert((lo, hi));
                *span = (span.0.min(lo), span.1.max(hi));
            }
            let mut order: Vec<(f64, f64, usize)> = spans.iter().map(|(&net, &(lo, hi))| (lo, hi, net)).collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
            let mut free: BinaryHeap<Reverse<(Ordered, usize)>> = BinaryHeap::new();
            let mut net_track: BTreeMap<usize, usize> = BTreeMap::new();
            for (lo, hi, net) in order {
                let track = match free.peek() {
                    Some(Reverse((end, track))) if end.0 + TRACK_PITCH <= lo => {
                        let track = *track;
                        free.pop();
                        track
                    }
                    _ => {
                        tracks_in_gap[g] += 1;
                        tracks_in_gap[g] - 1
                    }
                };
                free.push(Reverse((Ordered(hi), track)));
                net_track.insert(net, track);
            }
            for (i, segment) in segments.iter().enumerate() {
                track_of.insert((segment.edge, segment.index), net_track[&nets.find(i)]);
            }
        }
        (track_of, tracks_in_gap)
    }

    /// The route of edge `k`, from the first box of its chain to the last (through the tracks
    /// of the gaps and across the layers of its dummy boxes), turned around when the chain runs
    /// against the edge; a self-connection loops out of the right side of its box.
    fn route(
        &self,
        k: usize,
        boxes: &[Rect],
        columns: &Columns,
        tracks: &BTreeMap<(usize, usize), usize>,
        ends: &Ends,
    ) -> Vec<Point> {
        let e = self.spec(k);
        let (chain, reversed) = &self.chains[k];
        if !e.routed {
            return Vec::new();
        }
        if let [v] = chain.as_slice() {
            let r = boxes[*v];
            let (ya, yb) = (ends.y(*v, Side::Right, e.from_port), ends.y(*v, Side::Right, e.to_port));
            let x = r.right() + LOOP_REACH;
            return vec![(r.right(), ya), (x, ya), (x, yb), (r.right(), yb)];
        }
        if chain.len() < 2 {
            return Vec::new();
        }
        let right_of = |v: usize| {
            if v < self.real {
                boxes[v].right()
            } else {
                columns.x[self.layer[v]] + columns.width[self.layer[v]]
            }
        };
        let left_of = |v: usize| {
            if v < self.real {
                boxes[v].x
            } else {
                columns.x[self.layer[v]]
            }
        };
        let (first_port, last_port) = self.chain_ports(k);
        let mut points: Vec<Point> = vec![(right_of(chain[0]), ends.y(chain[0], Side::Right, first_port))];
        for i in 0..chain.len() - 1 {
            let (a, b) = (chain[i], chain[i + 1]);
            let ya = ends.y(a, Side::Right, if i == 0 { first_port } else { None });
            let yb = ends.y(b, Side::Left, if i + 2 == chain.len() { last_port } else { None });
            if i > 0 {
                points.push((left_of(a), ya));
                points.push((right_of(a), ya));
            }
            if let Some(&t) = tracks.get(&(k, i)) {
                let x = columns.track_x(self.layer[a], t);
                points.push((x, ya));
                points.push((x, yb));
            }
            points.push((left_of(b), yb));
        }
        simplify(&mut points);
        if *reversed {
            points.reverse();
        }
        points
    }

    /// Places the satellites in rows above and below the layered boxes (already in `boxes`),
    /// each as near as its row allows to the mean horizontal position of its neighbours.
    fn place_satellites(&self, boxes: &mut [Rect], satellite: &[bool]) {
        let list: Vec<usize> = (0..self.real).filter(|&v| satellite[v]).collect();
        if list.is_empty() {
            return;
        }
        let neighbours = self.neighbours();
        // Desired centres and distances from the layered boxes, breadth first.
        let mut desired: Vec<Option<f64>> = (0..self.real)
            .map(|v| (!satellite[v]).then(|| boxes[v].centre().0))
            .collect();
        let mut depth = vec![0usize; self.real];
        let mut queue: Vec<usize> = (0..self.real).filter(|&v| !satellite[v]).collect();
        let mut next = 0;
        while let Some(&v) = queue.get(next) {
            next += 1;
            for &w in &neighbours[v] {
                if desired[w].is_some() {
                    continue;
                }
                let known: Vec<f64> = neighbours[w].iter().filter_map(|&u| desired[u]).collect();
                desired[w] = Some(known.iter().sum::<f64>() / known.len() as f64);
                depth[w] = depth[v] + 1;
                queue.push(w);
            }
        }
        let layered = (0..self.real).filter(|&v| !satellite[v]);
        let band_top = layered.clone().map(|v| boxes[v].y).fold(f64::INFINITY, f64::min);
        let band_bottom = layered.map(|v| boxes[v].bottom()).fold(f64::NEG_INFINITY, f64::max);
        let band_middle = (band_top + band_bottom) / 2.0;
        // Nearer satellites first, each row from left to right.
        let mut order: Vec<(usize, f64, usize)> =
            list.iter().map(|&v| (depth[v], desired[v].unwrap_or(0.0), v)).collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        // Row slots: `2 * level + side`, side 0 above the layers and 1 below; each with its
        // right end, its height and its members.
        let mut rows: Vec<(f64, f64, Vec<usize>)> = vec![(f64::NEG_INFINITY, 0.0, Vec::new()); 2 * SATELLITE_ROWS];
        let mut slot_of: Vec<Option<usize>> = vec![None; self.real];
        for (_, centre, v) in order {
            let w = self.size[v].0;
            let left = centre - w / 2.0;
            // A satellite linked to a placed one goes on its side, further out; the others
            // try above, below, and then further out.
            let beside = neighbours[v].iter().filter_map(|&u| slot_of[u]).min();
            // Linked to boxes in the upper (lower) quarter of the layers: above (below) first.
            let heights: Vec<f64> = neighbours[v]
                .iter()
                .filter(|&&u| !satellite[u])
                .map(|&u| boxes[u].centre().1)
                .collect();
            let mean = heights.iter().sum::<f64>() / heights.len().max(1) as f64;
            let leaning = if heights.is_empty() || (mean - band_middle).abs() < (band_bottom - band_top) / 4.0 {
                None
            } else {
                Some(usize::from(mean > band_middle))
            };
            let candidates = row_candidates(beside, leaning);
            let fits = candidates.iter().copied().find(|&r| rows[r].0 + SATELLITE_GAP <= left);
            let (row, x) = match fits {
                Some(r) => (r, left),
                None => {
                    let r = candidates
                        .iter()
                        .copied()
                        .min_by(|&a, &b| rows[a].0.total_cmp(&rows[b].0).then(a.cmp(&b)))
                        .unwrap_or(0);
                    (r, rows[r].0 + SATELLITE_GAP)
                }
            };
            rows[row].0 = x + w;
            rows[row].1 = rows[row].1.max(self.size[v].1);
            rows[row].2.push(v);
            slot_of[v] = Some(row);
            boxes[v] = Rect {
                x,
                y: 0.0,
                w,
                h: self.size[v].1,
            };
        }
        let (mut above, mut below) = (band_top, band_bottom);
        for (i, (_, height, members)) in rows.iter().enumerate().filter(|(_, row)| !row.2.is_empty()) {
            let middle = if i % 2 == 0 {
                above -= SATELLITE_GAP + height;
                above + height / 2.0
            } else {
                below += SATELLITE_GAP;
                let middle = below + height / 2.0;
                below += height;
                middle
            };
            for &v in members {
                boxes[v].y = middle - boxes[v].h / 2.0;
            }
        }
    }
}

/// A depth-first search over `adjacency` (per box, its edges as (edge, other box)) from each of
/// `starts` not met yet, leaving out the boxes marked in `skip`. `edge` is called for every edge
/// the search looks at, with its far box and whether that box is on the search path (the edge
/// closes a cycle). Returns the boxes in the order they were met.
fn depth_first(
    adjacency: &[Vec<(usize, usize)>],
    starts: impl IntoIterator<Item = usize>,
    skip: &[bool],
    mut edge: impl FnMut(usize, usize, bool),
) -> Vec<usize> {
    // 0: not met, 1: on the search path, 2: done.
    let mut state = vec![0u8; adjacency.len()];
    let mut met = Vec::with_capacity(adjacency.len());
    for start in starts {
        if state[start] != 0 || skip[start] {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        met.push(start);
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            let Some(&(k, w)) = adjacency[v].get(*next) else {
                state[v] = 2;
                stack.pop();
                continue;
            };
            *next += 1;
            edge(k, w, state[w] == 1);
            if state[w] == 0 {
                state[w] = 1;
                met.push(w);
                stack.push((w, 0));
            }
        }
    }
    met
}

/// The order in which a depth-first search over `adjacency` (per box, its edges as (edge, other
/// box)) from `starts` meets the boxes, leaving out those marked in `skip`; a hub (a box with
/// [`HUB_DEGREE`] edges or more) is entered only when nothing else is left to explore, so that a
/// node many components share, such as an electrical ground, comes after the chains it closes
/// instead of cutting them.
fn meeting_order(
    adjacency: &[Vec<(usize, usize)>],
    starts: impl IntoIterator<Item = usize>,
    skip: &[bool],
) -> Vec<usize> {
    fn enter(v: usize, stack: &mut Vec<(usize, usize)>, met: &mut [bool], order: &mut Vec<usize>) {
        met[v] = true;
        order.push(v);
        stack.push((v, 0));
    }
    let hub = |v: usize| adjacency[v].len() >= HUB_DEGREE;
    let mut met = vec![false; adjacency.len()];
    let mut order = Vec::with_capacity(adjacency.len());
    let mut deferred: Vec<usize> = Vec::new();
    let mut next_deferred = 0;
    for start in starts {
        let mut stack: Vec<(usize, usize)> = Vec::new();
        if met[start] || skip[start] {
            continue;
        }
        enter(start, &mut stack, &mut met, &mut order);
        loop {
            if let Some(&mut (v, ref mut next)) = stack.last_mut() {
                let Some(&(_, w)) = adjacency[v].get(*next) else {
                    stack.pop();
                    continue;
                };
                *next += 1;
                if met[w] || skip[w] {
                    continue;
                }
                if hub(w) {
                    deferred.push(w);
                } else {
                    enter(w, &mut stack, &mut met, &mut order);
                }
            } else if let Some(&w) = deferred.get(next_deferred) {
                next_deferred += 1;
                if !met[w] {
                    enter(w, &mut stack, &mut met, &mut order);
                }
            } else {
                break;
            }
        }
    }
    order
}

/// The row slots a satellite tries, in order (slot `2 * level + side`, side 0 above the layers):
/// beside a placed satellite it is linked to, that one's side from the next level outwards;
/// leaning to a side, that side's rows first; otherwise above and below in turn, level by level.
fn row_candidates(beside: Option<usize>, leaning: Option<usize>) -> Vec<usize> {
    let side_first = |side: usize, levels: Vec<usize>| -> Vec<usize> {
        levels
            .into_iter()
            .map(|l| 2 * l + side)
            .chain((0..SATELLITE_ROWS).map(|l| 2 * l + 1 - side))
            .collect()
    };
    match (beside, leaning) {
        (Some(slot), _) => {
            let (side, level) = (slot % 2, slot / 2);
            side_first(side, (level + 1..SATELLITE_ROWS).chain(0..=level).collect())
        }
        (None, Some(side)) => side_first(side, (0..SATELLITE_ROWS).collect()),
        (None, None) => (0..2 * SATELLITE_ROWS).collect(),
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

/// Removes repeated points and the middle of three points on one horizontal or vertical line.
fn simplify(points: &mut Vec<Point>) {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    points.dedup_by(|b, a| close(a.0, b.0) && close(a.1, b.1));
    let mut out: Vec<Point> = Vec::with_capacity(points.len());
    for &p in points.iter() {
        if out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            if (close(a.0, b.0) && close(b.0, p.0)) || (close(a.1, b.1) && close(b.1, p.1)) {
                out.pop();
            }
        }
        out.push(p);
    }
    *points = out;
}

/// An `f64` ordered by `total_cmp`, for the heap of track ends.
#[derive(Debug, Clone, Copy)]
struct Ordered(f64);

impl PartialEq for Ordered {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0) == Ordering::Equal
    }
}

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Disjoint sets with path halving; the smaller index stays the root, so roots are stable.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (keep, join) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[join] = keep;
        }
    }
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
