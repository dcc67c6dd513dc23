//! Event extraction: relations in a continuous context become frozen Boolean variables with
//! zero-crossing functions.
//!
//! Input: a [`Dae`] of index at most one. Output: the DAE in the [`Hybrid`] stage, in which every
//! relation
//! `a < b`, `a <= b`, `a > b`, `a >= b` outside `noEvent`/`smooth` in an equation or a
//! when-condition, and every event-generating built-in (`sign`, `min`, `max` of two
//! arguments; not `abs`, whose value is continuous and which Modelica defines without events),
//! reads a new discrete variable (`$rel1`, `$rel2`, ...) instead, plus the
//! [`EventSet`] (in the stage) that says how those variables are computed: each one is a sign test of a
//! *surface* `d = a - b`, and relations that test the same `d` share one surface (so `x > 0`
//! and `x < 0` in `sign(x)` have one zero-crossing function, which is what sliding mode needs).
//!
//! Between events the variables keep their values, so the right-hand side is smooth inside a
//! step; the simulation evaluates the surfaces after each step, locates sign changes and updates
//! the variables at the event (`hybrid`). Relations between parameters, constants and discrete
//! variables only cannot change between events and stay as they are.
//!
//! `delay(e, d)` becomes a variable `$delayN` that the simulation sets from the history of `e`
//! (a [`Delay`]); each output of `spatialDistribution` becomes a choice by `positiveVelocity`
//! between two of the four variables `$spatialN_...` that the simulation sets from the call's
//! profile (a [`Spatial`]).
//!
//! `sample(start, interval)` becomes a discrete variable too (`$sample1`, ...), true only at the
//! time events `start + k·interval`, which the simulation schedules exactly; `initial()` and
//! `terminal()` become `$initial` and `$terminal`, true during the initial and the final event;
//! `edge(e)` becomes `e and not $preN` and `change(e)` becomes `e <> $preN`, where `$preN` holds
//! the value `e` had before the current pass of the event iteration.
//!
//! A surface `time - T` with `T` a parameter expression is marked as a time event: the
//! simulation schedules it at exactly `T` instead of locating it.
//!
//! `floor`, `ceil`, `integer`, `div`, `mod` and `rem` of a continuous argument read a held integer
//! part (`$heldN`), recomputed at events, with surfaces at the integers around it, so that they
//! jump only at located events.
//!
//! The assertions of the equations get the event operators (`delay` included) but keep their
//! relations literal: they are checked, not switched on, as the inside of `noEvent` is.
//!
//! Relations in algorithm sections (outside `while` loops and assertions) are extracted too. A
//! relation whose surface reads a variable the section assigns again at or after it gets a
//! surface on a hidden variable (`$capN`) that the section sets right before the test, since
//! surfaces are evaluated after the section ran. Each discrete-time output of a section gets
//! a `pre` variable the section starts from.
//!
//! Deliberately not here: relations inside user functions, and anything run-time.

use crate::dae::{Dae, StateChoice, VarKind};
use crate::index::IndexOne;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, FxHashSet, Node, UnOp, VarId};

mod algorithms;
mod canonical;
mod spatial;

/// How a relation variable reads the sign of its surface `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Test {
    /// `d > 0`
    Positive,
    /// `d >= 0`
    NonNegative,
    /// `d < 0`
    Negative,
    /// `d <= 0`
    NonPositive,
}

impl Test {
    /// The relation's value when the surface's frozen sign is `sign` (-1, 0 or 1).
    pub fn holds(self, sign: i8) -> bool {
        match self {
            Test::Positive => sign > 0,
            Test::NonNegative => sign >= 0,
            Test::Negative => sign < 0,
            Test::NonPositive => sign <= 0,
        }
    }
}

/// One zero-crossing function and the relation variables that read its sign.
#[derive(Debug, Clone)]
pub struct Surface {
    /// `d = a - b` of the relations `a op b`.
    pub expr: ExprId,
    pub relations: Vec<(VarId, Test)>,
    /// The first equation or when-clause the surface was found in.
    pub span: Span,
    /// The first relation as written, for messages (`v - q > 0`).
    pub text: String,
    /// When the surface is `time - T` with `T` an expression that changes only at events
    /// (parameters, discrete-time variables), `T`: a time event, which the simulation schedules
    /// exactly, recomputing `T` after every event, instead of locating it.
    pub time_event: Option<ExprId>,
}

/// `sample(start, interval)`: a Boolean variable that is true exactly at the events at
/// `start + k·interval` (time events, scheduled without root finding).
#[derive(Debug, Clone)]
pub struct Sample {
    pub var: VarId,
    pub start: ExprId,
    pub interval: ExprId,
    pub span: Span,
}

