//! Coefficients that are zero by the parameters' values: an unknown multiplied by a parameter
//! expression whose value is known at translation and is exactly zero does not occur in its
//! equation.
//!
//! Input: a [`FlatModel`] and the values of its parameters and constants that are known (a
//! function from a variable to its value, `None` when it is not known here). Output: the same
//! model with every such product in its equations replaced by `0`, the parameters those
//! coefficients read (and, through their bindings, every parameter and constant they depend on)
//! added to [`FlatModel::structural`], and a [`DroppedOccurrence`] per equation that lost an
//! unknown, for `check` and `explain`. `J*a = f1 + f2` with `J = 0` so becomes `0 = f1 + f2`:
//! the matching, index reduction, sorting and tearing see no `a` there, and `a` is determined by
//! another equation, as Modelica tools evaluate such parameters and simplify.
//!
//! A parameter is known at translation when it is a constant or a parameter with a binding,
//! not `fixed = false`, not an external object, and every variable its binding reads is known
//! the same way (records built by functions of such parameters included: their values come from
//! the caller, which runs the parameter program). A parameter without a binding, one the
//! initialization computes (`fixed = false`) and anything that reads one stay tunable: their
//! products are kept, and a value that makes them zero during a run is `E0704` as before.
//!
//! Only the model's equations are rewritten: initial equations, when-clauses, algorithms and
//! assertions keep their expressions (they do not take part in the matching of the
//! simulation's unknowns). A quotient with a zero numerator is not simplified (the denominator
//! may be zero); a coefficient that is a literal `0` written in the model is treated like a
//! parameter of value 0 but makes nothing structural.

use eqm_diag::source::Span;
use eqm_ir::builtins::BuiltinKind;
use eqm_ir::expr::{BinOp, Callee, ExprId, FxHashMap, FxHashSet, Node, VarId};
use eqm_ir::flat::{FlatModel, Variability};

/// An equation that lost unknowns because a coefficient of theirs is zero at translation.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedOccurrence {
    /// The equation's index in the flat model's equations.
    pub equation: usize,
    pub span: Span,
    /// The equation as it was before, as text.
    pub before: String,
    /// The unknowns that no longer occur in the equation, by name, in order of first
    /// occurrence.
    pub unknowns: Vec<String>,
    /// The zero coefficients, as text.
    pub coefficients: Vec<String>,
    /// The parameters and constants the zero coefficients read directly, by name.
    pub parameters: Vec<String>,
}

impl DroppedOccurrence {
    /// One sentence: which unknowns left which equation because of which parameters.
    pub fn describe(&self) -> String {
        let quote = |names: &[String]| names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        let parameters = if self.parameters.is_empty() {
            String::new()
        } else {
            format!(" by the value of {}", quote(&self.parameters))
        };
        let (coefficient, it) = match (self.coefficients.len(), self.unknowns.len()) {
            (1, 1) => ("its coefficient", "it"),
            (1, _) => ("their coefficient", "them"),
            (_, 1) => ("its coefficients", "it"),
            _ => ("their coefficients", "them"),
        };
        format!(
            "{} dropped from `{}`: {coefficient} {} is 0 at translation{parameters}, so the structural analysis does not count {it} there",
            quote(&self.unknowns),
            self.before,
            quote(&self.coefficients),
        )
    }
}

/// What [`drop_zero_coefficients`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZeroCoefficients {
    /// The equations that lost unknowns, in equation order.
    pub dropped: Vec<DroppedOccurrence>,
    /// How many products were replaced by `0` (also those whose unknowns still occur elsewhere
    /// in their equation).
    pub rewritten: usize,
    /// How many products had a coefficient known at translation whose value the given values
    /// did not settle (a parameter computed by a function, say): a caller that can compute
    /// every parameter (by running the parameter program) may call again with those values.
    pub unresolved: usize,
}

