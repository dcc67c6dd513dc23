//! The colon commands of the REPL: each parses its arguments, calls the library and prints.

use super::help::{COMMANDS, help, print_clap, words};
use super::{Repl, Run};
use crate::args::{AnalyzeArgs, parse_param};
use crate::commands::analyze;
use crate::plot;
use crate::termplot;
use clap::Parser;
use eqm::input::did_you_mean;
use eqm::{GraphView, SimulationResult};
use std::path::{Path, PathBuf};

/// `:analyze`'s options: those of `eqm analyze`.
#[derive(Parser)]
#[command(
    name = ":analyze",
    no_binary_name = true,
    disable_version_flag = true,
    about = "Analyse the current model with the options of `eqm analyze`, with the parameter values set"
)]
struct AnalyzeLine {
    #[command(flatten)]
    analyze: AnalyzeArgs,
}

impl Repl {
    /// Runs the command `line` (without its colon).
    pub(crate) fn command(&mut self, line: &str) {
        let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let args = words(rest);
        match name {
            "load" | "l" => self.load(&args),
            "reload" | "r" => {
                self.rebuild();
                println!("reloaded {} file(s)", self.files.len());
            }
            "models" => self.models(),
            "use" => self.use_model(&args),
            "check" => self.check(),
            "flatten" => self.flatten(),
            "explain" => self.explain(&args),
            "analyze" => match AnalyzeLine::try_parse_from(&args) {
                Ok(line) => {
                    let options = self.options();
                    // The analysis prints the session's diagnostics; they are not kept for
                    // the next command.
                    analyze::run(
                        &mut self.session,
                        self.current.as_deref(),
                        &line.analyze,
                        options,
                        self.color,
                        self.timings,
                    );
                    self.session.take_diagnostics();
                }
                Err(e) => print_clap(&e),
            },
            "run" => self.run(args),
            "set" => {
                if args.is_empty() {
                    return eprintln!("error: `:set` needs NAME=VALUE");
                }
                for arg in &args {
                    self.set(arg);
                }
            }
            "unset" => self.unset(&args),
            "show" => match args.as_slice() {
                [name] => self.show(name),
                _ => eprintln!("error: `:show` needs one name"),
            },
            "params" => self.params(),
            "vars" => self.vars(),
            "value" => self.value(&args),
            "stats" => self.stats(args.first().map_or("last", String::as_str)),
            "runs" => self.list_runs(),
            "compare" => match args.as_slice() {
                [name, a, b] => self.compare(name, a, b),
                _ => eprintln!("error: `:compare` needs a variable and two runs: `:compare x base last`"),
            },
            "save" => match args.as_slice() {
                [file] => self.save("last", Path::new(file)),
                [run, file] => self.save(run, Path::new(file)),
                _ => eprintln!("error: `:save` needs [RUN] FILE.csv"),
            },
            "sweep" => self.sweep(&args),
            "plot" | "p" => self.plot(rest),
            "help" | "h" | "?" => help(args.first().map(String::as_str)),
            "quit" | "q" | "exit" => self.quit = true,
            "" => eprintln!("error: a command follows the colon; `:help` lists them"),
            other => {
                let names = COMMANDS.iter().map(|c| c.name);
                match did_you_mean(other, names) {
                    Some(close) => eprintln!("error: unknown command `:{other}`; did you mean `:{close}`?"),
                    None => eprintln!("error: unknown command `:{other}`; `:help` lists the commands"),
                }
            }
        }
    }

    /// `:load FILE...`: adds the files and lists the session's models.
    fn load(&mut self, args: &[String]) {
        if args.is_empty() {
            return eprintln!("error: `:load` needs one or more files");
        }
        let files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
        self.load_files(&files);
        let models: Vec<String> = self.session.models().into_iter().map(|m| m.name).collect();
        println!(
            "models: {}",
            if models.is_empty() {
                "none".to_string()
            } else {
                models.join(", ")
            }
        );
    }

    fn check(&mut self) {
        let options = self.options();
        if let Some(c) = self.session.check(self.current.as_deref(), &options) {
            println!(
                "{}: {} variables, {} equations: no errors",
                c.model, c.variables, c.equations
            );
        }
        self.report();
    }

