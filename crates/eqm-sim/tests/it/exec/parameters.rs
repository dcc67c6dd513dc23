//! Parameters of a built program, checked against the derivatives and diagnostics they must
//! lead to.
//!
//! A parameter changes without rebuilding the program, dependent parameters and start values
//! follow the parameters they depend on, and unknown, computed, zero-divisor, non-finite and
//! cyclic parameters are diagnostics rather than wrong numbers.

use super::*;

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

#[test]
fn a_parameter_must_be_a_finite_number() {
    let program = check("decay.eqm", &example("decay.eqm"));
    let mut inst = instance(&program);
    let d = inst.set_param("k", f64::NAN).unwrap_err();
    assert_eq!(d.code, "E0707");
    assert_eq!(inst.param("k"), Some(0.5));
}
