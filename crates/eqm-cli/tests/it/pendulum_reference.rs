//! The reference solution of the Cartesian pendulum (`crates/eqm-testkit/src/pendulum.rs`) checked
//! against published values of `K`, `sn`, `cn`, `dn`, against their identities, against the
//! pendulum's own equations and conserved quantities, and against an independent numerical
//! integration of `theta'' = -sin(theta)`.

use crate::pendulum;

use pendulum::{HORIZONTAL, Jacobi, PERIOD, Pendulum, State, complete_k, exact, jacobi};
use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_2, PI, SQRT_2};

const EPS: f64 = f64::EPSILON;

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: {got:e} vs {want:e} (difference {:e} > {tol:e})",
        got - want
    );
}

fn close_state(what: &str, got: &State, want: &State, tol: f64) {
    close(&format!("{what} x"), got.x, want.x, tol);
    close(&format!("{what} y"), got.y, want.y, tol);
    close(&format!("{what} vx"), got.vx, want.vx, tol);
    close(&format!("{what} vy"), got.vy, want.vy, tol);
    close(&format!("{what} F"), got.force, want.force, tol);
}

/// Values of `K(k)` computed with mpmath's `ellipk` at 40 digits (the first agrees with
/// Abramowitz and Stegun table 17.1, `K(m = 1/2) = 1.85407 46773 01371 91843`).
#[test]
fn complete_elliptic_integral_matches_published_values() {
    close("K(0)", complete_k(0.0), FRAC_PI_2, 2.0 * EPS);
    close(
        "K(1/sqrt 2)",
        complete_k(FRAC_1_SQRT_2),
        1.854_074_677_301_371_9,
        4.0 * EPS,
    );
    close("K(0.1)", complete_k(0.1), 1.574_745_561_517_356, 4.0 * EPS);
    close(
        "K(sqrt 0.9)",
        complete_k(0.9f64.sqrt()),
        2.578_092_113_348_173_2,
        8.0 * EPS,
    );
    // The period of the pendulum released with the rod horizontal, with omega = 1.
    close("4 K(1/sqrt 2)", 4.0 * complete_k(FRAC_1_SQRT_2), PERIOD, 16.0 * EPS);
    close("period", HORIZONTAL.period(), 7.416_298_709_205_487_7, 16.0 * EPS);
}

/// `sn`, `cn`, `dn` against mpmath's `ellipfun` at 40 digits, for the parameter `m = k^2` of
/// the pendulum (1/2), a small one (0.01) and a large one (0.9). The allowed error grows with
/// `|u|`, because an argument known to one rounding is uncertain by `|u| eps`.
#[test]
fn jacobi_functions_match_published_values() {
    let cases: [(f64, f64, [f64; 3]); 9] = [
        (
            0.5,
            0.5,
            [
                0.470_750_473_655_657_3,
                0.882_266_394_890_440_3,
                0.942_972_425_777_385_7,
            ],
        ),
        (
            0.5,
            1.0,
            [
                0.803_001_824_895_643_9,
                0.595_976_567_672_140_7,
                0.823_161_001_631_596_3,
            ],
        ),
        (
            0.5,
            3.0,
            [0.630_028_998_242_033_2, -0.776_571_607_370_589, 0.895_283_045_012_620_6],
        ),
        (
            0.5,
            -2.5,
            [
                -0.890_615_188_226_094_4,
                -0.454_757_722_860_204_5,
                0.776_789_735_546_563,
            ],
        ),
        (
            0.5,
            10.0,
            [0.858_812_505_952_778_7, -0.512_290_034_666_992_5, 0.794_493_889_095_161],
        ),
        (
            0.01,
            0.3,
            [0.295_477_985_210_377_2, 0.955_349_548_728_64, 0.999_563_368_477_737],
        ),
        (
            0.01,
            2.0,
            [0.911_760_593_501_127, -0.410_722_071_647_571_4, 0.995_834_788_607_721_2],
        ),
        (
            0.9,
            0.3,
            [
                0.291_732_047_818_618_5,
                0.956_500_084_827_782_6,
                0.960_938_692_658_381_7,
            ],
        ),
        (
            0.9,
            2.0,
            [
                0.981_615_869_518_493_8,
                0.190_867_191_286_117_5,
                0.364_399_857_626_901_7,
            ],
        ),
    ];
    for (m, u, [sn, cn, dn]) in cases {
        let k = f64::sqrt(m);
        let got = jacobi(u, k);
        let tol = 4.0 * EPS * (1.0 + u.abs());
        close(&format!("sn({u}, m = {m})"), got.sn, sn, tol);
        close(&format!("cn({u}, m = {m})"), got.cn, cn, tol);
        close(&format!("dn({u}, m = {m})"), got.dn, dn, tol);
    }
}