    fn flatten(&mut self) {
        let options = self.options();
        if let Some(flat) = self.session.flatten(self.current.as_deref(), &options) {
            print!("{}", flat.print());
        }
        self.report();
    }

    fn models(&self) {
        let models = self.session.models();
        if models.is_empty() {
            println!("no models loaded; `:load FILE` or type one");
        }
        for m in models {
            match m.description {
                Some(d) => println!("{} ({}): {d}", m.name, m.kind),
                None => println!("{} ({})", m.name, m.kind),
            }
        }
    }

    fn use_model(&mut self, args: &[String]) {
        let [name] = args else {
            return eprintln!("error: `:use` needs one model name");
        };
        let models: Vec<String> = self.session.models().into_iter().map(|m| m.name).collect();
        // A model of the library is checked when it is compiled.
        if !models.contains(name) && !name.contains('.') {
            return match did_you_mean(name, models.iter().map(String::as_str)) {
                Some(close) => eprintln!("error: no model `{name}`; did you mean `{close}`?"),
                None => eprintln!("error: no model `{name}`; `:models` lists them"),
            };
        }
        if self.current.as_ref() != Some(name) {
            self.forget_changes();
        }
        self.current = Some(name.clone());
        if name.contains('.') && !models.contains(name) {
            // A library model: the session needs its package.
            self.rebuild();
        }
        println!("using {name}");
    }

    fn explain(&mut self, args: &[String]) {
        let mut options = self.options();
        let mut steps = false;
        for arg in args {
            match arg.as_str() {
                "--steps" => steps = true,
                "--keep-aliases" => options.keep_aliases = true,
                other => return eprintln!("error: `:explain` takes --steps and --keep-aliases, not `{other}`"),
            }
        }
        if let Some((analysis, mut text)) = self.session.analyze_explained(self.current.as_deref(), &options) {
            if steps {
                text.push('\n');
                text.push_str(&GraphView::new(&analysis).steps());
            }
            print!("{text}");
        }
        self.report();
    }

