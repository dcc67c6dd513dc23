//! The bipartite equation/variable graph of an analysed model, replayed and drawn the way the
//! sorting is taught by hand: `eqm explain --steps` and `--svg`.
//!
//! Input: a [`Analysis`] (the DAE and its plan). [`GraphView::new`]
//! turns it into plain nodes and edges: one node per equation in DAE order (`e1`, `e2`, ... with
//! the equation's text, numbered as `eqm explain` numbers them), one node per algorithm-section
//! output after them ("algorithm of" and the instance), and one node per unknown (an algebraic
//! variable, or `der(x)` for a state `x`). Edges come from [`Plan::incidence`]; an edge is
//! *matched* (drawn red) when the plan's matching makes the equation solve for
//! that unknown. Every equation carries its sort number: its position in the plan's evaluation
//! order.
//!
//! Output: [`GraphView::steps`], a text replay of the colouring procedure one step a line, and
//! [`GraphView::svg`], a standalone SVG 1.1 drawing of the graph with the matching in red and
//! the other edges in blue. Both are deterministic: every order comes from vectors, none from a hash map.
//!
//! What it deliberately does not do: it decides nothing about the model. The replay repeats the
//! simple hand procedure for teaching, and where that procedure gets stuck it takes the plan's
//! algebraic loop as one block instead of running a loop-breaking algorithm of its own; the
//! plan stays the one source of the evaluation order that later stages use. It does no IO (the
//! CLI writes the file), draws no index reduction (the plan does not apply it yet), and refuses,
//! with a [`TooLarge`] value, graphs too large to replay ([`REPLAY_LIMIT`] equations) or to draw
//! ([`DRAW_LIMIT`] nodes) usefully.

use crate::analysis::Analysis;
use crate::dae::Dae;
use crate::events::Hybrid;
use crate::plan::{Block, Plan, Unknown, unknown_name};
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprArena, ExprId};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

mod colouring;
mod svg;

use colouring::*;
use svg::*;

/// The most equations `steps` replays: beyond it the list of steps is longer than anyone reads.
pub const REPLAY_LIMIT: usize = 200;
/// The most nodes (equations plus unknowns) `svg` draws: beyond it edges merge into a blur.
pub const DRAW_LIMIT: usize = 400;

/// The graph of one analysed model, in display order.
#[derive(Debug, Clone)]
pub struct GraphView {
    /// The model's name, for titles.
    pub model: String,
    /// Equation nodes in the plan's row order: the DAE's equations, then algorithm outputs.
    pub equations: Vec<EquationNode>,
    /// Unknown names in column order: the order in which they first appear when the equations
    /// are read from top to bottom, left to right, as a person drawing the graph by hand writes
    /// them down.
    pub variables: Vec<String>,
    /// Edges sorted by equation, then by variable column.
    pub edges: Vec<Edge>,
    /// The plan's blocks in evaluation order, with equations in the order they are computed.
    pub blocks: Vec<BlockView>,
}

/// One equation (or algorithm output) node.
#[derive(Debug, Clone)]
pub struct EquationNode {
    /// `e3`: the name `eqm explain` uses (algorithm rows continue the numbering).
    pub label: String,
    /// The equation as written (`lhs = rhs`), or `algorithm of <instance>`.
    pub text: String,
    /// Position of this equation in the plan's evaluation order, from 1.
    pub sort: usize,
    /// The variable column the plan makes this equation solve for.
    pub solves: Option<usize>,
    /// Whether this equation is part of an algebraic loop (solved together with others).
    pub in_loop: bool,
    /// Whether this row stands for an output of an algorithm section rather than an equation.
    pub algorithm: bool,
    /// Where the equation is written: in a component's class, or the `connect` that made a
    /// connection equation (none for an algorithm row).
    pub span: Option<Span>,
}

/// An edge: `equation` (index into `equations`) contains `variable` (index into `variables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub equation: usize,
    pub variable: usize,
    /// The equation solves for this variable (drawn red); otherwise it only
    /// uses a value another equation computes (blue).
    pub matched: bool,
}

