//! Alias elimination: `a = b`, `a = -b` and `a = constant` are removed before matching, and two
//! unknowns equated with one expression (`v = e`, `w = e`) are made aliases (`w = v`) first.
//!
//! Input: a lowered [`Dae`]. Output: the DAE in the [`AliasesRemoved`] stage, with fewer
//! equations and variables, and an [`AliasReport`] ([`keep`] skips the pass on request). Each
//! alias class keeps one representative (a state before an algebraic variable, then a variable
//! whose start value is fixed, then the one declared first); the others
//! are replaced by `±representative` everywhere, and their expression is kept in
//! `Dae::eliminated` so results can still show them. Start attributes are merged onto the
//! representative; two different start values in one class give a warning naming both sources.
//! Connection equations make most of a flat model aliases, so this pass is what keeps the
//! structural analysis small.
//!
//! An equation recognised as an alias is kept when it closes a cycle (`a = b`, `b = a`): such a
//! redundant equation is left for the structural analysis to report. `v = constant` is only
//! eliminated for algebraic variables whose class has no state. This pass does no other
//! simplification of the equations it keeps.

use crate::dae::{Dae, Equation, Lowered, Origin, VarKind};
use eqm_diag::Diagnostic;
use eqm_ir::expr::{BinOp, ExprArena, ExprId, UnOp, VarId};
use eqm_ir::symbolic::{linear_form, substitute};

/// What alias elimination did.
#[derive(Debug, Clone, Default)]
pub struct AliasReport {
    /// Variables replaced by `±representative` (variable, representative, sign, and the removed
    /// equation that mentions the variable, when one does: a class's root can be aliased only
    /// through other members).
    pub aliases: Vec<(VarId, VarId, f64, Option<Origin>)>,
    /// Variables replaced by a constant or parameter expression (variable, value, equation).
    pub constants: Vec<(VarId, ExprId, Option<Origin>)>,
    pub removed_equations: usize,
}

/// Union-find over variables with the sign of each variable relative to its parent.
struct Classes {
    parent: Vec<u32>,
    sign: Vec<f64>,
    /// The known value of a class, attached to its root.
    value: Vec<Option<ExprId>>,
    path: Vec<u32>,
}

impl Classes {
    /// The root of `v` and the sign `s` with `v = s * root`. Iterative, with full path
    /// compression so that later finds are O(1).
    fn find(&mut self, v: u32) -> (u32, f64) {
        self.path.clear();
        let mut x = v;
        while self.parent[x as usize] != x {
            self.path.push(x);
            x = self.parent[x as usize];
        }
        // From the node nearest the root back to `v`: sign to root = own sign * parent's.
        let mut to_root = 1.0;
        for &node in self.path.iter().rev() {
            to_root *= self.sign[node as usize];
            self.sign[node as usize] = to_root;
            self.parent[node as usize] = x;
        }
        (x, to_root)
    }
}

/// The stage of a DAE after alias elimination (or after [`keep`], which skips it on request).
#[derive(Debug, Clone, Copy, Default)]
pub struct AliasesRemoved;

/// The DAE with its alias equations kept, as the model writes them (`explain --keep-aliases`).
pub fn keep(dae: Dae<Lowered>) -> Dae<AliasesRemoved> {
    dae.into_stage(AliasesRemoved)
}

/// Removes aliases from `dae`; returns it with the report and warnings.
pub fn eliminate(mut dae: Dae<Lowered>) -> (Dae<AliasesRemoved>, AliasReport, Vec<Diagnostic>) {
    let (report, warnings) = eliminate_in(&mut dae);
    (dae.into_stage(AliasesRemoved), report, warnings)
}

