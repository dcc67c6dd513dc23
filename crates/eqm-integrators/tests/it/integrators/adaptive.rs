//! Step size control of the adaptive explicit methods, against exact solutions and counts.
//!
//! The error at the end must stay within a small multiple of the tolerance on decay, an
//! oscillator and a Kepler orbit, and fall as the tolerance tightens; the right-hand side
//! evaluations per step must be what each method's stages need, and a huge system of identical
//! components must take the steps of one component.

use super::*;

#[test]
fn adaptive_methods_meet_their_tolerance() {
    let bs32 = Method::Tableau(Box::new(
        Tableau::parse(BOGACKI_SHAMPINE).expect("Bogacki–Shampine parses"),
    ));
    // The tolerance bounds the error of each step; the global error is at most a small multiple
    // of it: decay damps old errors, the oscillator keeps them, and on the Kepler orbit an
    // energy error becomes a phase error that grows for the whole period.
    let problems = [
        ("decay", decay(), 10.0),
        ("oscillator", oscillator(10.0), 50.0),
        ("kepler", kepler(), 150.0),
    ];
    for method in [Method::Rkf45, Method::Dopri5, bs32] {
        for (name, problem, multiple) in &problems {
            let mut tighter: Option<(usize, f64)> = None;
            for tol in [1e-8, 1e-6, 1e-4] {
                let r = run(&method, &tolerance(tol), problem, &Output::Interval(problem.t_end));
                assert_eq!(r.result, Ok(Outcome::Finished));
                let (t, x) = r.rows.last().expect("the end row");
                assert_eq!(*t, problem.t_end);
                let error = max_abs_error(x, &(problem.exact)(*t));
                let scale = tol * (1.0 + problem.x0.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
                let context = format!("{} on {name} with tolerance {tol:e}", method.name());
                assert!(
                    error <= multiple * scale,
                    "{context}: error {error:e} ({:.1} × tolerance)",
                    error / scale
                );
                if let Some((steps, tighter_error)) = tighter {
                    assert!(
                        r.stats.steps < steps,
                        "{context}: {} steps, not fewer than {steps}",
                        r.stats.steps
                    );
                    assert!(
                        error > tighter_error,
                        "{context}: error {error:e}, not above {tighter_error:e}"
                    );
                }
                tighter = Some((r.stats.steps, error));
            }
        }
    }
}

#[test]
fn dopri5_reuses_the_last_stage_and_rkf45_does_not_need_to() {
    let problem = kepler();
    let dopri = run(&Method::Dopri5, &tolerance(1e-6), &problem, &Output::Steps).stats;
    // One evaluation at the start, one for the initial step guess, six per attempt.
    assert_eq!(dopri.rhs_evals, 2 + 6 * (dopri.steps + dopri.rejected));
    let rkf = run(&Method::Rkf45, &tolerance(1e-6), &problem, &Output::Steps).stats;
    // Five stages per attempt plus the derivative at each accepted point.
    assert_eq!(rkf.rhs_evals, 2 + 5 * (rkf.steps + rkf.rejected) + rkf.steps);
}

#[test]
fn large_systems_take_the_same_steps() {
    // Identical components give the same error norm as one component, so a 100 000-state system
    // must take exactly the steps of the scalar one (and every loop is linear in the dimension).
    let make = |dim| Sys {
        dim,
        f: |_: f64, x: &[f64], dx: &mut [f64]| {
            for (d, v) in dx.iter_mut().zip(x) {
                *d = -v;
            }
            Ok(())
        },
    };
    let scalar = {
        let mut stepper = stepper_for(&Method::Dopri5, &tolerance(1e-6));
        run_with(stepper.as_mut(), &mut make(1), &[1.0], 2.0, &Output::Interval(2.0))
    };
    let dim = 100_000;
    let mut stepper = stepper_for(&Method::Dopri5, &tolerance(1e-6));
    let large = run_with(
        stepper.as_mut(),
        &mut make(dim),
        &vec![1.0; dim],
        2.0,
        &Output::Interval(2.0),
    );
    assert_eq!(large.stats, scalar.stats);
    // The error norm sums 100 000 equal squares, so the steps may differ by rounding only.
    let (a, b) = (
        large.rows.last().expect("end row").1[dim - 1],
        scalar.rows.last().expect("end row").1[0],
    );
    assert!((a - b).abs() <= 1e-10 * b.abs(), "{a} vs {b}");
}
