//! The standard library as a whole: its reference (`docs/library.md`) is generated from it and
//! every class is described, and every class is checked, flattened and simulated in a small
//! harness model that ties each of its connectors to a reference.
//!
//! The library is read as `eqm` reads it (the files of `EQM_STDLIB_DIR` replacing the embedded
//! ones, [`stdlib_replacements`]), through `eqm::library_doc`, so the classes tested here are
//! exactly the rows of the reference.

use eqm::library_doc::{self, LibraryClass, Port};
use eqm::pipeline::syntax::ast::Causality;
use eqm::{ModelOptions, RunSettings, Session};
use std::fmt::Write as _;

/// The path of `docs/library.md`.
fn doc_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/library.md")
}

/// The files of the directory `EQM_STDLIB_DIR` names that replace standard-library files, as
/// the `eqm` binary reads them (library development regenerates the reference from them).
fn stdlib_replacements() -> Vec<(String, String)> {
    let Some(dir) = std::env::var_os("EQM_STDLIB_DIR") else {
        return Vec::new();
    };
    let dir = std::path::PathBuf::from(dir);
    eqm::stdlib_file_names()
        .into_iter()
        .filter_map(|name| Some((name.to_string(), std::fs::read_to_string(dir.join(name)).ok()?)))
        .collect()
}

/// A session of `files` with the library as `eqm` reads it.
fn session_of(files: &[(String, String)]) -> Session {
    let bytes = files
        .iter()
        .map(|(name, text)| (name.clone(), text.clone().into_bytes()))
        .collect();
    Session::with_stdlib_replaced(stdlib_replacements(), bytes, &[], None)
}

/// Every class of the library, with the parse checked clean.
fn classes() -> Vec<LibraryClass> {
    let (classes, diagnostics) = library_doc::library_classes(&stdlib_replacements());
    assert!(
        diagnostics.is_empty(),
        "the standard library has diagnostics: {diagnostics:#?}"
    );
    classes
}

/// The lines of `new` that `old` lacks (`+`) and those of `old` that `new` lacks (`-`), per
/// generated block, so that a failing comparison says which rows changed.
fn block_diff(old: &str, new: &str) -> String {
    let blocks = |text: &str| -> Vec<(String, Vec<String>)> {
        let mut blocks = Vec::new();
        let mut current: Option<(String, Vec<String>)> = None;
        for line in text.lines() {
            if let Some(section) = line.strip_prefix(library_doc::BLOCK_START) {
                current = Some((section.trim_end_matches("-->").trim().to_string(), Vec::new()));
            } else if line == library_doc::BLOCK_END {
                blocks.extend(current.take());
            } else if let Some((_, lines)) = current.as_mut() {
                lines.push(line.to_string());
            }
        }
        blocks
    };
    let mut out = String::new();
    for ((section, old_lines), (_, new_lines)) in blocks(old).into_iter().zip(blocks(new)) {
        if old_lines == new_lines {
            continue;
        }
        let _ = writeln!(out, "block `{section}`:");
        for line in old_lines.iter().filter(|l| !new_lines.contains(l)) {
            let _ = writeln!(out, "  - {line}");
        }
        for line in new_lines.iter().filter(|l| !old_lines.contains(l)) {
            let _ = writeln!(out, "  + {line}");
        }
        if old_lines.iter().all(|l| new_lines.contains(l)) && new_lines.iter().all(|l| old_lines.contains(l)) {
            let _ = writeln!(out, "  (the same rows in another order)");
        }
    }
    out
}

/// The tables of `docs/library.md` are those the library generates; `EQM_UPDATE_DOCS=1`
/// rewrites them instead of failing.
#[test]
fn docs_tables_match_the_library() {
    let path = doc_path();
    let old = std::fs::read_to_string(&path).expect("docs/library.md is readable");
    let classes = classes();
    let new = library_doc::update_generated_blocks(&old, &classes).unwrap_or_else(|e| panic!("docs/library.md: {e}"));
    if std::env::var_os("EQM_UPDATE_DOCS").is_some_and(|v| v == "1") {
        if new != old {
            std::fs::write(&path, &new).expect("docs/library.md is writable");
        }
        return;
    }
    assert!(
        new == old,
        "the tables of docs/library.md differ from the library (rerun with EQM_UPDATE_DOCS=1 to \
         rewrite them):\n{}",
        block_diff(&old, &new)
    );
}

