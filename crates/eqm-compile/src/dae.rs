//! DAE lowering: the flat model becomes a differential-algebraic system with classified
//! variables.
//!
//! Input: a [`FlatModel`]. Output: a [`Dae`] in the [`Lowered`] stage: every variable
//! classified (state, algebraic, discrete, parameter, constant), the continuous equations
//! `lhs = rhs` each with its origin and span. The type of a DAE names its stage, and each later
//! pass consumes one stage and returns the next, carrying in the stage what it adds (the state
//! choice of index reduction, the event set of event extraction). A variable is a state when it
//! appears differentiated (`der(x)`); `der` of an expression (`der(x + y)`)
//! becomes a new algebraic variable with its defining equation, so that afterwards `der` is
//! only applied to variables; `der` of a parameter or a discrete variable is 0.
//!
//! This stage deliberately does not simplify, eliminate aliases or sort: see `alias` and
//! `plan`. When-clauses, initial equations, algorithm sections and assertions are kept in
//! the flat model and read from there by later stages.

use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprArena, ExprId, Node, VarId};
use eqm_ir::flat::{self, FlatModel, ModelSymbols, ScalarType, Variability};

/// What a variable is to the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VarKind {
    /// Appears differentiated: integrated by the solver (before index reduction).
    State,
    /// Determined by the equations at each instant.
    Algebraic,
    /// Changes only at events and is not solved from the continuous equations: assigned in a
    /// when-clause or an algorithm, declared `discrete`, a String, or a relation or event value
    /// the compiler introduced. (An Integer or Boolean defined by an ordinary equation is
    /// `Algebraic`.)
    Discrete,
    Parameter,
    Constant,
}

/// Where a DAE equation comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// An equation of the flat model, with its index there.
    Flat { index: u32, origin: flat::Origin },
    /// `v = e` introduced for `der(e)` of an expression.
    DerivativeArgument { var: VarId },
    /// The time derivative of equation `of` (an index into the DAE's equations), created by
    /// index reduction; `root` is the original equation and `order` how often it was
    /// differentiated to get this one.
    Differentiated { of: u32, root: u32, order: u32 },
    /// An initial equation of the flat model, with its index there.
    Initial { index: u32, origin: flat::Origin },
    /// `x = start` for a variable with `fixed = true`.
    FixedStart { var: VarId },
    /// `x = start` for a state whose start value the initialization had to assume fixed.
    AssumedStart { var: VarId },
    /// `v = pre(v)` for a discrete variable the initial equations determine: its when-clauses
    /// are not active during the initialization.
    HeldAtStart { var: VarId },
    /// `v = e` of a when-clause on `initial()`, active during the initialization (or
    /// `x = e` of a `reinit(x, e)` there).
    ActiveAtStart { var: VarId },
    /// `h = integer(e)` for an integer part held between events whose argument reads a
    /// delayed value: the initialization computes it from the delayed expression.
    IntegerPartAtStart { var: VarId },
    /// `p = binding` of a parameter the initialization solves for (`fixed = false`, or a
    /// binding that reads such a parameter).
    Binding { var: VarId },
    /// `der(x) = x'` linking a state to its derivative when index reduction keeps both as
    /// states (`var` is the variable standing for `x'`).
    DerivativeChain { var: VarId },
    /// `v = the value an algorithm section computes for its output v`: the section was part of
    /// an algebraic loop and is solved with it as equations.
    AlgorithmOutput { var: VarId },
}

