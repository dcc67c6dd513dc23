//! Front-end throughput: lexing and parsing a generated million-line model.
//!
//! Run with `cargo bench --bench parse` (release mode). `cargo bench --bench parse -- 100000`
//! uses another line count. Prints the size of the input, the best of several runs for lexing
//! alone and for lexing plus parsing (MB/s and lines/s), and the peak resident memory the parse
//! adds (VmHWM from /proc/self/status, Linux only). The goal is a million lines in under 2 s.

use eqm_diag::source::FileId;
use eqm_syntax::lexer::Lexer;
use eqm_syntax::parse_file;
use std::fmt::Write as _;
use std::time::Duration;

mod common;
use common::{peak_memory_kib, reset_peak_memory};

const RUNS: usize = 3;

fn main() {
    // `cargo bench` passes `--bench`; a bare number sets the line count.
    let lines: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let text = generate(lines);
    let line_count = text.lines().count();
    let megabytes = text.len() as f64 / 1e6;
    println!("input: {line_count} lines, {megabytes:.1} MB");

    let lex = common::best_of(RUNS, || {
        let tokens = Lexer::new(&text, FileId(0)).count();
        assert!(tokens > line_count);
    });
    report("lex", lex, megabytes, line_count);

    let before = reset_peak_memory();
    let parse = common::best_of(RUNS, || {
        let (ast, diagnostics) = parse_file(FileId(0), &text);
        assert!(
            diagnostics.is_empty(),
            "the generated model must be valid: {:?}",
            &diagnostics[..1]
        );
        assert_eq!(ast.classes.len(), 1);
        ast
    });
    report("lex + parse", parse, megabytes, line_count);
    match (before, peak_memory_kib()) {
        (Some(before), Some(peak)) => println!(
            "peak memory: {:.0} MiB during parsing ({:.0} MiB before, input included)",
            peak.saturating_sub(before) as f64 / 1024.0,
            before as f64 / 1024.0
        ),
        _ => println!("peak memory: not available on this system"),
    }
    let verdict = if parse.as_secs_f64() * 1e6 / line_count as f64 <= 2.0 {
        "within"
    } else {
        "over"
    };
    println!("goal: 1 000 000 lines in 2 s; this run is {verdict} that rate");
}

fn report(what: &str, time: Duration, megabytes: f64, lines: usize) {
    let seconds = time.as_secs_f64();
    println!(
        "{what:>12}: {:8.1} ms  {:7.1} MB/s  {:6.2} M lines/s",
        seconds * 1e3,
        megabytes / seconds,
        lines as f64 / seconds / 1e6
    );
}

/// A package of component models shaped like real ones: connectors, parameters with
/// modifiers and descriptions, arrays, equations with derivatives, connections, for loops,
/// if-equations and when-equations, about 35 bytes per line.
fn generate(lines: usize) -> String {
    let mut text = String::with_capacity(lines * 40);
    text.push_str("within Benchmarks;\npackage Generated \"a generated benchmark library\"\n");
    text.push_str("  connector Flange\n    Real s \"position\";\n    flow Real f \"force\";\n  end Flange;\n");
    let mut written = 6;
    let mut i = 0;
    while written + MODEL_LINES + 3 <= lines {
        model(&mut text, i);
        written += MODEL_LINES;
        i += 1;
    }
    // Pad with declarations inside one last model (its two lines and the package's `end` make
    // three more) so that the count is exact.
    let padding = lines.saturating_sub(written + 3);
    text.push_str("  model Padding\n");
    for p in 0..padding {
        let _ = writeln!(text, "    Real p{p} = {p}.5;");
    }
    text.push_str("  end Padding;\nend Generated;\n");
    text
}

/// Lines written by [`model`].
const MODEL_LINES: usize = 24;

fn model(text: &mut String, i: usize) {
    let _ = write!(
        text,
        "  model Mass{i} \"sliding mass number {i}\"
    parameter Real m(min = 0, unit = \"kg\") = {m}.5 \"mass\";
    parameter Real c = 1e3, d = 2.5e-1;
    parameter Integer n = 4;
    Flange flange_a, flange_b;
    Real s(start = {i}, fixed = true) \"position\";
    Real v(start = 0) \"velocity\";
    Real a;
    Real z[n](each start = 0);
  equation
    der(s) = v;
    der(v) = a;
    m*a = flange_a.f + flange_b.f - d*v;
    flange_a.s = s - 0.5;
    flange_b.s = s + 0.5;
    connect(flange_a, flange_b);
    for k in 1:n loop
      der(z[k]) = -c*z[k] + sin(time*k);
    end for;
    if s > 10 then
      assert(v < 100, \"too fast\");
    end if;
    when v > 50 then reinit(v, 0); end when;
  end Mass{i};
",
        m = i % 7 + 1
    );
}
