//! The equation/variable bipartite graph in compressed sparse row (CSR) form.
//!
//! Input: equations given one at a time to an [`IncidenceBuilder`], each as a list of
//! `(variable, EdgeKind)` pairs. Output: an immutable [`Incidence`] with both views, equation →
//! variables (with the per-edge [`EdgeKind`]) and variable → equations, the latter built by a
//! counting sort in linear time. Also the typed ids [`EqIdx`] and [`VarIdx`] and the error type
//! [`StructuralError`] shared by the whole `structural` module.
//!
//! It deliberately does not know what an equation or variable is: no names, no expressions, no
//! spans. Deciding whether an occurrence is solvable is the caller's job; the graph only stores
//! the flag.

use std::fmt;

/// An equation of the system, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EqIdx(pub u32);

/// An unknown of the system, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarIdx(pub u32);

impl EqIdx {
    /// The id as an index into per-equation arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl VarIdx {
    /// The id as an index into per-variable arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Whether an equation can be solved symbolically for a variable occurring in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// The equation can be solved for the variable explicitly (e.g. it occurs linearly with a
    /// coefficient that is never zero).
    Solvable,
    /// The variable occurs, but solving for it needs a numeric (implicit) solve.
    Implicit,
}

/// Why a structural algorithm refused its input or gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StructuralError {
    /// An equation mentions a variable id that is not below the variable count.
    InvalidVar { eq: EqIdx, var: VarIdx },
    /// An equation id outside the graph was given.
    InvalidEq { eq: EqIdx },
    /// More than `u32::MAX` equations, variables or edges: ids would not fit.
    TooLarge,
    /// A matching, derivative table or block does not fit the graph it is used with.
    Inconsistent(&'static str),
    /// The system is structurally singular: the listed equations cannot all be assigned
    /// distinct variables, even allowing any number of differentiations.
    Singular {
        /// Equations (of the graph given to the algorithm) left without a variable.
        unmatched_eqs: Vec<EqIdx>,
    },
}

impl fmt::Display for StructuralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StructuralError::InvalidVar { eq, var } => {
                write!(f, "equation {} mentions variable {} which does not exist", eq.0, var.0)
            }
            StructuralError::InvalidEq { eq } => write!(f, "equation {} does not exist", eq.0),
            StructuralError::TooLarge => write!(f, "the system has more than 2^32 - 1 equations, variables or edges"),
            StructuralError::Inconsistent(what) => write!(f, "inconsistent structural input: {what}"),
            StructuralError::Singular { unmatched_eqs } => {
                write!(
                    f,
                    "the system is structurally singular ({} equations unmatched)",
                    unmatched_eqs.len()
                )
            }
        }
    }
}

impl std::error::Error for StructuralError {}

/// The bipartite graph: for each equation its variables (sorted by id, each once) with the edge
/// kind, and for each variable the equations it occurs in (sorted by id).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Incidence {
    n_vars: u32,
    /// `eq_vars[eq_start[e]..eq_start[e + 1]]` are the variables of equation `e`.
    eq_start: Vec<u32>,
    eq_vars: Vec<VarIdx>,
    eq_kinds: Vec<EdgeKind>,
    /// `var_eqs[var_start[v]..var_start[v + 1]]` are the equations of variable `v`.
    var_start: Vec<u32>,
    var_eqs: Vec<EqIdx>,
}

impl Incidence {
    /// Builds a graph from per-equation edge lists; a shorthand for the builder.
    pub fn from_equations<I, E>(n_vars: usize, equations: I) -> Result<Incidence, StructuralError>
    where
        I: IntoIterator<Item = E>,
        E: IntoIterator<Item = (VarIdx, EdgeKind)>,
    {
        let mut builder = IncidenceBuilder::new(n_vars)?;
        for eq in equations {
            builder.add_equation(eq)?;
        }
        Ok(builder.build())
    }

    /// Number of equations.
    pub fn n_eqs(&self) -> usize {
        self.eq_start.len().saturating_sub(1)
    }

    /// Number of variables.
    pub fn n_vars(&self) -> usize {
        self.n_vars as usize
    }

    /// Number of edges (occurrences of a variable in an equation).
    pub fn n_edges(&self) -> usize {
        self.eq_vars.len()
    }

    /// All equation ids in increasing order.
    pub fn eqs(&self) -> impl Iterator<Item = EqIdx> + use<> {
        (0..self.n_eqs() as u32).map(EqIdx)
    }

    /// All variable ids in increasing order.
    pub fn vars(&self) -> impl Iterator<Item = VarIdx> + use<> {
        (0..self.n_vars).map(VarIdx)
    }

