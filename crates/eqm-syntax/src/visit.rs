//! Walks over the component references and calls of expressions, equations and statements.
//!
//! Input: syntax trees. Output: every [`ComponentRef`] that names a value (not the function of
//! a call), handed to a callback, subscripts included; or every function name of a call. The walk keeps its own stack, so a long
//! flat chain (`a1 + a2 + ... + a100000`) cannot overflow the call stack. It deliberately
//! resolves nothing: which class or variable a reference names is the flattener's business.

use crate::ast::{
    CallArgs, ComponentRef, Equation, EquationKind, Expr, ExprKind, ForIndex, Statement, StatementKind, Subscript,
};

/// What the walk finds: a reference to a value, or the function named by a call.
enum Found<'e> {
    Ref(&'e ComponentRef),
    Call(&'e ComponentRef),
}

/// Calls `f` on every component reference in `e`.
pub fn refs_in_expr<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e ComponentRef)) {
    walk_expr(e, &mut only_refs(f));
}

/// Calls `f` on every component reference in `equations` (nested ones included).
pub fn refs_in_equations<'e>(equations: &'e [Equation], f: &mut dyn FnMut(&'e ComponentRef)) {
    walk_equations(equations, &mut only_refs(f));
}

/// Calls `f` on every component reference in `statements` (nested ones included), the
/// assigned places too.
pub fn refs_in_statements<'e>(statements: &'e [Statement], f: &mut dyn FnMut(&'e ComponentRef)) {
    walk_statements(statements, &mut only_refs(f));
}

/// Whether `equations` (nested ones included) call a function named `name` (a one-part name,
/// such as a built-in operator).
pub fn equations_call(equations: &[Equation], name: &str) -> bool {
    equations_call_matching(equations, &|c| c.parts.len() == 1 && c.parts[0].name.name == name)
}

/// Whether `e` calls a function named `name` (a one-part name, such as a built-in operator).
pub fn expr_calls(e: &Expr, name: &str) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if let Found::Call(c) = x {
            found |= c.parts.len() == 1 && c.parts[0].name.name == name;
        }
    });
    found
}

/// Whether `equations` (nested ones included) call a function whose name `matches`.
pub fn equations_call_matching(equations: &[Equation], matches: &dyn Fn(&ComponentRef) -> bool) -> bool {
    let mut found = false;
    walk_equations(equations, &mut |x| {
        if let Found::Call(c) = x {
            found |= matches(c);
        }
    });
    found
}

fn only_refs<'e, 'f>(f: &'f mut dyn FnMut(&'e ComponentRef)) -> impl FnMut(Found<'e>) + 'f {
    move |x| {
        if let Found::Ref(c) = x {
            f(c)
        }
    }
}

fn walk_expr<'e>(e: &'e Expr, f: &mut dyn FnMut(Found<'e>)) {
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
                f(Found::Ref(c));
                for p in &c.parts {
                    push_subscripts(&p.subscripts, &mut stack);
                }
            }
            ExprKind::Call { function, args } => {
                f(Found::Call(function));
                push_args(args, &mut stack)
            }
            ExprKind::PartialApplication { args, .. } => push_args(args, &mut stack),
            ExprKind::Unary { operand, .. } | ExprKind::Lambda { body: operand, .. } => stack.push(operand),
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

fn walk_equations<'e>(equations: &'e [Equation], f: &mut dyn FnMut(Found<'e>)) {
    for eq in equations {
        match &eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                walk_expr(lhs, f);
                walk_expr(rhs, f);
            }
            EquationKind::Connect { a, b } => {
                f(Found::Ref(a));
                f(Found::Ref(b));
            }
            EquationKind::If { branches, else_branch } => {
                for (c, body) in branches {
                    walk_expr(c, f);
                    walk_equations(body, f);
                }
                walk_equations(else_branch, f);
            }
            EquationKind::When { branches } => {
                for (c, body) in branches {
                    walk_expr(c, f);
                    walk_equations(body, f);
                }
            }
            EquationKind::For { body, .. } => walk_equations(body, f),
            EquationKind::Call { function, args } => {
                f(Found::Call(function));
                walk_args(args, f)
            }
        }
    }
}

fn walk_statements<'e>(statements: &'e [Statement], f: &mut dyn FnMut(Found<'e>)) {
    for s in statements {
        match &s.kind {
            StatementKind::Assign { target, value } => {
                walk_ref(target, f);
                walk_expr(value, f);
            }
            StatementKind::MultiAssign {
                targets,
                function,
                args,
            } => {
                for t in targets.iter().flatten() {
                    walk_ref(t, f);
                }
                f(Found::Call(function));
                walk_args(args, f);
            }
            StatementKind::Call { function, args } => {
                f(Found::Call(function));
                walk_args(args, f)
            }
            StatementKind::If { branches, else_branch } => {
                for (c, body) in branches {
                    walk_expr(c, f);
                    walk_statements(body, f);
                }
                walk_statements(else_branch, f);
            }
            StatementKind::When { branches } => {
                for (c, body) in branches {
                    walk_expr(c, f);
                    walk_statements(body, f);
                }
            }
            StatementKind::For { body, .. } => walk_statements(body, f),
            StatementKind::While { condition, body } => {
                walk_expr(condition, f);
                walk_statements(body, f);
            }
            StatementKind::Return | StatementKind::Break => {}
        }
    }
}

fn walk_args<'e>(args: &'e CallArgs, f: &mut dyn FnMut(Found<'e>)) {
    for a in args.positional.iter().chain(args.named.iter().map(|(_, x)| x)) {
        walk_expr(a, f);
    }
}

/// A reference and the references in its subscripts.
fn walk_ref<'e>(c: &'e ComponentRef, f: &mut dyn FnMut(Found<'e>)) {
    f(Found::Ref(c));
    for p in &c.parts {
        for s in &p.subscripts {
            if let Subscript::Expr(x) = s {
                walk_expr(x, f);
            }
        }
    }
}
