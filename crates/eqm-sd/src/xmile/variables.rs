//! The elements of an XMILE model read into [`crate::ir`]: the simulation specs, the
//! dimensions and the variables (stocks, flows, auxiliaries, graphical functions, modules)
//! with their equations, graphical functions, units, documentation and diagram positions.
//!
//! Input: the XML elements. Output: the representation, and diagnostics pushed to the
//! reader's list. Equations are parsed by [`super::parse`] once every name of the model is
//! known, so a variable may use one declared after it.

use super::parse::{Names, Place, parse};
use super::{child, element_keys, node_span, read_dimension};
use crate::ir::{
    Definition, Dimension, Equation, Expr, ExprKind, GraphKind, GraphicalFunction, Kind, Method, Position, SdModel,
    SimSpecs, SpecialStock, Variable,
};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use roxmltree::Node;
use std::collections::HashMap;

/// The file's `<behavior>` defaults: whether stocks and flows are non-negative unless they
/// say otherwise.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Behavior {
    stocks_non_negative: bool,
    flows_non_negative: bool,
}

impl Behavior {
    pub(crate) fn read(node: Node) -> Behavior {
        let all = child(node, "non_negative").is_some();
        let of = |tag: &str| child(node, tag).is_some_and(|n| child(n, "non_negative").is_some());
        Behavior {
            stocks_non_negative: all || of("stock"),
            flows_non_negative: all || of("flow"),
        }
    }
}

pub(crate) struct Reader<'d> {
    file: FileId,
    /// The connections of modules' outputs to variables of the model that holds them (`<connect
    /// to=".name" from="module.output"/>`): the variable, the output, and the connection.
    pub(crate) links: Vec<(String, Expr)>,
    /// Every macro's canonical name with its number of parameters.
    pub(crate) macros: HashMap<String, usize>,
    diagnostics: &'d mut Vec<Diagnostic>,
    /// Each dimension's elements (canonical), for the values of arrays listed in order.
    pub(crate) dimension_elements: HashMap<String, Vec<String>>,
}

/// An element's text, with where it lies in the file.
pub(crate) fn text_of<'a>(file: FileId, node: Node<'a, '_>) -> Option<(&'a str, Place)> {
    let text_node = node.children().find(|n| n.is_text())?;
    let range = text_node.range();
    let text = text_node.text()?;
    Some((
        text,
        Place {
            file,
            base: range.start,
            end: range.end,
        },
    ))
}

/// The numbers of an equation that lists them separated by commas (two at least), each
/// at the equation's place.
fn number_list(text: &str, span: Span) -> Option<Vec<(f64, Span)>> {
    if !text.contains(',') {
        return None;
    }
    // Rows of a two-dimensional array end in `;`.
    text.split([',', ';'])
        .filter(|s| !s.trim().is_empty())
        .map(|s| number(s).map(|v| (v, span)))
        .collect()
}

/// A number written in an element's text or an attribute.
fn number(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>() {
        return Some(v);
    }
    // Stella writes some specs as fractions (`1/4`).
    let (a, b) = t.split_once('/')?;
    Some(a.trim().parse::<f64>().ok()? / b.trim().parse::<f64>().ok()?)
}

