//! Stocks and flows written as components of the standard library's `SystemDynamics`
//! package: a stock as `Reservoirs.Stock`, a flow as `Flows.Flow` (its wanted rate `u` bound
//! to the flow's equation), connected through their mass ports, with a `CloudSource` or
//! `CloudSink` at a flow's end that no stock holds.
//!
//! Input: the model's variables. Output: which stocks and flows are components, the clouds
//! and the `connect` equations. A stock and its flows are components together only where the
//! components compute exactly what the file's tool computes in a step: scalar stocks and
//! flows, no conveyor or queue, no flow that more than one stock drains or fills (a flow
//! component has one port at each end), and a non-negative stock only where all its inflows
//! are uniflows (the within-step cut of its outflows is then the flows' own equation; a biflow
//! into it needs the stock's own cut, which stays a plain equation). The others stay plain
//! variables and equations. The components' ports make no decision here: every stock is free,
//! so a flow's rate is its wanted rate, and no relation of theirs creates events.

use crate::ir::{Definition, Equation, Kind, SdModel, Variable};
use crate::names::{canonical, identifier};
use eqm_diag::source::Span;
use std::collections::{HashMap, HashSet};

/// How far from its flow's valve a cloud is placed, in the file's diagram units: the files
/// place only the valve, and a cloud drawn on it would hide it.
const CLOUD_OFFSET: f64 = 60.0;

/// What a component stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Stock,
    Flow,
}

fn scalar(v: &Variable) -> bool {
    v.dimensions.is_empty() && matches!(v.definition, Definition::Uniform(_))
}

/// The stocks and flows written as components, by canonical name.
pub(crate) fn choose(model: &SdModel) -> HashMap<String, Part> {
    let by_key: HashMap<String, &Variable> = model.variables.iter().map(|v| (canonical(&v.name), v)).collect();
    let uniflow = |key: &String| {
        by_key
            .get(key)
            .is_some_and(|v| matches!(v.kind, Kind::Flow { non_negative: true }))
    };
    let mut stocks: HashMap<String, Vec<String>> = HashMap::new();
    let mut holders: HashMap<String, usize> = HashMap::new();
    let shared = shared_flows(model);
    for v in &model.variables {
        let Kind::Stock {
            inflows,
            outflows,
            non_negative,
            special,
        } = &v.kind
        else {
            continue;
        };
        let ins: Vec<String> = inflows.iter().map(|f| canonical(f)).collect();
        let outs: Vec<String> = outflows.iter().map(|f| canonical(f)).collect();
        for f in ins.iter().chain(&outs) {
            *holders.entry(f.clone()).or_default() += 1;
        }
        // A stock whose definition gives its net rate (Vensim's `INTEG`) has no flows to
        // connect: its rate is its own equation, so it stays a plain state.
        let own_rate = matches!(
            &v.definition,
            Definition::Uniform(Equation::Stock { rate: Some(_), .. })
        );
        let eligible = scalar(v) && special.is_none() && !own_rate && (!*non_negative || ins.iter().all(uniflow));
        if eligible {
            stocks.insert(canonical(&v.name), ins.into_iter().chain(outs).collect());
        }
    }
    let mut flows: HashSet<String> = model
        .variables
        .iter()
        .filter(|v| matches!(v.kind, Kind::Flow { .. }) && scalar(v))
        .map(|v| canonical(&v.name))
        .filter(|k| !shared.contains(k))
        .collect();
    // A flow held by a stock that is not a component is no component, and a stock with such
    // a flow is none either: settle both until nothing changes (each pass but the last
    // removes one at least).
    loop {
        let before = (stocks.len(), flows.len());
        stocks.retain(|_, fs| fs.iter().all(|f| flows.contains(f)));
        // A flow is a component only where every stock that holds it is one.
        let component_holders: HashMap<&String, usize> = stocks.values().flatten().fold(HashMap::new(), |mut m, f| {
            *m.entry(f).or_default() += 1;
            m
        });
        flows.retain(|f| holders.get(f).copied().unwrap_or(0) == component_holders.get(f).copied().unwrap_or(0));
        if (stocks.len(), flows.len()) == before {
            break;
        }
    }
    stocks
        .into_keys()
        .map(|k| (k, Part::Stock))
        .chain(flows.into_iter().map(|k| (k, Part::Flow)))
        .collect()
}

