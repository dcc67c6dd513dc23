//! How numbers are written in every text EQM produces, so that a value reads the same in the
//! pretty-printed source, the flat model, `explain` and the results; and the natural order of
//! names (`x[2]` before `x[10]`) in which results list variables.

/// Shortest text that reads back as the same `f64` and still lexes as a real literal.
pub fn real(out: &mut String, v: f64) {
    let s = format!("{v:?}");
    out.push_str(&s);
    if !s.contains(['.', 'e', 'E']) && v.is_finite() {
        out.push_str(".0");
    }
}

/// The shortest text that parses back to `v`: plain digits for ordinary magnitudes, an exponent
/// for very small or large ones (Rust's formatting of both is shortest round-trip).
pub fn push_number(line: &mut String, v: f64) {
    use std::fmt::Write as _;
    let a = v.abs();
    if v == 0.0 || (1e-5..1e16).contains(&a) || !v.is_finite() {
        let _ = write!(line, "{v}");
    } else {
        let _ = write!(line, "{v:e}");
    }
}

/// [`push_number`] into a new string.
pub fn format_number(v: f64) -> String {
    let mut s = String::new();
    push_number(&mut s, v);
    s
}

/// Compares two names in natural order: runs of digits compare by their numeric value, so that
/// `x[2]` comes before `x[10]` and `m2.v` before `m10.v`; otherwise byte by byte. Two names that
/// differ only in leading zeros are ordered by their bytes, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let run = |s: &[u8], mut k: usize| {
                while k < s.len() && s[k] == b'0' {
                    k += 1;
                }
                let start = k;
                while k < s.len() && s[k].is_ascii_digit() {
                    k += 1;
                }
                (start, k)
            };
            let ((xs, xe), (ys, ye)) = (run(x, i), run(y, j));
            let order = (xe - xs).cmp(&(ye - ys)).then_with(|| x[xs..xe].cmp(&y[ys..ye]));
            if order != Ordering::Equal {
                return order;
            }
            (i, j) = (xe, ye);
        } else {
            if x[i] != y[j] {
                return x[i].cmp(&y[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (x.len() - i).cmp(&(y.len() - j)).then_with(|| a.cmp(b))
}
