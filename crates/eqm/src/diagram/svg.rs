//! The SVG text of a laid-out component diagram.
//!
//! Input: the diagram, its scene (boxes, symbols, the edges drawn) and their layout. Output: a
//! standalone SVG 1.1 document, written with [`eqm_diag::svg`]. Every component is one group
//! `<g class="component">` (the model's own connectors `<g class="connector">`) with its name,
//! full class name, symbol and box in `data-` attributes, and every connection drawn is one
//! group `<g class="connection">` with its two ends as written in the connect, so that tests and
//! tools can read the drawing back; hovering shows the full class name and the description. It
//! places nothing (that is `layout`) and does no IO.

use super::layout::{Layout, Point, PortPlace, Rect, Side};
use super::{DRAW_LIMIT, Diagram, EdgeKind, LABEL_CHARS, PORT_CHARS, Scene, StockKind, Symbol, short_class};
use eqm_diag::svg::{Page, SvgDocument};
use eqm_diag::text::{coordinate as num, shorten, xml_escape as escape};
use std::fmt::Write as _;

const MARGIN: f64 = 20.0;
const FONT: f64 = 12.0;
const SMALL: f64 = 10.0;
const LINE: &str = "#3d3d3d";
const SIGNAL: &str = "#1f5fbf";
const INFO: &str = "#b03a2e";
const PIPE: &str = "#4d4d4d";
const BOX_FILL: &str = "#f5f8fc";
const BOX_STROKE: &str = "#2c3e50";
const MUTED: &str = "#566573";
/// The length of the arrowhead at the end of a pipe.
const PIPE_ARROW: f64 = 12.0;
/// The width of a cloud.
const CLOUD_WIDTH: f64 = 60.0;
/// The radius of a converter's circle.
const CONVERTER_RADIUS: f64 = 15.0;

/// The drawing, with the layout shifted by the heading and the margin.
struct Canvas<'a> {
    out: SvgDocument,
    dx: f64,
    dy: f64,
    diagram: &'a Diagram,
    scene: &'a Scene,
    layout: &'a Layout,
}

pub(super) fn render(diagram: &Diagram, scene: &Scene, layout: &Layout) -> String {
    let heading = format!(
        "{}: {} components, {} connectors, {} connections",
        diagram.model,
        diagram.components.len(),
        diagram.connectors.len(),
        diagram.connections.len()
    );
    let mut notes = Vec::new();
    if !scene.expanded {
        notes.push(format!(
            "each array of components is one box: their elements would be more than {DRAW_LIMIT} boxes"
        ));
    }
    if scene.nodes.len() < scene.wanted_boxes {
        notes.push(format!(
            "only the first {} of {} boxes are drawn, with the connections between them",
            scene.nodes.len(),
            scene.wanted_boxes
        ));
    }
    let undrawn = diagram.connections.len() - scene.drawn.iter().map(|d| d.count).sum::<usize>();
    if undrawn > 0 {
        notes.push(format!("{undrawn} connections are not drawn"));
    }
    let legend = legend_entries(scene);
    let top = 30.0 + 18.0 * notes.len() as f64 + 16.0;
    let legend_top = top + layout.height + 28.0;
    let legend_width = legend.iter().map(|(_, t)| t.chars().count()).max().unwrap_or(0) as f64 * 7.2 + 60.0;
    let width = (layout.width + 2.0 * MARGIN)
        .max(heading.chars().count() as f64 * 9.0 + 2.0 * MARGIN)
        .max(notes.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64 * 7.2 + 2.0 * MARGIN)
        .max(legend_width + 2.0 * MARGIN);
    let height = legend_top + 20.0 * legend.len() as f64 + MARGIN;
    let page = Page::new(num(width), num(height), num(FONT))
        .titled(&format!("{}: component diagram", diagram.model))
        .declared();
    let mut c = Canvas {
        out: SvgDocument::begin(page),
        dx: MARGIN,
        dy: top,
        diagram,
        scene,
        layout,
    };
    c.out.push_str("<defs>\n");
    for (id, colour) in [("arrow-signal", SIGNAL), ("arrow-info", INFO)] {
        let _ = writeln!(
            c.out,
            "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{colour}\"/></marker>"
        );
    }
    c.out.push_str("</defs>\n");
    c.out.background();
    c.out.heading(MARGIN, 26, 15, &heading);
    for (i, note) in notes.iter().enumerate() {
        let _ = writeln!(
            c.out,
            "<text class=\"note\" x=\"{}\" y=\"{}\" fill=\"{MUTED}\">{}</text>",
            num(MARGIN),
            num(44.0 + 18.0 * i as f64),
            escape(note)
        );
    }
    c.connections();
    c.components();
    c.legend(&legend, legend_top);
    c.out.finish()
}

