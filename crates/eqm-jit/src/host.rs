//! The host functions that compiled code calls, registered with the JIT under `eqm_` names.
//!
//! Every function here calls exactly the Rust function the evaluator ([`eqm_ir::symbolic::eval`])
//! calls for the same operation, so that compiled code and the evaluator agree bit for bit. They
//! are `extern "C"` (the JIT calls them with the platform's C convention) and never panic:
//! unwinding out of an `extern "C"` function would abort the process, so an operation the
//! evaluator cannot perform gives NaN instead.
//!
//! Input: a built-in function or operator. Output: the host function implementing it, with its
//! symbol, address and arity, for the module to import. This module deliberately emits no code.

use eqm_ir::builtins::{ALL, Builtin, Eval};
use eqm_ir::expr::BinOp;
use eqm_ir::symbolic::eval;

/// A host function: its symbol, its address and how many `f64` arguments it takes (it always
/// returns one `f64`).
#[derive(Clone, Copy, Debug)]
pub(super) struct HostFn {
    pub symbol: &'static str,
    pub address: *const u8,
    pub arity: usize,
}

/// `a ^ b`, through the evaluator's own operator.
extern "C" fn eqm_pow(a: f64, b: f64) -> f64 {
    eval::binary(BinOp::Pow, a, b)
}

/// Built-in `B` (an index into [`ALL`]) applied to one argument through the evaluator.
/// Generic over the index so that each built-in gets its own small function; after inlining
/// it is a direct call of the table's implementation.
extern "C" fn unary<const B: usize>(x: f64) -> f64 {
    match ALL.get(B) {
        Some(&b) => eval::builtin(b, &[x]).unwrap_or(f64::NAN),
        None => f64::NAN,
    }
}

/// Built-in `B` applied to two arguments through the evaluator.
extern "C" fn binary<const B: usize>(x: f64, y: f64) -> f64 {
    match ALL.get(B) {
        Some(&b) => eval::builtin(b, &[x, y]).unwrap_or(f64::NAN),
        None => f64::NAN,
    }
}

type Unary = extern "C" fn(f64) -> f64;
type Binary = extern "C" fn(f64, f64) -> f64;

/// One instance of [`unary`] and [`binary`] per entry of the built-in table. The array types
/// have the table's length, so adding a built-in without extending this list is a compile
/// error rather than a missing symbol at run time.
macro_rules! per_builtin {
    ($($i:literal)*) => {
        const UNARY: [Unary; ALL.len()] = [$(unary::<$i>,)*];
        const BINARY: [Binary; ALL.len()] = [$(binary::<$i>,)*];
    };
}

per_builtin!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34
    35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
);

/// The symbols of the numeric built-ins, `eqm_` followed by the built-in's name, built once.
fn symbol(b: Builtin) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| ALL.iter().map(|b| format!("eqm_{}", b.name())).collect());
    names.get(b as usize).map_or("eqm_unknown", String::as_str)
}

/// The host function computing `a ^ b`.
pub(super) fn pow() -> HostFn {
    HostFn {
        symbol: "eqm_pow",
        address: eqm_pow as Binary as *const u8,
        arity: 2,
    }
}

/// The host function of a numeric built-in, or `None` for operators and array functions.
pub(super) fn builtin(b: Builtin) -> Option<HostFn> {
    let k = b as usize;
    let (address, arity) = match b.info().eval {
        Eval::Unary(_) => (*UNARY.get(k)? as *const u8, 1),
        Eval::Binary(_) => (*BINARY.get(k)? as *const u8, 2),
        Eval::None => return None,
    };
    Some(HostFn {
        symbol: symbol(b),
        address,
        arity,
    })
}

/// Every host function, for registration with the JIT's symbol table.
pub(super) fn all() -> impl Iterator<Item = HostFn> {
    std::iter::once(pow()).chain(ALL.iter().filter_map(|&b| builtin(b)))
}
