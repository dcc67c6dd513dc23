//! `eqm explain --steps` and `--svg`: the replay of the colouring procedure (snapshots, the
//! numbering done by hand, valid evaluation orders), the SVG drawing (well-formed, one red edge
//! per equation, escaped text), the size limits, and the command line.

use crate::models::chain_model;
use crate::pipeline::Pipeline;
use eqm_compile::analysis::Analysis;
use eqm_compile::graphview::{GraphView, TooLarge};
use eqm_flatten::Sources;

/// The one place these tests call the pipeline: the model in `text` with the stdlib, analysed
/// as `eqm explain` does (`keep_aliases` as `--keep-aliases`).
fn analyze(name: &str, text: &str, keep_aliases: bool) -> Result<Analysis, String> {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    session
        .analyze(None, &eqm_flatten::Options::default(), keep_aliases)
        .ok_or_else(|| session.render_diagnostics(false))
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", crate::REPO)).expect("example exists")
}

fn view_of(name: &str, text: &str, keep_aliases: bool) -> GraphView {
    let analysis = analyze(name, text, keep_aliases).unwrap_or_else(|e| panic!("{name}: {e}"));
    GraphView::new(&analysis)
}

/// Checks that the replay's groups form a valid evaluation order: every unknown an equation
/// uses (besides the one it solves for) is computed by an earlier group or by its own loop.
/// States are not unknowns of the graph, so they are known from the start by construction.
fn assert_valid_order(view: &GraphView, name: &str) {
    let replay = view.replay().unwrap_or_else(|e| panic!("{name}: {e}"));
    let n = view.equations.len();
    // Each equation numbered once, numbers 1..=n.
    let mut numbers = replay.numbers.clone();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (1..=n).collect::<Vec<_>>(),
        "{name}: numbers are a permutation"
    );
    let mut group_of = vec![usize::MAX; n];
    for (g, rows) in replay.groups.iter().enumerate() {
        for &r in rows {
            group_of[r] = g;
        }
    }
    let mut solver = vec![usize::MAX; view.variables.len()];
    for (row, solves) in replay.solves.iter().enumerate() {
        let column = solves.unwrap_or_else(|| panic!("{name}: e{} solves for nothing", row + 1));
        assert_eq!(
            solver[column],
            usize::MAX,
            "{name}: two equations solve for one unknown"
        );
        solver[column] = row;
    }
    for edge in &view.edges {
        let computed_by = solver[edge.variable];
        assert_ne!(
            computed_by,
            usize::MAX,
            "{name}: {} is never computed",
            view.variables[edge.variable]
        );
        assert!(
            group_of[computed_by] <= group_of[edge.equation],
            "{name}: {} uses {}, which {} computes later",
            view.equations[edge.equation].label,
            view.variables[edge.variable],
            view.equations[computed_by].label
        );
    }
}

/// Checks the replay's structured steps against its outcome and its text: applied in order
/// they colour every edge exactly once (red where the equation solves for the unknown), number
/// every equation once with the replay's number, and each step's text is a line of the text,
/// in order.
fn assert_steps_colour_the_graph(view: &GraphView, name: &str) {
    let replay = view.replay().unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut painted = vec![0usize; view.edges.len()];
    let mut numbers = vec![0usize; view.equations.len()];
    for step in &replay.steps {
        for &edge in &step.red {
            painted[edge] += 1;
            let e = view.edges[edge];
            assert_eq!(
                replay.solves[e.equation],
                Some(e.variable),
                "{name}: red edge {edge} is not the matching"
            );
        }
        for &edge in &step.blue {
            painted[edge] += 1;
        }
        for &(row, number) in &step.numbered {
            assert_eq!(numbers[row], 0, "{name}: e{} numbered twice", row + 1);
            numbers[row] = number;
        }
    }
    assert!(
        painted.iter().all(|&n| n == 1),
        "{name}: an edge is coloured {painted:?} times"
    );
    assert_eq!(numbers, replay.numbers, "{name}: the steps number as the replay does");
    let mut lines = replay.text.lines();
    for step in &replay.steps {
        let line = format!("  {}", step.text);
        assert!(
            lines.any(|l| l == line),
            "{name}: the text lacks, or misorders, `{line}`"
        );
    }
}

#[test]
fn steps_of_the_spring_mass_example() {
    let view = view_of("spring_mass.eqm", &example("spring_mass.eqm"), true);
    insta::assert_snapshot!("steps_spring_mass_keep_aliases", view.steps());
}

