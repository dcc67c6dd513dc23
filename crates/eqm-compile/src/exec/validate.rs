//! The check that every expression of a program can be executed: it reads only variables that
//! have a slot, `der` only of states, and calls only built-ins with a numeric implementation and
//! user functions with outputs, with the right number of arguments.
//!
//! Input: the builder with every program part built. Output: one `E0602` diagnostic per
//! offending place. It changes nothing in the program.

use super::build::Builder;
use super::*;
use eqm_ir::builtins::{Builtin, Eval};
use eqm_ir::expr::{Callee, Node};

impl Builder {
    /// Checks that every expression of the program can be executed (see the module
    /// documentation for what that means), with one diagnostic per offending place.
    pub(super) fn validate(&mut self) {
        let mut v = Validator {
            arena: &self.dae.flat.exprs,
            slots: &self.slots,
            functions: &self.dae.flat.functions,
            externals: &self.dae.flat.externals,
            checked_model: vec![false; self.dae.flat.exprs.len()],
            checked_function: vec![false; self.dae.flat.exprs.len()],
            stack: Vec::new(),
            problems: Vec::new(),
        };
        self.validate_programs(&mut v);
        self.validate_functions_and_events(&mut v);
        for (span, what, reason) in v.problems {
            self.diagnostics.push(Diagnostic::error(
                "E0602",
                format!("{what} cannot be computed at run time: {reason}"),
                span,
                reason,
            ));
        }
    }

    /// Checks the expressions of the parameter, start-value, output and right-hand-side
    /// programs, the parameter conditions, assertions, invariants and algorithm sections.
    fn validate_programs(&self, v: &mut Validator) {
        let var_text = |var: VarId| self.dae.flat.var(var).name.clone();
        for a in self
            .param_program
            .iter()
            .chain(&self.start_program)
            .chain(&self.outputs)
        {
            v.require(a.value, false, self.dae.flat.var(a.var).span, &|| {
                format!("the value of `{}`", var_text(a.var))
            });
        }
        let eq_text = |eq: usize| format!("equation `{}`", self.dae.equation_text(&self.dae.equations[eq]));
        for c in &self.conditions {
            let span = self.dae.equations[c.eq].span;
            v.require(c.condition.expr(), false, span, &|| eq_text(c.eq));
        }
        for instr in &self.rhs {
            match instr {
                Instr::Assign { value, eq, .. } => {
                    v.require(*value, false, self.dae.equations[*eq].span, &|| eq_text(*eq))
                }
                Instr::Newton1 {
                    residual,
                    derivative,
                    eq,
                    ..
                } => {
                    let span = self.dae.equations[*eq].span;
                    v.require(*residual, false, span, &|| eq_text(*eq));
                    if let Some(d) = derivative {
                        v.require(*d, false, span, &|| eq_text(*eq));
                    }
                }
                Instr::Loop(b) => {
                    for a in &b.inner {
                        v.require(a.value, false, self.dae.equations[a.eq].span, &|| eq_text(a.eq));
                    }
                    for &(r, eq) in &b.residuals {
                        v.require(r, false, self.dae.equations[eq].span, &|| eq_text(eq));
                    }
                    let partials = b
                        .jacobian
                        .iter()
                        .flat_map(|j| j.inner.iter().chain(&j.residuals))
                        .flatten();
                    for &(_, d) in partials {
                        v.require(d, false, self.dae.equations[b.eqs[0]].span, &|| eq_text(b.eqs[0]));
                    }
                    for &(_, e) in &b.nominal_exprs {
                        v.require(e, false, self.dae.equations[b.eqs[0]].span, &|| eq_text(b.eqs[0]));
                    }
                }
                Instr::Algorithm { .. } => {}
            }
        }
        // The assertions' conditions and the values their messages show, evaluated when
        // they are checked and when one fails.
        for a in &self.assertions {
            for e in std::iter::once(a.condition).chain(a.message.exprs()) {
                v.require(e, false, a.span, &|| "this assertion".to_string());
            }
        }
        for g in &self.invariants {
            v.require(g.residual, false, g.span, &|| format!("invariant `{}`", g.text));
        }
        for a in &self.algorithms {
            for r in &a.resets {
                v.require(r.value, false, self.dae.flat.var(r.var).span, &|| {
                    format!("the start value of `{}`", var_text(r.var))
                });
            }
            for s in &a.statements {
                s.for_each_expr(&mut |e, span| v.require(e, false, span, &|| "this statement".to_string()));
            }
        }
    }

