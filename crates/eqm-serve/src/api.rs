//! The routes and the handlers of the folder and of checking and compiling: each parses its
//! request, asks the library in a blocking job on the compiler's stack (a panic there is
//! caught and answered 500, the server goes on), and answers JSON. Input: HTTP requests that
//! passed [`crate::auth::guard`]. Output: the answers of `docs/workbench-api.md`. Running is in
//! [`crate::runs`], the explanations and drawings in [`crate::views`], the shared state in
//! [`crate::models`]. It deliberately decides
//! nothing about a model: every verdict is the library's, as in the commands.

use crate::files;
use crate::json::{self, ApiError, diags, parse};
use crate::models::{AppState, Entry, FileRequest, Target, blocking};
use crate::{auth, runs, views};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use eqm::{Model, ModelOptions, RunSettings, Session, VariableKind};
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

/// The largest request body.
const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// The router of the workbench bound at `bound`.
pub(crate) fn router(state: Arc<AppState>, bound: SocketAddr) -> Router {
    let guard = Arc::new(auth::Guard {
        token: state.token.clone(),
        allowed_hosts: (!state.host_given).then(|| auth::allowed_hosts(bound)),
    });
    Router::new()
        .route("/api/status", get(status))
        .route("/api/files", get(list_files))
        .route("/api/file", get(read_file).put(write_file))
        .route("/api/check", post(check))
        .route("/api/symbols", post(symbols))
        .route("/api/compile", post(compile))
        .route("/api/run", post(runs::run))
        .route("/api/cancel", post(runs::cancel))
        .route("/api/explain", post(views::explain))
        .route("/api/diagram", post(views::diagram))
        .route("/api/analyze", post(views::analyze))
        .fallback(page)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(guard, auth::guard))
        .with_state(state)
}

/// `GET /`, `/assets/...`; anything else is 404.
async fn page(uri: Uri) -> Response {
    let path = uri.path();
    if path.starts_with("/api/") {
        return ApiError::not_found(format!("there is no endpoint {path}")).into_response();
    }
    let name = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    match crate::bundle::asset(name) {
        Some((media, bytes)) => ([(header::CONTENT_TYPE, HeaderValue::from_static(media))], bytes).into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    let methods: Vec<&str> = eqm::Method::NAMED.iter().map(|m| m.name()).collect();
    json::ok(&json!({
        "version": env!("CARGO_PKG_VERSION"),
        "root": state.root_name,
        "compiles": state.compiles.load(Ordering::Relaxed),
        "runs": state.runs.load(Ordering::Relaxed),
        "models_cached": state.cache().len(),
        "methods": methods,
    }))
}

async fn list_files(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let listed = blocking({
        let state = state.clone();
        move || Ok(state.summaries.listing(&state.root))
    })
    .await?;
    Ok(json::ok(&json!({ "root": state.root_name, "files": listed })))
}

#[derive(Deserialize)]
struct PathQuery {
    path: Option<String>,
}

fn query_path(query: Result<Query<PathQuery>, axum::extract::rejection::QueryRejection>) -> Result<String, ApiError> {
    match query {
        Ok(Query(PathQuery { path: Some(path) })) => Ok(path),
        _ => Err(ApiError::bad_request(
            "the request needs `?path=` naming a file below the folder",
        )),
    }
}

async fn read_file(
    State(state): State<Arc<AppState>>,
    query: Result<Query<PathQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let path = query_path(query)?;
    let text = files::read(&state.root, &path)?;
    Ok(json::ok(&json!({ "path": path, "text": text })))
}

#[derive(Deserialize)]
struct WriteRequest {
    text: String,
}

async fn write_file(
    State(state): State<Arc<AppState>>,
    query: Result<Query<PathQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let path = query_path(query)?;
    let request: WriteRequest = parse(body)?;
    let bytes = files::write(&state.root, &path, &request.text)?;
    Ok(json::ok(&json!({ "path": path, "bytes": bytes })))
}

/// `/api/check`: what `eqm check` does and prints.
async fn check(State(state): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let request: FileRequest = parse(body)?;
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let answer = blocking(move || {
        let mut session = target.session(&state);
        let summary = if session.has_errors() {
            None
        } else {
            check_summary(&mut session, target.model.as_deref(), &ModelOptions::default())
        };
        let ok = !session.has_errors();
        let mut found = session.take_diagnostics();
        let diagnostics = diags(&mut found, session.source_map());
        Ok(json!({ "ok": ok, "summary": summary.unwrap_or_default(), "diagnostics": diagnostics }))
    })
    .await?;
    Ok(json::ok(&answer))
}

/// The lines `eqm check` prints after the diagnostics (the library's report of the classes
/// checked).
fn check_summary(session: &mut Session, model: Option<&str>, options: &ModelOptions) -> Option<String> {
    let lines = eqm::check_report(&session.check_classes(model, options));
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[derive(Deserialize)]
struct SymbolsRequest {
    path: String,
    text: Option<String>,
    model: Option<String>,
}

/// `/api/symbols`: the class names for completion and the model's variables.
async fn symbols(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: SymbolsRequest = parse(body)?;
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let answer = blocking(move || {
        let mut classes = files::summarize(&target.path, target.text.clone()).classes;
        for path in files::model_files(&state.root) {
            if path != target.path
                && let Some(summary) = state.summaries.get(&state.root, &path)
            {
                classes.extend(summary.classes);
            }
        }
        classes.extend(library_classes().iter().cloned());
        let mut seen = std::collections::HashSet::new();
        classes.retain(|c| seen.insert(c.clone()));
        let mut session = target.session(&state);
        let variables: Vec<String> = if session.has_errors() {
            Vec::new()
        } else {
            session
                .flatten(target.model.as_deref(), &ModelOptions::default())
                .map(|flat| flat.variables.iter().map(|v| v.name.clone()).collect())
                .unwrap_or_default()
        };
        Ok(json!({ "classes": classes, "variables": variables }))
    })
    .await?;
    Ok(json::ok(&answer))
}

/// The classes of the embedded standard library, found once.
fn library_classes() -> &'static [String] {
    static CLASSES: OnceLock<Vec<String>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let (classes, _) = eqm::library_doc::library_classes(&[]);
        classes
            .into_iter()
            .filter(|c| !matches!(c.kind, "constant" | "parameter" | "variable"))
            .map(|c| c.full_name)
            .collect()
    })
}

