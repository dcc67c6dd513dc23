//! The standard library's `SystemDynamics` package through the API: every example against
//! values computed independently (closed forms, hand timelines of the discrete blocks, values
//! of a separate high-accuracy integration), the rate decisions at the bounds with their event
//! times, the delay, smoothing and trend blocks against their defining equations, and the runs
//! that must stop because a reservoir would lose or invent material.

use eqm::{Method, ModelOptions, RunError, RunSettings, Session, SimulationResult};

use crate::{REPO, check, example};

/// The compiled model `name` of the library (`SystemDynamics.Examples.Abfluss`), or the only
/// model of `text` when `text` is given.
fn compile(name: &str, text: Option<&str>) -> eqm::Model {
    let files: Vec<(String, String)> = text
        .map(|t| vec![("m.eqm".to_string(), t.to_string())])
        .unwrap_or_default();
    let model = if text.is_some() { None } else { Some(name) };
    let mut session = Session::with_sources(&files, &[], Some(name));
    session
        .compile(model, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)))
}

/// A run of `model` to `stop` at tight tolerances, or with `method` at the fixed `step`.
fn run(model: &mut eqm::Model, stop: f64, fixed: Option<(Method, f64)>) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        method: fixed.as_ref().map(|(m, _)| m.clone()),
        step: fixed.as_ref().map(|(_, h)| *h),
        interval: fixed.as_ref().map(|(_, h)| *h),
        ..RunSettings::default()
    };
    model
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()))
}

/// The times of the warnings of a run whose notes name `component` (an assertion of level
/// warning in it that stopped holding), in order.
fn warnings_of(result: &SimulationResult, component: &str) -> Vec<f64> {
    result
        .summary
        .warnings
        .iter()
        .filter(|w| w.notes.iter().any(|n| n.contains(&format!("{component}."))))
        .map(|w| {
            let at = w.message.split("at t = ").nth(1).expect("a time");
            at.split(' ').next().unwrap().parse::<f64>().expect("a number")
        })
        .collect()
}

/// The failure of a run that must stop: its time and the message of its diagnostic, with the
/// rendered note (which names the component) appended.
fn failure(model: &mut eqm::Model, stop: f64) -> (f64, String) {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    match model.simulate(&settings) {
        Err(RunError::Failed {
            time,
            diagnostic,
            message,
            ..
        }) => {
            let d = diagnostic
                .map(|d| format!("{} {:?}", d.message, d.notes))
                .unwrap_or(message);
            (time, d)
        }
        Err(e) => panic!("{}: not a run failure: {e}", model.name()),
        Ok(_) => panic!("{}: the run must fail", model.name()),
    }
}

// ---------------------------------------------------------------------------------------------
// The examples.

#[test]
fn zufluss_fills_the_stock_linearly() {
    let mut model = compile("SystemDynamics.Examples.Zufluss", None);
    let result = run(&mut model, 10.0, None);
    for t in [0.0, 2.5, 5.0, 10.0] {
        check(&result, "S.m", t, 2.0 + 0.5 * t, 1e-12);
        check(&result, "fill.rate", t, 0.5, 0.0);
    }
}

#[test]
fn abfluss_stops_the_flow_exactly_when_the_stock_is_empty() {
    let mut model = compile("SystemDynamics.Examples.Abfluss", None);
    let result = run(&mut model, 12.0, None);
    let time = result.time();
    let rate = result.column("drain.rate").unwrap();
    // The flow is 0.5 up to the event and exactly 0 from it on; the event is at t = 8.
    let first_zero = (0..time.len()).find(|&i| rate[i] == 0.0).expect("the flow stops");
    let event = time[first_zero];
    assert!((event - 8.0).abs() < 1e-9, "the flow stops at {event}");
    assert!(rate[..first_zero].iter().all(|&r| r == 0.5), "0.5 before the event");
    assert!(
        rate[first_zero..].iter().all(|&r| r == 0.0),
        "exactly 0 after the event"
    );
    for t in [0.0, 3.0, 7.5] {
        check(&result, "S1.m", t, 4.0 - 0.5 * t, 1e-12);
        check(&result, "S2.m", t, 0.5 * t, 1e-12);
    }
    for (k, &t) in time.iter().enumerate().filter(|&(_, &t)| t >= event) {
        let s1 = result.row(k).unwrap().1[result.column_index("S1.m").unwrap()];
        let s2 = result.row(k).unwrap().1[result.column_index("S2.m").unwrap()];
        assert!(s1.abs() < 1e-9, "S1({t}) = {s1}");
        assert!((s2 - 4.0).abs() < 1e-9, "S2({t}) = {s2}");
    }
    assert_eq!(result.final_value("S1.empty"), Some(1.0));
}

#[test]
fn a_full_stock_downstream_stops_the_flow_too() {
    // Abfluss with room for 3 in S2: the flow stops at t = 6 with S1 = 1 and S2 = 3.
    let text = example("abfluss.eqm").replace(
        "Reservoirs.Stock S2(m0 = 0)",
        "Reservoirs.SaturatedStock S2(m0 = 0, maxLevel = 3)",
    );
    assert!(text.contains("maxLevel = 3"));
    let mut model = compile("Abfluss", Some(&text));
    let result = run(&mut model, 12.0, None);
    check(&result, "S1.m", 6.0, 1.0, 1e-9);
    check(&result, "S2.m", 6.0, 3.0, 1e-9);
    check(&result, "S1.m", 12.0, 1.0, 1e-9);
    check(&result, "S2.m", 12.0, 3.0, 1e-9);
    check(&result, "drain.rate", 5.9, 0.5, 0.0);
    check(&result, "drain.rate", 6.1, 0.0, 0.0);
}

#[test]
fn bevoelkerung_matches_the_population_model() {
    check_population("SystemDynamics.Examples.Bevoelkerung");
}

#[test]
fn bevoelkerung_with_functional_parameters_matches_the_population_model() {
    // The laws written out in the modifiers are the converters of `Bevoelkerung`.
    check_population("SystemDynamics.Examples.BevoelkerungFunktional");
}

/// The population model `name` against N' = 0.03 N - 0.01 N/(1 - N/225), N(0) = 10, whose
/// values come from an independent integration at relative tolerance 1e-11, given to six
/// digits; its flows against their laws.
fn check_population(name: &str) {
    let mut model = compile(name, None);
    let result = run(&mut model, 300.0, None);
    for (t, n) in [
        (50.0, 26.0982),
        (100.0, 63.0443),
        (150.0, 120.083),
        (200.0, 147.253),
        (300.0, 149.993),
    ] {
        check(&result, "N.m", t, n, 5e-6);
    }
    let n = result.value_at("N.m", 100.0).unwrap();
    check(&result, "G.rate", 100.0, 0.03 * n, 1e-12);
    check(&result, "T.rate", 100.0, 0.01 * n / (1.0 - n / 225.0), 1e-12);
}

