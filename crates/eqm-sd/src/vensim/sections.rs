//! The layout of a Vensim `.mdl` file: the equation section cut into entries, the sketch's
//! variable positions and the integration settings.
//!
//! Input: the whole file text. Output: [`Layout`], whose entries each hold the byte ranges of
//! an entry's equation, units and comment (`equation ~ units ~ comment |`), in file order,
//! with the `:MACRO:` and `:END OF MACRO:` markers and group headers (`****~ name |`) told
//! apart. This module reads no equation: it only finds where each part of the file is. It
//! respects double quotes in the equation part (a quoted name may hold `~` or `|`) but not in
//! comments, where Vensim allows any text.

use std::collections::HashMap;

/// One `|`-terminated entry of the equation section.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What the entry is.
    pub kind: EntryKind,
    /// The equation part (for a group: the line of stars; for a macro marker: the text after
    /// the marker).
    pub equation: (usize, usize),
    pub units: Option<(usize, usize)>,
    pub comment: Option<(usize, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Equation,
    /// `****\n.name\n****~ text |`: a group of the model's equations; its equation part holds
    /// the group's name between lines of stars, its units part the group's text.
    Group,
    /// `:MACRO: name(parameters : outputs)` followed by the macro's first equation.
    MacroStart,
    /// `:END OF MACRO:` followed, possibly, by an ordinary equation.
    MacroEnd,
}

/// Where the parts of a file are.
#[derive(Debug, Default)]
pub struct Layout {
    pub entries: Vec<Entry>,
    /// The canonical name of each sketch variable (`10,id,name,x,y,...`) with its first
    /// position in the sketch.
    pub positions: HashMap<String, (f64, f64)>,
    /// The settings line `15:...` (Vensim's integration settings), as its byte range.
    pub integration: Option<(usize, usize)>,
}

/// The marker that ends the equation section and starts the sketch (after two or three
/// backslashes).
const SKETCH_START: &str = "\\\\---///";
/// The marker that starts the settings block after the sketch.
const SETTINGS_START: &str = ":L<%^E!@";

/// Cuts a file into its parts.
pub fn layout(text: &str) -> Layout {
    let sketch_at = text.find(SKETCH_START).map_or(text.len(), |at| {
        if at > 0 && text.as_bytes()[at - 1] == b'\\' {
            at - 1
        } else {
            at
        }
    });
    let mut out = Layout::default();
    let mut start = 0;
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        start = text.len() - rest.len();
    }
    if text[start..].trim_start().starts_with("{UTF-8}") {
        start = text.find("{UTF-8}").map_or(start, |at| at + "{UTF-8}".len());
    }
    split_entries(text, start, sketch_at, &mut out.entries);
    if sketch_at < text.len() {
        read_sketch(&text[sketch_at..], &mut out.positions);
        if let Some(settings) = text[sketch_at..].find(SETTINGS_START) {
            let from = sketch_at + settings;
            let mut offset = from;
            for line in text[from..].split_inclusive('\n') {
                let trimmed = line.trim_end();
                if trimmed.starts_with("15:") {
                    out.integration = Some((offset, offset + trimmed.len()));
                }
                offset += line.len();
            }
        }
    }
    out
}

/// The parts of the entry being scanned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Equation,
    Units,
    Comment,
}

/// Cuts `text[start..end]` into entries at each `|` outside quotes.
fn split_entries(text: &str, start: usize, end: usize, entries: &mut Vec<Entry>) {
    let bytes = text.as_bytes();
    let mut part = Part::Equation;
    let mut in_quotes = false;
    let mut bounds = [start, 0, 0];
    let mut i = start;
    while i < end {
        let b = bytes[i];
        if part == Part::Equation && in_quotes {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_quotes = false;
            }
            i += 1;
            continue;
        }
        match (b, part) {
            (b'"', Part::Equation) => in_quotes = true,
            (b'~', Part::Equation) => {
                part = Part::Units;
                bounds[1] = i;
            }
            (b'~', Part::Units) => {
                part = Part::Comment;
                bounds[2] = i;
            }
            (b'|', _) => {
                push_entry(text, bounds, part, i, entries);
                part = Part::Equation;
                bounds = [i + 1, 0, 0];
            }
            _ => {}
        }
        i += 1;
    }
    let rest = &text[bounds[0].min(end)..end];
    if !rest.trim().is_empty() {
        push_entry(text, bounds, part, end, entries);
    }
}

