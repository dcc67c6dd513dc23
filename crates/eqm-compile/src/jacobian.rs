//! The symbolic Jacobian of a right-hand side: what implicit integrators and the constraint
//! projection evaluate instead of difference quotients.
//!
//! Input: an [`ExecProgram`] (its right-hand side instructions) and optionally invariant
//! residuals `g(...)` evaluated after the right-hand side. Output: an [`ExecJacobian`]: the
//! symbolic partial derivative of every expression the right-hand side evaluates with respect
//! to every value it reads that depends on the states (states, derivatives, algebraic
//! variables computed earlier), and for each instruction how those partials combine by the
//! chain rule (forward mode, instruction by instruction: an explicit assignment passes on the
//! weighted sum of its inputs' tangents, a scalar implicit equation divides by its own partial,
//! a torn loop solves its small linear system), plus the sparsity pattern of `∂f/∂x` and a
//! column colouring of it, so that one forward pass per colour gives every column.
//!
//! The partials are expressions of the program's arena: the interpreter and the JIT evaluate
//! them as they evaluate everything else, once per Jacobian; only the chain rule runs in Rust
//! (`interp::jacobian`). This module is pure and linear in the size of the right-hand side plus
//! the size of the pattern. It deliberately gives up (returns a reason) when a right-hand side
//! cannot be differentiated symbolically: an algorithm section, a user function of a varying
//! value that the derivatives depend on (one that only feeds a value nothing else reads, such
//! as a sensor's output, is left without a tangent), a scalar implicit equation without a
//! symbolic derivative. The integrators then use difference quotients, as before.

use crate::exec::{ExecProgram, Instr, LoopBlock};
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprArena, ExprId, Node};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::{Simplifier, gradient};

pub use crate::exec::jacobian::{ExecJacobian, InvariantRow, LoopTangent, TangentStep, Term};

impl ExecProgram {
    /// Adds the symbolic Jacobian of the right-hand side and of the invariants (see
    /// [`crate::jacobian`]), with the expressions of the state-choice check evaluated alongside;
    /// on failure the program has none and the reason is returned.
    pub fn add_jacobian(&mut self) -> Result<(), String> {
        self.set_jacobian(None);
        let invariants: Vec<ExprId> = self.invariants().iter().map(|g| g.residual).collect();
        // The rates are only useful when every invariant has one.
        let rates: Vec<ExprId> = self.invariants().iter().map_while(|g| g.rate).collect();
        let rates = if rates.len() == invariants.len() {
            rates
        } else {
            Vec::new()
        };
        let extra: Vec<ExprId> = self
            .state_choice()
            .into_iter()
            .flat_map(|c| c.matrix.iter().chain(&c.norms))
            .copied()
            .collect();
        let jacobian = build(self, &invariants, &rates, &extra)?;
        self.set_jacobian(Some(jacobian));
        Ok(())
    }
}

/// Whether any of `terms` reads a work slot marked `opaque` (assigned without a symbolic
/// derivative).
fn reads_opaque(opaque: &[bool], terms: &[Term]) -> bool {
    terms
        .iter()
        .any(|t| matches!(t.slot, Slot::Work(w) if opaque.get(w as usize).copied().unwrap_or(false)))
}

/// The tangent step of algebraic loop `l`: the chain-rule terms of its inner assignments and
/// residuals, each split into those outside the loop and those of its own unknowns; `None`
/// when one cannot be differentiated symbolically or reads an `opaque` work slot.
fn loop_tangent(
    b: &mut Partials,
    l: &LoopBlock,
    has_tangent: &dyn Fn(Slot) -> bool,
    opaque: &[bool],
) -> Option<LoopTangent> {
    let in_loop = |s: Slot| l.unknowns.contains(&s);
    let split = |terms: Vec<Term>| -> (Vec<Term>, Vec<Term>) { terms.into_iter().partition(|t| !in_loop(t.slot)) };
    let mut inner = Vec::with_capacity(l.inner.len());
    for a in &l.inner {
        let terms = b
            .terms(a.value, has_tangent, None)
            .filter(|terms| !reads_opaque(opaque, terms))?;
        let (outside, own) = split(terms);
        inner.push((a.target, outside, own));
    }
    let mut residuals = Vec::with_capacity(l.residuals.len());
    for &(r, _) in &l.residuals {
        let terms = b
            .terms(r, has_tangent, None)
            .filter(|terms| !reads_opaque(opaque, terms))?;
        residuals.push(split(terms));
    }
    Some(LoopTangent {
        tearing: l.tearing.clone(),
        inner,
        residuals,
    })
}

