//! `eqm fmu` as a user runs it: the FMU's files, the models and kinds it refuses, and the
//! message when the runtime library is missing. The runtime's bytes are a stand-in file here:
//! these tests check the archive and the description, not running the FMU.

use super::REPO;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-cli-fmu-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `eqm fmu ARGS` in the repository root with `EQM_FMU_RUNTIME=runtime`: (exit code,
/// stderr).
fn fmu(args: &[&str], runtime: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .arg("fmu")
        .args(args)
        .current_dir(REPO)
        .env("EQM_FMU_RUNTIME", runtime)
        .env("NO_COLOR", "1")
        .output()
        .expect("eqm runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The names in a zip file's central directory, in order.
fn entries(archive: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut k = 0;
    while k + 46 <= archive.len() {
        if archive[k..k + 4] == [0x50, 0x4b, 0x01, 0x02] {
            let n = u16::from_le_bytes([archive[k + 28], archive[k + 29]]) as usize;
            names.push(String::from_utf8_lossy(&archive[k + 46..k + 46 + n]).into_owned());
            k += 46 + n;
        } else {
            k += 1;
        }
    }
    names
}

#[test]
fn fmi2_co_simulation_is_written_with_description_runtime_and_sources() {
    let dir = scratch("write");
    let runtime = dir.join("stand-in.so");
    std::fs::write(&runtime, b"stand-in runtime").unwrap();
    let out = dir.join("vdp.fmu");
    let (code, stderr) = fmu(
        &["examples/fmi/VanDerPol.eqm", "--out", out.to_str().unwrap()],
        &runtime,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("wrote") && stderr.contains("FMI 2.0"), "{stderr}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(
        entries(&bytes),
        [
            "modelDescription.xml",
            "binaries/linux64/VanDerPol.so",
            "resources/model/manifest.txt",
            "resources/model/user/0_VanDerPol.eqm",
        ]
    );
    // The same export again gives the same bytes.
    let (code, _) = fmu(
        &["examples/fmi/VanDerPol.eqm", "--out", out.to_str().unwrap()],
        &runtime,
    );
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_variable_structure_model_is_refused_at_its_declaration() {
    let dir = scratch("refuse");
    let runtime = dir.join("stand-in.so");
    std::fs::write(&runtime, b"stand-in runtime").unwrap();
    let model = dir.join("clutch.eqm");
    std::fs::write(
        &model,
        "model Clutch\n  Real v1(start = 0, fixed = true);\n  Real v2(start = 0);\n  Real f;\n  Boolean locked = time < 1;\nequation\n  der(v1) = 1 - f;\n  der(v2) = f;\n  if locked then\n    v1 = v2;\n  else\n    f = 0;\n  end if;\nend Clutch;\n",
    )
    .unwrap();
    let out = dir.join("m.fmu");
    for kind in ["me", "cs", "both"] {
        let args = [model.to_str().unwrap(), "--kind", kind, "--out", out.to_str().unwrap()];
        let (code, stderr) = fmu(&args, &runtime);
        assert_eq!(code, 1, "{kind}: {stderr}");
        assert!(
            stderr.contains("[E0902]") && stderr.contains("clutch.eqm:1:"),
            "{kind}: {stderr}"
        );
        assert!(!out.exists(), "{kind} wrote an FMU");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_runtime_says_how_to_build_it() {
    let exe_dir = Path::new(env!("CARGO_BIN_EXE_eqm")).parent().unwrap();
    if exe_dir.join("libeqm_fmu.so").exists() || exe_dir.join("deps/libeqm_fmu.so").exists() {
        eprintln!("skipping: the runtime library is built next to eqm");
        return;
    }
    let dir = scratch("missing");
    let out = dir.join("m.fmu");
    let (code, stderr) = fmu(
        &["examples/fmi/Dahlquist.eqm", "--out", out.to_str().unwrap()],
        &dir.join("absent.so"),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("error[E0903]"), "{stderr}");
    assert!(stderr.contains("cargo build --release -p eqm-fmu"), "{stderr}");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
