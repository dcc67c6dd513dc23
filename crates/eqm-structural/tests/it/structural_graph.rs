//! Structural analysis on ids: matching, BLT, tearing, Pantelides and dummy derivatives.
//!
//! Property tests compare the algorithms with brute force on small random graphs (at most 7×7)
//! and check that the plans are valid and deterministic; worked cases cover textbook index-3
//! and index-2 systems, an algebraic loop, and a million-equation chain that must not overflow
//! a normal test thread's stack.

use crate::structural_chain;

use eqm_structural::blt::{Blt, blt};
use eqm_structural::dummy::dummy_derivatives;
use eqm_structural::incidence::{EdgeKind, EqIdx, Incidence, VarIdx};
use eqm_structural::matching::{Matching, maximum_matching, singular_parts};
use eqm_structural::pantelides::{Pantelides, pantelides};
use eqm_structural::tearing::{Tearing, TearingWorkspace, tear_block};
use proptest::prelude::*;

type RawGraph = (usize, Vec<Vec<(u32, bool)>>);

fn build(raw: &RawGraph) -> Incidence {
    let (n_vars, eqs) = raw;
    Incidence::from_equations(
        *n_vars,
        eqs.iter().map(|eq| {
            eq.iter()
                .map(|&(v, s)| (VarIdx(v), if s { EdgeKind::Solvable } else { EdgeKind::Implicit }))
        }),
    )
    .expect("generated ids are valid")
}

/// Any graph with up to 7 equations and 7 variables.
fn any_graph() -> impl Strategy<Value = RawGraph> {
    (0usize..=7, 0usize..=7).prop_flat_map(|(n_eqs, n_vars)| {
        let edge = if n_vars == 0 {
            Just(Vec::new()).boxed()
        } else {
            prop::collection::vec((0..n_vars as u32, any::<bool>()), 0..=4).boxed()
        };
        (Just(n_vars), prop::collection::vec(edge, n_eqs))
    })
}

/// A square graph with a perfect matching (a hidden permutation), plus random extra edges and
/// `extra_vars` variables outside the square part.
fn square_graph(extra_vars: usize) -> impl Strategy<Value = RawGraph> {
    (1usize..=7).prop_flat_map(move |n| {
        let perm = Just((0..n as u32).collect::<Vec<_>>()).prop_shuffle();
        let extra = prop::collection::vec(
            prop::collection::vec((0..(n + extra_vars) as u32, any::<bool>()), 0..=3),
            n,
        );
        let diag_solvable = prop::collection::vec(prop::bool::weighted(0.8), n);
        (perm, extra, diag_solvable).prop_map(move |(perm, extra, diag)| {
            let eqs = (0..n)
                .map(|e| {
                    let mut eq = vec![(perm[e], diag[e])];
                    eq.extend(&extra[e]);
                    eq
                })
                .collect();
            (n + extra_vars, eqs)
        })
    })
}

/// Maximum matching cardinality by dynamic programming over subsets of variables.
fn brute_force_matching(g: &Incidence) -> usize {
    let n_vars = g.n_vars();
    let mut best = vec![0usize; 1 << n_vars];
    // best[mask] after processing equations 0..e: largest matching using exactly vars in mask
    // or fewer; process equations one at a time.
    for e in g.eqs() {
        let mut next = best.clone();
        for mask in 0..(1usize << n_vars) {
            for &v in g.eq_vars(e) {
                let bit = 1 << v.index();
                if mask & bit == 0 {
                    next[mask | bit] = next[mask | bit].max(best[mask] + 1);
                }
            }
        }
        best = next;
    }
    best.into_iter().max().unwrap_or(0)
}

