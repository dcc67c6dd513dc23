//! The built-ins whose result is an Integer: `sign(v)` for a Real `v` too (it is
//! `if v > 0 then 1 else if v < 0 then -1 else 0`), and `mod`, `rem` and `div` of Integers. Each
//! is assigned to an Integer, which a Real would not be allowed to be, and its value is checked
//! against the definition on both sides of a sign change.

use crate::subscripts::{at, run_both};

const INTEGER_RESULTS: &str = "
function signOf
  input Real x;
  output Integer s;
algorithm
  s := sign(x);
end signOf;

model IntegerResults
  Real x = time - 1;
  Integer s = signOf(x);
  discrete Integer n(start = 7, fixed = true);
  discrete Integer m;
  discrete Integer r;
  discrete Integer q;
equation
  when sample(0.5, 0.5) then
    n = pre(n) + 3;
  end when;
  m = mod(-n, 5);
  r = rem(-n, 5);
  q = div(-n, 5);
end IntegerResults;
";

#[test]
fn sign_of_a_real_and_mod_rem_div_of_integers_are_integers() {
    let r = run_both(INTEGER_RESULTS, 2.0);
    assert_eq!(at(&r, "s", 0.25), -1.0);
    assert_eq!(at(&r, "s", 1.75), 1.0);
    // n = 7 before t = 0.5, then 10, 13, 16.
    for (t, n) in [(0.25, 7i64), (0.75, 10), (1.25, 13), (1.75, 16)] {
        // mod rounds the quotient down, rem and div towards zero: mod(-7, 5) = 3,
        // rem(-7, 5) = -2, div(-7, 5) = -1.
        assert_eq!(at(&r, "m", t), (-n).rem_euclid(5) as f64, "mod at {t}");
        assert_eq!(at(&r, "r", t), ((-n) % 5) as f64, "rem at {t}");
        assert_eq!(at(&r, "q", t), ((-n) / 5) as f64, "div at {t}");
    }
    assert_eq!(at(&r, "m", 0.25), 3.0);
    assert_eq!(at(&r, "r", 0.25), -2.0);
}
