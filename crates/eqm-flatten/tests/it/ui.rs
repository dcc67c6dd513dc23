//! UI tests of the resolver and flattener: each file in `tests/it/ui/` is a bad model with the
//! expected diagnostics written next to the offending lines (`// error[CODE]: message`). The
//! model checked is the last top-level model of the file; the stdlib is available.

use crate::ui_harness;

use eqm_flatten::Sources;
use eqm_syntax::ast::ClassKind;
use std::path::Path;
use std::sync::Arc;

/// Flattens the file's last model and compares the diagnostics with the annotations.
fn check(name: &str, text: &str) {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text);
    // The data files of `readMatrix` lie beside the UI files, which are named without a path.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/ui");
    session.reader = Some(Arc::new(move |path: &Path| std::fs::read(dir.join(path))));
    let model = session.files[0]
        .1
        .classes
        .iter()
        .rev()
        .find(|c| matches!(c.kind, ClassKind::Model | ClassKind::Block))
        .map(|c| c.name.name.clone())
        .unwrap_or_else(|| panic!("{name} defines no model"));
    let flat = session.flatten(Some(&model), &eqm_flatten::Options::default());
    assert!(flat.is_none(), "{name}: a UI test model must fail to flatten");
    let diagnostics = std::mem::take(&mut session.diagnostics);
    ui_harness::check_annotations(name, text, diagnostics, &session.map);
}

#[test]
fn resolver_and_flattener_diagnostics_match_the_annotations() {
    insta::glob!("ui/*.eqm", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(path).expect("UI files are readable");
        assert!(
            !ui_harness::parse_annotations(&text).is_empty(),
            "{name}: a UI file must annotate at least one diagnostic"
        );
        check(&name, &text);
    });
}

/// Full renderings of a few files, to review the wording users see.
#[test]
fn rendered_flattener_diagnostics() {
    for name in [
        "underdetermined.eqm",
        "overdetermined.eqm",
        "connectors.eqm",
        "functions.eqm",
        "unknown_names.eqm",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/ui").join(name);
        let text = std::fs::read_to_string(&path).expect("UI files are readable");
        let mut session = Sources::new();
        session.add_embedded_stdlib();
        session.add_file(name, text.as_str());
        let model = session.files[0].1.classes.last().map(|c| c.name.name.clone());
        session.flatten(model.as_deref(), &eqm_flatten::Options::default());
        eqm_diag::sort(&mut session.diagnostics);
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(
                format!("rendered@{name}"),
                ui_harness::render_snapshot(&text, &session.diagnostics, &session.map)
            );
        });
    }
}
