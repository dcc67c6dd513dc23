//! The passes after flattening on a generated DAE: lowering, alias elimination, index
//! reduction (the Pantelides pass that finds nothing to differentiate), the causal plan
//! (incidence with symbolic solving, matching, BLT, tearing) and the initialization problem.
//!
//! Run with `cargo bench --bench dae_passes` (release mode). The model is a chain of masses and
//! springs as connections flatten it (`crates/eqm-testkit/src/dae_chain.rs`, seven equations a stage,
//! four of them aliases) at 10^3 to 10^6 equations. Prints the best of several runs per pass,
//! the growth ratio t(2N)/t(N) of the whole sequence, and the peak resident memory (VmHWM,
//! Linux only). Sizes given as arguments replace the default list. Goal: every pass
//! scales with t(2N)/t(N) <= 2.3 and 10^6 equations go through all structural passes (alias
//! elimination, index reduction, the plan: the `struct ms` column) in under 3 s. The chain's
//! states have start values and no initial equations, so its initialization reuses the plan.

mod common;

use eqm_testkit::dae_chain;

use common::{peak_memory_kib, reset_peak_memory};
use std::time::{Duration, Instant};

const SIZES: [usize; 6] = [1_000, 2_000, 100_000, 200_000, 500_000, 1_000_000];

fn main() {
    println!(
        "{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "equations", "lower ms", "alias ms", "index ms", "plan ms", "init ms", "struct ms", "peak MiB"
    );
    // Sizes may be given as arguments (for profiling one size); the default is SIZES.
    let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if given.is_empty() { SIZES.to_vec() } else { given };
    let mut totals: Vec<(usize, Duration)> = Vec::new();
    for &n in &sizes {
        let stages = n.div_ceil(dae_chain::STAGE);
        let runs = if n >= 500_000 { 2 } else { 5 };
        let before = reset_peak_memory();
        let mut best = [Duration::MAX; 5];
        for _ in 0..runs {
            let flat = dae_chain::chain(stages);
            let t = Instant::now();
            let dae = eqm_compile::dae::lower(flat);
            let lower = t.elapsed();
            let t = Instant::now();
            let (dae, report, _) = eqm_compile::alias::eliminate(dae);
            let alias = t.elapsed();
            assert_eq!(report.removed_equations, 4 * stages);
            let t = Instant::now();
            let (dae, index) = eqm_compile::index::reduce(dae).expect("no index reduction needed");
            let index_time = t.elapsed();
            assert!(index.is_none());
            let t = Instant::now();
            // The chain has no relations: extracting its events only changes the DAE's stage.
            let mut dae = eqm_compile::events::extract(dae);
            let plan = eqm_compile::plan::analyze(&mut dae).expect("solvable");
            let plan_time = t.elapsed();
            assert_eq!(plan.unknowns.len(), 3 * stages);
            let t = Instant::now();
            let init = eqm_compile::init::analyze(&mut dae, &plan, true).expect("initial system is square");
            let init_time = t.elapsed();
            assert_eq!(init.0.assumed.len(), 2 * stages);
            for (slot, time) in best.iter_mut().zip([lower, alias, index_time, plan_time, init_time]) {
                *slot = (*slot).min(time);
            }
        }
        // Alias elimination, index reduction and the plan: the passes the goal is about.
        let structural: Duration = best[1..4].iter().sum();
        let peak = match (before, peak_memory_kib()) {
            (Some(b), Some(p)) => format!("{:.0}", p.saturating_sub(b) as f64 / 1024.0),
            _ => "?".into(),
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:>10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>10}",
            stages * dae_chain::STAGE,
            ms(best[0]),
            ms(best[1]),
            ms(best[2]),
            ms(best[3]),
            ms(best[4]),
            ms(structural),
            peak
        );
        totals.push((n, structural));
    }
    for pair in totals.windows(2).filter(|w| w[1].0 == 2 * w[0].0) {
        println!(
            "t({})/t({}) = {:.2}",
            pair[1].0,
            pair[0].0,
            pair[1].1.as_secs_f64() / pair[0].1.as_secs_f64()
        );
    }
}
