//! Scalar models of the test suite run by a small Euler interpreter of this test, against
//! the values Vensim computed (the suite's `output.tab` or `output.csv`).
//!
//! This checks the reader's representation against an independent reference: the names of
//! the variables as Vensim reports them, the control variables, the precedence of operators
//! and the mapping of the elementary functions. The interpreter knows only what these checks
//! need (arithmetic, comparisons, choices, elementary functions, `STEP`, `RAMP`, `PULSE`,
//! `INITIAL`, graphical functions, stocks); a model using anything else, or arrays or macros,
//! is passed over and counted.

use super::FILE;
use super::suite::suite_files;
use eqm_sd::ir::*;
use eqm_sd::names::canonical;
use eqm_sd::vensim::read;
use std::collections::HashMap;

/// A model the interpreter does not run.
struct Skip;

/// The state of one run.
struct Run<'f> {
    variables: HashMap<String, &'f Variable>,
    specs: &'f SimSpecs,
    time: f64,
    /// Whether the run is computing its initial values (stocks give their initial value).
    initial: bool,
    stocks: HashMap<String, f64>,
    /// The values of the current step, computed on demand.
    step: HashMap<String, f64>,
    /// `INITIAL(x)`: the value of `x` at the start, by the place of the call in the file.
    initials: HashMap<u32, f64>,
}

impl Run<'_> {
    fn value(&mut self, key: &str, depth: usize) -> Result<f64, Skip> {
        if let Some(v) = self.step.get(key) {
            return Ok(*v);
        }
        if depth > 200 {
            return Err(Skip);
        }
        let variable = *self.variables.get(key).ok_or(Skip)?;
        let v = match &variable.definition {
            Definition::Uniform(Equation::Value(e)) => self.eval(e, depth + 1)?,
            Definition::Uniform(Equation::Stock { initial, .. }) => {
                if self.initial {
                    self.eval(initial, depth + 1)?
                } else {
                    self.stocks[key]
                }
            }
            Definition::Uniform(Equation::Graph { input, graph }) => {
                let x = self.eval(input, depth + 1)?;
                interpolate(graph, x)
            }
            _ => return Err(Skip),
        };
        self.step.insert(key.to_string(), v);
        Ok(v)
    }

    fn eval(&mut self, e: &Expr, depth: usize) -> Result<f64, Skip> {
        let truth = |b: bool| if b { 1.0 } else { 0.0 };
        Ok(match &e.kind {
            ExprKind::Number(v) => *v,
            ExprKind::Variable { name, subscripts } if subscripts.is_empty() => self.value(name, depth + 1)?,
            ExprKind::Variable { .. } => return Err(Skip),
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand, depth + 1)?;
                match op {
                    UnaryOp::Minus => -v,
                    UnaryOp::Plus => v,
                    UnaryOp::Not => truth(v == 0.0),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (self.eval(left, depth + 1)?, self.eval(right, depth + 1)?);
                match op {
                    BinaryOp::Add => l + r,
                    BinaryOp::Sub => l - r,
                    BinaryOp::Mul => l * r,
                    BinaryOp::Div => l / r,
                    BinaryOp::Pow => l.powf(r),
                    BinaryOp::Mod => l - r * (l / r).floor(), // the divisor's sign, as the representation says
                    BinaryOp::Eq => truth(l == r),
                    BinaryOp::NotEq => truth(l != r),
                    BinaryOp::Less => truth(l < r),
                    BinaryOp::LessEq => truth(l <= r),
                    BinaryOp::Greater => truth(l > r),
                    BinaryOp::GreaterEq => truth(l >= r),
                    BinaryOp::And => truth(l != 0.0 && r != 0.0),
                    BinaryOp::Or => truth(l != 0.0 || r != 0.0),
                }
            }
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => {
                if self.eval(condition, depth + 1)? != 0.0 {
                    self.eval(then, depth + 1)?
                } else {
                    self.eval(otherwise, depth + 1)?
                }
            }
            ExprKind::Call {
                function: Function::Lookup(name),
                args,
            } => {
                let x = self.eval(&args[0], depth + 1)?;
                match &self.variables.get(name).ok_or(Skip)?.definition {
                    Definition::Uniform(Equation::Table(graph)) => interpolate(graph, x),
                    _ => return Err(Skip),
                }
            }
            ExprKind::Call {
                function: Function::Builtin(b),
                args,
            } => self.builtin(*b, args, e.span.start, depth)?,
            ExprKind::Call { .. } => return Err(Skip),
        })
    }

    fn builtin(&mut self, b: Builtin, args: &[Expr], at: u32, depth: usize) -> Result<f64, Skip> {
        if b == Builtin::Init {
            if let Some(v) = self.initials.get(&at) {
                return Ok(*v);
            }
            let v = self.eval(&args[0], depth + 1)?;
            self.initials.insert(at, v);
            return Ok(v);
        }
        let mut a = Vec::with_capacity(args.len());
        for arg in args {
            a.push(self.eval(arg, depth + 1)?);
        }
        let (t, dt) = (self.time, self.specs.dt);
        Ok(match b {
            Builtin::Time => t,
            Builtin::Dt => dt,
            Builtin::StartTime => self.specs.start,
            Builtin::StopTime => self.specs.stop,
            Builtin::Abs => a[0].abs(),
            Builtin::Sqrt => a[0].sqrt(),
            Builtin::Exp => a[0].exp(),
            Builtin::Ln => a[0].ln(),
            Builtin::Log10 => a[0].log10(),
            Builtin::Sin => a[0].sin(),
            Builtin::Cos => a[0].cos(),
            Builtin::Tan => a[0].tan(),
            Builtin::ArcSin => a[0].asin(),
            Builtin::ArcCos => a[0].acos(),
            Builtin::ArcTan => a[0].atan(),
            Builtin::Int => a[0].floor(),
            Builtin::Min if a.len() == 2 => a[0].min(a[1]),
            Builtin::Max if a.len() == 2 => a[0].max(a[1]),
            Builtin::Xidz => {
                if a[1] == 0.0 {
                    a[2]
                } else {
                    a[0] / a[1]
                }
            }
            Builtin::Zidz => {
                if a[1] == 0.0 {
                    0.0
                } else {
                    a[0] / a[1]
                }
            }
            Builtin::Step => {
                if t + dt / 2.0 > a[1] {
                    a[0]
                } else {
                    0.0
                }
            }
            Builtin::Ramp => {
                let end = a.get(2).copied().unwrap_or(f64::INFINITY);
                if t > a[1] { a[0] * (t.min(end) - a[1]) } else { 0.0 }
            }
            Builtin::PulseWidth => {
                let width = a[1].max(dt);
                if t + dt / 2.0 > a[0] && t + dt / 2.0 < a[0] + width {
                    1.0
                } else {
                    0.0
                }
            }
            _ => return Err(Skip),
        })
    }
}

