//! The component diagram (`Session::diagram`) and its drawing (`eqm::diagram::svg`): the
//! components, connectors and connections of every example and of targeted models (inherited
//! connects, for-loops, absent conditional components, imports, arrays), the System Dynamics
//! symbols, a drawing that shows every component and connection without overlapping boxes and
//! is the same every time, random diagrams without a panic, and large models in little time.

use crate::svg;
use eqm::diagram::{self, Connection, Diagram, Element, End, Owner, StockKind, Symbol};
use eqm::pipeline::diag::source::Span;
use eqm::pipeline::ir::flat::Causality;
use eqm::{ModelOptions, Session};

use crate::REPO;

/// The diagram of `model` (or the only model) of `text`, with `parameters`; panics with the
/// rendered diagnostics when there is none.
fn diagram_with(text: &str, model: Option<&str>, parameters: &[(&str, f64)]) -> Diagram {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], model);
    let options = ModelOptions {
        parameters: parameters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..ModelOptions::default()
    };
    session
        .diagram(model, &options)
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

fn diagram_of(text: &str) -> Diagram {
    diagram_with(text, None, &[])
}

/// Every box a full drawing of `diagram` has: each element of each component and connector.
fn expected_boxes(diagram: &Diagram) -> Vec<String> {
    let mut names = Vec::new();
    for element in diagram.components.iter().chain(&diagram.connectors) {
        for position in 0..element.count() {
            let mut name = element.name.clone();
            let index = eqm::pipeline::flatten::diagram::element_subscripts(&element.dims, position);
            eqm::pipeline::flatten::diagram::push_subscripts(&mut name, &index);
            names.push(name);
        }
    }
    names.sort();
    names
}

fn connection_texts(diagram: &Diagram) -> Vec<(String, String)> {
    diagram
        .connections
        .iter()
        .map(|c| (diagram.end_text(&c.a), diagram.end_text(&c.b)))
        .collect()
}

/// Draws `diagram` and checks the drawing: well-formed, every box and every connection
/// present, no two boxes overlapping, the same bytes when drawn again. Returns it read back.
fn check_drawing(diagram: &Diagram) -> svg::Drawing {
    let text = diagram::svg(diagram);
    assert_eq!(text, diagram::svg(diagram), "{}: the drawing changes", diagram.model);
    let drawing = svg::drawing(&text);
    let mut boxes: Vec<String> = drawing.boxes.iter().map(|b| b.name.clone()).collect();
    boxes.sort();
    assert_eq!(boxes, expected_boxes(diagram), "{}", diagram.model);
    let mut drawn: Vec<(String, String)> = drawing.links.iter().map(|l| (l.a.clone(), l.b.clone())).collect();
    let mut expected = connection_texts(diagram);
    drawn.sort();
    expected.sort();
    assert_eq!(drawn, expected, "{}", diagram.model);
    if let Some((a, b)) = drawing.overlap() {
        panic!("{}: {} and {} overlap", diagram.model, a.name, b.name);
    }
    drawing
}

const SPRING_MASS: &str = "model SpringMass
  connector Flange
    potential Real s;
    flow Real f;
  end Flange;
  model Mass
    parameter Real m = 1;
    Flange flange_a;
    Flange flange_b;
    Real v;
  equation
    flange_a.s = flange_b.s;
    v = der(flange_b.s);
    m*der(v) = flange_a.f + flange_b.f;
  end Mass;
  model Spring
    parameter Real c = 1;
    Flange flange_a;
    Flange flange_b;
  equation
    flange_a.f + flange_b.f = 0;
    flange_b.f = c*(flange_b.s - flange_a.s);
  end Spring;
  model Fixed
    Flange flange;
  equation
    flange.s = 0;
  end Fixed;
  Mass mass(flange_b(s(start = 1, fixed = true)), v(start = 0, fixed = true)) \"the mass\";
  Spring spring(c = 4);
  Fixed fixed;
equation
  connect(mass.flange_b, spring.flange_a);
  connect(spring.flange_b, fixed.flange);
end SpringMass;
";

