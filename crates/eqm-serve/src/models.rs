//! The compiled models of the workbench: a session built for a file (its text, the folder's
//! files it needs, the model asked for), and the cache of compiled models keyed by a hash of
//! path, text and model name, at most [`CACHE_SIZE`], the least recently used dropped first.
//! Input: requests' paths and texts. Output: sessions and cached [`Entry`]s. It deliberately
//! runs nothing: compiling and running happen in the handlers' blocking jobs.

use crate::api::AppState;
use crate::files;
use crate::json::ApiError;
use eqm::{Model, Session, SourceMap};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

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
