//! Running a compiled model: `/api/run` and `/api/cancel`. Each run takes the model's lock
//! (runs of one model take turns), starts from the model's own values with only the request's
//! parameters and start values changed, and runs on the compiler's stack with a cancel flag
//! that `/api/cancel` and the time limit set. Input: the request and the cached model.
//! Output: the columns as JSON arrays (or the library's CSV), at most the configured number
//! of rows. It deliberately changes nothing the next run would see: the model's values are
//! reset before and after.

use crate::json::{self, ApiError, Diag};
use crate::models::{AppState, Entry, blocking, entry};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use eqm::{RowSink, RunError, RunSettings};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Deserialize, Default)]
struct Settings {
    start: Option<f64>,
    stop: Option<f64>,
    interval: Option<f64>,
    rtol: Option<f64>,
    atol: Option<f64>,
    method: Option<String>,
    step: Option<f64>,
}

#[derive(Deserialize)]
struct RunRequest {
    model_id: String,
    run_id: Option<String>,
    #[serde(default)]
    parameters: BTreeMap<String, f64>,
    #[serde(default)]
    starts: BTreeMap<String, f64>,
    #[serde(default)]
    settings: Settings,
    variables: Option<Vec<String>>,
    format: Option<String>,
}

/// The rows of a run, kept column by column, stopping at the row limit.
struct Collected {
    time: Vec<f64>,
    values: Vec<Vec<f64>>,
    limit: usize,
    truncated: bool,
}

impl RowSink for Collected {
    fn row(&mut self, time: f64, values: &[f64]) -> std::io::Result<()> {
        if self.time.len() >= self.limit {
            self.truncated = true;
            return Err(std::io::Error::other("the row limit is reached"));
        }
        self.time.push(time);
        for (column, value) in self.values.iter_mut().zip(values) {
            column.push(*value);
        }
        Ok(())
    }
}

/// How a run ended, for its answer.
struct Outcome {
    names: Vec<String>,
    rows: Collected,
    elapsed_ms: f64,
    warnings: Vec<Diag>,
    /// The error answer of a run that did not finish (its rows so far are added to it).
    failed: Option<ApiError>,
}

/// `/api/run`; see the module documentation.
pub(crate) async fn run(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: RunRequest = json::parse(body)?;
    let csv = match request.format.as_deref() {
        None | Some("json") => false,
        Some("csv") => true,
        Some(other) => return Err(ApiError::bad_request(format!("unknown format `{other}`: json or csv"))),
    };
    let method = match request.settings.method.as_deref() {
        None => None,
        Some(name) => Some(eqm::Method::parse(name).ok_or_else(|| {
            let known: Vec<&str> = eqm::Method::NAMED.iter().map(|m| m.name()).collect();
            ApiError::bad_request(format!("unknown method `{name}`; known: {}", known.join(", ")))
        })?),
    };
    let model = entry(&state, &request.model_id)?;
    let run_id = request.run_id.clone().unwrap_or_else(|| state.new_id("r"));
    let cancel = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    state
        .cancels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(run_id.clone(), cancel.clone());
    // The time limit is the cancel flag set by a timer.
    let timer = tokio::spawn({
        let (cancel, timed_out, limit) = (cancel.clone(), timed_out.clone(), state.run_limit);
        async move {
            tokio::time::sleep(limit).await;
            timed_out.store(true, Ordering::SeqCst);
            cancel.store(true, Ordering::SeqCst);
        }
    });
    state.runs.fetch_add(1, Ordering::Relaxed);
    let settings = RunSettings {
        start: request.settings.start,
        stop: request.settings.stop,
        interval: request.settings.interval,
        rtol: request.settings.rtol,
        atol: request.settings.atol,
        step: request.settings.step,
        method,
        variables: request.variables.clone(),
        cancel: Some(cancel.clone()),
        ..RunSettings::default()
    };
    let limit = state.max_rows;
    let outcome = blocking({
        let model = model.clone();
        move || Ok(simulate(&model, &request.parameters, &request.starts, &settings, limit))
    })
    .await;
    timer.abort();
    state.cancels.lock().unwrap_or_else(|e| e.into_inner()).remove(&run_id);
    let mut outcome = outcome?;
    if let Some(failed) = outcome.failed.take() {
        let failed = if cancel.load(Ordering::SeqCst) && failed.status == StatusCode::GONE {
            if timed_out.load(Ordering::SeqCst) {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!("run stopped after {} s", state.run_limit.as_secs_f64()),
                )
            } else {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "the run was cancelled").with("cancelled", json!(true))
            }
        } else {
            failed
        };
        let (columns, values) = columns_and_values(&outcome);
        let failed = failed.with("run_id", json!(run_id));
        return Err(if outcome.rows.time.is_empty() {
            failed
        } else {
            failed.with("columns", columns).with("values", values)
        });
    }
    if csv {
        return csv_answer(&model, &outcome);
    }
    let (columns, values) = columns_and_values(&outcome);
    Ok(json::ok(&json!({
        "run_id": run_id,
        "columns": columns,
        "values": values,
        "rows": outcome.rows.time.len(),
        "truncated": outcome.rows.truncated,
        "elapsed_ms": outcome.elapsed_ms,
        "compiles": state.compiles.load(Ordering::Relaxed),
        "runs": state.runs.load(Ordering::Relaxed),
        "warnings": outcome.warnings,
    })))
}

