//! Examples of the Modelica Standard Library, read unmodified from an installation beside the
//! repository (`../shared/msl`), run as a user runs them (`eqm run --model <Class> --library
//! DIR`, with each example's `experiment` annotation) and compared with the Modelica
//! Association's reference results (`../shared/msl-reference/<Class>/`) by `eqm compare` with its
//! default tube (0.2 % of each signal's range). The tests are skipped, saying so, where the library
//! or the references are not installed.
//!
//! The list is a representative subset of the examples that match today, from every package that
//! has matching examples (Blocks, ComplexBlocks, Analog, Batteries, Digital, Spice3, FluxTubes,
//! Math, Rotational, Translational, HeatTransfer, FluidHeatFlow, Utilities); `docs/msl.md` has the
//! whole table. Two examples of packages without reference results here (multibody and
//! quasi-static, whose connectors are overconstrained) are checked against their equations.

use crate::cli::eqm;
use std::path::{Path, PathBuf};

/// Examples whose run must match the reference trajectory.
const MATCHING: &[&str] = &[
    "Modelica.Blocks.Examples.BooleanNetwork1",
    "Modelica.Blocks.Examples.BusUsage",
    "Modelica.Blocks.Examples.CompareSincExpSine",
    "Modelica.Blocks.Examples.Filter",
    "Modelica.Blocks.Examples.FilterWithDifferentiation",
    "Modelica.Blocks.Examples.FilterWithRiseTime",
    "Modelica.Blocks.Examples.IntegerNetwork1",
    "Modelica.Blocks.Examples.Interaction1",
    "Modelica.Blocks.Examples.InverseModel",
    "Modelica.Blocks.Examples.LogicalNetwork1",
    "Modelica.Blocks.Examples.Modulation",
    "Modelica.Blocks.Examples.Noise.AutomaticSeed",
    "Modelica.Blocks.Examples.Noise.Densities",
    "Modelica.Blocks.Examples.Noise.Distributions",
    "Modelica.Blocks.Examples.Noise.DrydenContinuousTurbulence",
    "Modelica.Blocks.Examples.Noise.ImpureGenerator",
    "Modelica.Blocks.Examples.Noise.NormalNoiseProperties",
    "Modelica.Blocks.Examples.Noise.UniformNoise",
    "Modelica.Blocks.Examples.Noise.UniformNoiseProperties",
    "Modelica.Blocks.Examples.PID_Controller",
    "Modelica.Blocks.Examples.RealNetwork1",
    "Modelica.Blocks.Examples.SlewRateLimiter",
    "Modelica.Blocks.Examples.TotalHarmonicDistortion",
    "Modelica.ComplexBlocks.Examples.ShowTransferFunction",
    "Modelica.ComplexBlocks.Examples.TestConversionBlock",
    "Modelica.Electrical.Analog.Examples.AD_DA_conversion",
    "Modelica.Electrical.Analog.Examples.CauerLowPassAnalog",
    "Modelica.Electrical.Analog.Examples.CauerLowPassOPV",
    "Modelica.Electrical.Analog.Examples.CharacteristicIdealDiodes",
    "Modelica.Electrical.Analog.Examples.CharacteristicThyristors",
    "Modelica.Electrical.Analog.Examples.ControlledSwitchWithArc",
    "Modelica.Electrical.Analog.Examples.HeatingMOSInverter",
    "Modelica.Electrical.Analog.Examples.HeatingNPN_NORGate",
    "Modelica.Electrical.Analog.Examples.HeatingPNP_NORGate",
    "Modelica.Electrical.Analog.Examples.HeatingRectifier",
    "Modelica.Electrical.Analog.Examples.IdealTriacCircuit",
    "Modelica.Electrical.Analog.Examples.InvertingAmp",
    "Modelica.Electrical.Analog.Examples.NandGate",
    "Modelica.Electrical.Analog.Examples.OpAmps.Adder",
    "Modelica.Electrical.Analog.Examples.OpAmps.ControlCircuit",
    "Modelica.Electrical.Analog.Examples.OpAmps.DifferentialAmplifier",
    "Modelica.Electrical.Analog.Examples.OpAmps.InvertingSchmittTrigger",
    "Modelica.Electrical.Analog.Examples.OpAmps.LCOscillator",
    "Modelica.Electrical.Analog.Examples.OpAmps.Multivibrator",
    "Modelica.Electrical.Analog.Examples.OpAmps.SchmittTrigger",
    "Modelica.Electrical.Analog.Examples.OpAmps.SignalGenerator",
    "Modelica.Electrical.Analog.Examples.OpAmps.Subtracter",
    "Modelica.Electrical.Analog.Examples.OvervoltageProtection",
    "Modelica.Electrical.Analog.Examples.ParallelResonance",
    "Modelica.Electrical.Analog.Examples.Resistor",
    "Modelica.Electrical.Analog.Examples.ResonanceCircuits",
    "Modelica.Electrical.Analog.Examples.SeriesResonance",
    "Modelica.Electrical.Analog.Examples.ShowSaturatingInductor",
    "Modelica.Electrical.Analog.Examples.ShowVariableResistor",
    "Modelica.Electrical.Analog.Examples.SwitchWithArc",
    "Modelica.Electrical.Analog.Examples.ThyristorBehaviourTest",
    "Modelica.Electrical.Batteries.Examples.CCCV_Cell",
    "Modelica.Electrical.Batteries.Examples.CCCV_CellRC",
    "Modelica.Electrical.Batteries.Examples.CCCVcharging",
    "Modelica.Electrical.Batteries.Examples.ShowImpedance",
    "Modelica.Electrical.Digital.Examples.BUF3S",
    "Modelica.Electrical.Digital.Examples.Counter3",
    "Modelica.Electrical.Digital.Examples.DFFREG",
    "Modelica.Electrical.Digital.Examples.DFFREGL",
    "Modelica.Electrical.Digital.Examples.DLATREG",
    "Modelica.Electrical.Digital.Examples.FullAdder",
    "Modelica.Electrical.Digital.Examples.HalfAdder",
    "Modelica.Electrical.Digital.Examples.VectorDelay",
    "Modelica.Electrical.Spice3.Examples.CascodeCircuit",
    "Modelica.Electrical.Spice3.Examples.CoupledInductors",
    "Modelica.Electrical.Spice3.Examples.Graetz",
    "Modelica.Electrical.Spice3.Examples.Oscillator",
    "Modelica.Electrical.Spice3.Examples.Spice3BenchmarkRtlInverter",
    "Modelica.Magnetic.FluxTubes.Examples.BasicExamples.QuadraticCoreAirgap",
    "Modelica.Magnetic.FluxTubes.Examples.BasicExamples.ToroidalCoreAirgap",
    "Modelica.Magnetic.FluxTubes.Examples.BasicExamples.ToroidalCoreQuadraticCrossSection",
    "Modelica.Magnetic.FluxTubes.Examples.SolenoidActuator.ComparisonQuasiStatic",
    "Modelica.Math.FastFourierTransform.Examples.RealFFT2",
    "Modelica.Math.Nonlinear.Examples.QuadratureLobatto3",
    "Modelica.Math.Random.Examples.GenerateRandomNumbers",
    "Modelica.Mechanics.Rotational.Examples.CoupledClutches",
    "Modelica.Mechanics.Rotational.Examples.First",
    "Modelica.Mechanics.Rotational.Examples.Friction",
    "Modelica.Mechanics.Rotational.Examples.GenerationOfFMUs",
    "Modelica.Mechanics.Rotational.Examples.LossyGearDemo1",
    "Modelica.Mechanics.Rotational.Examples.LossyGearDemo3",
    "Modelica.Mechanics.Rotational.Examples.OneWayClutch",
    "Modelica.Mechanics.Rotational.Examples.OneWayClutchDisengaged",
    "Modelica.Mechanics.Rotational.Examples.SimpleGearShift",
    "Modelica.Mechanics.Translational.Examples.Brake",
    "Modelica.Mechanics.Translational.Examples.Friction",
    "Modelica.Mechanics.Translational.Examples.GenerationOfFMUs",
    "Modelica.Mechanics.Translational.Examples.Oscillator",
    "Modelica.Mechanics.Translational.Examples.PreLoad",
    "Modelica.Mechanics.Translational.Examples.Vehicle",
    "Modelica.StateGraph.Examples.ExecutionPaths",
    "Modelica.StateGraph.Examples.FirstExample",
    "Modelica.StateGraph.Examples.FirstExample_Variant2",
    "Modelica.StateGraph.Examples.ShowCompositeStep",
    "Modelica.Thermal.FluidHeatFlow.Examples.SimpleCooling",
    "Modelica.Thermal.FluidHeatFlow.Examples.TestCylinder",
    "Modelica.Thermal.FluidHeatFlow.Examples.TestOpenTank",
    "Modelica.Thermal.FluidHeatFlow.Examples.TwoMass",
    "Modelica.Thermal.FluidHeatFlow.Examples.TwoTanks",
    "Modelica.Thermal.HeatTransfer.Examples.ControlledTemperature",
    "Modelica.Thermal.HeatTransfer.Examples.TwoMasses",
    "Modelica.Utilities.Examples.WriteRealMatrixToFile",
];