/// `delay(expr, delay)` or `delay(expr, delay, max)`: a variable holding `expr` as it was
/// `delay` seconds earlier (its value at the start time before the start plus the delay), which
/// the simulation keeps from the history of `expr`. Without `max` the delay must be a parameter
/// expression; with it the delay may change during the run within `[0, max]`.
#[derive(Debug, Clone)]
pub struct Delay {
    pub var: VarId,
    pub expr: ExprId,
    pub delay: ExprId,
    pub max: Option<ExprId>,
    pub span: Span,
}

/// `(out0, out1) = spatialDistribution(in0, in1, x, positiveVelocity, initialPoints,
/// initialValues)`: four variables the simulation sets from the call's profile (its first and
/// last values, and its values at 0 and at 1 after the move of `x` since the last accepted
/// point), of which `out0` is `if positiveVelocity then first else at0` and `out1` is
/// `if positiveVelocity then at1 else last`. The flattener checked the initial points (from 0
/// to 1, not decreasing, as many as the values).
#[derive(Debug, Clone)]
pub struct Spatial {
    /// The variables of the first value, the last value, the value at 0 and the value at 1.
    pub vars: [VarId; 4],
    pub in0: ExprId,
    pub in1: ExprId,
    pub x: ExprId,
    /// `positiveVelocity`: the end a jump of the inflow enters at where the profile does not move.
    pub positive: ExprId,
    pub points: Vec<f64>,
    pub values: Vec<f64>,
    pub span: Span,
}

/// A value recomputed at the start of each pass of the event iteration and held between
/// events: for `edge(e)` and `change(e)` the value `e` had before the pass (equal to `e` between
/// events); for `floor`, `ceil`, `integer`, `div`, `mod`, `rem` the integer part of their argument.
/// For `pre(e)` of a continuous-time `e` (`left_limit`), the value `e` had just before the event,
/// set once when the event starts and held through all its passes.
#[derive(Debug, Clone)]
pub struct Previous {
    pub var: VarId,
    pub expr: ExprId,
    pub span: Span,
    /// At the start it is `expr`'s value at the initial point, not a start value (true for all
    /// but `pre(v)` of a discrete `v`).
    pub settled_at_start: bool,
    /// Set when an event starts (the left limit of a continuous-time expression), not between
    /// the passes of the event iteration.
    pub left_limit: bool,
    /// The integer part held by `floor`, `ceil`, `integer`, `div`, `mod` or `rem`: at an event
    /// it is the value of the event, recomputed while the when-clauses that fire are solved.
    pub integer_part: bool,
}

impl Previous {
    /// The value `expr` had before the event, settled at the start and taken between the
    /// passes of the event iteration: what `pre` of a variable or of an expression reads.
    pub(crate) fn settled(var: VarId, expr: ExprId, span: Span) -> Previous {
        Previous {
            var,
            expr,
            span,
            settled_at_start: true,
            left_limit: false,
            integer_part: false,
        }
    }
}

/// The surfaces of a model and its when-conditions with their relations replaced.
#[derive(Debug, Clone, Default)]
pub struct EventSet {
    pub surfaces: Vec<Surface>,
    pub samples: Vec<Sample>,
    pub delays: Vec<Delay>,
    pub spatials: Vec<Spatial>,
    pub previous: Vec<Previous>,
    /// The variable standing for `initial()` (true during the initial event) and for
    /// `terminal()` (true at the final event), if the model uses them.
    pub initial: Option<VarId>,
    pub terminal: Option<VarId>,
    /// The variable that is true during the passes of an event iteration (not the initial
    /// one), if an algorithm section reads a relation literally at events.
    pub event: Option<VarId>,
    /// For each when-clause of the flat model, each branch's condition reading the relation
    /// variables (the actions keep their expressions: they are evaluated at events only).
    pub when_conditions: Vec<Vec<ExprId>>,
}

/// The stage of a DAE whose relations read frozen event variables: what causalisation, the
/// initialization problem and code generation take.
#[derive(Debug, Clone, Default)]
pub struct Hybrid {
    /// The static state choice of the dummy-derivative form (from index reduction).
    pub state_choice: Option<StateChoice>,
    /// The zero-crossing surfaces and rewritten when-conditions.
    pub events: EventSet,
}

/// Replaces relations by relation variables in the equations, initial equations and
/// when-conditions of `dae`, and records the surfaces in its stage. Linear in the size of the
/// expressions reachable from those roots.
pub fn extract(mut dae: Dae<IndexOne>) -> Dae<Hybrid> {
    let events = extract_in(&mut dae);
    let state_choice = dae.stage.state_choice.take();
    dae.into_stage(Hybrid { state_choice, events })
}

