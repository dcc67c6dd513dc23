//! `eqm repl` driven by scripts on standard input, as tests and documentation drive it: every
//! command, classes typed in over several lines, expressions over runs against closed-form
//! values, errors that never end the session, and the transcripts of `docs/repl.md`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A fresh directory for one test (history, written files).
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-repl-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// Runs `eqm repl ARGS` in the repository root with `script` on standard input; returns (exit
/// code, stdout, stderr).
fn repl(args: &[&str], script: &str) -> (i32, String, String) {
    // Each session its own home, so that sessions in parallel tests share nothing.
    static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let home = scratch(&format!("home{n}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .arg("repl")
        .args(args)
        .current_dir(crate::REPO)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the eqm binary runs");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(script.as_bytes())
        .expect("the script is written");
    let out = child.wait_with_output().expect("the session ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The number printed on line `line` of `out`.
fn number(out: &str, line: usize) -> f64 {
    let text = out
        .lines()
        .nth(line)
        .unwrap_or_else(|| panic!("line {line} of:\n{out}"));
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("`{text}` is not a number in:\n{out}"))
}

const DECAY: &str = "model Decay \"exponential decay\"
  parameter Real k = 1 \"rate\";
  Real x(start = 1, fixed = true) \"quantity\";
equation
  der(x) = -k*x;
end Decay;
";

#[test]
fn a_typed_model_runs_and_expressions_match_the_exact_solution() {
    let script = format!(
        "{DECAY}:run --stop 2 --rtol 1e-9\nx(1)\nfinal(x)\nmax(x) - min(x)\nx[end]\n:set k=2\n:run --stop 2 --rtol 1e-9 as fast\nx(1)\n:value x at 1 in run1\n"
    );
    let (code, out, err) = repl(&[], &script);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "defined Decay", "{out}");
    assert!(lines[1].starts_with("run1: "), "{out}");
    let close = |a: f64, b: f64| (a - b).abs() < 1e-7;
    assert!(close(number(&out, 2), (-1.0f64).exp()), "{out}");
    assert!(close(number(&out, 3), (-2.0f64).exp()), "{out}");
    assert!(close(number(&out, 4), 1.0 - (-2.0f64).exp()), "{out}");
    assert!(close(number(&out, 5), (-2.0f64).exp()), "{out}");
    // A parameter change does not compile again.
    assert_eq!(lines[6], "k = 2", "{out}");
    assert!(lines[7].starts_with("fast: ") && lines[7].ends_with("(k=2)"), "{out}");
    assert!(close(number(&out, 8), (-2.0f64).exp()), "{out}");
    assert!(close(number(&out, 9), (-1.0f64).exp()), "{out}");
}

#[test]
fn every_command_answers() {
    let dir = scratch("commands");
    let csv = dir.join("decay.csv");
    let svg = dir.join("decay.svg");
    let script = format!(
        ":help\n:help set\n:load examples/decay.eqm\n:models\n:use Decay\n:check\n:flatten\n:explain --steps\n\
         :analyze\n:params\n:vars\n:show k\n:run --stop 4 as base\n:set k=1\n:set x=2\n:run --stop 4\n:show x\n:runs\n\
         :value x at 1\n:compare x base last\n:stats\n:save base {}\n:plot x\n:plot x over x > {}\n:sweep k=1:1:2\n\
         :unset k\n:params\n:reload\n:run --stop 1 --param k=2 as once\nfinal(x)\n:quit\n:models\n",
        csv.display(),
        svg.display()
    );
    let (code, out, err) = repl(&[], &script);
    assert_eq!(code, 0, "{err}");
    for expected in [
        "commands (`:help COMMAND` for one, with an example):",
        ":set NAME=VALUE ...",
        "example: :set k=2",
        "models: Decay",
        "Decay (model): Exponential decay der(x) = -k*x",
        "using Decay",
        "Decay: 2 variables, 1 equations: no errors",
        "der(x) = -k*x",
        "sorted assignments:",
        "k = 0.5 [1/s]  \"Decay rate\"",
        "x  State  \"Decaying quantity\"",
        "k = 0.5 [1/s]  parameter  \"Decay rate\"",
        "base: 401 rows from t = 0 to 4",
        "k = 1\n",
        "start value of x = 2",
        "run2: 401 rows from t = 0 to 4",
        "(k=1, x=2)",
        "x = 0.0366",
        "base: 401 rows, t = 0 to 4",
        "difference",
        "final",
        "run2: 401 rows by the",
        "steps: ",
        "wrote ",
        "time [s]",
        "final x",
        "changes now: x=2",
        "reloaded 1 file(s)",
        "once: 101 rows from t = 0 to 1",
        "(x=2, k=2)",
    ] {
        assert!(
            out.contains(expected),
            "`{expected}` missing in:\n{out}\nstderr:\n{err}"
        );
    }
    // After `:quit` nothing runs: `:models` would print the model once more.
    assert_eq!(out.matches("Decay (model)").count(), 1, "{out}");
    assert!(std::fs::read_to_string(&csv).is_ok_and(|t| t.starts_with("time,x")));
    assert!(std::fs::read_to_string(&svg).is_ok_and(|t| t.contains("<svg")));
    // `--param` holds for its run only: x(1) = 2 exp(-2), and `:params` after the
    // `:unset k` showed k = 0.5 again.
    let last: f64 = out
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .expect("a number");
    assert!((last - 2.0 * (-2.0f64).exp()).abs() < 1e-5, "{out}");
    // `:analyze` prints the eigenvalue of the decay.
    assert!(out.contains("-0.5"), "{out}");
    // The whole transcript, with the wall times and the scratch directory, which change from
    // run to run, left out.
    let transcript = redact_times(&out.replace(&dir.display().to_string(), "[dir]"));
    insta::assert_snapshot!("every_command", transcript);
}

/// `text` with every number of milliseconds (`2.1 ms`) replaced by `[t]`.
fn redact_times(text: &str) -> String {
    text.lines()
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            let mut out: Vec<&str> = Vec::with_capacity(words.len());
            for (k, w) in words.iter().enumerate() {
                let unit = words.get(k + 1).map(|u| u.trim_end_matches([',', ')', ';']));
                let numeric = !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.');
                out.push(if numeric && unit == Some("ms") { "[t]" } else { w });
            }
            out.join(" ") + "\n"
        })
        .collect()
}

