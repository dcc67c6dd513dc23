//! Models of the test suite run by a small Euler interpreter of this test, against the values
//! Vensim computed (the suite's `output.tab` or `output.csv`).
//!
//! This checks the reader's representation against an independent reference: the names of
//! the variables as Vensim reports them, the control variables, the precedence of operators
//! and the mapping of the elementary functions. The interpreter knows only what these checks
//! need (arithmetic, comparisons, choices, elementary functions, `STEP`, `RAMP`, `PULSE`,
//! `INITIAL`, `ACTIVE INITIAL`, `SAMPLE IF TRUE`, the smooths and delays, `TREND`,
//! `FORECAST`, graphical functions,
//! stocks, arrays with their mappings and the array functions, macros); a model using
//! anything else is passed over and counted. Where Vensim's functions take their arguments in
//! another order than the representation (`SMOOTH N`, `DELAY N`), this checks the reader's
//! reordering against Vensim's numbers.

use super::FILE;
use super::suite::suite_files;
use eqm_sd::ir::*;
use eqm_sd::names::canonical;
use eqm_sd::vensim::read;
use std::collections::HashMap;

/// A model the interpreter does not run.
struct Skip;

/// The times of a run's steps and each value's series at them, by the name Vensim reports.
type Series = (Vec<f64>, HashMap<String, Vec<f64>>);

/// The elements a value is computed for, one per dimension (canonical keys).
type Tuple = Vec<String>;

/// What the ranges of an equation stand for while it is computed: `(range, element)`, both
/// canonical keys, the latest binding last.
type Binding = Vec<(String, String)>;

/// The state of one run.
struct Run<'f> {
    variables: HashMap<String, &'f Variable>,
    ranges: HashMap<String, &'f Dimension>,
    specs: &'f SimSpecs,
    time: f64,
    /// Whether the run is computing its initial values (stocks give their initial value).
    initial: bool,
    stocks: HashMap<(String, Tuple), f64>,
    /// The values of the current step, computed on demand.
    step: HashMap<(String, Tuple), f64>,
    /// `INITIAL(x)`: the value of `x` at the start, by the place of the call in the file and
    /// the elements it was computed for.
    initials: HashMap<(u32, Tuple), f64>,
    /// The state of each call of a function with a memory, and its next state.
    memory: HashMap<(u32, Tuple), Vec<f64>>,
    pending: HashMap<(u32, Tuple), Vec<f64>>,
    /// The order each call of `SMOOTH N` or `DELAY N` asked for first.
    orders: HashMap<(u32, Tuple), usize>,
    macros: HashMap<String, &'f Macro>,
    /// The macro calls being computed, innermost last.
    frames: Vec<Frame<'f>>,
    /// The stocks of macro calls met this step (by their key in `stocks`), with the call to
    /// compute their rates in.
    macro_stocks: HashMap<String, (Frame<'f>, String)>,
}

/// One call of a macro: its parameters' values and its body's variables, the keys of its
/// values made its own by a prefix.
#[derive(Clone)]
struct Frame<'f> {
    prefix: String,
    parameters: HashMap<String, f64>,
    variables: HashMap<String, &'f Variable>,
}

impl<'f> Run<'f> {
    fn elements(&self, range: &str) -> Result<Vec<String>, Skip> {
        let dim = self.ranges.get(range).ok_or(Skip)?;
        Ok(dim.elements.iter().map(|e| canonical(e)).collect())
    }

