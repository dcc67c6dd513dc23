//! The event program of an executable program: the zero-crossing surfaces with the slots of
//! their relation variables, the samples, the previous values of `edge` and `change`, and the
//! when-clauses with their actions sorted so that each reads what it depends on.
//!
//! Input: the builder after the layout, and the event set of the DAE. Output: the
//! [`ExecEvents`] of the program, and diagnostics (`E0605`-`E0607`) for when-clauses that
//! cannot run. Nothing here decides when events happen: the simulation does.

use super::build::Builder;
use super::*;
use crate::dae::VarKind;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, FxHashMap, FxHashSet, Node};

impl Builder {
    /// The event program: surfaces with the slots of their relation variables, when-clauses
    /// with their targets (a reinit of something that is not a state, or an assignment to a
    /// variable without a work slot, is a diagnostic), and the discrete slots.
    pub(super) fn events(&mut self) {
        let set = std::mem::take(&mut self.dae.stage.events);
        for s in &set.surfaces {
            let (relations, relation_vars) = s
                .relations
                .iter()
                .filter_map(|&(v, test)| self.slot(v).map(|slot| ((slot, test), v)))
                .unzip();
            self.events.surfaces.push(ExecSurface {
                expr: s.expr,
                relations,
                relation_vars,
                span: s.span,
                text: s.text.clone(),
                time_event: s.time_event,
                time_moves: s.time_event.is_some_and(|t| !self.is_parameter_expression(t)),
            });
        }
        for sample in &set.samples {
            let start_ok = self.is_parameter_expression(sample.start);
            let interval_ok = self.is_parameter_expression(sample.interval);
            match self.slot(sample.var) {
                Some(Slot::Work(slot)) if start_ok && interval_ok => self.events.samples.push(ExecSample {
                    slot,
                    start: sample.start,
                    interval: sample.interval,
                    span: sample.span,
                }),
                _ => self.diagnostics.push(Diagnostic::error(
                    "E0606",
                    "the start and interval of `sample` must be parameter expressions",
                    sample.span,
                    "in this sample(start, interval)",
                )),
            }
        }
        self.event_delays(&set.delays);
        self.event_spatials(&set.delays, &set.spatials);
        for p in &set.previous {
            if let Some(Slot::Work(slot)) = self.slot(p.var) {
                self.events.previous.push(ExecPrevious {
                    slot,
                    var: p.var,
                    expr: p.expr,
                    settled_at_start: p.settled_at_start,
                    left_limit: p.left_limit,
                    integer_part: p.integer_part,
                });
            }
        }
        let slots = &self.slots;
        let work_slot = |v: Option<VarId>| match v.map(|v| (slots.get(v.0 as usize).copied().flatten(), v)) {
            Some((Some(Slot::Work(slot)), v)) => Some((slot, v)),
            _ => None,
        };
        let (initial, terminal) = (work_slot(set.initial), work_slot(set.terminal));
        self.events.initial = initial;
        self.events.terminal = terminal;
        self.events.event = work_slot(set.event);
        let whens = self.dae.flat.whens.clone();
        for (w, conditions) in whens.iter().zip(&set.when_conditions) {
            let mut branches = Vec::new();
            for (b, &condition) in w.branches.iter().zip(conditions) {
                let mut actions = Vec::new();
                for a in &b.actions {
                    let problem = match a {
                        flat::WhenAction::Assign { var, .. }
                            if !(matches!(self.slot(*var), Some(Slot::Work(_))) && self.eliminated(*var).is_none()) =>
                        {
                            Some((
                                *var,
                                "a when-equation can only assign a variable that changes at events",
                            ))
                        }
                        flat::WhenAction::Reinit { var, .. } if !matches!(self.slot(*var), Some(Slot::State(_))) => {
                            Some((*var, "reinit needs a state (a variable that appears differentiated)"))
                        }
                        _ => None,
                    };
                    match problem {
                        Some((var, why)) => self.when_target_error(var, a.span(), why),
                        None => actions.push(a.clone()),
                    }
                }
                let actions = self.when_order(actions);
                branches.push((condition, actions));
            }
            let coupled = vec![false; branches.len()];
            self.events.whens.push(ExecWhen {
                branches,
                coupled,
                after: Vec::new(),
                span: w.span,
            });
        }
        self.mark_coupled_branches();
        self.order_whens();
        for (k, &v) in self.work_vars.iter().enumerate() {
            if self.kind(v) == VarKind::Discrete && self.eliminated(v).is_none() {
                self.events.discrete.push(k as u32);
            }
        }
        self.dae.stage.events = set;
    }

