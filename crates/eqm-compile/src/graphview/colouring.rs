//! The replay of the colouring procedure on the bipartite graph: one step a line, each applying
//! the rule for an equation or unknown with exactly one uncoloured edge, until every equation
//! has its number or an algebraic loop stops the procedure.
//!
//! Input: the graph view's nodes, edges and blocks. Output: the steps, each its sentence with
//! the edges it paints and the equations it numbers (the text of `--steps` is made from the
//! same steps, so a drawing that replays them cannot disagree with it). It decides
//! nothing: where the procedure gets stuck it takes the plan's loop as one block.

use super::*;

/// Which side of the graph a colouring rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Equation,
    Variable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Colour {
    Uncoloured,
    Red,
    Blue,
}

/// The state of the replay: a colour per edge, a number per equation, and counts of the
/// uncoloured edges at each node so that each rule is checked in constant time.
pub(super) struct Colouring {
    pub(super) colour: Vec<Colour>,
    /// Edge indices at each equation and at each variable.
    pub(super) at_equation: Vec<Vec<usize>>,
    pub(super) at_variable: Vec<Vec<usize>>,
    pub(super) open_equation: Vec<usize>,
    pub(super) open_variable: Vec<usize>,
    pub(super) numbers: Vec<usize>,
    pub(super) solves: Vec<Option<usize>>,
    pub(super) var_done: Vec<bool>,
    /// The lowest and highest free numbers.
    pub(super) low: usize,
    pub(super) high: usize,
    /// The numbered equations, keyed by their (first) number: a loop is one entry.
    pub(super) by_number: BTreeMap<usize, Vec<usize>>,
}

impl Colouring {
    pub(super) fn new(view: &GraphView) -> Colouring {
        let (n_eq, n_var) = (view.equations.len(), view.variables.len());
        let mut at_equation = vec![Vec::new(); n_eq];
        let mut at_variable = vec![Vec::new(); n_var];
        for (k, e) in view.edges.iter().enumerate() {
            if let (Some(a), Some(b)) = (at_equation.get_mut(e.equation), at_variable.get_mut(e.variable)) {
                a.push(k);
                b.push(k);
            }
        }
        Colouring {
            colour: vec![Colour::Uncoloured; view.edges.len()],
            open_equation: at_equation.iter().map(Vec::len).collect(),
            open_variable: at_variable.iter().map(Vec::len).collect(),
            at_equation,
            at_variable,
            numbers: vec![0; n_eq],
            solves: vec![None; n_eq],
            var_done: vec![false; n_var],
            low: 1,
            high: n_eq,
            by_number: BTreeMap::new(),
        }
    }

    pub(super) fn remaining(&self) -> usize {
        self.numbers.iter().filter(|n| **n == 0).count()
    }

    pub(super) fn paint(&mut self, view: &GraphView, edge: usize, colour: Colour) {
        if self.colour[edge] != Colour::Uncoloured {
            return;
        }
        self.colour[edge] = colour;
        let e = view.edges[edge];
        self.open_equation[e.equation] -= 1;
        self.open_variable[e.variable] -= 1;
    }

    /// The one uncoloured edge at a node, if it has exactly one.
    pub(super) fn single_open(&self, edges: &[usize]) -> Option<usize> {
        let mut open = edges.iter().filter(|&&k| self.colour[k] == Colour::Uncoloured);
        match (open.next(), open.next()) {
            (Some(&k), None) => Some(k),
            _ => None,
        }
    }

    /// Paints the uncoloured edges in `edges` blue and returns them.
    pub(super) fn paint_rest_blue(&mut self, view: &GraphView, edges: &[usize]) -> Vec<usize> {
        let open: Vec<usize> = edges
            .iter()
            .copied()
            .filter(|&k| self.colour[k] == Colour::Uncoloured)
            .collect();
        for &k in &open {
            self.paint(view, k, Colour::Blue);
        }
        open
    }

    pub(super) fn record(&mut self, row: usize, column: usize, number: usize) {
        self.numbers[row] = number;
        self.solves[row] = Some(column);
        self.var_done[column] = true;
        self.by_number.insert(number, vec![row]);
    }

