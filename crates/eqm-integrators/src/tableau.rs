//! Butcher tableaux of explicit and diagonally implicit Runge–Kutta methods: the built-in ones,
//! user-supplied ones, and their order.
//!
//! Input: the coefficients of a Runge–Kutta method, either as the constants below,
//! as vectors given to [`Tableau::new`], or as text in the format read by [`Tableau::parse`].
//! Output: a validated [`Tableau`] whose order (and the order of its embedded weights, if any)
//! has been computed from the order conditions, or a [`TableauError`] with a message.
//!
//! A method with `s` stages advances `x' = f(t, x)` from `x_n` by
//!
//! ```text
//! k_i     = f(t_n + c_i h, x_n + h Σ_{j<i} a_ij k_j)      i = 1..s
//! x_{n+1} = x_n + h Σ_i b_i k_i
//! ```
//!
//! and an embedded pair also forms `x̂_{n+1} = x_n + h Σ_i b̂_i k_i`, whose difference to
//! `x_{n+1}` estimates the local error.
//!
//! # Text format
//!
//! One stage per line as `c_i | a_i1 a_i2 ...`, then one line `| b_1 ... b_s` with the weights
//! and optionally a second such line with the embedded weights `b̂`. Numbers are decimals
//! (`0.5`, `-1e-3`) or fractions (`1/3`, `-3/8`). A stage row may stop early (missing entries
//! are zero) or list the whole row including the zeros on and above the diagonal. Empty lines,
//! lines starting with `#` and lines made only of `-` are ignored. Two optional keyword lines:
//! `name TEXT` and `order N` (the declared order, checked against the order conditions).
//!
//! ```text
//! # Kutta's third-order method
//! name kutta3
//! order 3
//! 0   |
//! 1/2 | 1/2
//! 1   | -1  2
//!     | 1/6 2/3 1/6
//! ```
//!
//! This module deliberately knows nothing about stepping. Explicit tableaux (a strictly
//! lower-triangular `a`) run in `explicit`/`adaptive`; diagonally implicit ones (entries on the
//! diagonal) in `dirk`; fully implicit tableaux (entries above the diagonal) are rejected.

use std::borrow::Cow;
use std::fmt;

/// The highest order [`Tableau::new`] checks the order conditions for: that of the highest
/// built-in pair, Verner's 9(8) (the 486 rooted trees up to 9 nodes).
pub const MAX_CHECKED_ORDER: u32 = 9;

/// Relative tolerance for the consistency checks (row sums, weight sums, order conditions).
/// Coefficients written as fractions are exact to a few ulps; decimals need about ten digits.
const TOLERANCE: f64 = 1e-10;

/// An explicit Runge–Kutta method: `c`, the strictly lower-triangular `a`, the weights `b`, and
/// optional embedded weights `b̂` for error estimation.
#[derive(Debug, Clone, PartialEq)]
pub struct Tableau {
    name: Cow<'static, str>,
    stages: usize,
    /// Row-major `stages × stages`; only the entries below the diagonal are non-zero.
    a: Cow<'static, [f64]>,
    b: Cow<'static, [f64]>,
    c: Cow<'static, [f64]>,
    b_hat: Option<Cow<'static, [f64]>>,
    order: u32,
    embedded_order: Option<u32>,
}

/// Why a tableau was rejected, with the line of the text it came from when it was parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableauError {
    /// 1-based line number in the parsed text, if the error belongs to one line.
    pub line: Option<usize>,
    pub message: String,
}

impl TableauError {
    fn new(message: impl Into<String>) -> Self {
        TableauError {
            line: None,
            message: message.into(),
        }
    }

