//! Parameter sweeps: one simulation for every combination of parameter values, run on all
//! cores, with a model compiled once.
//!
//! Input: the axes of the sweep ([`SweepAxis`], from `NAME=A:STEP:B` or `NAME=v1,v2,...`), a
//! session with the model's sources, the model options and the run settings. Output: a
//! [`Sweep`] with one [`SweepRun`] per combination (its parameter values, its rows, and how it
//! ended), in the order of [`combinations`] whatever thread ran it, and its notes; it writes
//! itself as one CSV with a column per swept parameter ([`Sweep::write_csv`]).
//!
//! A parameter that is independent of the others changes between runs without recompiling
//! ([`Model::set_parameter`]). A structural parameter (an array size, a range, a condition)
//! cannot: the model is compiled once for each combination of the structural values, and a
//! note says so. Each worker thread runs its own copy of the compiled model (native code is
//! compiled once and shared); a variable-structure model, whose modes are compiled as its runs
//! enter them, runs its combinations one after another. Not done here: IO (the caller writes
//! the CSV wherever it likes), and streaming rows of several runs as they are computed: every
//! run is kept in memory until the sweep ends.

use crate::model::Model;
use crate::results::{Column, CsvWriter, ResultFileInfo, Rows, push_field};
use crate::run::{RunError, RunSettings};
use crate::session::{ModelOptions, Session};
use eqm_diag::text::{format_number, push_number};
use eqm_sim::simulate::Summary;
use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most runs one sweep may ask for: each keeps its rows in memory, and a mistyped step
/// (`0:0.0001:100` for each of three parameters) should be refused rather than run for a day.
pub const MAX_SWEEP_RUNS: usize = 100_000;

/// The stack of a worker thread: evaluation of deeply nested expressions recurses, as on the
/// thread front ends compile on, but a simulation needs far less than the compiler.
const WORKER_STACK: usize = 256 << 20;

/// One swept parameter and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepAxis {
    /// The parameter's full name.
    pub name: String,
    pub values: Vec<f64>,
}

impl SweepAxis {
    /// Reads `NAME=A:STEP:B` (from `A` to `B` in steps of `STEP`, `B` included when a whole
    /// number of steps reaches it; `STEP` negative when `B < A`) or `NAME=v1,v2,...`; `true`
    /// and `false` stand for 1 and 0. The message says what is wrong.
    pub fn parse(text: &str) -> Result<SweepAxis, String> {
        let (name, spec) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not NAME=A:STEP:B or NAME=v1,v2,..."))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("`{text}` names no parameter"));
        }
        let number = |word: &str| -> Result<f64, String> {
            let value = match word.trim() {
                "true" => 1.0,
                "false" => 0.0,
                w => w
                    .parse::<f64>()
                    .map_err(|_| format!("`{w}` in `{text}` is not a number"))?,
            };
            if value.is_finite() {
                Ok(value)
            } else {
                Err(format!("`{}` in `{text}` is not a finite number", word.trim()))
            }
        };
        let values = if spec.contains(':') {
            let parts: Vec<&str> = spec.split(':').collect();
            let [a, step, b] = parts[..] else {
                return Err(format!("`{spec}` in `{text}` is not A:STEP:B"));
            };
            let (a, step, b) = (number(a)?, number(step)?, number(b)?);
            if step == 0.0 || (b - a) * step < 0.0 {
                return Err(format!(
                    "the step {} in `{text}` does not lead from {} to {}",
                    format_number(step),
                    format_number(a),
                    format_number(b)
                ));
            }
            // A little slack, so that 0:0.1:0.3 ends at 0.3 although 0.3/0.1 is 2.9999999999999996.
            let steps = ((b - a) / step + 1e-9).floor();
            if steps + 1.0 > MAX_SWEEP_RUNS as f64 {
                return Err(format!(
                    "`{text}` asks for {} values, more than the {MAX_SWEEP_RUNS} a sweep may run",
                    format_number(steps + 1.0)
                ));
            }
            // Each value from its index, so that rounding does not accumulate along the axis.
            (0..=steps as usize)
                .map(|i| {
                    let v = a + i as f64 * step;
                    if (v - b).abs() <= 1e-9 * step.abs() { b } else { v }
                })
                .collect()
        } else {
            spec.split(',').map(number).collect::<Result<Vec<f64>, String>>()?
        };
        Ok(SweepAxis {
            name: name.to_string(),
            values,
        })
    }
}

