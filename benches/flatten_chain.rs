//! Flattening scale: a chain of N masses and springs from the stdlib.
//!
//! Run with `cargo bench --bench flatten_chain` (release). Each size runs in its own process
//! (this program re-executes itself with `--one N`) so that the peak resident memory (VmHWM) is
//! that size's alone. Prints parse and flatten times, equations, peak memory, and the ratio
//! t(10N)/t(N). Each size runs five times and the medians are printed, because a single run of a
//! memory-bound pass varies by several percent on a shared machine. Goals: linear
//! scaling, t(10N)/t(N) <= 11, and N = 100 000 flattened in under 1.5 s and 1 GB.

use eqm::{ModelOptions, Session};
use std::process::Command;
use std::time::Instant;

mod common;

fn main() {
    if let Some(n) = common::one_size() {
        one(n);
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = {
        let given: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() {
            vec![1_000, 10_000, 100_000]
        } else {
            given
        }
    };
    let exe = std::env::current_exe().expect("the benchmark knows its own path");
    let mut previous: Option<(usize, f64)> = None;
    println!(
        "{:>8} {:>10} {:>12} {:>12} {:>10} {:>8}",
        "N", "equations", "parse ms", "flatten ms", "peak MiB", "ratio"
    );
    for n in sizes {
        let mut runs: Vec<[f64; 4]> = Vec::new();
        for _ in 0..RUNS {
            let output = Command::new(&exe)
                .args(["--one", &n.to_string()])
                .output()
                .expect("runs itself");
            let line = String::from_utf8_lossy(&output.stdout);
            let fields: Vec<f64> = line.split_whitespace().filter_map(|f| f.parse().ok()).collect();
            let Ok(run) = <[f64; 4]>::try_from(fields) else {
                println!("{n:>8} failed: {line} {}", String::from_utf8_lossy(&output.stderr));
                break;
            };
            runs.push(run);
        }
        if runs.len() < RUNS {
            continue;
        }
        let median = |k: usize| {
            let mut column: Vec<f64> = runs.iter().map(|r| r[k]).collect();
            column.sort_by(f64::total_cmp);
            column[column.len() / 2]
        };
        let (equations, parse_ms, flatten_ms, peak_mib) = (median(0), median(1), median(2), median(3));
        let ratio = previous.map_or(String::from("-"), |(m, t)| {
            format!("{:.2} (x{})", flatten_ms / t, n / m.max(1))
        });
        println!("{n:>8} {equations:>10} {parse_ms:>12.1} {flatten_ms:>12.1} {peak_mib:>10.0} {ratio:>8}");
        previous = Some((n, flatten_ms));
    }
}

/// Runs of each size; the medians are printed.
const RUNS: usize = 5;

/// Flattens one chain and prints: equations, parse ms, flatten ms, peak MiB.
fn one(n: usize) {
    let text = format!(
        "model Chain\n  import Mechanics.Translational.Components;\n  parameter Integer n = {n};\n  \
         Components.Fixed ground;\n  Components.Mass m[n](each m = 1);\n  Components.Spring s[n](each c = 100);\n\
         equation\n  connect(ground.flange, s[1].flange_a);\n  connect(s[1].flange_b, m[1].flange_a);\n  \
         for i in 2:n loop\n    connect(m[i - 1].flange_b, s[i].flange_a);\n    connect(s[i].flange_b, m[i].flange_a);\n  \
         end for;\nend Chain;\n"
    );
    let mut session = Session::new();
    let start = Instant::now();
    session.add_embedded_stdlib();
    session.add_file("chain.eqm", text);
    let parse = start.elapsed();
    let start = Instant::now();
    let flat = session.flatten(Some("Chain"), &ModelOptions::default());
    let flatten = start.elapsed();
    let Some(flat) = flat else {
        eprintln!("{}", session.render_diagnostics(false));
        std::process::exit(1);
    };
    let peak = common::peak_memory_kib().unwrap_or(0) as f64 / 1024.0;
    println!(
        "{} {:.3} {:.3} {:.1}",
        flat.equations.len(),
        parse.as_secs_f64() * 1e3,
        flatten.as_secs_f64() * 1e3,
        peak
    );
}
