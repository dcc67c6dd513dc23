//! The REPL on a terminal: a `rustyline` editor with persistent history, Emacs or Vi key
//! bindings (`EQM_EDIT_MODE=vi`), completion of commands, model names, variable and parameter
//! names, option names and file paths, and hints from the history.
//!
//! The history is kept in `$XDG_STATE_HOME/eqm/history`, else `~/.local/state/eqm/history`.
//! Ctrl-C at the prompt clears the line, Ctrl-D quits; Ctrl-C during a run stops it at its next
//! row and keeps the rows computed so far.

use super::Repl;
use super::help::COMMANDS;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Context, EditMode, Editor, Helper};
use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// The options of `:run` and `:analyze`, for completion.
const OPTIONS: &[&str] = &[
    "--start",
    "--stop",
    "--solver",
    "--tableau",
    "--rtol",
    "--atol",
    "--step",
    "--interval",
    "--max-rows",
    "--vars",
    "--out",
    "--plot",
    "--plot-out",
    "--interpreter",
    "--stabilize",
    "--index-reduction",
    "--sweep",
    "--at",
    "--from",
    "--json",
    "--svg",
    "--steps",
    "--keep-aliases",
    "--help",
];

/// What the editor completes from: refreshed before each line.
struct EqmHelper {
    /// Model, variable, parameter and run names.
    names: Vec<String>,
    files: FilenameCompleter,
    hinter: HistoryHinter,
    /// Whether to colour the line (not with `NO_COLOR` set).
    colour: bool,
}

impl Completer for EqmHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before
            .rfind(|c: char| c.is_whitespace() || "(),=+-*/^<>".contains(c))
            .map_or(0, |i| i + 1);
        let word = &before[start..];
        let pair = |s: &str| Pair {
            display: s.to_string(),
            replacement: s.to_string(),
        };
        // The command itself.
        if let Some(partial) = word.strip_prefix(':')
            && start == 0
        {
            let found = COMMANDS
                .iter()
                .filter(|c| c.name.starts_with(partial))
                .map(|c| pair(&format!(":{} ", c.name)))
                .collect();
            return Ok((0, found));
        }
        if word.starts_with('-') {
            let found = OPTIONS
                .iter()
                .filter(|o| o.starts_with(word))
                .map(|o| pair(o))
                .collect();
            return Ok((start, found));
        }
        let file_command = [":load", ":save", ":l", ":script"]
            .iter()
            .any(|c| before.starts_with(c))
            || before.contains('>')
            || before.ends_with("--out ")
            || before.ends_with("--svg ");
        if file_command || word.contains('/') {
            return self.files.complete(line, pos, ctx);
        }
        let found = self
            .names
            .iter()
            .filter(|n| n.starts_with(word))
            .map(|n| pair(n))
            .collect();
        Ok((start, found))
    }
}

impl Hinter for EqmHelper {
    type Hint = String;

    fn hint(&self, line: &str, pos: usize, ctx: &Context<'_>) -> Option<String> {
        self.hinter.hint(line, pos, ctx)
    }
}

/// The words highlighted as keywords in typed `.eqm` text.
const KEYWORDS: &[&str] = &[
    "algorithm",
    "and",
    "annotation",
    "block",
    "Boolean",
    "class",
    "connect",
    "connector",
    "constant",
    "der",
    "discrete",
    "each",
    "else",
    "elseif",
    "elsewhen",
    "end",
    "equation",
    "extends",
    "false",
    "final",
    "flow",
    "for",
    "function",
    "if",
    "import",
    "in",
    "initial",
    "input",
    "Integer",
    "loop",
    "model",
    "not",
    "or",
    "output",
    "package",
    "parameter",
    "partial",
    "pre",
    "Real",
    "record",
    "reinit",
    "replaceable",
    "String",
    "then",
    "true",
    "type",
    "when",
    "while",
    "within",
];

