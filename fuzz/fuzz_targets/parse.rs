//! Fuzzes the front end with arbitrary UTF-8 text.
//!
//! Checks the parser's contract: it never panics, every diagnostic points inside the text, and a
//! file that parses without errors prints to text that parses back to the same AST (spans and
//! parentheses aside) and prints identically again.

#![no_main]

use eqm_syntax::FileId;
use eqm_syntax::normalize::normalize_file;
use eqm_syntax::{parse_file, pretty};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let (ast, diagnostics) = parse_file(FileId(0), text);
    for d in &diagnostics {
        for label in &d.labels {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(start <= end && end <= text.len(), "{} has span {start}..{end} outside the text", d.code);
        }
    }
    if !diagnostics.is_empty() {
        return;
    }
    let printed = pretty::print_file(&ast);
    let (reparsed, diagnostics) = parse_file(FileId(0), &printed);
    assert!(diagnostics.is_empty(), "the printed text does not parse:\n{printed}\n{diagnostics:?}");
    assert_eq!(pretty::print_file(&reparsed), printed, "printing is not idempotent");
    let (mut expected, mut actual) = (ast, reparsed);
    normalize_file(&mut expected);
    normalize_file(&mut actual);
    assert!(expected == actual, "the printed text parses to a different AST:\n{printed}");
});
