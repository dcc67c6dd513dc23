//! Front-end tests over the parser corpus in `tests/it/syntax/`.
//!
//! - `valid/*.eqm` together use every construct of the language contract. Each must parse with
//!   no diagnostic; its pretty-printed AST is snapshotted, and printing then parsing again must
//!   give the same AST (spans aside) and the same text.
//! - `invalid/*.eqm` carry their expected diagnostics as `// error[E0110]: message` comments,
//!   checked by the shared UI harness; a few are also snapshotted fully rendered.
//! - A precedence table pins how operators group, and property tests print random ASTs and parse
//!   them back.

use crate::ui_harness;

use eqm_diag::source::{FileId, SourceMap, Span};
use eqm_diag::{self as diag, Diagnostic};
use eqm_syntax::ast::*;
use eqm_syntax::normalize::{normalize_expr, normalize_file};
use eqm_syntax::{parse_expr, parse_file, pretty};
use proptest::prelude::*;
use std::path::Path;

mod expressions;
mod properties;

/// Parses one file held in a fresh source map, as the driver does.
fn parse(name: &str, text: &str) -> (StoredDefinition, Vec<Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    let (ast, diagnostics) = parse_file(id, &sources.get(id).text);
    (ast, diagnostics, sources)
}

fn normalized(mut ast: StoredDefinition) -> StoredDefinition {
    normalize_file(&mut ast);
    ast
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .expect("corpus files have UTF-8 names")
        .to_string()
}

/// Asserts that printing `ast` and parsing the text again gives the same tree, and that printing
/// is a fixed point (printing the reparsed tree gives the same text).
fn assert_round_trip(name: &str, ast: &StoredDefinition) {
    let printed = pretty::print_file(ast);
    let (reparsed, diagnostics, sources) = parse(name, &printed);
    assert!(
        diagnostics.is_empty(),
        "{name}: the printed text does not parse:\n{printed}\n{}",
        diag::render_all(&diagnostics, &sources, false)
    );
    assert_eq!(
        pretty::print_file(&reparsed),
        printed,
        "{name}: printing is not idempotent"
    );
    assert_eq!(
        normalized(reparsed),
        normalized(ast.clone()),
        "{name}: the printed text parses to a different AST:\n{printed}"
    );
}

#[test]
fn valid_corpus_parses_cleanly_and_round_trips() {
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false }, {
        insta::glob!("valid/*.eqm", |path| {
            let name = file_name(path);
            let text = std::fs::read_to_string(path).expect("corpus files are readable");
            let (ast, diagnostics, sources) = parse(&name, &text);
            assert!(
                diagnostics.is_empty(),
                "{name} must parse without diagnostics:\n{}",
                diag::render_all(&diagnostics, &sources, false)
            );
            assert_round_trip(&name, &ast);
            insta::assert_snapshot!("valid", pretty::print_file(&ast));
        });
    });
}

#[test]
fn invalid_corpus_reports_the_annotated_diagnostics() {
    insta::glob!("invalid/*.eqm", |path| {
        let name = file_name(path);
        let text = std::fs::read_to_string(path).expect("corpus files are readable");
        assert!(
            !ui_harness::parse_annotations(&text).is_empty(),
            "{name}: an invalid corpus file must annotate at least one diagnostic"
        );
        let (_, diagnostics, sources) = parse(&name, &text);
        ui_harness::check_annotations(&name, &text, diagnostics, &sources);
    });
}

/// Full renderings of a few invalid files, to review the wording and layout users see.
#[test]
fn rendered_diagnostics() {
    for name in [
        "recovery.eqm",
        "missing_semicolon.eqm",
        "lexical.eqm",
        "end_name.eqm",
        "operators.eqm",
        "unexpected_eof.eqm",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/syntax/invalid")
            .join(name);
        let text = std::fs::read_to_string(&path).expect("corpus files are readable");
        let (_, diagnostics, sources) = parse(name, &text);
        insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(
                format!("rendered@{name}"),
                ui_harness::render_snapshot(&text, &diagnostics, &sources)
            );
        });
    }
}
