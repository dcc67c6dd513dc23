//! The size rules: no source file over 1000 lines, and no function over 150 lines unless a
//! comment gives the reason.
//!
//! Input: the repository's `.rs` files (`source`). Output: one failure listing every violation
//! as `path:line`. A function's length runs from the line of its `fn` keyword to the line of
//! its closing brace. The written reason is a comment of the form
//! `// Long function: <reason>` (or the same as a doc comment line), either in the block of
//! comments directly above the function (attributes may stand between) or in the comment lines
//! directly after its opening brace. It deliberately does not judge the reason.

use crate::source::{SourceFile, Token, matching, repository_files};

/// The most lines a source file may have.
const FILE_LIMIT: usize = 1000;
/// The most lines a function may have without a written reason.
const FUNCTION_LIMIT: usize = 150;
/// The words that introduce the reason of a long function.
const REASON_MARK: &str = "Long function:";

/// A function item: its name, the 0-based lines of its `fn` keyword, of its opening brace and
/// of its closing brace.
pub struct Function {
    pub name: String,
    pub line: usize,
    pub open: usize,
    pub close: usize,
}

impl Function {
    pub fn lines(&self) -> usize {
        self.close - self.line + 1
    }
}

/// The functions with a body in `file` (nested ones too); declarations without a body and
/// function pointer types are not functions.
pub fn functions(file: &SourceFile) -> Vec<Function> {
    let tokens = &file.tokens;
    let mut found = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        let Some(name) = tokens.get(k + 1) else { continue };
        if !t.is("fn") || !name.is_ident() {
            continue;
        }
        if let Some(open) = body_start(tokens, k + 2) {
            let close = matching(tokens, open);
            found.push(Function {
                name: name.text.clone(),
                line: t.line,
                open: tokens[open].line,
                close: tokens[close].line,
            });
        }
    }
    found
}

/// The index of the `{` that opens the body of the function whose signature starts at `from`,
/// or `None` when a `;` ends the signature first.
fn body_start(tokens: &[Token], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in tokens.iter().enumerate().skip(from) {
        match t.text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "{" if depth == 0 => return Some(k),
            ";" if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Whether `function` has its reason written above it or at the top of its body.
fn has_reason(file: &SourceFile, function: &Function) -> bool {
    let states_reason = |comment: &str| {
        comment
            .split_once(REASON_MARK)
            .is_some_and(|(_, reason)| !reason.trim().is_empty())
    };
    let above = file.comments_above(function.line);
    let mut top = (function.open + 1..file.lines.len()).take_while(|&l| file.is_comment_only(l));
    above.into_iter().any(states_reason) || top.any(|l| states_reason(&file.comments[l]))
}

/// The violations of both size rules in `files`, as `path:line: what`.
pub fn violations(files: &[SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        if file.lines.len() > FILE_LIMIT {
            found.push(format!(
                "{}: the file has {} lines (at most {FILE_LIMIT})",
                file.at(FILE_LIMIT),
                file.lines.len()
            ));
        }
        for f in functions(file) {
            if f.lines() > FUNCTION_LIMIT && !has_reason(file, &f) {
                found.push(format!(
                    "{}: `fn {}` has {} lines (at most {FUNCTION_LIMIT} without a `// {REASON_MARK} <reason>` comment)",
                    file.at(f.line),
                    f.name,
                    f.lines()
                ));
            }
        }
    }
    found
}

#[test]
fn no_file_over_1000_lines_and_no_function_over_150_lines_without_a_reason() {
    let found = violations(repository_files());
    assert!(
        found.is_empty(),
        "{} violations of the size rules:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn long_functions_are_found_and_a_written_reason_excuses_them() {
    let body = "    x += 1;\n".repeat(FUNCTION_LIMIT);
    let text = format!(
        "fn short() {{}}\ntrait T {{ fn declared(&self); }}\ntype F = fn(f64) -> f64;\n\
         fn long(x: &mut i32) {{\n{body}}}\n\
         // Long function: one table of cases.\n#[inline]\nfn excused_above(x: &mut i32) {{\n{body}}}\n\
         fn excused_inside(x: &mut i32) {{\n    // Long function: generated cases.\n{body}}}\n\
         // Long function:\nfn no_reason_given(x: &mut i32) {{\n{body}}}\n"
    );
    let file = SourceFile::parse("x.rs".into(), &text);
    let names: Vec<String> = functions(&file).into_iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        ["short", "long", "excused_above", "excused_inside", "no_reason_given"]
    );
    let found = violations(&[file]);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("x.rs:4: `fn long` has 152 lines"), "{}", found[0]);
    assert!(found[1].contains("`fn no_reason_given`"), "{}", found[1]);
}

#[test]
fn a_file_over_1000_lines_is_found() {
    let file = SourceFile::parse("big.rs".into(), &"//\n".repeat(FILE_LIMIT + 1));
    assert_eq!(
        violations(&[file]),
        ["big.rs:1001: the file has 1001 lines (at most 1000)"]
    );
}