/// A graphical function's value: straight lines between the points, the end values held.
fn interpolate(graph: &GraphicalFunction, x: f64) -> f64 {
    let (xs, ys) = (&graph.x, &graph.y);
    if x <= xs[0] {
        return ys[0];
    }
    for i in 1..xs.len() {
        if x <= xs[i] {
            return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
        }
    }
    ys[ys.len() - 1]
}

/// The times of a run's steps and each variable's values at them, by the variable's name.
type Series = (Vec<f64>, HashMap<String, Vec<f64>>);

/// Runs a scalar model with Euler steps, giving each variable's values at each step.
fn simulate(file: &SdFile) -> Result<Series, Skip> {
    let model = &file.models[0];
    if !file.macros.is_empty() || !file.dimensions.is_empty() {
        return Err(Skip);
    }
    let mut run = Run {
        variables: model.variables.iter().map(|v| (canonical(&v.name), v)).collect(),
        specs: &file.specs,
        time: file.specs.start,
        initial: true,
        stocks: HashMap::new(),
        step: HashMap::new(),
        initials: HashMap::new(),
    };
    let steps = ((file.specs.stop - file.specs.start) / file.specs.dt).round() as usize;
    let (mut times, mut series) = (Vec::new(), HashMap::<String, Vec<f64>>::new());
    for k in 0..=steps {
        run.time = file.specs.start + k as f64 * file.specs.dt;
        run.step.clear();
        for v in &model.variables {
            let value = run.value(&canonical(&v.name), 0)?;
            series.entry(v.name.clone()).or_default().push(value);
        }
        times.push(run.time);
        // The stocks' next values from this step's rates.
        let mut next = HashMap::new();
        for v in &model.variables {
            if let Definition::Uniform(Equation::Stock { rate: Some(rate), .. }) = &v.definition {
                let key = canonical(&v.name);
                let current = run.value(&key, 0)?;
                next.insert(key, current + file.specs.dt * run.eval(rate, 0)?);
            }
        }
        run.stocks = next;
        run.initial = false;
    }
    Ok((times, series))
}

