//! The stdlib's friction element between two flanges (`Mechanics.Translational.Components
//! .Friction`) against the closed-form motion of `examples/two_mass_friction.eqm`: stuck
//! phase, breakaway when the force needed to stick exceeds the static friction, sliding
//! against the kinetic friction, sticking again when the relative velocity vanishes; and a
//! force too small to break the bodies apart keeps them locked for the whole run.

use crate::cli;

use cli::run;

/// The closed-form velocities `(v1, v2)` of the example at time `t` (see its header).
fn exact(t: f64) -> (f64, f64) {
    if t < 2.4 {
        let v = t * t / 4.0;
        (v, v)
    } else if t < 4.0 {
        (1.44 + (t * t - 5.76) / 2.0 - (t - 2.4), 1.44 + (t - 2.4))
    } else if t < 4.96 {
        (4.96 - (t - 4.0), 3.04 + (t - 4.0))
    } else {
        (4.0, 4.0)
    }
}

#[test]
fn two_bodies_stick_break_away_slide_and_stick_again_as_computed_by_hand() {
    let table = run(&[
        "run",
        "examples/two_mass_friction.eqm",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
        "--vars",
        "mass1.v,mass2.v,friction.mode,friction.f",
    ]);
    let (t, v1, v2) = (table.column("time"), table.column("mass1.v"), table.column("mass2.v"));
    let (mode, f) = (table.column("friction.mode"), table.column("friction.f"));
    for k in 0..t.len() {
        let (e1, e2) = exact(t[k]);
        assert!((v1[k] - e1).abs() < 1e-6, "v1({}) = {} vs {e1}", t[k], v1[k]);
        assert!((v2[k] - e2).abs() < 1e-6, "v2({}) = {} vs {e2}", t[k], v2[k]);
        let expected_mode = if t[k] < 2.4 - 1e-9 || t[k] > 4.96 + 1e-9 {
            0.0
        } else {
            -1.0
        };
        if (t[k] - 2.4).abs() > 1e-6 && (t[k] - 4.96).abs() > 1e-6 {
            assert_eq!(mode[k], expected_mode, "mode at t = {}", t[k]);
        }
        // Stuck before the breakaway, the friction force carries body 2: f = -t/2.
        if t[k] < 2.4 - 1e-9 {
            assert!((f[k] + t[k] / 2.0).abs() < 1e-6, "f({}) = {}", t[k], f[k]);
        }
    }
    // The mode changes exactly at the events: rows just before and after each.
    let switch_times: Vec<f64> = (1..t.len()).filter(|&k| mode[k] != mode[k - 1]).map(|k| t[k]).collect();
    assert_eq!(switch_times.len(), 2, "{switch_times:?}");
    assert!((switch_times[0] - 2.4).abs() < 1e-7, "breakaway at {}", switch_times[0]);
    assert!((switch_times[1] - 4.96).abs() < 1e-7, "sticking at {}", switch_times[1]);
}

#[test]
fn a_force_below_the_breakaway_force_keeps_the_bodies_locked() {
    // A constant 2 N: carrying body 2 needs m2*F/(m1 + m2) = 1 N < Fs = 1.2 N.
    let text = std::fs::read_to_string(format!("{}/examples/two_mass_friction.eqm", crate::REPO))
        .expect("example")
        .replace("force.f = if time < 4 then time else 0;", "force.f = 2;");
    let dir = std::env::temp_dir().join(format!("eqm-friction-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("locked.eqm");
    std::fs::write(&path, text).expect("write");
    let table = run(&[
        "run",
        path.to_str().unwrap(),
        "--stop",
        "20",
        "--vars",
        "mass1.v,mass2.v,friction.mode,friction.f",
    ]);
    for row in &table.rows {
        let t = row[0];
        assert!((row[1] - t).abs() < 1e-6 && (row[2] - t).abs() < 1e-6, "{row:?}");
        assert_eq!(row[3], 0.0, "{row:?}");
        assert!((row[4] + 1.0).abs() < 1e-9, "{row:?}");
    }
}

#[test]
fn a_force_above_the_breakaway_force_slides_at_once_and_a_reversal_does_not_stick() {
    // 3 N from the start: carrying body 2 would need 1.5 N > Fs, so body 1 slides ahead at
    // once (a1 = 3 - 1 = 2, a2 = 1). At t = 1 the force becomes -6 N: a1 = -7, a2 = 1 until
    // the relative velocity -1 + 8 (t - 1) vanishes at t = 1.125 (both at 1.125 m/s). Sticking
    // would need 3 N > Fs, so body 2 slides ahead at once: a1 = -5, a2 = -1.
    let text = std::fs::read_to_string(format!("{}/examples/two_mass_friction.eqm", crate::REPO))
        .expect("example")
        .replace(
            "force.f = if time < 4 then time else 0;",
            "force.f = if time < 1 then 3 else -6;",
        );
    let dir = std::env::temp_dir().join(format!("eqm-friction-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("reversal.eqm");
    std::fs::write(&path, text).expect("write");
    let table = run(&[
        "run",
        path.to_str().unwrap(),
        "--stop",
        "3",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
        "--vars",
        "mass1.v,mass2.v,friction.mode",
    ]);
    for row in &table.rows {
        let t = row[0];
        let (v1, v2, mode) = if t < 1.0 {
            (2.0 * t, t, -1.0)
        } else if t < 1.125 {
            (2.0 - 7.0 * (t - 1.0), 1.0 + (t - 1.0), -1.0)
        } else {
            (1.125 - 5.0 * (t - 1.125), 1.125 - (t - 1.125), 1.0)
        };
        assert!(
            (row[1] - v1).abs() < 1e-6 && (row[2] - v2).abs() < 1e-6,
            "{row:?} vs {v1}, {v2}"
        );
        if (t - 1.125).abs() > 1e-6 {
            assert_eq!(row[3], mode, "{row:?}");
        }
    }
}