/// Identities of DLMF chapter 22 that hold for every modulus: the special values at `K` and
/// `K/2` (DLMF table 22.5.2), the squares (22.6.1), the addition theorem for `sn` (22.8.1),
/// `d sn/du = cn dn` (22.13.1), and the circular limit `k = 0`.
#[test]
fn jacobi_functions_satisfy_their_identities() {
    for k in [0.05, 0.3, FRAC_1_SQRT_2, 0.9, 0.99] {
        let kp = f64::sqrt((1.0 - k) * (1.0 + k));
        let big_k = complete_k(k);
        let Jacobi { sn, cn, dn } = jacobi(big_k, k);
        close(&format!("sn(K) for k = {k}"), sn, 1.0, 4.0 * EPS);
        close(&format!("cn(K) for k = {k}"), cn, 0.0, 8.0 * EPS);
        close(&format!("dn(K) for k = {k}"), dn, kp, 4.0 * EPS);
        let Jacobi { sn, cn, dn } = jacobi(0.5 * big_k, k);
        close(&format!("sn(K/2) for k = {k}"), sn, 1.0 / (1.0 + kp).sqrt(), 4.0 * EPS);
        close(&format!("cn(K/2) for k = {k}"), cn, (kp / (1.0 + kp)).sqrt(), 4.0 * EPS);
        close(&format!("dn(K/2) for k = {k}"), dn, kp.sqrt(), 4.0 * EPS);
        // Period 4K for sn and cn, 2K for dn; sn is odd, cn and dn even.
        let u = 0.731;
        let base = jacobi(u, k);
        let shifted = jacobi(u + 4.0 * big_k, k);
        let tol = 4.0 * EPS * (1.0 + 4.0 * big_k);
        close("sn(u + 4K)", shifted.sn, base.sn, tol);
        close("cn(u + 4K)", shifted.cn, base.cn, tol);
        close("dn(u + 2K)", jacobi(u + 2.0 * big_k, k).dn, base.dn, tol);
        let mirrored = jacobi(-u, k);
        assert_eq!((mirrored.sn, mirrored.cn, mirrored.dn), (-base.sn, base.cn, base.dn));

        for i in 0..200 {
            let u = -20.0 + 0.2 * i as f64 + 0.0123;
            let Jacobi { sn, cn, dn } = jacobi(u, k);
            close("sn^2 + cn^2", sn * sn + cn * cn, 1.0, 4.0 * EPS);
            close("dn^2 + k^2 sn^2", dn * dn + k * k * sn * sn, 1.0, 4.0 * EPS);
            // The addition theorem ties the values at u, v and u + v together.
            let v = 0.37 + 0.01 * i as f64;
            let (a, b, sum) = (jacobi(u, k), jacobi(v, k), jacobi(u + v, k));
            let added = (a.sn * b.cn * b.dn + b.sn * a.cn * a.dn) / (1.0 - k * k * a.sn * a.sn * b.sn * b.sn);
            // The denominator is at least k'^2, so the rounding of the formula grows with 1/k'^2.
            close(
                "sn(u + v)",
                sum.sn,
                added,
                16.0 * EPS * (1.0 + (u + v).abs()) / (kp * kp),
            );
            // A central difference with step h has truncation error h^2 |sn'''|/6 and rounding
            // error eps/h; h = 1e-5 keeps both below 1e-10.
            let h = 1e-5;
            let derivative = (jacobi(u + h, k).sn - jacobi(u - h, k).sn) / (2.0 * h);
            close("d sn/du", derivative, cn * dn, 1e-9);
        }
    }
    for u in [-7.0, -0.5, 0.0, 1e-3, 2.0, 31.4] {
        let Jacobi { sn, cn, dn } = jacobi(u, 0.0);
        assert_eq!((sn, cn, dn), (f64::sin(u), f64::cos(u), 1.0), "k = 0 at u = {u}");
    }
}

/// The configurations of the horizontal release that follow from energy alone: at rest with
/// the rod horizontal at `t = 0` and after half a period on the other side, at the bottom after a
/// quarter period with speed `sqrt(2 g L) = sqrt 2` moving towards `-x` and the rod force
/// `3 m g` (weight plus centripetal `m v^2/L = 2 m g`), and back to the start after a period.
#[test]
fn horizontal_release_passes_the_bottom_and_the_other_horizontal() {
    let tol = 8.0 * EPS;
    let rest = State {
        x: 1.0,
        y: 0.0,
        vx: 0.0,
        vy: 0.0,
        force: 0.0,
    };
    close_state("t = 0", &exact(0.0), &rest, tol);
    let bottom = State {
        x: 0.0,
        y: -1.0,
        vx: -SQRT_2,
        vy: 0.0,
        force: 3.0,
    };
    close_state("t = T/4", &exact(0.25 * PERIOD), &bottom, tol);
    let other = State { x: -1.0, ..rest };
    close_state("t = T/2", &exact(0.5 * PERIOD), &other, tol);
    close_state("t = 3T/4", &exact(0.75 * PERIOD), &State { vx: SQRT_2, ..bottom }, tol);
    close_state("t = T", &exact(PERIOD), &rest, tol);
    close_state("t = 13 T", &exact(13.0 * PERIOD), &rest, 13.0 * tol);
    // The first move is down (towards the bottom), not up.
    let early = exact(0.1);
    assert!(early.y < 0.0 && early.vy < 0.0 && early.vx < 0.0, "{early:?}");
    // Released at rest, the motion is symmetric in time: positions even, velocities odd.
    for t in [0.3, 2.0, 5.5] {
        let (a, b) = (exact(t), exact(-t));
        close_state(
            "time reversal",
            &b,
            &State {
                vx: -a.vx,
                vy: -a.vy,
                ..a
            },
            tol,
        );
    }
}

