//! IO only at the edge: no crate below `eqm-cli` touches the file system, the environment or
//! other processes.
//!
//! Input: the `src/` files of every crate except `eqm-cli` (the binary, which reads every file
//! and variable and hands texts to the library), `eqm-cc` (which compiles and loads external C
//! functions for the binary), `eqm-fmu` (the runtime of an exported FMU, which reads the model's
//! sources from the FMU) and `eqm-testkit` (test helpers, which read the repository and run the
//! binary). Output: one failure listing every use as `path:line`. A use
//! is a path through `std::fs`, `std::env` or `std::process` (also inside a `use std::{..}`
//! group), `File::`, `read_dir` or `env::var` in code; comments, strings, build scripts
//! (`build.rs`), tests and benches are not looked at, nor code under `#[cfg(test)]`. It
//! deliberately does not follow re-exports or dependencies: a crate that wraps the file system
//! for another would need its own entry here.

use crate::source::{SourceFile, Token, group_members, is_path_sep, matching, repository_files};

/// The crates allowed to do IO, by directory name: the binary, the test helpers, `eqm-cc`,
/// which runs the system C compiler on external C functions and loads what it makes for the
/// binary (the library gets it only as a `LinkExternal` the binary gives), and `eqm-fmu`, the
/// runtime of an exported FMU, which reads the model's sources from the FMU's resources.
const AT_THE_EDGE: [&str; 4] = ["eqm-cli", "eqm-testkit", "eqm-cc", "eqm-fmu"];

/// The crates allowed the file system but not the environment or processes: `eqm-serve`, the
/// web workbench, a front end at the edge like the binary, which lists, reads and writes the
/// model files of the one folder it serves (below that folder only) and gets everything else
/// (library directories, environment) from the binary through its configuration.
const FILES_ONLY: [&str; 1] = ["eqm-serve"];

/// The IO paths a crate of [`FILES_ONLY`] may use.
const FILE_PATHS: [&str; 3] = ["std::fs", "read_dir", "File"];

/// The paths whose use is IO, as tokens without `::` (`std fs` for `std::fs`).
const IO_PATHS: [&[&str]; 5] = [
    &["std", "fs"],
    &["std", "env"],
    &["std", "process"],
    &["File"],
    &["env", "var"],
];

/// Whether `file` is product code of a crate allowed only the file system.
fn is_files_only(file: &SourceFile) -> bool {
    let rest = file.path.strip_prefix("crates/").unwrap_or("");
    FILES_ONLY.contains(&rest.split_once('/').map_or(rest, |(krate, _)| krate))
}

/// Whether `file` is product code of a crate below the CLI.
fn is_checked(file: &SourceFile) -> bool {
    let Some(rest) = file.path.strip_prefix("crates/") else {
        return false;
    };
    let (krate, inside) = rest.split_once('/').unwrap_or((rest, ""));
    inside.starts_with("src/") && !AT_THE_EDGE.contains(&krate)
}

/// For each token, whether it lies in an item under `#[cfg(test)]`.
fn under_cfg_test(t: &[Token]) -> Vec<bool> {
    let mut hidden = vec![false; t.len()];
    let texts: Vec<&str> = t.iter().map(|x| x.text.as_str()).collect();
    for k in 0..t.len() {
        if texts[k..].starts_with(&["#", "[", "cfg", "(", "test", ")", "]"]) {
            let from = k + 7;
            let end = match (from..t.len()).find(|&j| t[j].is("{") || t[j].is(";")) {
                Some(j) if t[j].is("{") => matching(t, j),
                Some(j) => j,
                None => t.len() - 1,
            };
            hidden[k..=end].iter_mut().for_each(|h| *h = true);
        }
    }
    hidden
}

