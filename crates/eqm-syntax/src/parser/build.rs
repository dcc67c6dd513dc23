//! The nodes the grammar's actions build, with the checks that belong to building them: an
//! `end` name or keyword that does not match what it closes, integer and real literals out of
//! range, unknown escapes in strings, and the bound on expression depth.
//!
//! Input: what a grammar action matched (child nodes, token texts, byte offsets). Output: the AST
//! node with its span, and diagnostics for the problems above. It deliberately reports no syntax
//! error (that is `errors`) and resolves nothing.

use super::Builder;
use crate::ast::*;
use crate::lexer;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;

/// Joins the first branch of an `if` or `when` with its `elseif`/`elsewhen` branches, which the
/// grammar boxes (see the performance note in the grammar).
pub fn branches<T>(condition: Expr, body: T, rest: Vec<Box<(Expr, T)>>) -> Vec<(Expr, T)> {
    let mut all = Vec::with_capacity(rest.len() + 1);
    all.push((condition, body));
    all.extend(rest.into_iter().map(|b| *b));
    all
}

/// The prefixes written before an element, in any order.
#[derive(Clone, Copy, Default)]
pub struct ElementFlags {
    pub is_final: bool,
    pub inner: bool,
    pub outer: bool,
    pub replaceable: bool,
    pub redeclare: bool,
}

impl ElementFlags {
    pub fn union(self, other: ElementFlags) -> ElementFlags {
        ElementFlags {
            is_final: self.is_final || other.is_final,
            inner: self.inner || other.inner,
            outer: self.outer || other.outer,
            replaceable: self.replaceable || other.replaceable,
            redeclare: self.redeclare || other.redeclare,
        }
    }

    fn redeclarable(self, constraint: Option<Box<Constraint>>) -> Redeclarable {
        Redeclarable {
            replaceable: self.replaceable,
            redeclare: self.redeclare,
            constraint,
        }
    }
}

impl<'src> Builder<'src> {
    pub fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    pub fn ident(&self, s: &str, l: usize, r: usize) -> Ident {
        Ident {
            name: s.to_string(),
            span: self.span(l, r),
        }
    }

