//! Enumeration types: `type Mode = enumeration(Off, Heating, Cooling);`.
//!
//! Input: references in expressions and array dimensions that name an enumeration type or one
//! of its literals. Output: the flat model's representation of them: a literal is the Integer of
//! its position (`Mode.Heating` is 2), a variable of an enumeration type is an Integer variable
//! starting at the first literal, the type used as a dimension (`Real w[Mode]`) is its number of
//! literals, and the type used as a value (`for m in Mode loop`) is the vector of its literals;
//! `Boolean` as a dimension or a range means `false, true`. Comparisons, `Integer(e)` and
//! subscripts then work on the Integers; the variables of an enumeration type keep their literal
//! names for `String(v)`. It deliberately keeps no enumeration type in the flat
//! model: results show a literal's position, and comparing values of two different enumeration
//! types is not rejected.

use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, Node};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The enumeration class a reference without subscripts names (`Mode`, `Pkg.Mode`), if any.
    fn enumeration_class(&self, c: &ast::ComponentRef, scope: Scope) -> Option<crate::resolve::ClassId> {
        self.class_named(c, scope)
            .filter(|&class| self.table.get(class).enumeration().is_some())
    }

    /// The size of a dimension written as a type: an enumeration's number of literals, or 2 for
    /// `Boolean`; `None` for any other expression.
    pub(crate) fn type_dimension(&self, e: &ast::Expr, scope: Scope) -> Option<usize> {
        let ast::ExprKind::Ref(c) = &e.kind else { return None };
        if c.parts.len() == 1 && c.parts[0].subscripts.is_empty() && c.parts[0].name.name == "Boolean" {
            return Some(2);
        }
        let class = self.enumeration_class(c, scope)?;
        self.table.get(class).enumeration().map(<[_]>::len)
    }

    /// A reference to an enumeration type as a value (the vector of its literals, for ranges:
    /// `for m in Mode loop`), to `Boolean` (`{false, true}`), or to a literal (`Mode.Heating`,
    /// its position). `None` when `c` names none of these; `Some(None)` after the diagnostic for
    /// a literal its enumeration does not have.
    pub(crate) fn enumeration_value(&mut self, c: &ast::ComponentRef, scope: Scope) -> Option<Option<Value>> {
        if c.parts.len() == 1 && c.parts[0].subscripts.is_empty() && c.parts[0].name.name == "Boolean" {
            let elements = vec![self.model.exprs.boolean(false), self.model.exprs.boolean(true)];
            return Some(Some(Value::Array(vec![2], elements, ScalarType::Boolean)));
        }
        if let Some(class) = self.enumeration_class(c, scope) {
            let n = self.table.get(class).enumeration().map_or(0, <[_]>::len);
            let elements = (1..=n as i64).map(|k| self.model.exprs.int(k)).collect();
            return Some(Some(Value::Array(vec![n], elements, ScalarType::Integer)));
        }
        let (literal, path) = c.parts.split_last()?;
        if path.is_empty() || !literal.subscripts.is_empty() {
            return None;
        }
        let type_ref = ast::ComponentRef {
            global: c.global,
            parts: path.to_vec(),
            span: c.span,
        };
        let class = self.enumeration_class(&type_ref, scope)?;
        let literals = self.table.get(class).enumeration()?;
        let Some(position) = literals.iter().position(|l| l.name.name == literal.name.name) else {
            let mut d = Diagnostic::error(
                "E0205",
                format!(
                    "the enumeration `{}` has no literal `{}`",
                    self.table.get(class).full_name,
                    literal.name.name
                ),
                literal.name.span,
                "no such literal",
            );
            if let Some(s) = eqm_diag::did_you_mean(&literal.name.name, literals.iter().map(|l| l.name.name.as_str())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diagnostics.push(d);
            return Some(None);
        };
        Some(Some(Value::Scalar(
            self.model.exprs.int(position as i64 + 1),
            ScalarType::Integer,
        )))
    }

    /// The name of the literal a reference names (`Mode.Heating` gives `Heating`), for
    /// `String(e)`.
    pub(crate) fn enumeration_literal_name(&self, e: &ast::Expr, scope: Scope) -> Option<String> {
        let ast::ExprKind::Ref(c) = &e.kind else { return None };
        let (literal, path) = c.parts.split_last()?;
        let type_ref = ast::ComponentRef {
            global: c.global,
            parts: path.to_vec(),
            span: c.span,
        };
        let class = self.enumeration_class(&type_ref, scope)?;
        let literals = self.table.get(class).enumeration()?;
        literals
            .iter()
            .any(|l| l.name.name == literal.name.name)
            .then(|| literal.name.name.clone())
    }

    /// The literal names of the enumeration `x` is a value of, when `x` is a variable of an
    /// enumeration type or its `pre`.
    pub(crate) fn enumeration_names_of(&self, x: ExprId) -> Option<std::sync::Arc<[String]>> {
        let exprs = &self.model.exprs;
        let var = match exprs.get(x) {
            Node::Var(v) => *v,
            Node::Call(Callee::Builtin(Builtin::Pre), args) => match &args[..] {
                [a] => match exprs.get(*a) {
                    Node::Var(v) => *v,
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        self.enumeration_names.get(&var).cloned()
    }
}