impl Origin {
    /// Names this origin for listings and diagnostics.
    pub fn label(&self, symbols: &impl ModelSymbols) -> String {
        match self {
            Origin::Flat { origin, .. } => origin.label(symbols),
            Origin::DerivativeArgument { var } => {
                format!("introduced for der() of an expression ({})", symbols.var_name(*var))
            }
            Origin::Initial { origin, .. } => format!("initial equation of {}", origin.label(symbols)),
            Origin::FixedStart { var } => format!("fixed start value of {}", symbols.var_name(*var)),
            Origin::AssumedStart { var } => format!("start value of {}, assumed fixed", symbols.var_name(*var)),
            Origin::Binding { var } => format!(
                "binding of parameter {}, solved in the initialization",
                symbols.var_name(*var)
            ),
            Origin::IntegerPartAtStart { var } => format!(
                "{}, computed in the initialization from the delayed expression",
                symbols.var_name(*var)
            ),
            Origin::ActiveAtStart { var } => format!(
                "the equation of {} in a when-clause on initial(), active during the initialization",
                symbols.var_name(*var)
            ),
            Origin::HeldAtStart { var } => format!(
                "{0} = pre({0}): its when-clauses are not active during the initialization",
                symbols.var_name(*var)
            ),
            Origin::Differentiated { root, order, .. } => {
                let times = match order {
                    1 => "d/dt".to_string(),
                    n => format!("d^{n}/dt^{n}"),
                };
                format!("{times} of e{} (index reduction)", root + 1)
            }
            Origin::AlgorithmOutput { var } => format!(
                "the value of {} an algorithm section in an algebraic loop computes",
                symbols.var_name(*var)
            ),
            Origin::DerivativeChain { var } => {
                format!(
                    "{} is the derivative of a state and a state itself",
                    symbols.var_name(*var)
                )
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Equation {
    pub lhs: ExprId,
    pub rhs: ExprId,
    pub origin: Origin,
    pub span: Span,
}

/// The static state choice of the dummy-derivative form: the equations index reduction
/// differentiated and the variables that are no longer states because of it. The choice is
/// valid while those equations determine those variables (their Jacobian with respect to them
/// has full rank); a run checks that (`exec::ExecStateChoice`).
#[derive(Debug, Clone, Default)]
pub struct StateChoice {
    pub constraints: Vec<usize>,
    pub demoted: Vec<VarId>,
}

/// A DAE in stage `S`: the stage type says which passes have run and carries what they added
/// (see [`Lowered`], `alias::AliasesRemoved`, `index::IndexOne`, `events::Hybrid`), so that a
/// pass can only be given a DAE that the passes before it have prepared.
#[derive(Debug, Clone)]
pub struct Dae<S> {
    /// The flat model, extended with the variables this stage introduces; its arena holds every
    /// expression of the DAE.
    pub flat: FlatModel,
    /// The kind of each variable, indexed by `VarId`.
    pub kinds: Vec<VarKind>,
    pub equations: Vec<Equation>,
    /// The initial equations, rewritten like the equations by every stage (aliases substituted,
    /// index reduction's variables introduced); used only by the initialization problem.
    pub initial_equations: Vec<Equation>,
    /// For each variable removed by alias elimination, its value in terms of the remaining
    /// variables (`±representative` or a parameter expression); indexed by `VarId`.
    pub eliminated: Vec<Option<ExprId>>,
    /// Each variable whose start value another variable's start expression read, with the first
    /// such reader (sorted by the first): those expressions were rewritten with the start value
    /// the model gives (see [`crate::starts`]), so a start value set at run time would not
    /// reach them.
    pub start_readers: Vec<(VarId, VarId)>,
    /// What the passes so far added.
    pub stage: S,
}

/// The stage of a DAE right after lowering: variables classified, `der` applied to variables
/// only.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lowered;

impl<S> Dae<S> {
    /// This DAE in another stage: for the pass that produces that stage (and for tests that
    /// build a stage by hand; the pipeline never skips a pass).
    pub fn into_stage<T>(self, stage: T) -> Dae<T> {
        Dae {
            flat: self.flat,
            kinds: self.kinds,
            equations: self.equations,
            initial_equations: self.initial_equations,
            eliminated: self.eliminated,
            start_readers: self.start_readers,
            stage,
        }
    }

    pub fn kind(&self, v: VarId) -> VarKind {
        self.kinds[v.0 as usize]
    }

    pub fn exprs(&self) -> &ExprArena {
        &self.flat.exprs
    }

    /// The states in variable order.
    pub fn states(&self) -> impl Iterator<Item = VarId> + '_ {
        self.kinds
            .iter()
            .enumerate()
            .filter(|(_, k)| **k == VarKind::State)
            .map(|(i, _)| VarId(i as u32))
    }

    /// Whether `e` depends only on parameters, constants and literals (not on time or on a
    /// variable that changes during simulation).
    pub fn is_parameter_expression(&self, e: ExprId) -> bool {
        let arena = &self.flat.exprs;
        let mut stack = vec![e];
        while let Some(id) = stack.pop() {
            match arena.get(id) {
                Node::Var(v) if !matches!(self.kind(*v), VarKind::Parameter | VarKind::Constant) => return false,
                Node::Time
                | Node::Local(_)
                | Node::CallOutput(..)
                | Node::Call(Callee::User(_) | Callee::External(_), _) => {
                    return false;
                }
                Node::Call(Callee::Builtin(b), _) if b.info().kind == eqm_ir::builtins::BuiltinKind::Operator => {
                    return false;
                }
                _ => stack.extend(arena.children(id)),
            }
        }
        true
    }

    /// Adds a continuous Real variable `name` of `kind` that stands for a derivative of `base`
    /// (declared where `base` is, in its instance), as index reduction and the initialization
    /// problem introduce them.
    pub fn add_derivative_variable(&mut self, base: VarId, name: String, description: String, kind: VarKind) -> VarId {
        let b = self.flat.var(base);
        let variable = introduced_variable(name, b.instance, description, b.span);
        let v = VarId(self.flat.variables.len() as u32);
        self.flat.variables.push(variable);
        self.kinds.push(kind);
        self.eliminated.push(None);
        v
    }

    /// A new discrete Boolean variable that holds a frozen relation (`events`).
    pub fn add_relation_variable(&mut self, name: String, description: String, span: Span) -> VarId {
        let mut variable = introduced_variable(name, flat::InstanceId(0), description, span);
        variable.variability = Variability::Discrete;
        variable.ty = ScalarType::Boolean;
        let v = VarId(self.flat.variables.len() as u32);
        self.flat.variables.push(variable);
        self.kinds.push(VarKind::Discrete);
        self.eliminated.push(None);
        v
    }

    /// Per variable, whether it is a discrete variable an algorithm section assigns (initial
    /// sections too with `initial`): the section computes it like an algebraic unknown, from
    /// its value before the event, so it is an unknown of the causal plan (the section must
    /// run before the equations that read it).
    pub fn discrete_algorithm_outputs(&self, initial: bool) -> Vec<bool> {
        let mut out = vec![false; self.kinds.len()];
        for a in self.flat.algorithms.iter().filter(|a| initial || !a.initial) {
            for v in &a.outputs {
                if self.kinds[v.0 as usize] == VarKind::Discrete && self.eliminated[v.0 as usize].is_none() {
                    out[v.0 as usize] = true;
                }
            }
        }
        out
    }

    /// Replaces the nodes that are keys of `replacement` in every equation and initial equation,
    /// and in the conditions of the assertions, which read the same variables (`der(x)` of a
    /// state that became an algebraic variable is that variable there too).
    pub fn substitute_in_equations(&mut self, replacement: &eqm_ir::expr::FxHashMap<ExprId, ExprId>) {
        if replacement.is_empty() {
            return;
        }
        for eq in self.equations.iter_mut().chain(self.initial_equations.iter_mut()) {
            for side in [&mut eq.lhs, &mut eq.rhs] {
                *side =
                    eqm_ir::symbolic::substitute(&mut self.flat.exprs, *side, &|_, id| replacement.get(&id).copied());
            }
        }
        for a in &mut self.flat.assertions {
            a.condition = eqm_ir::symbolic::substitute(&mut self.flat.exprs, a.condition, &|_, id| {
                replacement.get(&id).copied()
            });
        }
    }

    /// Replaces the nodes that are keys of `replacement` in the statements of every algorithm
    /// section.
    pub fn substitute_in_algorithms(&mut self, replacement: &eqm_ir::expr::FxHashMap<ExprId, ExprId>) {
        if replacement.is_empty() {
            return;
        }
        let exprs = &mut self.flat.exprs;
        for a in &mut self.flat.algorithms {
            a.statements = a
                .statements
                .iter()
                .map(|s| {
                    s.map_exprs(&mut |e| eqm_ir::symbolic::substitute(exprs, e, &|_, id| replacement.get(&id).copied()))
                })
                .collect();
        }
    }

    /// Keeps the equations whose entry in `keep` is true (equations past its end are kept).
    pub fn retain_equations(&mut self, keep: &[bool]) {
        let mut index = 0;
        self.equations.retain(|_| {
            index += 1;
            keep.get(index - 1).copied().unwrap_or(true)
        });
    }

    /// A readable name of an equation's origin, for listings and diagnostics.
    pub fn origin_label(&self, origin: &Origin) -> String {
        origin.label(&self.flat)
    }

    /// The text `lhs = rhs` of an equation with full variable names.
    pub fn equation_text(&self, e: &Equation) -> String {
        format!("{} = {}", self.flat.expr_text(e.lhs), self.flat.expr_text(e.rhs))
    }
}

/// A continuous Real variable the compiler introduces (no attributes, no binding).
fn introduced_variable(name: String, instance: flat::InstanceId, description: String, span: Span) -> flat::Variable {
    flat::Variable {
        name,
        instance,
        variability: Variability::Continuous,
        ty: ScalarType::Real,
        causality: flat::Causality::None,
        role: flat::ConnectorRole::None,
        attributes: flat::Attributes::default(),
        binding: None,
        value: None,
        description: Some(description.into()),
        span,
    }
}

/// Lowers a flat model to a DAE.
pub fn lower(mut flat: FlatModel) -> Dae<Lowered> {
    derivatives_in_when_conditions(&mut flat);
    let mut kinds = variable_kinds(&flat);
    let (mut equations, mut initial_equations) = lowered_equations(&flat);
    let (contains_der, der_nodes) = derivative_nodes(&flat.exprs, &equations);
    let DerivativeRewrite {
        mut replacements,
        introduced,
    } = classify_derivatives(&mut flat, &mut kinds, der_nodes);
    if !replacements.is_empty() {
        replacements.sort_unstable();
        for e in equations.iter_mut().chain(initial_equations.iter_mut()) {
            for side in [&mut e.lhs, &mut e.rhs] {
                if contains_der.get(side.0 as usize).copied().unwrap_or(true) {
                    *side = eqm_ir::symbolic::substitute(&mut flat.exprs, *side, &|_, id| {
                        replacements
                            .binary_search_by_key(&id, |r| r.0)
                            .ok()
                            .map(|k| replacements[k].1)
                    });
                }
            }
        }
    }
    for (arg, v) in introduced {
        let var_node = flat.exprs.var(v);
        let span = flat.var(v).span;
        equations.push(Equation {
            lhs: var_node,
            rhs: arg,
            origin: Origin::DerivativeArgument { var: v },
            span,
        });
    }
    let eliminated = vec![None; kinds.len()];
    Dae {
        flat,
        kinds,
        equations,
        initial_equations,
        eliminated,
        start_readers: Vec::new(),
        stage: Lowered,
    }
}

/// `der(e)` in a when-condition, the value of a when-equation (`when sample(0, T) then w =
/// der(phi); end when;`), an assertion's condition, an initial equation or an expression of an algorithm section, of
/// an expression `e` of continuous Real variables that the equations do not
/// differentiate (`when der(v) < 0` with `v = sin(time)`): the expression reads a new variable
/// `$derN` defined by the equation `$derN = der(e)`, so that `e` is differentiated like any
/// derivative of the equations (index reduction differentiates the equations that determine it,
/// as for a dummy derivative). `der` of anything else there (a discrete variable, a parameter)
/// stays, and building the program reports it (`E0602`).
fn derivatives_in_when_conditions(flat: &mut FlatModel) {
    let arena = &flat.exprs;
    let mut seen = vec![false; arena.len()];
    let mut stack = Vec::new();
    // The expressions to search, each with the instance and span of the clause, assertion or
    // algorithm it stands in and the words for where, for the new variable's description.
    let mut roots: Vec<(ExprId, flat::InstanceId, Span, &'static str)> = Vec::new();
    for w in &flat.whens {
        for b in &w.branches {
            roots.push((b.condition, w.instance, w.span, "a when-condition"));
            for action in &b.actions {
                roots.extend(action.expr().map(|e| (e, w.instance, action.span(), "a when-equation")));
            }
        }
    }
    for a in &flat.assertions {
        roots.push((a.condition, a.instance, a.span, "an assertion"));
    }
    // An initial equation may differentiate a variable the equations do not (`der(w) = a0`
    // with `w = der(phi)`): the initialization needs that derivative, which the equations
    // determining `w` give once differentiated, as Modelica's initial equations may use `der`
    // of any continuous Real expression.
    for eq in &flat.initial_equations {
        let instance = match eq.origin {
            flat::Origin::Equation { instance } => instance,
            flat::Origin::Binding { var } => flat.var(var).instance,
            _ => flat::InstanceId(0),
        };
        roots.extend([eq.lhs, eq.rhs].map(|e| (e, instance, eq.span, "an initial equation")));
    }
    for a in &flat.algorithms {
        for s in &a.statements {
            s.for_each_expr(&mut |e, _| roots.push((e, a.instance, a.span, "an algorithm")));
        }
    }
    // Each `der` node found, with the place it is first found in.
    let mut found: Vec<(ExprId, flat::InstanceId, Span, &'static str)> = Vec::new();
    for (root, instance, span, place) in roots {
        stack.push(root);
        while let Some(e) = stack.pop() {
            if std::mem::replace(&mut seen[e.0 as usize], true) {
                continue;
            }
            if let Node::Call(Callee::Builtin(Builtin::Der), _) = arena.get(e) {
                found.push((e, instance, span, place));
                continue;
            }
            stack.extend(arena.children(e));
        }
    }
    if found.is_empty() {
        return;
    }
    // The `der` nodes of the equations, which lowering handles already.
    let mut in_equations = vec![false; arena.len()];
    let mut seen = vec![false; arena.len()];
    for eq in &flat.equations {
        stack.extend([eq.lhs, eq.rhs]);
        while let Some(e) = stack.pop() {
            if std::mem::replace(&mut seen[e.0 as usize], true) {
                continue;
            }
            if let Node::Call(Callee::Builtin(Builtin::Der), _) = arena.get(e) {
                in_equations[e.0 as usize] = true;
            }
            stack.extend(arena.children(e));
        }
    }
    let continuous = |flat: &FlatModel, e: ExprId| {
        let Node::Call(_, args) = flat.exprs.get(e) else {
            return false;
        };
        let mut vars = Vec::new();
        for a in args {
            flat.exprs.vars_in(*a, &mut vars);
        }
        !vars.is_empty()
            && vars.iter().all(|v| {
                let var = flat.var(*v);
                var.variability == Variability::Continuous
                    && var.ty == ScalarType::Real
                    && !flat.is_top_level_input(var)
            })
    };
    let mut replacement: eqm_ir::expr::FxHashMap<ExprId, ExprId> = Default::default();
    for (der, instance, span, place) in found {
        if in_equations[der.0 as usize] || !continuous(flat, der) {
            continue;
        }
        let text = flat.expr_text(der);
        let name = format!("$der{}", replacement.len() + 1);
        let v = VarId(flat.variables.len() as u32);
        flat.variables.push(introduced_variable(
            name,
            instance,
            format!("`{text}` in {place}"),
            span,
        ));
        let lhs = flat.exprs.var(v);
        flat.equations.push(flat::Equation {
            lhs,
            rhs: der,
            origin: flat::Origin::Equation { instance },
            span,
            array: None,
        });
        replacement.insert(der, lhs);
    }
    if replacement.is_empty() {
        return;
    }
    let replace = |exprs: &mut eqm_ir::expr::ExprArena, e: ExprId| {
        eqm_ir::symbolic::substitute(exprs, e, &|_, id| replacement.get(&id).copied())
    };
    for w in &mut flat.whens {
        for b in &mut w.branches {
            b.condition = replace(&mut flat.exprs, b.condition);
            for action in &mut b.actions {
                if let Some(e) = action.expr_mut() {
                    *e = replace(&mut flat.exprs, *e);
                }
            }
        }
    }
    for a in &mut flat.assertions {
        a.condition = replace(&mut flat.exprs, a.condition);
    }
    for eq in &mut flat.initial_equations {
        eq.lhs = replace(&mut flat.exprs, eq.lhs);
        eq.rhs = replace(&mut flat.exprs, eq.rhs);
    }
    for a in &mut flat.algorithms {
        for s in &mut a.statements {
            *s = s.map_exprs(&mut |e| replace(&mut flat.exprs, e));
        }
    }
}

/// The kind of every variable of `flat` before the states are known: parameters (the model's
/// own inputs among them), constants, discrete variables (those assigned at events), and
/// algebraic ones (Integer and Boolean variables defined by ordinary equations too).
fn variable_kinds(flat: &FlatModel) -> Vec<VarKind> {
    let mut kinds: Vec<VarKind> = flat
        .variables
        .iter()
        .map(|v| match (v.variability, v.ty) {
            // An input of the model itself holds the value given from outside (its start value
            // until the simulation core feeds signals), so it is a run-time parameter here.
            _ if flat.is_top_level_input(v) => VarKind::Parameter,
            (Variability::Parameter, _) => VarKind::Parameter,
            (Variability::Constant, _) => VarKind::Constant,
            (Variability::Discrete, _) | (_, ScalarType::Integer | ScalarType::Boolean | ScalarType::String) => {
                VarKind::Discrete
            }
            (Variability::Continuous, ScalarType::Real) => VarKind::Algebraic,
        })
        .collect();
    // Integer and Boolean variables that no when-clause and no algorithm assigns are defined by
    // ordinary equations (`Boolean b = x > 0.5;`, `k = 3;`): unknowns sorted with the rest,
    // computed by assignment. Their relations are frozen between events like every other, so
    // their values change only at events.
    let mut assigned_at_events = vec![false; kinds.len()];
    for w in &flat.whens {
        for b in &w.branches {
            for a in &b.actions {
                if let flat::WhenAction::Assign { var, .. } = a {
                    kinds[var.0 as usize] = VarKind::Discrete;
                    assigned_at_events[var.0 as usize] = true;
                }
            }
        }
    }
    for a in &flat.algorithms {
        for v in &a.outputs {
            assigned_at_events[v.0 as usize] = true;
        }
        // What a when-statement assigns changes only at events, like a when-equation's target.
        for v in &a.when_assigned {
            kinds[v.0 as usize] = VarKind::Discrete;
        }
    }
    for (i, v) in flat.variables.iter().enumerate() {
        if kinds[i] == VarKind::Discrete
            && !assigned_at_events[i]
            && matches!(v.variability, Variability::Continuous | Variability::Discrete)
            && matches!(v.ty, ScalarType::Integer | ScalarType::Boolean)
        {
            kinds[i] = VarKind::Algebraic;
        }
    }
    kinds
}

/// The equations and initial equations of `flat`, each with its origin.
fn lowered_equations(flat: &FlatModel) -> (Vec<Equation>, Vec<Equation>) {
    let equations: Vec<Equation> = flat
        .equations
        .iter()
        .enumerate()
        .map(|(i, e)| Equation {
            lhs: e.lhs,
            rhs: e.rhs,
            origin: Origin::Flat {
                index: i as u32,
                origin: e.origin.clone(),
            },
            span: e.span,
        })
        .collect();
    let initial_equations: Vec<Equation> = flat
        .initial_equations
        .iter()
        .enumerate()
        .map(|(i, e)| Equation {
            lhs: e.lhs,
            rhs: e.rhs,
            origin: Origin::Initial {
                index: i as u32,
                origin: e.origin.clone(),
            },
            span: e.span,
        })
        .collect();
    (equations, initial_equations)
}

/// Which arena nodes contain a `der(...)` call (by id), and the `der(...)` calls in the
/// continuous equations in id order, each with the span of the first equation found to hold it.
fn derivative_nodes(arena: &ExprArena, equations: &[Equation]) -> (Vec<bool>, Vec<(ExprId, Span)>) {
    // Children have smaller ids than parents, so one pass in id order suffices.
    let mut contains_der = vec![false; arena.len()];
    for i in 0..arena.len() {
        let id = ExprId(i as u32);
        let own = matches!(arena.get(id), Node::Call(Callee::Builtin(Builtin::Der), _));
        contains_der[i] = own || arena.children(id).any(|c| contains_der[c.0 as usize]);
    }

    // States: variables that appear as `der(v)` in a continuous equation.
    let mut stack = Vec::new();
    let mut seen = vec![false; arena.len()];
    let mut der_nodes: Vec<(ExprId, Span)> = Vec::new();
    for e in equations {
        for root in [e.lhs, e.rhs] {
            if !contains_der[root.0 as usize] {
                continue;
            }
            stack.push(root);
            while let Some(id) = stack.pop() {
                if seen[id.0 as usize] || !contains_der[id.0 as usize] {
                    continue;
                }
                seen[id.0 as usize] = true;
                if let Node::Call(Callee::Builtin(Builtin::Der), _) = arena.get(id) {
                    der_nodes.push((id, e.span));
                    continue;
                }
                stack.extend(arena.children(id));
            }
        }
    }
    der_nodes.sort_unstable_by_key(|d| d.0);
    (contains_der, der_nodes)
}

/// Makes the variable of each `der(v)` a state, and returns the replacements of the other
/// `der(...)` calls (sorted by node: `0` for the derivative of something constant between
/// events, `der(v)` of a new state `v = e` for `der(e)` of an expression) and the new states
/// with their expressions.
fn classify_derivatives(
    flat: &mut FlatModel,
    kinds: &mut Vec<VarKind>,
    der_nodes: Vec<(ExprId, Span)>,
) -> DerivativeRewrite {
    let mut introduced: Vec<(ExprId, VarId)> = Vec::new();
    let mut replacements: Vec<(ExprId, ExprId)> = Vec::new();
    for (node, span) in der_nodes {
        let Node::Call(_, args) = flat.exprs.get(node).clone() else {
            continue;
        };
        let Some(&arg) = args.first() else { continue };
        match *flat.exprs.get(arg) {
            Node::Var(v) => match kinds[v.0 as usize] {
                VarKind::Algebraic | VarKind::State => kinds[v.0 as usize] = VarKind::State,
                // A parameter, constant or discrete variable is constant between events.
                _ => replacements.push((node, flat.exprs.real(0.0))),
            },
            _ => {
                // `der(e)`: a new variable `v = e` makes `der(v)` a derivative of a variable.
                let v = VarId(flat.variables.len() as u32);
                let description = format!("der({}) of an expression", flat.expr_text(arg));
                let mut variable = introduced_variable(
                    format!("$der_arg{}", introduced.len() + 1),
                    flat::InstanceId(0),
                    description,
                    span,
                );
                // Its start value is the expression's at the start values of its operands (0
                // for an operand without one), not 0: `der(x*y)` starts at x0·y0.
                let zero = flat.exprs.real(0.0);
                let variables = &flat.variables;
                let start = eqm_ir::symbolic::substitute(&mut flat.exprs, arg, &|arena, id| match arena.get(id) {
                    Node::Var(u) => match kinds.get(u.0 as usize) {
                        Some(VarKind::Parameter | VarKind::Constant) => None,
                        _ => Some(variables[u.0 as usize].attributes.start.unwrap_or(zero)),
                    },
                    _ => None,
                });
                variable.attributes = flat::Attributes::new(flat::AttributeValues {
                    start: Some(start),
                    ..Default::default()
                });
                flat.variables.push(variable);
                kinds.push(VarKind::State);
                let var_node = flat.exprs.var(v);
                let new_der = flat.exprs.builtin(Builtin::Der, vec![var_node]);
                replacements.push((node, new_der));
                introduced.push((arg, v));
            }
        }
    }
    DerivativeRewrite {
        replacements,
        introduced,
    }
}

/// What becomes of the `der(...)` calls that are not the derivative of a state.
struct DerivativeRewrite {
    /// (node, replacement), sorted by node.
    replacements: Vec<(ExprId, ExprId)>,
    /// The new states `v = e` for `der(e)` of an expression: (the expression, `v`).
    introduced: Vec<(ExprId, VarId)>,
}