/// Builds the Jacobian program of `program` and of the invariant residuals `invariants`
/// (expressions of its arena, which may read anything the right-hand side computes) and of
/// their rates `rates` (empty, or one per invariant), with the expressions `extra` evaluated
/// alongside. Returns
/// the reason when the right-hand side cannot be differentiated symbolically.
pub fn build(
    program: &mut ExecProgram,
    invariants: &[ExprId],
    rates: &[ExprId],
    extra: &[ExprId],
) -> Result<ExecJacobian, String> {
    let n = program.layout().states;
    let n_work = program.layout().work;
    let rhs = program.rhs().to_vec();
    let slot_of: Vec<Option<Slot>> = (0..program.symbols().len())
        .map(|i| program.slot_of(eqm_ir::expr::VarId(i as u32)))
        .collect();
    // Which work slots vary with the states: those the right-hand side computes.
    let mut varies = vec![false; n_work];
    for instr in &rhs {
        match instr {
            Instr::Assign { target, .. } | Instr::Newton1 { target, .. } => mark(&mut varies, *target),
            Instr::Loop(b) => b.unknowns.iter().for_each(|s| mark(&mut varies, *s)),
            Instr::Algorithm { .. } => return Err("the right-hand side runs an algorithm section".to_string()),
        }
    }
    let has_tangent = |slot: Slot| match slot {
        Slot::State(_) | Slot::Der(_) => true,
        Slot::Work(k) => varies.get(k as usize).copied().unwrap_or(false),
        Slot::Time | Slot::Param(_) => false,
    };
    let arena = program.arena_mut();
    let mut b = Partials {
        arena,
        slot_of: &slot_of,
        partials: Vec::new(),
        simplifier: Simplifier::new(),
    };
    // Work slots assigned by an expression without a symbolic derivative (a user function of a
    // varying value, in a sensor's output or a variable only written to the result): harmless
    // while nothing the derivatives depend on reads them, so the failure is reported only when
    // something does.
    let mut opaque = vec![false; n_work];
    let mut steps = Vec::with_capacity(rhs.len());
    for (k, instr) in rhs.iter().enumerate() {
        let failed = |what: &str| format!("instruction {k} ({what}) cannot be differentiated symbolically");
        steps.push(match instr {
            Instr::Assign { target, value, .. } => match b.terms(*value, &has_tangent, None) {
                Some(terms) if !reads_opaque(&opaque, &terms) => TangentStep::Assign { target: *target, terms },
                Some(_) => return Err(failed("an assignment reading a value without a symbolic derivative")),
                None => match target {
                    Slot::Work(w) if (*w as usize) < n_work => {
                        opaque[*w as usize] = true;
                        continue;
                    }
                    _ => return Err(failed("an assignment")),
                },
            },
            Instr::Newton1 {
                target,
                residual,
                derivative,
                ..
            } => {
                let Some(derivative) = derivative else {
                    return Err(failed("an implicit equation without a symbolic derivative"));
                };
                let terms = b
                    .terms(*residual, &has_tangent, Some(*target))
                    .filter(|terms| !reads_opaque(&opaque, terms))
                    .ok_or_else(|| failed("an implicit equation"))?;
                let own = b.push(*derivative);
                TangentStep::Newton1 {
                    target: *target,
                    own,
                    terms,
                }
            }
            Instr::Loop(l) => TangentStep::Loop(Box::new(
                loop_tangent(&mut b, l, &has_tangent, &opaque).ok_or_else(|| failed("a loop"))?,
            )),
            Instr::Algorithm { .. } => unreachable!("rejected above"),
        });
    }
    let mut invariant_steps = Vec::with_capacity(invariants.len());
    for (k, &g) in invariants.iter().enumerate() {
        let value = b.push(g);
        let terms = b
            .terms(g, &has_tangent, None)
            .filter(|terms| !reads_opaque(&opaque, terms))
            .ok_or_else(|| format!("invariant {} cannot be differentiated symbolically", k + 1))?;
        invariant_steps.push(InvariantRow { value, terms });
    }
    let mut rate_rows = Vec::with_capacity(rates.len());
    for &r in rates {
        let value = b.push(r);
        let terms = b
            .terms(r, &has_tangent, None)
            .filter(|terms| !reads_opaque(&opaque, terms))
            .ok_or_else(|| "the rate of an invariant cannot be differentiated symbolically".to_string())?;
        rate_rows.push(InvariantRow { value, terms });
    }
    let extra = extra.iter().map(|&e| b.push(e)).collect();
    let for_invariants = steps_for_invariants(n, n_work, &steps, &invariant_steps);
    let partials = b.partials;
    let all_rows: Vec<InvariantRow> = invariant_steps.iter().chain(&rate_rows).cloned().collect();
    let (rows, invariant_rows) = pattern(n, n_work, &steps, &all_rows).ok_or_else(|| {
        format!("the dependence of the derivatives on the states has more than {MAX_PATTERN} entries")
    })?;
    let (colors, n_colors) = eqm_structural::coloring::color_columns(n, rows.iter().chain(&invariant_rows));
    Ok(ExecJacobian {
        partials,
        steps,
        invariants: invariant_steps,
        rates: rate_rows,
        for_invariants,
        extra,
        rows,
        invariant_rows,
        colors,
        n_colors,
    })
}

