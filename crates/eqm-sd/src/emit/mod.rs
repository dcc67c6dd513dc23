//! The writer of `.eqm` text from an [`SdFile`].
//!
//! Input: the representation a reader produced. Output: the text of one `.eqm` model whose
//! fixed-step run gives the iterates the file's own tool computes, the result columns (each
//! the variable's name in the `.eqm` model and its name in the file), and diagnostics for
//! every construct not written (E1002, at its place in the file). Stocks and flows are
//! components of the `SystemDynamics` package where they can be ([`components`]), else a
//! state with `der(stock) = inflows - outflows` and variables bound to their equations; an
//! auxiliary is a variable bound to its equation, a constant a parameter, a graphical
//! function a table read by the library's `SystemDynamics.Converters.graphLookup`; the
//! experiment annotation fixes the method and the step DT, so each row is the method's
//! iterate (the language's section on DT).
//! Nothing here reads files or knows which dialect the model came from.

mod allocate;
mod arrays;
mod components;
mod conveyor;
mod expr;
mod inline;
mod lookup_functions;
mod lookups;
mod matrix;
mod modules;
mod order;
mod random;
mod start;
mod vectors;

use crate::ir::{Definition, Equation, ExprKind, GraphKind, Kind, Method, SdFile, SdModel, Variable};
use crate::names::{canonical, identifier};
use arrays::{Arrays, Element};
use components::Part;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use expr::{Helpers, Scope, Writer, graph_options, lookup_call, number, table};
use start::StartValues;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The net rate of a stock, its inflows minus its outflows, each flow's reference given by
/// `reference` (`a + b - c`; empty without flows).
fn net_rate(
    inflows: &[String],
    outflows: &[String],
    mut reference: impl FnMut(&str) -> Result<String, Diagnostic>,
) -> Result<String, Diagnostic> {
    let mut net = String::new();
    for (list, sign) in [(inflows, " + "), (outflows, " - ")] {
        for f in list {
            let flow = reference(f)?;
            match (net.is_empty(), sign) {
                (true, " + ") => net.push_str(&flow),
                (true, _) => {
                    let _ = write!(net, "-{flow}");
                }
                _ => {
                    let _ = write!(net, "{sign}{flow}");
                }
            }
        }
    }
    Ok(net)
}

/// The `.eqm` text of a model with its result columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    /// The name of the model class in the text.
    pub model: String,
    pub text: String,
    /// The result columns: the variable's name in the `.eqm` model and its name in the file.
    pub columns: Vec<(String, String)>,
    /// Where each declared name of the model (a variable, a stock or flow component, a cloud)
    /// comes from in the file: the definition of its variable (a cloud: of its flow).
    pub origins: Vec<(String, Span)>,
}

/// Writes `file` as `.eqm` text; `None` when a construct of it cannot be written (each one a
/// diagnostic).
pub fn emit(file: &SdFile, fallback_name: &str) -> (Option<Emitted>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some(main) = file.models.first() else {
        return (None, diagnostics);
    };
    let name = if file.name.trim().is_empty() {
        fallback_name
    } else {
        file.name.trim()
    };
    let model_id = class_name(name);
    let main = match modules::inline(file, main) {
        Ok(main) => main,
        Err(mut more) => {
            diagnostics.append(&mut more);
            return (None, diagnostics);
        }
    };
    let emitted = write_model(file, &main, &model_id, &mut diagnostics);
    if diagnostics.iter().any(|d| d.severity == eqm_diag::Severity::Error) {
        return (None, diagnostics);
    }
    (emitted, diagnostics)
}

/// Where each variable's identifier comes from in the file: its definition.
fn variable_origins(model: &SdModel, ids: &HashMap<String, String>) -> Vec<(String, Span)> {
    model
        .variables
        .iter()
        .filter_map(|v| ids.get(&canonical(&v.name)).map(|id| (id.clone(), v.origin)))
        .collect()
}

/// A class name from a model's name: its letters and digits, the others as `_`.
fn class_name(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, 'M');
    }
    identifier(&id)
}

