//! The standard library's `Hydraulics` package through the API: each component in a small
//! circuit against a closed form derived by hand from its physics (a tank draining through a
//! laminar or a turbulent pipe, a pump filling a tank, a cylinder accelerating a mass, a valve's
//! orifice flow, an accumulator's gas compressed isothermally), and the example
//! `examples/hydraulic_cylinder.eqm` against the step response of a damped oscillator.

use crate::msl_blocks::run;
use crate::{check, check_relative, example};

/// The standard acceleration of gravity and the density of water used by the tanks below.
const G: f64 = 9.80665;
const RHO: f64 = 1000.0;

/// The ambient pressure, the default of the tank, the sink and the cylinder.
const P_AMBIENT: f64 = 101325.0;

/// A tank of cross-section 2 m2 holding 3 m3 of water, draining through a pipe with the given
/// resistances into an open sink.
fn draining_tank(r_lam: f64, k: f64) -> String {
    format!(
        "model Draining \"A tank draining through a pipe\"
  Hydraulics.Components.Tank tank(A = 2, V0 = 3);
  Hydraulics.Components.Pipe pipe(R_lam = {r_lam:e}, k = {k:e});
  Hydraulics.Components.Sink sink;
equation
  connect(tank.port, pipe.port_a);
  connect(pipe.port_b, sink.port);
end Draining;
"
    )
}

#[test]
fn a_tank_drains_exponentially_through_a_laminar_pipe() {
    // The outflow is q = rho*g*V/(A*R_lam), so der(V) = -V/tau with tau = R_lam*A/(rho*g).
    let r_lam = 1e4;
    let tau = r_lam * 2.0 / (RHO * G);
    let result = run(&draining_tank(r_lam, 0.0), 5.0);
    for t in [0.0f64, 0.5, 1.0, 2.5, 5.0] {
        let v = 3.0 * (-t / tau).exp();
        check(&result, "tank.V", t, v, 1e-8);
        check(&result, "tank.level", t, v / 2.0, 1e-8);
        check(&result, "tank.port.p", t, P_AMBIENT + RHO * G * v / 2.0, 1e-8);
        check_relative(&result, "pipe.q", t, RHO * G * v / (2.0 * r_lam), 1e-7);
        check_relative(&result, "sink.port.q", t, RHO * G * v / (2.0 * r_lam), 1e-7);
    }
}

#[test]
fn a_tank_drains_by_the_square_root_law_through_a_turbulent_pipe() {
    // The outflow is q = sqrt(rho*g*V/(A*k)) = c*sqrt(V), so der(sqrt(V)) = -c/2: the square
    // root of the volume falls linearly, sqrt(V) = sqrt(V0) - c*t/2, until the tank is empty
    // at t = 2*sqrt(V0)/c (about 9.9 s here).
    let k = 4e4;
    let c = (RHO * G / (2.0 * k)).sqrt();
    let result = run(&draining_tank(0.0, k), 8.0);
    for t in [0.0f64, 1.0, 4.0, 8.0] {
        let root = 3.0f64.sqrt() - c * t / 2.0;
        check(&result, "tank.V", t, root * root, 1e-7);
        check_relative(&result, "pipe.q", t, c * root, 1e-6);
    }
}

#[test]
fn laminar_and_turbulent_resistance_add_up_in_a_pipe() {
    // dp = R_lam*q + k*q^2 for q > 0: at the start dp = rho*g*1.5 m, and q is the positive
    // root of the quadratic.
    let (r_lam, k) = (1e4, 4e4);
    let result = run(&draining_tank(r_lam, k), 0.0);
    let dp = RHO * G * 1.5;
    let q = (-r_lam + (r_lam * r_lam + 4.0 * k * dp).sqrt()) / (2.0 * k);
    check_relative(&result, "pipe.q", 0.0, q, 1e-9);
    check(&result, "pipe.dp", 0.0, dp, 1e-12);
}

