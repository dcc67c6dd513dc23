//! Linear stability of every integration method, and the step and method advice built on it.
//!
//! Input: a [`Method`] (or a Butcher tableau, or multistep coefficients) and the eigenvalues
//! `λ` of a linearised model (complex numbers; conjugate pairs may be given once or twice).
//! Output:
//! - the method's [`StabilityFunction`]: for a Runge–Kutta method
//!   `R(z) = 1 + z bᵀ (I − zA)⁻¹ 1` from its tableau (explicit, diagonally or fully implicit,
//!   built-in or a user's), for a linear multistep method the polynomial `ρ(ζ) − z σ(ζ)`; the
//!   method is stable at `z = hλ` when `|R(z)| ≤ 1`, or when every root of that polynomial has
//!   `|ζ| ≤ 1` (the root condition);
//! - [`largest_stable_step`]: the largest `h` such that every step in `(0, h]` is stable for
//!   every eigenvalue;
//! - [`advise`]: the time scales `T_i = min(1/|Re λ_i|, 2π/|Im λ_i|)`, the stiffness ratio
//!   `T_max/T_min`, the simulation time `5 T_max`, the step `min(T_min/10, t_sim/200)` and output
//!   interval `t_sim/200`, and for each method whether it is stable at that step, its largest
//!   stable step, and one recommended method with the reason.
//!
//! A growth factor up to `1 + 1e-12` per step counts as stable: on the imaginary axis a
//! method of order `p` grows like `1 + c|z|^(p+1)`, which below that is invisible over any
//! simulation. Eigenvalues with a positive real part (growing modes) and eigenvalues that are
//! zero (conserved quantities) do not limit the step: the exact solution does not decay
//! there, so `|R| ≤ 1` is not the question. Not done here: computing eigenvalues (the caller
//! linearises the model), nonlinear stability, and the step that accuracy needs beyond the
//! rule of thumb `T_min/10`. `bdf` is judged at order 5, the order its fixed-step mode takes;
//! with its step control it lowers the order, and orders 1 and 2 are A-stable.

use crate::method::Method;
use crate::pairs;
use crate::tableau::{self, Tableau};
use nalgebra::Complex;

/// A complex number, as the eigenvalues of a real matrix come.
pub type C64 = Complex<f64>;

/// The growth per step that still counts as stable (see the module documentation).
pub const STABLE_GROWTH: f64 = 1.0 + 1e-12;

/// The stiffness ratio `T_max/T_min` above which a model counts as stiff (the low end of the
/// usual 1e3..1e7).
pub const STIFF_RATIO: f64 = 1e3;

/// The smallest and largest `|z|` the search along a ray looks at: below the smallest every
/// consistent method is stable to within [`STABLE_GROWTH`] or is unstable from the start;
/// stable beyond the largest counts as stable for every step.
const RAY_START: f64 = 1e-4;
const RAY_END: f64 = 1e6;
/// The factor between the samples of a ray: fine enough that no unstable gap of practical
/// width between two stable samples is missed, coarse enough to judge dozens of directions for
/// every method in a fraction of a second.
const RAY_FACTOR: f64 = 1.05;

/// The linear stability of a method: how an error `δ` propagates through a step of
/// `x' = λx` with `z = hλ`.
#[derive(Debug, Clone, PartialEq)]
pub enum StabilityFunction {
    /// A Runge–Kutta method with `stages × stages` matrix `a` (row-major) and weights `b`:
    /// `δ_{n+1} = R(z) δ_n`.
    RungeKutta { a: Vec<f64>, b: Vec<f64> },
    /// A linear multistep method: the solutions `δ_n = ζ^n` of the recursion are the roots of
    /// `ρ(ζ) − z σ(ζ)`; `rho` and `sigma` hold the coefficients of `ζ^0, ζ^1, ...`.
    Multistep { rho: Vec<f64>, sigma: Vec<f64> },
}