#[test]
fn steps_of_two_springs_in_series_stop_at_the_loop() {
    let view = view_of("two_springs_series.eqm", &example("two_springs_series.eqm"), false);
    let steps = view.steps();
    assert!(steps.contains("stuck: no equation and no unknown has exactly one uncoloured edge"));
    assert!(steps.contains("form an algebraic loop"));
    insta::assert_snapshot!("steps_two_springs_series", steps);
}

/// The spring-mass example numbered by hand: the flat model lists its equations in the order
/// (a)-(k) (the component equations, the unconnected flange's `f1 = 0`, then the connections),
/// and the replay gives them 1, 2, 11, 9, 7, 3, 4, 5, 10, 6, 8, each solving for the variable it
/// solves for by hand, so the sorted order is (a), (b), (f), (g), (h), (j), (e), (k), (d), (i),
/// (c).
#[test]
fn replay_of_the_spring_mass_example_follows_the_hand_numbering() {
    let view = view_of("spring_mass.eqm", &example("spring_mass.eqm"), true);
    assert_valid_order(&view, "spring_mass.eqm");
    let replay = view.replay().expect("small");
    // (letter, equation text, the variable it solves for, its number by hand)
    let by_hand = [
        ("a", "mass.flange_a.s = mass.flange_b.s", "mass.flange_a.s", 1),
        ("b", "mass.v = der(mass.flange_b.s)", "der(mass.flange_b.s)", 2),
        (
            "c",
            "mass.m*der(mass.v) = mass.flange_a.f + mass.flange_b.f",
            "der(mass.v)",
            11,
        ),
        ("d", "spring.flange_a.f + spring.flange_b.f = 0", "spring.flange_a.f", 9),
        (
            "e",
            "spring.flange_b.f = spring.c*(spring.flange_b.s - spring.flange_a.s)",
            "spring.flange_b.f",
            7,
        ),
        ("f", "fixed.flange.s = 0", "fixed.flange.s", 3),
        ("g", "mass.flange_a.f = 0", "mass.flange_a.f", 4),
        ("h", "mass.flange_b.s = spring.flange_a.s", "spring.flange_a.s", 5),
        ("i", "mass.flange_b.f + spring.flange_a.f = 0", "mass.flange_b.f", 10),
        ("j", "spring.flange_b.s = fixed.flange.s", "spring.flange_b.s", 6),
        ("k", "spring.flange_b.f + fixed.flange.f = 0", "fixed.flange.f", 8),
    ];
    assert_eq!(view.equations.len(), by_hand.len());
    for (row, (letter, text, unknown, number)) in by_hand.into_iter().enumerate() {
        assert_eq!(view.equations[row].text, text, "equation {} is ({letter})", row + 1);
        let solves = replay.solves[row].map(|c| view.variables[c].as_str());
        assert_eq!(solves, Some(unknown), "({letter}) solves for its variable");
        assert_eq!(replay.numbers[row], number, "({letter}) gets its number by hand");
    }
    let mut sorted: Vec<(usize, &str)> = replay.numbers.iter().copied().zip(by_hand.map(|h| h.0)).collect();
    sorted.sort_unstable();
    let letters: Vec<&str> = sorted.into_iter().map(|(_, letter)| letter).collect();
    assert_eq!(letters, ["a", "b", "f", "g", "h", "j", "e", "k", "d", "i", "c"]);
}

/// The eleven equations typed in their order (a)-(k): the replay gives exactly the numbers by
/// hand, step for step.
#[test]
fn the_equations_in_their_order_give_exactly_the_numbers_by_hand() {
    let text = "model Hand
  parameter Real m = 1;
  parameter Real c = 4;
  Real s1; Real s2(start = 1, fixed = true); Real s3; Real s4; Real s5;
  Real f1; Real f2; Real f3; Real f4; Real f5;
  Real v(start = 0, fixed = true);
equation
  s1 = s2;
  v = der(s2);
  m*der(v) = f1 + f2;
  f3 + f4 = 0;
  f4 = c*(s4 - s3);
  s5 = 0;
  f1 = 0;
  s2 = s3;
  f2 + f3 = 0;
  s4 = s5;
  f4 + f5 = 0;
end Hand;
";
    let view = view_of("hand.eqm", text, true);
    assert_valid_order(&view, "hand.eqm");
    let replay = view.replay().expect("small");
    // (a) .. (k)
    assert_eq!(replay.numbers, [1, 2, 11, 9, 7, 3, 4, 5, 10, 6, 8]);
    let steps = view.steps();
    // By hand: the first unknown with one uncoloured edge is der(v), so its equation (c) gets 11.
    assert!(steps.contains("der(v) has one uncoloured edge, to e3: e3 solves for der(v), number 11"));
    assert!(steps.contains("e5 has one uncoloured edge, to f4: e5 solves for f4, number 7"));
}

