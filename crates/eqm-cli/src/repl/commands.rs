//! The colon commands of the REPL: each parses its arguments, calls the library and prints.

use super::{Repl, Run};
use crate::{
    RunArgs, analyze::AnalyzeArgs, default_stop, parse_param, plot, print_report, print_timings, run_settings, termplot,
};
use clap::Parser;
use eqm::{GraphView, RunError, SimulationResult, SweepAxis};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// A command: its name, its arguments, what it does and an example.
pub(crate) struct Help {
    pub(crate) name: &'static str,
    args: &'static str,
    about: &'static str,
    example: &'static str,
}

/// Every command, in the order `:help` lists them.
pub(crate) const COMMANDS: &[Help] = &[
    Help {
        name: "load",
        args: "FILE...",
        about: "load .eqm files into the session",
        example: ":load examples/spring_mass.eqm",
    },
    Help {
        name: "reload",
        args: "",
        about: "read the files again, keeping the parameter changes that still apply",
        example: ":reload",
    },
    Help {
        name: "models",
        args: "",
        about: "list the models with their description strings",
        example: ":models",
    },
    Help {
        name: "use",
        args: "MODEL",
        about: "choose the current model",
        example: ":use Decay",
    },
    Help {
        name: "check",
        args: "",
        about: "check the current model",
        example: ":check",
    },
    Help {
        name: "flatten",
        args: "",
        about: "print the flat model",
        example: ":flatten",
    },
    Help {
        name: "explain",
        args: "[--keep-aliases] [--steps]",
        about: "explain the structural analysis",
        example: ":explain --steps",
    },
    Help {
        name: "analyze",
        args: "[eqm analyze options]",
        about: "steady state, linearisation, eigenvalues and advice",
        example: ":analyze --at 1",
    },
    Help {
        name: "run",
        args: "[eqm run options] [as NAME]",
        about: "simulate, keeping the run by name (the latest is `last`)",
        example: ":run --stop 10 as base",
    },
    Help {
        name: "set",
        args: "NAME=VALUE ...",
        about: "set parameters (without recompiling unless structural) and start values",
        example: ":set k=2",
    },
    Help {
        name: "unset",
        args: "[NAME...]",
        about: "forget parameter and start value changes (all without NAME)",
        example: ":unset k",
    },
    Help {
        name: "show",
        args: "NAME",
        about: "show a parameter or variable: value, unit, description",
        example: ":show k",
    },
    Help {
        name: "params",
        args: "",
        about: "list the parameters with their values",
        example: ":params",
    },
    Help {
        name: "vars",
        args: "",
        about: "list the variables with units and descriptions",
        example: ":vars",
    },
    Help {
        name: "value",
        args: "NAME at T [in RUN]",
        about: "a variable's value at a time (interpolated)",
        example: ":value x at 2.5",
    },
    Help {
        name: "stats",
        args: "[RUN]",
        about: "steps, events and time per stage of a run",
        example: ":stats",
    },
    Help {
        name: "runs",
        args: "",
        about: "list the kept runs",
        example: ":runs",
    },
    Help {
        name: "compare",
        args: "NAME RUN1 RUN2",
        about: "a variable in two runs at common times",
        example: ":compare x base last",
    },
    Help {
        name: "save",
        args: "[RUN] FILE.csv",
        about: "write a run as CSV",
        example: ":save base out.csv",
    },
    Help {
        name: "sweep",
        args: "NAME=A:STEP:B|v1,v2,... ...",
        about: "run every combination and tabulate final values",
        example: ":sweep k=1:1:3",
    },
    Help {
        name: "plot",
        args: "a, b [over x] [in RUN] [> FILE.svg|png]",
        about: "plot variables of a run",
        example: ":plot x over v > phase.svg",
    },
    Help {
        name: "help",
        args: "[COMMAND]",
        about: "list the commands, or explain one",
        example: ":help run",
    },
    Help {
        name: "quit",
        args: "",
        about: "end the session (also Ctrl-D)",
        example: ":quit",
    },
];

