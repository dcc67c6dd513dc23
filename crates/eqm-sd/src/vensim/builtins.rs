//! Vensim's functions mapped onto the shared representation's [`Builtin`]s.
//!
//! Input: a call's name (canonical key) and its parsed arguments. Output: the expression in the
//! representation's own terms, arguments reordered where Vensim's order differs (`SMOOTH N`,
//! `DELAY N`), functions the representation lacks written out exactly in its terms (`INTEGER`
//! truncates toward zero, `MODULO` keeps the dividend's sign, `QUANTUM`, `LOG(x, base)`, the
//! hyperbolic functions, `DELAY FIXED`'s delay time read once and rounded to whole steps,
//! `GET TIME VALUE` of the current time as `Time` plus the offset), a graphical
//! function or macro call, or a diagnostic (E1005 for an unknown function or a wrong number of
//! arguments, E1002 for a Vensim function the importer does not support). This module does not
//! handle the forms that stand only at the top of an equation (`INTEG`, `WITH LOOKUP`,
//! `A FUNCTION OF`, `TABBED ARRAY`).

use super::parser::{Parsed, Parser};
use crate::ir::{BinaryOp, Builtin, Expr, ExprKind, Function, UnaryOp};
use eqm_diag::source::Span;

/// How a Vensim function maps onto the representation.
enum Mapping {
    /// A builtin taking the arguments in Vensim's order; the counts it accepts.
    Direct(Builtin, &'static [usize]),
    /// A builtin whose last Vensim argument (`n`) goes before the one in front of it.
    NBeforeInitial(Builtin),
    /// A builtin with the initial value as its third argument (`SMOOTHI`, `DELAY1I`, ...).
    WithInitial(Builtin),
    /// Written out in other terms.
    Composite(Composite),
    /// `GET TIME VALUE(relativeto, offset, measure)`, in the model's units of time only.
    TimeValue,
    /// A Vensim function the importer names as not supported.
    Unsupported,
}

#[derive(Clone, Copy)]
enum Composite {
    IfThenElse,
    Integer,
    Quantum,
    Log,
    Power,
    Modulo,
    Sinh,
    Cosh,
    Tanh,
    DelayFixed,
}

fn mapping(key: &str) -> Option<Mapping> {
    use Builtin as B;
    use Mapping::*;
    Some(match key {
        "abs" => Direct(B::Abs, &[1]),
        "sqrt" => Direct(B::Sqrt, &[1]),
        "exp" => Direct(B::Exp, &[1]),
        "ln" => Direct(B::Ln, &[1]),
        "sin" => Direct(B::Sin, &[1]),
        "cos" => Direct(B::Cos, &[1]),
        "tan" => Direct(B::Tan, &[1]),
        "arcsin" => Direct(B::ArcSin, &[1]),
        "arccos" => Direct(B::ArcCos, &[1]),
        "arctan" => Direct(B::ArcTan, &[1]),
        "min" => Direct(B::Min, &[2]),
        "max" => Direct(B::Max, &[2]),
        "vmin" => Direct(B::Min, &[1]),
        "vmax" => Direct(B::Max, &[1]),
        "sum" => Direct(B::Sum, &[1]),
        "prod" => Direct(B::Prod, &[1]),
        "xidz" => Direct(B::Xidz, &[3]),
        "zidz" => Direct(B::Zidz, &[2]),
        "initial" => Direct(B::Init, &[1]),
        "active initial" => Direct(B::ActiveInitial, &[2]),
        "sample if true" => Direct(B::SampleIfTrue, &[3]),
        "step" => Direct(B::Step, &[2]),
        "ramp" => Direct(B::Ramp, &[2, 3]),
        "pulse" => Direct(B::PulseWidth, &[2]),
        "pulse train" => Direct(B::PulseTrain, &[4]),
        "smooth" => Direct(B::Smooth1, &[2]),
        "smoothi" => WithInitial(B::Smooth1),
        "smooth3" => Direct(B::Smooth3, &[2]),
        "smooth3i" => WithInitial(B::Smooth3),
        "smooth n" => NBeforeInitial(B::SmoothN),
        "delay1" => Direct(B::Delay1, &[2]),
        "delay1i" => WithInitial(B::Delay1),
        "delay3" => Direct(B::Delay3, &[2]),
        "delay3i" => WithInitial(B::Delay3),
        "delay n" => NBeforeInitial(B::DelayNStaged),
        "delay fixed" => Composite(self::Composite::DelayFixed),
        "trend" => Direct(B::Trend, &[3]),
        "forecast" => Direct(B::Forecast, &[3]),
        "npv" => Direct(B::Npv, &[4]),
        "game" => Direct(B::Game, &[1]),
        "random uniform" => Direct(B::RandomUniform, &[3]),
        "random normal" => Direct(B::RandomNormal, &[5]),
        "random exponential" => Direct(B::RandomExponential, &[5]),
        "random poisson" => Direct(B::RandomPoisson, &[6]),
        "random triangular" => Direct(B::RandomTriangular, &[6]),
        "random weibull" => Direct(B::RandomWeibull, &[6]),
        "random gamma" => Direct(B::RandomGamma, &[6]),
        "random beta" => Direct(B::RandomBeta, &[7]),
        "random binomial" => Direct(B::RandomBinomial, &[7]),
        "random negative binomial" => Direct(B::RandomNegativeBinomial, &[7]),
        "lookup invert" => Direct(B::LookupInvert, &[2]),
        "lookup extrapolate" => Direct(B::LookupExtrapolate, &[2]),
        "lookup forward" => Direct(B::LookupForward, &[2]),
        "lookup backward" => Direct(B::LookupBackward, &[2]),
        "invert matrix" => Direct(B::InvertMatrix, &[2]),
        "vector select" => Direct(B::VectorSelect, &[5]),
        "vector sort order" => Direct(B::VectorSortOrder, &[2]),
        "vector rank" => Direct(B::VectorRank, &[2]),
        "vector reorder" => Direct(B::VectorReorder, &[2]),
        "allocate by priority" => Direct(B::AllocateByPriority, &[5]),
        "allocate available" => Direct(B::AllocateAvailable, &[3]),
        "get time value" => TimeValue,
        "if then else" => Composite(self::Composite::IfThenElse),
        "integer" => Composite(self::Composite::Integer),
        "quantum" => Composite(self::Composite::Quantum),
        "log" => Composite(self::Composite::Log),
        "power" => Composite(self::Composite::Power),
        "modulo" => Composite(self::Composite::Modulo),
        "sinh" => Composite(self::Composite::Sinh),
        "cosh" => Composite(self::Composite::Cosh),
        "tanh" => Composite(self::Composite::Tanh),
        "vector elm map" | "vector lookup" | "lookup area" | "get data at time" | "get data last time"
        | "time base" | "delay conveyor" | "delay profile" | "random lognormal" | "random pink noise" | "fifo"
        | "queue fifo" | "cumulate" | "shift if true" | "find zero" | "dynamic data" | "sshape" | "elmcount"
        | "with lookup" | "integ" | "a function of" | "tabbed array" => Unsupported,
        _ if key.starts_with("get ") => Unsupported,
        _ => return None,
    })
}

/// Whether a function takes arrays whose subscripts may be written `dim!` (all elements of
/// `dim`): the array functions, and the functions named as not supported (their own
/// diagnostic follows the reading of their arguments).
pub fn takes_arrays(key: &str) -> bool {
    matches!(key, "sum" | "prod" | "vmin" | "vmax" | "vector select")
        || matches!(mapping(key), Some(Mapping::Unsupported))
}

/// The number of arguments each composite takes.
fn composite_arity(composite: Composite) -> usize {
    match composite {
        Composite::IfThenElse | Composite::DelayFixed => 3,
        Composite::Integer | Composite::Sinh | Composite::Cosh | Composite::Tanh => 1,
        Composite::Quantum | Composite::Log | Composite::Power | Composite::Modulo => 2,
    }
}

/// The expression of a call `name(args)`.
pub fn call(p: &mut Parser, name: &str, key: &str, args: Vec<Expr>, name_span: Span, span: Span) -> Parsed<Expr> {
    if p.scope.unreadable.contains(key) {
        return Ok(call_expr(Function::Lookup(key.to_string()), args, span));
    }
    if p.scope.lookups.contains_key(key) {
        check_count(p, name, &[1], args.len(), span)?;
        return Ok(call_expr(Function::Lookup(key.to_string()), args, span));
    }
    if let Some(&arity) = p.scope.macros.get(key) {
        check_count(p, name, &[arity], args.len(), span)?;
        return Ok(call_expr(Function::Macro(key.to_string()), args, span));
    }
    let Some(mapping) = mapping(key) else {
        let message = if p.scope.variables.contains_key(key) {
            format!("`{name}` is a variable, not a graphical function or macro, and cannot be called")
        } else {
            format!("unknown function `{name}`")
        };
        return Err(p.error("E1005", message, name_span, "unknown function"));
    };
    match mapping {
        Mapping::Direct(builtin, counts) => {
            check_count(p, name, counts, args.len(), span)?;
            Ok(call_expr(Function::Builtin(builtin), args, span))
        }
        Mapping::WithInitial(builtin) => {
            check_count(p, name, &[3], args.len(), span)?;
            Ok(call_expr(Function::Builtin(builtin), args, span))
        }
        Mapping::NBeforeInitial(builtin) => {
            check_count(p, name, &[4], args.len(), span)?;
            let mut args = args;
            args.swap(2, 3);
            Ok(call_expr(Function::Builtin(builtin), args, span))
        }
        Mapping::Composite(composite) => {
            check_count(p, name, &[composite_arity(composite)], args.len(), span)?;
            Ok(composite_expr(composite, args, span))
        }
        Mapping::TimeValue => {
            check_count(p, name, &[3], args.len(), span)?;
            time_value(p, args, name_span, span)
        }
        Mapping::Unsupported => {
            let upper = name.to_uppercase();
            Err(p.error(
                "E1002",
                format!("Vensim's `{upper}` is not supported here"),
                name_span,
                "not supported",
            ))
        }
    }
}

/// `GET TIME VALUE(0, offset, 0)`: the current time in the model's units plus the offset.
/// The calendar measures (1 to 10) depend on Vensim's date settings, the computer's clock
/// (relativeto 2) on the moment of the run, and the initial time (relativeto 1) is not read
/// as Vensim's documentation says it is: all are E1002, as is a relativeto or measure that is
/// not a number written in the call.
fn time_value(p: &mut Parser, args: Vec<Expr>, name_span: Span, span: Span) -> Parsed<Expr> {
    let literal = |e: &Expr| match e.kind {
        ExprKind::Number(v) => Some(v),
        _ => None,
    };
    if (literal(&args[0]), literal(&args[2])) != (Some(0.0), Some(0.0)) {
        return Err(p.error(
            "E1002",
            "Vensim's `GET TIME VALUE` is supported only for the current time in the model's units (relativeto 0 and measure 0, written as numbers)",
            name_span,
            "not supported",
        ));
    }
    let offset = args.into_iter().nth(1).expect("the count was checked");
    Ok(binary(
        BinaryOp::Add,
        builtin(Builtin::Time, Vec::new(), span),
        offset,
        span,
    ))
}

fn check_count(p: &mut Parser, name: &str, counts: &[usize], given: usize, span: Span) -> Parsed<()> {
    if counts.contains(&given) {
        return Ok(());
    }
    let wanted = counts.iter().map(usize::to_string).collect::<Vec<_>>().join(" or ");
    Err(p.error(
        "E1005",
        format!("`{name}` takes {wanted} argument(s), given {given}"),
        span,
        "wrong number of arguments",
    ))
}

fn call_expr(function: Function, args: Vec<Expr>, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Call { function, args },
        span,
    }
}