#[test]
fn a_structural_parameter_compiles_again_and_says_so() {
    let script = "model Chain
  parameter Integer n = 2;
  Real x[n](each start = 1, each fixed = true);
equation
  der(x) = -x;
end Chain;
:set n=3
:run --stop 1
x[3]
";
    let (code, out, err) = repl(&[], script);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("n = 3 (structural: the model was compiled again)"),
        "{out}\n{err}"
    );
    assert!(((number(&out, 3)) - (-1.0f64).exp()).abs() < 1e-5, "{out}");
}

#[test]
fn errors_never_end_the_session() {
    let script = "model Broken
  Real x(start = 1, fixed = true);
equation
  der(x) = -y;
end Broken;
:run
:bogus
:lod examples/decay.eqm
1 +
max(x)
:load no/such/file.eqm
:set nonsense
:compare x a b
:plot
model Fixed
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
end Fixed;
:run --stop 1 --solver nonsense
:run --stop 1 --rtol -1
:run --stop 1 --no-such-option
:run --stop 1
x(1)
x(7)
z(1)
model Unfinished
  Real x;
";
    let (code, out, err) = repl(&[], script);
    assert_eq!(code, 0, "{err}");
    for expected in [
        "<input 1>:4:13",
        "unknown command `:bogus`",
        "did you mean `:load`?",
        "<input 5>:1:4",
        "there is no run yet",
        "cannot read no/such/file.eqm",
        "is not NAME=VALUE",
        "`:plot` needs variables",
        "unknown solver `nonsense`",
        "--no-such-option",
        "time 7 is outside the run (0 to 1)",
        "the run has no variable `z`",
        "<input 19>:2:10",
    ] {
        assert!(
            err.contains(expected),
            "`{expected}` missing in:\n{err}\nstdout:\n{out}"
        );
    }
    assert!(out.contains("defined Fixed"), "{out}");
    assert!(
        (number(
            out.lines()
                .skip_while(|l| !l.starts_with("run"))
                .collect::<Vec<_>>()
                .join("\n")
                .as_str(),
            1
        ) - (-1.0f64).exp())
        .abs()
            < 1e-5,
        "{out}"
    );
}