/// One block of the evaluation order: a single equation, or an algebraic loop.
#[derive(Debug, Clone)]
pub struct BlockView {
    /// Equation indices in the order they are evaluated (a loop's inner assignments first,
    /// then its residuals).
    pub equations: Vec<usize>,
    /// Variable columns the block computes.
    pub unknowns: Vec<usize>,
    /// Tearing variables of a loop (empty for a single equation).
    pub tearing: Vec<usize>,
    /// Residual equations of a loop (empty for a single equation).
    pub residuals: Vec<usize>,
    /// A loop whose equations are all linear in its unknowns.
    pub linear: bool,
}

/// A graph too large to replay or to draw usefully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLarge {
    Replay { equations: usize },
    Draw { nodes: usize },
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TooLarge::Replay { equations } => write!(
                f,
                "too large to replay step by step ({equations} equations); the sorted assignment list above gives the result"
            ),
            TooLarge::Draw { nodes } => write!(
                f,
                "the model is too large to draw: its graph has {nodes} nodes (equations and unknowns), more than the {DRAW_LIMIT} a drawing can show readably"
            ),
        }
    }
}

impl std::error::Error for TooLarge {}

/// The outcome of replaying the colouring procedure.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The steps, one a line, as `steps` prints them.
    pub text: String,
    /// For each equation, its number in the replay (from 1; 0 if it never got one, which
    /// happens only for a plan that is not a complete evaluation order).
    pub numbers: Vec<usize>,
    /// For each equation, the variable column of its red edge.
    pub solves: Vec<Option<usize>>,
    /// The equations in replay order, grouped: one group per single equation, one per
    /// algebraic loop taken as a block.
    pub groups: Vec<Vec<usize>>,
    /// The numbered steps in order, each with the edges it paints: applying them in turn to an
    /// uncoloured graph colours it as `text` describes (`text` prints each step's `text`).
    pub steps: Vec<ReplayStep>,
}

/// One numbered step of the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayStep {
    /// The step's line as `eqm explain --steps` prints it, without its indentation
    /// (`3. e2 has one uncoloured edge, ...`).
    pub text: String,
    /// The edges (indices into [`GraphView::edges`]) the step paints red: the matching.
    pub red: Vec<usize>,
    /// The edges the step paints blue.
    pub blue: Vec<usize>,
    /// The equations (indices into [`GraphView::equations`]) the step numbers, each with its
    /// number.
    pub numbered: Vec<(usize, usize)>,
}

