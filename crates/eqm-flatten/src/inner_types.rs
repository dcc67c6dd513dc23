//! The type of an `inner` element must be a subtype of its `outer` element's (Modelica 3.6
//! section 5.4): for elements of predefined and enumeration types, the same type with the same
//! array dimensions.
//!
//! Input: an `outer` element of a predefined or enumeration type and the variables of the
//! `inner` element it stands for. Output: E0347 when their types (Real, Integer, Boolean,
//! String, or the literals of an enumeration) or their array dimensions differ. It deliberately
//! does not compare elements of class types (records, models, connectors): a member the outer's
//! class lacks is reported where it is used; nor an outer array size written `:`.

use crate::flattener::Flattener;
use crate::layout::{ElementDecl, Member};
use crate::resolve::TypeRef;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{InstanceId, ScalarType};
use std::sync::Arc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The inner element `member` that the outer `element` of `instance` stands for, or
    /// `Failed` when its type does not fit the outer's (E0347).
    pub(crate) fn inner_checked(&mut self, instance: InstanceId, element: &ElementDecl<'a>, member: Member) -> Member {
        if self.inner_fits_outer(instance, element, &member) {
            member
        } else {
            Member::Failed
        }
    }

    /// Whether the `inner` element `member` that the outer `element` of `instance` stands for
    /// has the outer's type and dimensions. E0347 otherwise.
    fn inner_fits_outer(&mut self, instance: InstanceId, element: &ElementDecl<'a>, member: &Member) -> bool {
        let (inner_var, inner_dims): (_, Vec<usize>) = match member {
            Member::Var(v) => (*v, Vec::new()),
            Member::VarArray(array) => match array.elements.first() {
                Some(v) => (*v, array.dims.to_vec()),
                None => return true,
            },
            _ => return true,
        };
        // The outer's own declaration was not needed before this check: what resolving it
        // reports is left to the uses of the element, as before.
        let reported = self.diagnostics.len();
        let outer = self.outer_type(instance, element);
        self.diagnostics.truncate(reported);
        let Some((ty, enumeration, dims)) = outer else {
            return true;
        };
        let inner_ty = self.model.variables[inner_var.0 as usize].ty;
        let inner_enumeration = self.enumeration_names.get(&inner_var).cloned();
        let same_type = inner_ty == ty && inner_enumeration == enumeration;
        let same_dims = dims.as_ref().is_none_or(|d| *d == inner_dims);
        if same_type && same_dims {
            return true;
        }
        let name = &element.decl.name.name;
        let inner_text = type_text(inner_ty, inner_enumeration.as_ref(), Some(&inner_dims));
        let outer_text = type_text(ty, enumeration.as_ref(), dims.as_ref());
        self.diagnostics.push(
            Diagnostic::error(
                "E0347",
                format!(
                    "`inner {name}` is of type {inner_text}, which is not a subtype of `outer {name}`'s {outer_text}"
                ),
                element.decl.name.span,
                "outer element of another type",
            )
            .with_help("declare the outer element with the inner element's type and array dimensions"),
        );
        false
    }

    /// The predefined type, enumeration literals and array dimensions (`None` when a size is
    /// `:` or cannot be found) of the outer `element`; `None` for a class type.
    #[allow(clippy::type_complexity)]
    fn outer_type(
        &mut self,
        instance: InstanceId,
        element: &ElementDecl<'a>,
    ) -> Option<(ScalarType, Option<Arc<[String]>>, Option<Vec<usize>>)> {
        let declared = self.declaration_of(instance, element)?;
        let TypeRef::Builtin(ty) = declared.resolved.target else {
            return None;
        };
        let enumeration: Option<Arc<[String]>> = declared
            .resolved
            .enumeration
            .map(|literals| literals.iter().map(|l| l.name.name.clone()).collect());
        let (clause, decl, _) = declared.dims_from;
        let colon = |s: &eqm_syntax::ast::Subscript| matches!(s, eqm_syntax::ast::Subscript::Colon(_));
        let open = decl.dims.iter().any(colon)
            || clause.type_dims.iter().any(colon)
            || declared.resolved.dims.iter().any(|s| colon(s));
        let dims = if open {
            None
        } else {
            self.element_dims(
                declared.dims_from,
                declared.decl,
                &declared.resolved,
                &declared.modifier,
            )
        };
        Some((ty, enumeration, dims))
    }
}

/// A type as a message shows it: `Real[10]`, `enumeration(one, two)[3]`.
fn type_text(ty: ScalarType, enumeration: Option<&Arc<[String]>>, dims: Option<&Vec<usize>>) -> String {
    let mut text = match enumeration {
        Some(literals) => format!("enumeration({})", literals.join(", ")),
        None => format!("{ty:?}"),
    };
    if let Some(dims) = dims.filter(|d| !d.is_empty()) {
        let sizes: Vec<String> = dims.iter().map(usize::to_string).collect();
        text.push_str(&format!("[{}]", sizes.join(", ")));
    }
    text
}
