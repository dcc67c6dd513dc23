//! The exact solution of the Cartesian pendulum (a DAE of index 3), the reference for the
//! constraint stabilisation by projection: a point mass `m` on a massless rod of length `L`,
//! pivot at the origin, `y` pointing up, gravity `g`, released at rest at the angle `theta0`
//! from the downward vertical on the side `x > 0`.
//!
//! With `theta` measured from the downward vertical, `theta'' = -(g/L) sin(theta)`. With
//! `omega = sqrt(g/L)` and the modulus `k = sin(theta0/2)`, the solution is
//! `sin(theta/2) = k sn(K(k) - omega t, k)` (Abramowitz and Stegun 16.4 and any text on the
//! pendulum): at `t = 0`, `sn(K) = 1` gives `theta = theta0`, and `theta` then decreases, so the
//! bob first moves towards the bottom. Because `sn(K - u) = cd(u) = cn(u)/dn(u)` (DLMF 22.4.3),
//! everything is written with `u = omega t` directly, which avoids the rounding of `K - u`:
//!
//! ```text
//! sin(theta/2) = k cn/dn          cos(theta/2) = k'/dn          (k' = cos(theta0/2))
//! sin(theta)   = 2 k k' cn/dn^2   cos(theta)   = (k'^2 - k^2 cn^2)/dn^2
//! theta'       = -2 k k' omega sn/dn
//! ```
//!
//! (`cos(theta/2) = k'/dn` because `1 - k^2 cd^2 = k'^2/dn^2`, and `theta'` follows from
//! `d cd/du = -k'^2 sn/dn^2`.) The Cartesian state is `x = L sin(theta)`, `y = -L cos(theta)`,
//! `vx = L theta' cos(theta)`, `vy = L theta' sin(theta)`, and the rod force (tension, so
//! `m x'' = -F x/L` and `m y'' = -F y/L - m g`) is the centripetal force plus the radial part of
//! the weight, `F = m (L theta'^2 + g cos(theta)) = m (vx^2 + vy^2 - g y)/L`.
//!
//! The complete elliptic integral `K` comes from the arithmetic-geometric mean and `sn`, `cn`,
//! `dn` from the descending Landen transformation (the AGM method of Abramowitz and Stegun
//! 16.4), both in `f64` to a few units of rounding.

use std::f64::consts::{FRAC_PI_2, PI};

/// Position, velocity and rod force of the bob.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    pub x: f64,
    pub y: f64,
    pub vx: f64,
    pub vy: f64,
    /// The rod force `F` (tension, positive when the rod pulls the bob towards the pivot). If
    /// the constraint is written `x^2 + y^2 = L^2` with a Lagrange multiplier, so that
    /// `m x'' = -2 lambda x`, then `lambda = F/(2 L)`.
    pub force: f64,
}

/// The tolerance of the AGM iterations: they stop once the two means agree to rounding.
const AGM_TOLERANCE: f64 = f64::EPSILON;

/// The complete elliptic integral of the first kind, `K(k) = pi/(2 AGM(1, k'))` with
/// `k' = sqrt(1 - k^2)` (Abramowitz and Stegun 17.6), for a modulus `0 <= k < 1`.
pub fn complete_k(k: f64) -> f64 {
    assert!((0.0..1.0).contains(&k), "modulus {k} outside [0, 1)");
    // (1 - k)(1 + k) rather than 1 - k^2: no cancellation when k is close to 1.
    let (mut a, mut b) = (1.0, ((1.0 - k) * (1.0 + k)).sqrt());
    // The iteration converges quadratically; 40 rounds are far more than k < 1 needs in f64.
    for _ in 0..40 {
        if (a - b).abs() <= AGM_TOLERANCE * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    PI / (a + b)
}

/// The Jacobi elliptic functions at one argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jacobi {
    pub sn: f64,
    pub cn: f64,
    pub dn: f64,
}

