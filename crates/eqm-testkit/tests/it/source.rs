//! The Rust sources of the repository as the tidy checks read them.
//!
//! Input: the repository's directories `crates/`, `benches/` and `tests/`. Output: each `.rs`
//! file with its path relative to the repository, its lines, the same lines with every comment,
//! string and character literal blanked (so that a check never matches text inside them), the
//! comment text of each line, and the tokens of the code (identifiers and single punctuation
//! characters, each with its line). It deliberately is no parser: the checks work on tokens and
//! brace depth, which is enough for the rules they enforce.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One source file.
pub struct SourceFile {
    /// The path relative to the repository root, with `/` separators.
    pub path: String,
    /// The lines as written.
    pub lines: Vec<String>,
    /// The lines with comments and the contents of literals replaced by spaces.
    pub code: Vec<String>,
    /// The text of the comments on each line (empty when the line has none).
    pub comments: Vec<String>,
    /// The tokens of `code`.
    pub tokens: Vec<Token>,
}

/// An identifier (or keyword, or number) or one punctuation character, on its 0-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub line: usize,
}

impl Token {
    pub fn is(&self, text: &str) -> bool {
        self.text == text
    }

    pub fn is_ident(&self) -> bool {
        self.text.starts_with(|c: char| c.is_alphanumeric() || c == '_')
    }
}

impl SourceFile {
    /// Reads `path` (absolute) and names it `relative`.
    pub fn read(path: &Path, relative: String) -> SourceFile {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        SourceFile::parse(relative, &text)
    }

    /// Splits `text` into lines, blanks its comments and literals and tokenizes the code.
    pub fn parse(path: String, text: &str) -> SourceFile {
        let (code_text, comment_text) = blank(text);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut code: Vec<String> = code_text.lines().map(str::to_string).collect();
        let mut comments: Vec<String> = comment_text.lines().map(|l| l.trim().to_string()).collect();
        code.resize(lines.len(), String::new());
        comments.resize(lines.len(), String::new());
        let tokens = tokenize(&code);
        SourceFile {
            path,
            lines,
            code,
            comments,
            tokens,
        }
    }

    /// `path:line` for a 0-based line.
    pub fn at(&self, line: usize) -> String {
        format!("{}:{}", self.path, line + 1)
    }

    /// Whether line `line` holds a comment and no code.
    pub fn is_comment_only(&self, line: usize) -> bool {
        self.code[line].trim().is_empty() && !self.comments[line].is_empty()
    }

    /// The comments of the block of comment lines directly above `line` (attribute lines in
    /// between are skipped), nearest first.
    pub fn comments_above(&self, line: usize) -> Vec<&str> {
        let mut found = Vec::new();
        let mut l = line;
        while l > 0 {
            l -= 1;
            let code = self.code[l].trim();
            if self.is_comment_only(l) {
                found.push(self.comments[l].as_str());
            } else if !(code.starts_with("#[") || code.starts_with("#![")) {
                break;
            }
        }
        found
    }
}

/// Every `.rs` file under `crates/`, `benches/` and `tests/` of the repository, sorted by path;
/// build output (`target`) and hidden directories are skipped. Read once for all the checks.
pub fn repository_files() -> &'static [SourceFile] {
    static FILES: OnceLock<Vec<SourceFile>> = OnceLock::new();
    FILES.get_or_init(read_repository)
}

