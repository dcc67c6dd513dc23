//! Enumeration values are not numbers (Modelica 3.6 section 4.9.5): an enumeration type has
//! no conversion to or from Integer or Real other than the explicit `Integer(e)`, and two
//! enumeration types are different types.
//!
//! Input: the binding of a variable with its declared type, the operands of a relation, and
//! the subscripts of a reference to one element of an array variable. Output: E0306 for a
//! number bound to a variable of an enumeration type, a literal of one bound to an Integer or
//! Real variable, a value of another enumeration type bound to one, a relation between a value
//! of an enumeration type and a number, and a number as the subscript of a dimension the
//! declaration sizes with an enumeration type. It deliberately recognises the enumeration side
//! only where it is certain without a full type inference (a literal, a variable of the type,
//! and the forms `enumeration_names_of_expr` follows) and the number side only as a numeric
//! literal, so that no legal model is refused.

use crate::flattener::Flattener;
use crate::modifier::{Binding, Scope};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::{InstanceId, ScalarType};
use eqm_syntax::ast;
use std::sync::Arc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether the binding of a variable of type `ty` (of the enumeration with the literals
    /// `enumeration`, if any) has a value of that type; `value` is the bound value once
    /// evaluated. E0306 otherwise.
    pub(crate) fn binding_type_agrees(
        &mut self,
        binding: &Binding<'a>,
        enumeration: Option<&Arc<[String]>>,
        ty: ScalarType,
        value: Option<ExprId>,
    ) -> bool {
        // A record's binding hands its fields their parts; their forms are not the binding's.
        if !binding.fields.is_empty() {
            return true;
        }
        let e = binding.expr;
        let scope = binding.scope;
        let wrong = match enumeration {
            Some(names) => {
                if is_number(e) {
                    Some("a number cannot be the value of a variable of an enumeration type".to_string())
                } else {
                    let x = value.unwrap_or_else(|| self.model.exprs.int(0));
                    self.enumeration_names_of_expr(e, x, scope, &mut Vec::new())
                        .filter(|found| found != names)
                        .map(|_| "a value of another enumeration type cannot be bound here".to_string())
                }
            }
            None if matches!(ty, ScalarType::Integer | ScalarType::Real) => {
                // Only literals: `Integer(e)` evaluates to the very value of `e`, so the bound
                // value cannot tell a conversion from a variable of the enumeration.
                self.is_enumeration_value(e, scope).then(|| {
                    format!(
                        "an enumeration value cannot be the value of {} variable; convert it with `Integer(...)`",
                        if ty == ScalarType::Real { "a Real" } else { "an Integer" }
                    )
                })
            }
            None => None,
        };
        let Some(message) = wrong else {
            return true;
        };
        self.diagnostics
            .push(Diagnostic::error("E0306", message, e.span, "wrong type").with_help(
                "enumeration values and numbers are different types (Modelica 4.9.5): use `Integer(e)` for the position of a literal",
            ));
        false
    }

    /// Whether the operands `a` and `b` of a relation, written `lhs` and `rhs`, are not an
    /// enumeration value against a number. E0306 otherwise.
    pub(crate) fn relation_operands_agree(
        &mut self,
        (a, b): (&Value, &Value),
        (lhs, rhs): (&'a ast::Expr, &'a ast::Expr),
        scope: Scope,
    ) -> bool {
        // The form of the operand, not its value, tells: `Integer(e)` has the value of `e`.
        // Only an Integer-valued operand can be of an enumeration type.
        let enumeration_side = |this: &mut Self, v: &Value, e: &'a ast::Expr| {
            let Value::Scalar(_, ScalarType::Integer) = v else {
                return false;
            };
            if this.is_enumeration_value(e, scope) {
                return true;
            }
            let x = this.model.exprs.int(0);
            this.enumeration_names_of_expr(e, x, scope, &mut Vec::new()).is_some()
        };
        let mixed =
            (is_number(rhs) && enumeration_side(self, a, lhs)) || (is_number(lhs) && enumeration_side(self, b, rhs));
        if !mixed {
            return true;
        }
        let span = lhs.span.to(rhs.span);
        self.diagnostics.push(
            Diagnostic::error(
                "E0306",
                "an enumeration value cannot be compared with a number",
                span,
                "enumeration against number",
            )
            .with_help("compare with a literal of the enumeration, or convert with `Integer(e)` (Modelica 4.9.5)"),
        );
        false
    }

    /// Whether the subscripts `part` writes for an array variable of `instance` are not numbers
    /// where the declaration sizes the dimension with an enumeration type (`w[1]` of `Real
    /// w[Mode]`: Modelica 10.5 indexes it by the type's literals). E0306 otherwise.
    pub(crate) fn subscripts_fit_dimensions(&mut self, instance: InstanceId, part: &ast::RefPart) -> bool {
        let numbers = |s: &ast::Subscript| matches!(s, ast::Subscript::Expr(e) if is_number(e));
        if !part.subscripts.iter().any(numbers) {
            return true;
        }
        let layout = self.instances[instance.0 as usize].layout.clone();
        let Some(k) = layout.index(&part.name.name) else {
            return true;
        };
        let element = &layout.elements[k];
        let (decl, clause) = (element.decl, element.clause);
        // The dimensions are compared position by position only when the declaration writes
        // all of them itself (not through its type or a replaced declaration).
        if decl.dims.len() + clause.type_dims.len() != part.subscripts.len() {
            return true;
        }
        let scope = Scope {
            instance: Some(instance),
            class: element.class,
        };
        for (sub, dim) in part.subscripts.iter().zip(decl.dims.iter().chain(&clause.type_dims)) {
            let (ast::Subscript::Expr(e), ast::Subscript::Expr(d)) = (sub, dim) else {
                continue;
            };
            let ast::ExprKind::Ref(c) = &d.kind else {
                continue;
            };
            if is_number(e) && self.names_boolean(c, scope) {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0306",
                        format!("`{}` is indexed by `false` and `true`, not by numbers", part.name.name),
                        e.span,
                        "a number as subscript",
                    )
                    .with_help("a dimension sized by `Boolean` is indexed by Boolean values (Modelica 10.5)"),
                );
                return false;
            }
            if is_number(e) && self.enumeration_class(c, scope).is_some() {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0306",
                        format!(
                            "`{}` is indexed by the enumeration `{}`, not by numbers",
                            part.name.name,
                            c.dotted()
                        ),
                        e.span,
                        "a number as subscript",
                    )
                    .with_help("use a literal of the enumeration (Modelica 10.5)"),
                );
                return false;
            }
        }
        true
    }

    /// Whether `e` is a literal of an enumeration type (`E.two`), or an array or if-expression
    /// all of whose values are.
    fn is_enumeration_value(&self, e: &ast::Expr, scope: Scope) -> bool {
        match &e.kind {
            ast::ExprKind::Ref(c) => {
                let Some((literal, path)) = c.parts.split_last() else {
                    return false;
                };
                if path.is_empty() || !literal.subscripts.is_empty() {
                    return false;
                }
                let type_ref = ast::ComponentRef {
                    global: c.global,
                    parts: path.to_vec(),
                    span: c.span,
                };
                self.enumeration_class(&type_ref, scope).is_some()
            }
            ast::ExprKind::Array(items) => {
                !items.is_empty() && items.iter().all(|i| self.is_enumeration_value(i, scope))
            }
            ast::ExprKind::If { branches, else_value } => {
                self.is_enumeration_value(else_value, scope)
                    && branches.iter().all(|(_, v)| self.is_enumeration_value(v, scope))
            }
            _ => false,
        }
    }
}

/// Whether `e` is a numeric literal, possibly signed, or an array of them.
fn is_number(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Integer(_) | ast::ExprKind::Real(_) => true,
        ast::ExprKind::Unary {
            op: ast::UnaryOp::Neg | ast::UnaryOp::Plus,
            operand,
        } => is_number(operand),
        ast::ExprKind::Array(items) => !items.is_empty() && items.iter().all(is_number),
        _ => false,
    }
}
