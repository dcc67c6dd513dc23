//! The one table of built-in functions and operators.
//!
//! Input: nothing; this is static data. Output: [`Builtin`] ids with their name, arity, kind and
//! numeric implementation. The resolver (unknown names, did-you-mean), the flattener (arity and
//! types), the differentiator, the interpreter and the JIT all read this table, so adding a
//! function is one entry here plus its tests. Each entry also carries its derivative rule
//! ([`Derivative`]), which the symbolic differentiator applies with the chain rule. The table
//! deliberately does not describe how operators (`der`, `pre`, `noEvent`, ...) are
//! differentiated or evaluated: the stages handle those themselves.

use crate::ids::{BinOp, ExprId, UnOp};

/// What a derivative rule needs to build the derivative's expression: the constructors of the
/// expression arena, which implements it. The table names this trait instead of the arena so
/// that it does not depend on how expressions are stored.
pub trait ExprBuilder {
    fn real(&mut self, v: f64) -> ExprId;
    fn int(&mut self, v: i64) -> ExprId;
    fn unary(&mut self, op: UnOp, a: ExprId) -> ExprId;
    fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId;
    fn builtin(&mut self, f: Builtin, args: Vec<ExprId>) -> ExprId;
    fn if_then_else(&mut self, condition: ExprId, then: ExprId, otherwise: ExprId) -> ExprId;
}

/// How a built-in behaves in the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinKind {
    /// A real function such as `sin`: evaluated numerically, differentiable, no events (also
    /// `abs`, which Modelica defines as `noEvent(if v >= 0 then v else -v)`).
    Math,
    /// A real function with discontinuities (`sign`, `floor`, ...): generates events outside
    /// `noEvent` in a continuous context.
    EventMath,
    /// An operator on variables or time (`der`, `pre`, `sample`, `initial`, ...), handled by the
    /// stages themselves rather than evaluated as a function.
    Operator,
    /// Functions on arrays, evaluated while flattening (`size`, `sum`, `fill`, ...).
    Array,
}

macro_rules! builtins {
    ($( $variant:ident = $name:literal, $min:literal ..= $max:literal, $kind:ident, $eval:expr, $deriv:expr; )*) => {
        /// A built-in function or operator; its data is in [`Builtin::info`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Builtin { $( $variant, )* }

        /// Every built-in, in table order.
        pub const ALL: &[Builtin] = &[ $( Builtin::$variant, )* ];

        const TABLE: &[BuiltinInfo] = &[ $( BuiltinInfo {
            name: $name,
            min_args: $min,
            max_args: $max,
            kind: BuiltinKind::$kind,
            eval: $eval,
            derivative: $deriv,
        }, )* ];
    };
}

/// A numeric implementation: the same Rust function serves the interpreter and (registered under
/// an `eqm_` symbol) the JIT, so both back ends agree bit for bit.
#[derive(Clone, Copy)]
pub enum Eval {
    None,
    Unary(fn(f64) -> f64),
    Binary(fn(f64, f64) -> f64),
}

impl std::fmt::Debug for Eval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Eval::None => "None",
            Eval::Unary(_) => "Unary",
            Eval::Binary(_) => "Binary",
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct BuiltinInfo {
    pub name: &'static str,
    pub min_args: u8,
    pub max_args: u8,
    pub kind: BuiltinKind,
    pub eval: Eval,
    pub derivative: Derivative,
}

/// How a call is differentiated.
#[derive(Clone, Copy)]
pub enum Derivative {
    /// Not a differentiable function: operators (handled by the differentiator itself) and
    /// array functions (gone after flattening).
    None,
    /// Piecewise constant (`sign`, `floor`, ...): the derivative is 0 wherever it exists.
    Zero,
    /// `rule(arena, args, dargs)` builds the derivative of the call from its arguments and the
    /// derivatives of the arguments (the chain rule is part of the rule); `None` when the
    /// number of arguments does not fit. The result need not be simplified.
    Rule(fn(&mut dyn ExprBuilder, &[ExprId], &[ExprId]) -> Option<ExprId>),
}

