//! The Vensim reader over the system-dynamics test suite: every `.mdl` file reads cleanly or
//! names what it does not support, truncated and thinned files read without panic, the
//! reader's speed, and scalar models run by a small Euler interpreter of this test against
//! the values Vensim computed.

use super::{CONTROL, FILE, clean};
use eqm_diag::Diagnostic;
use eqm_sd::vensim::read;
use std::path::{Path, PathBuf};

/// The suite's folder, where this machine has it.
fn suite() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../../../shared/sd-test-models/tests"),
        manifest.join("../../../../shared/sd-test-models/tests"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

pub(super) fn suite_files() -> Vec<PathBuf> {
    let Some(dir) = suite() else { return Vec::new() };
    let mut files = Vec::new();
    for case in std::fs::read_dir(dir).expect("the suite's folder reads") {
        let case = case.expect("an entry of the suite").path();
        if !case.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&case).expect("a case's folder reads") {
            let f = f.expect("an entry of a case").path();
            if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("mdl")) {
                files.push(f);
            }
        }
    }
    files.sort();
    files
}

/// The constructs the reader names as not supported (E1002), each by a piece of its message.
const UNSUPPORTED: &[&str] = &[
    "data variable",
    "data option",
    "VECTOR SORT ORDER",
    "VECTOR REORDER",
    "VECTOR RANK",
    "GET TIME VALUE",
    "control variable",
    "used as a value where it is not a subscript",
    "stock (`INTEG`) for some elements",
];

/// Files with a diagnostic other than E1002, each with the reason.
const KNOWN: &[(&str, &str)] = &[
    (
        "get_constants/test_get_constants.mdl",
        "names `data.xls` and `data.csv`, which the case does not have (it has `data.xlsx` and `data down.csv`)",
    ),
    (
        "get_data/test_get_data.mdl",
        "names `data down.xls`, which the case does not have (it has `data down.xlsx`)",
    ),
];

/// Reads a file of the suite with its data files (relative to the file, from the file system).
fn read_from(path: &Path, text: &str) -> (Option<eqm_sd::ir::SdFile>, Vec<Diagnostic>) {
    let reader: std::sync::Arc<dyn eqm_sd::data::ReadData> = std::sync::Arc::new(|p: &Path| std::fs::read(p));
    let files = eqm_sd::data::DataFiles::new(Some(reader), &path.to_string_lossy());
    eqm_sd::vensim::read_with_data(FILE, text, std::rc::Rc::new(files))
}

#[test]
fn every_suite_file_reads_cleanly_or_names_what_is_not_supported() {
    let files = suite_files();
    if files.is_empty() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let (mut cleanly, mut unsupported, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|_| String::from_utf8_lossy(&std::fs::read(path).expect("reads")).into_owned());
        let (file, diagnostics) = read_from(path, &text);
        let known = KNOWN.iter().any(|(name, _)| path.ends_with(name));
        let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(
            diagnostics.iter().all(|d| d.is_error() || d.code == "W1001"),
            "{}: {diagnostics:?}",
            path.display()
        );
        if known {
            assert!(
                !errors.is_empty(),
                "{} reads cleanly now: take it off the known list",
                path.display()
            );
            unsupported += 1;
        } else if errors.is_empty() {
            assert!(file.is_some(), "{}: no errors but no model", path.display());
            cleanly += 1;
        } else if errors
            .iter()
            .all(|d| d.code == "E1002" && UNSUPPORTED.iter().any(|u| d.message.contains(u)))
        {
            let file_name = path.file_name().expect("a file name").to_string_lossy();
            eprintln!("unsupported: {file_name}: {}", errors[0].message);
            unsupported += 1;
        } else {
            failures.push(format!(
                "{}: {:?}",
                path.display(),
                diagnostics
                    .iter()
                    .map(|d| (d.code, &d.message, &text[d.primary_span().unwrap().range()]))
                    .collect::<Vec<_>>()
            ));
        }
    }
    eprintln!(
        "Vensim files of the suite: {} read cleanly, {} with unsupported constructs only, of {}",
        cleanly,
        unsupported,
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_prefix_of_small_suite_files_reads_without_panic() {
    let files = suite_files();
    if files.is_empty() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let picked = [
        "teacup_3quotes.mdl",
        "test_macro_stock.mdl",
        "test_subscript_mapping_vensim.mdl",
        "test_lookups.mdl",
        "test_except.mdl",
    ];
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a suite file reads");
        // Every prefix of a few files, 97 prefixes of every other file; and each file with
        // one character in 97 dropped.
        let every = if picked.iter().any(|n| path.ends_with(n)) {
            1
        } else {
            text.len() / 97 + 1
        };
        for cut in (0..=text.len()).step_by(every).filter(|&i| text.is_char_boundary(i)) {
            let _ = read(FILE, &text[..cut]);
        }
        let thinned: String = text
            .chars()
            .enumerate()
            .filter(|(i, _)| i % 97 != 42)
            .map(|(_, c)| c)
            .collect();
        let _ = read(FILE, &thinned);
    }
}

#[test]
fn reading_is_linear_in_the_file_size() {
    let mut text = String::with_capacity(1 << 20);
    for i in 0..10_000 {
        if i == 0 {
            text.push_str("v0 = INTEG(1, 0) ~ widgets ~ The first. |\n");
        } else {
            text.push_str(&format!(
                "v{i} = v{} * 1.0001 + MAX(Time, {i}) ~ widgets ~ Variable {i}. |\n",
                i - 1
            ));
        }
    }
    text.push_str(CONTROL);
    let started = std::time::Instant::now();
    let file = clean(&text);
    let elapsed = started.elapsed();
    assert_eq!(file.models[0].variables.len(), 10_004);
    eprintln!("read 10 000 equations ({} bytes) in {elapsed:?}", text.len());
    // An arrayed model: 2 000 variables over a range of 1 000 elements and its subrange,
    // half of them defined element by element on the subrange and a list of numbers.
    let mut text = String::from("d: (e1-e1000) ~~|\nsub: (e1-e500) ~~|\n");
    let numbers: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    text.push_str(&format!("w[d] = {} ~~|\n", numbers.join(", ")));
    for i in 0..1000 {
        let before = if i == 0 {
            "w[d]".to_string()
        } else {
            format!("v{}[d]", i - 1)
        };
        text.push_str(&format!("v{i}[d] = {before} * 0.5 + SUM(w[d!]) ~~|\n"));
        text.push_str(&format!("u{i}[sub] = v{i}[sub] ~~|\nu{i}[e501] = 1 ~~|\n"));
    }
    text.push_str(CONTROL);
    let started = std::time::Instant::now();
    let file = clean(&text);
    let elapsed = started.elapsed();
    assert_eq!(file.models[0].variables.len(), 2005);
    eprintln!(
        "read 2 000 arrayed equations over 1 000 elements ({} bytes) in {elapsed:?}",
        text.len()
    );
    if let Some(largest) = suite_files()
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
    {
        let text = std::fs::read_to_string(&largest).expect("reads");
        let started = std::time::Instant::now();
        let _ = read(FILE, &text);
        eprintln!(
            "read {} ({} bytes) in {:?}",
            largest.display(),
            text.len(),
            started.elapsed()
        );
    }
}