#[test]
fn spring_mass_has_its_components_and_connections() {
    let d = diagram_of(SPRING_MASS);
    assert_eq!(d.model, "SpringMass");
    let names: Vec<(&str, &str, &str)> = d
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.class_name.as_str(), c.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("mass", "SpringMass.Mass", "model"),
            ("spring", "SpringMass.Spring", "model"),
            ("fixed", "SpringMass.Fixed", "model")
        ]
    );
    assert_eq!(d.components[0].description.as_deref(), Some("the mass"));
    assert!(d.connectors.is_empty());
    assert_eq!(
        connection_texts(&d),
        [
            ("mass.flange_b".to_string(), "spring.flange_a".to_string()),
            ("spring.flange_b".to_string(), "fixed.flange".to_string())
        ]
    );
    let drawing = check_drawing(&d);
    // A chain of physical components runs from left to right on one line.
    let (mass, spring, fixed) = (drawing.find("mass"), drawing.find("spring"), drawing.find("fixed"));
    assert!(mass.x + mass.w < spring.x && spring.x + spring.w < fixed.x);
    assert!(drawing.links.iter().all(|l| l.kind == "physical"));
    assert!(drawing.boxes.iter().all(|b| b.symbol == "block"));
}

#[test]
fn every_example_is_drawn() {
    let mut drawn = 0;
    let mut entries: Vec<_> = std::fs::read_dir(format!("{REPO}/examples"))
        .expect("the examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).expect("the example reads");
        let name = path.display().to_string();
        let mut session = Session::with_sources(&[(name.clone(), text)], &[], None);
        let diagram = session
            .diagram(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)));
        check_drawing(&diagram);
        drawn += 1;
    }
    assert!(drawn >= 20, "only {drawn} examples");
}

const LADDER: &str = "package P
  connector Pin
    potential Real v;
    flow Real i;
  end Pin;
  model R
    parameter Real r = 1;
    Pin p;
    Pin n;
  equation
    p.v - n.v = r*p.i;
    p.i + n.i = 0;
  end R;
  model G
    Pin p;
  equation
    p.v = 0;
  end G;
  model Base
    R first;
    G ground;
  equation
    connect(first.n, ground.p);
  end Base;
  model Ladder
    extends Base;
    parameter Integer n = 3;
    parameter Boolean withExtra = false;
    R r[n];
    R extra if withExtra;
    Pin pin;
  equation
    connect(pin, first.p);
    for i in 1:n loop
      connect(r[i].p, first.p);
      connect(r[i].n, ground.p);
    end for;
    connect(extra.p, first.p);
  end Ladder;
end P;
";

#[test]
fn inherited_and_looped_connects_without_absent_components() {
    let d = diagram_with(LADDER, Some("P.Ladder"), &[]);
    let components: Vec<(&str, &[usize])> = d.components.iter().map(|c| (c.name.as_str(), &c.dims[..])).collect();
    assert_eq!(components, [("first", &[][..]), ("ground", &[]), ("r", &[3])]);
    assert_eq!(d.connectors.len(), 1);
    assert_eq!(
        (d.connectors[0].name.as_str(), d.connectors[0].kind),
        ("pin", "connector")
    );
    let texts = connection_texts(&d);
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        texts,
        [
            pair("first.n", "ground.p"),
            pair("pin", "first.p"),
            pair("r[1].p", "first.p"),
            pair("r[1].n", "ground.p"),
            pair("r[2].p", "first.p"),
            pair("r[2].n", "ground.p"),
            pair("r[3].p", "first.p"),
            pair("r[3].n", "ground.p"),
        ]
    );
    assert_eq!(d.connections[1].a.owner, Owner::Connector(0));
    assert_eq!(d.connections[2].a.index, [1]);
    check_drawing(&d);

    // Present, the conditional component is drawn and connected; more elements, more boxes.
    let d = diagram_with(LADDER, Some("P.Ladder"), &[("withExtra", 1.0), ("n", 5.0)]);
    assert!(d.components.iter().any(|c| c.name == "extra"));
    assert!(connection_texts(&d).contains(&pair("extra.p", "first.p")));
    assert_eq!(
        d.components.iter().find(|c| c.name == "r").map(|c| c.dims.clone()),
        Some(vec![5])
    );
    check_drawing(&d);
}