#[test]
fn function_flows_and_converters_take_laws_written_out_named_or_partially_applied() {
    // Logistic growth r N (1 - N/K) with r = 0.1, K = 100, N(0) = 10 through a FunctionFlow:
    // N(t) = K/(1 + 9 e^(-r t)). A FunctionConverter2 gives the same law from N and K as a
    // named function with an input bound, and a FunctionConverter reads it through a law given
    // by name.
    let text = r#"
        model Logistic
          import SystemDynamics.{Reservoirs, Flows, Converters};
          function logistic
            input Real u1;
            input Real u2;
            input Real r = 0.1;
            output Real y;
          algorithm
            y := r*u1*(1 - u1/u2);
          end logistic;
          function half
            input Real u;
            output Real y;
          algorithm
            y := u/2;
          end half;
          parameter Real K = 100;
          Reservoirs.CloudSource source;
          Reservoirs.Stock N(m0 = 10);
          Flows.FunctionFlow growth(law = function(s) = 0.1*s*(1 - s/K));
          Converters.ConstantConverter capacity(constValue = K);
          Converters.FunctionConverter2 sameLaw(law = function logistic(r = 0.1));
          Converters.FunctionConverter halfOfIt(law = half);
        equation
          connect(source.outflow, growth.inflow);
          connect(growth.outflow, N.inflow);
          connect(N.level, growth.u);
          connect(N.level, sameLaw.u1);
          connect(capacity.y, sameLaw.u2);
          connect(sameLaw.y, halfOfIt.u);
        end Logistic;
    "#;
    let mut model = compile("Logistic", Some(text));
    let result = run(&mut model, 20.0, None);
    for t in [5.0_f64, 10.0, 20.0] {
        let exact = 100.0 / (1.0 + 9.0 * (-0.1 * t).exp());
        check(&result, "N.m", t, exact, 1e-7);
        check(&result, "growth.rate", t, 0.1 * exact * (1.0 - exact / 100.0), 1e-7);
        check(&result, "sameLaw.y", t, 0.1 * exact * (1.0 - exact / 100.0), 1e-7);
        check(&result, "halfOfIt.y", t, 0.05 * exact * (1.0 - exact / 100.0), 1e-7);
    }
}

#[test]
fn raeuberbeute_matches_the_predator_prey_equations_and_keeps_its_invariant() {
    let mut model = compile("SystemDynamics.Examples.Raeuberbeute", None);
    let result = run(&mut model, 250.0, None);
    // Values of Nb' = 0.1 Nb - 0.01 Nb Nr, Nr' = -0.1 Nr + 0.005 Nb Nr, (50, 20), from an
    // independent integration at relative tolerance 1e-11, given to five digits.
    for (t, nb, nr) in [
        (10.0, 8.8763, 25.8358),
        (25.0, 3.6978, 8.2353),
        (50.0, 17.5217, 1.8279),
        (100.0, 3.9451, 6.7086),
        (250.0, 4.9477, 4.5176),
    ] {
        // Half a unit of the last digit.
        check(&result, "Nb.m", t, nb, 5e-5 / nb.max(1.0));
        check(&result, "Nr.m", t, nr, 5e-5 / nr.max(1.0));
    }
    // The predator deaths 0.2 Nr - F/2 are negative while Nb > 40: the flow runs backwards.
    assert!(result.value_at("deathsR.rate", 0.0).unwrap() < 0.0);
    // The first integral V = 0.005 Nb - 0.1 ln Nb + 0.01 Nr - 0.1 ln Nr drifts only by the
    // integration error.
    let v = |nb: f64, nr: f64| 0.005 * nb - 0.1 * nb.ln() + 0.01 * nr - 0.1 * nr.ln();
    let v0 = v(50.0, 20.0);
    assert!((v0 + 0.240776).abs() < 1e-6, "V(0) = {v0}");
    let (nb, nr) = (result.column("Nb.m").unwrap(), result.column("Nr.m").unwrap());
    let drift = nb
        .iter()
        .zip(&nr)
        .map(|(&b, &r)| (v(b, r) - v0).abs())
        .fold(0.0, f64::max);
    assert!(drift < 1e-8, "V drifts by {drift}");
}

/// The oven of `Oven1` at the ticks t = 0..8: (load, spaceleft, stepsleft, amountCooked),
/// the rate of the inflow and the outflow on (t, t + 1), and S2 at t. The hand timeline of the
/// rules: loading adds what arrived during the last tick; a full oven cooks for two ticks,
/// taking new material during the last one; then it releases its 3 within one tick.
const OVEN1: [(f64, [f64; 4], f64, f64, f64); 9] = [
    (0.0, [0.0, 3.0, 0.0, 0.0], 0.0, 0.0, 0.0),
    (1.0, [0.0, 3.0, 0.0, 0.0], 2.0, 0.0, 0.0),
    (2.0, [2.0, 1.0, 0.0, 0.0], 1.0, 0.0, 0.0),
    (3.0, [3.0, 0.0, 2.0, 0.0], 0.0, 0.0, 0.0),
    (4.0, [3.0, 3.0, 1.0, 0.0], 2.0, 0.0, 0.0),
    (5.0, [2.0, 1.0, 0.0, 3.0], 1.0, 3.0, 0.0),
    (6.0, [3.0, 0.0, 2.0, 0.0], 0.0, 0.0, 3.0),
    (7.0, [3.0, 3.0, 1.0, 0.0], 2.0, 0.0, 3.0),
    (8.0, [2.0, 1.0, 0.0, 3.0], 1.0, 3.0, 3.0),
];

#[test]
fn oven1_follows_the_hand_timeline() {
    let mut model = compile("SystemDynamics.Examples.Oven1", None);
    let result = run(&mut model, 10.0, None);
    for (t, oven, inflow, outflow, s2) in OVEN1 {
        for (name, value) in ["oven.load", "oven.spaceleft", "oven.stepsleft", "oven.amountCooked"]
            .iter()
            .zip(oven)
        {
            check(&result, name, t, value, 1e-12);
        }
        check(&result, "supply.rate", t + 0.5, inflow, 1e-12);
        check(&result, "release.rate", t + 0.5, outflow, 1e-12);
        check(&result, "S2.m", t, s2, 1e-9);
    }
    // The release of 3 leaves during (5, 6): S2 rises linearly within it.
    check(&result, "S2.m", 5.5, 1.5, 1e-9);
    check(&result, "S2.m", 9.0, 6.0, 1e-9);
    // The rates change only at the ticks: the oven booked what its flows moved.
    assert!(result.summary.warnings.is_empty(), "{:?}", result.summary.warnings);
    check(&result, "oven.unbooked", 9.0, 0.0, 1e-12);
}

