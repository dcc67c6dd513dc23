//! A compilation session: the sources of one run of a front end and every stage's product on
//! request.
//!
//! Input: source texts the front end read (files, an editor buffer, a string in a test) and
//! the library files it found. Output: the parsed sources, the list of models, the flat model,
//! the structural analysis, the text of `explain`, the component diagram, and a compiled
//! [`Model`]; every diagnostic and each stage's wall time are kept in the session. Nothing here
//! reads files or prints.

mod sd_import;

use crate::model::Model;
use crate::modes::Modes;
use crate::run::{RunError, RunSettings};
use eqm_compile::analysis::{self, Analysis, AnalysisOptions, IndexForm};
use eqm_compile::modes::{self, VariableStructure};
use eqm_compile::zero_coefficients::{DroppedOccurrence, drop_zero_coefficients};
use eqm_diag::Diagnostic;
use eqm_diag::source::ReadData;
use eqm_diag::source::{FileId, SourceMap};
use eqm_diag::timing::Timings;
use eqm_flatten::Sources;
use eqm_flatten::diagram::Diagram;
use eqm_flatten::library::{Libraries, LibraryStore};
use eqm_ir::external::LinkExternal;
use eqm_ir::flat::FlatModel;
use eqm_syntax::TreeCache;
use eqm_syntax::ast;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Library directories and the store that reads them, for [`Session::with_libraries`].
#[derive(Debug, Clone)]
pub struct LibraryPath {
    /// How directories are listed and files read (the file system, in a front end).
    pub store: Arc<dyn LibraryStore>,
    /// The directories in search order: each holds top-level packages, or is a package
    /// directory, or is a single-file package.
    pub directories: Vec<PathBuf>,
    /// Directories whose `.eqm` files (those directly inside, in name order) are library files
    /// read in full when the session is made: those of `EQMPATH`
    /// ([`LibraryPath::eqm_file_directories`]).
    pub eqm_file_directories: Vec<PathBuf>,
    /// Where the syntax trees of the files read are kept between runs (the binary keeps them on
    /// disk), so that an unchanged file is not parsed again; without one, every file read is
    /// parsed.
    pub tree_cache: Option<Arc<dyn TreeCache>>,
}

impl LibraryPath {
    /// The library directories in the order every front end searches them: those the user
    /// named (`--library`, `libraries=`), then those of `EQMPATH`, then those of
    /// `MODELICAPATH`. The two variables' values are given as the front end read them from its
    /// environment: lists separated by the platform's path separator, empty entries skipped.
    pub fn search_order(named: &[PathBuf], eqmpath: Option<&str>, modelicapath: Option<&str>) -> Vec<PathBuf> {
        let mut directories = named.to_vec();
        directories.extend(path_list(eqmpath));
        directories.extend(path_list(modelicapath));
        directories
    }

    /// The directories whose `.eqm` files are read in full, as every front end reads them:
    /// those of the value of `EQMPATH` (EQM's own libraries keep whole packages in one file).
    pub fn eqm_file_directories(eqmpath: Option<&str>) -> Vec<PathBuf> {
        path_list(eqmpath)
    }

    /// The `.eqm` files directly inside [`LibraryPath::eqm_file_directories`], each `(path,
    /// text)`, in name order within each directory (so the library is the same whatever order
    /// a directory is listed in). A directory that cannot be listed is already a warning of
    /// the library directories (W0240); a file that cannot be read is left out.
    fn eqm_files(&self) -> Vec<(String, String)> {
        let mut files = Vec::new();
        for dir in &self.eqm_file_directories {
            let Ok(entries) = self.store.list_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .into_iter()
                .filter(|e| !e.is_dir && e.name.ends_with(".eqm"))
                .map(|e| e.name)
                .collect();
            names.sort();
            for name in names {
                let path = dir.join(name);
                if let Ok(text) = self.store.read_file(&path) {
                    files.push((path.display().to_string(), text));
                }
            }
        }
        files
    }
}

/// The directories of a search-path value (separated by the platform's path separator, empty
/// entries skipped).
fn path_list(value: Option<&str>) -> Vec<PathBuf> {
    let separator = if cfg!(windows) { ';' } else { ':' };
    value
        .into_iter()
        .flat_map(|v| v.split(separator))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// How to turn a model into its products.
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// Parameter values given before flattening (`--param NAME=VALUE`): they may be
    /// structural (array sizes, for ranges), and they are the defaults of every run.
    pub parameters: Vec<(String, f64)>,
    /// Keep alias equations (`a = b`) in the analysis, to see every equation as written.
    pub keep_aliases: bool,
    /// The form a high-index model is simulated in.
    pub index_form: IndexForm,
}

