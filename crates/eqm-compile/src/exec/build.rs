//! Building an executable program: the slot layout, the parameter, start-value, right-hand-side
//! and outputs programs, the algorithm sections, the invariants and the state-choice check.
//!
//! Input: the DAE (consumed) and its plan. Output: the parts of an [`ExecProgram`] and
//! diagnostics (`E06xx`) for whatever cannot be executed. The event program and the
//! validation of every expression are built in `events` and `validate`, on the same builder.
//! Nothing here evaluates an expression numerically except constant literals.

use super::*;
use crate::dae::VarKind;
use crate::plan::{Block, TornLoop, Unknown};
use eqm_ir::builtins::{Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, FxHashMap, Node};
use eqm_ir::flat::ScalarType;
use eqm_ir::symbolic::{FunctionCalls, diff_var, diff_var_through};

/// Parameters and constants: variables whose values do not change during a simulation.
fn is_parameter_kind(kind: VarKind) -> bool {
    matches!(kind, VarKind::Parameter | VarKind::Constant)
}

pub(super) struct Builder {
    pub(super) dae: Dae<Hybrid>,
    pub(super) slots: Vec<Option<Slot>>,
    pub(super) states: Vec<VarId>,
    pub(super) params: Vec<VarId>,
    p0: Vec<f64>,
    pub(super) work_vars: Vec<VarId>,
    /// The defining expression of each dependent parameter or constant.
    pub(super) dependent: Vec<(VarId, ExprId)>,
    pub(super) param_program: Vec<VarAssign>,
    pub(super) start_program: Vec<VarAssign>,
    pub(super) rhs: Vec<Instr>,
    pub(super) outputs: Vec<VarAssign>,
    pub(super) algorithms: Vec<ExecAlgorithm>,
    pub(super) algorithm_of_section: Vec<Option<usize>>,
    pub(super) conditions: Vec<ParamCondition>,
    pub(super) events: ExecEvents,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// Removed variables' nodes and their values, built when the first algorithm needs them.
    pub(super) replace: Option<FxHashMap<ExprId, ExprId>>,
    pub(super) invariants: Vec<ExecInvariant>,
    pub(super) assertions: Vec<ExecAssertion>,
    pub(super) state_choice: Option<ExecStateChoice>,
}

impl Builder {
    pub(super) fn new(dae: Dae<Hybrid>) -> Builder {
        let n = dae.flat.variables.len();
        let sections = dae.flat.algorithms.len();
        Builder {
            dae,
            slots: vec![None; n],
            states: Vec::new(),
            params: Vec::new(),
            p0: Vec::new(),
            work_vars: Vec::new(),
            dependent: Vec::new(),
            param_program: Vec::new(),
            start_program: Vec::new(),
            rhs: Vec::new(),
            outputs: Vec::new(),
            algorithms: Vec::new(),
            algorithm_of_section: vec![None; sections],
            conditions: Vec::new(),
            events: ExecEvents::default(),
            diagnostics: Vec::new(),
            replace: None,
            invariants: Vec::new(),
            assertions: Vec::new(),
            state_choice: None,
        }
    }

    pub(super) fn kind(&self, v: VarId) -> VarKind {
        self.dae.kinds.get(v.0 as usize).copied().unwrap_or(VarKind::Algebraic)
    }

    pub(super) fn eliminated(&self, v: VarId) -> Option<ExprId> {
        self.dae.eliminated.get(v.0 as usize).copied().flatten()
    }

