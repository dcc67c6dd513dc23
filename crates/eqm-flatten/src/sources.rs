//! The parsed sources of one compilation: the user's files and the library, and from them the
//! flat model of a chosen model.
//!
//! Input: source texts already read by the caller (a front end reads files; tests pass
//! strings). Output: their syntax trees with every lexical and syntax diagnostic, and
//! [`Sources::flatten`]'s flat model (or [`Sources::diagram`]'s component diagram) with the
//! diagnostics of name resolution and flattening.
//! The library is the embedded standard library (each package parsed when a lookup first
//! reaches it, see [`Sources::add_embedded_stdlib_lazily`]; a file of it may be replaced by a
//! text the front end read, [`Sources::stdlib_replacements`]) and any files a front end adds
//! with [`Sources::add_library_file`]. Nothing here reads files: the data files a model names
//! (`readMatrix`) are read through the [`ReadData`] a front end gives ([`Sources::reader`]), and
//! external C functions are compiled through its linker ([`Sources::linker`]). The classes of
//! library directories, and the conversion script a library names for models written for an
//! earlier version of it, are read through the front end's library store
//! ([`Sources::libraries`]).

use crate::conversion::Conversions;
use crate::datafiles::DataFiles;
use crate::diagram::Diagram;
use crate::library::{Libraries, LibraryFile};
use crate::resolve::ClassTable;
use eqm_diag::source::ReadData;
use eqm_diag::source::{FileId, SourceMap};
use eqm_diag::{Diagnostic, Severity};
use eqm_ir::flat::FlatModel;
use eqm_syntax::ast;
use std::sync::Arc;

/// The parsed user and library files and the diagnostics found so far.
#[derive(Debug, Default)]
pub struct Sources {
    pub map: SourceMap,
    /// The user's files, in the order they were added.
    pub files: Vec<(FileId, ast::StoredDefinition)>,
    /// Library files: the predefined classes (once a model is resolved), the embedded stdlib,
    /// then the files a front end adds.
    pub library: Vec<(FileId, ast::StoredDefinition)>,
    pub diagnostics: Vec<Diagnostic>,
    /// How the data files the models name (`readMatrix`) are read; without one, such a model
    /// is reported as unable to read them.
    pub reader: Option<Arc<dyn ReadData>>,
    /// How external C functions are compiled and linked; without one, a model calling an
    /// external function other than the C math library's is rejected with the reason.
    pub linker: Option<Arc<dyn eqm_ir::external::LinkExternal>>,
    /// Where the syntax trees of library files are kept between runs (the binary keeps them on
    /// disk); without one, every library file read is parsed.
    pub tree_cache: Option<Arc<dyn eqm_syntax::TreeCache>>,
    /// Texts that replace embedded standard-library files, each `(file name, text)` such as
    /// `("Mechanics.eqm", ...)` (see [`crate::stdlib::file_text`]); set before the library is
    /// added.
    pub stdlib_replacements: Vec<(String, String)>,
    /// The library directories (`--library`, `EQMPATH`, `MODELICAPATH`), read class by class as
    /// lookups reach them; set before the embedded library is added, since a top-level package
    /// they store replaces the embedded package of that name entirely.
    pub libraries: Libraries,
    /// The syntax diagnostics of library files read as lookups reached their classes: each is
    /// reported only when the class it is in is one a lookup found, since a construct EQM does
    /// not read in a class the model never uses does not change the model.
    library_syntax: Vec<Diagnostic>,
    /// Whether the predefined classes (`crate::predefined`) are among the library files.
    has_predefined: bool,
    /// The conversion scripts of the libraries read so far, by the URI their library gives
    /// (`None`: it could not be read), each read once.
    conversion_scripts: std::collections::BTreeMap<String, Option<Arc<Conversions>>>,
    /// The top-level classes read through a conversion script in the last round.
    converted: std::collections::BTreeSet<String>,
    /// The embedded standard library added lazily ([`Sources::add_embedded_stdlib_lazily`]):
    /// its packages are parsed one by one as lookups reach them.
    embedded: crate::embedded::Embedded,
    /// Whether the embedded standard library was added, whole or lazily.
    stdlib_added: bool,
}

