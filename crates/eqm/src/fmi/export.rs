//! The whole export of a model as an FMU, with every decision the export makes: what can be
//! exported, the model identifier, the capability flags of EQM's runtime, the description, the
//! resources and the archive.
//!
//! Input: the [`Session`] that compiled the model, the [`Model`], the [`ExportOptions`] a user
//! chose, the bytes of the runtime library and this machine's platform. Output: the FMU's
//! bytes and its model identifier, or the diagnostic of why the model cannot be exported
//! (`E0902`). Every front end (the command line, Python) calls [`export`]: it reads
//! the runtime and writes the file, and decides nothing else. Nothing here reads files.

use crate::fmi::{
    Capabilities, DescriptionOptions, FmiVersion, Kinds, fmu_archive, model_description, platform_dir, resources_of,
};
use crate::{Diagnostic, Model, Session};

/// What a user chose for an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportOptions {
    pub version: FmiVersion,
    pub kinds: Kinds,
    /// The parameter values the model was compiled with (`ModelOptions::parameters`): the
    /// runtime compiles it again with them.
    pub parameters: Vec<(String, f64)>,
}

/// An exported FMU.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The model identifier: the name of the binary and the FMU's default file name.
    pub identifier: String,
    pub bytes: Vec<u8>,
}

/// What EQM's runtime implements, for the model description: the flags an importer may rely
/// on, each true only because the runtime does it (`eqm-fmu`).
pub fn runtime_capabilities() -> Capabilities {
    Capabilities {
        // The runtime allocates with Rust's allocator, never through the importer's callbacks.
        can_not_use_memory_management_functions: true,
        // `doStep` takes any step, with EQM's adaptive solvers inside.
        can_handle_variable_communication_step_size: true,
        // From the symbolic Jacobian (states to derivatives) and central differences.
        provides_directional_derivatives: true,
        // FMI 3: the transpose of the directional derivatives, column by column.
        provides_adjoint_derivatives: true,
        // Co-Simulation: the first derivative of a variable with respect to time along the
        // solution at a communication point (`SteppedRun::output_derivatives`).
        max_output_derivative_order: 1,
        // The whole state of a run as a value (`RunState`) and as bytes.
        can_get_and_set_fmu_state: true,
        can_serialize_fmu_state: true,
        // FMI 3 Co-Simulation: a step stops before an event for the importer's Event Mode
        // (`eventModeUsed`), at the first event in the step when early return is allowed.
        has_event_mode: true,
        might_return_early_from_do_step: true,
        ..Capabilities::default()
    }
}

/// What the runtime implements for `model`: [`runtime_capabilities`], without the FMU state
/// for a model with external objects, whose state lives in C code a state cannot hold.
pub fn capabilities_of(model: &Model) -> Capabilities {
    let objects = model.program().externals().iter().any(|f| f.destructor.is_some());
    Capabilities {
        can_get_and_set_fmu_state: !objects,
        can_serialize_fmu_state: !objects,
        ..runtime_capabilities()
    }
}

/// Whether `model` can be exported as an FMU (of either kind): `E0902` for a variable-structure
/// model.
pub fn supported(model: &Model) -> Result<(), Diagnostic> {
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

/// The FMU of `model` (compiled by `session`) with `options`, its binary `runtime` built for
/// `platform` (`x86_64-linux`, ...).
pub fn export(
    session: &Session,
    model: &Model,
    options: &ExportOptions,
    runtime: &[u8],
    platform: &str,
) -> Result<Exported, Diagnostic> {
    supported(model)?;
    let identifier = model_identifier(model.name());
    let description = model_description(
        model,
        &DescriptionOptions {
            version: options.version,
            kinds: options.kinds,
            model_identifier: identifier.clone(),
            capabilities: capabilities_of(model),
            generation_tool: format!("EQM {}", env!("CARGO_PKG_VERSION")),
            generation_date: None,
        },
    );
    let resources = resources_of(session, model.name(), &options.parameters);
    let directory = platform_dir(options.version, platform).ok_or_else(|| {
        export_error(format!(
            "FMI {} names no platform directory for {platform}",
            options.version.text()
        ))
    })?;
    let bytes = fmu_archive(&description, runtime, &identifier, &[directory], &resources).map_err(export_error)?;
    Ok(Exported { identifier, bytes })
}

/// An export error about the machine or the files rather than a place in the model (`E0903`).
pub fn export_error(message: String) -> Diagnostic {
    let mut d = Diagnostic::error("E0903", message, crate::Span::default(), "");
    d.labels.clear();
    d
}

/// The model identifier: the last part of the model's name, with every character that cannot
/// be in a C identifier replaced by `_`.
pub fn model_identifier(model: &str) -> String {
    let last = model.rsplit('.').next().unwrap_or(model);
    let mut identifier: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if !identifier.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        identifier.insert(0, '_');
    }
    identifier
}