fn read_repository() -> Vec<SourceFile> {
    let root = Path::new(eqm_testkit::REPO);
    let mut paths = Vec::new();
    for dir in ["crates", "benches", "tests"] {
        collect(&root.join(dir), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let relative = p
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            SourceFile::read(&p, relative)
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                collect(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The crates of the workspace: `(name of the directory under crates/, its files)`.
pub fn crates(files: &[SourceFile]) -> Vec<(String, Vec<&SourceFile>)> {
    let mut crates: Vec<(String, Vec<&SourceFile>)> = Vec::new();
    for file in files {
        let Some(rest) = file.path.strip_prefix("crates/") else {
            continue;
        };
        let name = rest.split('/').next().unwrap_or_default().to_string();
        match crates.last_mut() {
            Some((last, list)) if *last == name => list.push(file),
            _ => crates.push((name, vec![file])),
        }
    }
    crates
}

/// `text` twice, same length and same line breaks: once with every comment and the contents
/// of every string and character literal replaced by spaces (quotes kept), once with only the
/// comments' text (everything else spaces).
fn blank(text: &str) -> (String, String) {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut comments = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                push(&mut code, &mut comments, chars[i], false);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = block_comment(&chars, i, &mut code, &mut comments);
        } else if let Some(hashes) = raw_string_start(&chars, i) {
            // `r"..."`, `r#"..."#`, `br"..."`: no escapes, ends at a quote and as many hashes.
            while chars[i] != '"' {
                push(&mut code, &mut comments, chars[i], true);
                i += 1;
            }
            push(&mut code, &mut comments, '"', true);
            i += 1;
            while i < chars.len() {
                let closes = chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#'));
                if closes {
                    push(&mut code, &mut comments, '"', true);
                    i += 1;
                    for _ in 0..hashes {
                        push(&mut code, &mut comments, '#', true);
                        i += 1;
                    }
                    break;
                }
                hide(&mut code, &mut comments, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            push(&mut code, &mut comments, '"', true);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    hide(&mut code, &mut comments, chars[i]);
                    i += 1;
                }
                hide(&mut code, &mut comments, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                push(&mut code, &mut comments, '"', true);
                i += 1;
            }
        } else if c == '\'' && is_char_literal(&chars, i) {
            push(&mut code, &mut comments, '\'', true);
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    hide(&mut code, &mut comments, chars[i]);
                    i += 1;
                }
                hide(&mut code, &mut comments, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                push(&mut code, &mut comments, '\'', true);
                i += 1;
            }
        } else {
            push(&mut code, &mut comments, c, true);
            i += 1;
        }
    }
    (code, comments)
}

/// Pushes `c` to one of the outputs (the code when `in_code`, else the comments) and a space,
/// or the line break, to the other.
fn push(code: &mut String, comments: &mut String, c: char, in_code: bool) {
    let other = if c == '\n' { '\n' } else { ' ' };
    if in_code {
        code.push(c);
        comments.push(other);
    } else {
        code.push(other);
        comments.push(c);
    }
}

/// Pushes `c` blanked to both outputs (the contents of literals).
fn hide(code: &mut String, comments: &mut String, c: char) {
    let b = if c == '\n' { '\n' } else { ' ' };
    code.push(b);
    comments.push(b);
}

/// Copies the block comment starting at `i` (nested ones included) to the comments; returns
/// the index after it.
fn block_comment(chars: &[char], mut i: usize, code: &mut String, comments: &mut String) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            push(code, comments, '/', false);
            push(code, comments, '*', false);
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            push(code, comments, '*', false);
            push(code, comments, '/', false);
            i += 2;
            if depth == 0 {
                break;
            }
        } else {
            push(code, comments, chars[i], false);
            i += 1;
        }
    }
    i
}

/// The number of hashes when a raw string literal starts at `i` (not inside an identifier).
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') || chars.get(j) == Some(&'c') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some(hashes)
}

/// Whether the quote at `i` starts a character literal rather than a lifetime or a label:
/// an escape follows, or exactly one character and a closing quote.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    matches!(
        (chars.get(i + 1), chars.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

/// The tokens of blanked code lines.
fn tokenize(code: &[String]) -> Vec<Token> {
    let mut tokens = Vec::new();
    for (line, text) in code.iter().enumerate() {
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                tokens.push(Token {
                    text: chars[start..i].iter().collect(),
                    line,
                });
            } else {
                if !c.is_whitespace() {
                    tokens.push(Token {
                        text: c.to_string(),
                        line,
                    });
                }
                i += 1;
            }
        }
    }
    tokens
}

/// The index of the token that closes the bracket opened at `open` (`{`, `(` or `[`), or the
/// last token when it is never closed.
pub fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    tokens.len().saturating_sub(1)
}

/// Whether tokens `k` and `k + 1` are `::`.
pub fn is_path_sep(tokens: &[Token], k: usize) -> bool {
    tokens.get(k).is_some_and(|a| a.is(":")) && tokens.get(k + 1).is_some_and(|b| b.is(":"))
}

/// The first token of each member at the top level of the group opened by the `{` at `open`:
/// for `{a::b, c as d, e::{f, g}}` the tokens `a`, `c` and `e`.
pub fn group_members(tokens: &[Token], open: usize) -> Vec<&Token> {
    let end = matching(tokens, open);
    let mut members = Vec::new();
    let mut depth = 0;
    let mut expect_member = true;
    for t in &tokens[open + 1..end] {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => expect_member = true,
            _ if expect_member && depth == 0 => {
                members.push(t);
                expect_member = false;
            }
            _ => {}
        }
    }
    members
}

#[test]
fn comments_and_literals_are_blanked_and_lines_kept() {
    let file = SourceFile::parse(
        "x.rs".into(),
        "let a = \"unsafe // no\"; // std::fs here\n/* fn f() {\n } */ let b = r#\"\"fn\"\"#;\nlet c = '\"'; fn g<'a>() {}\n",
    );
    assert_eq!(file.lines.len(), 4);
    assert!(
        !file.code[0].contains("unsafe") && !file.code[0].contains("std"),
        "{}",
        file.code[0]
    );
    assert!(file.comments[0].contains("std::fs here"));
    assert!(!file.code[1].contains("fn"));
    assert!(
        file.code[2].contains("let b") && !file.code[2].contains("fn"),
        "{}",
        file.code[2]
    );
    assert!(file.code[3].ends_with("fn g<'a>() {}"), "{}", file.code[3]);
    let idents: Vec<&str> = file
        .tokens
        .iter()
        .filter(|t| t.is_ident())
        .map(|t| t.text.as_str())
        .collect();
    // The prefix of a raw string is code; its contents are not.
    assert_eq!(idents, ["let", "a", "let", "b", "r", "let", "c", "fn", "g", "a"]);
}
