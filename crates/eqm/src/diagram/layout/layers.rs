//! The layers of a part: which edges decide them, the satellites kept out of them, the edges
//! reversed to break cycles, the longest-path layering and the dummy boxes that carry an edge
//! across the layers it spans.
//!
//! Input: a [`Part`] of the graph. Output: its boxes' layers and the segments between
//! neighbouring layers, kept in the part. It orders no layer and places nothing.

use super::*;

impl Part<'_> {
    /// Which edges decide the layers: the routed ones, or, in a part without any, every edge
    /// (a network of free edges is laid out along them).
    pub(super) fn layering_edges(&self) -> Vec<bool> {
        let any_routed = (0..self.edges.len()).any(|k| self.spec(k).routed && self.ends(k).0 != self.ends(k).1);
        (0..self.edges.len())
            .map(|k| {
                let (a, b) = self.ends(k);
                a != b && (self.spec(k).routed || !any_routed)
            })
            .collect()
    }

    /// The satellites: boxes that may be one and that no layering edge touches.
    pub(super) fn satellites(&self, layering: &[bool]) -> Vec<bool> {
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
    pub(super) fn orient(&self, layering: &[bool], satellite: &[bool]) -> Vec<bool> {
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
    pub(super) fn neighbours(&self) -> Vec<Vec<usize>> {
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
    pub(super) fn directed(&self, k: usize, reversed: &[bool]) -> (usize, usize) {
        let (a, b) = self.ends(k);
        if reversed[k] { (b, a) } else { (a, b) }
    }

    /// Longest-path layers, sources pulled next to their successors, boxes without layering
    /// edges in the median layer of their neighbours, satellites in none.
    pub(super) fn assign_layers(&mut self, layering: &[bool], reversed: &[bool], satellite: &[bool]) {
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
    pub(super) fn add_dummies(&mut self, layering: &[bool], reversed: &[bool]) {
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
}

/// A depth-first search over `adjacency` (per box, its edges as (edge, other box)) from each of
/// `starts` not met yet, leaving out the boxes marked in `skip`. `edge` is called for every edge
/// the search looks at, with its far box and whether that box is on the search path (the edge
/// closes a cycle). Returns the boxes in the order they were met.
pub(super) fn depth_first(
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
pub(super) fn meeting_order(
    adjacency: &[Vec<(usize, usize)>],
    starts: impl IntoIterator<Item = usize>,
    skip: &[bool],
) -> Vec<usize> {
    pub(super) fn enter(v: usize, stack: &mut Vec<(usize, usize)>, met: &mut [bool], order: &mut Vec<usize>) {
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