/// Along a long run the exact state lies on the position and velocity constraints, keeps the
/// energy of the release (`E = 0` at rest at the pivot's height), and has the rod force
/// `F = 3 m g cos(theta) = -3 m g y/L` that energy conservation gives for a horizontal
/// release (`m L theta'^2 = 2 m g cos(theta)`).
#[test]
fn exact_state_satisfies_the_constraints_and_conserves_energy() {
    for i in 0..=4000 {
        let t = 0.025 * i as f64;
        let s = exact(t);
        let tol = 8.0 * EPS;
        close(&format!("x^2 + y^2 at t = {t}"), s.x * s.x + s.y * s.y, 1.0, tol);
        close(&format!("x vx + y vy at t = {t}"), s.x * s.vx + s.y * s.vy, 0.0, tol);
        close(&format!("energy at t = {t}"), HORIZONTAL.energy(&s), 0.0, tol);
        close(&format!("F at t = {t}"), s.force, -3.0 * s.y, tol);
    }
}

/// The state satisfies the DAE itself: central differences of the positions give the
/// velocities, and those of the velocities give the accelerations `-F x/(m L)` and
/// `-F y/(m L) - g` with the returned `F`. Checked for the horizontal release and for the
/// 30-degree swing of `examples/pendulum.eqm` (g = 9.81), so `L`, `g`, `m` enter the test.
#[test]
fn exact_state_satisfies_the_equations_of_motion() {
    let thirty = Pendulum {
        mass: 2.0,
        length: 1.5,
        gravity: 9.81,
        amplitude: PI / 6.0,
    };
    for p in [HORIZONTAL, thirty] {
        // A central difference with step h errs by h^2 |f'''|/6 from truncation and by about
        // 4 eps |f|/h from rounding. The fastest case is the 30-degree swing with
        // omega = sqrt(9.81/1.5) = 2.56: x oscillates at omega with amplitude 0.78, so
        // |x''''| < 0.78 omega^4 = 34, and y at 2 omega with amplitude about L theta0^2/4 = 0.1,
        // so |y''''| < 0.1 (2 omega)^4 = 70. With h = 2e-5, truncation stays below
        // 6.7e-11 * 100 = 7e-9 and rounding below 5e-11.
        let h = 2e-5;
        let tol = 2e-8;
        for i in 0..300 {
            let t = 0.0731 * i as f64;
            let (s, before, after) = (p.state(t), p.state(t - h), p.state(t + h));
            let d = |f: fn(&State) -> f64| (f(&after) - f(&before)) / (2.0 * h);
            close("x'", d(|s| s.x), s.vx, tol);
            close("y'", d(|s| s.y), s.vy, tol);
            close("vx'", d(|s| s.vx), -s.force * s.x / (p.mass * p.length), tol);
            close(
                "vy'",
                d(|s| s.vy),
                -s.force * s.y / (p.mass * p.length) - p.gravity,
                tol,
            );
        }
    }
}

/// The numbers in the header comment of `examples/pendulum.eqm` (30 degrees, g = 9.81, m = L = 1):
/// the period 2.0410 s and the rod force 8.496 N at the turning points and 12.439 N at the bottom.
#[test]
fn thirty_degree_swing_matches_the_pendulum_example() {
    let p = Pendulum {
        mass: 1.0,
        length: 1.0,
        gravity: 9.81,
        amplitude: PI / 6.0,
    };
    let period = p.period();
    close("period", period, 2.0410, 5e-5);
    close("F at the turning point", p.state(0.0).force, 8.496, 5e-4);
    close("F at the bottom", p.state(0.25 * period).force, 12.439, 5e-4);
    let start = p.state(0.0);
    close("x(0)", start.x, 0.5, 4.0 * EPS);
    close("y(0)", start.y, -0.75f64.sqrt(), 4.0 * EPS);
}