/// An identifier for each variable of the model (the file's name, quoted where needed) and
/// the names of the simulation specs, none of them taken twice.
fn identifiers(model: &SdModel) -> (HashMap<String, String>, [String; 4]) {
    let mut ids = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    for v in &model.variables {
        let id = identifier(&v.name);
        taken.insert(id.clone());
        ids.insert(canonical(&v.name), id);
    }
    let free = |base: &str, taken: &mut HashSet<String>| {
        let mut id = base.to_string();
        let mut k = 1;
        while taken.contains(&id) {
            k += 1;
            id = format!("{base}{k}");
        }
        taken.insert(id.clone());
        id
    };
    let dt = free("DT", &mut taken);
    let start = free("StartTime", &mut taken);
    let stop = free("StopTime", &mut taken);
    let save = free("SaveInterval", &mut taken);
    (ids, [dt, start, stop, save])
}

/// The description string of a variable: its documentation and its unit.
fn description(v: &Variable) -> String {
    let mut text = v.doc.clone().unwrap_or_default();
    if let Some(units) = &v.units {
        if !text.is_empty() {
            text.push(' ');
        }
        let _ = write!(text, "[{units}]");
    }
    let text = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r', '\t'], " ");
    if text.is_empty() {
        String::new()
    } else {
        format!(" \"{text}\"")
    }
}

/// The function of each macro (its name, unless a variable has it), by canonical name.
fn macro_ids(file: &SdFile, ids: &HashMap<String, String>) -> HashMap<String, String> {
    let taken: HashSet<&String> = ids.values().collect();
    file.macros
        .iter()
        .map(|m| {
            let mut id = identifier(&m.name);
            if taken.contains(&id) {
                id = identifier(&format!("{} macro", m.name));
            }
            (canonical(&m.name), id)
        })
        .collect()
}

/// A macro as a function nested in the model: its parameters are its inputs, its value the
/// output.
fn write_macro(m: &crate::ir::Macro, outer: &Scope) -> Result<String, Diagnostic> {
    let id = &outer.macros[&canonical(&m.name)];
    let mut ids: HashMap<String, String> = HashMap::new();
    for p in &m.parameters {
        ids.insert(canonical(p), identifier(p));
    }
    let mut output = "value".to_string();
    while ids.values().any(|p| *p == output) {
        output.push('_');
    }
    let arrays = Arrays::default();
    let tables = HashMap::new();
    let start_values = StartValues::default();
    let scope = Scope {
        ids: &ids,
        tables: &tables,
        arrays: &arrays,
        start_values: &start_values,
        in_function: true,
        ..*outer
    };
    let mut helpers = Helpers::default();
    let element = Element::new();
    let mut writer = Writer {
        scope: &scope,
        helpers: &mut helpers,
        element: &element,
    };
    let Some(value) = &m.value else {
        return Err(Diagnostic::error(
            "E1007",
            "this macro has no value",
            m.origin,
            "this macro",
        ));
    };
    let body = writer.real(value)?;
    let mut text = format!("  function {id} \"The macro {}\"\n", m.name.replace('"', "'"));
    for p in &m.parameters {
        let _ = writeln!(text, "    input Real {};", identifier(p));
    }
    let _ = writeln!(text, "    output Real {output};");
    let _ = writeln!(text, "  algorithm\n    {output} := {body};\n  end {id};");
    Ok(text)
}

/// The text of a model being written: its declarations, equations and initial equations.
#[derive(Default)]
struct Text {
    /// The functions of the file's macros, each its lines.
    functions: Vec<String>,
    declarations: Vec<String>,
    equations: Vec<String>,
    initial: Vec<String>,
    columns: Vec<(String, String)>,
    origins: Vec<(String, Span)>,
}

/// What the writer of a model's variables knows of it.
struct ModelWriter<'m> {
    model: &'m SdModel,
    ids: HashMap<String, String>,
    arrays: Arrays,
    /// For each outflow of a non-negative stock: the stock and the outflows before it.
    limited: HashMap<String, (String, usize)>,
    dt: String,
    /// The stocks and flows written as components, with their component's identifier.
    parts: HashMap<String, (Part, String)>,
    /// The flows conveyors drive, with the place of their conveyor among the variables.
    driven: HashMap<String, usize>,
}