/// Per variable: whether its value is known at translation (see the module documentation).
/// Iterative over the bindings, with a guard against cyclic bindings (a cycle is not known).
pub fn known_at_translation(flat: &FlatModel) -> Vec<bool> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let n = flat.variables.len();
    let mut state = vec![NEW; n];
    let mut known = vec![false; n];
    let mut objects = vec![false; n];
    for o in &flat.objects {
        objects[o.0 as usize] = true;
    }
    let candidate = |v: usize| {
        let var = &flat.variables[v];
        matches!(var.variability, Variability::Parameter | Variability::Constant)
            && var.binding.is_some()
            && var.attributes.fixed != Some(false)
            && !objects[v]
    };
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut reads = Vec::new();
    for root in 0..n {
        stack.push((root, false));
        while let Some((v, expanded)) = stack.pop() {
            if state[v] == DONE || (state[v] == OPEN && !expanded) {
                continue;
            }
            let Some(binding) = flat.variables[v].binding.filter(|_| candidate(v)) else {
                state[v] = DONE;
                continue;
            };
            reads.clear();
            flat.exprs.vars_in(binding, &mut reads);
            if expanded {
                // A variable still open here is on a cycle through this binding.
                known[v] = reads.iter().all(|w| state[w.0 as usize] == DONE && known[w.0 as usize]);
                state[v] = DONE;
            } else {
                state[v] = OPEN;
                stack.push((v, true));
                stack.extend(
                    reads
                        .iter()
                        .filter(|w| state[w.0 as usize] == NEW)
                        .map(|w| (w.0 as usize, false)),
                );
            }
        }
    }
    known
}

