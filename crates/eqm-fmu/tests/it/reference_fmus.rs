//! The Reference FMU models written in EQM (`examples/fmi/`), exported as FMI 2.0 and 3.0 and
//! simulated by FMPy in Co-Simulation and Model Exchange, against the reference outputs of the
//! Modelica Association's own Reference FMUs (`../shared/reference-fmus`, or the directory
//! `EQM_REFERENCE_FMUS` names; skipped without them) with the tube comparison of `eqm compare`.
//!
//! The references are written by the Reference FMUs' fixed-step forward Euler (step 0.1 for
//! Dahlquist, 0.01 for the others; their Dahlquist gives x(0.1) = 0.9, where exp(-0.1) =
//! 0.9048), whose global error is of the order of its step: a tube of 2 % of each signal's range
//! holds both that error and EQM's accurate result, while a wrong equation, a missed event or an
//! event at another time leaves it. Stair is exact (a counter of time events): its tube is the
//! standard 0.2 %.

use super::exported_file;
use eqm::compare::{SignalTable, compare};
use eqm::fmi::FmiVersion;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the Reference FMUs' files.
fn references() -> PathBuf {
    match std::env::var_os("EQM_REFERENCE_FMUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(eqm_testkit::REPO).join("../shared/reference-fmus"),
    }
}