/// Every class of the library is listed in one generated block of `docs/library.md`.
#[test]
fn docs_list_every_class() {
    let doc = std::fs::read_to_string(doc_path()).expect("docs/library.md is readable");
    let classes = classes();
    let outside = library_doc::classes_outside_blocks(&doc, &classes);
    assert!(
        outside.is_empty(),
        "classes of the library that no generated block of docs/library.md lists (add a block \
         for their package): {outside:#?}"
    );
    // The count guards against a walk that silently finds nothing.
    assert!(classes.len() > 300, "only {} classes found", classes.len());
}

/// Every class and every constant of a package has a description string.
#[test]
fn every_class_has_a_description() {
    let classes = classes();
    let missing: Vec<&str> = classes
        .iter()
        .filter(|c| c.description.as_deref().is_none_or(|d| d.trim().is_empty()))
        .map(|c| c.full_name.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "library classes without a description string: {missing:#?}"
    );
}

/// How a physical connector is tied to a reference through a small compliant element, so that
/// a class is determined whatever it does with the connector: the declarations of the tie, and
/// its connect equations, with `{k}` for a number unique in the harness and `{c}` for the
/// connector.
struct Tie {
    declarations: &'static str,
    connects: &'static str,
}

/// A pin through 1 ohm to ground.
const PIN: Tie = Tie {
    declarations: "Electrical.Analog.Basic.Resistor tie{k}(R = 1);\n  Electrical.Analog.Basic.Ground ref{k};",
    connects: "connect({c}, tie{k}.p);\n  connect(tie{k}.n, ref{k}.p);",
};
const MSL_PIN: Tie = Tie {
    declarations: "Modelica.Electrical.Analog.Basic.Resistor tie{k}(R = 1);\n  \
                   Modelica.Electrical.Analog.Basic.Ground ref{k};",
    connects: "connect({c}, tie{k}.p);\n  connect(tie{k}.n, ref{k}.p);",
};
/// A translational flange through a spring (1 N/m) and damper (1 N.s/m) to a fixed point.
const FLANGE: Tie = Tie {
    declarations: "Mechanics.Translational.Components.SpringDamper tie{k}(c = 1, d = 1);\n  \
                   Mechanics.Translational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
const MSL_FLANGE: Tie = Tie {
    declarations: "Modelica.Mechanics.Translational.Components.SpringDamper tie{k}(c = 1, d = 1);\n  \
                   Modelica.Mechanics.Translational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
/// A rotational flange through a spring (1 N.m/rad) and damper (1 N.m.s/rad) to a fixed point.
const ROTATIONAL: Tie = Tie {
    declarations: "Mechanics.Rotational.Components.SpringDamper tie{k}(c = 1, d = 1);\n  \
                   Mechanics.Rotational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
const MSL_ROTATIONAL: Tie = Tie {
    declarations: "Modelica.Mechanics.Rotational.Components.SpringDamper tie{k}(c = 1, d = 1);\n  \
                   Modelica.Mechanics.Rotational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
/// The flanges of the sources whose force (torque) is `-|speed|` (nominal values 1): with a damper
/// of 1 the tie's force `d·v` equals it for every speed `v >= 0`, so the harness would have no
/// unique initial speed (a singular loop, E0703, as it should be); a damper of 2 makes it unique.
const MSL_FLANGE_DAMPED: Tie = Tie {
    declarations: "Modelica.Mechanics.Translational.Components.SpringDamper tie{k}(c = 1, d = 2);\n  \
                   Modelica.Mechanics.Translational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
const MSL_ROTATIONAL_DAMPED: Tie = Tie {
    declarations: "Modelica.Mechanics.Rotational.Components.SpringDamper tie{k}(c = 1, d = 2);\n  \
                   Modelica.Mechanics.Rotational.Components.Fixed ref{k};",
    connects: "connect({c}, tie{k}.flange_b);\n  connect(tie{k}.flange_a, ref{k}.flange);",
};
/// A heat port through 1 W/K to 293.15 K.
const HEAT_PORT: Tie = Tie {
    declarations: "Modelica.Thermal.HeatTransfer.Components.ThermalConductor tie{k}(G = 1);\n  \
                   Modelica.Thermal.HeatTransfer.Sources.FixedTemperature ref{k}(T = 293.15);",
    connects: "connect({c}, tie{k}.port_b);\n  connect(tie{k}.port_a, ref{k}.port);",
};
/// A fluid port through a laminar pipe to 2 MPa (above the accumulator's charge pressure, so
/// that an accumulator stays within its range).
const FLUID_PORT: Tie = Tie {
    declarations: "Hydraulics.Components.Pipe tie{k};\n  Hydraulics.Components.PressureSource ref{k}(p = 2e6);",
    connects: "connect({c}, tie{k}.port_b);\n  connect(tie{k}.port_a, ref{k}.port);",
};
/// A reservoir's port filled at a constant rate from a cloud (every reservoir adds what flows in
/// at any of its ports, and a full bounded reservoir dictates the rate 0).
const RESERVOIR_PORT: Tie = Tie {
    declarations: "SystemDynamics.Flows.ConstantFlow tie{k}(constRate = 0.1);\n  \
                   SystemDynamics.Reservoirs.CloudSource ref{k};",
    connects: "connect(ref{k}.outflow, tie{k}.inflow);\n  connect(tie{k}.outflow, {c});",
};
/// A flow's port joined to a stock that holds enough for the run.
const FLOW_PORT: Tie = Tie {
    declarations: "SystemDynamics.Reservoirs.Stock ref{k}(m0 = 10);",
    connects: "connect({c}, ref{k}.inflow);",
};

/// The tie of each physical connector class of the library, by its full name.
const TIES: &[(&str, &Tie)] = &[
    ("Electrical.Analog.Interfaces.Pin", &PIN),
    ("Electrical.Analog.Interfaces.PositivePin", &PIN),
    ("Electrical.Analog.Interfaces.NegativePin", &PIN),
    ("Modelica.Electrical.Analog.Interfaces.Pin", &MSL_PIN),
    ("Modelica.Electrical.Analog.Interfaces.PositivePin", &MSL_PIN),
    ("Modelica.Electrical.Analog.Interfaces.NegativePin", &MSL_PIN),
    ("Mechanics.Translational.Interfaces.Flange", &FLANGE),
    ("Mechanics.Translational.Interfaces.Flange_a", &FLANGE),
    ("Mechanics.Translational.Interfaces.Flange_b", &FLANGE),
    ("Modelica.Mechanics.Translational.Interfaces.Flange_a", &MSL_FLANGE),
    ("Modelica.Mechanics.Translational.Interfaces.Flange_b", &MSL_FLANGE),
    ("Mechanics.Rotational.Interfaces.Flange", &ROTATIONAL),
    ("Mechanics.Rotational.Interfaces.Flange_a", &ROTATIONAL),
    ("Mechanics.Rotational.Interfaces.Flange_b", &ROTATIONAL),
    ("Modelica.Mechanics.Rotational.Interfaces.Flange_a", &MSL_ROTATIONAL),
    ("Modelica.Mechanics.Rotational.Interfaces.Flange_b", &MSL_ROTATIONAL),
    ("Modelica.Thermal.HeatTransfer.Interfaces.HeatPort", &HEAT_PORT),
    ("Modelica.Thermal.HeatTransfer.Interfaces.HeatPort_a", &HEAT_PORT),
    ("Modelica.Thermal.HeatTransfer.Interfaces.HeatPort_b", &HEAT_PORT),
    ("Hydraulics.Interfaces.FluidPort", &FLUID_PORT),
    ("Hydraulics.Interfaces.FluidPort_a", &FLUID_PORT),
    ("Hydraulics.Interfaces.FluidPort_b", &FLUID_PORT),
    ("SystemDynamics.Interfaces.MassPortR", &RESERVOIR_PORT),
    ("SystemDynamics.Interfaces.MassPortF", &FLOW_PORT),
];

/// Modifiers a class needs in its harness because a parameter has no usable default.
const MODIFIERS: &[(&str, &str)] = &[
    // Functional parameters have no default: a rate law is part of the model that uses them.
    ("SystemDynamics.Flows.FunctionFlow", "law = function(s) = 0.1*s"),
    ("SystemDynamics.Flows.FunctionFlow2", "law = function(a, b) = 0.1*a*b"),
    ("SystemDynamics.Converters.FunctionConverter", "law = function(s) = 2*s"),
    (
        "SystemDynamics.Converters.FunctionConverter2",
        "law = function(a, b) = a + b",
    ),
    // The MSL's default nu = 0 leaves the block without inputs, and `max` of no values is
    // undefined: a model that uses it always sets nu.
    ("Modelica.Blocks.Math.MinMax", "nu = 2"),
    // The MSL's defaults L1 = L2 = M = 1 couple the windings perfectly: the inductance matrix
    // [L1, M; M, L2] is singular and der(i1), der(i2) are not determined (reported as E0703, as
    // it should be); a real transformer has M^2 < L1 L2.
    ("Modelica.Electrical.Analog.Basic.Transformer", "M = 0.5"),
];

/// A supply rail: a pin held at 10 V (or -10 V) by an ideal source to ground.
const RAIL_HIGH: Tie = Tie {
    declarations: "Modelica.Electrical.Analog.Sources.ConstantVoltage tie{k}(V = 10);\n  \
                   Modelica.Electrical.Analog.Basic.Ground ref{k};",
    connects: "connect({c}, tie{k}.p);\n  connect(tie{k}.n, ref{k}.p);",
};
const RAIL_LOW: Tie = Tie {
    declarations: "Modelica.Electrical.Analog.Sources.ConstantVoltage tie{k}(V = -10);\n  \
                   Modelica.Electrical.Analog.Basic.Ground ref{k};",
    connects: "connect({c}, tie{k}.p);\n  connect(tie{k}.n, ref{k}.p);",
};

/// Connectors of a class tied otherwise than their class's tie: the limits of an amplifier's
/// output range draw no current, so a resistor to ground would put both at 0 V and leave the
/// range empty.
const TIE_OVERRIDES: &[(&str, &str, &Tie)] = &[
    ("Modelica.Electrical.Analog.Ideal.IdealOpAmpLimited", "VMax", &RAIL_HIGH),
    ("Modelica.Electrical.Analog.Ideal.IdealOpAmpLimited", "VMin", &RAIL_LOW),
    ("Modelica.Electrical.Analog.Basic.OpAmp", "VMax", &RAIL_HIGH),
    ("Modelica.Electrical.Analog.Basic.OpAmp", "VMin", &RAIL_LOW),
    (
        "Modelica.Mechanics.Translational.Sources.LinearSpeedDependentForce",
        "flange",
        &MSL_FLANGE_DAMPED,
    ),
    (
        "Modelica.Mechanics.Rotational.Sources.LinearSpeedDependentTorque",
        "flange",
        &MSL_ROTATIONAL_DAMPED,
    ),
];

/// Equations a class needs in its harness besides the ties. An ideal operational amplifier
/// (a nullator at its input) is determined only with feedback from its output to its inverting
/// input, as a voltage follower; every pin keeps its tie.
const EQUATIONS: &[(&str, &str)] = &[
    ("Modelica.Electrical.Analog.Ideal.IdealOpAmp", "connect(c.p2, c.n1);"),
    (
        "Modelica.Electrical.Analog.Ideal.IdealOpAmp3Pin",
        "connect(c.out, c.in_n);",
    ),
    (
        "Modelica.Electrical.Analog.Ideal.IdealOpAmpLimited",
        "connect(c.out, c.in_n);",
    ),
];

/// Classes that cannot be simulated on their own, with the reason. Keep this list short: a
/// class belongs here only when no harness can make it a model.
const EXEMPT: &[(&str, &str)] = &[];

/// Classes known to fail in their harness, with the stage and the start of the diagnostic they
/// fail with: defects of the library or the compiler that are reported but not yet repaired.
/// The test fails when such a class fails otherwise, and when it passes (then its entry goes).
const KNOWN_FAILURES: &[(&str, &str, &str)] = &[];

/// The value the `k`-th connector of a harness gets when it is a signal input. Real inputs stay
/// inside (0.3, 0.7), where every block of the library is defined (square roots, logarithms,
/// inverse sines, valve openings), and differ from each other by a constant, so that no
/// difference or ratio of two inputs is singular (`u2/(1 - u1/u3)`).
fn input_value(port: &Port, k: usize) -> Option<String> {
    match port.scalar.as_deref() {
        Some("Real") => Some(format!("{} + 0.05*sin(10*time)", 0.4 + 0.02 * (k % 10) as f64)),
        Some("Integer") => Some("1".to_string()),
        Some("Boolean") => Some("time >= 0.05".to_string()),
        _ => None,
    }
}

/// The harness model of a model or block: the class as component `c`, each signal input bound,
/// each physical connector tied; or why none can be built.
fn harness(class: &LibraryClass) -> Result<String, String> {
    // A scalar parameter without a default (the MSL gives many only a start value) gets 1.
    let mut modifiers: Vec<String> = class
        .parameters
        .iter()
        .filter(|p| p.default.is_none() && p.dims.is_empty())
        .filter(|p| matches!(p.scalar.as_deref(), Some("Real" | "Integer")))
        .map(|p| format!("{} = 1", p.name))
        .collect();
    modifiers.extend(
        MODIFIERS
            .iter()
            .filter(|(name, _)| *name == class.full_name)
            .map(|(_, m)| m.to_string()),
    );
    let modifier = if modifiers.is_empty() {
        String::new()
    } else {
        format!("({})", modifiers.join(", "))
    };
    let mut declarations = format!("  {} c{modifier};\n", class.full_name);
    let mut equations = String::new();
    for (k, port) in class.connectors.iter().enumerate() {
        let reference = format!("c.{}", port.name);
        if port.physical {
            let class_name = port.class.as_deref().unwrap_or_default();
            let overridden = TIE_OVERRIDES
                .iter()
                .find(|(c, p, _)| *c == class.full_name && *p == port.name)
                .map(|(_, _, tie)| *tie);
            let Some(tie) =
                overridden.or_else(|| TIES.iter().find(|(name, _)| *name == class_name).map(|(_, tie)| *tie))
            else {
                return Err(format!(
                    "no tie for the connector class {class_name} of `{}`",
                    port.name
                ));
            };
            if !port.dims.is_empty() {
                return Err(format!("no tie for the array of connectors `{}`", port.name));
            }
            let fill = |text: &str| text.replace("{k}", &k.to_string()).replace("{c}", &reference);
            let _ = writeln!(declarations, "  {}", fill(tie.declarations));
            let _ = writeln!(equations, "  {}", fill(tie.connects));
        } else if port.causality == Causality::Input {
            let Some(value) = input_value(port, k) else {
                return Err(format!("no value for the input `{}`", port.name));
            };
            if port.dims.is_empty() {
                let _ = writeln!(equations, "  {reference} = {value};");
            } else {
                let sizes: Vec<String> = (1..=port.dims.len())
                    .map(|d| format!("size({reference}, {d})"))
                    .collect();
                let _ = writeln!(equations, "  {reference} = fill({value}, {});", sizes.join(", "));
            }
        }
    }
    for (_, equation) in EQUATIONS.iter().filter(|(name, _)| *name == class.full_name) {
        let _ = writeln!(equations, "  {equation}");
    }
    Ok(format!(
        "model Harness\n{declarations}equation\n{equations}end Harness;\n"
    ))
}

/// A tiny model that uses a function (called with constant scalar arguments), a type, an
/// enumeration or a constant; or why the class cannot be used that simply (the reason is
/// counted among the skipped classes).
fn usage_model(class: &LibraryClass) -> Result<String, &'static str> {
    let name = &class.full_name;
    match class.kind {
        "function" => {
            // Constant arguments: an Integer or Boolean result of time-varying arguments would
            // change between events.
            let argument = |p: &Port| match (p.dims.is_empty(), p.scalar.as_deref()) {
                (true, Some("Real")) => Some("0.5"),
                (true, Some("Integer")) => Some("1"),
                (true, Some("Boolean")) => Some("true"),
                _ => None,
            };
            let inputs: Option<Vec<&str>> = class
                .connectors
                .iter()
                .filter(|p| p.causality == Causality::Input)
                .map(argument)
                .collect();
            let result = class
                .connectors
                .iter()
                .find(|p| p.causality == Causality::Output)
                .filter(|p| argument(p).is_some())
                .and_then(|p| p.scalar.as_deref());
            let (Some(inputs), Some(result)) = (inputs, result) else {
                return Err("function with arguments or result other than scalars of a predefined type");
            };
            Ok(format!(
                "model Use\n  {result} y;\nequation\n  y = {name}({});\nend Use;\n",
                inputs.join(", ")
            ))
        }
        "type" => {
            let value = match class.scalar.as_deref() {
                Some("Real") => "1.5",
                Some("Integer") => "1",
                Some("Boolean") => "true",
                _ => return Err("type that is not a predefined type"),
            };
            Ok(format!("model Use\n  {name} x;\nequation\n  x = {value};\nend Use;\n"))
        }
        "enumeration" => {
            let definition = class.definition.as_deref().unwrap_or_default();
            let first = definition.split('`').nth(1).ok_or("enumeration without literals")?;
            Ok(format!(
                "model Use\n  parameter {name} p = {name}.{first};\n  Real y;\nequation\n  \
                 y = if p == {name}.{first} then 1 else 2;\nend Use;\n"
            ))
        }
        "constant"
            if class.scalar.as_deref() == Some("Real")
                && class.definition.as_deref().is_some_and(|d| !d.is_empty()) =>
        {
            Ok(format!("model Use\n  Real y;\nequation\n  y = {name};\nend Use;\n"))
        }
        _ => Err("package component that is not a Real constant with a value"),
    }
}

/// Checks, compiles and runs `text` to t = 1, requiring every value of every row to be finite;
/// the failing stage and its first diagnostic otherwise.
fn check_and_run(text: &str) -> Result<(), (&'static str, String)> {
    let files = [("harness.eqm".to_string(), text.to_string())];
    let mut session = session_of(&files);
    let first_error = |session: &Session| {
        session
            .diagnostics()
            .iter()
            .find(|d| d.severity == eqm::Severity::Error)
            .map(|d| format!("{} {}", d.code, d.message))
            .unwrap_or_else(|| "no diagnostic".to_string())
    };
    let options = ModelOptions::default();
    if session.check(None, &options).is_none() {
        return Err(("check", first_error(&session)));
    }
    let Some(mut model) = session.compile(None, &options) else {
        return Err(("compile", first_error(&session)));
    };
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).map_err(|e| ("simulate", e.to_string()))?;
    // A class that ends the run itself (`terminate`, as `TerminateSimulation` does when its
    // condition becomes true) has run completely.
    let ended = result.summary.terminated.is_some();
    if !ended && result.time().last().is_none_or(|&t| (t - 1.0).abs() > 1e-9) {
        return Err((
            "simulate",
            format!("the run ended at {:?}, not at 1", result.time().last()),
        ));
    }
    for i in 0..result.len() {
        let (t, values) = result.row(i).expect("a row within the length");
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err((
                "finite",
                format!("{} = {} at t = {t}", result.columns()[k].name, values[k]),
            ));
        }
    }
    Ok(())
}

/// Every class of the library works: each model and block (not partial) is checked, flattened,
/// compiled and simulated to t = 1 in a harness that binds its signal inputs and ties its
/// physical connectors to references; each function of scalar Reals is called, each type,
/// enumeration and constant used, in a tiny model run the same way. All failures are reported
/// together.
#[test]
fn every_class_checks_flattens_and_simulates() {
    let classes = classes();
    let mut failures = Vec::new();
    let mut simulated = 0;
    let mut used = 0;
    let mut known_failures = 0;
    let mut skipped: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for class in &classes {
        let name = class.full_name.as_str();
        if let Some((_, reason)) = EXEMPT.iter().find(|(n, _)| *n == name) {
            *skipped.entry(reason).or_default() += 1;
            continue;
        }
        if class.partial {
            *skipped.entry("partial class").or_default() += 1;
            continue;
        }
        let text = match class.kind {
            "model" | "block" | "class" => match harness(class) {
                Ok(text) => {
                    simulated += 1;
                    text
                }
                Err(reason) => {
                    failures.push(format!("{name}: harness: {reason}"));
                    continue;
                }
            },
            "connector" => {
                *skipped
                    .entry("connector (used by the classes that have it)")
                    .or_default() += 1;
                continue;
            }
            "package" => {
                *skipped.entry("package").or_default() += 1;
                continue;
            }
            _ => match usage_model(class) {
                Ok(text) => {
                    used += 1;
                    text
                }
                Err(reason) => {
                    *skipped.entry(reason).or_default() += 1;
                    continue;
                }
            },
        };
        let known = KNOWN_FAILURES.iter().find(|(n, _, _)| *n == name);
        match (check_and_run(&text), known) {
            (Ok(()), None) => {}
            (Err((stage, diagnostic)), Some((_, known_stage, start)))
                if stage == *known_stage && diagnostic.starts_with(start) =>
            {
                known_failures += 1;
            }
            (Err((stage, diagnostic)), _) => failures.push(format!("{name}: {stage}: {diagnostic}")),
            (Ok(()), Some(_)) => failures.push(format!("{name}: passes now: remove its entry from KNOWN_FAILURES")),
        }
    }
    eprintln!(
        "library classes: {simulated} simulated in a harness, {used} used in a tiny model, \
         {known_failures} known failures, skipped: {skipped:#?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} library classes fail:\n{}",
        failures.len(),
        classes.len(),
        failures.join("\n")
    );
    // Guards against a walk or a harness that silently covers nothing.
    assert!(simulated > 250, "only {simulated} classes simulated");
}

/// Checks that the only model of `text` does not flatten and that `code` is among the errors.
fn assert_flattening_fails(text: &str, code: &str) {
    let files = [("m.eqm".to_string(), text.to_string())];
    let mut session = session_of(&files);
    assert!(session.flatten(None, &ModelOptions::default()).is_none());
    assert!(
        session.diagnostics().iter().any(|d| d.code == code),
        "{:?}",
        session.diagnostics()
    );
}

/// A dimension of a declaration may be a size of the component itself, taken from a dimension
/// before it (the MSL declares square matrices as `A[:, size(A, 1)]`); a size that would need
/// the dimension being found is still a cycle.
#[test]
fn a_dimension_may_be_a_size_of_the_component_itself() {
    let text = "model M
  parameter Real A[:, size(A, 1)] = [1, 2; 3, 4];
  Real y;
equation
  y = sum(A) + size(A, 2);
end M;
";
    let mut model = crate::compile(text);
    let result = model.simulate(&RunSettings {
        stop: Some(0.0),
        ..RunSettings::default()
    });
    // 1 + 2 + 3 + 4 = 10, and the second size is the first one, 2.
    assert_eq!(result.expect("the run finishes").final_value("y"), Some(12.0));

    assert_flattening_fails(
        "model M\n  parameter Real A[:, size(A, 2)] = [1, 2; 3, 4];\nend M;\n",
        "E0216",
    );
}

/// Every public parameter of every library class has a description string.
#[test]
fn every_parameter_has_a_description() {
    let classes = classes();
    let missing: Vec<String> = classes
        .iter()
        .flat_map(|c| {
            c.parameters
                .iter()
                .filter(|p| p.description.as_deref().is_none_or(|d| d.trim().is_empty()))
                .map(move |p| format!("{}.{}", c.full_name, p.name))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "library parameters without a description string: {missing:#?}"
    );
}

/// An equation between two empty arrays equates nothing, whatever their element type: a block
/// with `nu = 0` Boolean inputs (`Modelica.Blocks.MathBoolean.And`) bound by `fill(..., 0)`
/// compiles, while a nonempty Boolean array equated with Reals is still a type error.
#[test]
fn an_equation_between_empty_arrays_equates_nothing() {
    let text = "model M
  Boolean u[0];
  Real x(start = 1, fixed = true);
equation
  u = fill(time >= 0.5, 0);
  der(x) = -x;
end M;
";
    let mut model = crate::compile(text);
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .expect("the run finishes");
    let x1 = result.final_value("x").expect("x is a column");
    assert!((x1 - (-1.0f64).exp()).abs() < 1e-5, "x(1) = {x1}");

    assert_flattening_fails(
        "model M\n  Boolean u[2];\nequation\n  u = fill(1.5, 2);\nend M;\n",
        "E0306",
    );
}
