//! Prints an AST back as canonical `.eqm` text.
//!
//! Input: any [`StoredDefinition`] or [`Expr`]. Output: text that parses back to the same AST
//! (spans aside); `tests/it/syntax.rs` checks this round trip. Parentheses are inserted exactly
//! where the precedence tiers of the grammar require them, so `-(a + b)` and `(-a)*b` survive while
//! redundant parentheses disappear. Layout: two-space indentation, one declaration, equation or
//! statement per line. It deliberately keeps no comments (the AST has none).

use crate::ast::*;
use eqm_diag::text::real;
use std::fmt::Write as _;

/// Prints a whole file.
pub fn print_file(file: &StoredDefinition) -> String {
    let mut p = Printer::default();
    match &file.within {
        Some(Some(name)) => {
            let _ = writeln!(p.out, "within {};", name_text(name));
        }
        Some(None) => p.out.push_str("within;\n"),
        None => {}
    }
    for (i, class) in file.classes.iter().enumerate() {
        if i > 0 || file.within.is_some() {
            p.out.push('\n');
        }
        p.class(class, 0);
        p.out.push_str(";\n");
    }
    p.out
}

/// Prints one expression.
pub fn print_expr(e: &Expr) -> String {
    let mut s = String::new();
    expr(&mut s, e, Level::Expr);
    s
}

/// Prints a component reference such as `m[1].flange.s`.
pub fn print_ref(c: &ComponentRef) -> String {
    let mut s = String::new();
    component_ref(&mut s, c);
    s
}

pub fn name_text(name: &Name) -> String {
    let mut s = String::new();
    if name.global {
        s.push('.');
    }
    for (i, part) in name.parts.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(&part.name);
    }
    s
}

/// The clause of `model extends B(m) ... end B;` that its header writes, if `c` is such a class.
fn header_extends(c: &ClassDef) -> Option<&Extends> {
    let ClassBody::Long { sections, .. } = &c.body else {
        return None;
    };
    match sections.first()? {
        Section::Elements { elements, .. } => match elements.first()? {
            Element::Extends(x) if x.inherited => Some(x),
            _ => None,
        },
        _ => None,
    }
}

#[derive(Default)]
struct Printer {
    out: String,
}

impl Printer {
    fn indent(&mut self, level: usize) {
        for _ in 0..level {
            self.out.push_str("  ");
        }
    }

