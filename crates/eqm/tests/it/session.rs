//! The session: models listed with their descriptions, check, the products of each stage,
//! diagnostics with codes and locations.

use eqm::{ModelOptions, Session};

fn session(text: &str) -> Session {
    Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None)
}

#[test]
fn models_are_listed_with_their_descriptions_also_inside_packages() {
    let s = session(
        "package Examples \"examples\"
           model A \"the first\" Real x = 1; end A;
           partial model P Real y; end P;
           block B Real z = 2; end B;
           function f input Real u; output Real v; algorithm v := u; end f;
         end Examples;
         model C Real w = 3; end C;",
    );
    let models: Vec<(String, &str, Option<String>)> = s
        .models()
        .into_iter()
        .map(|m| (m.name, m.kind, m.description))
        .collect();
    assert_eq!(
        models,
        [
            ("Examples.A".to_string(), "model", Some("the first".to_string())),
            ("Examples.B".to_string(), "block", None),
            ("C".to_string(), "model", None),
        ]
    );
}

#[test]
fn check_counts_the_flat_model_and_reports_errors_with_locations() {
    let mut s = session(crate::DECAY);
    let summary = s.check(None, &ModelOptions::default()).expect("no errors");
    assert_eq!(
        (summary.model.as_str(), summary.variables, summary.equations),
        ("Decay", 4, 2)
    );
    let mut s = session("model M\n  Real x;\nequation\n  der(x) = -y;\nend M;\n");
    assert!(s.check(None, &ModelOptions::default()).is_none());
    assert!(s.has_errors());
    assert_eq!(s.diagnostics()[0].code, "E0205");
    let rendered = s.render_diagnostics(false);
    assert!(rendered.contains("m.eqm:4:"), "{rendered}");
}

#[test]
fn check_rejects_what_would_stop_a_run_before_it_starts() {
    // Structurally fine, but singular for a = 2: x + y = 1 and 2x + 2y = 2 have no unique
    // solution. With a = 3 the model runs (x = 0, y = 1).
    let text = "model M
  parameter Real a = 2;
  Real x, y;
equation
  x + y = 1;
  a*x + 2*y = 2;
end M;
";
    let mut s = session(text);
    assert!(s.check(None, &ModelOptions::default()).is_none());
    assert_eq!(s.diagnostics()[0].code, "E0703");
    let help = s.diagnostics()[0].help.clone().unwrap_or_default();
    assert!(help.contains("not independent"), "{help}");
    let options = ModelOptions {
        parameters: vec![("a".to_string(), 3.0)],
        ..ModelOptions::default()
    };
    let mut s = session(text);
    assert!(s.check(None, &options).is_some(), "{}", s.render_diagnostics(false));
    // An assertion on parameters and a delay time that is not a parameter are reported by
    // check too.
    for (text, code) in [
        (
            "model M\n  parameter Real k = -1;\n  Real x(start = 1, fixed = true);\nequation\n  assert(k > 0, \"k must be positive\");\n  der(x) = -k*x;\nend M;\n",
            "E0705",
        ),
        (
            "model M\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -delay(x, 1 + x);\nend M;\n",
            "E0608",
        ),
    ] {
        let mut s = session(text);
        assert!(s.check(None, &ModelOptions::default()).is_none(), "{text}");
        assert!(
            s.diagnostics().iter().any(|d| d.code == code),
            "{text}: {:?}",
            s.diagnostics()
        );
    }
}

#[test]
fn every_stage_product_is_available() {
    let mut s = session(crate::DECAY);
    let options = ModelOptions::default();
    let flat = s.flatten(None, &options).expect("flat model");
    assert_eq!(flat.equations.len(), 2);
    let analysis = s.analyze(None, &options).expect("analysis");
    assert_eq!(analysis.dae.states().count(), 1);
    let explained = eqm::explain(&analysis);
    assert!(explained.contains("states (1):"), "{explained}");
    assert_eq!(s.explain(None, &options).as_deref(), Some(explained.as_str()));
    let model = s.compile(None, &options).expect("compiled");
    assert_eq!(model.name(), "Decay");
    assert_eq!(model.program().layout().states, 1);
    // Every state has a fixed start value and nothing else is given: the initialization is the
    // model's own program at the start values, with no program of its own.
    assert!(model.init_program().is_none());
    // Each stage was timed once under its name.
    let stages: Vec<&str> = s.timings().stages().iter().map(|t| t.stage).collect();
    for stage in ["parse", "flatten", "lower", "structural", "initialization", "codegen"] {
        assert!(stages.contains(&stage), "{stages:?}");
    }
}

