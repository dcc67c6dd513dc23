//! Names of system-dynamics variables: the key under which both dialects compare them, and
//! the `.eqm` identifier they are written as.
//!
//! Input: a name as a file writes it. Output: its canonical key, or an identifier of EQM's
//! language. Both XMILE and Vensim compare names without regard to case, take `_` and a space
//! as the same character and ignore runs of white space; a name in double quotes is the name
//! without them.

/// The key two spellings of one name share: surrounding double quotes removed, `_`, line
/// breaks and runs of white space read as one space, trimmed, lower case.
pub fn canonical(name: &str) -> String {
    let unquoted = strip_quotes(name.trim());
    let mut key = String::with_capacity(unquoted.len());
    let mut pending_space = false;
    for c in unquoted.chars() {
        if c == '_' || c.is_whitespace() {
            pending_space = !key.is_empty();
            continue;
        }
        if pending_space {
            key.push(' ');
            pending_space = false;
        }
        key.extend(c.to_lowercase());
    }
    key
}

/// The name without one pair of surrounding double quotes, if it has them.
fn strip_quotes(name: &str) -> &str {
    name.strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or(name)
}

/// The `.eqm` identifier for a name: the name itself where EQM's lexer reads it as one plain
/// identifier (no keyword) and it is not `time` or `der`, which a model's variable must not
/// hide; else the name in single quotes with the characters a quoted identifier cannot hold
/// (`'`, `\`, line breaks) replaced by `_`.
pub fn identifier(name: &str) -> String {
    if eqm_syntax::lexer::is_plain_identifier(name) && !matches!(name, "time" | "der") {
        return name.to_string();
    }
    let inner: String = name
        .chars()
        .map(|c| if matches!(c, '\'' | '\\' | '\n' | '\r') { '_' } else { c })
        .collect();
    format!("'{inner}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_name_share_a_key() {
        assert_eq!(canonical("Teacup Temperature"), "teacup temperature");
        assert_eq!(canonical("teacup_temperature"), "teacup temperature");
        assert_eq!(canonical("\"Teacup  Temperature\""), "teacup temperature");
        assert_eq!(canonical(" a__b\n c "), "a b c");
    }

    #[test]
    fn identifiers_are_quoted_only_where_needed() {
        assert_eq!(identifier("stock"), "stock");
        assert_eq!(identifier("Teacup Temperature"), "'Teacup Temperature'");
        assert_eq!(identifier("1st"), "'1st'");
        assert_eq!(identifier("time"), "'time'");
        assert_eq!(identifier("it's"), "'it_s'");
    }
}