/// A volume pump delivering the constant flow `q` from an open sink into the component
/// `name` declared by `declaration`.
fn pumping(q: f64, declaration: &str, name: &str) -> String {
    format!(
        "model Pumping \"A pump delivering a constant flow from a sink\"
  Hydraulics.Components.Sink sink;
  Hydraulics.Components.Pump pump;
  Blocks.Sources.Constant delivery(k = {q:e});
  {declaration};
equation
  connect(sink.port, pump.port_a);
  connect(delivery.y, pump.q_ref);
  connect(pump.port_b, {name}.port);
end Pumping;
"
    )
}

#[test]
fn a_volume_pump_fills_a_tank_linearly() {
    let text = pumping(0.01, "Hydraulics.Components.Tank tank(A = 0.5, V0 = 0.2)", "tank");
    let result = run(&text, 20.0);
    for t in [0.0f64, 5.0, 10.0, 20.0] {
        let v = 0.2 + 0.01 * t;
        check(&result, "tank.V", t, v, 1e-10);
        // The pump lifts the flow from the ambient pressure to the tank's bottom pressure.
        check(&result, "pump.power", t, RHO * G * v / 0.5 * 0.01, 1e-8);
    }
}

#[test]
fn a_cylinder_at_constant_pressure_accelerates_a_mass_uniformly() {
    // A gauge pressure of 2e5 Pa on 0.005 m2 pushes with 1000 N on 50 kg: a = 20 m/s2,
    // x = a*t^2/2, and the cylinder draws q = A*v = A*a*t.
    let text = "model Press \"A cylinder fed at constant pressure pushing a free mass\"
  Hydraulics.Components.PressureSource source(p = 101325 + 2e5);
  Hydraulics.Components.Cylinder cylinder(A = 0.005);
  Mechanics.Translational.Components.Mass mass(m = 50, s(start = 0, fixed = true), v(start = 0, fixed = true));
equation
  connect(source.port, cylinder.port);
  connect(cylinder.flange, mass.flange_a);
end Press;
";
    let result = run(text, 2.0);
    for t in [0.0f64, 0.5, 1.0, 2.0] {
        check(&result, "mass.s", t, 20.0 * t * t / 2.0, 1e-8);
        check(&result, "cylinder.v", t, 20.0 * t, 1e-8);
        check(&result, "cylinder.f", t, 1000.0, 1e-10);
        check(&result, "cylinder.port.q", t, 0.005 * 20.0 * t, 1e-8);
        check(&result, "cylinder.flange.f", t, -1000.0, 1e-10);
    }
}

/// A valve of Kv = 1e-5 m3/(s.Pa^0.5) and dp_lam = 100 Pa, opened to 0.5, between a source
/// `dp` above the ambient pressure and a sink.
fn valve(dp: f64) -> String {
    format!(
        "model Orifice \"A half-open valve at a fixed pressure drop\"
  Hydraulics.Components.PressureSource source(p = 101325 + ({dp:e}));
  Hydraulics.Components.Valve valve(Kv = 1e-5, dp_lam = 100);
  Blocks.Sources.Constant opening(k = 0.5);
  Hydraulics.Components.Sink sink;
equation
  connect(source.port, valve.port_a);
  connect(opening.y, valve.opening);
  connect(valve.port_b, sink.port);
end Orifice;
"
    )
}

#[test]
fn a_valve_follows_the_orifice_law_and_is_laminar_near_zero() {
    // Well above dp_lam the flow is the orifice formula opening*Kv*sqrt(dp), within the
    // regularisation's relative deviation dp_lam^2/(4*dp^2) (2.5e-7 at 1e5 Pa).
    let result = run(&valve(1e5), 0.0);
    check_relative(&result, "valve.q", 0.0, 0.5 * 1e-5 * 1e5f64.sqrt(), 1e-6);
    // Backwards, the flow reverses with the same magnitude.
    let result = run(&valve(-1e5), 0.0);
    check_relative(&result, "valve.q", 0.0, -0.5 * 1e-5 * 1e5f64.sqrt(), 1e-6);
    // Far below dp_lam the flow is laminar, opening*Kv*dp/sqrt(dp_lam), within dp^2/(4*dp_lam^2).
    let result = run(&valve(1.0), 0.0);
    check_relative(&result, "valve.q", 0.0, 0.5 * 1e-5 * 1.0 / 10.0, 1e-4);
}