impl ModelOptions {
    /// These options as the model analysis needs them: an index-reduced model in its
    /// dummy-derivative form, whose states are those of a state-space form (the embedding
    /// form's projection would add eigenvalues of its own).
    pub fn for_analysis(&self) -> ModelOptions {
        ModelOptions {
            index_form: IndexForm::Dummy,
            ..self.clone()
        }
    }

    fn flatten_options(&self) -> eqm_flatten::Options {
        eqm_flatten::Options {
            parameters: self.parameters.clone(),
            ..eqm_flatten::Options::default()
        }
    }
}

/// A model a user can choose: a class of the user's files, with its description string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The dotted name `--model` takes.
    pub name: String,
    /// `model`, `block` or `class`.
    pub kind: &'static str,
    pub description: Option<String>,
}

/// What `check` reports about a model that has no errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSummary {
    pub model: String,
    pub variables: usize,
    pub equations: usize,
    /// The if-equations of the user's own files (not of libraries) whose branch was chosen at
    /// translation because their conditions are parameter expressions, each in words with its
    /// location: `if-equation at m.eqm:6:3:
    /// branch 2 (else) chosen at translation because `useX` = false`.
    pub branch_choices: Vec<String>,
    /// The unknowns the structural analysis does not count in an equation because their
    /// coefficient is zero by the parameters' values at translation, one sentence per equation
    /// with its location: `m.eqm:7:3: `a` dropped from `J*a = f` ...`.
    pub zero_coefficients: Vec<String>,
}

/// The sources of one compilation and everything found about them; see the module
/// documentation.
#[derive(Debug, Default)]
pub struct Session {
    sources: Sources,
    diagnostics: Vec<Diagnostic>,
    timings: Timings,
    /// Whether a source file has a syntax error: no model of it is flattened then (the parser
    /// recovered, so the syntax tree is not what the user wrote).
    source_errors: bool,
    /// The model imported from a system-dynamics file, if one was (see `sd_import`): its
    /// class name and its result columns, each the `.eqm` name and the file's name.
    pub(crate) imported: Option<(String, Vec<(String, String)>)>,
    /// For each user file that is the `.eqm` text of an imported system-dynamics file, by its
    /// name, the file it was imported from: an exported FMU carries that file, so that its
    /// runtime imports it again exactly as this session did.
    pub(crate) imported_from: Vec<(String, FileId)>,
    /// For each such file, by its name, where each name it declares comes from in the
    /// imported file: a diagram's boxes point there rather than into the generated text.
    pub(crate) imported_origins: Vec<(String, std::collections::HashMap<String, eqm_diag::source::Span>)>,
    /// The data files the file reader read, by the path asked for, with their texts.
    data_files_read: Arc<DataFilesRead>,
    /// How the data files the models name are read, for a system-dynamics file (Vensim's
    /// `GET XLS ...`) as for Modelica (`readMatrix`): the one reader the front end gave
    /// ([`Session::with_libraries_reading_data`], [`Session::set_data_reader`]).
    pub(crate) data_reader: Option<Arc<dyn ReadData>>,
}

/// The data files a session's reader read: what an exported FMU carries, so that its runtime
/// compiles the model with the same files.
type DataFilesRead = std::sync::Mutex<std::collections::BTreeMap<PathBuf, String>>;

/// The reader the Modelica data files go through: the front end's, keeping each text file it
/// read (a file that is not UTF-8 is refused by the flattener, so there is no text to keep).
struct RecordingReader {
    reader: Arc<dyn ReadData>,
    read: Arc<DataFilesRead>,
}

impl ReadData for RecordingReader {
    fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        let bytes = self.reader.read(path)?;
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
            read.insert(path.to_path_buf(), text.to_string());
        }
        Ok(bytes)
    }
}

impl Session {
    /// A session without any source, not even the standard library.
    pub fn new() -> Session {
        Session::default()
    }

    /// A session with the user's `files` and `library` files (each `(name, text)`), and the
    /// standard library, whose packages are parsed as lookups reach them. The model to be
    /// compiled (`_model`) is named by the calls that compile it; it is not needed here.
    pub fn with_sources(files: &[(String, String)], library: &[(String, String)], _model: Option<&str>) -> Session {
        let mut session = Session::new();
        // A system-dynamics file is imported first and stands as its `.eqm` text from here on.
        let imported;
        let files = if files
            .iter()
            .any(|(name, _)| eqm_sd::Format::of_file_name(name).is_some())
        {
            let bytes = files.iter().map(|(n, t)| (n.clone(), t.clone().into_bytes())).collect();
            imported = session
                .import_system_dynamics_files(bytes)
                .into_iter()
                .map(|(n, b)| (n, String::from_utf8_lossy(&b).into_owned()))
                .collect::<Vec<_>>();
            imported.as_slice()
        } else {
            files
        };
        session.add_embedded_stdlib_lazily();
        for (name, text) in library {
            session.add_library_file(name.clone(), text.clone());
        }
        for (name, text) in files {
            session.add_file(name.clone(), text.clone());
        }
        session
    }

