//! String variables of a model: EQM keeps their texts while it compiles the model, so a String
//! variable is a parameter once its text is known, from its binding (`String s = "pump"`) or
//! from the one equation that gives it (`s = "Testing" + " " + String(4711)`).
//!
//! Input: a String variable and the value its binding or equation gives it. Output: the
//! variable made a parameter bound to that text, or E0306 where the text is known only during
//! the run (`String s = String(x)` with `x` a variable): EQM has no String values during the
//! run, and showing such a String as written would be a silent wrong text. An if-expression
//! choosing between Strings is decided the same way: by a condition known when compiling, or
//! E0206. It deliberately does
//! not order equations: an equation that gives a String must come before the places that read
//! its text when compiling (a comparison reports E0206 otherwise).

use crate::flattener::Flattener;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::Node;
use eqm_ir::expr::VarId;
use eqm_ir::flat::{self, ScalarType};
use eqm_syntax::Span;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Makes String variable `id` a parameter bound to the text expression `text`: it holds
    /// that text for the whole run.
    pub(crate) fn bind_string_text(&mut self, id: VarId, text: eqm_ir::expr::ExprId) {
        let variable = &mut self.model.variables[id.0 as usize];
        variable.binding = Some(text);
        variable.variability = flat::Variability::Parameter;
        self.var_kinds[id.0 as usize].variability = flat::Variability::Parameter;
    }

    /// The text expression of a String value known when compiling, or E0306 at `span` (naming
    /// `subject`, what is given the text) when it is known only during the run. Then the text
    /// as written (`"[x]"`) stands in, so that the places reading the String report nothing
    /// more: the error keeps the model from running.
    pub(crate) fn string_text_of(&mut self, value: &Value, subject: &str, span: Span) -> Option<eqm_ir::expr::ExprId> {
        let message = self.known_string(value);
        if let Some(text) = message.as_ref().and_then(|m| m.as_literal()) {
            return Some(self.model.exprs.add(Node::Str(text.into())));
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0306",
                format!("the text of {subject} is known only during the run"),
                span,
                "a String made of values of the run",
            )
            .with_help("EQM keeps the texts of String variables while compiling the model; a String made from values of the run can be the message of `assert`, `terminate` or `print`, written there"),
        );
        message.map(|m| self.model.exprs.add(Node::Str(m.written().into())))
    }

    /// Handles `l = r` when either side is a String: one side must be a String variable that
    /// no binding or earlier equation gives a text, the other a text known when compiling.
    /// Returns whether the equation was a String equation (handled or reported).
    pub(crate) fn string_equation(&mut self, l: &Value, r: &Value, span: Span) -> bool {
        let is_string = |v: &Value| matches!(v, Value::Str(_) | Value::Scalar(_, ScalarType::String));
        if !is_string(l) || !is_string(r) {
            return false;
        }
        let Some((id, value)) = self
            .open_string_variable(l)
            .map(|id| (id, r))
            .or_else(|| self.open_string_variable(r).map(|id| (id, l)))
        else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    "an equation between Strings must give a String variable its text",
                    span,
                    "neither side is a String variable without a text",
                )
                .with_help("write `s = text` with `s` a String variable that has no binding and no other equation"),
            );
            return true;
        };
        let name = self.model.var(id).name.to_string();
        if self.connections.graph.when_depth > 0 || !self.branch_guards.is_empty() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("the String variable `{name}` is given its text inside a when-clause or an if-equation decided during the run"),
                    span,
                    "a String that changes during the run",
                )
                .with_help("EQM keeps the texts of String variables while compiling the model: give the String one text, outside when-clauses and if-equations whose conditions are known only during the run"),
            );
            return true;
        }
        if let Some(text) = self.string_text_of(value, &format!("the String variable `{name}`"), span) {
            self.bind_string_text(id, text);
        }
        true
    }

    /// The name of the String variable `value` refers to, when nothing has given it a text yet.
    pub(crate) fn open_string_name(&self, value: &Value) -> Option<String> {
        self.open_string_variable(value)
            .map(|id| self.model.var(id).name.to_string())
    }

    /// The String variable `value` refers to, when it is one whose text nothing has given yet.
    fn open_string_variable(&self, value: &Value) -> Option<VarId> {
        let Value::Scalar(e, ScalarType::String) = value else {
            return None;
        };
        let &Node::Var(id) = self.model.exprs.get(*e) else {
            return None;
        };
        let variable = self.model.var(id);
        let open = variable.binding.is_none()
            && !matches!(
                variable.variability,
                flat::Variability::Parameter | flat::Variability::Constant
            );
        open.then_some(id)
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `if c then t else otherwise` of Strings: the branch a condition known at compile time
    /// chooses, or the text both branches have; otherwise E0206 (E0306 when only one branch is a
    /// String), since EQM has no String values during the run.
    pub(crate) fn select_strings(
        &mut self,
        e: &'a eqm_syntax::ast::Expr,
        c: eqm_ir::expr::ExprId,
        t: Value,
        otherwise: Value,
    ) -> Option<Value> {
        if let Some(known) = self.consts.eval(&self.model, c) {
            self.note_structural(c);
            return Some(if known != 0.0 { t } else { otherwise });
        }
        if let (Value::Str(a), Value::Str(b)) = (&t, &otherwise)
            && a == b
        {
            return Some(t);
        }
        let d = match (&t, &otherwise) {
            (Value::Str(_), Value::Str(_)) => Diagnostic::error(
                "E0206",
                "the condition of an if-expression choosing between Strings must be known at compile time",
                e.span,
                "depends on values only known during simulation",
            ),
            _ => Diagnostic::error(
                "E0306",
                "the branches of this if-expression are not both Strings",
                e.span,
                "a String and a value of another type",
            ),
        };
        self.diagnostics.push(d);
        None
    }
}
