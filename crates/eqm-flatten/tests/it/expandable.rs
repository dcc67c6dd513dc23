//! Expandable connectors: the members a bus gets from its connects, counted variable by variable
//! and equation by equation against what Modelica's rules give by hand (each connect to a member
//! no declaration has adds it with the connected variable's type; connected buses get the union
//! of their members; a declared member no connect makes present is set to its default).

use eqm_flatten::Sources;
use eqm_ir::flat::FlatModel;

fn flatten(text: &str) -> FlatModel {
    let mut session = Sources::new();
    session.add_file("bus.eqm", text);
    session
        .flatten(None, &eqm_flatten::Options::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

fn names(flat: &FlatModel) -> Vec<&str> {
    flat.variables.iter().map(|v| v.name.as_str()).collect()
}

/// A source writes two signals into its bus; two sinks each read one from theirs; the three
/// buses are joined by a fourth. Every bus gets both members: 4 buses x 2 members = 8 bus
/// variables, plus the 6 variables of the blocks; 4 block equations, 4 connects of a block to a
/// bus member (one equation each) and 2 members x 3 bus connects (one equation per member per
/// connect): 14 equations for 14 unknowns.
pub const THREE_COMPONENTS: &str = "model BusTest
  connector RealOutput = output Real;
  connector RealInput = input Real;
  expandable connector Bus
  end Bus;
  model Source
    RealOutput y1;
    RealOutput y2;
    Bus bus;
  equation
    y1 = 2*time;
    y2 = 3;
    connect(y1, bus.speed);
    connect(y2, bus.torque);
  end Source;
  model Sink
    RealInput u;
    Real z;
    Bus bus;
  equation
    z = u + 1;
    connect(bus.speed, u);
  end Sink;
  model Sink2
    RealInput u;
    Real w;
    Bus bus;
  equation
    w = 10*u;
    connect(u, bus.torque);
  end Sink2;
  Source source;
  Sink sink;
  Sink2 sink2;
  Bus bus;
equation
  connect(source.bus, bus);
  connect(sink.bus, bus);
  connect(bus, sink2.bus);
end BusTest;
";

#[test]
fn a_bus_carries_two_signals_between_three_components() {
    let flat = flatten(THREE_COMPONENTS);
    let names = names(&flat);
    assert_eq!(flat.variables.len(), 14, "{names:?}");
    assert_eq!(flat.equations.len(), 14);
    for bus in ["source.bus", "sink.bus", "sink2.bus", "bus"] {
        for member in ["speed", "torque"] {
            let name = format!("{bus}.{member}");
            assert!(names.contains(&name.as_str()), "{name} missing from {names:?}");
        }
    }
}

/// A bus with declared members and a declared sub-bus: `a` is connected (present), `b` never
/// (absent: one equation setting it to zero), the sub-bus gets `x` from the component connected
/// to it and a member `y` added through the outer bus, so both copies of the sub-bus have `x`
/// and `y`.
#[test]
fn declared_members_sub_buses_and_absent_members() {
    let flat = flatten(
        "model Nested
  connector RealOutput = output Real;
  expandable connector Sub
    Real x;
  end Sub;
  expandable connector Main
    Real a;
    Real b;
    Sub sub;
  end Main;
  model Part
    Sub sub;
    RealOutput x = time;
  equation
    connect(x, sub.x);
  end Part;
  Part part;
  Main main;
  RealOutput a = 1;
  RealOutput y = 2;
equation
  connect(part.sub, main.sub);
  connect(a, main.a);
  connect(y, main.sub.y);
end Nested;
",
    );
    let names = names(&flat);
    for name in [
        "part.sub.x",
        "part.sub.y",
        "main.a",
        "main.b",
        "main.sub.x",
        "main.sub.y",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // Unknowns: part.x, part.sub.x, part.sub.y, a, y, main.a, main.b, main.sub.x, main.sub.y.
    assert_eq!(flat.variables.len(), 9, "{names:?}");
    // part.x = time, a = 1, y = 2, main.b = 0; part.x = part.sub.x; part.sub.{x, y} =
    // main.sub.{x, y}; a = main.a; y = main.sub.y.
    assert_eq!(flat.equations.len(), 9);
}

/// `connect(u, bus.speed[2])` adds the array element `speed[2]` only.
#[test]
fn a_subscripted_member_adds_that_element() {
    let flat = flatten(
        "model Elements
  connector RealOutput = output Real;
  expandable connector Bus
  end Bus;
  RealOutput u = time;
  RealOutput v = 2*time;
  Bus bus;
equation
  connect(u, bus.speed[2]);
  connect(v, bus.speed[3]);
end Elements;
",
    );
    let names = names(&flat);
    assert!(
        names.contains(&"bus.speed[2]") && names.contains(&"bus.speed[3]"),
        "{names:?}"
    );
    assert!(!names.contains(&"bus.speed[1]"), "{names:?}");
    assert_eq!(flat.variables.len(), 4);
    assert_eq!(flat.equations.len(), 4);
}
