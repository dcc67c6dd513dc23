//! Everything the command line reads besides its arguments: the model files, the library
//! directories (listed and read for the library through [`FileSystemStore`]), the standard-library files of `EQM_STDLIB_DIR` that replace the
//! embedded ones, tableau files and the data files a model names. Input: paths and the
//! environment. Output: texts handed to the library (a [`Session`], a [`Method`]), or the exit
//! code of a usage error. Nothing here prints results or decides about a model.

use crate::args::{ModelArgs, RunArgs};
use crate::output;
use eqm::{Method, ModelOptions, RunSettings, Session, Tableau};
use std::path::PathBuf;
use std::process::ExitCode;

/// The session of a command on a model (`check`, `run`, ...): its files read and parsed, and the
/// options with its parameter values.
pub(crate) fn model_session(args: &ModelArgs) -> Result<(Session, ModelOptions), ExitCode> {
    let mut session = load(&args.files, args.model.as_deref(), &[], &args.libraries, args.format)?;
    // Without `--format` the session imported the system-dynamics files by their extension.
    if let Some(format) = args.format {
        for path in &args.files {
            let text = read_text(path)?;
            session.add_system_dynamics_file(&path.display().to_string(), text, format);
        }
    }
    let options = ModelOptions {
        parameters: args.params.clone(),
        ..ModelOptions::default()
    };
    Ok((session, options))
}

/// The files of the directory `EQM_STDLIB_DIR` names that replace standard-library files of
/// the same name (for library development: an edited file takes effect without rebuilding),
/// each `(file name, text)`; a file the directory lacks or that cannot be read is not
/// replaced.
fn stdlib_replacements() -> Vec<(String, String)> {
    let Some(dir) = std::env::var_os("EQM_STDLIB_DIR") else {
        return Vec::new();
    };
    let dir = PathBuf::from(dir);
    eqm::stdlib_file_names()
        .into_iter()
        .filter_map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).ok()?;
            Some((name.to_string(), text))
        })
        .collect()
}

/// The classes of the standard library for `eqm library`, with the replacements of
/// `EQM_STDLIB_DIR`.
pub(crate) fn library_classes() -> (Vec<eqm::library_doc::LibraryClass>, Vec<eqm::Diagnostic>) {
    eqm::library_doc::library_classes(&stdlib_replacements())
}

/// Reads every file and the replacements of standard-library files in `EQM_STDLIB_DIR`, and
/// parses them with the texts `typed` (each `(name, text)`, user files that do not come from
/// the file system: classes typed into the REPL). The library directories (`libraries` of
/// `--library`, then `EQMPATH`, then `MODELICAPATH`) are given to the session, which reads the
/// `.eqm` files of the `EQMPATH` directories in full and the other classes as lookups reach
/// them.
/// An unreadable file is a usage error (exit 2).
pub(crate) fn load(
    files: &[PathBuf],
    model: Option<&str>,
    typed: &[(String, String)],
    libraries: &[PathBuf],
    format: Option<eqm::SdFormat>,
) -> Result<Session, ExitCode> {
    // Bytes, not text: a file that is not UTF-8 is the model's error (E0109, at its line and
    // column), reported with the others by the library. Files of a format given explicitly
    // are imported by the caller.
    let mut user: Vec<(String, Vec<u8>)> = Vec::new();
    for path in files.iter().filter(|_| format.is_none()) {
        match std::fs::read(path) {
            Ok(bytes) => user.push((path.display().to_string(), bytes)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return Err(ExitCode::from(output::EXIT_USAGE));
            }
        }
    }
    user.extend(
        typed
            .iter()
            .map(|(name, text)| (name.clone(), text.clone().into_bytes())),
    );
    Ok(session_of(user, &[], libraries, None, model))
}

