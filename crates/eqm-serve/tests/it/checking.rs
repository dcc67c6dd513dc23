//! Checking: `/api/check` gives what `eqm check` finds (diagnostics with their lines and
//! columns, the summary), a class of a neighbouring file resolves, `/api/symbols`, and
//! `/api/compile` of a model with errors.

use crate::{DECAY, bench};
use axum::http::StatusCode;
use eqm::{ModelOptions, Session};
use serde_json::{Value, json};

/// `/api/check` of `path` with `text`: its answer.
async fn check(bench: &crate::Bench, path: &str, text: Option<&str>) -> Value {
    bench.post("/api/check", json!({ "path": path, "text": text })).await
}

const UNKNOWN_Y: &str = "model M\n  Real x;\nequation\n  der(x) = -y;\nend M;\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_model_with_an_error_gives_its_diagnostic_at_its_line_and_column() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let answer = check(&bench, "m.eqm", Some(UNKNOWN_Y)).await;
    assert_eq!(answer["ok"], false);
    let diagnostics = answer["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), 1, "{answer}");
    let d = &diagnostics[0];
    assert_eq!(d["code"], "E0205");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], "m.eqm");
    // `y` is the 13th character of line 4, `  der(x) = -y;`.
    assert_eq!((d["line"].clone(), d["col"].clone()), (json!(4), json!(13)));
    assert_eq!((d["end_line"].clone(), d["end_col"].clone()), (json!(4), json!(14)));
    let rendered = d["rendered"].as_str().expect("rendered");
    assert!(rendered.contains("m.eqm:4:13"), "{rendered}");
    assert!(!rendered.contains('\u{1b}'), "no colour: {rendered}");
    // The same rendering as the library's, which `eqm check` prints.
    let mut session = Session::with_sources(&[("m.eqm".into(), UNKNOWN_Y.into())], &[], None);
    assert!(session.check(None, &ModelOptions::default()).is_none());
    assert_eq!(session.render_diagnostics(false), rendered);

    // Columns count characters, not bytes.
    let wide = "model M \"Zerfall – äöü\"\n  Real x;\nequation\n  der(x) = -ÿ;\nend M;\n";
    let answer = check(&bench, "m.eqm", Some(wide)).await;
    let d = &answer["diagnostics"][0];
    assert_eq!((d["line"].clone(), d["col"].clone()), (json!(4), json!(13)), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_good_model_checks_with_the_summary_of_eqm_check() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let answer = check(&bench, "decay.eqm", None).await;
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["diagnostics"], json!([]));
    let mut session = Session::with_sources(&[("decay.eqm".into(), DECAY.into())], &[], None);
    let expected = eqm::check_lines(&session.check_classes(None, &ModelOptions::default())).join("\n");
    assert_eq!(answer["summary"], expected);
    assert!(expected.starts_with("Decay: "), "{expected}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_class_of_a_neighbouring_file_resolves() {
    let library = "model Leak\n  parameter Real k = 3;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\nend Leak;\n";
    let broken = "model Leak2\n  Real x\nend Leak2;\n";
    let user = "model Tank\n  Leak leak;\nend Tank;\n";
    let bench = bench(&[("lib/leak.eqm", library), ("broken.eqm", broken), ("tank.eqm", user)]);
    let answer = check(&bench, "tank.eqm", None).await;
    assert_eq!(answer["ok"], true, "{answer}");
    // The same model without the neighbour does not check.
    let alone = bench_without_library(user).await;
    assert_eq!(alone["ok"], false);
    assert_eq!(alone["diagnostics"][0]["file"], "tank.eqm");
}

async fn bench_without_library(user: &str) -> Value {
    let bench = bench(&[("tank.eqm", user)]);
    check(&bench, "tank.eqm", None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn symbols_are_the_classes_and_the_variables() {
    let bench = bench(&[
        ("decay.eqm", DECAY),
        ("other.eqm", "package Other\n  model Inner\n  end Inner;\nend Other;\n"),
    ]);
    let answer = bench.post("/api/symbols", json!({ "path": "decay.eqm" })).await;
    let classes: Vec<&str> = answer["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(classes[0], "Decay");
    assert!(classes.contains(&"Other.Inner"));
    let (library, _) = eqm::library_doc::library_classes(&[]);
    let some = library
        .iter()
        .find(|c| c.kind == "model")
        .expect("the library has models");
    assert!(classes.contains(&some.full_name.as_str()), "{}", some.full_name);
    assert_eq!(answer["variables"], json!(["k", "x"]));
    // A model with errors has no variables, but its classes.
    let answer = bench
        .post("/api/symbols", json!({ "path": "m.eqm", "text": UNKNOWN_Y }))
        .await;
    assert_eq!(answer["variables"], json!([]));
    assert_eq!(answer["classes"][0], "M");
}

#[tokio::test(flavor = "multi_thread")]
async fn compiling_a_model_with_errors_is_422_with_its_diagnostics() {
    let bench = bench(&[]);
    let reply = bench
        .call(
            "POST",
            "/api/compile",
            Some(json!({ "path": "m.eqm", "text": UNKNOWN_Y })),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let answer = reply.json();
    assert_eq!(answer["diagnostics"][0]["code"], "E0205");
    assert_eq!(answer["diagnostics"][0]["line"], 4);
    assert!(answer["error"].as_str().is_some());
    let status = bench.call("GET", "/api/status", None).await.json();
    assert_eq!(status["compiles"], 0);
    // Bad requests.
    let missing = bench
        .call("POST", "/api/check", Some(json!({ "text": "model M end M;" })))
        .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    let extension = bench
        .call("POST", "/api/check", Some(json!({ "path": "m.txt", "text": "" })))
        .await;
    assert_eq!(extension.status, StatusCode::BAD_REQUEST);
    let absent = bench
        .call("POST", "/api/compile", Some(json!({ "path": "absent.eqm" })))
        .await;
    assert_eq!(absent.status, StatusCode::NOT_FOUND);
}