fn mark(varies: &mut [bool], slot: Slot) {
    if let Slot::Work(k) = slot
        && let Some(v) = varies.get_mut(k as usize)
    {
        *v = true;
    }
}

/// Collects partial derivatives into one list.
struct Partials<'a> {
    arena: &'a mut ExprArena,
    slot_of: &'a [Option<Slot>],
    partials: Vec<ExprId>,
    /// Shared by every row, so the subexpressions rows have in common are simplified once.
    simplifier: Simplifier,
}

impl Partials<'_> {
    fn push(&mut self, e: ExprId) -> u32 {
        self.partials.push(e);
        (self.partials.len() - 1) as u32
    }

    /// The chain rule terms of `root`: its partial derivative with respect to every leaf it
    /// reads whose slot has a tangent, except `skip` (the unknown of an implicit equation,
    /// whose partial is its derivative), all from one reverse pass over `root`
    /// ([`eqm_ir::symbolic::gradient`]), so a row reading n values costs its size, not n walks
    /// of it. `None` when one cannot be built.
    fn terms(&mut self, root: ExprId, has_tangent: &dyn Fn(Slot) -> bool, skip: Option<Slot>) -> Option<Vec<Term>> {
        let slot_of = self.slot_of;
        let leaf_slot = |arena: &ExprArena, e: ExprId| -> Option<Slot> {
            let slot = match arena.get(e) {
                Node::Var(v) => slot_of.get(v.0 as usize).copied().flatten(),
                Node::Call(Callee::Builtin(Builtin::Der), args) => match args.first().map(|a| arena.get(*a)) {
                    Some(Node::Var(v)) => match slot_of.get(v.0 as usize).copied().flatten() {
                        Some(Slot::State(i)) => Some(Slot::Der(i)),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            }?;
            (has_tangent(slot) && Some(slot) != skip).then_some(slot)
        };
        let partials = gradient(self.arena, &mut self.simplifier, root, &|arena, e| {
            leaf_slot(arena, e).is_some()
        })
        .ok()?;
        let mut leaves: Vec<(Slot, ExprId)> = partials
            .into_iter()
            .filter_map(|(leaf, d)| leaf_slot(self.arena, leaf).map(|slot| (slot, d)))
            .collect();
        // Slot order makes the sums (and so the results) independent of expression ids.
        leaves.sort_unstable();
        let mut terms = Vec::with_capacity(leaves.len());
        for (slot, d) in leaves {
            if self.arena.literal(d) != Some(0.0) {
                let partial = self.push(d);
                terms.push(Term { slot, partial });
            }
        }
        Some(terms)
    }
}

/// Rows of a sparsity pattern: for each row, the columns (states) it depends on, sorted.
type Pattern = Vec<Vec<u32>>;

/// The most entries the dependence sets of all values may hold together: beyond it (large
/// models whose values each depend on many states, such as one big algebraic loop) the sets
/// would take more memory than difference quotients, which need none.
const MAX_PATTERN: usize = 20_000_000;

/// The structural dependence of every derivative and invariant on the states, propagated
/// through the steps (a loop's unknowns all depend on everything the loop reads from outside);
/// `None` when it would exceed [`MAX_PATTERN`] entries.
fn pattern(n: usize, n_work: usize, steps: &[TangentStep], invariants: &[InvariantRow]) -> Option<(Pattern, Pattern)> {
    let mut der: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut work: Vec<Vec<u32>> = vec![Vec::new(); n_work];
    let deps = |der: &Vec<Vec<u32>>, work: &Vec<Vec<u32>>, terms: &[Term], out: &mut Vec<u32>| {
        for t in terms {
            match t.slot {
                Slot::State(i) => out.push(i),
                Slot::Der(i) => out.extend_from_slice(&der[i as usize]),
                Slot::Work(k) => out.extend_from_slice(&work[k as usize]),
                Slot::Time | Slot::Param(_) => {}
            }
        }
    };
    let mut set = Vec::new();
    let mut total = 0usize;
    let mut store = |der: &mut Vec<Vec<u32>>, work: &mut Vec<Vec<u32>>, slot: Slot, set: &[u32]| {
        total += set.len();
        match slot {
            Slot::Der(i) => der[i as usize] = set.to_vec(),
            Slot::Work(k) => work[k as usize] = set.to_vec(),
            Slot::Time | Slot::State(_) | Slot::Param(_) => {}
        }
        total <= MAX_PATTERN
    };
    for step in steps {
        set.clear();
        match step {
            TangentStep::Assign { target, terms } | TangentStep::Newton1 { target, terms, .. } => {
                deps(&der, &work, terms, &mut set);
                set.sort_unstable();
                set.dedup();
                if !store(&mut der, &mut work, *target, &set) {
                    return None;
                }
            }
            TangentStep::Loop(l) => {
                for (_, outside, _) in &l.inner {
                    deps(&der, &work, outside, &mut set);
                }
                for (outside, _) in &l.residuals {
                    deps(&der, &work, outside, &mut set);
                }
                set.sort_unstable();
                set.dedup();
                for &s in l.tearing.iter().chain(l.inner.iter().map(|(s, ..)| s)) {
                    if !store(&mut der, &mut work, s, &set) {
                        return None;
                    }
                }
            }
        }
    }
    let invariant_rows = invariants
        .iter()
        .map(|g| {
            let mut set = Vec::new();
            deps(&der, &work, &g.terms, &mut set);
            set.sort_unstable();
            set.dedup();
            set
        })
        .collect();
    Some((der, invariant_rows))
}

/// Which steps the invariants depend on: walking the steps backwards from the slots the
/// invariants read, a step is needed when it computes a needed slot, and then what it reads is
/// needed too.
fn steps_for_invariants(n: usize, n_work: usize, steps: &[TangentStep], invariants: &[InvariantRow]) -> Vec<bool> {
    let index = |slot: Slot| match slot {
        Slot::Der(i) => Some(i as usize),
        Slot::Work(k) => Some(n + k as usize),
        Slot::Time | Slot::State(_) | Slot::Param(_) => None,
    };
    let mut needed = vec![false; n + n_work];
    let mark = |needed: &mut Vec<bool>, terms: &[Term]| {
        for t in terms {
            if let Some(i) = index(t.slot) {
                needed[i] = true;
            }
        }
    };
    for g in invariants {
        mark(&mut needed, &g.terms);
    }
    let mut used = vec![false; steps.len()];
    for (k, step) in steps.iter().enumerate().rev() {
        let is_needed = |needed: &Vec<bool>, slot: Slot| index(slot).is_some_and(|i| needed[i]);
        match step {
            TangentStep::Assign { target, terms } | TangentStep::Newton1 { target, terms, .. } => {
                if is_needed(&needed, *target) {
                    used[k] = true;
                    mark(&mut needed, terms);
                }
            }
            TangentStep::Loop(l) => {
                let targets = l.tearing.iter().copied().chain(l.inner.iter().map(|i| i.0));
                if targets.clone().any(|s| is_needed(&needed, s)) {
                    used[k] = true;
                    for s in targets {
                        if let Some(i) = index(s) {
                            needed[i] = true;
                        }
                    }
                    for (_, outside, own) in &l.inner {
                        mark(&mut needed, outside);
                        mark(&mut needed, own);
                    }
                    for (outside, own) in &l.residuals {
                        mark(&mut needed, outside);
                        mark(&mut needed, own);
                    }
                }
            }
        }
    }
    used
}