fn eliminate_in(dae: &mut Dae<Lowered>) -> (AliasReport, Vec<Diagnostic>) {
    let mut report = AliasReport::default();
    let mut warnings = Vec::new();
    let mut eliminated: Vec<Option<ExprId>> = vec![None; dae.kinds.len()];
    // The equations to look at for aliases: all of them at first, then only those a
    // substitution changed. A substituted constant can make another equation an alias or a
    // constant in turn (`c = 0*f(x) + k` with `k = 0` becomes `c = 0`), and a product with such
    // a variable then drops out (`c*der(v)`), as Modelica tools simplify; each round looks only
    // at what the round before changed, so the rounds together stay linear in the changes.
    let mut examine: Option<Vec<bool>> = None;
    loop {
        let rewritten = same_value_aliases(dae);
        if let Some(x) = &mut examine {
            for (k, r) in rewritten.iter().enumerate() {
                x[k] |= *r;
            }
        }
        let (mut classes, keep) = alias_classes(dae, examine.as_deref());
        if keep.iter().all(|k| *k) && examine.is_some() {
            break;
        }
        let (replace, found) = replacements(dae, &mut classes, &keep, &mut report, &mut warnings);
        let changed = substitute_replacements(dae, &keep, &replace, &mut report);
        // The variables an earlier round eliminated may be expressed by one this round did.
        for expr in eliminated.iter_mut().flatten() {
            let new = substitute(&mut dae.flat.exprs, *expr, &|_, id| replace.get(id));
            if new != *expr {
                *expr = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, new);
            }
        }
        // A state whose class representative is another variable is no longer a state itself.
        for (i, e) in found.into_iter().enumerate() {
            if e.is_some() {
                if dae.kinds[i] == VarKind::State {
                    dae.kinds[i] = VarKind::Algebraic;
                }
                eliminated[i] = e;
            }
        }
        if !changed.iter().any(|c| *c) {
            break;
        }
        examine = Some(changed);
    }
    demote_states_without_derivative(dae);
    dae.eliminated = eliminated;
    (report, warnings)
}

/// Two unknowns equated with one expression (`v = a - b` and `w = a - b`, the same node of the
/// arena once aliases are substituted: two relative angles of one pair of flanges) are equal:
/// the later equation becomes `w = v`, which the alias classes then merge, as `{v = e, w = e}`
/// and `{v = e, w = v}` have the same solutions. Kept apart, two states tied by one relation
/// can be chosen together and leave a singular system. Returns the equations rewritten. One
/// pass of hashing over the equations per round; an expression is walked (for `der`) only
/// where it repeats. A fresh table each round keeps every rewrite pointing at an equation that
/// still holds its expression, so no equation is lost to a chain of rewrites.
fn same_value_aliases(dae: &mut Dae<Lowered>) -> Vec<bool> {
    use eqm_ir::expr::Node;
    let mut first: eqm_ir::expr::FxHashMap<ExprId, VarId> = Default::default();
    let mut rewritten = vec![false; dae.equations.len()];
    for (k, eq) in dae.equations.iter_mut().enumerate() {
        let arena = &dae.flat.exprs;
        // A variable, a constant and `-v` are the aliases the classes handle themselves; a
        // derivative stays where index reduction and state selection look for it.
        let is_value = |e: ExprId| match arena.get(e) {
            Node::Var(_) => false,
            Node::Unary(UnOp::Neg, a) if matches!(arena.get(*a), Node::Var(_)) => false,
            _ => arena.literal(e).is_none(),
        };
        let (v, e) = match (arena.get(eq.lhs), arena.get(eq.rhs)) {
            (Node::Var(v), _) if is_value(eq.rhs) => (*v, eq.rhs),
            (_, Node::Var(v)) if is_value(eq.lhs) => (*v, eq.lhs),
            _ => continue,
        };
        if !matches!(dae.kinds[v.0 as usize], VarKind::State | VarKind::Algebraic) {
            continue;
        }
        match first.entry(e) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(v);
            }
            std::collections::hash_map::Entry::Occupied(seen)
                if *seen.get() != v && !reads_derivative(&dae.flat.exprs, e) =>
            {
                let u = *seen.get();
                eq.lhs = dae.flat.exprs.var(v);
                eq.rhs = dae.flat.exprs.var(u);
                rewritten[k] = true;
            }
            std::collections::hash_map::Entry::Occupied(_) => {}
        }
    }
    rewritten
}

/// Whether `e` contains `der(...)`.
fn reads_derivative(arena: &ExprArena, e: ExprId) -> bool {
    use eqm_ir::expr::{Callee, Node};
    eqm_ir::symbolic::reachable(arena, e, &|_| false).iter().any(|&n| {
        matches!(
            arena.get(n),
            Node::Call(Callee::Builtin(eqm_ir::builtins::Builtin::Der), _)
        )
    })
}