impl Canvas<'_> {
    fn x(&self, x: f64) -> String {
        num(x + self.dx)
    }

    fn y(&self, y: f64) -> String {
        num(y + self.dy)
    }

    /// `M x y L x y ...` of a polyline in layout coordinates.
    fn path_data(&self, points: &[Point]) -> String {
        let mut d = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            let _ = write!(d, "{}{} {}", if i == 0 { "M " } else { " L " }, self.x(x), self.y(y));
        }
        d
    }

    fn connections(&mut self) {
        self.out.push_str("<g id=\"connections\">\n");
        for (e, drawn) in self.scene.drawn.iter().enumerate() {
            let connection = &self.diagram.connections[drawn.connection];
            let (a, b) = (
                self.diagram.end_text(&connection.a),
                self.diagram.end_text(&connection.b),
            );
            let kind = match drawn.kind {
                EdgeKind::Physical => "physical",
                EdgeKind::Signal => "signal",
                EdgeKind::Mass => "mass",
                EdgeKind::Info => "info",
            };
            let mut title = format!("connect({a}, {b})");
            if drawn.count > 1 {
                let _ = write!(title, " and {} more between the same arrays", drawn.count - 1);
            }
            let _ = writeln!(
                self.out,
                "<g class=\"connection {kind}\" data-a=\"{}\" data-b=\"{}\" data-count=\"{}\"><title>{}</title>",
                escape(&a),
                escape(&b),
                drawn.count,
                escape(&title)
            );
            let spec = self.scene.graph.edges[e];
            let route = &self.layout.routes[e];
            let points: Vec<Point> = if route.len() >= 2 {
                route.clone()
            } else {
                // A free edge, or one the layout did not route: between the boxes' anchors.
                vec![self.anchor(spec.from), self.anchor(spec.to)]
            };
            match drawn.kind {
                EdgeKind::Physical => {
                    let d = self.path_data(&points);
                    let _ = writeln!(
                        self.out,
                        "<path d=\"{d}\" fill=\"none\" stroke=\"{LINE}\" stroke-width=\"1.5\"/>"
                    );
                }
                EdgeKind::Signal => {
                    let d = self.path_data(&points);
                    let _ = writeln!(
                        self.out,
                        "<path d=\"{d}\" fill=\"none\" stroke=\"{SIGNAL}\" stroke-width=\"1.3\" marker-end=\"url(#arrow-signal)\"/>"
                    );
                }
                EdgeKind::Mass => {
                    // The pipe reaches into a cloud's shape; its arrow shows where material
                    // arrives, so none points into a flow's valve.
                    let mut points = points;
                    let last = points.len() - 1;
                    points[0] = self.onto_symbol(spec.from, points[0]);
                    points[last] = self.onto_symbol(spec.to, points[last]);
                    let arrow = self.scene.nodes[spec.to].symbol != Symbol::Flow;
                    self.pipe(&points, arrow);
                }
                EdgeKind::Info => self.info_link(spec.from, spec.to),
            }
            self.out.push_str("</g>\n");
        }
        self.out.push_str("</g>\n");
    }

    /// Where edges attach to box `v` when they have no port, in layout coordinates.
    fn anchor(&self, v: usize) -> Point {
        let r = self.layout.boxes[v];
        let spec = self.scene.graph.nodes[v];
        let offset = spec.anchor.unwrap_or(spec.port_top + (r.h - spec.port_top) / 2.0);
        (r.x + r.w / 2.0, r.y + offset)
    }

    /// A pipe along `points` (a thick line with a white core, so it reads as a double line),
    /// with an arrowhead at its end when `arrow`.
    fn pipe(&mut self, points: &[Point], arrow: bool) {
        let mut line = points.to_vec();
        let mut head = None;
        if arrow && line.len() >= 2 {
            let (tip, before) = (line[line.len() - 1], line[line.len() - 2]);
            let (dx, dy) = (tip.0 - before.0, tip.1 - before.1);
            let length = (dx * dx + dy * dy).sqrt();
            if length > 1e-9 {
                let (ux, uy) = (dx / length, dy / length);
                let back = PIPE_ARROW.min(length);
                let base = (tip.0 - ux * back, tip.1 - uy * back);
                let last = line.len() - 1;
                line[last] = base;
                head = Some((tip, base, (-uy, ux)));
            }
        }
        let d = self.path_data(&line);
        let _ = writeln!(
            self.out,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{PIPE}\" stroke-width=\"7\"/>\n<path d=\"{d}\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"3\"/>"
        );
        if let Some((tip, base, (nx, ny))) = head {
            let half = 7.0;
            let _ = writeln!(
                self.out,
                "<path d=\"M {} {} L {} {} L {} {} z\" fill=\"{PIPE}\"/>",
                self.x(tip.0),
                self.y(tip.1),
                self.x(base.0 + nx * half),
                self.y(base.1 + ny * half),
                self.x(base.0 - nx * half),
                self.y(base.1 - ny * half)
            );
        }
    }

    /// A thin curved arrow from the symbol of box `from` to that of box `to`.
    fn info_link(&mut self, from: usize, to: usize) {
        let (c1, c2) = (self.anchor(from), self.anchor(to));
        if from == to || ((c1.0 - c2.0).abs() < 1e-9 && (c1.1 - c2.1).abs() < 1e-9) {
            // A box linked to itself: a small loop above its symbol.
            let top = self.symbol_area(from).0.y;
            let _ = writeln!(
                self.out,
                "<path d=\"M {} {} C {} {} {} {} {} {}\" fill=\"none\" stroke=\"{INFO}\" stroke-width=\"1.2\" marker-end=\"url(#arrow-info)\"/>",
                self.x(c1.0 - 6.0),
                self.y(top),
                self.x(c1.0 - 20.0),
                self.y(top - 24.0),
                self.x(c1.0 + 20.0),
                self.y(top - 24.0),
                self.x(c1.0 + 6.0),
                self.y(top)
            );
            return;
        }
        let p1 = self.boundary(from, c2);
        let p2 = self.boundary(to, c1);
        let (dx, dy) = (p2.0 - p1.0, p2.1 - p1.1);
        let length = (dx * dx + dy * dy).sqrt().max(1e-9);
        let bend = (0.18 * length).min(40.0);
        let control = (
            (p1.0 + p2.0) / 2.0 - dy / length * bend,
            (p1.1 + p2.1) / 2.0 + dx / length * bend,
        );
        let _ = writeln!(
            self.out,
            "<path d=\"M {} {} Q {} {} {} {}\" fill=\"none\" stroke=\"{INFO}\" stroke-width=\"1.2\" marker-end=\"url(#arrow-info)\"/>",
            self.x(p1.0),
            self.y(p1.1),
            self.x(control.0),
            self.y(control.1),
            self.x(p2.0),
            self.y(p2.1)
        );
    }

    /// The area of box `v`'s symbol (without the label under it) and whether it is a circle.
    fn symbol_area(&self, v: usize) -> (Rect, bool) {
        let r = self.layout.boxes[v];
        let (cx, _) = r.centre();
        match self.scene.nodes[v].symbol {
            Symbol::Cloud => (
                Rect {
                    x: cx - CLOUD_WIDTH / 2.0,
                    y: r.y + 2.0,
                    w: CLOUD_WIDTH,
                    h: 36.0,
                },
                false,
            ),
            Symbol::Flow => (
                Rect {
                    x: cx - 12.0,
                    y: r.y + 8.0,
                    w: 24.0,
                    h: 24.0,
                },
                false,
            ),
            Symbol::Converter => (
                Rect {
                    x: cx - CONVERTER_RADIUS,
                    y: r.y + 18.0 - CONVERTER_RADIUS,
                    w: 2.0 * CONVERTER_RADIUS,
                    h: 2.0 * CONVERTER_RADIUS,
                },
                true,
            ),
            Symbol::Block | Symbol::Connector | Symbol::Stock(_) => (r, false),
        }
    }

    /// `point` on a side of box `v` moved horizontally onto the side of its cloud, which is
    /// narrower than a box with a long name.
    fn onto_symbol(&self, v: usize, point: Point) -> Point {
        if self.scene.nodes[v].symbol != Symbol::Cloud {
            return point;
        }
        let (r, (area, _)) = (self.layout.boxes[v], self.symbol_area(v));
        if (point.0 - r.x).abs() < 0.5 {
            (area.x, point.1)
        } else if (point.0 - r.right()).abs() < 0.5 {
            (area.right(), point.1)
        } else {
            point
        }
    }

    /// Where the line from the middle of box `v`'s symbol towards `towards` leaves it.
    fn boundary(&self, v: usize, towards: Point) -> Point {
        let (area, circle) = self.symbol_area(v);
        let (cx, cy) = area.centre();
        let (dx, dy) = (towards.0 - cx, towards.1 - cy);
        let length = (dx * dx + dy * dy).sqrt();
        if length < 1e-9 {
            return (cx, cy);
        }
        let t = if circle {
            area.w / 2.0 / length
        } else {
            let tx = if dx.abs() > 1e-9 {
                area.w / 2.0 / dx.abs()
            } else {
                f64::INFINITY
            };
            let ty = if dy.abs() > 1e-9 {
                area.h / 2.0 / dy.abs()
            } else {
                f64::INFINITY
            };
            tx.min(ty)
        };
        let t = t.min(1.0);
        (cx + dx * t, cy + dy * t)
    }

    fn components(&mut self) {
        self.out.push_str("<g id=\"components\">\n");
        let mut ports: Vec<Vec<PortPlace>> = vec![Vec::new(); self.scene.nodes.len()];
        for place in &self.layout.ports {
            ports[place.node].push(*place);
        }
        for (v, ports) in ports.iter().enumerate() {
            self.component(v, ports);
        }
        self.out.push_str("</g>\n");
    }

    fn component(&mut self, v: usize, ports: &[PortPlace]) {
        let node = &self.scene.nodes[v];
        let element = self.diagram.element(node.owner);
        let r = self.layout.boxes[v];
        let group = if element.is_connector { "connector" } else { "component" };
        let mut title = format!("{}: {}", node.label, element.class_name);
        if let Some(description) = &element.description {
            title.push_str(" \u{2014} ");
            title.push_str(description);
        }
        let _ = writeln!(
            self.out,
            "<g class=\"{group}\" data-name=\"{}\" data-class=\"{}\" data-symbol=\"{}\" data-box=\"{} {} {} {}\"><title>{}</title>",
            escape(&node.label),
            escape(&element.class_name),
            node.symbol.name(),
            self.x(r.x),
            self.y(r.y),
            num(r.w),
            num(r.h),
            escape(&shorten(&title, 400))
        );
        let name = escape(&shorten(&node.label, LABEL_CHARS));
        let class = escape(&shorten(short_class(&element.class_name), LABEL_CHARS));
        let (cx, cy) = r.centre();
        match node.symbol {
            Symbol::Block => {
                self.rect(
                    r,
                    &format!("rx=\"5\" fill=\"{BOX_FILL}\" stroke=\"{BOX_STROKE}\" stroke-width=\"1.2\""),
                );
                self.texts(cx, r.y + 17.0, &name, &class, 14.0);
                self.ports(v, r, ports);
            }
            Symbol::Connector => {
                let tip = 10.0;
                let d = self.path_data(&[
                    (r.x, r.y),
                    (r.right() - tip, r.y),
                    (r.right(), cy),
                    (r.right() - tip, r.bottom()),
                    (r.x, r.bottom()),
                ]);
                let _ = writeln!(
                    self.out,
                    "<path d=\"{d} z\" fill=\"#fff6d5\" stroke=\"#8a6d00\" stroke-width=\"1.2\"/>"
                );
                self.texts(cx - tip / 2.0, r.y + 17.0, &name, &class, 14.0);
            }
            Symbol::Stock(kind) => {
                self.rect(r, "fill=\"#eaf2fb\" stroke=\"#1b4f72\" stroke-width=\"2\"");
                self.stock_mark(kind, r);
                self.texts(cx, cy - 2.0, &name, &class, 14.0);
            }
            Symbol::Cloud => {
                let (area, _) = self.symbol_area(v);
                self.cloud(area);
                self.texts(cx, r.bottom() - 6.0, &name, "", 0.0);
            }
            Symbol::Flow => {
                let y = r.y + 20.0;
                self.pipe(&[(r.x, y), (r.right(), y)], false);
                self.valve((cx, y), 11.0, 9.0);
                // The valve's handle.
                let _ = writeln!(
                    self.out,
                    "<path d=\"M {c} {m} L {c} {h} M {hl} {h} L {hr} {h}\" fill=\"none\" stroke=\"{PIPE}\" stroke-width=\"1.5\"/>",
                    c = self.x(cx),
                    m = self.y(y),
                    h = self.y(y - 17.0),
                    hl = self.x(cx - 6.0),
                    hr = self.x(cx + 6.0)
                );
                self.texts(cx, r.bottom() - 6.0, &name, "", 0.0);
            }
            Symbol::Converter => {
                let _ = writeln!(
                    self.out,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#fdf2e9\" stroke=\"#a04000\" stroke-width=\"1.5\"/>",
                    self.x(cx),
                    self.y(r.y + 18.0),
                    num(CONVERTER_RADIUS)
                );
                self.texts(cx, r.bottom() - 6.0, &name, "", 0.0);
            }
        }
        self.out.push_str("</g>\n");
    }

    /// A rectangle (in layout coordinates) with `attributes`.
    fn rect(&mut self, r: Rect, attributes: &str) {
        let _ = writeln!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {attributes}/>",
            self.x(r.x),
            self.y(r.y),
            num(r.w),
            num(r.h)
        );
    }

    /// A box's name (bold) centred at `y`, and its class `below` it when not empty.
    fn texts(&mut self, x: f64, y: f64, name: &str, class: &str, below: f64) {
        let _ = writeln!(
            self.out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{name}</text>",
            self.x(x),
            self.y(y)
        );
        if !class.is_empty() {
            let _ = writeln!(
                self.out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" fill=\"{MUTED}\">{class}</text>",
                self.x(x),
                self.y(y + below),
                num(SMALL)
            );
        }
    }

    /// The ports of box `v` on its sides, each a small square with its name inside the box.
    fn ports(&mut self, v: usize, r: Rect, places: &[PortPlace]) {
        let node = &self.scene.nodes[v];
        for place in places {
            let Some(label) = node.ports.get(place.port as usize) else {
                continue;
            };
            let (x, anchor, text_x) = match place.side {
                Side::Left => (r.x, "start", r.x + 7.0),
                Side::Right => (r.right(), "end", r.right() - 7.0),
            };
            let _ = writeln!(
                self.out,
                "<rect x=\"{}\" y=\"{}\" width=\"7\" height=\"7\" fill=\"#ffffff\" stroke=\"{BOX_STROKE}\"/>",
                self.x(x - 3.5),
                self.y(place.y - 3.5)
            );
            if !label.is_empty() {
                let _ = writeln!(
                    self.out,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" font-size=\"{}\" fill=\"{MUTED}\">{}</text>",
                    self.x(text_x),
                    self.y(place.y + 3.5),
                    num(SMALL),
                    escape(&shorten(label, PORT_CHARS))
                );
            }
        }
    }

    /// The mark of a stock's variant inside its rectangle.
    fn stock_mark(&mut self, kind: StockKind, r: Rect) {
        let stroke = "fill=\"none\" stroke=\"#1b4f72\" stroke-width=\"1\"";
        match kind {
            StockKind::Plain => {}
            StockKind::Discrete => {
                let inset = Rect {
                    x: r.x + 4.0,
                    y: r.y + 4.0,
                    w: r.w - 8.0,
                    h: r.h - 8.0,
                };
                self.rect(inset, &format!("{stroke} stroke-dasharray=\"3 2\""));
            }
            StockKind::Conveyor => {
                let y = r.bottom() - 6.0;
                let _ = writeln!(
                    self.out,
                    "<path d=\"M {} {y} L {} {y}\" {stroke}/>\n<circle cx=\"{}\" cy=\"{y}\" r=\"2.5\" {stroke}/>\n<circle cx=\"{}\" cy=\"{y}\" r=\"2.5\" {stroke}/>",
                    self.x(r.x + 8.0),
                    self.x(r.right() - 8.0),
                    self.x(r.x + 8.0),
                    self.x(r.right() - 8.0),
                    y = self.y(y)
                );
            }
            StockKind::Queue => {
                let mut d = String::new();
                for k in 1..=3 {
                    let x = r.right() - 5.0 * k as f64;
                    let _ = write!(
                        d,
                        "M {} {} L {} {} ",
                        self.x(x),
                        self.y(r.y + 4.0),
                        self.x(x),
                        self.y(r.bottom() - 4.0)
                    );
                }
                let _ = writeln!(self.out, "<path d=\"{}\" {stroke}/>", d.trim_end());
            }
            StockKind::Oven => {
                let mut d = String::new();
                let y = r.bottom() - 4.0;
                let mut x = r.x + 6.0;
                let _ = write!(d, "M {} {}", self.x(x), self.y(y));
                while x + 8.0 <= r.right() - 6.0 {
                    let _ = write!(
                        d,
                        " L {} {} L {} {}",
                        self.x(x + 4.0),
                        self.y(y - 5.0),
                        self.x(x + 8.0),
                        self.y(y)
                    );
                    x += 8.0;
                }
                let _ = writeln!(self.out, "<path d=\"{d}\" {stroke}/>");
            }
        }
    }

    /// A valve: two triangles meeting at `centre`, each `half_width` wide and twice
    /// `half_height` high.
    fn valve(&mut self, centre: Point, half_width: f64, half_height: f64) {
        let (cx, cy) = centre;
        let _ = writeln!(
            self.out,
            "<path d=\"M {l} {t} L {c} {m} L {l} {b} z M {r} {t} L {c} {m} L {r} {b} z\" fill=\"#ffffff\" stroke=\"{PIPE}\" stroke-width=\"1.5\"/>",
            l = self.x(cx - half_width),
            r = self.x(cx + half_width),
            c = self.x(cx),
            t = self.y(cy - half_height),
            m = self.y(cy),
            b = self.y(cy + half_height)
        );
    }

    /// A cloud filling `area`: arcs bulging out between points on an ellipse.
    fn cloud(&mut self, area: Rect) {
        let (cx, cy) = area.centre();
        let (rx, ry) = (area.w / 2.0 - 4.0, area.h / 2.0 - 4.0);
        let lobes = 7;
        let mut d = String::new();
        let point = |k: usize| {
            let angle = std::f64::consts::TAU * k as f64 / lobes as f64;
            (cx + rx * angle.cos(), cy + ry * angle.sin())
        };
        for k in 0..=lobes {
            let (x, y) = point(k % lobes);
            if k == 0 {
                let _ = write!(d, "M {} {}", self.x(x), self.y(y));
            } else {
                let (px, py) = point(k - 1);
                let radius = ((x - px).powi(2) + (y - py).powi(2)).sqrt() * 0.55;
                let _ = write!(d, " A {r} {r} 0 0 1 {} {}", self.x(x), self.y(y), r = num(radius));
            }
        }
        let _ = writeln!(
            self.out,
            "<path d=\"{d} z\" fill=\"#ffffff\" stroke=\"{PIPE}\" stroke-width=\"1.5\"/>"
        );
    }

    fn legend(&mut self, entries: &[(Swatch, &str)], top: f64) {
        self.out.push_str("<g id=\"legend\">\n");
        let mut y = top;
        for (swatch, text) in entries {
            let (x, mid) = (MARGIN, y - 4.0);
            match swatch {
                Swatch::Line(colour, width, marker) => {
                    let marker = marker.map(|m| format!(" marker-end=\"url(#{m})\"")).unwrap_or_default();
                    let _ = writeln!(
                        self.out,
                        "<path d=\"M {} {} h 34\" stroke=\"{colour}\" stroke-width=\"{width}\" fill=\"none\"{marker}/>",
                        num(x),
                        num(mid)
                    );
                }
                Swatch::Pipe => {
                    let _ = writeln!(
                        self.out,
                        "<path d=\"M {x} {m} h 34\" stroke=\"{PIPE}\" stroke-width=\"7\" fill=\"none\"/>\n<path d=\"M {x} {m} h 34\" stroke=\"#ffffff\" stroke-width=\"3\" fill=\"none\"/>",
                        x = num(x),
                        m = num(mid)
                    );
                }
                Swatch::Valve => self.valve((x + 17.0 - self.dx, mid - self.dy), 11.0, 7.0),
                Swatch::Cloud => {
                    let area = Rect {
                        x: x - self.dx,
                        y: mid - 9.0 - self.dy,
                        w: 34.0,
                        h: 18.0,
                    };
                    self.cloud(area);
                }
                Swatch::Circle => {
                    let _ = writeln!(
                        self.out,
                        "<path d=\"M {l} {m} A 7 7 0 1 0 {r} {m} A 7 7 0 1 0 {l} {m} z\" fill=\"#fdf2e9\" stroke=\"#a04000\" stroke-width=\"1.5\"/>",
                        l = num(x + 10.0),
                        r = num(x + 24.0),
                        m = num(mid)
                    );
                }
                Swatch::Shape(fill, stroke) => {
                    let _ = writeln!(
                        self.out,
                        "<path d=\"M {} {} h 26 v 12 h -26 z\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
                        num(x + 4.0),
                        num(mid - 6.0)
                    );
                }
            }
            let _ = writeln!(
                self.out,
                "<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>",
                num(x + 48.0),
                num(y),
                escape(text)
            );
            y += 20.0;
        }
        self.out.push_str("</g>\n");
    }
}

