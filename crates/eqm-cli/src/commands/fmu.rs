//! `eqm fmu`: export a model as a Functional Mock-up Unit. Compiles the model, writes its
//! description (the library's `eqm::fmi`), and packs it with EQM's FMU runtime library and the
//! model's sources into `M.fmu`. The runtime `libeqm_fmu.so` is looked for next to the `eqm`
//! executable, then in its `deps/` directory, then at the path `EQM_FMU_RUNTIME` names. What
//! can be exported is the library's decision (`eqm::fmi::supported`, `eqm::fmi::exportable`).

use crate::args::ModelArgs;
use crate::load;
use crate::output::{color, finish, print_timings};
use eqm::Diagnostic;
use eqm::fmi::{self, Capabilities, DescriptionOptions, FmiKind, FmiVersion, Kinds};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The file name of the runtime library.
const RUNTIME: &str = "libeqm_fmu.so";

/// Runs `eqm fmu`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, version: FmiVersion, kinds: Kinds, out: Option<&Path>, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let requested = [(kinds.me, FmiKind::ModelExchange), (kinds.cs, FmiKind::CoSimulation)];
    for (_, kind) in requested.iter().filter(|(on, _)| *on) {
        if let Err(d) = fmi::supported(version, *kind) {
            session.push_diagnostic(d);
        }
    }
    if session.has_errors() {
        return finish(&mut session, color);
    }
    let Some(model) = session.compile(args.model.as_deref(), &options) else {
        return finish(&mut session, color);
    };
    if let Err(d) = fmi::exportable(&model) {
        session.push_diagnostic(d);
        return finish(&mut session, color);
    }
    let runtime = match find_runtime().and_then(|path| {
        std::fs::read(&path).map_err(|e| format!("cannot read the FMU runtime {}: {e}", path.display()))
    }) {
        Ok(bytes) => bytes,
        Err(message) => {
            session.push_diagnostic(export_error(message).with_help(
                "build it with `cargo build --release -p eqm-fmu` (it lands next to `eqm` in target/release), \
                 or set EQM_FMU_RUNTIME to its path",
            ));
            return finish(&mut session, color);
        }
    };
    let identifier = model_identifier(model.name());
    let description = fmi::model_description(
        &model,
        &DescriptionOptions {
            version,
            kinds,
            model_identifier: identifier.clone(),
            // No optional capability is claimed until the runtime implements it.
            capabilities: Capabilities::default(),
            generation_tool: format!("EQM {}", env!("CARGO_PKG_VERSION")),
            generation_date: None,
        },
    );
    let resources = fmi::resources_of(&session, model.name(), &options.parameters);
    let platform = this_platform(version);
    let written = platform
        .ok_or_else(|| format!("FMI {} names no platform directory for this machine", version.text()))
        .and_then(|platform| fmi::fmu_archive(&description, &runtime, &identifier, &[platform], &resources));
    let path = out.map_or_else(|| PathBuf::from(format!("{identifier}.fmu")), Path::to_path_buf);
    let written = written.and_then(|bytes| {
        std::fs::write(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(bytes.len())
    });
    if let Err(message) = &written {
        session.push_diagnostic(export_error(message.clone()));
    }
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    if let Ok(size) = written {
        eprintln!("wrote {} (FMI {}, {} bytes)", path.display(), version.text(), size);
    }
    code
}

/// An export error about the machine or the files rather than a place in the model.
fn export_error(message: String) -> Diagnostic {
    let mut d = Diagnostic::error("E0903", message, eqm::Span::default(), "");
    d.labels.clear();
    d
}

/// The runtime library: next to the executable, in its `deps/` directory, or at
/// `EQM_FMU_RUNTIME`.
fn find_runtime() -> Result<PathBuf, String> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let mut looked = Vec::new();
    if let Some(dir) = exe_dir {
        for candidate in [dir.join(RUNTIME), dir.join("deps").join(RUNTIME)] {
            if candidate.is_file() {
                return Ok(candidate);
            }
            looked.push(candidate.display().to_string());
        }
    }
    if let Some(path) = std::env::var_os("EQM_FMU_RUNTIME").map(PathBuf::from) {
        if path.is_file() {
            return Ok(path);
        }
        looked.push(format!("{} (EQM_FMU_RUNTIME)", path.display()));
    }
    Err(format!(
        "the FMU runtime library {RUNTIME} is not found (looked at {})",
        looked.join(", ")
    ))
}

/// This machine's platform directory and shared-object extension.
fn this_platform(version: FmiVersion) -> Option<(&'static str, &'static str)> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    fmi::platform_dir(version, &format!("{}-{os}", std::env::consts::ARCH))
}

/// The model identifier: the last part of the model's name, with every character that cannot
/// be in a C identifier replaced by `_`.
fn model_identifier(model: &str) -> String {
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
