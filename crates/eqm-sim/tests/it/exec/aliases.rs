//! Variables removed as aliases, checked against the values of the variables they alias.
//!
//! The outputs give every removed variable a finite value, and an algorithm section reads a
//! removed variable through its alias.

use super::*;

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