fn check_matching(g: &Incidence, m: &Matching) {
    assert_eq!(m.n_eqs(), g.n_eqs());
    assert_eq!(m.n_vars(), g.n_vars());
    for (e, v) in m.pairs() {
        assert!(g.edge(e, v).is_some(), "matching uses a non-edge");
        assert_eq!(m.eq_of(v), Some(e));
    }
    for v in g.vars() {
        if let Some(e) = m.eq_of(v) {
            assert_eq!(m.var_of(e), Some(v));
        }
    }
}

fn check_blt(g: &Incidence, m: &Matching, b: &Blt) {
    let n = g.n_eqs();
    let mut block_of = vec![usize::MAX; n];
    for (i, block) in b.blocks().enumerate() {
        assert!(!block.is_empty());
        for &(e, v) in block {
            assert_eq!(m.var_of(e), Some(v));
            assert_eq!(block_of[e.index()], usize::MAX, "equation in two blocks");
            block_of[e.index()] = i;
        }
    }
    // Every matched equation is placed, and uses only variables of its block or earlier ones.
    for e in g.eqs() {
        if m.var_of(e).is_none() {
            assert_eq!(block_of[e.index()], usize::MAX);
            continue;
        }
        for &v in g.eq_vars(e) {
            if let Some(e2) = m.eq_of(v) {
                assert!(block_of[e2.index()] <= block_of[e.index()], "block uses a later block");
            }
        }
    }
    // Blocks are exactly the strongly connected components (brute-force transitive closure).
    let mut reach = vec![vec![false; n]; n];
    for e in g.eqs() {
        reach[e.index()][e.index()] = true;
        for &v in g.eq_vars(e) {
            if let Some(e2) = m.eq_of(v) {
                reach[e.index()][e2.index()] = true;
            }
        }
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if reach[i][k] && reach[k][j] {
                    reach[i][j] = true;
                }
            }
        }
    }
    for i in 0..n {
        for j in 0..n {
            if block_of[i] != usize::MAX && block_of[j] != usize::MAX {
                let same = reach[i][j] && reach[j][i];
                assert_eq!(same, block_of[i] == block_of[j], "blocks differ from the SCCs");
            }
        }
    }
}

