//! The component diagram the flattener gives (`Sources::diagram`): only the connects of the
//! model's own class (not those inside its components), each end as its component, array
//! element and connector path, also for nested connectors, connector arrays, arrays of several
//! dimensions and the model's own connectors.

use eqm_flatten::Sources;
use eqm_flatten::diagram::{Diagram, Owner};
use eqm_ir::flat::Causality;

fn diagram(text: &str, model: &str) -> Diagram {
    let mut sources = Sources::new();
    sources.add_embedded_stdlib_lazily();
    sources.add_file("m.eqm", text);
    sources
        .diagram(Some(model), &eqm_flatten::Options::default())
        .unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)))
}

const NESTED: &str = "package N
  connector Pin
    potential Real v;
    flow Real i;
  end Pin;
  connector Bus
    Pin p;
    Pin q;
  end Bus;
  model Two
    Pin a;
    Pin b;
  equation
    a.v - b.v = a.i;
    a.i + b.i = 0;
  end Two;
  model Pair \"two in series: its own connects are inside it\"
    Two x;
    Two y;
    Bus bus;
    Pin pins[2];
  equation
    connect(x.b, y.a);
    connect(bus.p, x.a);
    connect(bus.q, y.b);
    connect(pins[1], bus.p);
    connect(pins[2], bus.q);
  end Pair;
  model Top
    Pair pair;
    Two grid[2, 2];
    Pin ends[2];
    Blocks.Interfaces.RealOutput out \"a signal of the model itself\";
    Blocks.Sources.Constant c(k = 1);
  equation
    connect(pair.bus.p, grid[2, 1].a);
    connect(pair.pins[2], grid[1, 2].b);
    connect(ends[2], pair.bus.q);
    connect(ends[1], grid[1, 1].a);
    connect(c.y, out);
  end Top;
end N;
";

#[test]
fn ends_name_their_component_element_and_connector() {
    let d = diagram(NESTED, "N.Top");
    let components: Vec<(&str, &str, &[usize])> = d
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.class_name.as_str(), &c.dims[..]))
        .collect();
    assert_eq!(
        components,
        [
            ("pair", "N.Pair", &[][..]),
            ("grid", "N.Two", &[2, 2]),
            ("c", "Blocks.Sources.Constant", &[])
        ]
    );
    let connectors: Vec<(&str, &[usize], bool)> = d
        .connectors
        .iter()
        .map(|c| (c.name.as_str(), &c.dims[..], c.is_connector))
        .collect();
    assert_eq!(connectors, [("ends", &[2][..], true), ("out", &[], true)]);
    assert_eq!(
        d.connectors[1].description.as_deref(),
        Some("a signal of the model itself")
    );
    // The connects inside `pair` are not the model's.
    let texts: Vec<String> = d
        .connections
        .iter()
        .map(|c| format!("{} -- {}", d.end_text(&c.a), d.end_text(&c.b)))
        .collect();
    assert_eq!(
        texts,
        [
            "pair.bus.p -- grid[2,1].a",
            "pair.pins[2] -- grid[1,2].b",
            "ends[2] -- pair.bus.q",
            "ends[1] -- grid[1,1].a",
            "c.y -- out",
        ]
    );
    let first = &d.connections[0];
    assert_eq!((first.a.owner, first.a.path.as_str()), (Owner::Component(0), "bus.p"));
    assert_eq!(
        (first.b.owner, &first.b.index[..], first.b.path.as_str()),
        (Owner::Component(1), &[2, 1][..], "a")
    );
    let own = &d.connections[2].a;
    assert_eq!(
        (own.owner, &own.index[..], own.path.as_str()),
        (Owner::Connector(0), &[2][..], "")
    );
    let signal = &d.connections[4];
    assert_eq!(
        (signal.a.causality, signal.b.causality),
        (Causality::Output, Causality::Output)
    );
    assert!(
        signal.a.drives() && !signal.b.drives(),
        "a component's output drives the model's own output"
    );
}

#[test]
fn a_model_without_connects_has_an_empty_diagram() {
    let d = diagram(
        "model Decay\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend Decay;\n",
        "Decay",
    );
    assert_eq!(d.model, "Decay");
    assert!(d.components.is_empty() && d.connectors.is_empty() && d.connections.is_empty());
}
