//! `unsafe` only in `eqm-jit`, `eqm-cc` and `eqm-fmu`, and each use there with a `SAFETY:` comment.
//!
//! Input: every `.rs` file of the repository (`source`). Output: one failure listing every
//! `unsafe` outside `crates/eqm-jit/`, `crates/eqm-cc/` (which loads the shared objects of
//! external C functions) and `crates/eqm-fmu/` (the C ABI of exported FMUs), and every `unsafe`
//! inside them without its reason, as `path:line`. The reason is a comment containing `SAFETY:` on the same line or in the block of
//! comment lines directly above the line (attribute lines may stand between). An `unsafe` in a
//! function pointer type (`unsafe extern "C" fn(..)`) is a type, not a use, and needs none.
//! It deliberately does not judge the reason.

use crate::source::{SourceFile, repository_files};

/// The only crates allowed to use `unsafe`: the JIT, which runs the code it compiles, and the
/// edge crate that loads compiled C (`dlopen` and `dlsym` are `unsafe` in Rust), and the FMU
/// runtime, whose C ABI exports symbols and takes the importer's pointers.
const ALLOWED: [&str; 3] = ["crates/eqm-jit/", "crates/eqm-cc/", "crates/eqm-fmu/"];

/// The lines of the uses of `unsafe` in `file` (pointer types excluded).
fn unsafe_lines(file: &SourceFile) -> Vec<usize> {
    let t = &file.tokens;
    let mut lines = Vec::new();
    for k in 0..t.len() {
        if !t[k].is("unsafe") {
            continue;
        }
        // `unsafe fn(` and `unsafe extern "C" fn(`: after the blanking, the ABI string is two
        // quote tokens.
        let mut j = k + 1;
        if t.get(j).is_some_and(|x| x.is("extern")) {
            j += 1;
            while t.get(j).is_some_and(|x| x.is("\"")) {
                j += 1;
            }
        }
        let pointer_type = t.get(j).is_some_and(|x| x.is("fn")) && t.get(j + 1).is_some_and(|x| x.is("("));
        if !pointer_type {
            lines.push(t[k].line);
        }
    }
    lines.dedup();
    lines
}

/// Every violation of the rule in `files`.
pub fn violations(files: &[SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        for line in unsafe_lines(file) {
            if !ALLOWED.iter().any(|a| file.path.starts_with(a)) {
                found.push(format!("{}: `unsafe` outside eqm-jit and eqm-cc", file.at(line)));
            } else if !file.comments[line].contains("SAFETY:")
                && !file.comments_above(line).iter().any(|c| c.contains("SAFETY:"))
            {
                found.push(format!("{}: `unsafe` without a `// SAFETY:` comment", file.at(line)));
            }
        }
    }
    found
}

#[test]
fn unsafe_only_in_eqm_jit_and_each_with_its_safety_comment() {
    let found = violations(repository_files());
    assert!(
        found.is_empty(),
        "{} violations of the unsafe rule:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn unsafe_outside_the_jit_or_without_a_reason_is_found() {
    let text = "type F = unsafe extern \"C\" fn(f64);\n// SAFETY: checked above.\nlet a = unsafe { f() };\n\
                // A comment without the reason.\nlet b = unsafe { f() };\n// \"unsafe\" in a comment\n\
                // SAFETY: Sync because nothing is shared.\n#[allow(unused)]\nunsafe impl Sync for X {}\n";
    let jit = SourceFile::parse("crates/eqm-jit/src/compiled.rs".into(), text);
    assert_eq!(
        violations(&[jit]),
        ["crates/eqm-jit/src/compiled.rs:5: `unsafe` without a `// SAFETY:` comment"]
    );
    let other = SourceFile::parse("crates/eqm-sim/src/native.rs".into(), text);
    assert_eq!(violations(&[other]).len(), 3);
    let loader = SourceFile::parse("crates/eqm-cc/src/lib.rs".into(), text);
    assert_eq!(
        violations(&[loader]),
        ["crates/eqm-cc/src/lib.rs:5: `unsafe` without a `// SAFETY:` comment"]
    );
}