    /// A session like [`Session::with_sources`], for user files read as bytes: a file that is
    /// not valid UTF-8 gets diagnostic E0109 at each invalid sequence (see
    /// [`Session::add_file_bytes`]) instead of being refused as a whole.
    pub fn with_source_bytes(
        files: Vec<(String, Vec<u8>)>,
        library: &[(String, String)],
        model: Option<&str>,
    ) -> Session {
        Session::with_stdlib_replaced(Vec::new(), files, library, model)
    }

    /// A session like [`Session::with_source_bytes`] whose standard-library files named in
    /// `stdlib` (each `(file name, text)`, such as `("Mechanics.eqm", ...)`) are replaced by
    /// the texts given: for library development, where an edited file takes effect without
    /// rebuilding EQM. A file of another name is ignored.
    pub fn with_stdlib_replaced(
        stdlib: Vec<(String, String)>,
        files: Vec<(String, Vec<u8>)>,
        library: &[(String, String)],
        model: Option<&str>,
    ) -> Session {
        Session::with_libraries(stdlib, files, library, None, model)
    }

    /// A session like [`Session::with_stdlib_replaced`] that also finds classes in library
    /// directories stored as Modelica stores packages (`Name/package.mo`, `Name.mo`; see
    /// [`eqm_flatten::library`]), each read through `libraries`' store only when a lookup
    /// reaches it. The directories are searched in the order given, and a top-level package
    /// they hold replaces the embedded package of that name entirely (the real `Modelica`
    /// replaces EQM's own); without one the embedded package remains. The `.eqm` files of the
    /// path's [`LibraryPath::eqm_file_directories`] are read in full, before `library`.
    pub fn with_libraries(
        stdlib: Vec<(String, String)>,
        files: Vec<(String, Vec<u8>)>,
        library: &[(String, String)],
        libraries: Option<LibraryPath>,
        model: Option<&str>,
    ) -> Session {
        Session::with_libraries_reading_data(stdlib, files, library, libraries, None, model)
    }

    /// A session like [`Session::with_libraries`] whose models read the data files they name
    /// through `data`, such as `|path| std::fs::read(path)` in a front end that reads the file
    /// system: the way every front end gives its reader. A system-dynamics file reads through
    /// it while it is imported here (Vensim's `GET XLS ...`, relative to the model file's
    /// directory), and Modelica models when they are flattened (`readMatrix`, `readLine`,
    /// relative to their source file's directory). Without one, such a model is reported as
    /// unable to read them.
    pub fn with_libraries_reading_data(
        stdlib: Vec<(String, String)>,
        files: Vec<(String, Vec<u8>)>,
        library: &[(String, String)],
        libraries: Option<LibraryPath>,
        data: Option<Arc<dyn ReadData>>,
        _model: Option<&str>,
    ) -> Session {
        let mut session = Session::new();
        if let Some(data) = data {
            session.set_shared_data_reader(data);
        }
        session.sources.stdlib_replacements = stdlib;
        // The `.eqm` files of the library directories come first among the library files.
        let mut library_files = libraries.as_ref().map(LibraryPath::eqm_files).unwrap_or_default();
        library_files.extend_from_slice(library);
        let library = library_files.as_slice();
        if let Some(path) = libraries {
            session.sources.tree_cache = path.tree_cache.clone();
            let (found, mut warnings) = Libraries::new(path.store, &path.directories);
            session.sources.libraries = found;
            session.diagnostics.append(&mut warnings);
        }
        // A system-dynamics file is imported first and stands as its `.eqm` text from here on.
        let files = session.import_system_dynamics_files(files);
        session.add_embedded_stdlib_lazily();
        for (name, text) in library {
            session.add_library_file(name.clone(), text.clone());
        }
        for (name, bytes) in files {
            session.add_file_bytes(name, bytes);
        }
        session
    }

    /// The number of files of library directories read so far (each read once, when a lookup
    /// first reached its class).
    pub fn library_files_read(&self) -> usize {
        self.sources.libraries.files_read()
    }

