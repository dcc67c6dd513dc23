//! The conformance run of EQM on the system-dynamics test suite (the SDXorg test models, in
//! `../shared/sd-test-models/tests/`): not a benchmark of `cargo bench` and not a test of
//! `cargo test`. `docs/system-dynamics.md` ("Stella, XMILE and Vensim files") says how to run
//! it and gives its totals.
//!
//! Input: the suite's directory (`--suite DIR`), optionally `--only TEXT` (the cases whose
//! folder name contains it) and `--passing FILE` (where to write the list of passing files,
//! the list the CI test `sd_suite` keeps). For each model file of a format EQM imports
//! (`.xmile`, `.stmx`, `.mdl`) it runs the model in-process and compares with the case's
//! `output.csv` or `output.tab` at the rule of `sd_suite_case.rs`. Output: a Markdown table
//! on standard output (case, file, format, pass/fail, worst error, reason) and the totals per
//! format.

#[path = "sd_suite_case.rs"]
mod case;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// What is known about a case whose file or reference cannot be passed as it stands, or
/// whose reference comes from another method or tool than the file names: shown beside the
/// outcome, never used to judge it.
const KNOWN: &[(&str, &str)] = &[
    (
        "active_initial",
        "the conversion lost ACTIVE INITIAL: the file starts the stock at `Value A`, the reference at 45",
    ),
    (
        "data_from_other_model/model_to_generate_data.mdl",
        "the reference is the run of the other file of the case; this file's own run is `data.tab`",
    ),
    (
        "get_time_value/test_get_time_value.mdl",
        "the reference is the run of `test_get_time_value_simple.mdl` (from -10; this file starts at 50)",
    ),
    ("logicals/test_logicals.stmx", "`IF x not THEN` is no XMILE expression"),
    (
        "macro_",
        "the file calls a macro it does not define (lost in the conversion)",
    ),
    ("non_negative_flows", "the file is not well-formed XML"),
    (
        "rounding",
        "the reference's MOD keeps the dividend's sign; XMILE's MOD is the floored modulus (the divisor's sign)",
    ),
    (
        "smooth_and_stock",
        "the reference lists `Input`, which the file does not have",
    ),
    ("zeroled_decimals", "the file names RK4; the reference is Euler's"),
];

/// The note on a case, if one is known; `???` in the file is a broken conversion.
fn note(case_name: &str, file_name: &str, text: &str) -> String {
    if text.contains("???") {
        return "the file holds `???` placeholders of a broken conversion".to_string();
    }
    let path = format!("{case_name}/{file_name}");
    KNOWN
        .iter()
        .find(|(prefix, _)| path.starts_with(prefix))
        .map(|(_, note)| note.to_string())
        .unwrap_or_default()
}

const USAGE: &str = "usage: sd_conformance [--suite DIR] [--only TEXT] [--passing FILE]";

fn main() -> ExitCode {
    let mut suite = PathBuf::from("../shared/sd-test-models/tests");
    let mut only: Option<String> = None;
    let mut passing_file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--suite", Some(v)) => suite = PathBuf::from(v),
            ("--only", Some(v)) => only = Some(v),
            ("--passing", Some(v)) => passing_file = Some(PathBuf::from(v)),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Ok(entries) = std::fs::read_dir(&suite) else {
        eprintln!("cannot read the suite's directory {}", suite.display());
        return ExitCode::from(2);
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    println!("| case | file | format | result | worst error | reason | note |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut totals: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut passing = Vec::new();
    for folder in folders {
        let case_name = folder.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if only.as_deref().is_some_and(|o| !case_name.contains(o)) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut models: Vec<PathBuf> = files.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        models.sort();
        for model in models {
            let extension = model
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            let format = match extension.as_str() {
                "xmile" => "XMILE",
                "stmx" => "Stella",
                "mdl" => "Vensim",
                _ => continue,
            };
            let file_name = model.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let outcome = match case::reference_file(&folder) {
                None => case::Outcome {
                    passed: false,
                    worst: f64::NAN,
                    reason: "the case has no output.csv or output.tab".to_string(),
                },
                Some(path) => {
                    let text = case::reference_text(&path).unwrap_or_default();
                    let tab = path.extension().is_some_and(|e| e == "tab");
                    match case::read_reference(&text, tab) {
                        Some(reference) => case::run_case(&model, &reference),
                        None => case::Outcome {
                            passed: false,
                            worst: f64::NAN,
                            reason: "the reference has no header".to_string(),
                        },
                    }
                }
            };
            let entry = totals.entry(format).or_default();
            entry.1 += 1;
            if outcome.passed {
                entry.0 += 1;
                passing.push(format!("{case_name}/{file_name}"));
            }
            let reason = outcome.reason.replace('|', "\\|").replace('\n', " ");
            let model_text = std::fs::read_to_string(&model).unwrap_or_default();
            let note = if outcome.passed {
                String::new()
            } else {
                note(&case_name, &file_name, &model_text)
            };
            println!(
                "| {case_name} | {file_name} | {format} | {} | {:.1e} | {reason} | {note} |",
                if outcome.passed { "pass" } else { "FAIL" },
                outcome.worst
            );
        }
    }
    println!();
    let (mut all_passed, mut all) = (0, 0);
    for (format, (passed, total)) in &totals {
        println!("{format}: {passed} of {total} files pass");
        all_passed += passed;
        all += total;
    }
    println!("total: {all_passed} of {all} files pass");
    if let Some(path) = passing_file {
        let mut text =
            String::from("# The files of the system-dynamics suite that pass (written by sd_conformance --passing)\n");
        for p in &passing {
            text.push_str(p);
            text.push('\n');
        }
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