fn check_tearing(g: &Incidence, block: &[(EqIdx, VarIdx)], t: &Tearing) {
    let block_vars: Vec<VarIdx> = block.iter().map(|p| p.1).collect();
    let mut known: Vec<VarIdx> = t.tearing_vars.clone();
    assert_eq!(t.tearing_vars.len(), t.residuals.len());
    for &(e, v) in &t.inner {
        assert_eq!(
            g.edge(e, v),
            Some(EdgeKind::Solvable),
            "inner equation solved through a non-solvable edge"
        );
        for &u in g.eq_vars(e) {
            if u != v && block_vars.contains(&u) {
                assert!(known.contains(&u), "inner equation uses an unknown block variable");
            }
        }
        assert!(!known.contains(&v));
        known.push(v);
    }
    let mut all_vars = known.clone();
    all_vars.sort();
    let mut expected_vars = block_vars.clone();
    expected_vars.sort();
    assert_eq!(all_vars, expected_vars);
    let mut all_eqs: Vec<EqIdx> = t.inner.iter().map(|p| p.0).chain(t.residuals.iter().copied()).collect();
    all_eqs.sort();
    let mut expected_eqs: Vec<EqIdx> = block.iter().map(|p| p.0).collect();
    expected_eqs.sort();
    assert_eq!(all_eqs, expected_eqs);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1), ..ProptestConfig::default() })]

    #[test]
    fn matching_is_maximum_and_uses_edges(raw in any_graph()) {
        let g = build(&raw);
        let m = maximum_matching(&g);
        check_matching(&g, &m);
        prop_assert_eq!(m.size(), brute_force_matching(&g));
        prop_assert_eq!(&m, &maximum_matching(&g));
    }

    #[test]
    fn singular_parts_count(raw in any_graph()) {
        let g = build(&raw);
        let m = maximum_matching(&g);
        let p = singular_parts(&g, &m).unwrap();
        prop_assert_eq!(p.unmatched_eqs.len(), g.n_eqs() - m.size());
        prop_assert_eq!(p.unmatched_vars.len(), g.n_vars() - m.size());
        // The over-determined part has exactly `unmatched_eqs` more equations than variables,
        // the under-determined part `unmatched_vars` more variables than equations.
        prop_assert_eq!(p.over_eqs.len(), p.over_vars.len() + p.unmatched_eqs.len());
        prop_assert_eq!(p.under_vars.len(), p.under_eqs.len() + p.unmatched_vars.len());
        for &e in &p.over_eqs {
            for &v in g.eq_vars(e) {
                prop_assert!(p.over_vars.contains(&v));
            }
        }
    }

    #[test]
    fn blt_blocks_are_sccs_in_order(raw in any_graph()) {
        let g = build(&raw);
        let m = maximum_matching(&g);
        let b = blt(&g, &m).unwrap();
        check_blt(&g, &m, &b);
        prop_assert_eq!(b, blt(&g, &m).unwrap());
    }

    #[test]
    fn blt_of_square_graphs(raw in square_graph(0)) {
        let g = build(&raw);
        let m = maximum_matching(&g);
        prop_assert!(m.is_perfect());
        let b = blt(&g, &m).unwrap();
        check_blt(&g, &m, &b);
        prop_assert_eq!(b.pairs().len(), g.n_eqs());
    }

    #[test]
    fn tearing_gives_a_causal_sequence(raw in square_graph(2)) {
        let g = build(&raw);
        let n = raw.1.len();
        // The whole square part as one block, paired arbitrarily: tearing only uses the sets.
        let block: Vec<(EqIdx, VarIdx)> = (0..n as u32).map(|i| (EqIdx(i), VarIdx(i))).collect();
        let t = tear_block(&g, &block).unwrap();
        check_tearing(&g, &block, &t);
        prop_assert_eq!(&t, &tear_block(&g, &block).unwrap());
        // Every BLT block of the graph tears too, with one shared workspace.
        let m = maximum_matching(&g);
        let b = blt(&g, &m).unwrap();
        let mut ws = TearingWorkspace::new();
        for block in b.blocks() {
            let t = ws.tear(&g, block).unwrap();
            check_tearing(&g, block, &t);
        }
    }
}

#[test]
fn invalid_ids_are_rejected() {
    let bad = Incidence::from_equations(1, [[(VarIdx(3), EdgeKind::Solvable)]]);
    assert!(bad.is_err());
    let g = Incidence::from_equations(1, [[(VarIdx(0), EdgeKind::Solvable)]]).unwrap();
    assert!(tear_block(&g, &[(EqIdx(5), VarIdx(0))]).is_err());
    assert!(tear_block(&g, &[(EqIdx(0), VarIdx(9))]).is_err());
    assert!(tear_block(&g, &[(EqIdx(0), VarIdx(0)), (EqIdx(0), VarIdx(0))]).is_err());
    assert!(Matching::from_eq_to_var(&g, vec![Some(VarIdx(1))]).is_err());
    assert!(blt(&g, &Matching::new(2, 1)).is_err());
}

/// Two springs in series between a fixed point and a driven end: the force through both springs
/// and the middle position form one algebraic loop, which tears to a single variable.
#[test]
fn springs_in_series_tear_to_one_variable() {
    use EdgeKind::{Implicit as I, Solvable as S};
    // Unknowns: 0 f1, 1 f2, 2 s_mid, 3 s_end (the driven end position is known: not a var).
    // f1 = c1 * s_mid;  f2 = c2 * (s_end - s_mid);  f1 = f2;  s_end = s_mid + f2 / c2.
    let g = Incidence::from_equations(
        4,
        [
            vec![(VarIdx(0), S), (VarIdx(2), S)],
            vec![(VarIdx(1), S), (VarIdx(3), S), (VarIdx(2), S)],
            vec![(VarIdx(0), S), (VarIdx(1), S)],
            vec![(VarIdx(3), I), (VarIdx(2), S), (VarIdx(1), S)],
        ],
    )
    .unwrap();
    let m = maximum_matching(&g);
    assert!(m.is_perfect());
    let b = blt(&g, &m).unwrap();
    assert_eq!(b.len(), 1, "one algebraic loop");
    let t = tear_block(&g, b.block(0)).unwrap();
    check_tearing(&g, b.block(0), &t);
    assert_eq!(t.tearing_vars.len(), 1);
    assert_eq!(t.residuals.len(), 1);
    assert_eq!(t.inner.len(), 3);
}

