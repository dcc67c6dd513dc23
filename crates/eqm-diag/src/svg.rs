//! The one SVG document writer of EQM: the stability picture (`analyze --svg`), component
//! diagrams (`diagram`) and the equation/variable graph (`explain --svg`) all start, title,
//! fill and close their documents here, and write their elements into it.
//!
//! Input: the size of the page and its title, then the elements each drawing writes (as
//! text, with [`crate::text::coordinate`] and [`crate::text::xml_escape`]). Output: a
//! standalone SVG 1.1 document as text, in monospace, on a white background. It deliberately
//! places nothing and knows no drawing: where things go is each drawing's own business.

use crate::text::{coordinate, xml_escape};
use std::fmt::{self, Display, Write as _};

/// What the root element of a document says about its page.
#[derive(Debug, Clone)]
pub struct Page {
    /// The width, height and font size as they are written in the attributes.
    width: String,
    height: String,
    font_size: String,
    title: Option<String>,
    declaration: bool,
}

impl Page {
    /// A page of `width` × `height` with text of `font_size`, each written as its `Display`
    /// gives it (a drawing that sizes its page in whole numbers passes them as such); without a
    /// title and without an XML declaration until asked for.
    pub fn new(width: impl Display, height: impl Display, font_size: impl Display) -> Page {
        Page {
            width: width.to_string(),
            height: height.to_string(),
            font_size: font_size.to_string(),
            title: None,
            declaration: false,
        }
    }

    /// The page with `title` as its `<title>` (what a viewer shows as the document's name).
    pub fn titled(mut self, title: &str) -> Page {
        self.title = Some(title.to_string());
        self
    }

    /// The page with the XML declaration before the root element, for a file that stands
    /// alone.
    pub fn declared(mut self) -> Page {
        self.declaration = true;
        self
    }
}

/// An SVG document being written: its root element is open until [`SvgDocument::finish`].
#[derive(Debug)]
pub struct SvgDocument {
    text: String,
    page: Page,
}

impl SvgDocument {
    /// Opens the document of `page`: the declaration when asked for, the root element and the
    /// title.
    pub fn begin(page: Page) -> SvgDocument {
        let mut text = String::new();
        if page.declaration {
            text.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        }
        let _ = writeln!(
            text,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"monospace\" font-size=\"{f}\">",
            w = page.width,
            h = page.height,
            f = page.font_size
        );
        if let Some(title) = &page.title {
            let _ = writeln!(text, "<title>{}</title>", xml_escape(title));
        }
        SvgDocument { text, page }
    }

    /// The white rectangle under the whole page, so that the drawing reads the same on a dark
    /// viewer. A drawing with `<defs>` writes them first.
    pub fn background(&mut self) {
        let _ = writeln!(
            self.text,
            "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>",
            self.page.width, self.page.height
        );
    }

    /// The bold heading line at `x` (a coordinate) and baseline `y`, in `font_size`, with
    /// `text` escaped.
    pub fn heading(&mut self, x: f64, y: impl Display, font_size: impl Display, text: &str) {
        let _ = writeln!(
            self.text,
            "<text class=\"heading\" x=\"{}\" y=\"{y}\" font-size=\"{font_size}\" font-weight=\"bold\">{}</text>",
            coordinate(x),
            xml_escape(text)
        );
    }

    /// Appends `text`, which must be SVG: one or more elements, or parts of them.
    pub fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Closes the root element and gives the text of the document.
    pub fn finish(mut self) -> String {
        self.text.push_str("</svg>\n");
        self.text
    }
}

impl fmt::Write for SvgDocument {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_has_its_preamble_background_and_end() {
        let mut svg = SvgDocument::begin(Page::new(720.0, 540.0, 12.0).titled("a < b").declared());
        svg.background();
        svg.heading(56.0, 24, 14, "x & y");
        assert_eq!(
            svg.finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"720\" height=\"540\" viewBox=\"0 0 720 540\" font-family=\"monospace\" font-size=\"12\">\n\
             <title>a &lt; b</title>\n\
             <rect x=\"0\" y=\"0\" width=\"720\" height=\"540\" fill=\"#ffffff\"/>\n\
             <text class=\"heading\" x=\"56.0\" y=\"24\" font-size=\"14\" font-weight=\"bold\">x &amp; y</text>\n\
             </svg>\n"
        );
    }
}
