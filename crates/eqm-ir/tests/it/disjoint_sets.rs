//! Disjoint sets against a direct computation of the connected components: for random joins,
//! two numbers share a root exactly when a path of joins links them, and the root is the
//! smallest member of the set.

use eqm_ir::disjoint_sets::DisjointSets;
use proptest::prelude::*;

/// The connected components by repeated relabelling: each number's label becomes the smallest
/// label over its joins until nothing changes. Quadratic, and obviously right.
fn components(n: usize, joins: &[(usize, usize)]) -> Vec<usize> {
    let mut label: Vec<usize> = (0..n).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &(a, b) in joins {
            let low = label[a].min(label[b]);
            for x in [a, b] {
                if label[x] != low {
                    label[x] = low;
                    changed = true;
                }
            }
        }
    }
    label
}

fn check(n: usize, joins: &[(usize, usize)]) {
    let mut sets = DisjointSets::new(n);
    for &(a, b) in joins {
        let apart = sets.find(a) != sets.find(b);
        assert_eq!(sets.union(a, b), apart, "union reports whether it joined two sets");
    }
    let label = components(n, joins);
    for (x, &root) in label.iter().enumerate() {
        assert_eq!(sets.find(x), root, "the root of {x} is the smallest member of its set");
    }
}

proptest! {
    #[test]
    fn roots_are_the_smallest_members_of_the_connected_components(
        (n, joins) in (1usize..40).prop_flat_map(|n| (Just(n), prop::collection::vec((0..n, 0..n), 0..60)))
    ) {
        check(n, &joins);
    }
}

#[test]
fn numbers_added_one_by_one_start_as_their_own_sets() {
    let mut sets = DisjointSets::default();
    assert!(sets.is_empty());
    let [a, b, c] = [sets.add(), sets.add(), sets.add()];
    assert_eq!((a, b, c, sets.len()), (0, 1, 2, 3));
    assert!(sets.union(c, b));
    assert!(!sets.union(b, c));
    assert_eq!([sets.find(a), sets.find(b), sets.find(c)], [0, 1, 1]);
}
