//! Structural analysis tests: the spring-mass example's assignment list, algebraic loops and tearing, the
//! singular-system diagnostics, and snapshots of `eqm explain` for every example.

use crate::ui_harness;

use crate::pipeline::Pipeline;
use eqm_compile::analysis::Analysis;
use eqm_compile::dae::Dae;
use eqm_compile::plan::{Block, Plan, unknown_name};
use eqm_flatten::Sources;

/// The one place these tests call the pipeline: the whole structural analysis of `text` with
/// the stdlib (alias elimination unless `keep_aliases`, index reduction, the plan and the
/// initialization problem), or the rendered diagnostics.
fn check(name: &str, text: &str, eliminate_aliases: bool) -> Result<Analysis, String> {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    session
        .analyze(None, &eqm_flatten::Options::default(), !eliminate_aliases)
        .ok_or_else(|| session.render_diagnostics(false))
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", crate::REPO)).expect("example exists")
}

/// The assignments of a plan as `unknown := value` texts in evaluation order.
fn assignments(dae: &Dae<eqm_compile::events::Hybrid>, plan: &Plan) -> Vec<String> {
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

/// The spring-mass example with every equation kept: each of its eleven equations (a)-(k) solves
/// for the variable the hand procedure gives it.
#[test]
fn each_equation_of_the_spring_mass_example_solves_for_its_variable() {
    let a = check("spring_mass.eqm", &example("spring_mass.eqm"), false).unwrap_or_else(|e| panic!("{e}"));
    let (dae, plan) = (&a.dae, &a.plan);
    // (equation as printed, the unknown it is solved for)
    let expected = [
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
    for (text, unknown) in expected {
        let k = dae
            .equations
            .iter()
            .position(|e| dae.equation_text(e) == text)
            .unwrap_or_else(|| panic!("no equation `{text}`"));
        assert_eq!(
            unknown_name(dae, plan.unknowns[plan.matching[k]]),
            unknown,
            "equation `{text}` must solve for {unknown}"
        );
    }
    // Every block is an explicit assignment, and der(v) comes after the forces it needs.
    let order = assignments(dae, plan);
    assert_eq!(order.len(), 11);
    let at = |prefix: &str| order.iter().position(|a| a.starts_with(prefix)).expect("assigned");
    assert!(at("der(mass.v) :=") > at("mass.flange_a.f :="));
    assert!(at("der(mass.v) :=") > at("mass.flange_b.f :="));
    assert!(at("mass.flange_b.f :=") > at("spring.flange_a.f :="));
}

/// Alias elimination leaves only the three equations that are not connections or aliases.
#[test]
fn alias_elimination_keeps_the_spring_mass_example_small() {
    let text = example("spring_mass.eqm");
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("spring_mass.eqm", text.as_str());
    let flat = session
        .flatten(None, &eqm_flatten::Options::default())
        .expect("flattens");
    let (dae, report, warnings) = eqm_compile::alias::eliminate(eqm_compile::dae::lower(flat));
    assert!(warnings.is_empty());
    assert_eq!(report.removed_equations, 8);
    assert_eq!(dae.equations.len(), 3);
    let (dae, _) = eqm_compile::index::reduce(dae).expect("no index reduction needed");
    let mut dae = eqm_compile::events::extract(dae);
    let plan = eqm_compile::plan::analyze(&mut dae).expect("solvable");
    assert_eq!(
        assignments(&dae, &plan),
        [
            "der(mass.flange_b.s) := mass.v",
            "mass.flange_b.f := -mass.flange_b.s*spring.c",
            "der(mass.v) := mass.flange_b.f/mass.m",
        ]
    );
}

/// Two unknowns equated with one expression are aliases: `w = a - b` becomes `w = v` next to
/// `v = a - b`, and `w` is removed with the connection aliases.
#[test]
fn two_unknowns_equated_with_one_expression_are_aliases() {
    let text = "model SameValue
  Real a(start = 1, fixed = true);
  Real b;
  Real v;
  Real w;
equation
  der(a) = -v - w;
  b = 2*time;
  v = a - b;
  w = a - b;
end SameValue;
";
    let mut session = Sources::new();
    session.add_file("same_value.eqm", text);
    let flat = session
        .flatten(None, &eqm_flatten::Options::default())
        .expect("flattens");
    let (dae, report, _) = eqm_compile::alias::eliminate(eqm_compile::dae::lower(flat));
    let aliases: Vec<(String, String)> = (report.aliases.iter())
        .map(|(v, root, _, _)| (dae.flat.var(*v).name.clone(), dae.flat.var(*root).name.clone()))
        .collect();
    assert_eq!(aliases, [("w".to_string(), "v".to_string())]);
    assert_eq!(dae.equations.len(), 3);
}

/// Two springs in series around a massless node: one algebraic loop, torn at one variable,
/// recognised as linear.
#[test]
fn two_springs_in_series_give_one_loop_torn_at_one_variable() {
    let Analysis { plan, .. } =
        check("two_springs_series.eqm", &example("two_springs_series.eqm"), true).unwrap_or_else(|e| panic!("{e}"));
    let loops: Vec<&Block> = plan.blocks.iter().filter(|b| matches!(b, Block::Loop(_))).collect();
    assert_eq!(loops.len(), 1);
    let Block::Loop(eqm_compile::plan::TornLoop { tearing, residuals, .. }) = loops[0] else {
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
    let Analysis { plan, .. } = check("cubic.eqm", text, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.blocks.iter().all(|b| matches!(b, Block::Explicit { .. })));
    // Given the force, the elongation is implicit only through an even power: Newton.
    let text =
        "model Even\n  Real s, f;\n  parameter Real c = 2;\nequation\n  f = sin(time);\n  f = c*s^2;\nend Even;\n";
    let Analysis { plan, .. } = check("even.eqm", text, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.blocks.iter().any(|b| matches!(b, Block::Implicit { .. })));
}

/// Singular systems name the equations and variables involved.
#[test]
fn structurally_singular_systems_are_reported_with_the_equations() {
    let text = "model Over\n  Real x, y, z;\nequation\n  x = 1 + time;\n  x = 2*time;\n  y + z = 1;\nend Over;\n";
    let err = failure("over.eqm", text);
    assert!(
        err.contains("E0501") && err.contains("these 2 equations determine only 1 unknown(s): x"),
        "{err}"
    );
    // Two states constrained together twice over: no number of differentiations helps.
    let text =
        "model Constrained\n  Real x, y, z;\nequation\n  der(x) = 1;\n  der(y) = 2;\n  x + y = 1;\nend Constrained;\n";
    let err = failure("constrained.eqm", text);
    assert!(
        err.contains("E0501") && err.contains("1 unknown(s) are not determined by any equation: z"),
        "{err}"
    );
}

/// A component checked as a model (its pins connected to nothing outside) is singular, and the
/// diagnostic names its own connectors and says it is a component; a model whose singular
/// variables belong to its components' connectors gets no such note.
#[test]
fn a_singular_component_is_told_to_be_one() {
    let pin = "connector Pin\n  Real v;\n  flow Real i;\nend Pin;\n";
    let resistor = "model Resistor\n  parameter Real R = 1;\n  Pin p, n;\nequation\n  p.v - n.v = R*p.i;\n  p.i + n.i = 0;\nend Resistor;\n";
    let err = failure("resistor.eqm", &format!("{pin}{resistor}"));
    assert!(err.contains("E0501"), "{err}");
    assert!(err.contains("`p`, `n` are connectors of the model itself"), "{err}");
    // A resistor whose pins nothing connects, inside a model: its pins' flows are zero, and
    // the singularity is the model's own, not that of a component checked alone.
    let open = format!("{pin}{resistor}model Open\n  Resistor r;\n  Real x = 1;\nend Open;\n");
    let mut sources = Sources::new();
    sources.add_embedded_stdlib();
    sources.add_file("open.eqm", &open);
    assert!(
        sources
            .analyze(Some("Open"), &eqm_flatten::Options::default(), false)
            .is_none()
    );
    let err = sources.render_diagnostics(false);
    assert!(err.contains("E0501") && !err.contains("of the model itself"), "{err}");
}

/// A structurally singular model whose unmatched rows include an algorithm section's (one row
/// per output, numbered after the equations) names the section once, at its span.
#[test]
fn a_singular_system_with_an_algorithm_section_names_the_section_once() {
    let text = "model Counter\n  Real phi;\n  Real next(start = 1, fixed = true);\n  Integer count(start = 0, fixed = true);\nequation\n  0 = 0;\nalgorithm\n  when phi >= pre(next) then\n    next := phi + 1;\n    count := pre(count) + 1;\n  end when;\nend Counter;\n";
    let err = failure("counter.eqm", text);
    assert!(err.contains("E0501") && err.contains("phi"), "{err}");
    assert_eq!(err.matches("an algorithm section").count(), 1, "{err}");
}

/// The names of the states of the analysed (index-reduced) DAE.
fn state_names(a: &Analysis) -> Vec<String> {
    a.dae.states().map(|v| a.dae.flat.var(v).name.clone()).collect()
}

/// Two rigidly connected masses. The position constraint is
/// differentiated (twice, since the connection force appears only then) and one position and one
/// velocity remain states: the ones with fixed start values.
#[test]
fn two_rigidly_coupled_masses_keep_one_position_and_one_velocity() {
    let a = check("rigid_masses.eqm", &example("rigid_masses.eqm"), true).unwrap_or_else(|e| panic!("{e}"));
    let r = a.index.as_ref().expect("index reduction happened");
    assert_eq!(state_names(&a), ["mass1.s", "mass1.v"]);
    assert_eq!(r.index, 3);
    let demoted: Vec<&str> = r.demoted.iter().map(|v| a.dae.flat.var(*v).name.as_str()).collect();
    assert_eq!(demoted, ["mass2.s", "mass2.v"]);
    // The constraint between the masses' positions is among the equations differentiated twice.
    let twice: Vec<String> = r
        .differentiated
        .iter()
        .filter(|(_, n)| *n == 2)
        .map(|(e, _)| a.dae.equation_text(&a.dae.equations[*e]))
        .collect();
    assert!(twice.iter().any(|t| t.contains("mass2.s")), "{twice:?}");
    // The reduced system has one linear loop (the accelerations and the connection force).
    assert!(a.plan.blocks.iter().any(|b| matches!(b, Block::Loop(l) if l.linear)));
}

/// The Cartesian pendulum: index 3, the constraint differentiated twice; x and vx (fixed start
/// values) stay states; the embedding form keeps all four and the position and velocity
/// constraints as invariants with their Jacobian.
#[test]
fn cartesian_pendulum_is_index_three() {
    let a = check("pendulum.eqm", &example("pendulum.eqm"), true).unwrap_or_else(|e| panic!("{e}"));
    let r = a.index.as_ref().expect("index reduction happened");
    assert_eq!(r.index, 3);
    let constraint = a
        .dae
        .equations
        .iter()
        .position(|e| a.dae.equation_text(e) == "x^2 + y^2 = L^2")
        .expect("constraint");
    assert!(r.differentiated.contains(&(constraint, 2)), "{:?}", r.differentiated);
    assert_eq!(state_names(&a), ["x", "vx"]);
    let dummies = r.dummy_names();
    assert!(
        dummies.contains(&"der(y)") && dummies.contains(&"der(vy)"),
        "{dummies:?}"
    );
    let emb = a.embedding.as_ref().expect("embedding form");
    let states: Vec<String> = emb.dae.states().map(|v| emb.dae.flat.var(v).name.clone()).collect();
    for s in ["x", "y", "vx", "vy"] {
        assert!(states.iter().any(|t| t == s), "{states:?}");
    }
    assert_eq!(emb.invariants.len(), 4);
    let g = emb
        .invariants
        .iter()
        .find(|i| i.equation == constraint)
        .expect("the position constraint is an invariant");
    let row: Vec<(String, String)> = g
        .jacobian
        .iter()
        .map(|(v, d)| (emb.dae.flat.var(*v).name.clone(), emb.dae.flat.expr_text(*d)))
        .collect();
    assert_eq!(
        row,
        [
            ("x".to_string(), "2.0*x".to_string()),
            ("y".to_string(), "2.0*y".to_string())
        ]
    );
    // Initialization: the fixed x and vx, and the constraint determines y.
    let fixed: Vec<&str> = a.init.fixed.iter().map(|v| a.dae.flat.var(*v).name.as_str()).collect();
    assert_eq!(fixed, ["x", "vx"]);
    assert!(a.init.assumed.is_empty());
}

/// `stateSelect` decides over fixed start values; a fixed start value of a variable that is not
/// a state is simply an initial equation.
#[test]
fn state_select_prefer_is_honoured() {
    let text = example("pendulum.eqm")
        .replace(
            "Real y(unit = \"m\",",
            "Real y(stateSelect = StateSelect.prefer, unit = \"m\",",
        )
        .replace("Real vy(unit", "Real vy(stateSelect = StateSelect.prefer, unit");
    let a = check("pendulum_prefer.eqm", &text, true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state_names(&a), ["y", "vy"]);
    assert!(a.init.assumed.is_empty());
    // Without fixed start values the states' start values are assumed (warning W0502).
    let text = text
        .replace("start = 0.5, fixed = true", "start = 0.5")
        .replace("start = 0, fixed = true", "start = 0");
    let a = check("pendulum_prefer.eqm", &text, true).unwrap_or_else(|e| panic!("{e}"));
    let assumed: Vec<&str> = a
        .init
        .assumed
        .iter()
        .map(|v| a.dae.flat.var(*v).name.as_str())
        .collect();
    assert_eq!(assumed, ["y", "vy"]);
}

/// A preferred variable stays a state even where the matching gives its rival a block of its
/// own: in a housing held by a spring-damper on relative coordinates (`phi_rel = hphi - phi0`),
/// the housing's speed `hw` solves `der(hphi)`, so block by block only `der(phi_rel)` could
/// become the dummy; taken together, the constraint drops `der(hphi)` and keeps `phi_rel`. With
/// equal priorities the choice stays the absolute angle's.
#[test]
fn a_preferred_relative_angle_stays_a_state_over_the_absolute_one() {
    let model = |select: &str| {
        format!(
            "model Housing
  Real phi(start = 0, fixed = true);
  Real w(start = 0, fixed = true);
  Real hphi;
  Real hw;
  Real phi_rel({select}start = 0, fixed = true);
  Real w_rel;
  Real tau;
  parameter Real phi0 = 0;
equation
  der(phi) = w;
  der(w) = 1 - tau;
  phi_rel = hphi - phi0;
  w_rel = der(phi_rel);
  hw = der(hphi);
  der(hw) = tau - 100*phi_rel - w_rel;
  tau = 10*(phi - hphi);
end Housing;"
        )
    };
    let a = check("housing.eqm", &model("stateSelect = StateSelect.prefer, "), true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state_names(&a), ["phi", "w", "hw", "phi_rel"]);
    let a = check("housing.eqm", &model("stateSelect = StateSelect.avoid, "), true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state_names(&a), ["phi", "w", "hphi", "hw"]);
}

/// The error text of a model that must fail the analysis.
fn failure(name: &str, text: &str) -> String {
    match check(name, text, true) {
        Ok(_) => panic!("{name} must fail the structural analysis"),
        Err(e) => e,
    }
}

/// Both positions of the pendulum fixed: with the rod constraint, three equations for two
/// unknowns. Index reduction keeps one position a state and makes the other a dummy state,
/// whose fixed start value is dropped (W0505) and checked after the initialization.
#[test]
fn both_fixed_positions_of_the_pendulum_drop_the_dummy_states_start_value() {
    let text = example("pendulum.eqm").replace("start = -0.866)", "start = -0.866, fixed = true)");
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("pendulum_fixed.eqm", &text);
    let a = session
        .analyze(None, &eqm_flatten::Options::default(), false)
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let warnings = session.render_diagnostics(false);
    let states = state_names(&a);
    let fixed: Vec<&str> = a.init.fixed.iter().map(|v| a.dae.flat.var(*v).name.as_str()).collect();
    // The position kept a state keeps its fixed start value; the other one is dropped.
    let (kept, other, dropped) = if states.contains(&"x".to_string()) {
        ("x", "y", "y = -0.866")
    } else {
        ("y", "x", "x = 0.5")
    };
    assert!(fixed.contains(&kept) && !fixed.contains(&other), "{fixed:?}");
    assert!(warnings.contains("W0505") && warnings.contains(dropped), "{warnings}");
    let Some(init) = a.init.dae() else {
        panic!("the initial system is its own");
    };
    assert!(
        init.flat
            .assertions
            .iter()
            .any(|c| c.initial && c.message.written().contains(dropped)),
        "no check of {dropped}"
    );
}

/// A differentiated state without an equation is not silently given a value: an initial
/// equation fixes it, and one too many is reported with the conflicting fixed value.
#[test]
fn initial_equations_and_conflicting_fixed_values() {
    let text = "model Init\n  Real x(start = 1, fixed = true);\n  Real y;\ninitial equation\n  der(x) = 0;\nequation\n  \
                der(x) = -x + y;\n  y = 2;\nend Init;\n";
    let err = failure("init.eqm", text);
    assert!(err.contains("E0504") && err.contains("x = 1"), "{err}");
    let text = text.replace("(start = 1, fixed = true)", "(start = 1)");
    let a = check("init.eqm", &text, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(a.init.assumed.is_empty() && a.init.fixed.is_empty());
    // The initial equation der(x) = 0 determines x = y = 2.
    let (init_dae, init_plan) = (
        a.init
            .dae()
            .expect("an initial equation gives the initialization a system of its own"),
        a.init.plan().expect("and a plan"),
    );
    assert!(
        init_plan
            .blocks
            .iter()
            .any(|b| matches!(b, Block::Explicit { unknown, .. }
            if unknown_name(init_dae, init_plan.unknowns[*unknown]) == "x")),
        "x is computed from the initial equation"
    );
}

/// Structural diagnostics found after flattening (singular systems, index reduction that cannot
/// differentiate, initialization) are annotated in `tests/ui_structural/*.eqm`.
#[test]
fn structural_diagnostics_match_the_annotations() {
    insta::glob!("ui_structural/*.eqm", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(path).expect("UI files are readable");
        assert!(
            !ui_harness::parse_annotations(&text).is_empty(),
            "{name}: annotate a diagnostic"
        );
        let mut session = Sources::new();
        session.add_embedded_stdlib();
        session.add_file(name.as_str(), text.as_str());
        let analysis = session.analyze(None, &eqm_flatten::Options::default(), false);
        let diagnostics = std::mem::take(&mut session.diagnostics);
        let has_error = diagnostics.iter().any(|d| d.severity == eqm_diag::Severity::Error);
        assert_eq!(
            analysis.is_none(),
            has_error,
            "{name}: analysis fails exactly on errors"
        );
        ui_harness::check_annotations(&name, &text, diagnostics.clone(), &session.map);
        insta::assert_snapshot!(ui_harness::render_snapshot(&text, &diagnostics, &session.map));
    });
}

/// `eqm explain` for every example.
#[test]
fn explain_snapshots_of_every_example() {
    insta::glob!("../../../../examples", "*.eqm", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(path).expect("examples are readable");
        let mut session = Sources::new();
        session.add_embedded_stdlib();
        session.add_file(name.as_str(), text);
        let out = session.explain(None, &eqm_flatten::Options::default(), false);
        let rendered = session.render_diagnostics(false);
        insta::assert_snapshot!(format!("{}{rendered}", out.unwrap_or_default()));
    });
}

/// Start values that read each other in a cycle are an error naming every member. The
/// flattener rejects a cycle written in the source first (`E0216`), so this one is made in the
/// flat model: `b`'s start value is rewritten to read `a`, whose start value reads `b`.
#[test]
fn a_cycle_of_start_values_that_reaches_the_analysis_is_an_error_naming_its_members() {
    let text = "model M
      Real a(start = b + 1, fixed = true);
      Real b(start = 2, fixed = true);
      Real c(start = 3*a, fixed = true);
    equation
      der(a) = -a;
      der(b) = -b;
      der(c) = -c;
    end M;";
    let mut session = Sources::new();
    session.add_file("m.eqm", text);
    let mut flat = session
        .flatten(None, &eqm_flatten::Options::default())
        .expect("flattens");
    let var = |name: &str| eqm_ir::expr::VarId(flat.variables.iter().position(|v| v.name == name).unwrap() as u32);
    let (a, b) = (var("a"), var("b"));
    let two = flat.exprs.real(2.0);
    let a_node = flat.exprs.var(a);
    let twice_a = flat.exprs.binary(eqm_ir::expr::BinOp::Mul, two, a_node);
    flat.variables[b.0 as usize].attributes.start = Some(twice_a);
    let mut dae = eqm_compile::dae::lower(flat);
    let errors = eqm_compile::starts::resolve(&mut dae).expect_err("a cycle");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, "E0601");
    // `c` only reads the cycle: it is named too, as its start value cannot be computed.
    assert!(errors[0].message.contains("`a`, `b`, `c`"), "{}", errors[0].message);
}