#[test]
fn class_names_resolve_as_in_simulation() {
    let text = "package Q
  connector C
    potential Real e;
    flow Real f;
  end C;
  model Two
    C a;
    C b;
  equation
    a.e = b.e;
    a.f + b.f = 0;
  end Two;
  model Stiff = Two;
  model End
    C a;
  equation
    a.e = 0;
  end End;
end Q;
model M
  import Q.Two;
  import Short = Q.Stiff;
  Two t;
  Short s;
  Q.End e;
  Blocks.Sources.Step step;
  Blocks.Math.Gain gain;
equation
  connect(t.b, s.a);
  connect(s.b, e.a);
  connect(step.y, gain.u);
end M;
";
    let d = diagram_with(text, Some("M"), &[]);
    let classes: Vec<&str> = d.components.iter().map(|c| c.class_name.as_str()).collect();
    assert_eq!(classes[0], "Q.Two");
    assert!(classes[1] == "Q.Stiff" || classes[1] == "Q.Two", "{classes:?}");
    assert_eq!(classes[2], "Q.End");
    assert_eq!(classes[3], "Blocks.Sources.Step");
    // The signal goes from the step's output to the gain's input.
    let signal = &d.connections[2];
    assert_eq!(
        (signal.a.causality, signal.b.causality),
        (Causality::Output, Causality::Input)
    );
    assert!(signal.a.drives() && !signal.b.drives());
    assert!(!d.components[3].bases.is_empty(), "the step's base classes");
    let drawing = check_drawing(&d);
    let kinds: Vec<&str> = drawing.links.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["physical", "physical", "signal"]);
    let (step, gain) = (drawing.find("step"), drawing.find("gain"));
    assert!(step.x + step.w < gain.x, "a signal flows from left to right");
}

#[test]
fn a_model_that_does_not_flatten_gives_its_diagnostics() {
    let mut session = Session::with_sources(
        &[("m.eqm".to_string(), "model M\n  Nowhere.Thing t;\nend M;\n".to_string())],
        &[],
        None,
    );
    assert!(session.diagram(None, &ModelOptions::default()).is_none());
    assert!(session.has_errors());
    assert!(session.diagnostics().iter().any(|d| d.code.starts_with("E02")));
}

/// An element of a hand-made diagram.
fn element(name: &str, class_name: &str, bases: &[&str], dims: &[usize], is_connector: bool) -> Element {
    Element {
        name: name.to_string(),
        dims: dims.to_vec(),
        class_name: class_name.to_string(),
        bases: bases.iter().map(|b| b.to_string()).collect(),
        kind: if is_connector { "connector" } else { "model" },
        is_connector,
        description: None,
        placement: None,
        span: Span::default(),
    }
}

#[test]
fn system_dynamics_symbols_follow_the_resolved_class_and_its_bases() {
    let cases = [
        (
            "SystemDynamics.Reservoirs.Stock",
            &[][..],
            Symbol::Stock(StockKind::Plain),
        ),
        (
            "SystemDynamics.Reservoirs.SaturatedStock",
            &[],
            Symbol::Stock(StockKind::Plain),
        ),
        (
            "SystemDynamics.Reservoirs.StockD",
            &[],
            Symbol::Stock(StockKind::Discrete),
        ),
        (
            "SystemDynamics.Reservoirs.SaturatedStockD",
            &[],
            Symbol::Stock(StockKind::Discrete),
        ),
        ("SystemDynamics.Reservoirs.Oven", &[], Symbol::Stock(StockKind::Oven)),
        (
            "SystemDynamics.Reservoirs.Conveyor",
            &[],
            Symbol::Stock(StockKind::Conveyor),
        ),
        ("SystemDynamics.Reservoirs.Queue", &[], Symbol::Stock(StockKind::Queue)),
        ("SystemDynamics.Reservoirs.CloudSource", &[], Symbol::Cloud),
        ("SystemDynamics.Reservoirs.CloudSink", &[], Symbol::Cloud),
        ("SystemDynamics.Flows.AnyRate", &[], Symbol::Flow),
        ("SystemDynamics.Converters.Mult2", &[], Symbol::Converter),
        ("SystemDynamics.Functions.Smooth1", &[], Symbol::Converter),
        ("Mechanics.Translational.Components.Mass", &[], Symbol::Block),
        // A user's class is recognised by the library class it extends.
        (
            "Mine.Tank",
            &["SystemDynamics.Reservoirs.Stock"],
            Symbol::Stock(StockKind::Plain),
        ),
        (
            "Mine.Valve",
            &["Mine.Base", "SystemDynamics.Interfaces.GenericFlow"],
            Symbol::Flow,
        ),
    ];
    for (class, bases, expected) in cases {
        assert_eq!(
            diagram::symbol(&element("x", class, bases, &[], false)),
            expected,
            "{class}"
        );
    }
    let port = element("p", "SystemDynamics.Interfaces.MassPortR", &[], &[], true);
    assert_eq!(diagram::symbol(&port), Symbol::Connector);
}

