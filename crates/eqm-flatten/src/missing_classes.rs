//! The diagnostic for a name under `Modelica.` that does not resolve: a class of the Modelica
//! Standard Library that EQM's embedded library lacks, a class the library read from a library
//! directory does not have, or a misspelling with its correction.
//!
//! Input: a name the caller has failed to resolve, and the class table. Output: the E0202
//! diagnostic, or none for a name outside `Modelica`. It deliberately does not resolve names
//! itself beyond the prefixes of the one it is given.

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
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
    fn modelica_is_embedded(&self) -> bool {
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
