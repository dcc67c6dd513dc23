//! `eqm compare`: a result file against a reference result file by the tube method of the
//! Modelica Association's reference results ([`eqm::compare`]). Input: two CSV files, each plain
//! or gzip-compressed (recognised by its first bytes, whatever its name), an optional signal
//! list (`comparisonSignals.txt`), the tolerance and an optional directory for one SVG per
//! signal (the reference, its tube and the result). Output: a line per signal on standard
//! output (`pass` or `FAIL` with the reason and the first time the result leaves the tube) and
//! a summary; exit 0 when every signal passes, 1 when one fails, 2 for a usage error (a file
//! that cannot be read or parsed, a signal the reference lacks, a bad tolerance). This module
//! decides nothing about the comparison: the library does.

use crate::output::{EXIT_MODEL_ERROR, usage};
use crate::plot::{self, Series};
use eqm::compare::{CompareReport, SignalTable, Verdict};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The arguments of `eqm compare`.
pub(crate) struct CompareArgs<'a> {
    pub(crate) result: &'a Path,
    pub(crate) reference: &'a Path,
    pub(crate) signals: Option<&'a Path>,
    pub(crate) tolerance: f64,
    pub(crate) svg: Option<&'a Path>,
}

/// Runs `eqm compare`; see the module documentation.
pub(crate) fn main(args: &CompareArgs) -> ExitCode {
    let (result, reference) = match (read_table(args.result), read_table(args.reference)) {
        (Ok(result), Ok(reference)) => (result, reference),
        (Err(message), _) | (_, Err(message)) => return usage(message),
    };
    let signals = match args.signals.map(read_signal_list).transpose() {
        Ok(signals) => signals,
        Err(message) => return usage(message),
    };
    let report = match eqm::compare::compare(&result, &reference, signals.as_deref(), args.tolerance) {
        Ok(report) => report,
        Err(e) => return usage(format!("{}: {e}", args.reference.display())),
    };
    print_report(&report);
    if let Some(dir) = args.svg
        && let Err(message) = write_pictures(dir, &result, &reference, &report)
    {
        return usage(message);
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_MODEL_ERROR)
    }
}

/// Prints a line per signal and the summary.
fn print_report(report: &CompareReport) {
    let width = report.signals.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for signal in &report.signals {
        match &signal.verdict {
            Verdict::Pass => println!("pass  {}", signal.name),
            failure => println!("FAIL  {:width$}  {failure}", signal.name),
        }
    }
    let passed = report.signals.iter().filter(|s| s.verdict.passed()).count();
    println!(
        "{passed} of {} signals inside their tubes (tolerance {})",
        report.signals.len(),
        eqm::format_number(report.tolerance)
    );
}

/// Reads a CSV file, gzip-compressed or not, into a table; the message names the file.
fn read_table(path: &Path) -> Result<SignalTable, String> {
    let text = read_text(path)?;
    SignalTable::parse_csv(&text).map_err(|e| match e.line {
        0 => format!("{}: {}", path.display(), e.message),
        line => format!("{}:{line}: {}", path.display(), e.message),
    })
}

/// Reads a signal list (`comparisonSignals.txt`).
fn read_signal_list(path: &Path) -> Result<Vec<String>, String> {
    let text = read_text(path)?;
    eqm::compare::parse_signal_list(&text).map_err(|e| match e.line {
        0 => format!("{}: {}", path.display(), e.message),
        line => format!("{}:{line}: {}", path.display(), e.message),
    })
}

/// The text of a file, decompressed when it starts with gzip's magic bytes.
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut inflated = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut inflated)
            .map_err(|e| format!("cannot decompress {}: {e}", path.display()))?;
        inflated
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

/// Writes one SVG per compared signal into `dir` (created if needed): the reference, the two
/// bounds of its tube and the result, over time.
fn write_pictures(
    dir: &Path,
    result: &SignalTable,
    reference: &SignalTable,
    report: &CompareReport,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let series = |name: &str, time: &[f64], values: &[f64]| Series {
        name: name.to_string(),
        unit: None,
        points: time.iter().copied().zip(values.iter().copied()).collect(),
    };
    for signal in &report.signals {
        let Some(tube) = eqm::compare::tube(reference, &signal.name, signal.size) else {
            continue;
        };
        let mut drawn = vec![
            series("tube (upper)", &tube.time, &tube.upper),
            series("tube (lower)", &tube.time, &tube.lower),
        ];
        if let Some(values) = reference.column_named(&signal.name) {
            drawn.push(series("reference", reference.time(), values));
        }
        if let Some(values) = result.column_named(&signal.name) {
            drawn.push(series("result", result.time(), values));
        }
        let path = picture_path(dir, &signal.name);
        let svg = plot::svg(&drawn).map_err(|e| format!("{}: {e}", signal.name))?;
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The SVG file of a signal: its name with every character other than letters, digits, `.`,
/// `_` and `-` replaced by `_`.
fn picture_path(dir: &Path, name: &str) -> PathBuf {
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{file}.svg"))
}
