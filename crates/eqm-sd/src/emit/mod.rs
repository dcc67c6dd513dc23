//! The writer of `.eqm` text from an [`SdFile`].
//!
//! Input: the representation a reader produced. Output: the text of one `.eqm` model whose
//! fixed-step run gives the iterates the file's own tool computes, the result columns (each
//! the variable's name in the `.eqm` model and its name in the file), and diagnostics for
//! every construct not written (E1002, at its place in the file). A stock is a state with
//! `der(stock) = inflows - outflows`, a flow and an auxiliary a variable bound to its
//! equation, a constant a parameter, a graphical function a table read by the library's
//! `SystemDynamics.Converters.graphLookup`; the experiment annotation fixes the method and
//! the step DT, so each row is the method's iterate (the language's section on DT).
//! Nothing here reads files or knows which dialect the model came from.

mod expr;

use crate::ir::{Definition, Equation, ExprKind, GraphKind, Kind, Method, SdFile, SdModel, Variable};
use crate::names::{canonical, identifier};
use eqm_diag::Diagnostic;
use expr::{Helpers, Scope, Writer, lookup_call, number, table};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The `.eqm` text of a model with its result columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    /// The name of the model class in the text.
    pub model: String,
    pub text: String,
    /// The result columns: the variable's name in the `.eqm` model and its name in the file.
    pub columns: Vec<(String, String)>,
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
    let emitted = write_model(file, main, &model_id, &mut diagnostics);
    if diagnostics.iter().any(|d| d.severity == eqm_diag::Severity::Error) {
        return (None, diagnostics);
    }
    (emitted, diagnostics)
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
fn identifiers(model: &SdModel) -> (HashMap<String, String>, [String; 3]) {
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
    (ids, [dt, start, stop])
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

// Long function: the declarations and equations of each kind of variable, in the file's order.
fn write_model(file: &SdFile, model: &SdModel, model_id: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Emitted> {
    let (ids, [dt, start, stop]) = identifiers(model);
    let mut tables: HashMap<String, (String, GraphKind)> = HashMap::new();
    let mut declarations: Vec<String> = Vec::new();
    let mut equations: Vec<String> = Vec::new();
    let mut initial: Vec<String> = Vec::new();
    let mut helpers = Helpers::default();
    let mut columns = Vec::new();
    let specs = &file.specs;
    declarations.push(format!(
        "parameter Real {dt} = {} \"The time step DT\";",
        number(specs.dt)
    ));
    declarations.push(format!(
        "parameter Real {start} = {} \"The start of the run\";",
        number(specs.start)
    ));
    declarations.push(format!(
        "parameter Real {stop} = {} \"The end of the run\";",
        number(specs.stop)
    ));
    // The tables first: an equation may call a graphical function declared after it.
    for v in &model.variables {
        let graph = match &v.definition {
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
        tables.insert(canonical(&v.name), (table_id, graph.kind));
    }
    // The outflows of non-negative stocks: each limited to what the stock and its inflows
    // hold in one DT after the outflows before it, in the file's order of priority.
    let mut limits: HashMap<String, String> = HashMap::new();
    for v in &model.variables {
        let Kind::Stock {
            inflows,
            outflows,
            non_negative: true,
            ..
        } = &v.kind
        else {
            continue;
        };
        let stock = &ids[&canonical(&v.name)];
        let mut available = format!("{stock}/{dt}");
        for i in inflows {
            if let Some(id) = ids.get(&canonical(i)) {
                let _ = write!(available, " + {id}");
            }
        }
        for o in outflows {
            let Some(id) = ids.get(&canonical(o)) else { continue };
            limits
                .entry(canonical(o))
                .or_insert_with(|| format!("noEvent(max(0, {available}))"));
            let _ = write!(available, " - {id}");
        }
    }
    let scope = Scope {
        ids: &ids,
        tables: &tables,
        dt: &dt,
        start: &start,
        stop: &stop,
    };
    for v in &model.variables {
        let id = &ids[&canonical(&v.name)];
        if !v.dimensions.is_empty() || matches!(v.definition, Definition::Elements(_)) {
            diagnostics.push(Diagnostic::error(
                "E1002",
                "EQM does not import arrayed variables yet",
                v.origin,
                "an arrayed variable",
            ));
            continue;
        }
        let Definition::Uniform(equation) = &v.definition else {
            continue;
        };
        let doc = description(v);
        let mut writer = Writer {
            scope: &scope,
            helpers: &mut helpers,
        };
        let result: Result<(), Diagnostic> = (|| {
            match (&v.kind, equation) {
                (Kind::Stock { special: Some(_), .. }, _) => {
                    return Err(Diagnostic::error(
                        "E1002",
                        "EQM does not import conveyors and queues yet",
                        v.origin,
                        "a conveyor or queue",
                    ));
                }
                (
                    Kind::Stock {
                        inflows,
                        outflows,
                        non_negative,
                        ..
                    },
                    Equation::Stock { rate, initial: init },
                ) => {
                    let value = writer.real(init)?;
                    match init.kind {
                        ExprKind::Number(_) => {
                            declarations.push(format!("Real {id}(start = {value}, fixed = true){doc};"))
                        }
                        _ => {
                            declarations.push(format!("Real {id}{doc};"));
                            initial.push(format!("{id} = {value};"));
                        }
                    }
                    let mut net = String::new();
                    for (list, sign) in [(inflows, " + "), (outflows, " - ")] {
                        for f in list {
                            let Some(fid) = ids.get(&canonical(f)) else {
                                return Err(Diagnostic::error(
                                    "E1004",
                                    format!("the flow `{f}` of this stock is no variable of the model"),
                                    v.origin,
                                    "this stock",
                                ));
                            };
                            if net.is_empty() && sign == " + " {
                                net.push_str(fid);
                            } else if net.is_empty() {
                                let _ = write!(net, "-{fid}");
                            } else {
                                let _ = write!(net, "{sign}{fid}");
                            }
                        }
                    }
                    if let Some(rate) = rate {
                        let r = writer.real(rate)?;
                        net = if net.is_empty() { r } else { format!("{net} + ({r})") };
                    }
                    if net.is_empty() {
                        net.push('0');
                    }
                    if *non_negative {
                        // A stock that would fall below 0 within a step is emptied exactly.
                        equations.push(format!("der({id}) = noEvent(max({net}, -{id}/{dt}));"));
                    } else {
                        equations.push(format!("der({id}) = {net};"));
                    }
                }
                (Kind::Lookup, _) => {}
                (_, Equation::Graph { input, .. }) => {
                    let (table_id, kind) = &tables[&canonical(&v.name)];
                    let x = writer.real(input)?;
                    declarations.push(format!("Real {id}{doc};"));
                    equations.push(format!("{id} = {};", lookup_call(table_id, &x, *kind)));
                }
                (kind, Equation::Value(e)) => {
                    let mut value = writer.real(e)?;
                    let uniflow = matches!(kind, Kind::Flow { non_negative: true });
                    if uniflow {
                        value = format!("noEvent(max({value}, 0))");
                    }
                    if let Some(limit) = limits.get(&canonical(&v.name)) {
                        value = format!("noEvent(min({value}, {limit}))");
                    }
                    if matches!(kind, Kind::Aux) && matches!(e.kind, ExprKind::Number(_)) {
                        declarations.push(format!("parameter Real {id} = {value}{doc};"));
                    } else {
                        declarations.push(format!("Real {id}{doc};"));
                        equations.push(format!("{id} = {value};"));
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
        })();
        match result {
            Ok(()) => {
                if !matches!(v.kind, Kind::Lookup) {
                    columns.push((id.clone(), v.name.clone()));
                }
            }
            Err(d) => diagnostics.push(d),
        }
    }
    let method = match specs.method {
        Method::Euler => "euler",
        Method::Rk2 => "heun",
        Method::Rk4 => "rk4",
    };
    let mut text = String::new();
    let _ = write!(text, "model {model_id}");
    if let Some(doc) = file.doc.as_deref().or(model.doc.as_deref()) {
        let _ = write!(
            text,
            " \"{}\"",
            doc.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace(['\n', '\r'], " ")
        );
    }
    text.push('\n');
    for d in declarations.iter().chain(&helpers.declarations) {
        let _ = writeln!(text, "  {d}");
    }
    let initial: Vec<&String> = initial.iter().chain(&helpers.initial_equations).collect();
    if !initial.is_empty() {
        text.push_str("initial equation\n");
        for e in initial {
            let _ = writeln!(text, "  {e}");
        }
    }
    text.push_str("equation\n");
    for e in equations.iter().chain(&helpers.equations) {
        let _ = writeln!(text, "  {e}");
    }
    let interval = specs.save_step.unwrap_or(specs.dt);
    let _ = writeln!(
        text,
        "  annotation(experiment(StartTime = {}, StopTime = {}, Interval = {}), __eqm(solver = \"{method}\", step = {}));",
        number(specs.start),
        number(specs.stop),
        number(interval),
        number(specs.dt)
    );
    let _ = writeln!(text, "end {model_id};");
    Some(Emitted {
        model: model_id.to_string(),
        text,
        columns,
    })
}
