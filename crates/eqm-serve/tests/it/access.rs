//! Who may ask: the token in its three forms, the cookie flow, the `Host` check, unknown
//! routes.

use crate::{BOUND, Bench, DECAY, Reply, bench};
use axum::body::Body;
use axum::http::{Request, StatusCode};

/// Sends `GET uri` with the given headers only.
async fn check(bench: &Bench, uri: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = Request::builder().method("GET").uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    bench.send(request.body(Body::empty()).expect("a request")).await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_needs_the_token() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let token = bench.app.token().to_string();
    assert_eq!(token.len(), 32);
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));

    let missing = check(&bench, "/api/status", &[("host", BOUND)]).await;
    assert_eq!(missing.status, StatusCode::UNAUTHORIZED);
    assert!(missing.json()["error"].as_str().is_some_and(|e| e.contains("token")));
    let wrong = check(
        &bench,
        "/api/status",
        &[("host", BOUND), ("authorization", "token 0123")],
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    // One digit changed, always to a different one: the last digit of a random token may
    // itself be `0`.
    let last_digit = if token.ends_with('0') { '1' } else { '0' };
    let almost = format!("token {}{last_digit}", &token[..31]);
    let wrong = check(&bench, "/api/status", &[("host", BOUND), ("authorization", &almost)]).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    // The page without a token: a short HTML page, not JSON.
    let page = check(&bench, "/", &[("host", BOUND)]).await;
    assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    assert!(page.text().contains("token"));
    assert!(page.header("content-type").starts_with("text/html"));

    let by_header = check(
        &bench,
        "/api/status",
        &[("host", BOUND), ("authorization", &format!("token {token}"))],
    )
    .await;
    assert_eq!(by_header.status, StatusCode::OK);
    let by_query = check(&bench, &format!("/api/status?token={token}"), &[("host", BOUND)]).await;
    assert_eq!(by_query.status, StatusCode::OK);
    let by_cookie = check(
        &bench,
        "/api/status",
        &[("host", BOUND), ("cookie", &format!("a=b; eqm_token={token}"))],
    )
    .await;
    assert_eq!(by_cookie.status, StatusCode::OK);
    let status = by_cookie.json();
    assert_eq!(status["compiles"], 0);
    assert_eq!(status["runs"], 0);
    assert_eq!(status["models_cached"], 0);
    assert!(
        status["root"]
            .as_str()
            .is_some_and(|r| r.starts_with("eqm-serve-bench"))
    );
    assert!(
        status["methods"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m == "auto") && m.iter().any(|m| m == "dopri5"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_in_the_address_becomes_a_cookie() {
    let bench = bench(&[]);
    let token = bench.app.token().to_string();
    let first = check(&bench, &format!("/?token={token}"), &[("host", BOUND)]).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    assert_eq!(first.header("location"), "/");
    let cookie = first.header("set-cookie");
    assert_eq!(cookie, format!("eqm_token={token}; HttpOnly; SameSite=Strict; Path=/"));
    let value = cookie.split(';').next().expect("the cookie's value").to_string();
    let page = check(&bench, "/", &[("host", BOUND), ("cookie", &value)]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.header("content-type").starts_with("text/html"));
    assert!(page.text().to_lowercase().contains("<html") || page.text().to_lowercase().contains("<!doctype"));
    let api = check(&bench, "/api/files", &[("host", BOUND), ("cookie", &value)]).await;
    assert_eq!(api.status, StatusCode::OK);
    // A wrong token in the address is refused, not turned into a cookie.
    let wrong = check(&bench, "/?token=feedfeedfeedfeedfeedfeedfeedfeed", &[("host", BOUND)]).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.header("set-cookie").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_must_be_this_server() {
    let bench = bench(&[]);
    let auth = format!("token {}", bench.app.token());
    for host in ["127.0.0.1:8742", "localhost:8742", "LOCALHOST:8742"] {
        let reply = check(&bench, "/api/status", &[("host", host), ("authorization", &auth)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{host}");
    }
    for host in ["evil.example:8742", "127.0.0.1:9999", "localhost", "attacker.test"] {
        let reply = check(&bench, "/api/status", &[("host", host), ("authorization", &auth)]).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{host}");
        assert!(reply.json()["error"].as_str().is_some_and(|e| e.contains("Host")));
    }
    let without = check(&bench, "/api/status", &[("authorization", &auth)]).await;
    assert_eq!(without.status, StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_chosen_by_the_user_is_not_checked() {
    let bench = crate::bench_with(&[], |config| config.host_given = true);
    let auth = format!("token {}", bench.app.token());
    let reply = check(
        &bench,
        "/api/status",
        &[("host", "workbench.lan:8742"), ("authorization", &auth)],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_routes_are_404() {
    let bench = bench(&[]);
    let api = bench.call("GET", "/api/nothing", None).await;
    assert_eq!(api.status, StatusCode::NOT_FOUND);
    assert!(api.json()["error"].as_str().is_some_and(|e| e.contains("/api/nothing")));
    let page = bench.call("GET", "/assets/nothing.js", None).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
}
