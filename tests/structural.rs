//! Structural analysis tests: seed 000's assignment list, algebraic loops and tearing, the
//! singular-system diagnostics, and snapshots of `eqm explain` for every example.

use eqm::dae::Dae;
use eqm::driver::Session;
use eqm::plan::{Block, Plan, unknown_name};

/// The one place these tests call the pipeline: flatten `text` with the stdlib, lower it,
/// optionally eliminate aliases, and build the plan (or return the rendered diagnostics).
fn check(name: &str, text: &str, eliminate_aliases: bool) -> Result<(Dae, Plan), String> {
    let mut session = Session::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    let Some(flat) = session.flatten(None, &eqm::flatten::Options::default()) else {
        return Err(session.render_diagnostics(false));
    };
    let mut dae = eqm::dae::lower(flat);
    if eliminate_aliases {
        eqm::alias::eliminate(&mut dae);
    }
    match eqm::plan::analyze(&mut dae) {
        Ok(plan) => Ok((dae, plan)),
        Err(diagnostics) => {
            session.diagnostics = diagnostics;
            Err(session.render_diagnostics(false))
        }
    }
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))).expect("example exists")
}

/// The assignments of a plan as `unknown := value` texts in evaluation order.
fn assignments(dae: &Dae, plan: &Plan) -> Vec<String> {
    plan.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Explicit { unknown, value, .. } => Some(format!(
                "{} := {}",
                unknown_name(dae, plan.unknowns[*unknown]),
                dae.flat.expr_text(*value)
            )),
            _ => None,
        })
        .collect()
}

/// Seed 000: with every equation kept, each of (a)-(k) solves for the variable the seed gives.
#[test]
fn seed_000_each_equation_solves_for_the_seeds_variable() {
    let (dae, plan) = check("spring_mass.eqm", &example("spring_mass.eqm"), false).unwrap_or_else(|e| panic!("{e}"));
    // (equation as printed, the unknown the seed assigns with it)
    let seed = [
        ("mass.flange_a.s = mass.flange_b.s", "mass.flange_a.s"), // (a) s1 := s2
        ("mass.v = der(mass.flange_b.s)", "der(mass.flange_b.s)"), // (b)
        ("mass.m*der(mass.v) = mass.flange_a.f + mass.flange_b.f", "der(mass.v)"), // (c)
        ("spring.flange_a.f + spring.flange_b.f = 0", "spring.flange_a.f"), // (d) f3 := -f4
        (
            "spring.flange_b.f = spring.c*(spring.flange_b.s - spring.flange_a.s)",
            "spring.flange_b.f",
        ), // (e)
        ("fixed.flange.s = 0", "fixed.flange.s"),                 // (f)
        ("mass.flange_a.f = 0", "mass.flange_a.f"),               // (g)
        ("mass.flange_b.s = spring.flange_a.s", "spring.flange_a.s"), // (h) s3 := s2
        ("mass.flange_b.f + spring.flange_a.f = 0", "mass.flange_b.f"), // (i) f2 := -f3
        ("spring.flange_b.s = fixed.flange.s", "spring.flange_b.s"), // (j) s4 := s5
        ("spring.flange_b.f + fixed.flange.f = 0", "fixed.flange.f"), // (k) f5 := -f4
    ];
    assert_eq!(dae.equations.len(), 11);
    for (text, unknown) in seed {
        let k = dae
            .equations
            .iter()
            .position(|e| dae.equation_text(e) == text)
            .unwrap_or_else(|| panic!("no equation `{text}`"));
        assert_eq!(
            unknown_name(&dae, plan.unknowns[plan.matching[k]]),
            unknown,
            "equation `{text}` must solve for {unknown}"
        );
    }
    // Every block is an explicit assignment, and der(v) comes after the forces it needs.
    let order = assignments(&dae, &plan);
    assert_eq!(order.len(), 11);
    let at = |prefix: &str| order.iter().position(|a| a.starts_with(prefix)).expect("assigned");
    assert!(at("der(mass.v) :=") > at("mass.flange_a.f :="));
    assert!(at("der(mass.v) :=") > at("mass.flange_b.f :="));
    assert!(at("mass.flange_b.f :=") > at("spring.flange_a.f :="));
}

