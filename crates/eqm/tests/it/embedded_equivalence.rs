//! The embedded library under Modelica Standard Library names against the real library: every
//! class the embedded `Modelica` package shares with an installed Modelica Standard Library has
//! the same connectors and parameters there, and a small model built from shared classes gives
//! the same results with either. Skips where the real library is not installed.

use crate::external_objects::installed_msl;
use eqm::library_doc::{LibraryClass, Parameter, Port, library_classes, session_classes};
use eqm::{LibraryPath, ModelOptions, RunSettings, Session};
use eqm_syntax::ast;
use std::sync::Arc;

/// The embedded classes under `Modelica.` that a model instantiates or connects: models,
/// blocks and connectors.
fn embedded_components() -> Vec<LibraryClass> {
    let (classes, diagnostics) = library_classes(&[]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    classes
        .into_iter()
        .filter(|c| c.full_name.starts_with("Modelica.") && matches!(c.kind, "model" | "block" | "connector"))
        .collect()
}

/// A session over the installed library with no model of its own.
fn msl_session(msl: std::path::PathBuf) -> Session {
    let path = LibraryPath {
        store: Arc::new(crate::external_objects::FileSystem),
        directories: vec![msl],
        eqm_file_directories: Vec::new(),
        tree_cache: None,
    };
    Session::with_libraries(Vec::new(), Vec::new(), &[], Some(path), None)
}

/// A connector as a model connects it: array size, causality, flow, and its class (the
/// predefined type for a signal such as `RealInput` or `RealVectorInput`, which connect alike).
fn port_text(p: &Port) -> String {
    let dims = if p.dims.is_empty() {
        String::new()
    } else {
        format!("[{}]", p.dims.join(","))
    };
    let kind = p.scalar.clone().or(p.class.clone()).unwrap_or_default();
    let flow = if p.flow { "flow " } else { "" };
    format!("{}{dims}: {:?} {flow}{kind}", p.name, p.causality)
}

/// The value a parameter takes when a model gives none: its binding, else its `start` value,
/// as written, with numbers compared as numbers (`1` and `1.0`) and an enumeration literal by
/// its type and literal (`Init.NoInit` and `Modelica.Blocks.Types.Init.NoInit`).
fn default_text(p: &Parameter) -> Option<String> {
    let text = p.default.clone().or(p.start.clone())?;
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Ok(v) = text.parse::<f64>() {
        return Some(v.to_string());
    }
    let parts: Vec<&str> = text.trim_start_matches('.').split('.').collect();
    let is_name = parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    if is_name && parts.len() > 2 {
        return Some(parts[parts.len() - 2..].join("."));
    }
    Some(text)
}

/// How `real` fails to stand where `mine` stands: a connector or parameter of `mine` that
/// `real` lacks or has otherwise, a default that differs, a connector of `real` that a model
/// written for `mine` would leave unconnected although it must be connected (an input or a
/// physical connector present unconditionally), or a parameter of `real` without a default.
fn incompatibilities(mine: &LibraryClass, real: &LibraryClass) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for port in &mine.connectors {
        match real.connectors.iter().find(|p| p.name == port.name) {
            None => found.push((port.name.clone(), "missing".to_string())),
            Some(theirs) if port_text(theirs) != port_text(port) => found.push((
                port.name.clone(),
                format!("`{}` vs `{}`", port_text(port), port_text(theirs)),
            )),
            Some(_) => {}
        }
    }
    // A connector class defined as another one (`connector HeatPort_a = HeatPort`) lists no
    // variables of its own: they are compared in the row of the class it names.
    let short_connector = mine.kind == "connector" && mine.connectors.is_empty() && mine.definition.is_some();
    for theirs in real.connectors.iter().filter(|_| !short_connector) {
        let needed = theirs.condition.is_none() && theirs.causality != ast::Causality::Output;
        if needed && !mine.connectors.iter().any(|p| p.name == theirs.name) {
            found.push((
                theirs.name.clone(),
                format!("`{}` must be connected there", port_text(theirs)),
            ));
        }
    }
    for parameter in &mine.parameters {
        match real.parameters.iter().find(|p| p.name == parameter.name) {
            None => found.push((parameter.name.clone(), "missing".to_string())),
            Some(theirs) if default_text(theirs).is_some() && default_text(theirs) != default_text(parameter) => {
                let text = format!(
                    "defaults to {:?} vs {:?}",
                    default_text(parameter),
                    default_text(theirs)
                );
                found.push((parameter.name.clone(), text))
            }
            Some(_) => {}
        }
    }
    for theirs in &real.parameters {
        if default_text(theirs).is_none() && !mine.parameters.iter().any(|p| p.name == theirs.name) {
            found.push((theirs.name.clone(), "has no default there".to_string()));
        }
    }
    found
}