/// The installed library and the reference results, when both are beside the repository.
fn installation() -> Option<(PathBuf, PathBuf)> {
    let shared = Path::new(crate::REPO).join("../shared");
    let (library, references) = (shared.join("msl"), shared.join("msl-reference"));
    if library.join("Modelica/package.mo").is_file() && references.is_dir() {
        Some((library, references))
    } else {
        eprintln!(
            "skipped: the Modelica Standard Library or its reference results are not installed in {}",
            shared.display()
        );
        None
    }
}

/// Runs one example into a CSV file and compares it with its reference: `None` when it
/// matches, otherwise what went wrong.
fn run_and_compare(class: &str, library: &Path, references: &Path, work: &Path) -> Option<String> {
    let folder = class
        .split('.')
        .fold(references.to_path_buf(), |path, part| path.join(part));
    let name = class.rsplit('.').next().expect("a class name");
    let result = work.join(format!("{class}.csv"));
    let library = library.to_str().expect("a UTF-8 path");
    let result_text = result.to_str().expect("a UTF-8 path");
    // Run in the work directory: an example may write files where it runs
    // (`Modelica.Utilities.Examples.WriteRealMatrixToFile` writes its matrices).
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(["run", "--model", class, "--library", library, "--out", result_text])
        .current_dir(work)
        .output()
        .expect("the eqm binary runs");
    let (code, err) = (
        run.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    );
    if code != 0 {
        return Some(format!("{class}: eqm run failed with exit code {code}:\n{err}"));
    }
    let reference = folder.join(format!("{name}.csv.gz"));
    let signals = folder.join("comparisonSignals.txt");
    let (code, out, err) = eqm(&[
        "compare",
        result_text,
        reference.to_str().expect("a UTF-8 path"),
        "--signals",
        signals.to_str().expect("a UTF-8 path"),
    ]);
    (code != 0).then(|| format!("{class}: eqm compare exited with {code}:\n{out}{err}"))
}

