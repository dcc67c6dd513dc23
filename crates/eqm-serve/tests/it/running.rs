//! Running: the compile cache (a parameter change runs without compiling), runs against the
//! closed form x(t) = exp(-k t), isolation between runs, two runs at once, cancel, the time
//! and row limits, CSV, a failing run, the least recently used model dropped.

use crate::{Bench, DECAY, bench, bench_with, temporary_dir};
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The final value of column `name` of a run's answer, and the time of the last row.
fn last(answer: &Value, name: &str) -> (f64, f64) {
    let columns = answer["columns"].as_array().expect("columns");
    let k = columns.iter().position(|c| c == name).expect("the column");
    let value = |k: usize| {
        answer["values"][k]
            .as_array()
            .and_then(|v| v.last())
            .and_then(Value::as_f64)
            .expect("a value")
    };
    (value(0), value(k))
}

/// Runs model `id` with `request`'s fields and checks x at the end against exp(-k t).
async fn check(bench: &Bench, id: &str, request: Value, k: f64) -> Value {
    let mut body = request;
    body["model_id"] = json!(id);
    let answer = bench.post("/api/run", body).await;
    let (t, x) = last(&answer, "x");
    let exact = (-k * t).exp();
    // The default tolerances (relative and absolute 1e-6 a step) keep the error of this
    // smooth decay from x(0) = 1 near 1e-7; another k would be off by far more.
    assert!(
        (x - exact).abs() <= 1e-6 + 1e-5 * exact,
        "x({t}) = {x}, exp(-{k} t) = {exact}"
    );
    answer
}

