//! The workbench's state and its compiled models: what every handler shares ([`AppState`]:
//! the folder, the token, the factory of sessions, the counters, the runs under way), a
//! session built for a file (its text, the folder's files it needs, the model asked for), the
//! cache of compiled models keyed by a hash of path, text and model name, at most
//! [`CACHE_SIZE`], the least recently used dropped first, and [`blocking`], how a handler runs
//! library work. Input: the configuration, requests' paths and texts. Output: sessions and
//! cached [`Entry`]s. It deliberately answers no request itself.

use crate::config::{Config, SessionFactory};
use crate::files::{self, Summaries};
use crate::json::ApiError;
use eqm::{Model, Session, SourceMap};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The most compiled models kept.
pub(crate) const CACHE_SIZE: usize = 16;

/// What a request about a file names: the file, its text (the page's, or the one on disk),
/// the model.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub path: String,
    pub text: String,
    pub model: Option<String>,
}

impl Target {
    /// The target of a request: `text` when given, the file on disk otherwise (which must be
    /// below the folder).
    pub(crate) fn new(
        state: &AppState,
        path: String,
        text: Option<String>,
        model: Option<String>,
    ) -> Result<Target, ApiError> {
        if files::format_of(&path).is_none() {
            return Err(ApiError::bad_request(format!(
                "`{path}` is not a model file (.eqm, .mo, .xmile, .stmx or .mdl)"
            )));
        }
        let text = match text {
            Some(text) => {
                // The path must still be a place below the folder, even for a text not saved.
                files::resolve(&state.root, &path, false)?;
                text
            }
            None => files::read(&state.root, &path)?,
        };
        let model = model.filter(|m| !m.trim().is_empty());
        Ok(Target { path, text, model })
    }

    /// The key of the compiled model of this target.
    pub(crate) fn key(&self) -> u64 {
        let mut hasher = std::hash::DefaultHasher::new();
        (&self.path, &self.text, &self.model).hash(&mut hasher);
        hasher.finish()
    }

    /// The session of this target, built by the front end's factory with the folder's files
    /// it needs on the library path.
    pub(crate) fn session(&self, state: &AppState) -> Session {
        let library = files::neighbours(&state.summaries, &state.root, &self.path, &self.text);
        let sources = crate::Sources {
            files: vec![(self.path.clone(), self.text.clone())],
            library,
            model: self.model.clone(),
            data: Some(files::data_reader(state.root.clone())),
        };
        (state.sessions)(&sources)
    }
}

/// A compiled model in the cache.
pub(crate) struct Entry {
    pub id: String,
    pub key: u64,
    /// The model; a run holds its lock, so runs of one model take turns and each starts
    /// from the model's own values.
    pub model: Mutex<Model>,
    /// The session's sources, for the locations of the runs' diagnostics.
    pub sources: SourceMap,
    /// The answer of `/api/compile` without `cached` and `compiles`.
    pub description: Value,
}

/// The cache; see the module documentation.
#[derive(Default)]
pub(crate) struct Cache {
    entries: Vec<(u64, Arc<Entry>)>,
    by_id: HashMap<String, u64>,
    clock: u64,
}

impl Cache {
    /// The entry of `key`, marked as used now.
    pub(crate) fn by_key(&mut self, key: u64) -> Option<Arc<Entry>> {
        self.clock += 1;
        let clock = self.clock;
        let found = self.entries.iter_mut().find(|(_, e)| e.key == key)?;
        found.0 = clock;
        Some(found.1.clone())
    }

    /// The entry of `id`, marked as used now.
    pub(crate) fn by_id(&mut self, id: &str) -> Option<Arc<Entry>> {
        let key = *self.by_id.get(id)?;
        self.by_key(key)
    }

    /// Keeps `entry`, dropping the least recently used one beyond [`CACHE_SIZE`].
    pub(crate) fn insert(&mut self, entry: Arc<Entry>) {
        self.clock += 1;
        self.entries.retain(|(_, e)| e.key != entry.key);
        self.by_id.insert(entry.id.clone(), entry.key);
        self.entries.push((self.clock, entry));
        while self.entries.len() > CACHE_SIZE {
            let oldest = (0..self.entries.len()).min_by_key(|&k| self.entries[k].0).unwrap_or(0);
            let (_, dropped) = self.entries.remove(oldest);
            self.by_id.remove(&dropped.id);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Everything the handlers share.
pub(crate) struct AppState {
    /// The served folder, canonical.
    pub root: PathBuf,
    pub root_name: String,
    pub token: String,
    pub sessions: SessionFactory,
    /// Whether the user chose the host (then the `Host` header is not checked).
    pub host_given: bool,
    pub summaries: Summaries,
    cache: Mutex<Cache>,
    /// Real compilations and runs since start.
    pub compiles: AtomicUsize,
    pub runs: AtomicUsize,
    next_id: AtomicUsize,
    /// The cancel flag of each run under way, by its id.
    pub cancels: Mutex<HashMap<String, Arc<AtomicBool>>>,
    pub run_limit: Duration,
    pub max_rows: usize,
}

impl AppState {
    pub(crate) fn new(config: Config) -> Result<AppState, String> {
        let root = config
            .root
            .canonicalize()
            .map_err(|e| format!("{} is not a folder that can be served: {e}", config.root.display()))?;
        if !root.is_dir() {
            return Err(format!("{} is not a folder", config.root.display()));
        }
        let root_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string());
        Ok(AppState {
            root,
            root_name,
            token: crate::auth::new_token()?,
            sessions: config.sessions,
            host_given: config.host_given,
            summaries: Summaries::default(),
            cache: Mutex::new(Cache::default()),
            compiles: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            next_id: AtomicUsize::new(1),
            cancels: Mutex::new(HashMap::new()),
            run_limit: config.run_limit,
            max_rows: config.max_rows,
        })
    }

    pub(crate) fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new id with `prefix` (`m1`, `r7`).
    pub(crate) fn new_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

/// Runs `job` on the compiler's stack outside the async threads; a panic in it becomes 500.
pub(crate) async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let joined = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(AssertUnwindSafe(move || eqm::with_compiler_stack(job)))
    })
    .await;
    match joined {
        Ok(Ok(answer)) => answer,
        Ok(Err(panic)) => Err(ApiError::internal(panic_message(panic.as_ref()))),
        Err(e) => Err(ApiError::internal(e.to_string())),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a job of the server panicked".to_string())
}

/// The body of the requests about a file's model.
#[derive(Deserialize)]
pub(crate) struct FileRequest {
    pub path: String,
    pub text: Option<String>,
    pub model: Option<String>,
}

/// The compiled model `id` names, or 404.
pub(crate) fn entry(state: &AppState, id: &str) -> Result<Arc<Entry>, ApiError> {
    state
        .cache()
        .by_id(id)
        .ok_or_else(|| ApiError::not_found(format!("there is no compiled model `{id}`: compile again")))
}