/// The flows that more than one stock drains (or more than one stock fills): a flow
/// component has one port at each end, and a non-negative stock among its drainers cannot
/// cut a rate that the others see too, so such a flow and its stocks stay plain variables.
pub(crate) fn shared_flows(model: &SdModel) -> HashSet<String> {
    let mut drainers: HashMap<String, usize> = HashMap::new();
    let mut fillers: HashMap<String, usize> = HashMap::new();
    for v in &model.variables {
        if let Kind::Stock { inflows, outflows, .. } = &v.kind {
            for f in inflows {
                *fillers.entry(canonical(f)).or_default() += 1;
            }
            for f in outflows {
                *drainers.entry(canonical(f)).or_default() += 1;
            }
        }
    }
    drainers
        .into_iter()
        .chain(fillers)
        .filter(|(_, n)| *n > 1)
        .map(|(f, _)| f)
        .collect()
}

/// The clouds and `connect` equations of the component flows: each flow's inflow port to
/// the stock it drains (or a source), its outflow port to the stock it fills (or a sink).
/// `bases` holds each component's identifier; `taken` the identifiers in use; each cloud's
/// origin (its flow's) is added to `origins`.
pub(crate) fn connections(
    model: &SdModel,
    parts: &HashMap<String, Part>,
    bases: &HashMap<String, String>,
    taken: &mut HashSet<String>,
    origins: &mut Vec<(String, Span)>,
) -> (Vec<String>, Vec<String>) {
    let mut drained_by: HashMap<String, String> = HashMap::new();
    let mut filled_by: HashMap<String, String> = HashMap::new();
    for v in &model.variables {
        let key = canonical(&v.name);
        if parts.get(&key) != Some(&Part::Stock) {
            continue;
        }
        if let Kind::Stock { inflows, outflows, .. } = &v.kind {
            for f in inflows {
                filled_by.entry(canonical(f)).or_insert_with(|| key.clone());
            }
            for f in outflows {
                drained_by.entry(canonical(f)).or_insert_with(|| key.clone());
            }
        }
    }
    let mut free = |base: String| {
        let mut id = identifier(&base);
        let mut k = 1;
        while taken.contains(&id) {
            k += 1;
            id = identifier(&format!("{base} {k}"));
        }
        taken.insert(id.clone());
        id
    };
    let (mut clouds, mut connects) = (Vec::new(), Vec::new());
    for v in &model.variables {
        let key = canonical(&v.name);
        if parts.get(&key) != Some(&Part::Flow) {
            continue;
        }
        let flow = &bases[&key];
        match drained_by.get(&key) {
            Some(stock) => connects.push(format!("connect({}.outflow, {flow}.inflow);", bases[stock])),
            None => {
                let source = free(format!("{} source", v.name));
                origins.push((source.clone(), v.origin));
                clouds.push(format!(
                    "SystemDynamics.Reservoirs.CloudSource {source} \"Where {} comes from\"{};",
                    v.name.replace('"', "'"),
                    super::placement_beside(v, -CLOUD_OFFSET)
                ));
                connects.push(format!("connect({source}.outflow, {flow}.inflow);"));
            }
        }
        match filled_by.get(&key) {
            Some(stock) => connects.push(format!("connect({flow}.outflow, {}.inflow);", bases[stock])),
            None => {
                let sink = free(format!("{} sink", v.name));
                origins.push((sink.clone(), v.origin));
                clouds.push(format!(
                    "SystemDynamics.Reservoirs.CloudSink {sink} \"Where {} goes\"{};",
                    v.name.replace('"', "'"),
                    super::placement_beside(v, CLOUD_OFFSET)
                ));
                connects.push(format!("connect({flow}.outflow, {sink}.inflow);"));
            }
        }
    }
    (clouds, connects)
}