impl StabilityFunction {
    /// The stability function of `method`; `None` for `auto`, which changes its method while
    /// it runs. `bdf` is its order 5 (see the module documentation).
    pub fn of(method: &Method) -> Option<StabilityFunction> {
        Some(match method {
            Method::Euler => Self::from_tableau(&tableau::EULER),
            Method::Heun => Self::from_tableau(&tableau::HEUN),
            Method::Midpoint => Self::from_tableau(&tableau::MIDPOINT),
            Method::Rk4 => Self::from_tableau(&tableau::RK4),
            // Both pairs advance with their fifth-order weights `b`.
            Method::Rkf45 => Self::from_tableau(&tableau::FEHLBERG45),
            Method::Dopri5 => Self::from_tableau(&tableau::DORMAND_PRINCE54),
            Method::Tsit5 => Self::from_tableau(&pairs::TSIT5),
            Method::Vern6 => Self::from_tableau(&pairs::VERN6),
            Method::Vern7 => Self::from_tableau(&pairs::VERN7),
            Method::Vern8 => Self::from_tableau(&pairs::VERN8),
            Method::Vern9 => Self::from_tableau(&pairs::VERN9),
            Method::Ab2 => Self::adams_bashforth(&crate::multistep::AB2),
            Method::Ab4 => Self::adams_bashforth(&crate::multistep::AB4),
            Method::ImplicitEuler => StabilityFunction::RungeKutta {
                a: vec![1.0],
                b: vec![1.0],
            },
            // `x_{n+1} = x_n + h/2 (f_n + f_{n+1})`: the two-stage Lobatto IIIA tableau.
            Method::Trapezoid => StabilityFunction::RungeKutta {
                a: vec![0.0, 0.0, 0.5, 0.5],
                b: vec![0.5, 0.5],
            },
            Method::Bdf => Self::bdf(5),
            Method::Radau5 => Self::radau_iia(),
            Method::Auto => return None,
            Method::Tableau(t) => Self::from_tableau(t),
        })
    }

    /// `R(z)` of any Butcher tableau.
    pub fn from_tableau(t: &Tableau) -> StabilityFunction {
        let s = t.stages();
        let a = (0..s * s).map(|k| t.a(k / s, k % s)).collect();
        StabilityFunction::RungeKutta { a, b: t.b().to_vec() }
    }

    /// The three-stage Radau IIA method of order 5 (Hairer–Wanner II, IV.5), which `radau5`
    /// solves in a transformed form.
    pub fn radau_iia() -> StabilityFunction {
        let r6 = 6f64.sqrt();
        #[rustfmt::skip]
        let a = vec![
            (88.0 - 7.0 * r6) / 360.0, (296.0 - 169.0 * r6) / 1800.0, (-2.0 + 3.0 * r6) / 225.0,
            (296.0 + 169.0 * r6) / 1800.0, (88.0 + 7.0 * r6) / 360.0, (-2.0 - 3.0 * r6) / 225.0,
            (16.0 - r6) / 36.0, (16.0 + r6) / 36.0, 1.0 / 9.0,
        ];
        let b = a[6..].to_vec();
        StabilityFunction::RungeKutta { a, b }
    }

    /// The Adams–Bashforth method `x_{n+1} = x_n + h Σ_j β_j f_{n−j}` with `beta` = `β_0, β_1,
    /// ...`: `ρ(ζ) = ζ^k − ζ^(k−1)`, `σ(ζ) = Σ_j β_j ζ^(k−1−j)`.
    pub fn adams_bashforth(beta: &[f64]) -> StabilityFunction {
        let k = beta.len();
        let mut rho = vec![0.0; k + 1];
        rho[k] = 1.0;
        rho[k - 1] = -1.0;
        let mut sigma = vec![0.0; k + 1];
        for (j, b) in beta.iter().enumerate() {
            sigma[k - 1 - j] = *b;
        }
        StabilityFunction::Multistep { rho, sigma }
    }

    /// The formula of order `order` (1 to 5, clamped) of EQM's `bdf`, in its NDF form
    /// `Σ_{m=1..k} ∇^m x_{n+1}/m − κ_k γ_k ∇^(k+1) x_{n+1} = h f_{n+1}` (κ = 0 is the plain
    /// BDF, which order 5 is).
    pub fn bdf(order: usize) -> StabilityFunction {
        let k = order.clamp(1, 5);
        let gamma: f64 = (1..=k).map(|j| 1.0 / j as f64).sum();
        let kappa = crate::bdf::KAPPA[k];
        // Multiplied by ζ^(k+1): ∇^m becomes (ζ − 1)^m ζ^(k+1−m).
        let mut rho = vec![0.0; k + 2];
        for m in 1..=k + 1 {
            let weight = if m <= k { 1.0 / m as f64 } else { 0.0 } - if m == k + 1 { kappa * gamma } else { 0.0 };
            let term = multiply(&power_of_difference(m), &monomial(k + 1 - m));
            for (r, t) in rho.iter_mut().zip(&term) {
                *r += weight * t;
            }
        }
        StabilityFunction::Multistep {
            rho,
            sigma: monomial(k + 1),
        }
    }