    fn at(line: usize, message: impl Into<String>) -> Self {
        TableauError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for TableauError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for TableauError {}

/// A `const` tableau from static slices; the orders are checked by the crate's tests.
pub(crate) const fn constant(
    name: &'static str,
    stages: usize,
    a: &'static [f64],
    b: &'static [f64],
    c: &'static [f64],
    b_hat: Option<&'static [f64]>,
    orders: (u32, Option<u32>),
) -> Tableau {
    Tableau {
        name: Cow::Borrowed(name),
        stages,
        a: Cow::Borrowed(a),
        b: Cow::Borrowed(b),
        c: Cow::Borrowed(c),
        b_hat: match b_hat {
            Some(w) => Some(Cow::Borrowed(w)),
            None => None,
        },
        order: orders.0,
        embedded_order: orders.1,
    }
}

/// Explicit (forward) Euler, order 1.
pub const EULER: Tableau = constant("euler", 1, &[0.0], &[1.0], &[0.0], None, (1, None));

/// Heun's method (explicit trapezoid), order 2.
#[rustfmt::skip]
pub const HEUN: Tableau = constant("heun", 2, &[
    0.0, 0.0,
    1.0, 0.0,
], &[0.5, 0.5], &[0.0, 1.0], None, (2, None));

/// The explicit midpoint rule, order 2.
#[rustfmt::skip]
pub const MIDPOINT: Tableau = constant("midpoint", 2, &[
    0.0, 0.0,
    0.5, 0.0,
], &[0.0, 1.0], &[0.0, 0.5], None, (2, None));

/// The classical fourth-order Runge–Kutta method (the lecture notes' "RUKU 4. Ordnung").
#[rustfmt::skip]
pub const RK4: Tableau = constant("rk4", 4, &[
    0.0, 0.0, 0.0, 0.0,
    0.5, 0.0, 0.0, 0.0,
    0.0, 0.5, 0.0, 0.0,
    0.0, 0.0, 1.0, 0.0,
], &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0], &[0.0, 0.5, 0.5, 1.0], None, (4, None));

/// Fehlberg's 4(5) pair as in the RKF45 code of Forsythe, Malcolm and Moler (and Shampine and
/// Watts): the solution is advanced with the fifth-order weights and the fourth-order ones
/// estimate the error ("local extrapolation"). Advancing with the fourth-order solution instead
/// makes the global error grow with the number of steps, to about 300 times the tolerance on a
/// Kepler orbit at 1e-8.
#[rustfmt::skip]
pub const FEHLBERG45: Tableau = constant("rkf45", 6, &[
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    1.0 / 4.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    3.0 / 32.0, 9.0 / 32.0, 0.0, 0.0, 0.0, 0.0,
    1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0, 0.0, 0.0, 0.0,
    439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0, 0.0, 0.0,
    -8.0 / 27.0, 2.0, -3544.0 / 2565.0, 1859.0 / 4104.0, -11.0 / 40.0, 0.0,
],
&[16.0 / 135.0, 0.0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0],
&[0.0, 1.0 / 4.0, 3.0 / 8.0, 12.0 / 13.0, 1.0, 1.0 / 2.0],
Some(&[25.0 / 216.0, 0.0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0.0]),
(5, Some(4)));

/// The Dormand–Prince 5(4) pair of DOPRI5 (Hairer, Nørsett, Wanner, Solving ODEs I, II.5):
/// advanced with the fifth-order weights; the last stage is evaluated at the new point
/// ("first same as last"), so it is the next step's first stage.
#[rustfmt::skip]
pub const DORMAND_PRINCE54: Tableau = constant("dopri5", 7, &[
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0, 0.0,
    19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0.0, 0.0, 0.0,
    9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0.0, 0.0,
    35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0,
],
&[35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0],
&[0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0],
Some(&[5179.0 / 57600.0, 0.0, 7571.0 / 16695.0, 393.0 / 640.0, -92097.0 / 339200.0, 187.0 / 2100.0, 1.0 / 40.0]),
(5, Some(4)));

/// Shampine's coefficients `d_j` of the fourth-order continuous extension of
/// [`DORMAND_PRINCE54`], in Hairer's representation (`rcont5 = h Σ d_j k_j`, see
/// `adaptive::Adaptive::interpolate`). They belong to exactly that tableau.
pub const DORMAND_PRINCE54_DENSE: [f64; 7] = [
    -12715105075.0 / 11282082432.0,
    0.0,
    87487479700.0 / 32700410799.0,
    -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0,
    -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0,
];

impl Tableau {
    /// Validates a user-supplied explicit tableau and computes its order.
    ///
    /// `a` has one row per stage; row `i` may list fewer than `stages` entries (the rest are
    /// zero), but every entry above the diagonal must be zero (entries on it make the method
    /// diagonally implicit). Checked: at least one
    /// stage, consistent sizes, finite numbers, `c_i = Σ_j a_ij`, `Σ b_i = 1` (and `Σ b̂_i = 1`,
    /// `b̂ ≠ b`).
    pub fn new(
        name: impl Into<String>,
        c: Vec<f64>,
        a: Vec<Vec<f64>>,
        b: Vec<f64>,
        b_hat: Option<Vec<f64>>,
    ) -> Result<Tableau, TableauError> {
        let s = c.len();
        if s == 0 {
            return Err(TableauError::new("a tableau needs at least one stage"));
        }
        if a.len() != s {
            return Err(TableauError::new(format!(
                "c has {s} entries but a has {} rows",
                a.len()
            )));
        }
        check_weights("b", &b, s)?;
        if let Some(b_hat) = &b_hat {
            check_weights("embedded weights b̂", b_hat, s)?;
            if b_hat == &b {
                return Err(TableauError::new(
                    "the embedded weights equal the weights, so they cannot estimate an error",
                ));
            }
        }
        let mut dense = vec![0.0; s * s];
        for (i, row) in a.iter().enumerate() {
            if row.len() > s {
                return Err(TableauError::new(format!(
                    "row {} of a has {} entries, more than the {s} stages",
                    i + 1,
                    row.len()
                )));
            }
            for (j, &v) in row.iter().enumerate() {
                if !v.is_finite() {
                    return Err(TableauError::new(format!(
                        "a[{}][{}] is not a finite number",
                        i + 1,
                        j + 1
                    )));
                }
                if j > i && v != 0.0 {
                    return Err(TableauError::new(format!(
                        "a[{}][{}] = {v} is above the diagonal; only explicit and diagonally \
                         implicit methods (a lower-triangular a) are supported",
                        i + 1,
                        j + 1
                    )));
                }
                dense[i * s + j] = v;
            }
            let sum: f64 = row.iter().sum();
            let scale = 1.0 + row.iter().map(|v| v.abs()).sum::<f64>();
            if !c[i].is_finite() || (c[i] - sum).abs() > TOLERANCE * scale {
                return Err(TableauError::new(format!(
                    "c[{}] = {} but row {} of a sums to {sum}; c_i must equal the row sum \
                     (write fractions like 1/3 for exact values)",
                    i + 1,
                    c[i],
                    i + 1
                )));
            }
        }
        let order = satisfied_order(&c, &dense, &b);
        let embedded_order = b_hat.as_deref().map(|w| satisfied_order(&c, &dense, w));
        Ok(Tableau {
            name: Cow::Owned(name.into()),
            stages: s,
            a: Cow::Owned(dense),
            b: Cow::Owned(b),
            c: Cow::Owned(c),
            b_hat: b_hat.map(Cow::Owned),
            order,
            embedded_order,
        })
    }

