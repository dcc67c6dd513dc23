//! The parsed sources of one compilation: the user's files and the library, and from them the
//! flat model of a chosen model.
//!
//! Input: source texts already read by the caller (a front end reads files; tests pass
//! strings). Output: their syntax trees with every lexical and syntax diagnostic, and
//! [`Sources::flatten`]'s flat model (or [`Sources::diagram`]'s component diagram) with the
//! diagnostics of name resolution and flattening.
//! The library is the embedded standard library (only the packages the texts mention, see
//! [`Sources::add_embedded_stdlib_used_by`]; a file of it may be replaced by a text the front
//! end read, [`Sources::stdlib_replacements`]) and any files a front end adds with
//! [`Sources::add_library_file`]. Nothing here reads files: the data files a model names
//! (`readMatrix`) are read through the [`ReadFile`] a front end gives ([`Sources::reader`]), and
//! external C functions are compiled through its linker ([`Sources::linker`]).

use crate::datafiles::{DataFiles, ReadFile};
use crate::diagram::Diagram;
use crate::resolve::ClassTable;
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
    /// Library files: the embedded stdlib, then the files a front end adds.
    pub library: Vec<(FileId, ast::StoredDefinition)>,
    pub diagnostics: Vec<Diagnostic>,
    /// How the data files the models name (`readMatrix`) are read; without one, such a model
    /// is reported as unable to read them.
    pub reader: Option<Arc<dyn ReadFile>>,
    /// How external C functions are compiled and linked; without one, a model calling an
    /// external function other than the C math library's is rejected with the reason.
    pub linker: Option<Arc<dyn eqm_ir::external::LinkExternal>>,
    /// Texts that replace embedded standard-library files, each `(file name, text)` such as
    /// `("Mechanics.eqm", ...)` (see [`crate::stdlib::file_text`]); set before the library is
    /// added.
    pub stdlib_replacements: Vec<(String, String)>,
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

    /// Parses a library file (embedded stdlib or a file of a library directory).
    pub fn add_library_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let (id, tree) = self.parse(name.into(), text.into());
        self.library.push((id, tree));
        id
    }

    fn parse(&mut self, name: String, text: String) -> (FileId, ast::StoredDefinition) {
        let id = self.map.add(name, text);
        let (tree, mut diagnostics) = eqm_syntax::parse_file(id, &self.map.get(id).text);
        self.diagnostics.append(&mut diagnostics);
        (id, tree)
    }

    /// Adds every package of the standard library.
    pub fn add_embedded_stdlib(&mut self) {
        for (k, (name, _)) in crate::stdlib::FILES.iter().enumerate() {
            let text = crate::stdlib::file_text(k, &self.stdlib_replacements).to_string();
            self.add_library_file(format!("<stdlib>/{name}"), text);
        }
    }

    /// Adds the stdlib packages that `texts` mention by name (as an identifier, so not in
    /// comments or strings), and the packages those mention in turn. A package named nowhere
    /// cannot be referred to, so leaving it out changes nothing but the time spent parsing it.
    pub fn add_embedded_stdlib_used_by(&mut self, texts: &[&str]) {
        use eqm_syntax::lexer::Token;
        use logos::Logos;
        let packages = crate::stdlib::PACKAGES;
        // Each needed package's text (embedded or its replacement).
        let mut needed: Vec<Option<String>> = vec![None; packages.len()];
        // The texts still to scan: the given ones, then the needed packages by index.
        let mut given = texts.to_vec();
        let mut queue: Vec<usize> = Vec::new();
        loop {
            let text: &str = match given.pop() {
                Some(text) => text,
                None => match queue.pop() {
                    Some(k) => needed[k].as_deref().unwrap_or_default(),
                    None => break,
                },
            };
            // A text without any package name needs no lexing at all.
            if !packages.iter().any(|name| text.contains(name)) {
                continue;
            }
            // A package may span several files (the later ones add to it with `within`), and
            // naming the package loads all of them.
            let mut found = Vec::new();
            for token in Token::lexer(text).flatten() {
                if let Token::Ident(ident) = token {
                    found.extend((0..packages.len()).filter(|&k| packages[k] == ident && needed[k].is_none()));
                }
            }
            for k in found {
                if needed[k].is_none() {
                    needed[k] = Some(crate::stdlib::file_text(k, &self.stdlib_replacements).to_string());
                    queue.push(k);
                }
            }
        }
        for (k, text) in needed.into_iter().enumerate() {
            if let Some(text) = text {
                self.add_library_file(format!("<stdlib>/{}", crate::stdlib::FILES[k].0), text);
            }
        }
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
        let options = self.with_data_files(options);
        self.resolve_and(model, |table, name| crate::flatten(table, name, &options))
    }

    /// Resolves and flattens `model` (or the only model in the user's files) like
    /// [`Sources::flatten`], and returns its component diagram when there were no errors.
    pub fn diagram(&mut self, model: Option<&str>, options: &crate::Options) -> Option<Diagram> {
        let options = self.with_data_files(options);
        self.resolve_and(model, |table, name| crate::diagram::diagram(table, name, &options))
    }

    /// `options` with this compilation's data files: the reader and the names of the source
    /// files, from whose directories relative paths start.
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
        model: Option<&str>,
        stage: impl FnOnce(&ClassTable<'_>, &str) -> (Option<T>, Vec<Diagnostic>),
    ) -> Option<T> {
        let library: Vec<&ast::StoredDefinition> = self.library.iter().map(|(_, f)| f).collect();
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
                            candidates.join(", ")
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
        let table = ClassTable::build(&library, &user);
        let mut diagnostics = table.diagnostics.clone();
        let (product, mut more) = stage(&table, &name);
        diagnostics.append(&mut more);
        self.diagnostics.append(&mut diagnostics);
        product
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
