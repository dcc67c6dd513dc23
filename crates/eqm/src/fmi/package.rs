//! The FMU archive and the model sources it carries.
//!
//! Input: the description text, the bytes of the runtime shared object, and the model's
//! sources with their manifest. Output: the zip file of the FMU ([`fmu_archive`]), with
//! `modelDescription.xml`, `binaries/<platform>/<modelIdentifier>.so` and
//! `resources/model/...` (the model's sources and the data files it read), deflated, entries in a fixed order with a fixed timestamp (the same
//! inputs give the same bytes). [`resources_of`] gathers the sources a session compiled (the
//! user's files, every library file a lookup read and every data file the session's reader
//! read; the embedded standard library is part of the runtime and is not copied) and writes the manifest the runtime reads with
//! [`read_manifest`] to compile the same model again. Nothing here reads files.

use crate::Session;
use std::io::Write;

/// The manifest's path inside the FMU.
pub const MANIFEST_PATH: &str = "resources/model/manifest.txt";

/// The first line of every manifest.
const MANIFEST_HEADER: &str = "eqm-fmu-manifest 1";

/// What the runtime needs to compile the exported model again.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The model's full name.
    pub model: String,
    /// The EQM version that exported it.
    pub eqm_version: String,
    /// The parameter values given to the compiler at export (`ModelOptions::parameters`).
    pub parameters: Vec<(String, f64)>,
    /// The user's files: `(name the compiler knew, path inside the FMU)`, in the order given.
    pub user_files: Vec<(String, String)>,
    /// The library files the compile read, in the order read, likewise.
    pub library_files: Vec<(String, String)>,
    /// The data files the compile read (`readMatrix`, `Streams.readLine`, ...): `(path the
    /// compiler asked for, path inside the FMU)`; the runtime's file reader serves each path
    /// from the FMU.
    pub data_files: Vec<(String, String)>,
    /// For a model imported from a system-dynamics file: each result column's `.eqm` name and
    /// its name in the file, which the FMU's variables are named by (the runtime gives them to
    /// a model it compiles from the `.eqm` text).
    pub source_names: Vec<(String, String)>,
}

/// A manifest that cannot be read: the line (one-based) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "manifest line {}: {}", self.line, self.message)
    }
}

impl Manifest {
    /// The manifest as text: a header line, then one `key<TAB>value...` line per entry
    /// (`model`, `eqm-version`, `parameter NAME VALUE`, `user NAME PATH`, `library NAME PATH`,
    /// `data NAME PATH`, `source-name EQM-NAME NAME`),
    /// tabs separating the fields (names hold no tabs or line breaks: they are escaped as
    /// `\t`, `\n` and `\\`). Numbers are written so that they read back to the same value.
    pub fn to_text(&self) -> String {
        let mut text = format!("{MANIFEST_HEADER}\n");
        let mut line = |fields: &[&str]| {
            let escaped: Vec<String> = fields.iter().map(|f| escape(f)).collect();
            text.push_str(&escaped.join("\t"));
            text.push('\n');
        };
        line(&["model", &self.model]);
        line(&["eqm-version", &self.eqm_version]);
        for (name, value) in &self.parameters {
            line(&["parameter", name, &format!("{value:?}")]);
        }
        for (name, path) in &self.user_files {
            line(&["user", name, path]);
        }
        for (name, path) in &self.library_files {
            line(&["library", name, path]);
        }
        for (name, path) in &self.data_files {
            line(&["data", name, path]);
        }
        for (path, name) in &self.source_names {
            line(&["source-name", path, name]);
        }
        text
    }
}

fn escape(field: &str) -> String {
    field.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n")
}

fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Reads a manifest written by [`Manifest::to_text`].
pub fn read_manifest(text: &str) -> Result<Manifest, ManifestError> {
    let error = |line: usize, message: String| ManifestError { line, message };
    let mut lines = text.lines().enumerate().map(|(k, l)| (k + 1, l));
    match lines.next() {
        Some((_, MANIFEST_HEADER)) => {}
        _ => return Err(error(1, format!("the first line must be `{MANIFEST_HEADER}`"))),
    }
    let mut manifest = Manifest {
        model: String::new(),
        eqm_version: String::new(),
        parameters: Vec::new(),
        user_files: Vec::new(),
        library_files: Vec::new(),
        data_files: Vec::new(),
        source_names: Vec::new(),
    };
    for (number, line) in lines {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<String> = line.split('\t').map(unescape).collect();
        let field = |k: usize| {
            fields
                .get(k)
                .cloned()
                .ok_or_else(|| error(number, format!("`{}` needs {} fields", fields[0], k + 1)))
        };
        match fields[0].as_str() {
            "model" => manifest.model = field(1)?,
            "eqm-version" => manifest.eqm_version = field(1)?,
            "parameter" => {
                let value = field(2)?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| error(number, format!("`{value}` is not a number")))?;
                manifest.parameters.push((field(1)?, value));
            }
            "user" => manifest.user_files.push((field(1)?, field(2)?)),
            "library" => manifest.library_files.push((field(1)?, field(2)?)),
            "data" => manifest.data_files.push((field(1)?, field(2)?)),
            "source-name" => manifest.source_names.push((field(1)?, field(2)?)),
            other => return Err(error(number, format!("unknown entry `{other}`"))),
        }
    }
    if manifest.model.is_empty() {
        return Err(error(1, "the manifest names no model".to_string()));
    }
    Ok(manifest)
}