impl<'d> Reader<'d> {
    pub(crate) fn new(file: FileId, diagnostics: &'d mut Vec<Diagnostic>) -> Reader<'d> {
        Reader {
            file,
            links: Vec::new(),
            macros: HashMap::new(),
            diagnostics,
            dimension_elements: HashMap::new(),
        }
    }

    /// The file being read.
    pub(crate) fn file(&self) -> FileId {
        self.file
    }

    /// Keeps a diagnostic.
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// The E1002 diagnostic for a construct this reader does not support.
    pub(crate) fn unsupported(&mut self, node: Node, what: &str) {
        self.diagnostics.push(Diagnostic::error(
            "E1002",
            format!("EQM does not import {what}"),
            node_span(self.file, node),
            "not supported",
        ));
    }

    fn spec_number(&mut self, node: Node, tag: &str, default: f64) -> f64 {
        let Some(element) = child(node, tag) else {
            return default;
        };
        match element.text().and_then(number) {
            Some(v) if element.attribute("reciprocal") == Some("true") => 1.0 / v,
            Some(v) => v,
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E1003",
                    format!("`<{tag}>` must hold a number"),
                    node_span(self.file, element),
                    "not a number",
                ));
                default
            }
        }
    }

    pub(crate) fn sim_specs(&mut self, node: Node) -> SimSpecs {
        let start = self.spec_number(node, "start", 0.0);
        let stop = self.spec_number(node, "stop", start + 1.0);
        let dt = self.spec_number(node, "dt", 1.0);
        let save_step = node
            .attributes()
            .find(|a| a.name() == "save_interval" || a.name() == "isee_save_interval")
            .and_then(|a| number(a.value()))
            .or_else(|| child(node, "save_step").and_then(|n| n.text()).and_then(number));
        let method = match node.attribute("method").map(str::to_ascii_lowercase).as_deref() {
            None | Some("euler") => Method::Euler,
            Some("rk4") => Method::Rk4,
            Some("rk2") => Method::Rk2,
            Some(other) => {
                self.diagnostics.push(Diagnostic::error(
                    "E1002",
                    format!("EQM does not import the integration method `{other}`"),
                    node_span(self.file, node),
                    "only Euler, RK2 and RK4 are imported",
                ));
                Method::Euler
            }
        };
        // Stella's pause interval stops an interactive run for the user; the results do not
        // depend on it.
        if let Some(pause) = node
            .attributes()
            .find(|a| a.name() == "pause" || a.name() == "isee_pause")
        {
            self.diagnostics.push(Diagnostic::warning(
                "W1001",
                format!(
                    "EQM runs without pausing (`pause=\"{}\"` is not applied)",
                    pause.value()
                ),
                node_span(self.file, node),
                "the simulation specs",
            ));
        }
        SimSpecs {
            start,
            stop,
            dt,
            save_step,
            method,
            time_units: node.attribute("time_units").map(str::to_string),
            dynamic_stop: false,
        }
    }

    pub(crate) fn dimensions(&mut self, node: Node) -> Vec<Dimension> {
        let mut out = Vec::new();
        for dim in node.children().filter(|n| n.is_element()) {
            match read_dimension(self.file, dim) {
                Some(d) => out.push(d),
                None => self.diagnostics.push(Diagnostic::error(
                    "E1003",
                    "a dimension needs a name and either a size (at most 100000) or its elements",
                    node_span(self.file, dim),
                    "this dimension",
                )),
            }
        }
        out
    }

    /// Every model of the file, the main one (without a name) first.
    pub(crate) fn models(&mut self, models: &[Node], dimensions: &[Dimension], behavior: &Behavior) -> Vec<SdModel> {
        let mut ordered: Vec<Node> = models.to_vec();
        ordered.sort_by_key(|m| m.attribute("name").is_some());
        ordered
            .into_iter()
            .map(|m| self.model(m, dimensions, behavior, &[]))
            .collect()
    }

    /// A model (or the `<variables>` of a macro, whose equations may name its `parameters`).
    pub(crate) fn model(
        &mut self,
        node: Node,
        dimensions: &[Dimension],
        behavior: &Behavior,
        parameters: &[String],
    ) -> SdModel {
        // XMILE 1.0 puts the variables in `<variables>`; Stella 10 directly under `<model>`.
        let container = child(node, "variables").unwrap_or(node);
        let elements: Vec<Node> = container
            .children()
            .filter(|n| {
                n.is_element()
                    && !matches!(
                        n.tag_name().name(),
                        "views" | "variables" | "group" | "display" | "interface"
                    )
            })
            .collect();
        let positions = child(node, "views").map(positions).unwrap_or_default();
        let mut names = Names::default();
        names.macros.clone_from(&self.macros);
        for d in dimensions {
            names.dimensions.insert(canonical(&d.name), element_keys(d));
        }
        for p in parameters {
            names.variables.insert(canonical(p), Vec::new());
        }
        for e in &elements {
            let Some(name) = e.attribute("name") else { continue };
            let key = canonical(&display_name(name));
            let dims: Vec<String> = child(*e, "dimensions")
                .map(|ds| {
                    ds.children()
                        .filter(|n| n.is_element())
                        .filter_map(|n| n.attribute("name").map(canonical))
                        .collect()
                })
                .unwrap_or_default();
            names.variables.insert(key.clone(), dims);
            if e.tag_name().name() == "gf" || child(*e, "gf").is_some() {
                names.lookups.insert(key);
            }
        }
        let mut variables = Vec::new();
        let mut seen: HashMap<String, Span> = HashMap::new();
        for e in elements {
            let Some(variable) = self.variable(e, &names, behavior) else {
                continue;
            };
            let key = canonical(&variable.name);
            if let Some(first) = seen.get(&key) {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E1007",
                        format!("`{}` is defined twice", variable.name),
                        variable.origin,
                        "again here",
                    )
                    .with_label(*first, "first defined here"),
                );
                continue;
            }
            seen.insert(key.clone(), variable.origin);
            let mut variable = variable;
            variable.position = positions.get(&key).copied();
            variables.push(variable);
        }
        // A variable a module's output is connected to takes that output as its equation.
        for (target, output) in std::mem::take(&mut self.links) {
            match variables.iter_mut().find(|v| canonical(&v.name) == target) {
                Some(v) => v.definition = Definition::Uniform(Equation::Value(output)),
                None => self.diagnostics.push(Diagnostic::error(
                    "E1004",
                    format!("a module's output is connected to `{target}`, which is no variable of this model"),
                    output.span,
                    "this connection",
                )),
            }
        }
        SdModel {
            name: node.attribute("name").unwrap_or("").to_string(),
            variables,
            doc: None,
        }
    }

    // Long function: one arm per kind of variable element, each reading that kind's children.
    fn variable(&mut self, node: Node, names: &Names, behavior: &Behavior) -> Option<Variable> {
        let tag = node.tag_name().name();
        if !matches!(tag, "stock" | "flow" | "aux" | "gf" | "module") {
            if !super::is_vendor(node) {
                self.unsupported(node, &format!("the element `<{tag}>` in a model"));
            }
            return None;
        }
        let Some(raw_name) = node.attribute("name") else {
            self.diagnostics.push(Diagnostic::error(
                "E1007",
                format!("a `<{tag}>` without a name"),
                node_span(self.file, node),
                "no name attribute",
            ));
            return None;
        };
        let name = display_name(raw_name);
        let origin = node_span(self.file, node);
        let dimensions: Vec<String> = child(node, "dimensions")
            .map(|ds| {
                ds.children()
                    .filter(|n| n.is_element())
                    .filter_map(|n| n.attribute("name").map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let non_negative_of = |default: bool| {
            let explicit = child(node, "non_negative");
            match explicit {
                Some(n) => n.text().is_none_or(|t| t.trim() != "false"),
                None => default,
            }
        };
        let kind = match tag {
            "stock" => {
                let list = |t: &str| -> Vec<String> {
                    node.children()
                        .filter(|n| n.is_element() && n.tag_name().name() == t)
                        .filter_map(|n| n.text().map(|s| display_name(s.trim())))
                        .collect()
                };
                let special = self.special_stock(node, names);
                Kind::Stock {
                    inflows: list("inflow"),
                    outflows: list("outflow"),
                    non_negative: non_negative_of(behavior.stocks_non_negative),
                    special,
                }
            }
            "flow" => Kind::Flow {
                non_negative: non_negative_of(behavior.flows_non_negative),
            },
            "gf" => Kind::Lookup,
            "module" => return self.module(node, name, origin),
            _ if child(node, "gf").is_some() && child(node, "eqn").is_none() => Kind::Lookup,
            _ => Kind::Aux,
        };
        let is_stock = matches!(kind, Kind::Stock { .. });
        let eqns: Vec<Node> = node
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "eqn")
            .collect();
        if eqns.len() > 1 && (dimensions.is_empty() || child(node, "element").is_some()) {
            self.diagnostics.push(Diagnostic::error(
                "E1003",
                "a variable has one `<eqn>` (an arrayed one gives each element its own in `<element>`)",
                node_span(self.file, eqns[1]),
                "a second equation",
            ));
            return None;
        }
        let list = if dimensions.is_empty() || eqns.len() > 1 {
            None
        } else {
            eqns.first()
                .and_then(|e| number_list(e.text()?, node_span(self.file, *e)))
        };
        let definition = if let Some(values) = list {
            self.array_literal(node, &dimensions, values, is_stock)?
        } else if eqns.len() > 1 {
            // Some tools write an arrayed variable as one `<eqn>` per element, in the order
            // of its elements.
            let mut parsed = Vec::new();
            for e in &eqns {
                let expr = self.expression(*e, names)?;
                parsed.push(if is_stock {
                    Equation::Stock {
                        rate: None,
                        initial: expr,
                    }
                } else {
                    Equation::Value(expr)
                });
            }
            self.in_order(node, &dimensions, parsed)?
        } else if child(node, "element").is_some() {
            let mut parts = Vec::new();
            for el in node
                .children()
                .filter(|n| n.is_element() && n.tag_name().name() == "element")
            {
                let subscripts: Vec<String> = el
                    .attribute("subscript")
                    .unwrap_or("")
                    .split(',')
                    .map(canonical)
                    .collect();
                let equation = self.equation(el, node, names, is_stock)?;
                parts.push((subscripts, equation));
            }
            Definition::Elements(parts)
        } else {
            Definition::Uniform(self.equation(node, node, names, is_stock)?)
        };
        let range =
            child(node, "range").and_then(|r| Some((number(r.attribute("min")?)?, number(r.attribute("max")?)?)));
        Some(Variable {
            name,
            kind,
            dimensions,
            definition,
            units: child(node, "units")
                .and_then(|n| n.text())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            doc: child(node, "doc")
                .and_then(|n| n.text())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            origin,
            position: None,
            range,
        })
    }

    /// The definition of an arrayed variable whose equation lists its elements' values in
    /// order (`1, 2, 3`), the last dimension running fastest.
    fn array_literal(
        &mut self,
        node: Node,
        dimensions: &[String],
        values: Vec<(f64, Span)>,
        is_stock: bool,
    ) -> Option<Definition> {
        let equations = values
            .into_iter()
            .map(|(v, span)| {
                let expr = Expr {
                    kind: ExprKind::Number(v),
                    span,
                };
                if is_stock {
                    Equation::Stock {
                        rate: None,
                        initial: expr,
                    }
                } else {
                    Equation::Value(expr)
                }
            })
            .collect();
        self.in_order(node, dimensions, equations)
    }

    /// The definition of an arrayed variable from one equation per element, in the order of
    /// its elements (the last dimension running fastest).
    fn in_order(&mut self, node: Node, dimensions: &[String], equations: Vec<Equation>) -> Option<Definition> {
        let mut tuples: Vec<Vec<String>> = vec![Vec::new()];
        for dim in dimensions {
            let Some(elements) = self.dimension_elements.get(&canonical(dim)) else {
                self.diagnostics.push(Diagnostic::error(
                    "E1006",
                    format!("the dimension `{dim}` is not declared in the file's `<dimensions>`"),
                    node_span(self.file, node),
                    "this variable",
                ));
                return None;
            };
            tuples = tuples
                .into_iter()
                .flat_map(|prefix| {
                    elements.iter().map(move |e| {
                        let mut t = prefix.clone();
                        t.push(e.clone());
                        t
                    })
                })
                .collect();
        }
        if tuples.len() != equations.len() {
            self.diagnostics.push(Diagnostic::error(
                "E1006",
                format!("{} values for {} elements", equations.len(), tuples.len()),
                node_span(self.file, node),
                "this variable",
            ));
            return None;
        }
        Some(Definition::Elements(tuples.into_iter().zip(equations).collect()))
    }

    /// The equation of a variable (or of one element of it, `node` an `<element>` of
    /// `variable`): a stock's initial value, a value, a graphical function of an input or a
    /// table.
    fn equation(&mut self, node: Node, variable: Node, names: &Names, is_stock: bool) -> Option<Equation> {
        let gf = child(node, "gf").or_else(|| (variable.tag_name().name() == "gf").then_some(variable));
        let eqn = child(node, "eqn");
        let expr = match eqn {
            Some(e) => Some(self.expression(e, names)?),
            None => None,
        };
        match (gf, expr) {
            (Some(g), Some(input)) if !is_stock => Some(Equation::Graph {
                input,
                graph: self.graph(g)?,
            }),
            (Some(g), None) => Some(Equation::Table(self.graph(g)?)),
            (_, Some(expr)) if is_stock => Some(Equation::Stock {
                rate: None,
                initial: expr,
            }),
            (_, Some(expr)) => Some(Equation::Value(expr)),
            // An input of a model that a module's connection binds, and a flow that a
            // conveyor drives (the writer reports a flow that nothing defines).
            (None, None) if variable.attribute("access") == Some("input") || variable.tag_name().name() == "flow" => {
                Some(Equation::Undefined)
            }
            (None, None) => {
                self.diagnostics.push(Diagnostic::error(
                    "E1007",
                    "this variable has no equation",
                    node_span(self.file, node),
                    "no `<eqn>`",
                ));
                None
            }
        }
    }

    fn expression(&mut self, eqn: Node, names: &Names) -> Option<Expr> {
        let Some((text, place)) = text_of(self.file, eqn) else {
            self.diagnostics.push(Diagnostic::error(
                "E1003",
                "this equation is empty",
                node_span(self.file, eqn),
                "no expression here",
            ));
            return None;
        };
        match parse(text, place, names) {
            Ok(e) => Some(e),
            Err(d) => {
                self.diagnostics.push(d);
                None
            }
        }
    }

    /// A `<gf>`: its kind, and its points from `<xpts>` or spread evenly over `<xscale>`.
    fn graph(&mut self, node: Node) -> Option<GraphicalFunction> {
        let kind = match node.attribute("type").unwrap_or("continuous") {
            "continuous" => GraphKind::Continuous,
            "extrapolate" => GraphKind::Extrapolate,
            "discrete" => GraphKind::Discrete,
            other => {
                self.unsupported(node, &format!("a graphical function of type `{other}`"));
                return None;
            }
        };
        let points = |tag: &str| -> Option<Result<Vec<f64>, ()>> {
            let el = child(node, tag)?;
            let sep = el.attribute("sep").unwrap_or(",");
            let text = el.text().unwrap_or("");
            Some(
                text.split(sep)
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| number(s).ok_or(()))
                    .collect(),
            )
        };
        let bad = |this: &mut Self, why: &str| {
            this.diagnostics.push(Diagnostic::error(
                "E1003",
                format!("cannot read this graphical function: {why}"),
                node_span(this.file, node),
                "this graphical function",
            ));
        };
        let y = match points("ypts") {
            Some(Ok(y)) if !y.is_empty() => y,
            _ => {
                bad(self, "`<ypts>` must list its values as numbers");
                return None;
            }
        };
        let x = match points("xpts") {
            Some(Ok(x)) => x,
            Some(Err(())) => {
                bad(self, "`<xpts>` must list its values as numbers");
                return None;
            }
            None => {
                let scale = child(node, "xscale")
                    .and_then(|s| Some((number(s.attribute("min")?)?, number(s.attribute("max")?)?)));
                let Some((lo, hi)) = scale else {
                    bad(self, "it has neither `<xpts>` nor an `<xscale>` with `min` and `max`");
                    return None;
                };
                let n = y.len();
                if n == 1 {
                    vec![lo]
                } else {
                    (0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect()
                }
            }
        };
        if x.len() != y.len() {
            bad(self, &format!("{} x values but {} y values", x.len(), y.len()));
            return None;
        }
        if x.iter().chain(&y).any(|v| !v.is_finite()) {
            bad(self, "its values must be finite numbers");
            return None;
        }
        if x.windows(2).any(|w| w[0] > w[1]) {
            bad(self, "the x values must not decrease");
            return None;
        }
        Some(GraphicalFunction {
            kind,
            x,
            y,
            origin: node_span(self.file, node),
        })
    }

    /// isee's conveyor, queue or oven of a stock, kept for the writer (which says which it
    /// runs).
    fn special_stock(&mut self, node: Node, names: &Names) -> Option<Box<SpecialStock>> {
        if let Some(c) = child(node, "conveyor") {
            let transit = child(c, "len").and_then(|n| self.expression(n, names));
            let Some(transit_time) = transit else {
                self.unsupported(c, "a conveyor without a transit time (`<len>`)");
                return None;
            };
            // What EQM's conveyor does not do is named at its tag, never left out.
            for (tag, what) in [
                ("capacity", "a conveyor's capacity (`<capacity>`)"),
                ("in_limit", "a conveyor's inflow limit (`<in_limit>`)"),
                ("arrest", "a conveyor's arrest (`<arrest>`)"),
                ("sample", "a conveyor's sampling of its transit time (`<sample>`)"),
            ] {
                if let Some(n) = child(c, tag) {
                    self.unsupported(n, what);
                }
            }
            if c.attribute("discrete") == Some("true") {
                self.unsupported(c, "a discrete conveyor (`discrete=\"true\"`)");
            }
            return Some(Box::new(SpecialStock::Conveyor { transit_time }));
        }
        if child(node, "queue").is_some() {
            return Some(Box::new(SpecialStock::Queue));
        }
        if let Some(oven) = child(node, "oven") {
            self.unsupported(oven, "an oven (`<oven>`)");
        }
        None
    }
}

/// A name as the file's attribute writes it, with XMILE's escapes resolved: `\n` (a line
/// break in the diagram's label) reads as a space, `_` stays (it compares as a space).
pub(crate) fn display_name(raw: &str) -> String {
    raw.replace("\\n", " ").replace('\n', " ")
}

/// The diagram positions of the first view, by canonical name.
fn positions(views: Node) -> HashMap<String, Position> {
    let mut out = HashMap::new();
    let Some(view) = child(views, "view") else {
        return out;
    };
    for n in view.children().filter(|n| n.is_element()) {
        let (Some(name), Some(x), Some(y)) = (n.attribute("name"), n.attribute("x"), n.attribute("y")) else {
            continue;
        };
        if let (Some(x), Some(y)) = (number(x), number(y)) {
            out.entry(canonical(&display_name(name))).or_insert(Position { x, y });
        }
    }
    out
}