#[test]
fn representative_examples_of_the_library_match_their_reference_results() {
    let Some((library, references)) = installation() else {
        return;
    };
    assert!(MATCHING.len() >= 20, "the subset names at least 20 examples");
    let work = std::env::temp_dir().join(format!("eqm-msl-examples-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let failures: Vec<String> = MATCHING
        .iter()
        .filter_map(|class| run_and_compare(class, &library, &references, &work))
        .collect();
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_column_of_the_analysis_with_every_branch_is_written_in_every_mode() {
    // LossyGearDemo1's modes name the acceleration of `Inertia2` after different aliases of its
    // angle (`der(der(Inertia2.phi))` in one, `der(der(gear.flange_b.phi))` in another): the
    // default column is read through the alias in each mode. By the inertia's equations
    // (w = der(phi), a = der(w)) it equals `Inertia2.a` on every row.
    let Some((library, _)) = installation() else {
        return;
    };
    let work = std::env::temp_dir().join(format!("eqm-msl-columns-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let out = work.join("LossyGearDemo1.csv");
    let class = "Modelica.Mechanics.Rotational.Examples.LossyGearDemo1";
    let (code, _, err) = eqm(&[
        "run",
        "--model",
        class,
        "--library",
        library.to_str().expect("a UTF-8 path"),
        "--out",
        out.to_str().expect("a UTF-8 path"),
    ]);
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("W0703"), "{err}");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let (dd, a) = (column("der(der(Inertia2.phi))"), column("Inertia2.a"));
    let mut rows = 0;
    for line in lines {
        let values: Vec<f64> = line.split(',').map(|v| v.parse().expect("a number")).collect();
        assert!(
            (values[dd] - values[a]).abs() <= 1e-9 * (1.0 + values[a].abs()),
            "t = {}: der(der(Inertia2.phi)) = {}, Inertia2.a = {}",
            values[0],
            values[dd],
            values[a]
        );
        rows += 1;
    }
    assert!(rows > 100, "{rows} rows");
}

/// Runs an example of the installed library with `extra` arguments and returns the columns of
/// `vars` row by row (time first); `None` where the library is not installed.
fn run_columns(class: &str, vars: &str, extra: &[&str]) -> Option<Vec<Vec<f64>>> {
    let (library, _) = installation()?;
    let work = std::env::temp_dir().join(format!("eqm-msl-columns-{}-{class}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let out = work.join("result.csv");
    let mut args = vec![
        "run",
        "--model",
        class,
        "--library",
        library.to_str().expect("a UTF-8 path"),
        "--vars",
        vars,
        "--out",
        out.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = eqm(&args);
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(code, 0, "{class}: {err}");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let wanted: Vec<usize> = std::iter::once("time")
        .chain(vars.split(','))
        .map(|name| {
            header
                .iter()
                .position(|h| *h == name)
                .unwrap_or_else(|| panic!("no {name}"))
        })
        .collect();
    let rows = lines
        .map(|line| {
            let values: Vec<f64> = line.split(',').map(|v| v.parse().expect("a number")).collect();
            wanted.iter().map(|&k| values[k]).collect()
        })
        .collect();
    Some(rows)
}

#[test]
fn the_multibody_pendulum_follows_its_equation_of_motion() {
    // A body of 1 kg at r_CM = 0.5 m on a revolute joint about z with a damper of 0.1 N.m.s/rad,
    // starting horizontal at rest, in the world's gravity g = 9.80665 m/s² along -y. Its angle
    // obeys J phi'' = -m g r cos(phi) - d phi' with J = m r² + I_33 = 0.251 kg.m², integrated here
    // by the classical Runge-Kutta method with a step of 1e-4 s (error far below 1e-8). The
    // orientation passes the overconstrained connections of the world, the joint and the body.
    let Some(rows) = run_columns(
        "Modelica.Mechanics.MultiBody.Examples.Elementary.Pendulum",
        "rev.phi",
        &["--rtol", "1e-10"],
    ) else {
        return;
    };
    let (j, mgr, d) = (0.251, 0.5 * 9.80665, 0.1);
    let f = |y: [f64; 2]| [y[1], (-mgr * y[0].cos() - d * y[1]) / j];
    // Steps are counted, not times summed, so that no rounding of a sum skips a step.
    let (h, mut steps, mut y) = (1e-4, 0u64, [0.0f64, 0.0]);
    let mut worst: f64 = 0.0;
    for row in &rows {
        while steps < (row[0] / h).round() as u64 {
            let k1 = f(y);
            let k2 = f([y[0] + h / 2.0 * k1[0], y[1] + h / 2.0 * k1[1]]);
            let k3 = f([y[0] + h / 2.0 * k2[0], y[1] + h / 2.0 * k2[1]]);
            let k4 = f([y[0] + h * k3[0], y[1] + h * k3[1]]);
            for k in 0..2 {
                y[k] += h / 6.0 * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k]);
            }
            steps += 1;
        }
        worst = worst.max((row[1] - y[0]).abs());
    }
    assert!(rows.len() > 100, "{} rows", rows.len());
    assert!(worst < 1e-6, "largest difference from the equation of motion: {worst}");
}

#[test]
fn a_quasi_static_series_resonance_follows_its_impedance() {
    // V = 1 V across R = 0.1 ohm, L = C = 1/(2 pi) in series while the frequency ramps up: the
    // current's magnitude is 1/sqrt(R² + (w L - 1/(w C))²), through the overconstrained reference
    // angles of the quasi-static pins.
    let Some(rows) = run_columns(
        "Modelica.Electrical.QuasiStatic.SinglePhase.Examples.SeriesResonance",
        "resistor.omega,resistor.abs_i",
        &[],
    ) else {
        return;
    };
    let lc = 1.0 / (2.0 * std::f64::consts::PI);
    let mut checked = 0;
    for row in rows.iter().filter(|row| row[1] > 1e-3) {
        let reactance = row[1] * lc - 1.0 / (row[1] * lc);
        let expected = 1.0 / (0.01 + reactance * reactance).sqrt();
        assert!(
            (row[2] - expected).abs() <= 1e-9 * expected,
            "at t = {}: {} against {expected}",
            row[0],
            row[2]
        );
        checked += 1;
    }
    assert!(checked > 100, "{checked} rows checked");
}
