//! The tokens of one Vensim equation.
//!
//! Input: the text of an entry's equation part and its offset in the file. Output: tokens with
//! byte spans into the file. A name is one token even where it holds spaces (`Teacup
//! Temperature`, `IF THEN ELSE`); a quoted name keeps its quotes and escapes. A backslash at
//! the end of a line continues the line and is read as white space. This module knows no
//! function or variable: it does not tell a builtin from a variable.

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Number(f64),
    /// A name as written, white space runs collapsed to one space.
    Name(String),
    /// A single-quoted text (`'data.xls'`), as the `GET` functions take.
    Text,
    /// `:AND:`, `:EXCEPT:`, `:NA:`, ... : the keyword between the colons, upper case.
    Keyword(String),
    /// Punctuation and operators: `( ) [ ] , ; + - * / ^ = < > <= >= <> ! : := == -> <->`.
    Punct(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// A character that cannot be read, at its byte offset in the file.
#[derive(Debug)]
pub struct LexError {
    pub at: usize,
    pub len: usize,
    pub what: String,
}

/// Cuts `text` (found at byte `base` of the file) into tokens.
pub fn tokens(text: &str, base: usize) -> Result<Vec<Token>, LexError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'\\' && continues_line(bytes, i) {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i = number_end(bytes, i);
            match text[start..i].parse::<f64>() {
                Ok(value) => Tok::Number(value),
                Err(_) => return Err(error(base + start, i - start, "a malformed number")),
            }
        } else if c == b'"' {
            i = quoted_end(bytes, i).ok_or_else(|| {
                error(
                    base + start,
                    text.len() - start,
                    "a quoted name without its closing quote",
                )
            })?;
            Tok::Name(text[start..i].to_string())
        } else if c == b'\'' {
            let close = text[i + 1..]
                .find('\'')
                .ok_or_else(|| error(base + start, 1, "a text without its closing quote"))?;
            i += close + 2;
            Tok::Text
        } else if c == b':' {
            match keyword(text, i) {
                Some((word, end)) => {
                    i = end;
                    Tok::Keyword(word)
                }
                None if text[i..].starts_with(":=") => {
                    i += 2;
                    Tok::Punct(":=")
                }
                None => {
                    i += 1;
                    Tok::Punct(":")
                }
            }
        } else if let Some(p) = punct(&text[i..]) {
            i += p.len();
            Tok::Punct(p)
        } else if starts_name(text, i) {
            i = name_end(text, i);
            Tok::Name(collapse_space(&text[start..i]))
        } else {
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            return Err(error(base + start, len, "a character that starts no token"));
        };
        out.push(Token {
            tok,
            start: base + start,
            end: base + i,
        });
    }
    Ok(out)
}

fn error(at: usize, len: usize, what: &str) -> LexError {
    LexError {
        at,
        len,
        what: what.to_string(),
    }
}

/// Whether the backslash at `i` ends its line (only white space after it on the line).
fn continues_line(bytes: &[u8], i: usize) -> bool {
    let mut j = i + 1;
    while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t' || bytes[j] == b'\r') {
        j += 1;
    }
    j >= bytes.len() || bytes[j] == b'\n'
}

fn number_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            i = j;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

/// The end (after the closing quote) of the quoted name starting at `i`.
fn quoted_end(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// A `:WORD:` keyword at `i` (letters and spaces between two colons), upper case.
fn keyword(text: &str, i: usize) -> Option<(String, usize)> {
    let rest = &text[i + 1..];
    let close = rest.find(':')?;
    let word = &rest[..close];
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphabetic() || c == ' ') {
        return None;
    }
    Some((word.to_ascii_uppercase(), i + close + 2))
}

fn punct(rest: &str) -> Option<&'static str> {
    const PUNCT: &[&str] = &[
        "<->", "<=", ">=", "<>", "->", "==", "(", ")", "[", "]", ",", ";", "+", "-", "*", "/", "^", "=", "<", ">", "!",
    ];
    PUNCT.iter().find(|p| rest.starts_with(**p)).copied()
}

/// Whether a character may be part of an unquoted name.
fn name_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '_' | '$' | '\'' | '&' | '%' | '#' | '@' | '?')
        || (!c.is_ascii() && !c.is_whitespace())
}

fn starts_name(text: &str, i: usize) -> bool {
    text[i..].chars().next().is_some_and(|c| c != '\'' && name_char(c))
}

/// The end of the unquoted name starting at `i`: name characters, with single runs of white
/// space (or line continuations) between words.
fn name_end(text: &str, i: usize) -> usize {
    let mut end = i;
    for (offset, c) in text[i..].char_indices() {
        if name_char(c) {
            end = i + offset + c.len_utf8();
        } else if !(c.is_whitespace() || (c == '\\' && continues_line(text.as_bytes(), i + offset))) {
            break;
        }
    }
    end
}

/// A name with its white space (and line continuations) collapsed to single spaces.
pub fn collapse_space(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut gap = false;
    for c in name.chars() {
        if c.is_whitespace() || c == '\\' {
            gap = !out.is_empty();
        } else {
            if gap {
                out.push(' ');
                gap = false;
            }
            out.push(c);
        }
    }
    out
}