impl ModelWriter<'_> {
    /// The reference of variable `key` at the element `element` of the variable being
    /// defined (its own dimensions taken from the element by name).
    fn at(&self, key: &str, element: &Element, origin: eqm_diag::source::Span) -> Result<String, Diagnostic> {
        let id = self.ids.get(key).ok_or_else(|| {
            Diagnostic::error(
                "E1004",
                format!("`{key}` is no variable of this model"),
                origin,
                "named here",
            )
        })?;
        let dims = self.arrays.dims.get(key).cloned().unwrap_or_default();
        // A variable over the element's own dimensions takes them by place (a dimension may
        // occur twice, `matrix[dim, dim]`).
        if element.len() >= dims.len() && dims.iter().zip(element).all(|(d, (c, _))| d == c) {
            return Ok(Arrays::indexed(id, &element[..dims.len()].to_vec()));
        }
        let mut fixed = Vec::new();
        for d in dims {
            match element.iter().find(|(c, _)| *c == d) {
                Some((_, i)) => fixed.push((d, *i)),
                None => {
                    return Err(Diagnostic::error(
                        "E1006",
                        format!("`{key}` is an array over `{d}`, which this variable does not have"),
                        origin,
                        "here",
                    ));
                }
            }
        }
        Ok(Arrays::indexed(id, &fixed))
    }

    /// The most a limited outflow may take in one step: what its stock holds over DT plus
    /// its inflows, minus the outflows before it.
    fn limit(
        &self,
        flow: &str,
        element: &Element,
        origin: eqm_diag::source::Span,
    ) -> Result<Option<String>, Diagnostic> {
        let Some((stock, position)) = self.limited.get(flow) else {
            return Ok(None);
        };
        let Some(v) = self.model.variables.iter().find(|v| canonical(&v.name) == *stock) else {
            return Ok(None);
        };
        let Kind::Stock { inflows, outflows, .. } = &v.kind else {
            return Ok(None);
        };
        let mut available = format!("{}/{}", self.at(stock, element, origin)?, self.dt);
        for i in inflows {
            let _ = write!(available, " + {}", self.at(&canonical(i), element, origin)?);
        }
        for o in &outflows[..*position] {
            let _ = write!(available, " - {}", self.at(&canonical(o), element, origin)?);
        }
        Ok(Some(format!("noEvent(max(0, {available}))")))
    }

    /// The equation of one element of a variable, with the element extended by the
    /// dimensions and subranges its definition names (an element-wise definition
    /// `x[sub, b]` binds `sub` to the element being defined, which its equation may name).
    fn equation_of<'v>(&self, v: &'v Variable, element: &Element) -> Result<(&'v Equation, Element), Diagnostic> {
        let mut context = element.clone();
        match &v.definition {
            Definition::Uniform(e) => Ok((e, context)),
            Definition::Elements(parts) => {
                for (subscripts, equation) in parts {
                    if subscripts.len() != element.len() {
                        continue;
                    }
                    let mut extra = Vec::new();
                    let covers = subscripts.iter().zip(element).all(|(s, (dim, i))| {
                        let s = canonical(s);
                        if s == *dim {
                            return true;
                        }
                        let Some(name) = self.arrays.elements.get(dim).map(|es| es[*i - 1].0.as_str()) else {
                            return false;
                        };
                        if self.arrays.elements.contains_key(&s) {
                            // A dimension or subrange name covers the elements it holds.
                            match self.arrays.index_of(&s, name) {
                                Some(j) => {
                                    extra.push((s, j));
                                    true
                                }
                                None => false,
                            }
                        } else {
                            s == name
                        }
                    });
                    if covers {
                        context.extend(extra);
                        return Ok((equation, context));
                    }
                }
                Err(Diagnostic::error(
                    "E1007",
                    format!(
                        "`{}` has no definition of the element {}",
                        v.name,
                        self.arrays.display(&v.name, element)
                    ),
                    v.origin,
                    "this variable",
                ))
            }
        }
    }

    // Long function: one arm per kind of variable and definition.
    fn element(
        &self,
        v: &Variable,
        element: &Element,
        scope: &Scope,
        helpers: &mut Helpers,
        text: &mut Text,
    ) -> Result<(), Diagnostic> {
        let key = canonical(&v.name);
        let target = self.at(&key, element, v.origin)?;
        let (equation, context) = self.equation_of(v, element)?;
        let mut writer = Writer {
            scope,
            helpers,
            element: &context,
        };
        if let Some(&conveyor) = self.driven.get(&key) {
            let value = self.conveyor_outflow(conveyor, element, scope, writer.helpers)?;
            match self.parts.get(&key) {
                Some((Part::Flow, base)) => text.equations.push(format!("{base}.u = {value};")),
                _ => text.equations.push(format!("{target} = {value};")),
            }
            return Ok(());
        }
        match (&v.kind, equation) {
            (
                Kind::Stock {
                    special: Some(special), ..
                },
                _,
            ) if !matches!(**special, crate::ir::SpecialStock::Conveyor { .. }) => {
                return Err(Diagnostic::error(
                    "E1002",
                    "EQM does not import queues yet",
                    v.origin,
                    "a queue",
                ));
            }
            (
                Kind::Stock {
                    inflows,
                    outflows,
                    non_negative,
                    ..
                },
                Equation::Stock { rate, initial },
            ) => {
                if start_value(v).is_none() {
                    let value = writer.real(initial)?;
                    text.initial.push(format!("{target} = {value};"));
                }
                let mut net = net_rate(inflows, outflows, |f| self.at(&canonical(f), element, v.origin))?;
                if let Some(rate) = rate {
                    let r = writer.real(rate)?;
                    net = if net.is_empty() { r } else { format!("{net} + ({r})") };
                }
                if net.is_empty() {
                    net.push('0');
                }
                if self.parts.contains_key(&key) {
                    // A component stock integrates its ports; the connections carry the flows.
                } else if *non_negative {
                    // A stock that would fall below 0 within a step is emptied exactly.
                    text.equations
                        .push(format!("der({target}) = noEvent(max({net}, -{target}/{}));", self.dt));
                } else {
                    text.equations.push(format!("der({target}) = {net};"));
                }
            }
            (Kind::Lookup, _) => {}
            (kind, Equation::Graph { .. } | Equation::Value(_)) => {
                let mut value = match equation {
                    Equation::Graph { input, graph } => {
                        let own = scope.tables.get(&Arrays::indexed(&key, element));
                        let Some((table_id, graph_kind)) = own.or_else(|| scope.tables.get(&key)) else {
                            return Err(Diagnostic::error(
                                "E1002",
                                "EQM does not import graphical functions of single elements",
                                graph.origin,
                                "not supported",
                            ));
                        };
                        let x = writer.real(input)?;
                        if let Some(base) = table_id.strip_suffix(".table") {
                            // A converter (an auxiliary, so no flow rules below): its input.
                            text.equations.push(format!("{base}.u = {x};"));
                            return Ok(());
                        }
                        lookup_call(table_id, &x, *graph_kind)
                    }
                    Equation::Value(e) => writer.real(e)?,
                    _ => unreachable!("matched above"),
                };
                if matches!(kind, Kind::Flow { non_negative: true }) {
                    value = format!("noEvent(max({value}, 0))");
                }
                if let Some(limit) = self.limit(&key, element, v.origin)? {
                    value = format!("noEvent(min({value}, {limit}))");
                }
                match self.parts.get(&key) {
                    // A component flow's rate is the rate it wants: every stock is free.
                    Some((Part::Flow, base)) => text.equations.push(format!("{base}.u = {value};")),
                    _ => text.equations.push(format!("{target} = {value};")),
                }
            }
            (_, Equation::Undefined) => {
                return Err(Diagnostic::error(
                    "E1007",
                    "this variable has no definition",
                    v.origin,
                    "declared here",
                ));
            }
            _ => {
                return Err(Diagnostic::error(
                    "E1002",
                    "EQM does not import this kind of definition here",
                    v.origin,
                    "not supported",
                ));
            }
        }
        Ok(())
    }
}