fn extract_in(dae: &mut Dae<IndexOne>) -> EventSet {
    let mut roots = event_roots(dae);
    // The assertions are checked, not switched on: their relations stay literal, but the
    // event operators in them (`delay`, `pre`, `edge`) read what the simulation keeps, as
    // elsewhere.
    let first_checked = roots.len();
    for a in &dae.flat.assertions {
        roots.push((a.condition, a.span));
        roots.extend(a.message.exprs().map(|e| (e, a.span)));
    }
    let reach = Reach::of(dae, &roots, first_checked);
    let mut x = Extractor::default();
    let (new, inside) = rewrite_reached(dae, &roots, &reach, &mut x);
    let checked = |e: ExprId| inside.get(&e).copied().unwrap_or(e);
    for a in &mut dae.flat.assertions {
        a.condition = checked(a.condition);
        a.message = a.message.map_exprs(&mut |e| checked(e));
    }
    let when_conditions = apply_rewrites(dae, &new, &mut x);
    if !x.captured.is_empty() {
        algorithms::drop_captured_relations(dae, &when_conditions, &mut x);
    }
    EventSet {
        surfaces: x.surfaces,
        samples: x.samples,
        delays: x.delays,
        spatials: x.spatials,
        previous: x.previous,
        initial: x.initial,
        terminal: x.terminal,
        event: x.event,
        when_conditions,
    }
}

/// The roots of the expressions events are extracted from, each with the span its messages
/// name: both sides of every equation and invariant, the conditions and actions of when-clauses, and what
/// the algorithm sections read.
fn event_roots(dae: &Dae<IndexOne>) -> Vec<(ExprId, Span)> {
    let mut roots: Vec<(ExprId, Span)> = Vec::new();
    // The invariants the projection keeps read the same frozen relations as the equations, so
    // that between events the invariant is the branch the equations take (a difference in time
    // at fixed states stays on it) and the initialization links their relations too.
    for eq in dae.equations.iter().chain(&dae.initial_equations) {
        roots.push((eq.lhs, eq.span));
        roots.push((eq.rhs, eq.span));
    }
    for eq in &dae.flat.invariants {
        roots.push((eq.lhs, eq.span));
        roots.push((eq.rhs, eq.span));
    }
    for w in &dae.flat.whens {
        for b in &w.branches {
            roots.push((b.condition, w.span));
            roots.extend(b.actions.iter().flat_map(|a| a.exprs().map(|e| (e, a.span()))));
        }
    }
    // Relations in algorithm sections generate events like those in equations (not those in
    // while-loops, which run to their end within one evaluation, nor those of initial
    // algorithms, which belong to the initialization only).
    for a in dae.flat.algorithms.iter().filter(|a| !a.initial) {
        let order = algorithms::ExecutionOrder::of(&a.statements);
        roots.extend(order.reads.iter().map(|&(_, e, span)| (e, span)));
    }
    roots
}

/// Which nodes the roots reach, as dense tables indexed by node id: the traversal touches most
/// of the arena, and hash sets of a large model's node ids cost a cache miss per node.
struct Reach {
    /// Per node: 0 when no root reaches it, else 1 + the index of the first root that does.
    first_root: Vec<u32>,
    /// Reached outside `noEvent`: the node gets every rewrite.
    in_event: Vec<bool>,
    /// Reached inside `noEvent` (or another opaque operator): it gets only the event operators,
    /// whose meaning does not depend on events being generated.
    in_opaque: Vec<bool>,
}

impl Reach {
    /// The nodes `roots` reach; those from `first_checked` on are read as the inside of
    /// `noEvent` is (the assertions).
    fn of(dae: &Dae<IndexOne>, roots: &[(ExprId, Span)], first_checked: usize) -> Reach {
        let len = dae.exprs().len();
        let mut first_root: Vec<u32> = vec![0; len];
        let mut in_event = vec![false; len];
        let mut opaque_children: Vec<(ExprId, u32)> = Vec::new();
        let mut stack = Vec::new();
        for (k, &(root, _)) in roots.iter().enumerate() {
            let mark = k as u32 + 1;
            if k >= first_checked {
                opaque_children.push((root, mark));
                continue;
            }
            stack.push(root);
            while let Some(e) = stack.pop() {
                let i = e.0 as usize;
                if in_event[i] {
                    continue;
                }
                in_event[i] = true;
                if first_root[i] == 0 {
                    first_root[i] = mark;
                }
                if is_opaque(dae.exprs(), e) {
                    opaque_children.extend(dae.exprs().children(e).map(|c| (c, mark)));
                    continue;
                }
                stack.extend(dae.exprs().children(e));
            }
        }
        let mut in_opaque = vec![false; len];
        for (root, mark) in opaque_children {
            stack.push(root);
            while let Some(e) = stack.pop() {
                let i = e.0 as usize;
                if in_opaque[i] {
                    continue;
                }
                in_opaque[i] = true;
                if first_root[i] == 0 {
                    first_root[i] = mark;
                }
                stack.extend(dae.exprs().children(e));
            }
        }
        Reach {
            first_root,
            in_event,
            in_opaque,
        }
    }
}

