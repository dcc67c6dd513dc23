//! Integration tests of the FMU runtime: FMUs exported by the library, driven through the
//! runtime's C functions exactly as an importer calls them (and by FMPy, an independent
//! importer, when it is installed), checked against closed-form solutions.
//!
//! One test binary for the crate; each module is one family of tests.

mod abi;
mod arrays;
mod events;
mod fmpy;
mod fmpy_structure;
mod reference_fmus;
mod state;
mod strings;

use eqm::fmi::{DescriptionOptions, FmiVersion, Kinds};
use eqm::{ModelOptions, Session};
use std::path::{Path, PathBuf};

/// The runtime shared object cargo built next to this test (the crate's cdylib).
pub fn runtime() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it is");
    let deps = exe.parent().expect("the test lies in a directory");
    [deps.join("libeqm_fmu.so"), deps.join("../libeqm_fmu.so")]
        .into_iter()
        .find(|p| p.is_file())
        .expect("cargo builds the runtime's cdylib before the tests")
}

/// An FMU of model `name` in `text`, extracted into a fresh directory under the system's
/// temporary directory: `modelDescription.xml` (FMI 2.0, Model Exchange and Co-Simulation), the model's sources under
/// `resources/`, and the runtime as `binaries/linux64/<name>.so` (a link to the built one).
/// Returns the directory and the GUID.
pub fn exported(text: &str, name: &str) -> (PathBuf, String) {
    exported_as(text, name, FmiVersion::Fmi2)
}

/// [`exported`] for FMI `version` (FMI 3: `binaries/x86_64-linux/`).
pub fn exported_as(text: &str, name: &str, version: FmiVersion) -> (PathBuf, String) {
    let mut session = Session::with_sources(&[(format!("{name}.eqm"), text.to_string())], &[], Some(name));
    extracted(&mut session, name, version)
}

/// [`exported_as`] for the model `name` in the file at `path`, compiled with a reader of the
/// file system for the data files it reads (which the FMU then carries).
pub fn exported_file(path: &Path, name: &str, version: FmiVersion) -> (PathBuf, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let mut session = Session::with_sources(&[(file, text)], &[], Some(name));
    session.set_data_reader(|path: &Path| std::fs::read(path));
    extracted(&mut session, name, version)
}

/// The FMU of model `name` of `session` extracted into a fresh directory (see [`exported`]).
fn extracted(session: &mut Session, name: &str, version: FmiVersion) -> (PathBuf, String) {
    let model = session
        .compile(Some(name), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let options = DescriptionOptions {
        version,
        kinds: Kinds { me: true, cs: true },
        model_identifier: name.to_string(),
        capabilities: eqm::fmi::capabilities_of(&model),
        generation_tool: "EQM".to_string(),
        generation_date: None,
    };
    let description = eqm::fmi::model_description(&model, &options);
    let guid = eqm::fmi::instantiation_token(&model, version);
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("eqm-fmu-test-{}-{k}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir.join("modelDescription.xml"), description.as_bytes());
    for (path, bytes) in eqm::fmi::resources_of(session, name, &[]) {
        write(&dir.join(path), &bytes);
    }
    let platform = match version {
        FmiVersion::Fmi2 => "linux64",
        FmiVersion::Fmi3 => "x86_64-linux",
    };
    let binaries = dir.join("binaries").join(platform);
    std::fs::create_dir_all(&binaries).unwrap();
    std::os::unix::fs::symlink(runtime(), binaries.join(format!("{name}.so"))).unwrap();
    (dir, guid)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The `file:` URI of the resources of the FMU extracted at `dir`.
pub fn uri(dir: &Path) -> String {
    format!("file://{}/resources", dir.display())
}

/// The value reference of variable `name` in the model description at `dir`.
pub fn reference(dir: &Path, name: &str) -> u32 {
    let xml = std::fs::read_to_string(dir.join("modelDescription.xml")).unwrap();
    let at = xml
        .find(&format!("name=\"{name}\""))
        .unwrap_or_else(|| panic!("no variable {name}"));
    let rest = &xml[at..];
    let from = rest.find("valueReference=\"").unwrap() + "valueReference=\"".len();
    let to = rest[from..].find('"').unwrap();
    rest[from..from + to].parse().unwrap()
}