impl std::fmt::Debug for Derivative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Derivative::None => "None",
            Derivative::Zero => "Zero",
            Derivative::Rule(_) => "Rule",
        })
    }
}

use Derivative as D;

builtins! {
    Abs = "abs", 1..=1, Math, Eval::Unary(f64::abs), D::Rule(d_abs);
    Sign = "sign", 1..=1, EventMath, Eval::Unary(sign), D::Zero;
    Sqrt = "sqrt", 1..=1, Math, Eval::Unary(f64::sqrt), D::Rule(d_sqrt);
    Exp = "exp", 1..=1, Math, Eval::Unary(f64::exp), D::Rule(d_exp);
    Log = "log", 1..=1, Math, Eval::Unary(f64::ln), D::Rule(d_log);
    Log10 = "log10", 1..=1, Math, Eval::Unary(f64::log10), D::Rule(d_log10);
    Sin = "sin", 1..=1, Math, Eval::Unary(f64::sin), D::Rule(d_sin);
    Cos = "cos", 1..=1, Math, Eval::Unary(f64::cos), D::Rule(d_cos);
    Tan = "tan", 1..=1, Math, Eval::Unary(f64::tan), D::Rule(d_tan);
    Asin = "asin", 1..=1, Math, Eval::Unary(f64::asin), D::Rule(d_asin);
    Acos = "acos", 1..=1, Math, Eval::Unary(f64::acos), D::Rule(d_acos);
    Atan = "atan", 1..=1, Math, Eval::Unary(f64::atan), D::Rule(d_atan);
    Atan2 = "atan2", 2..=2, Math, Eval::Binary(f64::atan2), D::Rule(d_atan2);
    Sinh = "sinh", 1..=1, Math, Eval::Unary(f64::sinh), D::Rule(d_sinh);
    Cosh = "cosh", 1..=1, Math, Eval::Unary(f64::cosh), D::Rule(d_cosh);
    Tanh = "tanh", 1..=1, Math, Eval::Unary(f64::tanh), D::Rule(d_tanh);
    Erf = "erf", 1..=1, Math, Eval::Unary(libm::erf), D::Rule(d_erf);
    Erfc = "erfc", 1..=1, Math, Eval::Unary(libm::erfc), D::Rule(d_erfc);
    Min = "min", 1..=2, EventMath, Eval::Binary(min), D::Rule(d_min);
    Max = "max", 1..=2, EventMath, Eval::Binary(max), D::Rule(d_max);
    Floor = "floor", 1..=1, EventMath, Eval::Unary(f64::floor), D::Zero;
    Ceil = "ceil", 1..=1, EventMath, Eval::Unary(f64::ceil), D::Zero;
    Integer = "integer", 1..=1, EventMath, Eval::Unary(f64::floor), D::Zero;
    Mod = "mod", 2..=2, EventMath, Eval::Binary(modulo), D::Rule(d_mod);
    Rem = "rem", 2..=2, EventMath, Eval::Binary(remainder), D::Rule(d_rem);
    Div = "div", 2..=2, EventMath, Eval::Binary(truncated_div), D::Zero;
    Homotopy = "homotopy", 2..=2, Math, Eval::Binary(homotopy_actual), D::Rule(d_homotopy);
    Der = "der", 1..=1, Operator, Eval::None, D::None;
    Pre = "pre", 1..=1, Operator, Eval::None, D::None;
    Edge = "edge", 1..=1, Operator, Eval::None, D::None;
    Change = "change", 1..=1, Operator, Eval::None, D::None;
    Initial = "initial", 0..=0, Operator, Eval::None, D::None;
    Terminal = "terminal", 0..=0, Operator, Eval::None, D::None;
    Sample = "sample", 2..=2, Operator, Eval::None, D::None;
    Delay = "delay", 2..=3, Operator, Eval::None, D::None;
    SpatialDistribution = "$spatialDistribution", 9..=255, Operator, Eval::None, D::None;
    NoEvent = "noEvent", 1..=1, Operator, Eval::None, D::None;
    Smooth = "smooth", 2..=2, Operator, Eval::None, D::None;
    Reinit = "reinit", 2..=2, Operator, Eval::None, D::None;
    Assert = "assert", 2..=3, Operator, Eval::None, D::None;
    Terminate = "terminate", 1..=1, Operator, Eval::None, D::None;
    Size = "size", 1..=2, Array, Eval::None, D::None;
    Sum = "sum", 1..=1, Array, Eval::None, D::None;
    Product = "product", 1..=1, Array, Eval::None, D::None;
    Fill = "fill", 2..=8, Array, Eval::None, D::None;
    Zeros = "zeros", 1..=8, Array, Eval::None, D::None;
    Ones = "ones", 1..=8, Array, Eval::None, D::None;
    Ndims = "ndims", 1..=1, Array, Eval::None, D::None;
    Transpose = "transpose", 1..=1, Array, Eval::None, D::None;
    Identity = "identity", 1..=1, Array, Eval::None, D::None;
    Linspace = "linspace", 3..=3, Array, Eval::None, D::None;
    Cross = "cross", 2..=2, Array, Eval::None, D::None;
    Diagonal = "diagonal", 1..=1, Array, Eval::None, D::None;
    OuterProduct = "outerProduct", 2..=2, Array, Eval::None, D::None;
    Cat = "cat", 2..=64, Array, Eval::None, D::None;
    Vector = "vector", 1..=1, Array, Eval::None, D::None;
    Matrix = "matrix", 1..=1, Array, Eval::None, D::None;
    Scalar = "scalar", 1..=1, Array, Eval::None, D::None;
    Symmetric = "symmetric", 1..=1, Array, Eval::None, D::None;
    Skew = "skew", 1..=1, Array, Eval::None, D::None;
    ReadMatrix = "readMatrix", 1..=1, Array, Eval::None, D::None;
}