/// Rewrites every reached node, children before parents, and returns the rewritten ones: the
/// event operators and relations become what `x` records, the rest is rebuilt over rewritten
/// children. The second map holds the nodes as read inside `noEvent` (event operators only).
fn rewrite_reached(
    dae: &mut Dae<IndexOne>,
    roots: &[(ExprId, Span)],
    reach: &Reach,
    x: &mut Extractor,
) -> (FxHashMap<ExprId, ExprId>, FxHashMap<ExprId, ExprId>) {
    // Children have smaller ids than their parents, so visiting the reachable nodes in id
    // order rewrites every child before its parents. The span of a node is that of the first
    // root that reaches it, which keeps messages deterministic.
    let (first_root, in_event, in_opaque) = (&reach.first_root, &reach.in_event, &reach.in_opaque);
    let len = first_root.len();
    let mut new: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut inside: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    // Ascending ids: every node after its children.
    for i in 0..len {
        if first_root[i] == 0 {
            continue;
        }
        let e = ExprId(i as u32);
        let span = roots[first_root[i] as usize - 1].1;
        if in_opaque[i] {
            let rewritten = match x.operator(dae, e, &inside, span) {
                Some(r) => r,
                None => rebuilt(dae, e, &inside),
            };
            if rewritten != e {
                inside.insert(e, rewritten);
            }
        }
        if !in_event[i] {
            continue;
        }
        let rewritten = if is_opaque(dae.exprs(), e) {
            rebuilt(dae, e, &inside)
        } else if let Some(r) = x.operator(dae, e, &new, span) {
            r
        } else {
            x.event_math(dae, e, &new, span)
                .unwrap_or_else(|| rebuilt(dae, e, &new))
        };
        if rewritten != e {
            new.insert(e, rewritten);
        }
    }
    (new, inside)
}

/// Replaces every expression of the equations, invariants, when-clauses and algorithm sections by its
/// rewritten node, gives each algorithm section the previous values of its discrete outputs,
/// and returns the rewritten conditions of every when-clause branch.
fn apply_rewrites(dae: &mut Dae<IndexOne>, new: &FxHashMap<ExprId, ExprId>, x: &mut Extractor) -> Vec<Vec<ExprId>> {
    let map = |c: ExprId| new.get(&c).copied().unwrap_or(c);
    for eq in dae.equations.iter_mut().chain(dae.initial_equations.iter_mut()) {
        eq.lhs = map(eq.lhs);
        eq.rhs = map(eq.rhs);
    }
    for eq in dae.flat.invariants.iter_mut() {
        eq.lhs = map(eq.lhs);
        eq.rhs = map(eq.rhs);
    }
    let when_conditions = dae
        .flat
        .whens
        .iter()
        .map(|w| w.branches.iter().map(|b| map(b.condition)).collect())
        .collect();
    // The actions read relation variables too: at an event they hold the relations' values.
    for w in &mut dae.flat.whens {
        for b in &mut w.branches {
            for a in b.actions.iter_mut() {
                if let Some(e) = a.expr_mut() {
                    *e = map(*e);
                }
                if let Some(message) = a.message_mut() {
                    *message = message.map_exprs(&mut |e| map(e));
                }
            }
        }
    }
    for i in 0..dae.flat.algorithms.len() {
        if dae.flat.algorithms[i].initial {
            continue;
        }
        let statements: Vec<_> = dae.flat.algorithms[i]
            .statements
            .iter()
            .map(|st| st.map_exprs(&mut |e| map(e)))
            .collect();
        // The discrete-time outputs start each evaluation from their values before the event.
        let span = dae.flat.algorithms[i].span;
        let outputs = dae.flat.algorithms[i].outputs.clone();
        let mut previous = Vec::new();
        for v in outputs {
            if dae.kinds.get(v.0 as usize) == Some(&VarKind::Discrete) {
                previous.push((v, x.pre_of(dae, v, span)));
            }
        }
        let statements = x.capture_late_relations(dae, statements);
        let a = &mut dae.flat.algorithms[i];
        a.statements = statements;
        a.previous = previous;
    }
    when_conditions
}

/// Nodes whose inside is left alone: `noEvent(e)` and `smooth(n, e)` ask for no events.
fn is_opaque(arena: &ExprArena, e: ExprId) -> bool {
    matches!(
        arena.get(e),
        Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), _)
    )
}

/// Whether `e` can change only at events: it reads no state, continuous-time algebraic variable
/// or time. An Integer, Boolean or `discrete` variable an ordinary equation defines is
/// discrete-time (its equation changes its value only where a relation or held integer part
/// does, at events), so a relation on it is evaluated as it stands: frozen, it would keep the
/// value of the previous pass while the event iteration changes the variable.
fn is_discrete(dae: &Dae<IndexOne>, moving: &FxHashSet<VarId>, e: ExprId) -> bool {
    let arena = dae.exprs();
    let mut stack = vec![e];
    while let Some(id) = stack.pop() {
        match arena.get(id) {
            Node::Var(v)
                if matches!(dae.kind(*v), VarKind::State | VarKind::Algebraic) && !is_discrete_time_var(dae, *v) =>
            {
                return false;
            }
            // A delayed value changes between events like the expression it delays, and the
            // outputs of `spatialDistribution` with the profile's move.
            Node::Var(v) if moving.contains(v) => return false,
            Node::Time | Node::Local(_) => return false,
            Node::Call(Callee::Builtin(Builtin::Der), _) => return false,
            _ => stack.extend(arena.children(id)),
        }
    }
    true
}