    /// The delays of the event program: each with a fixed delay time, or a varying one bounded
    /// by a parameter `delayMax` whose time does not read its own delayed value; every other
    /// delay is a diagnostic (E0608) that says why.
    fn event_delays(&mut self, delays: &[crate::events::Delay]) {
        let delay_vars: Vec<VarId> = delays.iter().map(|d| d.var).collect();
        let varying_times: Vec<Option<ExprId>> = delays
            .iter()
            .map(|d| {
                let varying = !self.is_parameter_expression(d.delay)
                    && d.max.is_some_and(|m| self.is_parameter_expression(m))
                    && matches!(self.slot(d.var), Some(Slot::Work(_)));
                varying.then_some(d.delay)
            })
            .collect();
        let reads = self.delay_reads(&delay_vars, &varying_times);
        let before: Vec<Vec<usize>> = reads.iter().map(|r| r.delays.clone()).collect();
        let (_, cyclic) = eqm_structural::order::dependency_order(&before);
        let cyclic: FxHashSet<usize> = cyclic.into_iter().collect();
        for (k, d) in delays.iter().enumerate() {
            let fixed = self.is_parameter_expression(d.delay);
            let max_ok = d.max.is_none_or(|m| self.is_parameter_expression(m));
            let problem = match (self.slot(d.var), d.max) {
                (Some(Slot::Work(_)), _) if fixed && max_ok => None,
                (Some(Slot::Work(_)), None) => Some((
                    "the delay time of `delay(expression, delay)` must be a parameter expression",
                    "a delay time that changes during the run needs the largest delay: write `delay(expression, delay, delayMax)` with `delayMax` a parameter expression",
                )),
                (Some(Slot::Work(_)), Some(_)) if !max_ok => Some((
                    "the largest delay `delayMax` of `delay(expression, delay, delayMax)` must be a parameter expression",
                    "give delayMax as a parameter, a constant or an expression of them",
                )),
                (Some(Slot::Work(_)), Some(_)) if cyclic.contains(&k) => Some((
                    "this delay time reads its own delayed value (through the equations, or through the times of other delays that read it), so it has no value before the delayed value it selects",
                    "compute the delay time from values that do not depend on this delay",
                )),
                (Some(Slot::Work(_)), Some(_)) => None,
                _ => Some((
                    "the delay time of `delay` must be a parameter expression",
                    "give the delay as a parameter, a constant or an expression of them",
                )),
            };
            match (problem, self.slot(d.var)) {
                (None, Some(Slot::Work(slot))) => self.events.delays.push(ExecDelay {
                    slot,
                    var: d.var,
                    expr: d.expr,
                    delay: d.delay,
                    max: d.max,
                    varying: !fixed,
                    reads_equations: reads[k].reads_equations,
                    span: d.span,
                }),
                (problem, _) => {
                    let (message, help) = problem.unwrap_or(("the delay has no value slot", ""));
                    let mut diagnostic = Diagnostic::error("E0608", message, d.span, "in this delay");
                    if !help.is_empty() {
                        diagnostic = diagnostic.with_help(help);
                    }
                    self.diagnostics.push(diagnostic);
                }
            }
        }
    }