/// The session of the user files `user` and the library files `library` (each `(name, text)`)
/// with the library directories of `libraries`, `EQMPATH` and `MODELICAPATH`, the tree cache,
/// the file reader and the external C linker: what every command on a model works on.
fn session_of(
    user: Vec<(String, Vec<u8>)>,
    library: &[(String, String)],
    libraries: &[PathBuf],
    data: Option<std::sync::Arc<dyn eqm::ReadData>>,
    model: Option<&str>,
) -> Session {
    let eqmpath = std::env::var("EQMPATH").ok();
    let modelicapath = std::env::var("MODELICAPATH").ok();
    let path = eqm::LibraryPath {
        store: std::sync::Arc::new(FileSystemStore),
        directories: eqm::LibraryPath::search_order(libraries, eqmpath.as_deref(), modelicapath.as_deref()),
        eqm_file_directories: eqm::LibraryPath::eqm_file_directories(eqmpath.as_deref()),
        tree_cache: Some(std::sync::Arc::new(eqm_cc::DiskTreeCache::from_environment())),
    };
    // The data files a model names (`readMatrix`, a Vensim `GET XLS ...`) are read from the
    // file system, unless the caller (the workbench) reads them its own way.
    let data = data.unwrap_or_else(|| std::sync::Arc::new(|path: &std::path::Path| std::fs::read(path)));
    let mut session =
        Session::with_libraries_reading_data(stdlib_replacements(), user, library, Some(path), Some(data), model);
    session.set_external_linker(external_linker());
    session
}

/// The sessions of the web workbench: built from the texts it hands over exactly as `eqm
/// check FILE` builds its session from the file (a system-dynamics file imported by its
/// extension).
pub(crate) fn workbench_sessions() -> eqm_serve::SessionFactory {
    std::sync::Arc::new(|sources: &eqm_serve::Sources| {
        let user = sources
            .files
            .iter()
            .map(|(name, text)| (name.clone(), text.clone().into_bytes()))
            .collect();
        session_of(
            user,
            &sources.library,
            &[],
            sources.data.clone(),
            sources.model.as_deref(),
        )
    })
}

/// The text of a file, or the usage error (exit 2) of one that cannot be read.
pub(crate) fn read_text(path: &std::path::Path) -> Result<String, ExitCode> {
    match std::fs::read(path) {
        Ok(bytes) => {
            Ok(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            Err(ExitCode::from(output::EXIT_USAGE))
        }
    }
}

/// The file system as the library reads it.
struct FileSystemStore;

impl eqm::LibraryStore for FileSystemStore {
    fn list_dir(&self, dir: &std::path::Path) -> Result<Vec<eqm::DirEntry>, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
        Ok(entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                // A symbolic link counts as what it points to.
                let is_dir = std::fs::metadata(e.path()).map(|m| m.is_dir()).unwrap_or(false);
                Some(eqm::DirEntry { name, is_dir })
            })
            .collect())
    }

    fn read_file(&self, path: &std::path::Path) -> Result<String, String> {
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        // Library files are UTF-8 as Modelica requires; a stray byte is shown as U+FFFD
        // rather than refusing the whole library.
        Ok(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn is_file(&self, path: &std::path::Path) -> bool {
        path.is_file()
    }
}

/// How external C functions are compiled: with the compiler the environment variable `CC`
/// names (`cc` without one), the shared objects cached under `$XDG_CACHE_HOME/eqm/external-c`
/// (`~/.cache/eqm/external-c`, or the temporary directory when there is no home).
pub fn external_linker() -> eqm_cc::SystemCompiler {
    eqm_cc::SystemCompiler::from_environment()
}

/// The method `--tableau FILE` or `--solver NAME` names, if either is given; the message of a
/// usage error otherwise.
pub(crate) fn chosen_method(solver: Option<&str>, tableau: Option<&std::path::Path>) -> Result<Option<Method>, String> {
    if let Some(path) = tableau {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        return Tableau::parse(&text)
            .map(|t| Some(Method::Tableau(Box::new(t))))
            .map_err(|e| format!("{}: {e}", path.display()));
    }
    match solver {
        Some(name) => Method::parse(name).map(Some).ok_or_else(|| {
            let known: Vec<&str> = Method::NAMED.iter().map(|m| m.name()).collect();
            format!("unknown solver `{name}`; known: {}", known.join(", "))
        }),
        None => Ok(None),
    }
}

/// The settings of a run with options `run` (its variables those of `--vars`); the message of
/// a usage error for an unknown solver or an unreadable tableau.
pub(crate) fn run_settings(run: &RunArgs) -> Result<RunSettings, String> {
    // Without --solver or --tableau the model's annotation, else `auto`, chooses the method.
    let method = chosen_method(run.solver.as_deref(), run.tableau.as_deref())?;
    Ok(RunSettings {
        start: run.start,
        stop: run.stop,
        interval: run.interval,
        rtol: run.rtol,
        atol: run.atol,
        step: run.step,
        method,
        interpreter: run.interpreter,
        stabilize: run.stabilize,
        variables: run.vars.clone(),
        max_rows: run.max_rows,
        cancel: None,
        start_only: false,
    })
}
