//! The values of Integer variables that ordinary equations define: an equation `k = r` between
//! an Integer variable and a Real value is a Real equation (the Integer side is converted), and
//! it cannot determine the Integer variable (MLS 3.8.4: a discrete-valued variable is solved
//! only from a discrete-valued equation). Computed anyway, the variable would hold 0.998.
//!
//! Input: a hybrid DAE and the simulation's plan. Output: E0611 at each equation that the plan
//! solves for an Integer variable standing alone on one side, whose other side is surely Real (a
//! Real variable, `time`, a Real number that is not whole, a quotient, an elementary function,
//! or arithmetic on one of them), and at the declaration of each Integer variable that alias
//! elimination replaced by such a value (a Real variable kept is judged by the value the plan
//! assigns it). It deliberately judges only what is sure:
//! a value of a user function, a variable the stages added (`$`-named), a whole Real number, an
//! Integer solved from a rearranged equation, the unknowns of algebraic loops and the outputs of
//! algorithm sections are left alone. Nor does it judge variability: an Integer or Boolean
//! computed by a function of continuous-time arguments, or through `noEvent`, changes between
//! events as the model asks (Modelica calls that illegal; other tools run it).

use crate::dae::Dae;
use crate::events::Hybrid;
use crate::plan::{Block, Plan};
use crate::structure::Unknown;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};
use eqm_ir::flat::{ScalarType, Variability};

/// E0611 for each Integer variable the plan computes from a Real value, or that alias
/// elimination made a Real constant that is not whole (see the module documentation).
pub(crate) fn check(dae: &Dae<Hybrid>, plan: &Plan) -> Result<(), Vec<Diagnostic>> {
    let mut found = Vec::new();
    let mut assigned = FxHashMap::default();
    for block in &plan.blocks {
        let Block::Explicit { eq, unknown, value } = *block else {
            continue;
        };
        let Unknown::Var(v) = plan.unknowns[unknown] else {
            continue;
        };
        assigned.insert(v, value);
        let equation = &dae.equations[eq];
        if judged(dae, v) && equates_with_real(dae, v, equation.lhs, equation.rhs) {
            found.push(real_value(dae, v, equation.span, "a Real equation"));
        }
    }
    for (k, alias) in dae.eliminated.iter().enumerate() {
        let v = VarId(k as u32);
        if let Some(value) = *alias
            && judged(dae, v)
            && alias_is_real(dae, &assigned, value)
        {
            found.push(real_value(
                dae,
                v,
                dae.flat.var(v).span,
                "declared here; equated with a Real value",
            ));
        }
    }
    if found.is_empty() { Ok(()) } else { Err(found) }
}

/// Whether `value`, what alias elimination replaced an Integer variable by, is surely Real. An
/// alias of two variables may keep either, so a Real variable kept is judged by the value the
/// plan assigns it (`k = x` with `x := time` is Real; with `x := if c then 1 else 2` it is not),
/// and a state always is.
fn alias_is_real(dae: &Dae<Hybrid>, assigned: &FxHashMap<VarId, ExprId>, value: ExprId) -> bool {
    let arena = dae.exprs();
    match arena.get(value) {
        Node::Unary(UnOp::Neg, a) => alias_is_real(dae, assigned, *a),
        Node::Var(w) if dae.flat.var(*w).ty == ScalarType::Real && !dae.flat.var(*w).name.starts_with('$') => {
            dae.kind(*w) == crate::dae::VarKind::State || assigned.get(w).is_some_and(|&e| surely_real(dae, arena, e))
        }
        Node::Var(_) => false,
        _ => surely_real(dae, arena, value),
    }
}

/// Whether `v` is an Integer variable of the model (not a parameter, not one a stage added).
fn judged(dae: &Dae<Hybrid>, v: VarId) -> bool {
    let variable = dae.flat.var(v);
    variable.ty == ScalarType::Integer
        && !variable.name.starts_with('$')
        && !matches!(variable.variability, Variability::Parameter | Variability::Constant)
}

fn real_value(dae: &Dae<Hybrid>, v: VarId, span: eqm_diag::source::Span, label: &str) -> Diagnostic {
    Diagnostic::error(
        "E0611",
        format!("the Integer variable `{}` is equated with a Real value", dae.flat.var(v).name),
        span,
        label,
    )
    .with_help(
        "an Integer variable takes only Integer values: convert with `integer(...)` (which makes events), or declare the variable Real",
    )
}

/// Whether the equation `lhs = rhs` equates Integer variable `v`, one side alone, with a value
/// that is surely Real.
fn equates_with_real(dae: &Dae<Hybrid>, v: VarId, lhs: ExprId, rhs: ExprId) -> bool {
    let arena = dae.exprs();
    let other = match (arena.get(lhs), arena.get(rhs)) {
        (Node::Var(w), _) if *w == v => rhs,
        (_, Node::Var(w)) if *w == v => lhs,
        _ => return false,
    };
    surely_real(dae, arena, other)
}

/// Whether `e` is surely of type Real (see the module documentation).
fn surely_real(dae: &Dae<Hybrid>, arena: &ExprArena, e: ExprId) -> bool {
    use eqm_ir::builtins::Builtin;
    match arena.get(e) {
        Node::Real(bits) => f64::from_bits(*bits).fract() != 0.0,
        Node::Var(w) => {
            let variable = dae.flat.var(*w);
            variable.ty == ScalarType::Real && !variable.name.starts_with('$')
        }
        Node::Time => true,
        Node::Unary(UnOp::Neg, a) => surely_real(dae, arena, *a),
        Node::Binary(BinOp::Div, ..) => true,
        Node::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) | Node::If(_, a, b) => {
            surely_real(dae, arena, *a) || surely_real(dae, arena, *b)
        }
        Node::Call(Callee::Builtin(b), _) => matches!(
            b,
            Builtin::Der
                | Builtin::Sin
                | Builtin::Cos
                | Builtin::Tan
                | Builtin::Asin
                | Builtin::Acos
                | Builtin::Atan
                | Builtin::Atan2
                | Builtin::Sinh
                | Builtin::Cosh
                | Builtin::Tanh
                | Builtin::Exp
                | Builtin::Log
                | Builtin::Log10
                | Builtin::Sqrt
        ),
        _ => false,
    }
}
