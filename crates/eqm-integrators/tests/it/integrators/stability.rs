//! Stability functions against their textbook formulas, stability intervals against their
//! known values, the largest stable step against hand computation, and the advice.

use super::*;
use eqm_integrators::stability::{
    self, Advice, C64, StabilityFunction, TimeScales, largest_stable_step, stable_at, time_constant,
};
use std::f64::consts::{FRAC_PI_2, PI};

fn z(re: f64, im: f64) -> C64 {
    C64::new(re, im)
}

/// Points of the complex plane where the formulas are compared: inside and outside the
/// regions, on both axes and off them.
fn points() -> Vec<C64> {
    vec![
        z(-0.5, 0.0),
        z(-1.9, 0.3),
        z(-2.5, 1.5),
        z(0.3, -0.7),
        z(-0.1, 2.0),
        z(-7.0, -3.0),
        z(1.5, 0.0),
    ]
}

fn assert_function(method: &Method, formula: impl Fn(C64) -> C64) {
    let f = StabilityFunction::of(method).expect("a stability function");
    for z in points() {
        let r = f.value(z).expect("R(z) exists off the poles");
        let expected = formula(z);
        assert!(
            (r - expected).norm() <= 1e-12 * (1.0 + expected.norm()),
            "{}: R({z}) = {r}, expected {expected}",
            method.name()
        );
    }
}

fn one() -> C64 {
    C64::new(1.0, 0.0)
}

#[test]
fn explicit_runge_kutta_functions_are_truncated_exponentials() {
    assert_function(&Method::Euler, |z| one() + z);
    assert_function(&Method::Heun, |z| one() + z + z * z / 2.0);
    assert_function(&Method::Midpoint, |z| one() + z + z * z / 2.0);
    assert_function(&Method::Rk4, |z| {
        one() + z + z.powi(2) / 2.0 + z.powi(3) / 6.0 + z.powi(4) / 24.0
    });
    let kutta3 = Method::Tableau(Box::new(Tableau::parse(KUTTA3).expect("parses")));
    assert_function(&kutta3, |z| one() + z + z.powi(2) / 2.0 + z.powi(3) / 6.0);
}

#[test]
fn implicit_functions_are_their_pade_approximants() {
    assert_function(&Method::ImplicitEuler, |z| one() / (one() - z));
    assert_function(&Method::Trapezoid, |z| (one() + z / 2.0) / (one() - z / 2.0));
    // Radau IIA of order 5: the (2, 3) Padé approximant of e^z.
    assert_function(&Method::Radau5, |z| {
        (one() + z * 2.0 / 5.0 + z.powi(2) / 20.0) / (one() - z * 3.0 / 5.0 + z.powi(2) * 3.0 / 20.0 - z.powi(3) / 60.0)
    });
    // Alexander's SDIRK, a user's diagonally implicit tableau: (1 + (1 − 2γ) z) / (1 − γ z)².
    let gamma = 1.0 - 0.5f64.sqrt();
    let sdirk = Method::Tableau(Box::new(sdirk2()));
    let f = StabilityFunction::of(&sdirk).expect("a function");
    for z in points() {
        let expected = (one() + z * (1.0 - 2.0 * gamma)) / (one() - z * gamma).powi(2);
        assert!((f.value(z).expect("R") - expected).norm() < 1e-9);
    }
}

#[test]
fn real_stability_intervals_are_the_known_ones() {
    let limit = |m: Method| StabilityFunction::of(&m).expect("a function").real_limit();
    let close = |value: f64, expected: f64, tol: f64| (value - expected).abs() <= tol;
    assert!(close(limit(Method::Euler), 2.0, 1e-9));
    assert!(close(limit(Method::Heun), 2.0, 1e-9));
    // The real root of 1 + z + z²/2 + z³/6 + z⁴/24 = 1 below zero.
    assert!(close(limit(Method::Rk4), 2.785_293_563, 1e-6), "{}", limit(Method::Rk4));
    assert!(close(limit(Method::Dopri5), 3.306, 2e-3), "{}", limit(Method::Dopri5));
    assert!(close(limit(Method::Ab2), 1.0, 1e-6), "{}", limit(Method::Ab2));
    assert!(close(limit(Method::Ab4), 0.3, 1e-6), "{}", limit(Method::Ab4));
    for m in [Method::ImplicitEuler, Method::Trapezoid, Method::Radau5, Method::Bdf] {
        assert_eq!(
            limit(m.clone()),
            f64::INFINITY,
            "{} is stable on the whole negative axis",
            m.name()
        );
    }
    assert!(StabilityFunction::of(&Method::Auto).is_none());
}

