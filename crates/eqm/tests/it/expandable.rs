//! Expandable connectors in a run: signals written into a bus by one component and read from
//! connected buses by others have, at every time, the values of their sources (closed forms of
//! the source equations), with both back ends agreeing bit for bit.

use crate::{check, run_both_back_ends};

/// A source writes `2 t` and `3 + t^2` into its bus, a controller reads the first from its own
/// bus and writes `speed + 1` back as a new member of a sub-bus, and a sink reads both of that
/// through a third bus: `z = 2 t + 1`, `w = 10 (3 + t^2)`.
const BUSES: &str = "model Buses
  connector RealOutput = output Real;
  connector RealInput = input Real;
  expandable connector Sub
  end Sub;
  expandable connector Bus
    Sub sub;
  end Bus;
  model Source
    RealOutput y1 = 2*time;
    RealOutput y2 = 3 + time^2;
    Bus bus;
  equation
    connect(y1, bus.speed);
    connect(y2, bus.torque);
  end Source;
  model Controller
    RealInput u;
    RealOutput y = u + 1;
    Bus bus;
  equation
    connect(bus.speed, u);
    connect(y, bus.sub.command);
  end Controller;
  model Sink
    RealInput command;
    RealInput torque;
    Real z = command;
    Real w = 10*torque;
    Bus bus;
  equation
    connect(bus.sub.command, command);
    connect(torque, bus.torque);
  end Sink;
  Source source;
  Controller controller;
  Sink sink;
equation
  connect(source.bus, controller.bus);
  connect(controller.bus, sink.bus);
end Buses;
";

#[test]
fn bus_signals_reach_every_connected_bus() {
    let result = run_both_back_ends(
        BUSES,
        eqm::RunSettings {
            stop: Some(2.0),
            ..eqm::RunSettings::default()
        },
    );
    for t in [0.0, 0.5, 1.0, 1.5, 2.0] {
        check(&result, "sink.z", t, 2.0 * t + 1.0, 1e-12);
        check(&result, "sink.w", t, 10.0 * (3.0 + t * t), 1e-12);
        check(&result, "source.bus.sub.command", t, 2.0 * t + 1.0, 1e-12);
        check(&result, "sink.bus.speed", t, 2.0 * t, 1e-12);
    }
}
