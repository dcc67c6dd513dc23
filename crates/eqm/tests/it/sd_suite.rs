//! The files of the system-dynamics test suite (`../shared/sd-test-models/tests/`) that EQM
//! passes, kept passing: each file listed in `sd_suite_passing.txt` (written by
//! `sd_conformance --passing`) is imported, run and compared with its canonical output at
//! the suite's rule (`benches/sd_suite_case.rs`). Without the suite beside the repository (or where
//! `EQM_SD_SUITE` names it) the test says so and passes: the suite is test data outside the repository.

#[path = "../../../../benches/sd_suite_case.rs"]
mod case;

use std::path::Path;

#[test]
fn listed_files_of_the_system_dynamics_suite_still_pass() {
    // `EQM_SD_SUITE` names the suite's `tests` directory where it is not beside the repository.
    let suite = std::env::var_os("EQM_SD_SUITE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(crate::REPO).join("../shared/sd-test-models/tests"));
    if !suite.is_dir() {
        eprintln!("skipped: the system-dynamics suite is not at {}", suite.display());
        return;
    }
    let list = include_str!("sd_suite_passing.txt");
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in list.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let model = suite.join(entry);
        let folder = model.parent().expect("a case file lies in its case's folder");
        let reference_path = case::reference_file(folder).unwrap_or_else(|| panic!("{entry}: no reference output"));
        let text = case::reference_text(&reference_path).expect("the reference is readable");
        let tab = reference_path.extension().is_some_and(|e| e == "tab");
        let reference = case::read_reference(&text, tab).expect("the reference has a header");
        let outcome = case::run_case(&model, &reference);
        checked += 1;
        if !outcome.passed {
            failures.push(format!(
                "{entry}: {} (worst error {:.1e})",
                outcome.reason, outcome.worst
            ));
        }
    }
    assert!(checked > 0, "the list of passing files is empty");
    assert!(
        failures.is_empty(),
        "files of the suite that no longer pass:\n{}",
        failures.join("\n")
    );
}
