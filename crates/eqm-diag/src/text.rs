//! How numbers are written in every text EQM produces, so that a value reads the same in the
//! pretty-printed source, the flat model, `explain` and the results; the natural order of
//! names (`x[2]` before `x[10]`) in which results list variables; and the text of the SVG
//! drawings (`explain --svg`, `diagram`): coordinates, escaped names, shortened labels.

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

/// `v` rounded to `digits` significant digits, for numbers found by bisection or iteration
/// whose last bits are noise (a step limit of 0.0019999999999999996 reads as 0.002).
pub fn round_significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powf(f64::from(digits - 1) - v.abs().log10().floor());
    (v * scale).round() / scale
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

/// A coordinate of a drawing, with one decimal: enough for a drawing, and the same text on
/// every machine.
pub fn coordinate(x: f64) -> String {
    format!("{x:.1}")
}

/// `text` cut to `max` characters (not bytes, so no character is split), with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Escapes text for XML character data and attribute values.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0; none should reach here, but a
            // drawing must stay well-formed whatever a name contains.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod svg_text_tests {
    use super::*;

    #[test]
    fn escape_handles_markup_characters() {
        assert_eq!(
            xml_escape("a < b && c > \"d\" 'e'"),
            "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &apos;e&apos;"
        );
    }

    #[test]
    fn shorten_counts_characters_not_bytes() {
        assert_eq!(shorten("äöüäöü", 4), "äöü…");
        assert_eq!(shorten("abc", 3), "abc");
    }

    #[test]
    fn coordinates_have_one_decimal() {
        assert_eq!(coordinate(1.26), "1.3");
        assert_eq!(coordinate(3.0), "3.0");
    }
}
