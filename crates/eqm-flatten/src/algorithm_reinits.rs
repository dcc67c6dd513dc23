//! The `reinit`s of the when-statements of a model's algorithm section.
//!
//! Input: a `reinit(x, e)` statement inside a when-statement (at its top level or inside its
//! if-statements, with the guards of the branches around it) and the statement context of its
//! section. Output: the reinit recorded for the when-clause that holds the statement's reinits,
//! with a value that keeps the state when the branches around it do not run, and E0219 for a
//! reinit (or print) whose value reads what the section assigns after it. It deliberately does
//! not decide where a reinit may stand (that is `statements`).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, VarId};
use eqm_ir::flat;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `reinit(x, e)` in the body of a when-statement: recorded for the when-clause of the
    /// statement's `reinit`s.
    pub(crate) fn reinit_statement(
        &mut self,
        arguments: &'a [ast::Expr],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) {
        let bad_reinit = |diagnostics: &mut Vec<Diagnostic>| {
            diagnostics.push(Diagnostic::error(
                "E0312",
                "`reinit` needs a scalar variable and a scalar value",
                span,
                "bad reinit",
            ));
        };
        let [x, value] = arguments else {
            bad_reinit(&mut self.diagnostics);
            return;
        };
        let (Some(target), Some(value)) = (self.eval(x, scope, loops), self.eval(value, scope, loops)) else {
            return;
        };
        let var = match (&target, &value) {
            (Value::Scalar(t, _), Value::Scalar(..)) => match self.model.exprs.get(*t) {
                eqm_ir::expr::Node::Var(var) => Some(*var),
                _ => None,
            },
            _ => None,
        };
        let (Some(var), Value::Scalar(value, _)) = (var, value) else {
            bad_reinit(&mut self.diagnostics);
            return;
        };
        cx.reinit_reads.push((value, cx.assignments.len(), span, "reinit"));
        // Inside if-statements of the when-statement, the state is restarted with its value
        // before the event unless the branches around hold: their conditions are read at the event's end
        // like the value, so the section may not assign what they read after them either.
        let value = match cx
            .guards
            .iter()
            .map(|&(g, _)| g)
            .reduce(|a, b| self.model.exprs.binary(BinOp::And, a, b))
        {
            Some(guard) => {
                for &(g, before) in &cx.guards {
                    cx.reinit_reads.push((g, before, span, "reinit"));
                }
                // Otherwise the value an earlier branch's reinit of the state gives, or its
                // value before the event, to which a reinit changes nothing.
                let earlier = cx
                    .reinits
                    .iter()
                    .rposition(|a| matches!(a, flat::WhenAction::Reinit { var: v, .. } if *v == var));
                let unchanged = match earlier.map(|k| cx.reinits.remove(k)) {
                    Some(flat::WhenAction::Reinit { value, .. }) => value,
                    _ => {
                        let own = self.model.exprs.var(var);
                        self.model.exprs.builtin(eqm_ir::builtins::Builtin::Pre, vec![own])
                    }
                };
                self.model.exprs.add(eqm_ir::expr::Node::If(guard, value, unchanged))
            }
            None => value,
        };
        cx.reinits.push(flat::WhenAction::Reinit { var, value, span });
    }

    /// A `reinit` takes effect after the event with the value its expression has when the
    /// section has run, and a `print` shows the values of its message then: an expression
    /// reading a variable the section assigns after the statement would not see the value it
    /// had at the statement, so it is refused.
    pub(crate) fn check_reinit_reads(&mut self, cx: &StatementContext) {
        if cx.reinit_reads.is_empty() {
            return;
        }
        let mut last_assignment: eqm_ir::expr::FxHashMap<VarId, usize> = Default::default();
        for (k, v) in cx.assignments.iter().enumerate() {
            last_assignment.insert(*v, k);
        }
        let mut vars = Vec::new();
        for &(value, before, span, what) in &cx.reinit_reads {
            vars.clear();
            self.model.exprs.vars_in(value, &mut vars);
            if let Some(v) = vars
                .iter()
                .find(|v| last_assignment.get(v).is_some_and(|&k| k >= before))
            {
                let name = self.model.var(*v).name.clone();
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0219",
                        format!("this `{what}` reads `{name}`, which the algorithm section assigns after it"),
                        span,
                        format!("{what} here"),
                    )
                    .with_help(format!(
                        "move the `{what}` after the last assignment of the variables it reads"
                    )),
                );
            }
        }
    }
}
