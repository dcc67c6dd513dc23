//! The number of elements of a range whose bounds are computed during the run but whose
//! distance is not: `i - 2:i - 1` has 2 elements whatever `i` is. Modelica gives the range
//! `a:s:b` the size `max(floor((b - a)/s) + 1, 0)`, so when `b - a` and `s` are constants the
//! size is known at translation even though the elements are not.
//!
//! Input: the flattened expressions of the range's start, step and stop. Output: the number of
//! elements, or `None` when it cannot be proved. The proof writes each bound as a sum of
//! integer multiples of the same subexpressions plus a constant (expressions are hash-consed, so
//! equal subexpressions are the same node) and checks that these multiples cancel in `b - a`.
//! It deliberately knows only `+`, `-`, negation and products by a constant: anything else
//! (`2*i:2*i + 1` is fine, `i*i:i*i + 1` too, but `div(i, 2):i/2` is not) stays an opaque term,
//! and a range it cannot prove keeps needing a length from its surroundings.

use crate::consteval::ConstCache;
use eqm_ir::expr::{BinOp, ExprId, Node, UnOp};
use eqm_ir::flat::FlatModel;

/// The most expression nodes the proof visits for one bound: expressions are shared graphs, so
/// a walk that expands them as trees must stop before a deep sharing makes it exponential.
const MAX_VISITED: usize = 10_000;

/// The number of elements of the range `start:step:stop` when `stop - start` and `step` are
/// constants (and the step is not zero), whatever the values of the rest. The expressions of
/// parameters the proof took as constants are appended to `structural`: the size depends on
/// their values, which the run may then not change.
pub(crate) fn proven_range_length(
    model: &FlatModel,
    consts: &mut ConstCache,
    (start, step, stop): (ExprId, ExprId, ExprId),
    structural: &mut Vec<ExprId>,
) -> Option<usize> {
    let step = integer_constant(model, consts, step, structural)?;
    let mut terms = Vec::new();
    let mut distance = 0i64;
    distance = distance.checked_add(linear_terms(model, consts, stop, 1, &mut terms, structural)?)?;
    distance = distance.checked_add(linear_terms(model, consts, start, -1, &mut terms, structural)?)?;
    // The terms of `stop` came with the factor 1 and those of `start` with -1: they cancel
    // when every subexpression's factors add up to zero.
    terms.sort_unstable_by_key(|&(id, _)| id.0);
    let mut k = 0;
    while k < terms.len() {
        let id = terms[k].0;
        let mut sum = 0i64;
        while k < terms.len() && terms[k].0 == id {
            sum = sum.checked_add(terms[k].1)?;
            k += 1;
        }
        if sum != 0 {
            return None;
        }
    }
    range_size(distance, step)
}

/// The number of elements of a range whose stop minus start is `distance` and whose step is
/// `step`: `max(floor(distance/step) + 1, 0)`, `None` for a step of zero.
fn range_size(distance: i64, step: i64) -> Option<usize> {
    if step == 0 {
        return None;
    }
    let floor = floor_div(distance, step)?;
    usize::try_from(floor.checked_add(1)?.max(0)).ok()
}

/// `floor(a/b)` for `b` not zero.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// The value of `e` when it is an Integer constant (a literal, or an expression of constants and
/// parameters, which is then appended to `structural`).
fn integer_constant(
    model: &FlatModel,
    consts: &mut ConstCache,
    e: ExprId,
    structural: &mut Vec<ExprId>,
) -> Option<i64> {
    if let Node::Int(k) = model.exprs.get(e) {
        return Some(*k);
    }
    let x = consts.eval(model, e)?;
    let k = (x.fract() == 0.0 && x.abs() < 9.0e15).then_some(x as i64)?;
    structural.push(e);
    Some(k)
}

/// Writes `factor * e` as a constant (returned) plus the terms `(subexpression, multiple)` it
/// appends to `terms`; `None` when a constant overflows or the walk grows too large.
fn linear_terms(
    model: &FlatModel,
    consts: &mut ConstCache,
    e: ExprId,
    factor: i64,
    terms: &mut Vec<(ExprId, i64)>,
    structural: &mut Vec<ExprId>,
) -> Option<i64> {
    let mut constant = 0i64;
    let mut pending = vec![(e, factor)];
    let mut visited = 0;
    while let Some((e, factor)) = pending.pop() {
        visited += 1;
        if visited > MAX_VISITED {
            return None;
        }
        if let Some(k) = integer_constant(model, consts, e, structural) {
            constant = constant.checked_add(factor.checked_mul(k)?)?;
            continue;
        }
        match *model.exprs.get(e) {
            Node::Binary(BinOp::Add, x, y) => pending.extend([(x, factor), (y, factor)]),
            Node::Binary(BinOp::Sub, x, y) => pending.extend([(x, factor), (y, factor.checked_neg()?)]),
            Node::Unary(UnOp::Neg, x) => pending.push((x, factor.checked_neg()?)),
            Node::Binary(BinOp::Mul, x, y) => {
                match (
                    integer_constant(model, consts, x, structural),
                    integer_constant(model, consts, y, structural),
                ) {
                    (Some(k), _) => pending.push((y, factor.checked_mul(k)?)),
                    (_, Some(k)) => pending.push((x, factor.checked_mul(k)?)),
                    _ => terms.push((e, factor)),
                }
            }
            _ => terms.push((e, factor)),
        }
    }
    Some(constant)
}

#[cfg(test)]
mod tests {
    use super::range_size;

    #[test]
    fn sizes_follow_modelicas_rule() {
        assert_eq!(range_size(1, 1), Some(2));
        assert_eq!(range_size(0, 1), Some(1));
        assert_eq!(range_size(-1, 1), Some(0));
        assert_eq!(range_size(5, 2), Some(3));
        assert_eq!(range_size(4, 2), Some(3));
        assert_eq!(range_size(-4, -2), Some(3));
        assert_eq!(range_size(-5, -2), Some(3));
        assert_eq!(range_size(3, -1), Some(0));
        assert_eq!(range_size(1, 0), None);
    }
}