    /// Rule 1 (`side` is [`Side::Equation`]) or rule 2 ([`Side::Variable`]) at `node`: the
    /// step (its sentence without the step number) when it applies.
    pub(super) fn rule(&mut self, view: &GraphView, side: Side, node: usize) -> Option<ReplayStep> {
        let (done, open, edges) = match side {
            Side::Equation => (
                self.numbers[node] != 0,
                self.open_equation[node],
                &self.at_equation[node],
            ),
            Side::Variable => (self.var_done[node], self.open_variable[node], &self.at_variable[node]),
        };
        if done || open != 1 {
            return None;
        }
        let edge = self.single_open(edges)?;
        let Edge {
            equation: row,
            variable: column,
            ..
        } = view.edges[edge];
        self.paint(view, edge, Colour::Red);
        let number = match side {
            Side::Equation => {
                self.low += 1;
                self.low - 1
            }
            Side::Variable => {
                self.high = self.high.saturating_sub(1);
                self.high + 1
            }
        };
        self.record(row, column, number);
        // The node at the far end of the red edge is now used up: its other edges turn blue.
        let (eq, var) = (&view.equations[row].label, &view.variables[column]);
        let (near, far, far_edges) = match side {
            Side::Equation => (eq, var, self.at_variable[column].clone()),
            Side::Variable => (var, eq, self.at_equation[row].clone()),
        };
        let blue = self.paint_rest_blue(view, &far_edges);
        let tail = if blue.is_empty() {
            String::new()
        } else {
            let names = match side {
                Side::Equation => view.equation_list(&blue.iter().map(|&k| view.edges[k].equation).collect::<Vec<_>>()),
                Side::Variable => view.variable_list(&blue.iter().map(|&k| view.edges[k].variable).collect::<Vec<_>>()),
            };
            format!("; the other edges of {far} turn blue (to {names})")
        };
        let highest = if side == Side::Variable {
            " (the highest free one)"
        } else {
            ""
        };
        Some(ReplayStep {
            text: format!(
                "{near} has one uncoloured edge, to {far}: {eq} solves for {var}, number {number}{highest}{tail}"
            ),
            red: vec![edge],
            blue,
            numbered: vec![(row, number)],
        })
    }

    /// Takes the first block of the evaluation order that still has unnumbered equations as
    /// one unit: its equations get the lowest free numbers and solve for the unknowns the plan
    /// matched them to.
    pub(super) fn take_block(&mut self, view: &GraphView) -> Option<ReplayStep> {
        let block = view
            .blocks
            .iter()
            .find(|b| b.equations.iter().any(|&r| self.numbers.get(r) == Some(&0)))?;
        let rows: Vec<usize> = block
            .equations
            .iter()
            .copied()
            .filter(|&r| self.numbers.get(r) == Some(&0))
            .collect();
        let first = self.low;
        let mut red = Vec::new();
        let mut numbered = Vec::new();
        for &row in &rows {
            let number = self.low;
            self.low += 1;
            self.numbers[row] = number;
            numbered.push((row, number));
            if let Some(column) = view.equations[row].solves {
                self.solves[row] = Some(column);
                if let Some(done) = self.var_done.get_mut(column) {
                    *done = true;
                }
                if let Some(&k) = self.at_equation[row]
                    .iter()
                    .find(|&&k| view.edges[k].variable == column)
                    && self.colour[k] == Colour::Uncoloured
                {
                    self.paint(view, k, Colour::Red);
                    red.push(k);
                }
            }
        }
        self.by_number.insert(first, rows.clone());
        // Every other uncoloured edge of the block's equations and unknowns turns blue: inside
        // the block they are the loop's couplings, outside it they lead to equations that use
        // the block's results.
        let mut blue = Vec::new();
        for &row in &rows {
            let edges = self.at_equation[row].clone();
            blue.extend(self.paint_rest_blue(view, &edges));
            if let Some(column) = view.equations[row].solves {
                let edges = self.at_variable[column].clone();
                blue.extend(self.paint_rest_blue(view, &edges));
            }
        }
        let last = self.low - 1;
        let what = if rows.len() > 1 {
            let tearing = if block.tearing.is_empty() {
                String::new()
            } else {
                format!(
                    ", torn at {} with residual {}",
                    view.variable_list(&block.tearing),
                    view.equation_list(&block.residuals)
                )
            };
            format!(
                "{} form an algebraic loop in {} ({}{tearing}): they are solved together as one block, numbers {first} to {last}",
                view.equation_list(&rows),
                view.variable_list(&block.unknowns),
                if block.linear { "linear" } else { "nonlinear" },
            )
        } else {
            format!(
                "{} is taken as the next block of the evaluation order, number {first}",
                view.equation_list(&rows)
            )
        };
        Some(ReplayStep {
            text: format!(
                "{what}; the {} remaining uncoloured edge(s) at its equations and unknowns turn blue",
                blue.len()
            ),
            red,
            blue,
            numbered,
        })
    }
}
