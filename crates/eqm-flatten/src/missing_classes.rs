//! The diagnostic for a class name that does not resolve: under `Modelica.`, a class of the
//! Modelica Standard Library that EQM's embedded library lacks, a class the library read from
//! a library directory does not have, or a misspelling with its correction; a class that exists
//! but cannot be named so (protected, or not encapsulated inside a class that is no package);
//! otherwise an unknown class with the closest visible name.
//!
//! Input: a name the caller has failed to resolve, and the class table. Output: the E0202
//! diagnostic. It deliberately does not resolve names itself beyond the prefixes of the one it
//! is given.

use crate::flattener::Flattener;
use crate::resolve::{ClassId, HiddenBy};
use eqm_diag::Diagnostic;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0202 for the class name `name`, written in `scope`, that does not resolve.
    pub(crate) fn unknown_class(&mut self, scope: ClassId, name: &ast::Name) {
        let text = eqm_syntax::pretty::name_text(name);
        if let Some(d) = self.missing_msl_class(name, &text) {
            self.diagnostics.push(d);
            return;
        }
        if let Some((hidden, by)) = self.table.hidden_part(scope, name) {
            self.diagnostics.push(self.hidden_class(hidden, by, name, &text));
            return;
        }
        let visible = self.table.visible_names(scope);
        let mut d = Diagnostic::error(
            "E0202",
            format!("unknown class `{text}`"),
            name.span,
            "no class with this name is visible here",
        );
        if let Some(s) = eqm_diag::did_you_mean(&name.parts[0].name, visible.iter().map(|s| s.as_str())) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        if name.parts.len() > 1 {
            d = d.with_note(
                "a dotted name is looked up from its first part: enclosing classes, imports, then the library",
            );
        }
        self.diagnostics.push(d);
    }

    /// E0202 for the dotted name `text` of a class that exists but cannot be named so.
    fn hidden_class(&self, hidden: ClassId, by: HiddenBy, name: &ast::Name, text: &str) -> Diagnostic {
        let entry = self.table.get(hidden);
        let holder = entry
            .parent
            .map_or(String::new(), |p| self.table.get(p).full_name.clone());
        match by {
            HiddenBy::Protection => Diagnostic::error(
                "E0202",
                format!(
                    "`{}` is protected in `{holder}`: it cannot be named with a dot (`{text}`)",
                    entry.def.name.name
                ),
                name.span,
                "names a protected class",
            )
            .with_label(entry.def.name.span, "declared protected here")
            .with_help(
                "a protected class is named by its simple name only, inside its class and the classes extending it",
            ),
            HiddenBy::NonPackage(through) => {
                let through = self.table.get(through);
                Diagnostic::error(
                    "E0202",
                    format!(
                        "`{}` is a {}, not a package: only its encapsulated classes can be named through it (`{text}`)",
                        through.full_name,
                        through.def.kind.keyword()
                    ),
                    name.span,
                    "names a class inside a class that is no package",
                )
                .with_label(entry.def.name.span, "not encapsulated")
                .with_help(format!(
                    "declare `{}` in a package, or make it `encapsulated`",
                    entry.def.name.name
                ))
            }
        }
    }

    /// The diagnostic for a name starting with `Modelica.` that does not resolve: a class of the
    /// Modelica Standard Library that EQM's library lacks, or, when the package that should
    /// hold it exists and has a class of a close name, a misspelling with its correction.
    /// `None` for any other name.
    pub(crate) fn missing_msl_class(&self, name: &ast::Name, text: &str) -> Option<Diagnostic> {
        if name.parts.len() < 2 || name.parts[0].name != "Modelica" {
            return None;
        }
        // The longest prefix that names a class of EQM's library, and the part after it.
        let mut known = None;
        let mut path = String::new();
        for (k, part) in name.parts.iter().enumerate() {
            if k > 0 {
                path.push('.');
            }
            path.push_str(&part.name);
            match self.table.find(&path) {
                Some(class) => known = Some((class, k)),
                None => break,
            }
        }
        if let Some((class, k)) = known
            && let Some(next) = name.parts.get(k + 1)
        {
            let nested = self.table.nested_names(class);
            if let Some(s) = eqm_diag::did_you_mean(&next.name, nested) {
                let prefix: Vec<&str> = name.parts[..=k].iter().map(|p| p.name.as_str()).collect();
                return Some(
                    Diagnostic::error(
                        "E0202",
                        format!("unknown class `{text}`"),
                        name.span,
                        "no class with this name",
                    )
                    .with_help(format!("did you mean `{}.{s}`?", prefix.join("."))),
                );
            }
        }
        if !self.modelica_is_embedded() {
            return Some(
                Diagnostic::error(
                    "E0202",
                    format!("unknown class `{text}`"),
                    name.span,
                    "the Modelica library found has no class with this name",
                )
                .with_help(
                    "a model written for another version of the library says which in its `uses` annotation; \
                     a version the library's conversion script converts from is read through it",
                ),
            );
        }
        Some(missing_msl_diagnostic(name, text))
    }

    /// Whether the package `Modelica` is EQM's embedded one, not one read from a library
    /// directory (whose file has a path; the embedded files' names start with `<`).
    pub(crate) fn modelica_is_embedded(&self) -> bool {
        let Some(modelica) = self.table.roots.get("Modelica") else {
            return true;
        };
        let file = self.table.get(*modelica).def.name.span.file;
        self.options.data_files.source(file).starts_with('<')
    }
}

/// The diagnostic for a class of the Modelica Standard Library that EQM's library lacks.
fn missing_msl_diagnostic(name: &ast::Name, text: &str) -> Diagnostic {
    Diagnostic::error(
        "E0202",
        format!("`{text}` is part of the Modelica Standard Library but not of EQM's library"),
        name.span,
        "no class with this name in EQM's package `Modelica`",
    )
    .with_help("docs/library.md lists the Modelica Standard Library classes that EQM provides")
}
