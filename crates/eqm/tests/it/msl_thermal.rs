//! `Modelica.Thermal.HeatTransfer`, `Modelica.Units` and `Modelica.Constants` of the standard
//! library under the Modelica Standard Library's names: each component in a small model written
//! as a user of that library writes it, against closed forms and hand computations.

use crate::{check, example};
use eqm::SimulationResult;

/// The run of the only model of `text` to `stop` at tight tolerances.
pub(crate) fn run(text: &str, stop: f64) -> SimulationResult {
    crate::run_tight(crate::compile(text), stop, None)
}

/// A body of heat capacity 10 J/K at 373.15 K cooling through a conductor of 2 W/K to an
/// ambient at 293.15 K, written exactly as for the Modelica Standard Library.
const COOLING: &str = "model Cooling \"A body cooling to a fixed ambient temperature\"
  Modelica.Thermal.HeatTransfer.Components.HeatCapacitor heatCapacitor(C = 10, T(start = 373.15, fixed = true));
  Modelica.Thermal.HeatTransfer.Components.ThermalConductor conductor(G = 2);
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature ambient(T = 293.15);
  Modelica.Thermal.HeatTransfer.Sensors.TemperatureSensor sensor;
  Modelica.Thermal.HeatTransfer.Components.HeatCapacitor other(C = 10, T(start = 373.15, fixed = true));
  Modelica.Thermal.HeatTransfer.Components.ThermalResistor resistor(R = 0.5);
equation
  connect(heatCapacitor.port, conductor.port_a);
  connect(conductor.port_b, ambient.port);
  connect(sensor.port, heatCapacitor.port);
  connect(other.port, resistor.port_a);
  connect(resistor.port_b, ambient.port);
end Cooling;
";

#[test]
fn a_capacitor_cools_exponentially_through_a_conductor_or_the_equal_resistor() {
    let result = run(COOLING, 10.0);
    for t in [0.0f64, 1.0, 2.5, 5.0, 10.0] {
        // T(t) = T_amb + (T0 - T_amb) exp(-G t / C) with G = 2 W/K = 1/R, C = 10 J/K.
        let expected = 293.15 + 80.0 * (-0.2 * t).exp();
        check(&result, "heatCapacitor.T", t, expected, 1e-7);
        check(&result, "sensor.T", t, expected, 1e-7);
        check(&result, "other.T", t, expected, 1e-7);
        // Heat leaves the body: the flow into its port is negative; der_T is its slope.
        check(
            &result,
            "heatCapacitor.port.Q_flow",
            t,
            -2.0 * (expected - 293.15),
            1e-6,
        );
        check(&result, "heatCapacitor.der_T", t, -0.2 * (expected - 293.15), 1e-6);
        check(&result, "conductor.Q_flow", t, 2.0 * (expected - 293.15), 1e-6);
        check(&result, "sensor.port.Q_flow", t, 0.0, 1e-12);
    }
}

#[test]
fn series_conductors_carry_the_temperature_difference_over_the_summed_resistances() {
    let text = "model Wall \"Two layers between two fixed temperatures\"
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature hot(T = 400);
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature cold(T = 300);
  Modelica.Thermal.HeatTransfer.Components.ThermalConductor layer1(G = 2);
  Modelica.Thermal.HeatTransfer.Components.ThermalResistor layer2(R = 0.25);
  Modelica.Thermal.HeatTransfer.Sensors.HeatFlowSensor heatFlowSensor;
  Modelica.Thermal.HeatTransfer.Sensors.TemperatureSensor middle;
equation
  connect(hot.port, heatFlowSensor.port_a);
  connect(heatFlowSensor.port_b, layer1.port_a);
  connect(layer1.port_b, layer2.port_a);
  connect(layer2.port_b, cold.port);
  connect(middle.port, layer1.port_b);
end Wall;
";
    let result = run(text, 1.0);
    // Q = dT / (R1 + R2) = 100 / (0.5 + 0.25); the middle is R1 Q below the hot side.
    let q = 100.0 / 0.75;
    check(&result, "heatFlowSensor.Q_flow", 1.0, q, 1e-10);
    check(&result, "layer1.Q_flow", 1.0, q, 1e-10);
    check(&result, "layer2.Q_flow", 1.0, q, 1e-10);
    check(&result, "middle.T", 1.0, 400.0 - 0.5 * q, 1e-10);
    check(&result, "hot.port.Q_flow", 1.0, -q, 1e-10);
    check(&result, "cold.port.Q_flow", 1.0, q, 1e-10);
}