fn run_chain(stages: usize) {
    let g = structural_chain::chain(stages);
    let m = maximum_matching(&g);
    assert!(m.is_perfect());
    let b = blt(&g, &m).unwrap();
    assert_eq!(b.len(), stages * structural_chain::BLOCKS_PER_STAGE);
    let mut ws = TearingWorkspace::new();
    let mut torn = 0;
    for block in b.blocks().filter(|b| b.len() > 1) {
        torn += ws.tear(&g, block).unwrap().tearing_vars.len();
    }
    assert_eq!(torn, 2 * stages);
}

/// Runs in the default test thread (2 MiB stack): every pass must be iterative.
#[test]
fn million_equation_chain() {
    run_chain(1_000_000usize.div_ceil(structural_chain::STAGE));
}

/// Builds a DAE's incidence from equations over variable numbers, `true` marking solvable.
fn dae(n_vars: usize, eqs: &[&[(u32, bool)]]) -> Incidence {
    build(&(n_vars, eqs.iter().map(|e| e.to_vec()).collect()))
}

/// Checks the invariants of a Pantelides result that do not depend on the example.
fn check_pantelides(original: &Incidence, p: &Pantelides) {
    let g = &p.graph;
    assert_eq!(p.eq_to_diff.len(), g.n_eqs());
    assert_eq!(p.var_to_diff.len(), g.n_vars());
    for e in original.eqs() {
        assert_eq!(
            g.eq_vars(e),
            original.eq_vars(e),
            "original equations keep their ids and edges"
        );
    }
    for &(new, old) in &p.new_eqs {
        assert_eq!(p.eq_to_diff[old.index()], Some(new));
        // d/dt of an equation mentions each of its variables and their derivatives.
        for &v in g.eq_vars(old) {
            let d = p.var_to_diff[v.index()].expect("variables of a differentiated equation have derivatives");
            assert!(g.edge(new, v).is_some() && g.edge(new, d).is_some());
        }
    }
    for &(new, old) in &p.new_vars {
        assert_eq!(p.var_to_diff[old.index()], Some(new));
    }
    // The highest-order equations are matched to highest-derivative variables, one to one.
    let highest_eqs = g.eqs().filter(|e| p.eq_to_diff[e.index()].is_none()).count();
    let highest_vars = g.vars().filter(|v| p.var_to_diff[v.index()].is_none()).count();
    assert_eq!(highest_eqs, highest_vars);
    assert_eq!(p.matching.size(), highest_eqs);
    for (e, v) in p.matching.pairs() {
        assert!(p.eq_to_diff[e.index()].is_none() && p.var_to_diff[v.index()].is_none());
        assert!(g.edge(e, v).is_some());
    }
}