impl GraphView {
    /// Builds the graph of an analysed model. Never fails: a plan that leaves something out
    /// (an equation without a block, an unmatched row) gives a node without a number or a red
    /// edge rather than a panic.
    pub fn new(analysis: &Analysis) -> GraphView {
        let (dae, plan) = (&analysis.dae, &analysis.plan);
        let arena = dae.exprs();
        let n_rows = plan.matching.len().max(dae.equations.len());
        let index_of: BTreeMap<ExprId, usize> = plan.leaves.iter().enumerate().map(|(i, l)| (*l, i)).collect();

        // Algorithm rows are numbered after the equations; the plan names each one's section
        // and output only in its blocks.
        let mut algorithm_rows: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        for block in &plan.blocks {
            if let Block::Algorithm { eq, unknown, algorithm } = block {
                algorithm_rows.insert(*eq, (*unknown, *algorithm));
            }
        }

        // For each row: its unknowns in reading order (which fixes the column order) and its
        // edge set. Equations take their edges from the plan; an algorithm output is connected
        // to what its section reads, as the plan connects it.
        let incidence = plan.incidence(dae);
        let unknown_index: BTreeMap<Unknown, usize> = plan.unknowns.iter().enumerate().map(|(i, u)| (*u, i)).collect();
        let mut sections: BTreeMap<usize, (Vec<usize>, String)> = BTreeMap::new();
        let mut reading: Vec<Vec<usize>> = Vec::with_capacity(n_rows);
        let mut row_edges: Vec<Vec<usize>> = Vec::with_capacity(n_rows);
        let mut texts: Vec<String> = Vec::with_capacity(n_rows);
        for row in 0..n_rows {
            if let Some(eq) = dae.equations.get(row) {
                let mut order = Vec::new();
                for root in [eq.lhs, eq.rhs] {
                    visit_unknowns(arena, root, &index_of, &mut |u| order.push(u));
                }
                reading.push(order);
                row_edges.push(incidence.get(row).cloned().unwrap_or_default());
                texts.push(dae.equation_text(eq));
            } else if let Some(&(output, algorithm)) = algorithm_rows.get(&row) {
                // A section with several outputs has one row per output; it is read once.
                let (reads, instance) = sections
                    .entry(algorithm)
                    .or_insert_with(|| algorithm_reads(dae, &unknown_index, algorithm, &index_of));
                let mut order = vec![output];
                order.extend(reads.iter().copied());
                let mut edges = order.clone();
                edges.sort_unstable();
                edges.dedup();
                reading.push(order);
                row_edges.push(edges);
                texts.push(format!("algorithm of {instance}"));
            } else {
                reading.push(Vec::new());
                row_edges.push(Vec::new());
                texts.push("(row without an equation)".to_string());
            }
        }

        // Columns: unknowns by first appearance, then any unknown no row mentions.
        let n_unknowns = plan.unknowns.len();
        let mut column_of = vec![usize::MAX; n_unknowns];
        let mut order_of_columns: Vec<usize> = Vec::with_capacity(n_unknowns);
        for u in reading.iter().flatten().copied().chain(0..n_unknowns) {
            if let Some(c) = column_of.get_mut(u)
                && *c == usize::MAX
            {
                *c = order_of_columns.len();
                order_of_columns.push(u);
            }
        }
        let column = |u: usize| column_of.get(u).copied().filter(|c| *c != usize::MAX);
        let variables: Vec<String> = order_of_columns
            .iter()
            .map(|&u| unknown_name(dae, plan.unknowns[u]))
            .collect();

        let solves: Vec<Option<usize>> = (0..n_rows)
            .map(|row| plan.matching.get(row).and_then(|&u| column(u)))
            .collect();
        let mut edges: Vec<Edge> = Vec::new();
        for (row, unknowns) in row_edges.iter().enumerate() {
            let mut columns: Vec<usize> = unknowns.iter().filter_map(|&u| column(u)).collect();
            columns.sort_unstable();
            columns.dedup();
            edges.extend(columns.into_iter().map(|variable| Edge {
                equation: row,
                variable,
                matched: solves[row] == Some(variable),
            }));
        }

        let blocks = block_views(plan, n_rows, &column);
        let mut sort = vec![0usize; n_rows];
        let mut in_loop = vec![false; n_rows];
        for (position, row) in blocks.iter().flat_map(|b| b.equations.iter()).enumerate() {
            if let Some(s) = sort.get_mut(*row) {
                *s = position + 1;
            }
        }
        for block in blocks.iter().filter(|b| b.equations.len() > 1) {
            for &row in &block.equations {
                if let Some(flag) = in_loop.get_mut(row) {
                    *flag = true;
                }
            }
        }
        let equations = texts
            .into_iter()
            .enumerate()
            .map(|(row, text)| EquationNode {
                label: format!("e{}", row + 1),
                text,
                sort: sort[row],
                solves: solves[row],
                in_loop: in_loop[row],
                algorithm: row >= dae.equations.len(),
                span: dae.equations.get(row).map(|eq| eq.span),
            })
            .collect();
        GraphView {
            model: dae.flat.name.clone(),
            equations,
            variables,
            edges,
            blocks,
        }
    }

    /// The text of `eqm explain --steps`: the replay, or a sentence saying the model is too
    /// large for one.
    pub fn steps(&self) -> String {
        match self.replay() {
            Ok(replay) => replay.text,
            Err(too_large) => format!("colouring steps: {too_large}\n"),
        }
    }