/// How many runs the axes ask for (a float: the product may not fit a `usize`); [`sweep`]
/// refuses more than [`MAX_SWEEP_RUNS`].
pub fn run_count(axes: &[SweepAxis]) -> f64 {
    axes.iter().map(|a| a.values.len() as f64).product()
}

/// Every combination of the axes' values, the first axis changing slowest.
pub fn combinations(axes: &[SweepAxis]) -> Vec<Vec<f64>> {
    axes.iter().fold(vec![Vec::new()], |done, axis| {
        done.iter()
            .flat_map(|prefix| {
                axis.values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push(*v);
                    c
                })
            })
            .collect()
    })
}

/// One run of a sweep.
#[derive(Debug)]
pub struct SweepRun {
    /// One value per axis, in the order of [`Sweep::axes`].
    pub values: Vec<f64>,
    /// The names of the result columns of this run (they differ between runs only when a
    /// structural parameter changes the model's variables).
    pub columns: Vec<String>,
    /// The time of each row.
    pub time: Vec<f64>,
    /// Row-major values, one per column: every row computed, also of a run that failed.
    pub rows: Vec<f64>,
    /// How the run ended.
    pub outcome: Result<Summary, RunError>,
}

impl SweepRun {
    /// Where each of `columns` is among this run's columns (`None` for one the run lacks),
    /// through one index of the run's columns rather than a search per column.
    pub(crate) fn positions_of(&self, columns: &[String]) -> Vec<Option<usize>> {
        let index: std::collections::HashMap<&str, usize> =
            self.columns.iter().enumerate().map(|(k, c)| (c.as_str(), k)).collect();
        columns.iter().map(|c| index.get(c.as_str()).copied()).collect()
    }

    /// Every value of variable `name`, one per row.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.columns.iter().position(|c| c == name)?;
        let n = self.columns.len();
        Some(self.rows.iter().skip(k).step_by(n.max(1)).copied().collect())
    }

    /// The value of `name` in the last row.
    pub fn final_value(&self, name: &str) -> Option<f64> {
        self.column(name)?.last().copied()
    }
}

/// The runs of a sweep; see the module documentation.
#[derive(Debug)]
pub struct Sweep {
    pub axes: Vec<SweepAxis>,
    /// One per combination, in the order of [`combinations`].
    pub runs: Vec<SweepRun>,
    /// What the sweep did beyond running (compiling again for a structural parameter).
    pub notes: Vec<String>,
    /// How many times the model was compiled: once, and once more for each combination of
    /// structural values other than those it was first compiled with.
    pub compilations: usize,
    /// How many threads ran the simulations.
    pub threads: usize,
    /// Every variable of any run once, with its unit and description (from the first model
    /// compiled that has it), for the column metadata of result files.
    pub described: Vec<Column>,
    /// What a result file of the sweep says about it: the model and the experiment every run
    /// used.
    pub info: ResultFileInfo,
}

