//! Which inputs each output of a user-defined function can depend on.
//!
//! Input: the functions of a flat model. Output: for each function and output, the input slots
//! whose values can reach it through the body's assignments and the conditions that choose
//! them (a data-flow analysis over the statements: an `if` joins its branches, a loop runs to a
//! fixed point). The structure of the equations uses it: a call depends only on the arguments
//! of those inputs, so an input a function ignores (`s := u[1]` never reads `u[2]`) makes no
//! edge to the unknowns in its argument. It deliberately refines nothing for a body with
//! `return` or `break` (a path cut short is not followed), for external functions, for a
//! function that acts on something besides its outputs (a call made for its effect), or for a
//! function with more slots and inputs than it is worth: every argument counts then.

use eqm_ir::expr::{Callee, ExprArena, ExprId, FuncId, Node};
use eqm_ir::flat::{EFFECT_SLOT, Function, Place, Statement};

/// Past this many (slot, input) pairs a function's dependencies are not worked out.
const MAX_PAIRS: usize = 1 << 22;

/// The inputs each output of each function can depend on (`None`: any of them).
pub(crate) struct FunctionReads {
    functions: Vec<Option<Vec<Vec<u32>>>>,
}

impl FunctionReads {
    pub(crate) fn new(arena: &ExprArena, functions: &[Function]) -> FunctionReads {
        let acts = acting(arena, functions);
        let functions = functions
            .iter()
            .zip(acts)
            .map(|(f, acts)| if acts { None } else { outputs_reads(arena, f) })
            .collect();
        FunctionReads { functions }
    }

    /// Every output of every function depends on every input.
    pub(crate) fn unknown() -> FunctionReads {
        FunctionReads { functions: Vec::new() }
    }

    /// The input slots output `output` of `f` can depend on, or `None` for all of them.
    pub(crate) fn inputs_of(&self, f: FuncId, output: u32) -> Option<&[u32]> {
        let outputs = self.functions.get(f.0 as usize)?.as_ref()?;
        outputs.get(output as usize).map(Vec::as_slice)
    }
}

/// Which functions act on something besides their outputs (a call made for its effect, whose
/// result a hidden slot holds, a call statement, `terminate`), directly or through a function
/// they call. A call of one depends on all its arguments: what it does with an input (the seed
/// it hands to a random number generator's C state) must happen after the input is known, even
/// where no output reads it.
fn acting(arena: &ExprArena, functions: &[Function]) -> Vec<bool> {
    let n = functions.len();
    let mut acts = vec![false; n];
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, f) in functions.iter().enumerate() {
        acts[k] = f.slots.iter().any(|s| s.name.starts_with(EFFECT_SLOT)) || has_effect_statement(&f.body);
        let mut called = Vec::new();
        for statement in &f.body {
            statement.for_each_expr(&mut |e, _| {
                for node in eqm_ir::symbolic::reachable(arena, e, &|_| false) {
                    if let Node::Call(Callee::User(g), _) = arena.get(node) {
                        called.push(g.0 as usize);
                    }
                }
            });
        }
        called.sort_unstable();
        called.dedup();
        for g in called.into_iter().filter(|&g| g < n) {
            callers[g].push(k);
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&k| acts[k]).collect();
    while let Some(k) = stack.pop() {
        for &c in &callers[k] {
            if !acts[c] {
                acts[c] = true;
                stack.push(c);
            }
        }
    }
    acts
}

/// Whether a body has a call statement or `terminate` anywhere.
fn has_effect_statement(statements: &[Statement]) -> bool {
    Statement::any_in(statements, |s| {
        matches!(
            s,
            Statement::Call { .. } | Statement::Terminate { .. } | Statement::Print { .. }
        )
    })
}

/// For each output slot of `f`, the inputs it can depend on.
fn outputs_reads(arena: &ExprArena, f: &Function) -> Option<Vec<Vec<u32>>> {
    let inputs = f.inputs as usize;
    if f.slots.len().saturating_mul(inputs.max(1)) > MAX_PAIRS || leaves_early(&f.body) {
        return None;
    }
    let mut flow = Flow {
        arena,
        inputs,
        deps: (0..f.slots.len())
            .map(|s| {
                let mut d = vec![false; inputs];
                if s < inputs {
                    d[s] = true;
                }
                d
            })
            .collect(),
    };
    let control = vec![false; inputs];
    flow.statements(&f.body, &control);
    let outputs = (inputs..inputs + f.outputs as usize)
        .map(|s| {
            let d = flow.deps.get(s)?;
            Some((0..inputs as u32).filter(|&i| d[i as usize]).collect())
        })
        .collect::<Option<Vec<Vec<u32>>>>()?;
    Some(outputs)
}

