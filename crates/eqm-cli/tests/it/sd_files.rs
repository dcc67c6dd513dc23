//! Stella and XMILE files on the command line: `eqm run` by the extension and with
//! `--format`, the results under the file's names (quoted in the CSV header where needed),
//! `eqm import` to standard output and to a file, and diagnostics at the XML line; Vensim
//! models that read data files beside them (a `.csv` written here, and an `.xlsx` workbook of
//! the suite against Vensim's own run).

use crate::cli::eqm;
use std::path::PathBuf;

/// A scratch directory of this test process with `files` (name, text) written into it.
fn scratch(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-sd-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a scratch file");
    }
    dir
}

/// A draining stock with names that need quoting in a CSV header and in `.eqm`.
const MODEL: &str = r#"<xmile xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0" version="1.0">
  <header><name>Drain</name></header>
  <sim_specs method="Euler"><start>0</start><stop>2</stop><dt>0.5</dt></sim_specs>
  <model>
    <variables>
      <stock name="Water, in litres"><eqn>10</eqn><outflow>drain</outflow></stock>
      <flow name="drain"><eqn>"Water, in litres"/2</eqn></flow>
    </variables>
  </model>
</xmile>
"#;

#[test]
fn a_stella_file_runs_under_its_own_names_with_its_own_dt() {
    let dir = scratch("run", &[("drain.stmx", MODEL), ("drain.txt", MODEL)]);
    let path = dir.join("drain.stmx");
    let (code, out, err) = eqm(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("time,\"Water, in litres\",drain,INITIAL TIME,FINAL TIME,TIME STEP,SAVEPER")
    );
    // W(k+1) = W(k)*(1 - 0.5/2): 10, 7.5, 5.625, 4.21875, 3.1640625.
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 5);
    assert!(rows[4].starts_with("2,3.1640625,1.58203125,"), "{}", rows[4]);
    // Any extension with --format.
    let other = dir.join("drain.txt");
    let (code, out2, err) = eqm(&["run", other.to_str().unwrap(), "--format", "xmile"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out2, out);
    let (code, _, err) = eqm(&["run", other.to_str().unwrap(), "--format", "cobol"]);
    assert_eq!(code, 2, "an unknown format is a usage error");
    assert!(err.contains("unknown format `cobol`"), "{err}");
}