/// The identifiers of the tables of graphical functions, with their declarations.
fn tables_of(
    model: &SdModel,
    ids: &mut HashMap<String, String>,
    declarations: &mut Vec<String>,
) -> (HashMap<String, (String, GraphKind)>, HashMap<String, String>) {
    let mut tables = HashMap::new();
    let mut converters = HashMap::new();
    for v in &model.variables {
        let key = canonical(&v.name);
        let graph = match &v.definition {
            Definition::Uniform(Equation::Graph { graph, .. }) if graph_converter(v, graph) => {
                // A converter holds its own table, which calls by name read too.
                let base = ids[&key].clone();
                ids.insert(key.clone(), format!("{base}.y"));
                tables.insert(key.clone(), (format!("{base}.table"), graph.kind));
                let (interpolation, extrapolation) = graph_options(graph.kind);
                converters.insert(
                    key,
                    format!(
                        "SystemDynamics.Converters.GraphConverter {base}(table = {}, interpolation = {interpolation}, extrapolation = {extrapolation}){}{};",
                        table(graph),
                        description(v),
                        placement(v)
                    ),
                );
                continue;
            }
            Definition::Uniform(Equation::Graph { graph, .. } | Equation::Table(graph)) => graph,
            _ => continue,
        };
        let table_id = identifier(&format!("{} graph", v.name));
        declarations.push(format!(
            "parameter Real {table_id}[{}, 2] = {} \"The graphical function of {}\";",
            graph.x.len(),
            table(graph),
            v.name.replace('"', "'")
        ));
        tables.insert(key, (table_id, graph.kind));
    }
    (tables, converters)
}