impl Sweep {
    /// The result columns of all runs: those of the first run, then any other run's new ones.
    pub fn columns(&self) -> Vec<String> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut all: Vec<String> = Vec::new();
        for run in &self.runs {
            for c in &run.columns {
                if seen.insert(c.as_str()) {
                    all.push(c.clone());
                }
            }
        }
        all
    }

    /// Writes every run as one CSV table: a header with the swept parameters, `time` and the
    /// [`Sweep::columns`], then each run's rows with its parameter values in front. A column
    /// a run does not have (a structural parameter removed the variable) is empty in its rows.
    pub fn write_csv(&self, out: impl Write) -> io::Result<()> {
        let columns = self.columns();
        let mut names: Vec<String> = self.axes.iter().map(|a| a.name.clone()).collect();
        // CsvWriter writes `time` first; the parameters go in front of it by hand.
        let mut out = io::BufWriter::new(out);
        let mut header = String::new();
        for name in names.drain(..) {
            push_field(&mut header, &name);
            header.push(',');
        }
        let mut buffer = Vec::new();
        CsvWriter::new(&mut buffer, &columns)?;
        out.write_all(header.as_bytes())?;
        out.write_all(&buffer)?;
        let mut line = String::new();
        for run in &self.runs {
            let map = run.positions_of(&columns);
            let width = run.columns.len();
            for (i, t) in run.time.iter().enumerate() {
                line.clear();
                for v in &run.values {
                    push_number(&mut line, *v);
                    line.push(',');
                }
                push_number(&mut line, *t);
                for k in &map {
                    line.push(',');
                    if let Some(k) = k {
                        push_number(&mut line, run.rows[i * width + k]);
                    }
                }
                line.push('\n');
                out.write_all(line.as_bytes())?;
            }
        }
        out.flush()
    }

    /// The first run that failed, if any.
    pub fn first_failure(&self) -> Option<&SweepRun> {
        self.runs.iter().find(|r| r.outcome.is_err())
    }
}

/// Why a sweep did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepError {
    /// The axes cannot be run as given: a parameter named twice, one whose value the model
    /// options already fix, or more combinations than [`MAX_SWEEP_RUNS`]. The message says
    /// which.
    Axes(String),
    /// The model has errors, does not compile, or a swept name is no parameter it can change
    /// (or takes no value of its axis): the diagnostics are in the session.
    Model,
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::Axes(message) => f.write_str(message),
            SweepError::Model => f.write_str("the model has errors"),
        }
    }
}

/// Checks that `axes` can be swept with `options`: each parameter named once, none also given
/// a value in `options.parameters`, and at most [`MAX_SWEEP_RUNS`] combinations.
pub fn check_axes(axes: &[SweepAxis], options: &ModelOptions) -> Result<(), SweepError> {
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|a| a.name == axis.name) {
            return Err(SweepError::Axes(format!("--sweep names `{}` twice", axis.name)));
        }
        if options.parameters.iter().any(|(n, _)| *n == axis.name) {
            return Err(SweepError::Axes(format!(
                "`{}` is given both by --param and by --sweep",
                axis.name
            )));
        }
    }
    let runs = run_count(axes);
    if runs > MAX_SWEEP_RUNS as f64 {
        return Err(SweepError::Axes(format!(
            "the sweep asks for {} runs, more than the {MAX_SWEEP_RUNS} it may run",
            format_number(runs)
        )));
    }
    Ok(())
}

