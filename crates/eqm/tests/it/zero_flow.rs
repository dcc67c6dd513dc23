//! Algebraic loops that are singular at some instants because unknowns drop out of every
//! equation there (an enthalpy times a mass flow that is zero, as `semiLinear` gives at zero
//! flow): the unknowns that enter are solved, the idle ones keep their values, on both back
//! ends; a loop that has no solution at such an instant is still an error. Expected values are
//! derived by hand in each test.

use eqm::{RunError, RunSettings};

/// A source of enthalpy `hIn` feeds a pump without storage into a volume of heat capacity `C`
/// whose outflow leaves at its own enthalpy `cp*T`. The mass flow is zero until 0.5, one until
/// 1.5 and zero after: while it is zero every enthalpy flow is zero and the port enthalpies do
/// not enter any equation; while it flows they all equal `hIn` (the upstream value) and
/// `C*der(T) = m*(hIn - cp*T)`, so `T = 300 - 200*exp(-(t - 0.5)/2)` from 0.5 to 1.5 and
/// constant outside. At 1.5 the last solution (`H = 600`) no longer solves the loop, and the
/// Newton step must move the enthalpy flows alone.
const PUMPED_VOLUME: &str = "model M
  parameter Real cp = 2;
  parameter Real hIn = 600;
  parameter Real C = 4;
  Real m;
  Real H1, H2;
  Real hA(start = 10), hP(start = 20), hB(start = 30);
  Real T(start = 100, fixed = true);
equation
  m = if time < 0.5 then 0 else if time < 1.5 then 1 else 0;
  H1 = semiLinear(m, hIn, hA);
  H1 = semiLinear(m, hA, hP);
  H2 = semiLinear(m, hP, hB);
  H1 = H2;
  H2 = semiLinear(m, hB, cp*T);
  C*der(T) = H2 - m*cp*T;
end M;
";

#[test]
fn a_semilinear_loop_at_zero_flow_solves_the_flows_and_keeps_the_idle_enthalpies() {
    let settings = RunSettings {
        stop: Some(2.0),
        interval: Some(0.01),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    let result = crate::run_both_back_ends(PUMPED_VOLUME, settings);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    let (t, temperature, flow) = (result.time(), column("T"), column("H1"));
    let (h_a, h_p, h_b) = (column("hA"), column("hP"), column("hB"));
    let settled = 300.0 - 200.0 * (-0.5f64).exp();
    for i in 0..t.len() {
        let time = t[i];
        // Rows at the switching instants hold either side of the event; judge the others.
        if (time - 0.5).abs() < 1e-9 || (time - 1.5).abs() < 1e-9 {
            continue;
        }
        let flowing = time > 0.5 && time < 1.5;
        let expected_t = if time < 0.5 {
            100.0
        } else if flowing {
            300.0 - 200.0 * (-(time - 0.5) / 2.0).exp()
        } else {
            settled
        };
        assert!(
            (temperature[i] - expected_t).abs() < 1e-6,
            "T({time}) = {}, expected {expected_t}",
            temperature[i]
        );
        let expected_flow = if flowing { 600.0 } else { 0.0 };
        assert_eq!(flow[i], expected_flow, "H1({time})");
        // Before the flow starts the enthalpies keep their start values; once it has flowed
        // they hold the upstream enthalpy, which they keep when it stops.
        let expected_h = if time < 0.5 { [10.0, 20.0, 30.0] } else { [600.0; 3] };
        for (value, expected) in [h_a[i], h_p[i], h_b[i]].into_iter().zip(expected_h) {
            assert!(
                (value - expected).abs() < 1e-9,
                "h({time}) = {value}, expected {expected}"
            );
        }
    }
}

#[test]
fn a_loop_whose_remaining_equations_contradict_each_other_at_zero_flow_is_an_error() {
    // At m = 0: H = 0 and H = 1; the unknowns a and b drop out and cannot reconcile them.
    let text = "model M
  Real m, H, K, a, b;
equation
  m = if time < 0.5 then 0 else 1;
  H = m*a;
  H = 1 + m*b;
  K = 2 + m*a*b;
  K = H + m*(a - b);
end M;
";
    for interpreter in [false, true] {
        let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
        let mut model = session
            .compile(None, &eqm::ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let settings = RunSettings {
            stop: Some(1.0),
            interpreter,
            ..RunSettings::default()
        };
        let failure = model.simulate(&settings).expect_err("no solution at the start");
        let RunError::Failed { time, diagnostic, .. } = failure else {
            panic!("{failure}")
        };
        assert_eq!(time, 0.0);
        let code = diagnostic.expect("a diagnostic").code;
        assert!(code == "E0702" || code == "E0703", "{code}");
    }
}
