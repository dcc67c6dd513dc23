//! Placement: the ports on each side of a box, the vertical positions of the boxes (isotonic
//! regression towards their neighbours) and the boxes' rectangles.

use super::*;

impl Part<'_> {
    /// The ports of routed edges: per (box, side), the ports in use with the boxes at the other
    /// end of their segments; and each box's height grown to hold its ports.
    pub(super) fn ports(&mut self) -> SidePorts {
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
    pub(super) fn anchor_offset(&self, v: usize) -> f64 {
        if let Some(Some(fixed)) = self.fixed_anchor.get(v) {
            return *fixed;
        }
        let (_, h, top) = self.size[v];
        top + (h - top) / 2.0
    }

    /// The vertical position (of the anchor) of every layered box: the layers stacked, then
    /// sweeps that move each box towards the mean of its neighbours in the layer before (or
    /// after), keeping the order and the gaps (isotonic regression, pool adjacent violators).
    pub(super) fn place_vertically(&self, layers: &[Vec<usize>]) -> Vec<f64> {
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
    pub(super) fn chain_ports(&self, k: usize) -> (Option<u32>, Option<u32>) {
        let e = self.spec(k);
        if self.chains[k].1 {
            (e.to_port, e.from_port)
        } else {
            (e.from_port, e.to_port)
        }
    }

    /// Columns, tracks, routes and satellites: the finished part in its own coordinates, with
    /// its top left corner at (0, 0).
    pub(super) fn finish(
        &self,
        layers: &[Vec<usize>],
        ports: &SidePorts,
        anchor: &[f64],
        satellite: &[bool],
    ) -> Placed {
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
    pub(super) fn place_ports<'s>(&self, ports: &SidePorts, anchor: &'s [f64]) -> (Ends<'s>, Vec<PortPlace>) {
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
}

/// The non-decreasing sequence nearest to the weighted targets (least squares): pool adjacent
/// violators, linear.
pub(super) fn isotonic(targets: &[(f64, f64)]) -> Vec<f64> {
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
