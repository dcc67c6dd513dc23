//! The examples of `SystemDynamics` against values computed independently: closed forms,
//! hand timelines of the discrete blocks and a separate high-accuracy integration.

use super::*;

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
