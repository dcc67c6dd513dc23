//! The executable program and its reference interpreter: right-hand sides against derivatives
//! computed by hand, implicit equations and algebraic loops, functions and algorithm sections,
//! parameters changed without rebuilding, parameter conditions, the outputs of removed aliases,
//! failures with their diagnostics, and an explicit Euler integration of the spring-mass system.

use crate::pipeline::Pipeline;
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_flatten::Sources;
use eqm_ir::failure::FailureKind;
use eqm_sim::instance::Instance;
use eqm_sim::interp::{Interpreter, OdeRhs};

/// The one place these tests call the pipeline: flatten `text` with the stdlib, analyse it and
/// build its executable program (or panic with the rendered diagnostics). The session holds the
/// sources that the program's spans refer to.
fn compile(name: &str, text: &str) -> (Sources, ExecProgram) {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    let Some(analysis) = session.analyze(None, &eqm_flatten::Options::default(), false) else {
        panic!("{}", session.render_diagnostics(false));
    };
    match ExecProgram::build(analysis.dae.clone(), &analysis.plan) {
        Ok(program) => (session, program),
        Err(diagnostics) => {
            session.diagnostics = diagnostics;
            panic!("{}", session.render_diagnostics(false));
        }
    }
}

fn check(name: &str, text: &str) -> ExecProgram {
    compile(name, text).1
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", crate::REPO)).expect("example exists")
}

fn instance(program: &ExecProgram) -> Instance<'_> {
    Instance::new(program).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The index of state `name` in `x`.
fn state(program: &ExecProgram, name: &str) -> usize {
    let v = program.lookup(name).unwrap_or_else(|| panic!("no variable `{name}`"));
    match program.slot_of(v) {
        Some(eqm_ir::slot::Slot::State(i)) => i as usize,
        other => panic!("`{name}` is not a state but {other:?}"),
    }
}

/// `x` with the named states set and the others at 0.
fn states(program: &ExecProgram, values: &[(&str, f64)]) -> Vec<f64> {
    let mut x = vec![0.0; program.layout().states];
    for (name, v) in values {
        x[state(program, name)] = *v;
    }
    x
}

/// The derivatives at `(t, x)`.
fn rhs(inst: &mut Instance, t: f64, x: &[f64]) -> Vec<f64> {
    let mut dx = vec![f64::NAN; inst.dim()];
    inst.rhs(t, x, &mut dx).unwrap_or_else(|f| panic!("{}", f));
    dx
}

/// The first algebraic loop of the right-hand side.
fn first_loop(program: &ExecProgram) -> &eqm_compile::exec::LoopBlock {
    program
        .rhs()
        .iter()
        .find_map(|i| match i {
            Instr::Loop(b) => Some(&**b),
            _ => None,
        })
        .expect("a loop")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[track_caller]
fn assert_close(a: f64, b: f64, tol: f64) {
    assert!(close(a, b, tol), "{a} is not {b} (tolerance {tol})");
}

#[test]
fn spring_mass_derivatives() {
    let program = check("spring_mass.eqm", &example("spring_mass.eqm"));
    let mut inst = instance(&program);
    let (s, v) = (state(&program, "mass.flange_b.s"), state(&program, "mass.v"));
    // The starting point: at rest at s = 1, der(v) = -c/m*s = -4.
    assert_eq!(default_x0(&program)[s], 1.0);
    assert_eq!(default_x0(&program)[v], 0.0);
    let dx = rhs(&mut inst, 0.0, &default_x0(&program));
    assert_eq!(dx[s], 0.0);
    assert_eq!(dx[v], -4.0);
    let x = states(&program, &[("mass.flange_b.s", 0.5), ("mass.v", 0.3)]);
    let dx = rhs(&mut inst, 0.0, &x);
    assert_eq!(dx[s], 0.3);
    assert_eq!(dx[v], -2.0);
    // Every instruction of this system is an explicit assignment.
    assert!(program.rhs().iter().all(|i| matches!(i, Instr::Assign { .. })));
}

#[test]
fn decay_derivative() {
    let program = check("decay.eqm", &example("decay.eqm"));
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[1.0]), vec![-0.5]);
    assert_eq!(rhs(&mut inst, 3.0, &[0.25]), vec![-0.125]);
}

