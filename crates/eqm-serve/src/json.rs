//! The JSON forms the API answers with: a diagnostic with its line and column ([`Diag`]), and
//! the error answer ([`ApiError`]). Input: the library's [`Diagnostic`]s with the session's
//! source map. Output: serde values and HTTP answers. It decides no status itself: each
//! handler says which one its error is.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use eqm::{Diagnostic, Severity, SourceMap};
use serde::Serialize;
use serde_json::{Value, json};

/// A diagnostic as the page shows it: where (1-based line and column in characters, of the
/// primary span) and the text renderer's output without colour.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Diag {
    pub code: &'static str,
    pub severity: &'static str,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub col: Option<usize>,
    pub end_line: Option<usize>,
    pub end_col: Option<usize>,
    pub rendered: String,
}

impl Diag {
    pub(crate) fn new(diagnostic: &Diagnostic, sources: &SourceMap) -> Diag {
        let severity = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        // A span into a file the map does not hold (a diagnostic made for another session)
        // is left without a location rather than guessed.
        let span = diagnostic
            .primary_span()
            .filter(|span| (span.file.0 as usize) < sources.len());
        let (file, start, end) = match span {
            Some(span) => {
                let source = sources.get(span.file);
                (
                    Some(source.name.clone()),
                    Some(source.line_col(span.start)),
                    Some(source.line_col(span.end)),
                )
            }
            None => (None, None, None),
        };
        Diag {
            code: diagnostic.code,
            severity,
            message: diagnostic.message.clone(),
            file,
            line: start.map(|(line, _)| line),
            col: start.map(|(_, col)| col),
            end_line: end.map(|(line, _)| line),
            end_col: end.map(|(_, col)| col),
            rendered: eqm::pipeline::diag::render(diagnostic, sources, false),
        }
    }
}

/// The diagnostics sorted by location, as the command line prints them.
pub(crate) fn diags(diagnostics: &mut [Diagnostic], sources: &SourceMap) -> Vec<Diag> {
    eqm::pipeline::diag::sort(diagnostics);
    diagnostics.iter().map(|d| Diag::new(d, sources)).collect()
}

/// An error answer: `{"error": "...", "diagnostics": [...]?}` and any further fields (the rows
/// of a run that failed part way).
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub error: String,
    pub diagnostics: Option<Vec<Diag>>,
    pub extra: Vec<(&'static str, Value)>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, error: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: error.into(),
            diagnostics: None,
            extra: Vec::new(),
        }
    }

    pub(crate) fn bad_request(error: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, error)
    }

    pub(crate) fn not_found(error: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, error)
    }

    pub(crate) fn forbidden(error: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, error)
    }

    pub(crate) fn internal(error: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal error: {}", error.into()),
        )
    }

    /// The model has errors: 422 with its diagnostics.
    pub(crate) fn model(error: impl Into<String>, diagnostics: Vec<Diag>) -> ApiError {
        ApiError {
            diagnostics: Some(diagnostics),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error)
        }
    }

    pub(crate) fn with(mut self, key: &'static str, value: Value) -> ApiError {
        self.extra.push((key, value));
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.error });
        if let Some(diagnostics) = self.diagnostics {
            body["diagnostics"] = json!(diagnostics);
        }
        for (key, value) in self.extra {
            body[key] = value;
        }
        (self.status, json_body(&body)).into_response()
    }
}

/// A JSON answer with status 200.
pub(crate) fn ok(value: &Value) -> Response {
    json_body(value).into_response()
}

fn json_body(value: &Value) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        value.to_string(),
    )
}

/// The request body as `T`, or 400 for malformed JSON or a missing field (413 for a body over
/// the limit, which axum reports through the rejection's status).
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<T, ApiError> {
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than 8 MB".to_string()
        } else {
            format!("the request body cannot be read: {rejection}")
        };
        ApiError::new(status, message)
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the request is not the JSON expected: {e}")))
}