#[test]
fn imaginary_axis_and_sectors() {
    let reach = |m: Method, theta: f64| StabilityFunction::of(&m).expect("a function").reach(theta);
    // RK4 reaches 2√2 on the imaginary axis; euler and ab2 not at all (to within the growth
    // that counts as stable); the A-stable methods everywhere.
    assert!((reach(Method::Rk4, FRAC_PI_2) - 8f64.sqrt()).abs() < 1e-6);
    assert!(reach(Method::Euler, FRAC_PI_2) < 1e-3);
    assert!(reach(Method::Ab2, FRAC_PI_2) < 1e-2);
    for m in [Method::ImplicitEuler, Method::Trapezoid, Method::Radau5] {
        assert_eq!(reach(m, FRAC_PI_2 + 1e-6), f64::INFINITY);
    }
    // BDF of order 5 is A(51.84°)-stable; orders 1 and 2 (NDF) are A-stable.
    let alpha = 51.84f64.to_radians();
    assert_eq!(StabilityFunction::bdf(5).reach(PI - alpha + 0.01), f64::INFINITY);
    assert!(StabilityFunction::bdf(5).reach(PI - alpha - 0.02).is_finite());
    for order in [1, 2] {
        assert_eq!(StabilityFunction::bdf(order).reach(FRAC_PI_2 + 1e-3), f64::INFINITY);
        assert_eq!(StabilityFunction::bdf(order).real_limit(), f64::INFINITY);
    }
    // Explicit methods are never stable far out.
    assert!(StabilityFunction::bdf(3).reach(FRAC_PI_2 + 1e-3).is_finite());
}

#[test]
fn a_stable_island_beyond_an_unstable_gap_does_not_count() {
    // R(z) = 1 + z + z²/10: on the negative axis stable on [−(5 − √5), 0], unstable up to
    // −(5 + √5), stable again up to −10.
    let f = StabilityFunction::RungeKutta {
        a: vec![0.0, 0.0, 0.5, 0.0],
        b: vec![0.8, 0.2],
    };
    assert!(f.is_stable(z(-8.0, 0.0)) && !f.is_stable(z(-4.0, 0.0)));
    assert!((f.real_limit() - (5.0 - 5f64.sqrt())).abs() < 1e-9);
    let h = largest_stable_step(&f, &[z(-2.0, 0.0)]);
    assert!((h - (5.0 - 5f64.sqrt()) / 2.0).abs() < 1e-9);
}

#[test]
fn largest_stable_steps_by_hand() {
    let euler = StabilityFunction::of(&Method::Euler).expect("euler");
    // Real eigenvalues: 2/|λ| of the fastest.
    assert!((largest_stable_step(&euler, &[z(-1.0, 0.0), z(-10.0, 0.0)]) - 0.2).abs() < 1e-12);
    // λ = −1 ± i: |1 + hλ|² = (1 − h)² + h² ≤ 1 for h ≤ 1.
    assert!((largest_stable_step(&euler, &[z(-1.0, 1.0), z(-1.0, -1.0)]) - 1.0).abs() < 1e-9);
    // rk4 with ±2i and −0.5: the imaginary pair limits, 2√2/2.
    let rk4 = StabilityFunction::of(&Method::Rk4).expect("rk4");
    let h = largest_stable_step(&rk4, &[z(0.0, 2.0), z(0.0, -2.0), z(-0.5, 0.0)]);
    assert!((h - 2f64.sqrt()).abs() < 1e-6, "{h}");
    // ab2 with λ = −4: 1/4.
    let ab2 = StabilityFunction::of(&Method::Ab2).expect("ab2");
    assert!((largest_stable_step(&ab2, &[z(-4.0, 0.0)]) - 0.25).abs() < 1e-6);
    assert!(stable_at(&ab2, &[z(-4.0, 0.0)], 0.24) && !stable_at(&ab2, &[z(-4.0, 0.0)], 0.26));
    // Growing modes and zero eigenvalues do not limit the step.
    assert_eq!(largest_stable_step(&euler, &[z(1.0, 0.0), z(0.0, 0.0)]), f64::INFINITY);
}

