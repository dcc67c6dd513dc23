//! Suggestions for misspelt names ("did you mean ...?"), shared by every stage that reports
//! an unknown name.

/// Names that models use often, the most common first. Among candidates equally far from a
/// typo the more common one is the likelier meant: `sinn` is `sin` mistyped more often than
/// `sign`.
const COMMON: &[&str] = &[
    "der", "time", "sin", "cos", "exp", "abs", "sqrt", "log", "pre", "edge", "max", "min", "tan", "sum", "size",
    "sign", "floor", "ceil", "mod", "rem", "integer", "noEvent", "smooth", "initial", "terminal", "sample", "change",
    "reinit", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "log10", "delay", "div",
];

/// The closest candidate by edit distance, if it is close enough to be a plausible typo
/// (within a third of the name's length, as Gleam does); between candidates equally close,
/// the more common name ([`COMMON`]), then the first in alphabetical order.
pub fn did_you_mean<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = (name.chars().count() / 3).max(1);
    let rarity = |c: &str| COMMON.iter().position(|k| *k == c).unwrap_or(COMMON.len());
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), rarity(c), c))
        .filter(|(d, _, c)| *d <= limit && *c != name)
        .min()
        .map(|(_, _, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(!a[i - 1].eq_ignore_ascii_case(&b[j - 1]) || a[i - 1] != b[j - 1]);
            let case_only = usize::from(a[i - 1] != b[j - 1] && a[i - 1].eq_ignore_ascii_case(&b[j - 1]));
            cur[j] = (prev[j] + 1)
                .min(cur[j - 1] + 1)
                .min(prev[j - 1] + cost - case_only.min(cost) + case_only);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("Spirng", ["Spring", "Mass", "Damper"]), Some("Spring"));
        assert_eq!(did_you_mean("mass", ["Mass", "Fixed"]), Some("Mass"));
        assert_eq!(did_you_mean("Xyz", ["Spring", "Mass"]), None);
    }

    #[test]
    fn equally_close_names_are_ranked_by_how_common_they_are() {
        // `sign` and `sin` are both one edit from `sinn`; `sin` is the more common.
        assert_eq!(did_you_mean("sinn", ["sign", "sin", "sinh"]), Some("sin"));
        // Nearer wins over more common.
        assert_eq!(did_you_mean("signn", ["sign", "sin", "sinh"]), Some("sign"));
    }
}