#[test]
fn rc_circuit_derivative_and_current() {
    let program = check("rc_circuit.eqm", &example("rc_circuit.eqm"));
    let mut inst = instance(&program);
    // der(v) = (V - v)/(R*C) with R*C = 1 s; the current is (V - v)/R.
    let x = [2.0];
    let mut dx = [0.0];
    inst.rhs(0.0, &x, &mut dx).unwrap();
    assert_close(dx[0], 8.0, 1e-14);
    inst.outputs(0.0, &x, &mut dx).unwrap();
    assert_close(inst.value("resistor.i", &x).unwrap(), 0.008, 1e-14);
    assert_close(inst.value("capacitor.i", &x).unwrap(), 0.008, 1e-14);
    assert_close(inst.value("source.i", &x).unwrap(), -0.008, 1e-14);
}

#[test]
fn population_derivative() {
    let program = check("population.eqm", &example("population.eqm"));
    let mut inst = instance(&program);
    for n in [10.0, 150.0, 200.0] {
        let expected = 0.03 * n - 0.01 / (1.0 - n / 225.0) * n;
        assert_close(rhs(&mut inst, 0.0, &[n])[0], expected, 1e-14);
    }
    // At the equilibrium births and deaths balance.
    assert!(rhs(&mut inst, 0.0, &[150.0])[0].abs() < 1e-12);
}

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

const CUBIC_SPRING: &str = "model CubicSpring \"The deflection d of a hardening spring follows from its force\"
  parameter Real k = 1;
  parameter Real k3 = 1;
  Real x(start = 2, fixed = true);
  Real d(start = 0.5);
equation
  k*d + k3*d^3 = x;
  der(x) = -d;
end CubicSpring;";

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
fn cooling_runs_its_function_and_algorithm_section() {
    let program = check("cooling.eqm", &example("cooling.eqm"));
    let mut inst = instance(&program);
    // h = 10*(1 + 0.02*|T - Tamb|), C*der(T) = -h*A*(T - Tamb); Tamb is 293 before t = 600
    // and 295 after.
    let expected = |t_amb: f64, t: f64| {
        let h = 10.0 * (1.0 + 0.02 * (t - t_amb).abs());
        -h * 0.05 * (t - t_amb) / 1000.0
    };
    assert_close(rhs(&mut inst, 0.0, &[360.0])[0], expected(293.0, 360.0), 1e-14);
    assert_eq!(inst.value("Tamb", &[360.0]), Some(293.0));
    assert_close(rhs(&mut inst, 700.0, &[360.0])[0], expected(295.0, 360.0), 1e-14);
    // The algorithm starts from the start value of Tamb each time, so going back in time
    // gives the earlier value again rather than adding 2 twice.
    assert_close(rhs(&mut inst, 100.0, &[300.0])[0], expected(293.0, 300.0), 1e-14);
    assert_close(rhs(&mut inst, 700.0, &[290.0])[0], expected(295.0, 290.0), 1e-14);
}

#[test]
fn user_function_with_a_while_loop() {
    let program = check(
        "while.eqm",
        "model UsesWhile
           function sumTo \"1 + 2 + ... + n\"
             input Real n;
             output Real s;
           protected
             Real i;
           algorithm
             s := 0;
             i := 1;
             while i <= n loop
               s := s + i;
               i := i + 1;
             end while;
           end sumTo;
           parameter Real n = 4;
           Real x(start = 0, fixed = true);
         equation
           der(x) = sumTo(n) + sumTo(x);
         end UsesWhile;",
    );
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[0.0]), vec![10.0]);
    assert_eq!(rhs(&mut inst, 0.0, &[3.5]), vec![16.0]);
    inst.set_param("n", 100.0).unwrap();
    assert_eq!(rhs(&mut inst, 0.0, &[0.0]), vec![5050.0]);
}