    /// `R(z)` of a Runge–Kutta method (`None` for a multistep method, or where `I − zA` is
    /// singular).
    pub fn value(&self, z: C64) -> Option<C64> {
        let StabilityFunction::RungeKutta { a, b } = self else {
            return None;
        };
        let s = b.len();
        let mut m: Vec<C64> = (0..s * s)
            .map(|k| {
                let identity = if k / s == k % s { 1.0 } else { 0.0 };
                C64::new(identity, 0.0) - z * a[k]
            })
            .collect();
        let mut k = vec![C64::new(1.0, 0.0); s];
        solve(&mut m, &mut k, s)?;
        let sum: C64 = b.iter().zip(&k).map(|(bi, ki)| ki * *bi).sum();
        Some(C64::new(1.0, 0.0) + z * sum)
    }

    /// How much an error grows per step at `z`: `|R(z)|`, or the largest `|ζ|` of the roots of
    /// `ρ(ζ) − z σ(ζ)`; infinite where the step has no solution.
    pub fn growth(&self, z: C64) -> f64 {
        match self {
            StabilityFunction::RungeKutta { .. } => self.value(z).map_or(f64::INFINITY, |r| r.norm()),
            StabilityFunction::Multistep { rho, sigma } => {
                let p: Vec<C64> = rho.iter().zip(sigma).map(|(r, s)| C64::new(*r, 0.0) - z * *s).collect();
                largest_root(&p)
            }
        }
    }

    /// Whether a step at `z = hλ` does not amplify errors (growth at most [`STABLE_GROWTH`]).
    pub fn is_stable(&self, z: C64) -> bool {
        self.growth(z) <= STABLE_GROWTH
    }

    /// How far along the ray `z = r e^{iθ}` the stability region reaches from the origin: the
    /// largest `r` such that every point of `(0, r]` is stable (infinite when the whole ray
    /// is). The ray is sampled outwards and the first unstable sample bisected against the last
    /// stable one, so a stable island beyond an unstable gap never counts (bisecting from the
    /// origin to a far point could end in such an island).
    pub fn reach(&self, theta: f64) -> f64 {
        self.reach_below(theta, f64::INFINITY).unwrap_or(f64::INFINITY)
    }

    /// [`StabilityFunction::reach`] when it is below `limit`, else `None`: the search stops at
    /// `limit`, so that a ray that cannot lower a step already found costs only its samples
    /// up to there.
    fn reach_below(&self, theta: f64, limit: f64) -> Option<f64> {
        let direction = C64::from_polar(1.0, theta);
        let stable = |r: f64| self.is_stable(direction * r);
        if !stable(RAY_START) {
            return Some(0.0);
        }
        let mut inside = RAY_START;
        while inside < RAY_END.min(limit) {
            let next = inside * RAY_FACTOR;
            if !stable(next) {
                let mut outside = next;
                for _ in 0..60 {
                    let mid = 0.5 * (inside + outside);
                    if stable(mid) {
                        inside = mid;
                    } else {
                        outside = mid;
                    }
                }
                return (inside < limit).then_some(inside);
            }
            inside = next;
        }
        None
    }

    /// The stability interval on the negative real axis: the method is stable for
    /// `z ∈ [−limit, 0]` (infinite for an A-stable method).
    pub fn real_limit(&self) -> f64 {
        self.reach(std::f64::consts::PI)
    }
}

/// The eigenvalues that limit a step: decaying or oscillating ones (`Re λ ≤ 0`), without those
/// that are zero relative to the largest.
pub fn limiting(eigenvalues: &[C64]) -> Vec<C64> {
    let largest = eigenvalues.iter().map(|l| l.norm()).fold(0.0, f64::max);
    eigenvalues
        .iter()
        .copied()
        .filter(|l| l.norm() > 1e-12 * largest && l.re <= 1e-12 * l.norm() && l.norm().is_finite())
        .collect()
}

