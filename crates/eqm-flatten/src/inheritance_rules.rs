//! The rules of inheritance (Modelica 3.6 section 7.1) checked when a class is laid out or a
//! package is searched for a constant.
//!
//! Input: a class and its base classes, each base with the `extends` clause that names it.
//! Output: E0336 for a base of a kind the class cannot extend (section 7.1.3), for a
//! replaceable base class (section 7.1.4: a redeclaration would change what the class
//! inherits), and for a long class extending an operator record or a class enclosing one
//! (section 4.6: only a short class definition may extend an operator record, so that its
//! operators keep applying to what they were written for); E0218 for a class that the class or
//! one of its bases declares under a name that another of them also declares, when the two are
//! not written alike (section 7.1: such duplicates must be identical). It deliberately does not
//! follow replaceable prefixes of the base's name (`extends P.A` with `P` replaceable) and
//! leaves redeclarations (`redeclare model A`, `model extends A`) to the redeclaration rules.

use crate::flattener::Flattener;
use crate::resolve::ClassId;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::FxHashMap;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0336 for each rule of section 7.1 that `class` extending `base` through the clause `x`
    /// breaks.
    pub(crate) fn check_base(&mut self, class: ClassId, base: ClassId, x: &ast::Extends) {
        self.check_base_kind(class, base, x.base.span);
        self.check_base_not_replaceable(base, x);
        self.check_operator_record_base(base, x);
    }

    /// E0336 when `class` may not extend `base` by their kinds, as Modelica restricts them
    /// (section 7.1.3 of its specification): a package, operator, function, type, record,
    /// operator record or expandable connector extends its own kind only (an operator function
    /// also a function), a connector also a type or a record, a block also a record, a model
    /// also a record or a block; every kind may extend a `class`. A class written `class` is
    /// not checked, as libraries use it loosely.
    fn check_base_kind(&mut self, class: ClassId, base: ClassId, span: Span) {
        let (derived, inherited) = (self.table.get(class).def.kind, self.table.get(base).def.kind);
        if !crate::resolve::may_extend(derived, inherited) {
            self.diagnostics.push(Diagnostic::error(
                "E0336",
                format!(
                    "a {} cannot extend the {} `{}`",
                    derived.keyword(),
                    inherited.keyword(),
                    self.table.get(base).full_name
                ),
                span,
                "base class of another kind",
            ));
        }
    }

    /// E0336 when the base class named by the `extends` clause `x` is declared replaceable.
    fn check_base_not_replaceable(&mut self, base: ClassId, x: &ast::Extends) {
        let def = self.table.get(base).def;
        if x.inherited || !def.redeclarable.replaceable {
            return;
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0336",
                format!(
                    "`{}` is replaceable and cannot be a base class",
                    self.table.get(base).full_name
                ),
                x.base.span,
                "replaceable base class",
            )
            .with_label(def.name.span, "declared replaceable here")
            .with_help("extend a class that is not replaceable; to inherit a replaceable class's changed version, write `model extends A ... end A;`"),
        );
    }

    /// E0336 when a long class definition extends an operator record, or any class extends
    /// one that encloses an operator record.
    fn check_operator_record_base(&mut self, base: ClassId, x: &ast::Extends) {
        let (kind, what) = if self.table.get(base).def.kind == ast::ClassKind::OperatorRecord {
            ("operator record", self.table.get(base).full_name.clone())
        } else if let Some(inner) = self.enclosed_operator_record(base) {
            (
                "class enclosing the operator record",
                self.table.get(inner).full_name.clone(),
            )
        } else {
            return;
        };
        self.diagnostics.push(
            Diagnostic::error(
                "E0336",
                format!("a class cannot extend the {kind} `{what}` with a long class definition"),
                x.base.span,
                "extends an operator record",
            )
            .with_help("an operator record is extended only by a short class definition that modifies its components (`record R2 = R(x(unit = \"V\"));`)"),
        );
    }

    /// An operator record declared in `class` or in a class nested in it, searched breadth
    /// first and in the order of the names through the classes read so far.
    fn enclosed_operator_record(&self, class: ClassId) -> Option<ClassId> {
        let mut queue: std::collections::VecDeque<ClassId> = self.table.get(class).nested.values().copied().collect();
        while let Some(c) = queue.pop_front() {
            let entry = self.table.get(c);
            if entry.def.kind == ast::ClassKind::OperatorRecord {
                return Some(c);
            }
            queue.extend(entry.nested.values().copied());
        }
        None
    }

    /// E0218 for each class declared under one name in two of `classes` (a class and the
    /// classes it extends), written differently. The first declaration in `classes` order is
    /// the one shown.
    pub(crate) fn check_inherited_classes(&mut self, classes: &[ClassId]) {
        if classes.len() < 2 {
            return;
        }
        let table = self.table;
        let mut first: FxHashMap<&str, ClassId> = FxHashMap::default();
        for &class in classes {
            for (&name, &nested) in &table.get(class).nested {
                let def = table.get(nested).def;
                if def.redeclarable.redeclare || extends_inherited(def) {
                    continue;
                }
                match first.get(name) {
                    None => {
                        first.insert(name, nested);
                    }
                    Some(&kept) if kept != nested && !written_alike(table.get(kept).def, def) => {
                        self.report_unlike_classes(kept, nested);
                    }
                    Some(_) => {}
                }
            }
        }
    }

    fn report_unlike_classes(&mut self, shown: ClassId, other: ClassId) {
        let (shown, other) = (self.table.get(shown), self.table.get(other));
        let holder = |parent: Option<ClassId>| parent.map_or(String::new(), |p| self.table.get(p).full_name.clone());
        let span: Span = shown.def.name.span;
        self.diagnostics.push(
            Diagnostic::error(
                "E0218",
                format!(
                    "the class `{}` is declared in `{}` and inherited from `{}`, and the two declarations differ",
                    shown.def.name.name,
                    holder(shown.parent),
                    holder(other.parent)
                ),
                span,
                "declared again",
            )
            .with_label(other.def.name.span, "inherited declaration")
            .with_help(
                "rename one of them, or write `redeclare` before the new one if the base class declares it replaceable",
            ),
        );
    }
}

/// Whether `def` is a class extending its inherited version (`model extends A ... end A;`).
fn extends_inherited(def: &ast::ClassDef) -> bool {
    let ast::ClassBody::Long { sections, .. } = &def.body else {
        return false;
    };
    sections.iter().any(|section| match section {
        ast::Section::Elements { elements, .. } => elements
            .iter()
            .any(|e| matches!(e, ast::Element::Extends(x) if x.inherited)),
        _ => false,
    })
}

/// Whether two class definitions are the same text up to layout and comments.
fn written_alike(a: &ast::ClassDef, b: &ast::ClassDef) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    let normal = |def: &ast::ClassDef| {
        let mut def = def.clone();
        eqm_syntax::normalize::normalize_class(&mut def);
        def
    };
    normal(a) == normal(b)
}
