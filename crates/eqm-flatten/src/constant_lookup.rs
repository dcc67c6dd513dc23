//! The lookup rules of Modelica 5.3 for a constant named by an unqualified name that the
//! class using it does not declare: the constants of the enclosing classes, up to the first
//! encapsulated one, and those its imports make visible.
//!
//! Input: the name, where it is used, and the class table. Output: the class declaring the
//! constant, or the diagnostic that says why none may be used: E0205 for a constant outside
//! an encapsulated class, a variable (not a constant) of an enclosing class found first, a
//! protected constant imported, a name two unqualified imports both provide, and a constant
//! named through a class that is no package. It deliberately does not read the constant's
//! value (`package_views` and `names` do) nor look at instances.

use crate::flattener::Flattener;
use crate::modifier::Scope;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_syntax::ast;

/// Where the constant that an unqualified name denotes is declared.
pub(crate) enum ConstantLookup<'a> {
    NotFound,
    /// The constant `name` of the class.
    Found(crate::resolve::ClassId, &'a str),
    /// The name cannot be used; the diagnostic is reported.
    Refused,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The constant that the unqualified name `ident` denotes from `scope`: declared or
    /// imported by the class of the scope or an enclosing class, up to the first encapsulated
    /// one (Modelica 5.3.1: what an encapsulated class uses from outside, it imports).
    pub(crate) fn enclosing_constant(&mut self, ident: &'a ast::Ident, scope: Scope) -> ConstantLookup<'a> {
        let in_function = self.table.get(scope.class).def.kind.is_function();
        let mut current = Some(scope.class);
        while let Some(cls) = current {
            // An enclosing package that another one extends for the instance at hand is
            // that package (`nX` in `PartialMedium.BaseProperties` is the medium's).
            let package = self.view_of(scope, cls);
            if self.find_constant(package, &ident.name).is_some() {
                return ConstantLookup::Found(package, ident.name.as_str());
            }
            // (A function's own inputs and locals are not the class's elements, so from a
            // function this says nothing.)
            if cls != scope.class && !in_function && self.declares_variable(cls, &ident.name) {
                return self.enclosing_variable(ident, cls);
            }
            match self.imported_constant(cls, &ident.name, ident.span) {
                ConstantLookup::NotFound => {}
                found_or_refused => return found_or_refused,
            }
            if self.table.get(cls).def.encapsulated {
                return self.outside_encapsulated(ident, cls);
            }
            current = self.table.get(cls).parent;
        }
        ConstantLookup::NotFound
    }

    /// Whether `class` itself declares a component `name` that is neither a constant nor a
    /// parameter.
    fn declares_variable(&self, class: crate::resolve::ClassId, name: &str) -> bool {
        self.own_component(class, name).is_some_and(|(clause, _, _)| {
            !matches!(
                clause.prefixes.variability,
                ast::Variability::Constant | ast::Variability::Parameter
            )
        })
    }

    /// E0205 for the name `ident`, which the lookup from a nested class finds as a variable of
    /// the enclosing class `class` (Modelica 5.3.1: what a lookup finds in an enclosing class
    /// must be a constant; it does not go on to a constant of the same name further out).
    fn enclosing_variable(&mut self, ident: &ast::Ident, class: crate::resolve::ClassId) -> ConstantLookup<'a> {
        self.diagnostics.push(
            Diagnostic::error(
                "E0205",
                format!(
                    "`{}` is a variable of the enclosing class `{}`: a nested class can use only the constants of the classes around it",
                    ident.name,
                    self.table.get(class).full_name
                ),
                ident.span,
                "not a constant",
            )
            .with_help("pass the value in through a parameter or a modifier of the nested class's component"),
        );
        ConstantLookup::Refused
    }

    /// E0205 when a class enclosing the encapsulated class `inner` declares the constant
    /// `ident`, which the encapsulated class cannot see; otherwise the name is unknown.
    fn outside_encapsulated(&mut self, ident: &ast::Ident, inner: crate::resolve::ClassId) -> ConstantLookup<'a> {
        let mut outer = self.table.get(inner).parent;
        while let Some(cls) = outer {
            if self.find_constant_decl(cls, &ident.name).is_some() {
                let inner_name = self.table.get(inner).def.name.name.clone();
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0205",
                        format!(
                            "`{}` is declared in `{}`, outside the encapsulated class `{inner_name}`",
                            ident.name,
                            self.table.get(cls).full_name
                        ),
                        ident.span,
                        "not visible inside an encapsulated class",
                    )
                    .with_help(format!(
                        "import it in `{inner_name}`: `import {}.{};`",
                        self.table.get(cls).full_name,
                        ident.name
                    )),
                );
                return ConstantLookup::Refused;
            }
            outer = self.table.get(cls).parent;
        }
        ConstantLookup::NotFound
    }

    /// E0205 for the constant `last` named through `class`, which is no package (Modelica
    /// 5.3.2: only the encapsulated classes of such a class can be named through it).
    pub(crate) fn constant_of_non_package(&mut self, class: crate::resolve::ClassId, last: &ast::Ident) {
        let entry = self.table.get(class);
        self.diagnostics.push(
            Diagnostic::error(
                "E0205",
                format!(
                    "`{}` is a {}, not a package: its constant `{}` cannot be named through it",
                    entry.full_name,
                    entry.def.kind.keyword(),
                    last.name
                ),
                last.span,
                "named through a class that is no package",
            )
            .with_help("declare the constant in a package and name it there"),
        );
    }

    /// The package and name of a constant that an import of `class` makes visible as `ident`:
    /// `import Modelica.Constants.pi;`, `import p = Modelica.Constants.pi;`,
    /// `import Modelica.Constants.*;` or `import Modelica.Constants.{pi, e};`; E0205 when the
    /// constant is protected or two unqualified imports provide it.
    fn imported_constant(&mut self, class: crate::resolve::ClassId, ident: &'a str, span: Span) -> ConstantLookup<'a> {
        let found: Vec<_> = self
            .imported_elements(class, ident)
            .into_iter()
            .filter_map(|(package, name)| {
                let (_, protected) = self.find_constant_decl(package, name)?;
                Some((package, name, protected))
            })
            .collect();
        let Some(&(package, name, protected)) = found.first() else {
            return ConstantLookup::NotFound;
        };
        let package_name = self.table.get(package).full_name.clone();
        if protected {
            // Modelica 13.2.1: an import names public elements only.
            self.diagnostics.push(
                Diagnostic::error(
                    "E0205",
                    format!("`{name}` is protected in `{package_name}`: no import makes it visible"),
                    span,
                    "protected element",
                )
                .with_help("a protected element is named by its simple name only, inside its class and the classes extending it"),
            );
            return ConstantLookup::Refused;
        }
        // Only unqualified imports give candidates for a name no import names, so another
        // package among them is a second `import P.*;` providing it (Modelica 13.2.1: an
        // error, whichever import comes first).
        let other = found
            .iter()
            .find(|f| f.0 != package)
            .map(|f| self.table.get(f.0).full_name.clone());
        if let Some(other) = other.filter(|_| !self.named_import_provides(class, ident)) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0205",
                    format!("`{ident}` is ambiguous: both `{package_name}.*` and `{other}.*` are imported and hold it"),
                    span,
                    "imported twice",
                )
                .with_help(format!(
                    "import the one meant by name: `import {package_name}.{ident};`"
                )),
            );
            return ConstantLookup::Refused;
        }
        ConstantLookup::Found(package, name)
    }

    /// Whether a qualified, renaming or multiple import of `class` names `ident`; it then wins
    /// over the unqualified imports.
    fn named_import_provides(&self, class: crate::resolve::ClassId, ident: &str) -> bool {
        self.table.get(class).imports().any(|import| match &import.kind {
            ast::ImportKind::Qualified(n) => n.parts.last().is_some_and(|p| p.name == ident),
            ast::ImportKind::Renamed { alias, .. } => alias.name == ident,
            ast::ImportKind::Multiple { names, .. } => names.iter().any(|n| n.name == ident),
            ast::ImportKind::Unqualified(_) => false,
        })
    }
}