/// `sn(u, k)`, `cn(u, k)`, `dn(u, k)` for a modulus `0 <= k < 1`, by the descending Landen
/// transformation (Abramowitz and Stegun 16.4): the AGM sequence `a_0 = 1`, `b_0 = k'`,
/// `c_0 = k`, `a_n = (a + b)/2`, `b_n = sqrt(a b)`, `c_n = (a - b)/2` until `c_N` is negligible;
/// then `phi_N = 2^N a_N u` and, going back, `sin(2 phi_{n-1} - phi_n) = (c_n/a_n) sin(phi_n)`.
/// `sn = sin(phi_0)`, `cn = cos(phi_0)`.
///
/// `dn` is computed as `sqrt(k'^2 + k^2 cn^2)` (which equals `sqrt(1 - k^2 sn^2)`) instead of
/// A&S's `cos(phi_0)/cos(phi_1 - phi_0)`: the quotient is 0/0 where `cn = 0`, while the sum of
/// two non-negative terms loses nothing, and `dn >= k' > 0`.
pub fn jacobi(u: f64, k: f64) -> Jacobi {
    assert!((0.0..1.0).contains(&k), "modulus {k} outside [0, 1)");
    let kp = ((1.0 - k) * (1.0 + k)).sqrt();
    // c_n/a_n for n = 1..=N; c_{n+1} = c_n^2/(4 a_{n+1}), so a handful of rounds suffice.
    let mut ratios = [0.0_f64; 40];
    let (mut a, mut b, mut c) = (1.0_f64, kp, k);
    let mut n = 0;
    while c.abs() > AGM_TOLERANCE * a && n < ratios.len() {
        (a, b, c) = (0.5 * (a + b), (a * b).sqrt(), 0.5 * (a - b));
        ratios[n] = c / a;
        n += 1;
    }
    let mut phi = 2f64.powi(n as i32) * a * u;
    for ratio in ratios[..n].iter().rev() {
        phi = 0.5 * (phi + (ratio * phi.sin()).asin());
    }
    let (sn, cn) = phi.sin_cos();
    Jacobi {
        sn,
        cn,
        dn: (kp * kp + k * k * cn * cn).sqrt(),
    }
}

/// A pendulum released at rest at the angle `amplitude` (radians, in `(0, pi)`) from the
/// downward vertical, on the side `x > 0`.
#[derive(Clone, Copy, Debug)]
pub struct Pendulum {
    pub mass: f64,
    pub length: f64,
    pub gravity: f64,
    pub amplitude: f64,
}

/// The pendulum of `examples/pendulum_long.eqm` and of `exact`: `m = L = g = 1`, released with
/// the rod horizontal (`x = 1`, `y = 0`, amplitude 90 degrees).
pub const HORIZONTAL: Pendulum = Pendulum {
    mass: 1.0,
    length: 1.0,
    gravity: 1.0,
    amplitude: FRAC_PI_2,
};

/// The period of `HORIZONTAL`, `4 K(1/sqrt 2)/omega` with `omega = 1`.
pub const PERIOD: f64 = 7.416_298_709_205_487;

/// The exact state of `HORIZONTAL` at time `t`.
pub fn exact(t: f64) -> State {
    HORIZONTAL.state(t)
}

impl Pendulum {
    /// `omega = sqrt(g/L)`, the angular frequency of small swings.
    pub fn omega(&self) -> f64 {
        (self.gravity / self.length).sqrt()
    }

    /// The modulus `k = sin(theta0/2)` of the elliptic functions.
    pub fn modulus(&self) -> f64 {
        (0.5 * self.amplitude).sin()
    }

    /// The period `4 K(k)/omega`.
    pub fn period(&self) -> f64 {
        4.0 * complete_k(self.modulus()) / self.omega()
    }

    /// The angle from the downward vertical and its rate, `(theta, theta')`, at time `t`.
    pub fn angle(&self, t: f64) -> (f64, f64) {
        let (sin, cos, rate) = self.trig(t);
        (sin.atan2(cos), rate)
    }

    /// `(sin(theta), cos(theta), theta')` at time `t`, from the formulas of the module comment.
    fn trig(&self, t: f64) -> (f64, f64, f64) {
        let (k, kp) = (0.5 * self.amplitude).sin_cos();
        let omega = self.omega();
        let Jacobi { sn, cn, dn } = jacobi(omega * t, k);
        let dn2 = dn * dn;
        let sin = 2.0 * k * kp * cn / dn2;
        let cos = (kp * kp - k * k * cn * cn) / dn2;
        let rate = -2.0 * k * kp * omega * sn / dn;
        (sin, cos, rate)
    }

    /// The Cartesian state and the rod force at time `t`.
    pub fn state(&self, t: f64) -> State {
        let (sin, cos, rate) = self.trig(t);
        let l = self.length;
        State {
            x: l * sin,
            y: -l * cos,
            vx: l * rate * cos,
            vy: l * rate * sin,
            force: self.mass * (l * rate * rate + self.gravity * cos),
        }
    }

    /// The total energy `m (vx^2 + vy^2)/2 + m g y` of a state (zero potential at the pivot's
    /// height); the exact motion keeps it at `-m g L cos(theta0)`.
    pub fn energy(&self, s: &State) -> f64 {
        self.mass * (0.5 * (s.vx * s.vx + s.vy * s.vy) + self.gravity * s.y)
    }
}