#[test]
fn user_functions_with_for_break_return_several_outputs_and_recursion() {
    let program = check(
        "functions.eqm",
        "model Functions
           function stats \"sum and sum of squares of 1..n, stopping after 10 terms\"
             input Integer n;
             output Real s = 0;
             output Real q = 0;
           algorithm
             for i in 1:n loop
               if i > 10 then
                 break;
               end if;
               s := s + i;
               q := q + i*i;
             end for;
           end stats;
           function fact
             input Integer n;
             output Real y;
           algorithm
             if n <= 1 then
               y := 1;
               return;
             end if;
             y := n*fact(n - 1);
           end fact;
           function down \"counts down with a negative step\"
             input Integer n;
             output Real last;
           algorithm
             for i in n:-2:1 loop
               last := i;
             end for;
           end down;
           parameter Integer n = 3;
           Real a;
           Real b;
           Real c;
           Real d;
           Real x(start = 0, fixed = true);
         equation
           (a, b) = stats(n);
           c = fact(n + 2);
           d = down(n + 4);
           der(x) = a + b + c + d;
         end Functions;",
    );
    let mut inst = instance(&program);
    let dx = rhs(&mut inst, 0.0, &[0.0]);
    assert_eq!(inst.value("a", &[0.0]), Some(6.0));
    assert_eq!(inst.value("b", &[0.0]), Some(14.0));
    assert_eq!(inst.value("c", &[0.0]), Some(120.0));
    assert_eq!(inst.value("d", &[0.0]), Some(1.0));
    assert_eq!(dx, vec![141.0]);
    // The loop stops after 10 terms.
    inst.set_param("n", 50.0).unwrap();
    rhs(&mut inst, 0.0, &[0.0]);
    assert_eq!(inst.value("a", &[0.0]), Some(55.0));
    assert_eq!(inst.value("b", &[0.0]), Some(385.0));
}

#[test]
fn changing_a_parameter_does_not_rebuild_the_program() {
    let program = check("spring_mass.eqm", &example("spring_mass.eqm"));
    let mut inst = instance(&program);
    let (s, v) = (state(&program, "mass.flange_b.s"), state(&program, "mass.v"));
    let x = states(&program, &[("mass.flange_b.s", 1.0)]);
    assert_eq!(rhs(&mut inst, 0.0, &x)[v], -4.0);
    inst.set_param("spring.c", 9.0).unwrap();
    assert_eq!(rhs(&mut inst, 0.0, &x)[v], -9.0);
    inst.set_param("mass.m", 2.0).unwrap();
    assert_eq!(rhs(&mut inst, 0.0, &x)[v], -4.5);
    assert_eq!(rhs(&mut inst, 0.0, &x)[s], 0.0);
    assert_eq!(inst.param("mass.m"), Some(2.0));
    // The program itself is untouched: a fresh instance has the defaults.
    let mut fresh = instance(&program);
    assert_eq!(rhs(&mut fresh, 0.0, &x)[v], -4.0);
}

#[test]
fn a_zero_mass_is_a_diagnostic_not_infinity() {
    let program = check("spring_mass.eqm", &example("spring_mass.eqm"));
    let mut inst = instance(&program);
    let d = inst.set_param("mass.m", 0.0).unwrap_err();
    assert_eq!(d.code, "E0704");
    assert!(d.message.contains("`mass.m` must not be zero"), "{}", d.message);
    let labels: Vec<&str> = d.labels.iter().map(|l| l.message.as_str()).collect();
    assert!(
        labels
            .iter()
            .any(|l| l.contains("mass.m*der(mass.v) = mass.flange_b.f")),
        "{labels:?}"
    );
    // The old value is kept.
    assert_eq!(inst.param("mass.m"), Some(1.0));
    let x = states(&program, &[("mass.flange_b.s", 1.0)]);
    assert_eq!(rhs(&mut inst, 0.0, &x)[state(&program, "mass.v")], -4.0);
}