#[test]
fn oven2_follows_the_hand_timeline_with_the_supply_running_empty() {
    let mut model = compile("SystemDynamics.Examples.Oven2", None);
    let result = run(&mut model, 10.0, None);
    // Ticks at 0.1 + k: (load, spaceleft, stepsleft), the outflow and inflow rates on the
    // next interval, S1 and S2 at the tick.
    let table: [(f64, [f64; 3], f64, f64, f64, f64); 7] = [
        (0.1, [0.0, 3.0, 0.0], 0.0, 0.0, 5.0, 0.0),
        (1.1, [2.0, 1.0, 0.0], 0.0, 1.0, 3.8, 0.0),
        (2.1, [3.0, 0.0, 2.0], 0.0, 0.0, 2.8, 0.0),
        (3.1, [3.0, 3.0, 1.0], 0.0, 2.0, 2.8, 0.0),
        (4.1, [2.0, 1.0, 0.0], 3.0, 1.0, 0.8, 0.0),
        (5.1, [2.0, 1.0, 0.0], 0.0, 0.0, 0.0, 3.0),
        (8.1, [2.0, 1.0, 0.0], 0.0, 0.0, 0.0, 3.0),
    ];
    for (t, oven, outflow, inflow, s1, s2) in table {
        for (name, value) in ["oven.load", "oven.spaceleft", "oven.stepsleft"].iter().zip(oven) {
            check(&result, name, t, value, 1e-12);
        }
        check(&result, "release.rate", t + 0.5, outflow, 1e-12);
        check(&result, "S1.m", t, s1, 1e-9);
        check(&result, "S2.m", t, s2, 1e-9);
        if t < 4.0 {
            check(&result, "supply.rate", t + 0.3, inflow, 1e-12);
        }
    }
    // S1 runs empty at 0.8/1 after 4.1: from t = 4.9 on it dictates the rate 0.
    check(&result, "supply.rate", 4.85, 1.0, 1e-12);
    check(&result, "supply.rate", 4.95, 0.0, 0.0);
    check(&result, "S1.m", 4.9, 0.0, 1e-9);
    // The booked amounts are the rates just before the ticks: the oven counted 2 at 1.1
    // although S1 lost 1.2 since 0.5, and nothing of the 0.8 that left S1 before 4.9.
    check(&result, "oven.arrived", 1.1, 2.0, 1e-12);
    check(&result, "oven.arrived", 5.1, 0.0, 1e-12);
    // Both are reported as warnings at those ticks, with the differences.
    assert_eq!(warnings_of(&result, "oven"), [1.1, 5.1]);
    check(&result, "oven.unbooked", 1.1, 2.0 - 1.2, 1e-9);
    check(&result, "oven.unbooked", 5.1, 0.8, 1e-9);
    check(&result, "oven.unbooked", 3.1, 0.0, 1e-9);
}

#[test]
fn oven2_bounded_stops_when_the_full_stock_cannot_take_the_release() {
    let mut model = compile("SystemDynamics.Examples.Oven2Bounded", None);
    let (time, message) = failure(&mut model, 10.0);
    // The release of 3 per tick starts at 4.1; S2 is full (2) two thirds of a tick later.
    assert!((time - (4.1 + 2.0 / 3.0)).abs() < 1e-9, "stopped at {time}");
    assert!(message.contains("upper bound maxLevel = 2"), "{message}");
    assert!(message.contains("S2.full"), "{message}");
}

#[test]
fn test_conveyor_delivers_after_three_ticks() {
    let mut model = compile("SystemDynamics.Examples.TestConveyor", None);
    let result = run(&mut model, 20.0, None);
    // Ticks at 0.1 + k: belt load, unloading rate on the next interval, store.
    let table: [(f64, f64, f64, f64); 10] = [
        (2.1, 0.0, 0.0, 0.0),
        (3.1, 5.0, 0.0, 0.0),
        (4.1, 10.0, 0.0, 0.0),
        (5.1, 15.0, 5.0, 0.0),
        (6.1, 15.0, 5.0, 5.0),
        (12.1, 15.0, 5.0, 35.0),
        (13.1, 10.0, 5.0, 40.0),
        (14.1, 5.0, 5.0, 45.0),
        (15.1, 0.0, 0.0, 50.0),
        (19.1, 0.0, 0.0, 50.0),
    ];
    for (t, load, rate, store) in table {
        check(&result, "conveyor.level", t, load, 1e-12);
        check(&result, "unload.rate", t + 0.5, rate, 1e-12);
        check(&result, "store.m", t, store, 1e-12);
    }
    // The belt booked 0 for (2.1, 3.1) and 5 for (12.1, 13.1), while 3 and 4.5 came in.
    assert_eq!(warnings_of(&result, "conveyor"), [3.1, 13.1]);
    check(&result, "conveyor.unbooked", 3.1, 3.0, 1e-9);
    check(&result, "conveyor.unbooked", 13.1, 0.5, 1e-9);
    assert!(warnings_of(&result, "store").is_empty());
}