/// Whether a graphical function of an input is written as a `GraphConverter` (a scalar
/// auxiliary whose x values increase strictly, as the converter requires; else a table read
/// by `graphLookup`).
fn graph_converter(v: &Variable, graph: &crate::ir::GraphicalFunction) -> bool {
    matches!(v.kind, Kind::Aux)
        && v.dimensions.is_empty()
        && graph.kind != GraphKind::Raw
        && graph.x.windows(2).all(|w| w[0] < w[1])
}

/// The dimensions of the file and of each variable.
fn arrays_of(file: &SdFile, model: &SdModel) -> Arrays {
    let mut arrays = Arrays::default();
    for d in &file.dimensions {
        let elements = d.elements.iter().map(|e| (canonical(e), e.clone())).collect();
        arrays.elements.insert(canonical(&d.name), elements);
        let mappings = d
            .maps_to
            .iter()
            .map(|m| (canonical(&m.to), m.elements.iter().map(|e| canonical(e)).collect()))
            .collect();
        arrays.mappings.insert(canonical(&d.name), mappings);
    }
    for v in &model.variables {
        let dims: Vec<String> = v.dimensions.iter().map(|d| canonical(d)).collect();
        arrays.dims.insert(canonical(&v.name), dims);
    }
    arrays
}

/// The outflows of non-negative stocks: each with its stock and its place among the stock's
/// outflows (the file's order is their priority).
fn limited_outflows(model: &SdModel) -> HashMap<String, (String, usize)> {
    let mut limited = HashMap::new();
    // A flow that several stocks drain is cut by none of them: each non-negative one keeps
    // itself at 0 within the step by its own equation, and the others lose the whole rate.
    let shared = components::shared_flows(model);
    for v in &model.variables {
        if let Kind::Stock {
            outflows,
            non_negative: true,
            ..
        } = &v.kind
        {
            for (k, o) in outflows.iter().enumerate() {
                if shared.contains(&canonical(o)) {
                    continue;
                }
                limited.entry(canonical(o)).or_insert((canonical(&v.name), k));
            }
        }
    }
    limited
}

