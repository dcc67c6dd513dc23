//! `eqm run --sweep`: one CSV with a column per swept parameter equal to single runs, a plot
//! across runs, and the usage errors (exit 2) of malformed axes; and the stop time a model
//! without one gets from its time scales.

use crate::cli;
use cli::{eqm, run};

#[test]
fn a_sweep_writes_one_table_equal_to_single_runs() {
    let common = ["--stop", "1", "--interval", "0.25", "--vars", "x"];
    let mut args = vec!["run", "examples/decay.eqm", "--sweep", "k=0.5:0.5:1.5"];
    args.extend(common);
    let t = run(&args);
    assert_eq!(t.header, ["k", "time", "x"]);
    assert_eq!(t.rows.len(), 3 * 5);
    for (i, k) in ["0.5", "1", "1.5"].into_iter().enumerate() {
        let param = format!("k={k}");
        let mut single = vec!["run", "examples/decay.eqm", "--param", &param];
        single.extend(common);
        let s = run(&single);
        for (j, row) in s.rows.iter().enumerate() {
            let swept = &t.rows[i * 5 + j];
            assert_eq!(swept[0], k.parse::<f64>().unwrap());
            assert_eq!(&swept[1..], &row[..], "k = {k}, row {j}");
        }
    }
}

#[test]
fn a_sweep_plots_one_curve_per_run() {
    let dir = std::env::temp_dir().join(format!("eqm-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("sweep.svg");
    let plot_arg = plot.display().to_string();
    let (code, out, err) = eqm(&[
        "run",
        "examples/decay.eqm",
        "--stop",
        "1",
        "--sweep",
        "k=1,2",
        "--plot",
        "x",
        "--plot-out",
        &plot_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("k,time,x\n"), "{out}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("x (k=1)") && svg.contains("x (k=2)"),
        "one legend entry per run"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn malformed_sweeps_are_usage_errors() {
    for (axis, why) in [
        ("k", "NAME=A:STEP:B"),
        ("k=1:0:3", "does not lead"),
        ("k=3:1:1", "does not lead"),
        ("k=1:2", "A:STEP:B"),
        ("k=one,two", "not a number"),
        ("k=0:1e-9:1", "more than"),
    ] {
        let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--sweep", axis]);
        assert_eq!(code, 2, "{axis}: {err}");
        assert!(err.contains(why), "{axis}: {err}");
    }
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--sweep", "k=1,2", "--sweep", "k=3"]);
    assert_eq!(code, 2);
    assert!(err.contains("twice"), "{err}");
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--sweep", "k=1,2", "--param", "k=3"]);
    assert_eq!(code, 2);
    assert!(err.contains("both"), "{err}");
    // A name that is no parameter is the model's error.
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--sweep", "q=1,2"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("E0707"), "{err}");
}

/// Without `--stop` and without an experiment annotation the run lasts five times the model's
/// slowest time scale (here 1/0.5 = 2), and says so; a given stop time stands.
#[test]
fn a_model_without_a_stop_time_runs_for_five_of_its_slowest_time_scales() {
    let dir = std::env::temp_dir().join(format!("eqm-tsim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("d.eqm");
    std::fs::write(
        &file,
        "model D\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -0.5*x;\nend D;\n",
    )
    .unwrap();
    let path = file.display().to_string();
    let (code, out, err) = eqm(&["run", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no stop time given: the run ends at 10"), "{err}");
    let t = cli::Table::parse(&out);
    assert_eq!(t.column("time").last(), Some(&10.0));
    let (code, out, err) = eqm(&["run", &path, "--stop", "1"]);
    assert_eq!(code, 0);
    assert!(!err.contains("no stop time"), "{err}");
    assert_eq!(cli::Table::parse(&out).column("time").last(), Some(&1.0));
    std::fs::remove_dir_all(&dir).ok();
}