/// The Cartesian pendulum: index 3, the length constraint differentiated twice.
#[test]
fn pendulum_index_three() {
    // 0 x, 1 y, 2 vx, 3 vy, 4 lambda, 5 der(x), 6 der(y), 7 der(vx), 8 der(vy).
    let g = dae(
        9,
        &[
            &[(5, true), (2, true)],             // der(x) = vx
            &[(6, true), (3, true)],             // der(y) = vy
            &[(7, true), (4, true), (0, false)], // m*der(vx) = -lambda*x
            &[(8, true), (4, true), (1, false)], // m*der(vy) = -lambda*y - m*g
            &[(0, false), (1, false)],           // x^2 + y^2 = L^2
        ],
    );
    let var_to_diff = [Some(5), Some(6), Some(7), Some(8), None, None, None, None, None].map(|d| d.map(VarIdx));
    let p = pantelides(&g, &var_to_diff).unwrap();
    check_pantelides(&g, &p);
    assert_eq!(p.differentiations, vec![1, 1, 0, 0, 2]);
    assert_eq!(p.max_differentiations(), 2);
    assert_eq!(p.new_eqs.len(), 4);
    assert_eq!(p.new_vars.len(), 2, "der(der(x)) and der(der(y))");
    assert_eq!(p, pantelides(&g, &var_to_diff).unwrap(), "deterministic");

    let s = dummy_derivatives(&p, &[]).unwrap();
    assert_eq!(s.states.len(), 2);
    assert_eq!(s.dummies.len(), 4);
    // Equal priorities: higher derivatives become dummies first, then lower ids (x's chain),
    // so y and vy stay.
    assert_eq!(s.states, vec![VarIdx(1), VarIdx(3)]);
    // A higher priority on x and vx keeps them instead.
    let s = dummy_derivatives(&p, &[1, 0, 1, 0]).unwrap();
    assert_eq!(s.states, vec![VarIdx(0), VarIdx(2)]);
}

/// Two masses, each with `v = der(x)` and `m*der(v) = f`, with `f1 + f2 = 0` and a coupling
/// equation. Variables: 0 x1, 1 x2, 2 v1, 3 v2, 4 f1, 5 f2, 6 der(x1), 7 der(x2), 8 der(v1),
/// 9 der(v2).
fn coupled_masses(coupling: &[(u32, bool)]) -> (Incidence, Vec<Option<VarIdx>>) {
    let g = dae(
        10,
        &[
            &[(2, true), (6, true)], // v1 = der(x1)
            &[(3, true), (7, true)], // v2 = der(x2)
            &[(8, true), (4, true)], // m1*der(v1) = f1
            &[(9, true), (5, true)], // m2*der(v2) = f2
            &[(4, true), (5, true)], // f1 + f2 = 0
            coupling,
        ],
    );
    let var_to_diff = [Some(6), Some(7), Some(8), Some(9), None, None, None, None, None, None];
    (g, var_to_diff.map(|d| d.map(VarIdx)).to_vec())
}

/// Masses rigidly coupled at the position level (`x1 = x2`). A position constraint between
/// inertial masses is index 3: Pantelides differentiates it twice (and both `v = der(x)`
/// once); one position and one velocity remain states.
#[test]
fn rigidly_coupled_masses() {
    let (g, var_to_diff) = coupled_masses(&[(0, true), (1, true)]);
    let p = pantelides(&g, &var_to_diff).unwrap();
    check_pantelides(&g, &p);
    assert_eq!(p.differentiations, vec![1, 1, 0, 0, 0, 2]);
    let s = dummy_derivatives(&p, &[]).unwrap();
    assert_eq!(s.states.len(), 2);
    let positions = s.states.iter().filter(|v| v.0 <= 1).count();
    let velocities = s.states.iter().filter(|v| (2..=3).contains(&v.0)).count();
    assert_eq!((positions, velocities), (1, 1));
}

/// The same masses coupled at the velocity level (`v1 = v2`): index 2, the constraint is
/// differentiated once; both positions and one velocity remain states.
#[test]
fn velocity_coupled_masses_index_two() {
    let (g, var_to_diff) = coupled_masses(&[(2, true), (3, true)]);
    let p = pantelides(&g, &var_to_diff).unwrap();
    check_pantelides(&g, &p);
    assert_eq!(p.differentiations, vec![0, 0, 0, 0, 0, 1]);
    let s = dummy_derivatives(&p, &[]).unwrap();
    assert_eq!(s.states.len(), 3);
    assert!(s.states.contains(&VarIdx(0)) && s.states.contains(&VarIdx(1)));
}