/// The largest `h` such that every step in `(0, h]` is stable for every eigenvalue of
/// [`limiting`] (infinite when no eigenvalue limits the step). Eigenvalues in the same
/// direction share one search along their ray.
pub fn largest_stable_step(function: &StabilityFunction, eigenvalues: &[C64]) -> f64 {
    // A conjugate has the mirrored ray, and the regions of real methods are symmetric about
    // the real axis: one search serves both. The largest eigenvalues come first, since they
    // usually limit the step, and each later search stops where it could no longer lower it.
    let mut distinct: Vec<C64> = limiting(eigenvalues)
        .into_iter()
        .map(|l| C64::new(l.re, l.im.abs()))
        .collect();
    distinct.sort_by(|a, b| {
        b.norm()
            .total_cmp(&a.norm())
            .then(a.re.total_cmp(&b.re))
            .then(a.im.total_cmp(&b.im))
    });
    distinct.dedup();
    let mut h = f64::INFINITY;
    for lambda in distinct {
        let size = lambda.norm();
        if let Some(reach) = function.reach_below(lambda.arg(), h * size) {
            h = h.min(reach / size);
        }
    }
    h
}

/// Whether a step `h` is stable for every eigenvalue of [`limiting`].
pub fn stable_at(function: &StabilityFunction, eigenvalues: &[C64], h: f64) -> bool {
    limiting(eigenvalues).iter().all(|l| function.is_stable(l * h))
}

/// The time scale of one eigenvalue: `min(1/|Re λ|, 2π/|Im λ|)` (infinite for `λ = 0`).
pub fn time_constant(lambda: C64) -> f64 {
    let decay = if lambda.re == 0.0 {
        f64::INFINITY
    } else {
        1.0 / lambda.re.abs()
    };
    let period = if lambda.im == 0.0 {
        f64::INFINITY
    } else {
        std::f64::consts::TAU / lambda.im.abs()
    };
    decay.min(period)
}

/// The shortest and longest time scale of a model and their ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeScales {
    pub t_min: f64,
    pub t_max: f64,
    /// `T_max / T_min`.
    pub stiffness: f64,
}

impl TimeScales {
    /// The time scales of the eigenvalues with a finite one; `None` when there is none (no
    /// states, or only zero eigenvalues). Eigenvalues below `1e-12` times the largest count as
    /// zero: they are rounding noise of a singular matrix, and their "time scale" would set a
    /// simulation time of ages.
    pub fn of(eigenvalues: &[C64]) -> Option<TimeScales> {
        let largest = eigenvalues.iter().map(|l| l.norm()).fold(0.0, f64::max);
        let finite: Vec<f64> = eigenvalues
            .iter()
            .filter(|l| l.norm() > 1e-12 * largest)
            .map(|l| time_constant(*l))
            .filter(|t| t.is_finite() && *t > 0.0)
            .collect();
        let t_min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let t_max = finite.iter().copied().fold(0.0, f64::max);
        (!finite.is_empty()).then_some(TimeScales {
            t_min,
            t_max,
            stiffness: t_max / t_min,
        })
    }

    pub fn is_stiff(&self) -> bool {
        self.stiffness > STIFF_RATIO
    }
}

/// One method judged at the advised step.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The method's `--solver` name (a user tableau's name).
    pub method: String,
    /// Whether the advised step is stable for every eigenvalue.
    pub stable: bool,
    /// The largest stable step (infinite: every step).
    pub largest_step: f64,
    /// Whether the method solves implicit equations (Newton with the Jacobian) in each step.
    pub implicit: bool,
}

/// The recommended method.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub method: String,
    /// The fixed step to give it (`--step`); `None` for a method that controls its step.
    pub step: Option<f64>,
    pub reason: String,
}