/// A state whose derivative no longer occurs in any equation (its only occurrences were
/// multiplied by a coefficient that the substitutions made zero, `c*der(v)` with `c = 0`) is an
/// algebraic variable: nothing determines its derivative, and the equations that remain
/// determine it (or the structural analysis says that nothing does).
fn demote_states_without_derivative(dae: &mut Dae<Lowered>) {
    use eqm_ir::expr::{Callee, Node};
    let arena = &dae.flat.exprs;
    let mut differentiated = vec![false; dae.kinds.len()];
    let mut seen = vec![false; arena.len()];
    let mut stack: Vec<ExprId> = dae
        .equations
        .iter()
        .chain(dae.initial_equations.iter())
        .flat_map(|e| [e.lhs, e.rhs])
        .collect();
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) {
            continue;
        }
        if let Node::Call(Callee::Builtin(eqm_ir::builtins::Builtin::Der), args) = arena.get(e)
            && let Some(Node::Var(v)) = args.first().map(|a| arena.get(*a))
        {
            differentiated[v.0 as usize] = true;
            continue;
        }
        stack.extend(arena.children(e));
    }
    for (kind, differentiated) in dae.kinds.iter_mut().zip(differentiated) {
        if *kind == VarKind::State && !differentiated {
            *kind = VarKind::Algebraic;
        }
    }
}

/// The classes of variables equal up to sign (and those equal to a parameter expression), from
/// the equations of the forms `±a = ±b` and `a = parameter expression`; and for each equation
/// whether it is kept (`false` for the equations that made an alias).
fn alias_classes(dae: &mut Dae<Lowered>, examine: Option<&[bool]>) -> (Classes, Vec<bool>) {
    let n = dae.kinds.len();
    let mut classes = Classes {
        parent: (0..n as u32).collect(),
        sign: vec![1.0; n],
        value: vec![None; n],
        path: Vec::new(),
    };
    let kinds = dae.kinds.clone();
    let is_unknown = |v: VarId| matches!(kinds[v.0 as usize], VarKind::State | VarKind::Algebraic);
    let mut keep = vec![true; dae.equations.len()];
    // Representatives are chosen by priority, so the rank of each variable is computed once.
    let rank: Vec<(u8, u8, u32)> = (0..n)
        .map(|i| {
            let v = &dae.flat.variables[i];
            let state = u8::from(kinds[i] != VarKind::State);
            let fixed = u8::from(v.attributes.fixed != Some(true));
            (state, fixed, i as u32)
        })
        .collect();
    let mut has_state: Vec<bool> = kinds.iter().map(|k| *k == VarKind::State).collect();
    // A variable an algorithm section assigns keeps its own name: the section computes it, and
    // replacing it elsewhere by another member of its class would leave that member without
    // the value the section gives (`i := g*v` with `i = p.i`: `p.i` would be determined by
    // nothing). Its alias equations stay equations.
    let mut assigned = vec![false; n];
    for a in dae.flat.algorithms.iter().filter(|a| !a.initial) {
        for v in &a.outputs {
            assigned[v.0 as usize] = true;
        }
    }

    for (index, eq) in dae.equations.iter().enumerate() {
        if examine.is_some_and(|x| !x[index]) {
            continue;
        }
        // Most equations of a large model are either plain `±a = ±b` / `a = constant` (answered
        // without building anything) or clearly not aliases (more than two unknowns, or a
        // derivative): only the rest pays for simplification into a linear form.
        let form = match quick_form(&mut dae.flat.exprs, eq, &is_unknown) {
            Quick::Form(form) => form,
            Quick::NotAlias => continue,
            Quick::Unknown => {
                let residual = dae.flat.exprs.binary(BinOp::Sub, eq.lhs, eq.rhs);
                match linear_form(&mut dae.flat.exprs, residual, &is_unknown) {
                    Some(form) => form,
                    None => continue,
                }
            }
        };
        let rest_zero = dae.flat.exprs.literal(form.rest) == Some(0.0);
        match form.terms.as_slice() {
            // The later rounds look for new constants only: an alias of two variables that a
            // substituted constant uncovered (`a = b + k`, `k = 0`) is solved as well by the
            // sorting, and keeping it leaves the listings of models without such constants
            // as they were.
            [(a, ca), (b, cb)]
                if rest_zero
                    && ca.abs() == cb.abs()
                    && examine.is_none()
                    && !assigned[a.0 as usize]
                    && !assigned[b.0 as usize] =>
            {
                // ca*a + cb*b = 0, so a = s*b with s = -cb/ca = ±1.
                let s = -cb / ca;
                let (ra, sa) = classes.find(a.0);
                let (rb, sb) = classes.find(b.0);
                if ra == rb || (classes.value[ra as usize].is_some() && classes.value[rb as usize].is_some()) {
                    continue;
                }
                // ra = sa*a = sa*s*b = sa*s*sb*rb.
                let relative = sa * s * sb;
                let (winner, loser) = if rank[ra as usize] <= rank[rb as usize] {
                    (ra, rb)
                } else {
                    (rb, ra)
                };
                classes.parent[loser as usize] = winner;
                classes.sign[loser as usize] = relative;
                if classes.value[winner as usize].is_none()
                    && let Some(v) = classes.value[loser as usize].take()
                {
                    classes.value[winner as usize] = Some(signed(&mut dae.flat.exprs, v, relative));
                }
                has_state[winner as usize] |= has_state[loser as usize];
                keep[index] = false;
            }
            [(a, ca)]
                if kinds[a.0 as usize] == VarKind::Algebraic
                    && !assigned[a.0 as usize]
                    && dae.is_parameter_expression(form.rest) =>
            {
                let (ra, sa) = classes.find(a.0);
                if has_state[ra as usize] || classes.value[ra as usize].is_some() {
                    continue;
                }
                // ca*a + rest = 0, so a = -rest/ca and ra = sa*a.
                let value = dae.flat.exprs.unary(UnOp::Neg, form.rest);
                let value = if *ca == 1.0 {
                    value
                } else {
                    let c = dae.flat.exprs.real(*ca);
                    dae.flat.exprs.binary(BinOp::Div, value, c)
                };
                let value = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, value);
                classes.value[ra as usize] = Some(signed(&mut dae.flat.exprs, value, sa));
                keep[index] = false;
            }
            _ => {}
        }
    }
    (classes, keep)
}