#[test]
fn convection_and_body_radiation_at_given_temperatures() {
    let text = "model Surfaces \"Convection and radiation between fixed temperatures\"
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature solidT(T = 350);
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature fluidT(T = 300);
  Modelica.Thermal.HeatTransfer.Components.Convection convection;
  Modelica.Thermal.HeatTransfer.Sources.PrescribedTemperature hotT;
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature coldT(T = 300);
  Modelica.Thermal.HeatTransfer.Components.BodyRadiation radiation(Gr = 0.5);
equation
  convection.Gc = 5;
  hotT.T = 500 + 100*time;
  connect(solidT.port, convection.solid);
  connect(convection.fluid, fluidT.port);
  connect(hotT.port, radiation.port_a);
  connect(radiation.port_b, coldT.port);
end Surfaces;
";
    let result = run(text, 1.0);
    // Q = Gc (T_solid - T_fluid), positive from the solid into the fluid.
    check(&result, "convection.Q_flow", 0.5, 250.0, 1e-10);
    check(&result, "convection.solid.Q_flow", 0.5, 250.0, 1e-10);
    check(&result, "convection.fluid.Q_flow", 0.5, -250.0, 1e-10);
    // Q = Gr sigma (T_a^4 - T_b^4), with the Stefan-Boltzmann constant written out here.
    let sigma = 5.670374419e-8;
    for t in [0.0, 1.0] {
        let ta: f64 = 500.0 + 100.0 * t;
        let q = 0.5 * sigma * (ta.powi(4) - 300f64.powi(4));
        check(&result, "radiation.Q_flow", t, q, 1e-9);
        check(&result, "radiation.port_a.T", t, ta, 1e-12);
    }
}

#[test]
fn prescribed_and_fixed_heat_flows_heat_capacitors() {
    let text = "model Heating \"Capacitors heated by a prescribed and a temperature-dependent heat flow\"
  Modelica.Thermal.HeatTransfer.Components.HeatCapacitor body(C = 10, T(start = 300, fixed = true));
  Modelica.Thermal.HeatTransfer.Sources.PrescribedHeatFlow heater;
  Modelica.Thermal.HeatTransfer.Components.HeatCapacitor body2(C = 10, T(start = 300, fixed = true));
  Modelica.Thermal.HeatTransfer.Sources.FixedHeatFlow heater2(Q_flow = 20, T_ref = 300, alpha = 0.01);
equation
  heater.Q_flow = 20;
  connect(heater.port, body.port);
  connect(heater2.port, body2.port);
end Heating;
";
    let result = run(text, 10.0);
    for t in [0.0f64, 2.0, 10.0] {
        // C der(T) = Q: T = T0 + Q t / C.
        check(&result, "body.T", t, 300.0 + 2.0 * t, 1e-8);
        // C der(T) = Q (1 + alpha (T - T_ref)), T(0) = T_ref: T = T_ref + (exp(Q alpha t / C) - 1) / alpha.
        check(&result, "body2.T", t, 300.0 + 100.0 * ((0.02 * t).exp() - 1.0), 1e-7);
    }
    check(&result, "heater.port.Q_flow", 5.0, -20.0, 1e-12);
}

#[test]
fn celsius_conversions_sources_and_sensors() {
    let text = "model Celsius \"Temperatures in degrees Celsius\"
  Modelica.Units.SI.Temperature boiling = Modelica.Units.Conversions.from_degC(100);
  Modelica.Units.NonSI.Temperature_degC room = Modelica.Units.Conversions.to_degC(293.15);
  Modelica.Thermal.HeatTransfer.Celsius.FixedTemperature fixedC(T = 25);
  Modelica.Thermal.HeatTransfer.Sensors.TemperatureSensor kelvinSensor;
  Modelica.Thermal.HeatTransfer.Celsius.PrescribedTemperature prescribedC;
  Modelica.Thermal.HeatTransfer.Celsius.TemperatureSensor celsiusSensor;
  Modelica.Thermal.HeatTransfer.Celsius.ToKelvin toKelvin;
  Modelica.Thermal.HeatTransfer.Celsius.FromKelvin fromKelvin;
  Modelica.SIunits.Temperature absolute = -Modelica.Constants.T_zero;
equation
  connect(fixedC.port, kelvinSensor.port);
  prescribedC.T = 10*time;
  connect(prescribedC.port, celsiusSensor.port);
  toKelvin.Celsius = 37;
  fromKelvin.Kelvin = 0;
end Celsius;
";
    let result = run(text, 1.0);
    check(&result, "boiling", 0.0, 373.15, 1e-12);
    check(&result, "room", 0.0, 20.0, 1e-12);
    check(&result, "kelvinSensor.T", 0.5, 298.15, 1e-12);
    check(&result, "prescribedC.port.T", 0.5, 278.15, 1e-12);
    check(&result, "celsiusSensor.T", 0.5, 5.0, 1e-12);
    check(&result, "toKelvin.Kelvin", 0.5, 310.15, 1e-12);
    check(&result, "fromKelvin.Celsius", 0.5, -273.15, 1e-12);
    check(&result, "absolute", 0.5, 273.15, 1e-12);
}