#[test]
fn an_accumulator_compresses_its_gas_by_boyles_law() {
    // A pump pushes 1e-4 m3/s into an empty accumulator of 1e-3 m3 precharged to 1e6 Pa: the
    // gas volume is 1e-3 - 1e-4*t and its pressure p = 1e6*1e-3/(1e-3 - 1e-4*t), twice the
    // precharge after 5 s and four times it after 7.5 s.
    let declaration = "Hydraulics.Components.Accumulator accumulator(V_total = 1e-3, p_charge = 1e6)";
    let result = run(&pumping(1e-4, declaration, "accumulator"), 7.5);
    for (t, p) in [(0.0, 1e6), (5.0, 2e6), (7.5, 4e6)] {
        check(&result, "accumulator.p", t, p, 1e-8);
        check_relative(&result, "accumulator.V_gas", t, 1e-3 - 1e-4 * t, 1e-8);
    }
}

#[test]
fn the_hydraulic_cylinder_example_is_a_damped_oscillator() {
    // m*der(v) = A*dp_pump - R_lam*A^2*v - c*s from rest at 0: the step response with
    // w0 = sqrt(c/m), zeta = R_lam*A^2/(2*sqrt(c*m)) and the final position A*dp_pump/c.
    let text = example("hydraulic_cylinder.eqm");
    let result = run(&text, 1.0);
    let (m, c, a, r_lam, dp) = (100.0f64, 1e5f64, 0.01f64, 2e7f64, 1e6f64);
    let w0 = (c / m).sqrt();
    let zeta = r_lam * a * a / (2.0 * (c * m).sqrt());
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    let s_end = a * dp / c;
    for t in [0.0f64, 0.05, 0.1, 0.2, 0.5, 1.0] {
        let decay = (-zeta * w0 * t).exp();
        let s = s_end * (1.0 - decay * ((wd * t).cos() + zeta * w0 / wd * (wd * t).sin()));
        let v = s_end * decay * w0 * w0 / wd * (wd * t).sin();
        check(&result, "mass.s", t, s, 1e-8);
        check(&result, "mass.v", t, v, 1e-7);
        // The cylinder's pressure is the pump's discharge pressure less the pipe's drop.
        check(&result, "cylinder.port.p", t, P_AMBIENT + dp - r_lam * a * v, 1e-7);
    }
}

#[test]
fn the_hydraulic_press_example_lifts_its_load_with_the_pumped_volume() {
    // The incompressible oil prescribes the motion: v = q/A with q rising linearly to q_max in
    // 2 s, so s = q_max t^2/(4 A) and then q_max (t - 1)/A; the cylinder's pressure carries the
    // load and its acceleration, p = p_ambient + m (g + a)/A, and the pump adds the pipe's drop.
    let text = example("hydraulic_press.eqm");
    let result = run(&text, 4.0);
    let (m, a_piston, q_max, r_lam) = (1000.0f64, 0.005f64, 2e-4f64, 1e9f64);
    let acceleration = q_max / (2.0 * a_piston);
    for t in [0.5f64, 1.0, 1.5, 2.5, 3.0, 4.0] {
        let (s, q, a) = if t < 2.0 {
            (q_max * t * t / (4.0 * a_piston), q_max * t / 2.0, acceleration)
        } else {
            (q_max * (t - 1.0) / a_piston, q_max, 0.0)
        };
        check(&result, "load.s", t, s, 1e-9);
        check(&result, "load.v", t, q / a_piston, 1e-9);
        let p = P_AMBIENT + m * (G + a) / a_piston;
        check_relative(&result, "cylinder.port.p", t, p, 1e-9);
        check_relative(&result, "pump.port_b.p", t, p + r_lam * q, 1e-9);
        check_relative(&result, "pump.power", t, (p + r_lam * q - P_AMBIENT) * q, 1e-9);
    }
    // The numbers the example's header states.
    check(&result, "load.s", 1.0, 0.01, 1e-12);
    check(&result, "load.s", 4.0, 0.12, 1e-12);
    check_relative(&result, "cylinder.port.p", 1.0, 2066655.0, 1e-12);
    check_relative(&result, "cylinder.port.p", 4.0, 2062655.0, 1e-12);
    check_relative(&result, "pump.power", 4.0, 432.266, 1e-9);
}
