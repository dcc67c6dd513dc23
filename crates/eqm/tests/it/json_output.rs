//! The JSON outputs of an analysis (`analyze --json`, the advice, an analysis sweep) read back
//! with a real JSON parser, also when the texts in them hold quotes, backslashes and line
//! breaks: every string must come back as it was.

use crate::compile;
use eqm::analyze::{self, AnalyzeOptions, SweptAnalysis};
use eqm::stability;
use serde_json::Value;

/// Text that needs every kind of escape JSON has: quotes, a backslash, a line break and a tab.
const AWKWARD: &str = "say \"hi\" \\ then\nnext\tline";

fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{json}"))
}

/// The advice for a decay, with the method names and the reason holding [`AWKWARD`] text, as a
/// user's tableau name and description could.
fn awkward_advice() -> stability::Advice {
    let eigenvalues = [stability::C64::new(-2.0, 0.0)];
    let mut advice = stability::advise(&eigenvalues, &stability::judged_methods(None)).expect("a decay has advice");
    advice.verdicts[0].method = format!("tableau {AWKWARD}");
    let recommended = advice.recommended.as_mut().expect("a method is recommended");
    recommended.method = format!("tableau {AWKWARD}");
    recommended.reason = AWKWARD.to_string();
    advice
}

#[test]
fn the_advice_with_quotes_backslashes_and_line_breaks_is_valid_json() {
    let advice = awkward_advice();
    let value = parse(&stability::advice_json(&advice));
    assert_eq!(value["methods"][0]["method"], format!("tableau {AWKWARD}"));
    assert_eq!(value["recommended"]["reason"], AWKWARD);
    assert_eq!(value["t_sim"].as_f64(), Some(advice.t_sim));
}

#[test]
fn an_analysis_with_awkward_texts_is_valid_json() {
    let unit = "m\\\"s\\\\\\n";
    let model =
        format!("model Decay\n  Real x(start = 1, unit = \"{unit}\");\nequation\n  der(x) = -2*x;\nend Decay;\n");
    let mut analysis = compile(&model)
        .analyze(&AnalyzeOptions::default())
        .expect("the analysis runs");
    analysis.notes.push(AWKWARD.to_string());
    let advice = awkward_advice();
    let value = parse(&analyze::json(&analysis, Some(&advice)));
    assert_eq!(value["model"], "Decay");
    assert_eq!(value["states"][0]["unit"], "m\"s\\\n");
    assert_eq!(value["notes"][0], AWKWARD);
    assert_eq!(value["advice"]["recommended"]["reason"], AWKWARD);
    assert_eq!(value["steady_state"]["x"][0].as_f64(), Some(0.0));
    assert_eq!(value["modes"][0]["re"].as_f64(), Some(-2.0));
}

#[test]
fn an_analysis_sweep_is_valid_json() {
    let model = "model Decay\n  parameter Real k = 1;\n  Real x(start = 1);\nequation\n  der(x) = -k*x;\nend Decay;\n";
    let analysis = compile(model)
        .analyze(&AnalyzeOptions::default())
        .expect("the analysis runs");
    let axis = eqm::SweepAxis {
        name: "k".to_string(),
        values: vec![1.0],
    };
    let runs = [SweptAnalysis {
        values: vec![1.0],
        outcome: Ok(analysis),
    }];
    let value = parse(&analyze::sweep_json(&[axis], &runs, &[AWKWARD.to_string()]));
    assert_eq!(value["parameters"][0], "k");
    assert_eq!(value["runs"][0]["analysis"]["model"], "Decay");
    assert_eq!(value["notes"][0], AWKWARD);
}