impl Builtin {
    pub fn info(self) -> &'static BuiltinInfo {
        &TABLE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Looks a built-in up by its source name.
    pub fn by_name(name: &str) -> Option<Builtin> {
        ALL.iter().copied().find(|b| b.name() == name)
    }

    /// True for functions whose relations generate events (`sign`, `min`, `max`, ...).
    pub fn generates_events(self) -> bool {
        self.info().kind == BuiltinKind::EventMath
    }
}

// Derivative rules: `a` are the arguments, `d` their derivatives.

fn bin(arena: &mut dyn ExprBuilder, op: BinOp, x: ExprId, y: ExprId) -> ExprId {
    arena.binary(op, x, y)
}

fn call1(arena: &mut dyn ExprBuilder, f: Builtin, x: ExprId) -> ExprId {
    arena.builtin(f, vec![x])
}

/// `f'(x) * dx` for a one-argument function given `f'(x)`.
fn chain1(
    arena: &mut dyn ExprBuilder,
    a: &[ExprId],
    d: &[ExprId],
    df: fn(&mut dyn ExprBuilder, ExprId) -> ExprId,
) -> Option<ExprId> {
    match (a, d) {
        ([x], [dx]) => {
            let f = df(arena, *x);
            Some(bin(arena, BinOp::Mul, f, *dx))
        }
        _ => None,
    }
}

/// `dx / g(x)` for a one-argument function whose derivative is `1/g(x)`.
fn over1(
    arena: &mut dyn ExprBuilder,
    a: &[ExprId],
    d: &[ExprId],
    g: fn(&mut dyn ExprBuilder, ExprId) -> ExprId,
) -> Option<ExprId> {
    match (a, d) {
        ([x], [dx]) => {
            let g = g(arena, *x);
            Some(bin(arena, BinOp::Div, *dx, g))
        }
        _ => None,
    }
}