    /// Assigns every variable its slot, in variable order within each array.
    pub(super) fn layout(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let v = VarId(i as u32);
            let var = &self.dae.flat.variables[i];
            if var.ty == ScalarType::String {
                continue;
            }
            let kind = self.kind(v);
            let slot = if self.eliminated(v).is_some() {
                self.work(v)
            } else if kind == VarKind::State {
                self.states.push(v);
                Slot::State(self.states.len() as u32 - 1)
            } else if kind == VarKind::Parameter {
                // A parameter is independent when its value is a number known now: a literal
                // binding, or the start value of a parameter without a binding (0 without one).
                let definition = var.binding.or(var.attributes.start);
                match definition.map(|e| (e, constant_value(&self.dae.flat.exprs, e))) {
                    Some((e, None)) => {
                        self.dependent.push((v, e));
                        self.work(v)
                    }
                    known => {
                        self.params.push(v);
                        self.p0.push(known.and_then(|(_, value)| value).unwrap_or(0.0));
                        Slot::Param(self.params.len() as u32 - 1)
                    }
                }
            } else if kind == VarKind::Constant {
                let zero = self.dae.flat.exprs.real(0.0);
                let e = var.binding.or(var.attributes.start).unwrap_or(zero);
                self.dependent.push((v, e));
                self.work(v)
            } else {
                self.work(v)
            };
            self.slots[i] = Some(slot);
        }
    }

    fn work(&mut self, v: VarId) -> Slot {
        self.work_vars.push(v);
        Slot::Work(self.work_vars.len() as u32 - 1)
    }

    pub(super) fn slot(&self, v: VarId) -> Option<Slot> {
        self.slots.get(v.0 as usize).copied().flatten()
    }

    /// The dependent parameters and constants in dependency order (ties in variable order); a
    /// cycle is a diagnostic naming its members.
    pub(super) fn parameter_program(&mut self) {
        let n = self.dependent.len();
        let mut index_of: FxHashMap<VarId, usize> = FxHashMap::default();
        for (k, (v, _)) in self.dependent.iter().enumerate() {
            index_of.insert(*v, k);
        }
        let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut vars = Vec::new();
        let dependent = std::mem::take(&mut self.dependent);
        for (k, &(v, e)) in dependent.iter().enumerate() {
            vars.clear();
            self.dae.flat.exprs.vars_in(e, &mut vars);
            before[k].extend(vars.iter().filter_map(|u| index_of.get(u).copied()));
            if !self.is_parameter_expression(e) {
                let var = self.dae.flat.var(v);
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0603",
                        format!(
                            "the value of `{}` depends on a variable that changes during the simulation",
                            var.name
                        ),
                        var.span,
                        format!("`{} = {}`", var.name, self.dae.flat.expr_text(e)),
                    )
                    .with_help("a parameter's value may only use parameters, constants and literals"),
                );
            }
        }
        self.dependent = dependent;
        let (order, left) = eqm_structural::order::dependency_order(&before);
        // A parameter computed from one the initialization solves for (`fixed = false`) is
        // solved there too, with it: computed now, from the other's start value, it could fail
        // for a value it never has (`b = 2/a` with `a` starting at 0).
        let mut solved_later = vec![false; self.dae.kinds.len()];
        for v in crate::init::initialization_parameters(&self.dae) {
            solved_later[v.0 as usize] = true;
        }
        for k in order {
            let (var, value) = self.dependent[k];
            if solved_later[var.0 as usize] {
                continue;
            }
            if let Some(target) = self.slot(var) {
                self.param_program.push(VarAssign { var, target, value });
            }
        }
        let cyclic: Vec<VarId> = left.into_iter().map(|k| self.dependent[k].0).collect();
        if let Some(&first) = cyclic.first() {
            let names: Vec<String> = cyclic
                .iter()
                .take(8)
                .map(|v| format!("`{}`", self.dae.flat.var(*v).name))
                .collect();
            let var = self.dae.flat.var(first);
            let mut d = Diagnostic::error(
                "E0601",
                format!(
                    "the values of these parameters depend on each other in a cycle: {}{}",
                    names.join(", "),
                    if cyclic.len() > 8 { " and more" } else { "" }
                ),
                var.span,
                format!("`{}` is part of the cycle", var.name),
            );
            for v in cyclic.iter().skip(1).take(7) {
                let var = self.dae.flat.var(*v);
                d = d.with_label(var.span, format!("`{}` is part of the cycle", var.name));
            }
            self.diagnostics
                .push(d.with_help("give one of them a value that does not depend on the others"));
        }
    }

    /// Whether `e` depends only on parameters, constants, literals and pure function calls.
    pub(super) fn is_parameter_expression(&self, e: ExprId) -> bool {
        self.reads_only(e, |v| is_parameter_kind(self.kind(v)))
    }

    /// Whether a start value `e` reads only what is known before the initialization solves
    /// anything: [`Self::is_parameter_expression`], where a parameter the initialization solves
    /// for (`fixed = false`, an unknown of the initialization's program) counts as one too, as
    /// its start value is known then.
    fn is_start_expression(&self, e: ExprId) -> bool {
        self.reads_only(e, |v| {
            is_parameter_kind(self.kind(v))
                || matches!(
                    self.dae.flat.var(v).variability,
                    eqm_ir::flat::Variability::Parameter | eqm_ir::flat::Variability::Constant
                )
        })
    }

    /// Whether `e` reads no variable but those `known` accepts, no `time` and no event operator.
    fn reads_only(&self, e: ExprId, known: impl Fn(VarId) -> bool) -> bool {
        let arena = &self.dae.flat.exprs;
        let mut stack = vec![e];
        let mut seen = eqm_ir::symbolic::FxHashSet::default();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            match arena.get(id) {
                Node::Var(v) if !known(*v) => return false,
                Node::Time | Node::Local(_) => return false,
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => {
                    if !matches!(b, Builtin::NoEvent | Builtin::Smooth) {
                        return false;
                    }
                    stack.extend(arena.children(id));
                }
                _ => stack.extend(arena.children(id)),
            }
        }
        true
    }

    /// Start values: states into `x`, algebraic and discrete variables into `work`; 0 where a
    /// variable has no start value (Modelica's default).
    pub(super) fn start_program(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let var = VarId(i as u32);
            let Some(target) = self.slot(var) else { continue };
            if self.eliminated(var).is_some() || is_parameter_kind(self.kind(var)) {
                continue;
            }
            let value = match self.dae.flat.variables[i].attributes.start {
                Some(e) => e,
                None => self.dae.flat.exprs.real(0.0),
            };
            if !self.is_start_expression(value) {
                let v = self.dae.flat.var(var);
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0603",
                        format!(
                            "the start value of `{}` depends on a variable that changes during the simulation",
                            v.name
                        ),
                        v.span,
                        format!("start = {}", self.dae.flat.expr_text(value)),
                    )
                    .with_help(
                        "a start value may use parameters and other variables' start values, not `time`, \
                         `pre`, `der` or other event operators",
                    ),
                );
                continue;
            }
            self.start_program.push(VarAssign { var, target, value });
        }
    }

    /// The slot of an unknown of the plan.
    fn unknown_slot(&self, u: Unknown) -> Option<Slot> {
        match u {
            Unknown::Var(v) => self.slot(v),
            Unknown::Der(v) => match self.slot(v) {
                Some(Slot::State(i)) => Some(Slot::Der(i)),
                _ => None,
            },
        }
    }

    /// The magnitude of unknown `u` for the loop solver's scaling: the variable's `nominal`
    /// attribute when it is a literal nonzero finite number (its absolute value), else 1; and,
    /// when the attribute is an expression of parameters, that expression, which the back ends
    /// evaluate once the parameters are bound (parameters may change between runs without a
    /// new compilation). A derivative has no nominal of its own.
    fn nominal(&self, u: Unknown) -> (f64, Option<ExprId>) {
        let Unknown::Var(v) = u else { return (1.0, None) };
        let Some(attribute) = self
            .dae
            .flat
            .variables
            .get(v.0 as usize)
            .and_then(|var| var.attributes.nominal)
        else {
            return (1.0, None);
        };
        match self.dae.flat.exprs.literal(attribute) {
            Some(value) if value.is_finite() && value != 0.0 => (value.abs(), None),
            Some(_) => (1.0, None),
            None if self.is_bound_parameter_expression(attribute) => (1.0, Some(attribute)),
            None => (1.0, None),
        }
    }

    /// Whether `e` is an expression of parameters and constants that all have a place at run
    /// time, so that it can be evaluated after the parameter program.
    fn is_bound_parameter_expression(&self, e: ExprId) -> bool {
        if !self.dae.is_parameter_expression(e) {
            return false;
        }
        let mut vars = Vec::new();
        self.dae.flat.exprs.vars_in(e, &mut vars);
        vars.iter().all(|&v| self.slot(v).is_some())
    }

    fn plan_slot(&mut self, plan: &Plan, unknown: usize, eq: usize) -> Option<Slot> {
        let slot = plan.unknowns.get(unknown).and_then(|&u| self.unknown_slot(u));
        if slot.is_none() {
            let span = self.equation_span(eq);
            self.diagnostics
                .push(internal(span, "the plan names an unknown without a place at run time"));
        }
        slot
    }

    fn equation_span(&self, eq: usize) -> Span {
        self.dae.equations.get(eq).map_or_else(|| self.model_span(), |e| e.span)
    }

    fn residual(&mut self, eq: usize) -> Option<ExprId> {
        let e = self.dae.equations.get(eq)?;
        let (lhs, rhs) = (e.lhs, e.rhs);
        Some(self.dae.flat.exprs.binary(BinOp::Sub, lhs, rhs))
    }

    pub(super) fn rhs(&mut self, plan: &Plan) {
        for block in &plan.blocks {
            match block {
                Block::Explicit { eq, unknown, value } => {
                    if let Some(target) = self.plan_slot(plan, *unknown, *eq) {
                        self.rhs.push(Instr::Assign {
                            target,
                            value: *value,
                            eq: *eq,
                        });
                    }
                }
                Block::Implicit { eq, unknown } => {
                    let (Some(target), Some(residual)) = (self.plan_slot(plan, *unknown, *eq), self.residual(*eq))
                    else {
                        continue;
                    };
                    let leaf = plan.leaves[*unknown];
                    let derivative = diff_var(&mut self.dae.flat.exprs, residual, leaf).ok();
                    self.rhs.push(Instr::Newton1 {
                        target,
                        residual,
                        derivative,
                        eq: *eq,
                    });
                }
                Block::Algorithm { algorithm, .. } => {
                    // One block per output of the section: it runs once, at its first block,
                    // where everything it reads is already computed.
                    if self.algorithm_of_section.get(*algorithm).copied().flatten().is_none() {
                        self.algorithm(*algorithm);
                    }
                }
                Block::Loop(l) => {
                    if let Some(block) = self.loop_block(plan, l) {
                        self.rhs.push(Instr::Loop(Box::new(block)));
                    }
                }
            }
        }
    }

    fn loop_block(&mut self, plan: &Plan, l: &TornLoop) -> Option<LoopBlock> {
        let TornLoop {
            eqs,
            unknowns,
            tearing,
            residuals,
            inner,
            linear,
        } = l;
        let linear = *linear;
        let first = eqs.first().copied().unwrap_or(0);
        let mut slots = Vec::with_capacity(unknowns.len());
        for &u in unknowns {
            slots.push(self.plan_slot(plan, u, first)?);
        }
        let mut tearing_slots = Vec::with_capacity(tearing.len());
        let mut leaf_var: FxHashMap<ExprId, LoopVar> = FxHashMap::default();
        let mut nominal = Vec::with_capacity(tearing.len());
        let mut nominal_exprs = Vec::new();
        for (j, &u) in tearing.iter().enumerate() {
            tearing_slots.push(self.plan_slot(plan, u, first)?);
            let (value, expr) = self.nominal(plan.unknowns[u]);
            nominal.push(value);
            if let Some(e) = expr {
                nominal_exprs.push((j, e));
            }
            leaf_var.insert(plan.leaves[u], LoopVar::Tearing(j as u32));
        }
        let mut assigns = Vec::with_capacity(inner.len());
        for (k, &(eq, u, value)) in inner.iter().enumerate() {
            assigns.push(LoopAssign {
                target: self.plan_slot(plan, u, eq)?,
                value,
                eq,
            });
            leaf_var.insert(plan.leaves[u], LoopVar::Inner(k as u32));
        }
        let mut residual_exprs = Vec::with_capacity(residuals.len());
        for &eq in residuals {
            residual_exprs.push((self.residual(eq)?, eq));
        }
        // The equations as written, for a loop whose torn form can leave its domain where the
        // start values of every unknown do not: an inner unknown computed from a tearing
        // unknown's start value may lie outside the domain of a function of it that its own
        // start value is inside of.
        let mut untorn = None;
        let exprs = &self.dae.flat.exprs;
        let risky = assigns
            .iter()
            .map(|a| a.value)
            .chain(residual_exprs.iter().map(|r| r.0));
        if !linear && !assigns.is_empty() && risky.into_iter().any(|e| may_leave_domain(exprs, e)) {
            let mut list = Vec::with_capacity(assigns.len());
            for a in &assigns {
                list.push(self.residual(a.eq)?);
            }
            untorn = Some(list);
        }
        // Partial derivatives with respect to the loop unknowns that occur, in the order of the
        // unknowns, from one reverse-mode pass over each expression (a row of a dense loop of k
        // unknowns costs k, not k²); one that cannot be built (a user function of an unknown)
        // leaves the Jacobian to difference quotients.
        let mut simplifier = eqm_ir::symbolic::Simplifier::new();
        let mut partials = |exprs: &mut ExprArena, root: ExprId, before: u32| -> Option<Vec<(LoopVar, ExprId)>> {
            if loop_vars_in(exprs, root, &leaf_var)
                .iter()
                .any(|lv| matches!(lv, LoopVar::Inner(l) if *l >= before))
            {
                return None;
            }
            let wanted = |_: &ExprArena, e: ExprId| leaf_var.contains_key(&e);
            let gradient = eqm_ir::symbolic::gradient(exprs, &mut simplifier, root, &wanted).ok()?;
            let mut out: Vec<(LoopVar, ExprId)> = gradient
                .into_iter()
                .filter(|&(_, d)| exprs.literal(d) != Some(0.0))
                .map(|(leaf, d)| (leaf_var[&leaf], d))
                .collect();
            out.sort_unstable_by_key(|&(lv, _)| lv);
            Some(out)
        };
        let exprs = &mut self.dae.flat.exprs;
        let jacobian = (|| {
            let mut jac = LoopJacobian {
                inner: Vec::with_capacity(assigns.len()),
                residuals: Vec::with_capacity(residual_exprs.len()),
            };
            for (k, a) in assigns.iter().enumerate() {
                jac.inner.push(partials(exprs, a.value, k as u32)?);
            }
            for &(r, _) in &residual_exprs {
                jac.residuals.push(partials(exprs, r, u32::MAX)?);
            }
            Some(jac)
        })();
        Some(LoopBlock {
            eqs: eqs.to_vec(),
            unknowns: slots,
            tearing: tearing_slots,
            nominal,
            nominal_exprs,
            inner: assigns,
            residuals: residual_exprs,
            linear,
            jacobian,
            untorn,
        })
    }

    /// The map from each variable alias elimination removed to its value, built once.
    fn ensure_replace(&mut self) {
        if self.replace.is_none() {
            let mut replace = FxHashMap::default();
            for i in 0..self.dae.eliminated.len() {
                if let Some(value) = self.dae.eliminated[i] {
                    replace.insert(self.dae.flat.exprs.var(VarId(i as u32)), value);
                }
            }
            self.replace = Some(replace);
        }
    }

    /// Adds flat algorithm section `section` to the program: its statements with removed
    /// variables replaced by their values, and the resets of its continuous outputs.
    fn algorithm(&mut self, section: usize) {
        let Some(a) = self.dae.flat.algorithms.get(section).cloned() else {
            return;
        };
        self.ensure_replace();
        let replace = self.replace.as_ref().filter(|r| !r.is_empty());
        let statements = match replace {
            None => a.statements.clone(),
            Some(replace) => {
                let exprs = &mut self.dae.flat.exprs;
                let mut replaced = |e| eqm_ir::symbolic::substitute(exprs, e, &|_, id| replace.get(&id).copied());
                a.statements.iter().map(|s| s.map_exprs(&mut replaced)).collect()
            }
        };
        let mut resets = Vec::new();
        let mut outputs = Vec::new();
        for &v in &a.outputs {
            let (name, start) = {
                let var = self.dae.flat.var(v);
                (var.name.clone(), var.attributes.start)
            };
            let slot = match self.slot(v) {
                Some(slot @ Slot::Work(_)) if self.eliminated(v).is_none() && !is_parameter_kind(self.kind(v)) => slot,
                _ => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0604",
                            format!("the algorithm section assigns `{name}`, which the simulation does not compute here"),
                            a.span,
                            format!("assigns `{name}`"),
                        )
                        .with_note(
                            "an algorithm may assign algebraic and discrete variables, not states, parameters or variables the compiler replaced by an alias",
                        ),
                    );
                    continue;
                }
            };
            outputs.push((v, slot));
            // A discrete-time output starts from its value before the event (which holds it
            // between events, however often the section runs), a continuous one from its start
            // value (the section keeps no hidden memory).
            if let Some(&(_, before)) = a.previous.iter().find(|(output, _)| *output == v) {
                let value = self.dae.flat.exprs.var(before);
                resets.push(VarAssign {
                    var: v,
                    target: slot,
                    value,
                });
            } else if self.kind(v) == VarKind::Algebraic {
                let value = match start {
                    Some(e) => e,
                    None => self.dae.flat.exprs.real(0.0),
                };
                resets.push(VarAssign {
                    var: v,
                    target: slot,
                    value,
                });
            }
        }
        self.algorithm_of_section[section] = Some(self.algorithms.len());
        self.rhs.push(Instr::Algorithm {
            index: self.algorithms.len(),
        });
        self.algorithms.push(ExecAlgorithm {
            index: section,
            statements,
            resets,
            outputs,
            span: a.span,
        });
    }

    /// The values of the variables alias elimination removed.
    pub(super) fn outputs(&mut self) {
        for i in 0..self.dae.flat.variables.len() {
            let var = VarId(i as u32);
            if let (Some(value), Some(target)) = (self.eliminated(var), self.slot(var)) {
                self.outputs.push(VarAssign { var, target, value });
            }
        }
    }

    pub(super) fn conditions(&mut self, plan: &Plan) {
        self.conditions = plan
            .parameter_conditions
            .iter()
            .map(|&(condition, eq)| ParamCondition { condition, eq })
            .collect();
    }

    /// The invariants of the flat model as residuals over the program's slots.
    pub(super) fn invariants(&mut self) {
        self.ensure_replace();
        let equations = self.dae.flat.invariants.clone();
        for eq in &equations {
            let residual = self.dae.flat.exprs.binary(BinOp::Sub, eq.lhs, eq.rhs);
            let residual = match self.replace.as_ref().filter(|r| !r.is_empty()) {
                Some(replace) => {
                    eqm_ir::symbolic::substitute(&mut self.dae.flat.exprs, residual, &|_, id| replace.get(&id).copied())
                }
                None => residual,
            };
            let residual = eqm_ir::symbolic::simplify(&mut self.dae.flat.exprs, residual);
            let rate = self.invariant_rate(residual);
            let text = format!(
                "{} = {}",
                self.dae.flat.expr_text(eq.lhs),
                self.dae.flat.expr_text(eq.rhs)
            );
            self.invariants.push(ExecInvariant {
                residual,
                rate,
                span: eq.span,
                text,
            });
        }
    }

    /// The assertions of the flat model's equation sections, over the program's slots.
    pub(super) fn assertions(&mut self) {
        self.ensure_replace();
        let assertions = std::mem::take(&mut self.dae.flat.assertions);
        for a in &assertions {
            let (condition, message) = match self.replace.as_ref().filter(|r| !r.is_empty()) {
                Some(replace) => {
                    let exprs = &mut self.dae.flat.exprs;
                    let mut replaced = |e| eqm_ir::symbolic::substitute(exprs, e, &|_, id| replace.get(&id).copied());
                    (replaced(a.condition), a.message.map_exprs(&mut replaced))
                }
                None => (a.condition, a.message.clone()),
            };
            let (exprs, slots, kinds) = (&self.dae.flat.exprs, &self.slots, &self.dae.kinds);
            let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(exprs.get(n));
            let parametric = eqm_ir::symbolic::reachable(exprs, condition, &stop)
                .into_iter()
                .all(|n| match exprs.get(n) {
                    Node::Var(v) => {
                        matches!(slots.get(v.0 as usize).copied().flatten(), Some(Slot::Param(_)))
                            || matches!(kinds.get(v.0 as usize), Some(VarKind::Parameter | VarKind::Constant))
                    }
                    Node::Time => false,
                    node => !eqm_ir::symbolic::is_symbol_operator(node),
                });
            let component = self
                .dae
                .flat
                .instances
                .get(a.instance.0 as usize)
                .map(|i| i.name.clone())
                .unwrap_or_default();
            self.assertions.push(ExecAssertion {
                condition,
                message,
                component,
                level: a.level,
                initial: a.initial,
                parametric,
                span: a.span,
                text: self.dae.flat.expr_text(a.condition),
            });
        }
        self.dae.flat.assertions = assertions;
    }

    /// The rate `Σ_j ∂g/∂x_j · der(x_j)` of an invariant residual that reads only states and
    /// parameters (see [`ExecInvariant::rate`]); `None` otherwise.
    fn invariant_rate(&mut self, residual: ExprId) -> Option<ExprId> {
        let flat = &mut self.dae.flat;
        let calls = FunctionCalls::new(&flat.functions, &flat.function_derivatives, &flat.externals);
        let (exprs, slots, kinds) = (&mut flat.exprs, &self.slots, &self.dae.kinds);
        let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(exprs.get(n));
        let mut states = Vec::new();
        for n in eqm_ir::symbolic::reachable(exprs, residual, &stop) {
            match exprs.get(n) {
                Node::Var(v) => match slots.get(v.0 as usize).copied().flatten() {
                    Some(Slot::State(_)) => states.push((n, *v)),
                    Some(Slot::Param(_)) => {}
                    // Discrete variables (the frozen relations among them) are constant between
                    // events, where the rate is used.
                    Some(Slot::Work(_))
                        if matches!(
                            kinds.get(v.0 as usize),
                            Some(VarKind::Parameter | VarKind::Constant | VarKind::Discrete)
                        ) => {}
                    _ => return None,
                },
                Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _) => return None,
                _ => {}
            }
        }
        let mut rate = exprs.real(0.0);
        for (leaf, v) in states {
            let d = diff_var_through(exprs, residual, leaf, &calls).ok()?;
            let leaf_var = exprs.var(v);
            let der = exprs.builtin(Builtin::Der, vec![leaf_var]);
            let term = exprs.binary(BinOp::Mul, d, der);
            rate = exprs.binary(BinOp::Add, rate, term);
        }
        Some(eqm_ir::symbolic::simplify(exprs, rate))
    }

    /// The check of the static state choice, when index reduction made one.
    pub(super) fn state_choice(&mut self) {
        let Some(choice) = self.dae.stage.state_choice.clone() else {
            return;
        };
        let kinds = self.dae.kinds.clone();
        let flat = &mut self.dae.flat;
        let calls = FunctionCalls::new(&flat.functions, &flat.function_derivatives, &flat.externals);
        let exprs = &mut flat.exprs;
        let mut matrix = Vec::new();
        let mut norms = Vec::new();
        let mut span = None;
        for &e in &choice.constraints {
            let Some(eq) = self.dae.equations.get(e) else { continue };
            span.get_or_insert(eq.span);
            let residual = exprs.binary(BinOp::Sub, eq.lhs, eq.rhs);
            // Every time-varying leaf of the constraint: variables and derivatives.
            let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(exprs.get(n));
            let leaves: Vec<ExprId> = eqm_ir::symbolic::reachable(exprs, residual, &stop)
                .into_iter()
                .filter(|&n| match exprs.get(n) {
                    Node::Var(v) => matches!(kinds.get(v.0 as usize), Some(VarKind::State | VarKind::Algebraic)),
                    Node::Call(Callee::Builtin(Builtin::Der), _) => true,
                    _ => false,
                })
                .collect();
            let mut squares = exprs.real(0.0);
            for leaf in leaves {
                let Ok(d) = diff_var_through(exprs, residual, leaf, &calls) else {
                    return;
                };
                let square = exprs.binary(BinOp::Mul, d, d);
                squares = exprs.binary(BinOp::Add, squares, square);
            }
            let norm = exprs.builtin(Builtin::Sqrt, vec![squares]);
            norms.push(eqm_ir::symbolic::simplify(exprs, norm));
            for &v in &choice.demoted {
                let leaf = exprs.var(v);
                let Ok(d) = diff_var_through(exprs, residual, leaf, &calls) else {
                    return;
                };
                matrix.push(d);
            }
        }
        let Some(span) = span else { return };
        self.state_choice = Some(ExecStateChoice {
            matrix,
            norms,
            variables: choice.demoted,
            states: self.states.clone(),
            span,
        });
    }
    pub(super) fn finish(mut self) -> ExecProgram {
        let state_nominals = self.states.iter().map(|&v| state_nominal(&self.dae.flat, v)).collect();
        let symbols = Symbols::take(&mut self.dae);
        ExecProgram {
            layout: Layout {
                states: self.states.len(),
                params: self.params.len(),
                work: self.work_vars.len(),
            },
            exprs: self.dae.flat.exprs,
            functions: self.dae.flat.functions,
            externals: self.dae.flat.externals,
            symbols,
            equations: self.dae.equations,
            slots: self.slots,
            states: self.states,
            params: self.params,
            p0: self.p0,
            work_vars: self.work_vars,
            param_program: self.param_program,
            start_program: self.start_program,
            rhs: self.rhs,
            outputs: self.outputs,
            algorithms: self.algorithms,
            algorithm_of_section: self.algorithm_of_section,
            conditions: self.conditions,
            events: self.events,
            invariants: self.invariants,
            assertions: self.assertions,
            state_choice: self.state_choice,
            state_nominals,
            jacobian: None,
        }
    }

    /// The span of the model's declaration, for messages about the model as a whole.
    pub(super) fn model_span(&self) -> Span {
        self.dae.flat.instances.first().map_or_else(Span::default, |i| i.span)
    }
}

