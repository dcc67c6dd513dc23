//! `eqm import`: a system-dynamics file (XMILE, Stella, Vensim) written as an `.eqm` model on the
//! SystemDynamics library, to standard output or a file. The import is the library's; this
//! reads the file, prints the text or writes it, and reports the diagnostics.

use crate::load;
use crate::output::{color, finish, usage};
use std::path::Path;
use std::process::ExitCode;

/// Runs `eqm import`; see the module documentation.
pub(crate) fn main(file: &Path, out: Option<&Path>, format: Option<eqm::SdFormat>) -> ExitCode {
    let name = file.display().to_string();
    let Some(format) = format.or_else(|| eqm::SdFormat::of_file_name(&name)) else {
        return usage(format!(
            "{name}: the extension names no system-dynamics format; give --format ({})",
            eqm::SdFormat::NAMES.join(", ")
        ));
    };
    let text = match load::read_text(file) {
        Ok(text) => text,
        Err(code) => return code,
    };
    let mut session = eqm::Session::new();
    let imported = session.import_system_dynamics(&name, text, format);
    let code = finish(&mut session, color());
    let Some(imported) = imported else {
        return code;
    };
    match out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, imported) {
                return usage(format!("cannot write {}: {e}", path.display()));
            }
        }
        None => print!("{imported}"),
    }
    code
}