const SD_MODEL: &str = "model Tanks
  import SystemDynamics.{Reservoirs, Flows, Converters};
  model MyStock \"a user's stock\"
    extends SystemDynamics.Reservoirs.Stock;
  end MyStock;
  Reservoirs.CloudSource source;
  Flows.Flow fill;
  MyStock tank(m0 = 1);
  Flows.Flow drain;
  Reservoirs.CloudSink sink;
  Converters.ConstantConverter rate(constValue = 2);
  Converters.Mult2 half;
  Converters.ConstantConverter k(constValue = 0.5);
equation
  connect(source.outflow, fill.inflow);
  connect(fill.outflow, tank.inflow);
  connect(tank.outflow, drain.inflow);
  connect(drain.outflow, sink.inflow);
  connect(rate.y, fill.u);
  connect(tank.level, half.u1);
  connect(k.y, half.u2);
  connect(half.y, drain.u);
end Tanks;
";

#[test]
fn a_stock_and_flow_chain_runs_left_to_right_with_converters_around_it() {
    let d = diagram_with(SD_MODEL, Some("Tanks"), &[]);
    let symbols: Vec<(&str, Symbol)> = d
        .components
        .iter()
        .map(|c| (c.name.as_str(), diagram::symbol(c)))
        .collect();
    assert_eq!(
        symbols,
        [
            ("source", Symbol::Cloud),
            ("fill", Symbol::Flow),
            ("tank", Symbol::Stock(StockKind::Plain)),
            ("drain", Symbol::Flow),
            ("sink", Symbol::Cloud),
            ("rate", Symbol::Converter),
            ("half", Symbol::Converter),
            ("k", Symbol::Converter),
        ]
    );
    let drawing = check_drawing(&d);
    for b in &drawing.boxes {
        assert_eq!(
            b.symbol,
            diagram::symbol(d.components.iter().find(|c| c.name == b.name).unwrap()).name()
        );
    }
    let kinds: Vec<&str> = drawing.links.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["mass", "mass", "mass", "mass", "info", "info", "info", "info"]);
    // The chain in the order of the material, each symbol's middle on one line.
    let chain: Vec<&svg::Box> = ["source", "fill", "tank", "drain", "sink"]
        .iter()
        .map(|n| drawing.find(n))
        .collect();
    for pair in chain.windows(2) {
        assert!(
            pair[0].x + pair[0].w < pair[1].x,
            "{} before {}",
            pair[0].name,
            pair[1].name
        );
    }
    // Converters in rows above or below the chain, never beside it.
    let top = chain.iter().map(|b| b.y).fold(f64::INFINITY, f64::min);
    let bottom = chain.iter().map(|b| b.y + b.h).fold(f64::NEG_INFINITY, f64::max);
    for name in ["rate", "half", "k"] {
        let c = drawing.find(name);
        assert!(c.y + c.h <= top || c.y >= bottom, "{name} is beside the chain");
    }
    // The material's direction: pipes point into the stock and the sink.
    let svg_text = diagram::svg(&d);
    assert!(svg_text.contains("data-symbol=\"cloud\""));
    assert!(svg_text.contains("information link"));
}

#[test]
fn mass_flows_point_downstream_whatever_the_order_of_the_connect() {
    // The same chain with each connect written the other way round.
    let text = SD_MODEL
        .replace(
            "connect(source.outflow, fill.inflow)",
            "connect(fill.inflow, source.outflow)",
        )
        .replace(
            "connect(fill.outflow, tank.inflow)",
            "connect(tank.inflow, fill.outflow)",
        )
        .replace(
            "connect(tank.outflow, drain.inflow)",
            "connect(drain.inflow, tank.outflow)",
        );
    let drawing = check_drawing(&diagram_with(&text, Some("Tanks"), &[]));
    let xs: Vec<f64> = ["source", "fill", "tank", "drain", "sink"]
        .iter()
        .map(|n| drawing.find(n).x)
        .collect();
    assert!(xs.windows(2).all(|p| p[0] < p[1]), "{xs:?}");
}