    /// Reads a tableau in the text format of the module documentation.
    pub fn parse(text: &str) -> Result<Tableau, TableauError> {
        let mut name = None;
        let mut declared: Option<(usize, u32)> = None;
        let mut c = Vec::new();
        let mut a = Vec::new();
        let mut weights: Vec<Vec<f64>> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.chars().all(|ch| ch == '-') {
                continue;
            }
            if let Some(rest) = line.strip_prefix("name ") {
                name = Some(rest.trim().to_string());
                continue;
            }
            if let Some(rest) = line.strip_prefix("order ") {
                let n = rest
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| TableauError::at(line_no, format!("`{}` is not an order", rest.trim())))?;
                declared = Some((line_no, n));
                continue;
            }
            let Some((left, right)) = line.split_once('|') else {
                return Err(TableauError::at(
                    line_no,
                    "expected `c | a_i1 a_i2 ...`, `| b_1 ... b_s`, `name TEXT` or `order N`",
                ));
            };
            let numbers = right
                .split_whitespace()
                .map(|word| {
                    parse_number(word).ok_or_else(|| TableauError::at(line_no, format!("`{word}` is not a number")))
                })
                .collect::<Result<Vec<f64>, _>>()?;
            if left.trim().is_empty() {
                if weights.len() == 2 {
                    return Err(TableauError::at(
                        line_no,
                        "more than two weight rows (b and the embedded b̂)",
                    ));
                }
                weights.push(numbers);
            } else {
                if !weights.is_empty() {
                    return Err(TableauError::at(line_no, "a stage row after the weights"));
                }
                let ci = parse_number(left.trim())
                    .ok_or_else(|| TableauError::at(line_no, format!("`{}` is not a number", left.trim())))?;
                c.push(ci);
                a.push(numbers);
            }
        }
        let mut weights = weights.into_iter();
        let b = weights
            .next()
            .ok_or_else(|| TableauError::new("no weight row `| b_1 ... b_s`"))?;
        let tableau = Tableau::new(
            name.unwrap_or_else(|| "user tableau".to_string()),
            c,
            a,
            b,
            weights.next(),
        )?;
        if let Some((line_no, n)) = declared
            && n != tableau.order
        {
            return Err(TableauError::at(
                line_no,
                format!(
                    "declared order {n}, but the tableau satisfies the order conditions {}",
                    describe_order(tableau.order)
                ),
            ));
        }
        Ok(tableau)
    }

    /// The tableau in the text format read by [`Tableau::parse`]; numbers are written in
    /// shortest round-trip form, so parsing the text gives back the same tableau.
    pub fn to_text(&self) -> String {
        let join = |values: &[f64]| values.iter().map(|v| format!("{v}")).collect::<Vec<_>>().join(" ");
        let mut text = format!("name {}\norder {}\n", self.name, self.order);
        for i in 0..self.stages {
            text.push_str(&format!("{} | {}\n", self.c[i], join(self.a_row(i))));
        }
        text.push_str(&format!("| {}\n", join(&self.b)));
        if let Some(b_hat) = &self.b_hat {
            text.push_str(&format!("| {}\n", join(b_hat)));
        }
        text
    }

    /// The method's name (for the built-in ones, its `--solver` name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of stages `s`.
    pub fn stages(&self) -> usize {
        self.stages
    }

    /// `a_ij` (0-based).
    /// Whether every stage is explicit (no entry on the diagonal of `a`); otherwise the method
    /// is diagonally implicit (DIRK).
    pub fn is_explicit(&self) -> bool {
        (0..self.stages).all(|i| self.a[i * self.stages + i] == 0.0)
    }

    pub fn a(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.stages + j]
    }

    /// The entries `a_i0 .. a_i(i-1)` of row `i` below the diagonal.
    pub fn a_row(&self, i: usize) -> &[f64] {
        &self.a[i * self.stages..i * self.stages + i]
    }

    /// The weights `b`.
    pub fn b(&self) -> &[f64] {
        &self.b
    }

    /// The nodes `c`.
    pub fn c(&self) -> &[f64] {
        &self.c
    }

    /// The embedded weights `b̂`, if the tableau is an embedded pair.
    pub fn b_hat(&self) -> Option<&[f64]> {
        self.b_hat.as_deref()
    }

    /// The order of the method (of `b`), at most [`MAX_CHECKED_ORDER`].
    pub fn order(&self) -> u32 {
        self.order
    }

    /// The order of the embedded weights `b̂`.
    pub fn embedded_order(&self) -> Option<u32> {
        self.embedded_order
    }

    /// Whether the last stage is evaluated at the new solution (`c_s = 1`, last row of `a` equal
    /// to `b`), so that its derivative is the next step's first stage ("first same as last").
    pub fn is_fsal(&self) -> bool {
        let s = self.stages;
        s > 1 && self.c[s - 1] == 1.0 && self.a_row(s - 1) == &self.b[..s - 1] && self.b[s - 1] == 0.0
    }
}

