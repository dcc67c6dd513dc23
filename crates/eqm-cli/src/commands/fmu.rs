//! `eqm fmu`: export a model as a Functional Mock-up Unit. Compiles the model and hands it to
//! the library's export (`eqm::fmi::export`, which decides what can be exported and how), with
//! EQM's FMU runtime library (found by `eqm_cc::fmu_runtime`: `EQM_FMU_RUNTIME`, else next to
//! the `eqm` executable or in its `deps/` directory); writes the FMU.

use crate::args::ModelArgs;
use crate::load;
use crate::output::{color, finish, print_timings};
use eqm::fmi::{self, ExportOptions, FmiVersion, Kinds, export_error};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `eqm fmu`; see the module documentation.
pub(crate) fn main(args: &ModelArgs, version: FmiVersion, kinds: Kinds, out: Option<&Path>, timings: bool) -> ExitCode {
    let color = color();
    let (mut session, options) = match load::model_session(args) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let Some(model) = session.compile(args.model.as_deref(), &options) else {
        return finish(&mut session, color);
    };
    let runtime = runtime_bytes();
    let exported = runtime.map_err(|message| {
        export_error(message).with_help(
            "build it with `cargo build --release -p eqm-fmu` (it lands next to `eqm` in target/release), or set EQM_FMU_RUNTIME to its path",
        )
    });
    let export = ExportOptions {
        version,
        kinds,
        parameters: options.parameters.clone(),
    };
    let exported =
        exported.and_then(|runtime| fmi::export(&session, &model, &export, &runtime, &eqm_cc::host_platform()));
    let written = exported.and_then(|fmu| {
        let path = out.map_or_else(|| PathBuf::from(format!("{}.fmu", fmu.identifier)), Path::to_path_buf);
        std::fs::write(&path, &fmu.bytes)
            .map_err(|e| export_error(format!("cannot write {}: {e}", path.display())))
            .map(|()| (path, fmu.bytes.len()))
    });
    if let Err(d) = &written {
        session.push_diagnostic(d.clone());
    }
    let code = finish(&mut session, color);
    if timings {
        print_timings(&session);
    }
    if let Ok((path, size)) = written {
        eprintln!("wrote {} (FMI {}, {} bytes)", path.display(), version.text(), size);
    }
    code
}

/// The bytes of the runtime library.
fn runtime_bytes() -> Result<Vec<u8>, String> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let near: Vec<&Path> = exe_dir.iter().map(PathBuf::as_path).collect();
    eqm_cc::fmu_runtime_bytes(&near)
}
