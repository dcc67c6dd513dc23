//! The stage-by-stage cost of a large model, from source text to a finished short simulation:
//! a chain of N masses and springs built with `for` loops of `connect` from the stdlib (at
//! N = 10^5 about 1.1 million flat equations), the fixed end displaced so that the chain moves.
//!
//! Run with `cargo bench --bench million` (release); sizes may be given as arguments (default
//! N = 10^3, 10^4, 10^5). Each size runs in its own process (this program re-executes itself
//! with `--one N`) so that the peak resident memory (VmHWM) is that size's alone. Each process
//! compiles the chain through the library API (the same stages and timings as `eqm -v run`)
//! and simulates it to t = 0.01 with two output rows, which the bench discards. Printed: the
//! wall time of every stage per size, its growth from the previous size, the total wall and
//! CPU time (on a shared machine the CPU time is the steadier figure) and the peak memory.
//! Goals: every stage about 10x per 10x model size, and N = 10^5 under 10 s and 1.5 GB. Nothing
//! is asserted about time.

use eqm::{ModelOptions, RunSettings, Session};
use std::time::Instant;

mod common;

fn main() {
    if let Some(n) = common::one_size() {
        one(n);
        return;
    }
    // Per size: the stages' names and milliseconds in the order they ran.
    let mut results: Vec<(usize, Vec<(String, f64)>)> = Vec::new();
    common::run_sizes_in_own_processes(&[1_000, 10_000, 100_000], |n, output| {
        let text = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            println!("N = {n} failed: {text}{}", String::from_utf8_lossy(&output.stderr));
            return;
        }
        let stages = text
            .lines()
            .filter_map(|line| {
                let (name, ms) = line.rsplit_once(' ')?;
                Some((name.trim().to_string(), ms.parse::<f64>().ok()?))
            })
            .collect();
        results.push((n, stages));
    });
    print!("{:<16}", "stage");
    for (n, _) in &results {
        print!(" {:>12}", format!("N={n} ms"));
    }
    println!("  growth per step");
    let Some((_, first)) = results.first() else {
        return;
    };
    for (name, _) in first {
        print!("{name:<16}");
        let values: Vec<Option<f64>> = results
            .iter()
            .map(|(_, stages)| stages.iter().find(|(s, _)| s == name).map(|(_, ms)| *ms))
            .collect();
        for v in &values {
            match v {
                Some(ms) => print!(" {ms:>12.1}"),
                None => print!(" {:>12}", "-"),
            }
        }
        let growth: Vec<String> = values
            .windows(2)
            .zip(results.windows(2))
            .map(|(v, r)| match (v[0], v[1]) {
                (Some(a), Some(b)) if a > 0.0 => format!("{:.1}x/{}x", b / a, r[1].0 / r[0].0.max(1)),
                _ => "-".to_string(),
            })
            .collect();
        println!("  {}", growth.join(" "));
    }
}

/// The chain of `n` stages.
fn source(n: usize) -> String {
    format!(
        "model Chain\n  import Mechanics.Translational.Components;\n  parameter Integer n = {n};\n  \
         Components.Fixed fixed(s0 = 0.1);\n  \
         Components.Mass m[n](each m = 1, s(each start = 0, each fixed = true), v(each start = 0, each fixed = true));\n  \
         Components.Spring sp[n](each c = 100);\n\
         equation\n  connect(fixed.flange, sp[1].flange_a);\n  \
         for i in 1:n loop\n    connect(sp[i].flange_b, m[i].flange_a);\n  end for;\n  \
         for i in 1:n - 1 loop\n    connect(m[i].flange_b, sp[i + 1].flange_a);\n  end for;\nend Chain;\n"
    )
}

/// Compiles and simulates one chain of `n` stages; prints one `stage milliseconds` line per
/// stage, then `variables` (a count), `total`, `cpu` (milliseconds) and `peak-MiB`.
fn one(n: usize) {
    let text = source(n);
    let cpu_before = cpu_ms();
    let start = Instant::now();
    let mut session = Session::new();
    session.add_embedded_stdlib_lazily();
    session.add_file("chain.eqm", text);
    let t = Instant::now();
    let Some(mut model) = session.compile(Some("Chain"), &ModelOptions::default()) else {
        eprintln!("{}", session.render_diagnostics(false));
        std::process::exit(1)
    };
    let compile = t.elapsed();
    let settings = RunSettings {
        stop: Some(0.01),
        interval: Some(0.01),
        ..RunSettings::default()
    };
    let columns = match model.columns(None) {
        Ok(columns) => columns,
        Err(d) => panic!("the chain has no result columns: {}", d.message),
    };
    let mut rows = 0usize;
    let mut sink = |_: f64, _: &[f64]| -> std::io::Result<()> {
        rows += 1;
        Ok(())
    };
    let report = match model.simulate_into(&settings, &columns, &mut sink) {
        Ok(report) => report,
        Err(e) => panic!("the chain does not simulate: {e}"),
    };
    let total = start.elapsed();
    assert_eq!(rows, 2, "two rows: t = 0 and t = 0.01");
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let mut timed = 0.0;
    for stage in session.timings().stages() {
        println!("{} {:.1}", stage.stage, ms(stage.time));
        timed += ms(stage.time);
    }
    println!("other-compile {:.1}", (ms(compile) - timed).max(0.0));
    println!("jacobian {:.1}", ms(report.jacobian_time));
    println!("jit-compile {:.1}", ms(report.compile_time));
    println!("simulate {:.1}", ms(report.simulate_time));
    println!("variables {}", model.program().symbols().len());
    println!("total {:.1}", ms(total));
    if let (Some(before), Some(after)) = (cpu_before, cpu_ms()) {
        println!("cpu {:.1}", after - before);
    }
    if let Some(peak) = common::peak_memory_kib() {
        println!("peak-MiB {:.0}", peak as f64 / 1024.0);
    }
}

/// The CPU time this process has used (user and system) in milliseconds, from /proc/self/stat
/// (Linux only; clock ticks of 10 ms).
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |k: usize| fields.get(k)?.parse::<f64>().ok();
    // utime and stime are fields 14 and 15 of the line: 11 and 12 counted from the state.
    Some((ticks(11)? + ticks(12)?) * 10.0)
}