#[test]
fn set_param_refuses_unknown_and_computed_names() {
    let program = check(
        "dependent.eqm",
        "model Dependent
           parameter Real k = 2;
           parameter Real c = 2*k \"depends on k\";
           parameter Real e = c + k;
           Real x(start = 1, fixed = true);
         equation
           der(x) = -c*x - e;
         end Dependent;",
    );
    let mut inst = instance(&program);
    let d = inst.set_param("kk", 1.0).unwrap_err();
    assert_eq!(d.code, "E0707");
    assert_eq!(d.help.as_deref(), Some("did you mean `k`?"));
    let d = inst.set_param("c", 1.0).unwrap_err();
    assert!(d.message.contains("2*k"), "{}", d.message);
    let d = inst.set_param("x", 1.0).unwrap_err();
    assert!(d.message.contains("not a parameter"), "{}", d.message);
}

#[test]
fn dependent_parameters_follow_the_parameters_they_depend_on() {
    let program = check(
        "dependent.eqm",
        "model Dependent
           parameter Real e = c + k \"declared before what it uses\";
           parameter Real c = 2*k;
           parameter Real k = 2;
           Real x(start = c, fixed = true);
         equation
           der(x) = -c*x - e;
         end Dependent;",
    );
    assert_eq!(program.params().len(), 1);
    assert_eq!(program.parameter_program().len(), 2);
    // The start value depends on a parameter too.
    assert_eq!(default_x0(&program), [4.0]);
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[1.0]), vec![-4.0 - 6.0]);
    inst.set_param("k", 3.0).unwrap();
    assert_eq!(inst.param("c"), Some(6.0));
    assert_eq!(inst.param("e"), Some(9.0));
    assert_eq!(rhs(&mut inst, 0.0, &[1.0]), vec![-6.0 - 9.0]);
    assert_eq!(inst.start_values().unwrap(), vec![6.0]);
}

#[test]
fn outputs_give_the_variables_removed_as_aliases() {
    let program = check("spring_mass.eqm", &example("spring_mass.eqm"));
    let mut inst = instance(&program);
    let x = states(&program, &[("mass.flange_b.s", 0.75), ("mass.v", -1.0)]);
    let mut dx = vec![0.0; 2];
    inst.rhs(0.0, &x, &mut dx).unwrap();
    inst.outputs(0.0, &x, &mut dx).unwrap();
    let value = |name: &str| inst.value(name, &x).unwrap_or_else(|| panic!("no value for {name}"));
    assert_eq!(value("mass.flange_a.s"), 0.75);
    assert_eq!(value("spring.flange_a.s"), 0.75);
    assert_eq!(value("spring.flange_b.s"), 0.0);
    assert_eq!(value("fixed.flange.s"), 0.0);
    assert_eq!(value("mass.flange_a.f"), 0.0);
    // f4 = c*(s4 - s3) = -3; f5 = -f4, f3 = -f4, f2 = -f3.
    assert_eq!(value("spring.flange_b.f"), -3.0);
    assert_eq!(value("fixed.flange.f"), 3.0);
    assert_eq!(value("spring.flange_a.f"), 3.0);
    assert_eq!(value("mass.flange_b.f"), -3.0);
    // Every variable of the model has a name and a finite value.
    let names: Vec<&str> = program.variables().map(|(name, ..)| name).collect();
    assert_eq!(names.len(), program.symbols().len());
    for name in names {
        assert!(value(name).is_finite(), "{name}");
    }
    let removed = program.variables().filter(|(.., e)| e.is_some()).count();
    assert_eq!(removed, program.outputs().len());
    assert_eq!(removed, 8);
}

#[test]
fn an_algorithm_reads_a_variable_removed_as_an_alias() {
    let program = check(
        "alg_alias.eqm",
        "model AlgAlias
           Real x(start = 1, fixed = true);
           Real y;
           Real z;
         equation
           y = x;
           der(x) = -z;
         algorithm
           z := 2*y;
         end AlgAlias;",
    );
    assert!(program.symbols().iter().any(|(_, s)| s.eliminated.is_some()));
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[1.5]), vec![-3.0]);
}

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

