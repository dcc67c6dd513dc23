//! Explanations and drawings: `/api/explain` (the text of `eqm explain`, its sections, the
//! graph and the colouring replay), `/api/diagram` (every box of the SVG an element, at its
//! declaration), `/api/analyze` (the decay's eigenvalue is -k).

use crate::{DECAY, bench, example};
use axum::http::StatusCode;
use eqm::{GraphView, ModelOptions, Session};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// `POST uri` for `path` with the fields of `extra`: its answer.
async fn check(bench: &crate::Bench, uri: &str, path: &str, extra: Value) -> Value {
    let mut body = extra;
    body["path"] = json!(path);
    bench.post(uri, body).await
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_of_the_spring_mass_numbers_all_eleven_equations() {
    let text = example("spring_mass.eqm");
    let bench = bench(&[("spring_mass.eqm", &text)]);
    let answer = check(
        &bench,
        "/api/explain",
        "spring_mass.eqm",
        json!({ "keep_aliases": true }),
    )
    .await;
    // The text is what `eqm explain --keep-aliases` prints: the library's.
    let mut session = Session::with_sources(&[("spring_mass.eqm".into(), text.clone())], &[], None);
    let options = ModelOptions {
        keep_aliases: true,
        ..ModelOptions::default()
    };
    let (analysis, expected) = session.analyze_explained(None, &options).expect("it explains");
    assert_eq!(answer["text"], expected);
    // The sections cover the text, in order.
    let sections = answer["sections"].as_array().expect("sections");
    assert_eq!(sections[0]["title"], "model SpringMass");
    assert!(
        sections
            .iter()
            .any(|s| s["title"] == "matching (equation solves for unknown)")
    );
    let joined: String = sections
        .iter()
        .filter_map(|s| s["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let nonempty = |t: &str| {
        t.lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(nonempty(&joined), nonempty(&expected));

    let graph = &answer["graph"];
    let labels: Vec<&str> = graph["equations"]
        .as_array()
        .expect("equations")
        .iter()
        .filter_map(|e| e["label"].as_str())
        .collect();
    let expected_labels: Vec<String> = (1..=11).map(|k| format!("e{k}")).collect();
    assert_eq!(labels, expected_labels);
    // Each equation's origin is the line it is written on: e1 the first equation of the class
    // `Mass`, e8 (equal positions of mass and spring) the first `connect`.
    let line_of = |written: &str| {
        let line = text
            .lines()
            .position(|l| l.trim() == written)
            .expect("written in the example")
            + 1;
        let column = text.lines().nth(line - 1).map_or(0, |l| l.len() - l.trim_start().len()) + 1;
        format!("spring_mass.eqm:{line}:{column}")
    };
    assert_eq!(graph["equations"][0]["origin"], line_of("flange_a.s = flange_b.s;"));
    assert_eq!(
        graph["equations"][7]["origin"],
        line_of("connect(mass.flange_b, spring.flange_a);")
    );
    // The steps number every equation once, 1 to 11, and paint every edge once.
    let edges = graph["edges"].as_array().expect("edges").len();
    let mut numbered = BTreeSet::new();
    let mut numbers = BTreeSet::new();
    let mut painted = vec![0; edges];
    for step in graph["steps"].as_array().expect("steps") {
        for pair in step["numbered"].as_array().expect("numbered") {
            assert!(numbered.insert(pair[0].as_u64().expect("an equation")));
            assert!(numbers.insert(pair[1].as_u64().expect("a number")));
        }
        for edge in step["red"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(step["blue"].as_array().into_iter().flatten())
        {
            painted[edge.as_u64().expect("an edge") as usize] += 1;
        }
        // Each step's text is the line `--steps` prints for it.
        let line = step["text"].as_str().expect("a text");
        let steps = GraphView::new(&analysis).steps();
        assert!(steps.lines().any(|l| l == format!("  {line}")), "{line}");
    }
    assert_eq!(numbered, (0..11).collect());
    assert_eq!(numbers, (1..=11).collect());
    assert!(painted.iter().all(|&n| n == 1), "{painted:?}");
    assert_eq!(answer["graph_note"], Value::Null);
    let svg = answer["graph_svg"].as_str().expect("a drawing");
    assert_eq!(svg, GraphView::new(&analysis).svg().expect("drawn"));

    // Without keep_aliases the aliases are removed: fewer equations.
    let plain = check(&bench, "/api/explain", "spring_mass.eqm", json!({})).await;
    assert!(plain["graph"]["equations"].as_array().expect("equations").len() < 11);
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_diagram_and_analyze_of_a_model_with_errors_are_422() {
    let bench = bench(&[("m.eqm", "model M\n  Real x;\nequation\n  der(x) = -y;\nend M;\n")]);
    for uri in ["/api/explain", "/api/diagram", "/api/analyze"] {
        let reply = bench.call("POST", uri, Some(json!({ "path": "m.eqm" }))).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{uri}");
        assert_eq!(reply.json()["diagnostics"][0]["code"], "E0205", "{uri}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_box_of_the_diagram_is_an_element_at_its_declaration() {
    let text = example("spring_mass.eqm");
    let bench = bench(&[("spring_mass.eqm", &text)]);
    let answer = check(&bench, "/api/diagram", "spring_mass.eqm", json!({})).await;
    assert_eq!(answer["kind"], "components");
    let svg = answer["svg"].as_str().expect("svg");
    let mut session = Session::with_sources(&[("spring_mass.eqm".into(), text.clone())], &[], None);
    let diagram = session.diagram(None, &ModelOptions::default()).expect("a diagram");
    assert_eq!(svg, eqm::diagram::svg(&diagram));
    let elements = answer["elements"].as_array().expect("elements");
    let names: BTreeSet<&str> = elements.iter().filter_map(|e| e["name"].as_str()).collect();
    let drawn: BTreeSet<&str> = svg
        .split("data-name=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(names, drawn);
    assert!(
        names.contains("mass") && names.contains("spring") && names.contains("fixed"),
        "{names:?}"
    );
    for element in elements {
        let name = element["name"].as_str().expect("a name");
        let line = element["line"].as_u64().expect("a line") as usize;
        let col = element["col"].as_u64().expect("a column") as usize;
        let written = text.lines().nth(line - 1).expect("the line");
        assert_eq!(written.get(col - 1..col - 1 + name.len()), Some(name), "{element}");
        assert_eq!(element["file"], "spring_mass.eqm");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_decays_eigenvalue_is_minus_k() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    for (parameters, k) in [(json!({}), 0.5), (json!({ "k": 3.0 }), 3.0)] {
        let answer = check(&bench, "/api/analyze", "decay.eqm", json!({ "parameters": parameters })).await;
        let modes = answer["analysis"]["modes"].as_array().expect("modes");
        assert_eq!(modes.len(), 1);
        let re = modes[0]["re"].as_f64().expect("re");
        assert!((re + k).abs() < 1e-9 * k, "{re} for k = {k}");
        assert_eq!(modes[0]["im"], 0.0);
        assert_eq!(answer["analysis"]["stability"], "stable");
        let method = answer["method"].as_str().expect("the method judged");
        assert_eq!(answer["analysis"]["advice"]["recommended"]["method"], method);
        assert!(answer["stability_svg"].as_str().is_some_and(|s| s.contains("<svg")));
    }
    let answer = check(&bench, "/api/analyze", "decay.eqm", json!({ "method": "euler" })).await;
    assert_eq!(answer["method"], "euler");
    let reply = bench
        .call(
            "POST",
            "/api/analyze",
            Some(json!({ "path": "decay.eqm", "method": "magic" })),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stock_and_flow_diagram_names_the_files_variables() {
    let text = example("sd/teacup.xmile");
    let bench = bench(&[("teacup.xmile", &text)]);
    let answer = check(&bench, "/api/diagram", "teacup.xmile", json!({})).await;
    assert_eq!(answer["kind"], "stocks");
    let elements = answer["elements"].as_array().expect("elements");
    // The SVG writes the quotes of a name with spaces as `&apos;`; the elements give the name
    // itself, and each box links to the line of the file that defines its variable (a cloud:
    // its flow), not to the generated text.
    let names: BTreeSet<&str> = elements.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(names.contains("'Teacup Temperature'"), "{names:?}");
    let defined = |tag: &str| text.lines().position(|l| l.contains(tag)).expect("defined in the file") as u64 + 1;
    for element in elements {
        assert_eq!(element["file"], "teacup.xmile", "{element}");
        let expected = match element["name"].as_str() {
            Some("'Teacup Temperature'") => defined("<stock name=\"Teacup Temperature\""),
            _ => defined("<flow name=\"Heat Loss to Room\""),
        };
        assert_eq!(element["line"], expected, "{element}");
    }
}
