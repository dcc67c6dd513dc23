//! The folder's model files: the path rule (a path is relative, `/`-separated, and stays below
//! the folder after resolving symbolic links), the listing, reading, atomic writing, and what
//! each file defines. Input: paths the page sends. Output: texts, listings, or the error
//! answer (403 outside the folder, 404 for a missing file, 400 for a bad extension); and the
//! reader of the data files the models name ([`data_reader`]), bound by the same rule. It
//! deliberately reads nothing outside the folder and follows no symbolic link out of it.

use crate::json::ApiError;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The extensions of model files, each with its format's name in the API.
const FORMATS: [(&str, &str); 5] = [
    ("eqm", "eqm"),
    ("mo", "modelica"),
    ("xmile", "xmile"),
    ("stmx", "stella"),
    ("mdl", "vensim"),
];

/// The most files a listing holds.
pub(crate) const MAX_FILES: usize = 2000;

/// The format of a model file by its extension.
pub(crate) fn format_of(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1;
    FORMATS.iter().find(|(e, _)| *e == extension).map(|(_, f)| *f)
}

/// The reader of the data files a session's models name (a Vensim `GET XLS ...`, a Modelica
/// `readMatrix`): each path the model's directory makes of the name (relative to the folder,
/// as the model file's own path is) is read when, with `..` taken lexically, it stays below the
/// folder `root` (canonical) by the path rule; any other is refused as not permitted.
pub(crate) fn data_reader(root: PathBuf) -> std::sync::Arc<dyn eqm::ReadData> {
    std::sync::Arc::new(move |path: &Path| {
        let refused = || {
            let message = format!("{} is not a file below the served folder", path.display());
            std::io::Error::new(std::io::ErrorKind::PermissionDenied, message)
        };
        let mut parts: Vec<&str> = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_str().ok_or_else(refused)?),
                Component::CurDir => {}
                Component::ParentDir => {
                    parts.pop().ok_or_else(refused)?;
                }
                Component::RootDir | Component::Prefix(_) => return Err(refused()),
            }
        }
        match resolve(&root, &parts.join("/"), true) {
            Ok(real) => std::fs::read(real),
            Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => {
                Err(std::io::Error::new(std::io::ErrorKind::NotFound, e.error))
            }
            Err(_) => Err(refused()),
        }
    })
}

/// Whether the file is read as EQM or Modelica text (the others are imported).
pub(crate) fn is_text_model(path: &str) -> bool {
    matches!(format_of(path), Some("eqm" | "modelica"))
}

/// The absolute path of `relative` below the canonical folder `root`, by the path rule; with
/// `must_exist` false a file that does not exist yet is allowed (its directory must).
pub(crate) fn resolve(root: &Path, relative: &str, must_exist: bool) -> Result<PathBuf, ApiError> {
    let outside = || ApiError::forbidden(format!("`{relative}` is not a path below the served folder"));
    if relative.is_empty() || relative.contains('\\') || relative.contains('\0') {
        return Err(ApiError::bad_request(format!("`{relative}` is not a file path")));
    }
    let path = Path::new(relative);
    if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(outside());
    }
    let joined = root.join(path);
    match joined.canonicalize() {
        Ok(real) if real.starts_with(root) => Ok(real),
        Ok(_) => Err(outside()),
        Err(_) if must_exist => {
            // A dangling link, or one to a file outside that does not exist: still outside.
            if std::fs::symlink_metadata(&joined).is_ok() {
                return Err(outside());
            }
            Err(ApiError::not_found(format!("there is no file `{relative}`")))
        }
        Err(_) => {
            if std::fs::symlink_metadata(&joined).is_ok() {
                return Err(outside());
            }
            let parent = joined.parent().ok_or_else(outside)?;
            let name = joined.file_name().ok_or_else(outside)?;
            let real_parent = parent
                .canonicalize()
                .map_err(|_| ApiError::not_found(format!("the folder of `{relative}` does not exist")))?;
            if !real_parent.starts_with(root) {
                return Err(outside());
            }
            Ok(real_parent.join(name))
        }
    }
}

