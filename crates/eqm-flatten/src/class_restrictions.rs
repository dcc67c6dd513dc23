//! The restrictions of the specialised class kinds on what a class may contain (Modelica 3.6
//! section 4.6): a record has only public components, none of them `input`, `output`, `inner`,
//! `outer` or `flow` (`stream` outside a connector is E0340), and no equations or algorithms;
//! a connector has only public elements, none `inner` or `outer`, and no equations or
//! algorithms; a package's components are constants, and it has no equations or algorithms;
//! the operators of an operator record hold functions only, a constructor with one output.
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
        if let Some(short) = self.table.get(class).redeclared_in {
            self.check_short_class_redeclaration(short, def);
        }
        self.check_duplicate_names(def);
        self.check_duplicate_modifiers(def);
        if def.kind == ast::ClassKind::OperatorRecord {
            self.check_operators(def);
        }
        let kind = match def.kind {
            ast::ClassKind::Record | ast::ClassKind::OperatorRecord => Restricted::Record,
            ast::ClassKind::Connector | ast::ClassKind::ExpandableConnector => Restricted::Connector,
            ast::ClassKind::Package => Restricted::Package,
            _ => return,
        };
        let ast::ClassBody::Long { sections, .. } = &def.body else {
            return;
        };
        if kind == Restricted::Connector {
            self.check_flow_records(class, def);
        }
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

    /// E0342 for what an operator of the operator record `def` cannot hold (Modelica 4.6: an
    /// `operator` class holds declarations of functions only), and for a constructor function
    /// with more than one output (Modelica 14.3: a constructor gives one record).
    fn check_operators(&mut self, def: &ast::ClassDef) {
        let operators = class_elements(def).filter_map(|e| match e {
            ast::Element::Class(c) if matches!(c.kind, ast::ClassKind::Operator | ast::ClassKind::OperatorFunction) => {
                Some(c)
            }
            _ => None,
        });
        for operator in operators {
            let constructor = operator.name.name == "'constructor'";
            if operator.kind == ast::ClassKind::OperatorFunction {
                if constructor {
                    self.check_constructor_outputs(operator);
                }
                continue;
            }
            if let ast::ClassBody::Long { sections, .. } = &operator.body {
                for section in sections {
                    match section {
                        ast::Section::Equations { span, .. } => self.not_in_operator("equation section", *span),
                        ast::Section::Algorithm { span, .. } => self.not_in_operator("algorithm section", *span),
                        _ => {}
                    }
                }
            }
            for element in class_elements(operator) {
                match element {
                    ast::Element::Class(f) if f.kind.is_function() => {
                        if constructor {
                            self.check_constructor_outputs(f);
                        }
                    }
                    ast::Element::Import(_) => {}
                    ast::Element::Class(c) => self.not_in_operator(c.kind.keyword(), c.span),
                    ast::Element::Component(c) => self.not_in_operator("component", c.span),
                    ast::Element::Extends(x) => self.not_in_operator("`extends` clause", x.span),
                }
            }
        }
    }

    /// E0342 for a flow variable of the connector `def` whose type is an operator record
    /// without the operators that summing flows needs (Modelica 9.2: `'0'`, `'+'` and `'-'`,
    /// for the zero of an unconnected flow, the sum of a connection set and the flows taken
    /// from the other side).
    fn check_flow_records(&mut self, class: ClassId, def: &ast::ClassDef) {
        for clause in class_elements(def).filter_map(|e| match e {
            ast::Element::Component(c) if c.prefixes.connection == ast::Connection::Flow => Some(c),
            _ => None,
        }) {
            let Ok(crate::resolve::TypeRef::Class(declared)) = self.table.lookup(class, &clause.type_name) else {
                continue;
            };
            // A short definition (`ComplexCurrent = Complex(...)`) has the operators of the
            // record it is defined as.
            let Some(record) = self.operator_record(declared) else {
                continue;
            };
            let missing: Vec<&str> = ["'0'", "'+'", "'-'"]
                .into_iter()
                .filter(|op| self.operator_functions(record, op).is_none_or(|f| f.is_empty()))
                .collect();
            if !missing.is_empty() {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0342",
                        format!(
                            "the flow variable's operator record `{}` has no operator {}, which connecting flows needs",
                            self.table.get(record).full_name,
                            missing.join(", ")
                        ),
                        clause.span,
                        "flow of an operator record without its sum",
                    )
                    .with_help("define `operator '0'`, `operator '+'` and `operator '-'` in the record, or make the variable a record of Reals"),
                );
            }
        }
    }

    fn not_in_operator(&mut self, what: &str, span: Span) {
        self.diagnostics.push(
            Diagnostic::error(
                "E0342",
                format!("an operator holds functions only, not a {what}"),
                span,
                "not allowed in an operator",
            )
            .with_help("Modelica 4.6 restricts an `operator` class to function declarations: move this out of it"),
        );
    }

    fn check_constructor_outputs(&mut self, function: &ast::ClassDef) {
        let outputs = class_elements(function)
            .filter_map(|e| match e {
                ast::Element::Component(c) if c.prefixes.causality == ast::Causality::Output => {
                    Some(c.components.len())
                }
                _ => None,
            })
            .sum::<usize>();
        if outputs > 1 {
            self.diagnostics.push(Diagnostic::error(
                "E0342",
                format!(
                    "the constructor function `{}` has {outputs} outputs; a constructor gives one record",
                    function.name.name
                ),
                function.name.span,
                "more than one output",
            ));
        }
    }

    /// E0218 for a second element of the same name in one class definition (two components, or
    /// a component and a class): Modelica 4.4.1 allows a name once per class.
    fn check_duplicate_names(&mut self, def: &ast::ClassDef) {
        let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
        for element in class_elements(def) {
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

/// The elements of a long class definition, in every section.
fn class_elements(def: &ast::ClassDef) -> impl Iterator<Item = &ast::Element> {
    let sections: &[ast::Section] = match &def.body {
        ast::ClassBody::Long { sections, .. } => sections,
        _ => &[],
    };
    sections.iter().flat_map(|section| match section {
        ast::Section::Elements { elements, .. } => elements.as_slice(),
        _ => &[],
    })
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
