//! The conformance run of the Modelica Standard Library's examples against the Modelica
//! Association's reference results (not a benchmark of `cargo bench` and not a test of `cargo
//! test`: it takes minutes). `docs/msl.md` says how to run it.
//!
//! Input: the library's directory (given to each run as `MODELICAPATH`), the directory of
//! reference results (one folder per example, named by its class path, with
//! `comparisonSignals.txt` and `<Name>.csv.gz`), and the `eqm` binary. For each example it runs
//! `eqm run --model <Class> --out <work>/<Class>.csv` with a time limit, on all cores, then
//! `eqm compare` of that result against the reference with the example's signal list. Each run
//! works in `<work>`, so the files an example writes itself stay there. Output: a
//! Markdown table per package on standard output (examples, ran, matched, without reference,
//! the run time) and a file with one line per example: its class, its outcome, the seconds of
//! its run and the first reason it did not match. It judges nothing itself: `eqm compare` does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: msl_conformance --msl DIR --reference DIR [--eqm PATH] [--jobs N] \
                     [--time-limit SECONDS] [--work DIR] [--outcomes FILE] [--only CLASS-PREFIX]...";

/// The command line of the conformance run.
struct Options {
    msl: PathBuf,
    reference: PathBuf,
    eqm: PathBuf,
    jobs: usize,
    time_limit: Duration,
    work: PathBuf,
    outcomes: Option<PathBuf>,
    only: Vec<String>,
}

/// One example: its class path and its folder of reference results.
struct Example {
    class: String,
    folder: PathBuf,
}

/// How an example fared.
#[derive(Clone, PartialEq)]
enum Status {
    Matched,
    /// It ran, but the comparison failed or could not be made.
    Mismatch(String),
    /// It ran; there is no reference trajectory to compare with.
    NoReference,
    /// `eqm run` failed (the first error line).
    RunFailed(String),
    /// `eqm run` did not finish within the time limit.
    Timeout,
}

impl Status {
    fn ran(&self) -> bool {
        matches!(self, Status::Matched | Status::Mismatch(_) | Status::NoReference)
    }

    fn label(&self) -> &'static str {
        match self {
            Status::Matched => "matched",
            Status::Mismatch(_) => "mismatch",
            Status::NoReference => "no-reference",
            Status::RunFailed(_) => "run-failed",
            Status::Timeout => "timeout",
        }
    }

    fn reason(&self) -> &str {
        match self {
            Status::Mismatch(reason) | Status::RunFailed(reason) => reason,
            Status::Timeout => "the run exceeded the time limit",
            Status::NoReference => "no reference trajectory",
            Status::Matched => "",
        }
    }
}

fn main() -> ExitCode {
    let mut options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let examples = match find_examples(&options.reference, &options.only) {
        Ok(examples) => examples,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&options.work) {
        eprintln!("error: cannot create {}: {e}", options.work.display());
        return ExitCode::from(2);
    }
    // Each run works in the work directory, where the files an example writes (the FFT
    // examples' result files) land beside its result instead of where the run was started;
    // the paths it is given are made absolute for that.
    for path in [&mut options.work, &mut options.msl, &mut options.eqm] {
        if let Ok(absolute) = std::fs::canonicalize(&*path) {
            *path = absolute;
        }
    }
    eprintln!(
        "{} examples, {} at a time, {} s each at most",
        examples.len(),
        options.jobs,
        options.time_limit.as_secs_f64()
    );
    let started = Instant::now();
    let outcomes = run_all(&options, &examples);
    print_tables(&examples, &outcomes);
    println!("\nwall time {:.1} s", started.elapsed().as_secs_f64());
    let path = options
        .outcomes
        .clone()
        .unwrap_or_else(|| options.work.join("outcomes.txt"));
    let mut text = String::new();
    for (example, (status, seconds)) in examples.iter().zip(&outcomes) {
        text.push_str(&format!(
            "{}\t{}\t{seconds:.2}\t{}\n",
            example.class,
            status.label(),
            status.reason()
        ));
    }
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("error: cannot write {}: {e}", path.display());
        return ExitCode::from(2);
    }
    eprintln!("the outcome of each example is in {}", path.display());
    ExitCode::SUCCESS
}

/// Reads the command line.
fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut msl = None;
    let mut reference = None;
    let mut eqm = PathBuf::from("target/release/eqm");
    let mut jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut time_limit = Duration::from_secs(120);
    let mut work = std::env::temp_dir().join("eqm-msl-conformance");
    let mut outcomes = None;
    let mut only = Vec::new();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--msl" => msl = Some(PathBuf::from(value()?)),
            "--reference" => reference = Some(PathBuf::from(value()?)),
            "--eqm" => eqm = PathBuf::from(value()?),
            "--jobs" => {
                jobs = value()?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--jobs takes a positive number")?;
            }
            "--time-limit" => {
                let seconds: f64 = value()?
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or("--time-limit takes a positive number of seconds")?;
                time_limit = Duration::from_secs_f64(seconds);
            }
            "--work" => work = PathBuf::from(value()?),
            "--outcomes" => outcomes = Some(PathBuf::from(value()?)),
            "--only" => only.push(value()?),
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    Ok(Options {
        msl: msl.ok_or("--msl is required")?,
        reference: reference.ok_or("--reference is required")?,
        eqm,
        jobs,
        time_limit,
        work,
        outcomes,
        only,
    })
}