/// The text of the file `relative`; a file that is not UTF-8 keeps its other characters
/// (the check reports the bad bytes).
pub(crate) fn read(root: &Path, relative: &str) -> Result<String, ApiError> {
    let path = resolve(root, relative, true)?;
    if !path.is_file() {
        return Err(ApiError::not_found(format!("`{relative}` is not a file")));
    }
    let bytes = std::fs::read(&path).map_err(|e| ApiError::not_found(format!("`{relative}` cannot be read: {e}")))?;
    Ok(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Writes `text` to the model file `relative` (new or existing) atomically: into a temporary
/// file in the same directory, then renamed over it, so a reader never sees half a file.
pub(crate) fn write(root: &Path, relative: &str, text: &str) -> Result<usize, ApiError> {
    if format_of(relative).is_none() {
        return Err(ApiError::bad_request(format!(
            "`{relative}` is not a model file: only files ending in .eqm, .mo, .xmile, .stmx or .mdl are written"
        )));
    }
    let path = resolve(root, relative, false)?;
    let directory = path.parent().ok_or_else(|| ApiError::forbidden("no directory"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A random name, so that two saves of one file at once do not write into each other.
    let unique = crate::auth::new_token().map_err(ApiError::internal)?;
    let temporary = directory.join(format!(".{name}.{unique}.eqm-saving"));
    let failed = |e: std::io::Error| ApiError::internal(format!("`{relative}` cannot be written: {e}"));
    std::fs::write(&temporary, text).map_err(failed)?;
    if let Err(e) = std::fs::rename(&temporary, &path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(failed(e));
    }
    Ok(text.len())
}

/// A model file of the listing.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileEntry {
    pub path: String,
    pub format: &'static str,
    pub models: Vec<String>,
    pub error: Option<String>,
}

/// The model files below `root` (relative `/`-separated paths), sorted, at most
/// [`MAX_FILES`]; hidden directories, `target` and `node_modules` are skipped, and so is a
/// symbolic link that leads outside the folder or to a directory (which could loop).
pub(crate) fn model_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(kind) = entry.file_type() else { continue };
            let path = relative.join(&name);
            if kind.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    pending.push(path);
                }
                continue;
            }
            if kind.is_symlink() {
                let inside = entry
                    .path()
                    .canonicalize()
                    .is_ok_and(|real| real.starts_with(root) && real.is_file());
                if !inside {
                    continue;
                }
            }
            let text = path.to_string_lossy().replace('\\', "/");
            if format_of(&text).is_some() {
                found.push(text);
            }
        }
    }
    found.sort();
    found.truncate(MAX_FILES);
    found
}

/// A file's length and modification time: while they stay the same, its summary is kept.
type Stamp = (u64, Option<SystemTime>);

/// What a file defines, kept by its path while its stamp stays the same.
#[derive(Default)]
pub(crate) struct Summaries {
    kept: Mutex<HashMap<String, (Stamp, Summary)>>,
}

/// The classes a file defines: its simulable models (as `eqm check` lists them), every class
/// name (for completion and for finding the classes of the folder), or why it does not parse.
#[derive(Debug, Clone, Default)]
pub(crate) struct Summary {
    pub models: Vec<String>,
    pub top_level: Vec<String>,
    pub classes: Vec<String>,
    pub error: Option<String>,
    pub text: String,
}

impl Summaries {
    /// The summary of `relative` below `root`, parsed again only when the file changed.
    pub(crate) fn get(&self, root: &Path, relative: &str) -> Option<Summary> {
        let path = root.join(relative);
        let metadata = std::fs::metadata(&path).ok()?;
        let stamp: Stamp = (metadata.len(), metadata.modified().ok());
        {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((kept_stamp, summary)) = kept.get(relative)
                && *kept_stamp == stamp
            {
                return Some(summary.clone());
            }
        }
        let text = read(root, relative).ok()?;
        let summary = summarize(relative, text);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(relative.to_string(), (stamp, summary.clone()));
        Some(summary)
    }

