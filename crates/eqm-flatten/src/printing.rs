//! Where a function that prints may be called. A function prints when its body runs
//! `Modelica.Utilities.Streams.print` or calls (in a statement or inside an expression) a function
//! that prints; Modelica treats such a function as impure and lets it be called only in
//! when-equations, when-statements, initial sections, bindings of parameters and other impure
//! functions, and never in a system of equations, because a solver evaluates those an unknown
//! number of times.
//!
//! Input: the flat model's functions and everything of the model that evaluates expressions
//! (equations, algorithm sections, the actions of when-clauses, assertions, bindings). Output:
//! which functions print, and an E0312 for each call of one that a solver would repeat. EQM runs
//! such a call as an action of a when-clause (`WhenAction::Call`), once per event; the flattener
//! makes those actions from call statements, so a call of a printing function that is still an
//! expression of the model is one of the calls refused here. It deliberately does not run
//! initial sections' or parameter bindings' calls of printing functions, which the
//! specification allows: they are refused too, and the documentation says so.

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprArena, ExprId, FuncId, FxHashSet, Node};
use eqm_ir::flat::{Function, Statement};

/// The functions a function's body calls, and whether it prints itself.
fn calls_of(function: &Function, arena: &ExprArena) -> (bool, Vec<FuncId>) {
    let mut prints = false;
    let mut callees = Vec::new();
    let mut seen: FxHashSet<ExprId> = FxHashSet::default();
    let mut stack: Vec<&Statement> = function.body.iter().collect();
    while let Some(statement) = stack.pop() {
        match statement {
            Statement::Print { .. } => prints = true,
            Statement::Call { function, .. } => callees.push(*function),
            _ => {}
        }
        stack.extend(statement.nested());
        // Only the statement's own expressions: the nested statements are on the stack.
        let own = match statement {
            Statement::If { branches, .. } => branches.iter().map(|(c, _)| *c).collect(),
            Statement::For { start, step, stop, .. } => vec![*start, *step, *stop],
            Statement::While { condition, .. } => vec![*condition],
            Statement::Unrolled { .. } => Vec::new(),
            other => {
                let mut own = Vec::new();
                other.for_each_expr(&mut |e, _| own.push(e));
                own
            }
        };
        user_calls(arena, own, &mut seen, &mut callees);
    }
    (prints, callees)
}

/// Pushes onto `callees` the user functions called anywhere in the expressions `roots`, each
/// node visited once (`seen`).
fn user_calls(arena: &ExprArena, roots: Vec<ExprId>, seen: &mut FxHashSet<ExprId>, callees: &mut Vec<FuncId>) {
    let mut stack = roots;
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let Node::Call(Callee::User(f), _) = arena.get(e) {
            callees.push(*f);
        }
        stack.extend(arena.children(e));
    }
}

impl Flattener<'_, '_> {
    /// Whether function `id` prints: a walk of the functions it calls, each once.
    pub(crate) fn function_prints(&self, id: FuncId) -> bool {
        let mut seen: FxHashSet<FuncId> = FxHashSet::default();
        let mut stack = vec![id];
        while let Some(f) = stack.pop() {
            if !seen.insert(f) {
                continue;
            }
            let Some(function) = self.model.functions.get(f.0 as usize) else {
                continue;
            };
            let (prints, callees) = calls_of(function, &self.model.exprs);
            if prints {
                return true;
            }
            stack.extend(callees);
        }
        false
    }

    /// Which functions print, by `FuncId`: the ones that print themselves, then their callers,
    /// through the reversed call graph, so every body is read once.
    fn printing_functions(&self) -> Vec<bool> {
        let n = self.model.functions.len();
        let mut callers: Vec<Vec<FuncId>> = vec![Vec::new(); n];
        let mut printing = vec![false; n];
        let mut queue = Vec::new();
        for (k, function) in self.model.functions.iter().enumerate() {
            let (prints, callees) = calls_of(function, &self.model.exprs);
            for c in callees {
                if let Some(list) = callers.get_mut(c.0 as usize) {
                    list.push(FuncId(k as u32));
                }
            }
            if prints {
                printing[k] = true;
                queue.push(k);
            }
        }
        while let Some(k) = queue.pop() {
            for caller in std::mem::take(&mut callers[k]) {
                let c = caller.0 as usize;
                if !printing[c] {
                    printing[c] = true;
                    queue.push(c);
                }
            }
        }
        printing
    }

    /// Refuses (E0312) every call of a function that prints that is still an expression of the
    /// model: in an equation, an algorithm section, an assertion, a binding or a when-clause's
    /// assignment, where the solvers evaluate it as often as they need.
    pub(crate) fn check_printing_calls(&mut self) {
        let printing = self.printing_functions();
        if !printing.contains(&true) {
            return;
        }
        let mut roots: Vec<(ExprId, Span)> = Vec::new();
        let model = &self.model;
        for eq in model
            .equations
            .iter()
            .chain(&model.initial_equations)
            .chain(&model.invariants)
        {
            roots.push((eq.lhs, eq.span));
            roots.push((eq.rhs, eq.span));
        }
        for a in &model.algorithms {
            for s in &a.statements {
                s.for_each_expr(&mut |e, span| roots.push((e, span)));
            }
        }
        for a in &model.assertions {
            roots.extend(
                std::iter::once(a.condition)
                    .chain(a.message.exprs())
                    .map(|e| (e, a.span)),
            );
        }
        for w in &model.whens {
            for action in w.branches.iter().flat_map(|b| &b.actions) {
                // A call action is the one place where such a call runs once per event; its
                // arguments are expressions like any other.
                let exprs: Vec<ExprId> = match (action, action.expr().map(|e| model.exprs.get(e))) {
                    (eqm_ir::flat::WhenAction::Call { .. }, Some(Node::Call(_, args))) => {
                        args.iter().copied().chain(action.guard()).collect()
                    }
                    _ => action.exprs().collect(),
                };
                roots.extend(exprs.into_iter().map(|e| (e, action.span())));
            }
        }
        for v in &model.variables {
            roots.extend(v.binding.map(|e| (e, v.span)));
        }
        let mut seen: FxHashSet<ExprId> = FxHashSet::default();
        let mut reported: FxHashSet<FuncId> = FxHashSet::default();
        for (root, span) in roots {
            let mut callees = Vec::new();
            user_calls(&model.exprs, vec![root], &mut seen, &mut callees);
            for f in callees
                .into_iter()
                .filter(|f| printing.get(f.0 as usize) == Some(&true))
            {
                if reported.insert(f) {
                    let name = model.functions[f.0 as usize].name.clone();
                    self.diagnostics.push(printing_call_refused(&name, span));
                }
            }
        }
    }
}

/// The E0312 of a call of printing function `name` where a solver would repeat it.
fn printing_call_refused(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0312",
        format!("`{name}` prints (it calls `Modelica.Utilities.Streams.print`), so it is impure and may only be called as a statement in a when-clause or when-statement"),
        span,
        "called where the solver evaluates it",
    )
    .with_help("call it as a statement (`f(...);`) in the body of a when-statement or when-clause, where it runs once per event; an impure call in an equation would run at every evaluation of the solver")
}
