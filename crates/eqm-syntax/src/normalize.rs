//! Span-insensitive normal form of an AST, for comparing trees that come from different texts.
//!
//! Input: any AST node, mutably. Output: the same node with every [`Span`] reset to
//! `Span::default()` and every [`Expr::depth`] recomputed from the tree's structure alone.
//! Two texts that differ only in layout, comments, redundant parentheses, `:=` versus `=` in a
//! modifier, or `"a" + "b"` versus `"ab"` in a description normalise to equal trees, so
//! `normalize(parse(pretty(ast))) == normalize(ast)` is the round-trip property of the printer.
//!
//! Why depth is normalised too: the parser counts parentheses towards [`Expr::depth`] (see
//! `Builder::parenthesized`), because redundant parentheses are what makes hostile input deep,
//! but parentheses are not nodes. The printer drops redundant ones and adds the required ones,
//! so a reprinted tree can legitimately differ in depth while being the same tree. Recomputing
//! depth as `1 + max(child depths)` makes it a function of the structure only.
//!
//! Every struct is destructured without `..`, so adding a field to the AST fails to compile here
//! until the traversal covers it: the normal form can never silently ignore a new span.
//! The traversal is recursive. Expressions in parsed trees are at most
//! [`crate::ast::MAX_EXPR_DEPTH`] deep, but classes, equations and
//! statements nest without bound, so callers normalising hostile input should run on
//! [`with_compiler_stack`](crate::stack::with_compiler_stack), like every other pass. It
//! deliberately changes nothing else: names, values and the order of elements stay as parsed.

use crate::ast::*;
use eqm_diag::source::Span;

/// Normalises a whole file in place.
pub fn normalize_file(file: &mut StoredDefinition) {
    let StoredDefinition { within, classes, span } = file;
    reset(span);
    if let Some(Some(name)) = within {
        normalize_name(name);
    }
    classes.iter_mut().for_each(normalize_class);
}

/// Normalises one expression in place.
pub fn normalize_expr(e: &mut Expr) {
    let Expr { kind, span, depth } = e;
    reset(span);
    match kind {
        ExprKind::Integer(_)
        | ExprKind::Real(_)
        | ExprKind::String(_)
        | ExprKind::Bool(_)
        | ExprKind::Error
        | ExprKind::End => {}
        ExprKind::Ref(c) => normalize_ref(c),
        ExprKind::Call { function, args } | ExprKind::PartialApplication { function, args } => {
            normalize_ref(function);
            normalize_args(args);
        }
        ExprKind::Unary { op: _, operand } => normalize_expr(operand),
        ExprKind::Lambda { params, body } => {
            params.iter_mut().for_each(normalize_ident);
            normalize_expr(body);
        }
        ExprKind::Binary { op: _, lhs, rhs } => {
            normalize_expr(lhs);
            normalize_expr(rhs);
        }
        ExprKind::Chain { first, rest } => {
            normalize_expr(first);
            for (_, operand) in rest {
                normalize_expr(operand);
            }
        }
        ExprKind::If { branches, else_value } => {
            for (condition, value) in branches {
                normalize_expr(condition);
                normalize_expr(value);
            }
            normalize_expr(else_value);
        }
        ExprKind::Array(items) => items.iter_mut().for_each(normalize_expr),
        ExprKind::Matrix(rows) => rows.iter_mut().flatten().for_each(normalize_expr),
        ExprKind::Range { start, step, stop } => {
            normalize_expr(start);
            if let Some(step) = step {
                normalize_expr(step);
            }
            normalize_expr(stop);
        }
        ExprKind::Tuple(items) => items.iter_mut().flatten().for_each(normalize_expr),
        ExprKind::Comprehension { body, indices } => {
            normalize_expr(body);
            normalize_for_indices(indices);
        }
        ExprKind::Index { base, subscripts } => {
            normalize_expr(base);
            normalize_subscripts(subscripts);
        }
        ExprKind::Reduction {
            function,
            body,
            indices,
        } => {
            normalize_ref(function);
            normalize_expr(body);
            normalize_for_indices(indices);
        }
    }
    join_chain(kind);
    // The children's depths are structural already, so this node's depth becomes structural too.
    *depth = 1 + kind.child_depth();
}

/// Turns a binary operation whose left operand is an operation of the same chain level into
/// the one [`ExprKind::Chain`] the parser builds for it (`Builder::binary`), so that a tree
/// built by hand from nested binary nodes normalises like its printed and reparsed text.
fn join_chain(kind: &mut ExprKind) {
    let ExprKind::Binary { op, lhs, .. } = kind else {
        return;
    };
    let Some(level) = op.chain_level() else {
        return;
    };
    let joins = match &lhs.kind {
        ExprKind::Binary { op: inner, .. } => inner.chain_level() == Some(level),
        ExprKind::Chain { rest, .. } => rest
            .first()
            .is_some_and(|(inner, _)| inner.chain_level() == Some(level)),
        _ => false,
    };
    if !joins {
        return;
    }
    let ExprKind::Binary { op, lhs, rhs } = std::mem::replace(kind, ExprKind::Error) else {
        return;
    };
    *kind = match lhs.kind {
        ExprKind::Binary {
            op: inner,
            lhs: a,
            rhs: b,
        } => ExprKind::Chain {
            first: a,
            rest: vec![(inner, *b), (op, *rhs)],
        },
        ExprKind::Chain { first, mut rest } => {
            rest.push((op, *rhs));
            ExprKind::Chain { first, rest }
        }
        other => ExprKind::Binary {
            op,
            lhs: Box::new(Expr { kind: other, ..*lhs }),
            rhs,
        },
    };
}