/// The threads a sweep runs on: `threads` when given (at least one), else one per core the
/// system lets this process use.
pub fn thread_count(threads: Option<usize>) -> usize {
    match threads {
        Some(n) => n.max(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Runs every combination of `axes` with `settings` on [`thread_count`]`(threads)` threads;
/// see the module documentation. The axes are checked first ([`check_axes`]). A run without a
/// stop time stops where a single run of the model would ([`Model::with_stop_time`], decided
/// once on the model first compiled, so that every run has the same rows; its note is the
/// sweep's first). [`SweepError::Model`] when the model does not compile or a swept name is
/// no parameter that can change, with the diagnostics in the session.
pub fn sweep(
    session: &mut Session,
    model: Option<&str>,
    options: &ModelOptions,
    axes: &[SweepAxis],
    settings: &RunSettings,
    threads: Option<usize>,
) -> Result<Sweep, SweepError> {
    check_axes(axes, options)?;
    if session.has_errors() {
        return Err(SweepError::Model);
    }
    let threads = thread_count(threads);
    let mut runs: Vec<Option<SweepRun>> = Vec::new();
    let mut failed = None;
    let mut decided: Option<(RunSettings, Option<String>)> = None;
    let mut info = ResultFileInfo::default();
    let mut described: Vec<Column> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let groups = for_each_group(
        session,
        model,
        options,
        axes,
        &mut |mut model, structural, combos, members| {
            if runs.is_empty() {
                runs = (0..combos.len()).map(|_| None).collect();
            }
            let first_group = decided.is_none();
            let (settings, _) = decided.get_or_insert_with(|| model.with_stop_time(settings));
            if first_group {
                info = model.result_file_info(settings);
            }
            let columns = match model.columns(settings.variables.as_deref()) {
                Ok(c) => c,
                Err(d) => {
                    failed = Some(d);
                    return false;
                }
            };
            described.extend(columns.iter().filter(|c| seen.insert(c.name.clone())).cloned());
            for (i, run) in run_group(model, &columns, axes, structural, combos, members, settings, threads) {
                runs[i] = Some(run);
            }
            true
        },
    );
    if let Some(d) = failed {
        session.push_diagnostic(d);
        return Err(SweepError::Model);
    }
    let (compilations, mut notes) = groups.ok_or(SweepError::Model)?;
    if let Some((_, Some(note))) = decided {
        notes.insert(0, note);
    }
    Ok(Sweep {
        axes: axes.to_vec(),
        runs: runs.into_iter().flatten().collect(),
        notes,
        compilations,
        threads,
        described,
        info,
    })
}

/// The model compiled for each group of combinations of the sweep `axes` that share the values
/// of the structural axes (one group when none is structural), handed to `each` with the
/// structural axes' indices, every combination and the group's members; `each` returns
/// whether to go on. The values of the other axes are checked against the model first (a
/// parameter it does not have, a value it cannot take), as diagnostics of the session. Returns
/// the number of compilations and the notes that say which parameters were structural; `None`
/// after a diagnostic or when `each` stopped. The caller sets the non-structural values of
/// each member itself, without recompiling.
#[allow(clippy::type_complexity)]
pub(crate) fn for_each_group(
    session: &mut Session,
    model: Option<&str>,
    options: &ModelOptions,
    axes: &[SweepAxis],
    each: &mut dyn FnMut(Model, &[usize], &[Vec<f64>], &[usize]) -> bool,
) -> Option<(usize, Vec<String>)> {
    let mut base = session.compile(model, options)?;
    // Which axes shape the model: those change only by compiling again.
    let mut structural = Vec::new();
    for (index, axis) in axes.iter().enumerate() {
        let info = base.parameters().into_iter().find(|p| p.name == axis.name);
        match info {
            Some(p) if p.structural => structural.push(index),
            _ => {
                // The model's own check names an unknown or dependent parameter, and a value
                // it cannot take (an Integer parameter set to 0.5), before anything runs.
                for value in &axis.values {
                    if let Err(d) = base.set_parameter(&axis.name, *value) {
                        session.push_diagnostic(d);
                        return None;
                    }
                }
            }
        }
    }
    base.reset();
    let combos = combinations(axes);
    let mut notes = Vec::new();
    // The combinations grouped by their structural values, each group with its model.
    let mut groups: Vec<(Vec<f64>, Vec<usize>)> = Vec::new();
    for (i, c) in combos.iter().enumerate() {
        let key: Vec<f64> = structural.iter().map(|&k| c[k]).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    // The model compiled first serves the group whose structural values it was compiled with.
    let parameters = base.parameters();
    let base_key: Vec<Option<f64>> = structural
        .iter()
        .map(|&k| parameters.iter().find(|p| p.name == axes[k].name).and_then(|p| p.value))
        .collect();
    let mut compilations = 1;
    let mut base = Some(base);
    for (key, members) in &groups {
        let reuse = key.iter().zip(&base_key).all(|(v, b)| Some(*v) == *b);
        let model = match base.take_if(|_| reuse) {
            Some(model) => model,
            None => {
                let mut compile_options = options.clone();
                for (&k, value) in structural.iter().zip(key) {
                    compile_options.parameters.retain(|(n, _)| *n != axes[k].name);
                    compile_options.parameters.push((axes[k].name.clone(), *value));
                }
                compilations += 1;
                session.compile(model, &compile_options)?
            }
        };
        if !each(model, &structural, &combos, members) {
            return None;
        }
    }
    if !structural.is_empty() {
        let names: Vec<String> = structural.iter().map(|&k| format!("`{}`", axes[k].name)).collect();
        let which = if names.len() == 1 {
            format!("its {} values", groups.len())
        } else {
            format!("the {} combinations of their values", groups.len())
        };
        notes.push(format!(
            "{} shape{} the model's structure: the model is compiled for each of {which} ({compilations} compilations in all)",
            names.join(", "),
            if names.len() == 1 { "s" } else { "" },
        ));
    }
    Some((compilations, notes))
}

/// Runs the combinations `members` of one compiled model: the first on the model itself, so
/// that its native code and Jacobian exist before it is copied, then the rest on one copy per
/// thread, each thread taking the next combination not yet taken.
#[allow(clippy::too_many_arguments)]
fn run_group(
    mut model: Model,
    columns: &[crate::results::Column],
    axes: &[SweepAxis],
    structural: &[usize],
    combos: &[Vec<f64>],
    members: &[usize],
    settings: &RunSettings,
    threads: usize,
) -> Vec<(usize, SweepRun)> {
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let one = |model: &mut Model, i: usize| -> SweepRun {
        let values = combos[i].clone();
        let mut rows = Rows::default();
        // The values were checked before the sweep started, so setting them fails only if
        // the model changed under it; such a run reports the diagnostic instead of running.
        let set = axes
            .iter()
            .enumerate()
            .filter(|(k, _)| !structural.contains(k))
            .try_for_each(|(k, axis)| model.set_parameter(&axis.name, values[k]));
        let outcome = match set {
            Ok(()) => model.run_into(settings, columns, &mut rows).map(|r| r.summary),
            Err(d) => Err(RunError::Model(Box::new(d))),
        };
        let (time, rows) = rows.into_parts();
        SweepRun {
            values,
            columns: names.clone(),
            time,
            rows,
            outcome,
        }
    };
    let Some((&first, rest)) = members.split_first() else {
        return Vec::new();
    };
    let mut done = vec![(first, one(&mut model, first))];
    let workers: Vec<Model> = if rest.is_empty() {
        Vec::new()
    } else {
        (0..threads.min(rest.len())).map_while(|_| model.duplicate()).collect()
    };
    if workers.is_empty() {
        // A variable-structure model cannot be copied: its runs go one after another.
        done.extend(rest.iter().map(|&i| (i, one(&mut model, i))));
        return done;
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(rest.len()));
    std::thread::scope(|scope| {
        for mut worker in workers {
            let (next, results, one) = (&next, &results, &one);
            let spawned = std::thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    loop {
                        let taken = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = rest.get(taken) else { break };
                        let run = one(&mut worker, i);
                        // A poisoned lock means another worker panicked; its runs are lost
                        // either way, this one is kept.
                        results.lock().unwrap_or_else(|e| e.into_inner()).push((i, run));
                    }
                });
            // A thread that cannot be started leaves its share to the others.
            drop(spawned);
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    // Combinations no thread took (none could be started) run here.
    let mut taken = vec![false; combos.len()];
    for (i, _) in &results {
        taken[*i] = true;
    }
    for &i in rest {
        if !taken[i] {
            results.push((i, one(&mut model, i)));
        }
    }
    done.extend(results);
    done
}
