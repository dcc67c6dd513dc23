//! What the front end hands the workbench: the folder, the address, the limits, and the
//! factory that builds sessions. Input: values the command line decided. Output: a [`Config`].
//! It reads nothing itself.

use eqm::Session;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The texts of one session: the user's file (the one being edited, by its path below the
/// folder), the folder's other model files it needs (library files, as if the folder were on
/// `EQMPATH`), the model asked for, and the reader of the data files its models name (the
/// workbench's, which reads only below the folder), for the factory to give the session.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub files: Vec<(String, String)>,
    pub library: Vec<(String, String)>,
    pub model: Option<String>,
    pub data: Option<Arc<dyn eqm::ReadData>>,
}

/// Builds a session from texts exactly as the front end's `check` command would (with its
/// library directories, external C linker and tree cache); a system-dynamics file among
/// `files` is imported by its extension.
pub type SessionFactory = Arc<dyn Fn(&Sources) -> Session + Send + Sync>;

/// A factory of sessions with the embedded standard library only and the sources' data reader,
/// for tests and front ends without library directories.
pub fn plain_sessions() -> SessionFactory {
    Arc::new(|sources: &Sources| {
        let files = sources
            .files
            .iter()
            .map(|(name, text)| (name.clone(), text.clone().into_bytes()))
            .collect();
        let model = sources.model.as_deref();
        Session::with_libraries_reading_data(Vec::new(), files, &sources.library, None, sources.data.clone(), model)
    })
}

/// The workbench's configuration; see the module documentation.
#[derive(Clone)]
pub struct Config {
    /// The folder served: every file read or written is below it.
    pub root: PathBuf,
    pub sessions: SessionFactory,
    /// The address to listen on (loopback by default).
    pub host: IpAddr,
    /// The port; `None` tries the default port and the ones after it, `Some(0)` any free one.
    pub port: Option<u16>,
    /// Whether the host was chosen by the user: then the `Host` header is not checked, since
    /// the server is reached under names it cannot know.
    pub host_given: bool,
    /// The longest a run may take before it is stopped.
    pub run_limit: Duration,
    /// The most rows a run returns.
    pub max_rows: usize,
}

impl Config {
    /// The configuration of serving `root` on the loopback interface at the default port, with
    /// the default limits (60 s and 200000 rows a run).
    pub fn new(root: impl Into<PathBuf>, sessions: SessionFactory) -> Config {
        Config {
            root: root.into(),
            sessions,
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: None,
            host_given: false,
            run_limit: Duration::from_secs(60),
            max_rows: 200_000,
        }
    }
}
