//! The restrictions of the specialised class kinds on what a class may contain (Modelica 3.6
//! section 4.6): a record has only public components, none of them `input`, `output`, `inner`,
//! `outer` or `flow` (`stream` outside a connector is E0340), and no equations or algorithms;
//! a connector has only public elements, none `inner` or `outer`, and no equations or
//! algorithms; a package's components are constants, and it has no equations or algorithms.
//! In every class a name is declared once (E0218), and an import names a package or an element
//! of one (E0222).
//!
//! Input: a class about to be laid out (each class once, when its first instance is made), or
//! a package whose constant is asked for.
//! Output: E0342 for each element or section its kind does not allow. It deliberately checks
//! only the class's own definition: its bases are checked when they are laid out, and which
//! kinds may extend which is E0336. The other kinds' restrictions (a block's connectors with
//! causality, an operator's functions) are not checked here.

use crate::flattener::Flattener;
use crate::resolve::ClassId;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_syntax::ast;

/// The kinds whose contents are restricted here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Restricted {
    Record,
    Connector,
    Package,
}

impl Restricted {
    fn noun(self) -> &'static str {
        match self {
            Restricted::Record => "a record",
            Restricted::Connector => "a connector",
            Restricted::Package => "a package",
        }
    }
}

impl Flattener<'_, '_> {
    /// Reports (E0342) what the kind of `class` does not allow in its own definition, once per
    /// class.
    pub(crate) fn check_class_restrictions(&mut self, class: ClassId) {
        if !self.redeclarations.contents_checked.insert(class) {
            return;
        }
        let def = self.table.get(class).def;
        self.check_duplicate_names(def);
        self.check_duplicate_modifiers(def);
        let kind = match def.kind {
            ast::ClassKind::Record | ast::ClassKind::OperatorRecord => Restricted::Record,
            ast::ClassKind::Connector | ast::ClassKind::ExpandableConnector => Restricted::Connector,
            ast::ClassKind::Package => Restricted::Package,
            _ => return,
        };
        let ast::ClassBody::Long { sections, .. } = &def.body else {
            return;
        };
        for section in sections {
            match section {
                ast::Section::Equations { span, .. } => self.not_in_kind(kind, "equations", *span),
                ast::Section::Algorithm { span, .. } => self.not_in_kind(kind, "algorithms", *span),
                ast::Section::Elements {
                    visibility, elements, ..
                } => {
                    for element in elements {
                        self.check_element(kind, *visibility, element);
                    }
                }
                ast::Section::Invariants { .. } | ast::Section::External { .. } => {}
            }
        }
    }

    /// E0218 for a second element of the same name in one class definition (two components, or
    /// a component and a class): Modelica 4.4.1 allows a name once per class.
    fn check_duplicate_names(&mut self, def: &ast::ClassDef) {
        let ast::ClassBody::Long { sections, .. } = &def.body else {
            return;
        };
        let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
        let names = sections.iter().flat_map(|section| match section {
            ast::Section::Elements { elements, .. } => elements.as_slice(),
            _ => &[],
        });
        for element in names {
            let declared: Vec<&ast::Ident> = match element {
                ast::Element::Component(clause) => clause.components.iter().map(|c| &c.name).collect(),
                ast::Element::Class(class) => vec![&class.name],
                ast::Element::Extends(_) | ast::Element::Import(_) => Vec::new(),
            };
            for name in declared {
                if let Some(&first) = seen.get(name.name.as_str()) {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0218",
                            format!("`{}` is declared twice in `{}`", name.name, def.name.name),
                            name.span,
                            "second declaration",
                        )
                        .with_label(first, "first declared here"),
                    );
                } else {
                    seen.insert(&name.name, name.span);
                }
            }
        }
    }

    fn check_element(&mut self, kind: Restricted, visibility: ast::Visibility, element: &ast::Element) {
        let ast::Element::Component(clause) = element else {
            return;
        };
        let prefixes = clause.prefixes;
        if kind == Restricted::Package {
            if prefixes.variability != ast::Variability::Constant {
                self.not_in_kind(kind, "components other than constants", clause.span);
            }
            return;
        }
        if visibility == ast::Visibility::Protected {
            self.not_in_kind(kind, "protected components", clause.span);
            return;
        }
        let record = kind == Restricted::Record;
        let forbidden = if clause.inner {
            Some("`inner`")
        } else if clause.outer {
            Some("`outer`")
        } else if record && prefixes.causality == ast::Causality::Input {
            Some("`input`")
        } else if record && prefixes.causality == ast::Causality::Output {
            Some("`output`")
        } else if record && prefixes.connection == ast::Connection::Flow {
            Some("`flow`")
        } else {
            None
        };
        if let Some(prefix) = forbidden {
            self.not_in_kind(kind, &format!("components declared {prefix}"), clause.span);
        }
    }

    fn not_in_kind(&mut self, kind: Restricted, what: &str, span: Span) {
        let kind = kind.noun();
        self.diagnostics.push(
            Diagnostic::error("E0342", format!("{kind} has no {what}"), span, "not allowed here").with_help(format!(
                "Modelica 4.6 restricts what {kind} may contain: move this to a model or block"
            )),
        );
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0222 when `import` takes its classes from a class that is not a package (Modelica
    /// 13.2): `import A.B.C;` and `import X = A.B.C;` need `A.B` to be a package, `import
    /// A.B.*;` and `import A.B.{C, D};` need `A.B` itself to be one. A path that names nothing is
    /// reported where the imported name is used.
    pub(crate) fn check_import(&mut self, import: &ast::Import) {
        let (path, whole) = match &import.kind {
            ast::ImportKind::Qualified(n) | ast::ImportKind::Renamed { name: n, .. } => (n, false),
            ast::ImportKind::Unqualified(n) | ast::ImportKind::Multiple { package: n, .. } => (n, true),
        };
        let Some(found) = self.table.resolve_path(path.parts.iter().map(|p| p.name.as_str())) else {
            return;
        };
        let from = if whole {
            Some(found)
        } else {
            self.table.get(found).parent
        };
        let Some(from) = from else {
            return;
        };
        let entry = self.table.get(from);
        // The literals of an enumeration type are imported like a package's elements
        // (`import P.Mode.{Off, Heating};`), as section 4.6 of the language reference says.
        if entry.def.kind.is_package() || matches!(entry.def.body, ast::ClassBody::Enumeration { .. }) {
            return;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0222",
            format!(
                "an import takes classes from packages only, and `{}` is a {}",
                entry.full_name,
                entry.def.kind.keyword()
            ),
            import.span,
            "import from a class that is not a package",
        ));
    }
}