/// Simulation time, step and method for a model's eigenvalues; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub scales: TimeScales,
    /// `5 T_max`.
    pub t_sim: f64,
    /// `min(T_min/10, t_sim/200)`.
    pub step: f64,
    /// `t_sim/200`.
    pub interval: f64,
    /// One per method judged, in the order given.
    pub verdicts: Vec<Verdict>,
    pub recommended: Option<Recommendation>,
    /// How many eigenvalues have a positive real part (not judged: see the module
    /// documentation).
    pub growing: usize,
}

/// The methods [`advise`] judges by default: every named one except `auto`, and a user's
/// tableau.
pub fn judged_methods(user: Option<&Method>) -> Vec<Method> {
    Method::NAMED
        .into_iter()
        .filter(|m| *m != Method::Auto)
        .chain(user.cloned())
        .collect()
}

/// The advice for `eigenvalues`, judging `methods` (see [`judged_methods`]); `None` when no
/// eigenvalue has a finite time scale.
pub fn advise(eigenvalues: &[C64], methods: &[Method]) -> Option<Advice> {
    let scales = TimeScales::of(eigenvalues)?;
    let t_sim = 5.0 * scales.t_max;
    let interval = t_sim / 200.0;
    let step = (scales.t_min / 10.0).min(interval);
    let verdicts: Vec<Verdict> = methods
        .iter()
        .filter_map(|m| {
            let function = StabilityFunction::of(m)?;
            Some(Verdict {
                method: m.name().to_string(),
                stable: stable_at(&function, eigenvalues, step),
                largest_step: largest_stable_step(&function, eigenvalues),
                implicit: m.uses_jacobian(),
            })
        })
        .collect();
    let growing = eigenvalues.iter().filter(|l| l.re > 1e-12 * l.norm()).count();
    let recommended = recommend(eigenvalues, &scales, t_sim, step);
    Some(Advice {
        scales,
        t_sim,
        step,
        interval,
        verdicts,
        recommended,
        growing,
    })
}

/// The rule: a model that is not stiff takes rk4 with the advised step (always stable there:
/// `h ≤ T_min/10` keeps `h|λ|` far inside its region); a stiff one takes bdf, unless
/// eigenvalues close to the imaginary axis leave BDF's order-5 region (A(51.8°)-stable), where
/// the A-stable radau5 stays stable.
fn recommend(eigenvalues: &[C64], scales: &TimeScales, t_sim: f64, step: f64) -> Option<Recommendation> {
    let number = short_number;
    let rk4 = StabilityFunction::of(&Method::Rk4)?;
    let rk4_limit = largest_stable_step(&rk4, eigenvalues);
    if !scales.is_stiff() && rk4_limit >= step {
        return Some(Recommendation {
            method: "rk4".to_string(),
            step: Some(step),
            reason: format!(
                "not stiff (T_max/T_min = {}): rk4 is stable at h = {} (up to h = {}) and of order 4, {} steps over t_sim = {}",
                number(scales.stiffness),
                number(step),
                number(rk4_limit),
                (t_sim / step).ceil(),
                number(t_sim)
            ),
        });
    }
    let explicit_steps = if rk4_limit.is_finite() && rk4_limit > 0.0 {
        format!(
            "an explicit method needs h <= {} (rk4), {} steps over t_sim = {}",
            number(rk4_limit),
            (t_sim / rk4_limit).ceil(),
            number(t_sim)
        )
    } else {
        "no explicit method is stable at any step for these eigenvalues".to_string()
    };
    let bdf = StabilityFunction::bdf(5);
    let bdf_limit = largest_stable_step(&bdf, eigenvalues);
    let why = if scales.is_stiff() {
        format!("stiff (T_max/T_min = {})", number(scales.stiffness))
    } else {
        "oscillating modes outside the explicit methods' regions".to_string()
    };
    if bdf_limit.is_infinite() {
        Some(Recommendation {
            method: "bdf".to_string(),
            step: None,
            reason: format!("{why}: {explicit_steps}; bdf is stable at every step for these eigenvalues"),
        })
    } else {
        Some(Recommendation {
            method: "radau5".to_string(),
            step: None,
            reason: format!(
                "{why}: {explicit_steps}; eigenvalues close to the imaginary axis leave bdf's region of order 5 beyond h = {}, while radau5 is stable at every step in the left half-plane",
                number(bdf_limit)
            ),
        })
    }
}