/// Every folder under `root` with a `comparisonSignals.txt`, as an example whose class path is
/// the folder's path, sorted by class; only those starting with one of `only`, if given.
fn find_examples(root: &Path, only: &[String]) -> Result<Vec<Example>, String> {
    let mut examples = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            }
        }
        if dir.join("comparisonSignals.txt").is_file() {
            let relative = dir.strip_prefix(root).expect("a folder under the root");
            let class: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let class = class.join(".");
            if only.is_empty() || only.iter().any(|prefix| class.starts_with(prefix.as_str())) {
                examples.push(Example { class, folder: dir });
            }
        }
    }
    examples.sort_by(|a, b| a.class.cmp(&b.class));
    if examples.is_empty() {
        return Err(format!(
            "no example (a folder with comparisonSignals.txt) under {}",
            root.display()
        ));
    }
    Ok(examples)
}

/// Runs and compares every example on `options.jobs` threads; each example's status and the
/// seconds its run took, in the order of `examples`.
fn run_all(options: &Options, examples: &[Example]) -> Vec<(Status, f64)> {
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(vec![(Status::Timeout, 0.0); examples.len()]);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.min(examples.len()) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(example) = examples.get(index) else { break };
                    let outcome = run_example(options, example);
                    eprintln!("{:<12} {:>7.2} s  {}", outcome.0.label(), outcome.1, example.class);
                    outcomes.lock().expect("no worker panics holding the lock")[index] = outcome;
                }
            });
        }
    });
    outcomes.into_inner().expect("no worker panicked")
}

/// Runs one example and compares its result with the reference.
fn run_example(options: &Options, example: &Example) -> (Status, f64) {
    let result = options.work.join(format!("{}.csv", example.class));
    let log = options.work.join(format!("{}.log", example.class));
    let started = Instant::now();
    let run = match run_with_limit(options, &example.class, &result, &log) {
        Ok(run) => run,
        Err(message) => return (Status::RunFailed(message), started.elapsed().as_secs_f64()),
    };
    let seconds = started.elapsed().as_secs_f64();
    match run {
        None => return (Status::Timeout, seconds),
        Some(false) => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let first = text
                .lines()
                .find(|l| l.starts_with("error"))
                .or_else(|| text.lines().next())
                .unwrap_or("eqm run failed without a message");
            return (Status::RunFailed(first.to_string()), seconds);
        }
        Some(true) => {}
    }
    let name = example.class.rsplit('.').next().unwrap_or(&example.class);
    let reference = example.folder.join(format!("{name}.csv.gz"));
    if !reference.is_file() {
        return (Status::NoReference, seconds);
    }
    (compare(options, example, &result, &reference), seconds)
}

/// Runs `eqm run` of `class` into `result` with its standard error in `log`: `Some(success)`,
/// or `None` when it was stopped at the time limit.
fn run_with_limit(options: &Options, class: &str, result: &Path, log: &Path) -> Result<Option<bool>, String> {
    let stderr = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = Command::new(&options.eqm)
        .args(["run", "--model", class, "--out"])
        .arg(result)
        .env("MODELICAPATH", &options.msl)
        .current_dir(&options.work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", options.eqm.display()))?;
    let deadline = Instant::now() + options.time_limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status.success())),
            Ok(None) if Instant::now() >= deadline => {
                // The child is ours; stopping it and reaping it leaves no process behind.
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for eqm run: {e}")),
        }
    }
}

/// `eqm compare` of a result against the reference with the example's signal list.
fn compare(options: &Options, example: &Example, result: &Path, reference: &Path) -> Status {
    let output = Command::new(&options.eqm)
        .arg("compare")
        .arg(result)
        .arg(reference)
        .arg("--signals")
        .arg(example.folder.join("comparisonSignals.txt"))
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) => return Status::Mismatch(format!("cannot start eqm compare: {e}")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Status::Matched,
        Some(1) => Status::Mismatch(stdout.lines().find(|l| l.starts_with("FAIL")).map_or_else(
            || "eqm compare failed".to_string(),
            |l| l.split_whitespace().collect::<Vec<_>>().join(" "),
        )),
        _ => Status::Mismatch(format!(
            "eqm compare: {}",
            stderr.lines().next().unwrap_or("stopped without a message")
        )),
    }
}

/// The package an example is counted under: the first three parts of its class path
/// (`Modelica.Electrical.Analog`, `Modelica.Blocks.Examples`).
fn package_of(class: &str) -> String {
    class.split('.').take(3).collect::<Vec<_>>().join(".")
}

/// Prints the table of every package and the total.
fn print_tables(examples: &[Example], outcomes: &[(Status, f64)]) {
    #[derive(Default)]
    struct Row {
        examples: usize,
        ran: usize,
        matched: usize,
        no_reference: usize,
        seconds: f64,
    }
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut total = Row::default();
    for (example, (status, seconds)) in examples.iter().zip(outcomes) {
        let row = rows.entry(package_of(&example.class)).or_default();
        for row in [row, &mut total] {
            row.examples += 1;
            row.ran += usize::from(status.ran());
            row.matched += usize::from(*status == Status::Matched);
            row.no_reference += usize::from(*status == Status::NoReference);
            row.seconds += seconds;
        }
    }
    println!("| package | examples | ran | matched | no reference | run time (s) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let line = |package: &str, row: &Row| {
        println!(
            "| {package} | {} | {} | {} | {} | {:.1} |",
            row.examples, row.ran, row.matched, row.no_reference, row.seconds
        );
    };
    for (package, row) in &rows {
        line(package, row);
    }
    line("total", &total);
}
