//! Assertions where they are written: inside a branch of an if-equation decided during the run
//! an assertion is checked only while that branch is the one that holds (also under
//! `terminal()` and `initial()`), and an assertion false only between the ends of two steps is
//! found at the output times within the step, at the instant it stops holding.
//!
//! The instants are worked out by hand from `x = time`.

use crate::compile;
use crate::hybrid::failure_until;
use eqm::RunSettings;

/// The branches of `x > 0.5`, `x > 0.2` and the else branch, each with an assertion that is
/// false in the other branches' ranges only, and assertions under `initial()` and `terminal()`
/// that hold there and would fail anywhere else.
const GUARDED: &str = "model M
  Real x = time;
equation
  if x > 0.5 then
    assert(x > 0.5, \"first\");
  elseif x > 0.2 then
    assert(x > 0.2 and x <= 0.5, \"second\");
  else
    assert(x <= LIMIT, \"else\");
  end if;
  if initial() then
    assert(time < 1e-12, \"initial() after the start\");
  end if;
  if terminal() then
    assert(time >= 1, \"terminal() before the end\");
  end if;
end M;
";

#[test]
fn an_assertion_in_a_branch_is_checked_only_while_its_branch_holds() {
    let mut model = compile(&GUARDED.replace("LIMIT", "0.2"));
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.time().last(), Some(&1.0));
}

#[test]
fn an_assertion_in_the_branch_that_holds_stops_the_run_where_it_fails() {
    // The else branch holds up to x = 0.2; its assertion fails from x = 0.1 on.
    let mut model = compile(&GUARDED.replace("LIMIT", "0.1"));
    let (time, diagnostic) = failure_until(&mut model, 1.0);
    assert!((time - 0.1).abs() < 1e-9, "failed at {time}");
    assert!(diagnostic.message.contains("else"), "{}", diagnostic.message);
}

#[test]
fn an_assertion_false_only_between_two_step_ends_is_found() {
    // With x = time the integrator takes long steps; the assertion is false only for
    // 0.2 < x <= 0.25, which no step end falls in, and is found through the output times.
    let mut model = compile(
        "model M
  Real x = time;
equation
  assert(not (x > 0.2) or x > 0.25, \"in the gap\");
end M;
",
    );
    let (time, diagnostic) = failure_until(&mut model, 1.0);
    assert!((time - 0.2).abs() < 1e-9, "failed at {time}");
    assert!(diagnostic.message.contains("in the gap"), "{}", diagnostic.message);
}