    /// Replays the colouring procedure. It sweeps the equations from top to bottom, then the
    /// unknowns, and repeats: an equation with exactly one uncoloured edge
    /// solves for that unknown (red) and gets the lowest free number, so it is computed early
    /// from values known before it; an unknown with exactly one uncoloured edge can only come
    /// from that edge's equation, which gets the highest free number, because no equation still
    /// unnumbered needs the unknown. After each choice the other edges of the unknown (first
    /// rule) or of the equation (second rule) turn blue. When neither rule applies, every
    /// remaining node has two or more uncoloured edges: an algebraic loop. The replay then
    /// takes the first remaining block of the plan's evaluation order as one unit, gives it the
    /// lowest free numbers (everything it needs is already numbered below it) and goes on.
    pub fn replay(&self) -> Result<Replay, TooLarge> {
        let n_eq = self.equations.len();
        if n_eq > REPLAY_LIMIT {
            return Err(TooLarge::Replay { equations: n_eq });
        }
        let mut state = Colouring::new(self);
        let mut out = String::new();
        if n_eq == 0 {
            out.push_str("colouring steps: the model has no equations, so there is nothing to colour\n");
            return Ok(Replay {
                text: out,
                numbers: Vec::new(),
                solves: Vec::new(),
                groups: Vec::new(),
                steps: Vec::new(),
            });
        }
        let _ = writeln!(
            out,
            "colouring steps, {} equations, {} unknowns, {} edges:",
            n_eq,
            self.variables.len(),
            self.edges.len()
        );
        out.push_str(
            "  rule 1: an equation with exactly one uncoloured edge solves for that unknown (red) and gets the lowest free number\n",
        );
        out.push_str(
            "  rule 2: an unknown with exactly one uncoloured edge is solved by that edge's equation (red), which gets the highest free number\n",
        );
        out.push_str(
            "  after each choice the other uncoloured edges of the unknown (rule 1) or of the equation (rule 2) turn blue\n",
        );
        let _ = writeln!(
            out,
            "  unknowns from top to bottom (in the order the equations mention them): {}",
            self.variables.join(", ")
        );
        // `eqm explain` names algorithm outputs by their section only; the steps need a label.
        for (row, eq) in self.equations.iter().enumerate().filter(|(_, e)| e.algorithm) {
            let computes = eq
                .solves
                .map(|c| format!(", computing {}", self.variable_list(&[c])))
                .unwrap_or_default();
            let _ = writeln!(out, "  e{} is the {}{computes}", row + 1, eq.text);
        }

        let mut steps: Vec<ReplayStep> = Vec::new();
        let mut pass = 0usize;
        loop {
            pass += 1;
            let mut progress = false;
            // One sweep over each side in turn, as the procedure is done by hand.
            for (side, count, heading) in [
                (Side::Equation, n_eq, "equations"),
                (Side::Variable, self.variables.len(), "unknowns"),
            ] {
                let mut lines = Vec::new();
                for node in 0..count {
                    if let Some(mut taken) = state.rule(self, side, node) {
                        taken.text = format!("{}. {}", steps.len() + 1, taken.text);
                        lines.push(format!("  {}", taken.text));
                        steps.push(taken);
                    }
                }
                if !lines.is_empty() {
                    progress = true;
                    let _ = writeln!(out, "pass {pass}, {heading} from top to bottom:");
                    out.push_str(&(lines.join("\n") + "\n"));
                }
            }
            if state.remaining() == 0 {
                break;
            }
            if progress {
                continue;
            }
            let remaining: Vec<usize> = (0..n_eq).filter(|&r| state.numbers[r] == 0).collect();
            let unknowns: Vec<usize> = (0..self.variables.len()).filter(|&c| !state.var_done[c]).collect();
            let _ = writeln!(
                out,
                "stuck: no equation and no unknown has exactly one uncoloured edge; {} equations ({}) and {} unknowns ({}) remain, each with two or more: \
                 the rest contains an algebraic loop, equations that must be solved together",
                remaining.len(),
                self.equation_list(&remaining),
                unknowns.len(),
                self.variable_list(&unknowns)
            );
            match state.take_block(self) {
                Some(mut taken) => {
                    taken.text = format!("{}. {}", steps.len() + 1, taken.text);
                    let _ = writeln!(out, "  {}", taken.text);
                    steps.push(taken);
                }
                None => {
                    // A complete plan always has a block left here; without one the replay
                    // cannot go on, and says so instead of looping.
                    out.push_str("  the plan has no block for these equations: the replay stops here\n");
                    break;
                }
            }
        }

        let groups: Vec<Vec<usize>> = std::mem::take(&mut state.by_number).into_values().collect();
        let order: Vec<String> = groups
            .iter()
            .map(|g| match g.as_slice() {
                [row] => self.equations[*row].label.clone(),
                _ => format!("[{}]", self.equation_list(g).replace(", ", " ")),
            })
            .collect();
        let _ = writeln!(out, "every edge is coloured; order by number: {}", order.join(", "));
        out.push_str(
            "  a valid evaluation order: every equation comes after the equations that compute the other unknowns it uses \
             (a loop in [] is solved as one block); the sorted assignments above may order independent equations differently\n",
        );
        Ok(Replay {
            text: out,
            numbers: state.numbers,
            solves: state.solves,
            groups,
            steps,
        })
    }

