//! Disjoint sets (union-find) over the numbers `0..n`, the one implementation the stages share
//! (connection sets, the spanning trees of overconstrained connections, expandable buses, the
//! nets of a diagram).
//!
//! Input: joins of two numbers; output: for each number, the root of its set. The smaller
//! root always stays the root of a joined set, so a set's root is its smallest member and
//! roots do not depend on the order of the joins; callers number their keys in order of first
//! appearance and get sets ordered the same way. Path halving keeps each operation nearly
//! constant. It deliberately does no ranking by size: the stable, smallest root is worth more
//! to the callers than the balance, and path halving keeps the trees shallow on its own.

/// Disjoint sets of the numbers `0..len()`.
#[derive(Clone, Debug, Default)]
pub struct DisjointSets {
    /// Each number's parent; a root is its own parent. Stored as `u32` because the connection
    /// sets of the largest models hold tens of millions of keys.
    parent: Vec<u32>,
}

impl DisjointSets {
    /// `n` sets of one number each.
    pub fn new(n: usize) -> DisjointSets {
        DisjointSets {
            parent: (0..n as u32).collect(),
        }
    }

    /// Adds the number `len()` as a set of its own and returns it.
    pub fn add(&mut self) -> usize {
        let n = self.parent.len();
        self.parent.push(n as u32);
        n
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The root of `x`'s set.
    pub fn find(&mut self, x: usize) -> usize {
        let mut x = x as u32;
        while self.parent[x as usize] != x {
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x as usize
    }

    /// Joins the sets of `a` and `b`, keeping the smaller root; false when they were one set.
    pub fn union(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.parent[ra.max(rb)] = ra.min(rb) as u32;
        true
    }
}
