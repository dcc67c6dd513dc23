//! Measuring helpers shared by the benchmarks: best-of timing, peak resident memory, running
//! each size in a process of its own, and the error measures of the solver benchmarks.

// Each benchmark uses only part of this module.
#![allow(dead_code)]

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The fastest of `runs` runs: the least disturbed by other work on the machine. What `f`
/// returns is dropped after the clock stops: freeing a result is not part of the work measured.
pub fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let result = f();
            let elapsed = start.elapsed();
            drop(result);
            elapsed
        })
        .min()
        .unwrap_or_default()
}

/// Resets the peak-memory mark (writing 5 to /proc/self/clear_refs) and returns the current
/// resident size in KiB, so that the next reading of VmHWM measures only what follows.
pub fn reset_peak_memory() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    peak_memory_kib()
}

/// The peak resident memory of this process in KiB (VmHWM; Linux only).
pub fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The size `N` when this benchmark was started as `--one N`: benchmarks that measure peak
/// memory run each size in a process of its own by starting themselves that way.
pub fn one_size() -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    let k = args.iter().position(|a| a == "--one")?;
    Some(args.get(k + 1).and_then(|a| a.parse().ok()).unwrap_or(1000))
}

/// Runs each size given as an argument (`default` when none is) in a process of its own: this
/// benchmark started again as `--one N` (see [`one_size`]), whose output goes to `report`.
pub fn run_sizes_in_own_processes(default: &[usize], mut report: impl FnMut(usize, Output)) {
    let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if given.is_empty() { default.to_vec() } else { given };
    let exe = std::env::current_exe().expect("the benchmark knows its own path");
    for n in sizes {
        let output = Command::new(&exe)
            .args(["--one", &n.to_string()])
            .output()
            .expect("runs itself");
        report(n, output);
    }
}

/// max_i |x_i − ref_i| / (|ref_i| + atol/rtol): the error of a solve at `rtol` and `atol`
/// against the reference at the end time.
pub fn scaled_error(x: &[f64], reference: &[f64], rtol: f64, atol: f64) -> f64 {
    x.iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs() / (b.abs() + atol / rtol))
        .fold(0.0, f64::max)
}

/// The largest absolute difference between `x` and `reference`, component by component: the
/// error against the chain's closed form.
pub fn max_abs_difference(x: &[f64], reference: &[f64]) -> f64 {
    x.iter().zip(reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}

/// `eqm check` of `text` (as file `file`, of class `model` or the file's one model), timed: the
/// whole check in milliseconds and each stage's time (stage name, milliseconds). A model that
/// does not check ends the benchmark with its diagnostics: a timing of a failure means nothing.
pub fn timed_check(file: &str, text: String, model: Option<&str>) -> (f64, Vec<(String, f64)>) {
    let start = Instant::now();
    let mut session = eqm::Session::with_sources(&[(file.to_string(), text)], &[], None);
    let summary = session.check(model, &eqm::ModelOptions::default());
    let total = start.elapsed().as_secs_f64() * 1e3;
    if summary.is_none() {
        eprintln!("{}", session.render_diagnostics(false));
        std::process::exit(1);
    }
    let stages = session
        .timings()
        .stages()
        .iter()
        .map(|t| (t.stage.to_string(), t.time.as_secs_f64() * 1e3))
        .collect();
    (total, stages)
}

/// Stage timings as `name 1.2, name 3.4`.
pub fn stage_list(stages: &[(String, f64)]) -> String {
    stages
        .iter()
        .map(|(stage, ms)| format!("{stage} {ms:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}