    /// The changes from the model's values: `k=2, x0=1`.
    pub(super) fn changes(&self) -> String {
        self.structural
            .iter()
            .chain(&self.parameters)
            .chain(&self.starts)
            .map(|(n, v)| format!("{n}={}", eqm::format_number(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `:set NAME=VALUE`: a parameter without recompiling, a structural one by compiling
    /// again, a start value otherwise.
    fn set(&mut self, arg: &str) {
        let (name, value) = match parse_param(arg) {
            Ok(p) => p,
            Err(message) => return eprintln!("error: {message}"),
        };
        let Some(model) = self.compiled() else { return };
        let parameter = model.parameters().into_iter().find(|p| p.name == name);
        match parameter {
            Some(p) if p.structural => {
                let before = std::mem::take(&mut self.structural);
                self.structural = before.iter().filter(|(n, _)| *n != name).cloned().collect();
                self.structural.push((name.clone(), value));
                self.model = None;
                if self.compiled().is_some() {
                    println!(
                        "{name} = {} (structural: the model was compiled again)",
                        eqm::format_number(value)
                    );
                } else {
                    self.structural = before;
                    self.model = None;
                    eprintln!("error: {name} = {value} was not applied");
                }
            }
            Some(_) => {
                let result = model.set_parameter(&name, value);
                self.applied(result, false, name, value);
            }
            None => {
                let result = model.set_start(&name, value);
                self.applied(result, true, name, value);
            }
        }
    }

    /// Remembers a parameter value (a start value when `start`) the model took, so that it
    /// is set again after compiling, or reports why the model refused it.
    fn applied(&mut self, result: Result<(), eqm::Diagnostic>, start: bool, name: String, value: f64) {
        if let Err(d) = result {
            self.session.push_diagnostic(d);
            self.report();
            return;
        }
        let (list, label) = if start {
            (&mut self.starts, "start value of ")
        } else {
            (&mut self.parameters, "")
        };
        list.retain(|(n, _)| *n != name);
        println!("{label}{name} = {}", eqm::format_number(value));
        list.push((name, value));
    }

    /// `:unset [NAME...]`.
    fn unset(&mut self, names: &[String]) {
        let keep = |(n, _): &(String, f64)| !names.is_empty() && !names.contains(n);
        let structural = self.structural.len();
        self.structural.retain(keep);
        self.parameters.retain(keep);
        self.starts.retain(keep);
        if structural != self.structural.len() {
            println!("the model will be compiled again without the structural change");
        }
        self.model = None;
        println!(
            "changes now: {}",
            if self.changes().is_empty() {
                "none".to_string()
            } else {
                self.changes()
            }
        );
    }

    fn show(&mut self, name: &str) {
        let last = self.runs.last().map(|r| &r.result);
        let final_value = last.and_then(|r| r.final_value(name));
        let Some(model) = self.compiled() else { return };
        if let Some(p) = model.parameters().into_iter().find(|p| p.name == name) {
            let value = p
                .value
                .map_or("(computed from other parameters)".to_string(), eqm::format_number);
            let kind = if p.structural {
                "structural parameter"
            } else {
                "parameter"
            };
            println!(
                "{name} = {value}{}  {kind}{}",
                unit(p.unit.as_deref()),
                describe(p.description.as_deref())
            );
            return;
        }
        if let Some(v) = model.variables().into_iter().find(|v| v.name == name) {
            let value = final_value.map_or(String::new(), |x| {
                format!(" = {} at the end of the last run", eqm::format_number(x))
            });
            println!(
                "{name}{value}{}  {:?}{}",
                unit(v.unit.as_deref()),
                v.kind,
                describe(v.description.as_deref())
            );
            return;
        }
        let names: Vec<String> = model.variables().into_iter().map(|v| v.name).collect();
        match did_you_mean(name, names.iter().map(String::as_str)) {
            Some(close) => eprintln!("error: the model has no `{name}`; did you mean `{close}`?"),
            None => eprintln!("error: the model has no `{name}`"),
        }
    }

    fn params(&mut self) {
        let Some(model) = self.compiled() else { return };
        for p in model.parameters() {
            let value = p.value.map_or("(computed)".to_string(), eqm::format_number);
            let structural = if p.structural { "  (structural)" } else { "" };
            println!(
                "{} = {value}{}{structural}{}",
                p.name,
                unit(p.unit.as_deref()),
                describe(p.description.as_deref())
            );
        }
    }

    fn vars(&mut self) {
        let Some(model) = self.compiled() else { return };
        for v in model.variables() {
            if v.kind == eqm::VariableKind::Parameter {
                continue;
            }
            println!(
                "{}{}  {:?}{}",
                v.name,
                unit(v.unit.as_deref()),
                v.kind,
                describe(v.description.as_deref())
            );
        }
    }

    /// `:value NAME at T [in RUN]`.
    fn value(&self, args: &[String]) {
        let (name, t, run) = match args {
            [name, at, t] if at == "at" => (name, t, "last"),
            [name, at, t, inn, run] if at == "at" && inn == "in" => (name, t, run.as_str()),
            _ => return eprintln!("error: `:value` needs NAME at T [in RUN]: `:value x at 2.5`"),
        };
        let Ok(t) = t.parse::<f64>() else {
            return eprintln!("error: `{t}` is not a time");
        };
        let Some(run) = self.find_run(run) else { return };
        let parameters = [];
        let text = format!("{name}({t})");
        self.evaluate_in(run, &parameters, &text);
    }

    /// Evaluates `text` over `run`, printing the value or the message.
    fn evaluate_in(&self, run: &Run, parameters: &[(String, f64)], text: &str) {
        let Ok(expr) = eqm::input::parse_expression(text) else {
            return eprintln!("error: `{text}` is not a variable name");
        };
        let scope = super::eval::Scope {
            run: Some(&run.result),
            parameters,
            text,
        };
        match scope.eval(&expr) {
            Ok(v) => println!("{}", eqm::format_number(v)),
            Err(message) => eprintln!("error: {message}"),
        }
    }

    fn find_run(&self, name: &str) -> Option<&Run> {
        let run = self.run_named(name);
        if run.is_none() {
            if self.runs.is_empty() {
                eprintln!("error: there is no run yet: simulate with `:run` first");
            } else {
                let names: Vec<&str> = self.runs.iter().map(|r| r.name.as_str()).collect();
                eprintln!("error: no run `{name}`; the runs are {} (and `last`)", names.join(", "));
            }
        }
        run
    }

    fn stats(&self, name: &str) {
        let Some(run) = self.find_run(name) else { return };
        let Some(report) = &run.report else {
            return println!(
                "{}: {} rows; the run did not finish, so it has no statistics",
                run.name,
                run.result.len()
            );
        };
        let s = &report.summary;
        println!("{}: {} rows by the {}", run.name, s.rows, s.backend);
        println!(
            "steps: {} accepted, {} rejected; {} right-hand-side evaluations",
            s.stats.steps, s.stats.rejected, s.stats.rhs_evals
        );
        if s.stats.jacobians > 0 {
            println!(
                "Jacobians: {}, LU factorisations: {}",
                s.stats.jacobians, s.stats.factorizations
            );
        }
        println!("events: {}", s.events.events);
        let ms = |d: std::time::Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
        println!(
            "time: jacobian {}, jit compile {}, simulate {}",
            ms(report.jacobian_time),
            ms(report.compile_time),
            ms(report.simulate_time)
        );
        for t in self.session.timings().stages() {
            println!("session {}: {}", t.stage, ms(t.time));
        }
    }

    fn list_runs(&self) {
        if self.runs.is_empty() {
            return println!("no runs yet");
        }
        for run in &self.runs {
            let t = run.result.time();
            let span = match (t.first(), t.last()) {
                (Some(a), Some(b)) => format!("t = {} to {}", eqm::format_number(*a), eqm::format_number(*b)),
                _ => "no rows".to_string(),
            };
            let changes = if run.changes.is_empty() {
                String::new()
            } else {
                format!(" ({})", run.changes)
            };
            println!("{}: {} rows, {span}{changes}", run.name, run.result.len());
        }
    }

    /// `:compare x a b`: the values of `x` in both runs at eleven times common to both, and
    /// at their ends.
    fn compare(&self, name: &str, a: &str, b: &str) {
        let (Some(ra), Some(rb)) = (self.find_run(a), self.find_run(b)) else {
            return;
        };
        for run in [ra, rb] {
            if run.result.column_index(name).is_none() {
                return eprintln!("error: run {} has no variable `{name}`", run.name);
            }
        }
        let span = |r: &SimulationResult| (r.time().first().copied(), r.time().last().copied());
        let ((Some(a0), Some(a1)), (Some(b0), Some(b1))) = (span(&ra.result), span(&rb.result)) else {
            return eprintln!("error: a run without rows cannot be compared");
        };
        let (t0, t1) = (a0.max(b0), a1.min(b1));
        println!("{:>12} {:>14} {:>14} {:>14}", "time", ra.name, rb.name, "difference");
        let line = |label: String, x: Option<f64>, y: Option<f64>| {
            let f = |v: Option<f64>| v.map_or("-".to_string(), short);
            let d = x.zip(y).map(|(x, y)| y - x);
            println!("{label:>12} {:>14} {:>14} {:>14}", f(x), f(y), f(d));
        };
        if t1 >= t0 {
            for i in 0..=10 {
                let t = if i == 10 { t1 } else { t0 + (t1 - t0) * i as f64 / 10.0 };
                line(
                    eqm::format_number(t),
                    ra.result.value_at(name, t),
                    rb.result.value_at(name, t),
                );
            }
        }
        line(
            "final".to_string(),
            ra.result.final_value(name),
            rb.result.final_value(name),
        );
    }

    fn save(&self, run: &str, path: &Path) {
        let Some(run) = self.find_run(run) else { return };
        write_result(&run.result, &run.info, path);
    }

    /// `:plot a, b [over x] [in RUN] [> FILE]`.
    fn plot(&self, rest: &str) {
        let (rest, file) = match rest.split_once('>') {
            Some((r, f)) => (r, Some(f.trim())),
            None => (rest, None),
        };
        let (rest, run) = match rest.split_once(" in ") {
            Some((r, run)) => (r, run.trim()),
            None => (rest, "last"),
        };
        let (rest, over) = match rest.split_once(" over ") {
            Some((r, x)) => (r, Some(x.trim())),
            None => (rest, None),
        };
        let names: Vec<String> = rest
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            return eprintln!("error: `:plot` needs variables: `:plot x, v`");
        }
        let Some(run) = self.find_run(run) else { return };
        match file {
            Some(path) if !path.is_empty() => {
                let path = Path::new(path);
                if path.extension().is_none_or(|e| e != "svg" && e != "png") {
                    return eprintln!("error: {}: a plot file must end in .svg or .png", path.display());
                }
                match series(&run.result, &names, over).and_then(|s| plot::write(&s, path)) {
                    Ok(()) => println!("wrote {}", path.display()),
                    Err(e) => eprintln!("error: no plot written: {e}"),
                }
            }
            _ => {
                let (width, height) = self.terminal.unwrap_or_else(termplot::terminal_size);
                let height = height.saturating_sub(2).max(8);
                let drawn = match over {
                    None => series(&run.result, &names, None).map(|s| termplot::render(&s, width, height)),
                    Some(x) => series(&run.result, &[x.to_string()], None).and_then(|xs| {
                        let ys = series(&run.result, &names, None)?;
                        Ok(ys
                            .iter()
                            .map(|y| termplot::render_xy(&xs[0], y, width, height))
                            .collect())
                    }),
                };
                match drawn {
                    Ok(text) => print!("{text}"),
                    Err(message) => eprintln!("error: {message}"),
                }
            }
        }
    }
}

/// Gives `model` back the parameter and start values the session keeps, after a run with
/// values of its own.
pub(super) fn restore(model: &mut eqm::Model, parameters: &[(String, f64)], starts: &[(String, f64)]) {
    model.reset();
    // These values were accepted before, so the model accepts them again.
    for (n, v) in parameters {
        let _ = model.set_parameter(n, *v);
    }
    for (n, v) in starts {
        let _ = model.set_start(n, *v);
    }
}

/// The series of `names` in `result`, over time or over the variable `over`.
pub(super) fn series(
    result: &SimulationResult,
    names: &[String],
    over: Option<&str>,
) -> Result<Vec<plot::Series>, String> {
    let column = |name: &str| {
        result
            .column(name)
            .ok_or_else(|| format!("the run has no variable `{name}`"))
    };
    let x = match over {
        Some(x) => column(x)?,
        None => result.time().to_vec(),
    };
    names
        .iter()
        .map(|name| {
            let values = column(name)?;
            let unit = result
                .columns()
                .iter()
                .find(|c| c.name == *name)
                .and_then(|c| c.unit.as_deref())
                .map(str::to_string);
            Ok(plot::Series {
                name: match over {
                    Some(x) => format!("{name} over {x}"),
                    None => name.clone(),
                },
                unit,
                points: x.iter().copied().zip(values).collect(),
            })
        })
        .collect()
}

/// `v` to nine significant digits, for tables.
pub(super) fn short(v: f64) -> String {
    let rounded: f64 = format!("{v:.8e}").parse().unwrap_or(v);
    eqm::format_number(rounded)
}

/// Writes `result` to `path` with the model and experiment of `info`, in the format of its
/// extension (CSV, Parquet, Arrow IPC or MAT v4), saying so or why not.
pub(super) fn write_result(result: &SimulationResult, info: &eqm::ResultFileInfo, path: &Path) {
    let format = match crate::commands::run::result_format(Some(path)) {
        Ok(format) => format,
        Err(message) => return eprintln!("error: {message}"),
    };
    let written = std::fs::File::create(path).and_then(|f| result.write_file(format, std::io::BufWriter::new(f), info));
    match written {
        Ok(()) => println!("wrote {} ({} rows)", path.display(), result.len()),
        Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
    }
}

fn unit(unit: Option<&str>) -> String {
    unit.map_or(String::new(), |u| format!(" [{u}]"))
}

fn describe(description: Option<&str>) -> String {
    description.map_or(String::new(), |d| format!("  \"{d}\""))
}
