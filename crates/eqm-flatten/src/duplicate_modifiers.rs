//! One modification designates each element and attribute at most once (Modelica 3.6 section
//! 7.2.6): `C c(x = 1, x = 2)`, `a(x = 1), a.x = 2` and `x(unit = "V", unit = "mV")` are
//! errors, while `a(x = 1), a(y = 2)` and `x.unit = "V", x = 5` designate different things and
//! merge.
//!
//! Input: the definition of a class about to be laid out: its short-class modification, the
//! modifications of its `extends` clauses and of its component declarations, and those of the
//! elements a modification redeclares. Output: E0346 for each argument that designates again
//! what an earlier argument of the same modification designated. It deliberately does not look
//! into annotations (uninterpreted), nor compare modifications of different levels (an outer
//! modifier overriding an inner one is the normal precedence, not a duplicate).

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_syntax::ast;
use std::collections::HashMap;

/// What one argument designates: the value of an element, or a redeclaration of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Designation {
    Value,
    Redeclaration,
}

impl Flattener<'_, '_> {
    /// Reports (E0346) every modification in the definition of `def` that designates an element
    /// or attribute twice.
    pub(crate) fn check_duplicate_modifiers(&mut self, def: &ast::ClassDef) {
        match &def.body {
            ast::ClassBody::Short {
                modification: Some(cm), ..
            } => self.check_class_modification(cm),
            ast::ClassBody::Long { sections, .. } => {
                for section in sections {
                    if let ast::Section::Elements { elements, .. } = section {
                        for element in elements {
                            self.check_element_modifiers(element);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn check_element_modifiers(&mut self, element: &ast::Element) {
        match element {
            ast::Element::Component(clause) => self.check_clause_modifiers(clause),
            ast::Element::Extends(extends) => {
                if let Some(cm) = &extends.modification {
                    self.check_class_modification(cm);
                }
            }
            ast::Element::Class(_) | ast::Element::Import(_) => {}
        }
    }

    fn check_clause_modifiers(&mut self, clause: &ast::ComponentClause) {
        for component in &clause.components {
            if let Some(cm) = component
                .modification
                .as_ref()
                .and_then(|m| m.class_modification.as_ref())
            {
                self.check_class_modification(cm);
            }
        }
    }

    /// Checks one whole modification: every path it designates, nested arguments included,
    /// goes into one map, so that `a(x = 1), a.x = 2` meets the same key twice.
    fn check_class_modification(&mut self, cm: &ast::ClassModification) {
        let mut seen: HashMap<(String, Designation), Span> = HashMap::new();
        let mut found = Vec::new();
        collect_designations(cm, "", &mut seen, &mut found);
        for (path, second, first) in found {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0346",
                    format!("`{path}` is modified twice in one modification"),
                    second,
                    "modified again here",
                )
                .with_label(first, "first modified here"),
            );
        }
        // The modifications inside redeclared elements are modifications of their own.
        for arg in &cm.arguments {
            match arg.redeclare.as_deref() {
                Some(ast::RedeclaredElement::Component(clause)) => self.check_clause_modifiers(clause),
                // A redeclared class is checked when it is laid out, as every class is.
                Some(ast::RedeclaredElement::Class(_)) | None => {}
            }
        }
    }
}

/// Records what each argument of `cm` designates under `prefix`, and pushes (path, second
/// span, first span) for each designation already recorded.
fn collect_designations(
    cm: &ast::ClassModification,
    prefix: &str,
    seen: &mut HashMap<(String, Designation), Span>,
    found: &mut Vec<(String, Span, Span)>,
) {
    for arg in &cm.arguments {
        let mut path = prefix.to_string();
        for part in &arg.name.parts {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&part.name);
        }
        let mut designate = |path: &str, what: Designation| match seen.get(&(path.to_string(), what)) {
            Some(&first) => found.push((path.to_string(), arg.span, first)),
            None => {
                seen.insert((path.to_string(), what), arg.span);
            }
        };
        if arg.redeclare.is_some() {
            designate(&path, Designation::Redeclaration);
            continue;
        }
        let Some(modification) = &arg.modification else {
            continue;
        };
        if modification.binding.is_some() {
            designate(&path, Designation::Value);
        }
        if let Some(inner) = &modification.class_modification {
            collect_designations(inner, &path, seen, found);
        }
    }
}