/// Whether a body has a `return` or `break` anywhere (whose cut paths the analysis does not
/// follow).
fn leaves_early(statements: &[Statement]) -> bool {
    Statement::any_in(statements, |s| {
        matches!(s, Statement::Return { .. } | Statement::Break { .. })
    })
}

/// The inputs each slot's value can depend on so far.
struct Flow<'a> {
    arena: &'a ExprArena,
    inputs: usize,
    deps: Vec<Vec<bool>>,
}

impl Flow<'_> {
    /// The inputs the value of `e` can depend on, with `control`'s.
    fn reads(&self, e: ExprId, control: &[bool]) -> Vec<bool> {
        let mut d = control.to_vec();
        for n in eqm_ir::symbolic::reachable(self.arena, e, &|_| false) {
            if let Node::Local(k) = self.arena.get(n)
                && let Some(from) = self.deps.get(*k as usize)
            {
                d.iter_mut().zip(from).for_each(|(a, b)| *a |= *b);
            }
        }
        d
    }

    fn statements(&mut self, statements: &[Statement], control: &[bool]) {
        for s in statements {
            match s {
                Statement::Assign {
                    target: Place::Local(t),
                    value,
                    ..
                } => {
                    let d = self.reads(*value, control);
                    if let Some(slot) = self.deps.get_mut(*t as usize) {
                        *slot = d;
                    }
                }
                Statement::Assign { .. } => {}
                Statement::If {
                    branches, else_branch, ..
                } => {
                    // Each branch runs under the conditions tested before it; afterwards a
                    // slot can hold what any branch (or none) left in it.
                    let before = self.deps.clone();
                    let mut joined = before.clone();
                    let mut tested = control.to_vec();
                    for (condition, body) in branches {
                        tested = self.reads(*condition, &tested);
                        self.deps = before.clone();
                        self.statements(body, &tested);
                        join(&mut joined, &self.deps);
                    }
                    self.deps = before;
                    self.statements(else_branch, &tested);
                    join(&mut joined, &self.deps);
                    self.deps = joined;
                }
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        self.statements(body, control);
                    }
                }
                Statement::For {
                    index,
                    start,
                    step,
                    stop,
                    body,
                    ..
                } => {
                    let mut c = self.reads(*start, control);
                    for e in [*step, *stop] {
                        c = self.reads(e, &c);
                    }
                    if let Some(slot) = self.deps.get_mut(*index as usize) {
                        *slot = c.clone();
                    }
                    self.fixed_point(body, None, &c);
                }
                Statement::While { condition, body, .. } => self.fixed_point(body, Some(*condition), control),
                Statement::Assert { .. }
                | Statement::Terminate { .. }
                | Statement::Print { .. }
                | Statement::Call { .. } => {}
                Statement::Return { .. } | Statement::Break { .. } => {}
            }
        }
    }

    /// A loop body run until no slot's dependencies grow (they only grow, and are bounded by
    /// the inputs), each run under the loop's condition as read at its start.
    fn fixed_point(&mut self, body: &[Statement], condition: Option<ExprId>, control: &[bool]) {
        loop {
            let before = self.deps.clone();
            let c = match condition {
                Some(e) => self.reads(e, control),
                None => control.to_vec(),
            };
            self.statements(body, &c);
            join(&mut self.deps, &before);
            if self.deps == before {
                return;
            }
            debug_assert!(self.deps.iter().all(|d| d.len() == self.inputs));
        }
    }
}

/// `into` joined with `other`, slot by slot.
fn join(into: &mut [Vec<bool>], other: &[Vec<bool>]) {
    for (a, b) in into.iter_mut().zip(other) {
        a.iter_mut().zip(b).for_each(|(x, y)| *x |= *y);
    }
}