/// The declaration of a variable: a component for a stock or flow written as one, else a
/// variable (with its start where it is a stock starting at a number).
fn declare(writer: &ModelWriter, v: &Variable, key: &str, shape: &str, doc: &str, text: &mut Text) {
    let id = &writer.ids[key];
    match (writer.parts.get(key), start_value(v)) {
        (Some((Part::Stock, base)), Some(x)) => text.declarations.push(format!(
            "SystemDynamics.Reservoirs.Stock {base}(m(start = {}, fixed = true)){doc}{};",
            number(x),
            placement(v)
        )),
        (Some((Part::Stock, base)), None) => text.declarations.push(format!(
            "SystemDynamics.Reservoirs.Stock {base}(m(fixed = false)){doc}{};",
            placement(v)
        )),
        (Some((Part::Flow, base)), _) => text
            .declarations
            .push(format!("SystemDynamics.Flows.Flow {base}{doc}{};", placement(v))),
        // An array of stocks that all start at one number gets it as the start of each
        // element: the run then needs no initialization system of its own.
        (None, Some(x)) if !shape.is_empty() => text.declarations.push(format!(
            "Real {id}{shape}(each start = {}, each fixed = true){doc};",
            number(x)
        )),
        (None, Some(x)) => text
            .declarations
            .push(format!("Real {id}(start = {}, fixed = true){doc};", number(x))),
        (None, None) => text.declarations.push(format!("Real {id}{shape}{doc};")),
    }
}

/// The annotation of a component's place in the file's diagram (the file's y grows
/// downwards, a `Placement`'s upwards), or nothing where the file has no diagram.
fn placement(v: &Variable) -> String {
    placement_beside(v, 0.0)
}

/// The annotation of a place `dx` to the right of `v`'s place in the file's diagram (a cloud
/// beside the valve of its flow), or nothing where the file has no diagram.
pub(crate) fn placement_beside(v: &Variable, dx: f64) -> String {
    match v.position {
        Some(p) => format!(
            " annotation(Placement(transformation(origin = {{{}, {}}}, extent = {{{{-10, -10}}, {{10, 10}}}})))",
            number(p.x + dx),
            number(-p.y)
        ),
        None => String::new(),
    }
}

