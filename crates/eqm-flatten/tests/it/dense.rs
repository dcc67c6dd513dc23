//! Parameter matrices built by array constructors, as a neural-network-like model writes them:
//! every element gets the value of its own position, and a large one flattens at all (each
//! element once evaluated the whole constructor again, so that an n x n matrix took time n^4
//! and n = 128 did not finish in minutes).

use eqm_flatten::Sources;
use eqm_ir::flat::FlatModel;
use eqm_testkit::models::dense_network;

fn flatten(text: &str) -> FlatModel {
    let mut sources = Sources::new();
    sources.add_file("net.eqm", text);
    let flat = sources.flatten(None, &eqm_flatten::Options::default());
    flat.unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)))
}

/// Asserts that the value the flattener computed for parameter `name` is `expected`, to
/// rounding.
fn close(flat: &FlatModel, name: &str, expected: f64) {
    let v = flat
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no {name}"));
    let got = v.value.unwrap_or_else(|| panic!("{name} has no value"));
    assert!(
        (got - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "{name} = {got}, expected {expected}"
    );
}

#[test]
fn dense_constructor_matrices_give_each_element_its_own_value() {
    let n = 128;
    let flat = flatten(&dense_network(n));
    // h and g have n equations each, der(x) two, y one.
    assert_eq!(flat.equations.len(), 2 * n + 3);
    // n, W1, b1, W2, W3, h, g, x and y.
    assert_eq!(flat.variables.len(), 1 + 2 * n + n + n * n + 2 * n + n + n + 2 + 1);
    let nf = n as f64;
    for (i, j) in [(1, 1), (1, 128), (37, 5), (128, 1), (128, 128), (64, 65)] {
        close(&flat, &format!("W2[{i},{j}]"), (f64::from(i) + f64::from(j)).cos() / nf);
    }
    for (i, j) in [(1, 1), (1, 2), (100, 2), (128, 1)] {
        close(&flat, &format!("W1[{i},{j}]"), f64::from(i * j).sin());
    }
    for (i, j) in [(1, 1), (2, 128), (2, 77)] {
        close(&flat, &format!("W3[{i},{j}]"), f64::from(i + 2 * j).sin() / nf);
    }
    close(&flat, "b1[128]", 0.1);
    close(&flat, "b1[3]", 0.3 / nf);
}

#[test]
fn constructors_of_two_iterators_and_three_dimensions_pick_by_position() {
    let flat = flatten(
        "model Shapes
  parameter Integer M[3, 2] = {10*i + j for i in 1:2, j in 1:3};
  parameter Real T[2, 3, 4] = {{{100*i + 10*j + k for k in 1:4} for j in 1:3} for i in 1:2};
end Shapes;",
    );
    // Two iterators in one constructor: the last is the outer dimension, M[j, i] = 10 i + j.
    for (j, i) in [(1, 1), (3, 1), (2, 2), (3, 2)] {
        close(&flat, &format!("M[{j},{i}]"), f64::from(10 * i + j));
    }
    for (i, j, k) in [(1, 1, 1), (2, 3, 4), (1, 2, 3), (2, 1, 4)] {
        close(&flat, &format!("T[{i},{j},{k}]"), f64::from(100 * i + 10 * j + k));
    }
}

#[test]
fn a_constructor_with_too_few_elements_is_still_reported() {
    let text = "model Short
  parameter Real W[3, 2] = {{i + j for j in 1:2} for i in 1:2};
end Short;";
    let mut sources = Sources::new();
    sources.add_file("short.eqm", text);
    assert!(sources.flatten(None, &eqm_flatten::Options::default()).is_none());
    let diagnostics = sources.render_diagnostics(false);
    assert!(
        diagnostics.contains("`W` has size [3, 2], its binding a value of size [2, 2]"),
        "{diagnostics}"
    );
}
