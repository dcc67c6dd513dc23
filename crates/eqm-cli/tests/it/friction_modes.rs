//! Coulomb friction written as Modelica's friction elements write it (a `mode` Integer with
//! `pre`, `startForward`/`startBackward`/`locked` Booleans, the path parameter `sa`, the
//! equations switched by if-expressions), whose structure changes at events: the run must
//! reach the consistent mode at the start and at each event. Each against hand-derived motion.

use crate::cli;

/// Writes `text` as `name` in a directory of this test and returns its path.
fn model_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("eqm-friction-modes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("model file");
    path.to_string_lossy().into_owned()
}

/// A unit mass on a plane, sliding backward at 2 m/s at the start against a Coulomb force
/// of 4 N (static limit 4.4 N); from t = 1 a force 10·(t - 1) N pushes it forward.
const BLOCK: &str = "
model BlockOnPlane
  parameter Real m = 1;
  parameter Real f0 = 4;
  parameter Real f0_max = 4.4;
  constant Integer Forward = 1;
  constant Integer Stuck = 0;
  constant Integer Backward = -1;
  Real s(start = 0, fixed = true);
  Real v(start = -2, fixed = true);
  Real a;
  Real f;
  Real sa;
  Real F = if time > 1 then 10*(time - 1) else 0;
  Boolean startForward(start = false, fixed = true);
  Boolean startBackward(start = false, fixed = true);
  Boolean locked(start = false);
  Integer mode(start = 3, fixed = true);
equation
  der(s) = v;
  der(v) = a;
  m*a = F - f;
  startForward = pre(mode) == Stuck and (sa > f0_max or pre(startForward) and sa > f0)
    or pre(mode) == Backward and v > 1e10 or initial() and v > 0;
  startBackward = pre(mode) == Stuck and (sa < -f0_max or pre(startBackward) and sa < -f0)
    or pre(mode) == Forward and v < -1e10 or initial() and v < 0;
  locked = not (pre(mode) == Forward or startForward or pre(mode) == Backward or startBackward);
  a = if locked then 0 else if startForward then sa - f0_max else if startBackward then sa + f0_max
    else if pre(mode) == Forward then sa - f0_max else if pre(mode) == Backward then sa + f0_max
    else sa - sign(v)*f0_max;
  f = if locked then sa else if startForward then f0 else if startBackward then -f0
    else if pre(mode) == Forward then f0 else -f0;
  mode = if (pre(mode) == Forward or startForward) and v > 0 then Forward
    else if (pre(mode) == Backward or startBackward) and v < 0 then Backward else Stuck;
end BlockOnPlane;
";

/// The block's motion by hand: friction +4 N decelerates it (v = -2 + 4t) until it sticks
/// at t = 0.5, s = -0.5; it stays there while the push is below the static limit, until
/// 10·(t - 1) = 4.4 at t = 1.44; then a = 10·(t - 1) - 4, so with u = t - 1
/// v = 5u² - 4u + 0.792 and s = -0.5 + 5(u³ - 0.44³)/3 - 2(u² - 0.44²) + 0.792(u - 0.44).
fn block_exact(t: f64) -> (f64, f64) {
    if t <= 0.5 {
        (-2.0 * t + 2.0 * t * t, -2.0 + 4.0 * t)
    } else if t <= 1.44 {
        (-0.5, 0.0)
    } else {
        let (u, u0) = (t - 1.0, 0.44f64);
        let s = -0.5 + 5.0 * (u.powi(3) - u0.powi(3)) / 3.0 - 2.0 * (u * u - u0 * u0) + 0.792 * (u - u0);
        (s, 5.0 * u * u - 4.0 * u + 0.792)
    }
}

#[test]
fn a_block_slides_sticks_and_breaks_away_at_the_hand_derived_times() {
    let file = model_file("block.mo", BLOCK);
    let table = cli::run(&[
        "run",
        &file,
        "--stop",
        "2",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
        "--vars",
        "s,v,mode,locked",
    ]);
    let (t, s, v) = (table.column("time"), table.column("s"), table.column("v"));
    let (mode, locked) = (table.column("mode"), table.column("locked"));
    for k in 0..t.len() {
        let (es, ev) = block_exact(t[k]);
        assert!((s[k] - es).abs() < 1e-6, "s({}) = {} vs {es}", t[k], s[k]);
        assert!((v[k] - ev).abs() < 1e-6, "v({}) = {} vs {ev}", t[k], v[k]);
        // Away from the events: sliding backward, stuck (locked), sliding forward.
        let expected = if t[k] < 0.5 - 1e-6 {
            Some((-1.0, 0.0))
        } else if t[k] > 0.5 + 1e-6 && t[k] < 1.44 - 1e-6 {
            Some((0.0, 1.0))
        } else if t[k] > 1.44 + 1e-6 {
            Some((1.0, 0.0))
        } else {
            None
        };
        if let Some((m, l)) = expected {
            assert_eq!((mode[k], locked[k]), (m, l), "mode and locked at t = {}", t[k]);
        }
    }
    let last = t.len() - 1;
    assert!((t[last] - 2.0).abs() < 1e-12 && (v[last] - 1.792).abs() < 1e-6);
}

/// A clutch with Coulomb torque 1 N·m (static limit 1.5 N·m) whose relative speed starts at
/// 0.5 rad/s (unit inertia), driven backward by -2 N·m: it slides until the speed vanishes
/// and then engages, the static torque carrying the drive.
const CLUTCH: &str = "
model EngagingClutch
  parameter Real tau0 = 1;
  parameter Real tau0_max = 1.5;
  Real w(start = 0.5, fixed = true);
  Real sa;
  Real a;
  Real tau;
  Real drive = -2;
  Boolean startForward(start = false, fixed = true);
  Boolean locked(start = false);
  Boolean stuck(start = false, fixed = true);
equation
  startForward = pre(stuck) and (sa > tau0_max or pre(startForward) and sa > tau0)
    or initial() and w > 0;
  locked = pre(stuck) and not startForward;
  a = if locked then 0 else sa - tau0;
  tau = if locked then sa else tau0;
  der(w) = a;
  der(w) = drive - tau;
  stuck = locked or w <= 0;
end EngagingClutch;
";

#[test]
fn a_sliding_clutch_engages_when_its_speed_vanishes_and_stays_engaged() {
    let file = model_file("clutch.mo", CLUTCH);
    let table = cli::run(&[
        "run",
        &file,
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
        "--vars",
        "w,tau,locked",
    ]);
    let (t, w, tau, locked) = (
        table.column("time"),
        table.column("w"),
        table.column("tau"),
        table.column("locked"),
    );
    // Sliding: w' = -2 - 1 = -3 until w = 0 at t = 1/6; engaged: the clutch carries -2 N·m.
    let engage = 1.0 / 6.0;
    for k in 0..t.len() {
        let expected_w = if t[k] < engage { 0.5 - 3.0 * t[k] } else { 0.0 };
        assert!(
            (w[k] - expected_w).abs() < 1e-6,
            "w({}) = {} vs {expected_w}",
            t[k],
            w[k]
        );
        if (t[k] - engage).abs() > 1e-6 {
            let (expected_tau, expected_locked) = if t[k] < engage { (1.0, 0.0) } else { (-2.0, 1.0) };
            assert!((tau[k] - expected_tau).abs() < 1e-9, "tau({}) = {}", t[k], tau[k]);
            assert_eq!(locked[k], expected_locked, "locked at t = {}", t[k]);
        }
    }
}
