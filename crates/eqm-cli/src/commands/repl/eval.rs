//! Bare expressions over a run: `max(x) - min(x)`, `x(2.5)`, `final(x)`, `x[end] - x[1]`.
//!
//! Input: one line of text, parsed with the language's expression parser, and the run it is
//! evaluated over. Output: a number, or a one-line message saying what is wrong. A name alone
//! (`x`) is its final value, `x(t)` its value at time `t` (interpolated between rows),
//! `x[end]` and `x[k]` its value in the last and in the k-th row; `max`, `min`, `final`,
//! `initial`, `mean` reduce a variable over the run, `val(x, t)` is `x(t)`; `abs`, `sqrt`,
//! `exp`, `log`, `sin`, `cos`, `tan` apply to numbers, with `+ - * / ^` between them. What is
//! not done: arrays, Boolean operators and comparisons, and functions of the model.

use eqm::SimulationResult;
use eqm::input::expr::{BinaryOp, Expr, ExprKind, Subscript, UnaryOp};

/// The name `final(x)` is parsed under: `final` is a keyword of the language.
const FINAL: &str = "final_";

/// `text` with each call of `final` renamed so that the expression parser accepts it.
pub(crate) fn spell_final(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("final") {
        let before = rest[..i].chars().next_back();
        let after = rest[i + 5..].trim_start().starts_with('(');
        out.push_str(&rest[..i]);
        let word_start = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
        out.push_str(if word_start && after { FINAL } else { "final" });
        rest = &rest[i + 5..];
    }
    out.push_str(rest);
    out
}

/// What an expression is evaluated over: the run and the values of the model's parameters.
pub(crate) struct Scope<'a> {
    pub(crate) run: Option<&'a SimulationResult>,
    pub(crate) parameters: &'a [(String, f64)],
    /// The text the expression was parsed from, for the names it refers to.
    pub(crate) text: &'a str,
}

