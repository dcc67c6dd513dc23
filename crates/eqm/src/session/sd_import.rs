//! System-dynamics files (XMILE, Stella, Vensim) in a session: each is imported into `.eqm` text by
//! `eqm_sd`, and the session goes on with that text as the user's file.
//!
//! Input: a file's name and text, and its format (by extension, or given). Output: the file's
//! text in the source map (so the import's diagnostics show its lines), the generated `.eqm`
//! text parsed as a user file named after it (`MODEL.xmile.eqm`), and the file's variable
//! names, which the compiled model reports its results under ([`Model::source_names`]). Every
//! front end gets the same import this way. Nothing here reads a file: the data files a
//! Vensim model reads come through the front end's reader ([`Session::with_libraries_reading_data`]).

use super::Session;
use crate::model::Model;
use eqm_flatten::diagram::Diagram;
use eqm_sd::Format;

impl Session {
    /// Imports each system-dynamics file of `files` (by its extension) and returns the list
    /// with each replaced by its `.eqm` text; a file that could not be imported is left out,
    /// its diagnostics kept.
    pub(super) fn import_system_dynamics_files(&mut self, files: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
        files
            .into_iter()
            .filter_map(|(name, bytes)| match Format::of_file_name(&name) {
                None => Some((name, bytes)),
                Some(format) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    self.import_text(&name, text, format)
                        .map(|(eqm_name, eqm_text)| (eqm_name, eqm_text.into_bytes()))
                }
            })
            .collect()
    }

    /// Imports `text`, the system-dynamics file `name` of `format`, and parses the `.eqm` text
    /// it becomes as a user file. False when it could not be imported (the diagnostics say
    /// why).
    pub fn add_system_dynamics_file(&mut self, name: &str, text: String, format: Format) -> bool {
        let Some((eqm_name, eqm_text)) = self.import_text(name, text, format) else {
            return false;
        };
        self.add_embedded_stdlib_lazily();
        self.add_file(eqm_name, eqm_text);
        true
    }

    /// The `.eqm` text of `text`, the system-dynamics file `name` of `format`, without parsing
    /// it (`eqm import`); `None` when it could not be imported (the diagnostics say why).
    pub fn import_system_dynamics(&mut self, name: &str, text: String, format: Format) -> Option<String> {
        self.import_text(name, text, format).map(|(_, text)| text)
    }

    /// The `.eqm` name and text of an imported file, its diagnostics taken.
    fn import_text(&mut self, name: &str, text: String, format: Format) -> Option<(String, String)> {
        let id = self.sources.map.add(name.to_string(), text);
        let imported = eqm_sd::import_with_data(
            id,
            name,
            &self.sources.map.get(id).text,
            format,
            self.data_reader.clone(),
        );
        let failed = imported.text.is_none();
        if eqm_diag::has_errors(&imported.diagnostics) || failed {
            self.source_errors = true;
        }
        self.diagnostics.extend(imported.diagnostics);
        let eqm_text = imported.text?;
        self.imported = Some((imported.model, imported.columns));
        let eqm_name = format!("{name}.eqm");
        // An exported FMU imports the file again at its start, unless the file read data
        // files: then it carries the `.eqm` text, which holds their values.
        if imported.data_files.is_empty() {
            self.imported_from.push((eqm_name.clone(), id));
        }
        self.imported_origins
            .push((eqm_name.clone(), imported.origins.into_iter().collect()));
        Some((eqm_name, eqm_text))
    }

    /// `model` reporting its results under the names of the file it was imported from, when
    /// it is the imported model (`name` the one asked for, or none).
    pub(super) fn with_source_names(&self, model: Model, name: Option<&str>) -> Model {
        let columns = self.source_names_of(name.unwrap_or(model.name())).to_vec();
        if columns.is_empty() {
            model
        } else {
            model.with_source_names(columns)
        }
    }

    /// The result columns of model `name` when it was imported from a system-dynamics file:
    /// each column's `.eqm` name and its name in the file; empty for another model.
    pub fn source_names_of(&self, name: &str) -> &[(String, String)] {
        match &self.imported {
            Some((imported, columns)) if imported == name => columns,
            _ => &[],
        }
    }

    /// `diagram` with each element declared in the `.eqm` text of an imported file placed
    /// where its variable is defined in that file, so that a box links to what the user wrote.
    pub(super) fn with_imported_origins(&self, mut diagram: Diagram) -> Diagram {
        if self.imported_origins.is_empty() {
            return diagram;
        }
        for element in diagram.components.iter_mut().chain(diagram.connectors.iter_mut()) {
            if element.span.file.0 as usize >= self.sources.map.len() {
                continue;
            }
            let file = &self.sources.map.get(element.span.file).name;
            let origin = self
                .imported_origins
                .iter()
                .find(|(name, _)| name == file)
                .and_then(|(_, origins)| origins.get(&element.name));
            if let Some(origin) = origin {
                element.span = *origin;
            }
        }
        diagram
    }

    /// The file a user file of `.eqm` text was imported from, if it was.
    pub(crate) fn imported_from(&self, eqm_name: &str) -> Option<eqm_diag::source::FileId> {
        self.imported_from
            .iter()
            .find(|(name, _)| name == eqm_name)
            .map(|(_, id)| *id)
    }

    /// The name of the model imported from a system-dynamics file, if the session has one.
    pub fn imported_model(&self) -> Option<&str> {
        self.imported.as_ref().map(|(name, _)| name.as_str())
    }
}
