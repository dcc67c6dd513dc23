//! Suggestions for misspelt names ("did you mean ...?"), shared by every stage that reports
//! an unknown name.

/// The closest candidate by edit distance, if it is close enough to be a plausible typo
/// (within a third of the name's length, as Gleam does).
pub fn did_you_mean<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, c)| *d <= limit && *c != name)
        .min()
        .map(|(_, c)| c)
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
}