/// Replaces, in every equation of `flat`, each product one of whose factors is known at
/// translation with value exactly zero and whose other factor reads a variable that changes
/// during the run, by `0`; see the module documentation. `value` gives the value of a variable
/// known at translation, or `None` when the caller does not have it (the product is then kept
/// and counted in [`ZeroCoefficients::unresolved`]).
// Long function: one bottom-up pass over the equations' nodes with its bookkeeping.
pub fn drop_zero_coefficients(flat: &mut FlatModel, value: &dyn Fn(VarId) -> Option<f64>) -> ZeroCoefficients {
    let known_vars = known_at_translation(flat);
    let varying_vars: Vec<bool> = flat
        .variables
        .iter()
        .map(|v| !matches!(v.variability, Variability::Parameter | Variability::Constant))
        .collect();
    let varying = |v: VarId| varying_vars[v.0 as usize];
    let arena = &flat.exprs;
    // Every node the equations reach, children before parents (a child's id is smaller).
    let mut seen = vec![false; arena.len()];
    let mut order = Vec::new();
    let mut stack: Vec<ExprId> = flat.equations.iter().flat_map(|e| [e.lhs, e.rhs]).collect();
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) {
            continue;
        }
        order.push(e);
        stack.extend(arena.children(e));
    }
    order.sort_unstable();
    // Per node reached: whether it is an expression known at translation, and whether it reads
    // a variable that changes during the run.
    let mut known: FxHashMap<ExprId, bool> = FxHashMap::default();
    let mut reads_varying: FxHashMap<ExprId, bool> = FxHashMap::default();
    // The products found zero, with the zero factor, and the number left unsettled.
    let mut zero_products: Vec<(ExprId, ExprId)> = Vec::new();
    let mut unresolved = 0;
    let mut values = Vec::new();
    for &e in &order {
        let node = arena.get(e);
        let children_known = arena.children(e).all(|c| known[&c]);
        let is_known = match node {
            Node::Real(_) | Node::Int(_) | Node::Bool(_) => true,
            Node::Var(v) => known_vars[v.0 as usize],
            Node::Unary(..) | Node::Binary(..) | Node::If(..) => children_known,
            Node::Call(Callee::Builtin(b), _) => b.info().kind != BuiltinKind::Operator && children_known,
            _ => false,
        };
        known.insert(e, is_known);
        let varies = match node {
            Node::Var(v) => varying(*v),
            _ => arena.children(e).any(|c| reads_varying[&c]),
        };
        reads_varying.insert(e, varies);
        let Node::Binary(BinOp::Mul, a, b) = *node else {
            continue;
        };
        for (factor, other) in [(a, b), (b, a)] {
            if !known[&factor] || !reads_varying[&other] {
                continue;
            }
            values.clear();
            arena.vars_in(factor, &mut values);
            let given: Option<Vec<f64>> = values.iter().map(|v| value(*v)).collect();
            let Some(given) = given else {
                unresolved += 1;
                continue;
            };
            let lookup = |v: VarId| values.iter().position(|w| *w == v).map_or(f64::NAN, |k| given[k]);
            if eqm_ir::symbolic::eval::evaluate(arena, factor, &lookup, f64::NAN) == Ok(0.0) {
                zero_products.push((e, factor));
                break;
            }
        }
    }
    if zero_products.is_empty() {
        return ZeroCoefficients {
            dropped: Vec::new(),
            rewritten: 0,
            unresolved,
        };
    }
    let zero_of: FxHashMap<ExprId, ExprId> = zero_products.iter().copied().collect();
    let mut dropped = Vec::new();
    let mut structural_roots = Vec::new();
    let mut rewritten = Vec::with_capacity(flat.equations.len());
    {
        let arena = &mut flat.exprs;
        let zero = arena.real(0.0);
        let replacement: FxHashMap<ExprId, ExprId> = zero_products.iter().map(|(p, _)| (*p, zero)).collect();
        for (index, eq) in flat.equations.iter().enumerate() {
            let mut factors = Vec::new();
            let sides = [eq.lhs, eq.rhs].map(|side| {
                // The zero products of this side, outermost first, for the description.
                let mut stack = vec![side];
                let mut local_seen = FxHashSet::default();
                while let Some(e) = stack.pop() {
                    if !local_seen.insert(e) {
                        continue;
                    }
                    match zero_of.get(&e) {
                        Some(f) => factors.push(*f),
                        None if reads_varying.get(&e).copied().unwrap_or(false) => stack.extend(arena.children(e)),
                        None => {}
                    }
                }
                if factors.is_empty() {
                    side
                } else {
                    eqm_ir::symbolic::substitute(arena, side, &|_, id| replacement.get(&id).copied())
                }
            });
            rewritten.push((index, sides, factors));
        }
    }
    let name = |v: VarId| flat.var(v).name.clone();
    let mut new_sides = Vec::new();
    for (index, [lhs, rhs], factors) in rewritten {
        if factors.is_empty() {
            continue;
        }
        new_sides.push((index, lhs, rhs));
        let eq = &flat.equations[index];
        let (mut before_vars, mut after_vars) = (Vec::new(), Vec::new());
        for side in [eq.lhs, eq.rhs] {
            flat.exprs.vars_in(side, &mut before_vars);
        }
        for side in [lhs, rhs] {
            flat.exprs.vars_in(side, &mut after_vars);
        }
        let after_vars: FxHashSet<VarId> = after_vars.into_iter().collect();
        let unknowns: Vec<String> = before_vars
            .iter()
            .filter(|v| varying(**v) && !after_vars.contains(v))
            .map(|v| name(*v))
            .collect();
        let display = |e: ExprId| flat.exprs.display(e, &|v| name(v));
        let mut parameters = Vec::new();
        for f in &factors {
            flat.exprs.vars_in(*f, &mut parameters);
            structural_roots.push(*f);
        }
        if !unknowns.is_empty() {
            dropped.push(DroppedOccurrence {
                equation: index,
                span: eq.span,
                before: format!("{} = {}", display(eq.lhs), display(eq.rhs)),
                unknowns,
                coefficients: factors.iter().map(|f| display(*f)).collect(),
                parameters: parameters.iter().map(|v| name(*v)).collect(),
            });
        }
    }
    for (index, lhs, rhs) in new_sides {
        let eq = &mut flat.equations[index];
        eq.lhs = lhs;
        eq.rhs = rhs;
    }
    add_structural(flat, &structural_roots);
    ZeroCoefficients {
        dropped,
        rewritten: zero_products.len(),
        unresolved,
    }
}

/// Adds the variables `roots` read, and those their bindings read in turn, to the model's
/// structural parameters (kept sorted and unique).
fn add_structural(flat: &mut FlatModel, roots: &[ExprId]) {
    let mut seen = vec![false; flat.variables.len()];
    for v in &flat.structural {
        seen[v.0 as usize] = true;
    }
    let mut stack = Vec::new();
    for root in roots {
        flat.exprs.vars_in(*root, &mut stack);
    }
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut seen[v.0 as usize], true) {
            continue;
        }
        flat.structural.push(v);
        if let Some(b) = flat.var(v).binding {
            flat.exprs.vars_in(b, &mut stack);
        }
    }
    flat.structural.sort_unstable();
}
