//! Hash-consing of the expression arena: equal nodes share one id, distinct nodes never do,
//! however many parents one child has and in whatever order nodes are looked up again.

use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, ExprArena, ExprId, UnOp, VarId};
use std::collections::HashSet;

/// The nodes of one child `hot` with many parents (more than the arena places next to a
/// child), built in the order of `order`; returns their ids by index.
fn parents(a: &mut ExprArena, hot: ExprId, order: &[usize]) -> Vec<(usize, ExprId)> {
    order
        .iter()
        .map(|&k| {
            let v = a.var(VarId(k as u32));
            let id = match k % 4 {
                0 => a.binary(BinOp::Mul, v, hot),
                1 => a.binary(BinOp::Sub, hot, v),
                2 => {
                    let c = a.real(k as f64);
                    a.binary(BinOp::Add, hot, c)
                }
                _ => {
                    let n = a.unary(UnOp::Neg, v);
                    a.builtin(Builtin::Max, vec![n, hot])
                }
            };
            (k, id)
        })
        .collect()
}

#[test]
fn a_child_with_many_parents_keeps_one_id_per_node() {
    const N: usize = 5_000;
    let mut a = ExprArena::new();
    let x = a.var(VarId(20_000));
    let y = a.var(VarId(20_001));
    // A non-literal child made after most of its parents' other children.
    let hot = a.binary(BinOp::Div, x, y);
    let forward: Vec<usize> = (0..N).collect();
    let first = parents(&mut a, hot, &forward);
    let distinct: HashSet<ExprId> = first.iter().map(|p| p.1).collect();
    assert_eq!(distinct.len(), N, "distinct nodes got one id");
    let len = a.len();
    // Looked up again in another order, with other nodes made in between, every node is found.
    let backward: Vec<usize> = (0..N).rev().collect();
    let mut filler = Vec::new();
    for k in 0..N {
        let v = a.var(VarId(10_000 + k as u32));
        filler.push(a.binary(BinOp::Mul, v, v));
    }
    let with_filler = a.len();
    assert_eq!(with_filler, len + 2 * N, "the filler nodes are all new");
    let again = parents(&mut a, hot, &backward);
    assert_eq!(a.len(), with_filler, "no node was stored twice");
    let by_index: std::collections::HashMap<usize, ExprId> = first.into_iter().collect();
    for (k, id) in again {
        assert_eq!(by_index[&k], id, "parent {k} has a new id");
    }
    // Built from scratch in another arena, the same nodes in the same order get the same ids.
    let mut b = ExprArena::new();
    let x = b.var(VarId(20_000));
    let y = b.var(VarId(20_001));
    let hot_b = b.binary(BinOp::Div, x, y);
    assert_eq!(hot_b, hot);
    let replay = parents(&mut b, hot_b, &forward);
    assert!(replay.iter().all(|(k, id)| by_index[k] == *id));
}