/// Whether algebraic variable `v` is discrete-time by its type or declaration.
fn is_discrete_time_var(dae: &Dae<IndexOne>, v: VarId) -> bool {
    let var = dae.flat.var(v);
    dae.kind(v) == VarKind::Algebraic
        && (matches!(
            var.ty,
            eqm_ir::flat::ScalarType::Integer | eqm_ir::flat::ScalarType::Boolean
        ) || var.variability == eqm_ir::flat::Variability::Discrete)
}

/// `e` rebuilt with its children replaced according to `map`, or `e` itself when none changed.
fn rebuilt(dae: &mut Dae<IndexOne>, e: ExprId, map: &FxHashMap<ExprId, ExprId>) -> ExprId {
    if dae.exprs().children(e).all(|c| !map.contains_key(&c)) {
        return e;
    }
    eqm_ir::symbolic::rebuild(&mut dae.flat.exprs, e, map)
}

#[derive(Default)]
struct Extractor {
    surfaces: Vec<Surface>,
    surface_of: FxHashMap<ExprId, usize>,
    relation_of: FxHashMap<(ExprId, Test), ExprId>,
    /// Each relation variable's node by the canonical form of its comparison
    /// ([`canonical::relation_key`]): the same comparison written another way is the same
    /// relation, in every form of the model.
    relation_by_key: FxHashMap<String, ExprId>,
    samples: Vec<Sample>,
    delays: Vec<Delay>,
    spatials: Vec<Spatial>,
    /// Each `spatialDistribution` call by its arguments without the output chosen: both
    /// outputs of one call read one profile.
    spatial_of: FxHashMap<Vec<ExprId>, usize>,
    /// The variables that the simulation sets between events (delayed values, the values of
    /// `spatialDistribution`'s profiles).
    moving: FxHashSet<VarId>,
    previous: Vec<Previous>,
    /// The `pre(v)` variable of each discrete variable that has one.
    pre_var: FxHashMap<VarId, VarId>,
    /// The `pre(e)` variable of each continuous-time expression that has one.
    left_limit: FxHashMap<ExprId, VarId>,
    /// The `pre(v)` variable of each discrete-time variable an ordinary equation defines
    /// (shared by `edge(v)` and `change(v)`).
    pass_value: FxHashMap<VarId, VarId>,
    /// Relation variables an algorithm section's test was moved away from (to a relation on
    /// the value where it tests): no longer watched when nothing else reads them.
    captured: eqm_ir::symbolic::FxHashSet<VarId>,
    initial: Option<VarId>,
    terminal: Option<VarId>,
    /// The variable that is true while an event is handled, read by the tests of algorithm
    /// sections that are literal at events.
    event: Option<VarId>,
    /// Each `pre` variable by its index in `previous` (extended as algorithm sections need it).
    previous_index: FxHashMap<VarId, usize>,
    /// The `pre` variable of each expression an algorithm section reads literally at events.
    literal_previous: FxHashMap<ExprId, VarId>,
}

impl Extractor {
    /// The variable holding `pre(v)` of discrete variable `v`: the value before the current pass
    /// of the event iteration, which starts as `v`'s start value. One per variable.
    fn pre_of(&mut self, dae: &mut Dae<IndexOne>, v: VarId, span: Span) -> VarId {
        if let Some(&var) = self.pre_var.get(&v) {
            return var;
        }
        let number = self.previous.len() + 1;
        let (ty, start) = (dae.flat.var(v).ty, dae.flat.var(v).attributes.start);
        let name = dae.flat.var(v).name.clone();
        let var = dae.add_relation_variable(
            format!("$pre{number}"),
            format!("pre({name}), the value before the event"),
            span,
        );
        if let Some(variable) = dae.flat.variables.last_mut() {
            variable.ty = ty;
            variable.attributes = eqm_ir::flat::Attributes::new(eqm_ir::flat::AttributeValues {
                start,
                ..Default::default()
            });
        }
        let expr = dae.flat.exprs.var(v);
        self.previous.push(Previous {
            var,
            expr,
            span,
            settled_at_start: false,
            left_limit: false,
            integer_part: false,
        });
        self.pre_var.insert(v, var);
        var
    }

