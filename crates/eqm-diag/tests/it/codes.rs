//! The registry of diagnostic codes against the sources of every crate: each code a source
//! writes (`"E0201"` as a string literal, or `` `E0201` `` in a comment) is registered, and each
//! registered code is written as a literal somewhere. Also the table's own invariants and the
//! constructors' check of the code.

use eqm_diag::codes::{self, CODES, Stage};
use eqm_diag::source::{FileId, Span};
use eqm_diag::{Diagnostic, Severity};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The directory holding every crate of the workspace.
const CRATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The registry itself, relative to [`CRATES`]: it names every code, so it is no use of any.
const REGISTRY: &str = "eqm-diag/src/codes/table.rs";

/// The grammar, relative to [`CRATES`]: its actions are source too.
const GRAMMAR: &str = "eqm-syntax/grammar/eqm.lalrpop";

/// A code written in a source file.
struct Use {
    /// The file, relative to [`CRATES`].
    file: String,
    /// One-based.
    line: usize,
    code: String,
    /// A string literal (`"E0201"`) rather than a mention in backquotes.
    literal: bool,
}

/// Every `*.rs` under `crates/*/src`, and the grammar, except the registry; sorted.
fn source_files() -> Vec<PathBuf> {
    let crates = Path::new(CRATES);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(crates).expect("the crates directory is readable") {
        let src = entry.expect("a directory entry").path().join("src");
        if src.is_dir() {
            collect_rust_files(&src, &mut files);
        }
    }
    let grammar = crates.join(GRAMMAR);
    assert!(grammar.is_file(), "the grammar {} is missing", grammar.display());
    files.push(grammar);
    files.retain(|f| !f.ends_with(REGISTRY));
    files.sort();
    files
}

fn collect_rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect_rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The codes in `text`: a letter `E`, `W` or `N` and four digits, between double quotes or
/// between backquotes.
fn codes_in(text: &str) -> Vec<(usize, String, bool)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        for at in 0..bytes.len().saturating_sub(6) {
            let quote = bytes[at];
            let candidate = &bytes[at + 1..at + 6];
            if matches!(quote, b'"' | b'`')
                && bytes[at + 6] == quote
                && matches!(candidate[0], b'E' | b'W' | b'N')
                && candidate[1..].iter().all(u8::is_ascii_digit)
            {
                found.push((index + 1, line[at + 1..at + 6].to_string(), quote == b'"'));
            }
        }
    }
    found
}

fn uses() -> Vec<Use> {
    let crates = Path::new(CRATES);
    let mut uses = Vec::new();
    for path in source_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path.strip_prefix(crates).unwrap_or(&path).display().to_string();
        for (line, code, literal) in codes_in(&text) {
            uses.push(Use {
                file: file.clone(),
                line,
                code,
                literal,
            });
        }
    }
    uses
}

#[test]
fn every_code_in_the_sources_is_registered_and_every_registered_code_is_used() {
    let uses = uses();
    let mut problems = Vec::new();
    for u in &uses {
        if codes::describe(&u.code).is_none() {
            problems.push(format!(
                "crates/{}:{}: `{}` is not registered: add it to crates/{REGISTRY}",
                u.file, u.line, u.code
            ));
        }
    }
    let used: BTreeSet<&str> = uses.iter().filter(|u| u.literal).map(|u| u.code.as_str()).collect();
    for info in CODES {
        if !used.contains(info.code) {
            problems.push(format!(
                "`{}` is registered in crates/{REGISTRY} but no source in crates/*/src uses it: remove the stale entry",
                info.code
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scan_finds_codes_where_they_are_written() {
    let found = codes_in(r#"Diagnostic::error("E0201", x) // `E0607` "E02011" E0101 "W0501""#);
    let codes: Vec<(&str, bool)> = found.iter().map(|(_, c, l)| (c.as_str(), *l)).collect();
    assert_eq!(codes, [("E0201", true), ("E0607", false), ("W0501", true)]);
}

#[test]
fn the_registry_is_sorted_and_each_entry_is_consistent() {
    for pair in CODES.windows(2) {
        assert!(
            pair[0].code < pair[1].code,
            "{} and {} are not in strictly increasing order",
            pair[0].code,
            pair[1].code
        );
    }
    for info in CODES {
        let code = info.code;
        let bytes = code.as_bytes();
        assert!(
            bytes.len() == 5 && bytes[1..].iter().all(u8::is_ascii_digit),
            "{code}: a code is a letter and four digits"
        );
        let severity = match bytes[0] {
            b'E' => Severity::Error,
            b'W' => Severity::Warning,
            b'N' => Severity::Note,
            _ => panic!("{code}: the letter must be E, W or N"),
        };
        assert_eq!(info.severity, severity, "{code}: the letter names the severity");
        assert_eq!(
            Stage::of(code),
            Some(info.stage),
            "{code}: the first two digits name the stage"
        );
        let d = info.description;
        assert!(!d.trim().is_empty(), "{code}: no description");
        assert!(
            !d.contains('\n') && !d.contains("  "),
            "{code}: the description is one line"
        );
        assert!(!d.ends_with('.'), "{code}: descriptions end without a full stop");
        assert!(!d.contains('|'), "{code}: `|` would break the table in docs/errors.md");
        assert_eq!(codes::describe(code), Some(info));
    }
    assert_eq!(codes::describe("E0000"), None);
    assert_eq!(codes::describe("e0101"), None);
    assert_eq!(codes::describe(""), None);
}

#[test]
fn constructors_accept_registered_codes() {
    let span = Span::new(FileId(0), 0, 1);
    assert_eq!(Diagnostic::error("E0101", "m", span, "l").severity, Severity::Error);
    assert_eq!(Diagnostic::warning("W0501", "m", span, "l").severity, Severity::Warning);
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "not registered")]
fn an_unregistered_code_fails_at_once_in_debug_builds() {
    let _ = Diagnostic::error("E0000", "m", Span::new(FileId(0), 0, 1), "l");
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "not registered as Warning")]
fn a_code_with_another_severity_fails_at_once_in_debug_builds() {
    let _ = Diagnostic::warning("E0101", "m", Span::new(FileId(0), 0, 1), "l");
}
