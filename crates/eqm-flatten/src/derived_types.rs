//! Types written in the long form on a predefined type: `type TypeReal extends Real; end
//! TypeReal;` (a class whose only component-like element is the `extends`: annotations, imports
//! and nested classes, such as the `equalityConstraint` function of an orientation type, may
//! stand beside it).
//!
//! Input: a class that a component's type name reached. Output: the resolved type of the
//! predefined (or enumeration) type it extends, with the extends clause's modifiers, so that
//! such a type and the arrays of it (`type Color = TypeInteger[3](each min = 0)`) are variables
//! as the short form `type TypeReal = Real;` would make them; its nested classes stay where they
//! are, found through the type's name. It deliberately leaves every other long class alone (its
//! body is collected as the class's), and a long type with components or equations of its own
//! is not followed.

use crate::flattener::Flattener;
use crate::layout::ResolvedType;
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The type that class `c`, written as `extends B;` and nothing else, stands for when `B`
    /// resolves to a predefined or enumeration type; `None` for any other class.
    pub(crate) fn long_form_predefined_type(&mut self, c: ClassId, depth: usize) -> Option<ResolvedType<'a>> {
        let extends = only_extends(self.table.get(c).def)?;
        if depth >= self.table.classes.len() {
            return None;
        }
        let base = self.resolve_type(c, &extends.base, depth + 1)?;
        if !matches!(base.target, TypeRef::Builtin(_)) {
            return None;
        }
        let mut resolved = ResolvedType::clone(&base);
        if let Some(m) = &extends.modification {
            let scope = Scope {
                instance: None,
                class: c,
            };
            resolved.modifier = Modifier::from_class_modification(m, scope).merge(&resolved.modifier);
        }
        Some(resolved)
    }
}

/// The one `extends` clause of a long class body that declares no component, equation or
/// algorithm (nested classes and imports may stand beside it).
fn only_extends(def: &ast::ClassDef) -> Option<&ast::Extends> {
    let ast::ClassBody::Long { sections, .. } = &def.body else {
        return None;
    };
    let mut found = None;
    for section in sections {
        let ast::Section::Elements { elements, .. } = section else {
            return None;
        };
        for element in elements {
            match element {
                ast::Element::Extends(e) if found.is_none() => found = Some(e),
                ast::Element::Class(_) | ast::Element::Import(_) => {}
                _ => return None,
            }
        }
    }
    found
}
