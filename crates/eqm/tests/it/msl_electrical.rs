//! `Modelica.Electrical.Analog` of the standard library under the Modelica Standard Library's
//! names: small circuits written as a user of that library writes them, each checked against a
//! closed form or a hand computation, and `examples/dc_motor_pid.eqm` against its hand-derived
//! steady states and the closed-form response of the open-loop motor.
//!
//! The runs use tolerances of 1e-10 and an output interval fine enough that the linear
//! interpolation between output points stays below the tolerances of the checks (1e-6 to 1e-5
//! relative unless a comment says otherwise).

use eqm::SimulationResult;

use crate::{check, check_relative, example};

/// The run of the only model of `text` from 0 to `stop` with output every `interval`.
fn simulate(text: &str, stop: f64, interval: f64) -> SimulationResult {
    crate::run_tight(crate::compile(text), stop, Some(interval))
}

/// The roots s1 > s2 (both real and negative) of s^2 + a s + b.
fn real_roots(a: f64, b: f64) -> (f64, f64) {
    let d = (a * a - 4.0 * b).sqrt();
    ((-a + d) / 2.0, (-a - d) / 2.0)
}

/// The speed and current of a DC motor (R, L, k, J) switched onto the voltage V at rest, without
/// load: J w' = k i, L i' = V - R i - k w, so w'' + (R/L) w' + k^2/(L J) w = k V/(L J), with
/// w(0) = w'(0) = 0. With the real roots s1, s2 of the characteristic polynomial,
/// w = V/k (1 + (s2 e^(s1 t) - s1 e^(s2 t))/(s1 - s2)) and i = J w'/k.
fn motor_from_rest(v: f64, r: f64, l: f64, k: f64, j: f64, t: f64) -> (f64, f64) {
    let (s1, s2) = real_roots(r / l, k * k / (l * j));
    let w = v / k * (1.0 + (s2 * (s1 * t).exp() - s1 * (s2 * t).exp()) / (s1 - s2));
    let dw = v / k * s1 * s2 * ((s1 * t).exp() - (s2 * t).exp()) / (s1 - s2);
    (w, j * dw / k)
}

