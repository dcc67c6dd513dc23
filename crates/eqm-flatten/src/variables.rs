//! Variables and the modifiers applied to them: a scalar variable of the flat model with its
//! attributes (`start`, `fixed`, `min`, `max`, `nominal`, `unit`, `displayUnit`, `stateSelect`),
//! its binding (kept for parameters and constants, an equation for the others) or its `--param`
//! override; the check that every modifier of an instance names one of its elements; and the
//! values of parameters known at compile time.
//!
//! Input: a [`VarSpec`] (the declaration as instantiated, with its merged modifier). Output: the
//! variable in the flat model, with what connecting needs of it ([`VarKind`]), and diagnostics for
//! unusable modifiers. It deliberately resolves no names and instantiates nothing: the modifier
//! arrives merged, with the scope of each binding.

use crate::flattener::Flattener;
use crate::layout::VarKind;
use crate::modifier::{self, Modifier};
use crate::value::Value;
use crate::value::{type_name, types_compatible};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, VarId};
use eqm_ir::flat::{self, ConnectorRole, InstanceId, ScalarType};
use eqm_syntax::ast;
use std::hash::BuildHasher as _;
use std::rc::Rc;
use std::sync::Arc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Reports modifier arguments that name no element of the instance.
    pub(crate) fn check_modifier_targets(&mut self, instance: InstanceId) {
        let state = &self.instances[instance.0 as usize];
        let mut unknown = Vec::new();
        for arg in state.modifier.iter().flat_map(|m| &m.args) {
            // A class redeclaration names a replaceable class, checked below.
            let redeclares_class = matches!(
                arg.modifier.redeclare,
                Some(r) if matches!(r.element, ast::RedeclaredElement::Class(_))
            );
            if !redeclares_class && state.layout.index(arg.name).is_none() {
                unknown.push((arg.name.to_string(), arg.span));
            }
        }
        if let Some(redeclares) = state.class_redeclares.clone() {
            let class = state.class;
            for r in redeclares.iter() {
                self.check_class_redeclaration(class, r, false);
            }
        }
        let state = &self.instances[instance.0 as usize];
        if unknown.is_empty() || state.layout.incomplete {
            return;
        }
        let class_name = self.table.get(state.class).full_name.clone();
        let layout = state.layout.clone();
        for (name, span) in unknown {
            let mut d = Diagnostic::error(
                "E0203",
                format!("`{class_name}` has no element `{name}` to modify"),
                span,
                "modifies nothing",
            );
            if let Some(s) = eqm_diag::did_you_mean(&name, layout.names()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diagnostics.push(d);
        }
    }

    pub(crate) fn new_variable(&mut self, spec: VarSpec<'_, 'a>) -> VarId {
        let id = VarId(self.model.variables.len() as u32);
        let role = match spec.connection {
            ast::Connection::Flow => ConnectorRole::Flow,
            ast::Connection::Stream => ConnectorRole::Stream,
            ast::Connection::Potential => ConnectorRole::Potential,
            ast::Connection::None if spec.in_connector || spec.is_connector_type => ConnectorRole::Potential,
            ast::Connection::None => ConnectorRole::None,
        };
        self.model.variables.push(flat::Variable {
            name: spec.name,
            instance: spec.instance,
            variability: spec.variability,
            ty: spec.ty,
            causality: spec.causality,
            role,
            attributes: self.caches.no_attributes.clone(),
            binding: None,
            value: None,
            description: spec.description,
            span: spec.span,
        });
        self.var_kinds.push(VarKind {
            variability: spec.variability,
            role,
            causality: spec.causality,
            ty: spec.ty,
            is_connector_type: spec.is_connector_type,
        });
        self.check_connector_variable_type(role, spec.ty, spec.span);
        let scope_for_messages = spec.span;
        // Attributes.
        let mut attributes = flat::AttributeValues::default();
        for arg in &spec.modifier.args {
            let Some(binding) = &arg.modifier.binding else {
                self.diagnostics.push(Diagnostic::error(
                    "E0203",
                    format!("attribute `{}` needs a value", arg.name),
                    arg.span,
                    "write `name = value`",
                ));
                continue;
            };
            match arg.name {
                "start" | "min" | "max" | "nominal" => {
                    let Some(value) = self.attribute_value(id, arg.name, binding, spec.ty) else {
                        continue;
                    };
                    let slot = match arg.name {
                        "start" => &mut attributes.start,
                        "min" => &mut attributes.min,
                        "max" => &mut attributes.max,
                        _ => &mut attributes.nominal,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
                "fixed" => {
                    if attributes.fixed.is_none() {
                        attributes.fixed = self.fixed_attribute(binding);
                    }
                }
                "unit" | "displayUnit" | "quantity" => {
                    // A literal, or a String expression known at compile time
                    // (`quantity = "Voltage." + phaseSystemName`).
                    let text: Option<Arc<str>> = match &binding.expr.kind {
                        ast::ExprKind::String(s) => Some(self.shared(s)),
                        _ => match self.eval(binding.expr, binding.scope, &mut Vec::new()) {
                            Some(crate::value::Value::Str(m)) => m.as_literal().map(Arc::from),
                            _ => None,
                        },
                    };
                    match (text, arg.name) {
                        (Some(s), "unit") if attributes.unit.is_none() => attributes.unit = Some(s),
                        (Some(s), "displayUnit") if attributes.display_unit.is_none() => {
                            attributes.display_unit = Some(s)
                        }
                        (Some(_), _) => {}
                        (None, name) => self.diagnostics.push(Diagnostic::error(
                            "E0305",
                            format!("`{name}` must be a string known at compile time"),
                            binding.expr.span,
                            "expected a string",
                        )),
                    }
                }
                "stateSelect" => {
                    if attributes.state_select.is_none() {
                        attributes.state_select = self.state_select(binding);
                    }
                }
                other => {
                    let mut d = Diagnostic::error(
                        "E0203",
                        format!("`{other}` is not an attribute of a scalar variable"),
                        arg.span,
                        "modifies nothing",
                    )
                    .with_label(scope_for_messages, "this variable has a built-in type");
                    if let Some(s) = eqm_diag::did_you_mean(
                        other,
                        [
                            "start",
                            "fixed",
                            "min",
                            "max",
                            "nominal",
                            "unit",
                            "displayUnit",
                            "stateSelect",
                            "quantity",
                        ],
                    ) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    } else {
                        d = d.with_help(
                            "the attributes are start, fixed, min, max, nominal, unit, displayUnit and stateSelect",
                        );
                    }
                    self.diagnostics.push(d);
                }
            }
        }
        self.model.variables[id.0 as usize].attributes = self.share_attributes(attributes);
        self.bind_declared(id, spec.modifier, (spec.ty, spec.variability));
        id
    }

    /// Gives the variable `id` just declared by `spec` its value: a `--param` override, else
    /// its binding (evaluated now, or once the variable's member is complete when it reads the
    /// variable itself, or once every connect is known when it calls `cardinality`).
    fn bind_declared(
        &mut self,
        id: VarId,
        modifier: &Modifier<'a>,
        (ty, variability): (ScalarType, flat::Variability),
    ) {
        let overridden = self.override_for(id);
        if let Some(value) = overridden {
            let e = self.model.exprs.real(value);
            self.model.variables[id.0 as usize].binding = Some(e);
        } else if let Some(binding) = &modifier.binding
            && !self.connections.counting
            && !matches!(variability, flat::Variability::Parameter | flat::Variability::Constant)
            && eqm_syntax::visit::expr_calls(binding.expr, "cardinality")
        {
            // `cardinality` counts the connects of the whole model: the binding, an equation,
            // is evaluated once every connect is known. A parameter's is not: the model's
            // structure may have been chosen by its value before then (E0310).
            let late = (id, binding.clone(), ty, Some(variability));
            self.connections.counting_bindings.push(late);
            self.connections.connector_uses.get_or_insert_default();
        } else if let Some(binding) = &modifier.binding {
            let diagnostics = self.diagnostics.len();
            match self.eval_binding(binding, ty) {
                Some(value) => self.bind_variable_to(id, variability, binding, value),
                // The binding of a variable that is not a parameter is an equation, which may
                // read the variable itself (`Real x = f(x)`): it waits until the variable's
                // member is complete.
                None if !matches!(variability, flat::Variability::Parameter | flat::Variability::Constant)
                    && self.only_cycles_since(diagnostics) =>
                {
                    self.diagnostics.truncate(diagnostics);
                    let deferred = (id, binding.clone(), ty, Some(variability));
                    self.deferred_starts.push(deferred);
                }
                None => {}
            }
        }
    }

    /// [`Self::bind_variable`] for the value of `binding`.
    fn bind_variable_to(
        &mut self,
        id: VarId,
        variability: flat::Variability,
        binding: &crate::modifier::Binding<'a>,
        value: ExprId,
    ) {
        if !binding.fields.is_empty() {
            self.record_field_bindings.insert(id);
        }
        self.bind_variable(id, variability, value, binding.expr.span);
    }

    /// Whether the diagnostics since `from` are all E0216 (a declaration reading itself), and
    /// there is at least one.
    fn only_cycles_since(&self, from: usize) -> bool {
        self.diagnostics.len() > from && self.diagnostics[from..].iter().all(|d| d.code == "E0216")
    }

    /// Gives variable `id` the value of its binding: parameters and constants keep it, other
    /// variables get an equation.
    fn bind_variable(&mut self, id: VarId, variability: flat::Variability, value: ExprId, span: Span) {
        if self.bound_model_input(id, variability, value) {
            return;
        }
        // A String variable holds text known when the model is compiled: bound to a text, it
        // keeps it for the whole run, so it is a parameter with that binding rather than an
        // unknown with an equation that nothing solves.
        let is_string = self.model.variables[id.0 as usize].ty == ScalarType::String;
        let parameter = matches!(variability, flat::Variability::Parameter | flat::Variability::Constant);
        // A text known now: a literal, or a String parameter's (`String s = names[2]`).
        let string_text = match self.model.exprs.get(value) {
            eqm_ir::expr::Node::Str(_) => Some(value),
            _ if is_string && !parameter => (self.known_string(&Value::Scalar(value, ScalarType::String)))
                .and_then(|m| m.as_literal())
                .map(|text| self.model.exprs.add(eqm_ir::expr::Node::Str(text.into()))),
            _ => None,
        }
        .filter(|_| is_string);
        match variability {
            flat::Variability::Parameter | flat::Variability::Constant => {
                self.model.variables[id.0 as usize].binding = Some(value)
            }
            _ if let Some(text) = string_text => self.bind_string_text(id, text),
            _ => {
                let lhs = self.model.exprs.var(id);
                self.model.equations.push(flat::Equation {
                    lhs,
                    rhs: value,
                    origin: flat::Origin::Binding { var: id },
                    span,
                    array: None,
                });
            }
        }
    }

    /// Handles the binding of an input of the model itself (`input Real u = 0;` at the top
    /// level), which nothing inside the model drives: a value known before the run is the
    /// input's value unless the user gives another, as its start value would be; a value that
    /// changes during the run defines the variable, which is then an unknown like any other
    /// rather than an input. Returns whether `id` was such an input.
    fn bound_model_input(&mut self, id: VarId, variability: flat::Variability, value: ExprId) -> bool {
        let variable = &self.model.variables[id.0 as usize];
        if !variability.is_time_varying() || !self.model.is_top_level_input(variable) {
            return false;
        }
        if self.reads_beyond_parameters(value).is_none() {
            let mut values = (*variable.attributes).clone();
            values.start = Some(value);
            let attributes = self.share_attributes(values);
            self.model.variables[id.0 as usize].attributes = attributes;
            return true;
        }
        self.model.variables[id.0 as usize].causality = flat::Causality::None;
        false
    }

    /// Whether a component of `instance` may have the connection prefix `connection`: `flow`
    /// and `stream` apply to types, records and connectors (each scalar of them is a flow or
    /// stream variable), and not to an element of a component that is `flow` or `stream` already
    /// (it would be two prefixes on one variable); `stream` only in a connector (Modelica 15.1).
    /// E0335 (flow) or E0340 (stream) otherwise.
    pub(crate) fn connection_prefix_allowed(
        &mut self,
        instance: InstanceId,
        connection: ast::Connection,
        target: crate::resolve::TypeRef,
        span: Span,
    ) -> bool {
        let (word, code) = match connection {
            ast::Connection::Flow => ("flow", "E0335"),
            ast::Connection::Stream => ("stream", "E0340"),
            _ => return true,
        };
        let state = &self.instances[instance.0 as usize];
        let why = if state.flow || state.stream {
            let outer = if state.flow { "flow" } else { "stream" };
            format!("it is an element of a component that is `{outer}` already")
        } else if connection == ast::Connection::Stream && !state.is_connector {
            "`stream` is only allowed on an element of a connector".to_string()
        } else if let crate::resolve::TypeRef::Class(class) = target
            && let kind = self.table.get(class).def.kind
            && !(kind.is_record() || kind.is_connector() || kind == ast::ClassKind::Type)
        {
            format!("`{word}` applies to types, records and connectors, not to a component of this class")
        } else {
            return true;
        };
        self.diagnostics.push(Diagnostic::error(
            code,
            format!("this `{word}` prefix is not allowed: {why}"),
            span,
            word,
        ));
        false
    }

    /// A stream variable is a Real (Modelica 15.1): E0340 otherwise. So is a flow variable,
    /// a quantity the connections sum to zero (Modelica 9.3): E0335 otherwise.
    fn check_connector_variable_type(&mut self, role: ConnectorRole, ty: ScalarType, span: Span) {
        if role == ConnectorRole::Flow && ty != ScalarType::Real {
            self.diagnostics.push(
                Diagnostic::error("E0335", "a flow variable must be a Real", span, "not a Real").with_help(
                    "a flow variable is a quantity the connections sum to zero: a current, a force, a mass flow",
                ),
            );
        }
        if role == ConnectorRole::Stream && ty != ScalarType::Real {
            self.diagnostics.push(
                Diagnostic::error("E0340", "a stream variable must be a Real", span, "not a Real").with_help(
                    "a stream variable is a quantity carried by the flow: a specific enthalpy, a mass fraction",
                ),
            );
        }
    }

    /// The `fixed` attribute: a Boolean known at compile time, for an element of an array its
    /// own element of the modifier's value (`Real w[3](fixed = fill(free, 3))`).
    fn fixed_attribute(&mut self, binding: &crate::modifier::Binding<'a>) -> Option<bool> {
        let what = "the `fixed` attribute";
        if binding.select.is_empty() && binding.fields.is_empty() {
            return self.eval_structural_bool(binding.expr, binding.scope, what);
        }
        let x = self.eval_binding(binding, ScalarType::Boolean)?;
        self.structural_scalar(x, binding.expr.span, what).map(|v| v != 0.0)
    }

    /// The value of attribute `name` of variable `id`. A start value that reads the member
    /// being instantiated (another element of the same array) waits until the member is
    /// complete: `None` then, and without a diagnostic.
    fn attribute_value(
        &mut self,
        id: VarId,
        name: &str,
        binding: &crate::modifier::Binding<'a>,
        ty: ScalarType,
    ) -> Option<ExprId> {
        let diagnostics = self.diagnostics.len();
        let value = self.eval_binding(binding, ty);
        if value.is_none() && name == "start" && self.only_cycles_since(diagnostics) {
            self.diagnostics.truncate(diagnostics);
            self.deferred_starts.push((id, binding.clone(), ty, None));
        }
        value
    }

    /// The bindings that call `cardinality`, once every connect is known.
    pub(crate) fn finish_counting_bindings(&mut self) {
        for (v, binding, ty, bound) in std::mem::take(&mut self.connections.counting_bindings) {
            if let (Some(value), Some(variability)) = (self.eval_binding(&binding, ty), bound) {
                self.bind_variable_to(v, variability, &binding, value);
            }
        }
    }

    /// The start values and bindings deferred since entry `from` of `deferred_starts` (they
    /// read a member that is complete now): evaluated again, reported if they still fail.
    pub(crate) fn finish_deferred_starts(&mut self, from: usize) {
        for (v, binding, ty, bound) in self.deferred_starts.split_off(from) {
            let diagnostics = self.diagnostics.len();
            let Some(value) = self.eval_binding(&binding, ty) else {
                // A binding that reads a member still being made around this one (`Real z1 =
                // cos(z2); Real z2 = sin(z1);`) waits for that member.
                if bound.is_some() && !self.caches.members_in_progress.is_empty() && self.only_cycles_since(diagnostics)
                {
                    self.diagnostics.truncate(diagnostics);
                    self.deferred_starts.push((v, binding, ty, bound));
                }
                continue;
            };
            match bound {
                Some(variability) => self.bind_variable_to(v, variability, &binding, value),
                None => {
                    let attributes = &mut self.model.variables[v.0 as usize].attributes;
                    if attributes.start.is_none() {
                        attributes.start = Some(value);
                    }
                }
            }
        }
    }

    /// The attributes `values` as the recently made attributes that are equal, if there are any:
    /// variables declared alike share one copy. A small table indexed by hash keeps the last
    /// attributes of each hash, so that sharing costs no growing map.
    fn share_attributes(&mut self, values: flat::AttributeValues) -> flat::Attributes {
        // The hash only picks a slot, so it may be cheap: expression ids and the unit's address
        // (units are shared per source text) rather than every field and text.
        let ids = [values.start, values.min, values.max, values.nominal].map(|e| e.map_or(u32::MAX, |e| e.0));
        let unit = values.unit.as_ref().map_or(0, |u| u.as_ptr() as usize);
        let hash = eqm_ir::expr::FxBuild::default().hash_one((ids, unit));
        // The high bits, which multiplicative hashing mixes best.
        let slot = (hash >> 32) as usize % self.caches.recent_attributes.len();
        match &self.caches.recent_attributes[slot] {
            Some(known) if **known == values => known.clone(),
            _ => {
                let attributes = flat::Attributes::new(values);
                self.caches.recent_attributes[slot] = Some(attributes.clone());
                attributes
            }
        }
    }

    fn override_for(&mut self, var: VarId) -> Option<f64> {
        let v = &self.model.variables[var.0 as usize];
        if v.variability != flat::Variability::Parameter {
            return None;
        }
        // A name given twice takes its last value, as repeated command-line options do; every
        // occurrence counts as used, so that none is reported as naming no parameter.
        let mut value = None;
        for (i, (name, x)) in self.options.parameters.iter().enumerate() {
            if *name == v.name {
                self.used_overrides[i] = true;
                value = Some(*x);
            }
        }
        value
    }

    /// The `stateSelect` attribute a binding gives: a value of the predefined enumeration
    /// `StateSelect` known at compile time, such as a parameter of that type.
    fn state_select(&mut self, binding: &modifier::Binding<'a>) -> Option<flat::StateSelect> {
        let x = self.eval_binding(binding, ScalarType::Integer)?;
        let ty = crate::predefined::STATE_SELECT;
        let k = self.predefined_literal(binding.expr, x, binding.scope, &ty, "`stateSelect`", "E0305")?;
        // In the order of the literals of `StateSelect`.
        const CHOICES: [flat::StateSelect; 5] = [
            flat::StateSelect::Never,
            flat::StateSelect::Avoid,
            flat::StateSelect::Default,
            flat::StateSelect::Prefer,
            flat::StateSelect::Always,
        ];
        CHOICES.get(k).copied()
    }

    /// The value of a binding's whole expression, before any element is picked: evaluated
    /// once per array component (see `Caches::array_bindings`), since every element of the
    /// array evaluates the same expression in the same scope and picks its own part.
    pub(crate) fn binding_value(&mut self, binding: &modifier::Binding<'a>) -> Option<Rc<Value>> {
        let key = (
            std::ptr::from_ref(binding.expr),
            binding.scope.instance,
            binding.scope.class,
        );
        if let Some(value) = self.caches.array_bindings.as_ref().and_then(|m| m.get(&key)) {
            return Some(value.clone());
        }
        let value = Rc::new(self.eval_binding_expression(binding)?);
        if let Some(memo) = self.caches.array_bindings.as_mut() {
            memo.insert(key, value.clone());
        }
        Some(value)
    }

    /// Evaluates a binding to one scalar expression, picking array elements as selected.
    fn eval_binding(&mut self, binding: &modifier::Binding<'a>, ty: ScalarType) -> Option<ExprId> {
        let whole = self.binding_value(binding)?;
        let mut value = match select_elements(&whole, &binding.select) {
            Ok(v) => v,
            Err(i) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("the modifier has too few elements for element {}", i + 1),
                    binding.expr.span,
                    "array size does not match the component",
                ));
                return None;
            }
        };
        for (field, after) in &binding.fields {
            let Value::Record(fields) = &value else {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "a record component needs a record value",
                    binding.expr.span,
                    "not a record",
                ));
                return None;
            };
            let Some((_, v)) = fields.iter().find(|(n, _)| n == field) else {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("the record value has no field `{field}`"),
                    binding.expr.span,
                    "another record",
                ));
                return None;
            };
            value = match select_elements(v, after) {
                Ok(part) => part,
                Err(i) => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("the field `{field}` has too few elements for element {}", i + 1),
                        binding.expr.span,
                        "array size does not match the component",
                    ));
                    return None;
                }
            };
        }
        match value {
            Value::Scalar(e, t) => {
                if !types_compatible(ty, t) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0306",
                        format!(
                            "{} value cannot bind {} variable",
                            with_article(type_name(t)),
                            with_article(type_name(ty))
                        ),
                        binding.expr.span,
                        format!("this is {}", type_name(t)),
                    ));
                    return None;
                }
                Some(e)
            }
            // A String variable holds text known when the model is compiled.
            Value::Str(_) if ty == ScalarType::String => {
                self.string_text_of(&value, "this String binding", binding.expr.span)
            }
            Value::Str(_) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("a String value cannot bind {} variable", with_article(type_name(ty))),
                    binding.expr.span,
                    "this is a String",
                ));
                None
            }
            Value::Array(dims, _, _) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("an array of size {dims:?} cannot bind a scalar"),
                    binding.expr.span,
                    "array value for a scalar",
                ));
                None
            }
            Value::Record(_) | Value::Records(..) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("a record value cannot bind {} variable", with_article(type_name(ty))),
                    binding.expr.span,
                    "a record",
                ));
                None
            }
        }
    }

    /// Notes that the compile-time value of `e` shaped the flat model (a literal reads nothing).
    pub(crate) fn note_structural(&mut self, e: ExprId) {
        if self.model.exprs.literal(e).is_none() {
            self.structural_roots.push(e);
        }
    }

    /// The parameters and constants the structural expressions read, directly or through the
    /// bindings of the parameters they read, sorted (see [`eqm_ir::flat::FlatModel::structural`]).
    pub(crate) fn structural_parameters(&mut self) -> Vec<VarId> {
        let mut seen = vec![false; self.model.variables.len()];
        let mut roots = std::mem::take(&mut self.structural_roots);
        roots.sort_unstable();
        roots.dedup();
        let mut vars = Vec::new();
        let mut stack: Vec<VarId> = Vec::new();
        for root in roots {
            self.model.exprs.vars_in(root, &mut stack);
            while let Some(v) = stack.pop() {
                let Some(s) = seen.get_mut(v.0 as usize).filter(|s| !**s) else {
                    continue;
                };
                *s = true;
                vars.push(v);
                let var = &self.model.variables[v.0 as usize];
                for e in [var.binding, var.attributes.start].into_iter().flatten() {
                    self.model.exprs.vars_in(e, &mut stack);
                }
            }
        }
        vars.sort_unstable();
        vars
    }

    /// Records compile-time values of parameters that can be evaluated, for listings.
    pub(crate) fn evaluate_parameter_values(&mut self) {
        for i in 0..self.model.variables.len() {
            if self.var_kinds[i].is_time_varying() {
                continue;
            }
            if let Some(b) = self.model.variables[i].binding {
                let value = self.consts.eval(&self.model, b);
                self.model.variables[i].value = value;
            }
        }
    }
}