/// The magnitude of state `v` that scales its absolute tolerance: the absolute value of its
/// `nominal` attribute, evaluated with the values the model gives its parameters (a nominal is a
/// scale, so one set for a run does not change it); 1 without one, or where it is not a nonzero
/// number then (a parameter computed during the initialization).
fn state_nominal(flat: &eqm_ir::flat::FlatModel, v: VarId) -> f64 {
    let Some(nominal) = flat.var(v).attributes.nominal else {
        return 1.0;
    };
    match parameter_value(flat, nominal, 0, &mut FxHashMap::default()) {
        Some(value) if value.is_finite() && value != 0.0 => value.abs(),
        _ => 1.0,
    }
}

/// The value of `e`, an expression of parameters and constants, with their bindings (or start
/// values) evaluated in turn, at most 32 deep; `None` where it reads anything else. Each
/// parameter is evaluated once (`known`), so bindings that share parameters cost their size.
fn parameter_value(
    flat: &eqm_ir::flat::FlatModel,
    e: ExprId,
    depth: u32,
    known: &mut FxHashMap<VarId, f64>,
) -> Option<f64> {
    use eqm_ir::flat::Variability;
    if let Some(value) = flat.exprs.literal(e) {
        return Some(value);
    }
    if depth > 32 {
        return None;
    }
    let mut vars = Vec::new();
    flat.exprs.vars_in(e, &mut vars);
    for w in vars {
        if known.contains_key(&w) {
            continue;
        }
        let var = flat.var(w);
        let bound = matches!(var.variability, Variability::Parameter | Variability::Constant)
            && var.attributes.fixed != Some(false);
        let value = (bound.then(|| var.binding.or(var.attributes.start)).flatten())
            .and_then(|b| parameter_value(flat, b, depth + 1, known));
        known.insert(w, value.unwrap_or(f64::NAN));
    }
    let read = |w: VarId| known.get(&w).copied().unwrap_or(f64::NAN);
    eqm_ir::symbolic::evaluate(&flat.exprs, e, &read, 0.0)
        .ok()
        .filter(|x| x.is_finite())
}

