//! The order of the boxes in each layer: a depth-first order along the segments, then
//! barycentre sweeps, the order with the fewest crossings kept.
//!
//! Input: a layered [`Part`]. Output: the boxes of each layer in order. It places nothing.

use super::*;

impl Part<'_> {
    /// The boxes of each layer in order: first as a depth-first search along the segments
    /// meets them (chains stay together), then barycentre sweeps; the order with the fewest
    /// crossings wins.
    pub(super) fn order(&self) -> Vec<Vec<usize>> {
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
    pub(super) fn crossings(&self, layers: &[Vec<usize>], position: &[usize]) -> usize {
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
}
