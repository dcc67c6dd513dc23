//! One case of the system-dynamics test suite (`../shared/sd-test-models/tests/<case>/`):
//! a model file run in-process through the library as `eqm run` runs it, and its results
//! compared with the case's canonical output (`output.csv` or `output.tab`).
//!
//! Input: the model file's path and the reference's. Output: an [`Outcome`]: passed, or the
//! first reason it did not, with the worst error found. Shared by the conformance command
//! (`benches/sd_conformance.rs`) and the CI test of the passing cases
//! (`crates/eqm/tests/it/sd_suite.rs`), so both judge by one rule:
//!
//! every column of the reference must be among the results (names compared as the
//! system-dynamics formats compare them: without regard to case, `_` as a space), every time
//! of the reference must be a row of the results, and at each such time a result `a` and
//! its reference `b` must satisfy `|a - b| <= 1e-4 * max(|b|, 1, R)`, where `R` is the range
//! (largest minus smallest value) of that reference column: relative `1e-4` where the value
//! is large, absolute `1e-4 * max(1, R)` where it is near zero.

#![allow(dead_code)]

use std::path::Path;

/// The tolerance of the suite's rule.
pub const TOLERANCE: f64 = 1e-4;

/// How one model file fared.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub passed: bool,
    /// The worst error at the rule's scale (`|a - b| / max(|b|, 1, R)`), over the columns
    /// compared.
    pub worst: f64,
    /// Why it failed (empty when it passed).
    pub reason: String,
}

impl Outcome {
    fn failed(reason: impl Into<String>) -> Outcome {
        Outcome {
            passed: false,
            worst: f64::NAN,
            reason: reason.into(),
        }
    }
}

/// A reference table: column names (after the time) and rows.
pub struct Reference {
    pub names: Vec<String>,
    pub time: Vec<f64>,
    /// `columns[k][i]`: column `k` at row `i` (NaN where the cell is empty or not a number).
    pub columns: Vec<Vec<f64>>,
}

/// The reference file of a case folder: `output.csv` or `output.tab`.
pub fn reference_file(folder: &Path) -> Option<std::path::PathBuf> {
    ["output.csv", "output.tab"]
        .into_iter()
        .map(|n| folder.join(n))
        .find(|p| p.is_file())
}

/// Splits one line of a CSV (commas, double quotes) or a tab-separated table.
fn fields(line: &str, separator: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The text of a reference file: UTF-8, or else Latin-1 (Vensim writes its tables in the
/// computer's code page, so a name with `é` may be one byte); `None` when it cannot be read.
pub fn reference_text(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8(bytes).unwrap_or_else(|e| e.into_bytes().iter().map(|&b| char::from(b)).collect()))
}

/// Reads a reference table; `None` when it has no header.
pub fn read_reference(text: &str, tab: bool) -> Option<Reference> {
    let separator = if tab { '\t' } else { ',' };
    let mut lines = text.split(['\n', '\r']).filter(|l| !l.trim().is_empty());
    let header = fields(lines.next()?, separator);
    let names: Vec<String> = header.iter().skip(1).map(|s| s.trim().to_string()).collect();
    let mut time = Vec::new();
    let mut columns = vec![Vec::new(); names.len()];
    for line in lines {
        let cells = fields(line, separator);
        let Some(t) = cells.first().and_then(|c| c.trim().parse::<f64>().ok()) else {
            continue;
        };
        time.push(t);
        for (k, column) in columns.iter_mut().enumerate() {
            let v = cells
                .get(k + 1)
                .and_then(|c| c.trim().parse::<f64>().ok())
                .unwrap_or(f64::NAN);
            column.push(v);
        }
    }
    Some(Reference { names, time, columns })
}

/// Runs the model file `model` (its text `text`) as `eqm run` would, and compares with the
/// reference table.
pub fn run_case(model: &Path, reference: &Reference) -> Outcome {
    let name = model.display().to_string();
    let Ok(bytes) = std::fs::read(model) else {
        return Outcome::failed("cannot read the model file");
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_and_compare(&name, bytes, reference)
    }));
    outcome.unwrap_or_else(|_| Outcome::failed("EQM panicked"))
}

fn first_error(session: &eqm::Session) -> String {
    session
        .diagnostics()
        .iter()
        .find(|d| d.severity == eqm_diag::Severity::Error)
        .map(|d| format!("{} {}", d.code, d.message))
        .unwrap_or_else(|| "failed without a diagnostic".to_string())
}

fn run_and_compare(name: &str, bytes: Vec<u8>, reference: &Reference) -> Outcome {
    // The data files a Vensim model reads are read from the file system, as `eqm run` reads them.
    let data: std::sync::Arc<dyn eqm_sd::data::ReadData> = std::sync::Arc::new(|path: &Path| std::fs::read(path));
    let files = vec![(name.to_string(), bytes)];
    let mut session = eqm::Session::with_libraries_reading_data(Vec::new(), files, &[], None, Some(data), None);
    if session.has_errors() {
        return Outcome::failed(first_error(&session));
    }
    let Some(mut model) = session.compile(None, &eqm::ModelOptions::default()) else {
        return Outcome::failed(first_error(&session));
    };
    let result = match model.simulate(&eqm::RunSettings::default()) {
        Ok(result) => result,
        Err(e) => return Outcome::failed(format!("run failed: {e}")),
    };
    compare(&result, reference)
}

/// The key two spellings of a name share in the suite's files.
fn key(name: &str) -> String {
    eqm_sd::names::canonical(name)
}

/// Compares a result with the reference at the suite's rule.
pub fn compare(result: &eqm::SimulationResult, reference: &Reference) -> Outcome {
    let ours: Vec<String> = result.columns().iter().map(|c| key(&c.name)).collect();
    let times = result.time();
    // The row of the results at each reference time.
    let mut rows = Vec::with_capacity(reference.time.len());
    for &t in &reference.time {
        let close = |s: f64| (s - t).abs() <= 1e-9 * t.abs().max(1.0);
        let Some(i) = times.iter().position(|&s| close(s)) else {
            return Outcome::failed(format!("no result row at time {t}"));
        };
        rows.push(i);
    }
    let mut worst = 0.0f64;
    let mut reason = String::new();
    for (k, name) in reference.names.iter().enumerate() {
        if key(name) == "time" {
            continue;
        }
        let Some(c) = ours.iter().position(|o| *o == key(name)) else {
            return Outcome::failed(format!("no result column `{name}`"));
        };
        let reference_column = &reference.columns[k];
        let finite = reference_column.iter().copied().filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let range = if hi >= lo { hi - lo } else { 0.0 };
        for (i, &b) in reference_column.iter().enumerate() {
            if !b.is_finite() {
                continue;
            }
            let Some((_, values)) = result.row(rows[i]) else {
                continue;
            };
            let a = values[c];
            let error = (a - b).abs() / b.abs().max(1.0).max(range);
            let error = if a.is_nan() { f64::INFINITY } else { error };
            if error > worst {
                worst = error;
                if error > TOLERANCE {
                    reason = format!("`{name}` at time {}: {a} instead of {b}", reference.time[i]);
                }
            }
        }
    }
    Outcome {
        passed: worst <= TOLERANCE,
        worst,
        reason,
    }
}
