//! Brakes, clutches, bearing friction, backlash, stops and speed-dependent forces: the closed
//! form on each side of a switch and the switch as an event at the computed instant.

use super::*;

/// A brake (fn_max = 8 N, mu = 0.5, f_normalized = 1) on an inertia of 2 kg.m2 turning at
/// 10 rad/s: the friction torque 0.5*8 = 4 N.m decelerates it at 2 rad/s2, so w = 10 - 2t and
/// phi = 10t - t^2 until it stops at t = J w0/(mu fn) = 5 s at phi = 25 rad. Then it sticks: a
/// torque of 3 N.m from t = 6 s, below the breakaway torque 4 N.m, does not move it; a second
/// 3 N.m from t = 8 s does: J a = 6 - 4, so w = t - 8.
const BRAKE: &str = "model BrakeTest \"An inertia stopped and then held by a brake\"
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 2, phi(start = 0, fixed = true), w(start = 10, fixed = true));
  Modelica.Mechanics.Rotational.Components.Brake brake(fn_max = 8, mu_pos = [0, 0.5]);
  Modelica.Blocks.Sources.Constant pressed(k = 1);
  Modelica.Mechanics.Rotational.Sources.TorqueStep step1(stepTorque = 3, startTime = 6);
  Modelica.Mechanics.Rotational.Sources.TorqueStep step2(stepTorque = 3, startTime = 8);
equation
  connect(inertia.flange_b, brake.flange_a);
  connect(step1.flange, inertia.flange_a);
  connect(step2.flange, inertia.flange_a);
  connect(pressed.y, brake.f_normalized);
end BrakeTest;
";

#[test]
fn brake_decelerates_uniformly_stops_exactly_and_holds_below_the_breakaway_torque() {
    let result = run(BRAKE, 10.0);
    for t in [1.0_f64, 2.5, 4.5] {
        check(&result, "inertia.w", t, 10.0 - 2.0 * t, 1e-9);
        check(&result, "inertia.phi", t, 10.0 * t - t * t, 1e-9);
        check(&result, "brake.tau", t, 4.0, 1e-12);
    }
    assert!(has_event_at(&result, 5.0, 1e-9), "the brake does not stick at t = 5");
    // Stuck from t = 5 to t = 8: the speed stays at the value the event location found (zero
    // up to rounding), the angle at 25 rad, and the brake takes the applied torque.
    let stuck = rows_between(&result, "inertia.w", 5.0 + 1e-9, 8.0);
    assert!(stuck.len() > 100);
    for (t, w) in stuck {
        assert!(w.abs() < 1e-12, "inertia.w({t}) = {w}");
        let held = if t < 6.0 { 0.0 } else { 3.0 };
        check(&result, "brake.tau", t, held, 1e-12);
        check(&result, "inertia.phi", t, 25.0, 1e-9);
    }
    for t in [8.5_f64, 9.0, 10.0] {
        check(&result, "inertia.w", t, t - 8.0, 1e-9);
        check(&result, "brake.tau", t, 4.0, 1e-12);
    }
}