#[test]
fn every_shared_class_stands_where_the_real_library_s_class_stands() {
    let Some(msl) = installed_msl() else {
        return;
    };
    let embedded = embedded_components();
    let names: Vec<&str> = embedded.iter().map(|c| c.full_name.as_str()).collect();
    let mut session = msl_session(msl);
    let real = session_classes(&mut session, &names);
    let mut differences = Vec::new();
    let mut known_seen = Vec::new();
    for (mine, theirs) in embedded.iter().zip(&real) {
        let short = mine.full_name.trim_start_matches("Modelica.");
        let problems = match theirs {
            None => vec![(String::new(), "not in the real library".to_string())],
            Some(theirs) => incompatibilities(mine, theirs),
        };
        for (item, problem) in problems {
            match KNOWN.iter().find(|(class, known, _)| *class == short && *known == item) {
                Some(entry) => known_seen.push(entry),
                None => differences.push(format!("{short} `{item}`: {problem}")),
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences in {} classes:\n{}",
        differences.len(),
        embedded.len(),
        differences.join("\n")
    );
    // Every known difference still exists: one that was removed leaves the list.
    let stale: Vec<_> = KNOWN.iter().filter(|k| !known_seen.contains(k)).collect();
    assert!(stale.is_empty(), "known differences that no longer exist: {stale:?}");
}

/// The known differences, each `(class below Modelica, connector or parameter ("" for the class
/// itself), why a model is not silently changed by it)`. Every other difference fails the test.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "Blocks.Interfaces.BooleanVectorOutput",
        "",
        "EQM's own class: a model using it names a class the real library lacks and is rejected there",
    ),
    ("Blocks.Interfaces.IntegerVectorOutput", "", "EQM's own class, as above"),
    ("Mechanics.Rotational.Components.Free", "", "EQM's own class, as above"),
    (
        "Electrical.Analog.Basic.EMF",
        "",
        "the name of an earlier version of the library (now `RotationalEMF`): rejected there",
    ),
    (
        "Electrical.Analog.Ideal.IdealCommutingSwitch",
        "",
        "the name of an earlier version (now `IdealTwoWaySwitch`): rejected there",
    ),
    (
        "Electrical.Analog.Ideal.ControlledIdealCommutingSwitch",
        "",
        "the name of an earlier version: rejected there",
    ),
    (
        "Blocks.Sources.TimeTable",
        "table",
        "the real default is an empty table a model must replace; EQM's is a small example table",
    ),
    ("Blocks.Sources.CombiTimeTable", "table", "as above"),
    ("Blocks.Sources.IntegerTable", "table", "as above"),
    ("Blocks.Tables.CombiTable1Ds", "table", "as above"),
    ("Blocks.Tables.CombiTable1Dv", "table", "as above"),
    ("Blocks.Tables.CombiTable2Ds", "table", "as above"),
    ("Blocks.Tables.CombiTable2Dv", "table", "as above"),
    (
        "Blocks.Sources.CombiTimeTable",
        "nout",
        "the same value: the larger of the two sizes",
    ),
    (
        "Blocks.Sources.CombiTimeTable",
        "t_min",
        "the same value: the first abscissa, scaled (the real library asks its C code for it)",
    ),
    (
        "Blocks.Sources.CombiTimeTable",
        "t_max",
        "the same value: the last abscissa, scaled",
    ),
    (
        "Blocks.Tables.CombiTable1Ds",
        "u_min",
        "the same value: the first abscissa (the real library asks its C code for it)",
    ),
    (
        "Blocks.Tables.CombiTable1Ds",
        "u_max",
        "the same value: the last abscissa",
    ),
    ("Blocks.Tables.CombiTable1Dv", "u_min", "as above"),
    ("Blocks.Tables.CombiTable1Dv", "u_max", "as above"),
    (
        "Blocks.Tables.CombiTable2Ds",
        "u_min",
        "the same values: the first abscissae of both axes",
    ),
    (
        "Blocks.Tables.CombiTable2Ds",
        "u_max",
        "the same values: the last abscissae of both axes",
    ),
    ("Blocks.Tables.CombiTable2Dv", "u_min", "as above"),
    ("Blocks.Tables.CombiTable2Dv", "u_max", "as above"),
    (
        "Blocks.Continuous.TransferFunction",
        "x_start",
        "the same value: `nx` is `size(a, 1) - 1`",
    ),
    (
        "Blocks.Continuous.StateSpace",
        "x_start",
        "the same value: `nx` is `size(A, 1)`",
    ),
    (
        "Blocks.Math.MultiSwitch",
        "expr",
        "a parameter in EQM, an input with the same default there: set by a modifier in both",
    ),
    (
        "Blocks.Continuous.CriticalDamping",
        "k",
        "EQM's extra gain; its default 1 is the real block's behaviour",
    ),
    (
        "Mechanics.Rotational.Components.IdealGear",
        "support",
        "`Flange_a` in EQM, `Support` there: connectors of the same variables, which connect alike",
    ),
    ("Mechanics.Rotational.Sources.Torque", "support", "as above"),
    (
        "Electrical.Analog.Sources.PulseVoltage",
        "nperiod",
        "a parameter of earlier versions; its default (unlimited) is the real source's behaviour",
    ),
    ("Electrical.Analog.Sources.PulseCurrent", "nperiod", "as above"),
    ("Electrical.Analog.Sources.SawToothVoltage", "nperiod", "as above"),
    ("Electrical.Analog.Sources.SawToothCurrent", "nperiod", "as above"),
    (
        "Electrical.Analog.Sources.TableVoltage",
        "timeScale",
        "EQM's extra time scale; its default 1 is the real source's behaviour",
    ),
    ("Electrical.Analog.Sources.TableCurrent", "timeScale", "as above"),
];

