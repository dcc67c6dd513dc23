//! Oscillators, circuits, gears, sensors and sources of `Modelica.Mechanics` and
//! `Modelica.Electrical` against their closed forms.

use super::*;

/// A mass of 1 kg on a spring of 4 N/m to the housing, released at s = 1 m: s(t) = cos(2t).
const OSCILLATOR: &str = "model Oscillator \"A spring-mass oscillator\"
  Modelica.Mechanics.Translational.Components.Mass mass(m = 1, s(start = 1, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.Spring spring(c = 4);
  Modelica.Mechanics.Translational.Components.Fixed fixed;
equation
  connect(fixed.flange, spring.flange_a);
  connect(spring.flange_b, mass.flange_a);
end Oscillator;
";

#[test]
fn spring_mass_oscillator_follows_the_cosine() {
    let result = run(OSCILLATOR, 5.0);
    for t in [0.5_f64, 1.0, 2.5, 5.0] {
        check(&result, "mass.s", t, (2.0 * t).cos(), 5e-5);
        check(&result, "mass.v", t, -2.0 * (2.0 * t).sin(), 5e-5);
        check(&result, "spring.f", t, 4.0 * (2.0 * t).cos(), 5e-5);
    }
}

/// The oscillator with a damper of 2 N.s/m beside the spring (m = 1, c = 5, d = 2): the roots
/// of s^2 + 2s + 5 are -1 +- 2i, so from s = 1, v = 0: s(t) = e^-t (cos 2t + sin(2t)/2).
const DAMPED: &str = "model Damped \"A damped spring-mass oscillator\"
  Modelica.Mechanics.Translational.Components.Mass mass(m = 1, s(start = 1, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Components.Spring spring(c = 5);
  Modelica.Mechanics.Translational.Components.Damper damper(d = 2);
  Modelica.Mechanics.Translational.Components.SpringDamper springDamper(c = 0, d = 0);
  Modelica.Mechanics.Translational.Components.Fixed fixed;
equation
  connect(fixed.flange, spring.flange_a);
  connect(fixed.flange, damper.flange_a);
  connect(fixed.flange, springDamper.flange_a);
  connect(spring.flange_b, mass.flange_a);
  connect(damper.flange_b, mass.flange_a);
  connect(springDamper.flange_b, mass.flange_a);
end Damped;
";

#[test]
fn damped_oscillator_follows_its_closed_form() {
    let result = run(DAMPED, 4.0);
    for t in [0.5_f64, 1.0, 2.0, 4.0] {
        let s = (-t).exp() * ((2.0 * t).cos() + 0.5 * (2.0 * t).sin());
        let v = -2.5 * (-t).exp() * (2.0 * t).sin();
        check(&result, "mass.s", t, s, 5e-5);
        check(&result, "mass.v", t, v, 5e-5);
        check(&result, "damper.f", t, 2.0 * v, 5e-5);
        check(&result, "damper.lossPower", t, 2.0 * v * v, 2e-4);
    }
}

/// A 10 V source charging 1 mF through 1 kOhm from 0 V: v_C(t) = 10 (1 - e^(-t/1 s)).
const RC: &str = "model RC \"An RC circuit charged by a constant voltage\"
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 1000);
  Modelica.Electrical.Analog.Basic.Capacitor capacitor(C = 1e-3, v(start = 0, fixed = true));
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, resistor.p);
  connect(resistor.n, capacitor.p);
  connect(capacitor.n, source.n);
  connect(source.n, ground.p);
end RC;
";

#[test]
fn rc_circuit_charges_exponentially() {
    let result = run(RC, 3.0);
    for t in [0.25_f64, 1.0, 3.0] {
        let v = 10.0 * (1.0 - (-t).exp());
        check(&result, "capacitor.v", t, v, 5e-5);
        check(&result, "resistor.i", t, (10.0 - v) / 1000.0, 5e-5);
        // The source delivers the current: it flows from n through the source to p.
        check(&result, "source.i", t, -(10.0 - v) / 1000.0, 5e-5);
        check(&result, "resistor.LossPower", t, (10.0 - v).powi(2) / 1000.0, 5e-5);
    }
}

/// An RL circuit from a step voltage and a constant current into a resistor: the inductor
/// current rises as i(t) = V/R (1 - e^(-R t/L)) after the step, and the current source's
/// resistor has the constant voltage R I.
const RL: &str = "model RL \"An RL circuit switched on by a step voltage\"
  Modelica.Electrical.Analog.Sources.StepVoltage step(V = 2, startTime = 1);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 4);
  Modelica.Electrical.Analog.Basic.Inductor inductor(L = 2, i(start = 0, fixed = true));
  Modelica.Electrical.Analog.Sources.ConstantCurrent current(I = 0.5);
  Modelica.Electrical.Analog.Basic.Resistor load(R = 3);
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(step.p, resistor.p);
  connect(resistor.n, inductor.p);
  connect(inductor.n, ground.p);
  connect(step.n, ground.p);
  connect(current.n, load.p);
  connect(current.p, ground.p);
  connect(load.n, ground.p);
end RL;
";

#[test]
fn rl_circuit_follows_the_step() {
    let result = run(RL, 3.0);
    check(&result, "inductor.i", 0.5, 0.0, 1e-9);
    for t in [1.5_f64, 2.0, 3.0] {
        check(&result, "inductor.i", t, 0.5 * (1.0 - (-2.0 * (t - 1.0)).exp()), 5e-5);
        check(&result, "load.v", t, 1.5, 1e-9);
    }
}

/// An inertia of 2 kg.m2 driven from rest by a constant torque of 3 N.m: w = tau t/J and
/// phi = tau t^2/(2 J); a second inertia driven through a torque input by the same torque.
const DRIVEN: &str = "model Driven \"Inertias accelerated by constant torques\"
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 2, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.ConstantTorque torque(tau_constant = 3);
  Modelica.Mechanics.Rotational.Components.Inertia other(J = 2, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.Torque input_torque;
  Modelica.Blocks.Sources.Constant tau(k = 3);
equation
  connect(torque.flange, inertia.flange_a);
  connect(tau.y, input_torque.tau);
  connect(input_torque.flange, other.flange_b);
end Driven;
";

#[test]
fn constant_torque_accelerates_an_inertia_uniformly() {
    let result = run(DRIVEN, 2.0);
    for t in [0.5, 1.0, 2.0] {
        check(&result, "inertia.w", t, 1.5 * t, 1e-8);
        check(&result, "inertia.phi", t, 0.75 * t * t, 1e-8);
        check(&result, "other.w", t, 1.5 * t, 1e-8);
    }
}

/// A torsional oscillator: inertia J = 1 on a spring of c = 9 N.m/rad and a damper of d = 0
/// to the housing, twisted to 0.5 rad: phi(t) = 0.5 cos(3t).
const TORSION: &str = "model Torsion \"A torsional oscillator\"
  Modelica.Mechanics.Rotational.Components.Inertia inertia(J = 1, phi(start = 0.5, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Spring spring(c = 9);
  Modelica.Mechanics.Rotational.Components.Damper damper(d = 0);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
equation
  connect(fixed.flange, spring.flange_a);
  connect(spring.flange_b, inertia.flange_a);
  connect(fixed.flange, damper.flange_a);
  connect(damper.flange_b, inertia.flange_a);
end Torsion;
";

#[test]
fn torsional_oscillator_follows_the_cosine() {
    let result = run(TORSION, 3.0);
    for t in [0.5_f64, 1.5, 3.0] {
        check(&result, "inertia.phi", t, 0.5 * (3.0 * t).cos(), 5e-5);
    }
}

/// A sine voltage source (amplitude 3 V, 2 Hz, from t = 0.1 s) across a 2 Ohm resistor, and a
/// mass of 4 kg pushed by a constant force of 2 N and a force input of 6 N: the current is
/// 1.5 sin(4 pi (t - 0.1)) A after the start, and the mass accelerates at 2 m/s2.
const SOURCES: &str = "model SourcesTest \"Sine voltage and force sources\"
  Modelica.Electrical.Analog.Sources.SineVoltage sine(V = 3, f = 2, startTime = 0.1);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 2);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Mechanics.Translational.Components.Mass mass(m = 4, s(start = 0, fixed = true), v(start = 0, fixed = true));
  Modelica.Mechanics.Translational.Sources.ConstantForce push(f_constant = 2);
  Modelica.Mechanics.Translational.Sources.Force force;
  Modelica.Blocks.Sources.Constant f(k = 6);
equation
  connect(sine.p, resistor.p);
  connect(resistor.n, sine.n);
  connect(sine.n, ground.p);
  connect(push.flange, mass.flange_a);
  connect(f.y, force.f);
  connect(force.flange, mass.flange_b);
end SourcesTest;
";

#[test]
fn sine_voltage_and_force_sources_drive_their_loads() {
    let result = run(SOURCES, 1.0);
    check(&result, "resistor.i", 0.05, 0.0, 1e-12);
    for t in [0.2_f64, 0.35, 1.0] {
        let i = 1.5 * (4.0 * std::f64::consts::PI * (t - 0.1)).sin();
        check(&result, "resistor.i", t, i, 1e-9);
        check(&result, "mass.v", t, 2.0 * t, 1e-8);
        check(&result, "mass.s", t, t * t, 1e-8);
    }
}

/// A translational chain: a position source moves its flange along s_ref = 0.5 t and pulls a
/// spring of 4 N/m whose other end is fixed, measured by a force sensor; a speed source moves a
/// second flange at v_ref = 3 m/s from s = 0. The sensors read s = 0.5 t, v = 3, a = 0 and the
/// spring's tension 4 (0.5 t) = 2 t, which the force sensor between source and spring carries.
/// Relative sensors from the first to the second flange read 2.5 t and 2.5 m/s.
/// A third position source shakes a mass of 2 kg along sin(pi t), which needs the derivatives of
/// the reference: the mass accelerates at -pi^2 sin(pi t) under the force the source supplies.
const TRANSLATIONAL_SENSORS: &str = "model TranslationalSensors \"Prescribed motion measured by sensors\"
  Modelica.Mechanics.Translational.Sources.Position position;
  Modelica.Blocks.Sources.Ramp ramp(height = 5, duration = 10);
  Modelica.Mechanics.Translational.Sensors.ForceSensor forceSensor;
  Modelica.Mechanics.Translational.Components.Spring spring(c = 4);
  Modelica.Mechanics.Translational.Components.Fixed fixed;
  Modelica.Mechanics.Translational.Sensors.PositionSensor positionSensor;
  Modelica.Mechanics.Translational.Sources.Speed speed(s(start = 0, fixed = true));
  Modelica.Blocks.Sources.Constant v(k = 3);
  Modelica.Mechanics.Translational.Sensors.SpeedSensor speedSensor;
  Modelica.Mechanics.Translational.Sensors.AccSensor accSensor;
  Modelica.Mechanics.Translational.Sources.Position shaker;
  Modelica.Blocks.Sources.Sine sine(amplitude = 1, f = 0.5);
  Modelica.Mechanics.Translational.Components.Mass mass(m = 2);
  Modelica.Mechanics.Translational.Sensors.RelPositionSensor relPosition;
  Modelica.Mechanics.Translational.Sensors.RelSpeedSensor relSpeed;
equation
  connect(position.flange, relPosition.flange_a);
  connect(speed.flange, relPosition.flange_b);
  connect(position.flange, relSpeed.flange_a);
  connect(speed.flange, relSpeed.flange_b);
  connect(sine.y, shaker.s_ref);
  connect(shaker.flange, mass.flange_a);
  connect(ramp.y, position.s_ref);
  connect(position.flange, forceSensor.flange_a);
  connect(forceSensor.flange_b, spring.flange_b);
  connect(spring.flange_a, fixed.flange);
  connect(position.flange, positionSensor.flange);
  connect(v.y, speed.v_ref);
  connect(speed.flange, speedSensor.flange);
  connect(speed.flange, accSensor.flange);
end TranslationalSensors;
";

#[test]
fn translational_sources_and_sensors_read_the_prescribed_motion() {
    let result = run(TRANSLATIONAL_SENSORS, 4.0);
    for t in [0.5_f64, 2.0, 4.0] {
        check(&result, "positionSensor.s", t, 0.5 * t, 1e-8);
        check(&result, "spring.f", t, 2.0 * t, 1e-8);
        check(&result, "forceSensor.f", t, 2.0 * t, 1e-8);
        check(&result, "speed.s", t, 3.0 * t, 1e-8);
        check(&result, "speedSensor.v", t, 3.0, 1e-8);
        check(&result, "accSensor.a", t, 0.0, 1e-8);
        check(&result, "relPosition.s_rel", t, 2.5 * t, 1e-8);
        check(&result, "relSpeed.v_rel", t, 2.5, 1e-8);
        let pi = std::f64::consts::PI;
        check(&result, "mass.s", t, (pi * t).sin(), 2e-4);
        check(&result, "mass.a", t, -pi * pi * (pi * t).sin(), 2e-4);
        check(&result, "mass.flange_a.f", t, -2.0 * pi * pi * (pi * t).sin(), 2e-4);
    }
}

/// A speed source turns the input flange of an ideal gear of ratio 2 at w_ref = 4 rad/s; the
/// output flange turns at 2 rad/s against a damper of 3 N.m.s/rad to the housing, which needs
/// 6 N.m there and so 3 N.m at the input. A position source turns a flange to phi_ref = 0.2 t
/// against a spring-damper (c = 10, d = 5) to the housing: tau = 10 (0.2 t) + 5 (0.2) = 2 t + 1.
/// Relative sensors across the gear read 2 t - 4 t = -2 t and -2 rad/s.
const GEAR: &str = "model Gear \"An ideal gear and a spring-damper driven by prescribed motion\"
  Modelica.Mechanics.Rotational.Sources.Speed speed(phi(start = 0, fixed = true));
  Modelica.Blocks.Sources.Constant w(k = 4);
  Modelica.Mechanics.Rotational.Sensors.TorqueSensor inputTorque;
  Modelica.Mechanics.Rotational.Components.IdealGear gear(ratio = 2);
  Modelica.Mechanics.Rotational.Sensors.TorqueSensor outputTorque;
  Modelica.Mechanics.Rotational.Sensors.SpeedSensor outputSpeed;
  Modelica.Mechanics.Rotational.Sensors.AngleSensor outputAngle;
  Modelica.Mechanics.Rotational.Components.Damper damper(d = 3);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Sources.Position position;
  Modelica.Blocks.Sources.Ramp ramp(height = 2, duration = 10);
  Modelica.Mechanics.Rotational.Components.SpringDamper springDamper(c = 10, d = 5);
  Modelica.Mechanics.Rotational.Sensors.RelAngleSensor relAngle;
  Modelica.Mechanics.Rotational.Sensors.RelSpeedSensor relSpeed;
equation
  connect(gear.flange_a, relAngle.flange_a);
  connect(gear.flange_b, relAngle.flange_b);
  connect(gear.flange_a, relSpeed.flange_a);
  connect(gear.flange_b, relSpeed.flange_b);
  connect(w.y, speed.w_ref);
  connect(speed.flange, inputTorque.flange_a);
  connect(inputTorque.flange_b, gear.flange_a);
  connect(gear.flange_b, outputTorque.flange_a);
  connect(outputTorque.flange_b, damper.flange_b);
  connect(damper.flange_a, fixed.flange);
  connect(gear.flange_b, outputSpeed.flange);
  connect(gear.flange_b, outputAngle.flange);
  connect(ramp.y, position.phi_ref);
  connect(position.flange, springDamper.flange_b);
  connect(springDamper.flange_a, fixed.flange);
end Gear;
";

#[test]
fn ideal_gear_of_ratio_two_halves_the_speed_and_doubles_the_torque() {
    let result = run(GEAR, 4.0);
    for t in [0.5_f64, 2.0, 4.0] {
        check(&result, "speed.w", t, 4.0, 1e-8);
        check(&result, "outputSpeed.w", t, 2.0, 1e-8);
        check(&result, "outputAngle.phi", t, 2.0 * t, 1e-8);
        check(&result, "relAngle.phi_rel", t, -2.0 * t, 1e-8);
        check(&result, "relSpeed.w_rel", t, -2.0, 1e-8);
        // The torque sensors carry the damper's torque: 6 N.m after the gear, 3 N.m before it.
        check(&result, "outputTorque.tau", t, 6.0, 1e-8);
        check(&result, "inputTorque.tau", t, 3.0, 1e-8);
        check(&result, "springDamper.tau", t, 2.0 * t + 1.0, 1e-8);
        check(&result, "springDamper.lossPower", t, 5.0 * 0.04, 1e-8);
    }
}

/// Analog sensors and sources: a ramp voltage (10 V within 2 s from t = 1 s) across a 5 Ohm
/// resistor through an ammeter, with a voltmeter, a potential sensor and a wattmeter: at t = 2 s
/// (mid-ramp) 5 V, 1 A and 5 W. A signal current of 2 A into a conductor of 4 S gives 0.5 V; a signal voltage of
/// 6 V across a variable resistor of 3 Ohm gives 2 A. A pulse voltage of 1 V (period 1 s, width
/// 25 %) is 1 V at t = 0.1 s and 0 V at t = 0.5 s.
const ANALOG: &str = "model Analog \"Sensors and signal-driven sources\"
  Modelica.Electrical.Analog.Sources.RampVoltage ramp(V = 10, duration = 2, startTime = 1);
  Modelica.Electrical.Analog.Sensors.CurrentSensor ammeter;
  Modelica.Electrical.Analog.Sensors.VoltageSensor voltmeter;
  Modelica.Electrical.Analog.Sensors.PotentialSensor potentialSensor;
  Modelica.Electrical.Analog.Sensors.PowerSensor wattmeter;
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 5);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.SignalCurrent current;
  Modelica.Blocks.Sources.Constant i(k = 2);
  Modelica.Electrical.Analog.Basic.Conductor conductor(G = 4);
  Modelica.Electrical.Analog.Sources.SignalVoltage voltage;
  Modelica.Blocks.Sources.Constant v(k = 6);
  Modelica.Blocks.Sources.Constant R(k = 3);
  Modelica.Electrical.Analog.Basic.VariableResistor variableResistor;
  Modelica.Electrical.Analog.Sources.PulseVoltage pulse(V = 1, width = 25, period = 1);
  Modelica.Electrical.Analog.Basic.Resistor pulseLoad(R = 1);
equation
  connect(ramp.p, ammeter.p);
  connect(ammeter.n, wattmeter.pc);
  connect(wattmeter.nc, resistor.p);
  connect(resistor.p, wattmeter.pv);
  connect(resistor.n, wattmeter.nv);
  connect(resistor.p, voltmeter.p);
  connect(resistor.p, potentialSensor.p);
  connect(resistor.n, voltmeter.n);
  connect(resistor.n, ramp.n);
  connect(ramp.n, ground.p);
  connect(i.y, current.i);
  connect(current.p, ground.p);
  connect(current.n, conductor.p);
  connect(conductor.n, ground.p);
  connect(v.y, voltage.v);
  connect(R.y, variableResistor.R);
  connect(voltage.p, variableResistor.p);
  connect(variableResistor.n, voltage.n);
  connect(voltage.n, ground.p);
  connect(pulse.p, pulseLoad.p);
  connect(pulseLoad.n, pulse.n);
  connect(pulse.n, ground.p);
end Analog;
";

#[test]
fn analog_sensors_read_a_ramp_voltage_and_signal_sources_drive_their_loads() {
    let result = run(ANALOG, 4.0);
    for (name, t, expected) in [
        ("voltmeter.v", 0.5, 0.0),
        ("voltmeter.v", 2.0, 5.0),
        ("ammeter.i", 2.0, 1.0),
        ("potentialSensor.phi", 2.0, 5.0),
        ("wattmeter.power", 2.0, 5.0),
        ("voltmeter.v", 3.5, 10.0),
        ("conductor.v", 1.0, 0.5),
        ("conductor.LossPower", 1.0, 1.0),
        ("variableResistor.i", 1.0, 2.0),
        ("voltage.i", 1.0, -2.0),
    ] {
        check(&result, name, t, expected, 1e-9);
    }
    for k in [0.0_f64, 1.0, 2.0] {
        check(&result, "pulse.v", k + 0.1, 1.0, 1e-9);
        check(&result, "pulse.v", k + 0.5, 0.0, 1e-9);
    }
}

/// A half-wave rectifier: a sine source of 10 V at 1 Hz feeds a 100 Ohm load through an ideal
/// diode (Ron = Goff = 1e-5). In the positive half wave the load sees the source voltage (the
/// tolerance covers the interpolation between output points); in the negative one only the leakage Goff*v flows, so the load voltage
/// stays within 100 Goff 10 V = 0.01 V of zero. A second diode with a knee voltage of 0.7 V
/// feeds another 100 Ohm load: its voltage at the peak is 10 - 0.7 = 9.3 V. A closing switch connects a 2 V source to a
/// 1 Ohm resistor from t = 0.5 s; an opening switch disconnects another one at that time.
const RECTIFIER: &str = "model Rectifier \"A half-wave rectifier and two switches\"
  Modelica.Electrical.Analog.Sources.SineVoltage sine(V = 10, f = 1);
  Modelica.Electrical.Analog.Ideal.IdealDiode diode;
  Modelica.Electrical.Analog.Basic.Resistor load(R = 100);
  Modelica.Electrical.Analog.Ideal.IdealDiode kneeDiode(Vknee = 0.7);
  Modelica.Electrical.Analog.Basic.Resistor kneeLoad(R = 100);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 2);
  Modelica.Electrical.Analog.Ideal.IdealClosingSwitch closing;
  Modelica.Electrical.Analog.Basic.Resistor closed(R = 1);
  Modelica.Electrical.Analog.Ideal.IdealOpeningSwitch opening;
  Modelica.Electrical.Analog.Basic.Resistor opened(R = 1);
equation
  connect(sine.p, diode.p);
  connect(diode.n, load.p);
  connect(load.n, sine.n);
  connect(sine.n, ground.p);
  connect(sine.p, kneeDiode.p);
  connect(kneeDiode.n, kneeLoad.p);
  connect(kneeLoad.n, sine.n);
  connect(source.p, closing.p);
  connect(closing.n, closed.p);
  connect(closed.n, source.n);
  connect(source.p, opening.p);
  connect(opening.n, opened.p);
  connect(opened.n, source.n);
  connect(source.n, ground.p);
  closing.control = time >= 0.5;
  opening.control = time >= 0.5;
end Rectifier;
";

#[test]
fn ideal_diode_rectifies_a_sine_and_ideal_switches_follow_their_control() {
    let result = run(RECTIFIER, 2.0);
    for t in [0.1_f64, 0.25, 0.4, 1.25] {
        let source = 10.0 * (2.0 * std::f64::consts::PI * t).sin();
        check(&result, "load.v", t, source * 100.0 / (100.0 + 1e-5), 2e-4);
    }
    for t in [0.6_f64, 0.75, 0.9, 1.75] {
        let v = result.value_at("load.v", t).expect("a value of load.v");
        assert!(v.abs() <= 100.0 * 1e-5 * 10.0, "load.v({t}) = {v}");
        assert!(result.value_at("diode.v", t).unwrap() < 0.0);
    }
    check(&result, "kneeLoad.v", 0.25, 9.3, 2e-4);
    // At the trough only the leakage flows: 100 Goff v_diode with v_diode close to -10 V.
    check(&result, "kneeLoad.v", 0.75, -1e-2 / (1.0 + 1e-3), 1e-5);
    check(&result, "closed.i", 0.25, 0.0, 1e-4);
    check(&result, "opened.i", 0.25, 2.0, 1e-4);
    check(&result, "closed.i", 1.0, 2.0, 1e-4);
    check(&result, "opened.i", 1.0, 0.0, 1e-4);
}

/// An ideal planetary gear of ratio 2 (ring teeth over sun teeth): the sun turns at 6 rad/s and
/// the ring at 1.5 rad/s, so the carrier turns at (6 + 2*1.5)/(1 + 2) = 3 rad/s. A damper of
/// 2 N.m.s/rad holds the carrier back with 6 N.m, which the torque balance shares out as
/// 6/3 = 2 N.m at the sun and 2*2 = 4 N.m at the ring; a multi-sensor before the damper reads
/// 3 rad/s, 6 N.m and 18 W.
const PLANETARY: &str = "model Planetary \"A planetary gear between two speed sources and a damper\"
  Modelica.Mechanics.Rotational.Components.IdealPlanetary planetary(ratio = 2);
  Modelica.Mechanics.Rotational.Sources.Speed sunSpeed(phi(start = 0, fixed = true));
  Modelica.Blocks.Sources.Constant ws(k = 6);
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed ringSpeed(w_fixed = 1.5, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Damper damper(d = 2);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Sensors.MultiSensor carrierSensor;
equation
  connect(ws.y, sunSpeed.w_ref);
  connect(sunSpeed.flange, planetary.sun);
  connect(ringSpeed.flange, planetary.ring);
  connect(planetary.carrier, carrierSensor.flange_a);
  connect(carrierSensor.flange_b, damper.flange_b);
  connect(damper.flange_a, fixed.flange);
end Planetary;
";

#[test]
fn ideal_planetary_follows_willis_equation_and_the_torque_balance() {
    let result = run(PLANETARY, 2.0);
    for t in [0.5, 1.0, 2.0] {
        check(&result, "planetary.carrier.phi", t, 3.0 * t, 1e-8);
        check(&result, "planetary.ring.phi", t, 1.5 * t, 1e-8);
        check(&result, "carrierSensor.w", t, 3.0, 1e-8);
        check(&result, "planetary.sun.tau", t, 2.0, 1e-8);
        check(&result, "planetary.ring.tau", t, 4.0, 1e-8);
        check(&result, "planetary.carrier.tau", t, -6.0, 1e-8);
        check(&result, "carrierSensor.tau", t, 6.0, 1e-8);
        check(&result, "carrierSensor.power", t, 18.0, 1e-8);
    }
}
