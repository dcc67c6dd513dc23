//! The text and JSON forms of a [`ModelAnalysis`], of an analysis sweep and of the advice on
//! stop time, step and method.
//!
//! Input: an analysis (or the runs of a sweep) and the advice made from its eigenvalues.
//! Output: text. The text (`text_form`) is for reading: numbers with six significant digits, the
//! matrix `A` and the sum of modes only up to [`PRINT_LIMIT`] states (the JSON has them always).
//! The JSON (`json_form`, written with [`eqm_diag::json`]) has every number in its shortest
//! round-trip form (`null` for infinite or undefined ones), for scripts. This module holds what
//! both forms share: the readable numbers, tables and verdicts. Nothing here computes: every
//! number is the analysis's or the advice's.

mod json_form;
mod text_form;

pub use json_form::{advice_json, json, sweep_json};
pub use text_form::{advice_text, sweep_text, text};

use super::{ModelAnalysis, Stability, Steady};
use nalgebra::{Complex, DMatrix};
use std::fmt::Write;

/// The most states whose matrices and solution the text prints.
pub const PRINT_LIMIT: usize = 12;

/// A number with six significant digits, without trailing zeros.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "undefined".into()
        } else if v > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    let magnitude = v.abs().log10().floor();
    if !(-4.0..6.0).contains(&magnitude) {
        let s = format!("{v:.5e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = trim(mantissa);
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (5.0 - magnitude).max(0.0) as usize;
    trim(&format!("{v:.decimals$}"))
}

/// `values` with the entries below the rounding of the largest (a relative 1e-12) set to zero:
/// what Newton's method or a decomposition leaves there is noise, and printing it would make
/// the report differ between machines. The JSON keeps the raw numbers.
fn tidy(values: &[f64]) -> Vec<f64> {
    let largest = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    values
        .iter()
        .map(|v| if v.abs() <= 1e-12 * largest { 0.0 } else { *v })
        .collect()
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" { "0".into() } else { t.into() }
    } else {
        s.into()
    }
}

fn complex(c: Complex<f64>) -> String {
    if c.im == 0.0 {
        num(c.re)
    } else if c.re == 0.0 {
        format!("{}i", num(c.im))
    } else {
        let sign = if c.im < 0.0 { "-" } else { "+" };
        format!("{} {sign} {}i", num(c.re), num(c.im.abs()))
    }
}

/// How the stiffness ratio is judged: stiffness starts somewhere between 1e3 and 1e7.
pub fn stiffness_verdict(ratio: f64) -> &'static str {
    if ratio < 1e3 {
        "not stiff (below 1e3)"
    } else if ratio < 1e7 {
        "stiff (between 1e3 and 1e7: an implicit method pays off as the ratio grows)"
    } else {
        "very stiff (above 1e7: use an implicit method)"
    }
}

fn stability_text(s: Stability, conserved: bool) -> &'static str {
    match s {
        Stability::Stable if conserved => {
            "asymptotically stable on the manifold of the invariants: every other eigenvalue has a negative real part"
        }
        Stability::Stable => "asymptotically stable: every eigenvalue has a negative real part",
        Stability::Unstable => "unstable: an eigenvalue has a positive real part",
        Stability::Marginal => {
            "marginal: the largest real part is zero, so the linearisation does not decide (a centre, or an integrator)"
        }
    }
}

/// A table with left-aligned columns.
fn table(rows: &[Vec<String>], indent: &str) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = indent.to_string();
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn matrix(out: &mut String, name: &str, m: &DMatrix<f64>, rows: &[String], columns: &[String]) {
    let _ = writeln!(out, "  {name}:");
    let m = DMatrix::from_vec(m.nrows(), m.ncols(), tidy(m.as_slice()));
    let mut cells = vec![
        std::iter::once(String::new())
            .chain(columns.iter().cloned())
            .collect::<Vec<_>>(),
    ];
    for (i, r) in rows.iter().enumerate() {
        cells.push(
            std::iter::once(r.clone())
                .chain((0..m.ncols()).map(|j| num(m[(i, j)])))
                .collect(),
        );
    }
    out.push_str(&table(&cells, "    "));
}

fn combination_text(coefficients: &[f64], names: &[String]) -> String {
    let mut s = String::new();
    for (c, name) in coefficients.iter().zip(names) {
        if *c == 0.0 {
            continue;
        }
        let magnitude = c.abs();
        let sign = if *c < 0.0 { "-" } else { "+" };
        if s.is_empty() {
            if *c < 0.0 {
                s.push('-');
            }
        } else {
            let _ = write!(s, " {sign} ");
        }
        if magnitude != 1.0 {
            let _ = write!(s, "{}·", num(magnitude));
        }
        s.push_str(name);
    }
    if s.is_empty() { "0".into() } else { s }
}

fn point_text(x: &[f64], names: &[String]) -> String {
    names
        .iter()
        .zip(x)
        .map(|(n, v)| format!("{n} = {}", num(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one word for the stability of the point, as the JSON and the sweep table write it.
fn stability_word(s: Stability) -> &'static str {
    match s {
        Stability::Stable => "stable",
        Stability::Unstable => "unstable",
        Stability::Marginal => "marginal",
    }
}
