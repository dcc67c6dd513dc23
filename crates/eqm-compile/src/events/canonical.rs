//! The canonical form of a relation `d op 0`, so that one comparison written in two ways
//! (`time < T0 + Tr`, `time - (Tr + T0) < 0`, `T0 + Tr > time`) is one relation variable in
//! every form of the model.
//!
//! Input: the arena, the surface `d` and the test. Output: a text key (the sum's terms with
//! their signs, sorted, and the test oriented so that the first term is positive). Two keys
//! are equal only when the relations hold at the same points, up to the rounding of the
//! reordered sum or product. It only reorders the terms of a sum and the factors of each term:
//! it does not expand products, collect like terms or fold constants, so a comparison rewritten
//! more deeply keeps a key of its own.

use super::Test;
use eqm_ir::expr::{BinOp, ExprId, Node, UnOp};
use eqm_ir::flat::FlatModel;

/// The key of the relation `d test 0` (see the module documentation).
pub(super) fn relation_key(flat: &FlatModel, d: ExprId, test: Test) -> String {
    // The terms of the sum `d`, each with its sign, by an explicit stack (no recursion).
    let mut terms: Vec<(bool, String)> = Vec::new();
    let mut stack = vec![(true, d)];
    while let Some((positive, e)) = stack.pop() {
        match flat.exprs.get(e) {
            Node::Binary(BinOp::Add, a, b) => {
                stack.push((positive, *b));
                stack.push((positive, *a));
            }
            Node::Binary(BinOp::Sub, a, b) => {
                stack.push((!positive, *b));
                stack.push((positive, *a));
            }
            Node::Unary(UnOp::Neg, a) => stack.push((!positive, *a)),
            _ if flat.exprs.literal(e) == Some(0.0) => {}
            _ => terms.push((positive, product_key(flat, e))),
        }
    }
    terms.sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)));
    // `d op 0` and `-d op' 0` (op' the mirrored test) are the same relation: the key takes the
    // orientation whose first term is positive.
    let flip = terms.first().is_some_and(|(positive, _)| !positive);
    let test = if flip { mirrored(test) } else { test };
    let mut key = String::new();
    for (positive, text) in &terms {
        let sign = if *positive != flip { '+' } else { '-' };
        key.push(sign);
        key.push_str(text);
        key.push(' ');
    }
    key.push_str(match test {
        Test::Positive => "> 0",
        Test::NonNegative => ">= 0",
        Test::Negative => "< 0",
        Test::NonPositive => "<= 0",
    });
    key
}

/// The key of one term: the texts of the factors of a product, sorted (`T*k` and `k*T` are one
/// term); any other term's text.
fn product_key(flat: &FlatModel, term: ExprId) -> String {
    let mut factors: Vec<String> = Vec::new();
    let mut stack = vec![term];
    while let Some(e) = stack.pop() {
        match flat.exprs.get(e) {
            Node::Binary(BinOp::Mul, a, b) => {
                stack.push(*b);
                stack.push(*a);
            }
            _ => {
                // A factor written with operators (a sum) is parenthesized, so that two
                // different products cannot join to the same text.
                let text = flat.expr_text(e);
                factors.push(if text.contains(' ') { format!("({text})") } else { text });
            }
        }
    }
    factors.sort();
    factors.join("*")
}

/// The test of `-d` that holds exactly where `test` holds of `d`.
fn mirrored(test: Test) -> Test {
    match test {
        Test::Positive => Test::Negative,
        Test::NonNegative => Test::NonPositive,
        Test::Negative => Test::Positive,
        Test::NonPositive => Test::NonNegative,
    }
}