/// `1 - x^2`, shared by `asin` and `acos`.
fn sqrt_one_minus_square(arena: &mut dyn ExprBuilder, x: ExprId) -> ExprId {
    let one = arena.real(1.0);
    let two = arena.int(2);
    let sq = bin(arena, BinOp::Pow, x, two);
    let diff = bin(arena, BinOp::Sub, one, sq);
    call1(arena, Builtin::Sqrt, diff)
}

fn d_abs(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| call1(ar, Builtin::Sign, x))
}

fn d_sqrt(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |ar, x| {
        let two = ar.real(2.0);
        let s = call1(ar, Builtin::Sqrt, x);
        bin(ar, BinOp::Mul, two, s)
    })
}

fn d_exp(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| call1(ar, Builtin::Exp, x))
}

fn d_log(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |_, x| x)
}

fn d_log10(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |ar, x| {
        let ln10 = ar.real(std::f64::consts::LN_10);
        bin(ar, BinOp::Mul, ln10, x)
    })
}

fn d_sin(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| call1(ar, Builtin::Cos, x))
}

fn d_cos(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| {
        let s = call1(ar, Builtin::Sin, x);
        ar.unary(UnOp::Neg, s)
    })
}

fn d_tan(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |ar, x| {
        let c = call1(ar, Builtin::Cos, x);
        let two = ar.int(2);
        bin(ar, BinOp::Pow, c, two)
    })
}

fn d_asin(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, sqrt_one_minus_square)
}

fn d_acos(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |ar, x| {
        let s = sqrt_one_minus_square(ar, x);
        ar.unary(UnOp::Neg, s)
    })
}

fn d_atan(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    over1(arena, a, d, |ar, x| {
        let one = ar.real(1.0);
        let two = ar.int(2);
        let sq = bin(ar, BinOp::Pow, x, two);
        bin(ar, BinOp::Add, one, sq)
    })
}

/// `atan2(y, x)' = (x*dy - y*dx) / (x^2 + y^2)`.
fn d_atan2(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    let ([y, x], [dy, dx]) = (a, d) else { return None };
    let p = bin(arena, BinOp::Mul, *x, *dy);
    let q = bin(arena, BinOp::Mul, *y, *dx);
    let num = bin(arena, BinOp::Sub, p, q);
    let two = arena.int(2);
    let x2 = bin(arena, BinOp::Pow, *x, two);
    let y2 = bin(arena, BinOp::Pow, *y, two);
    let den = bin(arena, BinOp::Add, x2, y2);
    Some(bin(arena, BinOp::Div, num, den))
}

fn d_sinh(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| call1(ar, Builtin::Cosh, x))
}

fn d_cosh(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| call1(ar, Builtin::Sinh, x))
}

/// `tanh' = 1 - tanh^2`, which stays finite where `cosh` overflows.
fn d_tanh(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| {
        let one = ar.real(1.0);
        let t = call1(ar, Builtin::Tanh, x);
        let two = ar.int(2);
        let sq = bin(ar, BinOp::Pow, t, two);
        bin(ar, BinOp::Sub, one, sq)
    })
}

/// `erf(x)' = 2/sqrt(pi) exp(-x^2)`.
fn d_erf(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, gaussian_slope)
}

/// `erfc(x)' = -2/sqrt(pi) exp(-x^2)`.
fn d_erfc(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    chain1(arena, a, d, |ar, x| {
        let slope = gaussian_slope(ar, x);
        ar.unary(UnOp::Neg, slope)
    })
}

/// `2/sqrt(pi) exp(-x^2)`, the slope of `erf` at `x`.
fn gaussian_slope(ar: &mut dyn ExprBuilder, x: ExprId) -> ExprId {
    let factor = ar.real(std::f64::consts::FRAC_2_SQRT_PI);
    let two = ar.int(2);
    let square = bin(ar, BinOp::Pow, x, two);
    let negated = ar.unary(UnOp::Neg, square);
    let e = call1(ar, Builtin::Exp, negated);
    bin(ar, BinOp::Mul, factor, e)
}

