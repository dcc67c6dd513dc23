//! Coefficients that are zero by the parameters' values: an unknown multiplied by a parameter
//! expression whose value is known at translation and is exactly zero does not occur in its
//! equation. Likewise an if-expression whose condition reads only constants and parameters that
//! are structural already (`Evaluate = true`) is the branch it chooses (`mu_r = if nonLinear
//! then f(B) else mu_rConst` with `nonLinear = false` is `mu_r = mu_rConst`): the unknowns of the
//! branch never taken do not occur in the equation. And an output of a user function's call that
//! is zero whatever its arguments that change during the run (`R.w[2] = e[2]*w` in the body of
//! `planarRotation(e, phi, w)` with `e[2] = 0`) is that zero: those arguments do not occur there.
//!
//! Input: a [`FlatModel`] and the values of its parameters and constants that are known (a
//! function from a variable to its value, `None` when it is not known here). Output: the same
//! model with every such product in its equations replaced by `0` and every such
//! if-expression by its chosen branch, the parameters those coefficients and conditions read (and, through their bindings, every parameter and constant they depend on)
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
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, FxHashMap, FxHashSet, Node, VarId};
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
    /// The conditions of if-expressions known at translation, as text, with their values.
    pub conditions: Vec<(String, bool)>,
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
            let shown = self.parameters.len().min(8);
            let more = match self.parameters.len() - shown {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!(" by the value of {}{more}", quote(&self.parameters[..shown]))
        };
        let it = if self.unknowns.len() == 1 { "it" } else { "them" };
        let mut reasons = Vec::new();
        if !self.coefficients.is_empty() {
            let (coefficient, is) = match (self.coefficients.len(), self.unknowns.len()) {
                (1, 1) => ("its coefficient", "is"),
                (1, _) => ("their coefficient", "is"),
                (_, 1) => ("its coefficients", "are"),
                _ => ("their coefficients", "are"),
            };
            reasons.push(format!("{coefficient} {} {is} 0", quote(&self.coefficients)));
        }
        for (condition, value) in &self.conditions {
            reasons.push(format!("the if-expression's condition `{condition}` is {value}"));
        }
        format!(
            "{} dropped from `{}`: {} at translation{parameters}, so the structural analysis does not count {it} there",
            quote(&self.unknowns),
            self.before,
            reasons.join(" and "),
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
    // A condition chooses its branch at translation only where every variable it reads is a
    // constant or a parameter already structural (`Evaluate = true`, a size): a condition on
    // another parameter stays a choice a run may change.
    let mut structural = vec![false; flat.variables.len()];
    for v in &flat.structural {
        structural[v.0 as usize] = true;
    }
    let arena = &flat.exprs;
    let fixed_by_translation = |c: ExprId, scratch: &mut Vec<VarId>| {
        scratch.clear();
        arena.vars_in(c, scratch);
        scratch
            .iter()
            .all(|v| structural[v.0 as usize] || flat.var(*v).variability == Variability::Constant)
    };
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
    // The if-expressions whose condition is known, with the condition and the chosen branch.
    let mut branch_choices: Vec<(ExprId, ExprId, ExprId, bool)> = Vec::new();
    let mut unresolved = 0;
    let mut values = Vec::new();
    let definitions = call_definitions(flat, &varying_vars);
    let mut evaluator = crate::function_zeros::PartialEvaluator::new(flat);
    let mut outputs_zero: FxHashMap<VarId, Option<Vec<ExprId>>> = FxHashMap::default();
    // Per zero factor that is a function's output: the arguments known at translation, whose
    // parameters become structural.
    let mut function_roots: FxHashMap<ExprId, Vec<ExprId>> = FxHashMap::default();
    // The calls some of whose further outputs are read: such a call stands for its first
    // output only where it is read as a value, so it is never replaced itself.
    let called_for_outputs: FxHashSet<ExprId> = order
        .iter()
        .filter_map(|&e| match *arena.get(e) {
            Node::CallOutput(call, _) => Some(call),
            _ => None,
        })
        .collect();
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
        // An output of a call that is zero whatever the arguments that change during the run
        // (`R.w = e*w` in the body of `R = planarRotation(e, phi, w)`, with `e[2] = 0`): the
        // output is that zero, and those arguments do not occur there. Only arguments whose
        // values the flattening settled are used: a second pass is not asked for.
        if varies && let Some((call, function, k)) = call_output(arena, e, &called_for_outputs, &known_vars) {
            if let Some(roots) = zero_output(arena, &known_vars, value, &mut evaluator, call, function, k) {
                function_roots.insert(e, roots);
                zero_products.push((e, e));
            }
            continue;
        }
        if let Node::If(c, x, y) = *node {
            // An if-expression whose condition is known at translation is the branch it
            // chooses, as Modelica tools evaluate such parameters: the unknowns of the other
            // branch do not occur in the equation.
            if known[&c] && varies && fixed_by_translation(c, &mut values) {
                match settle(arena, c, value, &mut values) {
                    Some(v) => branch_choices.push((e, c, if v != 0.0 { x } else { y }, v != 0.0)),
                    None => unresolved += 1,
                }
            }
            continue;
        }
        let Node::Binary(BinOp::Mul, a, b) = *node else {
            continue;
        };
        for (factor, other) in [(a, b), (b, a)] {
            if !reads_varying[&other] {
                continue;
            }
            // A variable defined by a function's output that is zero whatever the arguments
            // that change during the run are.
            if let Node::Var(v) = *arena.get(factor)
                && let Some(&(call, function, k)) = definitions.get(&v)
            {
                let proven = match outputs_zero.get(&v) {
                    Some(proven) => proven.clone(),
                    None => {
                        let found = zero_output(arena, &known_vars, value, &mut evaluator, call, function, k);
                        unresolved += usize::from(found.is_none() && found_unsettled(arena, &known_vars, value, call));
                        outputs_zero.insert(v, found.clone());
                        found
                    }
                };
                if let Some(roots) = proven {
                    function_roots.insert(factor, roots);
                    zero_products.push((e, factor));
                    break;
                }
                continue;
            }
            if !known[&factor] {
                continue;
            }
            let Some(v) = settle(arena, factor, value, &mut values) else {
                unresolved += 1;
                continue;
            };
            if v == 0.0 {
                zero_products.push((e, factor));
                break;
            }
        }
    }
    if zero_products.is_empty() && branch_choices.is_empty() {
        return ZeroCoefficients {
            dropped: Vec::new(),
            rewritten: 0,
            unresolved,
        };
    }
    let rewritten = zero_products.len() + branch_choices.len();
    let dropped = rewrite(flat, &zero_products, &branch_choices, &reads_varying, &function_roots);
    ZeroCoefficients {
        dropped,
        rewritten,
        unresolved,
    }
}