/// The initial value of a stock (of each element of an array of stocks defined for all its
/// elements at once) that starts at a number (written as its `start`).
fn start_value(v: &Variable) -> Option<f64> {
    match (&v.kind, &v.definition) {
        (Kind::Stock { special: None, .. }, Definition::Uniform(Equation::Stock { initial, .. })) => {
            match initial.kind {
                ExprKind::Number(x) => Some(x),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a variable is a constant: an auxiliary whose one definition is a number.
fn constant(v: &Variable) -> Option<f64> {
    match (&v.kind, &v.definition, v.dimensions.is_empty()) {
        (Kind::Aux, Definition::Uniform(Equation::Value(e)), true) => match e.kind {
            ExprKind::Number(x) => Some(x),
            _ => None,
        },
        _ => None,
    }
}

/// The warning that elements of `v` have no definition (W1002).
fn undefined_elements(v: &Variable, undefined: &[String]) -> Diagnostic {
    Diagnostic::warning(
        "W1002",
        format!(
            "no definition of `{}` covers {}: they are 0 and left out of the results, as Vensim does",
            v.name,
            undefined.join(", ")
        ),
        v.origin,
        "this variable",
    )
}

fn write_model(file: &SdFile, model: &SdModel, model_id: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Emitted> {
    let (mut ids, [dt, start, stop, save]) = identifiers(model);
    let mut origins = variable_origins(model, &ids);
    let mut taken: HashSet<String> = ids.values().cloned().collect();
    taken.extend([dt.clone(), start.clone(), stop.clone(), save.clone()]);
    let mut parts = HashMap::new();
    for (key, part) in components::choose(model) {
        let base = ids[&key].clone();
        // The value of a component stock is its amount, of a component flow its rate.
        let field = if part == Part::Stock { "m" } else { "rate" };
        ids.insert(key.clone(), format!("{base}.{field}"));
        parts.insert(key, (part, base));
    }
    let bases: HashMap<String, String> = parts.iter().map(|(k, (_, b))| (k.clone(), b.clone())).collect();
    let part_kinds: HashMap<String, Part> = parts.iter().map(|(k, (p, _))| (k.clone(), *p)).collect();
    let (clouds, connects) = components::connections(model, &part_kinds, &bases, &mut taken, &mut origins);
    let mut text = Text {
        origins,
        ..Text::default()
    };
    let specs = &file.specs;
    for (id, value, what) in [
        (&dt, specs.dt, "The time step DT"),
        (&start, specs.start, "The start of the run"),
        (&stop, specs.stop, "The end of the run"),
        (
            &save,
            specs.save_step.unwrap_or(specs.dt),
            "The interval of the saved results",
        ),
    ] {
        text.declarations
            .push(format!("parameter Real {id} = {} \"{what}\";", number(value)));
    }
    // The tables first: an equation may call a graphical function declared after it.
    let (mut tables, converters) = tables_of(model, &mut ids, &mut text.declarations);
    let writer = ModelWriter {
        model,
        ids,
        arrays: arrays_of(file, model),
        limited: limited_outflows(model),
        dt: dt.clone(),
        parts,
        driven: conveyor::driven_flows(&model.variables),
    };
    lookups::element_tables(&writer, &mut tables, &mut text.declarations);
    let macros = macro_ids(file, &writer.ids);
    let start_values = StartValues::of(model, file.specs.start, file.specs.dt);
    let macro_bodies: HashMap<String, &crate::ir::Macro> =
        file.macros.iter().map(|m| (canonical(&m.name), m)).collect();
    let scope = Scope {
        macro_bodies: &macro_bodies,
        start_values: &start_values,
        ids: &writer.ids,
        tables: &tables,
        dt: &dt,
        start: &start,
        stop: &stop,
        arrays: &writer.arrays,
        macros: &macros,
        in_function: false,
    };
    // A macro whose value is a variable of its body is written out at each call instead.
    for m in file
        .macros
        .iter()
        .filter(|m| m.value.is_some() && m.variables.is_empty())
    {
        match write_macro(m, &scope) {
            Ok(function) => text.functions.push(function),
            Err(d) => diagnostics.push(d),
        }
    }
    let mut helpers = Helpers::default();
    for v in &model.variables {
        let key = canonical(&v.name);
        let id = &writer.ids[&key];
        let doc = description(v);
        if matches!(v.kind, Kind::Lookup) {
            continue;
        }
        if let Some(value) = constant(v) {
            text.declarations
                .push(format!("parameter Real {id} = {}{doc};", number(value)));
            text.columns.push((id.clone(), v.name.clone()));
            continue;
        }
        let dims = &writer.arrays.dims[&key];
        let Some(elements) = writer.arrays.elements_of(dims) else {
            diagnostics.push(Diagnostic::error(
                "E1006",
                format!(
                    "a dimension of `{}` is not declared in the file's `<dimensions>`",
                    v.name
                ),
                v.origin,
                "this variable",
            ));
            continue;
        };
        let sizes: Vec<String> = dims
            .iter()
            .map(|d| writer.arrays.elements[d].len().to_string())
            .collect();
        let shape = if sizes.is_empty() {
            String::new()
        } else {
            format!("[{}]", sizes.join(", "))
        };
        if let Some(declaration) = converters.get(&key) {
            text.declarations.push(declaration.clone());
        } else {
            declare(&writer, v, &key, &shape, &doc, &mut text);
        }
        let mut undefined = Vec::new();
        for element in &elements {
            if matches!(v.definition, Definition::Elements(_)) && writer.equation_of(v, element).is_err() {
                // Vensim gives an element that no definition covers the value 0 and leaves it
                // out of its results: so does the import, with a warning naming it.
                if let Ok(target) = writer.at(&key, element, v.origin) {
                    text.equations.push(format!("{target} = 0;"));
                }
                undefined.push(writer.arrays.display(&v.name, element));
                continue;
            }
            match writer.element(v, element, &scope, &mut helpers, &mut text) {
                Ok(()) => text
                    .columns
                    .push((Arrays::indexed(id, element), writer.arrays.display(&v.name, element))),
                Err(d) => {
                    diagnostics.push(d);
                    break;
                }
            }
        }
        if !undefined.is_empty() {
            diagnostics.push(undefined_elements(v, &undefined));
        }
    }
    text.declarations.extend(clouds);
    text.equations.splice(0..0, connects);
    control_variables(file, &writer.ids, [&start, &stop, &dt, &save], &mut text);
    Some(assemble(file, model, model_id, text, helpers))
}

/// The control variables in the results, and the end of a run whose `FINAL TIME` changes.
/// `ids` are the identifiers of the model's variables, `specs` those of the start, stop, time
/// step and save interval.
fn control_variables(file: &SdFile, ids: &HashMap<String, String>, specs: [&String; 4], text: &mut Text) {
    let [start, stop, dt, save] = specs;
    if file.specs.dynamic_stop
        && let Some(final_time) = ids.get("final time")
    {
        text.equations.extend(dynamic_stop(final_time, start, stop, dt));
    }
    // The simulation specs are reported as Vensim's control variables, as every
    // system-dynamics tool's results list them, unless the file has variables of these names.
    for (name, id) in [
        ("INITIAL TIME", start),
        ("FINAL TIME", stop),
        ("TIME STEP", dt),
        ("SAVEPER", save),
    ] {
        if !ids.contains_key(&canonical(name)) {
            text.columns.push((id.clone(), name.to_string()));
        }
    }
}

/// The equations that end a run whose `FINAL TIME` changes: Vensim reads it at every step
/// and ends the run at the first step whose time has reached it (within 1e-9 of a step: the
/// times of the steps are sums of binary fractions). The planned stop is its
/// value at the start, and a run that reaches that stop while `FINAL TIME` lies beyond it
/// would end too early, so it stops there with an assertion.
fn dynamic_stop(final_time: &str, start: &str, stop: &str, dt: &str) -> [String; 2] {
    [
        format!(
            "when sample({start}, {dt}) and noEvent(time + 1e-9*{dt} >= {final_time}) then\n    terminate(\"the time has reached FINAL TIME\");\n  end when;"
        ),
        format!(
            "assert(noEvent(time < {stop} - {dt}/2 or {final_time} <= time + 1e-9*{dt}), \"FINAL TIME lies beyond its value at the start, where the run was planned to end: EQM cannot run on past that value\");"
        ),
    ]
}

/// The model's text from its parts, with the experiment annotation of the file's specs.
fn assemble(file: &SdFile, model: &SdModel, model_id: &str, text: Text, helpers: Helpers) -> Emitted {
    let specs = &file.specs;
    let method = match specs.method {
        Method::Euler => "euler",
        Method::Rk2 => "heun",
        Method::Rk4 => "rk4",
    };
    let mut out = String::new();
    let _ = write!(out, "model {model_id}");
    if let Some(doc) = file.doc.as_deref().or(model.doc.as_deref()) {
        let doc = doc
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace(['\n', '\r'], " ");
        let _ = write!(out, " \"{doc}\"");
    }
    out.push('\n');
    for f in text.functions.iter().chain(&helpers.functions) {
        out.push_str(f);
    }
    for d in text.declarations.iter().chain(&helpers.declarations) {
        let _ = writeln!(out, "  {d}");
    }
    let initial: Vec<&String> = text.initial.iter().chain(&helpers.initial_equations).collect();
    if !initial.is_empty() {
        out.push_str("initial equation\n");
        for e in initial {
            let _ = writeln!(out, "  {e}");
        }
    }
    out.push_str("equation\n");
    for e in text.equations.iter().chain(&helpers.equations) {
        let _ = writeln!(out, "  {e}");
    }
    let interval = specs.save_step.unwrap_or(specs.dt);
    let _ = writeln!(
        out,
        "  annotation(experiment(StartTime = {}, StopTime = {}, Interval = {}), __eqm(solver = \"{method}\", step = {}));",
        number(specs.start),
        number(specs.stop),
        number(interval),
        number(specs.dt)
    );
    let _ = writeln!(out, "end {model_id};");
    Emitted {
        model: model_id.to_string(),
        text: out,
        columns: text.columns,
        origins: text.origins,
    }
}
