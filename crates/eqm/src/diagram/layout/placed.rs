//! The layout a model's own `Placement` annotations give: each box centred where the model
//! puts its component, and each routed edge an orthogonal line between the facing sides of its
//! two boxes.
//!
//! Input: a [`Graph`] and, per box, its centre and the size of its extent in the model's diagram
//! coordinates (y upwards). Output: a [`Layout`] in drawing coordinates (y downwards, from 0), or
//! `None` when the placements cannot be kept: two boxes would overlap (components placed on top
//! of each other, or the elements of an array sharing one placement), and the caller lays the
//! graph out itself.
//!
//! The scale maps a component's extent to the size of its box (the largest ratio over the
//! boxes), so the proportions of the model's diagram are kept. What it deliberately does not
//! do: it moves no box to make room, and it routes no edge around the boxes in its way.

use super::{Graph, Layout, PORT_PITCH, Point, PortPlace, Rect, Side};
use std::collections::BTreeMap;

/// The space around the placed boxes.
const MARGIN: f64 = 12.0;

/// A box's place in the model's diagram: centre and extent (width, height).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// Lays `graph` out at `placements` (one per box); see the module documentation.
pub fn placed(graph: &Graph, placements: &[Placement]) -> Option<Layout> {
    let n = graph.nodes.len();
    if n == 0 || placements.len() != n {
        return None;
    }
    let (ports, heights) = port_rows(graph);
    let scale = placements
        .iter()
        .zip(&graph.nodes)
        .map(|(p, spec)| (spec.width / p.width.max(1e-9)).max(spec.height / p.height.max(1e-9)))
        .fold(0.0f64, f64::max);
    if !scale.is_finite() || scale <= 0.0 {
        return None;
    }
    let mut boxes: Vec<Rect> = (0..n)
        .map(|v| {
            let (spec, p) = (graph.nodes[v], placements[v]);
            let h = spec.height.max(heights[v]);
            Rect {
                x: p.x * scale - spec.width / 2.0,
                y: -p.y * scale - h / 2.0,
                w: spec.width,
                h,
            }
        })
        .collect();
    if any_overlap(&boxes) {
        return None;
    }
    let left = boxes.iter().map(|r| r.x).fold(f64::INFINITY, f64::min) - MARGIN;
    let top = boxes.iter().map(|r| r.y).fold(f64::INFINITY, f64::min) - MARGIN;
    for r in &mut boxes {
        r.x -= left;
        r.y -= top;
    }
    let mut out = Layout {
        width: boxes.iter().map(|r| r.right()).fold(0.0, f64::max) + MARGIN,
        height: boxes.iter().map(|r| r.bottom()).fold(0.0, f64::max) + MARGIN,
        ports: Vec::new(),
        routes: vec![Vec::new(); graph.edges.len()],
        boxes,
    };
    place_ports(graph, &ports, &mut out);
    route_edges(graph, &mut out);
    Some(out)
}

/// The ports of each box by side (`from` ends on the right, `to` ends on the left, each port
/// once per side), and the height each box needs for them.
type PortRows = BTreeMap<(usize, Side), Vec<u32>>;

fn port_rows(graph: &Graph) -> (PortRows, Vec<f64>) {
    let mut rows: PortRows = BTreeMap::new();
    for e in graph.edges.iter().filter(|e| e.routed) {
        for (v, side, port) in [(e.from, Side::Right, e.from_port), (e.to, Side::Left, e.to_port)] {
            if let Some(port) = port {
                let row = rows.entry((v, side)).or_default();
                if !row.contains(&port) {
                    row.push(port);
                }
            }
        }
    }
    let mut heights = vec![0.0; graph.nodes.len()];
    for ((v, _), row) in &rows {
        let needed = graph.nodes[*v].port_top + row.len() as f64 * PORT_PITCH + PORT_PITCH / 2.0;
        heights[*v] = f64::max(heights[*v], needed);
    }
    (rows, heights)
}

fn place_ports(graph: &Graph, rows: &PortRows, out: &mut Layout) {
    for ((v, side), row) in rows {
        let r = out.boxes[*v];
        for (k, port) in row.iter().enumerate() {
            out.ports.push(PortPlace {
                node: *v,
                port: *port,
                side: *side,
                y: r.y + graph.nodes[*v].port_top + (k as f64 + 0.5) * PORT_PITCH + PORT_PITCH / 4.0,
            });
        }
    }
}