fn builtin(b: Builtin, args: Vec<Expr>, span: Span) -> Expr {
    call_expr(Function::Builtin(b), args, span)
}

fn binary(op: BinaryOp, left: Expr, right: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
    }
}

fn number(value: f64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Number(value),
        span,
    }
}

fn negate(operand: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Unary {
            op: UnaryOp::Minus,
            operand: Box::new(operand),
        },
        span,
    }
}

fn if_expr(condition: Expr, then: Expr, otherwise: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::If {
            condition: Box::new(condition),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        },
        span,
    }
}

/// Vensim's `INTEGER(x)`: the integer part, truncated toward zero (the representation's
/// [`Builtin::Int`] rounds down, which differs below zero).
fn truncate(x: Expr, span: Span) -> Expr {
    let condition = binary(BinaryOp::GreaterEq, x.clone(), number(0.0, span), span);
    let down = builtin(Builtin::Int, vec![x.clone()], span);
    let up = negate(builtin(Builtin::Int, vec![negate(x, span)], span), span);
    if_expr(condition, down, up, span)
}

fn composite_expr(composite: Composite, args: Vec<Expr>, span: Span) -> Expr {
    let mut args = args.into_iter();
    let mut next = || args.next().expect("the count was checked");
    match composite {
        Composite::IfThenElse => {
            let (c, a, b) = (next(), next(), next());
            if_expr(c, a, b, span)
        }
        Composite::Integer => truncate(next(), span),
        Composite::Quantum => {
            // QUANTUM(x, q) = q * INTEGER(x / q), and x itself where q is not positive.
            let (x, q) = (next(), next());
            let positive = binary(BinaryOp::Greater, q.clone(), number(0.0, span), span);
            let steps = truncate(binary(BinaryOp::Div, x.clone(), q.clone(), span), span);
            if_expr(positive, binary(BinaryOp::Mul, q, steps, span), x, span)
        }
        Composite::Log => {
            let (x, base) = (next(), next());
            binary(
                BinaryOp::Div,
                builtin(Builtin::Ln, vec![x], span),
                builtin(Builtin::Ln, vec![base], span),
                span,
            )
        }
        Composite::Power => {
            let (a, b) = (next(), next());
            binary(BinaryOp::Pow, a, b, span)
        }
        Composite::Modulo => {
            // Vensim's MODULO keeps the sign of the dividend (MODULO(-10, 3) is -1), where the
            // representation's `Mod` keeps the divisor's: where the two signs differ (the
            // remainder times the dividend is below zero), the divisor is taken off once.
            let (a, b) = (next(), next());
            let remainder = binary(BinaryOp::Mod, a.clone(), b.clone(), span);
            let differs = binary(
                BinaryOp::Less,
                binary(BinaryOp::Mul, remainder.clone(), a, span),
                number(0.0, span),
                span,
            );
            let adjusted = binary(BinaryOp::Sub, remainder.clone(), b, span);
            if_expr(differs, adjusted, remainder, span)
        }
        Composite::Sinh | Composite::Cosh => {
            // (e^x -/+ e^-x) / 2
            let x = next();
            let up = builtin(Builtin::Exp, vec![x.clone()], span);
            let down = builtin(Builtin::Exp, vec![negate(x, span)], span);
            let op = if matches!(composite, Composite::Sinh) {
                BinaryOp::Sub
            } else {
                BinaryOp::Add
            };
            binary(BinaryOp::Div, binary(op, up, down, span), number(2.0, span), span)
        }
        Composite::Tanh => {
            // 1 - 2 / (e^(2x) + 1), which stays finite for inputs of any size.
            let x = next();
            let twice = binary(BinaryOp::Mul, number(2.0, span), x, span);
            let denominator = binary(
                BinaryOp::Add,
                builtin(Builtin::Exp, vec![twice], span),
                number(1.0, span),
                span,
            );
            binary(
                BinaryOp::Sub,
                number(1.0, span),
                binary(BinaryOp::Div, number(2.0, span), denominator, span),
                span,
            )
        }
        Composite::DelayFixed => {
            // Vensim reads the delay time once, at the start, as a whole number of steps
            // (rounded, at least one): INIT(MAX(ROUND(time / DT), 1) * DT).
            let (input, time, initial) = (next(), next(), next());
            let dt = builtin(Builtin::Dt, Vec::new(), span);
            let steps = builtin(
                Builtin::Round,
                vec![binary(BinaryOp::Div, time, dt.clone(), span)],
                span,
            );
            let at_least_one = builtin(Builtin::Max, vec![steps, number(1.0, span)], span);
            let fixed = builtin(Builtin::Init, vec![binary(BinaryOp::Mul, at_least_one, dt, span)], span);
            builtin(Builtin::DelayFixed, vec![input, fixed, initial], span)
        }
    }
}
