//! The SVG drawing of the bipartite graph: equations on the left, unknowns on the right, the
//! matching in red, the other edges in blue, each equation with its sort number and the
//! algebraic loops shaded.
//!
//! Input: the graph view. Output: a standalone SVG 1.1 document as text, written with
//! [`eqm_diag::svg`]. It does no IO.

use super::*;
use eqm_diag::svg::{Page, SvgDocument};

/// Geometry of one drawing, chosen from the number of rows so that small graphs are roomy and
/// a few hundred nodes still fit on a tall page with readable text.
pub(super) struct Drawing {
    pub(super) row: f64,
    pub(super) font: f64,
    /// Horizontal advance of one character of the monospace font.
    pub(super) advance: f64,
    pub(super) top: f64,
    pub(super) eq_x: f64,
    pub(super) var_x: f64,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) radius: f64,
    pub(super) red_width: f64,
    pub(super) blue_width: f64,
}

/// Characters of an equation's text shown next to its node.
pub(super) const EQUATION_CHARS: usize = 56;
/// Characters of an unknown's name shown next to its node.
pub(super) const VARIABLE_CHARS: usize = 48;
/// Characters of the hover text (`<title>`) of a node: the full text unless very long.
pub(super) const TITLE_CHARS: usize = 400;
pub(super) const MARGIN: f64 = 16.0;
pub(super) const RED: &str = "#d62728";
pub(super) const BLUE: &str = "#1f5fbf";
pub(super) const LOOP_FILL: &str = "#f5a623";

impl Drawing {
    pub(super) fn new(view: &GraphView) -> Drawing {
        let rows = view.equations.len().max(view.variables.len()).max(1);
        let (row, font, radius, red_width, blue_width) = if rows <= 40 {
            (22.0, 12.0, 4.5, 1.6, 1.0)
        } else if rows <= 100 {
            (16.0, 11.0, 3.5, 1.2, 0.7)
        } else {
            (12.0, 9.0, 2.5, 0.8, 0.4)
        };
        let advance = font * 0.6;
        let top = 76.0;
        // Sort number (right-aligned in four characters), then `eNNN: text`.
        let label_chars = view
            .equations
            .iter()
            .map(|e| e.label.chars().count())
            .max()
            .unwrap_or(2);
        let text_chars = view
            .equations
            .iter()
            .map(|e| e.text.chars().count().min(EQUATION_CHARS))
            .max()
            .unwrap_or(0);
        let eq_x = MARGIN + advance * (6 + label_chars + 2 + text_chars) as f64 + 14.0;
        // Longer spans for more rows keep the edges from lying almost flat on each other.
        let var_x = eq_x + (260.0 + rows as f64).min(480.0);
        let name_chars = view
            .variables
            .iter()
            .map(|v| v.chars().count().min(VARIABLE_CHARS))
            .max()
            .unwrap_or(0);
        let legend_width = advance * 70.0 + 40.0;
        let width = (var_x + 12.0 + advance * name_chars as f64 + MARGIN).max(MARGIN * 2.0 + legend_width);
        let height = top + row * rows as f64 + 24.0 + 4.0 * 18.0 + MARGIN;
        Drawing {
            row,
            font,
            advance,
            top,
            eq_x,
            var_x,
            width,
            height,
            radius,
            red_width,
            blue_width,
        }
    }

    pub(super) fn y(&self, index: usize) -> f64 {
        self.top + self.row * (index as f64 + 0.5)
    }

