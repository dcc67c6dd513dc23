//! `modelDescription.xml` of an FMU, for FMI 2.0 and FMI 3.0.
//!
//! Input: a compiled [`Model`] and [`DescriptionOptions`] (version, interface kinds, model
//! identifier, capability flags, generation tool and date). Output: the XML text. The
//! variables come from [`variables`] (in FMI 3 the elements of an array as one variable with
//! its `Dimension`s, see `arrays`), the dependencies of outputs and derivatives from
//! [`structure`] (a dependency list left out means every known, as FMI reads it). The GUID (FMI
//! 2) or instantiation token (FMI 3) is a hash of the model's name, variables and structure as
//! written ([`instantiation_token`]), so the runtime, which compiles the same sources, can
//! recompute it and refuse an FMU whose model it does not reproduce. Every capability flag is
//! written only as [`Capabilities`] says: this module decides none. Every attribute value goes
//! through one escaping function. Nothing here depends on the clock: the date is written only
//! when given.

use crate::Model;
use crate::fmi::arrays::{FmiArray, arrays, owners};
use crate::fmi::structure::{Dependencies, DependencyKind, structure};
use crate::fmi::units::{BASE_NAMES, base_unit};
use crate::fmi::variables::{FmiCausality, FmiInitial, FmiSource, FmiType, FmiVariability, FmiVariable, variables};
use crate::fmi::{FmiVersion, Kinds};
use eqm_diag::text::format_number;
use eqm_ir::flat::EnumerationType;
use std::fmt::Write;

/// The optional capabilities of an FMU's interfaces (every flag false by default, as in FMI).
/// The caller sets a flag only for what the runtime implements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub needs_execution_tool: bool,
    pub can_be_instantiated_only_once_per_process: bool,
    pub can_get_and_set_fmu_state: bool,
    pub can_serialize_fmu_state: bool,
    pub provides_directional_derivatives: bool,
    /// FMI 3 only.
    pub provides_adjoint_derivatives: bool,
    /// FMI 2 only.
    pub can_not_use_memory_management_functions: bool,
    /// Model Exchange, FMI 2: `completedIntegratorStepNotNeeded`; FMI 3: the negation,
    /// `needsCompletedIntegratorStep`, is written when this is false.
    pub completed_integrator_step_not_needed: bool,
    /// FMI 3 (both kinds): `providesEvaluateDiscreteStates`.
    pub provides_evaluate_discrete_states: bool,
    /// Co-Simulation.
    pub can_handle_variable_communication_step_size: bool,
    pub can_interpolate_inputs: bool,
    pub max_output_derivative_order: u32,
    /// FMI 2 only.
    pub can_run_asynchronously: bool,
    /// FMI 3 Co-Simulation only.
    pub has_event_mode: bool,
    pub provides_intermediate_update: bool,
    pub might_return_early_from_do_step: bool,
    pub can_return_early_after_intermediate_update: bool,
}

/// What the description says besides the model.
#[derive(Debug, Clone, PartialEq)]
pub struct DescriptionOptions {
    pub version: FmiVersion,
    pub kinds: Kinds,
    /// The name of the shared object (without extension) and of the FMU.
    pub model_identifier: String,
    pub capabilities: Capabilities,
    pub generation_tool: String,
    /// `generationDateAndTime` (ISO 8601), written only when given.
    pub generation_date: Option<String>,
}

