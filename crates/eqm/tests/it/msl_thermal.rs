//! `Modelica.Thermal.HeatTransfer`, `Modelica.Units` and `Modelica.Constants` of the standard
//! library under the Modelica Standard Library's names: each component in a small model written
//! as a user of that library writes it, against closed forms and hand computations.

use crate::system_dynamics::check;
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

/// The run of the only model of `text` to `stop` at tight tolerances.
pub(crate) fn run(text: &str, stop: f64) -> SimulationResult {
    let files = [("m.eqm".to_string(), text.to_string())];
    let mut session = Session::with_sources(&files, &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"))
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