async fn compile(bench: &Bench, path: &str, text: Option<&str>) -> Value {
    bench.post("/api/compile", json!({ "path": path, "text": text })).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parameter_change_runs_without_compiling_again() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let compiled = compile(&bench, "decay.eqm", None).await;
    assert_eq!(compiled["cached"], false);
    assert_eq!(compiled["compiles"], 1);
    assert_eq!(compiled["name"], "Decay");
    assert_eq!(
        compiled["parameters"],
        json!([{ "name": "k", "value": 0.5, "unit": "1/s", "description": "Decay rate", "slider_min": 0.0, "slider_max": 1.0 }])
    );
    assert_eq!(compiled["variables"], json!([{ "name": "x", "kind": "state" }]));
    assert_eq!(
        compiled["experiment"],
        json!({ "start": 0.0, "stop": 2.0, "interval": 0.01 })
    );
    assert_eq!(compiled["plotted"], json!(["x"]));
    let id = compiled["model_id"].as_str().expect("an id").to_string();

    let first = check(&bench, &id, json!({}), 0.5).await;
    assert_eq!(first["rows"], 201);
    assert_eq!(first["truncated"], false);
    assert_eq!(first["values"][0][0], 0.0);
    assert_eq!(last(&first, "x").0, 2.0);
    let changed = check(
        &bench,
        &id,
        json!({ "parameters": { "k": 2.0 }, "run_id": "slider" }),
        2.0,
    )
    .await;
    assert_eq!(changed["run_id"], "slider");
    assert_eq!(changed["compiles"], 1);
    assert_eq!(changed["runs"], 2);
    // The next run starts from the model's own value again.
    check(&bench, &id, json!({}), 0.5).await;
    // A start value and settings.
    let started = bench
        .post(
            "/api/run",
            json!({ "model_id": id, "starts": { "x": 3.0 }, "settings": { "stop": 1.0, "interval": 0.25, "method": "rk4", "step": 0.001 }, "variables": ["x"] }),
        )
        .await;
    assert_eq!(started["columns"], json!(["time", "x"]));
    assert_eq!(started["values"][0], json!([0.0, 0.25, 0.5, 0.75, 1.0]));
    let x1 = last(&started, "x").1;
    assert!((x1 - 3.0 * (-0.5f64).exp()).abs() < 1e-9, "{x1}");

    // Declared bounds are given and narrow the slider.
    let bounded = DECAY.replace("k(unit = \"1/s\")", "k(unit = \"1/s\", min = 0.1, max = 0.8)");
    let compiled = compile(&bench, "bounded.eqm", Some(&bounded)).await;
    assert_eq!(
        compiled["parameters"][0],
        json!({ "name": "k", "value": 0.5, "unit": "1/s", "description": "Decay rate", "min": 0.1, "max": 0.8, "slider_min": 0.1, "slider_max": 0.8 })
    );

    // The same text compiles to the cached model.
    let again = compile(&bench, "decay.eqm", Some(DECAY)).await;
    assert_eq!(again["cached"], true);
    assert_eq!(again["model_id"], id.as_str());
    assert_eq!(again["compiles"], 2);
    let status = bench.call("GET", "/api/status", None).await.json();
    assert_eq!(
        (status["compiles"].clone(), status["runs"].clone()),
        (json!(2), json!(4))
    );
    assert_eq!(status["models_cached"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_runs_of_one_model_at_once_each_get_their_parameters() {
    let bench = Arc::new(bench(&[("decay.eqm", DECAY)]));
    let id = compile(&bench, "decay.eqm", None).await["model_id"]
        .as_str()
        .expect("id")
        .to_string();
    let runs: Vec<_> = [0.3, 1.7, 0.9, 2.5]
        .into_iter()
        .map(|k| {
            let (bench, id) = (bench.clone(), id.clone());
            tokio::spawn(async move { check(&bench, &id, json!({ "parameters": { "k": k } }), k).await })
        })
        .collect();
    for run in runs {
        run.await.expect("the run's task");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_csv_is_the_librarys() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let id = compile(&bench, "decay.eqm", None).await["model_id"].clone();
    let reply = bench
        .call(
            "POST",
            "/api/run",
            Some(json!({ "model_id": id, "format": "csv", "settings": { "stop": 1.0, "interval": 0.5 } })),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.header("content-type").starts_with("text/csv"));
    assert_eq!(
        reply.header("content-disposition"),
        "attachment; filename=\"Decay.csv\""
    );
    let text = reply.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "time,x");
    let row: Vec<f64> = lines[3].split(',').map(|v| v.parse().expect("a number")).collect();
    assert_eq!(row[0], 1.0);
    assert!((row[1] - (-0.5f64).exp()).abs() < 1e-5, "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_run_requests() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let id = compile(&bench, "decay.eqm", None).await["model_id"].clone();
    let unknown = bench
        .call("POST", "/api/run", Some(json!({ "model_id": "m999" })))
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert!(
        unknown.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("compile again"))
    );
    let missing = bench.call("POST", "/api/run", Some(json!({ "parameters": {} }))).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    let wrong_type = bench
        .call(
            "POST",
            "/api/run",
            Some(json!({ "model_id": id, "parameters": { "k": "two" } })),
        )
        .await;
    assert_eq!(wrong_type.status, StatusCode::BAD_REQUEST);
    let method = bench
        .call(
            "POST",
            "/api/run",
            Some(json!({ "model_id": id, "settings": { "method": "magic" } })),
        )
        .await;
    assert_eq!(method.status, StatusCode::BAD_REQUEST);
    let format = bench
        .call("POST", "/api/run", Some(json!({ "model_id": id, "format": "xml" })))
        .await;
    assert_eq!(format.status, StatusCode::BAD_REQUEST);
    let stop = bench
        .call(
            "POST",
            "/api/run",
            Some(json!({ "model_id": id, "settings": { "stop": -1.0 } })),
        )
        .await;
    assert_eq!(stop.status, StatusCode::BAD_REQUEST, "{}", stop.text());
    // A parameter the model does not have: the model's error, with the diagnostic.
    let parameter = bench
        .call(
            "POST",
            "/api/run",
            Some(json!({ "model_id": id, "parameters": { "kk": 1.0 } })),
        )
        .await;
    assert_eq!(parameter.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(parameter.json()["diagnostics"][0]["code"].as_str().is_some());
    let variable = bench
        .call("POST", "/api/run", Some(json!({ "model_id": id, "variables": ["y"] })))
        .await;
    assert_eq!(variable.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(variable.json()["diagnostics"][0]["code"], "E0708");
    // None of this changed the model: a plain run is still right.
    check(&bench, id.as_str().expect("id"), json!({}), 0.5).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_run_answers_422_with_its_rows_and_the_server_goes_on() {
    let failing = "model Failing\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -0.5*x;\n  assert(x > 0.5, \"x fell below one half\");\n  annotation(experiment(StopTime = 3, Interval = 0.01));\nend Failing;\n";
    let bench = bench(&[("failing.eqm", failing), ("decay.eqm", DECAY)]);
    let id = compile(&bench, "failing.eqm", None).await["model_id"].clone();
    let reply = bench.call("POST", "/api/run", Some(json!({ "model_id": id }))).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.text());
    let answer = reply.json();
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("x fell below one half")),
        "{answer}"
    );
    assert!(!answer["diagnostics"].as_array().expect("diagnostics").is_empty());
    // x = exp(-t/2) reaches 1/2 at t = 2 ln 2 = 1.386: the rows before are there.
    let (t, x) = last(&answer, "x");
    assert!(t < 2.0 * 2f64.ln() + 1e-9 && t > 1.3, "{t}");
    assert!(x >= 0.5 - 1e-6, "{x}");
    let status = bench.call("GET", "/api/status", None).await;
    assert_eq!(status.status, StatusCode::OK);
    let decay = compile(&bench, "decay.eqm", None).await["model_id"]
        .as_str()
        .expect("id")
        .to_string();
    check(&bench, &decay, json!({}), 0.5).await;
}

/// A run that takes very long: a tiny fixed step over a long time.
const LONG: &str = "model Long\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\n  annotation(experiment(StopTime = 1e9, Interval = 1));\nend Long;\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_long_run_is_cancelled_from_another_task() {
    let bench = Arc::new(bench(&[("long.eqm", LONG)]));
    let id = compile(&bench, "long.eqm", None).await["model_id"].clone();
    let started = Instant::now();
    let run = tokio::spawn({
        let bench = bench.clone();
        async move {
            let settings = json!({ "method": "euler", "step": 1e-4, "interval": 1e3 });
            let body = json!({ "model_id": id, "run_id": "long-1", "settings": settings });
            bench.call("POST", "/api/run", Some(body)).await
        }
    });
    // The run is registered once it starts: ask until it is.
    let mut cancelled = false;
    while !cancelled && started.elapsed() < Duration::from_secs(30) {
        assert!(!run.is_finished(), "the run ended before it was cancelled");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let answer = bench.post("/api/cancel", json!({ "run_id": "long-1" })).await;
        cancelled = answer["cancelled"] == true;
    }
    assert!(cancelled, "the run was never found");
    let asked = Instant::now();
    let reply = run.await.expect("the run's task");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "the cancel took {:?}",
        asked.elapsed()
    );
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["cancelled"], true);
    assert_eq!(answer["run_id"], "long-1");
    // A finished run is no longer known.
    let answer = bench.post("/api/cancel", json!({ "run_id": "long-1" })).await;
    assert_eq!(answer["cancelled"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_time_and_row_limits_stop_a_run() {
    let bench = bench_with(&[("long.eqm", LONG), ("decay.eqm", DECAY)], |config| {
        config.run_limit = Duration::from_millis(300);
        config.max_rows = 50;
    });
    let id = compile(&bench, "long.eqm", None).await["model_id"].clone();
    let started = Instant::now();
    let body = json!({ "model_id": id, "settings": { "method": "euler", "step": 1e-4, "interval": 1e3 } });
    let reply = bench.call("POST", "/api/run", Some(body)).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.text());
    assert_eq!(reply.json()["error"], "run stopped after 0.3 s");
    let decay = compile(&bench, "decay.eqm", None).await["model_id"]
        .as_str()
        .expect("id")
        .to_string();
    let answer = check(&bench, &decay, json!({}), 0.5).await;
    assert_eq!(answer["rows"], 50);
    assert_eq!(answer["truncated"], true);
    assert_eq!(last(&answer, "x").0, 0.49);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_least_recently_used_model_is_dropped_after_sixteen() {
    let bench = bench(&[]);
    let text = |k: usize| DECAY.replace("= 0.5", &format!("= {k}.5"));
    let first = compile(&bench, "decay.eqm", Some(&text(0))).await["model_id"].clone();
    let second = compile(&bench, "decay.eqm", Some(&text(1))).await["model_id"].clone();
    for k in 2..16 {
        compile(&bench, "decay.eqm", Some(&text(k))).await;
    }
    // The first is used again, so the second is the least recently used when the 17th comes.
    assert_eq!(compile(&bench, "decay.eqm", Some(&text(0))).await["cached"], true);
    compile(&bench, "decay.eqm", Some(&text(16))).await;
    let status = bench.call("GET", "/api/status", None).await.json();
    assert_eq!(status["models_cached"], 16);
    assert_eq!(status["compiles"], 17);
    check(&bench, first.as_str().expect("id"), json!({}), 0.5).await;
    let dropped = bench
        .call("POST", "/api/run", Some(json!({ "model_id": second })))
        .await;
    assert_eq!(dropped.status, StatusCode::NOT_FOUND);
}

/// A Vensim model that reads the data file `data` (a straight line through (0, 10), (2, 14),
/// (4, 6) in `series.csv`).
fn data_model(data: &str) -> String {
    format!(
        "{{UTF-8}}\nsupply := GET DIRECT DATA('{data}', ',', 'A', 'B2') ~~|\n\
         INITIAL TIME = 0 ~~|\nFINAL TIME = 4 ~~|\nTIME STEP = 1 ~~|\nSAVEPER = TIME STEP ~~|\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vensim_model_reads_its_data_files_below_the_folder_only() {
    let series = "t,supply\n0,10\n2,14\n4,6\n";
    let outside = temporary_dir("outside");
    std::fs::write(outside.join("secret.csv"), series).expect("file written");
    let up = format!(
        "../../{}/secret.csv",
        outside.file_name().and_then(|n| n.to_str()).expect("a name")
    );
    let bench = bench(&[
        ("series.csv", series),
        ("sub/beside.mdl", &data_model("../series.csv")),
        ("sub/escape.mdl", &data_model(&up)),
    ]);
    // The served folder is not the working directory: the file is found below the folder,
    // relative to the model's own folder.
    let compiled = compile(&bench, "sub/beside.mdl", None).await;
    let id = compiled["model_id"].as_str().expect("an id").to_string();
    let answer = bench
        .post("/api/run", json!({ "model_id": id, "variables": ["supply"] }))
        .await;
    assert_eq!(answer["values"][0], json!([0.0, 1.0, 2.0, 3.0, 4.0]));
    assert_eq!(answer["values"][1], json!([10.0, 12.0, 14.0, 10.0, 6.0]));
    // A path that leaves the folder is refused, though the file exists.
    let reply = bench
        .call("POST", "/api/compile", Some(json!({ "path": "sub/escape.mdl" })))
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let answer = reply.json();
    assert_eq!(answer["diagnostics"][0]["code"], "E1008");
    let message = answer["diagnostics"][0]["message"].as_str().expect("a message");
    assert!(message.contains("not a file below the served folder"), "{message}");
    let _ = std::fs::remove_dir_all(outside);
}