    fn eq_range(&self, eq: EqIdx) -> std::ops::Range<usize> {
        match (self.eq_start.get(eq.index()), self.eq_start.get(eq.index() + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// The variables of an equation, sorted by id; empty for an id outside the graph.
    pub fn eq_vars(&self, eq: EqIdx) -> &[VarIdx] {
        &self.eq_vars[self.eq_range(eq)]
    }

    /// The edge kinds of an equation, parallel to [`Incidence::eq_vars`].
    pub fn eq_kinds(&self, eq: EqIdx) -> &[EdgeKind] {
        &self.eq_kinds[self.eq_range(eq)]
    }

    /// The edges of an equation as `(variable, kind)` pairs, sorted by variable id.
    pub fn eq_edges(&self, eq: EqIdx) -> impl Iterator<Item = (VarIdx, EdgeKind)> + '_ {
        self.eq_vars(eq).iter().copied().zip(self.eq_kinds(eq).iter().copied())
    }

    /// The equations a variable occurs in, sorted by id; empty for an id outside the graph.
    pub fn var_eqs(&self, var: VarIdx) -> &[EqIdx] {
        match (self.var_start.get(var.index()), self.var_start.get(var.index() + 1)) {
            (Some(&a), Some(&b)) => &self.var_eqs[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The kind of the edge between `eq` and `var`, or `None` if the variable does not occur.
    /// Binary search over the equation's sorted variables: O(log degree).
    pub fn edge(&self, eq: EqIdx, var: VarIdx) -> Option<EdgeKind> {
        let vars = self.eq_vars(eq);
        vars.binary_search(&var).ok().map(|i| self.eq_kinds(eq)[i])
    }
}

/// Builds an [`Incidence`] one equation at a time.
///
/// Variables of an equation may come in any order and repeated; the builder sorts them and keeps
/// one edge per variable. A repeated variable is `Solvable` only if every occurrence said so,
/// because one implicit occurrence is enough to prevent an explicit solve.
#[derive(Debug, Clone)]
pub struct IncidenceBuilder {
    n_vars: u32,
    eq_start: Vec<u32>,
    edges: Vec<(VarIdx, EdgeKind)>,
}

impl IncidenceBuilder {
    /// A builder for a graph over `n_vars` variables.
    pub fn new(n_vars: usize) -> Result<IncidenceBuilder, StructuralError> {
        let n_vars = u32::try_from(n_vars).map_err(|_| StructuralError::TooLarge)?;
        Ok(IncidenceBuilder {
            n_vars,
            eq_start: vec![0],
            edges: Vec::new(),
        })
    }

    /// Reserves room for `eqs` more equations and `edges` more edges.
    pub fn reserve(&mut self, eqs: usize, edges: usize) {
        self.eq_start.reserve(eqs);
        self.edges.reserve(edges);
    }

    /// Adds `count` variables and returns the id of the first one.
    pub fn add_vars(&mut self, count: usize) -> Result<VarIdx, StructuralError> {
        let first = self.n_vars;
        let count = u32::try_from(count).map_err(|_| StructuralError::TooLarge)?;
        self.n_vars = first.checked_add(count).ok_or(StructuralError::TooLarge)?;
        Ok(VarIdx(first))
    }

    /// Number of variables so far.
    pub fn n_vars(&self) -> usize {
        self.n_vars as usize
    }

    /// Number of equations so far.
    pub fn n_eqs(&self) -> usize {
        self.eq_start.len() - 1
    }

    /// Adds an equation and returns its id. Fails (leaving the builder unchanged) if a variable
    /// id is not below the current variable count or the graph would exceed `u32` ids.
    pub fn add_equation<E>(&mut self, edges: E) -> Result<EqIdx, StructuralError>
    where
        E: IntoIterator<Item = (VarIdx, EdgeKind)>,
    {
        let eq = EqIdx(u32::try_from(self.n_eqs()).map_err(|_| StructuralError::TooLarge)?);
        if eq.0 == u32::MAX {
            return Err(StructuralError::TooLarge);
        }
        let start = self.edges.len();
        for (var, kind) in edges {
            if var.0 >= self.n_vars {
                self.edges.truncate(start);
                return Err(StructuralError::InvalidVar { eq, var });
            }
            self.edges.push((var, kind));
        }
        let new = &mut self.edges[start..];
        // Sorting by (variable, kind) puts `Implicit` after `Solvable` for the same variable, so
        // keeping the last of each run keeps `Implicit` whenever any occurrence was implicit.
        new.sort_unstable();
        let mut write = start;
        for read in start..self.edges.len() {
            let edge = self.edges[read];
            if write > start && self.edges[write - 1].0 == edge.0 {
                self.edges[write - 1] = edge;
            } else {
                self.edges[write] = edge;
                write += 1;
            }
        }
        self.edges.truncate(write);
        let Ok(end) = u32::try_from(self.edges.len()) else {
            self.edges.truncate(start);
            return Err(StructuralError::TooLarge);
        };
        self.eq_start.push(end);
        Ok(eq)
    }

    /// Finishes the graph, building the variable → equations view by a counting sort.
    pub fn build(self) -> Incidence {
        let n_vars = self.n_vars as usize;
        let (eq_vars, eq_kinds): (Vec<VarIdx>, Vec<EdgeKind>) = self.edges.into_iter().unzip();
        let mut var_start = vec![0u32; n_vars + 1];
        for v in &eq_vars {
            var_start[v.index() + 1] += 1;
        }
        for i in 0..n_vars {
            var_start[i + 1] += var_start[i];
        }
        let mut fill: Vec<u32> = var_start[..n_vars].to_vec();
        let mut var_eqs = vec![EqIdx(0); eq_vars.len()];
        // Visiting equations in increasing order leaves every variable's list sorted.
        for (e, w) in self.eq_start.windows(2).enumerate() {
            for v in &eq_vars[w[0] as usize..w[1] as usize] {
                let slot = &mut fill[v.index()];
                var_eqs[*slot as usize] = EqIdx(e as u32);
                *slot += 1;
            }
        }
        Incidence {
            n_vars: self.n_vars,
            eq_start: self.eq_start,
            eq_vars,
            eq_kinds,
            var_start,
            var_eqs,
        }
    }
}
