//! The effects a when-statement of a model's algorithm has at its event beyond its
//! assignments: `Modelica.Utilities.Streams.print` and the call statements of functions that
//! print, also inside if-statements of its body.
//!
//! Input: a print's message or a call, with the context of the statements around it. Output: a
//! `WhenAction::Print` or `WhenAction::Call` of the statement's when-clause, with the guard the
//! if-statements around it make (`c1 and not c2 ...`), which runs once when the branch fires; in
//! a function, a `Statement::Print`, which prints each time the function runs (the flattener
//! lets a function that prints be called only from such an action, `printing`). It deliberately
//! refuses them inside a for- or while-statement of a when-statement, where one event would
//! print once per iteration with the values of the section's end, and outside when-statements,
//! where a solver would repeat them.

use crate::flattener::Flattener;
use crate::statements::StatementContext;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, Callee, ExprId, Node};
use eqm_ir::flat::{self, Statement};

impl<'t, 'a> Flattener<'t, 'a> {
    /// The guard of an action at this point of a when-statement: the conjunction of the
    /// if-statements' guards around it, each also recorded to be checked against later
    /// assignments (`what` names the action in that error).
    fn when_guard(&mut self, span: Span, what: &'static str, cx: &mut StatementContext) -> Option<ExprId> {
        for &(g, before) in &cx.guards {
            cx.reinit_reads.push((g, before, span, what));
        }
        cx.guards
            .iter()
            .map(|(g, _)| *g)
            .reduce(|a, b| self.model.exprs.binary(BinOp::And, a, b))
    }

    /// `Streams.print(message)`: in a function, a statement that prints each time it runs; in a
    /// when-statement of a model's algorithm (not inside a loop), an action of its when-clause,
    /// which prints once at the event with the values the section computes then. Anywhere else
    /// it would print at every evaluation, as often as the solver evaluates, so it is refused.
    pub(crate) fn print_statement(
        &mut self,
        name: &str,
        message: flat::Message,
        span: Span,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        if cx.function.is_some() {
            out.push(Statement::Print { message, span });
            return;
        }
        if !(cx.in_when && cx.loop_depth == 0) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0312",
                    format!("`{name}` is only allowed in a when-statement (outside its loops), a when-clause or a function called there"),
                    span,
                    "not at an event",
                )
                .with_help("it acts at an event, once: write it in the body of a when-statement (`when sample(0, 0.1) then ... end when;`) of a model's algorithm, or in a when-clause"),
            );
            return;
        }
        let guard = self.when_guard(span, "print", cx);
        for value in message.exprs() {
            cx.reinit_reads.push((value, cx.assignments.len(), span, "print"));
        }
        cx.reinits.push(flat::WhenAction::Print { message, guard, span });
    }

    /// A call statement `call` of a model's algorithm whose function prints: in a
    /// when-statement (not inside a loop), an action of its when-clause that runs the call once
    /// at the event, with the values of its arguments the section computes then; anywhere else
    /// it is refused (E0312). Returns whether the call was such a call, so handled here.
    pub(crate) fn printing_call_statement(&mut self, call: ExprId, span: Span, cx: &mut StatementContext) -> bool {
        if cx.function.is_some() {
            return false;
        }
        let Node::Call(Callee::User(id), _) = self.model.exprs.get(call) else {
            return false;
        };
        let id = *id;
        if !self.function_prints(id) {
            return false;
        }
        if !(cx.in_when && cx.loop_depth == 0) {
            let name = self.model.functions[id.0 as usize].name.clone();
            self.diagnostics.push(
                Diagnostic::error(
                    "E0312",
                    format!("`{name}` prints (it calls `Modelica.Utilities.Streams.print`), so it is impure and may only be called in a when-statement (outside its loops) or a when-clause"),
                    span,
                    "not at an event",
                )
                .with_help("call it in the body of a when-statement (`when sample(0, 0.1) then ... end when;`), where it runs once per event"),
            );
            return true;
        }
        let guard = self.when_guard(span, "call", cx);
        cx.reinit_reads.push((call, cx.assignments.len(), span, "call"));
        cx.reinits.push(flat::WhenAction::Call { call, guard, span });
        true
    }

    /// A call equation `call` in a when-clause whose function prints: an action that runs it
    /// once at the event. Returns whether the call was such a call.
    pub(crate) fn printing_call_action(
        &mut self,
        call: ExprId,
        span: Span,
        actions: &mut Vec<flat::WhenAction>,
    ) -> bool {
        let Node::Call(Callee::User(id), _) = self.model.exprs.get(call) else {
            return false;
        };
        if !self.function_prints(*id) {
            return false;
        }
        actions.push(flat::WhenAction::Call {
            call,
            guard: None,
            span,
        });
        true
    }
}