#[test]
fn units_and_constants_have_the_standard_names_and_values() {
    let text = "model Names \"Types and constants under their standard names\"
  parameter Modelica.Units.SI.Length r = 2;
  Modelica.SIunits.Area A = Modelica.Constants.pi*r^2;
  Modelica.Units.SI.Force weight = 3*Modelica.Constants.g_n;
  Real sigma = Modelica.Constants.sigma;
  Real big = Modelica.Constants.inf;
  Real tiny = Modelica.Constants.small;
  Modelica.Units.SI.ThermalResistance R(start = 1, fixed = true);
equation
  der(R) = Modelica.Constants.e;
end Names;
";
    let result = run(text, 1.0);
    check(&result, "A", 0.0, std::f64::consts::PI * 4.0, 1e-14);
    check(&result, "weight", 0.0, 3.0 * 9.80665, 1e-14);
    check(&result, "sigma", 0.0, 5.670374419e-8, 1e-20);
    check(&result, "R", 1.0, 1.0 + std::f64::consts::E, 1e-9);
    let big = result.value_at("big", 0.0).expect("big");
    let tiny = result.value_at("tiny", 0.0).expect("tiny");
    assert!(
        big >= 1e60 && tiny > 0.0 && tiny <= 1e-60,
        "inf = {big}, small = {tiny}"
    );
}

#[test]
fn the_heated_rod_example_follows_the_modes_of_its_segments() {
    // The excess temperatures theta = T - T_hot of the n segments obey
    // C der(theta) = -G K theta with K tridiagonal (2 on the diagonal, 1 in the last row, -1 beside
    // it). K's eigenvectors are phi_k(j) = sin(j (2k - 1) pi/(2n + 1)) with the eigenvalues
    // 4 sin((2k - 1) pi/(2(2n + 1)))^2, so theta(t) is the sum of the decaying modes of
    // theta(0) = T_start - T_hot.
    let text = example("heated_rod.eqm");
    let result = run(&text, 600.0);
    let n = 10usize;
    let (length, area, conductivity, density, heat_capacity) = (0.2f64, 1e-4f64, 237.0f64, 2700.0f64, 900.0f64);
    let dx = length / n as f64;
    let c = density * heat_capacity * area * dx;
    let g = conductivity * area / dx;
    let (t_hot, t_start) = (373.15f64, 293.15f64);
    let arg = |j: usize, k: usize| (j * (2 * k - 1)) as f64 * std::f64::consts::PI / (2 * n + 1) as f64;
    let exact = |segment: usize, t: f64| {
        let mut theta = 0.0;
        for k in 1..=n {
            let norm: f64 = (1..=n).map(|j| arg(j, k).sin().powi(2)).sum();
            let projection: f64 = (1..=n).map(|j| arg(j, k).sin() * (t_start - t_hot)).sum::<f64>() / norm;
            let lambda = 4.0
                * ((2 * k - 1) as f64 * std::f64::consts::PI / (2.0 * (2 * n + 1) as f64))
                    .sin()
                    .powi(2);
            theta += projection * arg(segment, k).sin() * (-g / c * lambda * t).exp();
        }
        t_hot + theta
    };
    for t in [0.0f64, 10.0, 60.0, 180.0, 600.0] {
        for segment in [1usize, 5, 10] {
            check(&result, &format!("segment[{segment}].T"), t, exact(segment, t), 1e-6);
        }
        check(&result, "farEnd.T", t, exact(n, t) - 273.15, 1e-6);
    }
    // The numbers the example's header states.
    for (t, far_end) in [(10.0, 20.004f64), (60.0, 28.67), (180.0, 61.97), (600.0, 96.14)] {
        // Rounded to the digits given: within half a unit of the last one.
        check(&result, "farEnd.T", t, far_end, 0.0051 / far_end);
    }
}