/// The text of `modelDescription.xml`; see the module documentation.
pub fn model_description(model: &Model, options: &DescriptionOptions) -> String {
    let variables = variables(model);
    let body = model_part(model, &variables, options.version);
    let token = token_of(model.name(), &body);
    let fmi3 = options.version == FmiVersion::Fmi3;
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription");
    attribute(&mut xml, "fmiVersion", if fmi3 { "3.0" } else { "2.0" });
    attribute(&mut xml, "modelName", model.name());
    attribute(&mut xml, if fmi3 { "instantiationToken" } else { "guid" }, &token);
    attribute(&mut xml, "generationTool", &options.generation_tool);
    if let Some(date) = &options.generation_date {
        attribute(&mut xml, "generationDateAndTime", date);
    }
    if !fmi3 {
        let indicators = model.program().events().surfaces.len();
        attribute(&mut xml, "numberOfEventIndicators", &indicators.to_string());
    }
    xml.push_str(">\n");
    interfaces(&mut xml, options);
    unit_definitions(&mut xml, &variables);
    type_definitions(&mut xml, &variables, fmi3);
    default_experiment(&mut xml, model);
    xml.push_str(&body);
    xml.push_str("</fmiModelDescription>\n");
    xml
}

/// The GUID (FMI 2) or instantiation token (FMI 3) of `model`'s description for `version`: a
/// hash of the model's name and of its `ModelVariables` and `ModelStructure` as written.
pub fn instantiation_token(model: &Model, version: FmiVersion) -> String {
    let variables = variables(model);
    token_of(model.name(), &model_part(model, &variables, version))
}

/// `{8-4-4-4-12}` hexadecimal digits of two 64-bit FNV-1a hashes of `name` and `body` (a
/// fingerprint, not a cryptographic hash: it detects a runtime that compiled another model).
fn token_of(name: &str, body: &str) -> String {
    let fnv = |seed: u64| {
        let mut hash = seed;
        for byte in name.bytes().chain([0]).chain(body.bytes()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash
    };
    let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x6c62_272e_07bb_0142));
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// `ModelVariables` and `ModelStructure`.
fn model_part(model: &Model, variables: &[FmiVariable], version: FmiVersion) -> String {
    let mut structure = structure(model, variables);
    // FMI 3 names the elements of an array by the array (see `arrays`); FMI 2 has no arrays.
    let arrays = match version {
        FmiVersion::Fmi2 => Vec::new(),
        FmiVersion::Fmi3 => arrays(variables),
    };
    let owner = owners(variables, &arrays);
    let mut xml = String::from("  <ModelVariables>\n");
    let mut next_array = arrays.iter().peekable();
    for v in variables {
        match version {
            FmiVersion::Fmi2 => variable2(&mut xml, v),
            FmiVersion::Fmi3 if owner[v.value_reference as usize] != v.value_reference => {}
            FmiVersion::Fmi3 => match next_array.next_if(|a| a.value_reference == v.value_reference) {
                Some(array) => array3(&mut xml, variables, array, &owner),
                None => variable3(&mut xml, v),
            },
        }
    }
    if version == FmiVersion::Fmi3 && !arrays.is_empty() {
        for list in [
            &mut structure.outputs,
            &mut structure.derivatives,
            &mut structure.initial_unknowns,
        ] {
            *list = by_owner(list, &owner);
        }
    }
    xml.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    match version {
        FmiVersion::Fmi2 => {
            // FMI 2 refers to variables by their one-based index in `ModelVariables`, which is
            // the value reference plus one.
            let list = |xml: &mut String, tag: &str, unknowns: &[(u32, Dependencies)]| {
                if unknowns.is_empty() {
                    return;
                }
                let _ = writeln!(xml, "    <{tag}>");
                for (vr, deps) in unknowns {
                    unknown(xml, "      <Unknown", "index", *vr, deps.as_deref(), 1);
                }
                let _ = writeln!(xml, "    </{tag}>");
            };
            list(&mut xml, "Outputs", &structure.outputs);
            list(&mut xml, "Derivatives", &structure.derivatives);
            list(&mut xml, "InitialUnknowns", &structure.initial_unknowns);
        }
        FmiVersion::Fmi3 => {
            let lists = [
                ("    <Output", &structure.outputs),
                ("    <ContinuousStateDerivative", &structure.derivatives),
                ("    <InitialUnknown", &structure.initial_unknowns),
            ];
            for (open, unknowns) in lists {
                for (vr, deps) in unknowns {
                    unknown(&mut xml, open, "valueReference", *vr, deps.as_deref(), 0);
                }
            }
            for v in variables {
                if let FmiSource::EventIndicator { .. } = v.source {
                    unknown(
                        &mut xml,
                        "    <EventIndicator",
                        "valueReference",
                        v.value_reference,
                        None,
                        0,
                    );
                }
            }
        }
    }
    xml.push_str("  </ModelStructure>\n");
    xml
}

