//! The higher-order explicit pairs (tsit5, vern6 to vern9) in hybrid runs: an event is located
//! on each pair's dense output as precisely as the closed form allows.

use crate::compile;
use eqm::{Method, RunSettings};

/// A ball dropped from 2 m first hits the floor at `sqrt(2·2/9.81)` s; the when-clause records
/// that time. Each new pair finds it to 1e-9 at rtol = atol = 1e-10 (the event is located on
/// the pair's interpolant between its steps, so this also checks the dense output).
#[test]
fn the_new_pairs_locate_the_first_impact_of_a_bouncing_ball() {
    let model = "model Ball
  parameter Real g = 9.81;
  parameter Real h0 = 2;
  Real h(start = h0, fixed = true);
  Real v(start = 0, fixed = true);
  discrete Real impact(start = -1, fixed = true);
equation
  der(h) = v;
  der(v) = -g;
  when h < 0 then
    reinit(v, -0.8*pre(v));
    impact = if pre(impact) < 0 then time else pre(impact);
  end when;
end Ball;
";
    let exact = (2.0 * 2.0 / 9.81f64).sqrt();
    for method in [
        Method::Tsit5,
        Method::Vern6,
        Method::Vern7,
        Method::Vern8,
        Method::Vern9,
    ] {
        let settings = RunSettings {
            stop: Some(1.0),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            method: Some(method.clone()),
            ..RunSettings::default()
        };
        let result = compile(model)
            .simulate(&settings)
            .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        let impact = result.final_value("impact").expect("impact");
        assert!(
            (impact - exact).abs() < 1e-9,
            "{method:?}: impact at {impact}, exactly {exact}"
        );
    }
}