    fn class(&mut self, c: &ClassDef, level: usize) {
        redeclarable_prefix(&mut self.out, &c.redeclarable);
        if c.is_final {
            self.out.push_str("final ");
        }
        if c.encapsulated {
            self.out.push_str("encapsulated ");
        }
        if c.partial {
            self.out.push_str("partial ");
        }
        let _ = write!(self.out, "{} ", c.kind.keyword());
        // A class extending its inherited version names it in the header.
        if header_extends(c).is_some() {
            self.out.push_str("extends ");
        }
        let _ = write!(self.out, "{}", c.name.name);
        if let Some(m) = header_extends(c).and_then(|x| x.modification.as_ref()) {
            class_modification(&mut self.out, m);
        }
        match &c.body {
            ClassBody::Long {
                description,
                sections,
                annotation,
                end_name,
            } => {
                if let Some(d) = description {
                    self.out.push(' ');
                    string_lit(&mut self.out, &d.text);
                }
                self.out.push('\n');
                for (i, section) in sections.iter().enumerate() {
                    self.section(section, i == 0, level);
                }
                if let Some(a) = annotation {
                    self.indent(level + 1);
                    annotation_text(&mut self.out, a);
                    self.out.push_str(";\n");
                }
                self.indent(level);
                let _ = write!(self.out, "end {}", end_name.name);
            }
            ClassBody::Short {
                prefixes,
                base,
                dims,
                modification,
                description,
                annotation,
            } => {
                self.out.push_str(" = ");
                type_prefix(&mut self.out, prefixes);
                self.out.push_str(&name_text(base));
                subscripts(&mut self.out, dims);
                if let Some(m) = modification {
                    class_modification(&mut self.out, m);
                }
                description_and_annotation(&mut self.out, description.as_ref(), annotation.as_ref());
            }
            ClassBody::Enumeration {
                literals,
                open,
                description,
                annotation,
            } => {
                self.out.push_str(" = enumeration(");
                if *open {
                    self.out.push(':');
                }
                for (i, literal) in literals.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(&literal.name.name);
                    description_and_annotation(
                        &mut self.out,
                        literal.description.as_ref(),
                        literal.annotation.as_ref(),
                    );
                }
                self.out.push(')');
                description_and_annotation(&mut self.out, description.as_ref(), annotation.as_ref());
            }
        }
        constraint(&mut self.out, &c.redeclarable);
    }

    fn section(&mut self, section: &Section, first: bool, level: usize) {
        match section {
            Section::Elements {
                visibility, elements, ..
            } => {
                match visibility {
                    // The first public list is unlabelled, unless it is empty: an empty unlabelled
                    // list would vanish when the text is parsed again.
                    Visibility::Public if first && !elements.is_empty() => {}
                    Visibility::Public => self.keyword_line("public", level),
                    Visibility::Protected => self.keyword_line("protected", level),
                }
                // The clause of a class extending its inherited version is in the header.
                for e in elements {
                    if !matches!(e, Element::Extends(Extends { inherited: true, .. })) {
                        self.element(e, level + 1);
                    }
                }
            }
            Section::Equations { initial, equations, .. } => {
                self.keyword_line(if *initial { "initial equation" } else { "equation" }, level);
                for e in equations {
                    self.equation(e, level + 1);
                }
            }
            Section::Algorithm {
                initial, statements, ..
            } => {
                self.keyword_line(if *initial { "initial algorithm" } else { "algorithm" }, level);
                for s in statements {
                    self.statement(s, level + 1);
                }
            }
            Section::Invariants { equations, .. } => {
                self.keyword_line("invariant", level);
                for e in equations {
                    self.equation(e, level + 1);
                }
            }
            Section::External {
                language,
                call,
                annotation,
                ..
            } => {
                self.indent(level);
                self.out.push_str("external");
                if let Some(language) = language {
                    self.out.push(' ');
                    string_lit(&mut self.out, language);
                }
                if let Some(call) = call {
                    self.out.push(' ');
                    if let Some(output) = &call.output {
                        component_ref(&mut self.out, output);
                        self.out.push_str(" = ");
                    }
                    self.out.push_str(&call.function.name);
                    self.out.push('(');
                    list(&mut self.out, &call.args);
                    self.out.push(')');
                }
                description_and_annotation(&mut self.out, None, annotation.as_ref());
                self.out.push_str(";\n");
            }
        }
    }

    fn keyword_line(&mut self, keyword: &str, level: usize) {
        self.indent(level);
        self.out.push_str(keyword);
        self.out.push('\n');
    }

    fn element(&mut self, e: &Element, level: usize) {
        self.indent(level);
        match e {
            Element::Class(c) => self.class(c, level),
            Element::Extends(x) => {
                let _ = write!(self.out, "extends {}", name_text(&x.base));
                if let Some(m) = &x.modification {
                    class_modification(&mut self.out, m);
                }
                description_and_annotation(&mut self.out, None, x.annotation.as_ref());
            }
            Element::Import(i) => {
                self.out.push_str("import ");
                match &i.kind {
                    ImportKind::Qualified(n) => self.out.push_str(&name_text(n)),
                    ImportKind::Unqualified(n) => {
                        let _ = write!(self.out, "{}.*", name_text(n));
                    }
                    ImportKind::Renamed { alias, name } => {
                        let _ = write!(self.out, "{} = {}", alias.name, name_text(name));
                    }
                    ImportKind::Multiple { package, names } => {
                        let names: Vec<&str> = names.iter().map(|n| n.name.as_str()).collect();
                        let _ = write!(self.out, "{}.{{{}}}", name_text(package), names.join(", "));
                    }
                }
                description_and_annotation(&mut self.out, i.description.as_ref(), i.annotation.as_ref());
            }
            Element::Component(c) => {
                redeclarable_prefix(&mut self.out, &c.redeclarable);
                if c.is_final {
                    self.out.push_str("final ");
                }
                if c.inner {
                    self.out.push_str("inner ");
                }
                if c.outer {
                    self.out.push_str("outer ");
                }
                type_prefix(&mut self.out, &c.prefixes);
                self.out.push_str(&name_text(&c.type_name));
                subscripts(&mut self.out, &c.type_dims);
                for (i, d) in c.components.iter().enumerate() {
                    self.out.push_str(if i == 0 { " " } else { ", " });
                    self.out.push_str(&d.name.name);
                    subscripts(&mut self.out, &d.dims);
                    if let Some(m) = &d.modification {
                        modification(&mut self.out, m);
                    }
                    if let Some(cond) = &d.condition {
                        self.out.push_str(" if ");
                        expr(&mut self.out, cond, Level::Expr);
                    }
                    description_and_annotation(&mut self.out, d.description.as_ref(), d.annotation.as_ref());
                }
                constraint(&mut self.out, &c.redeclarable);
            }
        }
        self.out.push_str(";\n");
    }

    fn equation(&mut self, e: &Equation, level: usize) {
        self.indent(level);
        match &e.kind {
            EquationKind::Simple { lhs, rhs } => {
                expr(&mut self.out, lhs, Level::Simple);
                self.out.push_str(" = ");
                expr(&mut self.out, rhs, Level::Expr);
            }
            EquationKind::Connect { a, b } => {
                self.out.push_str("connect(");
                component_ref(&mut self.out, a);
                self.out.push_str(", ");
                component_ref(&mut self.out, b);
                self.out.push(')');
            }
            EquationKind::If { branches, else_branch } => {
                self.branches(branches, "if", "elseif", level, Self::equation);
                if !else_branch.is_empty() {
                    self.keyword_line("else", level);
                    for x in else_branch {
                        self.equation(x, level + 1);
                    }
                }
                self.indent(level);
                self.out.push_str("end if");
            }
            EquationKind::For { indices, body } => {
                self.for_header(indices);
                for x in body {
                    self.equation(x, level + 1);
                }
                self.indent(level);
                self.out.push_str("end for");
            }
            EquationKind::When { branches } => {
                self.branches(branches, "when", "elsewhen", level, Self::equation);
                self.indent(level);
                self.out.push_str("end when");
            }
            EquationKind::Call { function, args } => call(&mut self.out, function, args),
        }
        description_and_annotation(&mut self.out, e.description.as_ref(), e.annotation.as_ref());
        self.out.push_str(";\n");
    }

    fn statement(&mut self, s: &Statement, level: usize) {
        self.indent(level);
        match &s.kind {
            StatementKind::Assign { target, value } => {
                component_ref(&mut self.out, target);
                self.out.push_str(" := ");
                expr(&mut self.out, value, Level::Expr);
            }
            StatementKind::MultiAssign {
                targets,
                function,
                args,
            } => {
                self.out.push('(');
                for (i, t) in targets.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if let Some(t) = t {
                        component_ref(&mut self.out, t);
                    }
                }
                self.out.push_str(") := ");
                call(&mut self.out, function, args);
            }
            StatementKind::Call { function, args } => call(&mut self.out, function, args),
            StatementKind::If { branches, else_branch } => {
                self.branches(branches, "if", "elseif", level, Self::statement);
                if !else_branch.is_empty() {
                    self.keyword_line("else", level);
                    for x in else_branch {
                        self.statement(x, level + 1);
                    }
                }
                self.indent(level);
                self.out.push_str("end if");
            }
            StatementKind::For { indices, body } => {
                self.for_header(indices);
                for x in body {
                    self.statement(x, level + 1);
                }
                self.indent(level);
                self.out.push_str("end for");
            }
            StatementKind::While { condition, body } => {
                self.out.push_str("while ");
                expr(&mut self.out, condition, Level::Expr);
                self.out.push_str(" loop\n");
                for x in body {
                    self.statement(x, level + 1);
                }
                self.indent(level);
                self.out.push_str("end while");
            }
            StatementKind::When { branches } => {
                self.branches(branches, "when", "elsewhen", level, Self::statement);
                self.indent(level);
                self.out.push_str("end when");
            }
            StatementKind::Return => self.out.push_str("return"),
            StatementKind::Break => self.out.push_str("break"),
        }
        description_and_annotation(&mut self.out, s.description.as_ref(), s.annotation.as_ref());
        self.out.push_str(";\n");
    }

    /// Prints `if c then ... elseif d then ...` (or `when`/`elsewhen`) with bodies; the caller
    /// prints `else` and the closing `end`.
    fn branches<T>(
        &mut self,
        branches: &[(Expr, Vec<T>)],
        first: &str,
        next: &str,
        level: usize,
        item: fn(&mut Self, &T, usize),
    ) {
        for (i, (condition, body)) in branches.iter().enumerate() {
            if i > 0 {
                self.indent(level);
            }
            self.out.push_str(if i == 0 { first } else { next });
            self.out.push(' ');
            expr(&mut self.out, condition, Level::Expr);
            self.out.push_str(" then\n");
            for x in body {
                item(self, x, level + 1);
            }
        }
    }

    fn for_header(&mut self, indices: &[ForIndex]) {
        self.out.push_str("for ");
        for (i, index) in indices.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(&index.name.name);
            if let Some(r) = &index.range {
                self.out.push_str(" in ");
                expr(&mut self.out, r, Level::Expr);
            }
        }
        self.out.push_str(" loop\n");
    }
}

