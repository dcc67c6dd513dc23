//! The reader of XMILE files (OASIS XMILE 1.0, `.xmile`) and of isee Stella/iThink's dialect
//! (`.stmx`, including the Stella 10 layout with the variables directly under `<model>`).
//!
//! Input: the text of one file and its [`FileId`]. Output: the [`SdFile`] of [`crate::ir`]
//! and the diagnostics, each at the XML element it is about (the element's byte range in the
//! file, so the message shows its line). The file's display settings (views other than the
//! positions of variables, styles, preferences) change no result and are not read; every
//! other element this reader does not know is an E1002 diagnostic naming it. Nothing here
//! decides how a construct runs: that is the writer's ([`crate::emit`]).

mod lex;
mod macros;
mod parse;
mod variables;

use crate::ir::{Dialect, Dimension, Method, SdFile, SimSpecs};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use roxmltree::Node;

/// Reads `text`, the XMILE file `file`, as `dialect` (XMILE or Stella); the model, or `None`
/// when the file is no XMILE model at all, and the diagnostics.
pub fn read(file: FileId, text: &str, dialect: Dialect) -> (Option<SdFile>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    // Stella writes `isee:` elements and attributes without declaring the namespace, which
    // XML does not allow; such a prefix is read as part of the name (`isee_prefs`), a
    // replacement of the same length so that every offset stays where the file has it.
    let patched;
    let text = if text.contains("isee:") && !text.contains("xmlns:isee") {
        patched = text
            .replace("<isee:", "<isee_")
            .replace("</isee:", "</isee_")
            .replace(" isee:", " isee_");
        patched.as_str()
    } else {
        text
    };
    let doc = match roxmltree::Document::parse_with_options(text, options) {
        Ok(doc) => doc,
        Err(e) => {
            let pos = e.pos();
            let offset = offset_of(text, pos.row as usize, pos.col as usize);
            let end = (offset + 1).min(text.len()).max(offset);
            diagnostics.push(Diagnostic::error(
                "E1001",
                format!("this file is not well-formed XML: {e}"),
                Span::new(file, offset, end),
                "here",
            ));
            return (None, diagnostics);
        }
    };
    let root = doc.root_element();
    if !root.tag_name().name().eq_ignore_ascii_case("xmile") {
        diagnostics.push(Diagnostic::error(
            "E1001",
            format!(
                "this file is no XMILE model: its root element is `<{}>`, not `<xmile>`",
                root.tag_name().name()
            ),
            node_span(file, root),
            "the root element",
        ));
        return (None, diagnostics);
    }
    let mut reader = variables::Reader::new(file, &mut diagnostics);
    let specs = match child(root, "sim_specs") {
        Some(node) => reader.sim_specs(node),
        None => SimSpecs {
            start: 0.0,
            stop: 1.0,
            dt: 1.0,
            save_step: None,
            method: Method::Euler,
            time_units: None,
            dynamic_stop: false,
        },
    };
    let dimensions = child(root, "dimensions")
        .map(|node| reader.dimensions(node))
        .unwrap_or_default();
    let header = child(root, "header");
    let name = header
        .and_then(|h| child(h, "name"))
        .and_then(|n| n.text())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let doc_text = header
        .and_then(|h| child(h, "caption").or_else(|| child(h, "notes")))
        .and_then(|n| n.text())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    reader.dimension_elements = dimensions
        .iter()
        .map(|d| (canonical(&d.name), element_keys(d)))
        .collect();
    let behavior = child(root, "behavior")
        .map(variables::Behavior::read)
        .unwrap_or_default();
    for node in root.children().filter(Node::is_element) {
        let tag = node.tag_name().name();
        if is_vendor(node) {
            continue;
        }
        if !matches!(
            tag,
            "header"
                | "sim_specs"
                | "dimensions"
                | "behavior"
                | "model"
                | "macro"
                | "prefs"
                | "style"
                | "model_units"
                | "equation_prefs"
                | "data"
                | "multiplayer_settings"
                | "time_formats"
                | "default_format"
        ) {
            reader.unsupported(node, &format!("the element `<{tag}>`"));
        }
    }
    let macro_nodes: Vec<_> = root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "macro")
        .collect();
    let signatures = macros::signatures(&macro_nodes);
    reader.macros.clone_from(&signatures);
    let sd_macros = reader.macros(&macro_nodes, &signatures);
    let models: Vec<_> = root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "model")
        .collect();
    let sd_models = reader.models(&models, &dimensions, &behavior);
    let file_model = SdFile {
        dialect,
        name,
        specs,
        dimensions,
        models: sd_models,
        macros: sd_macros,
        doc: doc_text,
    };
    (Some(file_model), diagnostics)
}

/// Whether an element is one of isee's extensions (display settings and preferences).
pub(crate) fn is_vendor(node: Node) -> bool {
    node.tag_name().name().starts_with("isee_") || node.tag_name().namespace().is_some_and(|ns| ns.contains("isee"))
}

/// The first child element of `node` with the local name `name`.
pub(crate) fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.is_element() && n.tag_name().name() == name)
}

/// The span of an element: its start tag, so a diagnostic shows the element's first line.
pub(crate) fn node_span(file: FileId, node: Node) -> Span {
    let range = node.range();
    let text = node.document().input_text();
    let tag_end = text[range.clone()].find('>').map_or(range.end, |i| range.start + i + 1);
    Span::new(file, range.start, tag_end)
}

/// The byte offset of a line and column (both from 1, the column in characters).
fn offset_of(text: &str, row: usize, col: usize) -> usize {
    let mut line_start = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n + 1 == row {
            return line_start
                + line
                    .char_indices()
                    .nth(col.saturating_sub(1))
                    .map_or(line.len(), |(i, _)| i);
        }
        line_start += line.len();
    }
    text.len()
}

/// The largest number of elements of a dimension read.
const MAX_ELEMENTS: usize = 100_000;

/// The dimensions of a `<dimensions>` element, for [`variables::Reader::dimensions`].
pub(crate) fn read_dimension(file: FileId, node: Node) -> Option<Dimension> {
    let name = node.attribute("name")?.to_string();
    let mut elements: Vec<String> = node
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "elem")
        .filter_map(|n| n.attribute("name").map(str::to_string))
        .collect();
    if elements.is_empty() {
        let size: usize = node.attribute("size")?.trim().parse().ok()?;
        // Arrays are written element by element: a size beyond this is no model a
        // system-dynamics tool runs, and would only exhaust memory.
        if size > MAX_ELEMENTS {
            return None;
        }
        elements = (1..=size).map(|i| i.to_string()).collect();
    }
    Some(Dimension {
        name,
        elements,
        subrange_of: None,
        maps_to: Vec::new(),
        origin: node_span(file, node),
    })
}

/// The canonical keys of a dimension's elements.
pub(crate) fn element_keys(dimension: &Dimension) -> Vec<String> {
    dimension.elements.iter().map(|e| canonical(e)).collect()
}