/// Classical RK4 for `theta'' = -sin(theta)` with step `h` from `(theta, theta')` at `t = 0` to
/// each time of `times` (multiples of `h`).
fn rk4(h: f64, times: &[f64]) -> Vec<(f64, f64)> {
    let f = |th: f64, w: f64| (w, -th.sin());
    let (mut th, mut w, mut t) = (FRAC_PI_2, 0.0, 0.0);
    let mut out = Vec::new();
    for &end in times {
        let steps = ((end - t) / h).round() as usize;
        for _ in 0..steps {
            let k1 = f(th, w);
            let k2 = f(th + 0.5 * h * k1.0, w + 0.5 * h * k1.1);
            let k3 = f(th + 0.5 * h * k2.0, w + 0.5 * h * k2.1);
            let k4 = f(th + h * k3.0, w + h * k3.1);
            th += h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            w += h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        }
        t = end;
        out.push((th, w));
    }
    out
}

fn from_angle(theta: f64, rate: f64) -> State {
    let (sin, cos) = theta.sin_cos();
    State {
        x: sin,
        y: -cos,
        vx: rate * cos,
        vy: rate * sin,
        force: rate * rate + cos,
    }
}

/// An independent check: RK4 on `theta'' = -sin(theta)` (m = L = g = 1) with the steps 2^-10
/// and 2^-11. RK4's global error is O(h^4), so halving the step divides it by 16 and the
/// difference of the two runs, divided by 15, estimates the error of the finer one; the test
/// demands that this estimate is below 1e-11 and that the exact solution agrees with the finer
/// run to 1e-10 at t = 1, 5, 10 and 100 (a hundred seconds, 13.5 periods). The 1e-10 leaves room
/// for the rounding of the 204800 steps to t = 100, at worst 204800 * eps * |theta| = 7e-11.
#[test]
fn exact_solution_agrees_with_a_fine_rk4_integration() {
    let times = [1.0, 5.0, 10.0, 100.0];
    let coarse = rk4(1.0 / 1024.0, &times);
    let fine = rk4(1.0 / 2048.0, &times);
    for ((&t, &(th_c, w_c)), &(th_f, w_f)) in times.iter().zip(&coarse).zip(&fine) {
        let estimate = ((th_c - th_f).abs()).max((w_c - w_f).abs()) / 15.0;
        assert!(estimate < 1e-11, "RK4 error estimate {estimate:e} at t = {t}");
        close_state(&format!("t = {t}"), &exact(t), &from_angle(th_f, w_f), 1e-10);
        let (theta, rate) = HORIZONTAL.angle(t);
        close(&format!("theta at t = {t}"), theta, th_f, 1e-10);
        close(&format!("theta' at t = {t}"), rate, w_f, 1e-10);
    }
}

/// The state at t = 1, 5, 10, 100 against mpmath at 40 digits: `theta = 2 asin(k sn(K - t))`
/// with `ellipfun`, the velocities from mpmath's numerical derivative of that `theta`. The
/// allowed error grows with `t` because `t` itself is rounded (`t eps` times a rate of at most
/// `sqrt 2` in `x` and `sqrt 3` in `F`), and the phase of the AGM method carries the same.
#[test]
fn exact_solution_matches_high_precision_values() {
    let reference = [
        (
            1.0,
            [
                0.879_548_132_411_889_2,
                -0.475_809_922_942_720_8,
                -0.464_157_358_850_994,
                -0.858_008_037_322_443_2,
                1.427_429_768_828_162_4,
            ],
        ),
        (
            5.0,
            [
                -0.685_344_871_278_748_5,
                -0.728_218_653_573_166_6,
                0.878_835_712_874_84,
                -0.827_094_370_022_009_7,
                2.184_655_960_719_5,
            ],
        ),
        (
            10.0,
            [
                -0.811_586_446_191_303_8,
                -0.584_232_351_345_395_7,
                -0.631_529_149_065_017_6,
                0.877_288_798_841_069_3,
                1.752_697_054_036_187,
            ],
        ),
        (
            100.0,
            [
                -0.999_974_052_046_356_2,
                -0.007_203_834_672_683_708,
                -0.000_864_690_332_979_377_4,
                0.120_028_836_768_484_39,
                0.021_611_504_018_051_126,
            ],
        ),
    ];
    for (t, [x, y, vx, vy, force]) in reference {
        let s = exact(t);
        // Shown with `-- --nocapture`: the reference values to 16 digits.
        println!(
            "t = {t:>5}: x = {:.16e}, y = {:.16e}, vx = {:.16e}, vy = {:.16e}, F = {:.16e}",
            s.x, s.y, s.vx, s.vy, s.force
        );
        close_state(
            &format!("t = {t}"),
            &s,
            &State { x, y, vx, vy, force },
            8.0 * EPS * (1.0 + t),
        );
    }
}
