//! `Modelica.Mechanics` and `Modelica.Electrical` of the standard library under the Modelica
//! Standard Library's names: small models written as a user of that library writes them,
//! against closed forms. The tolerances of 5e-5 to 2e-4 cover the linear interpolation between
//! the output points; the checks with tolerances of 1e-12 to 1e-7 read output rows (or motion
//! that is linear between them), where only the integration error (tolerances 1e-10) enters.
//! Friction, stops and backlash switch by events: the tests check the closed form on each side
//! and that the switch is an event at the computed instant (two rows at one time).

use crate::msl_thermal::run;
use crate::{check, example};

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

/// The rows of `name` strictly between `from` and `to`, with their times.
fn rows_between(result: &eqm::SimulationResult, name: &str, from: f64, to: f64) -> Vec<(f64, f64)> {
    let column = result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    result
        .time()
        .iter()
        .zip(column)
        .filter(|&(&t, _)| t > from && t < to)
        .map(|(&t, v)| (t, v))
        .collect()
}

/// Whether the run has an event (two rows at one time) within `tolerance` of `at`.
fn has_event_at(result: &eqm::SimulationResult, at: f64, tolerance: f64) -> bool {
    result
        .time()
        .windows(2)
        .any(|w| w[0] == w[1] && (w[0] - at).abs() <= tolerance)
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

/// Support flanges. A torque source of 2 N.m with its support on a housing inertia of
/// 4 kg.m2 turns a rotor of 1 kg.m2 forward (w = 2t) and the housing backwards with the reaction
/// torque (w = -0.5t). An ideal gear of ratio 2 whose support turns at 1 rad/s, driven at
/// 5 rad/s: relative to the support the input turns at 4 rad/s and the output at 2 rad/s, so
/// the output turns at 3 rad/s absolutely; a damper of 3 N.m.s/rad there needs 9 N.m, the input
/// 4.5 N.m, and the support takes the difference, 4.5 N.m. A torque source without a support
/// flange acts against the fixed housing as before.
const SUPPORT: &str = "model Support \"Sources and gears with support flanges\"
  Modelica.Mechanics.Rotational.Components.Inertia housing(J = 4, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Inertia rotor(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.Torque torque(useSupport = true);
  Modelica.Blocks.Sources.Constant k(k = 2);
  Modelica.Mechanics.Rotational.Components.IdealGear gear(ratio = 2, useSupport = true);
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed housingSpeed(w_fixed = 1, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed inputSpeed(w_fixed = 5, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Damper damper(d = 3);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Sources.Torque plain;
  Modelica.Mechanics.Rotational.Components.Inertia plainLoad(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
equation
  connect(k.y, torque.tau);
  connect(torque.flange, rotor.flange_a);
  connect(torque.support, housing.flange_a);
  connect(housingSpeed.flange, gear.support);
  connect(inputSpeed.flange, gear.flange_a);
  connect(gear.flange_b, damper.flange_b);
  connect(damper.flange_a, fixed.flange);
  connect(k.y, plain.tau);
  connect(plain.flange, plainLoad.flange_a);
end Support;
";

#[test]
fn support_flanges_take_the_reaction_torque_and_carry_the_gear() {
    let result = run(SUPPORT, 2.0);
    for t in [0.5_f64, 1.0, 2.0] {
        check(&result, "rotor.w", t, 2.0 * t, 1e-9);
        check(&result, "housing.w", t, -0.5 * t, 1e-9);
        check(&result, "plainLoad.w", t, 2.0 * t, 1e-9);
        check(&result, "gear.phi_a", t, 4.0 * t, 1e-9);
        check(&result, "gear.phi_b", t, 2.0 * t, 1e-9);
        check(&result, "gear.flange_b.phi", t, 3.0 * t, 1e-9);
        check(&result, "damper.tau", t, 9.0, 1e-9);
        check(&result, "inputSpeed.flange.tau", t, -4.5, 1e-9);
        check(&result, "housingSpeed.flange.tau", t, -4.5, 1e-9);
    }
}

/// The chain of `tests/support/chain.rs` (three masses m = 1, springs c = 100 with parallel
/// dampers d = 0.1, the first tied to a fixed flange, the last displaced by 1) built from the
/// library's components of `package` (`Mechanics` or `Modelica.Mechanics`).
fn damped_chain(package: &str, damper: &str) -> String {
    format!(
        "model DampedChain
  {package}.Translational.Components.Fixed fixed(s0 = 0);
  {package}.Translational.Components.Spring spring[3](each c = 100);
  {package}.Translational.Components.{damper} damper[3](each d = 0.1);
  {package}.Translational.Components.Mass mass[3](each m = 1,
    s(start = {{0, 0, 1}}, each fixed = true), v(each start = 0, each fixed = true));
equation
  connect(fixed.flange, spring[1].flange_a);
  connect(fixed.flange, damper[1].flange_a);
  for i in 1:3 loop
    connect(spring[i].flange_b, mass[i].flange_a);
    connect(damper[i].flange_b, mass[i].flange_a);
  end for;
  for i in 1:2 loop
    connect(mass[i].flange_b, spring[i + 1].flange_a);
    connect(mass[i].flange_b, damper[i + 1].flange_a);
  end for;
end DampedChain;
"
    )
}

#[test]
fn a_chain_with_dampers_on_a_fixed_flange_follows_its_modes() {
    // The damper at the fixed flange differentiates the flange's position, which alias
    // elimination replaces by the parameter s0: its derivative is 0 (was rejected as der() of
    // something that is not a state). Both packages' dampers, against the modal closed form.
    let chain = crate::chain::Chain::standard(3);
    for (package, damper) in [("Mechanics", "Damper"), ("Modelica.Mechanics", "Damper")] {
        let result = run(&damped_chain(package, damper), 2.0);
        // Times on the output grid (stop/500), where rows are not interpolated.
        for t in [0.0, 0.2, 0.4, 1.0, 2.0] {
            let exact = chain.exact(t);
            for i in 0..3 {
                check(&result, &format!("mass[{}].s", i + 1), t, exact[i], 1e-7);
                check(&result, &format!("mass[{}].v", i + 1), t, exact[3 + i], 1e-6);
            }
        }
    }
}

#[test]
fn an_emf_on_a_fixed_flange_is_a_locked_rotor() {
    // w = der(phi) of the flange held by Fixed is 0, so the EMF induces nothing: i = V/R and the
    // motor's torque k*i goes into the support.
    let text = "model Locked
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor r(R = 2);
  Modelica.Electrical.Analog.Basic.EMF emf(k = 0.5);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
equation
  connect(source.p, r.p);
  connect(r.n, emf.p);
  connect(emf.n, source.n);
  connect(source.n, ground.p);
  connect(emf.flange, fixed.flange);
end Locked;
";
    let result = run(text, 1.0);
    for t in [0.0, 0.5, 1.0] {
        check(&result, "emf.w", t, 0.0, 1e-12);
        check(&result, "emf.i", t, 5.0, 1e-12);
        check(&result, "fixed.flange.tau", t, 2.5, 1e-12);
    }
}
