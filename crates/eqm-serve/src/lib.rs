//! The web workbench of `eqm serve`: an HTTP server on the loopback interface that serves the
//! page bundled into the binary (`web/`) and the JSON API the page calls (`docs/workbench-api.md`)
//! to list, read and write the model files of one folder, check, compile, run, explain, draw
//! and analyse them.
//!
//! Input: a [`Config`] from the front end: the folder, the address, and the factory of
//! sessions that builds a [`eqm::Session`] exactly as `eqm check` would (library directories,
//! the external C linker, the tree cache), so that every answer equals the command line's.
//! Output: HTTP answers; [`Server::url`] is the address with the token, which the front end
//! prints. Every model question is answered by the same library calls the commands make.
//!
//! What it deliberately does not do: it prints nothing, reads no environment and no library
//! directory (the factory does), and touches no file outside its folder: every path is checked
//! to stay below the folder after resolving symbolic links. Every request needs the token
//! printed at start; the `Host` header must name the loopback address (against DNS rebinding).

mod api;
mod auth;
mod bundle;
mod config;
mod files;
mod json;
mod models;
mod runs;
mod views;

pub use bundle::asset;
pub use config::{Config, SessionFactory, Sources, plain_sessions};

use std::net::SocketAddr;
use std::sync::Arc;

/// The default port of `eqm serve`, and how many ports after it are tried when it is taken.
pub const DEFAULT_PORT: u16 = 8742;
pub const PORTS_TRIED: u16 = 20;

/// The workbench of one folder: its state (token, compiled models, counters) and the router
/// that answers requests. Tests use the router in-process.
pub struct App {
    state: Arc<models::AppState>,
}

impl App {
    /// The workbench of `config`'s folder, with a new random token; an error when the folder
    /// is not a readable directory or the system has no random numbers.
    pub fn new(config: Config) -> Result<App, String> {
        Ok(App {
            state: Arc::new(models::AppState::new(config)?),
        })
    }

    /// The token every request must carry.
    pub fn token(&self) -> &str {
        &self.state.token
    }

    /// The router answering requests to a server bound at `bound` (the `Host` header must
    /// name it, `localhost` or `127.0.0.1` with its port, unless the configuration asked for
    /// another host).
    pub fn router(&self, bound: SocketAddr) -> axum::Router {
        api::router(self.state.clone(), bound)
    }
}

/// A bound server, not yet answering.
pub struct Server {
    listener: tokio::net::TcpListener,
    app: App,
    address: SocketAddr,
}

impl Server {
    /// Binds `config`'s address: its port, or without one [`DEFAULT_PORT`] and, when that is
    /// taken, the first free of the [`PORTS_TRIED`] ports after it. The error says why in one
    /// sentence.
    pub async fn bind(config: Config) -> Result<Server, String> {
        let host = config.host;
        let ports: Vec<u16> = match config.port {
            Some(port) => vec![port],
            None => (DEFAULT_PORT..=DEFAULT_PORT + PORTS_TRIED).collect(),
        };
        let app = App::new(config)?;
        let mut last_error = None;
        for port in ports {
            match tokio::net::TcpListener::bind(SocketAddr::new(host, port)).await {
                Ok(listener) => {
                    let address = listener.local_addr().map_err(|e| e.to_string())?;
                    return Ok(Server { listener, app, address });
                }
                Err(e) => last_error = Some((port, e)),
            }
        }
        Err(match last_error {
            Some((port, e)) => format!("cannot listen on {host}:{port}: {e}"),
            None => format!("cannot listen on {host}"),
        })
    }

    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The token every request must carry.
    pub fn token(&self) -> &str {
        self.app.token()
    }

    /// The page's address with the token, as `eqm serve` prints it.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.address, self.app.token())
    }

    /// Answers requests until `shutdown` resolves, then finishes the requests under way.
    pub async fn serve(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let router = self.app.router(self.address);
        axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await
    }
}

/// Runs the workbench of `config` until Ctrl-C (SIGINT) or SIGTERM, on a runtime of its own:
/// binds, hands the page's address with the token to `on_bound` (the front end prints it),
/// then serves. The error of a failed bind is returned before `on_bound` is called.
pub fn run(config: Config, on_bound: impl FnOnce(&Server)) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    runtime.block_on(async move {
        let server = Server::bind(config).await?;
        on_bound(&server);
        server.serve(stop_signal()).await.map_err(|e| e.to_string())
    })
}

/// Resolves at the first SIGINT (Ctrl-C) or SIGTERM.
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
