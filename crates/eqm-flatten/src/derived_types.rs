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
use eqm_diag::Diagnostic;
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
        // A predefined type is a type: only a type, a connector or a `class` may extend it.
        let kind = self.table.get(c).def.kind;
        if !crate::resolve::may_extend(kind, ast::ClassKind::Type) {
            self.diagnostics.push(Diagnostic::error(
                "E0336",
                format!(
                    "a {} cannot extend the type `{}`",
                    kind.keyword(),
                    eqm_syntax::pretty::name_text(&extends.base)
                ),
                extends.base.span,
                "base class of another kind",
            ));
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

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0336 when `class` combines its `extends` of `base` (`None`: a predefined type) with
    /// other elements although `base` is a simple type, an array class or a class whose short
    /// definition has a prefix (Modelica 7.1.2): such a base makes the class a variable of that
    /// type or an array of the base, which has no room for components, equations or other bases.
    pub(crate) fn check_combined_base(&mut self, class: ClassId, base: Option<ClassId>, x: &ast::Extends) {
        let what = match base {
            None => "a predefined type",
            Some(b) => match &self.table.get(b).def.body {
                ast::ClassBody::Enumeration { .. } => "an enumeration type",
                ast::ClassBody::Short { dims, .. } if !dims.is_empty() => "an array class",
                ast::ClassBody::Short { prefixes, .. } if *prefixes != ast::TypePrefix::default() => {
                    "a class with a prefix in its definition"
                }
                _ => return,
            },
        };
        if only_extends(self.table.get(class).def).is_some() {
            return;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0336",
            format!(
                "`extends {}` names {what}, which cannot be combined with components, equations or other base classes",
                eqm_syntax::pretty::name_text(&x.base)
            ),
            x.base.span,
            "combined with other elements",
        ));
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