#[test]
fn compile_time_parameters_may_be_structural() {
    let text = "model Chain
      parameter Integer n = 2;
      Real x[n](each start = 1, each fixed = true);
    equation
      for i in 1:n loop
        der(x[i]) = -i*x[i];
      end for;
    end Chain;";
    let mut s = session(text);
    let options = ModelOptions {
        parameters: vec![("n".to_string(), 5.0)],
        ..ModelOptions::default()
    };
    let model = s.compile(None, &options).expect("compiled");
    assert_eq!(model.program().layout().states, 5);
}

#[test]
fn check_of_a_package_checks_every_model_in_it() {
    let text = "package P
  model A
    Real x(start = 1, fixed = true);
  equation
    der(x) = -x;
  end A;
  partial model Base
    Real y;
  end Base;
  model B
    extends Base;
  equation
    y = undefined_name;
  end B;
  model C
    Real z = 2;
  end C;
end P;
";
    let mut session = Session::with_sources(&[("p.eqm".to_string(), text.to_string())], &[], None);
    let results = session.check_all(None, &ModelOptions::default());
    let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["P.A", "P.B", "P.C"]);
    assert!(results[0].1.is_ok() && results[2].1.is_ok());
    assert_eq!(results[1].1.as_ref().err(), Some(&1));
    assert_eq!(session.diagnostics().len(), 1, "each error found once");
}

#[test]
fn the_only_model_of_a_package_needs_no_model_name() {
    let text = "package Q\n  model M\n    Real x = 1;\n  end M;\nend Q;\n";
    let mut session = Session::with_sources(&[("q.eqm".to_string(), text.to_string())], &[], None);
    let summary = session.check(None, &ModelOptions::default()).expect("checks");
    assert_eq!(summary.model, "Q.M");
}

#[test]
fn result_columns_are_in_natural_order() {
    let model = crate::compile(
        "model Many
  Real x[11](each start = 1, each fixed = true);
  Real b = 2;
equation
  for i in 1:11 loop
    der(x[i]) = -i*x[i];
  end for;
end Many;
",
    );
    let names: Vec<String> = model.columns(None).unwrap().into_iter().map(|c| c.name).collect();
    let expected: Vec<String> = std::iter::once("b".to_string())
        .chain((1..=11).map(|i| format!("x[{i}]")))
        .collect();
    assert_eq!(names, expected);
}

#[test]
fn a_file_with_a_syntax_error_gives_no_model() {
    // The parser recovers to report every error, but what it recovered is not the model the
    // user wrote: nothing of it is flattened or run.
    let text = "model Q\n  Real x;\nequation\n  x = 1;\n  Real a = 2;\nend Q;\n";
    let mut session = Session::with_sources(&[("q.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.compile(None, &ModelOptions::default()).is_none());
    assert!(session.check(None, &ModelOptions::default()).is_none());
    assert_eq!(
        session.diagnostics().iter().map(|d| d.code).collect::<Vec<_>>(),
        ["E0110"]
    );
}

#[test]
fn check_of_a_model_with_nested_component_classes_checks_the_model_only() {
    // The nested classes are the model's parts: a spring alone is not a model to check.
    let text = crate::example("spring_mass.eqm");
    let mut session = Session::with_sources(&[("spring_mass.eqm".to_string(), text)], &[], None);
    let results = session.check_all(None, &ModelOptions::default());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "SpringMass");
    assert!(results[0].1.is_ok());
}
