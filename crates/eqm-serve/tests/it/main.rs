//! The workbench's HTTP API, end to end: the router in-process (`oneshot`) for every endpoint
//! with its successes and its errors, and one server over a real socket. Numbers are checked
//! against closed forms (the decay model's exp(-k t) and eigenvalue -k); the texts against
//! the library's own calls that the commands make.
//!
//! Families: `access` (token, cookie, Host, unknown routes), `folder` (listing, reading,
//! writing, the path rule), `checking` (check, symbols, compile errors), `running` (compile
//! cache, runs, cancel, limits, CSV), `views` (explain, diagram, analyze), `socket`.

mod access;
mod checking;
mod folder;
mod running;
mod socket;
mod views;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use eqm_serve::{App, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tower::ServiceExt;

/// The address the in-process router believes it is bound at.
const BOUND: &str = "127.0.0.1:8742";

pub(crate) const DECAY: &str = "model Decay \"Exponential decay\"
  parameter Real k(unit = \"1/s\") = 0.5 \"Decay rate\";
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
  annotation(experiment(StartTime = 0, StopTime = 2, Interval = 0.01));
end Decay;
";

/// A served folder (a new temporary directory, removed at the end) with its workbench.
pub(crate) struct Bench {
    pub dir: PathBuf,
    pub app: App,
    pub router: axum::Router,
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new empty temporary directory.
pub(crate) fn temporary_dir(what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("eqm-serve-{what}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// The text of the repository's example `name`.
pub(crate) fn example(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name))
        .expect("the example exists")
}

/// A bench serving `files` (each `(path, text)`) with the default limits.
pub(crate) fn bench(files: &[(&str, &str)]) -> Bench {
    bench_with(files, |_| {})
}

/// A bench serving `files` with the configuration changed by `configure`.
pub(crate) fn bench_with(files: &[(&str, &str)], configure: impl FnOnce(&mut Config)) -> Bench {
    let dir = temporary_dir("bench");
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("folder");
        std::fs::write(path, text).expect("file written");
    }
    let mut config = Config::new(&dir, eqm_serve::plain_sessions());
    configure(&mut config);
    let app = App::new(config).expect("the folder is served");
    let router = app.router(BOUND.parse::<SocketAddr>().expect("an address"));
    Bench { dir, app, router }
}

/// An answer: status, headers and body.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }
}

impl Bench {
    /// `method uri` with the token (as `Authorization`), the right `Host`, and `body` as JSON.
    pub(crate) async fn call(&self, method: &str, uri: &str, body: Option<Value>) -> Reply {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", BOUND)
            .header("authorization", format!("token {}", self.app.token()));
        let body = body.map(|b| Body::from(b.to_string())).unwrap_or_else(Body::empty);
        self.send(request.body(body).expect("a request")).await
    }

    /// `POST uri` with the JSON `body`, which must succeed; its JSON answer.
    pub(crate) async fn post(&self, uri: &str, body: Value) -> Value {
        let reply = self.call("POST", uri, Some(body)).await;
        assert_eq!(reply.status, StatusCode::OK, "{uri}: {}", reply.text());
        reply.json()
    }

    /// Sends `request` as it is.
    pub(crate) async fn send(&self, request: Request<Body>) -> Reply {
        let response = self.router.clone().oneshot(request).await.expect("the router answers");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("the body is read")
            .to_bytes()
            .to_vec();
        Reply { status, headers, body }
    }
}