fn reset(span: &mut Span) {
    *span = Span::default();
}

fn normalize_ident(i: &mut Ident) {
    let Ident { name: _, span } = i;
    reset(span);
}

fn normalize_name(n: &mut Name) {
    let Name { global: _, parts, span } = n;
    reset(span);
    parts.iter_mut().for_each(normalize_ident);
}

fn normalize_description(d: &mut Option<Description>) {
    if let Some(Description { text: _, span }) = d {
        reset(span);
    }
}

fn normalize_annotation(a: &mut Option<Annotation>) {
    if let Some(Annotation { modification, span }) = a {
        reset(span);
        normalize_class_modification(modification);
    }
}

/// Normalises one class definition in place.
pub fn normalize_class(c: &mut ClassDef) {
    let ClassDef {
        encapsulated: _,
        partial: _,
        kind: _,
        name,
        body,
        redeclarable,
        is_final: _,
        span,
    } = c;
    reset(span);
    normalize_redeclarable(redeclarable);
    normalize_ident(name);
    match body {
        ClassBody::Long {
            description,
            sections,
            annotation,
            end_name,
        } => {
            normalize_description(description);
            sections.iter_mut().for_each(normalize_section);
            normalize_annotation(annotation);
            normalize_ident(end_name);
        }
        ClassBody::Short {
            prefixes: _,
            base,
            dims,
            modification,
            description,
            annotation,
        } => {
            normalize_name(base);
            normalize_subscripts(dims);
            if let Some(m) = modification {
                normalize_class_modification(m);
            }
            normalize_description(description);
            normalize_annotation(annotation);
        }
        ClassBody::Enumeration {
            literals,
            open: _,
            description,
            annotation,
        } => {
            for literal in literals {
                reset(&mut literal.name.span);
                normalize_description(&mut literal.description);
                normalize_annotation(&mut literal.annotation);
            }
            normalize_description(description);
            normalize_annotation(annotation);
        }
    }
}

fn normalize_section(s: &mut Section) {
    match s {
        Section::Elements {
            visibility: _,
            elements,
            span,
        } => {
            reset(span);
            elements.iter_mut().for_each(normalize_element);
        }
        Section::Equations {
            initial: _,
            equations,
            span,
        }
        | Section::Invariants { equations, span } => {
            reset(span);
            equations.iter_mut().for_each(normalize_equation);
        }
        Section::External {
            language: _,
            call,
            annotation,
            span,
        } => {
            reset(span);
            if let Some(call) = call {
                if let Some(output) = &mut call.output {
                    normalize_ref(output);
                }
                reset(&mut call.function.span);
                call.args.iter_mut().for_each(normalize_expr);
            }
            normalize_annotation(annotation);
        }
        Section::Algorithm {
            initial: _,
            statements,
            span,
        } => {
            reset(span);
            statements.iter_mut().for_each(normalize_statement);
        }
    }
}

fn normalize_element(e: &mut Element) {
    match e {
        Element::Class(c) => normalize_class(c),
        Element::Extends(Extends {
            base,
            modification,
            annotation,
            span,
            inherited: _,
        }) => {
            reset(span);
            normalize_name(base);
            if let Some(m) = modification {
                normalize_class_modification(m);
            }
            normalize_annotation(annotation);
        }
        Element::Import(Import {
            kind,
            description,
            annotation,
            span,
        }) => {
            reset(span);
            match kind {
                ImportKind::Qualified(n) | ImportKind::Unqualified(n) => normalize_name(n),
                ImportKind::Renamed { alias, name } => {
                    normalize_ident(alias);
                    normalize_name(name);
                }
                ImportKind::Multiple { package, names } => {
                    normalize_name(package);
                    names.iter_mut().for_each(normalize_ident);
                }
            }
            normalize_description(description);
            normalize_annotation(annotation);
        }
        Element::Component(clause) => normalize_component_clause(clause),
    }
}

fn normalize_redeclarable(r: &mut Redeclarable) {
    let Redeclarable {
        replaceable: _,
        redeclare: _,
        constraint,
    } = r;
    if let Some(c) = constraint {
        let Constraint {
            name,
            modification,
            description,
            annotation,
            span,
        } = &mut **c;
        reset(span);
        normalize_name(name);
        if let Some(m) = modification {
            normalize_class_modification(m);
        }
        normalize_description(description);
        normalize_annotation(annotation);
    }
}