    /// The profiles of `spatialDistribution`, each with the work slots of its four values. The
    /// outputs are read from the profile before the equations are solved, at the position `x`
    /// there: a position that reads what the equations compute (or a delayed value, written
    /// after the profiles) is a diagnostic (`E0609`).
    fn event_spatials(&mut self, delays: &[crate::events::Delay], spatials: &[crate::events::Spatial]) {
        let delay_vars: Vec<VarId> = delays.iter().map(|d| d.var).collect();
        let positions: Vec<Option<ExprId>> = spatials.iter().map(|s| Some(s.x)).collect();
        let reads = self.delay_reads(&delay_vars, &positions);
        for (s, reads) in spatials.iter().zip(reads) {
            let slots = s.vars.map(|v| match self.slot(v) {
                Some(Slot::Work(k)) => Some(k),
                _ => None,
            });
            match slots {
                [Some(first), Some(last), Some(at0), Some(at1)] if !reads.reads_equations => {
                    self.events.spatials.push(ExecSpatial {
                        slots: [first, last, at0, at1],
                        in0: s.in0,
                        in1: s.in1,
                        x: s.x,
                        positive: s.positive,
                        points: s.points.clone(),
                        values: s.values.clone(),
                        span: s.span,
                    })
                }
                _ => self.diagnostics.push(
                    Diagnostic::error(
                        "E0609",
                        "the position `x` of `spatialDistribution` must be known before the equations: it may read time, states, parameters and discrete variables",
                        s.span,
                        "in this spatialDistribution",
                    )
                    .with_help("make x a state: `der(x) = v;` with v the transport velocity"),
                ),
            }
        }
    }

