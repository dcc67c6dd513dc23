//! The tokens of XMILE's equation syntax.
//!
//! Input: the text of one `<eqn>` (entities already resolved by the XML parser). Output: its
//! tokens, each with its byte range in that text, or the offset of a character that starts no
//! token. Comments in braces are skipped here; names are returned as written (the parser
//! compares them through their canonical keys). Keywords are told apart from names by the
//! parser, not here, so a variable may be called `If value`.

/// One token and where it is in the equation's text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    Number(f64),
    /// A name: letters, digits, `_`, `$` and non-ASCII characters, or anything in double
    /// quotes (the quotes kept, so that `"IF"` stays a name).
    Name(String),
    /// One of `+ - * / ^ ( ) [ ] , . = < > <= >= <> != ! & |` and `&&`, `||`.
    Symbol(&'static str),
}

/// The tokens of `text`, or the byte offset of the first character that starts none and the
/// reason.
pub(crate) fn tokens(text: &str) -> Result<Vec<Token>, (usize, String)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        if c == '{' {
            // A comment runs to the matching brace; XMILE's comments do not nest.
            match text[i..].find('}') {
                Some(end) => i += end + 1,
                None => return Err((start, "a comment `{` that is never closed".to_string())),
            }
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let end = number_end(bytes, i);
            let value: f64 = text[i..end]
                .parse()
                .map_err(|_| (start, format!("`{}` is not a number", &text[i..end])))?;
            out.push(Token {
                kind: TokenKind::Number(value),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == '"' {
            let Some(close) = text[i + 1..].find('"') else {
                return Err((start, "a name in double quotes that is never closed".to_string()));
            };
            let end = i + 1 + close + 1;
            out.push(Token {
                kind: TokenKind::Name(text[i..end].to_string()),
                start,
                end,
            });
            i = end;
            continue;
        }
        if is_name_char(c) {
            let mut end = i;
            for ch in text[i..].chars() {
                if !is_name_char(ch) {
                    break;
                }
                end += ch.len_utf8();
            }
            out.push(Token {
                kind: TokenKind::Name(text[i..end].to_string()),
                start,
                end,
            });
            i = end;
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        let symbol: Option<&'static str> = match two {
            "<=" => Some("<="),
            ">=" => Some(">="),
            "<>" => Some("<>"),
            "!=" => Some("<>"),
            "&&" => Some("&"),
            "||" => Some("|"),
            _ => None,
        };
        if let Some(symbol) = symbol {
            out.push(Token {
                kind: TokenKind::Symbol(symbol),
                start,
                end: i + 2,
            });
            i += 2;
            continue;
        }
        const SINGLE: &[&str] = &[
            "+", "-", "*", "/", "^", "(", ")", "[", "]", ",", ".", "=", "<", ">", "!", "&", "|",
        ];
        let Some(symbol) = SINGLE.iter().find(|s| s.starts_with(c)) else {
            return Err((start, format!("`{c}` cannot stand in an equation")));
        };
        out.push(Token {
            kind: TokenKind::Symbol(symbol),
            start,
            end: i + 1,
        });
        i += 1;
    }
    Ok(out)
}

/// Whether `c` may be part of an unquoted name.
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || c == '\'' || (!c.is_ascii() && !c.is_whitespace())
}

/// The end of the number that starts at `i`: digits, a fraction and an exponent.
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    i
}