/// A value of a reference output with half a unit of its last printed digit (the file gives
/// some values with few digits).
#[derive(Clone, Copy)]
struct Printed {
    value: f64,
    half_unit: f64,
}

fn printed(cell: &str) -> Option<Printed> {
    let cell = cell.trim();
    let value = cell.parse::<f64>().ok()?;
    let (mantissa, exponent) = match cell.find(['e', 'E']) {
        Some(at) => (&cell[..at], cell[at + 1..].parse::<i32>().ok()?),
        None => (cell, 0),
    };
    let decimals = mantissa.find('.').map_or(0, |dot| mantissa.len() - dot - 1) as i32;
    Some(Printed {
        value,
        half_unit: 0.5 * 10f64.powi(exponent - decimals),
    })
}

/// The rows of a reference output: the header's names and each row's cells (empty where the
/// file gives no value).
fn reference(text: &str, separator: char) -> (Vec<String>, Vec<Vec<Option<Printed>>>) {
    let mut lines = text.split(['\n', '\r']).filter(|l| !l.trim().is_empty());
    let split = |line: &str| -> Vec<String> {
        let (mut cells, mut cell, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    cell.push('"');
                    chars.next();
                }
                '"' => quoted = !quoted,
                c if c == separator && !quoted => cells.push(std::mem::take(&mut cell)),
                c => cell.push(c),
            }
        }
        cells.push(cell);
        cells
    };
    let header = lines.next().map(split).unwrap_or_default();
    let rows = lines.map(|l| split(l).iter().map(|c| printed(c)).collect()).collect();
    (header, rows)
}

/// Compares one case; `Err` says where it differs.
fn compare(path: &std::path::Path, file: &SdFile) -> Result<Result<usize, String>, Skip> {
    let dir = path.parent().expect("a case's folder");
    let (text, separator) = match std::fs::read_to_string(dir.join("output.tab")) {
        Ok(text) => (text, '\t'),
        Err(_) => (std::fs::read_to_string(dir.join("output.csv")).map_err(|_| Skip)?, ','),
    };
    let (header, rows) = reference(&text, separator);
    let (times, series) = simulate(file)?;
    let mut compared = 0;
    for (column, name) in header.iter().enumerate().skip(1) {
        let Some(values) = series.get(name.trim()) else {
            return Ok(Err(format!("no variable `{name}`")));
        };
        // Values near zero are compared against the size of the column's values: the
        // reference's own rounding error is relative to them.
        let scale = rows
            .iter()
            .filter_map(|r| r.get(column).copied().flatten())
            .fold(0.0f64, |m, p| m.max(p.value.abs()));
        for row in &rows {
            let (Some(Some(t)), Some(Some(expected))) = (row.first(), row.get(column)) else {
                continue;
            };
            let Some(k) = times.iter().position(|s| (s - t.value).abs() < file.specs.dt / 1000.0) else {
                return Ok(Err(format!("no step at time {}", t.value)));
            };
            let got = values[k];
            let tolerance = 1e-4 * got.abs().max(expected.value.abs()) + expected.half_unit + 1e-6 * scale;
            if (got - expected.value).abs() > tolerance {
                return Ok(Err(format!(
                    "`{name}` at time {}: {got}, Vensim {}",
                    t.value, expected.value
                )));
            }
            compared += 1;
        }
    }
    Ok(Ok(compared))
}

#[test]
fn scalar_suite_models_run_by_euler_match_the_values_vensim_computed() {
    let files = suite_files();
    if files.is_empty() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let (mut passed, mut skipped, mut values, mut failures) = (Vec::new(), 0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let (Some(file), diagnostics) = read(FILE, &text) else {
            continue;
        };
        if !diagnostics.is_empty() {
            continue;
        }
        match compare(path, &file) {
            Err(Skip) => skipped += 1,
            Ok(Ok(n)) => {
                values += n;
                passed.push(path.file_name().expect("a name").to_string_lossy().into_owned());
            }
            Ok(Err(why)) => failures.push(format!("{}: {why}", path.display())),
        }
    }
    eprintln!(
        "{} scalar models match Vensim's {values} values ({skipped} passed over): {passed:?}",
        passed.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(passed.len() >= 20, "only {} models were run", passed.len());
}