/// One element of `ModelStructure`, with its dependencies and their kinds when they are known;
/// `offset` turns a value reference into the number the version refers to a variable by.
fn unknown(
    xml: &mut String,
    open: &str,
    key: &str,
    reference: u32,
    deps: Option<&[(u32, DependencyKind)]>,
    offset: u32,
) {
    xml.push_str(open);
    attribute(xml, key, &(reference + offset).to_string());
    if let Some(deps) = deps {
        let known: Vec<String> = deps.iter().map(|(d, _)| (d + offset).to_string()).collect();
        let kinds: Vec<&str> = deps.iter().map(|(_, kind)| kind.text()).collect();
        attribute(xml, "dependencies", &known.join(" "));
        // An empty list has no kinds to give.
        if !kinds.is_empty() {
            attribute(xml, "dependenciesKind", &kinds.join(" "));
        }
    }
    xml.push_str("/>\n");
}

/// The `<fmiVersion>`-specific interface elements with their capability flags.
fn interfaces(xml: &mut String, options: &DescriptionOptions) {
    let c = &options.capabilities;
    let fmi3 = options.version == FmiVersion::Fmi3;
    let common: [(&str, bool); 5] = if fmi3 {
        [
            ("needsExecutionTool", c.needs_execution_tool),
            (
                "canBeInstantiatedOnlyOncePerProcess",
                c.can_be_instantiated_only_once_per_process,
            ),
            ("canGetAndSetFMUState", c.can_get_and_set_fmu_state),
            ("canSerializeFMUState", c.can_serialize_fmu_state),
            ("providesDirectionalDerivatives", c.provides_directional_derivatives),
        ]
    } else {
        [
            ("needsExecutionTool", c.needs_execution_tool),
            (
                "canBeInstantiatedOnlyOncePerProcess",
                c.can_be_instantiated_only_once_per_process,
            ),
            ("canGetAndSetFMUstate", c.can_get_and_set_fmu_state),
            ("canSerializeFMUstate", c.can_serialize_fmu_state),
            ("providesDirectionalDerivative", c.provides_directional_derivatives),
        ]
    };
    let mut flags: Vec<(&str, bool)> = common.to_vec();
    if fmi3 {
        flags.push(("providesAdjointDerivatives", c.provides_adjoint_derivatives));
        flags.push(("providesEvaluateDiscreteStates", c.provides_evaluate_discrete_states));
    } else {
        flags.push((
            "canNotUseMemoryManagementFunctions",
            c.can_not_use_memory_management_functions,
        ));
    }
    let write = |xml: &mut String, tag: &str, extra: &[(&str, bool)]| {
        let _ = write!(xml, "  <{tag}");
        attribute(xml, "modelIdentifier", &options.model_identifier);
        for (name, on) in flags.iter().chain(extra) {
            if *on {
                attribute(xml, name, "true");
            }
        }
        if tag == "CoSimulation" && c.max_output_derivative_order > 0 {
            attribute(
                xml,
                "maxOutputDerivativeOrder",
                &c.max_output_derivative_order.to_string(),
            );
        }
        xml.push_str("/>\n");
    };
    if options.kinds.me {
        let step = if fmi3 {
            ("needsCompletedIntegratorStep", !c.completed_integrator_step_not_needed)
        } else {
            (
                "completedIntegratorStepNotNeeded",
                c.completed_integrator_step_not_needed,
            )
        };
        write(xml, "ModelExchange", &[step]);
    }
    if options.kinds.cs {
        let mut extra = vec![
            (
                "canHandleVariableCommunicationStepSize",
                c.can_handle_variable_communication_step_size,
            ),
            ("canInterpolateInputs", c.can_interpolate_inputs),
        ];
        if fmi3 {
            extra.extend([
                ("hasEventMode", c.has_event_mode),
                ("providesIntermediateUpdate", c.provides_intermediate_update),
                ("mightReturnEarlyFromDoStep", c.might_return_early_from_do_step),
                (
                    "canReturnEarlyAfterIntermediateUpdate",
                    c.can_return_early_after_intermediate_update,
                ),
            ]);
        } else {
            extra.push(("canRunAsynchronuously", c.can_run_asynchronously));
        }
        write(xml, "CoSimulation", &extra);
    }
}

