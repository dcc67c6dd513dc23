//! `eqm check` of a package of components (`tests/packages/rotational.eqm`) as a user runs it:
//! a balanced component is told so with its counting, an unbalanced one is an error with the
//! counting, a complete model is checked as a model, and naming a component with `--model`
//! checks it as a model to simulate, as before.

use crate::cli::eqm;

const LIBRARY: &str = "tests/packages/rotational.eqm";

#[test]
fn check_of_a_component_library_judges_each_class() {
    let (code, stdout, stderr) = eqm(&["check", LIBRARY]);
    insta::assert_snapshot!(
        "check_of_a_component_library",
        format!("exit code {code}\n--- stdout\n{stdout}--- stderr\n{stderr}")
    );
}

#[test]
fn check_of_a_library_of_balanced_components_succeeds() {
    let dir = std::env::temp_dir().join(format!("eqm-package-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = std::fs::read_to_string(format!("{}/{LIBRARY}", crate::REPO)).expect("the library");
    // The library without its unbalanced component.
    let start = text.find("  model Loose").expect("Loose");
    let end = text.find("end Loose;\n").expect("end of Loose") + "end Loose;\n".len();
    let path = dir.join("balanced.eqm");
    std::fs::write(&path, format!("{}{}", &text[..start], &text[end..])).expect("written");
    let (code, stdout, stderr) = eqm(&["check", path.to_str().expect("a path")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("Rot.Spring: balanced component: "), "{stderr}");
    assert!(stderr.contains("Rot.Oscillator: "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_component_named_with_model_is_checked_as_a_model() {
    let (code, _, stderr) = eqm(&["check", LIBRARY, "--model", "Rot.Spring"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("E0501"), "{stderr}");
}

#[test]
fn check_notes_each_branch_chosen_at_translation() {
    let file = format!("{}/tests/language/parameter_if_equations.eqm", crate::REPO);
    let (code, _, stderr) = eqm(&["check", &file, "--model", "ParameterIfEquations"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "parameter_if_equations.eqm:65:3: branch 2 chosen at translation because `order == 1` = false and `order == 2` = true"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("parameter_if_equations.eqm:32:3: branch 1 chosen at translation because `useHeatPort` = true"),
        "{stderr}"
    );
}