#[test]
fn import_writes_the_eqm_text_to_standard_output_or_a_file() {
    let dir = scratch("import", &[("drain.xmile", MODEL)]);
    let path = dir.join("drain.xmile");
    let (code, out, err) = eqm(&["import", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("model Drain\n"), "{out}");
    assert!(
        out.contains("SystemDynamics.Reservoirs.Stock 'Water, in litres'(m(start = 10, fixed = true));"),
        "{out}"
    );
    assert!(
        out.contains("connect('Water, in litres'.outflow, drain.inflow);"),
        "{out}"
    );
    assert!(out.contains("drain.u = 'Water, in litres'.m/2;"), "{out}");
    assert!(out.contains("__eqm(solver = \"euler\", step = 0.5)"), "{out}");
    let target = dir.join("drain.eqm");
    let (code, printed, err) = eqm(&["import", path.to_str().unwrap(), "--out", target.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(printed.is_empty());
    assert_eq!(std::fs::read_to_string(&target).expect("the file written"), out);
    // The imported text runs to the same rows as the file itself (the flow's rate is its
    // component's `rate` there).
    let (_, from_file, _) = eqm(&["run", path.to_str().unwrap(), "--vars", "drain"]);
    let (code, from_text, err) = eqm(&["run", target.to_str().unwrap(), "--vars", "drain.rate"]);
    assert_eq!(code, 0, "{err}");
    let rows = |csv: &str| csv.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(rows(&from_text), rows(&from_file));
    assert_eq!(rows(&from_file).len(), 5);
}

#[test]
fn an_unknown_name_is_reported_at_its_xml_line() {
    let broken = MODEL.replace("litres\"/2", "litres\"/rate");
    let dir = scratch("check", &[("broken.xmile", broken.as_str())]);
    let path = dir.join("broken.xmile");
    let (code, _, err) = eqm(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("E1004"), "{err}");
    assert!(err.contains("broken.xmile:7:"), "the XML line of the equation: {err}");
    let (code, out, err) = eqm(&["import", path.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (1, ""), "nothing is written: {err}");
}

/// The teacup of `examples/sd/`, as XMILE and as Vensim, runs with its file's specs (DT =
/// 0.125, results every minute) and gives Euler's iterates: `T(n) = 70 + 110*(1 - DT/10)^n`
/// after `n` steps, 240 of them at t = 30.
#[test]
fn the_example_teacup_runs_from_both_formats_by_euler_s_recurrence() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/sd");
    for file in ["teacup.xmile", "teacup.mdl"] {
        let path = examples.join(file);
        let (code, out, err) = eqm(&["run", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{file}: {err}");
        let rows: Vec<&str> = out.lines().collect();
        assert!(
            rows[0].starts_with("time,Teacup Temperature,Heat Loss to Room"),
            "{file}: {}",
            rows[0]
        );
        assert_eq!(rows.len(), 32, "{file}: a header and the minutes 0..=30");
        for (minute, row) in rows[1..].iter().enumerate() {
            let values: Vec<f64> = row.split(',').map(|v| v.parse().expect("a number")).collect();
            let expected = 70.0 + 110.0 * (1.0f64 - 0.125 / 10.0).powi(8 * minute as i32);
            assert_eq!(values[0], minute as f64, "{file}");
            assert!(
                (values[1] - expected).abs() <= 1e-12 * expected,
                "{file} at {minute}: {} vs {expected}",
                values[1]
            );
            assert!(
                (values[2] - (values[1] - 70.0) / 10.0).abs() <= 1e-12,
                "{file} at {minute}"
            );
        }
    }
}

#[test]
fn a_vensim_data_equation_reads_its_csv_file_beside_the_model() {
    let model = "x := GET DIRECT DATA('data.csv', ',', 'A', 'B2') ~~|\n\
held :HOLD BACKWARD: := GET DIRECT DATA('data.csv', ',', 'A', 'B2') ~~|\n\
ahead :LOOK FORWARD: := GET DIRECT DATA('data.csv', ',', 'A', 'B2') ~~|\n\
FINAL TIME = 10 ~~|\nINITIAL TIME = 0 ~~|\nSAVEPER = 5 ~~|\nTIME STEP = 1 ~~|\n";
    let missing = "y = GET XLS CONSTANTS('absent.xlsx', 'Sheet1', 'B2') ~~|\n\
FINAL TIME = 10 ~~|\nINITIAL TIME = 0 ~~|\nSAVEPER = 5 ~~|\nTIME STEP = 1 ~~|\n";
    let dir = scratch(
        "data",
        &[
            ("model.mdl", model),
            ("data.csv", "time,value\n0,1\n10,3\n"),
            ("missing.mdl", missing),
        ],
    );
    let (code, out, err) = eqm(&["run", dir.join("model.mdl").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // At 5, halfway between the data's times 0 and 10: interpolated (1 + 3)/2, held back at
    // the value of 0, looking forward to the value of 10.
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows[0], "time,x,held,ahead,FINAL TIME,INITIAL TIME,SAVEPER,TIME STEP");
    assert!(rows[2].starts_with("5,2,1,3,"), "{out}");
    assert!(rows[3].starts_with("10,3,3,3,"), "{out}");
    let (code, _, err) = eqm(&["run", dir.join("missing.mdl").to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("[E1008]") && err.contains("missing.mdl:1:23"), "{err}");
}

#[test]
fn a_vensim_model_reading_an_xlsx_workbook_by_named_ranges_runs_to_vensim_s_values() {
    let case = std::path::Path::new(crate::REPO).join("../shared/sd-test-models/tests/get_xls_cellrange");
    if !case.is_dir() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let (code, out, err) = eqm(&["run", case.join("test_get_xls_cellrange.mdl").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header = eqm_testkit::cli::csv_fields(lines.next().expect("a header"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            eqm_testkit::cli::csv_fields(l)
                .iter()
                .map(|v| v.parse().expect("a number"))
                .collect()
        })
        .collect();
    // Vensim's own run of the model (tab-separated, one column per variable).
    let reference = std::fs::read_to_string(case.join("output.tab")).expect("the reference reads");
    let mut reference_lines = reference.lines();
    let names: Vec<&str> = reference_lines.next().expect("a header").split('\t').collect();
    let mut compared = 0;
    for line in reference_lines {
        // Vensim writes a constant's value in the first row only: an empty cell is no value.
        let values: Vec<f64> = line.split('\t').map(|v| v.trim().parse().unwrap_or(f64::NAN)).collect();
        let row = rows
            .iter()
            .find(|r| (r[0] - values[0]).abs() < 1e-9)
            .unwrap_or_else(|| panic!("no row at time {}", values[0]));
        for (name, expected) in names.iter().zip(&values).skip(1).filter(|(_, v)| !v.is_nan()) {
            let column = header
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"));
            assert!(
                (row[column] - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                "`{name}` at {}: {} instead of {expected}",
                values[0],
                row[column]
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} values compared");
}