/// What stands left of a legend entry. The legend draws paths only, so that the rectangles
/// and circles of a drawing are its components'.
enum Swatch {
    /// A line of a colour and width, with an arrowhead (the id of its marker).
    Line(&'static str, f64, Option<&'static str>),
    Pipe,
    Shape(&'static str, &'static str),
    Valve,
    Cloud,
    Circle,
}

/// The legend entries for what the drawing shows.
fn legend_entries(scene: &Scene) -> Vec<(Swatch, &'static str)> {
    let has = |symbol: fn(Symbol) -> bool| scene.nodes.iter().any(|n| symbol(n.symbol));
    let drawn = |kind: EdgeKind| scene.drawn.iter().any(|d| d.kind == kind);
    let mut entries = Vec::new();
    if has(|s| s == Symbol::Block) {
        entries.push((
            Swatch::Shape(BOX_FILL, BOX_STROKE),
            "component: its name, its class, its connected connectors on its sides",
        ));
    }
    if has(|s| s == Symbol::Connector) {
        entries.push((Swatch::Shape("#fff6d5", "#8a6d00"), "connector of the model itself"));
    }
    if has(|s| matches!(s, Symbol::Stock(_))) {
        entries.push((Swatch::Shape("#eaf2fb", "#1b4f72"), "stock (reservoir)"));
    }
    if has(|s| s == Symbol::Cloud) {
        entries.push((Swatch::Cloud, "cloud: source or sink outside the model"));
    }
    if has(|s| s == Symbol::Flow) {
        entries.push((Swatch::Valve, "flow: a valve on a pipe, named below"));
    }
    if has(|s| s == Symbol::Converter) {
        entries.push((Swatch::Circle, "converter"));
    }
    if drawn(EdgeKind::Physical) {
        entries.push((Swatch::Line(LINE, 1.5, None), "connection of physical connectors"));
    }
    if drawn(EdgeKind::Signal) {
        entries.push((
            Swatch::Line(SIGNAL, 1.3, Some("arrow-signal")),
            "signal, from output to input",
        ));
    }
    if drawn(EdgeKind::Mass) {
        entries.push((Swatch::Pipe, "mass flow, the arrow in the direction of the flow"));
    }
    if drawn(EdgeKind::Info) {
        entries.push((Swatch::Line(INFO, 1.2, Some("arrow-info")), "information link"));
    }
    entries
}
