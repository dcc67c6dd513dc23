//! The routes of the edges and the final rectangles: the ports on the boxes' sides, the tracks
//! of the vertical segments between two layers, the orthogonal polylines, and the satellites
//! in rows above and below the layers.
//!
//! Input: a [`Part`] with its layers in order and its vertical positions. Output: the part's
//! [`Placed`] boxes, ports and routes. It changes no layer or order.

use super::*;

impl Part<'_> {
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

    /// Tracks for the vertical segments of the routes in each gap between two layers: a net is
    /// the segments of a gap that share an end, and nets whose spans overlap get different
    /// tracks (interval partitioning, the track that is free soonest first). Returns the track
    /// of each (edge, segment) and the number of tracks of each gap.
    pub(super) fn assign_tracks(&self, count: usize, ends: &Ends) -> (BTreeMap<(usize, usize), usize>, Vec<usize>) {
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
            let mut nets = DisjointSets::new(segments.len());
            let mut by_end: BTreeMap<(bool, (usize, Option<u32>)), usize> = BTreeMap::new();
            for (i, segment) in segments.iter().enumerate() {
                for key in [(false, segment.ends.0), (true, segment.ends.1)] {
                    match by_end.get(&key) {
                        Some(&j) => {
                            nets.union(i, j);
                        }
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
    pub(super) fn route(
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
    pub(super) fn place_satellites(&self, boxes: &mut [Rect], satellite: &[bool]) {
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

/// The row slots a satellite tries, in order (slot `2 * level + side`, side 0 above the layers):
/// beside a placed satellite it is linked to, that one's side from the next level outwards;
/// leaning to a side, that side's rows first; otherwise above and below in turn, level by level.
pub(super) fn row_candidates(beside: Option<usize>, leaning: Option<usize>) -> Vec<usize> {
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

/// Removes repeated points and the middle of three points on one horizontal or vertical line.
pub(super) fn simplify(points: &mut Vec<Point>) {
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
pub(super) struct Ordered(f64);

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