/// Every example that the plan can analyse replays to a valid order, with and without aliases.
#[test]
fn every_example_replays_to_a_valid_evaluation_order() {
    let dir = format!("{}/examples", crate::REPO);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".eqm"))
        .collect();
    names.sort();
    let mut replayed = 0;
    for name in &names {
        for keep_aliases in [false, true] {
            // Models that need index reduction are reported as singular for now: nothing to
            // replay.
            let Ok(analysis) = analyze(name, &example(name), keep_aliases) else {
                continue;
            };
            let view = GraphView::new(&analysis);
            assert_valid_order(&view, &format!("{name} (keep aliases: {keep_aliases})"));
            assert_steps_colour_the_graph(&view, &format!("{name} (keep aliases: {keep_aliases})"));
            replayed += 1;
        }
    }
    assert!(replayed >= 10, "only {replayed} examples replayed");
}

/// The sort numbers of the drawing are the plan's evaluation order, and the red edges its
/// matching.
#[test]
fn view_numbers_follow_the_plans_blocks() {
    let analysis = analyze("two_springs_series.eqm", &example("two_springs_series.eqm"), true).expect("analyses");
    let view = GraphView::new(&analysis);
    let mut sorts: Vec<usize> = view.equations.iter().map(|e| e.sort).collect();
    sorts.sort_unstable();
    assert_eq!(sorts, (1..=view.equations.len()).collect::<Vec<_>>());
    let in_order: Vec<usize> = view.blocks.iter().flat_map(|b| b.equations.iter().copied()).collect();
    for (position, row) in in_order.iter().enumerate() {
        assert_eq!(view.equations[*row].sort, position + 1);
    }
    assert_eq!(view.equations.iter().filter(|e| e.in_loop).count(), 8);
    for edge in &view.edges {
        let matched = analysis.plan.matching[edge.equation];
        let name = eqm_compile::plan::unknown_name(&analysis.dae, analysis.plan.unknowns[matched]);
        assert_eq!(edge.matched, view.variables[edge.variable] == name);
    }
}

/// An algorithm output is a node of its own, connected to what the section reads.
#[test]
fn algorithm_outputs_are_nodes() {
    let view = view_of("cooling.eqm", &example("cooling.eqm"), false);
    let algorithm = view
        .equations
        .iter()
        .position(|e| e.text == "algorithm of model Cup")
        .expect("an algorithm node");
    assert_eq!(view.equations[algorithm].label, "e3");
    let solves = view.equations[algorithm].solves.map(|c| view.variables[c].as_str());
    assert_eq!(solves, Some("Tamb"));
    assert!(view.equations[algorithm].algorithm);
    assert!(
        view.steps()
            .contains("e3 is the algorithm of model Cup, computing Tamb")
    );
    assert_valid_order(&view, "cooling.eqm");
}

/// A section with two outputs gives two rows, each connected to its own output and to what
/// the section reads (not to the other output, which the section computes itself).
#[test]
fn an_algorithm_with_two_outputs_gives_two_rows() {
    let text = "model Two
  Real x(start = 1, fixed = true);
  Real a;
  Real b;
equation
  der(x) = -a - b;
algorithm
  a := 2*x;
  b := a + x;
end Two;
";
    let view = view_of("two.eqm", text, false);
    let rows: Vec<usize> = (0..view.equations.len())
        .filter(|&r| view.equations[r].algorithm)
        .collect();
    assert_eq!(rows.len(), 2);
    for &row in &rows {
        let names: Vec<&str> = view
            .edges
            .iter()
            .filter(|e| e.equation == row)
            .map(|e| view.variables[e.variable].as_str())
            .collect();
        // x is a state: known, so not an edge; the section reads no other unknown.
        assert_eq!(names.len(), 1, "{names:?}");
    }
    assert_valid_order(&view, "two.eqm");
    let svg = view.svg().expect("small");
    assert_well_formed(&svg);
}