/// `line` with ANSI colours: commands and keywords bold, numbers cyan, strings green, comments
/// dim.
fn colour(line: &str) -> String {
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(line.len() * 2);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        let (len, style) = if rest.starts_with("//") {
            (rest.len(), "\x1b[2m")
        } else if c == '"' {
            let end = rest[1..].find('"').map_or(rest.len(), |i| i + 2);
            (end, "\x1b[32m")
        } else if c.is_ascii_digit() {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                .unwrap_or(rest.len());
            (end, "\x1b[36m")
        } else if c.is_alphabetic() || c == '_' || (c == ':' && out.is_empty()) {
            let end = rest[c.len_utf8()..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                .map_or(rest.len(), |i| i + c.len_utf8());
            let word = &rest[..end];
            let keyword = c == ':' || KEYWORDS.contains(&word);
            (end, if keyword { "\x1b[1;34m" } else { "" })
        } else {
            (c.len_utf8(), "")
        };
        if style.is_empty() {
            out.push_str(&rest[..len]);
        } else {
            out.push_str(style);
            out.push_str(&rest[..len]);
            out.push_str(RESET);
        }
        rest = &rest[len..];
    }
    out
}

impl Highlighter for EqmHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if self.colour {
            Cow::Owned(colour(line))
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.colour {
            Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
        } else {
            Cow::Borrowed(hint)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.colour
    }
}
impl Validator for EqmHelper {}
impl Helper for EqmHelper {}

/// Where the history is kept.
fn history_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".local/state"),
    };
    Some(base.join("eqm").join("history"))
}

/// Runs the session on the terminal until Ctrl-D or `:quit`.
pub(crate) fn run(repl: &mut Repl) {
    let vi = std::env::var("EQM_EDIT_MODE").is_ok_and(|m| m.eq_ignore_ascii_case("vi"));
    let config = Config::builder()
        .auto_add_history(true)
        .edit_mode(if vi { EditMode::Vi } else { EditMode::Emacs })
        .build();
    let mut editor: Editor<EqmHelper, DefaultHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: the line editor cannot start ({e}); reading plain lines");
            repl.run_lines(std::io::stdin().lock());
            return;
        }
    };
    editor.set_helper(Some(EqmHelper {
        names: Vec::new(),
        files: FilenameCompleter::new(),
        hinter: HistoryHinter::new(),
        colour: std::env::var_os("NO_COLOR").is_none(),
    }));
    let history = history_path();
    if let Some(path) = &history {
        // A missing history is a first session.
        let _ = editor.load_history(path);
    }
    repl.color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    // Ctrl-C outside the editor (during a run) stops the run at its next row.
    let interrupted = repl.interrupted.clone();
    if let Err(e) = ctrlc::set_handler(move || interrupted.store(true, Ordering::SeqCst)) {
        eprintln!("note: Ctrl-C cannot stop runs ({e})");
    }
    println!(
        "eqm {}: `:help` lists the commands, Ctrl-D quits",
        env!("CARGO_PKG_VERSION")
    );
    loop {
        if let Some(helper) = editor.helper_mut() {
            helper.names = repl.names();
        }
        repl.terminal = editor.dimensions().map(|(w, h)| (usize::from(w), usize::from(h)));
        match editor.readline(&repl.prompt()) {
            Ok(line) => {
                repl.handle(&line);
                if repl.quit {
                    break;
                }
            }
            // Ctrl-C at the prompt: the line is dropped, and a class being typed with it.
            Err(ReadlineError::Interrupted) => {
                repl.pending = None;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    repl.end_of_input();
    if let Some(path) = &history {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = editor.save_history(path) {
            eprintln!("note: the history cannot be saved to {}: {e}", path.display());
        }
    }
}

impl Repl {
    /// The names completion offers: models, the current model's variables and parameters
    /// (when it is compiled), and runs.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.session.models().into_iter().map(|m| m.name).collect();
        if let Some(model) = &self.model {
            names.extend(model.variables().into_iter().map(|v| v.name));
        }
        names.extend(self.runs.iter().map(|r| r.name.clone()));
        names.extend(["max(", "min(", "final(", "initial(", "mean(", "val("].map(String::from));
        names
    }
}