/// A DC motor: 10 V through R = 2 Ohm and L = 0.01 H into an EMF of k = 0.5 N.m/A driving an
/// inertia of 0.01 kg.m2 (no load); beside it, the same armature circuit with its EMF's flange
/// held at zero speed by a speed source (a locked rotor).
const MOTOR: &str = "model Motor \"A DC motor running up and a stalled one\"
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 2);
  Modelica.Electrical.Analog.Basic.Inductor inductor(L = 0.01, i(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.EMF emf(k = 0.5);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 0.01, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.Resistor stalledResistor(R = 2);
  Modelica.Electrical.Analog.Basic.Inductor stalledInductor(L = 0.01, i(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.EMF stalled(k = 0.5);
  Modelica.Mechanics.Rotational.Sources.Speed lock;
  Modelica.Blocks.Sources.Constant zero(k = 0);
equation
  connect(source.p, resistor.p);
  connect(resistor.n, inductor.p);
  connect(inductor.n, emf.p);
  connect(emf.n, source.n);
  connect(source.n, ground.p);
  connect(emf.flange, inertia.flange_a);
  connect(source.p, stalledResistor.p);
  connect(stalledResistor.n, stalledInductor.p);
  connect(stalledInductor.n, stalled.p);
  connect(stalled.n, source.n);
  connect(stalled.flange, lock.flange);
  connect(zero.y, lock.w_ref);
end Motor;
";

#[test]
fn emf_motor_runs_up_to_v_over_k_and_a_stalled_one_gives_the_torque_k_i() {
    let result = simulate(MOTOR, 2.0, 1e-4);
    // The running motor: the second-order closed form, then the no-load speed V/k = 20 rad/s
    // at which the back EMF k w balances the supply and no current flows.
    for t in [0.01_f64, 0.05, 0.1, 0.3, 1.0] {
        let (w, i) = motor_from_rest(10.0, 2.0, 0.01, 0.5, 0.01, t);
        check(&result, "inertia.w", t, w, 1e-6);
        check(&result, "emf.w", t, w, 1e-6);
        check(&result, "emf.v", t, 0.5 * w, 1e-6);
        check(&result, "emf.i", t, i, 1e-6);
        check(&result, "emf.tauElectrical", t, 0.5 * i, 1e-6);
        check(&result, "emf.tau", t, 0.5 * i, 1e-6);
    }
    // The roots are -13.4 and -186.6 1/s, so by t = 2 s the speed is within 1e-10 of V/k.
    check(&result, "inertia.w", 2.0, 20.0, 1e-9);
    check(&result, "emf.i", 2.0, 0.0, 1e-9);
    // The stalled motor: no back EMF, so the current rises with the electrical time constant
    // L/R = 5 ms to V/R = 5 A, and the lock holds the torque k i = 2.5 N.m.
    for t in [0.002_f64, 0.005, 0.01, 0.02, 1.0] {
        let i = 5.0 * (1.0 - (-t / 0.005).exp());
        check(&result, "stalled.i", t, i, 1e-6);
        check(&result, "stalled.v", t, 0.0, 1e-9);
        check(&result, "stalled.tauElectrical", t, 0.5 * i, 1e-6);
        // The EMF's flange carries -k i (the reaction on the converter), the lock +k i.
        check(&result, "stalled.flange.tau", t, -0.5 * i, 1e-6);
        check(&result, "lock.flange.tau", t, 0.5 * i, 1e-6);
    }
}

/// Two-ports. A 10 V step from t = 0 drives the primary of a transformer (L1 = 2 H, L2 = 8 H,
/// M = 3 H) through R = 5 Ohm, the secondary open: i1 = V/R (1 - e^(-R t/L1)) and the
/// open-circuit secondary voltage v2 = M di1/dt = (M/L1) v1. An ideal transformer of ratio
/// n = 4 feeds a 2 Ohm load from a sine of 8 V: v2 = v1/4, i2 = -v2/2, i1 = -i2/n. A gyrator
/// (G1 = 2 S, G2 = 3 S) fed with 1.5 V drives a 0.25 Ohm load: i2 = -G1 v1 = -3 A, so
/// v2 = 0.75 V and i1 = G2 v2 = 2.25 A.
const TWO_PORTS: &str = "model TwoPorts \"A transformer, an ideal transformer and a gyrator\"
  Modelica.Electrical.Analog.Sources.StepVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 5);
  Modelica.Electrical.Analog.Basic.Transformer transformer(L1 = 2, L2 = 8, M = 3, i1(fixed = true));
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Basic.Ground secondaryGround;
  Modelica.Electrical.Analog.Ideal.IdealTransformer ideal(n = 4);
  Modelica.Electrical.Analog.Sources.SineVoltage sine(V = 8, f = 1);
  Modelica.Electrical.Analog.Basic.Resistor load(R = 2);
  Modelica.Electrical.Analog.Basic.Gyrator gyrator(G1 = 2, G2 = 3);
  Modelica.Electrical.Analog.Sources.ConstantVoltage dc(V = 1.5);
  Modelica.Electrical.Analog.Basic.Resistor gyratorLoad(R = 0.25);
equation
  connect(source.p, resistor.p);
  connect(resistor.n, transformer.p1);
  connect(transformer.n1, source.n);
  connect(source.n, ground.p);
  connect(transformer.n2, secondaryGround.p);
  connect(sine.p, ideal.p1);
  connect(ideal.n1, ground.p);
  connect(sine.n, ground.p);
  connect(ideal.p2, load.p);
  connect(load.n, ideal.n2);
  connect(ideal.n2, ground.p);
  connect(dc.p, gyrator.p1);
  connect(gyrator.n1, ground.p);
  connect(dc.n, ground.p);
  connect(gyrator.p2, gyratorLoad.p);
  connect(gyratorLoad.n, ground.p);
  connect(gyrator.n2, ground.p);
end TwoPorts;
";

#[test]
fn transformer_ideal_transformer_and_gyrator_follow_their_port_equations() {
    let result = simulate(TWO_PORTS, 2.0, 1e-3);
    for t in [0.1_f64, 0.4, 1.0, 2.0] {
        let v1 = 10.0 * (-2.5 * t).exp();
        check(&result, "transformer.i1", t, 2.0 * (1.0 - (-2.5 * t).exp()), 1e-6);
        check(&result, "transformer.v1", t, v1, 1e-6);
        check(&result, "transformer.v2", t, 1.5 * v1, 1e-6);
        check(&result, "transformer.i2", t, 0.0, 1e-9);
    }
    for t in [0.1_f64, 0.25, 0.6, 0.75] {
        let v1 = 8.0 * (2.0 * std::f64::consts::PI * t).sin();
        // Linear interpolation of a sine of 8 V sampled every 1 ms: error below 8 (2 pi)^2
        // (1e-3)^2/8 = 4e-5.
        check(&result, "ideal.v1", t, v1, 5e-6);
        check(&result, "ideal.v2", t, v1 / 4.0, 5e-6);
        check(&result, "ideal.i2", t, -v1 / 8.0, 5e-6);
        check(&result, "ideal.i1", t, v1 / 32.0, 5e-6);
    }
    check(&result, "gyrator.i2", 1.0, -3.0, 1e-9);
    check(&result, "gyrator.v2", 1.0, 0.75, 1e-9);
    check(&result, "gyrator.i1", 1.0, 2.25, 1e-9);
}

/// An ideal transformer with magnetization (n = 2, Lm1 = 2 H) fed from a 10 V step through
/// 5 Ohm, with 4 Ohm on the secondary, beside one without magnetization fed directly. Seen from
/// the primary, the load is n^2 4 = 16 Ohm in parallel with Lm1, so at the start the whole current
/// 10/(5 + 16) A flows into the load, and the magnetization current rises to 10/5 = 2 A with the
/// time constant Lm1/(5 || 16) = 2 (21/80) = 0.525 s: im1 = 2 (1 - e^(-t/0.525)),
/// v1 = Lm1 der(im1) = (160/21) e^(-t/0.525), v2 = v1/n, i2 = -v2/4. Without magnetization the
/// DC voltage passes: v2 = 10/2 = 5 V, i1 = -i2/n = (5/4)/2 A.
const MAGNETIZATION: &str = "model Magnetization \"Ideal transformers with and without magnetization\"
  Modelica.Electrical.Analog.Sources.StepVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 5);
  Modelica.Electrical.Analog.Ideal.IdealTransformer core(n = 2, considerMagnetization = true, Lm1 = 2, psim1(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.Resistor load(R = 4);
  Modelica.Electrical.Analog.Ideal.IdealTransformer plain(n = 2);
  Modelica.Electrical.Analog.Basic.Resistor plainLoad(R = 4);
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.n, ground.p);
  connect(source.p, resistor.p);
  connect(resistor.n, core.p1);
  connect(core.n1, ground.p);
  connect(core.p2, load.p);
  connect(load.n, ground.p);
  connect(core.n2, ground.p);
  connect(source.p, plain.p1);
  connect(plain.n1, ground.p);
  connect(plain.p2, plainLoad.p);
  connect(plainLoad.n, ground.p);
  connect(plain.n2, ground.p);
end Magnetization;
";

#[test]
fn ideal_transformer_with_magnetization_blocks_dc_and_without_passes_it() {
    let result = simulate(MAGNETIZATION, 3.0, 1e-3);
    let tau = 2.0 * 21.0 / 80.0;
    check(&result, "core.i1", 0.0, 10.0 / 21.0, 1e-9);
    for t in [0.0_f64, 0.25, 0.5, 1.0, 3.0] {
        let v1 = 160.0 / 21.0 * (-t / tau).exp();
        check(&result, "core.im1", t, 2.0 * (1.0 - (-t / tau).exp()), 1e-6);
        check(&result, "core.v1", t, v1, 1e-6);
        check(&result, "core.v2", t, v1 / 2.0, 1e-6);
        check(&result, "core.i2", t, -v1 / 8.0, 1e-6);
        check(&result, "core.psim1", t, 4.0 * (1.0 - (-t / tau).exp()), 1e-6);
        check(&result, "plain.v2", t, 5.0, 1e-9);
        check(&result, "plain.i1", t, 0.625, 1e-9);
        check(&result, "plain.im1", t, 0.0, 1e-9);
    }
}

/// The controlled sources and the ideal short and idle branches. A 2 V source controls a VCV
/// (gain 3, so v2 = 6 V across 2 Ohm: i2 = -3 A) and a VCC (transconductance 0.5 S: i2 = 1 A
/// flows from p2 through the source, so back through its 4 Ohm load: -4 V). A current of 1.5 A
/// flows through the input of a CCV (transresistance 4 Ohm: v2 = 6 V) and of a CCC (gain 2:
/// i2 = 3 A, so -9 V across 3 Ohm). The short carries 2 A into 1 Ohm, the idle branch across
/// the source carries nothing.
const CONTROLLED: &str = "model Controlled \"Controlled sources, short and idle\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantVoltage u(V = 2);
  Modelica.Electrical.Analog.Basic.VCV vcv(gain = 3);
  Modelica.Electrical.Analog.Basic.Resistor rVcv(R = 2);
  Modelica.Electrical.Analog.Basic.VCC vcc(transConductance = 0.5);
  Modelica.Electrical.Analog.Basic.Resistor rVcc(R = 4);
  Modelica.Electrical.Analog.Sources.ConstantCurrent j(I = 1.5);
  Modelica.Electrical.Analog.Basic.CCV ccv(transResistance = 4);
  Modelica.Electrical.Analog.Basic.Resistor rCcv(R = 2);
  Modelica.Electrical.Analog.Sources.ConstantCurrent j2(I = 1.5);
  Modelica.Electrical.Analog.Basic.CCC ccc(gain = 2);
  Modelica.Electrical.Analog.Basic.Resistor rCcc(R = 3);
  Modelica.Electrical.Analog.Ideal.Short short;
  Modelica.Electrical.Analog.Basic.Resistor rShort(R = 1);
  Modelica.Electrical.Analog.Ideal.Idle idle;
equation
  connect(u.n, ground.p);
  connect(u.p, vcv.p1);
  connect(vcv.n1, ground.p);
  connect(vcv.p2, rVcv.p);
  connect(rVcv.n, ground.p);
  connect(vcv.n2, ground.p);
  connect(u.p, vcc.p1);
  connect(vcc.n1, ground.p);
  connect(vcc.p2, rVcc.p);
  connect(rVcc.n, ground.p);
  connect(vcc.n2, ground.p);
  connect(j.p, ground.p);
  connect(j.n, ccv.p1);
  connect(ccv.n1, ground.p);
  connect(ccv.p2, rCcv.p);
  connect(rCcv.n, ground.p);
  connect(ccv.n2, ground.p);
  connect(j2.p, ground.p);
  connect(j2.n, ccc.p1);
  connect(ccc.n1, ground.p);
  connect(ccc.p2, rCcc.p);
  connect(rCcc.n, ground.p);
  connect(ccc.n2, ground.p);
  connect(u.p, short.p);
  connect(short.n, rShort.p);
  connect(rShort.n, ground.p);
  connect(u.p, idle.p);
  connect(idle.n, ground.p);
end Controlled;
";

#[test]
fn controlled_sources_short_and_idle_follow_their_equations() {
    let result = simulate(CONTROLLED, 1.0, 0.1);
    for (name, expected) in [
        ("vcv.i1", 0.0),
        ("vcv.v2", 6.0),
        ("vcv.i2", -3.0),
        ("vcc.i1", 0.0),
        ("vcc.i2", 1.0),
        ("rVcc.v", -4.0),
        ("ccv.v1", 0.0),
        ("ccv.i1", 1.5),
        ("ccv.v2", 6.0),
        ("rCcv.i", 3.0),
        ("ccc.v1", 0.0),
        ("ccc.i2", 3.0),
        ("rCcc.v", -9.0),
        ("short.v", 0.0),
        ("short.i", 2.0),
        ("idle.i", 0.0),
        ("idle.v", 2.0),
    ] {
        check(&result, name, 0.5, expected, 1e-12);
    }
}

/// The diode current of the MSL's exponential diode: Ids (exlin(v/Vt) - 1) + v/R, where the
/// exponential continues along its tangent above Maxexp.
fn diode_current(v: f64, ids: f64, vt: f64, maxexp: f64, r: f64) -> f64 {
    let x = v / vt;
    let e = if x > maxexp {
        maxexp.exp() * (1.0 + x - maxexp)
    } else {
        x.exp()
    };
    ids * (e - 1.0) + v / r
}

/// Diodes with the default parameters (Ids = 1e-6 A, Vt = 0.04 V, Maxexp = 15, R = 1e8 Ohm)
/// across constant voltages: blocking at -1 V (-Ids - 1e-8 A), 0.268 A at 0.5 V on the
/// exponential, and from v = Maxexp Vt = 0.6 V on its linear continuation (19.6 A at 0.8 V,
/// 35.96 A at 1 V). A diode with other parameters across 100 V, where exp(v/Vt) = e^4000 would
/// overflow: its current is the continuation, 4.24e7 A. Constant voltages keep the checks free of
/// the interpolation between output points.
const DIODE: &str = "model Diodes \"Diodes at fixed voltages on both branches of the characteristic\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vBlocking(V = -1);
  Modelica.Electrical.Analog.Semiconductors.Diode blocking;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vForward(V = 0.5);
  Modelica.Electrical.Analog.Semiconductors.Diode forward;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vKnee(V = 0.6);
  Modelica.Electrical.Analog.Semiconductors.Diode knee;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vBeyond(V = 0.8);
  Modelica.Electrical.Analog.Semiconductors.Diode beyond;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vFar(V = 1);
  Modelica.Electrical.Analog.Semiconductors.Diode far;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vHigh(V = 100);
  Modelica.Electrical.Analog.Semiconductors.Diode strong(Ids = 1e-9, Vt = 0.025, Maxexp = 30, R = 1e6);
equation
  connect(vBlocking.p, blocking.p);
  connect(blocking.n, ground.p);
  connect(vBlocking.n, ground.p);
  connect(vForward.p, forward.p);
  connect(forward.n, ground.p);
  connect(vForward.n, ground.p);
  connect(vKnee.p, knee.p);
  connect(knee.n, ground.p);
  connect(vKnee.n, ground.p);
  connect(vBeyond.p, beyond.p);
  connect(beyond.n, ground.p);
  connect(vBeyond.n, ground.p);
  connect(vFar.p, far.p);
  connect(far.n, ground.p);
  connect(vFar.n, ground.p);
  connect(vHigh.p, strong.p);
  connect(strong.n, ground.p);
  connect(vHigh.n, ground.p);
end Diodes;
";

#[test]
fn diode_follows_the_exponential_and_its_linear_continuation() {
    let result = simulate(DIODE, 1.0, 0.1);
    for (diode, v) in [
        ("blocking", -1.0),
        ("forward", 0.5),
        ("knee", 0.6),
        ("beyond", 0.8),
        ("far", 1.0),
    ] {
        check_relative(
            &result,
            &format!("{diode}.i"),
            0.5,
            diode_current(v, 1e-6, 0.04, 15.0, 1e8),
            1e-12,
        );
    }
    // The values named above, computed from the formula by hand.
    check_relative(&result, "blocking.i", 0.5, -1.01e-6, 1e-9);
    check_relative(&result, "forward.i", 0.5, 0.268_336_291_5, 1e-9);
    check_relative(&result, "beyond.i", 0.5, 19.614_103_24, 1e-9);
    check_relative(&result, "far.i", 0.5, 35.959_190_11, 1e-9);
    // Current flows from p through the diode to n: the sources deliver it (source.i < 0).
    check_relative(&result, "vFar.i", 0.5, -35.959_190_11, 1e-9);
    check_relative(&result, "far.LossPower", 0.5, 35.959_190_11, 1e-9);
    let strong = diode_current(100.0, 1e-9, 0.025, 30.0, 1e6);
    assert!((strong / 4.243_599_056e7 - 1.0).abs() < 1e-9, "{strong}");
    check_relative(&result, "strong.i", 0.5, strong, 1e-12);
}

/// Inverting amplifiers (R1 = 1 kOhm from the input, R2 = 3 kOhm feedback) with the three ideal
/// op-amps, from a sine of 1 V at 1 Hz: the gain is -R2/R1 = -3. The limited op-amp has the
/// limits VMax = 2 V and VMin = -2.5 V: the output is clipped to them while -3 v_in would pass
/// them (v_in > 5/6 V or v_in < -2/3 V), and there the input voltage is no longer zero: with
/// out.v at a limit, the inverting input is at (R2 v_in + R1 out.v)/(R1 + R2).
const OPAMPS: &str = "model OpAmps \"Inverting amplifiers with the ideal op-amps\"
  Modelica.Electrical.Analog.Sources.SineVoltage vin(V = 1, f = 1);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Basic.Resistor r1(R = 1000);
  Modelica.Electrical.Analog.Basic.Resistor r2(R = 3000);
  Modelica.Electrical.Analog.Ideal.IdealOpAmp opAmp;
  Modelica.Electrical.Analog.Basic.Resistor r1b(R = 1000);
  Modelica.Electrical.Analog.Basic.Resistor r2b(R = 3000);
  Modelica.Electrical.Analog.Ideal.IdealOpAmp3Pin opAmp3;
  Modelica.Electrical.Analog.Basic.Resistor r1c(R = 1000);
  Modelica.Electrical.Analog.Basic.Resistor r2c(R = 3000);
  Modelica.Electrical.Analog.Ideal.IdealOpAmpLimited limited;
  Modelica.Electrical.Analog.Sources.ConstantVoltage vMax(V = 2);
  Modelica.Electrical.Analog.Sources.ConstantVoltage vMin(V = -2.5);
  Modelica.Electrical.Analog.Basic.Resistor outLoad(R = 100);
equation
  connect(vin.n, ground.p);
  connect(vin.p, r1.p);
  connect(r1.n, opAmp.p1);
  connect(opAmp.p1, r2.p);
  connect(r2.n, opAmp.p2);
  connect(opAmp.n1, ground.p);
  connect(opAmp.n2, ground.p);
  connect(vin.p, r1b.p);
  connect(r1b.n, opAmp3.in_n);
  connect(opAmp3.in_n, r2b.p);
  connect(r2b.n, opAmp3.out);
  connect(opAmp3.in_p, ground.p);
  connect(vin.p, r1c.p);
  connect(r1c.n, limited.in_n);
  connect(limited.in_n, r2c.p);
  connect(r2c.n, limited.out);
  connect(limited.in_p, ground.p);
  connect(vMax.p, limited.VMax);
  connect(vMax.n, ground.p);
  connect(vMin.p, limited.VMin);
  connect(vMin.n, ground.p);
  connect(limited.out, outLoad.p);
  connect(outLoad.n, ground.p);
end OpAmps;
";

#[test]
fn ideal_op_amps_amplify_by_minus_r2_over_r1_and_the_limited_one_clips() {
    let result = simulate(OPAMPS, 1.0, 1e-3);
    let sine = |t: f64| (2.0 * std::f64::consts::PI * t).sin();
    // Sine of 1 V sampled every 1 ms: the interpolation error of -3 v_in is below 1.5e-5.
    for t in [0.05_f64, 0.1, 0.25, 0.5, 0.62, 0.75, 0.9] {
        let out = -3.0 * sine(t);
        check(&result, "opAmp.v2", t, out, 2e-5);
        check(&result, "opAmp.v1", t, 0.0, 1e-9);
        check(&result, "opAmp.i1", t, 0.0, 1e-9);
        check(&result, "opAmp3.out.v", t, out, 2e-5);
        check(&result, "opAmp3.in_n.v", t, 0.0, 1e-9);
        let clipped = out.clamp(-2.5, 2.0);
        check(&result, "limited.out.v", t, clipped, 2e-5);
        let vn = (3000.0 * sine(t) + 1000.0 * clipped) / 4000.0;
        check(&result, "limited.vin", t, -vn, 2e-5);
    }
    // Exactly at the limits while clipped (no smoothing), and the input voltage exactly zero in
    // between.
    check(&result, "limited.out.v", 0.25, -2.5, 1e-12);
    check(&result, "limited.out.v", 0.75, 2.0, 1e-12);
    check(&result, "limited.vin", 0.25, -0.125, 1e-9);
    check(&result, "limited.vin", 0.75, 0.25, 1e-9);
    check(&result, "limited.vin", 0.05, 0.0, 1e-12);
    // The op-amps draw no current at their inputs, so r1 and r2 carry the same current.
    check(&result, "r1.i", 0.1, sine(0.1) / 1000.0, 1e-9);
    check(&result, "r2.i", 0.1, sine(0.1) / 1000.0, 1e-9);
}

/// Switches between a 2 V source and 1 Ohm resistors. The controlled switches follow the
/// potential of their control pin, a ramp from 0 to 2 V within 1 s against the level 1 V, so
/// they switch at t = 0.5 s. The Boolean-controlled ones switch at t = 0.25 s. Closed, the
/// current is 2/(1 + Ron) and the loss Ron i^2; open, it is 2 Goff/(1 + Goff) and the loss
/// v i with v = 2/(1 + Goff) (Ron = Goff = 1e-5).
const SWITCHES: &str = "model Switches \"Switches driven by a pin potential and by a Boolean\"
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 2);
  Modelica.Electrical.Analog.Ideal.ControlledIdealOpeningSwitch opening(level = 1);
  Modelica.Electrical.Analog.Ideal.ControlledIdealClosingSwitch closing(level = 1);
  Modelica.Electrical.Analog.Ideal.IdealOpeningSwitch booleanOpening;
  Modelica.Electrical.Analog.Ideal.IdealClosingSwitch booleanClosing;
  Modelica.Electrical.Analog.Basic.Resistor r1(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor r2(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor r3(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor r4(R = 1);
  Modelica.Electrical.Analog.Sources.RampVoltage control(V = 2, duration = 1);
  Modelica.Blocks.Sources.BooleanStep step(startTime = 0.25);
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.n, ground.p);
  connect(source.p, opening.p);
  connect(opening.n, r1.p);
  connect(r1.n, ground.p);
  connect(source.p, closing.p);
  connect(closing.n, r2.p);
  connect(r2.n, ground.p);
  connect(source.p, booleanOpening.p);
  connect(booleanOpening.n, r3.p);
  connect(r3.n, ground.p);
  connect(source.p, booleanClosing.p);
  connect(booleanClosing.n, r4.p);
  connect(r4.n, ground.p);
  connect(control.p, opening.control);
  connect(control.p, closing.control);
  connect(control.n, ground.p);
  connect(step.y, booleanOpening.control);
  connect(step.y, booleanClosing.control);
end Switches;
";

#[test]
fn controlled_and_boolean_switches_conduct_with_ron_and_leak_with_goff() {
    let result = simulate(SWITCHES, 1.0, 1e-3);
    let (ron, goff) = (1e-5_f64, 1e-5_f64);
    let closed = 2.0 / (1.0 + ron);
    let open = 2.0 * goff / (1.0 + goff);
    let open_loss = 2.0 / (1.0 + goff) * open;
    for (t, before) in [(0.1_f64, true), (0.4, true), (0.6, false), (0.9, false)] {
        let (opening, closing) = if before { (closed, open) } else { (open, closed) };
        check_relative(&result, "r1.i", t, opening, 1e-9);
        check_relative(&result, "r2.i", t, closing, 1e-9);
        let loss = |i: f64| if i > 1.0 { ron * i * i } else { open_loss };
        check_relative(&result, "opening.LossPower", t, loss(opening), 1e-9);
        check_relative(&result, "closing.LossPower", t, loss(closing), 1e-9);
        check(&result, "opening.control.i", t, 0.0, 1e-12);
    }
    for (t, on) in [(0.1_f64, false), (0.3, true), (0.9, true)] {
        let (opening, closing) = if on { (open, closed) } else { (closed, open) };
        check_relative(&result, "r3.i", t, opening, 1e-9);
        check_relative(&result, "r4.i", t, closing, 1e-9);
    }
}

/// An intermediate switch between the sources 2 V (p1) and 3 V (p2) and the loads 1 Ohm (n1)
/// and 2 Ohm (n2), crossed from t = 0.5 s. Each load node is reached by a closed branch
/// (Ron = 1e-5) from one source and an open branch (Goff = 1e-5) from the other, so its potential
/// x solves (V_closed - x)/Ron + Goff (V_open - x) = x/R_load.
const INTERMEDIATE: &str = "model Intermediate \"An intermediate switch crossing two sources\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantVoltage v1(V = 2);
  Modelica.Electrical.Analog.Sources.ConstantVoltage v2(V = 3);
  Modelica.Electrical.Analog.Ideal.IdealIntermediateSwitch switch;
  Modelica.Electrical.Analog.Basic.Resistor r1(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor r2(R = 2);
equation
  connect(v1.n, ground.p);
  connect(v2.n, ground.p);
  connect(v1.p, switch.p1);
  connect(v2.p, switch.p2);
  connect(switch.n1, r1.p);
  connect(r1.n, ground.p);
  connect(switch.n2, r2.p);
  connect(r2.n, ground.p);
  switch.control = time > 0.5;
end Intermediate;
";

#[test]
fn intermediate_switch_crosses_its_connections() {
    let result = simulate(INTERMEDIATE, 1.0, 1e-3);
    let (ron, goff) = (1e-5_f64, 1e-5_f64);
    let node = |closed: f64, open: f64, r: f64| (closed / ron + goff * open) / (1.0 / r + 1.0 / ron + goff);
    for (t, crossed) in [(0.25_f64, false), (0.75, true)] {
        let (to_n1, to_n2) = if crossed {
            ((3.0, 2.0), (2.0, 3.0))
        } else {
            ((2.0, 3.0), (3.0, 2.0))
        };
        check_relative(&result, "r1.v", t, node(to_n1.0, to_n1.1, 1.0), 1e-12);
        check_relative(&result, "r2.v", t, node(to_n2.0, to_n2.1, 2.0), 1e-12);
    }
}

/// A sine of 10 V at 1 Hz feeds 100 Ohm loads through an ideal thyristor, fired by a gate pulse
/// of 50 ms every second from t = 0.1 s, and through a gate turn-off thyristor whose gate is on
/// from 0.1 s to 0.3 s. The thyristor conducts from each firing (0.1 s, 1.1 s) until its
/// current reaches zero (0.5 s, 1.5 s) and blocks otherwise, also from 1.0 s to 1.1 s while the
/// voltage is positive again; the GTO stops conducting at 0.3 s, when its gate turns off. A
/// conducting load sees 10 sin(2 pi t) 100/(100 + Ron), a blocked one the leakage
/// 100 Goff v/(1 + 100 Goff). Commuting switches connect 2 V to 1 Ohm (n1) or 2 Ohm (n2): the
/// Boolean one to n2 from t = 0.5 s, the controlled one from the time its control ramp (0 to 2 V
/// within 2 s) passes the level 1 V, t = 1 s.
const THYRISTORS: &str = "model Thyristors \"Thyristors on a sine, and commuting switches\"
  Modelica.Electrical.Analog.Sources.SineVoltage sine(V = 10, f = 1);
  Modelica.Electrical.Analog.Ideal.IdealThyristor thyristor;
  Modelica.Electrical.Analog.Basic.Resistor load(R = 100);
  Modelica.Electrical.Analog.Ideal.IdealGTOThyristor gto;
  Modelica.Electrical.Analog.Basic.Resistor gtoLoad(R = 100);
  Modelica.Blocks.Sources.BooleanPulse gate(width = 5, period = 1, startTime = 0.1);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantVoltage dc(V = 2);
  Modelica.Electrical.Analog.Ideal.IdealCommutingSwitch commuting;
  Modelica.Electrical.Analog.Basic.Resistor r1(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor r2(R = 2);
  Modelica.Electrical.Analog.Ideal.ControlledIdealCommutingSwitch controlled(level = 1);
  Modelica.Electrical.Analog.Basic.Resistor c1(R = 1);
  Modelica.Electrical.Analog.Basic.Resistor c2(R = 2);
  Modelica.Electrical.Analog.Sources.RampVoltage ramp(V = 2, duration = 2);
equation
  connect(sine.n, ground.p);
  connect(sine.p, thyristor.p);
  connect(thyristor.n, load.p);
  connect(load.n, ground.p);
  connect(sine.p, gto.p);
  connect(gto.n, gtoLoad.p);
  connect(gtoLoad.n, ground.p);
  connect(gate.y, thyristor.fire);
  gto.fire = time > 0.1 and time < 0.3;
  connect(dc.n, ground.p);
  connect(dc.p, commuting.p);
  connect(commuting.n1, r1.p);
  connect(r1.n, ground.p);
  connect(commuting.n2, r2.p);
  connect(r2.n, ground.p);
  commuting.control = time > 0.5;
  connect(dc.p, controlled.p);
  connect(controlled.n1, c1.p);
  connect(c1.n, ground.p);
  connect(controlled.n2, c2.p);
  connect(c2.n, ground.p);
  connect(ramp.p, controlled.control);
  connect(ramp.n, ground.p);
end Thyristors;
";

#[test]
fn thyristors_conduct_from_their_gate_and_commuting_switches_change_over() {
    let result = simulate(THYRISTORS, 2.0, 1e-3);
    let (ron, goff) = (1e-5_f64, 1e-5_f64);
    let source = |t: f64| 10.0 * (2.0 * std::f64::consts::PI * t).sin();
    let on = |t: f64| source(t) * 100.0 / (100.0 + ron);
    let blocked = |t: f64| source(t) * 100.0 * goff / (1.0 + 100.0 * goff);
    // A sine of 10 V sampled every 1 ms interpolates within 10 (2 pi)^2 1e-6/8 = 5e-5.
    for (t, thyristor, gto) in [
        (0.05_f64, false, false),
        (0.2, true, true),
        (0.28, true, true),
        (0.35, true, false),
        (0.45, true, false),
        (0.75, false, false),
        (1.05, false, false),
        (1.2, true, false),
        (1.45, true, false),
        (1.8, false, false),
    ] {
        let expected = |conducting: bool| if conducting { on(t) } else { blocked(t) };
        check(&result, "load.v", t, expected(thyristor), 6e-5);
        check(&result, "gtoLoad.v", t, expected(gto), 6e-5);
        assert_eq!(
            result.value_at("thyristor.off", t),
            Some(if thyristor { 0.0 } else { 1.0 }),
            "{t}"
        );
    }
    let closed = |r: f64| 2.0 / (r + ron);
    let open = |r: f64| 2.0 * goff / (1.0 + r * goff);
    for (t, first, second) in [(0.25_f64, true, true), (0.75, false, true), (1.5, false, false)] {
        let (i1, i2) = if first {
            (closed(1.0), open(2.0))
        } else {
            (open(1.0), closed(2.0))
        };
        check_relative(&result, "r1.i", t, i1, 1e-9);
        check_relative(&result, "r2.i", t, i2, 1e-9);
        let (i1, i2) = if second {
            (closed(1.0), open(2.0))
        } else {
            (open(1.0), closed(2.0))
        };
        check_relative(&result, "c1.i", t, i1, 1e-9);
        check_relative(&result, "c2.i", t, i2, 1e-9);
    }
    // The loss of the closed branch Ron i^2 and of the open one v i with v = 2 - 2 i or 2 - i.
    let loss = ron * closed(1.0).powi(2) + (2.0 - 2.0 * open(2.0)) * open(2.0);
    check_relative(&result, "commuting.LossPower", 0.25, loss, 1e-9);
}

/// A source's waveform: its value at a time.
type Waveform<'a> = dyn Fn(f64) -> f64 + 'a;

/// Every current source into a 2 Ohm resistor (the source's p grounded, so the source current
/// i flows through the resistor and r.v = 2 i), and the voltage sources added with the shared
/// bases into 1 Ohm resistors. The waveforms, with offset 0.5 and startTime 0.2 where given:
/// step 3 A; ramp 4 A within 0.5 s; sine 3 A at 2 Hz, phase 0.1 rad; cosine 2 A at 1 Hz;
/// damped sine 1 A at 2 Hz with damping 3/s; pulse 1 A, width 25 % of a 0.4 s period; saw
/// tooth 2 A per 0.5 s period; trapezoid 2 A rising 0.1 s, width 0.2 s, falling 0.1 s, period
/// 0.5 s.
const SOURCES: &str = "model Sources \"Every waveform of the current and voltage sources\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.StepCurrent step(I = 3, offset = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rStep(R = 2);
  Modelica.Electrical.Analog.Sources.RampCurrent ramp(I = 4, duration = 0.5, offset = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rRamp(R = 2);
  Modelica.Electrical.Analog.Sources.SineCurrent sine(I = 3, f = 2, phase = 0.1, offset = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rSine(R = 2);
  Modelica.Electrical.Analog.Sources.CosineCurrent cosine(I = 2, f = 1);
  Modelica.Electrical.Analog.Basic.Resistor rCosine(R = 2);
  Modelica.Electrical.Analog.Sources.ExpSineCurrent expSine(I = 1, f = 2, damping = 3, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rExpSine(R = 2);
  Modelica.Electrical.Analog.Sources.PulseCurrent pulse(I = 1, width = 25, period = 0.4, offset = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rPulse(R = 2);
  Modelica.Electrical.Analog.Sources.SawToothCurrent saw(I = 2, period = 0.5);
  Modelica.Electrical.Analog.Basic.Resistor rSaw(R = 2);
  Modelica.Electrical.Analog.Sources.TrapezoidCurrent trapezoid(I = 2, rising = 0.1, width = 0.2, falling = 0.1, period = 0.5);
  Modelica.Electrical.Analog.Basic.Resistor rTrapezoid(R = 2);
  Modelica.Electrical.Analog.Sources.CosineVoltage cosineVoltage(V = 2, f = 1, offset = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rCosineVoltage(R = 1);
  Modelica.Electrical.Analog.Sources.ExpSineVoltage expSineVoltage(V = 1, f = 2, damping = 3);
  Modelica.Electrical.Analog.Basic.Resistor rExpSineVoltage(R = 1);
  Modelica.Electrical.Analog.Sources.SawToothVoltage sawVoltage(V = 2, period = 0.5, startTime = 0.2);
  Modelica.Electrical.Analog.Basic.Resistor rSawVoltage(R = 1);
  Modelica.Electrical.Analog.Sources.TrapezoidVoltage trapezoidVoltage(V = 2, rising = 0.1, width = 0.2, falling = 0.1, period = 0.5, nperiod = 1);
  Modelica.Electrical.Analog.Basic.Resistor rTrapezoidVoltage(R = 1);
equation
  connect(step.p, ground.p);
  connect(step.n, rStep.p);
  connect(rStep.n, ground.p);
  connect(ramp.p, ground.p);
  connect(ramp.n, rRamp.p);
  connect(rRamp.n, ground.p);
  connect(sine.p, ground.p);
  connect(sine.n, rSine.p);
  connect(rSine.n, ground.p);
  connect(cosine.p, ground.p);
  connect(cosine.n, rCosine.p);
  connect(rCosine.n, ground.p);
  connect(expSine.p, ground.p);
  connect(expSine.n, rExpSine.p);
  connect(rExpSine.n, ground.p);
  connect(pulse.p, ground.p);
  connect(pulse.n, rPulse.p);
  connect(rPulse.n, ground.p);
  connect(saw.p, ground.p);
  connect(saw.n, rSaw.p);
  connect(rSaw.n, ground.p);
  connect(trapezoid.p, ground.p);
  connect(trapezoid.n, rTrapezoid.p);
  connect(rTrapezoid.n, ground.p);
  connect(cosineVoltage.n, ground.p);
  connect(cosineVoltage.p, rCosineVoltage.p);
  connect(rCosineVoltage.n, ground.p);
  connect(expSineVoltage.n, ground.p);
  connect(expSineVoltage.p, rExpSineVoltage.p);
  connect(rExpSineVoltage.n, ground.p);
  connect(sawVoltage.n, ground.p);
  connect(sawVoltage.p, rSawVoltage.p);
  connect(rSawVoltage.n, ground.p);
  connect(trapezoidVoltage.n, ground.p);
  connect(trapezoidVoltage.p, rTrapezoidVoltage.p);
  connect(rTrapezoidVoltage.n, ground.p);
end Sources;
";

#[test]
fn current_and_voltage_sources_produce_their_waveforms() {
    let result = simulate(SOURCES, 1.5, 1e-3);
    let pi2 = 2.0 * std::f64::consts::PI;
    // Each source's current i through its resistor, checked through the resistor voltage too.
    let currents: [(&str, &str, &Waveform<'_>); 8] = [
        ("step", "rStep", &|t| 0.5 + if t < 0.2 { 0.0 } else { 3.0 }),
        ("ramp", "rRamp", &|t| 0.5 + 4.0 * ((t - 0.2) / 0.5).clamp(0.0, 1.0)),
        ("sine", "rSine", &|t| {
            0.5 + if t < 0.2 {
                0.0
            } else {
                3.0 * (pi2 * 2.0 * (t - 0.2) + 0.1).sin()
            }
        }),
        ("cosine", "rCosine", &|t| 2.0 * (pi2 * t).cos()),
        ("expSine", "rExpSine", &|t| {
            if t < 0.2 {
                0.0
            } else {
                (-3.0 * (t - 0.2)).exp() * (pi2 * 2.0 * (t - 0.2)).sin()
            }
        }),
        ("pulse", "rPulse", &|t| {
            0.5 + if t >= 0.2 && (t - 0.2) % 0.4 < 0.1 { 1.0 } else { 0.0 }
        }),
        ("saw", "rSaw", &|t| 2.0 * (t % 0.5) / 0.5),
        ("trapezoid", "rTrapezoid", &|t| {
            let s = t % 0.5;
            2.0 * if s < 0.1 {
                s / 0.1
            } else if s < 0.3 {
                1.0
            } else if s < 0.4 {
                (0.4 - s) / 0.1
            } else {
                0.0
            }
        }),
    ];
    // Times away from the edges of the discontinuous waveforms (the value right at an event is
    // the one after it, which the closures above need not reproduce).
    let times = [0.1_f64, 0.35, 0.45, 0.55, 0.68, 0.8, 0.95, 1.12, 1.26, 1.43];
    for (source, resistor, wave) in currents {
        for t in times {
            // Sampled every 1 ms, the smooth waveforms interpolate within 3 (4 pi)^2 1e-6/8 = 6e-5.
            check(&result, &format!("{source}.i"), t, wave(t), 1e-4);
            check(&result, &format!("{resistor}.v"), t, 2.0 * wave(t), 1e-4);
        }
    }
    let voltages: [(&str, &Waveform<'_>); 4] = [
        ("cosineVoltage", &|t| {
            0.5 + if t < 0.2 { 0.0 } else { 2.0 * (pi2 * (t - 0.2)).cos() }
        }),
        ("expSineVoltage", &|t| (-3.0 * t).exp() * (pi2 * 2.0 * t).sin()),
        ("sawVoltage", &|t| {
            if t < 0.2 { 0.0 } else { 2.0 * ((t - 0.2) % 0.5) / 0.5 }
        }),
        ("trapezoidVoltage", &|t| {
            // nperiod = 1: one trapezoid, then 0.
            if t >= 0.5 {
                0.0
            } else if t < 0.1 {
                2.0 * t / 0.1
            } else if t < 0.3 {
                2.0
            } else if t < 0.4 {
                2.0 * (0.4 - t) / 0.1
            } else {
                0.0
            }
        }),
    ];
    for (source, wave) in voltages {
        for t in times {
            check(&result, &format!("{source}.v"), t, wave(t), 1e-4);
        }
    }
    // The waveform lives in the redeclared signal source; the source's variable is its output.
    check(
        &result,
        "sine.signalSource.y",
        0.3,
        0.5 + 3.0 * (pi2 * 0.2 + 0.1).sin(),
        1e-4,
    );
}

/// Table sources and the simple non-ideal op-amp. The voltage table [0, 0; 1, 2; 3, -2] from
/// t = 0.5 s with offset 0.5 V: 0.5 + 2 (t - 0.5) up to t = 1.5, then 2.5 - 2 (t - 1.5),
/// extrapolated beyond t = 3.5. The current table [0, 1; 2, 3] on the time scale 2: 1 + t/2. The
/// op-amp (Slope = 1000) between supplies of +-12 V amplifies a sine of 0.1 V at 1 Hz:
/// out.v = 1000 vin/(1 + 1000 |vin|/12).
const TABLES: &str = "model Tables \"Table sources and the simple op-amp\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.TableVoltage tableVoltage(table = [0, 0; 1, 2; 3, -2], offset = 0.5, startTime = 0.5);
  Modelica.Electrical.Analog.Basic.Resistor r1(R = 1);
  Modelica.Electrical.Analog.Sources.TableCurrent tableCurrent(table = [0, 1; 2, 3], timeScale = 2);
  Modelica.Electrical.Analog.Basic.Resistor r2(R = 2);
  Modelica.Electrical.Analog.Basic.OpAmp opAmp(Slope = 1000);
  Modelica.Electrical.Analog.Sources.ConstantVoltage vPlus(V = 12);
  Modelica.Electrical.Analog.Sources.ConstantVoltage vMinus(V = -12);
  Modelica.Electrical.Analog.Sources.SineVoltage vin(V = 0.1, f = 1);
equation
  connect(tableVoltage.n, ground.p);
  connect(tableVoltage.p, r1.p);
  connect(r1.n, ground.p);
  connect(tableCurrent.p, ground.p);
  connect(tableCurrent.n, r2.p);
  connect(r2.n, ground.p);
  connect(vPlus.n, ground.p);
  connect(vMinus.n, ground.p);
  connect(vPlus.p, opAmp.VMax);
  connect(vMinus.p, opAmp.VMin);
  connect(vin.p, opAmp.in_p);
  connect(vin.n, ground.p);
  connect(opAmp.in_n, ground.p);
end Tables;
";

#[test]
fn table_sources_interpolate_and_the_simple_op_amp_saturates_smoothly() {
    let result = simulate(TABLES, 4.0, 1e-3);
    for (t, v) in [(0.25_f64, 0.5), (1.0, 1.5), (1.75, 2.0), (3.0, -0.5), (3.75, -2.0)] {
        check(&result, "tableVoltage.v", t, v, 1e-9);
        check(&result, "r1.i", t, v, 1e-9);
    }
    for t in [0.0_f64, 1.3, 2.9, 4.0] {
        check(&result, "tableCurrent.i", t, 1.0 + t / 2.0, 1e-9);
        check(&result, "r2.v", t, 2.0 + t, 1e-9);
    }
    for t in [0.25_f64, 0.75, 1.25] {
        let vin = 0.1 * (2.0 * std::f64::consts::PI * t).sin();
        check(
            &result,
            "opAmp.out.v",
            t,
            1000.0 * vin / (1.0 + 1000.0 * vin.abs() / 12.0),
            1e-6,
        );
    }
    check(&result, "opAmp.out.v", 0.25, 100.0 / (1.0 + 100.0 / 12.0), 1e-9);
    check(&result, "opAmp.in_p.i", 0.25, 0.0, 1e-12);
}

/// The variable elements. A current of 1 A charges a variable capacitor with C = 1 + t from no
/// charge: Q = t, so v = t/(1 + t). A voltage of 1 V across a variable inductor with L = 2 + t
/// from no flux: Psi = t, so i = t/(2 + t). The same voltage across a variable conductor with
/// G = 4 - t: i = 4 - t.
const VARIABLE: &str = "model Variable \"Variable capacitor, inductor and conductor\"
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantCurrent current(I = 1);
  Modelica.Electrical.Analog.Basic.VariableCapacitor capacitor(Q(fixed = true));
  Modelica.Electrical.Analog.Sources.ConstantVoltage voltage(V = 1);
  Modelica.Electrical.Analog.Basic.VariableInductor inductor(Psi(fixed = true));
  Modelica.Electrical.Analog.Basic.VariableConductor conductor;
  Modelica.Blocks.Sources.Ramp c(height = 1, duration = 10, offset = 1);
  Modelica.Blocks.Sources.Ramp l(height = 1, duration = 10, offset = 2);
  Modelica.Blocks.Sources.Ramp g(height = -1, duration = 10, offset = 4);
equation
  connect(current.p, ground.p);
  connect(current.n, capacitor.p);
  connect(capacitor.n, ground.p);
  connect(voltage.n, ground.p);
  connect(voltage.p, inductor.p);
  connect(inductor.n, ground.p);
  connect(voltage.p, conductor.p);
  connect(conductor.n, ground.p);
  connect(c.y, capacitor.C);
  connect(l.y, inductor.L);
  connect(g.y, conductor.G);
end Variable;
";

#[test]
fn variable_capacitor_inductor_and_conductor_follow_their_inputs() {
    let result = simulate(VARIABLE, 2.0, 1e-3);
    for t in [0.25_f64, 1.0, 2.0] {
        // The ramps have a slope of 0.1 per second: C = 1 + 0.1 t, L = 2 + 0.1 t, G = 4 - 0.1 t.
        check(&result, "capacitor.Q", t, t, 1e-7);
        check(&result, "capacitor.v", t, t / (1.0 + 0.1 * t), 1e-7);
        check(&result, "inductor.Psi", t, t, 1e-7);
        check(&result, "inductor.i", t, t / (2.0 + 0.1 * t), 1e-7);
        check(&result, "conductor.i", t, 4.0 - 0.1 * t, 1e-9);
        check(&result, "conductor.LossPower", t, 4.0 - 0.1 * t, 1e-9);
    }
}

/// `examples/dc_motor_pid.eqm` (R = 1 Ohm, L = 0.01 H, k = 0.5, J = 0.05 kg.m2; set point
/// 10 rad/s from t = 0.1 s; load 0.5 N.m from t = 1.5 s; open-loop supply 6 V).
#[test]
fn dc_motor_example_reaches_the_set_point_and_matches_the_open_loop_hand_computation() {
    let text = example("dc_motor_pid.eqm");
    let result = simulate(&text, 5.0, 1e-3);
    // Open loop before the load: the closed form of the motor from rest; by t = 1.5 s the
    // slow root (-5.28 1/s) has brought the speed within e^(-7.9) of V/k = 12 rad/s.
    for t in [0.005_f64, 0.02, 0.1, 0.5, 1.0, 1.45] {
        let (w, i) = motor_from_rest(6.0, 1.0, 0.01, 0.5, 0.05, t);
        check(&result, "openInertia.w", t, w, 1e-6);
        check(&result, "openEmf.i", t, i, 1e-6);
    }
    let (s1, s2) = real_roots(1.0 / 0.01, 0.25 / (0.01 * 0.05));
    assert!((s1 + 5.278).abs() < 1e-3 && (s2 + 94.72).abs() < 1e-2, "{s1} {s2}");
    // Open loop with the load: w = V/k - R tau/k^2 = 12 - 2 = 10 rad/s and i = tau/k = 1 A.
    check(&result, "openInertia.w", 5.0, 10.0, 1e-6);
    check(&result, "openEmf.i", 5.0, 1.0, 1e-6);
    // Closed loop: nothing moves before the set point steps.
    check(&result, "inertia.w", 0.05, 0.0, 1e-12);
    // Integral action: no steady-state error, before the load (armature voltage k w = 5 V, no
    // current, so the integral part holds 5 V/k_pid = 2.5) and after it (1 A, R i + k w = 6 V,
    // the integral part 3).
    check(&result, "inertia.w", 1.5, 10.0, 1e-6);
    check(&result, "emf.i", 1.5, 0.0, 1e-5);
    check(&result, "supply.v", 1.5, 5.0, 1e-5);
    check(&result, "pid.I", 1.5, 2.5, 1e-5);
    check(&result, "inertia.w", 5.0, 10.0, 1e-6);
    check(&result, "emf.i", 5.0, 1.0, 1e-5);
    check(&result, "supply.v", 5.0, 6.0, 1e-5);
    check(&result, "pid.I", 5.0, 3.0, 1e-5);
    // The load step pulls the controlled speed below the set point for a while.
    let w = result.column("inertia.w").unwrap();
    let dip = result
        .time()
        .iter()
        .zip(&w)
        .filter(|(t, _)| **t > 1.5)
        .map(|(_, w)| *w)
        .fold(f64::INFINITY, f64::min);
    assert!(dip < 9.9 && dip > 9.5, "the lowest speed after the load step is {dip}");
    // The armature voltage stays below the controller's limit of 24 V throughout, so the loop is
    // linear and the steady states above are those of the unlimited PID.
    let v = result.column("supply.v").unwrap();
    assert!(v.iter().all(|v| v.abs() < 24.0));
}