/// A model of parameters only: nothing to colour, and still a valid (empty) drawing.
#[test]
fn a_model_without_equations_has_nothing_to_colour() {
    let view = view_of("p.eqm", "model P\n  parameter Real a = 1;\nend P;\n", false);
    assert!(view.equations.is_empty());
    assert_eq!(
        view.steps(),
        "colouring steps: the model has no equations, so there is nothing to colour\n"
    );
    let svg = view.svg().expect("empty drawing");
    assert_well_formed(&svg);
    assert_eq!(count(&svg, "<line "), 0);
}

/// A minimal XML well-formedness check: tags balance, attribute values are quoted, and text
/// holds no raw `<` and only known entities.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start]);
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("<?") {
            let end = after.find("?>").expect("processing instruction closed");
            rest = &after[end + 2..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            let end = after.find("-->").expect("comment closed");
            rest = &after[end + 3..];
            continue;
        }
        let end = rest.find('>').expect("tag closed");
        let tag = &rest[1..end];
        assert!(!tag.contains('<'), "`<` inside a tag: {tag}");
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "closing tag matches");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name = body.split_whitespace().next().expect("tag name").to_string();
        // Attribute values are double-quoted and hold no raw `<` or `"`.
        assert_eq!(body.matches('"').count() % 2, 0, "quotes balance in <{tag}>");
        check_text(body);
        if stack.is_empty() {
            roots += 1;
        }
        if !self_closing {
            stack.push(name);
        }
    }
    check_text(rest);
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "one root element");
}

fn check_text(text: &str) {
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| entity.starts_with(e)),
            "unescaped `&` in `{text}`"
        );
    }
}

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[test]
fn svg_is_well_formed_with_one_red_edge_per_equation() {
    for (name, keep) in [
        ("spring_mass.eqm", true),
        ("two_springs_series.eqm", true),
        ("rc_circuit.eqm", false),
        ("cooling.eqm", false),
    ] {
        let view = view_of(name, &example(name), keep);
        let svg = view.svg().expect("small enough to draw");
        assert!(svg.starts_with("<?xml"));
        assert!(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
        assert_well_formed(&svg);
        assert_eq!(count(&svg, "<line "), view.edges.len(), "{name}: one line per edge");
        assert_eq!(
            count(&svg, "<line class=\"red\""),
            view.equations.len(),
            "{name}: red edges"
        );
        assert_eq!(
            count(&svg, "<circle "),
            view.equations.len() + view.variables.len(),
            "{name}: one circle per node"
        );
        assert_eq!(count(&svg, "<text class=\"eq\""), view.equations.len());
        assert_eq!(count(&svg, "<text class=\"sort\""), view.equations.len());
        assert_eq!(count(&svg, "<text class=\"var\""), view.variables.len());
        // Deterministic: the same drawing every time.
        assert_eq!(svg, view.svg().expect("small"));
    }
}

#[test]
fn svg_escapes_markup_in_equation_text() {
    let text = "model Esc
  Real x(start = 1, fixed = true);
  Real y;
  Real z;
equation
  der(x) = -x;
  y = if noEvent(x < 0.5) then 1 else 2;
  z = if noEvent(x > 0.25 and y < 2) then y else -y;
end Esc;
";
    let view = view_of("esc.eqm", text, false);
    let svg = view.svg().expect("small");
    assert_well_formed(&svg);
    assert!(svg.contains("x &lt; 0.5"), "`<` escaped");
    assert!(svg.contains("x &gt; 0.25"), "`>` escaped");
    assert!(!svg.contains("x < 0.5"));
}

/// A model of `n` equations `x[i] = x[i-1] + sin(i*time)`: a chain the replay numbers from the
/// top, with no aliases to eliminate.
#[test]
fn a_few_hundred_nodes_are_drawn_and_replayed() {
    let view = view_of("chain.eqm", &chain_model(190), false);
    assert_eq!(view.equations.len(), 190);
    let svg = view.svg().expect("380 nodes are drawn");
    assert_well_formed(&svg);
    assert_eq!(count(&svg, "<line class=\"red\""), 190);
    assert_valid_order(&view, "chain.eqm");
}

#[test]
fn large_models_are_neither_replayed_nor_drawn() {
    let view = view_of("big.eqm", &chain_model(500), false);
    assert_eq!(view.equations.len(), 500);
    assert_eq!(
        view.steps(),
        "colouring steps: too large to replay step by step (500 equations); the sorted assignment list above gives the result\n"
    );
    let err = view.svg().expect_err("too large");
    assert_eq!(err, TooLarge::Draw { nodes: 1000 });
    let message = err.to_string();
    assert!(message.contains("too large to draw"), "{message}");
    assert!(message.contains("1000 nodes"), "{message}");
}
