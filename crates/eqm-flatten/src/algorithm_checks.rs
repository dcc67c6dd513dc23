//! Assertions and `terminate` in a model's algorithm sections, placed where Modelica has them
//! act, and the sections that assign no variable, which only check.
//!
//! Input: an `assert` or `terminate` statement with the context it is written in, and at the end
//! of a section its flat statements. Output: for an assertion of level error or a `terminate` at
//! the top level of a when-statement, an action of the statement's when-clause (it acts once, at
//! the event, with the values the section computes then); for an assertion of level warning at
//! the top level of a section, a model assertion (reported without stopping the run, as
//! equations' assertions are; what it reads is final there, since reading a variable the
//! section assigns after it is refused); else a statement. A section that assigns no model
//! variable is no unknown's equation, so no plan runs it: its assertions, guarded by the
//! conditions of the if-statements around them, become model assertions (an `initial
//! algorithm`'s checked at the start only); a call made for what it does is not run there (no
//! plan has a place for it); anything else it does (a loop over a range known only during the
//! run, a `while` loop, a `terminate` outside a when-statement) is E0317. It deliberately leaves assertions of level warning in
//! functions, in `initial algorithm` sections and inside if-, for- and when-statements as
//! statements, which stop the run when they fail.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, ExprId, UnOp};
use eqm_ir::flat::{self, AssertionLevel, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `assert(condition, message, level)` written as a statement (see the module documentation).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assert_statement(
        &mut self,
        args: &'a ast::CallArgs,
        (condition, message): (&'a ast::Expr, &'a ast::Expr),
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let Some(condition) = self.condition(condition, scope, loops) else {
            return;
        };
        let message = self.message(message, scope, loops);
        let level = match self.statement_assertion_level(args, scope, loops, cx) {
            Some(level) => level,
            None => return,
        };
        let in_model = cx.function.is_none();
        let at_top = cx.if_depth == 0 && cx.loop_depth == 0;
        if in_model && at_top && !cx.in_when && !cx.initial && level == AssertionLevel::Warning {
            cx.reinit_reads.push((condition, cx.assignments.len(), span, "assert"));
            self.model.assertions.push(flat::Assertion {
                condition,
                message,
                level,
                initial: false,
                instance: cx.instance.unwrap_or(flat::InstanceId(0)),
                span,
            });
        } else if in_model && at_top && cx.in_when && level == AssertionLevel::Error {
            cx.reinit_reads.push((condition, cx.assignments.len(), span, "assert"));
            for value in message.exprs() {
                cx.reinit_reads.push((value, cx.assignments.len(), span, "assert"));
            }
            cx.reinits.push(flat::WhenAction::Assert {
                condition,
                message,
                span,
            });
        } else {
            out.push(Statement::Assert {
                condition,
                message,
                span,
            });
        }
    }

    /// The level of an `assert` statement of a model's algorithm (the third argument or
    /// `level = `); in a function the level is not read: its assertions stop the run.
    fn statement_assertion_level(
        &mut self,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
        cx: &StatementContext,
    ) -> Option<AssertionLevel> {
        let given = args
            .positional
            .get(2)
            .or_else(|| args.named.iter().find(|(n, _)| n.name == "level").map(|(_, e)| e));
        match given {
            Some(e) if cx.function.is_none() => self.assertion_level(e, scope, loops),
            _ => Some(AssertionLevel::Error),
        }
    }

    /// `terminate(message)` written as a statement: at the top level of a when-statement of a
    /// model's algorithm an action of the statement's when-clause, elsewhere a statement.
    pub(crate) fn terminate_statement(
        &mut self,
        message: &'a ast::Expr,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let message = self.message(message, scope, loops);
        if cx.function.is_none() && cx.in_when && cx.if_depth == 0 && cx.loop_depth == 0 {
            for value in message.exprs() {
                cx.reinit_reads.push((value, cx.assignments.len(), span, "terminate"));
            }
            cx.reinits.push(flat::WhenAction::Terminate { message, span });
        } else {
            out.push(Statement::Terminate { message, span });
        }
    }

    /// The statements of a model's section that assigns no variable (an initial one with
    /// `initial`), as model assertions; E0317 for a statement that is neither an assertion, a call, nor an if- or unrolled for-statement
    /// of them.
    pub(crate) fn section_checks(&mut self, statements: &[Statement], instance: flat::InstanceId, initial: bool) {
        let mut found = Vec::new();
        if let Err((span, what)) = self.checks_in(statements, None, &mut found) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0317",
                    format!("{what} in an algorithm section that assigns no variable is not supported by EQM"),
                    span,
                    "in a section that assigns nothing",
                )
                .with_help("such a section only checks: write its assertions there, or move the statement into a section that assigns a variable"),
            );
            return;
        }
        for (condition, message, span) in found {
            self.model.assertions.push(flat::Assertion {
                condition,
                message,
                level: AssertionLevel::Error,
                initial,
                instance,
                span,
            });
        }
    }

    /// Collects the assertions of `statements`, each as `not guard or condition` where `guard`
    /// (none: always) is the conjunction of the conditions that lead to it.
    fn checks_in(
        &mut self,
        statements: &[Statement],
        guard: Option<ExprId>,
        found: &mut Vec<(ExprId, flat::Message, Span)>,
    ) -> Result<(), (Span, &'static str)> {
        for statement in statements {
            match statement {
                Statement::Assert {
                    condition,
                    message,
                    span,
                } => {
                    let condition = match guard {
                        None => *condition,
                        Some(g) => {
                            let not_guard = self.model.exprs.unary(UnOp::Not, g);
                            self.model.exprs.binary(BinOp::Or, not_guard, *condition)
                        }
                    };
                    found.push((condition, message.clone(), *span));
                }
                Statement::If {
                    branches, else_branch, ..
                } => {
                    // Each branch runs when its condition holds and none before it did.
                    let mut none_before = guard;
                    for (c, body) in branches {
                        let this = self.both(none_before, *c);
                        self.checks_in(body, Some(this), found)?;
                        let not_c = self.model.exprs.unary(UnOp::Not, *c);
                        none_before = Some(self.both(none_before, not_c));
                    }
                    self.checks_in(else_branch, none_before, found)?;
                }
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        self.checks_in(body, guard, found)?;
                    }
                }
                Statement::Terminate { span, .. } => return Err((*span, "`terminate` outside a when-statement")),
                Statement::Print { span, .. } => return Err((*span, "a print outside a when-statement")),
                // A call of a function that can stop the run (the library's checks of its
                // tables' parameters, `isValidTable(table)` in an initial section) is not run
                // in such a section; see the module documentation.
                Statement::Call { .. } => {}
                Statement::For { span, .. } => return Err((*span, "a loop over a range known only during the run")),
                Statement::While { span, .. } => return Err((*span, "a `while` loop")),
                Statement::Assign { span, .. } => return Err((*span, "an assignment of a hidden variable")),
                Statement::Break { span } | Statement::Return { span } => {
                    return Err((*span, "`break` or `return`"));
                }
            }
        }
        Ok(())
    }

    /// `a and b`, or `b` alone when there is no `a`.
    fn both(&mut self, a: Option<ExprId>, b: ExprId) -> ExprId {
        match a {
            None => b,
            Some(a) => self.model.exprs.binary(BinOp::And, a, b),
        }
    }
}
