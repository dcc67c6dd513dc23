//! If-expressions whose parameter condition decides what the model differentiates: the branch
//! is chosen when the model is compiled (the parameter becomes structural), so the `der(...)`
//! of the branch not taken makes no state and no equation to solve for a derivative. Checked
//! against closed forms on both back ends.

use crate::{check, run_both_back_ends};
use eqm::RunSettings;

fn tight(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interval: Some(0.01),
        ..RunSettings::default()
    }
}

#[test]
fn a_derivative_in_a_branch_a_parameter_excludes_makes_no_state() {
    // With useRate = false, z = x = exp(-t); the excluded der(z) would make z a state solved
    // from an equation in which its derivative does not occur.
    let result = run_both_back_ends(
        "model Excluded
  parameter Boolean useRate = false;
  Real x(start = 1, fixed = true);
  Real z;
equation
  der(x) = -x;
  z = if useRate then der(z) else x;
end Excluded;
",
        tight(1.0),
    );
    for t in [0.25, 1.0] {
        check(&result, "z", t, (-t).exp(), 1e-7);
    }
}

#[test]
fn a_derivative_in_the_branch_a_parameter_takes_is_differentiated() {
    // With useRate = true, y = der(p) = cos t and the else-branch's 0 is not used.
    let result = run_both_back_ends(
        "model Taken
  parameter Boolean useRate = true;
  Real p = sin(time);
  Real y;
equation
  y = if useRate then der(p) else 0;
end Taken;
",
        tight(1.0),
    );
    for t in [0.25, 1.0] {
        check(&result, "y", t, t.cos(), 1e-7);
    }
}