/// The value of `e`, an expression known at translation, from the values `value` gives of
/// the variables it reads; `None` when one of them is not given. `values` is scratch space.
fn settle(
    arena: &eqm_ir::expr::ExprArena,
    e: ExprId,
    value: &dyn Fn(VarId) -> Option<f64>,
    values: &mut Vec<VarId>,
) -> Option<f64> {
    values.clear();
    arena.vars_in(e, values);
    let given: Vec<f64> = values.iter().map(|v| value(*v)).collect::<Option<_>>()?;
    let lookup = |v: VarId| values.iter().position(|w| *w == v).map_or(f64::NAN, |k| given[k]);
    eqm_ir::symbolic::eval::evaluate(arena, e, &lookup, f64::NAN).ok()
}

/// Why a node of an equation goes: a product with a zero coefficient, or an if-expression
/// whose condition is known, with the branch it chooses and the condition's value.
#[derive(Clone, Copy)]
enum Settled {
    Zero {
        factor: ExprId,
    },
    Branch {
        condition: ExprId,
        chosen: ExprId,
        value: bool,
    },
}

/// Rewrites the equations of `flat`: each of `zero_products` (product, zero factor) becomes
/// `0` and each of `branch_choices` (if-expression, condition, chosen branch, the
/// condition's value) its chosen
/// branch, rewritten in turn. Adds the parameters the coefficients and conditions read to the
/// structural ones and returns the equations that lost unknowns.
// Long function: the rewriting and the description of each equation it changed.
fn rewrite(
    flat: &mut FlatModel,
    zero_products: &[(ExprId, ExprId)],
    branch_choices: &[(ExprId, ExprId, ExprId, bool)],
    reads_varying: &FxHashMap<ExprId, bool>,
    function_roots: &FxHashMap<ExprId, Vec<ExprId>>,
) -> Vec<DroppedOccurrence> {
    let mut settled: FxHashMap<ExprId, Settled> = zero_products
        .iter()
        .map(|&(p, factor)| (p, Settled::Zero { factor }))
        .collect();
    settled.extend(branch_choices.iter().map(|&(e, condition, chosen, value)| {
        (
            e,
            Settled::Branch {
                condition,
                chosen,
                value,
            },
        )
    }));
    let varying =
        |flat: &FlatModel, v: VarId| !matches!(flat.var(v).variability, Variability::Parameter | Variability::Constant);
    let mut structural_roots = Vec::new();
    let mut rewritten = Vec::with_capacity(flat.equations.len());
    {
        let arena = &mut flat.exprs;
        let zero = arena.real(0.0);
        // The replacement of every settled node, children before parents (a child's id is
        // smaller), so a chosen branch is rewritten with the replacements of its own nodes.
        let mut ordered: Vec<ExprId> = settled.keys().copied().collect();
        ordered.sort_unstable();
        let mut replacement: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        for e in ordered {
            let r = match settled[&e] {
                Settled::Zero { .. } => zero,
                Settled::Branch { chosen, .. } => {
                    eqm_ir::symbolic::substitute(arena, chosen, &|_, id| replacement.get(&id).copied())
                }
            };
            replacement.insert(e, r);
        }
        for (index, eq) in flat.equations.iter().enumerate() {
            let mut reasons = Vec::new();
            let sides = [eq.lhs, eq.rhs].map(|side| {
                // The settled nodes of this side, outermost first, for the description: a
                // chosen branch is searched further, the other branch is not.
                let mut stack = vec![side];
                let mut local_seen = FxHashSet::default();
                while let Some(e) = stack.pop() {
                    if !local_seen.insert(e) {
                        continue;
                    }
                    match settled.get(&e) {
                        Some(s) => {
                            reasons.push(*s);
                            if let Settled::Branch { chosen, .. } = s {
                                stack.push(*chosen);
                            }
                        }
                        None if reads_varying.get(&e).copied().unwrap_or(false) => stack.extend(arena.children(e)),
                        None => {}
                    }
                }
                if reasons.is_empty() {
                    side
                } else {
                    eqm_ir::symbolic::substitute(arena, side, &|_, id| replacement.get(&id).copied())
                }
            });
            rewritten.push((index, sides, reasons));
        }
    }
    let name = |v: VarId| flat.var(v).name.clone();
    let mut dropped = Vec::new();
    let mut new_sides = Vec::new();
    for (index, [lhs, rhs], reasons) in rewritten {
        if reasons.is_empty() {
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
        let mut unknowns: Vec<String> = Vec::new();
        for v in before_vars
            .iter()
            .filter(|v| varying(flat, **v) && !after_vars.contains(v))
        {
            if !unknowns.contains(&name(*v)) {
                unknowns.push(name(*v));
            }
        }
        let display = |e: ExprId| flat.exprs.display(e, &|v| name(v));
        let (mut parameters, mut coefficients, mut conditions) = (Vec::new(), Vec::new(), Vec::new());
        for reason in &reasons {
            let root = match *reason {
                Settled::Zero { factor } if function_roots.contains_key(&factor) => {
                    coefficients.push(display(factor));
                    for &root in &function_roots[&factor] {
                        flat.exprs.vars_in(root, &mut parameters);
                        structural_roots.push(root);
                    }
                    continue;
                }
                Settled::Zero { factor } => {
                    coefficients.push(display(factor));
                    factor
                }
                Settled::Branch { condition, value, .. } => {
                    conditions.push((display(condition), value));
                    condition
                }
            };
            flat.exprs.vars_in(root, &mut parameters);
            structural_roots.push(root);
        }
        if !unknowns.is_empty() {
            dropped.push(DroppedOccurrence {
                equation: index,
                span: eq.span,
                before: format!("{} = {}", display(eq.lhs), display(eq.rhs)),
                unknowns,
                coefficients,
                conditions,
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
    dropped
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

/// Per variable that changes during the run and is defined by an output of a user function
/// (`v = f(...)` or `v = f(...).output3`, either side): the call, the function and the output.
fn call_definitions(flat: &FlatModel, varying: &[bool]) -> FxHashMap<VarId, (ExprId, FuncId, usize)> {
    let arena = &flat.exprs;
    let mut definitions = FxHashMap::default();
    for eq in &flat.equations {
        for (var_side, call_side) in [(eq.lhs, eq.rhs), (eq.rhs, eq.lhs)] {
            let Node::Var(v) = *arena.get(var_side) else { continue };
            if !varying[v.0 as usize] {
                continue;
            }
            let (call, k) = match *arena.get(call_side) {
                Node::Call(Callee::User(_), _) => (call_side, 0),
                Node::CallOutput(call, k) => (call, k as usize),
                _ => continue,
            };
            if let Node::Call(Callee::User(f), _) = arena.get(call) {
                definitions.insert(v, (call, *f, k));
            }
        }
    }
    definitions
}

/// Whether `e` reads nothing but variables known at translation (no `time`, no function
/// call other than a builtin function).
fn known_expr(arena: &eqm_ir::expr::ExprArena, e: ExprId, known_vars: &[bool]) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let ok = match arena.get(e) {
            Node::Real(_) | Node::Int(_) | Node::Bool(_) => true,
            Node::Var(v) => known_vars[v.0 as usize],
            Node::Unary(..) | Node::Binary(..) | Node::If(..) => true,
            Node::Call(Callee::Builtin(b), _) => b.info().kind != BuiltinKind::Operator,
            _ => false,
        };
        if !ok {
            return false;
        }
        stack.extend(arena.children(e));
    }
    true
}

/// The call, its function and the output a node reads: an output of a user function's call
/// (`f(x).output2`), or the call itself for its first output when no further output of it is
/// read anywhere; only a call with an argument known at translation, which could decide it.
fn call_output(
    arena: &eqm_ir::expr::ExprArena,
    e: ExprId,
    called_for_outputs: &FxHashSet<ExprId>,
    known_vars: &[bool],
) -> Option<(ExprId, FuncId, usize)> {
    let (call, k) = match *arena.get(e) {
        Node::CallOutput(call, k) => (call, k as usize),
        Node::Call(Callee::User(_), _) if !called_for_outputs.contains(&e) => (e, 0),
        _ => return None,
    };
    match arena.get(call) {
        Node::Call(Callee::User(f), args) if args.iter().any(|&a| known_expr(arena, a, known_vars)) => {
            Some((call, *f, k))
        }
        _ => None,
    }
}

/// Output `k` of `call` (of `function`) when the partial evaluation proves it zero with the
/// arguments known at translation at their values and every other argument unknown: those
/// known arguments. `None` when it is not proven (or an argument's value is not given).
fn zero_output(
    arena: &eqm_ir::expr::ExprArena,
    known_vars: &[bool],
    value: &dyn Fn(VarId) -> Option<f64>,
    evaluator: &mut crate::function_zeros::PartialEvaluator<'_>,
    call: ExprId,
    function: FuncId,
    k: usize,
) -> Option<Vec<ExprId>> {
    let Node::Call(_, args) = arena.get(call) else {
        return None;
    };
    let mut values = Vec::with_capacity(args.len());
    let mut roots = Vec::new();
    let mut scratch = Vec::new();
    for &a in args.iter() {
        if known_expr(arena, a, known_vars) {
            values.push(Some(settle(arena, a, value, &mut scratch)?));
            roots.push(a);
        } else {
            values.push(None);
        }
    }
    let outputs = evaluator.outputs(function, &values)?;
    (outputs.get(k).copied().flatten() == Some(0.0)).then_some(roots)
}

/// Whether an argument of `call` known at translation has no value from `value` (a caller that
/// computes every parameter may then settle it).
fn found_unsettled(
    arena: &eqm_ir::expr::ExprArena,
    known_vars: &[bool],
    value: &dyn Fn(VarId) -> Option<f64>,
    call: ExprId,
) -> bool {
    let Node::Call(_, args) = arena.get(call) else {
        return false;
    };
    let mut scratch = Vec::new();
    args.iter()
        .any(|&a| known_expr(arena, a, known_vars) && settle(arena, a, value, &mut scratch).is_none())
}