    /// Checks the statements of the user functions and the expressions of the event program.
    fn validate_functions_and_events(&self, v: &mut Validator) {
        for f in &self.dae.flat.functions {
            for s in &f.body {
                s.for_each_expr(&mut |e, span| {
                    v.require(e, true, span, &|| format!("this statement of function `{}`", f.name))
                });
            }
        }
        for e in self.events.previous.iter().map(|p| p.expr) {
            v.require(e, false, self.model_span(), &|| {
                "the argument of edge or change".to_string()
            });
        }
        for d in &self.events.delays {
            for e in [d.expr, d.delay].into_iter().chain(d.max) {
                v.require(e, false, d.span, &|| "this delay".to_string());
            }
        }
        for s in &self.events.spatials {
            for e in [s.in0, s.in1, s.x, s.positive] {
                v.require(e, false, s.span, &|| "this spatialDistribution".to_string());
            }
        }
        for sample in &self.events.samples {
            for e in [sample.start, sample.interval] {
                v.require(e, false, sample.span, &|| "this sample".to_string());
            }
        }
        for surface in &self.events.surfaces {
            if let Some(t) = surface.time_event {
                v.require(t, false, surface.span, &|| format!("the time of `{}`", surface.text));
            }
            v.require(surface.expr, false, surface.span, &|| {
                format!("the zero-crossing function of `{}`", surface.text)
            });
        }
        for w in &self.events.whens {
            for (condition, actions) in &w.branches {
                v.require(*condition, false, w.span, &|| "this when-condition".to_string());
                for action in actions {
                    match action {
                        flat::WhenAction::Assign { value, span, .. } | flat::WhenAction::Reinit { value, span, .. } => {
                            v.require(*value, false, *span, &|| "this when-equation".to_string())
                        }
                        flat::WhenAction::Assert { span, .. } | flat::WhenAction::Terminate { span, .. } => {
                            for e in action.exprs() {
                                v.require(e, false, *span, &|| "this assertion".to_string());
                            }
                        }
                        flat::WhenAction::Print { span, .. } | flat::WhenAction::Call { span, .. } => {
                            for e in action.exprs() {
                                v.require(e, false, *span, &|| "this print".to_string());
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Checks expressions against the program's contract, each node once per context.
struct Validator<'a> {
    arena: &'a ExprArena,
    slots: &'a [Option<Slot>],
    functions: &'a [flat::Function],
    externals: &'a [eqm_ir::external::ExternalFunction],
    checked_model: Vec<bool>,
    checked_function: Vec<bool>,
    stack: Vec<ExprId>,
    /// The places found so far: span, what is there, and why it cannot be computed.
    problems: Vec<(Span, String, &'static str)>,
}

impl Validator<'_> {
    /// Checks `e`; when it cannot be computed, records `what()` at `span` with the reason.
    fn require(&mut self, e: ExprId, in_function: bool, span: Span, what: &dyn Fn() -> String) {
        if let Err(reason) = self.check(e, in_function) {
            self.problems.push((span, what(), reason));
        }
    }

    fn check(&mut self, root: ExprId, in_function: bool) -> Result<(), &'static str> {
        self.stack.clear();
        self.stack.push(root);
        while let Some(e) = self.stack.pop() {
            let checked = if in_function {
                &mut self.checked_function
            } else {
                &mut self.checked_model
            };
            match checked.get_mut(e.0 as usize) {
                Some(true) => continue,
                Some(c) => *c = true,
                None => return Err("an expression the compiler did not build"),
            }
            let slot = |v: &VarId| self.slots.get(v.0 as usize).copied().flatten();
            match self.arena.get(e) {
                Node::Str(_) => return Err("a String has no numeric value"),
                Node::Var(v) if slot(v).is_none() => return Err("a String variable has no numeric value"),
                Node::Local(_) if !in_function => return Err("a function local outside a function"),
                Node::Call(Callee::Builtin(b), args) => {
                    let info = b.info();
                    match (b, info.eval, args.len()) {
                        (Builtin::Der, _, 1) => match self.arena.get(args[0]) {
                            Node::Var(v) if matches!(slot(v), Some(Slot::State(_))) => {}
                            _ => return Err("der(...) of something that is not a state"),
                        },
                        (Builtin::Pre, _, 1) => match self.arena.get(args[0]) {
                            Node::Var(v) if slot(v).is_some() => {}
                            _ => return Err("pre(...) of something that is not a variable"),
                        },
                        (Builtin::NoEvent | Builtin::Smooth, _, _) => {
                            self.stack.extend(args.last().copied());
                        }
                        (
                            Builtin::Edge | Builtin::Change | Builtin::Initial | Builtin::Terminal | Builtin::Sample,
                            ..,
                        ) => {}
                        (_, Eval::Unary(_), 1) | (_, Eval::Binary(_), 2) => self.stack.extend(args.iter().copied()),
                        _ => return Err("this built-in cannot be evaluated numerically"),
                    }
                }
                Node::Call(Callee::User(f), args) => {
                    let Some(function) = self.functions.get(f.0 as usize) else {
                        return Err("a call of an unknown function");
                    };
                    if function.outputs == 0 {
                        return Err("a function without outputs has no value");
                    }
                    if args.len() != function.inputs as usize {
                        return Err("a call with the wrong number of arguments");
                    }
                    self.stack.extend(args.iter().copied());
                }
                Node::Call(Callee::External(k), args) => {
                    let Some(external) = self.externals.get(*k as usize) else {
                        return Err("a call of an unknown external function");
                    };
                    if args.len() != external.symbol.arity() {
                        return Err("a call with the wrong number of arguments");
                    }
                    self.stack.extend(args.iter().copied());
                }
                Node::CallOutput(call, k) => match self.arena.get(*call) {
                    Node::Call(Callee::User(f), _)
                        if self.functions.get(f.0 as usize).is_some_and(|func| *k < func.outputs) =>
                    {
                        self.stack.push(*call);
                    }
                    _ => return Err("an output that the called function does not have"),
                },
                _ => self.stack.extend(self.arena.children(e)),
            }
        }
        Ok(())
    }
}
