//! The `SystemDynamics` library from the command line: its examples run by name without a
//! file, and a run that would lose material stops with exit code 3 and a message naming the
//! stock, its bound and the time.

use crate::cli::{Table, eqm};

#[test]
fn library_examples_run_by_name_and_match_their_files() {
    let (code, by_name, err) = eqm(&[
        "run",
        "--model",
        "SystemDynamics.Examples.Abfluss",
        "--vars",
        "S1.m,S2.m",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, from_file, err) = eqm(&["run", "examples/abfluss.eqm", "--vars", "S1.m,S2.m"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_name, from_file);
    let t = Table::parse(&by_name);
    let (time, s2) = (t.column("time"), t.column("S2.m"));
    let last = s2.len() - 1;
    assert_eq!(time[last], 12.0);
    assert!((s2[last] - 4.0).abs() < 1e-9, "S2(12) = {}", s2[last]);
}

#[test]
fn an_oven_releasing_into_a_full_stock_stops_the_run() {
    for args in [
        vec!["run", "--model", "SystemDynamics.Examples.Oven2Bounded"],
        vec!["run", "examples/oven2_bounded.eqm"],
    ] {
        let (code, out, err) = eqm(&args);
        assert_eq!(code, 3, "{args:?}: {err}");
        // The stock and its bound, the time (4.1 + 2/3) and the error code.
        assert!(err.contains("E0705"), "{err}");
        assert!(err.contains("upper bound maxLevel = 2"), "{err}");
        assert!(err.contains("an assertion of `S2` does not hold"), "{err}");
        assert!(err.contains("at t = 4.76666666666"), "{err}");
        // The rows up to the failure are written.
        let t = Table::parse(&out);
        let time = t.column("time");
        assert!(*time.last().unwrap() <= 4.1 + 2.0 / 3.0 + 1e-9, "{:?}", time.last());
        let s2 = t.column("S2.m");
        assert!(s2.iter().all(|&m| m <= 2.0 + 1e-9), "S2 never passes its bound");
    }
}