/// Every unit the variables use, once, in name order, with its base units where known.
fn unit_definitions(xml: &mut String, variables: &[FmiVariable]) {
    let mut units: Vec<&str> = variables
        .iter()
        .filter_map(|v| v.unit.as_deref())
        .filter(|u| !u.is_empty())
        .collect();
    units.sort_unstable();
    units.dedup();
    if units.is_empty() {
        return;
    }
    xml.push_str("  <UnitDefinitions>\n");
    for unit in units {
        xml.push_str("    <Unit");
        attribute(xml, "name", unit);
        match base_unit(unit) {
            Some(base) => {
                xml.push_str(">\n      <BaseUnit");
                for (name, &e) in BASE_NAMES.iter().zip(&base.exponents) {
                    if e != 0 {
                        attribute(xml, name, &e.to_string());
                    }
                }
                if base.factor != 1.0 {
                    attribute(xml, "factor", &format_number(base.factor));
                }
                if base.offset != 0.0 {
                    attribute(xml, "offset", &format_number(base.offset));
                }
                xml.push_str("/>\n    </Unit>\n");
            }
            None => xml.push_str("/>\n"),
        }
    }
    xml.push_str("  </UnitDefinitions>\n");
}

/// Every enumeration type the variables use, once, in name order: FMI 2 `SimpleType`s with an
/// `Enumeration`, FMI 3 `EnumerationType`s, each item valued by its position from 1.
fn type_definitions(xml: &mut String, variables: &[FmiVariable], fmi3: bool) {
    let mut types: Vec<&EnumerationType> = variables.iter().filter_map(|v| v.enumeration.as_deref()).collect();
    types.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    types.dedup_by(|a, b| a.name == b.name);
    if types.is_empty() {
        return;
    }
    xml.push_str("  <TypeDefinitions>\n");
    for ty in types {
        let indent = if fmi3 {
            xml.push_str("    <EnumerationType");
            attribute(xml, "name", &ty.name);
            xml.push_str(">\n");
            "      "
        } else {
            xml.push_str("    <SimpleType");
            attribute(xml, "name", &ty.name);
            xml.push_str(">\n      <Enumeration>\n");
            "        "
        };
        for (k, (name, description)) in ty.literals.iter().enumerate() {
            xml.push_str(indent);
            xml.push_str("<Item");
            attribute(xml, "name", name);
            attribute(xml, "value", &(k + 1).to_string());
            if let Some(description) = description {
                attribute(xml, "description", description);
            }
            xml.push_str("/>\n");
        }
        xml.push_str(if fmi3 {
            "    </EnumerationType>\n"
        } else {
            "      </Enumeration>\n    </SimpleType>\n"
        });
    }
    xml.push_str("  </TypeDefinitions>\n");
}

/// `DefaultExperiment` from the model's `experiment` annotation, when it gives anything.
fn default_experiment(xml: &mut String, model: &Model) {
    let e = model.experiment();
    let values = [
        ("startTime", e.start_time),
        ("stopTime", e.stop_time),
        ("tolerance", e.tolerance),
        ("stepSize", e.interval),
    ];
    if values.iter().all(|(_, v)| v.is_none()) {
        return;
    }
    xml.push_str("  <DefaultExperiment");
    for (name, value) in values {
        if let Some(value) = value {
            attribute(xml, name, &format_number(value));
        }
    }
    xml.push_str("/>\n");
}

