//! The model inside an FMU: its sources read from the FMU's `resources/` folder and compiled
//! again, exactly as the export compiled them.
//!
//! Input: the resource location an importer passes at instantiation (FMI 2: a `file:` URI; FMI 3:
//! a path) and the GUID or instantiation token it read from the model description. Output: a function that compiles the model (called
//! at instantiation and again at reset), or the reason it cannot: a location that is no
//! directory, a manifest that cannot be read, a model that does not compile, or a GUID other
//! than the one the compiled model gives (the FMU's files do not belong together). The data
//! files the model read when it was exported (`readMatrix`, `Streams.readLine`, ...) are in the
//! resources too: the compiler's file reader serves exactly those, by the paths the compiler
//! asked for at export, and no other file (one the export did not find is not found here
//! either), so the model compiles with the files it was exported with wherever the FMU runs. It
//! deliberately runs nothing.

use eqm::fmi::{FmiVersion, MANIFEST_PATH, Manifest, instantiation_token, read_manifest};
use eqm::{Model, ModelOptions, Session, SourceMap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A function that compiles the FMU's model afresh: the model, with the sources its
/// diagnostics point into.
pub type Compile = Box<dyn Fn() -> Result<(Model, SourceMap), String> + Send>;

/// Reads the model of the FMU whose resources are at `location` and checks it against `guid`
/// (FMI 2's GUID or FMI 3's instantiation token, as `version` computes it).
pub fn model_compiler(location: &str, guid: &str, version: FmiVersion) -> Result<Compile, String> {
    let resources = resource_directory(location)?;
    let manifest_path = resources.join(MANIFEST_PATH.strip_prefix("resources/").unwrap_or(MANIFEST_PATH));
    let text = read(&manifest_path)?;
    let manifest = read_manifest(&text).map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let sources = Sources::read(&resources, &manifest)?;
    let compile = move || sources.compile();
    let (model, _) = compile()?;
    let token = instantiation_token(&model, version);
    if token != guid {
        return Err(format!(
            "the GUID {guid} given is not the model's {token}: the model description and the model's sources are not from one export"
        ));
    }
    Ok(Box::new(compile))
}

/// The texts of an FMU's model and how to compile them.
struct Sources {
    model: String,
    parameters: Vec<(String, f64)>,
    user: Vec<(String, String)>,
    library: Vec<(String, String)>,
    /// The data files by the path the compiler asks for, with their texts.
    data: std::sync::Arc<BTreeMap<PathBuf, String>>,
    /// The names of an imported system-dynamics file's variables (see [`Manifest`]).
    source_names: Vec<(String, String)>,
}

impl Sources {
    /// The files `manifest` names, read from `resources`.
    fn read(resources: &Path, manifest: &Manifest) -> Result<Sources, String> {
        let texts = |files: &[(String, String)]| -> Result<Vec<(String, String)>, String> {
            files
                .iter()
                .map(|(name, path)| {
                    let inside = path.strip_prefix("resources/").unwrap_or(path);
                    Ok((name.clone(), read(&resources.join(inside))?))
                })
                .collect()
        };
        Ok(Sources {
            model: manifest.model.clone(),
            parameters: manifest.parameters.clone(),
            user: texts(&manifest.user_files)?,
            library: texts(&manifest.library_files)?,
            data: std::sync::Arc::new(
                texts(&manifest.data_files)?
                    .into_iter()
                    .map(|(path, text)| (PathBuf::from(path), text))
                    .collect(),
            ),
            source_names: manifest.source_names.clone(),
        })
    }

    /// The compiled model with its sources, or the rendered diagnostics of why it does not
    /// compile.
    fn compile(&self) -> Result<(Model, SourceMap), String> {
        let mut session = Session::with_sources(&self.user, &self.library, Some(&self.model));
        let data = self.data.clone();
        session.set_data_reader(move |path: &Path| {
            data.get(path).map(|text| text.clone().into_bytes()).ok_or_else(|| {
                let message = format!("{} is not among the data files of the FMU", path.display());
                std::io::Error::new(std::io::ErrorKind::NotFound, message)
            })
        });
        let options = ModelOptions {
            parameters: self.parameters.clone(),
            ..ModelOptions::default()
        };
        match session.compile(Some(&self.model), &options) {
            // A model compiled from the `.eqm` text of an imported file is named as the file
            // names its variables, as it was at export.
            Some(model) if !self.source_names.is_empty() => Ok((
                model.with_source_names(self.source_names.clone()),
                session.source_map().clone(),
            )),
            Some(model) => Ok((model, session.source_map().clone())),
            None => Err(session.render_diagnostics(false)),
        }
    }
}

/// The directory a `file:` URI (`file:///dir`, `file:/dir`, percent-encoded) or a plain path
/// names.
fn resource_directory(location: &str) -> Result<PathBuf, String> {
    let path = match location.strip_prefix("file://") {
        Some(rest) => rest.strip_prefix("localhost").unwrap_or(rest),
        None => location.strip_prefix("file:").unwrap_or(location),
    };
    let path = percent_decoded(path).ok_or_else(|| format!("the resource location `{location}` is not a valid URI"))?;
    let dir = PathBuf::from(path);
    if !dir.is_dir() {
        return Err(format!(
            "the resource location `{location}` is not a directory: the FMU's `resources` folder is needed to load the model"
        ));
    }
    Ok(dir)
}

/// `text` with every `%XX` replaced by its byte; `None` when that is not UTF-8 or an escape is
/// broken.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%' {
            let hex = std::str::from_utf8(bytes.get(k + 1..k + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            k += 3;
        } else {
            out.push(bytes[k]);
            k += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}