/// The IO paths used in `file`, with their lines.
pub fn io_uses(file: &SourceFile) -> Vec<(String, usize)> {
    let t = &file.tokens;
    let hidden = under_cfg_test(t);
    // Only the first segment of a path is matched against the IO paths, so that `std::fs` is
    // found once and `io::std::fs` (not the standard library) is not found.
    let mut found = Vec::new();
    for k in 0..t.len() {
        if hidden[k] || !t[k].is_ident() {
            continue;
        }
        if t[k].is("read_dir") {
            found.push(("read_dir".to_string(), t[k].line));
        }
        let starts_path = k < 2 || !(t[k - 1].is(":") && t[k - 2].is(":"));
        if !starts_path {
            continue;
        }
        for path in IO_PATHS {
            if path_at(t, k, path) {
                found.push((path.join("::"), t[k].line));
            }
        }
    }
    found
}

/// Whether the path starting at token `k` begins with `path` (the last segment may be a member
/// of a `{..}` group: `std::{fs, io}` uses `std::fs`). A one-segment path must be followed by
/// `::` (`File::open`).
fn path_at(t: &[Token], k: usize, path: &[&str]) -> bool {
    if !t[k].is(path[0]) {
        return false;
    }
    if path.len() == 1 {
        return is_path_sep(t, k + 1);
    }
    if !is_path_sep(t, k + 1) {
        return false;
    }
    match t.get(k + 3) {
        Some(next) if next.is(path[1]) => true,
        Some(open) if open.is("{") => group_members(t, k + 3).iter().any(|m| m.is(path[1])),
        _ => false,
    }
}

/// Every IO use in the product code of the crates below the CLI.
pub fn violations(files: &[SourceFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| is_checked(f))
        .flat_map(|f| {
            io_uses(f)
                .into_iter()
                .filter(move |(what, _)| !(is_files_only(f) && FILE_PATHS.contains(&what.as_str())))
                .map(move |(what, line)| format!("{}: {what}", f.at(line)))
        })
        .collect()
}

#[test]
fn no_crate_below_the_cli_touches_the_file_system_or_the_environment() {
    let found = violations(repository_files());
    assert!(
        found.is_empty(),
        "{} uses of the file system, the environment or processes below eqm-cli:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn io_in_code_is_found_and_io_in_comments_strings_and_tests_is_not() {
    let text = "use std::{fs, io};\nuse std::env as e;\n// std::fs::read\nfn f() {\n    let s = \"std::process\";\n    \
                let d = std::fs::read_dir(\".\");\n    let v = env::var(\"X\");\n    let f = File::open(s);\n}\n\
                #[cfg(test)]\nmod tests {\n    fn g() { std::process::exit(0) }\n}\nfn file_name() {}\n";
    let file = SourceFile::parse("crates/eqm-flatten/src/stdlib.rs".into(), text);
    let found = violations(&[file]);
    assert_eq!(
        found,
        [
            "crates/eqm-flatten/src/stdlib.rs:1: std::fs",
            "crates/eqm-flatten/src/stdlib.rs:2: std::env",
            "crates/eqm-flatten/src/stdlib.rs:6: std::fs",
            "crates/eqm-flatten/src/stdlib.rs:6: read_dir",
            "crates/eqm-flatten/src/stdlib.rs:7: env::var",
            "crates/eqm-flatten/src/stdlib.rs:8: File",
        ]
    );
    let cli = SourceFile::parse("crates/eqm-cli/src/main.rs".into(), text);
    assert!(violations(&[cli]).is_empty());
    let loader = SourceFile::parse("crates/eqm-cc/src/lib.rs".into(), text);
    assert!(violations(&[loader]).is_empty());
    // The workbench may use the file system, but not the environment or processes.
    let server = SourceFile::parse("crates/eqm-serve/src/files.rs".into(), text);
    assert_eq!(
        violations(&[server]),
        [
            "crates/eqm-serve/src/files.rs:2: std::env",
            "crates/eqm-serve/src/files.rs:7: env::var"
        ]
    );
}
