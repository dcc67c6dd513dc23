//! Deep chains of component levels and of `extends` levels flatten to their one variable and
//! equation. Checking that a component does not contain its own class once walked up every
//! enclosing instance for every component, which made a chain of n levels cost n^2; the
//! `nesting` benchmark measures the time, these tests the result at a depth that runs quickly.

use eqm_flatten::Sources;
use eqm_ir::flat::FlatModel;
use eqm_testkit::models::{component_chain, extends_chain};

const DEPTH: usize = 2000;

fn flatten(text: String) -> FlatModel {
    eqm_syntax::stack::with_compiler_stack(move || {
        let mut sources = Sources::new();
        sources.add_file("chain.eqm", &text);
        let flat = sources.flatten(Some("M1"), &eqm_flatten::Options::default());
        flat.unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)))
    })
}

#[test]
fn a_deep_chain_of_components_has_its_innermost_variable() {
    let flat = flatten(component_chain(DEPTH));
    let names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, [format!("{}x", "m.".repeat(DEPTH - 1))]);
    assert_eq!(flat.equations.len(), 1);
}

#[test]
fn a_deep_chain_of_extends_has_the_inherited_variable() {
    let flat = flatten(extends_chain(DEPTH));
    let names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["x"]);
    assert_eq!(flat.equations.len(), 1);
}

/// A component whose class encloses it is still found at any depth: the fast answer (the
/// instances being instantiated, by class) must agree with the walk up the parents.
#[test]
fn a_class_containing_itself_deep_in_a_chain_is_reported() {
    let text = component_chain(DEPTH).replace(
        &format!("model M{DEPTH} Real x"),
        &format!("model M{DEPTH} M{} back; Real x", DEPTH / 2),
    );
    let out = eqm_syntax::stack::with_compiler_stack(move || {
        let mut sources = Sources::new();
        sources.add_file("chain.eqm", &text);
        let flat = sources.flatten(Some("M1"), &eqm_flatten::Options::default());
        (flat.is_none(), sources.render_diagnostics(false))
    });
    assert!(out.0, "the model flattened");
    assert!(out.1.contains("E0315"), "{}", out.1);
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
