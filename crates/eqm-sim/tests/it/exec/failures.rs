//! Failures of the interpreter, checked against the failure kinds and diagnostics they must
//! report.
//!
//! A Newton iteration without a root, a value that is not finite, wrong array lengths, endless
//! loops and recursion, and failed assertions in functions stop evaluation without panicking and
//! name the equation, message and code.

use super::*;

#[test]
fn a_newton_failure_names_the_equation() {
    let (session, program) = compile(
        "no_root.eqm",
        "model NoRoot
           Real x(start = -1, fixed = true);
           Real d;
         equation
           d^2 + exp(d) = x;
           der(x) = d;
         end NoRoot;",
    );
    let mut inst = instance(&program);
    // Solvable at x = 2.
    let dx = rhs(&mut inst, 0.0, &[2.0]);
    let d = dx[0];
    assert_close(d * d + d.exp(), 2.0, 1e-12);
    // d^2 + exp(d) > 0.7 for every d: no solution at x = -1.
    let mut dx = [0.0];
    let failure = inst.rhs(1.5, &[-1.0], &mut dx).unwrap_err();
    assert_eq!(failure.time, 1.5);
    assert!(
        matches!(
            failure.kind,
            FailureKind::NoConvergence { .. } | FailureKind::Singular | FailureKind::NotFinite { .. }
        ),
        "{failure:?}"
    );
    let text = failure.to_string();
    assert!(text.contains("solving e1 failed at time 1.5"), "{text}");
    let diagnostic = program.failure_diagnostic(&failure);
    assert!(
        diagnostic.message.contains("solving equation e1 for d"),
        "{}",
        diagnostic.message
    );
    assert!(diagnostic.message.contains("at time 1.5"), "{}", diagnostic.message);
    assert!(
        diagnostic.labels[0].message.contains("d^2 + exp(d) = x"),
        "{:?}",
        diagnostic.labels
    );
    // It is rendered with the source line.
    let rendered = eqm_diag::render(&diagnostic, &session.map, false);
    assert!(rendered.contains("no_root.eqm:5:"), "{rendered}");
    assert!(rendered.contains("d^2 + exp(d) = x;"), "{rendered}");
}

#[test]
fn wrong_array_lengths_and_endless_loops_fail_without_panicking() {
    let program = check(
        "endless.eqm",
        "model Endless
           function spin
             input Real u;
             output Real y;
           algorithm
             y := u;
             while true loop
               y := y + 1;
             end while;
           end spin;
           function recurse
             input Real u;
             output Real y;
           algorithm
             y := recurse(u + 1);
           end recurse;
           parameter Boolean useSpin = true;
           Real x(start = 0, fixed = true);
         equation
           der(x) = if useSpin then spin(x) else recurse(x);
         end Endless;",
    );
    let mut interp = Interpreter::new(&program).unwrap();
    let mut work = vec![0.0; program.layout().work];
    let failure = interp
        .rhs(0.0, &[0.0, 1.0], program.p0(), &mut [0.0], &mut work)
        .unwrap_err();
    assert!(matches!(failure.kind, FailureKind::Dimension { array: "x", .. }));
    let failure = interp.rhs(0.0, &[0.0], &[0.0], &mut [0.0], &mut work).unwrap_err();
    assert!(
        matches!(failure.kind, FailureKind::RecursionLimit { .. }),
        "{failure:?}"
    );
    interp.set_iteration_limit(1000);
    let failure = interp
        .rhs(0.0, &[0.0], program.p0(), &mut [0.0], &mut work)
        .unwrap_err();
    assert!(
        matches!(failure.kind, FailureKind::IterationLimit { limit: 1000 }),
        "{failure:?}"
    );

    assert_eq!(program.failure_diagnostic(&failure).code, "E0706");
}

#[test]
fn assertions_in_functions_fail_with_their_message() {
    let program = check(
        "assert.eqm",
        "model Asserting
           function root
             input Real u;
             output Real y;
           algorithm
             assert(u >= 0, \"root of a negative number\");
             y := sqrt(u);
           end root;
           Real x(start = 4, fixed = true);
         equation
           der(x) = -root(x);
         end Asserting;",
    );
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[4.0]), vec![-2.0]);
    let failure = inst.rhs(0.5, &[-1.0], &mut [0.0]).unwrap_err();
    assert!(
        matches!(&failure.kind, FailureKind::Assert { message, .. } if message == "root of a negative number"),
        "{failure:?}"
    );
    assert_eq!(program.failure_diagnostic(&failure).code, "E0705");
}

#[test]
fn a_value_that_is_not_finite_names_its_equation() {
    let program = check("population.eqm", &example("population.eqm"));
    let mut inst = instance(&program);
    // N = Nk is the pole of the death rate.
    let failure = inst.rhs(2.0, &[225.0], &mut [0.0]).unwrap_err();
    assert!(matches!(failure.kind, FailureKind::NotFinite { .. }), "{failure:?}");
    let d = program.failure_diagnostic(&failure);
    assert_eq!(d.code, "E0701");
    assert!(d.message.contains("for t"), "{}", d.message);
}