fn type_prefix(out: &mut String, p: &TypePrefix) {
    match p.connection {
        Connection::None => {}
        Connection::Flow => out.push_str("flow "),
        Connection::Stream => out.push_str("stream "),
        Connection::Potential => out.push_str("potential "),
    }
    match p.variability {
        Variability::Continuous => {}
        Variability::Discrete => out.push_str("discrete "),
        Variability::Parameter => out.push_str("parameter "),
        Variability::Constant => out.push_str("constant "),
    }
    match p.causality {
        Causality::None => {}
        Causality::Input => out.push_str("input "),
        Causality::Output => out.push_str("output "),
    }
}

fn description_and_annotation(out: &mut String, d: Option<&Description>, a: Option<&Annotation>) {
    if let Some(d) = d {
        out.push(' ');
        string_lit(out, &d.text);
    }
    if let Some(a) = a {
        out.push(' ');
        annotation_text(out, a);
    }
}

fn annotation_text(out: &mut String, a: &Annotation) {
    out.push_str("annotation");
    class_modification(out, &a.modification);
}

fn modification(out: &mut String, m: &Modification) {
    if let Some(cm) = &m.class_modification {
        class_modification(out, cm);
    }
    if let Some(b) = &m.binding {
        out.push_str(" = ");
        expr(out, b, Level::Expr);
    }
}

