//! Who may ask: the token made at start, carried by every request (query `token`, header
//! `Authorization: token T` or cookie `eqm_token`), and the `Host` header that must name the
//! server's own address (so a web page of another site cannot reach it by rebinding a DNS
//! name to 127.0.0.1). Input: the request's headers and query. Output: the request passed on,
//! or 403/401; `GET /?token=T` turns the token into a cookie and sends the browser to `/`.
//! It deliberately knows nothing of the API's endpoints.

use crate::json::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;

/// A new token: 32 hexadecimal digits from the operating system's random numbers.
pub(crate) fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random numbers for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The `Host` header values a request may carry for a server bound at `bound`.
pub(crate) fn allowed_hosts(bound: std::net::SocketAddr) -> Vec<String> {
    let port = bound.port();
    vec![
        bound.to_string(),
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
    ]
}

/// What the guard checks against: the token, and the `Host` values accepted (`None` when the
/// user chose the host, under whose names the server is reached it cannot know).
pub(crate) struct Guard {
    pub token: String,
    pub allowed_hosts: Option<Vec<String>>,
}

/// The middleware in front of every route; see the module documentation.
pub(crate) async fn guard(State(state): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    if let Some(allowed) = &state.allowed_hosts {
        let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|host| allowed.iter().any(|a| a.eq_ignore_ascii_case(host))) {
            let message = "the Host header does not name this server's address";
            return refuse(api, StatusCode::FORBIDDEN, message);
        }
    }
    let query_token = query_token(request.uri().query());
    let presented = query_token
        .clone()
        .or_else(|| header_token(request.headers()))
        .or_else(|| cookie_token(request.headers()));
    let Some(presented) = presented else {
        return refuse(
            api,
            StatusCode::UNAUTHORIZED,
            "this request needs the token `eqm serve` printed",
        );
    };
    if !same(&presented, &state.token) {
        return refuse(api, StatusCode::UNAUTHORIZED, "the token is not this server's");
    }
    // The page opened with the token in its address: keep the token in a cookie and take it
    // out of the address bar (and the browser's history).
    if query_token.is_some() && request.method() == Method::GET && request.uri().path() == "/" {
        let cookie = format!("eqm_token={}; HttpOnly; SameSite=Strict; Path=/", state.token);
        let mut response = StatusCode::SEE_OTHER.into_response();
        let headers = response.headers_mut();
        headers.insert(header::LOCATION, HeaderValue::from_static("/"));
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            headers.insert(header::SET_COOKIE, value);
        }
        return response;
    }
    next.run(request).await
}

/// The refusal: JSON for the API, a short page otherwise.
fn refuse(api: bool, status: StatusCode, message: &str) -> Response {
    if api {
        return ApiError::new(status, message).into_response();
    }
    let page = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>EQM workbench</title><p>{message}: open the address with <code>?token=</code> that <code>eqm serve</code> printed.</p>"
    );
    (status, Html(page)).into_response()
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .map(str::to_string)
}

fn header_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("token ").map(|t| t.trim().to_string())
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix("eqm_token="))
        .map(str::to_string)
}

/// Compares the tokens in time independent of where they first differ, so that the time of
/// an answer tells nothing about the token.
fn same(presented: &str, token: &str) -> bool {
    presented.len() == token.len()
        && presented
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}
