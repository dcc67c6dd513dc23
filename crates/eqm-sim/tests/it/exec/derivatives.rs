//! Right-hand sides of explicit models evaluated by the interpreter, checked against derivatives
//! computed by hand and against the cosine an explicit Euler integration must follow.
//!
//! The examples' derivatives and outputs are compared with their formulas, Euler over the
//! spring-mass system and the index-reduced rigid masses converges to cos(2t), every analysable
//! example evaluates to finite values at its start, and a warm right-hand side allocates
//! nothing.

use super::*;

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
        let Some(analysis) = session.analyze_as_run(None, &eqm_flatten::Options::default()) else {
            continue;
        };
        let program =
            ExecProgram::build(analysis.dae.clone(), &analysis.plan).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        // An initialization problem of its own is an algebraic system without states: its
        // right-hand side computes every initial value. (Otherwise the model's program at the
        // start values is the initialization, evaluated below.)
        if let (Some(init_dae), Some(init_plan)) = (analysis.init.dae(), analysis.init.plan()) {
            let init = ExecProgram::build(init_dae.clone(), init_plan)
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