/// The reference outputs of Reference FMU `name`, or `None` (with a message) when the test data
/// is not beside the repository.
fn reference(name: &str) -> Option<SignalTable> {
    let path = references().join(format!("{name}/{name}_out.csv"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("{} is absent: skipped", path.display());
        return None;
    };
    Some(SignalTable::parse_csv(&text).expect("the reference reads"))
}

/// FMPy's simulation of the FMU at `dir` as `kind` on the reference's grid: the result as a
/// table of `signals`, or `None` (with a message) without Python and FMPy.
fn fmpy_table(dir: &Path, kind: &str, reference: &SignalTable, signals: &[&str]) -> Option<SignalTable> {
    let probe = Command::new("python3").args(["-c", "import fmpy"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("python3 with fmpy is not installed: skipped");
        return None;
    }
    let time = reference.time();
    let (stop, interval) = (time[time.len() - 1], time[1] - time[0]);
    let script = format!(
        "import fmpy\nr = fmpy.simulate_fmu({dir:?}, fmi_type={kind:?}, stop_time={stop}, output_interval={interval}, \
relative_tolerance=1e-8, output={signals:?})\nprint(','.join(r.dtype.names))\nfor row in r: print(','.join(repr(float(v)) for v in row))\n",
        dir = dir.display().to_string(),
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "FMPy failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(right_limits(&String::from_utf8_lossy(&out.stdout)))
}

/// The table of FMPy's CSV `text` with one row per time: at an event Model Exchange records
/// the values before and after it at one time, and the reference, sampled on its grid, holds
/// the value after it (the right limit), which is kept.
fn right_limits(text: &str) -> SignalTable {
    let mut lines: Vec<&str> = text.lines().collect();
    let time = |line: &str| line.split(',').next().map(str::to_string);
    let mut k = 1;
    while k + 1 < lines.len() {
        if time(lines[k]) == time(lines[k + 1]) {
            lines.remove(k);
        } else {
            k += 1;
        }
    }
    SignalTable::parse_csv(&lines.join("\n")).expect("FMPy's result reads")
}

/// `table` up to time `until`.
fn until(table: &SignalTable, until: f64) -> SignalTable {
    let rows = table.time().iter().take_while(|t| **t <= until).count();
    let columns = (0..table.names().len())
        .map(|k| table.column(k)[..rows].to_vec())
        .collect();
    SignalTable::new(table.time()[..rows].to_vec(), table.names().to_vec(), columns).expect("a part of a table")
}

/// Every combination of version and interface of example `name` against its reference;
/// Model Exchange up to `me_until`.
fn against_reference(name: &str, signals: &[&str], tolerance: f64, me_until: f64) {
    let Some(reference) = reference(name) else { return };
    let path = Path::new(eqm_testkit::REPO).join(format!("examples/fmi/{name}.eqm"));
    let wanted: Vec<String> = signals.iter().map(|s| s.to_string()).collect();
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_file(&path, name, version);
        for kind in ["CoSimulation", "ModelExchange"] {
            let Some(result) = fmpy_table(&dir, kind, &reference, signals) else {
                return;
            };
            let (result, reference) = match kind {
                "ModelExchange" => (until(&result, me_until), until(&reference, me_until)),
                _ => (result, reference.clone()),
            };
            let report = compare(&result, &reference, Some(&wanted), tolerance).expect("the tables compare");
            let failed: Vec<String> = report
                .signals
                .iter()
                .filter(|s| !s.verdict.passed())
                .map(|s| format!("{s:?}"))
                .collect();
            assert!(failed.is_empty(), "{name} {version:?} {kind}: {failed:?}");
        }
    }
}

/// In Model Exchange up to 2.4 s: from there the bounces come closer than FMPy's integrator
/// steps (it sees no sign change of the event indicator over a step that holds two impacts), and
/// the ball falls through the floor in the importer, not in the model.
#[test]
fn bouncing_ball_matches_the_reference_fmu() {
    against_reference("BouncingBall", &["h", "v"], 0.02, 2.4);
}

#[test]
fn dahlquist_matches_the_reference_fmu() {
    against_reference("Dahlquist", &["x"], 0.02, f64::INFINITY);
}

#[test]
fn stair_matches_the_reference_fmu() {
    against_reference("Stair", &["counter"], 0.002, f64::INFINITY);
}

/// Over 20 s (three cycles) the phase error of the reference's Euler grows to about 5 % of the
/// span: the tube is 6 %.
#[test]
fn van_der_pol_matches_the_reference_fmu() {
    against_reference("VanDerPol", &["x0", "x1"], 0.06, f64::INFINITY);
}

/// The model reads its data file `y.txt` when it is compiled, and the FMU carries the file.
#[test]
fn resource_matches_the_reference_fmu() {
    against_reference("Resource", &["y"], 0.002, f64::INFINITY);
}

/// The FMU's runtime compiles the model with the data file the FMU carries, not with the file
/// where the model was exported from: an FMU of a copy of the Resource model whose `y.txt`
/// starts with `Q` (code 81) gives 81 in both interfaces after the copy and its data file are
/// gone.
#[test]
fn an_fmu_reads_its_data_files_from_its_resources() {
    let source = std::fs::read_to_string(Path::new(eqm_testkit::REPO).join("examples/fmi/Resource.eqm")).unwrap();
    let copy = std::env::temp_dir().join(format!("eqm-fmu-resource-{}", std::process::id()));
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join("Resource.eqm"), source).unwrap();
    std::fs::write(copy.join("y.txt"), "Q and more\nsecond line\n").unwrap();
    let exports: Vec<PathBuf> = [FmiVersion::Fmi2, FmiVersion::Fmi3]
        .into_iter()
        .map(|version| exported_file(&copy.join("Resource.eqm"), "Resource", version).0)
        .collect();
    std::fs::remove_dir_all(&copy).unwrap();
    let reference = SignalTable::new(vec![0.0, 1.0], vec!["y".to_string()], vec![vec![81.0, 81.0]]).unwrap();
    for dir in &exports {
        for kind in ["CoSimulation", "ModelExchange"] {
            let Some(result) = fmpy_table(dir, kind, &reference, &["y"]) else {
                return;
            };
            let k = result.names().iter().position(|n| n == "y").expect("y is an output");
            assert_eq!(result.column(k), [81.0, 81.0], "{kind} of {}", dir.display());
        }
    }
}

/// The columns `names` of the CSV `text` (`false`/`true` read as 0/1), row by row with the
/// time first.
fn csv_columns(text: &str, names: &[&str]) -> Vec<Vec<f64>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let mut wanted = vec![0];
    for name in names {
        wanted.push(
            header
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("no column {name}")),
        );
    }
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            wanted
                .iter()
                .map(|&k| match fields[k] {
                    "false" => 0.0,
                    "true" => 1.0,
                    v => v.parse().unwrap_or_else(|_| panic!("`{v}` is not a number")),
                })
                .collect()
        })
        .collect()
}

