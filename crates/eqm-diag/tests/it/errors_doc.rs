//! `docs/errors.md` is generated from the registry of codes: this test regenerates it and fails
//! when the file differs, so the page and the registry cannot disagree.
//! `UPDATE_ERRORS_DOC=1 cargo test -p eqm-diag` rewrites the file instead.

use eqm_diag::Severity;
use eqm_diag::codes::{CODES, Stage};
use std::fmt::Write as _;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md");

const INTRODUCTION: &str = "\
# Diagnostic codes

Every error and warning EQM reports carries a code, shown in brackets before its message:

```text
error[E0202]: unknown class `Sprng`
```

A code is a letter and four digits. The letter is the severity: `E` for an error, `W` for a
warning (the command goes on), `N` for a note. The first two digits name the stage of the
compiler or simulator that reports the problem, in pipeline order; the last two the problem
within the stage. A code ending in `99` is an internal error of its stage, a fault of EQM rather
than of the model: please report the model that causes it. The numbers have gaps.

| digits | stage |
| --- | --- |
";

/// The page, from the registry.
fn render() -> String {
    let mut page = String::from(INTRODUCTION);
    for stage in Stage::ALL {
        let _ = writeln!(page, "| `x{}xx` | {} |", stage.digits(), stage.title());
    }
    page.push_str(
        "\nThis page is generated from the registry of codes, `crates/eqm-diag/src/codes/table.rs`; after changing\n\
         the registry, regenerate it with `UPDATE_ERRORS_DOC=1 cargo test -p eqm-diag`.\n",
    );
    for stage in Stage::ALL {
        let _ = write!(
            page,
            "\n## {} (`x{}xx`)\n\n{}\n\n| code | severity | meaning |\n| --- | --- | --- |\n",
            stage.title(),
            stage.digits(),
            stage.summary()
        );
        for info in CODES.iter().filter(|c| c.stage == stage) {
            let severity = match info.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            let _ = writeln!(page, "| {} | {severity} | {} |", info.code, info.description);
        }
    }
    page
}

#[test]
fn docs_errors_md_is_generated_from_the_registry() {
    let expected = render();
    if std::env::var_os("UPDATE_ERRORS_DOC").is_some_and(|v| v == "1") {
        std::fs::write(DOC, &expected).expect("docs/errors.md is writable");
        return;
    }
    let Ok(actual) = std::fs::read_to_string(DOC) else {
        panic!("docs/errors.md is missing; generate it with `UPDATE_ERRORS_DOC=1 cargo test -p eqm-diag`");
    };
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()))
            + 1;
        panic!(
            "docs/errors.md does not match the registry of codes (crates/eqm-diag/src/codes/table.rs), first at line \
             {line}; regenerate it with `UPDATE_ERRORS_DOC=1 cargo test -p eqm-diag`"
        );
    }
}

#[test]
fn every_stage_has_codes_and_every_code_is_on_the_page() {
    let page = render();
    for stage in Stage::ALL {
        assert!(CODES.iter().any(|c| c.stage == stage), "{stage:?} has no codes");
    }
    for info in CODES {
        assert_eq!(
            page.matches(&format!("| {} |", info.code)).count(),
            1,
            "{} is listed once",
            info.code
        );
    }
}