fn causality_text(c: FmiCausality) -> &'static str {
    match c {
        FmiCausality::Parameter => "parameter",
        FmiCausality::CalculatedParameter => "calculatedParameter",
        FmiCausality::Input => "input",
        FmiCausality::Output => "output",
        FmiCausality::Local => "local",
        FmiCausality::Independent => "independent",
    }
}

fn variability_text(v: FmiVariability) -> &'static str {
    match v {
        FmiVariability::Constant => "constant",
        FmiVariability::Fixed => "fixed",
        FmiVariability::Tunable => "tunable",
        FmiVariability::Discrete => "discrete",
        FmiVariability::Continuous => "continuous",
    }
}

fn initial_text(i: FmiInitial) -> &'static str {
    match i {
        FmiInitial::Exact => "exact",
        FmiInitial::Approx => "approx",
        FmiInitial::Calculated => "calculated",
    }
}

/// A start value as its type writes it.
fn start_text(ty: FmiType, value: f64) -> String {
    match ty {
        FmiType::Real => format_number(value),
        FmiType::Integer | FmiType::Enumeration => format!("{}", value as i64),
        FmiType::Boolean => (if value != 0.0 { "true" } else { "false" }).to_string(),
        // A text is no number: its start is the variable's `text`.
        FmiType::String => String::new(),
    }
}

/// The attributes every variable has in both versions.
fn common_attributes(xml: &mut String, v: &FmiVariable) {
    attribute(xml, "name", &v.name);
    attribute(xml, "valueReference", &v.value_reference.to_string());
    if let Some(description) = &v.description {
        attribute(xml, "description", description);
    }
    attribute(xml, "causality", causality_text(v.causality));
    attribute(xml, "variability", variability_text(v.variability));
    if let Some(initial) = v.initial {
        attribute(xml, "initial", initial_text(initial));
    }
}

/// An FMI 2 `ScalarVariable`.
fn variable2(xml: &mut String, v: &FmiVariable) {
    xml.push_str("    <ScalarVariable");
    common_attributes(xml, v);
    xml.push_str(">\n      <");
    xml.push_str(match v.ty {
        FmiType::Real => "Real",
        FmiType::Integer => "Integer",
        FmiType::Boolean => "Boolean",
        FmiType::Enumeration => "Enumeration",
        FmiType::String => "String",
    });
    typed_attributes(xml, v, |vr| vr + 1);
    if let Some(text) = &v.text {
        attribute(xml, "start", text);
    }
    xml.push_str("/>\n    </ScalarVariable>\n");
}

/// The element name of an FMI 3 variable of type `ty`.
fn tag3(ty: FmiType) -> &'static str {
    match ty {
        FmiType::Real => "Float64",
        FmiType::Integer => "Int32",
        FmiType::Boolean => "Boolean",
        FmiType::Enumeration => "Enumeration",
        FmiType::String => "String",
    }
}

/// An FMI 3 variable element.
fn variable3(xml: &mut String, v: &FmiVariable) {
    xml.push_str("    <");
    xml.push_str(tag3(v.ty));
    common_attributes(xml, v);
    typed_attributes(xml, v, |vr| vr);
    // FMI 3 gives a String's start as an element, so that an array can have several.
    match &v.text {
        Some(text) => {
            xml.push_str(">\n      <Start");
            attribute(xml, "value", text);
            xml.push_str("/>\n    </String>\n");
        }
        None => xml.push_str("/>\n"),
    }
}