/// The value of an expression without variables, operators or user functions, if it is one.
fn constant_value(arena: &ExprArena, e: ExprId) -> Option<f64> {
    if let Some(v) = arena.literal(e) {
        return Some(v);
    }
    let mut vars = Vec::new();
    arena.vars_in(e, &mut vars);
    if !vars.is_empty() {
        return None;
    }
    eqm_ir::symbolic::evaluate(arena, e, &|_| f64::NAN, 0.0)
        .ok()
        .filter(|v| v.is_finite())
}

/// The loop unknowns occurring in `root`: `der(x)` nodes are leaves of their own, and nothing
/// inside `der(...)` or `pre(...)` is an unknown.
fn loop_vars_in(arena: &ExprArena, root: ExprId, leaf_var: &FxHashMap<ExprId, LoopVar>) -> Vec<LoopVar> {
    let mut out = Vec::new();
    let mut seen = eqm_ir::symbolic::FxHashSet::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let Some(&lv) = leaf_var.get(&e) {
            out.push(lv);
            continue;
        }
        if !matches!(
            arena.get(e),
            Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _)
        ) {
            stack.extend(arena.children(e));
        }
    }
    out.sort_unstable();
    out
}

/// Whether `root` may evaluate outside its domain (not finite) for finite arguments: it holds
/// a division by an expression, a power whose exponent is not a literal natural number, a
/// logarithm, a square root or an inverse sine or cosine.
fn may_leave_domain(arena: &ExprArena, root: ExprId) -> bool {
    let mut seen = eqm_ir::symbolic::FxHashSet::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        let natural = |p: ExprId| arena.literal(p).is_some_and(|v| v >= 0.0 && v.fract() == 0.0);
        match arena.get(e) {
            Node::Binary(BinOp::Div, _, d) if arena.literal(*d).is_none() => return true,
            Node::Binary(BinOp::Pow, _, p) if !natural(*p) => return true,
            Node::Call(
                Callee::Builtin(Builtin::Log | Builtin::Log10 | Builtin::Sqrt | Builtin::Asin | Builtin::Acos),
                _,
            ) => return true,
            _ => stack.extend(arena.children(e)),
        }
    }
    false
}

fn internal(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(
        "E0699",
        format!("internal error while building the executable program: {text}"),
        span,
        "here",
    )
    .with_help("please report this model")
}