pub(crate) struct VarSpec<'m, 'a> {
    pub(crate) name: String,
    pub(crate) instance: InstanceId,
    pub(crate) ty: ScalarType,
    pub(crate) variability: flat::Variability,
    pub(crate) causality: flat::Causality,
    pub(crate) connection: ast::Connection,
    pub(crate) in_connector: bool,
    pub(crate) is_connector_type: bool,
    pub(crate) modifier: &'m Modifier<'a>,
    pub(crate) description: Option<Arc<str>>,
    pub(crate) span: Span,
}

/// The part of `value` that the array element indices `select` (outermost first) pick, or the
/// index that is out of bounds. A scalar, a String or a record applies to every element, so the
/// indices past an array's dimensions pick nothing more. An array's part is found by its offset,
/// without copying the rows on the way to it.
pub(crate) fn select_elements(value: &Value, select: &[usize]) -> Result<Value, usize> {
    match value {
        Value::Array(dims, elements, ty) if !dims.is_empty() => {
            let depth = select.len().min(dims.len());
            let mut offset = 0;
            for (&i, &n) in select.iter().zip(dims) {
                if i >= n {
                    return Err(i);
                }
                offset = offset * n + i;
            }
            let rest = &dims[depth..];
            let stride: usize = rest.iter().product();
            let part = &elements[offset * stride..(offset + 1) * stride];
            Ok(if rest.is_empty() {
                Value::Scalar(part[0], *ty)
            } else {
                Value::Array(rest.to_vec(), part.to_vec(), *ty)
            })
        }
        Value::Array(..) | Value::Records(..) => match select.split_first() {
            Some((&i, more)) => select_elements(&value.index_first(i).ok_or(i)?, more),
            None => Ok(value.clone()),
        },
        Value::Scalar(..) | Value::Str(_) | Value::Record(_) => Ok(value.clone()),
    }
}

/// Whether an element's annotation says `Evaluate = true` (Modelica's mark of a parameter whose
/// value the tool may use when it translates the model); any other value, or none, is false.
pub(crate) fn evaluate_annotation(annotation: &ast::Annotation) -> bool {
    annotation.modification.arguments.iter().any(|a| {
        a.name.parts.len() == 1
            && a.name.parts[0].name == "Evaluate"
            && a.modification
                .as_ref()
                .and_then(|m| m.binding.as_ref())
                .is_some_and(|e| matches!(e.kind, ast::ExprKind::Bool(true)))
    })
}

/// A type's name after the indefinite article it takes (`a Real`, `an Integer`).
fn with_article(name: &str) -> String {
    let article = if name.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}
