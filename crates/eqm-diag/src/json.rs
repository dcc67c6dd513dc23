//! The one JSON writer of EQM: every `--json` output (an analysis, an analysis sweep, the
//! advice on methods and steps) is put together from these pieces, so that strings are escaped
//! and numbers written the same way everywhere.
//!
//! Input: strings, numbers and already written JSON values. Output: JSON text (RFC 8259) in
//! EQM's layout: `", "` between the items of arrays and objects, `": "` after a key, and an
//! object that is a whole document one field per line ([`Object::block`]). It deliberately has
//! no value tree and no parser: each writer builds its text in one pass, in the order its
//! fields are documented, and a value is written once it is known.

use std::fmt::Write as _;

/// `text` as a JSON string: quoted, with `"`, `\` and every control character escaped, so that a
/// description holding quotes or line breaks still gives valid JSON.
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `v` as a JSON number in its shortest round-trip form ([`crate::text::format_number`]);
/// `null` when it is infinite or not a number, which JSON cannot write.
pub fn number(v: f64) -> String {
    if v.is_finite() {
        crate::text::format_number(v)
    } else {
        "null".to_string()
    }
}

/// [`number`] of `v`, or `null` when there is none.
pub fn optional_number(v: Option<f64>) -> String {
    v.map_or_else(|| "null".to_string(), number)
}

/// A JSON array of `items`, each written by `item`.
pub fn array<T>(items: impl IntoIterator<Item = T>, item: impl FnMut(T) -> String) -> String {
    format!("[{}]", items.into_iter().map(item).collect::<Vec<_>>().join(", "))
}

/// A JSON object whose fields are added in the order they are written.
#[derive(Debug, Clone, Default)]
pub struct Object {
    fields: Vec<(String, String)>,
}

impl Object {
    /// An object without fields.
    pub fn new() -> Object {
        Object::default()
    }

    /// Adds the field `key` with `value`, which must already be JSON (a [`string`], a
    /// [`number`], an [`array`], another object, `true`, `false` or `null`).
    pub fn field(mut self, key: &str, value: impl Into<String>) -> Object {
        self.push(key, value);
        self
    }

    /// [`Object::field`] on an object being built in steps.
    pub fn push(&mut self, key: &str, value: impl Into<String>) {
        self.fields.push((key.to_string(), value.into()));
    }

    /// The object on one line: `{"a": 1, "b": [2, 3]}`.
    pub fn inline(&self) -> String {
        let fields: Vec<String> = self.fields.iter().map(|(k, v)| format!("{}: {v}", string(k))).collect();
        format!("{{{}}}", fields.join(", "))
    }

    /// The object as a document: one field per line, indented by two spaces, and a line break
    /// after the closing brace.
    pub fn block(&self) -> String {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("  {}: {v}", string(k)))
            .collect();
        format!("{{\n{}\n}}\n", fields.join(",\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_backslashes_and_control_characters() {
        assert_eq!(string("a \"b\" \\ c\nd\te"), "\"a \\\"b\\\" \\\\ c\\nd\\u0009e\"");
    }

    #[test]
    fn numbers_that_json_cannot_write_are_null() {
        assert_eq!(number(f64::INFINITY), "null");
        assert_eq!(number(f64::NAN), "null");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(optional_number(None), "null");
    }

    #[test]
    fn objects_inline_and_as_a_block() {
        let object = Object::new()
            .field("a", number(1.0))
            .field("b", array([1.0, 2.0], number));
        assert_eq!(object.inline(), "{\"a\": 1, \"b\": [1, 2]}");
        assert_eq!(object.block(), "{\n  \"a\": 1,\n  \"b\": [1, 2]\n}\n");
        assert_eq!(Object::new().inline(), "{}");
    }
}