impl Scope<'_> {
    fn snippet(&self, expr: &Expr) -> String {
        self.text
            .get(expr.span.range())
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }

    fn run(&self) -> Result<&SimulationResult, String> {
        self.run
            .ok_or_else(|| "there is no run yet: simulate with `:run` first".to_string())
    }

    /// The column of the run that `name` names, with a message naming the closest one.
    fn column(&self, name: &str) -> Result<Vec<f64>, String> {
        let run = self.run()?;
        run.column(name).ok_or_else(|| unknown(run, name))
    }

    /// Evaluates `expr`.
    pub(crate) fn eval(&self, expr: &Expr) -> Result<f64, String> {
        match &expr.kind {
            ExprKind::Integer(i) => Ok(*i as f64),
            ExprKind::Real(r) => Ok(*r),
            ExprKind::Bool(b) => Ok(f64::from(u8::from(*b))),
            ExprKind::Ref(r) => {
                let name = self.snippet(expr);
                if let Some((_, value)) = self.parameters.iter().find(|(n, _)| *n == name) {
                    return Ok(*value);
                }
                let run = self.run()?;
                if let Some(value) = run.final_value(&name) {
                    return Ok(value);
                }
                // `x[end]` and `x[k]` of a scalar variable: a row of the run.
                let last = r.parts.last().map(|p| p.subscripts.as_slice()).unwrap_or(&[]);
                let base = name.rsplit_once('[').map(|(b, _)| b).unwrap_or(&name);
                match last {
                    [Subscript::Expr(e)] if matches!(e.kind, ExprKind::End) => {
                        run.final_value(base).ok_or_else(|| unknown(run, base))
                    }
                    [Subscript::Expr(e)] => {
                        let k = self.eval(e)?;
                        let values = self.column(base)?;
                        let row = k as usize;
                        if k.fract() != 0.0 || row == 0 || row > values.len() {
                            return Err(format!("`{base}` has rows 1 to {}, not {k}", values.len()));
                        }
                        Ok(values[row - 1])
                    }
                    _ => Err(unknown(run, &name)),
                }
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand)?;
                match op {
                    UnaryOp::Neg | UnaryOp::ElemNeg => Ok(-v),
                    UnaryOp::Plus | UnaryOp::ElemPlus => Ok(v),
                    UnaryOp::Not => Err("`not` is not evaluated over runs".to_string()),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => binary(*op, self.eval(lhs)?, self.eval(rhs)?),
            ExprKind::Chain { first, rest } => {
                let mut value = self.eval(first)?;
                for (op, operand) in rest {
                    value = binary(*op, value, self.eval(operand)?)?;
                }
                Ok(value)
            }
            ExprKind::Call { function, args } => {
                let name: String = self
                    .text
                    .get(function.span.range())
                    .unwrap_or("")
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                if !args.named.is_empty() {
                    return Err(format!("`{name}` takes no named arguments here"));
                }
                let args = &args.positional;
                self.call(&name, args)
            }
            _ => Err(format!(
                "`{}` cannot be evaluated over a run: use numbers, variables, + - * / ^ and max, min, final, initial, mean, val",
                self.snippet(expr)
            )),
        }
    }

    fn call(&self, name: &str, args: &[Expr]) -> Result<f64, String> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("`{name}` takes {n} argument(s), not {}", args.len()))
            }
        };
        // A variable called with a time: its value then.
        if let Some(run) = self.run
            && run.column_index(name).is_some()
        {
            arity(1)?;
            return self.value_at(name, self.eval(&args[0])?);
        }
        match name {
            "max" | "min" | FINAL | "initial" | "mean" => {
                arity(1)?;
                let variable = self.snippet(&args[0]);
                let values = self.column(&variable)?;
                let (first, last) = (values.first().copied(), values.last().copied());
                let value = match name {
                    "max" => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    "min" => values.iter().copied().fold(f64::INFINITY, f64::min),
                    FINAL => last.unwrap_or(f64::NAN),
                    "initial" => first.unwrap_or(f64::NAN),
                    _ => values.iter().sum::<f64>() / values.len() as f64,
                };
                Ok(value)
            }
            "val" => {
                arity(2)?;
                self.value_at(&self.snippet(&args[0]), self.eval(&args[1])?)
            }
            "abs" | "sqrt" | "exp" | "log" | "sin" | "cos" | "tan" => {
                arity(1)?;
                let v = self.eval(&args[0])?;
                Ok(match name {
                    "abs" => v.abs(),
                    "sqrt" => v.sqrt(),
                    "exp" => v.exp(),
                    "log" => v.ln(),
                    "sin" => v.sin(),
                    "cos" => v.cos(),
                    _ => v.tan(),
                })
            }
            _ => match self.run {
                Some(run) => Err(unknown(run, name)),
                None => Err(format!("unknown function `{name}`")),
            },
        }
    }

    fn value_at(&self, name: &str, t: f64) -> Result<f64, String> {
        let run = self.run()?;
        if run.column_index(name).is_none() {
            return Err(unknown(run, name));
        }
        run.value_at(name, t).ok_or_else(|| {
            let (first, last) = (run.time().first().copied(), run.time().last().copied());
            format!(
                "time {} is outside the run ({} to {})",
                eqm::format_number(t),
                first.map_or("?".into(), eqm::format_number),
                last.map_or("?".into(), eqm::format_number)
            )
        })
    }
}

fn binary(op: BinaryOp, a: f64, b: f64) -> Result<f64, String> {
    Ok(match op {
        BinaryOp::Add | BinaryOp::ElemAdd => a + b,
        BinaryOp::Sub | BinaryOp::ElemSub => a - b,
        BinaryOp::Mul | BinaryOp::ElemMul => a * b,
        BinaryOp::Div | BinaryOp::ElemDiv => a / b,
        BinaryOp::Pow | BinaryOp::ElemPow => a.powf(b),
        other => return Err(format!("`{}` is not evaluated over runs", other.symbol())),
    })
}

/// The message for a name the run does not have, with the closest column.
fn unknown(run: &SimulationResult, name: &str) -> String {
    let names: Vec<&str> = run.columns().iter().map(|c| c.name.as_str()).collect();
    match eqm::input::did_you_mean(name, names.iter().copied()) {
        Some(close) => format!("the run has no variable `{name}`; did you mean `{close}`?"),
        None => format!("the run has no variable `{name}`"),
    }
}