/// `min`/`max` differentiate branch-wise with the same comparison as [`min`]/[`max`], so the
/// derivative follows the branch whose value is taken.
fn branchwise(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId], op: BinOp) -> Option<ExprId> {
    let ([x, y], [dx, dy]) = (a, d) else { return None };
    let c = bin(arena, op, *x, *y);
    Some(arena.if_then_else(c, *dx, *dy))
}

/// `homotopy(actual, simplified)` differentiates argument by argument, so that a differentiated
/// equation keeps its simplified form for the initialization.
fn d_homotopy(arena: &mut dyn ExprBuilder, _a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    match d {
        [actual, simplified] => Some(arena.builtin(Builtin::Homotopy, vec![*actual, *simplified])),
        _ => None,
    }
}

fn d_min(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    branchwise(arena, a, d, BinOp::Le)
}

fn d_max(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    branchwise(arena, a, d, BinOp::Ge)
}

/// `x - q(x, y)*y` differentiates to `dx - q*dy` between the jumps of the integer quotient `q`.
fn quotient_rule(
    arena: &mut dyn ExprBuilder,
    a: &[ExprId],
    d: &[ExprId],
    q: fn(&mut dyn ExprBuilder, ExprId, ExprId) -> ExprId,
) -> Option<ExprId> {
    let ([x, y], [dx, dy]) = (a, d) else { return None };
    let q = q(arena, *x, *y);
    let t = bin(arena, BinOp::Mul, q, *dy);
    Some(bin(arena, BinOp::Sub, *dx, t))
}

fn d_mod(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    quotient_rule(arena, a, d, |ar, x, y| {
        let r = bin(ar, BinOp::Div, x, y);
        call1(ar, Builtin::Floor, r)
    })
}

fn d_rem(arena: &mut dyn ExprBuilder, a: &[ExprId], d: &[ExprId]) -> Option<ExprId> {
    quotient_rule(arena, a, d, |ar, x, y| ar.builtin(Builtin::Div, vec![x, y]))
}

/// Modelica's `sign`: -1, 0 or 1.
pub fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Modelica's `min`, with NaN propagating (as Cranelift's `fmin` does), so both back ends agree.
/// The value of `homotopy(actual, simplified)` outside the initialization's continuation: the
/// actual expression (the compiler blends the two only in the initialization's own system).
pub fn homotopy_actual(actual: f64, _simplified: f64) -> f64 {
    actual
}

pub fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// Modelica's `max`, with NaN propagating.
pub fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// Modelica's `mod(x, y) = x - floor(x/y)*y`.
pub fn modulo(x: f64, y: f64) -> f64 {
    x - (x / y).floor() * y
}

/// Modelica's `rem(x, y) = x - div(x, y)*y`.
pub fn remainder(x: f64, y: f64) -> f64 {
    x - truncated_div(x, y) * y
}

/// Modelica's `div`: the quotient truncated towards zero.
pub fn truncated_div(x: f64, y: f64) -> f64 {
    (x / y).trunc()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent_and_names_are_unique() {
        for (i, b) in ALL.iter().enumerate() {
            assert_eq!(*b as usize, i);
            assert_eq!(Builtin::by_name(b.name()), Some(*b));
            assert!(b.info().min_args <= b.info().max_args);
        }
    }

    #[test]
    fn modelica_integer_functions() {
        assert_eq!(modulo(-7.0, 3.0), 2.0);
        assert_eq!(remainder(-7.0, 3.0), -1.0);
        assert_eq!(truncated_div(-7.0, 3.0), -2.0);
        assert_eq!(sign(-0.5), -1.0);
        assert!(min(f64::NAN, 1.0).is_nan());
    }
}