    /// Decodes a string literal, reporting unknown escapes.
    pub fn string(&mut self, literal: &str, l: usize, _r: usize) -> String {
        let (text, bad) = lexer::unescape(literal);
        for (start, end) in bad {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0102",
                    "unknown escape sequence in string",
                    self.span(l + start, l + end),
                    "not a valid escape",
                )
                .with_help(r#"the escapes are \" \\ \' \? \n \t \r \a \b \f \v"#),
            );
        }
        text
    }

    pub fn description(&mut self, first: String, rest: Vec<String>, l: usize, r: usize) -> Description {
        let mut text = first;
        for s in rest {
            text.push_str(&s);
        }
        Description {
            text,
            span: self.span(l, r),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn class_def(
        &mut self,
        encapsulated: bool,
        partial: bool,
        kind: ClassKind,
        name: Ident,
        body: ClassBody,
        l: usize,
        r: usize,
    ) -> ClassDef {
        self.check_reserved_name(&name);
        if let ClassBody::Enumeration { literals, .. } = &body {
            self.check_literal_names(literals);
        }
        if let ClassBody::Long { end_name, .. } = &body
            && end_name.name != name.name
        {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0108",
                    format!("`end {}` does not match the class name `{}`", end_name.name, name.name),
                    end_name.span,
                    format!("expected `end {}`", name.name),
                )
                .with_label(name.span, "the class is declared here"),
            );
        }
        ClassDef {
            encapsulated,
            partial,
            kind,
            name,
            body,
            redeclarable: Redeclarable::default(),
            is_final: false,
            span: self.span(l, r),
        }
    }

    /// A nested class with the prefixes and `constrainedby` clause written around it.
    pub fn redeclarable_class(
        &mut self,
        flags: ElementFlags,
        class: Box<ClassDef>,
        constraint: Option<Box<Constraint>>,
    ) -> Box<ClassDef> {
        let mut class = class;
        self.check_constraint(flags.replaceable, constraint.as_deref());
        if flags.outer {
            // Used as written, the class would silently stand for itself instead of the inner
            // class of an enclosing component.
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                "an `outer` class (`outer function f = A;`, standing for the `inner` class of an enclosing component) is not supported",
                class.name.span,
                "not supported",
            ));
        }
        class.redeclarable = flags.redeclarable(constraint);
        class.is_final = flags.is_final;
        class
    }

    /// The names of the predefined types are reserved (Modelica 4.9): a class or component of
    /// that name would hide the type in every lookup below it.
    fn check_reserved_name(&mut self, name: &Ident) {
        if matches!(name.name.as_str(), "Real" | "Integer" | "Boolean" | "String") {
            self.diagnostics.push(Diagnostic::error(
                "E0114",
                format!(
                    "`{}` is the name of a predefined type and cannot name a class or component",
                    name.name
                ),
                name.span,
                "reserved name",
            ));
        }
    }

    /// An enumeration literal cannot take the name of an attribute of its type (Modelica
    /// 4.9.5): `E.start` and a modifier `start = ...` of a variable of type `E` would name
    /// different things.
    fn check_literal_names(&mut self, literals: &[EnumLiteral]) {
        for literal in literals {
            if matches!(
                literal.name.name.as_str(),
                "quantity" | "min" | "max" | "start" | "fixed"
            ) {
                self.diagnostics.push(Diagnostic::error(
                    "E0114",
                    format!(
                        "`{}` is an attribute of every enumeration type and cannot name one of its literals",
                        literal.name.name
                    ),
                    literal.name.span,
                    "reserved name",
                ));
            }
        }
    }

    /// `constrainedby` only follows a replaceable element.
    fn check_constraint(&mut self, replaceable: bool, constraint: Option<&Constraint>) {
        if let Some(c) = constraint
            && !replaceable
        {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0110",
                    "`constrainedby` without `replaceable`",
                    c.span,
                    "only a replaceable element has a constraining class",
                )
                .with_help("write `replaceable` before the element, or remove the `constrainedby` clause"),
            );
        }
    }

    /// `model extends Base(m) ... end Base;`: a long class named `Base` whose first element is
    /// the clause `extends Base(m)` marked as extending the inherited class (see
    /// [`Extends::inherited`]). Modelica allows only the long form; `model extends Base = C` is
    /// reported and gives no class.
    #[allow(clippy::too_many_arguments)]
    pub fn class_extends(
        &mut self,
        encapsulated: bool,
        partial: bool,
        kind: ClassKind,
        name: Ident,
        modification: Option<ClassModification>,
        body: ClassBody,
        header: (usize, usize),
        l: usize,
        r: usize,
    ) -> Option<Box<ClassDef>> {
        let ClassBody::Long {
            description,
            mut sections,
            annotation,
            end_name,
        } = body
        else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0110",
                    "a class extending its inherited version needs a long definition",
                    self.span(l, r),
                    "`=` after `extends` is not Modelica",
                )
                .with_help(format!(
                    "write `{} extends {} ... end {};`",
                    kind.keyword(),
                    name.name,
                    name.name
                )),
            );
            return None;
        };
        let clause = Element::Extends(Extends {
            base: Name {
                global: false,
                span: name.span,
                parts: vec![name.clone()],
            },
            modification,
            annotation: None,
            span: self.span(header.0, header.1),
            inherited: true,
        });
        // The clause leads the first public list, which is created when the body starts with
        // another section; the pretty-printer prints it in the header again.
        match sections.first_mut() {
            Some(Section::Elements {
                visibility: Visibility::Public,
                elements,
                ..
            }) => elements.insert(0, clause),
            _ => sections.insert(
                0,
                Section::Elements {
                    visibility: Visibility::Public,
                    elements: vec![clause],
                    span: self.span(header.0, header.1),
                },
            ),
        }
        let body = ClassBody::Long {
            description,
            sections,
            annotation,
            end_name,
        };
        Some(Box::new(self.class_def(encapsulated, partial, kind, name, body, l, r)))
    }

    /// One `redeclare` argument of a modifier: the element, named after the class or component
    /// it declares.
    #[allow(clippy::too_many_arguments)]
    pub fn redeclare_argument(
        &mut self,
        each: bool,
        is_final: bool,
        replaceable: bool,
        element: Option<RedeclaredElement>,
        constraint: Option<Box<Constraint>>,
        l: usize,
        r: usize,
    ) -> Option<Box<ModArgument>> {
        let mut element = element?;
        self.check_constraint(replaceable, constraint.as_deref());
        let redeclarable = Redeclarable {
            replaceable,
            redeclare: true,
            constraint,
        };
        let name = match &mut element {
            RedeclaredElement::Class(c) => {
                c.redeclarable = redeclarable;
                c.name.clone()
            }
            RedeclaredElement::Component(c) => {
                c.redeclarable = redeclarable;
                c.components[0].name.clone()
            }
        };
        let span = self.span(l, r);
        Some(Box::new(ModArgument {
            each,
            is_final,
            name: Name {
                global: false,
                span: name.span,
                parts: vec![name],
            },
            modification: None,
            description: None,
            redeclare: Some(Box::new(element)),
            span,
        }))
    }

    /// The unlabelled first element list is a public section; it is dropped when empty so that a
    /// pretty-printed class parses back to the same sections.
    pub fn composition(&self, elements: Vec<Element>, rest: Vec<Section>, l: usize, r: usize) -> Vec<Section> {
        let mut sections = Vec::with_capacity(rest.len() + 1);
        if !elements.is_empty() {
            sections.push(Section::Elements {
                visibility: Visibility::Public,
                elements,
                span: self.span(l, r),
            });
        }
        sections.extend(rest);
        sections
    }

    pub fn component_clause(
        &mut self,
        flags: ElementFlags,
        body: (TypePrefix, Name, Vec<Subscript>, Vec<ComponentDecl>),
        constraint: Option<Box<Constraint>>,
        l: usize,
        r: usize,
    ) -> Element {
        let (prefixes, type_name, type_dims, components) = body;
        self.check_constraint(flags.replaceable, constraint.as_deref());
        for component in &components {
            self.check_reserved_name(&component.name);
        }
        Element::Component(ComponentClause {
            is_final: flags.is_final,
            redeclarable: flags.redeclarable(constraint),
            inner: flags.inner,
            outer: flags.outer,
            prefixes,
            type_name,
            type_dims,
            components,
            span: self.span(l, r),
        })
    }

    /// Builds an expression node, enforcing [`MAX_EXPR_DEPTH`] in O(1): a node that would be too
    /// deep becomes an error node of maximal depth, so its parents become error nodes too without
    /// reporting again, and the tree never grows deeper than the bound.
    pub fn expr(&mut self, kind: ExprKind, l: usize, r: usize) -> Expr {
        let span = self.span(l, r);
        self.bounded(Expr::new(kind, span))
    }

    /// [`Builder::expr`] for a node whose depth is already computed.
    fn bounded(&mut self, expr: Expr) -> Expr {
        let span = expr.span;
        if expr.depth <= MAX_EXPR_DEPTH {
            return expr;
        }
        let already_reported = expr.depth == MAX_EXPR_DEPTH + 1 && contains_depth_error(&expr.kind);
        if !already_reported {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0106",
                    format!("expression nested too deeply (more than {MAX_EXPR_DEPTH} levels)"),
                    span,
                    "this expression is too deep",
                )
                .with_help("split it into several equations with intermediate variables, or use `sum` for long sums"),
            );
        }
        Expr {
            kind: ExprKind::Error,
            span,
            depth: MAX_EXPR_DEPTH,
        }
    }

    pub fn unary(&mut self, op: UnaryOp, operand: Expr, l: usize, r: usize) -> Expr {
        self.expr(
            ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
            l,
            r,
        )
    }

    /// A binary operation; an operator of a chain level (see [`BinaryOp::chain_level`]) whose
    /// left operand is already an operation of that level extends it into one flat
    /// [`ExprKind::Chain`]. Parentheses around that left operand change nothing, since the
    /// operators associate to the left anyway: `(a + b) + c` means `a + b + c`.
    pub fn binary(&mut self, op: BinaryOp, lhs: Expr, rhs: Expr, l: usize, r: usize) -> Expr {
        if let Some(level) = op.chain_level() {
            let Expr { kind, span, depth } = lhs;
            match kind {
                ExprKind::Binary {
                    op: inner,
                    lhs: a,
                    rhs: b,
                } if inner.chain_level() == Some(level) => {
                    let rest = vec![(inner, *b), (op, rhs)];
                    return self.expr(ExprKind::Chain { first: a, rest }, l, r);
                }
                ExprKind::Chain { first, mut rest } if rest[0].0.chain_level() == Some(level) => {
                    // The depth is the larger of the chain's and the new operand's plus one,
                    // computed from those two alone, so that building a chain of n operands
                    // takes time linear in n.
                    let depth = depth.max(rhs.depth + 1);
                    rest.push((op, rhs));
                    let span = self.span(l, r);
                    return self.bounded(Expr {
                        kind: ExprKind::Chain { first, rest },
                        span,
                        depth,
                    });
                }
                kind => {
                    let lhs = Expr { kind, span, depth };
                    return self.expr(
                        ExprKind::Binary {
                            op,
                            lhs: Box::new(lhs),
                            rhs: Box::new(rhs),
                        },
                        l,
                        r,
                    );
                }
            }
        }
        self.expr(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            l,
            r,
        )
    }

    /// Parentheses are not kept as nodes (the pretty-printer re-inserts the needed ones), but
    /// they count towards the depth bound, since they are what makes hostile input deep.
    pub fn parenthesized(&mut self, mut inner: Expr, l: usize, r: usize) -> Expr {
        inner.span = self.span(l, r);
        if inner.depth >= MAX_EXPR_DEPTH && !inner.is_error() {
            return self.expr(
                ExprKind::Unary {
                    op: UnaryOp::Plus,
                    operand: Box::new(inner),
                },
                l,
                r,
            );
        }
        inner.depth = (inner.depth + 1).min(MAX_EXPR_DEPTH);
        inner
    }

    pub fn integer(&mut self, text: &str, l: usize, r: usize) -> Expr {
        match text.parse::<i64>() {
            Ok(v) => self.expr(ExprKind::Integer(v), l, r),
            Err(_) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0105",
                        "integer literal too large",
                        self.span(l, r),
                        "does not fit in a 64-bit integer",
                    )
                    .with_help(format!("write it as a real number, for example `{text}.0`")),
                );
                self.expr(ExprKind::Error, l, r)
            }
        }
    }

    pub fn real(&mut self, text: &str, l: usize, r: usize) -> Expr {
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => self.expr(ExprKind::Real(v), l, r),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0105",
                    "real literal out of range",
                    self.span(l, r),
                    "larger than the largest 64-bit floating-point number",
                ));
                self.expr(ExprKind::Error, l, r)
            }
        }
    }

    /// The lexer already reported the malformed number; the parser goes on with an error node.
    pub fn malformed_number(&mut self, _text: &str, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Error, l, r)
    }

    /// `initial()` is a call although `initial` is a keyword.
    pub fn initial_call(&mut self, il: usize, ir: usize, args: CallArgs, l: usize, r: usize) -> Expr {
        let name = self.ident("initial", il, ir);
        let function = ComponentRef {
            global: false,
            span: name.span,
            parts: vec![RefPart {
                name,
                subscripts: Vec::new(),
            }],
        };
        self.expr(ExprKind::Call { function, args }, l, r)
    }

    /// A placeholder for an expression whose syntax error was reported by error recovery.
    pub fn error_expr(&mut self, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Error, l, r)
    }

    /// Reports a block closed by the wrong keyword (`when ... end if;`). `opener` and `closer`
    /// are the keywords with their spans.
    pub fn check_end(&mut self, opener: (&str, Span), closer: (&str, Span)) {
        if opener.0 != closer.0 {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0108",
                    format!("`end {}` does not match the `{}` it closes", closer.0, opener.0),
                    closer.1,
                    format!("expected `end {}`", opener.0),
                )
                .with_label(opener.1, format!("the `{}` starts here", opener.0)),
            );
        }
    }
}