/// `(ζ − 1)^m`, coefficients ascending.
fn power_of_difference(m: usize) -> Vec<f64> {
    (0..m).fold(vec![1.0], |p, _| multiply(&p, &[-1.0, 1.0]))
}

/// `ζ^k`, coefficients ascending.
fn monomial(k: usize) -> Vec<f64> {
    let mut p = vec![0.0; k + 1];
    p[k] = 1.0;
    p
}

fn multiply(p: &[f64], q: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; p.len() + q.len() - 1];
    for (i, a) in p.iter().enumerate() {
        for (j, b) in q.iter().enumerate() {
            r[i + j] += a * b;
        }
    }
    r
}

/// Solves `m x = rhs` in place (Gaussian elimination with partial pivoting; `rhs` becomes
/// `x`); `None` when `m` is singular.
fn solve(m: &mut [C64], rhs: &mut [C64], n: usize) -> Option<()> {
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| m[i * n + col].norm().total_cmp(&m[j * n + col].norm()))?;
        if m[pivot * n + col].norm() == 0.0 || !m[pivot * n + col].norm().is_finite() {
            return None;
        }
        if pivot != col {
            for k in 0..n {
                m.swap(pivot * n + k, col * n + k);
            }
            rhs.swap(pivot, col);
        }
        for row in col + 1..n {
            let factor = m[row * n + col] / m[col * n + col];
            for k in col..n {
                let v = m[col * n + k];
                m[row * n + k] -= factor * v;
            }
            let v = rhs[col];
            rhs[row] -= factor * v;
        }
    }
    for row in (0..n).rev() {
        let sum: C64 = (row + 1..n).map(|k| m[row * n + k] * rhs[k]).sum();
        rhs[row] = (rhs[row] - sum) / m[row * n + row];
    }
    Some(())
}

/// The largest modulus of the roots of the polynomial with ascending coefficients `p`
/// (Durand–Kerner iteration: the polynomials here have degree at most six); infinite when the
/// leading coefficient vanishes relative to the others, since a root then went to infinity.
fn largest_root(p: &[C64]) -> f64 {
    let scale = p.iter().map(|c| c.norm()).fold(0.0, f64::max);
    let Some(degree) = p.iter().rposition(|c| c.norm() > 1e-14 * scale) else {
        return f64::INFINITY;
    };
    if degree + 1 < p.len() {
        return f64::INFINITY;
    }
    // Roots at zero do not decide anything: drop them, so that the iteration sees simple
    // roots where it can.
    let low = p.iter().position(|c| c.norm() > 1e-14 * scale).unwrap_or(0);
    let monic: Vec<C64> = p[low..=degree].iter().map(|c| c / p[degree]).collect();
    let n = monic.len() - 1;
    if n == 0 {
        return 0.0;
    }
    let eval = |x: C64| monic.iter().rev().fold(C64::new(0.0, 0.0), |acc, c| acc * x + c);
    let bound = 1.0 + monic[..n].iter().map(|c| c.norm()).fold(0.0, f64::max);
    let mut roots: Vec<C64> = (0..n)
        .map(|i| C64::from_polar(0.5 * bound, std::f64::consts::TAU * i as f64 / n as f64 + 0.4))
        .collect();
    for _ in 0..500 {
        let mut change: f64 = 0.0;
        for i in 0..n {
            let x = roots[i];
            let denominator: C64 = (0..n).filter(|&j| j != i).map(|j| x - roots[j]).product();
            if denominator.norm() == 0.0 {
                roots[i] += C64::new(1e-8 * bound, 1e-8 * bound);
                change = f64::INFINITY;
                continue;
            }
            let delta = eval(x) / denominator;
            roots[i] = x - delta;
            change = change.max(delta.norm() / (1.0 + roots[i].norm()));
        }
        if change <= 1e-15 {
            break;
        }
    }
    roots.iter().map(|r| r.norm()).fold(0.0, f64::max)
}

/// `v` with four significant digits, in plain notation where that is short (`0.05`, `5.571`,
/// `1200`), else in scientific notation (`1.5e-7`).
fn short_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor();
    if (-3.0..6.0).contains(&magnitude) {
        let decimals = (3.0 - magnitude).max(0.0) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    } else {
        let text = format!("{v:.3e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        format!("{mantissa}e{exponent}")
    }
}