/// An FMI 3 array variable: the attributes its elements share (see `arrays`), the start values
/// of its elements row-major, and a `Dimension` of fixed size per dimension; `owner` names a
/// derivative's state array.
fn array3(xml: &mut String, variables: &[FmiVariable], array: &FmiArray, owner: &[u32]) {
    let first = &variables[array.value_reference as usize];
    let elements: Vec<&FmiVariable> = array.elements.iter().map(|&r| &variables[r as usize]).collect();
    let starts: Option<Vec<String>> = elements.iter().map(|e| e.start.map(|s| start_text(e.ty, s))).collect();
    let shared = FmiVariable {
        name: array.name.clone(),
        start: None,
        derivative_of: first.derivative_of.map(|d| owner[d as usize]),
        // A state array is reinitialized where any of its elements is.
        reinit: elements.iter().any(|e| e.reinit),
        ..first.clone()
    };
    xml.push_str("    <");
    xml.push_str(tag3(first.ty));
    common_attributes(xml, &shared);
    typed_attributes(xml, &shared, |vr| vr);
    if let Some(starts) = starts {
        attribute(xml, "start", &starts.join(" "));
    }
    xml.push_str(">\n");
    for n in &array.dimensions {
        xml.push_str("      <Dimension");
        attribute(xml, "start", &n.to_string());
        xml.push_str("/>\n");
    }
    let _ = writeln!(xml, "    </{}>", tag3(first.ty));
}

/// The unknowns of `list` named as FMI 3 names them (`owner`): an array once, where its first
/// element stands, with what any element depends on (each known by its array too, at the
/// coarsest kind any element has; every known when an element depends on every known).
fn by_owner(list: &[(u32, Dependencies)], owner: &[u32]) -> Vec<(u32, Dependencies)> {
    let mut merged: Vec<(u32, Dependencies)> = Vec::new();
    let mut at: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (vr, deps) in list {
        let named = owner[*vr as usize];
        let deps: Dependencies = deps
            .as_ref()
            .map(|d| d.iter().map(|&(k, kind)| (owner[k as usize], kind)).collect());
        match at.get(&named) {
            None => {
                at.insert(named, merged.len());
                merged.push((named, deps));
            }
            Some(&k) => {
                let entry = &mut merged[k].1;
                *entry = match (entry.take(), deps) {
                    (Some(mut a), Some(b)) => {
                        a.extend(b);
                        Some(a)
                    }
                    _ => None,
                };
            }
        }
    }
    for (_, deps) in &mut merged {
        if let Some(d) = deps {
            // Sorted by known, the coarsest kind of each known kept.
            d.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            d.dedup_by_key(|(k, _)| *k);
        }
    }
    merged
}

/// Declared type, start, unit, derivative and reinit; `reference` turns a value reference into the form the
/// version's `derivative` attribute takes.
fn typed_attributes(xml: &mut String, v: &FmiVariable, reference: impl Fn(u32) -> u32) {
    if let Some(ty) = &v.enumeration {
        attribute(xml, "declaredType", &ty.name);
    }
    if let Some(unit) = v.unit.as_deref().filter(|u| !u.is_empty() && v.ty == FmiType::Real) {
        attribute(xml, "unit", unit);
    }
    if let Some(start) = v.start {
        attribute(xml, "start", &start_text(v.ty, start));
    }
    if let Some(of) = v.derivative_of {
        attribute(xml, "derivative", &reference(of).to_string());
    }
    if v.reinit {
        attribute(xml, "reinit", "true");
    }
}

/// ` name="value"` with the value escaped for an XML attribute: the one place that escapes.
fn attribute(xml: &mut String, name: &str, value: &str) {
    xml.push(' ');
    xml.push_str(name);
    xml.push_str("=\"");
    for c in value.chars() {
        match c {
            '&' => xml.push_str("&amp;"),
            '<' => xml.push_str("&lt;"),
            '>' => xml.push_str("&gt;"),
            '"' => xml.push_str("&quot;"),
            '\'' => xml.push_str("&apos;"),
            '\n' => xml.push_str("&#10;"),
            '\r' => xml.push_str("&#13;"),
            '\t' => xml.push_str("&#9;"),
            // Other control characters cannot appear in XML 1.0 at all.
            c if (c as u32) < 0x20 => xml.push(' '),
            c => xml.push(c),
        }
    }
    xml.push('"');
}