/// The expression that replaces each eliminated variable, and for states also `der(v)`,
/// recorded in `report` with the equation that made it an alias; and for each variable the
/// expression it was replaced by (`None` when kept). Start values of merged variables are
/// combined, with a warning where they conflict.
fn replacements(
    dae: &mut Dae<Lowered>,
    classes: &mut Classes,
    keep: &[bool],
    report: &mut AliasReport,
    warnings: &mut Vec<Diagnostic>,
) -> (Replacements, Vec<Option<ExprId>>) {
    let n = dae.kinds.len();
    let kinds = dae.kinds.clone();
    let mut replace = Replacements::default();
    let mut eliminated: Vec<Option<ExprId>> = vec![None; n];
    let mut removed_origin = vec![None; n];
    for (index, eq) in dae.equations.iter().enumerate() {
        if !keep[index] {
            // Remember the equation that made each variable an alias, for the report.
            for v in vars_of(&dae.flat.exprs, eq) {
                if removed_origin[v.0 as usize].is_none() {
                    removed_origin[v.0 as usize] = Some(eq.origin.clone());
                }
            }
        }
    }
    for i in 0..n as u32 {
        let (root, s) = classes.find(i);
        let value = classes.value[root as usize];
        if root == i && value.is_none() {
            continue;
        }
        let v = VarId(i);
        let origin = removed_origin[i as usize].clone();
        let expr = match value {
            // v = s*root and root = value.
            Some(value) => {
                let e = signed(&mut dae.flat.exprs, value, s);
                report.constants.push((v, e, origin));
                // A class's value is a parameter expression, constant in time, so the
                // derivative of a variable replaced by it is 0 (the angle of a fixed flange
                // read as `w = der(phi)` by a component connected to it).
                if kinds[i as usize] == VarKind::State {
                    let node = dae.flat.exprs.var(v);
                    let own_der = dae.flat.exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![node]);
                    let zero = dae.flat.exprs.real(0.0);
                    replace.insert(own_der, zero);
                }
                e
            }
            None => {
                let root_node = dae.flat.exprs.var(VarId(root));
                merge_start(dae, VarId(root), v, s, warnings);
                report.aliases.push((v, VarId(root), s, origin));
                let e = signed(&mut dae.flat.exprs, root_node, s);
                if kinds[i as usize] == VarKind::State {
                    let own_der = {
                        let node = dae.flat.exprs.var(v);
                        dae.flat.exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![node])
                    };
                    let root_der = dae.flat.exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![root_node]);
                    replace.insert(own_der, signed(&mut dae.flat.exprs, root_der, s));
                }
                e
            }
        };
        let node = dae.flat.exprs.var(v);
        replace.insert(node, expr);
        eliminated[i as usize] = Some(expr);
    }
    (replace, eliminated)
}

