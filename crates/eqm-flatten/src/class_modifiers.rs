//! Modifiers of nested classes in extends clauses (`extends A(B(x = 4))`, with `B` a class
//! declared in `A`, MLS 7.2): the modified class is the type of the components of `A` declared
//! with it.
//!
//! Input: an element being declared, its resolved type and the extends modifier its layout
//! carries. Output: the part of that modifier that names the element's class, in the
//! instance's scope, which `declaration_of` places below the element's own modifiers. It
//! deliberately leaves the class itself unchanged: components of `B` declared elsewhere, or
//! with a dotted type name, are not modified.

use crate::flattener::Flattener;
use crate::layout::{ElementDecl, ResolvedType};
use crate::modifier::Modifier;
use crate::resolve::TypeRef;
use eqm_ir::flat::InstanceId;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The modifier an extends clause gives a class nested in the base that declares
    /// `element` (`extends A(B(x = 4))` with `B b;` in `A`): the modified class is the type of
    /// the components of `A` declared with it, below their own modifiers.
    pub(crate) fn nested_class_modifier(
        &self,
        instance: InstanceId,
        element: &ElementDecl<'a>,
        clause: &ast::ComponentClause,
        resolved: &ResolvedType<'a>,
    ) -> Modifier<'a> {
        let TypeRef::Class(class) = resolved.target else {
            return Modifier::default();
        };
        let [name] = clause.type_name.parts.as_slice() else {
            return Modifier::default();
        };
        if self.table.get(class).parent != Some(element.class) {
            return Modifier::default();
        }
        let (modifier, _) = element.extends_modifier.child(&name.name);
        modifier.in_instance(&|class| self.instance_holding(instance, class))
    }
}