/// `rows` (time first) with one row per time: at an event Model Exchange records a row before
/// and after it, and the one after it (the right limit) is kept.
fn right_limit_rows(mut rows: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    rows.dedup_by(|later, earlier| {
        let same = later[0] == earlier[0];
        if same {
            earlier.clone_from(later);
        }
        same
    });
    rows
}

/// Feedthrough: each output is its input. Without inputs set, FMPy's results are the
/// reference's (the reference outputs are those of the start values: zero, false and the first
/// enumeration literal, 1, at every row); with the reference's input file applied, `Int32_output` is `Int32_input` (the file's
/// only input EQM's Feedthrough has: -2147483648 until 1 s, 2147483647 from then on), exactly,
/// with the discrete input's change where the importer makes it.
/// Both in FMI 2 and 3, Co-Simulation and Model Exchange, after FMPy's validation.
#[test]
fn feedthrough_matches_the_reference_fmu() {
    let dir = references().join("Feedthrough");
    let Ok(reference) = std::fs::read_to_string(dir.join("Feedthrough_out.csv")) else {
        eprintln!("{} is absent: skipped", dir.display());
        return;
    };
    let outputs = [
        "Float64_continuous_output",
        "Float64_discrete_output",
        "Int32_output",
        "Boolean_output",
        "Enumeration_output",
    ];
    let expected = csv_columns(&reference, &outputs);
    let probe = Command::new("python3").args(["-c", "import fmpy"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("python3 with fmpy is not installed: skipped");
        return;
    }
    let path = Path::new(eqm_testkit::REPO).join("examples/fmi/Feedthrough.eqm");
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (fmu, _) = exported_file(&path, "Feedthrough", version);
        for kind in ["CoSimulation", "ModelExchange"] {
            let script = format!(
                "import fmpy, numpy as np\nfrom fmpy.validation import validate_fmu\nproblems = validate_fmu({fmu:?})\n\
assert not problems, problems\n\
out = {outputs:?}\n\
r = fmpy.simulate_fmu({fmu:?}, fmi_type={kind:?}, stop_time=2, output_interval=0.1, output=out)\n\
u = np.array([(0.0, -2147483648), (1.0, 2147483647)], dtype=[('time', np.float64), ('Int32_input', np.int32)])\n\
d = fmpy.simulate_fmu({fmu:?}, fmi_type={kind:?}, stop_time=2, output_interval=0.1, input=u, output=['Int32_output'])\n\
print('=== plain')\nprint(','.join(r.dtype.names))\nfor row in r: print(','.join(repr(float(v)) for v in row))\n\
print('=== with input')\nfor row in d: print(repr(float(row[0])) + ',' + repr(float(row[1])))\n",
                fmu = fmu.display().to_string(),
            );
            let out = Command::new("python3")
                .args(["-c", &script])
                .output()
                .expect("python3 runs");
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(
                out.status.success(),
                "FMPy failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // FMPy writes its warnings (inputs the file does not set) before the results.
            let (_, results) = text.split_once("=== plain\n").expect("the results");
            let (plain, driven) = results.split_once("=== with input\n").expect("two runs");
            let rows = right_limit_rows(csv_columns(plain, &outputs));
            assert_eq!(rows.len(), expected.len(), "{version:?} {kind}: rows");
            for (row, want) in rows.iter().zip(&expected) {
                assert!(
                    (row[0] - want[0]).abs() < 1e-9,
                    "{version:?} {kind}: at {} instead of {}",
                    row[0],
                    want[0]
                );
                assert_eq!(row[1..], want[1..], "{version:?} {kind} at {}", row[0]);
            }
            let driven = right_limit_rows(csv_columns(&format!("time,y\n{driven}"), &["y"]));
            for row in driven {
                let (t, y) = (row[0], row[1]);
                // FMPy sets the inputs at the start of each communication step, so in
                // Co-Simulation the row at 1 s (the end of the step from 0.9 s) still has the
                // old input; in Model Exchange the change is an event at 1 s, and the row after
                // it has the new one.
                let changed = match kind {
                    "CoSimulation" => t > 1.0 + 1e-9,
                    _ => t >= 1.0,
                };
                let input = if changed { 2147483647.0 } else { -2147483648.0 };
                assert_eq!(y, input, "{version:?} {kind}: Int32_output({t})");
            }
        }
    }
}