/// A model of shared classes from four domains, each part with a closed-form solution.
const SHARED: &str = "model Shared
  Modelica.Electrical.Analog.Sources.StepVoltage src(V = 2, startTime = 0);
  Modelica.Electrical.Analog.Basic.Resistor r(R = 10);
  Modelica.Electrical.Analog.Basic.Capacitor c(C = 0.01, v(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.Ground g;
  Modelica.Mechanics.Translational.Components.Mass m(m = 2, s(start = 1, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.SpringDamper sd(c = 50, d = 1, s_rel0 = 0);
  Modelica.Mechanics.Translational.Components.Fixed f;
  Modelica.Blocks.Sources.Step step(height = 3, startTime = 0.2);
  Modelica.Blocks.Continuous.FirstOrder lag(k = 2, T = 0.1,
    initType = Modelica.Blocks.Types.Init.InitialOutput, y_start = 0);
  Modelica.Thermal.HeatTransfer.Components.HeatCapacitor cap(C = 10, T(start = 300, fixed = true));
  Modelica.Thermal.HeatTransfer.Components.ThermalConductor cond(G = 2);
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature amb(T = 350);
equation
  connect(src.p, r.p); connect(r.n, c.p); connect(c.n, src.n); connect(src.n, g.p);
  connect(f.flange, sd.flange_a); connect(sd.flange_b, m.flange_a);
  connect(step.y, lag.u);
  connect(amb.port, cond.port_a); connect(cond.port_b, cap.port);
end Shared;
";

/// The closed forms of `SHARED`'s parts at `t`: the capacitor's voltage, the mass's position
/// (a damped oscillator, ω = 5, ζ = 0.05), the lag's output and the capacitor's temperature.
fn shared_exact(t: f64) -> [(&'static str, f64); 4] {
    let lag = if t <= 0.2 {
        0.0
    } else {
        6.0 * (1.0 - (-(t - 0.2) / 0.1).exp())
    };
    [
        ("c.v", 2.0 * (1.0 - (-t / 0.1).exp())),
        ("m.s", eqm_testkit::chain::damped_oscillator(1.0, 5.0, 0.05, t).0),
        ("lag.y", lag),
        ("cap.T", 350.0 - 50.0 * (-0.2 * t).exp()),
    ]
}

#[test]
fn a_model_of_shared_classes_gives_the_same_results_with_either_library() {
    let Some(msl) = installed_msl() else {
        return;
    };
    let file = vec![("shared.mo".to_string(), SHARED.as_bytes().to_vec())];
    let embedded = Session::with_libraries(Vec::new(), file.clone(), &[], None, None);
    let path = LibraryPath {
        store: Arc::new(crate::external_objects::FileSystem),
        directories: vec![msl],
        eqm_file_directories: Vec::new(),
        tree_cache: None,
    };
    let real = Session::with_libraries(Vec::new(), file, &[], Some(path), None);
    let settings = RunSettings {
        stop: Some(2.0),
        interval: Some(0.01),
        rtol: Some(1e-9),
        atol: Some(1e-9),
        ..RunSettings::default()
    };
    let mut results = Vec::new();
    for mut session in [embedded, real] {
        let mut model = session
            .compile(Some("Shared"), &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        results.push(model.simulate(&settings).expect("runs"));
    }
    for k in 1..200 {
        let t = k as f64 * 0.01;
        for (name, exact) in shared_exact(t) {
            let [mine, theirs] = [&results[0], &results[1]].map(|r| r.value_at(name, t).expect(name));
            assert!(
                (mine - exact).abs() < 1e-5,
                "{name} at {t}: embedded {mine}, exact {exact}"
            );
            assert!(
                (theirs - exact).abs() < 1e-5,
                "{name} at {t}: real {theirs}, exact {exact}"
            );
            assert!(
                (mine - theirs).abs() < 1e-6,
                "{name} at {t}: embedded {mine}, real {theirs}"
            );
        }
    }
}
