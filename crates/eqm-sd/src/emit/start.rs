//! The values expressions have at the start of a run, where they follow from numbers, the
//! start time, DT and scalar auxiliaries defined by such expressions alone.
//!
//! Input: the model's variables and the simulation specs. Output: for each scalar auxiliary
//! whose start value follows so, that value; and the start value of an expression. The
//! writer needs them where a tool reads a value once, at the start, to shape the model: the
//! orders of `SMTHN` and `DELAYN` (Vensim's `SMOOTH N` and `DELAY N` take their order's
//! initial value) and the delay time that lowers `DELAYN`'s order. It deliberately computes
//! nothing that changes during the run: stocks, memories and graphical functions give no
//! value here.

use crate::ir::{BinaryOp, Builtin, Definition, Equation, Expr, ExprKind, Function, Kind, SdModel, UnaryOp};
use crate::names::canonical;
use std::collections::HashMap;

/// The start values the writer may read.
#[derive(Debug, Default)]
pub(crate) struct StartValues {
    values: HashMap<String, f64>,
    start: f64,
    dt: f64,
}

/// How deep a chain of auxiliaries is followed; deeper chains give no value.
const DEPTH: usize = 64;

impl StartValues {
    /// The start values of `model`'s scalar auxiliaries with the run's `start` and `dt`.
    pub(crate) fn of(model: &SdModel, start: f64, dt: f64) -> StartValues {
        let equations: HashMap<String, &Expr> = model
            .variables
            .iter()
            .filter_map(|v| match (&v.kind, &v.definition, v.dimensions.is_empty()) {
                (Kind::Aux, Definition::Uniform(Equation::Value(e)), true) => Some((canonical(&v.name), e)),
                _ => None,
            })
            .collect();
        let mut values = StartValues {
            values: HashMap::new(),
            start,
            dt,
        };
        let mut memo = HashMap::new();
        for v in &model.variables {
            let key = canonical(&v.name);
            if let Some(e) = equations.get(&key) {
                let mut visiting = vec![key.clone()];
                // A value that does not follow is left out.
                if let Some(x) = values.eval(e, &equations, &mut memo, &mut visiting) {
                    memo.insert(key, x);
                }
            }
        }
        values.values = memo;
        values
    }

    /// The run's time step.
    pub(crate) fn dt(&self) -> f64 {
        self.dt
    }

    /// The start value of `expr`, where it has one.
    pub(crate) fn value(&self, expr: &Expr) -> Option<f64> {
        self.eval(expr, &HashMap::new(), &mut HashMap::new(), &mut Vec::new())
    }

    /// The start value of `expr`: the auxiliaries it names from `values`, else from their
    /// `equations` (each value found kept in `memo`), never following a cycle.
    fn eval(
        &self,
        expr: &Expr,
        equations: &HashMap<String, &Expr>,
        memo: &mut HashMap<String, f64>,
        visiting: &mut Vec<String>,
    ) -> Option<f64> {
        let truth = |b: bool| if b { 1.0 } else { 0.0 };
        Some(match &expr.kind {
            ExprKind::Number(x) => *x,
            ExprKind::Variable { name, subscripts } if subscripts.is_empty() => {
                if let Some(x) = self.values.get(name).or_else(|| memo.get(name)) {
                    return Some(*x);
                }
                let e = equations.get(name)?;
                if visiting.contains(name) || visiting.len() >= DEPTH {
                    return None;
                }
                visiting.push(name.clone());
                let x = self.eval(e, equations, memo, visiting);
                visiting.pop();
                let x = x?;
                memo.insert(name.clone(), x);
                x
            }
            ExprKind::Variable { .. } => return None,
            ExprKind::Unary { op, operand } => {
                let x = self.eval(operand, equations, memo, visiting)?;
                match op {
                    UnaryOp::Minus => -x,
                    UnaryOp::Plus => x,
                    UnaryOp::Not => truth(x == 0.0),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let (a, b) = (
                    self.eval(left, equations, memo, visiting)?,
                    self.eval(right, equations, memo, visiting)?,
                );
                match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div => a / b,
                    BinaryOp::Pow => a.powf(b),
                    BinaryOp::Mod => a - b * (a / b).floor(),
                    BinaryOp::Eq => truth(a == b),
                    BinaryOp::NotEq => truth(a != b),
                    BinaryOp::Less => truth(a < b),
                    BinaryOp::LessEq => truth(a <= b),
                    BinaryOp::Greater => truth(a > b),
                    BinaryOp::GreaterEq => truth(a >= b),
                    BinaryOp::And => truth(a != 0.0 && b != 0.0),
                    BinaryOp::Or => truth(a != 0.0 || b != 0.0),
                }
            }
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => {
                if self.eval(condition, equations, memo, visiting)? != 0.0 {
                    self.eval(then, equations, memo, visiting)?
                } else {
                    self.eval(otherwise, equations, memo, visiting)?
                }
            }
            ExprKind::Call {
                function: Function::Builtin(b),
                args,
            } => {
                let mut a = Vec::with_capacity(args.len());
                for arg in args {
                    a.push(self.eval(arg, equations, memo, visiting)?);
                }
                match (b, a.as_slice()) {
                    (Builtin::Time | Builtin::StartTime, []) => self.start,
                    (Builtin::Dt, []) => self.dt,
                    (Builtin::Step, [height, at]) => {
                        if self.start >= *at {
                            *height
                        } else {
                            0.0
                        }
                    }
                    (Builtin::Min, [x, y]) => x.min(*y),
                    (Builtin::Max, [x, y]) => x.max(*y),
                    (Builtin::Abs, [x]) => x.abs(),
                    (Builtin::Int, [x]) => x.floor(),
                    (Builtin::Round, [x]) => x.round(),
                    (Builtin::Init, [x]) => *x,
                    _ => return None,
                }
            }
            ExprKind::Call { .. } => return None,
        })
    }
}