impl Sources {
    pub fn new() -> Sources {
        Sources::default()
    }

    /// Parses a user file and keeps its syntax tree and diagnostics.
    pub fn add_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let (id, tree) = self.parse(name.into(), text.into());
        self.files.push((id, tree));
        id
    }

    /// Parses a library file (embedded stdlib or a file of a library directory), or takes its
    /// tree from the [`Sources::tree_cache`].
    pub fn add_library_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let (id, tree) = self.parse_library(name.into(), text.into());
        self.library.push((id, tree));
        id
    }

    fn parse(&mut self, name: String, text: String) -> (FileId, ast::StoredDefinition) {
        let id = self.map.add(name, text);
        let (tree, mut diagnostics) = eqm_syntax::parse_file(id, &self.map.get(id).text);
        self.diagnostics.append(&mut diagnostics);
        (id, tree)
    }

    /// As [`Sources::parse`], through the tree cache when there is one. Only library files go
    /// through it: they are large and rarely change, where a user's file is small and edited.
    fn parse_library(&mut self, name: String, text: String) -> (FileId, ast::StoredDefinition) {
        let Some(cache) = self.tree_cache.clone() else {
            return self.parse(name, text);
        };
        let id = self.map.add(name, text);
        let (tree, mut diagnostics) = eqm_syntax::parse_file_kept(id, &self.map.get(id).text, cache.as_ref());
        self.diagnostics.append(&mut diagnostics);
        (id, tree)
    }

    /// Puts the predefined classes (`StateSelect`, `AssertionLevel`) first among the library
    /// files, once: first, so that a library or user class of the same name shadows them.
    fn add_predefined(&mut self) {
        if self.has_predefined {
            return;
        }
        self.has_predefined = true;
        let (id, tree) = self.parse(
            crate::predefined::FILE_NAME.to_string(),
            crate::predefined::TEXT.to_string(),
        );
        self.library.insert(0, (id, tree));
    }

    /// Adds every package of the standard library, parsed now (unless it was added already).
    pub fn add_embedded_stdlib(&mut self) {
        if self.stdlib_added {
            return;
        }
        self.stdlib_added = true;
        for (k, (name, _)) in crate::stdlib::FILES.iter().enumerate() {
            if self.libraries.provides(crate::stdlib::PACKAGES[k]) {
                continue;
            }
            let text = crate::stdlib::file_text(k, &self.stdlib_replacements).to_string();
            self.add_library_file(format!("<stdlib>/{name}"), text);
        }
    }

    /// Makes every package of the standard library that no library directory replaces
    /// available, parsed as far as lookups reach: a package is parsed when a lookup first
    /// reaches it, without the packages nested in it, each parsed in turn when a lookup reaches
    /// it (see `crate::embedded`). A model that uses none of the library parses none of it.
    pub fn add_embedded_stdlib_lazily(&mut self) {
        if self.stdlib_added {
            return;
        }
        self.stdlib_added = true;
        let files = (0..crate::stdlib::FILES.len())
            .filter(|&k| !self.libraries.provides(crate::stdlib::PACKAGES[k]))
            .map(|k| {
                let text: std::borrow::Cow<'static, str> =
                    match (self.stdlib_replacements.iter()).find(|(file, _)| file == crate::stdlib::file_name(k)) {
                        Some((_, text)) => text.clone().into(),
                        None => crate::stdlib::FILES[k].1.into(),
                    };
                let name = format!("<stdlib>/{}", crate::stdlib::FILES[k].0);
                (name, text, crate::stdlib::PACKAGES[k])
            })
            .collect();
        self.embedded = crate::embedded::Embedded::new(files);
    }

    /// The names of the models a user may simulate: the classes of the user's files that are
    /// models, blocks or classes and not partial (what `--model` may leave out when there is
    /// exactly one).
    pub fn model_candidates(&self) -> Vec<String> {
        let user: Vec<&ast::StoredDefinition> = self.files.iter().map(|(_, f)| f).collect();
        match crate::default_model(&user) {
            Ok(name) => vec![name],
            Err(candidates) => candidates,
        }
    }

    /// Resolves and flattens `model` (or the only model in the user's files). Diagnostics go to
    /// [`Sources::diagnostics`]; the flat model comes back when there were no errors.
    pub fn flatten(&mut self, model: Option<&str>, options: &crate::Options) -> Option<FlatModel> {
        self.resolve_and(options, model, |table, name, options| {
            crate::flatten(table, name, options)
        })
    }

    /// Resolves and flattens `model` (or the only model in the user's files) like
    /// [`Sources::flatten`], and returns its component diagram when there were no errors.
    pub fn diagram(&mut self, model: Option<&str>, options: &crate::Options) -> Option<Diagram> {
        self.resolve_and(options, model, |table, name, options| {
            crate::diagram::diagram(table, name, options)
        })
    }

    /// `options` with this compilation's data files: the reader and the names of the source
    /// files read so far (library files are read round by round), from whose directories
    /// relative paths and `modelica://` resources start.
    fn with_data_files(&self, options: &crate::Options) -> crate::Options {
        let names = (0..self.map.len() as u32).map(|k| self.map.get(FileId(k)).name.clone());
        crate::Options {
            data_files: DataFiles::new(self.reader.clone(), names.collect()),
            external: self.linker.clone(),
            ..options.clone()
        }
    }

    /// Builds the class table, names the model (`model`, or the only model in the user's files)
    /// and runs `stage` on it, keeping every diagnostic.
    fn resolve_and<T>(
        &mut self,
        options: &crate::Options,
        model: Option<&str>,
        stage: impl Fn(&ClassTable<'_>, &str, &crate::Options) -> (Option<T>, Vec<Diagnostic>),
    ) -> Option<T> {
        let user: Vec<&ast::StoredDefinition> = self.files.iter().map(|(_, f)| f).collect();
        let name = match model {
            Some(m) => m.to_string(),
            None => match crate::default_model(&user) {
                Ok(m) => m,
                Err(candidates) => {
                    let message = if candidates.is_empty() {
                        "the files define no model".to_string()
                    } else {
                        format!(
                            "the files define several models ({}); choose one with --model",
                            listed_models(&candidates)
                        )
                    };
                    self.diagnostics.push(Diagnostic {
                        code: "E0201",
                        severity: Severity::Error,
                        message,
                        labels: Vec::new(),
                        notes: Vec::new(),
                        help: None,
                    });
                    return None;
                }
            },
        };
        self.add_predefined();
        let round = |table: &ClassTable<'_>, sources: &Sources| {
            let options = sources.with_data_files(options);
            let mut diagnostics = table.diagnostics.clone();
            let (product, mut more) = stage(table, &name, &options);
            diagnostics.append(&mut more);
            diagnostics.extend(
                (sources.library_syntax.iter())
                    .filter(|d| {
                        d.primary_span()
                            .is_none_or(|span| table.innermost_reached(prefixed_class(&sources.map, span)))
                    })
                    .cloned(),
            );
            (product, diagnostics)
        };
        let (mut product, mut diagnostics) = self.in_rounds(round);
        // A model that is not found is told the closest names of the whole library, as when
        // every embedded package was parsed from the start.
        if diagnostics.iter().any(|d| d.code == "E0201") && self.load_all_embedded() {
            (product, diagnostics) = self.in_rounds(round);
        }
        self.check_uses_versions(&mut diagnostics);
        // A syntax error in a library class the model uses is found after the stage ran (its
        // class must be reached first): the stage's product then stands on a class with parts
        // left out, so there is none.
        let product = product.filter(|_| !eqm_diag::has_errors(&diagnostics));
        self.diagnostics.append(&mut diagnostics);
        product
    }

    /// Runs `look` on the class table of the user's files and the library, reading the library
    /// classes its lookups reach, until it reaches no unread one; what the last run returned.
    /// For tools that look at classes without flattening a model (the library's reference).
    pub fn with_class_table<T>(&mut self, mut look: impl FnMut(&ClassTable<'_>, &SourceMap) -> T) -> T {
        self.add_predefined();
        self.in_rounds(|table, sources| look(table, &sources.map))
    }

    /// Runs `round` on a class table over what was read so far; a round whose lookups reached
    /// unread library classes is run again once they are read (see
    /// `ClassTable::mark_unloaded`). Every repeated round read at least one more file, so this
    /// ends; what the last round returned.
    fn in_rounds<T>(&mut self, mut round: impl FnMut(&ClassTable<'_>, &Sources) -> T) -> T {
        self.load_embedded_enclosing();
        loop {
            let conversions = self.conversions();
            let (product, requested) = {
                let library: Vec<&ast::StoredDefinition> = self.library.iter().map(|(_, f)| f).collect();
                let user: Vec<&ast::StoredDefinition> = self.files.iter().map(|(_, f)| f).collect();
                let mut table = ClassTable::build(&library, &user);
                let mut unloaded = self.libraries.unloaded();
                unloaded.extend(self.embedded.unloaded());
                table.mark_unloaded(&unloaded);
                table.conversions = conversions.iter().map(|(k, v)| (k.clone(), v.as_ref())).collect();
                let product = round(&table, self);
                (product, table.take_requested())
            };
            let mut progress = false;
            for class in &requested {
                progress |= self.load_library_class(class) || self.load_embedded_class(class);
            }
            if !progress {
                return product;
            }
        }
    }

    /// Parses the embedded package `full_name` when it was not parsed yet (see
    /// `crate::embedded`). Whether a package was parsed.
    fn load_embedded_class(&mut self, full_name: &str) -> bool {
        let pieces = self.embedded.take(full_name, &mut self.map);
        let progress = !pieces.is_empty();
        for piece in pieces {
            let (mut tree, diagnostics) = eqm_syntax::parse_file(piece.file, &piece.text);
            // As for a library directory's file, a syntax problem matters only in a class a
            // lookup reaches.
            self.library_syntax.extend(diagnostics);
            if let (Some(within), Some(class)) = (piece.within, tree.classes.first()) {
                let span = class.name.span;
                let parts = within
                    .split('.')
                    .map(|part| ast::Ident {
                        name: part.to_string(),
                        span,
                    })
                    .collect();
                tree.within = Some(Some(ast::Name {
                    global: false,
                    parts,
                    span,
                }));
            }
            self.library.push((piece.file, tree));
        }
        progress
    }

    /// Parses every embedded package not parsed yet; whether there was one.
    fn load_all_embedded(&mut self) -> bool {
        let mut progress = false;
        for name in self.embedded.all_unloaded() {
            progress |= self.load_embedded_class(&name);
        }
        progress
    }

    /// Parses the embedded packages a file of the user or of a library adds to (`within
    /// Modelica.Blocks;`), which must be in the class table before the file's classes are.
    fn load_embedded_enclosing(&mut self) {
        let mut paths: Vec<String> = Vec::new();
        for (_, file) in self.files.iter().chain(&self.library) {
            if let Some(Some(within)) = &file.within {
                paths.push(
                    within
                        .parts
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join("."),
                );
            }
        }
        for path in paths {
            let mut prefix = String::new();
            for part in path.split('.') {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                self.load_embedded_class(&prefix);
            }
        }
    }

    /// Reads and parses the stored library class `full_name` when it was not read yet, and
    /// checks that its file holds that one class `within` its package (E0240 otherwise, and the
    /// file's classes are left out). Whether a file was read.
    fn load_library_class(&mut self, full_name: &str) -> bool {
        let Some(file) = self.libraries.file_of(full_name) else {
            return false;
        };
        let shown = file.path.display().to_string();
        let text = match self.libraries.read(&file.path) {
            Ok(text) => text,
            Err(e) => {
                self.libraries.mark_loaded(full_name, &[]);
                self.diagnostics.push(Diagnostic {
                    code: "E0241",
                    severity: Severity::Error,
                    message: format!("the library file {shown} of `{full_name}` cannot be read: {e}"),
                    labels: Vec::new(),
                    notes: Vec::new(),
                    help: None,
                });
                return true;
            }
        };
        let before = self.diagnostics.len();
        let (id, tree) = self.parse_library(shown, text);
        let syntax: Vec<Diagnostic> = self.diagnostics.drain(before..).collect();
        self.library_syntax.extend(syntax);
        if let Some(problem) = misplaced(&tree, &file) {
            self.libraries.mark_loaded(full_name, &[]);
            self.diagnostics.push(problem);
            return true;
        }
        let defined = nested_class_names(&tree.classes[0]);
        self.libraries.mark_loaded(full_name, &defined);
        self.library.push((id, tree));
        true
    }

    /// The conversions that apply inside each top-level class (of the user's files or of a
    /// library) that says it uses a library in a version the library's conversion annotation
    /// converts from (`conversion(from(version = {"3.2.2", ...}, script = "modelica://...")))`),
    /// by the class's name. Each script is read once, through the library store, from the
    /// directory of the library that names it.
    fn conversions(&mut self) -> std::collections::BTreeMap<String, Arc<Conversions>> {
        let mut scripts = Vec::new();
        for (id, tree) in &self.library {
            if matches!(tree.within, Some(Some(_))) {
                continue;
            }
            for class in &tree.classes {
                for (versions, uri) in conversion_sources(class) {
                    scripts.push((class.name.name.clone(), *id, versions, uri));
                }
            }
        }
        let mut by_version = Vec::new();
        for (library, file, versions, uri) in scripts {
            if !self.conversion_scripts.contains_key(&uri) {
                let read = self.read_conversion_script(file, &uri);
                self.conversion_scripts.insert(uri.clone(), read);
            }
            if let Some(Some(rules)) = self.conversion_scripts.get(&uri) {
                by_version.push((library, versions, rules.clone()));
            }
        }
        let mut conversions = std::collections::BTreeMap::new();
        if by_version.is_empty() {
            return conversions;
        }
        let user = self.files.iter().map(|(_, f)| f);
        let tops = self
            .library
            .iter()
            .map(|(_, f)| f)
            .filter(|f| !matches!(f.within, Some(Some(_))));
        for class in user.chain(tops).flat_map(|f| &f.classes) {
            for (library, wanted, _) in uses_versions(class) {
                let rules = by_version
                    .iter()
                    .find(|(l, versions, _)| l == library && versions.iter().any(|v| v == wanted));
                if let Some((_, _, rules)) = rules {
                    conversions.insert(class.name.name.clone(), rules.clone());
                }
            }
        }
        self.converted = conversions.keys().cloned().collect();
        conversions
    }

    /// Reads the conversion script at `uri` (`modelica://Library/path`, relative to the
    /// directory of the library's file `file`); `None` when it cannot be read or renames nothing.
    fn read_conversion_script(&mut self, file: FileId, uri: &str) -> Option<Arc<Conversions>> {
        let rest = uri.strip_prefix("modelica://")?;
        let (_, relative) = rest.split_once('/')?;
        let library_file = std::path::PathBuf::from(&self.map.get(file).name);
        let path = library_file.parent()?.join(relative);
        let text = self.libraries.read(&path).ok()?;
        let rules = Conversions::parse(&text);
        (!rules.is_empty()).then(|| Arc::new(rules))
    }

    /// Warns (W0241) where a class of the user's files says it uses a version of a library
    /// (`annotation(uses(Modelica(version = "4.1.0")))`) other than the version the library
    /// read from a library directory declares (`annotation(version = "...")`).
    fn check_uses_versions(&self, diagnostics: &mut Vec<Diagnostic>) {
        for (_, file) in &self.files {
            for class in &file.classes {
                for (library, wanted, span) in uses_versions(class) {
                    if !self.libraries.is_loaded(library) {
                        continue;
                    }
                    let declared = self
                        .library
                        .iter()
                        .filter(|(_, f)| !matches!(f.within, Some(Some(_))))
                        .flat_map(|(_, f)| &f.classes)
                        .find(|c| c.name.name == library)
                        .and_then(declared_version);
                    if let Some(found) = declared
                        && found != wanted
                    {
                        let help = if self.converted.contains(&class.name.name) {
                            "its class names are read through the library's conversion script; results may differ from those of the version the model was written for"
                        } else {
                            "results may differ from those of the version the model was written for"
                        };
                        diagnostics.push(
                            Diagnostic::warning(
                                "W0241",
                                format!("the model uses {library} version {wanted}, but the library found is version {found}"),
                                span,
                                "version asked for",
                            )
                            .with_help(help),
                        );
                    }
                }
            }
        }
    }

    pub fn has_errors(&self) -> bool {
        eqm_diag::has_errors(&self.diagnostics)
    }

    /// Renders every diagnostic found so far, sorted by location.
    pub fn render_diagnostics(&mut self, color: bool) -> String {
        eqm_diag::sort(&mut self.diagnostics);
        eqm_diag::render_all(&self.diagnostics, &self.map, color)
    }
}

/// The problem (E0240) of a library file that does not hold exactly the class its place in the
/// library directory says, `within` the package of that place.
fn misplaced(tree: &ast::StoredDefinition, file: &LibraryFile) -> Option<Diagnostic> {
    let said = match &tree.within {
        Some(Some(name)) => Some(dotted(name)),
        _ => None,
    };
    let place = match &file.within {
        Some(w) => format!("`{w}.{}`", file.name),
        None => format!("the top-level package `{}`", file.name),
    };
    if said != file.within {
        let span = match &tree.within {
            Some(Some(name)) => name.span,
            _ => tree.classes.first().map_or(tree.span, |c| c.name.span),
        };
        let expected = match &file.within {
            Some(w) => format!("`within {w};`"),
            None => "no `within` clause (or `within;`)".to_string(),
        };
        let found = match &said {
            Some(s) => format!("`within {s};`"),
            None => "no `within` clause".to_string(),
        };
        return Some(
            Diagnostic::error(
                "E0240",
                format!("this library file stores {place}, so it must start with {expected}, not {found}"),
                span,
                "does not match the file's place",
            )
            .with_help("a package directory holds the classes of that package; move the file or correct the clause"),
        );
    }
    match tree.classes.as_slice() {
        [only] if only.name.name == file.name => None,
        classes => {
            let span = classes.first().map_or(tree.span, |c| c.name.span);
            Some(Diagnostic::error(
                "E0240",
                format!(
                    "this library file stores {place}, so it must define exactly the class `{}`, not {}",
                    file.name,
                    match classes {
                        [] => "nothing".to_string(),
                        [one] => format!("`{}`", one.name.name),
                        _ => format!("{} classes", classes.len()),
                    }
                ),
                span,
                "not the class of the file's place",
            ))
        }
    }
}

/// A name as written, its parts joined by dots.
pub(crate) fn dotted(name: &ast::Name) -> String {
    name.parts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(".")
}

/// The names of the classes declared directly inside `class`.
fn nested_class_names(class: &ast::ClassDef) -> Vec<&str> {
    let ast::ClassBody::Long { sections, .. } = &class.body else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for section in sections {
        if let ast::Section::Elements { elements, .. } = section {
            for element in elements {
                if let ast::Element::Class(nested) = element {
                    names.push(nested.name.name.as_str());
                }
            }
        }
    }
    names
}

/// The string a modifier binds (`version = "4.1.0"`).
fn string_binding(argument: &ast::ModArgument) -> Option<&str> {
    match &argument.modification.as_ref()?.binding.as_ref()?.kind {
        ast::ExprKind::String(text) => Some(text),
        _ => None,
    }
}

/// The libraries and versions a class says it uses (`uses(Modelica(version = "4.1.0"))`), each
/// with the span of the version.
fn uses_versions(class: &ast::ClassDef) -> Vec<(&str, &str, eqm_diag::source::Span)> {
    let mut found = Vec::new();
    let Some(annotation) = class.annotation() else {
        return found;
    };
    for argument in &annotation.modification.arguments {
        if argument.name.parts.len() != 1 || argument.name.parts[0].name != "uses" {
            continue;
        }
        let uses = argument
            .modification
            .as_ref()
            .and_then(|m| m.class_modification.as_ref());
        for library in uses.iter().flat_map(|m| &m.arguments) {
            let settings = library
                .modification
                .as_ref()
                .and_then(|m| m.class_modification.as_ref());
            for setting in settings.iter().flat_map(|m| &m.arguments) {
                if setting.name.parts[0].name == "version"
                    && let Some(version) = string_binding(setting)
                {
                    let span = setting
                        .modification
                        .as_ref()
                        .and_then(|m| m.binding.as_ref())
                        .map_or(setting.name.span, |b| b.span);
                    found.push((library.name.parts[0].name.as_str(), version, span));
                }
            }
        }
    }
    found
}

/// The conversions a library's top-level package names in its annotation
/// (`conversion(from(version = {"3.2.2", "3.2.3"}, script = "modelica://...")`): each `from`'s
/// versions and script.
fn conversion_sources(package: &ast::ClassDef) -> Vec<(Vec<String>, String)> {
    let mut found = Vec::new();
    let Some(annotation) = package.annotation() else {
        return found;
    };
    let arguments = |a: &ast::ModArgument| {
        let modification = a.modification.as_ref().and_then(|m| m.class_modification.as_ref());
        modification.map(|m| m.arguments.clone()).unwrap_or_default()
    };
    let named = |a: &ast::ModArgument, name: &str| a.name.parts.len() == 1 && a.name.parts[0].name == name;
    for conversion in annotation
        .modification
        .arguments
        .iter()
        .filter(|a| named(a, "conversion"))
    {
        for from in arguments(conversion).iter().filter(|a| named(a, "from")) {
            let settings = arguments(from);
            let script = settings.iter().find(|a| named(a, "script")).and_then(string_binding);
            let versions = settings.iter().find(|a| named(a, "version")).map(string_bindings);
            if let (Some(script), Some(versions)) = (script, versions) {
                found.push((versions, script.to_string()));
            }
        }
    }
    found
}

/// The strings a modifier binds: one (`version = "3.2"`) or an array of them.
fn string_bindings(argument: &ast::ModArgument) -> Vec<String> {
    let binding = argument.modification.as_ref().and_then(|m| m.binding.as_ref());
    match binding.map(|b| &b.kind) {
        Some(ast::ExprKind::String(text)) => vec![text.clone()],
        Some(ast::ExprKind::Array(items)) => items
            .iter()
            .filter_map(|i| match &i.kind {
                ast::ExprKind::String(text) => Some(text.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The version a library's top-level package declares (`annotation(version = "4.1.0")`).
fn declared_version(package: &ast::ClassDef) -> Option<&str> {
    package
        .annotation()?
        .modification
        .arguments
        .iter()
        .find(|a| a.name.parts.len() == 1 && a.name.parts[0].name == "version")
        .and_then(string_binding)
}

/// Where the problem at `span` lies for deciding whether it matters: a keyword EQM does not
/// read written before a class (`expandable connector C`, `operator record R`) belongs to the
/// class that follows it, whose definition starts at its class keyword; anything else lies at
/// `span` itself.
fn prefixed_class(map: &SourceMap, span: eqm_diag::source::Span) -> eqm_diag::source::Span {
    let text = &map.get(span.file).text;
    let Some(rest) = text.get(span.end as usize..) else {
        return span;
    };
    let after = rest.trim_start();
    let keyword = after.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
    let class_keywords = [
        "class",
        "model",
        "block",
        "connector",
        "record",
        "type",
        "package",
        "function",
        "operator",
    ];
    if !class_keywords.contains(&keyword) {
        return span;
    }
    let start = span.end as usize + (rest.len() - after.len());
    eqm_diag::source::Span::new(span.file, start, start + keyword.len())
}

/// The first names of `candidates` joined for a message, with how many more there are.
fn listed_models(candidates: &[String]) -> String {
    const SHOWN: usize = 12;
    let shown = candidates[..candidates.len().min(SHOWN)].join(", ");
    match candidates.len().saturating_sub(SHOWN) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}
