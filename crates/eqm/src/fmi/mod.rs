//! FMI export: a compiled model as a Functional Mock-up Unit (FMI 2.0 and 3.0).
//!
//! Input: a compiled [`Model`] and the [`Session`](crate::Session) that compiled
//! it. Output: the FMI view of its variables ([`variables()`]), the dependencies of its outputs
//! and derivatives ([`structure()`]), the text of `modelDescription.xml`
//! ([`model_description`]), the model's sources with a manifest ([`resources_of`],
//! [`read_manifest`]) and the zip archive of the FMU ([`fmu_archive`]). The FMU's binary is
//! EQM's runtime library, which compiles the model from the sources in `resources/model/` when
//! it is instantiated and looks values up through [`variables()`], the one list both sides
//! compute (with [`arrays()`], the arrays FMI 3 exposes whole). What can be exported, with which capabilities, is decided here ([`supported`],
//! [`runtime_capabilities`]), and the whole export is one function ([`export`]) every front
//! end calls. This module does not run models and holds no C interface.

mod arrays;
mod description;
mod export;
mod package;
mod structure;
pub mod units;
mod variables;

pub use arrays::{FmiArray, arrays, owners};
pub use description::{Capabilities, DescriptionOptions, instantiation_token, model_description};
pub use export::{
    ExportOptions, Exported, capabilities_of, export, export_error, model_identifier, runtime_capabilities, supported,
};
pub use package::{MANIFEST_PATH, Manifest, ManifestError, fmu_archive, platform_dir, read_manifest, resources_of};
pub use structure::{Dependencies, DependencyKind, Structure, structure};
pub use variables::{FmiCausality, FmiInitial, FmiSource, FmiType, FmiVariability, FmiVariable, variables};

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