fn class_modification(out: &mut String, m: &ClassModification) {
    out.push('(');
    for (i, arg) in m.arguments.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if let Some(element) = &arg.redeclare {
            redeclared_element(out, arg, element);
            continue;
        }
        if arg.each {
            out.push_str("each ");
        }
        if arg.is_final {
            out.push_str("final ");
        }
        out.push_str(&name_text(&arg.name));
        if let Some(m) = &arg.modification {
            modification(out, m);
        }
        if let Some(d) = &arg.description {
            out.push(' ');
            string_lit(out, &d.text);
        }
    }
    out.push(')');
}

/// `redeclare` and `replaceable` before an element.
fn redeclarable_prefix(out: &mut String, r: &Redeclarable) {
    if r.redeclare {
        out.push_str("redeclare ");
    }
    if r.replaceable {
        out.push_str("replaceable ");
    }
}

/// ` constrainedby Base(mods) "doc"` after a replaceable element.
fn constraint(out: &mut String, r: &Redeclarable) {
    if let Some(c) = &r.constraint {
        out.push_str(" constrainedby ");
        out.push_str(&name_text(&c.name));
        if let Some(m) = &c.modification {
            class_modification(out, m);
        }
        description_and_annotation(out, c.description.as_ref(), c.annotation.as_ref());
    }
}

/// A `redeclare` argument of a modifier (after its `each`): the element it declares, with
/// `final` where Modelica's grammar puts it (`redeclare each final model M = N`).
fn redeclared_element(out: &mut String, arg: &ModArgument, element: &RedeclaredElement) {
    let redeclarable = match element {
        RedeclaredElement::Class(c) => &c.redeclarable,
        RedeclaredElement::Component(c) => &c.redeclarable,
    };
    out.push_str("redeclare ");
    if arg.each {
        out.push_str("each ");
    }
    if arg.is_final {
        out.push_str("final ");
    }
    if redeclarable.replaceable {
        out.push_str("replaceable ");
    }
    match element {
        RedeclaredElement::Class(c) => {
            let mut p = Printer::default();
            let plain = ClassDef {
                redeclarable: Redeclarable::default(),
                is_final: false,
                ..c.clone()
            };
            p.class(&plain, 0);
            out.push_str(&p.out);
        }
        RedeclaredElement::Component(c) => {
            type_prefix(out, &c.prefixes);
            out.push_str(&name_text(&c.type_name));
            for d in &c.components {
                out.push(' ');
                out.push_str(&d.name.name);
                subscripts(out, &d.dims);
                if let Some(m) = &d.modification {
                    modification(out, m);
                }
                description_and_annotation(out, d.description.as_ref(), d.annotation.as_ref());
            }
        }
    }
    constraint(out, redeclarable);
}