/// True when a direct child of `kind` is a depth-limit error node (see [`Builder::expr`]).
fn contains_depth_error(kind: &ExprKind) -> bool {
    let deep = |e: &Expr| e.is_error() && e.depth == MAX_EXPR_DEPTH;
    match kind {
        ExprKind::Unary { operand, .. } => deep(operand),
        ExprKind::Binary { lhs, rhs, .. } => deep(lhs) || deep(rhs),
        ExprKind::Chain { first, rest } => deep(first) || rest.iter().any(|(_, e)| deep(e)),
        ExprKind::If { branches, else_value } => deep(else_value) || branches.iter().any(|(c, v)| deep(c) || deep(v)),
        ExprKind::Range { start, step, stop } => deep(start) || deep(stop) || step.as_deref().is_some_and(deep),
        ExprKind::Array(items) => items.iter().any(deep),
        ExprKind::Matrix(rows) => rows.iter().flatten().any(deep),
        ExprKind::Tuple(items) => items.iter().flatten().any(deep),
        ExprKind::Call { function, args } => {
            args.positional
                .iter()
                .chain(args.named.iter().map(|(_, e)| e))
                .any(deep)
                || function
                    .parts
                    .iter()
                    .flat_map(|p| &p.subscripts)
                    .any(|s| matches!(s, Subscript::Expr(e) if deep(e)))
        }
        ExprKind::Ref(c) => c
            .parts
            .iter()
            .flat_map(|p| &p.subscripts)
            .any(|s| matches!(s, Subscript::Expr(e) if deep(e))),
        _ => false,
    }
}