#[test]
fn fertigung_follows_the_tick_by_tick_table() {
    let mut model = compile("SystemDynamics.Examples.Fertigung", None);
    let result = run(&mut model, 25.0, None);
    let names = [
        "Eingangslager.m",
        "Maschine1.load",
        "Maschine1.stepsleft",
        "Band12.level",
        "Zwischenlager.m",
        "Maschine2.load",
        "Maschine2.stepsleft",
        "Ausgangslager.m",
    ];
    let table: [(f64, [f64; 8]); 11] = [
        (0.1, [7.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (1.1, [7.0, 4.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (2.1, [9.0, 4.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        (3.1, [9.0, 2.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0]),
        (4.1, [9.0, 4.0, 2.0, 4.0, 0.0, 0.0, 0.0, 0.0]),
        (5.1, [11.0, 4.0, 1.0, 0.0, 4.0, 0.0, 0.0, 0.0]),
        (6.1, [11.0, 2.0, 0.0, 4.0, 2.0, 2.0, 1.0, 0.0]),
        (7.1, [11.0, 4.0, 2.0, 4.0, 0.0, 2.0, 1.0, 0.0]),
        (8.1, [13.0, 4.0, 1.0, 0.0, 4.0, 0.0, 0.0, 2.0]),
        (9.1, [13.0, 2.0, 0.0, 4.0, 2.0, 2.0, 1.0, 4.0]),
        (24.1, [23.0, 2.0, 0.0, 4.0, 2.0, 2.0, 1.0, 24.0]),
    ];
    for (t, values) in table {
        for (name, value) in names.iter().zip(values) {
            check(&result, name, t, value, 1e-12);
        }
    }
    // From 6.1 on the line repeats every three ticks, the input store 2 and the output store 4
    // higher each time.
    for k in 6..19 {
        let t = 0.1 + k as f64;
        for (i, name) in names.iter().enumerate() {
            let now = result.value_at(name, t).unwrap();
            let later = result.value_at(name, t + 3.0).unwrap();
            let growth = match i {
                0 => 2.0,
                7 => 4.0,
                _ => 0.0,
            };
            assert!(
                (later - now - growth).abs() < 1e-12,
                "{name}: {now} at {t}, {later} three ticks later"
            );
        }
    }
    // The first tick books the rate 2 of (0, 0.1) as a whole tick's amount: reported once.
    assert_eq!(warnings_of(&result, "Eingangslager"), [0.1]);
    assert_eq!(warnings_of(&result, "Maschine1"), [0.1]);
    assert_eq!(result.summary.warnings.len(), 2, "{:?}", result.summary.warnings);
}

#[test]
fn every_example_file_holds_the_library_class() {
    let library = std::fs::read_to_string(format!("{REPO}/stdlib/SystemDynamics.eqm")).unwrap();
    let files = [
        ("zufluss", "Zufluss"),
        ("abfluss", "Abfluss"),
        ("bevoelkerung", "Bevoelkerung"),
        ("bevoelkerung_funktional", "BevoelkerungFunktional"),
        ("raeuberbeute", "Raeuberbeute"),
        ("oven1", "Oven1"),
        ("oven2", "Oven2"),
        ("oven2_bounded", "Oven2Bounded"),
        ("test_conveyor", "TestConveyor"),
        ("fertigung", "Fertigung"),
    ];
    // The class text from `model Name` to `end Name;`, each line without the indentation
    // `indent`.
    let class = |text: &str, name: &str, indent: &str| -> String {
        let start = text
            .find(&format!("{indent}model {name} "))
            .unwrap_or_else(|| panic!("no model {name}"));
        let end_marker = format!("end {name};");
        let end = start + text[start..].find(&end_marker).unwrap() + end_marker.len();
        text[start..end]
            .lines()
            .map(|l| l.strip_prefix(indent).unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (file, name) in files {
        let example = example(&format!("{file}.eqm"));
        assert_eq!(
            class(&example, name, ""),
            class(&library, name, "    "),
            "examples/{file}.eqm and SystemDynamics.Examples.{name} differ"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rates at the bounds, discrete reservoirs and the runs that must stop.

/// The decision table of `constrainedRate`, in the order its rows are checked: the rate for a
/// wanted rate `w`, the causalities and data of the upstream and the downstream reservoir.
fn decision(w: f64, in_info: usize, in_data: f64, out_info: usize, out_data: f64) -> f64 {
    const FIXED: usize = 2;
    const CAPPED: usize = 3;
    match (in_info, out_info) {
        (FIXED, _) => in_data,
        (CAPPED, CAPPED) => w.min(in_data).min(out_data),
        (CAPPED, _) => w.min(in_data),
        (_, FIXED) => out_data,
        (_, CAPPED) => w.min(out_data),
        _ => w,
    }
}

#[test]
fn flows_decide_their_rates_by_the_table_of_constrained_rate() {
    // Reservoirs that publish given causalities and data, a flow between every pair, for a
    // wanted rate below, between and above the data (and negative), and the function itself.
    let mut model = compile(
        "Table",
        Some(
            "model Table
  import SystemDynamics.Interfaces.{Causality, MassPortR, constrainedRate};
  model Publisher
    parameter Causality info;
    parameter Real data;
    MassPortR port;
  equation
    port.info = info;
    port.data = data;
  end Publisher;
  parameter Real w = 1;
  Publisher up[3](info = {Causality.free, Causality.fixed, Causality.capped}, each data = 2);
  Publisher down[3](info = {Causality.free, Causality.fixed, Causality.capped}, each data = 3);
  SystemDynamics.Flows.Flow f[3, 3](each u = w*time);
  Real r[3, 3] = {{constrainedRate(w*time, up[i].info, 2, down[j].info, 3) for j in 1:3} for i in 1:3};
equation
  for i in 1:3, j in 1:3 loop
    connect(up[i].port, f[i, j].inflow);
    connect(f[i, j].outflow, down[j].port);
  end for;
end Table;
",
        ),
    );
    let result = run(&mut model, 4.0, None);
    for t in [0.0, 1.0, 2.5, 3.5, 4.0] {
        for i in 1..=3 {
            for j in 1..=3 {
                let expected = decision(t, i, 2.0, j, 3.0);
                check(&result, &format!("f[{i},{j}].rate"), t, expected, 1e-12);
                check(&result, &format!("r[{i},{j}]"), t, expected, 1e-12);
            }
        }
    }
    // A negative wanted rate (a flow running backwards) is not limited by a cap.
    model.set_parameter("w", -1.0).unwrap();
    let result = run(&mut model, 2.0, None);
    check(&result, "f[3,3].rate", 2.0, -2.0, 1e-12);
    check(&result, "f[2,3].rate", 2.0, 2.0, 1e-12);
    check(&result, "f[1,2].rate", 2.0, 3.0, 1e-12);
}

#[test]
fn a_tick_books_the_rate_before_a_switch_at_the_same_instant() {
    // The discrete reservoirs book pre(rate), the left limit of a continuous rate: at a tick
    // where a time event switches the rate (t = 1 here), the value before the switch.
    let mut model = compile(
        "Coincide",
        Some(
            "model Coincide
  Real r = if time >= 1 then 2 else 0;
  Real x(start = 0, fixed = true);
  Real y = -x;
  discrete Real b(start = 0, fixed = true);
  discrete Real c(start = 0, fixed = true);
  discrete Real d(start = 0, fixed = true);
  discrete Real a(start = 0, fixed = true);
equation
  der(x) = 1;
  when sample(0, 1) then
    b = pre(r);
    c = pre(2*r + 1);
    d = pre(y);
  end when;
algorithm
  when sample(0.5, 1) then
    a := pre(y);
  end when;
end Coincide;
",
        ),
    );
    let result = run(&mut model, 2.5, None);
    check(&result, "b", 1.0, 0.0, 0.0);
    check(&result, "c", 1.0, 1.0, 0.0);
    check(&result, "b", 2.0, 2.0, 0.0);
    check(&result, "c", 2.0, 5.0, 0.0);
    // The left limit of a variable that alias elimination removed (y = -x), in a when-equation
    // and in an algorithm.
    check(&result, "d", 2.0, -2.0, 1e-12);
    check(&result, "a", 1.5, -1.5, 1e-12);
}

#[test]
fn when_clauses_that_fire_together_read_each_others_new_values() {
    // A discrete reservoir's check (in its base class) reads what the concrete class books at
    // the same tick in another when-clause, written before or after it.
    for order in [["b = a;", "a = pre(a) + 1;"], ["a = pre(a) + 1;", "b = a;"]] {
        let text = format!(
            "model Together
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
equation
  when sample(0.5, 1) then
    {}
  end when;
  when sample(0.5, 1) then
    {}
  end when;
end Together;
",
            order[0], order[1]
        );
        let mut model = compile("Together", Some(&text));
        let result = run(&mut model, 2.0, None);
        check(&result, "b", 0.5, 1.0, 0.0);
        check(&result, "b", 1.5, 2.0, 0.0);
    }
}

#[test]
fn a_bounded_stock_with_less_inflow_than_outflow_passes_the_inflow_on() {
    // At the lower bound the outflow would empty S1 and the inflow refill it: S1 stays at 0 and
    // the outflow takes exactly what comes in (Filippov sliding on the bound).
    let mut model = compile(
        "Slide",
        Some(
            "model Slide
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow fill(constRate = 0.2);
  Reservoirs.SaturatedStock S1(m0 = 1, minLevel = 0);
  Flows.ConstantFlow drain(constRate = 0.5);
  Reservoirs.Stock S2;
equation
  connect(source.outflow, fill.inflow);
  connect(fill.outflow, S1.inflow);
  connect(S1.outflow, drain.inflow);
  connect(drain.outflow, S2.inflow);
end Slide;
",
        ),
    );
    let result = run(&mut model, 6.0, None);
    let empty = 1.0 / 0.3;
    check(&result, "S1.m", 3.0, 1.0 - 0.3 * 3.0, 1e-9);
    check(&result, "S2.m", empty, 0.5 * empty, 1e-9);
    for t in [4.0, 5.0, 6.0] {
        check(&result, "S1.m", t, 0.0, 1e-9);
        check(&result, "drain.rate", t, 0.2, 1e-9);
        check(&result, "S2.m", t, 0.5 * empty + 0.2 * (t - empty), 1e-9);
    }
}

#[test]
fn a_uniflow_never_runs_backwards() {
    let text = "model Backwards
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.Stock a(m0 = 1);
  Flows.ConstantFlow f(constRate = -1, uniflow = UNI);
  Reservoirs.Stock b(m0 = 1);
equation
  connect(a.outflow, f.inflow);
  connect(f.outflow, b.inflow);
end Backwards;
";
    let mut biflow = compile("Backwards", Some(&text.replace("UNI", "false")));
    let result = run(&mut biflow, 1.0, None);
    check(&result, "a.m", 1.0, 2.0, 1e-12);
    check(&result, "b.m", 1.0, 0.0, 1e-12);
    let mut uniflow = compile("Backwards", Some(&text.replace("UNI", "true")));
    let result = run(&mut uniflow, 1.0, None);
    check(&result, "f.rate", 0.5, 0.0, 0.0);
    check(&result, "a.m", 1.0, 1.0, 0.0);
}

#[test]
fn two_reservoirs_joined_directly_or_flows_without_a_reservoir_are_rejected() {
    for text in [
        "model Two
  SystemDynamics.Reservoirs.Stock a(m0 = 1);
  SystemDynamics.Reservoirs.Stock b;
equation
  connect(a.outflow, b.inflow);
end Two;
",
        "model NoReservoir
  SystemDynamics.Reservoirs.CloudSource s;
  SystemDynamics.Flows.ConstantFlow f;
  SystemDynamics.Flows.ConstantFlow g;
equation
  connect(s.outflow, f.inflow);
  connect(f.outflow, g.inflow);
end NoReservoir;
",
    ] {
        let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
        assert!(session.compile(None, &ModelOptions::default()).is_none(), "{text}");
        assert!(
            session.diagnostics().iter().any(|d| d.code == "E0401"),
            "{}",
            session.render_diagnostics(false)
        );
    }
}

#[test]
fn a_queue_keeps_its_batches_in_order_and_loses_nothing() {
    // 3 per tick arrive at the ticks 0.1 .. 3.1; 1 per tick leaves from the front batch. With
    // room for two batches apart, the third arrival joins the second.
    let mut model = compile(
        "Q",
        Some(
            "model Q
  import SystemDynamics.{Reservoirs, Flows, Converters};
  Reservoirs.CloudSource source;
  Converters.TimeSwitchedConverter r(switchTime = 3.5, oldValue = 3, newValue = 0);
  Flows.Flow arrive;
  Reservoirs.Queue queue(nMax = 2);
  Flows.ConstantFlow leave(constRate = 1);
  Reservoirs.StockD store;
equation
  connect(source.outflow, arrive.inflow);
  connect(r.y, arrive.u);
  connect(arrive.outflow, queue.inflow);
  connect(queue.outflow, leave.inflow);
  connect(leave.outflow, store.inflow);
end Q;
",
        ),
    );
    let result = run(&mut model, 16.0, None);
    // Tick: batches, number of batches, store.
    let table: [(f64, [f64; 2], f64, f64); 7] = [
        (0.1, [3.0, 0.0], 1.0, 0.0),
        (1.1, [2.0, 3.0], 2.0, 1.0),
        (2.1, [1.0, 6.0], 2.0, 2.0),
        (3.1, [6.0, 3.0], 2.0, 3.0),
        (9.1, [3.0, 0.0], 1.0, 9.0),
        (12.1, [0.0, 0.0], 0.0, 12.0),
        (15.1, [0.0, 0.0], 0.0, 12.0),
    ];
    for (t, batches, n, store) in table {
        check(&result, "queue.batch[1]", t, batches[0], 1e-12);
        check(&result, "queue.batch[2]", t, batches[1], 1e-12);
        check(&result, "queue.n", t, n, 0.0);
        check(&result, "store.m", t, store, 1e-12);
    }
    for k in 3..16 {
        let t = 0.1 + k as f64;
        let total = result.value_at("queue.m", t).unwrap() + result.value_at("store.m", t).unwrap();
        assert!((total - 12.0).abs() < 1e-12, "{total} at {t}");
    }
}

#[test]
fn discrete_amounts_are_rates_times_the_sample_period() {
    // With ticks every 0.5, a discrete stock fed at the rate 2 holds 2 t at its ticks, and an
    // oven that cooks for one time unit (two ticks) passes every batch of 3 on.
    let mut model = compile(
        "Half",
        Some(
            "model Half
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow feed(constRate = 2);
  Reservoirs.StockD d(startTime = 0.5, samplePeriod = 0.5);
  Reservoirs.CloudSource source2;
  Flows.ConstantFlow feed2(constRate = 2);
  Reservoirs.Oven oven(capacity = 3, cookingTime = 1, startTime = 0.25, samplePeriod = 0.5);
  Flows.ConstantFlow release;
  Reservoirs.Stock out;
equation
  connect(source.outflow, feed.inflow);
  connect(feed.outflow, d.inflow);
  connect(source2.outflow, feed2.inflow);
  connect(feed2.outflow, oven.inflow);
  connect(oven.outflow, release.inflow);
  connect(release.outflow, out.inflow);
end Half;
",
        ),
    );
    let result = run(&mut model, 12.0, None);
    for k in 1..24 {
        let t = 0.5 * k as f64;
        check(&result, "d.m", t, 2.0 * t, 1e-12);
    }
    // The oven takes 2*0.5 = 1 per tick: full at 1.25, cooking during the ticks 1.75 and
    // 2.25, releasing its 3 at the rate 3/0.5 during (2.25, 2.75), and so on every 2 time units.
    for (t, load) in [(0.25, 1.0), (0.75, 2.0), (1.25, 3.0), (2.25, 1.0), (3.25, 3.0)] {
        check(&result, "oven.load", t, load, 1e-12);
    }
    check(&result, "release.rate", 2.0, 0.0, 0.0);
    check(&result, "release.rate", 2.5, 6.0, 0.0);
    check(&result, "out.m", 2.75, 3.0, 1e-9);
    check(&result, "out.m", 12.0, 15.0, 1e-9);
}

#[test]
fn discrete_flows_decide_at_the_ticks_and_hold_their_rates() {
    // A discrete flow that wants 2 empties a bounded discrete stock of 5 (2, 2, then the 1 that
    // is left); a discrete flow that wants the time books the sum of the tick times; a discrete
    // uniflow that wants time - 2 stays at 0 until it turns positive.
    let mut model = compile(
        "Ticks",
        Some(
            "model Ticks
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.SaturatedStockD s(m0 = 5);
  Flows.ConstantFlowD take(constRate = 2);
  Reservoirs.StockD d;
  Reservoirs.CloudSource source;
  Flows.FlowD clock(u = time);
  Reservoirs.StockD e;
  Reservoirs.CloudSource source2;
  Flows.FlowD late(u = time - 2, uniflow = true);
  Reservoirs.CloudSink sink;
equation
  connect(s.outflow, take.inflow);
  connect(take.outflow, d.inflow);
  connect(source.outflow, clock.inflow);
  connect(clock.outflow, e.inflow);
  connect(source2.outflow, late.inflow);
  connect(late.outflow, sink.inflow);
end Ticks;
",
        ),
    );
    let result = run(&mut model, 6.0, None);
    for (t, s, take, d) in [
        (0.1, 5.0, 2.0, 0.0),
        (1.1, 3.0, 2.0, 2.0),
        (2.1, 1.0, 1.0, 4.0),
        (3.1, 0.0, 0.0, 5.0),
        (5.1, 0.0, 0.0, 5.0),
    ] {
        check(&result, "s.m", t, s, 1e-12);
        check(&result, "take.rate", t + 0.5, take, 1e-12);
        check(&result, "d.m", t, d, 1e-12);
    }
    let mut booked = 0.0;
    for k in 0..6 {
        let t = 0.1 + k as f64;
        check(&result, "e.m", t, booked, 1e-12);
        check(&result, "clock.rate", t + 0.5, t, 1e-12);
        check(&result, "late.rate", t + 0.5, (t - 2.0f64).max(0.0), 1e-12);
        booked += t;
    }
    check(&result, "take.rate", 0.05, 0.0, 0.0);
}

#[test]
fn a_dictated_rate_above_the_limit_of_the_other_end_stops_the_run() {
    // A conveyor with one slat releases 5 per tick into an oven with room for 3.
    let mut model = compile(
        "Overfull",
        Some(
            "model Overfull
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow load(constRate = 5);
  Reservoirs.Conveyor belt(nDelay = 1);
  Flows.ConstantFlow unload;
  Reservoirs.Oven oven(capacity = 3);
equation
  connect(source.outflow, load.inflow);
  connect(load.outflow, belt.inflow);
  connect(belt.outflow, unload.inflow);
  connect(unload.outflow, oven.inflow);
end Overfull;
",
        ),
    );
    let (time, message) = failure(&mut model, 5.0);
    // The belt is loaded at the first tick (0.1) and unloads during the next interval.
    assert!((time - 0.1).abs() < 1e-12, "stopped at {time}");
    assert!(message.contains("exceeds the limit"), "{message}");
    assert!(message.contains("unload."), "{message}");
}

#[test]
fn outflows_that_overdraw_a_bounded_discrete_stock_stop_the_run() {
    // Each of two flows may take the whole content of 4; together they take 6.
    let mut model = compile(
        "Overdraw",
        Some(
            "model Overdraw
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.SaturatedStockD s(m0 = 4);
  Flows.ConstantFlow a(constRate = 3);
  Flows.ConstantFlow b(constRate = 3);
  Reservoirs.CloudSink sinkA;
  Reservoirs.CloudSink sinkB;
equation
  connect(s.outflow, a.inflow);
  connect(s.outflow, b.inflow);
  connect(a.outflow, sinkA.inflow);
  connect(b.outflow, sinkB.inflow);
end Overdraw;
",
        ),
    );
    let (time, message) = failure(&mut model, 5.0);
    assert!((time - 0.1).abs() < 1e-12, "stopped at {time}");
    assert!(message.contains("lower bound minLevel = 0"), "{message}");
}

#[test]
fn an_oven_that_cannot_finish_cooking_is_rejected() {
    let text = example("oven1.eqm").replace("cookingTime = 2", "cookingTime = 0.5");
    let mut model = compile("Oven1", Some(&text));
    let (time, message) = failure(&mut model, 5.0);
    assert_eq!(time, 0.0);
    assert!(message.contains("at least one sample period"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Delays, smoothing, trend and test inputs.

/// SMOOTH3 and DELAY3 of a unit step from 0: 1 - e^(-3t/tau)(1 + 3t/tau + (3t/tau)^2/2).
fn third_order(t: f64, tau: f64) -> f64 {
    let a = 3.0 * t / tau;
    1.0 - (-a).exp() * (1.0 + a + a * a / 2.0)
}

#[test]
fn delays_and_smooths_of_a_step_match_their_closed_forms() {
    let mut model = compile(
        "Steps",
        Some(
            "model Steps
  import SystemDynamics.Functions;
  Functions.Smooth1 s1(u = 1, averagingTime = 2, steadyStart = false, y_start = 0);
  Functions.Smooth3 s3(u = 1, averagingTime = 2, steadyStart = false, y_start = 0);
  Functions.Delay1 d1(u = 1, delayTime = 2, steadyStart = false, y_start = 0);
  Functions.Delay3 d3(u = 1, delayTime = 2, steadyStart = false, y_start = 0);
  Functions.Smooth1 steady(u = 3, averagingTime = 2);
  Functions.Delay3 steady3(u = 3, delayTime = 2);
end Steps;
",
        ),
    );
    let result = run(&mut model, 10.0, None);
    for t in [0.0, 0.5, 1.0, 2.0, 4.0, 10.0] {
        let first = 1.0 - (-t / 2.0f64).exp();
        check(&result, "s1.y", t, first, 1e-8);
        check(&result, "d1.y", t, first, 1e-8);
        check(&result, "s3.y", t, third_order(t, 2.0), 1e-8);
        check(&result, "d3.y", t, third_order(t, 2.0), 1e-8);
        check(&result, "steady.y", t, 3.0, 1e-12);
        check(&result, "steady3.y", t, 3.0, 1e-12);
    }
    // The material in each stage of the material delay is its outflow times delayTime/3, and
    // the outflows of a unit step are the Erlang distributions of orders 1, 2 and 3.
    for t in [0.5, 2.0, 4.0] {
        let a: f64 = 3.0 * t / 2.0;
        let stages = [1.0 - (-a).exp(), 1.0 - (-a).exp() * (1.0 + a), third_order(t, 2.0)];
        for (name, r) in ["d3.L1", "d3.L2", "d3.L3"].iter().zip(stages) {
            check(&result, name, t, 2.0 / 3.0 * r, 1e-8);
        }
    }
}

#[test]
fn smooth_and_smooth3_reproduce_the_published_euler_values() {
    // u = -1 + STEP(5, 5), averaging time 2 + STEP(2, 10), Euler with DT = 0.25: the values
    // system dynamics tools report (to six digits) for SMOOTH, SMOOTH with the initial value 5,
    // SMOOTH3 and SMOOTH3 with the initial value 5, the Euler iterates of their equations.
    let mut model = compile(
        "Smooth",
        Some(
            "model Smooth
  import SystemDynamics.Functions;
  Real u = -1 + Functions.STEP(5, 5);
  Real tau = 2 + Functions.STEP(2, 10);
  Functions.Smooth1 s(u = u, averagingTime = tau);
  Functions.Smooth1 si(u = u, averagingTime = tau, steadyStart = false, y_start = 5);
  Functions.Smooth3 s3(u = u, averagingTime = tau);
  Functions.Smooth3 s3i(u = u, averagingTime = tau, steadyStart = false, y_start = 5);
  annotation(experiment(StopTime = 20), __eqm(solver = \"euler\", step = 0.25));
end Smooth;
",
        ),
    );
    // The annotation chooses Euler's method with the step 0.25, and the rows on its grid.
    let result = model.simulate(&RunSettings::default()).expect("runs");
    assert_eq!(result.len(), 81);
    for (t, values) in [
        (0.0, [-1.0, 5.0, -1.0, 5.0]),
        (5.0, [-1.0, -0.584747, -1.0, -0.959601]),
        (5.25, [-0.375, -0.011654, -1.0, -0.972331]),
        (6.0, [1.06909, 1.31251, -0.241943, -0.233253]),
        (10.0, [3.65396, 3.6827, 3.96633, 3.96635]),
        (20.0, [3.97382, 3.97599, 3.99998, 3.99998]),
    ] {
        for (name, value) in ["s.y", "si.y", "s3.y", "s3i.y"].iter().zip(values) {
            check(&result, name, t, value, 1e-5);
        }
    }
}

#[test]
fn a_fixed_delay_shifts_its_input() {
    let mut model = compile(
        "Fixed",
        Some(
            "model Fixed
  import SystemDynamics.Functions;
  Functions.DelayFixed d(u = sin(time), delayTime = 1.5);
  Functions.DelayFixed di(u = sin(time), delayTime = 1.5, steadyStart = false, y_start = 7);
end Fixed;
",
        ),
    );
    let result = run(&mut model, 10.0, None);
    for t in [0.0, 1.0, 1.49] {
        check(&result, "d.y", t, 0.0, 1e-12);
        check(&result, "di.y", t, 7.0, 1e-12);
    }
    // At output rows (every 0.02), where no interpolation between rows blurs the value.
    for t in [1.5, 2.0, 4.0, 7.24, 10.0] {
        check(&result, "d.y", t, (t - 1.5f64).sin(), 1e-6);
        check(&result, "di.y", t, (t - 1.5f64).sin(), 1e-6);
    }
}

#[test]
fn the_trend_of_an_exponential_is_its_growth_rate() {
    // u = e^(0.1 t) with averaging time 5: started with the trend 0.1 the average is
    // u/(1 + 0.5) at all times and the trend stays 0.1; started with 0 it follows
    // average = u/1.5 + (1 - 1/1.5) e^(-t/5).
    let mut model = compile(
        "Growth",
        Some(
            "model Growth
  import SystemDynamics.Functions;
  Functions.Trend tr(u = exp(0.1*time), averagingTime = 5, initialTrend = 0.1);
  Functions.Trend tr0(u = exp(0.1*time), averagingTime = 5);
end Growth;
",
        ),
    );
    let result = run(&mut model, 20.0, None);
    for t in [0.0, 5.0, 10.0, 20.0] {
        check(&result, "tr.y", t, 0.1, 1e-8);
        let u = (0.1 * t).exp();
        let average = u / 1.5 + (1.0 - 1.0 / 1.5) * (-t / 5.0f64).exp();
        check(&result, "tr0.y", t, (u - average) / (average * 5.0), 1e-8);
    }
}

#[test]
fn step_ramp_and_pulse_blocks_switch_at_exact_times() {
    // A pulse of width 0.01 every 3 from t = 1, integrated by an adaptive solver that takes
    // long steps: each pulse is a pair of time events and delivers its volume exactly.
    let mut model = compile(
        "Inputs",
        Some(
            "model Inputs
  import SystemDynamics.Functions;
  Functions.Step st(height = 3, startTime = 2);
  Functions.Ramp r(slope = 2, startTime = 1, endTime = 3);
  Functions.Pulse p(volume = 2, firstTime = 1, interval = 3, width = 0.01);
  Real S(start = 0, fixed = true);
  Real P(start = 0, fixed = true);
equation
  der(S) = st.y;
  der(P) = p.y;
end Inputs;
",
        ),
    );
    let result = run(&mut model, 12.0, None);
    for (t, step, ramp, pulses) in [
        (0.5, 0.0, 0.0, 0.0),
        (1.5, 0.0, 1.0, 1.0),
        (2.5, 3.0, 3.0, 1.0),
        (3.5, 3.0, 4.0, 1.0),
        (9.5, 3.0, 4.0, 3.0),
        (12.0, 3.0, 4.0, 4.0),
    ] {
        check(&result, "st.y", t, step, 0.0);
        check(&result, "r.y", t, ramp, 1e-12);
        check(&result, "S", t, 3.0 * (t - 2.0f64).max(0.0), 1e-9);
        check(&result, "P", t, 2.0 * pulses, 1e-9);
    }
    check(&result, "p.y", 4.005, 200.0, 0.0);
}

#[test]
fn step_ramp_and_pulse_functions_in_a_fixed_step_run() {
    // With Euler and DT = 0.25 a pulse of width DT puts its whole volume into a stock in one
    // step, as system dynamics tools do.
    let mut model = compile(
        "Functions",
        Some(
            "model Functions
  import SystemDynamics.Functions.{STEP, RAMP, PULSE};
  Real S(start = 0, fixed = true);
  Real R(start = 0, fixed = true);
  Real P(start = 0, fixed = true);
equation
  der(S) = STEP(3, 2);
  der(R) = RAMP(2, 1, 3);
  der(P) = PULSE(2, 1, 3, 0.25);
end Functions;
",
        ),
    );
    let result = run(&mut model, 12.0, Some((Method::Euler, 0.25)));
    // Euler sums h*f(t_i) over the steps before t.
    let euler = |t: f64, f: &dyn Fn(f64) -> f64| {
        (0..(t / 0.25).round() as usize)
            .map(|i| 0.25 * f(0.25 * i as f64))
            .sum::<f64>()
    };
    let step = |t: f64| if t >= 2.0 { 3.0 } else { 0.0 };
    let ramp = |t: f64| {
        if t < 1.0 {
            0.0
        } else if t < 3.0 {
            2.0 * (t - 1.0)
        } else {
            4.0
        }
    };
    for t in [1.0, 2.5, 4.0, 7.75, 12.0] {
        check(&result, "S", t, euler(t, &step), 1e-12);
        check(&result, "R", t, euler(t, &ramp), 1e-12);
    }
    for (t, pulses) in [(1.0, 0.0), (1.25, 1.0), (4.0, 1.0), (4.25, 2.0), (12.0, 4.0)] {
        check(&result, "P", t, 2.0 * pulses, 1e-12);
    }
}

#[test]
fn a_graph_converter_interpolates_clamps_and_extrapolates() {
    // The catches per predator as a function of the prey: 11 points.
    let mut model = compile(
        "Graph",
        Some(
            "model Graph
  import SystemDynamics.Converters;
  parameter Real fpr[11, 2] = [0, 0; 1, 0.9879; 2, 1.9830; 3, 2.4116; 4, 2.7167; 5, 2.8620;
    6, 2.9419; 7, 2.9823; 8, 2.9910; 9, 2.9970; 10, 3.0000];
  Converters.GraphConverter lin(table = fpr, u = time - 1);
  Converters.GraphConverter ext(table = fpr, u = time - 1, extrapolation = Converters.Extrapolation.linear);
  Converters.GraphConverter stp(table = fpr, u = time - 1, interpolation = Converters.Interpolation.step);
end Graph;
",
        ),
    );
    let result = run(&mut model, 13.0, Some((Method::Euler, 0.25)));
    for (t, lin, ext, stp) in [
        (0.0, 0.0, -0.9879, 0.0),
        (1.0, 0.0, 0.0, 0.0),
        (3.5, (1.9830 + 2.4116) / 2.0, (1.9830 + 2.4116) / 2.0, 1.9830),
        (4.0, 2.4116, 2.4116, 2.4116),
        (11.0, 3.0, 3.0, 3.0),
        (13.0, 3.0, 3.0 + 2.0 * 0.0030, 3.0),
    ] {
        check(&result, "lin.y", t, lin, 1e-12);
        check(&result, "ext.y", t, ext, 1e-12);
        check(&result, "stp.y", t, stp, 1e-12);
    }
}

#[test]
fn a_graph_converter_reads_its_table_from_a_file() {
    let text = "model FromFile
  SystemDynamics.Converters.GraphConverter g(table = readMatrix(\"fpr.csv\"), u = time);
  annotation(experiment(StopTime = 12, Interval = 0.5));
end FromFile;
";
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    // The file as the session's reader gives it: a header line and 11 points.
    session.set_file_reader(|path: &std::path::Path| {
        assert!(path.ends_with("fpr.csv"), "{}", path.display());
        Ok(
            "prey, catches per predator\n0, 0\n1, 0.9879\n2, 1.9830\n3, 2.4116\n4, 2.7167\n\
            5, 2.8620\n6, 2.9419\n7, 2.9823\n8, 2.9910\n9, 2.9970\n10, 3.0000\n"
                .to_string(),
        )
    });
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = run(&mut model, 12.0, None);
    for (t, y) in [
        (0.0, 0.0),
        (1.5, (0.9879 + 1.9830) / 2.0),
        (3.0, 2.4116),
        (10.0, 3.0),
        (12.0, 3.0),
    ] {
        check(&result, "g.y", t, y, 1e-12);
    }
}
