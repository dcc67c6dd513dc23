//! When-clauses that fire at one event are one system solved in causal order: a when-condition
//! reads the value a discrete variable gets at this event from another clause (only `pre(v)`
//! reads the value before it). Every expected value below follows from that rule by hand.

use crate::hybrid::run;

/// Two clauses: the first clears `z` when `x` passes 2, the second clears `v` when `y` passes 2
/// while `z` holds. `x_shift` and `y_shift` move the crossings earlier (`x = time + x_shift`).
fn two_clauses(declarations: &str, clear: &str, holds: &str, x_shift: f64, y_shift: f64) -> String {
    format!(
        "model M
  Real x = time + {x_shift};
  Real y = time + {y_shift};
{declarations}
  Boolean v(start = true, fixed = true);
equation
  when x > 2 then
    {clear};
  end when;
  when y > 2 and {holds} then
    v = false;
  end when;
end M;
"
    )
}

/// The discrete variable `z` as Boolean, Integer and Real: its declaration, the assignment that
/// clears it and the condition that holds before.
fn kinds() -> [(&'static str, &'static str, &'static str); 3] {
    [
        ("  Boolean z(start = true, fixed = true);", "z = false", "z"),
        ("  Integer z(start = 1, fixed = true);", "z = 0", "z > 0"),
        ("  discrete Real z(start = 1, fixed = true);", "z = -1", "z > 0"),
    ]
}

#[test]
fn a_condition_reads_what_another_clause_assigns_at_the_same_event() {
    for (declaration, clear, holds) in kinds() {
        // Both cross at t = 2: z is cleared at this event, so the second condition is false.
        let result = run(&two_clauses(declaration, clear, holds, 0.0, 0.0), 3.0, None);
        assert_eq!(result.final_value("v"), Some(1.0), "{declaration}: v changed");
        // x first (t = 1.5), y at t = 2: z is cleared already, v stays true.
        let result = run(&two_clauses(declaration, clear, holds, 0.5, 0.0), 3.0, None);
        assert_eq!(result.final_value("v"), Some(1.0), "{declaration}: x first");
        // y first (t = 1.5) while z holds: v is cleared then, z at t = 2.
        let result = run(&two_clauses(declaration, clear, holds, 0.0, 0.5), 3.0, None);
        assert_eq!(result.value_at("v", 1.75), Some(0.0), "{declaration}: y first");
        assert_eq!(result.value_at("v", 1.25), Some(1.0), "{declaration}: y first");
    }
}

#[test]
fn a_relation_on_a_variable_computed_from_an_assigned_one_sees_the_new_value() {
    // w = 2 z is continuous-time and computed from z: `w > 0` is a relation with a surface,
    // updated from z's new value before the second condition is evaluated.
    let model = two_clauses(
        "  discrete Real z(start = 1, fixed = true);\n  Real w = 2*z;",
        "z = -1",
        "w > 0",
        0.0,
        0.0,
    );
    let result = run(&model, 3.0, None);
    assert_eq!(result.final_value("v"), Some(1.0));
    assert_eq!(result.final_value("w"), Some(-2.0));
}

#[test]
fn pre_in_a_condition_reads_the_value_before_the_event() {
    // pre(z) is true at t = 2 although z becomes false there: v is cleared.
    let model = two_clauses(
        "  Boolean z(start = true, fixed = true);",
        "z = false",
        "pre(z)",
        0.0,
        0.0,
    );
    let result = run(&model, 3.0, None);
    assert_eq!(result.final_value("v"), Some(0.0));
    assert_eq!(result.final_value("z"), Some(0.0));
}

#[test]
fn a_chain_of_three_clauses_fires_in_causal_order_whatever_the_written_order() {
    // At t = 2: z1 is cleared first, so the clause reading z1 does not fire and z2 stays true,
    // so the clause reading z2 fires and clears v. Written last-first.
    let model = "model M
  Boolean z1(start = true, fixed = true);
  Boolean z2(start = true, fixed = true);
  Boolean v(start = true, fixed = true);
equation
  when time > 2 and z2 then
    v = false;
  end when;
  when time > 2 and z1 then
    z2 = false;
  end when;
  when time > 2 then
    z1 = false;
  end when;
end M;
";
    let result = run(model, 3.0, None);
    let found = ["z1", "z2", "v"].map(|name| result.final_value(name));
    assert_eq!(found, [Some(0.0), Some(1.0), Some(0.0)]);
}

#[test]
fn clauses_whose_conditions_read_each_other_in_a_cycle_without_a_solution_are_an_error() {
    // a = true needs b false at t = 2, and b = true follows from a: no value of a and b solves
    // the event, which is reported rather than ended at a = b = true.
    let model = "model M
  Boolean a(start = false, fixed = true);
  Boolean b(start = false, fixed = true);
equation
  when time > 2 and not b then
    a = true;
  end when;
  when a then
    b = true;
  end when;
end M;
";
    let mut compiled = crate::compile(model);
    let Err(eqm::RunError::Failed { time, diagnostic, .. }) = compiled.simulate(&eqm::RunSettings {
        stop: Some(3.0),
        ..eqm::RunSettings::default()
    }) else {
        panic!("a cycle without a solution runs")
    };
    assert_eq!(time, 2.0);
    assert_eq!(diagnostic.expect("a diagnostic").code, "E0712");
}