/// A structurally singular system is rejected instead of being differentiated forever.
#[test]
fn singular_system_is_rejected() {
    // 0 x, 1 y, 2 der(x): der(x) = y twice over, and x alone in two equations.
    let g = dae(3, &[&[(0, true)], &[(0, true)], &[(2, true), (1, true)]]);
    let r = pantelides(&g, &[Some(VarIdx(2)), None, None]);
    assert!(
        matches!(r, Err(eqm_structural::incidence::StructuralError::Singular { .. })),
        "{r:?}"
    );
    // Invalid derivative tables are errors, not panics.
    assert!(pantelides(&g, &[Some(VarIdx(7)), None, None]).is_err());
    assert!(pantelides(&g, &[Some(VarIdx(1)), Some(VarIdx(0)), None]).is_err());
    assert!(pantelides(&g, &[None]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1), ..ProptestConfig::default() })]

    /// Pantelides never panics or loops on random systems with random derivative chains, and
    /// whenever it succeeds its result is consistent and state selection works on it.
    #[test]
    fn pantelides_on_random_systems(raw in square_graph(0), links in prop::collection::vec(any::<bool>(), 7)) {
        let g = build(&raw);
        let n = g.n_vars();
        // Variable i + 1 is the derivative of variable i where `links[i]` (chains of any length).
        let var_to_diff: Vec<Option<VarIdx>> =
            (0..n).map(|i| (i + 1 < n && links[i]).then(|| VarIdx(i as u32 + 1))).collect();
        if let Ok(p) = pantelides(&g, &var_to_diff) {
            check_pantelides(&g, &p);
            prop_assert_eq!(&p, &pantelides(&g, &var_to_diff).unwrap());
            let s = dummy_derivatives(&p, &[]).unwrap();
            for &v in &s.states {
                prop_assert!(!s.is_dummy[v.index()]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1), ..ProptestConfig::default() })]

    /// Garbage in (ids out of range, repeated ids, cyclic or shared derivative tables): errors
    /// or results, never a panic or an endless loop.
    #[test]
    fn invalid_input_never_panics(
        raw in any_graph(),
        block in prop::collection::vec((0u32..10, 0u32..10), 0..6),
        links in prop::collection::vec(prop::option::of(0u32..10), 0..10),
    ) {
        let g = build(&raw);
        let block: Vec<(EqIdx, VarIdx)> = block.into_iter().map(|(e, v)| (EqIdx(e), VarIdx(v))).collect();
        let _ = tear_block(&g, &block);
        let var_to_diff: Vec<Option<VarIdx>> = links.into_iter().map(|d| d.map(VarIdx)).collect();
        let _ = pantelides(&g, &var_to_diff);
        if let Ok(m) = Matching::from_eq_to_var(&g, var_to_diff.clone()) {
            let _ = blt(&g, &m);
        }
        let mut m = maximum_matching(&g);
        prop_assert!(m.set(EqIdx(u32::MAX), VarIdx(0)).is_err());
        // A hand-made Pantelides result with arbitrary chains goes through state selection.
        let eq_to_diff: Vec<Option<EqIdx>> =
            (0..g.n_eqs()).map(|e| var_to_diff.get(e).copied().flatten().map(|v| EqIdx(v.0))).collect();
        let p = Pantelides {
            graph: g.clone(),
            eq_to_diff,
            var_to_diff: (0..g.n_vars()).map(|v| var_to_diff.get(v).copied().flatten()).collect(),
            differentiations: vec![0; g.n_eqs()],
            new_eqs: Vec::new(),
            new_vars: Vec::new(),
            matching: m,
        };
        let _ = dummy_derivatives(&p, &[3, -1]);
    }
}