    pub(super) fn render(&self, view: &GraphView) -> String {
        let page = Page::new(num(self.width), num(self.height), num(self.font))
            .titled(&format!("{}: equation/variable graph", view.model))
            .declared();
        let mut out = SvgDocument::begin(page);
        out.background();
        out.heading(
            MARGIN,
            24,
            num(self.font + 3.0),
            &format!(
                "{}: {} equations, {} unknowns, {} edges",
                view.model,
                view.equations.len(),
                view.variables.len(),
                view.edges.len()
            ),
        );
        let _ = writeln!(
            out,
            "<text class=\"heading\" x=\"{}\" y=\"{}\">equations (number: position in the evaluation order)</text>",
            num(MARGIN),
            num(self.top - 14.0)
        );
        let _ = writeln!(
            out,
            "<text class=\"heading\" x=\"{}\" y=\"{}\">unknowns</text>",
            num(self.var_x - self.radius),
            num(self.top - 14.0)
        );

        // Blue edges first, red on top: the matching must stay visible where lines cross.
        out.push_str("<g id=\"edges\">\n");
        for matched in [false, true] {
            for e in view.edges.iter().filter(|e| e.matched == matched) {
                let (class, colour, width, opacity) = if matched {
                    ("red", RED, self.red_width, 1.0)
                } else {
                    ("blue", BLUE, self.blue_width, 0.55)
                };
                let _ = writeln!(
                    out,
                    "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"{}\" stroke-opacity=\"{}\"/>",
                    num(self.eq_x),
                    num(self.y(e.equation)),
                    num(self.var_x),
                    num(self.y(e.variable)),
                    num(width),
                    num(opacity)
                );
            }
        }
        out.push_str("</g>\n");

        out.push_str("<g id=\"equations\">\n");
        for (i, eq) in view.equations.iter().enumerate() {
            let y = num(self.y(i) + self.font * 0.35);
            let fill = if eq.in_loop { LOOP_FILL } else { "#ffffff" };
            self.open_node(&mut out, self.eq_x, i, fill, &format!("{}: {}", eq.label, eq.text));
            let sort = if eq.sort == 0 {
                "?".to_string()
            } else {
                eq.sort.to_string()
            };
            let _ = writeln!(
                out,
                "<text class=\"sort\" x=\"{}\" y=\"{y}\" text-anchor=\"end\" font-weight=\"bold\">{sort}</text>",
                num(MARGIN + self.advance * 4.0)
            );
            let _ = writeln!(
                out,
                "<text class=\"eq\" x=\"{}\" y=\"{y}\">{}</text>\n</g>",
                num(MARGIN + self.advance * 6.0),
                escape(&format!("{}: {}", eq.label, shorten(&eq.text, EQUATION_CHARS)))
            );
        }
        out.push_str("</g>\n");

        out.push_str("<g id=\"unknowns\">\n");
        for (i, name) in view.variables.iter().enumerate() {
            self.open_node(&mut out, self.var_x, i, "#ffffff", name);
            let _ = writeln!(
                out,
                "<text class=\"var\" x=\"{}\" y=\"{}\">{}</text>\n</g>",
                num(self.var_x + 10.0),
                num(self.y(i) + self.font * 0.35),
                escape(&shorten(name, VARIABLE_CHARS))
            );
        }
        out.push_str("</g>\n");
        self.legend(&mut out, view);
        out.finish()
    }

    /// Opens a node's group: its hover text (the full text, unless very long) and its circle
    /// in row `index` at `x`. The caller adds the labels and closes the group.
    pub(super) fn open_node(&self, out: &mut SvgDocument, x: f64, index: usize, fill: &str, title: &str) {
        let _ = writeln!(out, "<g><title>{}</title>", escape(&shorten(title, TITLE_CHARS)));
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" stroke=\"#000000\" stroke-width=\"1\"/>",
            num(x),
            num(self.y(index)),
            num(self.radius)
        );
    }

    /// The legend uses paths and rectangles, not lines and circles, so that the `<line>` and
    /// `<circle>` elements of a drawing are exactly its edges and nodes.
    pub(super) fn legend(&self, out: &mut SvgDocument, view: &GraphView) {
        let rows = view.equations.len().max(view.variables.len()).max(1);
        let mut y = self.top + self.row * rows as f64 + 24.0;
        out.push_str("<g id=\"legend\">\n");
        let has_loops = view.equations.iter().any(|e| e.in_loop);
        let entries = [
            (
                Swatch::Line(RED),
                "red: the equation solves for this unknown (the matching)",
            ),
            (
                Swatch::Line(BLUE),
                "blue: the equation uses this unknown; another equation computes it",
            ),
            (
                Swatch::LoopNode,
                "filled node: the equation is part of an algebraic loop",
            ),
            (Swatch::None, "states and parameters are known values and have no node"),
        ];
        for (swatch, text) in entries {
            match swatch {
                Swatch::Line(colour) => {
                    let _ = writeln!(
                        out,
                        "<path d=\"M {} {} h 30\" stroke=\"{colour}\" stroke-width=\"2\" fill=\"none\"/>",
                        num(MARGIN),
                        num(y - 4.0)
                    );
                }
                // The loop entry explains something only when the drawing has a loop.
                Swatch::LoopNode if !has_loops => continue,
                Swatch::LoopNode => {
                    let _ = writeln!(
                        out,
                        "<rect x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"{LOOP_FILL}\" stroke=\"#000000\"/>",
                        num(MARGIN + 10.0),
                        num(y - 9.0)
                    );
                }
                Swatch::None => {}
            }
            let _ = writeln!(
                out,
                "<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>",
                num(MARGIN + 40.0),
                num(y),
                escape(text)
            );
            y += 18.0;
        }
        out.push_str("</g>\n");
    }
}

/// What stands left of a legend entry.
pub(super) enum Swatch {
    Line(&'static str),
    LoopNode,
    None,
}

// The text of every drawing is written the same way: coordinates with one decimal, escaped
// names, labels cut by characters.
pub(super) use eqm_diag::text::{coordinate as num, shorten, xml_escape as escape};