    /// The SVG drawing, or [`TooLarge::Draw`] above [`DRAW_LIMIT`] nodes.
    pub fn svg(&self) -> Result<String, TooLarge> {
        let nodes = self.equations.len() + self.variables.len();
        if nodes > DRAW_LIMIT {
            return Err(TooLarge::Draw { nodes });
        }
        Ok(Drawing::new(self).render(self))
    }

    fn equation_list(&self, rows: &[usize]) -> String {
        let labels: Vec<&str> = rows
            .iter()
            .filter_map(|&r| self.equations.get(r).map(|e| e.label.as_str()))
            .collect();
        labels.join(", ")
    }

    fn variable_list(&self, columns: &[usize]) -> String {
        let names: Vec<&str> = columns
            .iter()
            .filter_map(|&c| self.variables.get(c).map(String::as_str))
            .collect();
        names.join(", ")
    }
}

/// Calls `f` for each unknown occurring in `root`, in reading order (left to right), not
/// looking inside `der(...)` and `pre(...)`, whose arguments are states and left limits, not
/// unknowns. Iterative, so that a deep expression cannot overflow the stack.
fn visit_unknowns(arena: &ExprArena, root: ExprId, index_of: &BTreeMap<ExprId, usize>, f: &mut dyn FnMut(usize)) {
    let mut pending = vec![root];
    while let Some(id) = pending.pop() {
        match index_of.get(&id) {
            Some(&u) => f(u),
            None if eqm_ir::symbolic::is_symbol_operator(arena.get(id)) => {}
            None => {
                // Children go on the stack last-first so that the first child is read first.
                let children: Vec<ExprId> = arena.children(id).collect();
                pending.extend(children.into_iter().rev());
            }
        }
    }
}

/// The unknowns an algorithm section reads (in reading order, each once, its own outputs left
/// out because the section computes them) and the label of its instance.
fn algorithm_reads(
    dae: &Dae<Hybrid>,
    unknown_index: &BTreeMap<Unknown, usize>,
    algorithm: usize,
    index_of: &BTreeMap<ExprId, usize>,
) -> (Vec<usize>, String) {
    let Some(section) = dae.flat.algorithms.get(algorithm) else {
        return (Vec::new(), "an unknown section".to_string());
    };
    // Outputs start out as seen, so that only what the section reads is kept.
    let mut seen: BTreeSet<usize> = section
        .outputs
        .iter()
        .filter_map(|&v| unknown_index.get(&Unknown::Var(v)).copied())
        .collect();
    let mut reads: Vec<usize> = Vec::new();
    for statement in &section.statements {
        statement.for_each_expr(&mut |e, _| {
            visit_unknowns(dae.exprs(), e, index_of, &mut |u| {
                if seen.insert(u) {
                    reads.push(u);
                }
            })
        });
    }
    (reads, dae.flat.instance_label(section.instance))
}

/// The plan's blocks in evaluation order, in rows and columns.
fn block_views(plan: &Plan, n_rows: usize, column: &dyn Fn(usize) -> Option<usize>) -> Vec<BlockView> {
    let columns = |us: &[usize]| -> Vec<usize> { us.iter().filter_map(|&u| column(u)).collect() };
    let mut views = Vec::with_capacity(plan.blocks.len());
    for block in &plan.blocks {
        let mut view = match block {
            Block::Explicit { eq, unknown, .. }
            | Block::Implicit { eq, unknown }
            | Block::Algorithm { eq, unknown, .. } => BlockView {
                equations: vec![*eq],
                unknowns: columns(&[*unknown]),
                tearing: Vec::new(),
                residuals: Vec::new(),
                linear: false,
            },
            Block::Loop(l) => {
                // Inner assignments are computed first, then the residuals are checked; any
                // equation of the loop that neither lists goes last, so none is lost.
                let mut order: Vec<usize> = l.inner.iter().map(|(e, _, _)| *e).collect();
                order.extend(l.residuals.iter().copied());
                for e in &l.eqs {
                    if !order.contains(e) {
                        order.push(*e);
                    }
                }
                BlockView {
                    equations: order,
                    unknowns: columns(&l.unknowns),
                    tearing: columns(&l.tearing),
                    residuals: l.residuals.clone(),
                    linear: l.linear,
                }
            }
        };
        // Rows outside the graph cannot be drawn or numbered; a consistent plan has none.
        view.equations.retain(|&r| r < n_rows);
        views.push(view);
    }
    views
}
