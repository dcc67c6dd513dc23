//! The explanations and drawings of a model: `/api/explain` (the text of `eqm explain`, its
//! sections, the equation/variable graph with the colouring replay, the SVG of `--svg`),
//! `/api/diagram` (the SVG of `eqm diagram` and the elements of its boxes) and `/api/analyze`
//! (the JSON of `eqm analyze --json` and the stability picture). Input: a file's request.
//! Output: JSON. It makes the same library calls as those commands and adds nothing to what
//! they find.

use crate::json::{self, ApiError, diags, parse};
use crate::models::{AppState, FileRequest, Target, blocking};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::Response;
use eqm::analyze::AnalyzeOptions;
use eqm::{GraphView, ModelOptions, RunError, Session, SourceMap};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The 422 answer of a session whose model has errors.
fn model_errors(session: &mut Session) -> ApiError {
    let mut found = session.take_diagnostics();
    ApiError::model("the model has errors", diags(&mut found, session.source_map()))
}

#[derive(Deserialize)]
struct ExplainRequest {
    path: String,
    text: Option<String>,
    model: Option<String>,
    #[serde(default)]
    keep_aliases: bool,
}

/// `/api/explain`; see the module documentation.
pub(crate) async fn explain(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: ExplainRequest = parse(body)?;
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let keep_aliases = request.keep_aliases;
    let answer = blocking(move || {
        let mut session = target.session(&state);
        let options = ModelOptions {
            keep_aliases,
            ..ModelOptions::default()
        };
        let explained = if session.has_errors() {
            None
        } else {
            session.analyze_explained(target.model.as_deref(), &options)
        };
        let Some((analysis, text)) = explained else {
            return Err(model_errors(&mut session));
        };
        let view = GraphView::new(&analysis);
        let (graph, note) = match view.replay() {
            Ok(replay) => (graph_json(&view, &replay, session.source_map()), Value::Null),
            Err(too_large) => (Value::Null, json!(too_large.to_string())),
        };
        let (svg, note) = match view.svg() {
            Ok(svg) => (json!(svg), note),
            Err(too_large) if note.is_null() => (Value::Null, json!(too_large.to_string())),
            Err(_) => (Value::Null, note),
        };
        Ok(json!({
            "text": text,
            "sections": sections(&text),
            "graph": graph,
            "graph_note": note,
            "graph_svg": svg,
        }))
    })
    .await?;
    Ok(json::ok(&answer))
}

/// The sections of `eqm explain`'s text: each begins at its first line or at an unindented
/// line after an empty one (`states (2):`, `matching ...:`, `initialization: ...`), titled by
/// that line up to its first colon; a section's text is its lines, the heading included.
pub(crate) fn sections(text: &str) -> Vec<Value> {
    let mut found: Vec<(String, Vec<&str>)> = Vec::new();
    let mut after_blank = true;
    for line in text.lines() {
        let heading = after_blank && !line.is_empty() && !line.starts_with(' ');
        if heading {
            let title = line.split_once(':').map_or(line, |(title, _)| title).trim().to_string();
            found.push((title, Vec::new()));
        }
        if let Some((_, lines)) = found.last_mut() {
            lines.push(line);
        }
        after_blank = line.trim().is_empty();
    }
    found
        .into_iter()
        .map(|(title, lines)| json!({ "title": title, "text": lines.join("\n").trim_end().to_string() + "\n" }))
        .collect()
}

/// The graph of the answer with the replay's steps.
fn graph_json(view: &GraphView, replay: &eqm::pipeline::compile::graphview::Replay, sources: &SourceMap) -> Value {
    let equations: Vec<Value> = view
        .equations
        .iter()
        .map(|e| {
            json!({
                "label": e.label, "text": e.text, "sort": e.sort, "solves": e.solves,
                "in_loop": e.in_loop, "algorithm": e.algorithm,
                "origin": e.span.map(|span| sources.location(span)),
            })
        })
        .collect();
    let edges: Vec<Value> = view
        .edges
        .iter()
        .map(|e| json!({ "equation": e.equation, "variable": e.variable, "matched": e.matched }))
        .collect();
    let blocks: Vec<Value> = view
        .blocks
        .iter()
        .map(|b| {
            json!({
                "equations": b.equations, "unknowns": b.unknowns, "tearing": b.tearing,
                "residuals": b.residuals, "linear": b.linear,
            })
        })
        .collect();
    let steps: Vec<Value> = replay
        .steps
        .iter()
        .map(|s| json!({ "text": s.text, "red": s.red, "blue": s.blue, "numbered": s.numbered }))
        .collect();
    json!({
        "equations": equations,
        "variables": view.variables,
        "edges": edges,
        "blocks": blocks,
        "steps": steps,
    })
}

