//! Where EQM's FMU runtime library is on this machine, for every front end that exports FMUs.
//!
//! Input: the environment (`EQM_FMU_RUNTIME`) and the directories a front end names (the `eqm`
//! executable's, a Python package's). Output: the path of `libeqm_fmu.so`, or a message naming
//! every place looked at, or its bytes ([`fmu_runtime_bytes`]).

use std::path::{Path, PathBuf};

/// The file name of the runtime library.
pub const FMU_RUNTIME: &str = "libeqm_fmu.so";

/// The runtime library: `EQM_FMU_RUNTIME` when set, else in each of `near` and its `deps/`
/// directory (where cargo puts the library of a workspace build), in order.
pub fn fmu_runtime(near: &[&Path]) -> Result<PathBuf, String> {
    let mut looked = Vec::new();
    if let Some(path) = std::env::var_os("EQM_FMU_RUNTIME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
    {
        if path.is_file() {
            return Ok(path);
        }
        looked.push(format!("{} (EQM_FMU_RUNTIME)", path.display()));
    }
    for dir in near {
        for candidate in [dir.join(FMU_RUNTIME), dir.join("deps").join(FMU_RUNTIME)] {
            if candidate.is_file() {
                return Ok(candidate);
            }
            looked.push(candidate.display().to_string());
        }
    }
    Err(format!(
        "the FMU runtime library {FMU_RUNTIME} is not found (looked at {})",
        looked.join(", ")
    ))
}

/// The bytes of the runtime library [`fmu_runtime`] finds.
pub fn fmu_runtime_bytes(near: &[&Path]) -> Result<Vec<u8>, String> {
    let path = fmu_runtime(near)?;
    std::fs::read(&path).map_err(|e| format!("cannot read the FMU runtime {}: {e}", path.display()))
}

/// The platform this build runs on, as FMI names platforms (`x86_64-linux`, `aarch64-darwin`,
/// ...): the runtime library found here runs there.
pub fn host_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{}-{os}", std::env::consts::ARCH)
}
