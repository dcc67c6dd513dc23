//! Implicit equations and algebraic loops solved by the interpreter, checked against solutions
//! worked out by hand.
//!
//! Linear loops take one LU step, single implicit equations and implicit derivatives are
//! solved by Newton, nonlinear loops use their symbolic Jacobian, and loops through user
//! functions fall back to difference quotients.

use super::*;

#[test]
fn two_springs_in_series_solve_their_loop() {
    let program = check("two_springs_series.eqm", &example("two_springs_series.eqm"));
    assert_eq!(program.rhs().iter().filter(|i| matches!(i, Instr::Loop(_))).count(), 1);
    let mut inst = instance(&program);
    let (s, v) = (state(&program, "mass.s"), state(&program, "mass.v"));
    // By hand: the node between the springs sits where both forces balance,
    // c1*(node - s) = c2*(0 - node), so node = c1*s/(c1 + c2) = s/2, and the force on the mass
    // is c1*(node - s) = -4*s: der(v) = -4*s as for one spring with c = 4.
    for s0 in [1.0, -0.7, 0.0] {
        let x = states(&program, &[("mass.s", s0), ("mass.v", 0.25)]);
        let dx = rhs(&mut inst, 0.0, &x);
        assert_eq!(dx[s], 0.25);
        assert_close(dx[v], -4.0 * s0, 1e-12);
        assert_close(inst.value("spring1.flange_b.s", &x).unwrap(), s0 / 2.0, 1e-12);
        assert_close(inst.value("mass.flange_b.f", &x).unwrap(), -4.0 * s0, 1e-12);
    }
}

#[test]
fn linear_loop_is_solved_by_one_lu_step() {
    let program = check(
        "linear_loop.eqm",
        "model LinearLoop
           Real x(start = 3, fixed = true);
           Real a;
           Real b;
         equation
           a + b = x;
           a - b = 1;
           der(x) = -a;
         end LinearLoop;",
    );
    assert!(first_loop(&program).linear);
    let mut inst = instance(&program);
    assert_close(rhs(&mut inst, 0.0, &[3.0])[0], -2.0, 1e-14);
    assert_close(rhs(&mut inst, 0.0, &[-5.0])[0], 2.0, 1e-14);
    assert_close(inst.value("b", &[-5.0]).unwrap(), -3.0, 1e-14);
}

#[test]
fn cubic_spring_is_solved_by_newton() {
    let program = check("cubic.eqm", CUBIC_SPRING);
    assert!(matches!(
        program.rhs()[0],
        Instr::Newton1 {
            derivative: Some(_),
            ..
        }
    ));
    let mut inst = instance(&program);
    // d^3 + d = 2 has the root d = 1, d^3 + d = 10 the root d = 2.
    assert_close(rhs(&mut inst, 0.0, &[2.0])[0], -1.0, 1e-12);
    assert_close(rhs(&mut inst, 0.0, &[10.0])[0], -2.0, 1e-12);
    assert_close(rhs(&mut inst, 0.0, &[-30.0])[0], 3.0, 1e-12);
    // A change of a parameter changes the solution: 2*d + d^3 = 3 has the root d = 1.
    inst.set_param("k", 2.0).unwrap();
    assert_close(rhs(&mut inst, 0.0, &[3.0])[0], -1.0, 1e-12);
    // A small solution keeps its relative accuracy: 2*d + d^3 = 3e-9 gives d = 1.5e-9.
    let d = -rhs(&mut inst, 0.0, &[3e-9])[0];
    assert!(((d - 1.5e-9) / 1.5e-9).abs() < 1e-12, "{d}");
}

#[test]
fn two_nonlinear_springs_in_series_solve_a_nonlinear_loop() {
    let program = check(
        "nonlinear_springs.eqm",
        "model NonlinearSprings \"A mass on two hardening springs in series\"
           parameter Real c1 = 8;
           parameter Real c2 = 8;
           parameter Real m = 1;
           Real s(start = 2, fixed = true) \"position of the mass\";
           Real v(start = 0, fixed = true);
           Real sm \"position of the node between the springs\";
           Real f1;
           Real f2;
         equation
           der(s) = v;
           m*der(v) = -f1;
           f1 = c1*(s - sm) + (s - sm)^3;
           f2 = c2*sm + sm^3;
           f1 = f2;
         end NonlinearSprings;",
    );
    let block = first_loop(&program);
    assert!(!block.linear);
    assert!(block.jacobian.is_some());
    let mut inst = instance(&program);
    let (s, v) = (state(&program, "s"), state(&program, "v"));
    // Equal springs share the elongation: sm = s/2 and the force is c*(s/2) + (s/2)^3.
    for s0 in [2.0, -3.0, 0.1, 6.0] {
        let x = states(&program, &[("s", s0), ("v", 1.5)]);
        let dx = rhs(&mut inst, 0.0, &x);
        let h = s0 / 2.0;
        assert_eq!(dx[s], 1.5);
        assert_close(dx[v], -(8.0 * h + h * h * h), 1e-10);
        assert_close(inst.value("sm", &x).unwrap(), h, 1e-10);
    }
}

#[test]
fn a_loop_through_a_user_function_uses_difference_quotients() {
    let program = check(
        "fd_loop.eqm",
        "model FdLoop
           function cube
             input Real u;
             output Real y;
           algorithm
             y := u*u*u;
           end cube;
           Real s(start = 2, fixed = true);
           Real sm;
           Real f;
         equation
           der(s) = -f;
           f = 8*(s - sm) + cube(s - sm);
           f = 8*sm + cube(sm);
         end FdLoop;",
    );
    let block = first_loop(&program);
    assert!(block.jacobian.is_none());
    let mut inst = instance(&program);
    assert_close(rhs(&mut inst, 0.0, &[2.0])[0], -9.0, 1e-9);
    assert_close(inst.value("sm", &[2.0]).unwrap(), 1.0, 1e-9);
}

#[test]
fn an_implicit_derivative_is_solved_by_newton_from_its_last_value() {
    let program = check(
        "implicit_der.eqm",
        "model ImplicitDer
           Real x(start = 2, fixed = true);
         equation
           der(x) + der(x)^3 = -x;
         end ImplicitDer;",
    );
    assert!(matches!(
        program.rhs()[0],
        Instr::Newton1 {
            target: eqm_ir::slot::Slot::Der(0),
            ..
        }
    ));
    let mut inst = instance(&program);
    assert_close(rhs(&mut inst, 0.0, &[2.0])[0], -1.0, 1e-12);
    assert_close(rhs(&mut inst, 0.0, &[-10.0])[0], 2.0, 1e-12);
    // The caller's dx may hold anything: the iteration starts from the last solution.
    let mut dx = [f64::NAN];
    inst.rhs(0.0, &[-10.0], &mut dx).unwrap();
    assert_close(dx[0], 2.0, 1e-12);
}
