//! Deep chains of component levels and of `extends` levels flatten to their one variable and
//! equation. Checking that a component does not contain its own class once walked up every
//! enclosing instance for every component, which made a chain of n levels cost n^2; the
//! `nesting` benchmark measures the time, these tests the result at a depth that runs quickly.
//! Components nest at most 1000 levels deep (each instance is named by its whole path, so the
//! names of a chain take memory in the square of its depth); one level more is E0316, alone.

use eqm_flatten::Sources;
use eqm_ir::flat::FlatModel;
use eqm_testkit::models::{component_chain, extends_chain};

/// The deepest chain of components a model may have.
const COMPONENT_DEPTH: usize = 1000;
const EXTENDS_DEPTH: usize = 2000;

fn flatten(text: String) -> FlatModel {
    let (flat, diagnostics) = try_flatten(text);
    flat.unwrap_or_else(|| panic!("{diagnostics}"))
}

/// The flat model of `text`, if any, and its rendered diagnostics.
fn try_flatten(text: String) -> (Option<FlatModel>, String) {
    eqm_syntax::stack::with_compiler_stack(move || {
        let mut sources = Sources::new();
        sources.add_file("chain.eqm", &text);
        let flat = sources.flatten(Some("M1"), &eqm_flatten::Options::default());
        (flat, sources.render_diagnostics(false))
    })
}

#[test]
fn a_deep_chain_of_components_has_its_innermost_variable() {
    let flat = flatten(component_chain(COMPONENT_DEPTH));
    let names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, [format!("{}x", "m.".repeat(COMPONENT_DEPTH - 1))]);
    assert_eq!(flat.equations.len(), 1);
}

#[test]
fn one_component_level_past_the_limit_is_one_error_at_its_declaration() {
    let (flat, diagnostics) = try_flatten(component_chain(COMPONENT_DEPTH + 1));
    assert!(flat.is_none(), "the model flattened");
    assert_eq!(diagnostics.matches("] Error:").count(), 1, "{diagnostics}");
    assert!(diagnostics.contains("[E0316] Error:"), "{diagnostics}");
    assert!(diagnostics.contains("more than 1000 levels deep"), "{diagnostics}");
    // The innermost class's variable is the declaration one level too deep.
    let line = format!("model M{} Real x", COMPONENT_DEPTH + 1);
    assert!(diagnostics.contains(&line), "{diagnostics}");
}

#[test]
fn a_deep_chain_of_extends_has_the_inherited_variable() {
    let flat = flatten(extends_chain(EXTENDS_DEPTH));
    let names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["x"]);
    assert_eq!(flat.equations.len(), 1);
}

/// A component whose class encloses it is still found at any depth: the fast answer (the
/// instances being instantiated, by class) must agree with the walk up the parents.
#[test]
fn a_class_containing_itself_deep_in_a_chain_is_reported() {
    let depth = COMPONENT_DEPTH;
    let text = component_chain(depth).replace(
        &format!("model M{depth} Real x"),
        &format!("model M{depth} M{} back; Real x", depth / 2),
    );
    let (flat, diagnostics) = try_flatten(text);
    assert!(flat.is_none(), "the model flattened");
    assert!(diagnostics.contains("E0315"), "{diagnostics}");
}

/// One simple class name means a different class in different scopes (nested, inherited,
/// imported, at the top level), each used by many instances: the table remembers the answer of
/// each lookup per scope, so every instance must still get its own scope's class.
#[test]
fn a_name_looked_up_many_times_means_its_own_scopes_class() {
    let copies = 50;
    let mut text = String::from(
        "model C Real top = 1; end C;
package P
  model C Real nested = 2; end C;
  model UsesNested C c; end UsesNested;
end P;
package Q
  import R = P;
  model UsesImported R.C c; end UsesImported;
  model Base model C Real inherited = 3; end C; end Base;
  model UsesInherited extends Base; C c; end UsesInherited;
end Q;
model UsesTop C c; end UsesTop;
model M1
",
    );
    for i in 0..copies {
        text.push_str(&format!(
            "  P.UsesNested n{i}; Q.UsesImported m{i}; Q.UsesInherited h{i}; UsesTop t{i};\n"
        ));
    }
    text.push_str("end M1;\n");
    let flat = flatten(text);
    let mut names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    let mut expected: Vec<String> = (0..copies)
        .flat_map(|i| {
            [
                format!("n{i}.c.nested"),
                format!("m{i}.c.nested"),
                format!("h{i}.c.inherited"),
                format!("t{i}.c.top"),
            ]
        })
        .collect();
    expected.sort_unstable();
    assert_eq!(names, expected);
}