/// A clutch (fn_max = 4 N, mu = 0.5: 2 N.m while slipping) between an inertia of 1 kg.m2 at
/// 10 rad/s and one of 1 kg.m2 at rest: w1 = 10 - 2t, w2 = 2t until the speeds meet at t = 2.5 s
/// at 5 rad/s, where the clutch locks. A torque of 3 N.m on the first inertia from t = 3 s
/// accelerates both at 1.5 rad/s2, the clutch passing 1.5 N.m < 2 N.m: it stays locked, up to
/// 8 rad/s at t = 5. There the torque rises to 5 N.m, which would need 2.5 N.m through the
/// clutch: it slips, w1 = 8 + 3 (t - 5) and w2 = 8 + 2 (t - 5).
const CLUTCH: &str = "model ClutchTest \"Two inertias coupled by a clutch\"
  Modelica.Mechanics.Rotational.Components.Inertia j1(J = 1, phi(start = 0, fixed = true), w(start = 10, fixed = true));
  Modelica.Mechanics.Rotational.Components.Inertia j2(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Clutch clutch(fn_max = 4);
  Modelica.Blocks.Sources.Constant pressed(k = 1);
  Modelica.Mechanics.Rotational.Sources.TorqueStep step1(stepTorque = 3, startTime = 3);
  Modelica.Mechanics.Rotational.Sources.TorqueStep step2(stepTorque = 2, startTime = 5);
equation
  connect(j1.flange_b, clutch.flange_a);
  connect(clutch.flange_b, j2.flange_a);
  connect(pressed.y, clutch.f_normalized);
  connect(step1.flange, j1.flange_a);
  connect(step2.flange, j1.flange_a);
end ClutchTest;
";

#[test]
fn clutch_slips_locks_where_the_speeds_meet_and_slips_again_above_its_torque() {
    let result = run(CLUTCH, 7.0);
    for t in [0.7_f64, 1.4, 2.1] {
        check(&result, "j1.w", t, 10.0 - 2.0 * t, 1e-9);
        check(&result, "j2.w", t, 2.0 * t, 1e-9);
        check(&result, "clutch.tau", t, -2.0, 1e-12);
    }
    assert!(has_event_at(&result, 2.5, 1e-9), "the clutch does not lock at t = 2.5");
    for (t, w_rel) in rows_between(&result, "clutch.w_rel", 2.5 + 1e-9, 5.0) {
        assert!(w_rel.abs() < 1e-12, "clutch.w_rel({t}) = {w_rel}");
        let w = if t < 3.0 { 5.0 } else { 5.0 + 1.5 * (t - 3.0) };
        check(&result, "j2.w", t, w, 1e-9);
        let tau = if t < 3.0 { 0.0 } else { -1.5 };
        check(&result, "clutch.tau", t, tau, 1e-9);
        assert!(result.value_at("clutch.locked", t) == Some(1.0));
    }
    for t in [5.6_f64, 6.3, 7.0] {
        check(&result, "j1.w", t, 8.0 + 3.0 * (t - 5.0), 1e-9);
        check(&result, "j2.w", t, 8.0 + 2.0 * (t - 5.0), 1e-9);
        check(&result, "clutch.tau", t, -2.0, 1e-12);
    }
}

/// Bearing friction (sliding 1 N.m, peak 1.5: breakaway at 1.5 N.m) on an inertia of 1 kg.m2
/// driven by a ramp torque 0.5 t: it holds until t = 3 s, the bearing taking the whole torque;
/// then J a = 0.5 t - 1, so w = 0.25 (t^2 - 9) - (t - 3).
const BEARING: &str = "model BearingTest \"An inertia in a bearing with friction, driven by a ramp torque\"
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.BearingFriction bearing(tau_pos = [0, 1], peak = 1.5);
  Modelica.Mechanics.Rotational.Sources.Torque drive;
  Modelica.Blocks.Sources.Ramp ramp(height = 5, duration = 10);
equation
  connect(ramp.y, drive.tau);
  connect(drive.flange, inertia.flange_a);
  connect(inertia.flange_b, bearing.flange_a);
end BearingTest;
";

#[test]
fn bearing_friction_holds_below_its_peak_torque_and_then_slides() {
    let result = run(BEARING, 6.0);
    for (t, w) in rows_between(&result, "inertia.w", 0.0, 3.0 - 1e-9) {
        assert!(w == 0.0, "inertia.w({t}) = {w}");
        check(&result, "bearing.tau", t, 0.5 * t, 1e-12);
    }
    for t in [3.6_f64, 4.8, 6.0] {
        check(&result, "inertia.w", t, 0.25 * (t * t - 9.0) - (t - 3.0), 1e-9);
        check(&result, "bearing.tau", t, 1.0, 1e-12);
    }
}

/// A speed-dependent friction coefficient: the brake of `BRAKE` with mu falling linearly from 0.5
/// at rest to 0.3 at 10 rad/s, mu = 0.5 - 0.02 w. Then J w' = -8 mu, w' = -2 + 0.08 w, so from
/// 10 rad/s w = 25 - 15 e^(0.08 t) and phi = 25 t - 187.5 (e^(0.08 t) - 1), until the inertia
/// stops at t = ln(5/3)/0.08 = 6.385 s; stuck there, the breakaway torque is 0.5*8 = 4 N.m, so the
/// second torque step at t = 8 s (6 N.m in all) turns it again, with the friction falling as it speeds up.
#[test]
fn brake_with_a_speed_dependent_friction_table_follows_its_closed_form() {
    let text = BRAKE
        .replace("mu_pos = [0, 0.5]", "mu_pos = [0, 0.5; 10, 0.3]")
        .replace("startTime = 6", "startTime = 7");
    let result = run(&text, 10.0);
    let stop = (5.0_f64 / 3.0).ln() / 0.08;
    for t in [1.0_f64, 3.0, 6.0] {
        check(&result, "inertia.w", t, 25.0 - 15.0 * (0.08 * t).exp(), 1e-8);
        check(
            &result,
            "inertia.phi",
            t,
            25.0 * t - 187.5 * ((0.08 * t).exp() - 1.0),
            1e-8,
        );
    }
    assert!(has_event_at(&result, stop, 1e-8), "the brake does not stick at {stop}");
    for (t, w) in rows_between(&result, "inertia.w", stop + 1e-8, 8.0) {
        assert!(w.abs() < 1e-12, "inertia.w({t}) = {w}");
    }
    // Sliding again: J w' = 6 - 8 mu, w' = 1 + 0.08 w, so w = 12.5 (e^(0.08 (t - 8)) - 1).
    check(&result, "inertia.w", 9.0, 12.5 * (0.08_f64.exp() - 1.0), 1e-8);
}

/// A friction table whose speeds do not increase cannot be interpolated: the run stops with a
/// message instead.
#[test]
fn a_friction_table_with_speeds_out_of_order_is_refused() {
    let text = BRAKE.replace("mu_pos = [0, 0.5]", "mu_pos = [0, 0.5; 0, 0.4]");
    let mut model = crate::compile(&text);
    let error = model
        .simulate(&eqm::RunSettings {
            stop: Some(1.0),
            ..eqm::RunSettings::default()
        })
        .expect_err("a friction table with two rows at one speed runs");
    let eqm::RunError::Failed {
        time,
        diagnostic: Some(diagnostic),
        ..
    } = &error
    else {
        panic!("not a located failure: {error}");
    };
    assert_eq!(*time, 0.0);
    assert_eq!(diagnostic.code.to_string(), "E0705", "{}", diagnostic.message);
    assert!(
        diagnostic.message.contains("must increase strictly"),
        "{}",
        diagnostic.message
    );
}

/// Backlash elements (c = 100 N.m/rad, d = 5 N.m.s/rad, total backlash 0.4 rad) with one flange
/// fixed and the other turned at +-0.1 rad/s: no torque inside the gap (|phi_rel| <= 0.2, until
/// t = 2 s), then the spring torque 100 (0.1 t - 0.2) plus the damping torque 5*0.1 = 0.5 N.m,
/// limited to the spring torque (so 2*100 (0.1 t - 0.2) until t = 2.05 s); mirrored on the
/// negative side.
const BACKLASH: &str = "model BacklashTest \"Backlash elements turned at constant speed\"
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Components.ElastoBacklash pos(c = 100, d = 5, b = 0.4);
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed up(w_fixed = 0.1, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.ElastoBacklash neg(c = 100, d = 5, b = 0.4);
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed down(w_fixed = -0.1, phi(start = 0, fixed = true));
equation
  connect(fixed.flange, pos.flange_a);
  connect(up.flange, pos.flange_b);
  connect(fixed.flange, neg.flange_a);
  connect(down.flange, neg.flange_b);
end BacklashTest;
";

#[test]
fn elasto_backlash_is_free_in_the_gap_and_a_spring_damper_outside() {
    let result = run(BACKLASH, 4.0);
    for (t, tau) in rows_between(&result, "pos.tau", 0.0, 2.0 - 1e-9) {
        assert!(tau == 0.0, "pos.tau({t}) = {tau}");
        assert!(result.value_at("neg.tau", t) == Some(0.0));
    }
    assert!(has_event_at(&result, 2.0, 1e-9), "no contact event at t = 2");
    check(&result, "pos.tau", 2.024, 2.0 * 100.0 * (0.1 * 2.024 - 0.2), 1e-9);
    for t in [2.5_f64, 3.0, 4.0] {
        let tau = 100.0 * (0.1 * t - 0.2) + 0.5;
        check(&result, "pos.tau", t, tau, 1e-9);
        check(&result, "neg.tau", t, -tau, 1e-9);
        check(&result, "pos.tau_c", t, tau - 0.5, 1e-9);
        check(&result, "pos.lossPower", t, 0.5 * 0.1, 1e-9);
    }
}

/// Rotational sources and sensors. A quadratic drag torque (-2 N.m at 1 rad/s) brakes an inertia
/// of 1 kg.m2 from 4 rad/s: J w' = -2 w^2, so w = 4/(1 + 8t), and a power sensor between them
/// reads the drag torque times the speed, -2 w^3. An acceleration source turns a flange with
/// a = sin t from rest (w = 1 - cos t, phi = t - sin t) and through a disc (0.25 rad offset) an
/// inertia of 3 kg.m2, which needs the torque 3 sin t; an acceleration sensor reads sin t. A
/// linear drag torque (-2 N.m at 1 rad/s, its sign following the speed) brakes another inertia of
/// 1 kg.m2 from 4 rad/s: w = 4 e^(-2t).
const ROTATIONAL_SOURCES: &str = "model RotationalSources \"Quadratic drag and prescribed acceleration\"
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 1, phi(start = 0, fixed = true), w(start = 4, fixed = true));
  Modelica.Mechanics.Rotational.Sources.QuadraticSpeedDependentTorque drag(tau_nominal = -2, w_nominal = 1);
  Modelica.Mechanics.Rotational.Sensors.PowerSensor power;
  Modelica.Mechanics.Rotational.Sources.Accelerate acc(phi(fixed = true), w(fixed = true));
  Modelica.Blocks.Sources.Sine sine(amplitude = 1, f = 1/(2*Modelica.Constants.pi));
  Modelica.Mechanics.Rotational.Components.Disc disc(deltaPhi = 0.25);
  Modelica.Mechanics.Rotational.Components.Inertia load(J = 3);
  Modelica.Mechanics.Rotational.Sensors.AccSensor accSensor;
  Modelica.Mechanics.Rotational.Components.Free free;
  Modelica.Mechanics.Rotational.Components.Inertia linear(J = 1, phi(start = 0, fixed = true), w(start = 4, fixed = true));
  Modelica.Mechanics.Rotational.Sources.LinearSpeedDependentTorque linearDrag(tau_nominal = -2, w_nominal = 1, TorqueDirection = false);
equation
  connect(linearDrag.flange, linear.flange_a);
  connect(drag.flange, power.flange_a);
  connect(power.flange_b, inertia.flange_a);
  connect(sine.y, acc.a_ref);
  connect(acc.flange, disc.flange_a);
  connect(disc.flange_b, load.flange_a);
  connect(load.flange_b, accSensor.flange);
  connect(load.flange_b, free.flange);
end RotationalSources;
";

#[test]
fn speed_dependent_torques_accelerate_and_power_sensor_follow_their_closed_forms() {
    let result = run(ROTATIONAL_SOURCES, 2.0);
    for t in [0.5_f64, 1.0, 2.0] {
        let w = 4.0 / (1.0 + 8.0 * t);
        check(&result, "inertia.w", t, w, 1e-8);
        check(&result, "drag.tau", t, -2.0 * w * w, 1e-8);
        check(&result, "power.power", t, -2.0 * w * w * w, 1e-8);
        check(&result, "acc.w", t, 1.0 - t.cos(), 1e-8);
        check(&result, "acc.phi", t, t - t.sin(), 1e-8);
        check(&result, "load.phi", t, t - t.sin() + 0.25, 1e-8);
        check(&result, "accSensor.a", t, t.sin(), 1e-8);
        check(&result, "load.flange_a.tau", t, 3.0 * t.sin(), 1e-8);
        check(&result, "linear.w", t, 4.0 * (-2.0 * t).exp(), 1e-8);
        check(&result, "linearDrag.tau", t, -8.0 * (-2.0 * t).exp(), 1e-8);
    }
}

/// `examples/backlash_gearbox.eqm` against the values its header derives by hand: the load
/// stays exactly at rest while the motor crosses the gap (w_m = 50 (t - 0.1)), the gap closes at
/// t = 0.1 + sqrt(2 r (b/2) Jm/tau) = 0.2 s with the motor at 5 rad/s, and the drive settles
/// where the load damper takes the whole torque r tau = 2.5 N.m: w_load = 1.25 rad/s, motor
/// 6.25 rad/s, the backlash compressed to phi_rel = -(b/2 + 2.5/c) = -0.0525 rad.
#[test]
fn backlash_gearbox_example_closes_the_gap_on_time_and_settles_at_the_damped_speed() {
    let text = example("backlash_gearbox.eqm");
    let result = crate::compile(&text)
        .simulate(&eqm::RunSettings::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let (jm, r, tau, b) = (0.01_f64, 5.0, 0.5, 0.1);
    let contact = 0.1 + (2.0 * r * (b / 2.0) * jm / tau).sqrt();
    assert!((contact - 0.2).abs() < 1e-12);
    for (t, w) in rows_between(&result, "motor.w", 0.0, contact - 1e-9) {
        let expected = if t < 0.1 { 0.0 } else { tau * (t - 0.1) / jm };
        assert!((w - expected).abs() < 1e-9, "motor.w({t}) = {w}, expected {expected}");
        for name in ["load.phi", "load.w", "backlash.tau"] {
            let value = result.value_at(name, t).unwrap();
            assert!(value == 0.0, "{name}({t}) = {value}");
        }
    }
    assert!(
        has_event_at(&result, contact, 1e-9),
        "the gap does not close at {contact}"
    );
    check(&result, "motor.w", contact, tau * (contact - 0.1) / jm, 1e-8);
    check(&result, "load.w", 5.0, r * tau / 2.0, 1e-5);
    check(&result, "motor.w", 5.0, r * r * tau / 2.0, 1e-5);
    check(&result, "backlash.phi_rel", 5.0, -(b / 2.0 + r * tau / 1000.0), 1e-5);
    check(&result, "backlash.tau", 5.0, -r * tau, 1e-5);
}

/// A mass with friction and stops (m = 1 kg, Coulomb friction 1 N only, flange_b stopped at
/// smax = 2 m, L = 0.5 m) pushed by 3 N from rest at s = 0: a = 2, s = t^2, until flange_b
/// reaches the stop at s = 1.75 m, t = sqrt(1.75); there the impact stops it exactly (v = 0) and
/// it rests against the stop, which with the friction takes the 3 N. At t = 3 s the force turns
/// to -3 N: it leaves the stop backwards with a = -2, s = 1.75 - (t - 3)^2.
/// Beside it, a rod of 0.5 m joins masses of 1 and 3 kg pushed by 2 N: a = 0.5, the distance
/// stays 0.5 m and the rod pushes the second mass with 1.5 N. An acceleration source moves a
/// flange with a = 3 from rest.
const TRANSLATIONAL_STOP: &str = "model StopTest \"A mass against a hard stop, a rod and an acceleration source\"
  Modelica.Mechanics.Translational.Components.MassWithStopAndFriction stopMass(m = 1, F_prop = 0, F_Coulomb = 1, F_Stribeck = 0, smax = 2, L = 0.5, s(start = 0, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Sources.ForceStep push(offsetForce = 3, stepForce = -6, startTime = 3);
  Modelica.Mechanics.Translational.Components.Mass m1(m = 1, s(start = 0, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.Rod rod(L = 0.5);
  Modelica.Mechanics.Translational.Components.Mass m2(m = 3);
  Modelica.Mechanics.Translational.Sources.ConstantForce f2(f_constant = 2);
  Modelica.Mechanics.Translational.Sources.Accelerate acc(s(fixed = true), v(fixed = true));
  Modelica.Blocks.Sources.Constant a(k = 3);
equation
  connect(push.flange, stopMass.flange_a);
  connect(f2.flange, m1.flange_a);
  connect(m1.flange_b, rod.flange_a);
  connect(rod.flange_b, m2.flange_a);
  connect(a.y, acc.a_ref);
end StopTest;
";

#[test]
fn mass_with_stop_hits_the_stop_rests_there_and_leaves_backwards() {
    let result = run(TRANSLATIONAL_STOP, 5.0);
    let hit = 1.75_f64.sqrt();
    for t in [0.3_f64, 0.8, 1.3] {
        check(&result, "stopMass.s", t, t * t, 1e-9);
        check(&result, "stopMass.v", t, 2.0 * t, 1e-9);
    }
    assert!(has_event_at(&result, hit, 1e-9), "no impact at {hit}");
    for (t, v) in rows_between(&result, "stopMass.v", hit + 1e-9, 3.0) {
        assert!(v == 0.0, "stopMass.v({t}) = {v}");
        check(&result, "stopMass.flange_b.s", t, 2.0, 1e-12);
        check(&result, "stopMass.f", t, 3.0, 1e-12);
    }
    for t in [3.5_f64, 4.0, 5.0] {
        check(&result, "stopMass.s", t, 1.75 - (t - 3.0).powi(2), 1e-9);
    }
    for t in [1.0_f64, 2.5, 5.0] {
        check(&result, "m1.s", t, 0.25 * t * t, 1e-9);
        check(&result, "m2.flange_a.s", t, 0.25 * t * t + 0.5, 1e-9);
        check(&result, "rod.flange_b.f", t, -1.5, 1e-9);
        check(&result, "acc.v", t, 3.0 * t, 1e-9);
        check(&result, "acc.s", t, 1.5 * t * t, 1e-9);
    }
}

/// An elastic gap (c = 100 N/m, d = 5 N.s/m, contact below s_rel0 = -0.2 m) closed at 0.1 m/s:
/// no force until t = 2 s, then the spring force -100 (0.1 t - 0.2) and the damping force
/// -0.5 N, limited to the spring force (twice the spring force until t = 2.05 s). A quadratic
/// drag force (-1 N at 2 m/s) brakes a mass of 2 kg from 4 m/s: m v' = -v^2/4, so
/// v = 4/(1 + t/2); a multi-sensor and a power sensor between them read the drag force, the
/// speed and the power -v^3/4. A linear speed-dependent force (-1 N at 2 m/s, backwards whatever
/// the direction of motion) pushes a mass of 2 kg that moves backwards at 4 m/s further back:
/// m v' = -|v|/2 = v/2 while v < 0, so v = -4 e^(t/4).
const TRANSLATIONAL_SOURCES: &str = "model TranslationalSources \"An elastic gap and a quadratic drag\"
  Modelica.Mechanics.Translational.Components.Fixed fixed;
  Modelica.Mechanics.Translational.Components.ElastoGap gap(c = 100, d = 5, s_rel0 = -0.2);
  Modelica.Mechanics.Translational.Sources.ConstantSpeed closing(v_fixed = 0.1, s(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.Mass mass(m = 2, s(start = 0, fixed = true), v(start = 4, fixed = true));
  Modelica.Mechanics.Translational.Sources.QuadraticSpeedDependentForce drag(f_nominal = -1, v_nominal = 2);
  Modelica.Mechanics.Translational.Sensors.MultiSensor multi;
  Modelica.Mechanics.Translational.Sensors.PowerSensor power;
  Modelica.Mechanics.Translational.Components.Mass back(m = 2, s(start = 0, fixed = true), v(start = -4, fixed = true));
  Modelica.Mechanics.Translational.Sources.LinearSpeedDependentForce linearDrag(f_nominal = -1, v_nominal = 2);
equation
  connect(linearDrag.flange, back.flange_b);
  connect(closing.flange, gap.flange_a);
  connect(gap.flange_b, fixed.flange);
  connect(drag.flange, multi.flange_a);
  connect(multi.flange_b, power.flange_a);
  connect(power.flange_b, mass.flange_a);
end TranslationalSources;
";

#[test]
fn elasto_gap_pushes_only_in_contact_and_speed_dependent_forces_follow_their_closed_forms() {
    let result = run(TRANSLATIONAL_SOURCES, 4.0);
    for (t, f) in rows_between(&result, "gap.f", 0.0, 2.0 - 1e-9) {
        assert!(f == 0.0, "gap.f({t}) = {f}");
    }
    assert!(has_event_at(&result, 2.0, 1e-9), "no contact event at t = 2");
    check(&result, "gap.f", 2.024, -2.0 * 100.0 * (0.1 * 2.024 - 0.2), 1e-9);
    for t in [2.5_f64, 3.0, 4.0] {
        check(&result, "gap.f", t, -100.0 * (0.1 * t - 0.2) - 0.5, 1e-9);
        check(&result, "gap.lossPower", t, 0.05, 1e-9);
    }
    // Output rows every 0.008 s: the times are rows, so no interpolation error enters.
    for t in [0.4_f64, 2.0, 4.0] {
        let v = 4.0 / (1.0 + t / 2.0);
        check(&result, "mass.v", t, v, 1e-8);
        check(&result, "multi.v", t, v, 1e-8);
        check(&result, "multi.f", t, -v * v / 4.0, 1e-8);
        check(&result, "multi.power", t, -v * v * v / 4.0, 1e-8);
        check(&result, "power.power", t, -v * v * v / 4.0, 1e-8);
        check(&result, "back.v", t, -4.0 * (t / 4.0).exp(), 1e-8);
        check(&result, "linearDrag.f", t, -2.0 * (t / 4.0).exp(), 1e-8);
    }
}

/// Translational dry friction. A brake (fn_max = 8 N, mu = 0.5: 4 N) stops a mass of 2 kg from
/// 10 m/s at t = m v0/(mu fn) = 5 s, after s = 25 m; it holds against 3 N (from t = 6 s) and
/// slides again under 6 N (from t = 8 s) with a = (6 - 4)/2 = 1. Support friction (1 N sliding,
/// peak 1.5: breakaway at 1.5 N) holds a mass of 1 kg against a ramp force 0.5 t until t = 3 s,
/// then v = 0.25 (t^2 - 9) - (t - 3). A mass with Stribeck friction (F_prop = 0.5 N.s/m,
/// F_Coulomb = 1 N, F_Stribeck = 1 N, fexp = 2 s/m) under the same ramp force breaks away where
/// the force reaches F_Coulomb + F_Stribeck = 2 N, at t = 4 s.
const TRANSLATIONAL_FRICTION: &str = "model TranslationalFriction \"A brake, support friction and Stribeck friction\"
  Modelica.Mechanics.Translational.Components.Mass mass(m = 2, s(start = 0, fixed = true), v(start = 10, fixed = true));
  Modelica.Mechanics.Translational.Components.Brake brake(fn_max = 8);
  Modelica.Blocks.Sources.Constant pressed(k = 1);
  Modelica.Mechanics.Translational.Sources.ForceStep step1(stepForce = 3, startTime = 6);
  Modelica.Mechanics.Translational.Sources.ForceStep step2(stepForce = 3, startTime = 8);
  Modelica.Mechanics.Translational.Components.Mass body(m = 1, s(start = 0, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.SupportFriction friction(f_pos = [0, 1], peak = 1.5);
  Modelica.Mechanics.Translational.Sources.Force push;
  Modelica.Blocks.Sources.Ramp ramp(height = 5, duration = 10);
  Modelica.Mechanics.Translational.Components.MassWithStopAndFriction stribeck(m = 1, F_prop = 0.5, F_Coulomb = 1, F_Stribeck = 1, fexp = 2, s(start = 0, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Sources.Force pushStribeck;
equation
  connect(mass.flange_b, brake.flange_a);
  connect(step1.flange, mass.flange_a);
  connect(step2.flange, mass.flange_a);
  connect(pressed.y, brake.f_normalized);
  connect(ramp.y, push.f);
  connect(push.flange, body.flange_a);
  connect(body.flange_b, friction.flange_a);
  connect(ramp.y, pushStribeck.f);
  connect(pushStribeck.flange, stribeck.flange_a);
end TranslationalFriction;
";

/// The Stribeck mass after breakaway at t = 4 s: v' = 0.5 t - 0.5 v - 1 - exp(-2 v) from v = 0,
/// by the classical Runge-Kutta method with a tiny step, at `t_end`.
fn stribeck_speed(t_end: f64) -> f64 {
    let f = |t: f64, v: f64| 0.5 * t - 0.5 * v - 1.0 - (-2.0 * v).exp();
    let n = 100_000;
    let h = (t_end - 4.0) / n as f64;
    let (mut t, mut v) = (4.0, 0.0);
    for _ in 0..n {
        let k1 = f(t, v);
        let k2 = f(t + h / 2.0, v + h / 2.0 * k1);
        let k3 = f(t + h / 2.0, v + h / 2.0 * k2);
        let k4 = f(t + h, v + h * k3);
        v += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        t += h;
    }
    v
}

#[test]
fn translational_brake_support_friction_and_stribeck_friction_stick_and_slide() {
    let result = run(TRANSLATIONAL_FRICTION, 10.0);
    for t in [1.0_f64, 2.5, 4.5] {
        check(&result, "mass.v", t, 10.0 - 2.0 * t, 1e-9);
        check(&result, "mass.s", t, 10.0 * t - t * t, 1e-9);
        check(&result, "brake.f", t, 4.0, 1e-12);
    }
    assert!(has_event_at(&result, 5.0, 1e-9), "the brake does not stick at t = 5");
    for (t, v) in rows_between(&result, "mass.v", 5.0 + 1e-9, 8.0) {
        assert!(v.abs() < 1e-12, "mass.v({t}) = {v}");
        check(&result, "brake.f", t, if t < 6.0 { 0.0 } else { 3.0 }, 1e-12);
        check(&result, "mass.s", t, 25.0, 1e-9);
    }
    for t in [8.5_f64, 9.0, 10.0] {
        check(&result, "mass.v", t, t - 8.0, 1e-9);
    }
    for (t, v) in rows_between(&result, "body.v", 0.0, 3.0 - 1e-9) {
        assert!(v.abs() < 1e-12, "body.v({t}) = {v}");
        check(&result, "friction.f", t, 0.5 * t, 1e-12);
    }
    for t in [3.6_f64, 4.8, 6.0] {
        check(&result, "body.v", t, 0.25 * (t * t - 9.0) - (t - 3.0), 1e-9);
        check(&result, "friction.f", t, 1.0, 1e-12);
    }
    for (t, v) in rows_between(&result, "stribeck.v", 0.0, 4.0 - 1e-9) {
        assert!(v == 0.0, "stribeck.v({t}) = {v}");
        check(&result, "stribeck.f", t, 0.5 * t, 1e-12);
    }
    assert!(
        has_event_at(&result, 4.0, 1e-9),
        "the Stribeck mass does not break away at t = 4"
    );
    for t in [5.0_f64, 7.0, 10.0] {
        let v = stribeck_speed(t);
        check(&result, "stribeck.v", t, v, 1e-7);
        let friction = 0.5 * v + 1.0 + (-2.0 * v).exp();
        check(&result, "stribeck.f", t, friction, 1e-7);
    }
}