/// The height of each placed port, by box, side and port.
type PortHeights = BTreeMap<(usize, Side, u32), f64>;

/// Where an edge leaves or enters box `v` on `side`: at its port, else at the box's anchor.
fn attach(graph: &Graph, out: &Layout, heights: &PortHeights, v: usize, side: Side, port: Option<u32>) -> Point {
    let r = out.boxes[v];
    let x = if side == Side::Right { r.right() } else { r.x };
    let spec = graph.nodes[v];
    let anchor = r.y + spec.anchor.unwrap_or(spec.port_top + (r.h - spec.port_top) / 2.0);
    let y = port.and_then(|p| heights.get(&(v, side, p)).copied()).unwrap_or(anchor);
    (x, y)
}

fn route_edges(graph: &Graph, out: &mut Layout) {
    let heights: PortHeights = out.ports.iter().map(|q| ((q.node, q.side, q.port), q.y)).collect();
    for (k, e) in graph.edges.iter().enumerate() {
        if !e.routed || e.from == e.to {
            continue;
        }
        let start = attach(graph, out, &heights, e.from, Side::Right, e.from_port);
        let end = attach(graph, out, &heights, e.to, Side::Left, e.to_port);
        let middle = (start.0 + end.0) / 2.0;
        out.routes[k] = if (start.1 - end.1).abs() < 0.5 {
            vec![start, end]
        } else {
            vec![start, (middle, start.1), (middle, end.1), end]
        };
    }
}

/// Whether two of the boxes share interior points: each box is compared with the boxes in the
/// grid cells it touches (cells as large as the largest box), so the check is linear in the
/// number of boxes for any spread of them.
fn any_overlap(boxes: &[Rect]) -> bool {
    let cell = boxes.iter().map(|r| r.w.max(r.h)).fold(1.0f64, f64::max);
    let mut grid: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    let cell_of = |x: f64, y: f64| ((x / cell).floor() as i64, (y / cell).floor() as i64);
    for (v, r) in boxes.iter().enumerate() {
        let (cx, cy) = cell_of(r.x, r.y);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for &u in grid.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                    let o = boxes[u];
                    if r.x < o.right() && o.x < r.right() && r.y < o.bottom() && o.y < r.bottom() {
                        return true;
                    }
                }
            }
        }
        grid.entry((cx, cy)).or_default().push(v);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::{EdgeSpec, NodeSpec};
    use super::*;

    fn node() -> NodeSpec {
        NodeSpec {
            width: 40.0,
            height: 20.0,
            port_top: 0.0,
            anchor: Some(10.0),
            satellite: false,
        }
    }

    fn at(x: f64, y: f64) -> Placement {
        Placement {
            x,
            y,
            width: 20.0,
            height: 20.0,
        }
    }

    #[test]
    fn boxes_keep_the_model_s_arrangement_with_y_turned_downwards() {
        let graph = Graph {
            nodes: vec![node(), node()],
            edges: vec![EdgeSpec {
                from: 0,
                to: 1,
                from_port: None,
                to_port: None,
                routed: true,
                directed: true,
            }],
        };
        let layout = placed(&graph, &[at(0.0, 40.0), at(100.0, 0.0)]).expect("no overlap");
        let (a, b) = (layout.boxes[0], layout.boxes[1]);
        assert!(a.right() < b.x, "the second box is to the right");
        assert!(a.y < b.y, "the higher placement is drawn higher");
        // The scale maps the 20-unit extent to the 40-wide box.
        assert_eq!(b.centre().0 - a.centre().0, 200.0);
        let route = &layout.routes[0];
        assert_eq!(route.first().copied(), Some((a.right(), a.y + 10.0)));
        assert_eq!(route.last().copied(), Some((b.x, b.y + 10.0)));
    }

    #[test]
    fn boxes_on_top_of_each_other_are_refused() {
        let graph = Graph {
            nodes: vec![node(), node(), node()],
            edges: Vec::new(),
        };
        assert!(placed(&graph, &[at(0.0, 0.0), at(300.0, 0.0), at(5.0, 0.0)]).is_none());
    }
}
