//! `eqm library [PACKAGE]` as a user runs it: the packages, the table of one package, and an
//! unknown package as a usage error.

use crate::cli::eqm;

#[test]
fn library_lists_the_packages_and_prints_the_table_of_one() {
    let (code, out, err) = eqm(&["library"]);
    assert_eq!(code, 0, "{err}");
    let packages: Vec<&str> = out.lines().collect();
    for expected in ["Units", "Blocks.Math", "Modelica.Blocks.Math", "Hydraulics.Components"] {
        assert!(packages.contains(&expected), "`{expected}` is not listed: {packages:?}");
    }

    let (code, out, err) = eqm(&["library", "Electrical.Analog.Basic"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().next(),
        Some("| class | kind | connectors | parameters | description |")
    );
    // The resistor's row: its pins with their connector classes, its parameter with the
    // default and unit its declaration gives, and its description string.
    let resistor = out
        .lines()
        .find(|l| l.starts_with("| `Resistor` |"))
        .unwrap_or_else(|| panic!("no row of Resistor in:\n{out}"));
    assert!(
        resistor.contains("| model | `p` (PositivePin), `n` (NegativePin) | `R = 1` (Ohm) |"),
        "{resistor}"
    );

    let (code, _, err) = eqm(&["library", "Electrical.Analog.Nothing"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`Electrical.Analog.Nothing` is no package of the standard library"),
        "{err}"
    );
}