    /// The assignments of one when-branch in an order in which each one reads the new values of
    /// those it depends on and `pre(v)` is read before `v` is assigned (when-equations are
    /// equations, not statements); other actions keep their places after the assignments. A
    /// cycle is a diagnostic (`E0607`), and the written order is kept.
    pub(super) fn when_order(&mut self, actions: Vec<flat::WhenAction>) -> Vec<flat::WhenAction> {
        let arena = &self.dae.flat.exprs;
        let assigned: Vec<Option<VarId>> = actions
            .iter()
            .map(|a| match a {
                flat::WhenAction::Assign { var, .. } => Some(*var),
                _ => None,
            })
            .collect();
        let n = actions.len();
        // before[i] lists the actions that must come before action i.
        let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, a) in actions.iter().enumerate() {
            let Some(value) = a.expr() else { continue };
            let (now, previous) = reads_split_by_pre(arena, value);
            for (j, target) in assigned.iter().enumerate() {
                let Some(target) = target else { continue };
                if j != i && now.contains(target) {
                    before[i].push(j);
                }
                if j != i && previous.contains(target) {
                    before[j].push(i);
                }
            }
        }
        let (order, left) = eqm_structural::order::dependency_order(&before);
        if let Some(&first) = left.first() {
            let span = actions[first].span();
            self.diagnostics.push(
                Diagnostic::error(
                    "E0607",
                    "the equations of this when-clause depend on each other in a cycle",
                    span,
                    "part of the cycle",
                )
                .with_help("break the cycle with pre(...) on one of the variables"),
            );
            return actions;
        }
        let mut slots: Vec<Option<flat::WhenAction>> = actions.into_iter().map(Some).collect();
        order.into_iter().filter_map(|i| slots[i].take()).collect()
    }

    /// Marks the when-branches whose assignments form one system with the continuous
    /// equations ([`ExecWhen::coupled`]). One pass over the right-hand side and the outputs
    /// program, in evaluation order, finds every variable computed from a variable that a
    /// when-clause assigns; a branch is coupled when an assignment reads one of those directly.
    fn mark_coupled_branches(&mut self) {
        let arena = &self.dae.flat.exprs;
        let slots = &self.slots;
        let slot_of = |v: VarId| slots.get(v.0 as usize).copied().flatten();
        let mut assigned: eqm_ir::symbolic::FxHashSet<Slot> = Default::default();
        for w in &self.events.whens {
            for (_, actions) in &w.branches {
                for a in actions {
                    if let flat::WhenAction::Assign { var, .. } = a
                        && let Some(slot) = slot_of(*var)
                    {
                        assigned.insert(slot);
                    }
                }
            }
        }
        if assigned.is_empty() {
            return;
        }
        // `derived`: the slots the continuous equations compute from an assigned variable.
        let mut derived: eqm_ir::symbolic::FxHashSet<Slot> = Default::default();
        let mut reads = Vec::new();
        let mut step = |roots: &mut dyn Iterator<Item = ExprId>, targets: &mut dyn Iterator<Item = Slot>| {
            reads.clear();
            for root in roots {
                arena.vars_in(root, &mut reads);
            }
            let tainted = reads
                .iter()
                .filter_map(|&v| slot_of(v))
                .any(|s| assigned.contains(&s) || derived.contains(&s));
            if tainted {
                derived.extend(targets);
            }
        };
        for instr in &self.rhs {
            match instr {
                Instr::Assign { target, value, .. } => {
                    step(&mut std::iter::once(*value), &mut std::iter::once(*target))
                }
                Instr::Newton1 { target, residual, .. } => {
                    step(&mut std::iter::once(*residual), &mut std::iter::once(*target))
                }
                Instr::Loop(l) => step(
                    &mut l.inner.iter().map(|a| a.value).chain(l.residuals.iter().map(|r| r.0)),
                    &mut l.unknowns.iter().copied(),
                ),
                Instr::Algorithm { index } => {
                    let a = &self.algorithms[*index];
                    let mut roots = Vec::new();
                    for statement in &a.statements {
                        statement.for_each_expr(&mut |e, _| roots.push(e));
                    }
                    step(&mut roots.into_iter(), &mut a.outputs.iter().map(|o| o.1));
                }
            }
        }
        for o in &self.outputs {
            step(&mut std::iter::once(o.value), &mut std::iter::once(o.target));
        }
        if derived.is_empty() {
            return;
        }
        for w in &mut self.events.whens {
            for (b, (_, actions)) in w.branches.iter().enumerate() {
                w.coupled[b] = actions.iter().any(|a| match a {
                    flat::WhenAction::Assign { value, .. } => reads_split_by_pre(arena, *value)
                        .0
                        .into_iter()
                        .any(|v| slot_of(v).is_some_and(|s| derived.contains(&s))),
                    _ => false,
                });
            }
        }
    }

    /// Finds, for each when-clause, the other clauses whose assignments its conditions read at
    /// the same event ([`ExecWhen::after`]), and an order of all clauses in which each comes
    /// after those ([`ExecEvents::when_order`]). Modelica solves the equations active at an
    /// event as one system in causal order, so a condition reading `z` must see the value `z`
    /// gets from another clause at this event. A condition reads a variable directly, through
    /// the surface of a relation variable, or through the instruction of the right-hand side
    /// or outputs program that computes it; `pre(v)` is the value before the event and no
    /// dependency. Where clauses read each other's assignments in a cycle, the order takes the
    /// first of them as written and goes on, so that every edge outside the cycle still holds.
    fn order_whens(&mut self) {
        let n = self.events.whens.len();
        self.events.when_order = (0..n).collect();
        if n < 2 {
            return;
        }
        let arena = &self.dae.flat.exprs;
        let slots = &self.slots;
        let slot_of = |v: VarId| slots.get(v.0 as usize).copied().flatten();
        let mut assigners: FxHashMap<Slot, Vec<usize>> = FxHashMap::default();
        for (w, when) in self.events.whens.iter().enumerate() {
            for (_, actions) in &when.branches {
                for a in actions {
                    if let flat::WhenAction::Assign { var, .. } = a
                        && let Some(slot) = slot_of(*var)
                    {
                        let list = assigners.entry(slot).or_default();
                        if !list.contains(&w) {
                            list.push(w);
                        }
                    }
                }
            }
        }
        if assigners.is_empty() {
            return;
        }
        let (producers, roots) = self.producers();
        let mut visited_node = vec![usize::MAX; roots.len()];
        let mut visited_var: FxHashSet<VarId> = FxHashSet::default();
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (w, when) in self.events.whens.iter().enumerate() {
            visited_var.clear();
            let mut stack: Vec<VarId> = Vec::new();
            for &(condition, _) in &when.branches {
                stack.extend(reads_split_by_pre(arena, condition).0);
            }
            while let Some(v) = stack.pop() {
                if !visited_var.insert(v) {
                    continue;
                }
                let Some(slot) = slot_of(v) else { continue };
                for &u in assigners.get(&slot).into_iter().flatten() {
                    if u != w && !after[w].contains(&u) {
                        after[w].push(u);
                    }
                }
                if let Some(&node) = producers.get(&slot)
                    && visited_node[node] != w
                {
                    visited_node[node] = w;
                    for &root in &roots[node] {
                        stack.extend(reads_split_by_pre(arena, root).0);
                    }
                }
            }
        }
        // The smallest ready clause first; within a cycle the written order decides.
        self.events.when_order = eqm_structural::order::dependency_order_breaking_cycles(&after);
        for (when, list) in self.events.whens.iter_mut().zip(after) {
            when.after = list;
        }
    }

    /// What computes each slot at an event: the expressions of the right-hand side and outputs
    /// instruction that computes it, or of the surface whose sign a relation variable holds.
    /// Returns the map from a slot to its node and each node's expressions.
    fn producers(&self) -> (FxHashMap<Slot, usize>, Vec<Vec<ExprId>>) {
        let mut producers: FxHashMap<Slot, usize> = FxHashMap::default();
        let mut roots: Vec<Vec<ExprId>> = Vec::new();
        let mut add = |targets: &mut dyn Iterator<Item = Slot>, exprs: Vec<ExprId>| {
            for target in targets {
                producers.insert(target, roots.len());
            }
            roots.push(exprs);
        };
        for instr in &self.rhs {
            match instr {
                Instr::Assign { target, value, .. } => add(&mut std::iter::once(*target), vec![*value]),
                Instr::Newton1 { target, residual, .. } => add(&mut std::iter::once(*target), vec![*residual]),
                Instr::Loop(l) => add(
                    &mut l.unknowns.iter().copied(),
                    l.inner
                        .iter()
                        .map(|a| a.value)
                        .chain(l.residuals.iter().map(|r| r.0))
                        .collect(),
                ),
                Instr::Algorithm { index } => {
                    let a = &self.algorithms[*index];
                    let mut exprs = Vec::new();
                    for statement in &a.statements {
                        statement.for_each_expr(&mut |e, _| exprs.push(e));
                    }
                    add(&mut a.outputs.iter().map(|o| o.1), exprs);
                }
            }
        }
        for o in &self.outputs {
            add(&mut std::iter::once(o.target), vec![o.value]);
        }
        for s in &self.events.surfaces {
            add(&mut s.relations.iter().map(|&(slot, _)| slot), vec![s.expr]);
        }
        (producers, roots)
    }

    pub(super) fn when_target_error(&mut self, var: VarId, span: Span, why: &str) {
        let name = self.dae.flat.var(var).name.clone();
        self.diagnostics.push(Diagnostic::error(
            "E0605",
            format!("`{name}` cannot be changed by this when-clause"),
            span,
            why.to_string(),
        ));
    }
}

/// The variables `e` reads directly, and those it reads only through `pre(...)`.
fn reads_split_by_pre(arena: &ExprArena, e: ExprId) -> (Vec<VarId>, Vec<VarId>) {
    let (mut now, mut previous) = (Vec::new(), Vec::new());
    let mut stack = vec![(e, false)];
    while let Some((id, in_pre)) = stack.pop() {
        match arena.get(id) {
            Node::Var(v) if in_pre => previous.push(*v),
            Node::Var(v) => now.push(*v),
            Node::Call(Callee::Builtin(Builtin::Pre), args) => stack.extend(args.iter().map(|a| (*a, true))),
            _ => stack.extend(arena.children(id).map(|c| (c, in_pre))),
        }
    }
    (now, previous)
}