#[test]
fn a_redefined_class_replaces_the_old_one_and_reload_keeps_parameters() {
    let dir = scratch("reload");
    let file = dir.join("m.eqm");
    std::fs::write(&file, DECAY).expect("written");
    let script = format!(
        ":load {f}\n:set k=3\n:run --stop 1\nx(1)\n:reload\n:params\n:run --stop 1\nx(1)\n\
         model Decay\n  parameter Real k = 1;\n  Real x(start = 2, fixed = true);\nequation\n  der(x) = -k*x;\nend Decay;\n\
         :run --stop 1\nx(1)\n",
        f = file.display()
    );
    let (code, out, err) = repl(&[], &script);
    assert_eq!(code, 0, "{err}");
    assert!((number(&out, 3) - (-3.0f64).exp()).abs() < 1e-5, "{out}");
    assert!(out.contains("k = 3  \"rate\""), "{out}");
    assert!((number(&out, 7) - (-3.0f64).exp()).abs() < 1e-5, "{out}");
    // The typed class replaces the file's class of the same name, keeping the change of k.
    assert_eq!(out.lines().nth(8), Some("replaced Decay"), "{out}\n{err}");
    assert!((number(&out, 10) - 2.0 * (-3.0f64).exp()).abs() < 1e-5, "{out}\n{err}");
    assert!(!err.contains("E0207"), "{err}");
    // The typed class of the same name as the file's is reported as a duplicate or replaces.
    let (code, out, err) = repl(&[], &format!("{DECAY}{DECAY}:run --stop 1\nx(1)\n"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("defined Decay\nreplaced Decay\n"), "{out}");
    assert!((number(&out, 3) - (-1.0f64).exp()).abs() < 1e-5, "{out}\n{err}");
}

#[test]
fn a_script_file_runs_and_an_unreadable_one_is_a_usage_error() {
    let dir = scratch("script");
    let script = dir.join("s.eqms");
    std::fs::write(&script, ":load examples/decay.eqm\n:run --stop 1\nfinal(x)\n").expect("written");
    let (code, out, err) = repl(&["--script", &script.display().to_string()], "");
    assert_eq!(code, 0, "{err}");
    assert!((number(&out, 2) - (-0.5f64).exp()).abs() < 1e-5, "{out}");
    let (code, _, err) = repl(&["--script", "no/such.eqms"], "");
    assert_eq!(code, 2);
    assert!(err.contains("cannot read no/such.eqms"), "{err}");
    // Files given on the command line are loaded first.
    let (code, out, err) = repl(&["examples/decay.eqm"], ":models\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Decay (model)"), "{out}");
}

/// The transcripts of `docs/repl.md`: in each ```text block after a line `<!-- repl -->`,
/// the lines starting with `> ` are typed (the prompt), the others are the expected standard
/// output; a line `...` stands for any number of lines.
#[test]
fn the_tutorial_transcripts_hold() {
    let doc = std::fs::read_to_string(format!("{}/docs/repl.md", crate::REPO)).expect("docs/repl.md");
    let mut blocks = 0;
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "<!-- repl -->" {
            continue;
        }
        assert_eq!(lines.next().map(str::trim), Some("```text"));
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let input: String = block
            .iter()
            .filter_map(|l| l.strip_prefix("> "))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut expected: Vec<&str> = block.iter().copied().filter(|l| !l.starts_with("> ")).collect();
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let (code, out, err) = repl(&[], &input);
        assert_eq!(code, 0, "{err}");
        assert!(
            matches(&expected, &out.lines().collect::<Vec<_>>()),
            "transcript\n{}\ngave\n{out}\nstderr:\n{err}",
            block.join("\n")
        );
        blocks += 1;
    }
    assert!(blocks >= 3, "docs/repl.md has {blocks} checked transcripts");
}

/// Whether `got` matches `expected`, where `...` matches any run of lines and a line ending in
/// ` ms` is compared up to its number of milliseconds.
fn matches(expected: &[&str], got: &[&str]) -> bool {
    match expected.split_first() {
        None => got.is_empty(),
        Some((&"...", rest)) => (0..=got.len()).any(|i| matches(rest, &got[i..])),
        Some((first, rest)) => got
            .split_first()
            .is_some_and(|(g, more)| same_line(first, g) && matches(rest, more)),
    }
}

fn same_line(expected: &str, got: &str) -> bool {
    let timed = |l: &str| l.find(" in ").filter(|_| l.contains(" ms")).map(|i| l[..i].to_string());
    match (timed(expected), timed(got)) {
        (Some(a), Some(b)) => a == b && expected.rsplit(" ms").next() == got.rsplit(" ms").next(),
        _ => expected.trim_end() == got.trim_end(),
    }
}

/// The REPL on a pseudo-terminal, as a person types: completion with Tab, a class typed over
/// several lines, a plot in the terminal, Ctrl-C at the prompt and during a long run (the rows
/// so far kept, the session alive), Ctrl-D, and the history in the next session.
#[cfg(unix)]
mod terminal {
    use expectrl::{ControlCode, Expect, Session};
    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    fn session(home: &Path) -> impl Expect {
        let mut command = Command::new(env!("CARGO_BIN_EXE_eqm"));
        command
            .args(["repl", "examples/decay.eqm"])
            .current_dir(crate::REPO)
            .env("HOME", home)
            .env("NO_COLOR", "1")
            .env_remove("XDG_STATE_HOME")
            .env_remove("EQM_EDIT_MODE");
        let mut session = Session::spawn(command).expect("a pseudo-terminal");
        session.set_expect_timeout(Some(Duration::from_secs(30)));
        session
    }