    /// The variable holding `pre(v)` of a discrete-time variable `v` that an ordinary equation
    /// defines (a Boolean `y = u and not pre(y)`): the value `v` had before the current pass of
    /// the event iteration, as for a when-assigned variable (the value just before the event
    /// would undo, in the next pass, what a pass that fired set), but at the start `v`'s value
    /// at the initial point unless an initial equation names it. `edge(v)` and `change(v)` read
    /// the same variable. One per variable.
    fn pass_value_of(&mut self, dae: &mut Dae<IndexOne>, v: VarId, span: Span) -> VarId {
        if let Some(&var) = self.pass_value.get(&v) {
            return var;
        }
        let number = self.previous.len() + 1;
        let (ty, name) = (dae.flat.var(v).ty, dae.flat.var(v).name.clone());
        let var = dae.add_relation_variable(
            format!("$pre{number}"),
            format!("pre({name}), the value before the event"),
            span,
        );
        if let Some(variable) = dae.flat.variables.last_mut() {
            variable.ty = ty;
        }
        let expr = dae.flat.exprs.var(v);
        self.previous.push(Previous::settled(var, expr, span));
        self.pass_value.insert(v, var);
        var
    }

    /// The variable holding `pre(e)` of a continuous-time expression `e`: its left limit, the
    /// value just before the event, taken when the event starts and held through its passes
    /// (so a relation that changes at the same instant, such as a time event coinciding with a
    /// sample, does not change it). One per expression.
    fn left_limit_of(&mut self, dae: &mut Dae<IndexOne>, e: ExprId, span: Span) -> VarId {
        if let Some(&var) = self.left_limit.get(&e) {
            return var;
        }
        let number = self.previous.len() + 1;
        let text = dae.flat.expr_text(e);
        let var = dae.add_relation_variable(
            format!("$pre{number}"),
            format!("pre({text}), the value just before the event"),
            span,
        );
        if let Some(variable) = dae.flat.variables.last_mut() {
            variable.ty = eqm_ir::flat::ScalarType::Real;
        }
        self.previous.push(Previous {
            var,
            expr: e,
            span,
            settled_at_start: true,
            left_limit: true,
            integer_part: false,
        });
        self.left_limit.insert(e, var);
        var
    }

    /// The rewrite of an event operator (`sample`, `initial`, `terminal`, `edge`, `change`)
    /// with its arguments mapped by `map`; `None` for any other node.
    fn operator(
        &mut self,
        dae: &mut Dae<IndexOne>,
        e: ExprId,
        map: &FxHashMap<ExprId, ExprId>,
        span: Span,
    ) -> Option<ExprId> {
        let Node::Call(Callee::Builtin(b), args) = dae.exprs().get(e).clone() else {
            return None;
        };
        let arg = |k: usize| args.get(k).map(|a| map.get(a).copied().unwrap_or(*a));
        match (b, arg(0), arg(1)) {
            (Builtin::Sample, Some(start), Some(interval)) => {
                let number = self.samples.len() + 1;
                let text = format!(
                    "sample({}, {})",
                    dae.flat.expr_text(start),
                    dae.flat.expr_text(interval)
                );
                let var = dae.add_relation_variable(format!("$sample{number}"), text, span);
                self.samples.push(Sample {
                    var,
                    start,
                    interval,
                    span,
                });
                Some(dae.flat.exprs.var(var))
            }
            (Builtin::Delay, Some(expr), Some(delay)) => {
                let max = arg(2);
                let number = self.delays.len() + 1;
                let text = match max {
                    Some(max) => format!(
                        "delay({}, {}, {})",
                        dae.flat.expr_text(expr),
                        dae.flat.expr_text(delay),
                        dae.flat.expr_text(max)
                    ),
                    None => format!("delay({}, {})", dae.flat.expr_text(expr), dae.flat.expr_text(delay)),
                };
                let var = dae.add_relation_variable(format!("$delay{number}"), text, span);
                if let Some(variable) = dae.flat.variables.last_mut() {
                    variable.ty = eqm_ir::flat::ScalarType::Real;
                }
                self.delays.push(Delay {
                    var,
                    expr,
                    delay,
                    max,
                    span,
                });
                self.moving.insert(var);
                Some(dae.flat.exprs.var(var))
            }
            (Builtin::SpatialDistribution, ..) => {
                let args: Vec<ExprId> = (0..args.len()).filter_map(arg).collect();
                Some(self.spatial_output(dae, &args, span))
            }
            (Builtin::Initial | Builtin::Terminal, ..) => {
                let (slot, name) = if b == Builtin::Initial {
                    (&mut self.initial, "$initial")
                } else {
                    (&mut self.terminal, "$terminal")
                };
                let var = *slot.get_or_insert_with(|| {
                    dae.add_relation_variable(name.to_string(), format!("{}()", b.info().name), span)
                });
                Some(dae.flat.exprs.var(var))
            }
            (Builtin::Pre, Some(a), None) => {
                // `pre(v)` of a discrete variable reads a slot the event iteration sets to `v`
                // between passes, so that within a pass it is the value before it, whatever the
                // order of the assignments (`a = pre(b); b = pre(a);` swaps).
                if let Node::Var(v) = *dae.exprs().get(a)
                    && dae.kinds.get(v.0 as usize) == Some(&VarKind::Discrete)
                {
                    let var = self.pre_of(dae, v, span);
                    return Some(dae.flat.exprs.var(var));
                }
                if let Node::Var(v) = *dae.exprs().get(a)
                    && is_discrete_time_var(dae, v)
                {
                    let var = self.pass_value_of(dae, v, span);
                    return Some(dae.flat.exprs.var(var));
                }
                // `pre(e)` of a continuous-time expression is its left limit at the event.
                // Parameters and constants are their own left limit.
                let mut vars = Vec::new();
                dae.flat.exprs.vars_in(a, &mut vars);
                let continuous = vars
                    .iter()
                    .any(|v| matches!(dae.kinds.get(v.0 as usize), Some(VarKind::State | VarKind::Algebraic)));
                if !continuous {
                    return None;
                }
                let var = self.left_limit_of(dae, a, span);
                Some(dae.flat.exprs.var(var))
            }
            (Builtin::Edge | Builtin::Change, Some(a), None) => {
                let shared = match *dae.exprs().get(a) {
                    Node::Var(v) if is_discrete_time_var(dae, v) => Some(self.pass_value_of(dae, v, span)),
                    _ => None,
                };
                if let Some(var) = shared {
                    let before = dae.flat.exprs.var(var);
                    return Some(if b == Builtin::Edge {
                        let not_before = dae.flat.exprs.unary(UnOp::Not, before);
                        dae.flat.exprs.binary(BinOp::And, a, not_before)
                    } else {
                        dae.flat.exprs.binary(BinOp::Ne, a, before)
                    });
                }
                let number = self.previous.len() + 1;
                let var = dae.add_relation_variable(
                    format!("$pre{number}"),
                    format!("the value of `{}` before the event", dae.flat.expr_text(a)),
                    span,
                );
                self.previous.push(Previous::settled(var, a, span));
                let before = dae.flat.exprs.var(var);
                Some(if b == Builtin::Edge {
                    // edge(e) = e and not pre(e)
                    let not_before = dae.flat.exprs.unary(UnOp::Not, before);
                    dae.flat.exprs.binary(BinOp::And, a, not_before)
                } else {
                    // change(e) = e <> pre(e)
                    dae.flat.exprs.binary(BinOp::Ne, a, before)
                })
            }
            _ => None,
        }
    }

