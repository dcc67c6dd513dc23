//! `check` of a package of components and models (`Session::check_classes`): each component is
//! judged by its local balance, with the counting, and each complete model is checked as a model.

use eqm::{ClassVerdict, LocalBalance, ModelOptions, Session};

/// A small library (`tests/packages/rotational.eqm`): balanced components (with flanges, one
/// with an input), an unbalanced one, and a complete model built from them.
fn library() -> String {
    let path = format!("{}/tests/packages/rotational.eqm", crate::REPO);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn checked(text: &str) -> (Session, Vec<eqm::ClassCheck>) {
    let mut session = Session::with_sources(&[("rot.eqm".to_string(), text.to_string())], &[], None);
    let checks = session.check_classes(None, &ModelOptions::default());
    (session, checks)
}

fn verdict<'a>(checks: &'a [eqm::ClassCheck], name: &str) -> &'a ClassVerdict {
    &checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{name} is not checked: {checks:?}"))
        .verdict
}

#[test]
fn components_are_judged_by_their_local_balance() {
    let (_, checks) = checked(&library());
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Rot.Spring",
            "Rot.Torque",
            "Rot.Fixed",
            "Rot.Loose",
            "Rot.Inertia",
            "Rot.Oscillator"
        ]
    );
    // The spring: four equations and the two flow variables of its flanges determine its six
    // unknowns (two angles, two torques, the relative angle and the torque).
    let spring = LocalBalance {
        equations: 4,
        flows: 2,
        inputs: 0,
        unknowns: 6,
    };
    assert_eq!(verdict(&checks, "Rot.Spring"), &ClassVerdict::Component(spring));
    assert!(spring.is_balanced());
    // The input of the torque source is determined by the model that uses it.
    let torque = LocalBalance {
        equations: 1,
        flows: 1,
        inputs: 1,
        unknowns: 3,
    };
    assert_eq!(verdict(&checks, "Rot.Torque"), &ClassVerdict::Component(torque));
    assert!(matches!(verdict(&checks, "Rot.Inertia"), ClassVerdict::Component(b) if b.is_balanced()));
}

#[test]
fn an_unbalanced_component_is_an_error_with_the_counting() {
    let (session, checks) = checked(&library());
    let loose = LocalBalance {
        equations: 2,
        flows: 2,
        inputs: 0,
        unknowns: 5,
    };
    assert_eq!(verdict(&checks, "Rot.Loose"), &ClassVerdict::Component(loose));
    assert_eq!(
        loose.counting(),
        "2 equation(s) + 2 flow variable(s) + 0 input(s) = 4 for 5 unknown(s)"
    );
    let codes: Vec<&str> = session.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0402"], "only the unbalanced component is an error");
    assert!(session.diagnostics()[0].message.contains("Rot.Loose"));
}

#[test]
fn a_complete_model_in_the_package_is_checked_as_a_model() {
    let (_, checks) = checked(&library());
    match verdict(&checks, "Rot.Oscillator") {
        ClassVerdict::Model(Ok(summary)) => assert_eq!(summary.model, "Rot.Oscillator"),
        other => panic!("the oscillator is a model: {other:?}"),
    }
    let lines = eqm::check_lines(&checks);
    assert!(
        lines.contains(
            &"Rot.Spring: balanced component: 4 equation(s) + 2 flow variable(s) + 0 input(s) = 6 for 6 unknown(s)"
                .to_string()
        ),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("Rot.Loose: unbalanced component: ")),
        "{lines:?}"
    );
}

#[test]
fn a_component_checked_as_the_model_is_checked_as_before() {
    // Named with `--model`, a component is a model to simulate: its flanges are left alone.
    let mut session = Session::with_sources(&[("rot.eqm".to_string(), library())], &[], None);
    let checks = session.check_classes(Some("Rot.Spring"), &ModelOptions::default());
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].verdict, ClassVerdict::Model(Err(1)));
    let codes: Vec<&str> = session.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0501"]);
}
