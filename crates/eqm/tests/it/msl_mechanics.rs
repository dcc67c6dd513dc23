//! `Modelica.Mechanics` and `Modelica.Electrical` of the standard library under the Modelica
//! Standard Library's names: small models written as a user of that library writes them,
//! against closed forms. The tolerances of 5e-5 cover the linear interpolation between the
//! output points.

use crate::msl_thermal::run;
use crate::system_dynamics::check;

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