/// Checks a weight vector: its length and that it sums to 1 (order 1, consistency).
fn check_weights(what: &str, w: &[f64], s: usize) -> Result<(), TableauError> {
    if w.len() != s {
        return Err(TableauError::new(format!(
            "{what} has {} entries but there are {s} stages",
            w.len()
        )));
    }
    if w.iter().any(|v| !v.is_finite()) {
        return Err(TableauError::new(format!(
            "{what} contains a number that is not finite"
        )));
    }
    let sum: f64 = w.iter().sum();
    let scale = 1.0 + w.iter().map(|v| v.abs()).sum::<f64>();
    if (sum - 1.0).abs() > TOLERANCE * scale {
        return Err(TableauError::new(format!(
            "{what} sums to {sum}; the weights must sum to 1"
        )));
    }
    Ok(())
}

/// A decimal number or a fraction `p/q`.
fn parse_number(word: &str) -> Option<f64> {
    let value = match word.split_once('/') {
        Some((p, q)) => p.parse::<f64>().ok()? / q.parse::<f64>().ok()?,
        None => word.parse::<f64>().ok()?,
    };
    value.is_finite().then_some(value)
}

fn describe_order(order: u32) -> String {
    if order >= MAX_CHECKED_ORDER {
        format!("up to order {order} (the highest checked)")
    } else {
        format!("only up to order {order}")
    }
}