    /// The rewrite of a relation or of `sign`, `min`, `max` that can change between
    /// events, with its arguments mapped by `map`; `None` for any other node.
    fn event_math(
        &mut self,
        dae: &mut Dae<IndexOne>,
        e: ExprId,
        map: &FxHashMap<ExprId, ExprId>,
        span: Span,
    ) -> Option<ExprId> {
        let m = |c: &ExprId| map.get(c).copied().unwrap_or(*c);
        match dae.exprs().get(e).clone() {
            Node::Binary(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), a, b) => {
                let (a, b) = (m(&a), m(&b));
                if is_discrete(dae, &self.moving, a) && is_discrete(dae, &self.moving, b) {
                    return None;
                }
                let test = match op {
                    BinOp::Lt => Test::Negative,
                    BinOp::Le => Test::NonPositive,
                    BinOp::Gt => Test::Positive,
                    _ => Test::NonNegative,
                };
                Some(self.relation(dae, a, b, test, span))
            }
            // `abs(a)` is, by Modelica's definition, `noEvent(if a >= 0 then a else -a)`:
            // it stays a call, evaluated literally, so a value that must not be negative
            // (`abs(b)^n` with a fractional `n`) never is, as it would be between a crossing
            // and the event a held relation waits for.
            Node::Call(Callee::Builtin(Builtin::Sign), args) if args.len() == 1 => {
                let a = m(&args[0]);
                if is_discrete(dae, &self.moving, a) {
                    return None;
                }
                let zero = dae.flat.exprs.real(0.0);
                // sign(a) = (a > 0) - (a < 0): both read one surface, and sign(0) is 0.
                let p = self.relation(dae, a, zero, Test::Positive, span);
                let n = self.relation(dae, a, zero, Test::Negative, span);
                Some(dae.flat.exprs.binary(BinOp::Sub, p, n))
            }
            Node::Call(
                Callee::Builtin(
                    b
                    @ (Builtin::Floor | Builtin::Ceil | Builtin::Integer | Builtin::Div | Builtin::Mod | Builtin::Rem),
                ),
                args,
            ) if !args.is_empty() => {
                let args: Vec<ExprId> = args.iter().map(m).collect();
                if args.iter().all(|a| is_discrete(dae, &self.moving, *a)) {
                    return None;
                }
                // The integer part is held between events (`$heldN`, recomputed at each pass of
                // the event iteration like the values `edge` compares with); the surfaces at the
                // integers around it generate the events where it jumps.
                let (argument, held_call) = match b {
                    Builtin::Floor | Builtin::Ceil | Builtin::Integer => {
                        (args[0], dae.flat.exprs.builtin(b, args.clone()))
                    }
                    _ => {
                        let quotient = dae.flat.exprs.binary(BinOp::Div, args[0], args[1]);
                        let inner = if b == Builtin::Mod {
                            Builtin::Floor
                        } else {
                            Builtin::Div
                        };
                        let call = if inner == Builtin::Floor {
                            dae.flat.exprs.builtin(Builtin::Floor, vec![quotient])
                        } else {
                            dae.flat.exprs.builtin(Builtin::Div, args.clone())
                        };
                        (quotient, call)
                    }
                };
                let number = self.previous.len() + 1;
                let text = dae.flat.expr_text(held_call);
                let var =
                    dae.add_relation_variable(format!("$held{number}"), format!("`{text}`, held between events"), span);
                if let Some(v) = dae.flat.variables.last_mut() {
                    v.ty = eqm_ir::flat::ScalarType::Real;
                }
                self.previous.push(Previous {
                    var,
                    expr: held_call,
                    span,
                    settled_at_start: true,
                    left_limit: false,
                    integer_part: true,
                });
                let held = dae.flat.exprs.var(var);
                let one = dae.flat.exprs.real(1.0);
                let below = dae.flat.exprs.binary(BinOp::Sub, held, one);
                let above = dae.flat.exprs.binary(BinOp::Add, held, one);
                for boundary in [below, held, above] {
                    self.relation(dae, argument, boundary, Test::Positive, span);
                }
                Some(match b {
                    Builtin::Mod | Builtin::Rem => {
                        // mod(a, b) = a - floor(a/b)*b, rem(a, b) = a - div(a, b)*b
                        let product = dae.flat.exprs.binary(BinOp::Mul, held, args[1]);
                        dae.flat.exprs.binary(BinOp::Sub, args[0], product)
                    }
                    _ => held,
                })
            }
            Node::Call(Callee::Builtin(b @ (Builtin::Min | Builtin::Max)), args) if args.len() == 2 => {
                let (a, c) = (m(&args[0]), m(&args[1]));
                if is_discrete(dae, &self.moving, a) && is_discrete(dae, &self.moving, c) {
                    return None;
                }
                // The kink where `a` and `c` cross is an event (so that no step integrates
                // across it), but the value is the function itself, not a branch frozen at the
                // last event: `min` and `max` are continuous, and the branch a step starts in
                // can leave its domain before the event is found (`sqrt(max(0, h))` with
                // `h` just below zero inside the step that crosses it).
                let test = if b == Builtin::Min {
                    Test::NonPositive
                } else {
                    Test::NonNegative
                };
                self.relation(dae, a, c, test, span);
                Some(dae.flat.exprs.builtin(b, vec![a, c]))
            }
            _ => None,
        }
    }

    /// The node of the relation variable for `a test-compared-with b`, made on first use.
    fn relation(&mut self, dae: &mut Dae<IndexOne>, a: ExprId, b: ExprId, test: Test, span: Span) -> ExprId {
        let d = if dae.exprs().literal(b) == Some(0.0) {
            a
        } else {
            dae.flat.exprs.binary(BinOp::Sub, a, b)
        };
        if let Some(&node) = self.relation_of.get(&(d, test)) {
            return node;
        }
        // The same comparison written another way (`time < T0 + Tr` beside the derivative's
        // `time < Tr + T0`) reads the relation made first, so that the two cannot disagree
        // and a program of another form of the model (the initialization of the embedding
        // form) links it by its description, which is the canonical key.
        let key = canonical::relation_key(&dae.flat, d, test);
        if let Some(&node) = self.relation_by_key.get(&key) {
            return node;
        }
        let symbol = match test {
            Test::Positive => ">",
            Test::NonNegative => ">=",
            Test::Negative => "<",
            Test::NonPositive => "<=",
        };
        let text = format!("{} {symbol} 0", dae.flat.expr_text(d));
        let k = match self.surface_of.get(&d) {
            Some(&k) => k,
            None => {
                // `time` against a value that changes only at events (a parameter, or a
                // discrete-time expression such as the start `T0` of a pulse's period) crosses at a
                // time known once the last event is over: a time event, scheduled exactly (as
                // Modelica allows), not a crossing located within a tolerance.
                let time_event = match (dae.exprs().get(a), dae.exprs().get(b)) {
                    (Node::Time, _) if is_discrete(dae, &self.moving, b) => Some(b),
                    _ => None,
                };
                self.surfaces.push(Surface {
                    expr: d,
                    relations: Vec::new(),
                    span,
                    text: text.clone(),
                    time_event,
                });
                self.surface_of.insert(d, self.surfaces.len() - 1);
                self.surfaces.len() - 1
            }
        };
        let number = self.relation_of.len() + 1;
        let v = dae.add_relation_variable(format!("$rel{number}"), format!("the relation `{key}`"), span);
        self.surfaces[k].relations.push((v, test));
        let node = dae.flat.exprs.var(v);
        self.relation_of.insert((d, test), node);
        self.relation_by_key.insert(key, node);
        node
    }
}