/// Drops the equations not kept (counted in `report`) and substitutes the replacements in
/// the others and in the initial equations.
fn substitute_replacements(
    dae: &mut Dae<Lowered>,
    keep: &[bool],
    replace: &Replacements,
    report: &mut AliasReport,
) -> Vec<bool> {
    let mut kept: Vec<Equation> = Vec::with_capacity(dae.equations.len());
    let mut changed = Vec::with_capacity(dae.equations.len());
    for (index, eq) in std::mem::take(&mut dae.equations).into_iter().enumerate() {
        if !keep[index] {
            report.removed_equations += 1;
            continue;
        }
        let mut eq = eq;
        if !replace.is_empty() {
            // Substituted constants (`0 + f`) are folded so listings read like the model.
            let lhs = substitute(&mut dae.flat.exprs, eq.lhs, &|_, id| replace.get(id));
            let rhs = substitute(&mut dae.flat.exprs, eq.rhs, &|_, id| replace.get(id));
            changed.push(lhs != eq.lhs || rhs != eq.rhs);
            if lhs != eq.lhs {
                eq.lhs = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, lhs);
            }
            if rhs != eq.rhs {
                eq.rhs = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, rhs);
            }
        } else {
            changed.push(false);
        }
        kept.push(eq);
    }
    dae.equations = kept;
    if !replace.is_empty() {
        for eq in &mut dae.initial_equations {
            for side in [&mut eq.lhs, &mut eq.rhs] {
                let new = substitute(&mut dae.flat.exprs, *side, &|_, id| replace.get(id));
                if new != *side {
                    *side = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, new);
                }
            }
        }
    }
    changed
}

/// The expression replacing each eliminated variable's node (and `der` node), by expression id:
/// a dense table, because substitution asks about every node of every equation.
#[derive(Default)]
struct Replacements {
    by_node: Vec<Option<ExprId>>,
    any: bool,
}

impl Replacements {
    fn insert(&mut self, node: ExprId, by: ExprId) {
        let i = node.0 as usize;
        if self.by_node.len() <= i {
            self.by_node.resize(i + 1, None);
        }
        self.by_node[i] = Some(by);
        self.any = true;
    }

    fn get(&self, node: ExprId) -> Option<ExprId> {
        self.by_node.get(node.0 as usize).copied().flatten()
    }

    fn is_empty(&self) -> bool {
        !self.any
    }
}

/// What a cheap look at an equation tells about it.
enum Quick {
    /// `±a = ±b`, `±a = e` or `e = ±a` with `e` free of unknowns: its linear form.
    Form(eqm_ir::symbolic::LinearForm),
    /// It cannot be an alias: a derivative or `pre`, or more than two unknowns.
    NotAlias,
    /// Needs the full linear form.
    Unknown,
}