/// A rooted tree of the order conditions: `Σ_i b_i Φ_i(t) = 1/γ(t)` for every tree `t` with at
/// most `p` nodes is equivalent to order `p` (Butcher; Hairer–Nørsett–Wanner I, II.2).
struct Tree {
    order: u32,
    /// The density γ(t): `|t|` times the densities of the subtrees.
    gamma: f64,
    /// Subtrees of the root, as indices of earlier trees.
    children: Vec<usize>,
}

/// All rooted trees with at most `max_order` nodes, ordered by number of nodes, each subtree
/// before the trees containing it.
fn trees(max_order: u32) -> Vec<Tree> {
    let mut all = vec![Tree {
        order: 1,
        gamma: 1.0,
        children: Vec::new(),
    }];
    for order in 2..=max_order {
        let mut forests = Vec::new();
        forests_of(&all, order - 1, all.len(), &mut Vec::new(), &mut forests);
        for children in forests {
            let gamma = f64::from(order) * children.iter().map(|&c| all[c].gamma).product::<f64>();
            all.push(Tree { order, gamma, children });
        }
    }
    all
}

/// Every multiset of trees among `trees[..below]` with `nodes` nodes in total. Indices are chosen
/// in non-increasing order, so each multiset (= each tree built from it) appears once.
fn forests_of(trees: &[Tree], nodes: u32, below: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if nodes == 0 {
        out.push(current.clone());
        return;
    }
    for index in (0..below).rev() {
        if trees[index].order <= nodes {
            current.push(index);
            forests_of(trees, nodes - trees[index].order, index + 1, current, out);
            current.pop();
        }
    }
}

/// The highest order `p ≤ MAX_CHECKED_ORDER` whose conditions the weights `w` satisfy, given the
/// nodes `c` and the row-major `a`.
fn satisfied_order(c: &[f64], a: &[f64], w: &[f64]) -> u32 {
    order_at(c, a, w, 1.0)
}

/// The order of an interpolant (a continuous extension) at `θ`: the highest `p ≤
/// MAX_CHECKED_ORDER` for which the weights `w = b(θ)` of the stages of the tableau `(c, a)`
/// (row-major `a`, strictly lower triangular) satisfy `Σ_i w_i Φ_i(t) = θ^|t| / γ(t)` for every
/// tree `t` with at most `p` nodes, which makes `x + h Σ_i b_i(θ) k_i` approximate `x(t + θh)`
/// to order `p`. At `θ = 1` these are the order conditions of the method with weights `w`.
pub fn order_at(c: &[f64], a: &[f64], w: &[f64], theta: f64) -> u32 {
    let s = c.len();
    let trees = trees(MAX_CHECKED_ORDER);
    // phi[t][i] is the elementary weight Φ_i(t): 1 for the single node, otherwise the product
    // over the root's subtrees u of (A Φ(u))_i.
    let mut phi: Vec<Vec<f64>> = Vec::with_capacity(trees.len());
    let mut order = 0;
    for tree in &trees {
        let mut values = vec![1.0; s];
        for &child in &tree.children {
            for (i, v) in values.iter_mut().enumerate() {
                *v *= (0..s).map(|j| a[i * s + j] * phi[child][j]).sum::<f64>();
            }
        }
        let lhs: f64 = w.iter().zip(&values).map(|(wi, vi)| wi * vi).sum();
        let scale = 1.0 + w.iter().zip(&values).map(|(wi, vi)| (wi * vi).abs()).sum::<f64>();
        let target = theta.powi(tree.order as i32) / tree.gamma;
        if (lhs - target).abs() > TOLERANCE * scale {
            // Trees come sorted by order, so the first failing condition bounds the order.
            return tree.order - 1;
        }
        order = tree.order;
        phi.push(values);
    }
    order
}