    /// The equation that defines `tuple` of a variable, with the binding of its ranges;
    /// `None` where no equation covers it.
    fn equation_for(&self, variable: &'f Variable, tuple: &Tuple) -> Result<Option<(&'f Equation, Binding)>, Skip> {
        let mut binding: Binding = variable
            .dimensions
            .iter()
            .map(|d| canonical(d))
            .zip(tuple.iter().cloned())
            .collect();
        match &variable.definition {
            Definition::Uniform(equation) => Ok(Some((equation, binding))),
            Definition::Elements(list) => {
                'entries: for (key, equation) in list {
                    let mut extra = Vec::new();
                    for (part, element) in key.iter().zip(tuple) {
                        let part = canonical(part);
                        if self.ranges.contains_key(&part) {
                            if !self.elements(&part)?.contains(element) {
                                continue 'entries;
                            }
                            extra.push((part, element.clone()));
                        } else if &part != element {
                            continue 'entries;
                        }
                    }
                    binding.extend(extra);
                    return Ok(Some((equation, binding)));
                }
                Ok(None)
            }
        }
    }

    fn value(&mut self, key: &str, tuple: &Tuple, depth: usize) -> Result<f64, Skip> {
        let (variable, memo) = match self.frames.last() {
            Some(frame) => {
                if let Some(v) = frame.parameters.get(key).filter(|_| tuple.is_empty()) {
                    return Ok(*v);
                }
                (
                    *frame.variables.get(key).ok_or(Skip)?,
                    (format!("{}{key}", frame.prefix), tuple.clone()),
                )
            }
            None => (*self.variables.get(key).ok_or(Skip)?, (key.to_string(), tuple.clone())),
        };
        if let Some(v) = self.step.get(&memo) {
            return Ok(*v);
        }
        if depth > 400 {
            return Err(Skip);
        }
        let (equation, binding) = self.equation_for(variable, tuple)?.ok_or(Skip)?;
        let v = match equation {
            Equation::Value(e) => self.eval(e, &binding, depth + 1)?,
            Equation::Stock { initial, .. } if !self.frames.is_empty() => {
                // A macro's stock starts when its call is first computed.
                let v = match self.stocks.get(&memo) {
                    Some(v) => *v,
                    None => self.eval(initial, &binding, depth + 1)?,
                };
                let frame = self.frames.last().expect("inside a macro").clone();
                self.stocks.insert(memo.clone(), v);
                self.macro_stocks.insert(memo.0.clone(), (frame, key.to_string()));
                v
            }
            Equation::Stock { initial, .. } => {
                if self.initial {
                    self.eval(initial, &binding, depth + 1)?
                } else {
                    *self.stocks.get(&memo).ok_or(Skip)?
                }
            }
            Equation::Graph { input, graph } => {
                let x = self.eval(input, &binding, depth + 1)?;
                interpolate(graph, x)
            }
            _ => return Err(Skip),
        };
        self.step.insert(memo, v);
        Ok(v)
    }

    /// The element a subscript stands for under a binding: itself, the element its range is
    /// bound to, the element a mapping gives, or a bound element its range holds.
    fn resolve(&self, subscript: &Subscript, binding: &Binding) -> Result<String, Skip> {
        let range = match subscript {
            Subscript::Element(e) => return Ok(canonical(e)),
            Subscript::Dimension(r) | Subscript::Wildcard(Some(r)) => canonical(r),
            _ => return Err(Skip),
        };
        if let Some((_, element)) = binding.iter().rev().find(|(b, _)| *b == range) {
            return Ok(element.clone());
        }
        for (bound, element) in binding.iter().rev() {
            let (Some(this), Some(other)) = (self.ranges.get(&range), self.ranges.get(bound)) else {
                continue;
            };
            if let Some(m) = this.maps_to.iter().find(|m| canonical(&m.to) == *bound) {
                let at = m.elements.iter().position(|e| canonical(e) == *element).ok_or(Skip)?;
                return Ok(canonical(&this.elements[at]));
            }
            if let Some(m) = other.maps_to.iter().find(|m| canonical(&m.to) == range) {
                let at = other
                    .elements
                    .iter()
                    .position(|e| canonical(e) == *element)
                    .ok_or(Skip)?;
                return Ok(canonical(&m.elements[at]));
            }
        }
        let held = self.elements(&range)?;
        binding
            .iter()
            .rev()
            .find(|(_, e)| held.contains(e))
            .map(|(_, e)| e.clone())
            .ok_or(Skip)
    }

    fn eval(&mut self, e: &Expr, binding: &Binding, depth: usize) -> Result<f64, Skip> {
        let truth = |b: bool| if b { 1.0 } else { 0.0 };
        Ok(match &e.kind {
            ExprKind::Number(v) => *v,
            ExprKind::Variable { name, subscripts } => {
                let tuple = subscripts
                    .iter()
                    .map(|s| self.resolve(s, binding))
                    .collect::<Result<Tuple, Skip>>()?;
                self.value(name, &tuple, depth + 1)?
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand, binding, depth + 1)?;
                match op {
                    UnaryOp::Minus => -v,
                    UnaryOp::Plus => v,
                    UnaryOp::Not => truth(v == 0.0),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (
                    self.eval(left, binding, depth + 1)?,
                    self.eval(right, binding, depth + 1)?,
                );
                match op {
                    BinaryOp::Add => l + r,
                    BinaryOp::Sub => l - r,
                    BinaryOp::Mul => l * r,
                    BinaryOp::Div => l / r,
                    BinaryOp::Pow => l.powf(r),
                    // The representation's `Mod`: the remainder with the divisor's sign.
                    BinaryOp::Mod => l - r * (l / r).floor(),
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
                if self.eval(condition, binding, depth + 1)? != 0.0 {
                    self.eval(then, binding, depth + 1)?
                } else {
                    self.eval(otherwise, binding, depth + 1)?
                }
            }
            ExprKind::Call {
                function: Function::Lookup(name),
                args,
            } => {
                let x = self.eval(&args[0], binding, depth + 1)?;
                match &self.variables.get(name).ok_or(Skip)?.definition {
                    Definition::Uniform(Equation::Table(graph)) => interpolate(graph, x),
                    _ => return Err(Skip),
                }
            }
            ExprKind::Call {
                function: Function::SubscriptedLookup(name, subscripts),
                args,
            } => {
                let x = self.eval(&args[0], binding, depth + 1)?;
                let tuple = subscripts
                    .iter()
                    .map(|s| self.resolve(s, binding))
                    .collect::<Result<Tuple, Skip>>()?;
                let table = *self.variables.get(name).ok_or(Skip)?;
                match self.equation_for(table, &tuple)? {
                    Some((Equation::Table(graph), _)) => interpolate(graph, x),
                    _ => return Err(Skip),
                }
            }
            ExprKind::Call {
                function: Function::Builtin(b @ (Builtin::Sum | Builtin::Prod | Builtin::Min | Builtin::Max)),
                args,
            } if args.len() == 1 => self.over_array(*b, &args[0], binding, depth)?,
            ExprKind::Call {
                function: Function::Builtin(b),
                args,
            } => self.builtin(*b, args, e.span.start, binding, depth)?,
            ExprKind::Call {
                function: Function::Macro(name),
                args,
            } => self.call_macro(name, args, e.span.start, binding, depth)?,
        })
    }

    /// A macro's value for one call: its body computed with the arguments' values.
    fn call_macro(&mut self, name: &str, args: &[Expr], at: u32, binding: &Binding, depth: usize) -> Result<f64, Skip> {
        let body = *self.macros.get(name).ok_or(Skip)?;
        let mut parameters = HashMap::new();
        for (parameter, arg) in body.parameters.iter().zip(args) {
            parameters.insert(canonical(parameter), self.eval(arg, binding, depth + 1)?);
        }
        let outer = self.frames.last().map_or(String::new(), |f| f.prefix.clone());
        let elements: Vec<&str> = binding.iter().map(|(_, e)| e.as_str()).collect();
        self.frames.push(Frame {
            prefix: format!("{outer}\u{1}{at}:{}|", elements.join(",")),
            parameters,
            variables: body.variables.iter().map(|v| (canonical(&v.name), v)).collect(),
        });
        let value = self.value(&canonical(&body.name), &Vec::new(), depth + 1);
        self.frames.pop();
        value
    }

    /// `SUM`, `PROD`, `VMIN`, `VMAX` of one argument over all elements of its `dim!` ranges.
    fn over_array(&mut self, b: Builtin, arg: &Expr, binding: &Binding, depth: usize) -> Result<f64, Skip> {
        let mut wild: Vec<String> = Vec::new();
        let mut stack = vec![arg];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Variable { subscripts, .. } => {
                    for s in subscripts {
                        if let Subscript::Wildcard(Some(r)) = s
                            && !wild.contains(&canonical(r))
                        {
                            wild.push(canonical(r));
                        }
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { left, right, .. } => stack.extend([&**left, &**right]),
                ExprKind::If {
                    condition,
                    then,
                    otherwise,
                } => stack.extend([&**condition, &**then, &**otherwise]),
                ExprKind::Call { args, .. } => stack.extend(args.iter()),
                ExprKind::Number(_) => {}
            }
        }
        let mut tuples: Vec<Binding> = vec![Vec::new()];
        for range in &wild {
            let elements = self.elements(range)?;
            tuples = tuples
                .into_iter()
                .flat_map(|t| {
                    elements
                        .iter()
                        .map(move |e| [t.clone(), vec![(range.clone(), e.clone())]].concat())
                })
                .collect();
        }
        let mut values = Vec::with_capacity(tuples.len());
        for extra in tuples {
            let inner: Binding = [binding.clone(), extra].concat();
            values.push(self.eval(arg, &inner, depth + 1)?);
        }
        Ok(match b {
            Builtin::Sum => values.iter().sum(),
            Builtin::Prod => values.iter().product(),
            Builtin::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            _ => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    fn builtin(&mut self, b: Builtin, args: &[Expr], at: u32, binding: &Binding, depth: usize) -> Result<f64, Skip> {
        if b == Builtin::Init {
            let frame = self.frames.last().map(|f| f.prefix.clone());
            let memo = (
                at,
                frame
                    .into_iter()
                    .chain(binding.iter().map(|(_, e)| e.clone()))
                    .collect(),
            );
            if let Some(v) = self.initials.get(&memo) {
                return Ok(*v);
            }
            let v = self.eval(&args[0], binding, depth + 1)?;
            self.initials.insert(memo, v);
            return Ok(v);
        }
        let frame = self.frames.last().map(|f| f.prefix.clone());
        let memo = (
            at,
            frame
                .into_iter()
                .chain(binding.iter().map(|(_, e)| e.clone()))
                .collect::<Tuple>(),
        );
        if b == Builtin::ActiveInitial {
            // Only the argument of the phase is computed (the other may be circular).
            return self.eval(&args[usize::from(self.initial)], binding, depth + 1);
        }
        let mut a = Vec::with_capacity(args.len());
        for arg in args {
            a.push(self.eval(arg, binding, depth + 1)?);
        }
        if let Some(v) = self.with_memory(b, &a, memo)? {
            return Ok(v);
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
            Builtin::Round => a[0].round(),
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
            Builtin::Game => a[0],
            Builtin::PulseTrain => {
                // 1 for `width` (at least one step) from `start` and every `interval` after it,
                // until `end`.
                let (start, width, interval, end) = (a[0], a[1].max(dt), a[2], a[3]);
                let at = t + dt / 2.0;
                let since = at - start;
                let into = if interval > 0.0 {
                    since - interval * (since / interval).floor()
                } else {
                    since
                };
                if at > start && at < end + dt && into < width {
                    1.0
                } else {
                    0.0
                }
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

impl Run<'_> {
    /// The functions with a memory of the run, each call (by its place and elements) with
    /// its own state: the output from the state, the next state from this step's inputs.
    /// Smoothing: stages averaging `time / n` each. Material delays: stages holding
    /// `time / n` of flow each. The pipeline delay: the inputs of the last `time / dt` steps.
    fn with_memory(&mut self, b: Builtin, a: &[f64], memo: (u32, Tuple)) -> Result<Option<f64>, Skip> {
        let dt = self.specs.dt;
        // (stages, whether the stages hold values (smoothing) rather than contents (material
        // delays), time, initial value of the output).
        let stages = match b {
            Builtin::Smooth1 => Some((1, true, a[1], a.get(2).copied().unwrap_or(a[0]))),
            Builtin::Smooth3 => Some((3, true, a[1], a.get(2).copied().unwrap_or(a[0]))),
            Builtin::SmoothN => Some((a[2] as usize, true, a[1], a[3])),
            Builtin::Delay1 => Some((1, false, a[1], a.get(2).copied().unwrap_or(a[0]))),
            Builtin::Delay3 => Some((3, false, a[1], a.get(2).copied().unwrap_or(a[0]))),
            Builtin::DelayN | Builtin::DelayNStaged => Some((a[2] as usize, false, a[1], a[3])),
            _ => None,
        };
        if let Some((n, smoothing, time, initial)) = stages {
            // An order that changes during the run is passed over: how Vensim follows it is
            // not what this test checks.
            if *self.orders.entry(memo.clone()).or_insert(n) != n {
                return Err(Skip);
            }
            // The number of stages is fixed when the run starts; for `DELAY N` Vensim lowers it
            // where a stage would be shorter than a time step (the suite's `delay_pipeline`
            // case), not for `DELAY3` (its `arguments` case).
            let fitting = if matches!(b, Builtin::DelayN | Builtin::DelayNStaged) {
                ((time / dt) as usize).max(1)
            } else {
                n
            };
            let n = self.memory.get(&memo).map_or(n.min(fitting).max(1), Vec::len);
            let per_stage = time / n as f64;
            let state = self.memory.entry(memo.clone()).or_insert_with(|| {
                // A delay's stages hold the flow times their time; a smooth's hold the value.
                vec![if smoothing { initial } else { initial * per_stage }; n]
            });
            let outflows: Vec<f64> = if smoothing {
                state.clone()
            } else {
                state.iter().map(|l| l / per_stage).collect()
            };
            let mut next = state.clone();
            for k in 0..n {
                let inflow = if k == 0 {
                    a[0]
                } else if smoothing {
                    state[k - 1]
                } else {
                    outflows[k - 1]
                };
                next[k] += dt
                    * if smoothing {
                        (inflow - state[k]) / per_stage
                    } else {
                        inflow - outflows[k]
                    };
            }
            self.pending.insert(memo, next);
            return Ok(Some(outflows[n - 1]));
        }
        match b {
            Builtin::DelayFixed => {
                // The delay time is read when the run starts, and is at least one step.
                let steps = ((a[1] / dt).round() as usize).max(1);
                let mut queue = self
                    .memory
                    .entry(memo.clone())
                    .or_insert_with(|| vec![a[2]; steps])
                    .clone();
                queue.push(a[0]);
                let out = queue.remove(0);
                self.pending.insert(memo, queue);
                Ok(Some(out))
            }
            Builtin::SampleIfTrue => {
                let last = self.memory.get(&memo).map_or(a[2], |m| m[0]);
                let value = if a[0] != 0.0 { a[1] } else { last };
                self.pending.insert(memo, vec![value]);
                Ok(Some(value))
            }
            Builtin::Trend | Builtin::Forecast => {
                // The input's average, smoothed over the averaging time and started where the
                // initial trend puts it; the trend is the input's growth over it per time.
                let initial_trend = if b == Builtin::Trend { a[2] } else { 0.0 };
                let average = self
                    .memory
                    .get(&memo)
                    .map_or(a[0] / (1.0 + initial_trend * a[1]), |m| m[0]);
                self.pending.insert(memo, vec![average + dt * (a[0] - average) / a[1]]);
                let trend = (a[0] - average) / (average * a[1]);
                Ok(Some(if b == Builtin::Trend {
                    trend
                } else {
                    a[0] * (1.0 + trend * a[2])
                }))
            }
            Builtin::Npv | Builtin::Previous => Err(Skip),
            _ => Ok(None),
        }
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

/// Every element tuple of a variable, as declared names and as canonical keys.
fn tuples_of(variable: &Variable, ranges: &HashMap<String, &Dimension>) -> Result<Vec<(Vec<String>, Tuple)>, Skip> {
    let mut out: Vec<(Vec<String>, Tuple)> = vec![(Vec::new(), Vec::new())];
    for range in &variable.dimensions {
        let dim = ranges.get(&canonical(range)).ok_or(Skip)?;
        out = out
            .into_iter()
            .flat_map(|(names, keys)| {
                dim.elements.iter().map(move |e| {
                    (
                        [names.clone(), vec![e.clone()]].concat(),
                        [keys.clone(), vec![canonical(e)]].concat(),
                    )
                })
            })
            .collect();
    }
    Ok(out)
}

/// Runs a model with Euler steps, giving each value's series under the name Vensim reports
/// it by (`name` or `name[a,b]`).
fn simulate(file: &SdFile) -> Result<Series, Skip> {
    let model = &file.models[0];
    let ranges: HashMap<String, &Dimension> = file.dimensions.iter().map(|d| (canonical(&d.name), d)).collect();
    let mut cells = Vec::new();
    for v in &model.variables {
        for (names, tuple) in tuples_of(v, &ranges)? {
            let shown = if names.is_empty() {
                v.name.clone()
            } else {
                format!("{}[{}]", v.name, names.join(","))
            };
            cells.push((v, canonical(&v.name), tuple, shown));
        }
    }
    let mut run = Run {
        variables: model.variables.iter().map(|v| (canonical(&v.name), v)).collect(),
        ranges,
        specs: &file.specs,
        time: file.specs.start,
        initial: true,
        stocks: HashMap::new(),
        step: HashMap::new(),
        initials: HashMap::new(),
        memory: HashMap::new(),
        pending: HashMap::new(),
        orders: HashMap::new(),
        macros: file.macros.iter().map(|m| (canonical(&m.name), m)).collect(),
        frames: Vec::new(),
        macro_stocks: HashMap::new(),
    };
    // The stocks' initial values, computed apart: there `ACTIVE INITIAL` gives its initial
    // value, which the values reported at the start do not show.
    for (v, key, tuple, _) in &cells {
        if matches!(v.kind, Kind::Stock { .. }) {
            let value = run.value(key, tuple, 0)?;
            run.stocks.insert((key.clone(), tuple.clone()), value);
        }
    }
    run.initial = false;
    run.step.clear();
    run.pending.clear();
    let steps = ((file.specs.stop - file.specs.start) / file.specs.dt).round() as usize;
    let (mut times, mut series) = (Vec::new(), HashMap::<String, Vec<f64>>::new());
    for k in 0..=steps {
        run.time = file.specs.start + k as f64 * file.specs.dt;
        run.step.clear();
        for (v, key, tuple, shown) in &cells {
            // An element no equation defines has no value (Vensim reports none either).
            if matches!(v.kind, Kind::Lookup) || run.equation_for(v, tuple)?.is_none() {
                continue;
            }
            let value = run.value(key, tuple, 0)?;
            series.entry(shown.clone()).or_default().push(value);
        }
        times.push(run.time);
        // The stocks' next values from this step's rates.
        let mut next = HashMap::new();
        for (v, key, tuple, _) in &cells {
            if !matches!(v.kind, Kind::Stock { .. }) {
                continue;
            }
            let Some((Equation::Stock { rate: Some(rate), .. }, binding)) = run.equation_for(v, tuple)? else {
                return Err(Skip);
            };
            let current = run.value(key, tuple, 0)?;
            let rate = run.eval(rate, &binding, 0)?;
            next.insert((key.clone(), tuple.clone()), current + file.specs.dt * rate);
        }
        for (stock, (frame, key)) in std::mem::take(&mut run.macro_stocks) {
            let variable = frame.variables[&key];
            let Definition::Uniform(Equation::Stock { rate: Some(rate), .. }) = &variable.definition else {
                return Err(Skip);
            };
            let current = run.stocks[&(stock.clone(), Vec::new())];
            run.frames.push(frame);
            let rate = run.eval(rate, &Vec::new(), 0);
            run.frames.pop();
            next.insert((stock, Vec::new()), current + file.specs.dt * rate?);
        }
        run.stocks = next;
        let pending = std::mem::take(&mut run.pending);
        run.memory.extend(pending);
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
    let (bytes, separator) = match std::fs::read(dir.join("output.tab")) {
        Ok(bytes) => (bytes, '\t'),
        Err(_) => (std::fs::read(dir.join("output.csv")).map_err(|_| Skip)?, ','),
    };
    // Some reference files are written in Latin-1.
    let text = String::from_utf8(bytes).unwrap_or_else(|e| e.into_bytes().iter().map(|&b| char::from(b)).collect());
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
fn suite_models_run_by_euler_match_the_values_vensim_computed() {
    let files = suite_files();
    if files.is_empty() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let (mut passed, mut skipped, mut values, mut failures) = (Vec::new(), Vec::new(), 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let (Some(file), diagnostics) = read(FILE, &text) else {
            continue;
        };
        if !diagnostics.is_empty() {
            continue;
        }
        match compare(path, &file) {
            Err(Skip) => skipped.push(path.file_name().expect("a name").to_string_lossy().into_owned()),
            Ok(Ok(n)) => {
                values += n;
                passed.push(path.file_name().expect("a name").to_string_lossy().into_owned());
            }
            Ok(Err(why)) => failures.push(format!("{}: {why}", path.display())),
        }
    }
    eprintln!(
        "{} models match Vensim's {values} values: {passed:?}; {} passed over: {skipped:?}",
        passed.len(),
        skipped.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(passed.len() >= 110, "only {} models were run", passed.len());
}