    /// Parses a user file given as bytes. Each maximal sequence of bytes that is not UTF-8
    /// becomes one replacement character `\u{FFFD}` in the text kept for excerpts, with an
    /// E0109 diagnostic at its line and column; the file is parsed as that text, without the
    /// invalid-character error the lexer would add at the same place.
    pub fn add_file_bytes(&mut self, name: impl Into<String>, bytes: Vec<u8>) -> FileId {
        let (text, invalid) = match String::from_utf8(bytes) {
            Ok(text) => (text, Vec::new()),
            Err(e) => replace_invalid_utf8(e.as_bytes()),
        };
        let before = self.diagnostics.len();
        let id = self.add_file(name, text);
        if invalid.is_empty() {
            return id;
        }
        let replaced = |d: &Diagnostic| {
            d.code == "E0101"
                && d.primary_span()
                    .is_some_and(|s| s.file == id && invalid.contains(&(s.start as usize)))
        };
        let mut kept: Vec<Diagnostic> = self.diagnostics.drain(before..).filter(|d| !replaced(d)).collect();
        // One diagnostic for the file, at its first invalid sequence: a binary file would
        // otherwise give one per few bytes.
        let start = invalid[0];
        let mut d = Diagnostic::error(
            "E0109",
            "this file is not valid UTF-8",
            eqm_diag::source::Span::new(id, start, start + '\u{FFFD}'.len_utf8()),
            "bytes that are not UTF-8 (shown as \u{FFFD})",
        )
        .with_help("save the file as UTF-8");
        if invalid.len() > 1 {
            d = d.with_note(format!(
                "{} more places in the file are not UTF-8 either",
                invalid.len() - 1
            ));
        }
        kept.push(d);
        self.diagnostics.append(&mut kept);
        id
    }