#[test]
fn time_scales_follow_the_rule() {
    assert_eq!(time_constant(z(-4.0, 0.0)), 0.25);
    assert!((time_constant(z(-0.1, 2.0 * PI)) - 1.0).abs() < 1e-12);
    assert_eq!(time_constant(z(0.0, 0.0)), f64::INFINITY);
    let scales = TimeScales::of(&[z(-0.1, 0.0), z(-1000.0, 0.0), z(0.0, 0.0)]).expect("scales");
    assert_eq!((scales.t_min, scales.t_max), (1e-3, 10.0));
    assert!(scales.is_stiff());
    assert!(TimeScales::of(&[z(0.0, 0.0)]).is_none());
    // Rounding noise of a zero eigenvalue is no time scale.
    let scales = TimeScales::of(&[z(-2.0, 0.0), z(-3e-17, 0.0)]).expect("scales");
    assert_eq!(scales.t_max, 0.5);
}

fn advice(eigenvalues: &[C64]) -> Advice {
    stability::advise(eigenvalues, &stability::judged_methods(None)).expect("advice")
}

fn verdict<'a>(advice: &'a Advice, name: &str) -> &'a stability::Verdict {
    advice.verdicts.iter().find(|v| v.method == name).expect("judged")
}

#[test]
fn advice_for_a_stiff_model() {
    let a = advice(&[z(-0.1, 0.0), z(-1000.0, 0.0)]);
    assert_eq!((a.t_sim, a.interval), (50.0, 0.25));
    assert!((a.step - 1e-4).abs() < 1e-18);
    let euler = verdict(&a, "euler");
    assert!(euler.stable && (euler.largest_step - 2e-3).abs() < 1e-12 && !euler.implicit);
    assert_eq!(verdict(&a, "radau5").largest_step, f64::INFINITY);
    let r = a.recommended.expect("a recommendation");
    assert_eq!(r.method, "bdf");
    assert!(r.reason.contains("stiff"), "{}", r.reason);
    assert_eq!(a.verdicts.len(), Method::NAMED.len() - 1, "every method but auto");
}

#[test]
fn advice_for_a_non_stiff_and_an_oscillating_stiff_model() {
    let a = advice(&[z(-1.0, 0.0), z(-2.0, 3.0), z(-2.0, -3.0)]);
    assert_eq!((a.t_sim, a.step), (5.0, 0.025));
    let r = a.recommended.expect("a recommendation");
    assert_eq!((r.method.as_str(), r.step), ("rk4", Some(0.025)));
    assert!(a.verdicts.iter().all(|v| v.stable), "{:?}", a.verdicts);

    let a = advice(&[z(-0.01, 0.0), z(-1.0, 1000.0), z(-1.0, -1000.0)]);
    assert!(a.scales.is_stiff());
    assert_eq!(a.recommended.as_ref().expect("a recommendation").method, "radau5");
    assert!(!verdict(&a, "euler").stable);
}

#[test]
fn a_user_tableau_is_judged_too() {
    let kutta3 = Method::Tableau(Box::new(Tableau::parse(KUTTA3).expect("parses")));
    let methods = stability::judged_methods(Some(&kutta3));
    let a = stability::advise(&[z(-1.0, 0.0)], &methods).expect("advice");
    // Kutta's third-order method reaches 2.5127 on the negative axis.
    let v = verdict(&a, "kutta3");
    assert!((v.largest_step - 2.512_745).abs() < 1e-5, "{}", v.largest_step);
}