fn subscripts(out: &mut String, subs: &[Subscript]) {
    if subs.is_empty() {
        return;
    }
    out.push('[');
    for (i, s) in subs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match s {
            Subscript::Colon(_) => out.push(':'),
            Subscript::Expr(e) => expr(out, e, Level::Expr),
        }
    }
    out.push(']');
}

fn component_ref(out: &mut String, c: &ComponentRef) {
    if c.global {
        out.push('.');
    }
    for (i, part) in c.parts.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(&part.name.name);
        subscripts(out, &part.subscripts);
    }
}

fn call(out: &mut String, function: &ComponentRef, args: &CallArgs) {
    component_ref(out, function);
    out.push('(');
    let mut first = true;
    for a in &args.positional {
        if !first {
            out.push_str(", ");
        }
        first = false;
        expr(out, a, Level::Expr);
    }
    for (name, a) in &args.named {
        if !first {
            out.push_str(", ");
        }
        first = false;
        let _ = write!(out, "{} = ", name.name);
        expr(out, a, Level::Expr);
    }
    out.push(')');
}

fn string_lit(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The precedence tiers of the grammar, loosest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Expr,
    Simple,
    Or,
    And,
    Not,
    Relation,
    Arith,
    Term,
    Factor,
    Primary,
}

fn level_of(e: &Expr) -> Level {
    match &e.kind {
        ExprKind::If { .. } | ExprKind::Lambda { .. } => Level::Expr,
        ExprKind::Range { .. } => Level::Simple,
        ExprKind::Binary { op, .. } => level_of_op(*op),
        // A chain is never empty; its operators share one level.
        ExprKind::Chain { rest, .. } => rest.first().map_or(Level::Primary, |(op, _)| level_of_op(*op)),
        ExprKind::Unary { op: UnaryOp::Not, .. } => Level::Not,
        ExprKind::Unary { .. } => Level::Arith,
        // The parser never builds a negative literal, but later stages (constant folding) may;
        // printed with its sign it reads as a unary minus, so it needs the same parentheses.
        ExprKind::Integer(v) if *v < 0 => Level::Arith,
        ExprKind::Real(v) if v.is_sign_negative() => Level::Arith,
        _ => Level::Primary,
    }
}

fn level_of_op(op: BinaryOp) -> Level {
    match op {
        BinaryOp::Or => Level::Or,
        BinaryOp::And => Level::And,
        op if op.is_relation() => Level::Relation,
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::ElemAdd | BinaryOp::ElemSub => Level::Arith,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::ElemMul | BinaryOp::ElemDiv => Level::Term,
        _ => Level::Factor,
    }
}

/// The tiers the left and the right operand of an operator of `level` are printed at.
fn operand_levels(level: Level) -> (Level, Level) {
    match level {
        Level::Or => (Level::Or, Level::And),
        Level::And => (Level::And, Level::Not),
        Level::Relation => (Level::Arith, Level::Arith),
        Level::Arith => (Level::Arith, Level::Term),
        Level::Term => (Level::Term, Level::Factor),
        _ => (Level::Primary, Level::Primary),
    }
}

fn operator(out: &mut String, op: BinaryOp) {
    // Element-wise operators always get spaces: `1.*2` would lex as the real `1.` times 2.
    match op {
        BinaryOp::Pow | BinaryOp::Mul | BinaryOp::Div => out.push_str(op.symbol()),
        _ => {
            let _ = write!(out, " {} ", op.symbol());
        }
    }
}

