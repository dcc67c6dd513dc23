//! Class lookup inside a class written for an earlier version of a library: a name that denotes
//! a class the library's conversion script renamed is looked up by its new name.
//!
//! Input: a name written in a scope, and the conversions of the scope's top-level class
//! ([`ClassTable::conversions`]). Output: the class the name denotes after conversion, or
//! `None` when no conversion applies (the ordinary lookup answers then). The old full name is
//! formed as Modelica forms it for a library's classes: through the imports of the scope and of
//! the classes around it (`import SI = Modelica.SIunits;` makes `SI.Time` the old
//! `Modelica.SIunits.Time`), else as written from the top level. It deliberately does not
//! follow names into classes the scope inherits: a library's classes are named through imports
//! or in full. A modifier's renamed element (`Sine(freqHz = 2)` for the new `f`) is found by
//! [`ClassTable::converted_element`].

use crate::conversion::{Conversions, ElementConversion};
use crate::resolve::{ClassId, ClassTable, LookupError, TypeRef};
use crate::sources::dotted;
use eqm_syntax::ast;

impl<'a> ClassTable<'a> {
    /// The class that `parts` (a name written in `scope`; `global` for a leading dot) denotes
    /// after conversion, when the scope's top-level class has conversions and one renames the
    /// name's old full name; `None` otherwise.
    pub(crate) fn converted_lookup(
        &self,
        scope: ClassId,
        global: bool,
        parts: &[&str],
    ) -> Option<Result<TypeRef, LookupError>> {
        let conversions = self.conversions_of(scope)?;
        let old = if global {
            parts.join(".")
        } else {
            self.old_full_name(scope, parts, conversions)?
        };
        let new = conversions.class(&old)?;
        Some(match self.find(&new) {
            Some(class) => Ok(TypeRef::Class(class)),
            None => Err(LookupError::NotFound { resolved_parts: 0 }),
        })
    }

    /// What becomes of the modifier of element `old` of `class` (a parameter or component a
    /// modifier names) written in `scope`, when the scope's conversions renamed or removed it.
    pub(crate) fn converted_element(&self, scope: ClassId, class: ClassId, old: &str) -> Option<ElementConversion<'a>> {
        let conversions = self.conversions_of(scope)?;
        conversions.element(&self.get(class).full_name, old)
    }

    /// The conversions that apply inside `scope`: those of its top-level class.
    fn conversions_of(&self, scope: ClassId) -> Option<&'a Conversions> {
        if self.conversions.is_empty() {
            return None;
        }
        let mut root = scope;
        while let Some(parent) = self.get(root).parent {
            root = parent;
        }
        let top = self.get(root).full_name.split('.').next()?;
        self.conversions.get(top).copied()
    }

    /// The full name `parts` had when its scope was written: its first part replaced by what
    /// an import of the scope or of a class around it names, or as written. `None` when the
    /// first part is a class declared in one of those classes (it is the model's own).
    fn old_full_name(&self, scope: ClassId, parts: &[&str], conversions: &Conversions) -> Option<String> {
        let (first, rest) = parts.split_first()?;
        let with_rest = |prefix: String| {
            let mut full = prefix;
            for part in rest {
                full.push('.');
                full.push_str(part);
            }
            full
        };
        let mut current = Some(scope);
        while let Some(class) = current {
            let entry = self.get(class);
            if entry.nested.contains_key(first) || entry.def.name.name == *first {
                return None;
            }
            for import in entry.imports() {
                let prefix = match &import.kind {
                    ast::ImportKind::Renamed { alias, name } if alias.name == *first => dotted(name),
                    ast::ImportKind::Qualified(name) if name.parts.last().is_some_and(|p| p.name == *first) => {
                        dotted(name)
                    }
                    ast::ImportKind::Multiple { package, names } if names.iter().any(|n| n.name == *first) => {
                        format!("{}.{first}", dotted(package))
                    }
                    ast::ImportKind::Unqualified(package) => {
                        // Every member of the package is visible: the name is one of its members
                        // only if the conversion knows it.
                        let candidate = with_rest(format!("{}.{first}", dotted(package)));
                        if conversions.class(&candidate).is_some() {
                            return Some(candidate);
                        }
                        continue;
                    }
                    _ => continue,
                };
                return Some(with_rest(prefix));
            }
            if entry.def.encapsulated {
                break;
            }
            current = entry.parent;
        }
        Some(with_rest(first.to_string()))
    }
}