    /// Parses a user file and keeps its syntax tree and diagnostics.
    pub fn add_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = self.timings.time("parse", || self.sources.add_file(name, text));
        self.take_source_diagnostics();
        id
    }

    /// Parses a library file (a file of a library directory).
    pub fn add_library_file(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.timings.time("parse", || self.sources.add_library_file(name, text));
        self.take_source_diagnostics();
    }

    /// Adds every package of the standard library compiled into EQM.
    pub fn add_embedded_stdlib(&mut self) {
        self.timings.time("parse", || self.sources.add_embedded_stdlib());
        self.take_source_diagnostics();
    }

    /// Makes the standard library compiled into EQM available, each package parsed only when
    /// a lookup first reaches it: a model parses only the packages it uses (see
    /// [`Sources::add_embedded_stdlib_lazily`]). Calling it again changes nothing.
    pub fn add_embedded_stdlib_lazily(&mut self) {
        self.sources.add_embedded_stdlib_lazily();
    }

    /// Takes the diagnostics of adding (parsing) sources.
    fn take_source_diagnostics(&mut self) {
        self.source_errors |= eqm_diag::has_errors(&self.sources.diagnostics);
        self.take_stage_diagnostics();
    }

    /// Takes the diagnostics of a stage run on the sources (flattening).
    fn take_stage_diagnostics(&mut self) {
        self.diagnostics.append(&mut self.sources.diagnostics);
    }

    /// Gives a session made without one the reader of the data files its models name
    /// (`readMatrix`, the text files of `Streams.readLine`, `countLines` and `Files.exist`),
    /// such as a closure that returns bytes in a test. A system-dynamics file is imported when
    /// its session is made, so its data files need the reader given there
    /// ([`Session::with_libraries_reading_data`]).
    pub fn set_data_reader(&mut self, reader: impl ReadData + 'static) {
        self.set_shared_data_reader(Arc::new(reader));
    }

    /// [`Session::set_data_reader`] with a reader the caller keeps a handle on.
    pub fn set_shared_data_reader(&mut self, reader: Arc<dyn ReadData>) {
        self.data_reader = Some(reader.clone());
        self.sources.reader = Some(Arc::new(RecordingReader {
            reader,
            read: self.data_files_read.clone(),
        }));
    }

    /// The data files the session's reader has read so far (by the path the compiler asked
    /// for, with their texts, in the order of the paths): those the models compiled in this
    /// session named, which an FMU of them carries.
    pub fn data_files_read(&self) -> Vec<(PathBuf, String)> {
        let read = self.data_files_read.lock().unwrap_or_else(|e| e.into_inner());
        read.iter().map(|(path, text)| (path.clone(), text.clone())).collect()
    }

    /// Gives the session the way to compile and link external C functions, such as
    /// `eqm_cc::SystemCompiler` in a front end that may run the system C compiler. Without one,
    /// a model calling an external function other than one of the C math library's is rejected
    /// (`E0325`) when it is flattened, so `check` never accepts a model whose functions cannot
    /// be called.
    pub fn set_external_linker(&mut self, linker: impl LinkExternal + 'static) {
        self.sources.linker = Some(std::sync::Arc::new(linker));
    }

    /// [`Session::set_external_linker`] with a linker shared by several sessions, so that a
    /// library it loaded once serves them all.
    pub fn set_shared_external_linker(&mut self, linker: Arc<dyn LinkExternal>) {
        self.sources.linker = Some(linker);
    }

    /// The sources, for the library's own tools that look at classes (`crate::library_doc`).
    pub(crate) fn sources_mut(&mut self) -> &mut Sources {
        &mut self.sources
    }

    /// The parsed user files.
    pub fn files(&self) -> &[(FileId, ast::StoredDefinition)] {
        &self.sources.files
    }

    /// The library files parsed so far, in the order they were added (the predefined classes
    /// and the embedded standard library, named `<...>`, then the files lookups read).
    pub fn library_file_ids(&self) -> Vec<FileId> {
        self.sources.library.iter().map(|(id, _)| *id).collect()
    }

    /// The text of every source, by file id.
    pub fn source_map(&self) -> &SourceMap {
        &self.sources.map
    }

    /// The classes of the user's files a user may simulate (models, blocks and classes that are
    /// not partial, also inside packages, by their dotted names), in file order, with their
    /// description strings.
    pub fn models(&self) -> Vec<ModelInfo> {
        let mut models = Vec::new();
        for (_, file) in &self.sources.files {
            for class in &file.classes {
                collect_models(class, "", &mut models);
            }
        }
        models
    }

    /// Resolves and flattens `model` (or the only model of the user's files); nothing when a source
    /// file has a syntax error (reported when it was added).
    pub fn flatten(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<FlatModel> {
        if self.source_errors {
            return None;
        }
        let chosen = self.chosen_model(model);
        let model = chosen.as_deref();
        let flat = self
            .timings
            .time("flatten", || self.sources.flatten(model, &options.flatten_options()));
        self.take_stage_diagnostics();
        let flat = flat?;
        // The flattener reads the solver the model asks for but does not know the methods: a
        // name that is none is the model's error, found here before any stage uses the model.
        if let Some(d) = crate::run::unknown_solver(&flat.experiment) {
            self.diagnostics.push(d);
            return None;
        }
        Some(flat)
    }

    /// `model`, or without it the only model of the user's files, which may be inside a package
    /// (`None` when there is none or several: flattening then says so).
    fn chosen_model(&self, model: Option<&str>) -> Option<String> {
        match model {
            Some(name) => Some(name.to_string()),
            None => match self.models().as_slice() {
                [only] => Some(only.name.clone()),
                _ => None,
            },
        }
    }

    /// The component diagram of `model` (or of the only model of the user's files): its
    /// components, its own connectors and its connections, with names resolved as flattening
    /// resolves them (see [`crate::diagram`]); nothing, with the diagnostics kept, when the model
    /// does not flatten or a source file has a syntax error.
    pub fn diagram(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<Diagram> {
        if self.source_errors {
            return None;
        }
        let chosen = self.chosen_model(model);
        let diagram = self.timings.time("flatten", || {
            self.sources.diagram(chosen.as_deref(), &options.flatten_options())
        });
        self.take_stage_diagnostics();
        diagram.map(|d| self.with_imported_origins(d))
    }

    /// Flattens `model`, analyses it, builds its executable programs and solves its
    /// initialization (by the interpreter, as a run with its stop time at its start would),
    /// and reports its size when nothing failed (`eqm check`): a model `check` accepts is one
    /// `run` starts. So a system that is singular for the parameters given (`x + y = 1;
    /// 2*x + 2*y = 2;`), an assertion on parameters, or a sample or delay time that cannot be
    /// used is reported here. The final event (`terminal()`) is left out: it judges a finished
    /// run, and this one only started.
    pub fn check(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<CheckSummary> {
        let flat = self.flatten(model, options)?;
        let summary = CheckSummary {
            model: flat.name.clone(),
            variables: flat.variables.len(),
            equations: flat.equations.len(),
            // Only the user's own if-equations: a library's choices (the initialization kind
            // of a standard block) are that library's business and would bury the user's.
            branch_choices: flat
                .branch_choices
                .iter()
                .filter(|c| !self.sources.library.iter().any(|(file, _)| *file == c.span.file))
                .map(|c| format!("if-equation at {}: {}", self.sources.map.location(c.span), c.describe()))
                .collect(),
            zero_coefficients: Vec::new(),
        };
        let mut model = self.build(flat, options)?;
        let summary = CheckSummary {
            zero_coefficients: model
                .zero_coefficients()
                .iter()
                .map(|d| format!("{}: {}", self.sources.map.location(d.span), d.describe()))
                .collect(),
            ..summary
        };
        let (start, _) = model.time_span(&RunSettings::default());
        let settings = RunSettings {
            start: Some(start),
            stop: Some(start),
            interpreter: true,
            start_only: true,
            ..RunSettings::default()
        };
        match model.simulate(&settings) {
            Ok(_) => Some(summary),
            Err(e) => {
                let diagnostic = match e {
                    RunError::Model(d) => *d,
                    RunError::Failed {
                        diagnostic: Some(d), ..
                    } => *d,
                    other => Diagnostic::error(
                        "E0799",
                        format!("the initialization could not be run: {other}"),
                        model.program().model_span(),
                        "this model",
                    ),
                };
                self.diagnostics.push(diagnostic);
                None
            }
        }
    }

    /// Checks `model`, or with `None` the only top-level model of the user's files, or, when
    /// there is none or several (a package), every model of them (each non-partial model,
    /// block or class, also inside packages, in file order): per model its name and its summary,
    /// or the number of errors it had (the diagnostics themselves stay in the session, each
    /// found once).
    pub fn check_all(
        &mut self,
        model: Option<&str>,
        options: &ModelOptions,
    ) -> Vec<(String, Result<CheckSummary, usize>)> {
        let names: Vec<String> = match model {
            Some(m) => vec![m.to_string()],
            None => {
                // A file with one top-level model is that model (its nested component classes
                // are its parts, not models to check on their own), as is a file whose packages
                // hold one model and no top-level one.
                if let [only] = self.sources.model_candidates().as_slice() {
                    let only = only.clone();
                    let before = self.error_count();
                    let result = self
                        .check(Some(&only), options)
                        .ok_or_else(|| self.error_count() - before);
                    return vec![(only, result)];
                }
                let models = self.models();
                if models.is_empty() {
                    // The diagnostic that there is none, as `check` finds it.
                    let before = self.error_count();
                    let result = self.check(None, options).ok_or_else(|| self.error_count() - before);
                    return vec![(String::new(), result)];
                }
                models.into_iter().map(|m| m.name).collect()
            }
        };
        names
            .into_iter()
            .map(|name| {
                let before = self.error_count();
                let result = self
                    .check(Some(&name), options)
                    .ok_or_else(|| self.error_count() - before);
                (name, result)
            })
            .collect()
    }

    /// Flattens `class` as [`Session::flatten`] does, but without the balance check of a
    /// simulated model, and gives its diagnostics back instead of keeping them: the package check
    /// ([`crate::package_check`]) judges a component by its local balance, and checks a complete
    /// model again as `check` does.
    pub(crate) fn flatten_for_package_check(
        &mut self,
        class: &str,
        options: &ModelOptions,
    ) -> (Option<FlatModel>, Vec<Diagnostic>) {
        if self.source_errors {
            return (None, Vec::new());
        }
        let options = eqm_flatten::Options {
            skip_balance_check: true,
            ..options.flatten_options()
        };
        let flat = self
            .timings
            .time("flatten", || self.sources.flatten(Some(class), &options));
        (flat, std::mem::take(&mut self.sources.diagnostics))
    }

    /// Whether `check` without a model name checks one model as `run` would simulate it: the
    /// only top-level model, or the only model of the user's files.
    pub(crate) fn checks_one_model(&self) -> bool {
        self.sources.model_candidates().len() == 1 || self.models().len() <= 1
    }

    fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == eqm_diag::Severity::Error)
            .count()
    }

    /// Flattens `model` and runs the structural analysis: DAE lowering, alias elimination
    /// (unless `options.keep_aliases`), index reduction, events, causalisation and the
    /// initialization problem.
    pub fn analyze(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<Analysis> {
        let mut flat = self.flatten(model, options)?;
        let diagnostics = self.diagnostics.len();
        if self.settle_zero_coefficients(&mut flat, options).1.is_some() {
            // The analysis below reports the warnings of the model compiled on the way again.
            self.diagnostics.truncate(diagnostics);
        }
        let analysis_options = AnalysisOptions {
            keep_aliases: options.keep_aliases,
            index_form: options.index_form,
        };
        let analysed = analysis::analyze(flat, &analysis_options, &mut self.timings);
        self.keep(analysed).map(|(analysis, mut warnings)| {
            self.diagnostics.append(&mut warnings);
            analysis
        })
    }

    /// The text of `eqm explain` for `model`.
    pub fn explain(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<String> {
        self.analyze_explained(model, options).map(|(_, text)| text)
    }

    /// The structural analysis of `model` and the text of `eqm explain` for it (which, for a
    /// variable-structure model, also says which relations choose its structure).
    pub fn analyze_explained(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<(Analysis, String)> {
        let mut flat = self.flatten(model, options)?;
        let diagnostics = self.diagnostics.len();
        let (dropped, built) = self.settle_zero_coefficients(&mut flat, options);
        if built.is_some() {
            // The analysis below reports the warnings of the model compiled on the way again.
            self.diagnostics.truncate(diagnostics);
        }
        let analysis_options = AnalysisOptions {
            keep_aliases: options.keep_aliases,
            index_form: options.index_form,
        };
        let (analysis, _, structure) = self.analyze_with_structure(flat, &analysis_options)?;
        let mut text = eqm_compile::explain::explain(&analysis);
        if !dropped.is_empty() {
            text.push_str("\ncoefficients zero by the parameters' values at translation (structural parameters):\n");
            for d in &dropped {
                text.push_str(&format!("  {}\n", d.describe()));
            }
        }
        if let Some((structure, _)) = structure {
            text.push_str(&modes::explain(&structure));
        }
        Some((analysis, text))
    }

    /// Analyses `model` and builds the executable programs of its simulation and of its
    /// initialization problem, once; the [`Model`] then runs any number of simulations.
    pub fn compile(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<Model> {
        let flat = self.flatten(model, options)?;
        let built = self.build(flat, options)?;
        Some(self.with_source_names(built, model))
    }

    /// The model compiled as the analysis ([`crate::analyze`]) linearises it: with
    /// [`ModelOptions::for_analysis`], and knowing its own inputs and outputs.
    pub fn compile_for_analysis(&mut self, model: Option<&str>, options: &ModelOptions) -> Option<Model> {
        self.compile(model, &options.for_analysis())
    }

    /// Analyses `flat` and builds its programs (without alias equations kept); a
    /// variable-structure model keeps its flat model to analyse each mode when a run enters it.
    /// Unknowns whose coefficient is zero by the parameters' values are dropped from their
    /// equations first ([`Session::settle_zero_coefficients`]).
    fn build(&mut self, mut flat: FlatModel, options: &ModelOptions) -> Option<Model> {
        let (dropped, built) = self.settle_zero_coefficients(&mut flat, options);
        let model = match built {
            Some(model) => model,
            None => self.build_as_is(flat, options)?,
        };
        crate::counters::count_model_compiled();
        Some(model.with_zero_coefficients(dropped))
    }

    /// [`Session::build`] without looking at zero coefficients.
    fn build_as_is(&mut self, flat: FlatModel, options: &ModelOptions) -> Option<Model> {
        let analysis_options = AnalysisOptions {
            keep_aliases: false,
            index_form: options.index_form,
        };
        let interface = Model::new_interface(&flat);
        let discrete_inputs = Model::new_discrete_inputs(&flat);
        let (analysis, warnings, structure) = self.analyze_with_structure(flat, &analysis_options)?;
        let compiled = analysis::compile(analysis, &mut self.timings);
        let model = Model::new(self.keep(compiled)?, options.parameters.clone())
            .with_interface(interface)
            .with_discrete_inputs(discrete_inputs);
        let model = match structure {
            Some((structure, flat)) => model.with_modes(Modes::new(flat, structure, analysis_options, &warnings)),
            None => model,
        };
        Some(model)
    }

    /// Drops from the equations of `flat` the unknowns whose coefficient is zero by the values
    /// the parameters have at translation (`eqm_compile::zero_coefficients`), and returns which.
    /// The values the flattener computed settle most coefficients; those that read a parameter
    /// computed by a function need the parameter program, so the model is compiled as it is
    /// and its parameters computed: when that settles no coefficient as zero, the model compiled
    /// on the way is returned too (it is the model), otherwise its diagnostics are withdrawn and
    /// `flat` is rewritten. When the model compiled on the way has errors, they are withdrawn
    /// too (compiling `flat` reports them).
    fn settle_zero_coefficients(
        &mut self,
        flat: &mut FlatModel,
        options: &ModelOptions,
    ) -> (Vec<DroppedOccurrence>, Option<Model>) {
        let flattened: Vec<Option<f64>> = flat.variables.iter().map(|v| v.value).collect();
        let first = drop_zero_coefficients(flat, &|v| flattened[v.0 as usize]);
        if first.unresolved == 0 {
            return (first.dropped, None);
        }
        let count = flat.variables.len();
        let diagnostics = self.diagnostics.len();
        let Some(model) = self.build_as_is(flat.clone(), options) else {
            self.diagnostics.truncate(diagnostics);
            return (first.dropped, None);
        };
        let Some(computed) = crate::zero_coefficients::parameter_values(model.program(), count) else {
            return (first.dropped, Some(model));
        };
        let second = drop_zero_coefficients(flat, &|v| flattened[v.0 as usize].or(computed[v.0 as usize]));
        if second.rewritten == 0 {
            return (first.dropped, Some(model));
        }
        self.diagnostics.truncate(diagnostics);
        let mut dropped = first.dropped;
        dropped.extend(second.dropped);
        dropped.sort_by_key(|d| d.equation);
        (dropped, None)
    }

    /// The analysis of `flat` (its warnings kept in the session and returned), and for a
    /// variable-structure model its structure with the flat model its modes are made from.
    #[allow(clippy::type_complexity)]
    fn analyze_with_structure(
        &mut self,
        flat: FlatModel,
        analysis_options: &AnalysisOptions,
    ) -> Option<(Analysis, Vec<Diagnostic>, Option<(VariableStructure, FlatModel)>)> {
        // Only a model with an if-expression whose condition can change keeps a copy.
        let kept = modes::may_vary_in_structure(&flat).then(|| flat.clone());
        let analysed = analysis::analyze(flat, analysis_options, &mut self.timings);
        let (analysis, warnings) = self.keep(analysed)?;
        self.diagnostics.extend(warnings.iter().cloned());
        let structure = kept.and_then(|flat| Some((modes::find(&flat, &analysis)?, flat)));
        Some((analysis, warnings, structure))
    }

    /// The value of a stage's result, or `None` with its diagnostics kept.
    fn keep<T>(&mut self, result: Result<T, Vec<Diagnostic>>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                None
            }
        }
    }

    /// Every diagnostic found so far, in the order found.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Adds a diagnostic a front end found about this session's sources (an unknown column,
    /// say), so that it is rendered with the others.
    pub fn push_diagnostic(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Removes and returns the diagnostics found so far.
    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diagnostics)
    }

    pub fn has_errors(&self) -> bool {
        eqm_diag::has_errors(&self.diagnostics)
    }

    /// Renders every diagnostic found so far, sorted by location, with `file:line:col` and a
    /// labelled excerpt of the source (in colour when `color`).
    pub fn render_diagnostics(&mut self, color: bool) -> String {
        eqm_diag::sort(&mut self.diagnostics);
        eqm_diag::render_all(&self.diagnostics, &self.sources.map, color)
    }

    /// Each stage's wall time so far.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// Adds `time` to the wall time of `stage`, for work a front end times itself (a
    /// simulation), so that one listing shows every stage.
    pub fn record_time(&mut self, stage: &'static str, time: Duration) {
        self.timings.record(stage, time);
    }
}

/// Adds `class` (named below `prefix`) and the simulable classes nested in it to `models`.
fn collect_models(class: &ast::ClassDef, prefix: &str, models: &mut Vec<ModelInfo>) {
    let name = format!("{prefix}{}", class.name.name);
    let kind = match class.kind {
        ast::ClassKind::Model => Some("model"),
        ast::ClassKind::Block => Some("block"),
        ast::ClassKind::Class => Some("class"),
        _ => None,
    };
    let (description, sections) = match &class.body {
        ast::ClassBody::Long {
            description, sections, ..
        } => (description, &sections[..]),
        ast::ClassBody::Short { description, .. } | ast::ClassBody::Enumeration { description, .. } => {
            (description, &[][..])
        }
    };
    if let Some(kind) = kind.filter(|_| !class.partial) {
        models.push(ModelInfo {
            name: name.clone(),
            kind,
            description: description.as_ref().map(|d| d.text.clone()),
        });
    }
    let nested = format!("{name}.");
    for section in sections {
        if let ast::Section::Elements { elements, .. } = section {
            for element in elements {
                if let ast::Element::Class(inner) = element {
                    collect_models(inner, &nested, models);
                }
            }
        }
    }
}

/// `bytes` with each run of bytes that are not UTF-8 replaced by one `\u{FFFD}`, and the byte
/// offset of each replacement in the result.
fn replace_invalid_utf8(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(bytes.len() + 8);
    let mut invalid: Vec<usize> = Vec::new();
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if chunk.invalid().is_empty() {
            continue;
        }
        // Adjacent invalid sequences (`\xff\xfe`) come as separate chunks; they are one run.
        let continues_run = chunk.valid().is_empty() && invalid.last().is_some_and(|&last| last + 3 == text.len());
        if !continues_run {
            invalid.push(text.len());
            text.push('\u{FFFD}');
        }
    }
    (text, invalid)
}