/// Resets the spans of a component clause, so that two clauses written alike compare equal.
pub fn normalize_component_clause(clause: &mut ComponentClause) {
    {
        {
            let ComponentClause {
                is_final: _,
                redeclarable,
                inner: _,
                outer: _,
                prefixes: _,
                type_name,
                type_dims,
                components,
                span,
            } = clause;
            reset(span);
            normalize_redeclarable(redeclarable);
            normalize_name(type_name);
            normalize_subscripts(type_dims);
            for ComponentDecl {
                name,
                dims,
                modification,
                condition,
                description,
                annotation,
                span,
            } in components
            {
                reset(span);
                normalize_ident(name);
                normalize_subscripts(dims);
                if let Some(m) = modification {
                    normalize_modification(m);
                }
                if let Some(c) = condition {
                    normalize_expr(c);
                }
                normalize_description(description);
                normalize_annotation(annotation);
            }
        }
    }
}

fn normalize_modification(m: &mut Modification) {
    let Modification {
        class_modification,
        binding,
        span,
    } = m;
    reset(span);
    if let Some(cm) = class_modification {
        normalize_class_modification(cm);
    }
    if let Some(b) = binding {
        normalize_expr(b);
    }
}

fn normalize_class_modification(m: &mut ClassModification) {
    let ClassModification { arguments, span } = m;
    reset(span);
    for ModArgument {
        each: _,
        is_final: _,
        name,
        modification,
        description,
        redeclare,
        span,
    } in arguments
    {
        reset(span);
        normalize_name(name);
        if let Some(m) = modification {
            normalize_modification(m);
        }
        normalize_description(description);
        match redeclare.as_deref_mut() {
            Some(RedeclaredElement::Class(c)) => normalize_class(c),
            Some(RedeclaredElement::Component(c)) => normalize_component_clause(c),
            None => {}
        }
    }
}

fn normalize_subscripts(subscripts: &mut [Subscript]) {
    for s in subscripts {
        match s {
            Subscript::Colon(span) => reset(span),
            Subscript::Expr(e) => normalize_expr(e),
        }
    }
}

fn normalize_ref(c: &mut ComponentRef) {
    let ComponentRef { global: _, parts, span } = c;
    reset(span);
    for RefPart { name, subscripts } in parts {
        normalize_ident(name);
        normalize_subscripts(subscripts);
    }
}

fn normalize_args(a: &mut CallArgs) {
    let CallArgs {
        positional,
        named,
        span,
    } = a;
    reset(span);
    positional.iter_mut().for_each(normalize_expr);
    for (name, value) in named {
        normalize_ident(name);
        normalize_expr(value);
    }
}

fn normalize_for_indices(indices: &mut [ForIndex]) {
    for ForIndex { name, range } in indices {
        normalize_ident(name);
        if let Some(r) = range {
            normalize_expr(r);
        }
    }
}

fn normalize_equation(e: &mut Equation) {
    let Equation {
        kind,
        description,
        annotation,
        span,
    } = e;
    reset(span);
    match kind {
        EquationKind::Simple { lhs, rhs } => {
            normalize_expr(lhs);
            normalize_expr(rhs);
        }
        EquationKind::Connect { a, b } => {
            normalize_ref(a);
            normalize_ref(b);
        }
        EquationKind::If { branches, else_branch } => {
            for (condition, body) in branches {
                normalize_expr(condition);
                body.iter_mut().for_each(normalize_equation);
            }
            else_branch.iter_mut().for_each(normalize_equation);
        }
        EquationKind::For { indices, body } => {
            normalize_for_indices(indices);
            body.iter_mut().for_each(normalize_equation);
        }
        EquationKind::When { branches } => {
            for (condition, body) in branches {
                normalize_expr(condition);
                body.iter_mut().for_each(normalize_equation);
            }
        }
        EquationKind::Call { function, args } => {
            normalize_ref(function);
            normalize_args(args);
        }
    }
    normalize_description(description);
    normalize_annotation(annotation);
}

fn normalize_statement(s: &mut Statement) {
    let Statement {
        kind,
        description,
        annotation,
        span,
    } = s;
    reset(span);
    match kind {
        StatementKind::Assign { target, value } => {
            normalize_ref(target);
            normalize_expr(value);
        }
        StatementKind::MultiAssign {
            targets,
            function,
            args,
        } => {
            targets.iter_mut().flatten().for_each(normalize_ref);
            normalize_ref(function);
            normalize_args(args);
        }
        StatementKind::Call { function, args } => {
            normalize_ref(function);
            normalize_args(args);
        }
        StatementKind::If { branches, else_branch } => {
            for (condition, body) in branches {
                normalize_expr(condition);
                body.iter_mut().for_each(normalize_statement);
            }
            else_branch.iter_mut().for_each(normalize_statement);
        }
        StatementKind::For { indices, body } => {
            normalize_for_indices(indices);
            body.iter_mut().for_each(normalize_statement);
        }
        StatementKind::While { condition, body } => {
            normalize_expr(condition);
            body.iter_mut().for_each(normalize_statement);
        }
        StatementKind::When { branches } => {
            for (condition, body) in branches {
                normalize_expr(condition);
                body.iter_mut().for_each(normalize_statement);
            }
        }
        StatementKind::Return | StatementKind::Break => {}
    }
    normalize_description(description);
    normalize_annotation(annotation);
}