/// Prints `e` where the grammar expects tier `context`, adding parentheses when `e` is looser.
fn expr(out: &mut String, e: &Expr, context: Level) {
    let needs_parens = level_of(e) < context;
    if needs_parens {
        out.push('(');
    }
    match &e.kind {
        ExprKind::Integer(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::Real(v) => real(out, *v),
        ExprKind::String(s) => string_lit(out, s),
        ExprKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        ExprKind::Ref(c) => component_ref(out, c),
        ExprKind::Call { function, args } => call(out, function, args),
        ExprKind::PartialApplication { function, args } => {
            out.push_str("function ");
            call(out, function, args);
        }
        ExprKind::Lambda { params, body } => {
            out.push_str("function(");
            for (k, p) in params.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push_str(&p.name);
            }
            out.push_str(") = ");
            expr(out, body, Level::Expr);
        }
        ExprKind::Unary { op, operand } => {
            let (symbol, inner) = match op {
                UnaryOp::Neg => ("-", Level::Term),
                UnaryOp::Plus => ("+", Level::Term),
                UnaryOp::ElemNeg => (".-", Level::Term),
                UnaryOp::ElemPlus => (".+", Level::Term),
                UnaryOp::Not => ("not ", Level::Relation),
            };
            out.push_str(symbol);
            expr(out, operand, inner);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (left, right) = operand_levels(level_of(e));
            expr(out, lhs, left);
            operator(out, *op);
            expr(out, rhs, right);
        }
        ExprKind::Chain { first, rest } => {
            // Operand by operand in a loop: a chain of 10^4 terms is printed without recursing
            // per term.
            let (left, right) = operand_levels(level_of(e));
            expr(out, first, left);
            for (op, operand) in rest {
                operator(out, *op);
                expr(out, operand, right);
            }
        }
        ExprKind::If { branches, else_value } => {
            for (i, (c, v)) in branches.iter().enumerate() {
                out.push_str(if i == 0 { "if " } else { " elseif " });
                expr(out, c, Level::Expr);
                out.push_str(" then ");
                expr(out, v, Level::Expr);
            }
            out.push_str(" else ");
            expr(out, else_value, Level::Expr);
        }
        ExprKind::Array(items) => {
            out.push('{');
            list(out, items);
            out.push('}');
        }
        ExprKind::Matrix(rows) => {
            out.push('[');
            for (i, row) in rows.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                list(out, row);
            }
            out.push(']');
        }
        ExprKind::Range { start, step, stop } => {
            expr(out, start, Level::Or);
            out.push(':');
            if let Some(step) = step {
                expr(out, step, Level::Or);
                out.push(':');
            }
            expr(out, stop, Level::Or);
        }
        ExprKind::Tuple(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if let Some(item) = item {
                    expr(out, item, Level::Expr);
                }
            }
            out.push(')');
        }
        ExprKind::End => out.push_str("end"),
        ExprKind::Index { base, subscripts: subs } => {
            // Only a call is subscripted without parentheses (`f(x)[2]`); anything else keeps
            // them, so that `(a.x)[2]` does not read back as the reference `a.x[2]`.
            if matches!(base.kind, ExprKind::Call { .. }) {
                expr(out, base, Level::Primary);
            } else {
                out.push('(');
                expr(out, base, Level::Expr);
                out.push(')');
            }
            subscripts(out, subs);
        }
        ExprKind::Comprehension { body, indices } => {
            out.push('{');
            expr(out, body, Level::Expr);
            iterators(out, indices);
            out.push('}');
        }
        ExprKind::Reduction {
            function,
            body,
            indices,
        } => {
            component_ref(out, function);
            out.push('(');
            expr(out, body, Level::Expr);
            iterators(out, indices);
            out.push(')');
        }
        // An error node has no source form; it only exists next to a reported diagnostic.
        ExprKind::Error => out.push_str("/* error */ 0"),
    }
    if needs_parens {
        out.push(')');
    }
}

/// ` for i in r, j in s` of an array constructor or a reduction.
fn iterators(out: &mut String, indices: &[ForIndex]) {
    out.push_str(" for ");
    for (i, index) in indices.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&index.name.name);
        if let Some(r) = &index.range {
            out.push_str(" in ");
            expr(out, r, Level::Expr);
        }
    }
}

fn list(out: &mut String, items: &[Expr]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        expr(out, item, Level::Expr);
    }
}