/// Records one entry ended at `end`, splitting off a leading macro marker.
fn push_entry(text: &str, bounds: [usize; 3], part: Part, end: usize, entries: &mut Vec<Entry>) {
    let equation_end = if part == Part::Equation { end } else { bounds[1] };
    let units = match part {
        Part::Equation => None,
        Part::Units => Some((bounds[1] + 1, end)),
        Part::Comment => Some((bounds[1] + 1, bounds[2])),
    };
    let comment = (part == Part::Comment).then_some((bounds[2] + 1, end));
    let mut eq_start = skip_space(text, bounds[0], equation_end);
    // A macro's markers share an entry with the equation after them.
    loop {
        let rest = &text[eq_start..equation_end];
        if let Some(after) = strip_prefix_ignore_case(rest, ":END OF MACRO:") {
            entries.push(Entry {
                kind: EntryKind::MacroEnd,
                equation: (eq_start, eq_start + ":END OF MACRO:".len()),
                units: None,
                comment: None,
            });
            eq_start = skip_space(text, equation_end - after.len(), equation_end);
            continue;
        }
        if strip_prefix_ignore_case(rest, ":MACRO:").is_some() {
            let header_end = rest.find(')').map_or(equation_end, |at| eq_start + at + 1);
            entries.push(Entry {
                kind: EntryKind::MacroStart,
                equation: (eq_start + ":MACRO:".len(), header_end),
                units: None,
                comment: None,
            });
            eq_start = skip_space(text, header_end, equation_end);
            continue;
        }
        break;
    }
    if eq_start >= equation_end && units.is_none() {
        return;
    }
    let kind = if text[eq_start..equation_end].starts_with('*') {
        EntryKind::Group
    } else {
        EntryKind::Equation
    };
    entries.push(Entry {
        kind,
        equation: (eq_start, equation_end),
        units,
        comment,
    });
}

fn skip_space(text: &str, mut at: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    while at < end && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// `text` without `prefix`, compared without regard to ASCII case.
fn strip_prefix_ignore_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// Reads the variables' positions (`10,id,name,x,y,...`) of every view of the sketch.
fn read_sketch(sketch: &str, positions: &mut HashMap<String, (f64, f64)>) {
    for line in sketch.lines() {
        if line.starts_with("///---") || line.starts_with(SETTINGS_START) {
            break;
        }
        let Some(rest) = line.strip_prefix("10,") else {
            continue;
        };
        let Some(comma) = rest.find(',') else { continue };
        let rest = &rest[comma + 1..];
        let (name, after) = if let Some(quoted) = rest.strip_prefix('"') {
            match closing_quote(quoted) {
                Some(close) => (&rest[..close + 2], &quoted[close + 1..]),
                None => continue,
            }
        } else {
            match rest.find(',') {
                Some(at) => (&rest[..at], &rest[at..]),
                None => continue,
            }
        };
        let mut fields = after.trim_start_matches(',').split(',');
        let (Some(x), Some(y)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let (Ok(x), Ok(y)) = (x.trim().parse::<f64>(), y.trim().parse::<f64>()) {
            positions.entry(crate::names::canonical(name)).or_insert((x, y));
        }
    }
}

/// The byte offset of the `"` that closes a quoted text (whose opening quote is already
/// removed), skipping backslash escapes.
fn closing_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}
