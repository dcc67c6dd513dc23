//! FMI export: a compiled model as a Functional Mock-up Unit (FMI 2.0 and 3.0).
//!
//! Input: a compiled [`Model`] and the [`Session`](crate::Session) that compiled
//! it. Output: the FMI view of its variables ([`variables()`]), the dependencies of its outputs
//! and derivatives ([`structure()`]), the text of `modelDescription.xml`
//! ([`model_description`]), the model's sources with a manifest ([`resources_of`],
//! [`read_manifest`]) and the zip archive of the FMU ([`fmu_archive`]). The FMU's binary is
//! EQM's runtime library, which compiles the model from the sources in `resources/model/` when
//! it is instantiated and looks values up through [`variables()`], the one list both sides
//! compute. Which versions and interface kinds can be exported is decided here, by
//! [`supported`], and nowhere else. This module does not run models and holds no C interface.

mod description;
mod package;
mod structure;
pub mod units;
mod variables;

pub use description::{Capabilities, DescriptionOptions, instantiation_token, model_description};
pub use package::{MANIFEST_PATH, Manifest, ManifestError, fmu_archive, platform_dir, read_manifest, resources_of};
pub use structure::{Dependencies, Structure, structure};
pub use variables::{FmiCausality, FmiInitial, FmiSource, FmiType, FmiVariability, FmiVariable, variables};

use crate::Model;
use eqm_diag::Diagnostic;

/// The FMI version of an FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiVersion {
    Fmi2,
    Fmi3,
}

/// One interface of an FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiKind {
    ModelExchange,
    CoSimulation,
}

/// The interfaces an FMU offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    pub me: bool,
    pub cs: bool,
}

impl FmiVersion {
    /// `2.0` or `3.0`.
    pub fn text(self) -> &'static str {
        match self {
            FmiVersion::Fmi2 => "2.0",
            FmiVersion::Fmi3 => "3.0",
        }
    }
}

impl FmiKind {
    pub fn text(self) -> &'static str {
        match self {
            FmiKind::ModelExchange => "Model Exchange",
            FmiKind::CoSimulation => "Co-Simulation",
        }
    }
}

/// Whether EQM's runtime implements `kind` of FMI `version`: `E0901` for what it does not
/// (everything but FMI 2.0 Co-Simulation, for now).
pub fn supported(version: FmiVersion, kind: FmiKind) -> Result<(), Diagnostic> {
    match (version, kind) {
        (FmiVersion::Fmi2, FmiKind::CoSimulation) => Ok(()),
        _ => {
            let mut d = Diagnostic::error(
                "E0901",
                format!("EQM cannot export FMI {} {} yet", version.text(), kind.text()),
                eqm_diag::source::Span::default(),
                "",
            )
            .with_help("export FMI 2.0 Co-Simulation (`--fmi 2 --kind cs`)");
            // The choice is an option of the export, not a place in the model.
            d.labels.clear();
            Err(d)
        }
    }
}

/// Whether `model` can be exported at all: `E0902` for a variable-structure model.
pub fn exportable(model: &Model) -> Result<(), Diagnostic> {
    if model.variable_structure().is_some() {
        return Err(Diagnostic::error(
            "E0902",
            format!("`{}` cannot be exported as an FMU: it is a variable-structure model", model.name()),
            model.program().model_span(),
            "this model's equations change at events",
        )
        .with_note("an FMU's runtime compiles one program of the model; the modes of a variable-structure model are not exported yet"));
    }
    Ok(())
}