/// `/api/compile`: the cached model of the same path, text and model name, or a new one.
async fn compile(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: FileRequest = parse(body)?;
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let key = target.key();
    let cached = state.cache().by_key(key);
    let (entry, cached) = match cached {
        Some(entry) => (entry, true),
        None => {
            let entry = blocking({
                let state = state.clone();
                move || compile_target(&state, &target, key)
            })
            .await?;
            state.cache().insert(entry.clone());
            (entry, false)
        }
    };
    let mut answer = entry.description.clone();
    answer["cached"] = json!(cached);
    answer["compiles"] = json!(state.compiles.load(Ordering::Relaxed));
    Ok(json::ok(&answer))
}

/// Compiles `target` as `eqm run` does, counting the compilation.
fn compile_target(state: &AppState, target: &Target, key: u64) -> Result<Arc<Entry>, ApiError> {
    let mut session = target.session(state);
    let compiled = if session.has_errors() {
        None
    } else {
        session.compile(target.model.as_deref(), &ModelOptions::default())
    };
    let mut found = session.take_diagnostics();
    let diagnostics = diags(&mut found, session.source_map());
    let Some(model) = compiled else {
        return Err(ApiError::model("the model has errors", diagnostics));
    };
    state.compiles.fetch_add(1, Ordering::Relaxed);
    let id = state.new_id("m");
    let description = describe(&id, &model, &diagnostics);
    Ok(Arc::new(Entry {
        id,
        key,
        model: Mutex::new(model),
        sources: session.source_map().clone(),
        description,
    }))
}

/// The answer of `/api/compile` for `model` (without `cached` and `compiles`).
fn describe(id: &str, model: &Model, warnings: &[json::Diag]) -> Value {
    let parameters: Vec<Value> = model
        .parameters()
        .into_iter()
        .filter(|p| p.settable)
        .filter_map(|p| {
            let value = p.value?;
            let (low, high) = slider_range(value);
            // A declared bound narrows the slider to the values the model allows.
            let low = p.min.map_or(low, |min| low.max(min));
            let high = p.max.map_or(high, |max| high.min(max));
            let mut parameter = json!({ "name": p.name, "value": value, "slider_min": low, "slider_max": high });
            if let Some(min) = p.min {
                parameter["min"] = json!(min);
            }
            if let Some(max) = p.max {
                parameter["max"] = json!(max);
            }
            if let Some(unit) = &p.unit {
                parameter["unit"] = json!(unit.as_ref());
            }
            if let Some(description) = &p.description {
                parameter["description"] = json!(description.as_ref());
            }
            Some(parameter)
        })
        .collect();
    let variables = model.variables();
    let described: Vec<Value> = variables
        .iter()
        .filter(|v| !matches!(v.kind, VariableKind::Parameter | VariableKind::Constant))
        .map(|v| {
            let mut variable = json!({ "name": v.name, "kind": kind_name(v.kind) });
            if let Some(unit) = &v.unit {
                variable["unit"] = json!(unit.as_ref());
            }
            variable
        })
        .collect();
    let experiment = model.experiment();
    let (start, stop) = model.time_span(&RunSettings::default());
    let mut shown = json!({ "start": start, "stop": stop });
    if let Some(interval) = experiment.interval {
        shown["interval"] = json!(interval);
    }
    if let Some(tolerance) = experiment.tolerance {
        shown["tolerance"] = json!(tolerance);
    }
    json!({
        "model_id": id,
        "name": model.name(),
        "parameters": parameters,
        "variables": described,
        "experiment": shown,
        "plotted": plotted(model, &variables),
        "warnings": warnings,
    })
}

/// The variables a page plots first: the states, else the first default result columns.
fn plotted(model: &Model, variables: &[eqm::VariableInfo]) -> Vec<String> {
    let states: Vec<String> = variables
        .iter()
        .filter(|v| v.kind == VariableKind::State)
        .map(|v| v.name.clone())
        .collect();
    if !states.is_empty() {
        return states;
    }
    model
        .columns(None)
        .map(|columns| columns.into_iter().take(4).map(|c| c.name).collect())
        .unwrap_or_default()
}

/// A slider's range around a parameter's value: from zero to twice the value (for a value of
/// zero, from -1 to 1), so the value starts in the middle.
fn slider_range(value: f64) -> (f64, f64) {
    if value > 0.0 {
        (0.0, 2.0 * value)
    } else if value < 0.0 {
        (2.0 * value, 0.0)
    } else {
        (-1.0, 1.0)
    }
}

fn kind_name(kind: VariableKind) -> &'static str {
    match kind {
        VariableKind::State => "state",
        VariableKind::Algebraic => "algebraic",
        VariableKind::Discrete => "discrete",
        VariableKind::Parameter => "parameter",
        VariableKind::Constant => "constant",
    }
}
