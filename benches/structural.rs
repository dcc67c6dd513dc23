//! Structural analysis throughput: matching, BLT and tearing on chain-shaped incidence.
//!
//! Run with `cargo bench --bench structural` (release mode). The incidence is the pattern of a
//! mass-spring-damper chain (11 equations a stage, two algebraic loops and one implicit
//! equation each; see `crates/eqm-testkit/src/structural_chain.rs`) at 10^3 to 10^6 equations. Prints the
//! best of several runs per pass, the growth ratio t(2N)/t(N) of each pass (near 2 means linear
//! time), and the peak resident memory the passes add (VmHWM, Linux only). The goals: every
//! ratio at most 2.3 and the 10^6 chain through all passes in under 3 s.

mod common;

use eqm_testkit::structural_chain;

use common::{peak_memory_kib, reset_peak_memory};
use eqm_structural::blt::blt;
use eqm_structural::matching::maximum_matching;
use eqm_structural::tearing::TearingWorkspace;
use std::time::{Duration, Instant};

/// Equation counts measured; each pair N, 2N gives a growth ratio.
const SIZES: [usize; 8] = [1_000, 2_000, 10_000, 20_000, 100_000, 200_000, 500_000, 1_000_000];

/// Passes timed, in order.
const PASSES: [&str; 4] = ["build", "matching", "blt", "tearing"];

fn main() {
    let mut rows: Vec<(usize, [Duration; 4])> = Vec::new();
    println!(
        "{:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "equations", "build ms", "match ms", "blt ms", "tear ms", "total ms"
    );
    let mut peak_line = String::new();
    for &n in &SIZES {
        let stages = n.div_ceil(structural_chain::STAGE);
        let runs = if n >= 500_000 { 3 } else { 7 };
        let before = reset_peak_memory();
        let mut best = [Duration::MAX; 4];
        for _ in 0..runs {
            let t = Instant::now();
            let g = structural_chain::chain(stages);
            let build = t.elapsed();
            let t = Instant::now();
            let m = maximum_matching(&g);
            let matching = t.elapsed();
            assert!(m.is_perfect());
            let t = Instant::now();
            let b = blt(&g, &m).expect("consistent matching");
            let blt_time = t.elapsed();
            assert_eq!(b.len(), stages * structural_chain::BLOCKS_PER_STAGE);
            let t = Instant::now();
            let mut ws = TearingWorkspace::new();
            let mut torn = 0usize;
            for block in b.blocks().filter(|b| b.len() > 1) {
                torn += ws.tear(&g, block).expect("valid block").tearing_vars.len();
            }
            let tearing = t.elapsed();
            assert_eq!(torn, 2 * stages);
            for (slot, time) in best.iter_mut().zip([build, matching, blt_time, tearing]) {
                *slot = (*slot).min(time);
            }
        }
        if n == 1_000_000
            && let (Some(before), Some(peak)) = (before, peak_memory_kib())
        {
            peak_line = format!(
                "peak memory for 10^6 equations: {:.0} MiB above the {:.0} MiB before",
                peak.saturating_sub(before) as f64 / 1024.0,
                before as f64 / 1024.0
            );
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let total: Duration = best.iter().sum();
        println!(
            "{:>10} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            stages * structural_chain::STAGE,
            ms(best[0]),
            ms(best[1]),
            ms(best[2]),
            ms(best[3]),
            ms(total)
        );
        rows.push((n, best));
    }
    println!();
    println!("growth ratio t(2N)/t(N) per pass:");
    for (n, times) in &rows {
        if let Some((_, half)) = rows.iter().find(|(h, _)| 2 * h == *n) {
            let ratios: Vec<String> = PASSES
                .iter()
                .zip(times.iter().zip(half))
                .map(|(name, (t, h))| format!("{name} {:.2}", t.as_secs_f64() / h.as_secs_f64()))
                .collect();
            println!("  N = {:>9}: {}", n / 2, ratios.join(", "));
        }
    }
    println!(
        "{}",
        if peak_line.is_empty() {
            "peak memory: not available"
        } else {
            &peak_line
        }
    );
    if let Some((_, times)) = rows.iter().find(|(n, _)| *n == 1_000_000) {
        let passes: Duration = times[1..].iter().sum();
        let verdict = if passes.as_secs_f64() < 3.0 { "within" } else { "over" };
        println!("goal: 10^6 equations through matching, BLT and tearing in 3 s; {verdict} ({passes:.2?})");
    }
}
