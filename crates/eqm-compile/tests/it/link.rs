//! The link between a model's program and its initialization program, on every example: each
//! variable of the model finds itself, and each event variable finds the one that holds the
//! same relation, also when the model runs in another form than its initialization problem.

use eqm_compile::analysis::IndexForm;
use eqm_compile::exec::InitLink;
use eqm_flatten::Sources;

use crate::pipeline::Pipeline;

#[test]
fn every_variable_of_every_example_links_to_the_same_one_of_its_initialization() {
    let dir = format!("{}/examples", crate::REPO);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "eqm"))
        .collect();
    paths.sort();
    let mut linked_events = 0;
    let mut linked_programs = 0;
    for path in paths {
        for form in [IndexForm::Auto, IndexForm::Embedding, IndexForm::Dummy] {
            let name = path.display().to_string();
            let mut sources = Sources::new();
            sources.add_embedded_stdlib();
            sources.add_file(&name, std::fs::read_to_string(&path).expect("readable"));
            let compiled = sources
                .compile_with(None, &eqm_flatten::Options::default(), form)
                .unwrap_or_else(|| panic!("{name}: {}", sources.render_diagnostics(false)));
            // Without an initialization program the model's own program is the
            // initialization: there is nothing to link.
            let Some(init) = &compiled.init else {
                continue;
            };
            let program = &compiled.program;
            linked_programs += 1;
            let link = InitLink::new(program, init);
            let at = |slot| {
                init.variables()
                    .find(|(_, _, s, _)| *s == slot)
                    .map(|(_, w, _, _)| init.symbols().get(w))
            };
            for &v in program.states() {
                let symbol = program.symbols().get(v);
                let linked = link
                    .slot(v)
                    .and_then(at)
                    .unwrap_or_else(|| panic!("{name}: {}", symbol.name));
                assert_eq!(linked.name, symbol.name, "{name} ({form:?})");
            }
            for surface in &program.events().surfaces {
                for &v in &surface.relation_vars {
                    let symbol = program.symbols().get(v);
                    let linked = link
                        .slot(v)
                        .and_then(at)
                        .unwrap_or_else(|| panic!("{name}: {}", symbol.name));
                    assert_eq!(
                        linked.description, symbol.description,
                        "{name} ({form:?}): {}",
                        symbol.name
                    );
                    linked_events += 1;
                }
            }
        }
    }
    assert!(linked_events > 0, "the examples have relations");
    assert!(
        linked_programs >= 20,
        "only {linked_programs} initialization programs linked"
    );
}
