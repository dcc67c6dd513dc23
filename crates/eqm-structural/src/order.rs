//! Dependency order of nodes that must come after others: the order in which parameters,
//! start values, when-actions and when-clauses are evaluated.
//!
//! Input: for each node `0..n`, the nodes that must come before it (repeats allowed). Output:
//! the nodes in an order in which every node comes after those it lists, the smallest ready
//! node first (Kahn's algorithm with a sorted ready set, so ties keep the written order), and
//! the nodes that depend on each other in a cycle. Linear up to the `log n` of the ready set.
//! It does not say which cycle a node is on; the caller names the nodes left.

use std::collections::BTreeSet;

/// The nodes in dependency order, and the nodes left in or behind a cycle; see the module
/// documentation.
pub fn dependency_order(before: &[Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let order = kahn(before, false);
    let mut placed = vec![false; before.len()];
    for &k in &order {
        placed[k] = true;
    }
    let left = (0..before.len()).filter(|&k| !placed[k]).collect();
    (order, left)
}

/// Every node in dependency order, a cycle broken where it stops the order: when no node is
/// ready, the smallest node not placed yet is taken as if it were, so the written order decides
/// within a cycle.
pub fn dependency_order_breaking_cycles(before: &[Vec<usize>]) -> Vec<usize> {
    kahn(before, true)
}

fn kahn(before: &[Vec<usize>], break_cycles: bool) -> Vec<usize> {
    let n = before.len();
    let mut waiting: Vec<usize> = before.iter().map(Vec::len).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, list) in before.iter().enumerate() {
        for &d in list {
            users[d].push(k);
        }
    }
    let mut placed = vec![false; n];
    let mut ready: BTreeSet<usize> = (0..n).filter(|&k| waiting[k] == 0).collect();
    let mut order = Vec::with_capacity(n);
    // The smallest node that may not be placed yet: every node below it is.
    let mut unplaced = 0;
    while order.len() < n {
        let k = match ready.pop_first() {
            Some(k) => k,
            None if break_cycles => {
                while placed[unplaced] {
                    unplaced += 1;
                }
                unplaced
            }
            None => break,
        };
        if placed[k] {
            continue;
        }
        placed[k] = true;
        order.push(k);
        for &u in &users[k] {
            waiting[u] = waiting[u].saturating_sub(1);
            if waiting[u] == 0 && !placed[u] {
                ready.insert(u);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_after_what_they_list_and_ties_keep_the_written_order() {
        // 0 after 2, 1 free, 2 free, 3 after 0 and 1 (listed twice).
        let before = vec![vec![2], vec![], vec![], vec![0, 1, 1]];
        assert_eq!(dependency_order(&before), (vec![1, 2, 0, 3], vec![]));
    }

    #[test]
    fn a_cycle_is_left_out_or_broken_in_written_order() {
        // 1 and 2 need each other; 3 needs 2; 0 is free.
        let before = vec![vec![], vec![2], vec![1], vec![2]];
        assert_eq!(dependency_order(&before), (vec![0], vec![1, 2, 3]));
        assert_eq!(dependency_order_breaking_cycles(&before), vec![0, 1, 2, 3]);
    }
}