/// A random diagram: `n` components (some arrays, some of System Dynamics), a few connectors,
/// and connections between random elements, self-connections and signals among them.
fn random_diagram(seed: u64, n: usize, connections: usize) -> Diagram {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move |bound: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % bound.max(1)
    };
    let classes = [
        "Lib.Box",
        "SystemDynamics.Reservoirs.Stock",
        "SystemDynamics.Flows.Flow",
        "SystemDynamics.Converters.Gain",
        "SystemDynamics.Reservoirs.CloudSink",
    ];
    let components: Vec<Element> = (0..n)
        .map(|k| {
            let dims = if next(5) == 0 { vec![1 + next(3)] } else { Vec::new() };
            element(&format!("c{k}"), classes[next(classes.len())], &[], &dims, false)
        })
        .collect();
    let connectors: Vec<Element> = (0..1 + next(3))
        .map(|k| element(&format!("p{k}"), "Lib.Pin", &[], &[], true))
        .collect();
    let mut d = Diagram {
        model: "Random".to_string(),
        components,
        connectors,
        connections: Vec::new(),
    };
    let causalities = [Causality::None, Causality::Input, Causality::Output];
    for _ in 0..connections {
        let mut end = |d: &Diagram| {
            let owner = if next(8) == 0 {
                Owner::Connector(next(d.connectors.len()))
            } else {
                Owner::Component(next(d.components.len()))
            };
            let index = d.element(owner).dims.iter().map(|&size| 1 + next(size)).collect();
            End {
                owner,
                index,
                path: if matches!(owner, Owner::Connector(_)) {
                    String::new()
                } else {
                    ["inflow", "outflow", "u", "y", "p"][next(5)].to_string()
                },
                causality: causalities[next(3)],
            }
        };
        let (a, b) = (end(&d), end(&d));
        d.connections.push(Connection {
            a,
            b,
            span: Span::default(),
        });
    }
    d
}

#[test]
fn random_diagrams_are_drawn_without_overlaps() {
    for seed in 0..40 {
        let d = random_diagram(seed, 1 + (seed as usize * 7) % 30, (seed as usize * 13) % 60);
        check_drawing(&d);
    }
}

#[test]
fn large_models_are_drawn_quickly() {
    // Dense: as many boxes as a drawing holds, with five connections each.
    let started = std::time::Instant::now();
    let d = random_diagram(7, diagram::DRAW_LIMIT - 10, 5 * diagram::DRAW_LIMIT);
    let drawing = svg::drawing(&diagram::svg(&d));
    assert!(drawing.overlap().is_none());
    assert!(started.elapsed().as_secs_f64() < 30.0, "{:?}", started.elapsed());

    // A chain of 5000 masses and springs: each array is one box, and the drawing says so.
    let text = SPRING_MASS
        .replace("Mass mass(flange_b(s(start = 1, fixed = true)), v(start = 0, fixed = true)) \"the mass\";", "parameter Integer n = 5000;\n  Mass mass[n];")
        .replace("Spring spring(c = 4);", "Spring spring[n - 1];")
        .replace(
            "connect(mass.flange_b, spring.flange_a);\n  connect(spring.flange_b, fixed.flange);",
            "for i in 1:n - 1 loop\n    connect(mass[i].flange_b, spring[i].flange_a);\n    connect(spring[i].flange_b, mass[i + 1].flange_a);\n  end for;\n  connect(mass[n].flange_b, fixed.flange);",
        );
    let started = std::time::Instant::now();
    let d = diagram_of(&text);
    assert_eq!(d.connections.len(), 2 * 4999 + 1);
    let text = diagram::svg(&d);
    assert!(started.elapsed().as_secs_f64() < 30.0, "{:?}", started.elapsed());
    assert!(
        text.contains("each array of components is one box"),
        "the drawing says what it left out"
    );
    let drawing = svg::drawing(&text);
    assert_eq!(drawing.boxes.len(), 3);
    assert_eq!(
        drawing.links.iter().map(|l| l.count).sum::<usize>(),
        d.connections.len()
    );
    assert!(drawing.overlap().is_none());
}

#[test]
fn ends_outside_the_diagram_are_left_out_without_a_panic() {
    let mut d = random_diagram(3, 4, 0);
    let end = |owner: Owner, index: Vec<usize>| End {
        owner,
        index,
        path: "p".to_string(),
        causality: Causality::None,
    };
    for (a, b) in [
        (end(Owner::Component(99), vec![]), end(Owner::Component(0), vec![])),
        (end(Owner::Connector(7), vec![]), end(Owner::Component(1), vec![])),
        (end(Owner::Component(0), vec![5, 5]), end(Owner::Component(1), vec![0])),
    ] {
        d.connections.push(Connection {
            a,
            b,
            span: Span::default(),
        });
    }
    let text = diagram::svg(&d);
    let drawing = svg::drawing(&text);
    assert!(drawing.links.is_empty());
    assert!(text.contains("3 connections are not drawn"), "the drawing says so");
}