/// `/api/diagram`; see the module documentation.
pub(crate) async fn diagram(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: FileRequest = parse(body)?;
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let answer = blocking(move || {
        let mut session = target.session(&state);
        let diagram = if session.has_errors() {
            None
        } else {
            session.diagram(target.model.as_deref(), &ModelOptions::default())
        };
        let Some(diagram) = diagram else {
            return Err(model_errors(&mut session));
        };
        let svg = eqm::diagram::svg(&diagram);
        let elements = elements(&svg, &diagram, session.source_map());
        let kind = if svg.contains("data-symbol=\"stock\"") {
            "stocks"
        } else {
            "components"
        };
        Ok(json!({ "kind": kind, "svg": svg, "elements": elements }))
    })
    .await?;
    Ok(json::ok(&answer))
}

/// The boxes of the drawing, read from its `<g data-name=... data-class=...>` groups (so each
/// box has its element, whatever the drawing named it), each with where its component is
/// declared.
fn elements(svg: &str, diagram: &eqm::Diagram, sources: &eqm::SourceMap) -> Vec<Value> {
    let mut found = Vec::new();
    for group in svg.split("<g ").skip(1) {
        let Some(name) = attribute(group, "data-name") else {
            continue;
        };
        let class = attribute(group, "data-class").unwrap_or_default();
        // An array element's box is named `c[2]`; its declaration is that of `c`.
        let declared = name.split('[').next().unwrap_or(&name);
        let element = diagram
            .components
            .iter()
            .chain(&diagram.connectors)
            .find(|e| e.name == declared);
        let (file, line, col) = match element {
            Some(e) if (e.span.file.0 as usize) < sources.len() => {
                let source = sources.get(e.span.file);
                let (line, col) = source.line_col(e.span.start);
                (json!(source.name), json!(line), json!(col))
            }
            _ => (Value::Null, Value::Null, Value::Null),
        };
        found.push(json!({ "name": name, "class": class, "file": file, "line": line, "col": col }));
    }
    found
}

/// The value of attribute `name` at the start of an SVG tag's text, unescaped.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let tag = tag.split('>').next()?;
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = start + tag[start..].find('"')?;
    Some(
        tag[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&#39;", "'")
            .replace("&amp;", "&"),
    )
}

#[derive(Deserialize)]
struct AnalyzeRequest {
    path: String,
    text: Option<String>,
    model: Option<String>,
    #[serde(default)]
    parameters: BTreeMap<String, f64>,
    method: Option<String>,
}

/// `/api/analyze`; see the module documentation.
pub(crate) async fn analyze(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: AnalyzeRequest = parse(body)?;
    let method = match request.method.as_deref() {
        None => None,
        Some(name) => {
            Some(eqm::Method::parse(name).ok_or_else(|| ApiError::bad_request(format!("unknown method `{name}`")))?)
        }
    };
    let target = Target::new(&state, request.path, request.text, request.model)?;
    let parameters: Vec<(String, f64)> = request.parameters.into_iter().collect();
    let answer = blocking(move || {
        let mut session = target.session(&state);
        let options = ModelOptions {
            parameters,
            ..ModelOptions::default()
        };
        let compiled = if session.has_errors() {
            None
        } else {
            session.compile_for_analysis(target.model.as_deref(), &options)
        };
        let Some(mut compiled) = compiled else {
            return Err(model_errors(&mut session));
        };
        let analysis = match compiled.analyze(&AnalyzeOptions::of_model(None, Vec::new())) {
            Ok(analysis) => analysis,
            Err(RunError::Model(d)) => {
                session.push_diagnostic(*d);
                return Err(model_errors(&mut session));
            }
            Err(RunError::Failed {
                message, diagnostic, ..
            }) => {
                if let Some(d) = diagnostic {
                    session.push_diagnostic(*d);
                }
                let mut failed = model_errors(&mut session);
                failed.error = format!("the analysis failed: {message}");
                return Err(failed);
            }
            Err(other) => return Err(ApiError::bad_request(other.to_string())),
        };
        let user_tableau = method.as_ref().filter(|m| matches!(m, eqm::Method::Tableau(_)));
        let advice = analysis.advice(user_tableau);
        let report: Value = serde_json::from_str(&eqm::analyze::json(&analysis, advice.as_ref()))
            .map_err(|e| ApiError::internal(format!("the analysis's JSON does not read back: {e}")))?;
        // The method drawn: the one asked for, else the recommended one, as `eqm analyze --svg`.
        let drawn = method.or_else(|| eqm::Method::parse(&advice.as_ref()?.recommended.as_ref()?.method));
        let picture = match (&drawn, &advice) {
            (Some(drawn), Some(advice)) => eqm::stability::svg(drawn, &analysis.timed_eigenvalues(), advice.step),
            _ => None,
        };
        Ok(json!({
            "analysis": report,
            "stability_svg": picture,
            "method": drawn.as_ref().map(|m| m.name().to_string()),
        }))
    })
    .await?;
    Ok(json::ok(&answer))
}