    /// The listing of the folder.
    pub(crate) fn listing(&self, root: &Path) -> Vec<FileEntry> {
        model_files(root)
            .into_iter()
            .map(|path| {
                let summary = self.get(root, &path).unwrap_or_default();
                FileEntry {
                    format: format_of(&path).unwrap_or("eqm"),
                    models: summary.models,
                    error: summary.error,
                    path,
                }
            })
            .collect()
    }
}

/// Parses `text` alone (no library) for its classes.
pub(crate) fn summarize(name: &str, text: String) -> Summary {
    let mut session = eqm::Session::new();
    if is_text_model(name) {
        session.add_file(name, text.clone());
    } else if let Some(format) = eqm::SdFormat::of_file_name(name) {
        session.add_system_dynamics_file(name, text.clone(), format);
    }
    let error = session
        .diagnostics()
        .iter()
        .find(|d| d.is_error())
        .map(|d| match d.primary_span() {
            Some(span) => format!("{}: {}", session.source_map().location(span), d.message),
            None => d.message.clone(),
        });
    let mut top_level = Vec::new();
    let mut classes = Vec::new();
    for (_, file) in session.files() {
        for class in &file.classes {
            top_level.push(class.name.name.to_string());
            collect_classes(class, "", &mut classes);
        }
    }
    Summary {
        models: session.models().into_iter().map(|m| m.name).collect(),
        top_level,
        classes,
        error,
        text,
    }
}

/// Every class name of `class` and the classes nested in it, dotted.
fn collect_classes(class: &eqm::pipeline::syntax::ast::ClassDef, prefix: &str, names: &mut Vec<String>) {
    use eqm::pipeline::syntax::ast;
    let mut pending = vec![(class, prefix.to_string())];
    while let Some((class, prefix)) = pending.pop() {
        let name = format!("{prefix}{}", class.name.name);
        if let ast::ClassBody::Long { sections, .. } = &class.body {
            for section in sections {
                if let ast::Section::Elements { elements, .. } = section {
                    for element in elements {
                        if let ast::Element::Class(inner) = element {
                            pending.push((inner, format!("{name}.")));
                        }
                    }
                }
            }
        }
        names.push(name);
    }
}

/// The folder's other `.eqm` and `.mo` files that `text` needs: those defining a top-level
/// class it names (and, in turn, the files those name), as if the folder were on `EQMPATH`.
/// A file that does not parse is left out, so that a broken neighbour does not break the
/// file being edited. Each is `(path, text)`.
pub(crate) fn neighbours(summaries: &Summaries, root: &Path, path: &str, text: &str) -> Vec<(String, String)> {
    let candidates: Vec<(String, Summary)> = model_files(root)
        .into_iter()
        .filter(|p| p != path && is_text_model(p))
        .filter_map(|p| summaries.get(root, &p).map(|s| (p, s)))
        .filter(|(_, s)| s.error.is_none())
        .collect();
    // A class the edited file defines itself is its own, not a neighbour's.
    let own = summarize(path, text.to_string()).top_level;
    let mut chosen = vec![false; candidates.len()];
    let mut pending: Vec<String> = vec![text.to_string()];
    while let Some(text) = pending.pop() {
        for (k, (_, summary)) in candidates.iter().enumerate() {
            let needed = |class: &String| !own.contains(class) && mentions(&text, class);
            if !chosen[k] && summary.top_level.iter().any(needed) {
                chosen[k] = true;
                pending.push(summary.text.clone());
            }
        }
    }
    candidates
        .into_iter()
        .zip(chosen)
        .filter(|(_, chosen)| *chosen)
        .map(|((p, s), _)| (p, s.text))
        .collect()
}

/// Whether `text` holds `name` as a whole identifier.
fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}