    /// Types `line`, waits for `answer` and then for the prompt `prompt`: each line after its
    /// prompt, as the editor reads the terminal's answers while it starts a line, so text typed
    /// ahead may be taken for one.
    fn typed(p: &mut impl Expect, line: &str, answer: &str, prompt: &str) {
        p.send_line(line).expect("typed");
        p.expect(answer)
            .unwrap_or_else(|e| panic!("`{line}` did not answer `{answer}`: {e}"));
        p.expect(prompt)
            .unwrap_or_else(|e| panic!("no prompt `{prompt}` after `{line}`: {e}"));
    }

    #[test]
    fn a_terminal_session_completes_stops_runs_and_keeps_history() {
        let home = super::scratch("terminal");
        let mut p = session(&home);
        p.expect("Decay> ").expect("the prompt names the model");
        // Tab completes the command.
        p.send(":ru\t").expect("typed");
        p.expect(":run ").expect("completed");
        typed(&mut p, "--stop 1", "run1: 101 rows", "Decay> ");
        typed(&mut p, "final(x)", "0.60653", "Decay> ");
        // A class over several lines; the prompt continues it, and the class becomes current.
        typed(&mut p, "model Twice", "", "...> ");
        typed(&mut p, "  Real y(start = 2, fixed = true);", "", "...> ");
        typed(&mut p, "equation der(y) = -y; end Twice;", "defined Twice", "Twice> ");
        typed(&mut p, ":run --stop 1", "rows", "Twice> ");
        typed(&mut p, ":plot y", "time [s]", "Twice> ");
        // Ctrl-C at the prompt drops the line.
        p.send("half a line").expect("typed");
        p.send(ControlCode::EndOfText).expect("Ctrl-C");
        p.expect("Twice> ").expect("the prompt");
        typed(&mut p, "y(1)", "0.73575", "Twice> ");
        // Ctrl-C during a long run stops it and keeps its rows.
        p.send_line(":run --stop 1e6 --solver rk4 --step 1e-5 --interval 1 as long")
            .expect("typed");
        std::thread::sleep(Duration::from_millis(800));
        p.send(ControlCode::EndOfText).expect("Ctrl-C");
        p.expect("interrupted: the").expect("the run stops");
        p.expect("long: ").expect("its rows are kept");
        p.expect("Twice> ").expect("the prompt");
        typed(&mut p, ":runs", "long: ", "Twice> ");
        p.send(ControlCode::EndOfTransmission).expect("Ctrl-D");
        p.expect(expectrl::Eof).expect("Ctrl-D quits");
        let history = std::fs::read_to_string(home.join(".local/state/eqm/history")).expect("a history file");
        assert!(history.contains("final(x)"), "{history}");
        // The next session recalls the last line with the up arrow.
        let mut p = session(&home);
        p.expect("Decay> ").expect("the prompt");
        p.send("\x1b[A").expect("up");
        p.send("\r").expect("enter");
        p.expect("no runs yet")
            .expect("the recalled `:runs` ran in the new session");
        p.send(ControlCode::EndOfTransmission).expect("Ctrl-D");
    }
}

/// A typed class is checked as soon as it is complete: an unknown function is reported at once
/// (with the likeliest name, `sin`, not `sign`), the class is kept and typed again corrected;
/// `:analyze` of a model with an error prints the diagnostic once.
#[test]
fn a_typed_class_is_checked_when_complete_and_each_error_shown_once() {
    let broken = "model Wave
  Real x;
equation
  x = sinn(time);
end Wave;
";
    let script = format!(
        "{broken}:models\n:analyze\nmodel Wave\n  Real x;\nequation\n  x = sin(time);\nend Wave;\n:run --stop 1\n"
    );
    let (code, out, err) = repl(&[], &script);
    assert_eq!(code, 0, "{err}");
    let before_any_command = err.split("note: the class is kept").next().unwrap_or_default();
    assert!(
        before_any_command.contains("sinn"),
        "the error is shown at once:\n{err}"
    );
    assert!(err.contains("did you mean `sin`?"), "{err}");
    assert!(out.contains("defined Wave") && out.contains("replaced Wave"), "{out}");
    assert!(out.contains("Wave (model)"), "the broken class is kept:\n{out}");
    // Once when typed, once for `:analyze`: never twice for one command.
    assert_eq!(err.matches("<input 1>:4:").count(), 2, "{err}");
    assert!(out.contains("run1: 501 rows from t = 0 to 1"), "{out}");
}