/// `:run`'s options: those of `eqm run`.
#[derive(Parser)]
#[command(
    name = ":run",
    no_binary_name = true,
    disable_version_flag = true,
    about = "Simulate the current model with the options of `eqm run`, keeping the run in memory \
             (`:run ... as NAME`; the latest is `last`); --out also writes it as CSV"
)]
struct RunLine {
    #[command(flatten)]
    run: Box<RunArgs>,
    /// A parameter value for this run only (repeatable); `:set` keeps one for the next runs.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
}

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

/// Splits a command line into words; double quotes group words with spaces.
pub(crate) fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

impl Repl {
    /// Runs the command `line` (without its colon).
    pub(crate) fn command(&mut self, line: &str) {
        let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let args = words(rest);
        match name {
            "load" | "l" => {
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
            "reload" | "r" => {
                self.rebuild();
                println!("reloaded {} file(s)", self.files.len());
            }
            "models" => self.models(),
            "use" => self.use_model(&args),
            "check" => {
                let options = self.options();
                if let Some(c) = self.session.check(self.current.as_deref(), &options) {
                    println!(
                        "{}: {} variables, {} equations: no errors",
                        c.model, c.variables, c.equations
                    );
                }
                self.report();
            }
            "flatten" => {
                let options = self.options();
                if let Some(flat) = self.session.flatten(self.current.as_deref(), &options) {
                    print!("{}", flat.print());
                }
                self.report();
            }
            "explain" => self.explain(&args),
            "analyze" => match AnalyzeLine::try_parse_from(&args) {
                Ok(line) => {
                    let options = self.options();
                    crate::analyze::run(
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
                match eqm::pipeline::diag::did_you_mean(other, names) {
                    Some(close) => eprintln!("error: unknown command `:{other}`; did you mean `:{close}`?"),
                    None => eprintln!("error: unknown command `:{other}`; `:help` lists the commands"),
                }
            }
        }
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
            return match eqm::pipeline::diag::did_you_mean(name, models.iter().map(String::as_str)) {
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

    /// `:run [options] [as NAME]`.
    fn run(&mut self, mut args: Vec<String>) {
        let mut name = None;
        if args.len() >= 2 && args[args.len() - 2] == "as" {
            name = args.pop();
            args.pop();
        }
        let line = match RunLine::try_parse_from(&args) {
            Ok(line) => line,
            Err(e) => return print_clap(&e),
        };
        let (run, once) = (line.run, line.params);
        let mut settings = match run_settings(&run) {
            Ok(s) => s,
            Err(message) => return eprintln!("error: {message}"),
        };
        if !run.sweep.is_empty() {
            settings.variables = run.vars.clone();
            let options = self.options();
            crate::sweep::run(
                &mut self.session,
                self.current.as_deref(),
                &run,
                &options,
                settings,
                self.color,
                self.timings,
            );
            self.session.take_diagnostics();
            return;
        }
        let name = name.unwrap_or_else(|| format!("run{}", self.runs.len() + 1));
        if name == "last" {
            return eprintln!("error: `last` always names the latest run; choose another name");
        }
        let mut changes = self.changes();
        for (n, v) in &once {
            let sep = if changes.is_empty() { "" } else { ", " };
            changes.push_str(&format!("{sep}{n}={}", eqm::format_number(*v)));
        }
        let (kept_parameters, kept_starts) = (self.parameters.clone(), self.starts.clone());
        let interrupted = self.interrupted.clone();
        let timings = self.timings;
        let Some(model) = self.compiled() else { return };
        for (n, v) in &once {
            if model.parameters().iter().any(|p| p.name == *n && p.structural) {
                return eprintln!("error: `{n}` is structural: `:set {n}={v}` compiles the model again with it");
            }
            if let Err(d) = model.set_parameter(n, *v) {
                restore(model, &kept_parameters, &kept_starts);
                self.session.push_diagnostic(d);
                self.report();
                return;
            }
        }
        let settings = default_stop(model, settings);
        match model.check_settings(&settings) {
            Ok(notes) => notes.iter().for_each(|note| eprintln!("note: {note}")),
            Err(RunError::Model(d)) => {
                self.session.push_diagnostic(*d);
                self.report();
                return;
            }
            Err(e) => return eprintln!("error: {e}"),
        }
        let mut wanted = run.vars.clone();
        if let (Some(list), Some(plot)) = (&mut wanted, &run.plot) {
            list.extend(plot.iter().filter(|p| !list.contains(p)).cloned().collect::<Vec<_>>());
        }
        let columns = match model.columns(wanted.as_deref()) {
            Ok(c) => c,
            Err(d) => {
                self.session.push_diagnostic(d);
                self.report();
                return;
            }
        };
        let (mut time, mut values) = (Vec::new(), Vec::new());
        interrupted.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        let result = model.simulate_into(&settings, &columns, &mut |t: f64, row: &[f64]| {
            if interrupted.load(Ordering::SeqCst) {
                return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
            }
            time.push(t);
            values.extend_from_slice(row);
            Ok(())
        });
        let elapsed = started.elapsed();
        if !once.is_empty() {
            restore(model, &kept_parameters, &kept_starts);
        }
        let report = match result {
            Ok(report) => {
                if timings {
                    print_report(model, &report);
                }
                if let Some((time, message)) = &report.summary.terminated {
                    eprintln!("note: the model called terminate at time {time}: {message}");
                }
                for warning in &report.summary.warnings {
                    self.session.push_diagnostic(warning.clone());
                }
                Some(report)
            }
            Err(_) if interrupted.load(Ordering::SeqCst) => {
                eprintln!("interrupted: the {} rows computed so far are kept", time.len());
                None
            }
            Err(RunError::Model(d)) => {
                self.session.push_diagnostic(*d);
                None
            }
            Err(failed @ RunError::Failed { .. }) => {
                crate::failure(&mut self.session, self.color, failed, "simulation");
                None
            }
            Err(e) => {
                eprintln!("error: {e}");
                None
            }
        };
        self.report();
        let summary = report.as_ref().map(|r| r.summary.clone()).unwrap_or_default();
        let result = SimulationResult::from_rows(columns, time, values, summary);
        let rows = result.len();
        let span = match (result.time().first(), result.time().last()) {
            (Some(a), Some(b)) => format!(" from t = {} to {}", eqm::format_number(*a), eqm::format_number(*b)),
            _ => String::new(),
        };
        println!(
            "{name}: {rows} rows{span} in {:.1} ms{}",
            elapsed.as_secs_f64() * 1e3,
            if changes.is_empty() {
                String::new()
            } else {
                format!(" ({changes})")
            }
        );
        if let Some(path) = &run.out {
            write_csv(&result, path);
        }
        if let (Some(plot), Some(path)) = (&run.plot, &run.plot_out) {
            let series = series(&result, plot, None);
            match series.and_then(|s| plot::write(&s, path)) {
                Ok(()) => println!("wrote {}", path.display()),
                Err(e) => eprintln!("error: no plot written: {e}"),
            }
        }
        if timings {
            print_timings(&self.session);
        }
        self.runs.retain(|r| r.name != name);
        self.runs.push(Run {
            name,
            result,
            report,
            changes,
        });
    }

    /// The changes from the model's values: `k=2, x0=1`.
    fn changes(&self) -> String {
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
        match eqm::pipeline::diag::did_you_mean(name, names.iter().map(String::as_str)) {
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
        use eqm::pipeline::syntax::{FileId, parse_expr};
        let (Some(expr), _) = parse_expr(FileId(0), text) else {
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
        write_csv(&run.result, path);
    }

    /// `:sweep NAME=A:STEP:B ...`: every combination, compiled once, with a table of the
    /// final values of the first columns.
    fn sweep(&mut self, args: &[String]) {
        let mut axes: Vec<SweepAxis> = Vec::new();
        for arg in args {
            match SweepAxis::parse(arg) {
                Ok(axis) => axes.push(axis),
                Err(message) => return eprintln!("error: {message}"),
            }
        }
        if axes.is_empty() {
            return eprintln!("error: `:sweep` needs NAME=A:STEP:B or NAME=v1,v2,...");
        }
        let options = self.options();
        let options = eqm::ModelOptions {
            parameters: options
                .parameters
                .into_iter()
                .filter(|(n, _)| !axes.iter().any(|a| a.name == *n))
                .collect(),
            ..options
        };
        if let Err(message) = crate::sweep::check_axes(&axes, &options) {
            return eprintln!("error: {message}");
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let settings = eqm::RunSettings::default();
        let sweep = eqm::sweep::sweep(
            &mut self.session,
            self.current.as_deref(),
            &options,
            &axes,
            &settings,
            threads,
        );
        self.report();
        let Some(sweep) = sweep else { return };
        for note in &sweep.notes {
            eprintln!("note: {note}");
        }
        let shown: Vec<String> = sweep.columns().into_iter().take(4).collect();
        let mut header: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
        header.extend(shown.iter().map(|c| format!("final {c}")));
        println!(
            "{}",
            header.iter().map(|h| format!("{h:>14}")).collect::<Vec<_>>().join(" ")
        );
        for run in &sweep.runs {
            let mut cells: Vec<String> = run.values.iter().map(|v| eqm::format_number(*v)).collect();
            cells.extend(shown.iter().map(|c| run.final_value(c).map_or("-".to_string(), short)));
            if let Err(e) = &run.outcome {
                cells.push(format!("failed: {e}"));
            }
            println!(
                "{}",
                cells.iter().map(|h| format!("{h:>14}")).collect::<Vec<_>>().join(" ")
            );
        }
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
fn restore(model: &mut eqm::Model, parameters: &[(String, f64)], starts: &[(String, f64)]) {
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
fn series(result: &SimulationResult, names: &[String], over: Option<&str>) -> Result<Vec<plot::Series>, String> {
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
fn short(v: f64) -> String {
    let rounded: f64 = format!("{v:.8e}").parse().unwrap_or(v);
    eqm::format_number(rounded)
}

fn write_csv(result: &SimulationResult, path: &Path) {
    let written = std::fs::File::create(path).and_then(|f| result.write_csv(std::io::BufWriter::new(f)));
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

/// Prints a clap error or help text of a command's options.
fn print_clap(e: &clap::Error) {
    let text = e.to_string();
    match e.kind() {
        clap::error::ErrorKind::DisplayHelp => print!("{text}"),
        _ => eprint!("{text}"),
    }
}

/// `:help [COMMAND]`.
pub(crate) fn help(command: Option<&str>) {
    match command.map(|c| c.trim_start_matches(':')) {
        None => {
            println!("commands (`:help COMMAND` for one, with an example):");
            for c in COMMANDS {
                println!("  :{:<8} {:<28} {}", c.name, c.args, c.about);
            }
            println!("a line starting a class (model, package, function, ...) defines it; any other line");
            println!("is an expression over the last run: max(x) - min(x), x(2.5), final(x), x[end]");
        }
        Some(name) => match COMMANDS.iter().find(|c| c.name == name) {
            Some(c) => {
                println!(":{} {}", c.name, c.args);
                println!("  {}", c.about);
                println!("  example: {}", c.example);
                if c.name == "run" || c.name == "analyze" {
                    println!("  `:{} --help` lists the options", c.name);
                }
            }
            None => eprintln!("error: no command `:{name}`; `:help` lists them"),
        },
    }
}
