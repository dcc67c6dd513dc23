//! The natural order of names in which results list variables.

use eqm_diag::text::natural_cmp;
use std::cmp::Ordering;

#[test]
fn numbers_in_names_compare_by_value() {
    let mut names = vec!["x[10]", "x[2]", "m10.v", "m2.v", "x[1]", "a", "x", "m2.a", "x[02]"];
    names.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(
        names,
        ["a", "m2.a", "m2.v", "m10.v", "x", "x[1]", "x[02]", "x[2]", "x[10]"]
    );
}

#[test]
fn the_order_is_total_and_agrees_with_equality() {
    let names = ["x[2]", "x[02]", "x[10]", "y", "y1", "y01", "", "0", "00"];
    for a in names {
        assert_eq!(natural_cmp(a, a), Ordering::Equal);
        for b in names {
            assert_eq!(natural_cmp(a, b), natural_cmp(b, a).reverse(), "{a} {b}");
            assert_eq!(natural_cmp(a, b) == Ordering::Equal, a == b, "{a} {b}");
        }
    }
}