/// Alias elimination leaves only the three equations that are not connections or aliases.
#[test]
fn alias_elimination_keeps_the_seed_example_small() {
    let text = example("spring_mass.eqm");
    let mut session = Session::new();
    session.add_embedded_stdlib();
    session.add_file("spring_mass.eqm", text.as_str());
    let flat = session
        .flatten(None, &eqm::flatten::Options::default())
        .expect("flattens");
    let mut dae = eqm::dae::lower(flat);
    let (report, warnings) = eqm::alias::eliminate(&mut dae);
    assert!(warnings.is_empty());
    assert_eq!(report.removed_equations, 8);
    assert_eq!(dae.equations.len(), 3);
    let plan = eqm::plan::analyze(&mut dae).expect("solvable");
    assert_eq!(
        assignments(&dae, &plan),
        [
            "der(mass.flange_b.s) := mass.v",
            "mass.flange_b.f := -mass.flange_b.s*spring.c",
            "der(mass.v) := mass.flange_b.f/mass.m",
        ]
    );
}

/// Two springs in series around a massless node: one algebraic loop, torn at one variable,
/// recognised as linear.
#[test]
fn two_springs_in_series_give_one_loop_torn_at_one_variable() {
    let (_, plan) =
        check("two_springs_series.eqm", &example("two_springs_series.eqm"), true).unwrap_or_else(|e| panic!("{e}"));
    let loops: Vec<&Block> = plan.blocks.iter().filter(|b| matches!(b, Block::Loop { .. })).collect();
    assert_eq!(loops.len(), 1);
    let Block::Loop { tearing, residuals, .. } = loops[0] else {
        unreachable!()
    };
    assert_eq!(tearing.len(), 1);
    assert_eq!(residuals.len(), 1);
}

/// A cubic spring force `f = c*s^3` is solved for `s` without a loop (odd powers invert).
#[test]
fn an_invertible_cubic_spring_needs_no_newton_block() {
    let text = "model Cubic\n  Real s(start = 1), v, f;\n  parameter Real c = 2, m = 1;\nequation\n  \
                der(s) = v;\n  m*der(v) = -f;\n  f = c*s^3;\nend Cubic;\n";
    let (_, plan) = check("cubic.eqm", text, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.blocks.iter().all(|b| matches!(b, Block::Explicit { .. })));
    // Given the force, the elongation is implicit only through an even power: Newton.
    let text =
        "model Even\n  Real s, f;\n  parameter Real c = 2;\nequation\n  f = sin(time);\n  f = c*s^2;\nend Even;\n";
    let (_, plan) = check("even.eqm", text, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.blocks.iter().any(|b| matches!(b, Block::Implicit { .. })));
}

/// Singular systems name the equations and variables involved.
#[test]
fn structurally_singular_systems_are_reported_with_the_equations() {
    let text = "model Over\n  Real x, y, z;\nequation\n  x = 1 + time;\n  x = 2*time;\n  y + z = 1;\nend Over;\n";
    let err = check("over.eqm", text, true).expect_err("singular");
    assert!(
        err.contains("E0501") && err.contains("these 2 equations determine only 1 unknown(s): x"),
        "{err}"
    );
    let text = "model Constrained\n  Real x1, v1, x2, v2, f;\nequation\n  der(x1) = v1;\n  der(v1) = f;\n  \
                der(x2) = v2;\n  der(v2) = -f;\n  x1 + x2 = 1;\nend Constrained;\n";
    let err = check("constrained.eqm", text, true).expect_err("singular");
    assert!(err.contains("constrain states"), "{err}");
}

/// `eqm explain` for every example (or its diagnostics, for models that need index reduction).
#[test]
fn explain_snapshots_of_every_example() {
    insta::glob!("../examples", "*.eqm", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(path).expect("examples are readable");
        let mut session = Session::new();
        session.add_embedded_stdlib();
        session.add_file(name.as_str(), text);
        let out = session.explain(None, &eqm::flatten::Options::default(), false);
        let rendered = session.render_diagnostics(false);
        insta::assert_snapshot!(format!("{}{rendered}", out.unwrap_or_default()));
    });
}
