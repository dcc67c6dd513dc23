//! The command line on hostile files: deep nesting of every kind is reported with a code and
//! exit status 1, never a crash.

use crate::models::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file in the system's temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("eqm-robustness-{}-{name}", std::process::id()));
        std::fs::write(&path, text).expect("the temporary directory is writable");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Cleanup is best effort: a leftover file in the temporary directory harms nothing.
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run_check(path: &Path) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .arg("check")
        .arg(path)
        .env("NO_COLOR", "1")
        .output()
        .expect("the eqm binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_cli_reports_hostile_nesting_and_exits_1() {
    let broken_bottom = |text: String| text.replacen("x = 1;", "x = ;", 1);
    let cases = [
        (
            "parens.eqm",
            model_with_equation(&format!("{}a{}", "(".repeat(DEEP), ")".repeat(DEEP))),
            "E0106",
        ),
        (
            "ifexpr.eqm",
            model_with_equation(&format!("{}0{}", "if c then ".repeat(DEEP), " else 1".repeat(DEEP))),
            "E0106",
        ),
        ("ifeq.eqm", broken_bottom(nested_if_equations(DEEP)), "E0110"),
        ("for.eqm", broken_bottom(nested_for_loops(DEEP)), "E0110"),
        (
            "classes.eqm",
            nested_classes(DEEP).replacen("Real x = 1;", "Real x = ;", 1),
            "E0110",
        ),
        ("unclosed.eqm", "package P\n".repeat(DEEP), "E0111"),
    ];
    for (name, text, code) in cases {
        let file = TempFile::new(name, &text);
        let (status, stderr) = run_check(&file.0);
        assert_eq!(
            status,
            Some(1),
            "{name}: eqm check must exit 1; stderr:\n{}",
            tail(&stderr)
        );
        assert!(
            stderr.contains(&format!("[{code}]")),
            "{name}: no {code} in:\n{}",
            tail(&stderr)
        );
    }
}

/// The end of a possibly huge output (a 10 000-character line renders wide).
fn tail(s: &str) -> &str {
    let mut start = s.len().saturating_sub(2000);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