fn columns_and_values(outcome: &Outcome) -> (Value, Value) {
    let mut columns = vec!["time".to_string()];
    columns.extend(outcome.names.iter().cloned());
    let mut values = vec![&outcome.rows.time];
    values.extend(outcome.rows.values.iter());
    (json!(columns), json!(values))
}

fn csv_answer(model: &Entry, outcome: &Outcome) -> Result<Response, ApiError> {
    let failed = |e: std::io::Error| ApiError::internal(format!("the CSV cannot be written: {e}"));
    let mut writer = eqm::CsvWriter::new(Vec::new(), &outcome.names).map_err(failed)?;
    let mut row = vec![0.0; outcome.names.len()];
    for (k, &time) in outcome.rows.time.iter().enumerate() {
        for (value, column) in row.iter_mut().zip(&outcome.rows.values) {
            *value = column[k];
        }
        writer.row(time, &row).map_err(failed)?;
    }
    writer.flush().map_err(failed)?;
    let name = model.description["name"].as_str().unwrap_or("results").replace('"', "");
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}.csv\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            ),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        writer.into_inner(),
    )
        .into_response())
}

/// Runs the model of `entry` with the request's values; a cancelled run's error is marked
/// with status 410 for the caller, which knows whether the user or the time limit stopped it.
fn simulate(
    entry: &Entry,
    parameters: &BTreeMap<String, f64>,
    starts: &BTreeMap<String, f64>,
    settings: &RunSettings,
    limit: usize,
) -> Outcome {
    // A run that panicked while holding the lock left the model whole: its values are reset
    // here anyway.
    let mut model = entry.model.lock().unwrap_or_else(|e| e.into_inner());
    model.reset();
    let mut outcome = Outcome {
        names: Vec::new(),
        rows: Collected {
            time: Vec::new(),
            values: Vec::new(),
            limit,
            truncated: false,
        },
        elapsed_ms: 0.0,
        warnings: Vec::new(),
        failed: None,
    };
    let sources = &entry.sources;
    let model_error = |d: eqm::Diagnostic| ApiError::model(d.message.clone(), vec![Diag::new(&d, sources)]);
    let set = parameters
        .iter()
        .try_for_each(|(name, value)| model.set_parameter(name, *value))
        .and_then(|()| {
            starts
                .iter()
                .try_for_each(|(name, value)| model.set_start(name, *value))
        });
    if let Err(d) = set {
        model.reset();
        outcome.failed = Some(model_error(d));
        return outcome;
    }
    let (_, plan) = model.plan_run(settings, &[]);
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            model.reset();
            outcome.failed = Some(match e {
                RunError::Model(d) => model_error(*d),
                other => ApiError::bad_request(other.to_string()),
            });
            return outcome;
        }
    };
    outcome.names = plan.columns.iter().map(|c| c.name.clone()).collect();
    outcome.rows.values = vec![Vec::new(); plan.columns.len()];
    let started = Instant::now();
    let result = model.simulate_into(&plan.settings, &plan.columns, &mut outcome.rows);
    outcome.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    model.reset();
    drop(model);
    match result {
        Ok(report) => {
            outcome.warnings = report.summary.warnings.iter().map(|d| Diag::new(d, sources)).collect();
        }
        Err(RunError::Io(_)) if outcome.rows.truncated => {}
        Err(e) if eqm::counters::is_cancelled(&e) => {
            outcome.failed = Some(ApiError::new(StatusCode::GONE, "the run was cancelled"));
        }
        Err(RunError::Failed {
            time,
            message,
            diagnostic,
            warnings,
        }) => {
            let mut found: Vec<eqm::Diagnostic> = warnings;
            found.extend(diagnostic.map(|d| *d));
            let diagnostics = json::diags(&mut found, sources);
            outcome.failed = Some(ApiError::model(
                format!("the simulation failed at time {time}: {message}"),
                diagnostics,
            ));
        }
        Err(RunError::Model(d)) => outcome.failed = Some(model_error(*d)),
        Err(RunError::Settings(message)) => outcome.failed = Some(ApiError::bad_request(message)),
        Err(RunError::Io(e)) => outcome.failed = Some(ApiError::internal(e.to_string())),
    }
    outcome
}

#[derive(Deserialize)]
struct CancelRequest {
    run_id: String,
}

/// `/api/cancel`: sets the flag of the run under way with that id.
pub(crate) async fn cancel(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: CancelRequest = json::parse(body)?;
    let flag = state
        .cancels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&request.run_id)
        .cloned();
    if let Some(flag) = &flag {
        flag.store(true, Ordering::SeqCst);
    }
    Ok(json::ok(&json!({ "cancelled": flag.is_some() })))
}
