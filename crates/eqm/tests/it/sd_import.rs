//! System-dynamics files run through the library as every front end runs them: imported by
//! their extension, compiled and simulated with the file's own specs, the results under the
//! file's names. Checked against the Euler iterates computed by hand (closed forms of the
//! recurrences), not against earlier output.

use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

fn run(name: &str, text: &str) -> SimulationResult {
    let mut session = Session::with_source_bytes(vec![(name.to_string(), text.as_bytes().to_vec())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    model.simulate(&RunSettings::default()).expect("the model runs")
}

fn xmile(specs: &str, variables: &str) -> String {
    format!(
        "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs {specs}</sim_specs>\n<model><variables>\n{variables}\n</variables></model>\n</xmile>\n"
    )
}

/// The teacup cools by Euler's method with DT = 0.125 exactly as the recurrence
/// `T(k+1) = T(k) - DT*(T(k) - 70)/10` says: `T(k) = 70 + 110*(1 - DT/10)^k`; the heat loss
/// of each row is computed from that row's temperature.
#[test]
fn the_teacup_cools_by_the_euler_recurrence_under_its_own_names() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>30</stop><dt>0.125</dt>",
        "<stock name=\"Teacup Temperature\"><eqn>180</eqn><outflow>Heat_Loss_to_Room</outflow></stock>\n\
         <flow name=\"Heat Loss to Room\"><eqn>(Teacup_Temperature - Room_Temperature)/Characteristic_Time</eqn></flow>\n\
         <aux name=\"Room Temperature\"><eqn>70</eqn></aux>\n\
         <aux name=\"Characteristic Time\"><eqn>10</eqn></aux>",
    );
    let result = run("teacup.xmile", &text);
    let names: Vec<&str> = result.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Teacup Temperature",
            "Heat Loss to Room",
            "Room Temperature",
            "Characteristic Time"
        ]
    );
    assert_eq!(result.len(), 241, "one row per DT from 0 to 30");
    let temperature = result.column("Teacup Temperature").expect("a column");
    let loss = result.column("Heat Loss to Room").expect("a column");
    for (k, (&t, &q)) in temperature.iter().zip(&loss).enumerate() {
        let expected = 70.0 + 110.0 * (1.0 - 0.125 / 10.0f64).powi(k as i32);
        assert!(
            (t - expected).abs() <= 1e-11 * expected,
            "row {k}: {t} instead of {expected}"
        );
        assert!((q - (expected - 70.0) / 10.0).abs() <= 1e-11, "row {k}: heat loss {q}");
    }
}

/// A non-negative stock drains at 1 per time unit from 25 with DT = 1.5: its outflow is cut
/// to what it holds in the step where it would go below 0 (25 - 16*1.5 = 1, so the 17th
/// step takes 1/1.5), and it stays at 0 after; a uniflow never runs backwards.
#[test]
fn a_non_negative_stock_limits_its_outflow_within_the_step() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>30</stop><dt>1.5</dt>",
        "<stock name=\"S\"><eqn>25</eqn><outflow>out</outflow><non_negative/></stock>\n\
         <flow name=\"out\"><eqn>1</eqn><non_negative/></flow>\n\
         <flow name=\"back\"><eqn>-1</eqn><non_negative/></flow>",
    );
    let result = run("drain.xmile", &text);
    let stock = result.column("S").expect("a column");
    let out = result.column("out").expect("a column");
    let back = result.column("back").expect("a column");
    for k in 0..stock.len() {
        let expected = (25.0 - 1.5 * k as f64).max(0.0);
        assert!((stock[k] - expected).abs() <= 1e-12, "row {k}: S = {}", stock[k]);
        let expected_out = if k < 16 {
            1.0
        } else if k == 16 {
            1.0 / 1.5
        } else {
            0.0
        };
        assert!((out[k] - expected_out).abs() <= 1e-12, "row {k}: out = {}", out[k]);
        assert_eq!(back[k], 0.0);
    }
}

/// `PULSE(6, 2)` puts a volume of 6 into the stock during the one step that starts at 2,
/// whatever DT; `SMTH1` of a step of height 1 at time 1 follows the Euler recurrence
/// `y(k+1) = y(k) + DT*(1 - y(k))/4`.
#[test]
fn a_pulse_moves_its_volume_in_one_step_and_a_smooth_follows_euler() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>5</stop><dt>0.25</dt>",
        "<stock name=\"S\"><eqn>0</eqn><inflow>in</inflow></stock>\n\
         <flow name=\"in\"><eqn>PULSE(6, 2)</eqn></flow>\n\
         <aux name=\"y\"><eqn>SMTH1(STEP(1, 1), 4)</eqn></aux>",
    );
    let result = run("pulse.xmile", &text);
    let (time, stock, smooth) = (
        result.time().to_vec(),
        result.column("S").expect("a column"),
        result.column("y").expect("a column"),
    );
    let mut y = 0.0;
    for k in 0..time.len() {
        let expected = if time[k] > 2.0 + 1e-9 { 6.0 } else { 0.0 };
        assert!(
            (stock[k] - expected).abs() <= 1e-12,
            "t = {}: S = {}",
            time[k],
            stock[k]
        );
        assert!(
            (smooth[k] - y).abs() <= 1e-12,
            "t = {}: y = {} instead of {y}",
            time[k],
            smooth[k]
        );
        let input = if time[k] >= 1.0 { 1.0 } else { 0.0 };
        y += 0.25 * (input - y) / 4.0;
    }
}