/// Explicit Euler over any right-hand side, as an integrator sees it: `x` at `t_end`.
fn euler(system: &mut impl OdeRhs, x0: &[f64], t_end: f64, h: f64) -> Vec<f64> {
    let mut x = x0.to_vec();
    let mut dx = vec![0.0; system.dim()];
    let steps = (t_end / h).round() as usize;
    for k in 0..steps {
        system.rhs(k as f64 * h, &x, &mut dx).unwrap_or_else(|f| panic!("{f}"));
        for (xi, di) in x.iter_mut().zip(&dx) {
            *xi += h * di;
        }
    }
    x
}

#[test]
fn explicit_euler_reproduces_the_cosine_to_first_order() {
    let program = check("spring_mass.eqm", &example("spring_mass.eqm"));
    let mut inst = instance(&program);
    let s = state(&program, "mass.flange_b.s");
    let x0 = inst.start_values().unwrap();
    // Explicit Euler has global error O(h): halving h halves the error at t = 1.
    let mut error = |h: f64| (euler(&mut inst, &x0, 1.0, h)[s] - 2.0f64.cos()).abs();
    let coarse = error(1e-3);
    let fine = error(5e-4);
    assert!(coarse < 5e-3, "error {coarse}");
    let ratio = coarse / fine;
    assert!((1.8..2.2).contains(&ratio), "error ratio {ratio}");
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

/// The flattener reports cyclic bindings itself; a DAE built by other means (a later stage that
/// rewrites bindings) still gets a diagnostic rather than a hang or an arbitrary order.
#[test]
fn cyclic_parameters_are_a_diagnostic() {
    let mut session = Sources::new();
    session.add_file(
        "cycle.eqm",
        "model Cycle
           parameter Real a = 1;
           parameter Real b = 2*a;
           Real x(start = 1, fixed = true);
         equation
           der(x) = -a*b*x;
         end Cycle;",
    );
    let mut analysis = session
        .analyze(None, &eqm_flatten::Options::default(), false)
        .expect("the model is fine");
    let dae = &mut analysis.dae;
    let (a, b) = (dae.flat.variables.iter().position(|v| v.name == "a").unwrap(), 1);
    let b_node = dae.flat.exprs.var(eqm_ir::expr::VarId(b));
    let one = dae.flat.exprs.real(1.0);
    let binding = dae.flat.exprs.binary(eqm_ir::expr::BinOp::Add, b_node, one);
    dae.flat.variables[a].binding = Some(binding);
    let diagnostics = ExecProgram::build(dae.clone(), &analysis.plan).unwrap_err();
    assert_eq!(diagnostics[0].code, "E0601");
    assert!(
        diagnostics[0].message.contains("`a`, `b`"),
        "{}",
        diagnostics[0].message
    );
}

/// Once warm, evaluating the right-hand side allocates nothing: not for explicit assignments,
/// Newton iterations, loops (linear and nonlinear), function calls or algorithm sections.
#[test]
fn the_right_hand_side_does_not_allocate() {
    let models = [
        ("two_springs_series.eqm", example("two_springs_series.eqm")),
        ("cooling.eqm", example("cooling.eqm")),
        ("cubic.eqm", CUBIC_SPRING.to_string()),
        ("spring_mass.eqm", example("spring_mass.eqm")),
    ];
    for (name, text) in models {
        let program = check(name, &text);
        let mut inst = instance(&program);
        let mut x = inst.start_values().unwrap();
        let mut dx = vec![0.0; x.len()];
        inst.rhs(0.0, &x, &mut dx).unwrap();
        // The counter works: it sees this allocation.
        let sanity = allocation_counter::measure(|| drop(std::hint::black_box(vec![1u8; 8])));
        assert_eq!(sanity.count_total, 1);
        let info = allocation_counter::measure(|| {
            for k in 0..100 {
                x[0] += 0.01;
                inst.rhs(k as f64, &x, &mut dx).unwrap();
                inst.outputs(k as f64, &x, &mut dx).unwrap();
            }
        });
        assert_eq!(info.count_total, 0, "{name} allocates while evaluating");
    }
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

#[test]
fn a_parameter_must_be_a_finite_number() {
    let program = check("decay.eqm", &example("decay.eqm"));
    let mut inst = instance(&program);
    let d = inst.set_param("k", f64::NAN).unwrap_err();
    assert_eq!(d.code, "E0707");
    assert_eq!(inst.param("k"), Some(0.5));
}

/// Every example the structural analysis accepts builds, starts and evaluates: a model that
/// index reduction makes analysable later is covered without a new test.
#[test]
fn every_analysable_example_evaluates_at_its_start_values() {
    let dir = format!("{}/examples", crate::REPO);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".eqm"))
        .collect();
    names.sort();
    let mut evaluated = 0;
    for name in names {
        let mut session = Sources::new();
        session.add_embedded_stdlib();
        session.add_file(name.clone(), example(&name));
        let Some(analysis) = session.analyze(None, &eqm_flatten::Options::default(), false) else {
            continue;
        };
        let program =
            ExecProgram::build(analysis.dae.clone(), &analysis.plan).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        // The initialization problem is an algebraic system without states: its right-hand
        // side computes every initial value.
        let init = ExecProgram::build(analysis.init.dae.clone(), &analysis.init.plan)
            .unwrap_or_else(|d| panic!("{name} (initialization): {d:?}"));
        assert_eq!(init.layout().states, 0, "{name}");
        let mut solver = Instance::new(&init).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        solver
            .rhs(0.0, &[], &mut [])
            .unwrap_or_else(|f| panic!("{name} (initialization): {f}"));
        for &v in program.states() {
            let value = solver.value(&program.symbols().get(v).name, &[]).unwrap();
            assert!(value.is_finite(), "{name}: initial {v:?}");
        }
        let mut inst = Instance::new(&program).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        let x0 = inst.start_values().unwrap();
        assert_eq!(x0, default_x0(&program), "{name}");
        let mut dx = vec![0.0; x0.len()];
        inst.rhs(0.0, &x0, &mut dx).unwrap_or_else(|f| panic!("{name}: {f}"));
        inst.outputs(0.0, &x0, &mut dx)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert!(dx.iter().all(|v| v.is_finite()), "{name}: {dx:?}");
        for (var, ..) in program.variables() {
            let value = inst.value(var, &x0).unwrap();
            assert!(value.is_finite(), "{name}: {var} = {value}");
        }
        evaluated += 1;
    }
    assert!(evaluated >= 10, "only {evaluated} examples evaluated");
}

/// After index reduction the rigidly coupled masses are an ordinary index-1 system: one
/// position and one velocity are states, and Euler follows cos(2t).
#[test]
fn rigid_masses_after_index_reduction_follow_the_cosine() {
    let program = check("rigid_masses.eqm", &example("rigid_masses.eqm"));
    let mut inst = instance(&program);
    let x0 = inst.start_values().unwrap();
    assert_eq!(x0.len(), 2);
    let x = euler(&mut inst, &x0, 1.0, 1e-4);
    let mut dx = vec![0.0; 2];
    inst.rhs(1.0, &x, &mut dx).unwrap();
    inst.outputs(1.0, &x, &mut dx).unwrap();
    for name in ["mass1.s", "mass2.s"] {
        let s = inst.value(name, &x).unwrap_or_else(|| panic!("no {name}"));
        assert!((s - 2.0f64.cos()).abs() < 2e-3, "{name} = {s}");
    }
}

/// The start values of the states with the default parameters.
fn default_x0(program: &ExecProgram) -> Vec<f64> {
    eqm_sim::instance::default_start_values(program).expect("the program has start values")
}