/// Classifies `eq` by walking at most a few dozen nodes.
fn quick_form(arena: &mut ExprArena, eq: &Equation, is_unknown: &dyn Fn(VarId) -> bool) -> Quick {
    use eqm_ir::expr::Node;
    // `±v` for an unknown `v`, as (v, sign).
    let signed_var = |e: ExprId| match arena.get(e) {
        Node::Var(v) if is_unknown(*v) => Some((*v, 1.0)),
        Node::Unary(UnOp::Neg, a) => match arena.get(*a) {
            Node::Var(v) if is_unknown(*v) => Some((*v, -1.0)),
            _ => None,
        },
        _ => None,
    };
    match (signed_var(eq.lhs), signed_var(eq.rhs)) {
        (Some((a, sa)), Some((b, sb))) if a != b => {
            let mut terms = vec![(a, sa), (b, -sb)];
            terms.sort_by_key(|t| t.0);
            return Quick::Form(eqm_ir::symbolic::LinearForm {
                terms,
                rest: arena.real(0.0),
            });
        }
        _ => {}
    }
    // Count distinct unknowns and look for derivatives, giving up on large equations.
    let mut unknowns: Vec<VarId> = Vec::new();
    let mut stack = vec![eq.lhs, eq.rhs];
    let mut budget = 64;
    while let Some(e) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            return Quick::Unknown;
        }
        match arena.get(e) {
            Node::Var(v) if is_unknown(*v) => {
                if !unknowns.contains(v) {
                    unknowns.push(*v);
                    if unknowns.len() > 2 {
                        return Quick::NotAlias;
                    }
                }
            }
            node if eqm_ir::symbolic::is_symbol_operator(node) => return Quick::NotAlias,
            _ => stack.extend(arena.children(e)),
        }
    }
    Quick::Unknown
}

/// `s * e` for a sign `s` of ±1.
fn signed(arena: &mut ExprArena, e: ExprId, s: f64) -> ExprId {
    if s < 0.0 { arena.unary(UnOp::Neg, e) } else { e }
}

/// The unknowns occurring in an equation (both sides), in first-occurrence order.
fn vars_of(arena: &ExprArena, eq: &Equation) -> Vec<VarId> {
    let mut out = Vec::new();
    arena.vars_in(eq.lhs, &mut out);
    arena.vars_in(eq.rhs, &mut out);
    out
}

/// Moves the start attribute of `member` (with `member = s * root`) onto `root`. A fixed start
/// value wins over one that is not fixed; different start values are a warning when at most one
/// is fixed (the fixed one, else the root's, is used) and an error (`E0504`) when both are fixed:
/// the initial system then demands two values of one variable.
fn merge_start(dae: &mut Dae<Lowered>, root: VarId, member: VarId, s: f64, warnings: &mut Vec<Diagnostic>) {
    let Some(member_start) = dae.flat.var(member).attributes.start else {
        return;
    };
    let member_fixed = dae.flat.var(member).attributes.fixed == Some(true);
    let value = signed(&mut dae.flat.exprs, member_start, s);
    let root_var = &dae.flat.variables[root.0 as usize];
    let root_fixed = root_var.attributes.fixed == Some(true);
    let Some(existing) = root_var.attributes.start else {
        let r = &mut dae.flat.variables[root.0 as usize].attributes;
        r.start = Some(value);
        if member_fixed {
            r.fixed = Some(true);
        }
        return;
    };
    let differ = match (dae.flat.exprs.literal(existing), dae.flat.exprs.literal(value)) {
        (Some(a), Some(b)) => a != b,
        _ => existing != value,
    };
    let root_name = root_var.name.clone();
    let root_span = root_var.span;
    let member_name = dae.flat.var(member).name.clone();
    let member_span = dae.flat.var(member).span;
    if differ {
        let kept = dae.flat.expr_text(existing);
        let other = dae.flat.expr_text(member_start);
        let d = if member_fixed && root_fixed {
            Diagnostic::error(
                "E0504",
                format!(
                    "`{member_name}` and `{root_name}` are the same variable, but both have fixed start values and they differ"
                ),
                member_span,
                format!("start = {other}, fixed here"),
            )
            .with_label(root_span, format!("start = {kept}, fixed here"))
            .with_help("an equation makes them equal: give `fixed = true` to one of them only")
        } else {
            let (used_here, unused_here) = if member_fixed {
                (
                    format!("start = {other} here, fixed, which is used"),
                    format!("start = {kept} here"),
                )
            } else {
                (
                    format!("start = {other} here"),
                    format!("start = {kept} here, which is used"),
                )
            };
            Diagnostic::warning(
                "W0501",
                format!("`{member_name}` and `{root_name}` are the same variable but have different start values"),
                member_span,
                used_here,
            )
            .with_label(root_span, unused_here)
        };
        warnings.push(d);
    }
    if member_fixed {
        let r = &mut dae.flat.variables[root.0 as usize].attributes;
        if !root_fixed {
            r.start = Some(value);
        }
        r.fixed = Some(true);
    }
}
