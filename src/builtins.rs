//! The one table of built-in functions and operators.
//!
//! Input: nothing; this is static data. Output: [`Builtin`] ids with their name, arity, kind and
//! numeric implementation. The resolver (unknown names, did-you-mean), the flattener (arity and
//! types), the differentiator, the interpreter and the JIT all read this table, so adding a
//! function is one entry here plus its tests. It deliberately holds no derivative rules yet;
//! those arrive with the symbolic core and live next to the table entry they belong to.

/// How a built-in behaves in the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinKind {
    /// A smooth real function such as `sin`: evaluated numerically, differentiable.
    Math,
    /// A real function with discontinuities (`abs`, `sign`, `floor`, ...): generates events
    /// outside `noEvent` in a continuous context.
    EventMath,
    /// An operator on variables or time (`der`, `pre`, `sample`, `initial`, ...), handled by the
    /// stages themselves rather than evaluated as a function.
    Operator,
    /// Functions on arrays, evaluated while flattening (`size`, `sum`, `fill`, ...).
    Array,
}

macro_rules! builtins {
    ($( $variant:ident = $name:literal, $min:literal ..= $max:literal, $kind:ident, $eval:expr; )*) => {
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
}

builtins! {
    Abs = "abs", 1..=1, EventMath, Eval::Unary(f64::abs);
    Sign = "sign", 1..=1, EventMath, Eval::Unary(sign);
    Sqrt = "sqrt", 1..=1, Math, Eval::Unary(f64::sqrt);
    Exp = "exp", 1..=1, Math, Eval::Unary(f64::exp);
    Log = "log", 1..=1, Math, Eval::Unary(f64::ln);
    Log10 = "log10", 1..=1, Math, Eval::Unary(f64::log10);
    Sin = "sin", 1..=1, Math, Eval::Unary(f64::sin);
    Cos = "cos", 1..=1, Math, Eval::Unary(f64::cos);
    Tan = "tan", 1..=1, Math, Eval::Unary(f64::tan);
    Asin = "asin", 1..=1, Math, Eval::Unary(f64::asin);
    Acos = "acos", 1..=1, Math, Eval::Unary(f64::acos);
    Atan = "atan", 1..=1, Math, Eval::Unary(f64::atan);
    Atan2 = "atan2", 2..=2, Math, Eval::Binary(f64::atan2);
    Sinh = "sinh", 1..=1, Math, Eval::Unary(f64::sinh);
    Cosh = "cosh", 1..=1, Math, Eval::Unary(f64::cosh);
    Tanh = "tanh", 1..=1, Math, Eval::Unary(f64::tanh);
    Min = "min", 1..=2, EventMath, Eval::Binary(min);
    Max = "max", 1..=2, EventMath, Eval::Binary(max);
    Floor = "floor", 1..=1, EventMath, Eval::Unary(f64::floor);
    Ceil = "ceil", 1..=1, EventMath, Eval::Unary(f64::ceil);
    Integer = "integer", 1..=1, EventMath, Eval::Unary(f64::floor);
    Mod = "mod", 2..=2, EventMath, Eval::Binary(modulo);
    Rem = "rem", 2..=2, EventMath, Eval::Binary(remainder);
    Div = "div", 2..=2, EventMath, Eval::Binary(truncated_div);
    Der = "der", 1..=1, Operator, Eval::None;
    Pre = "pre", 1..=1, Operator, Eval::None;
    Edge = "edge", 1..=1, Operator, Eval::None;
    Change = "change", 1..=1, Operator, Eval::None;
    Initial = "initial", 0..=0, Operator, Eval::None;
    Terminal = "terminal", 0..=0, Operator, Eval::None;
    Sample = "sample", 2..=2, Operator, Eval::None;
    NoEvent = "noEvent", 1..=1, Operator, Eval::None;
    Smooth = "smooth", 2..=2, Operator, Eval::None;
    Reinit = "reinit", 2..=2, Operator, Eval::None;
    Assert = "assert", 2..=3, Operator, Eval::None;
    Terminate = "terminate", 1..=1, Operator, Eval::None;
    Size = "size", 1..=2, Array, Eval::None;
    Sum = "sum", 1..=1, Array, Eval::None;
    Product = "product", 1..=1, Array, Eval::None;
    Fill = "fill", 2..=8, Array, Eval::None;
    Zeros = "zeros", 1..=8, Array, Eval::None;
    Ones = "ones", 1..=8, Array, Eval::None;
    Ndims = "ndims", 1..=1, Array, Eval::None;
    Transpose = "transpose", 1..=1, Array, Eval::None;
    Identity = "identity", 1..=1, Array, Eval::None;
    Linspace = "linspace", 3..=3, Array, Eval::None;
    Cross = "cross", 2..=2, Array, Eval::None;
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

    /// True for functions whose relations generate events (seed 001).
    pub fn generates_events(self) -> bool {
        self.info().kind == BuiltinKind::EventMath
    }
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
