//! Walks over the component references of expressions, equations and statements.
//!
//! Input: syntax trees. Output: every [`ComponentRef`] that names a value (not the function of
//! a call), handed to a callback, subscripts included. The walk keeps its own stack, so a long
//! flat chain (`a1 + a2 + ... + a100000`) cannot overflow the call stack. It deliberately
//! resolves nothing: which class or variable a reference names is the flattener's business.

use crate::ast::{
    CallArgs, ComponentRef, Equation, EquationKind, Expr, ExprKind, ForIndex, Statement, StatementKind, Subscript,
};

/// Calls `f` on every component reference in `e`.
pub fn refs_in_expr<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e ComponentRef)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let push_subscripts = |subs: &'e [Subscript], stack: &mut Vec<&'e Expr>| {
            stack.extend(subs.iter().filter_map(|s| match s {
                Subscript::Expr(x) => Some(x),
                Subscript::Colon(_) => None,
            }))
        };
        let push_args = |args: &'e CallArgs, stack: &mut Vec<&'e Expr>| {
            stack.extend(args.positional.iter().chain(args.named.iter().map(|(_, x)| x)))
        };
        let push_indices = |indices: &'e [ForIndex], stack: &mut Vec<&'e Expr>| {
            stack.extend(indices.iter().filter_map(|i| i.range.as_ref()))
        };
        match &e.kind {
            ExprKind::Ref(c) => {
                f(c);
                for p in &c.parts {
                    push_subscripts(&p.subscripts, &mut stack);
                }
            }
            ExprKind::Call { args, .. } | ExprKind::PartialApplication { args, .. } => push_args(args, &mut stack),
            ExprKind::Unary { operand, .. } => stack.push(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExprKind::Chain { first, rest } => {
                stack.push(first);
                stack.extend(rest.iter().map(|(_, x)| x));
            }
            ExprKind::If { branches, else_value } => {
                for (c, v) in branches {
                    stack.push(c);
                    stack.push(v);
                }
                stack.push(else_value);
            }
            ExprKind::Array(items) => stack.extend(items),
            ExprKind::Matrix(rows) => stack.extend(rows.iter().flatten()),
            ExprKind::Range { start, step, stop } => {
                stack.push(start);
                stack.extend(step.as_deref());
                stack.push(stop);
            }
            ExprKind::Tuple(items) => stack.extend(items.iter().flatten()),
            ExprKind::Comprehension { body, indices } => {
                stack.push(body);
                push_indices(indices, &mut stack);
            }
            ExprKind::Reduction { body, indices, .. } => {
                stack.push(body);
                push_indices(indices, &mut stack);
            }
            ExprKind::Index { base, subscripts } => {
                stack.push(base);
                push_subscripts(subscripts, &mut stack);
            }
            ExprKind::Integer(_)
            | ExprKind::Real(_)
            | ExprKind::String(_)
            | ExprKind::Bool(_)
            | ExprKind::End
            | ExprKind::Error => {}
        }
    }
}

/// Calls `f` on every component reference in `equations` (nested ones included).
pub fn refs_in_equations<'e>(equations: &'e [Equation], f: &mut dyn FnMut(&'e ComponentRef)) {
    for eq in equations {
        match &eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                refs_in_expr(lhs, f);
                refs_in_expr(rhs, f);
            }
            EquationKind::Connect { a, b } => {
                f(a);
                f(b);
            }
            EquationKind::If { branches, else_branch } => {
                for (c, body) in branches {
                    refs_in_expr(c, f);
                    refs_in_equations(body, f);
                }
                refs_in_equations(else_branch, f);
            }
            EquationKind::When { branches } => {
                for (c, body) in branches {
                    refs_in_expr(c, f);
                    refs_in_equations(body, f);
                }
            }
            EquationKind::For { body, .. } => refs_in_equations(body, f),
            EquationKind::Call { args, .. } => refs_in_args(args, f),
        }
    }
}

/// Calls `f` on every component reference in `statements` (nested ones included), the
/// assigned places too.
pub fn refs_in_statements<'e>(statements: &'e [Statement], f: &mut dyn FnMut(&'e ComponentRef)) {
    for s in statements {
        match &s.kind {
            StatementKind::Assign { target, value } => {
                refs_in_expr_ref(target, f);
                refs_in_expr(value, f);
            }
            StatementKind::MultiAssign { targets, args, .. } => {
                for t in targets.iter().flatten() {
                    refs_in_expr_ref(t, f);
                }
                refs_in_args(args, f);
            }
            StatementKind::Call { args, .. } => refs_in_args(args, f),
            StatementKind::If { branches, else_branch } => {
                for (c, body) in branches {
                    refs_in_expr(c, f);
                    refs_in_statements(body, f);
                }
                refs_in_statements(else_branch, f);
            }
            StatementKind::When { branches } => {
                for (c, body) in branches {
                    refs_in_expr(c, f);
                    refs_in_statements(body, f);
                }
            }
            StatementKind::For { body, .. } => refs_in_statements(body, f),
            StatementKind::While { condition, body } => {
                refs_in_expr(condition, f);
                refs_in_statements(body, f);
            }
            StatementKind::Return | StatementKind::Break => {}
        }
    }
}

fn refs_in_args<'e>(args: &'e CallArgs, f: &mut dyn FnMut(&'e ComponentRef)) {
    for a in args.positional.iter().chain(args.named.iter().map(|(_, x)| x)) {
        refs_in_expr(a, f);
    }
}

/// A reference and the references in its subscripts.
fn refs_in_expr_ref<'e>(c: &'e ComponentRef, f: &mut dyn FnMut(&'e ComponentRef)) {
    f(c);
    for p in &c.parts {
        for s in &p.subscripts {
            if let Subscript::Expr(x) = s {
                refs_in_expr(x, f);
            }
        }
    }
}