/// The sources `session` compiled and the data files its reader read, as FMU resources under
/// `resources/model/` (each `(path inside the FMU, bytes)`, the manifest first), for `model`
/// compiled with `parameters`.
pub fn resources_of(session: &Session, model: &str, parameters: &[(String, f64)]) -> Vec<(String, Vec<u8>)> {
    let map = session.source_map();
    let mut resources = Vec::new();
    let mut store = |kind: &str, k: usize, name: &str, text: &str| {
        // The stored name keeps the file's own name after a number that makes it unique.
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let path = format!("resources/model/{kind}/{k}_{base}");
        resources.push((path.clone(), text.as_bytes().to_vec()));
        (name.to_string(), path)
    };
    let user_files: Vec<(String, String)> = session
        .files()
        .iter()
        .enumerate()
        .map(|(k, (id, _))| {
            // An imported system-dynamics file travels as itself: the runtime imports it again.
            let file = map.get(*id);
            let file = session
                .imported_from(&file.name)
                .map_or(file, |original| map.get(original));
            store("user", k, &file.name, &file.text)
        })
        .collect();
    let library_files: Vec<(String, String)> = session
        .library_file_ids()
        .into_iter()
        .map(|id| map.get(id))
        // The predefined classes and the embedded standard library are part of the runtime.
        .filter(|file| !file.name.starts_with('<'))
        .enumerate()
        .map(|(k, file)| store("library", k, &file.name, &file.text))
        .collect();
    let data_files: Vec<(String, String)> = session
        .data_files_read()
        .iter()
        .enumerate()
        .map(|(k, (path, text))| store("data", k, &path.to_string_lossy(), text))
        .collect();
    let manifest = Manifest {
        model: model.to_string(),
        eqm_version: env!("CARGO_PKG_VERSION").to_string(),
        parameters: parameters.to_vec(),
        user_files,
        library_files,
        data_files,
        source_names: session.source_names_of(model).to_vec(),
    };
    resources.insert(0, (MANIFEST_PATH.to_string(), manifest.to_text().into_bytes()));
    resources
}

/// The platform directory under `binaries/` and the shared-object extension of a platform
/// (`"x86_64-linux"`, `"aarch64-darwin"`, `"x86_64-windows"`, ...) in FMI `version`; `None` for
/// a platform FMI names no directory for.
pub fn platform_dir(version: crate::fmi::FmiVersion, platform: &str) -> Option<(&'static str, &'static str)> {
    use crate::fmi::FmiVersion::{Fmi2, Fmi3};
    let found = match (version, platform) {
        (Fmi2, "x86_64-linux") => ("linux64", "so"),
        (Fmi2, "x86-linux") => ("linux32", "so"),
        (Fmi2, "x86_64-windows") => ("win64", "dll"),
        (Fmi2, "x86-windows") => ("win32", "dll"),
        (Fmi2, "x86_64-darwin" | "aarch64-darwin") => ("darwin64", "dylib"),
        (Fmi3, "x86_64-linux") => ("x86_64-linux", "so"),
        (Fmi3, "aarch64-linux") => ("aarch64-linux", "so"),
        (Fmi3, "x86-linux") => ("x86-linux", "so"),
        (Fmi3, "x86_64-windows") => ("x86_64-windows", "dll"),
        (Fmi3, "x86-windows") => ("x86-windows", "dll"),
        (Fmi3, "x86_64-darwin") => ("x86_64-darwin", "dylib"),
        (Fmi3, "aarch64-darwin") => ("aarch64-darwin", "dylib"),
        _ => return None,
    };
    Some(found)
}

/// The FMU: `modelDescription.xml`, the runtime as `binaries/<dir>/<model_identifier>.<ext>` for
/// each `(dir, ext)` of `platforms` (from [`platform_dir`]), and `resources` (each `(path inside
/// the FMU, bytes)`), deflated, in that order, every entry dated 1980-01-01 00:00.
pub fn fmu_archive(
    description: &str,
    runtime: &[u8],
    model_identifier: &str,
    platforms: &[(&str, &str)],
    resources: &[(String, Vec<u8>)],
) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let mut add = |path: &str, bytes: &[u8], mode: u32| -> Result<(), String> {
        zip.start_file(path, options.unix_permissions(mode))
            .map_err(|e| format!("cannot add {path} to the FMU: {e}"))?;
        zip.write_all(bytes)
            .map_err(|e| format!("cannot add {path} to the FMU: {e}"))
    };
    add("modelDescription.xml", description.as_bytes(), 0o644)?;
    for (dir, ext) in platforms {
        add(&format!("binaries/{dir}/{model_identifier}.{ext}"), runtime, 0o755)?;
    }
    for (path, bytes) in resources {
        add(path, bytes, 0o644)?;
    }
    let cursor = zip.finish().map_err(|e| format!("cannot write the FMU: {e}"))?;
    Ok(cursor.into_inner())
}
