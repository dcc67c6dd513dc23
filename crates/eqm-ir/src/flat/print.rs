//! The text of a flat model: `eqm flatten`'s listing of variables with their attributes and of
//! every equation with its origin, and expressions and statements with full variable names.
//!
//! Input: a [`FlatModel`]. Output: text, deterministic (every order comes from the model's
//! vectors). It changes nothing in the model.

use super::*;
use crate::expr::Names;
use std::fmt::Write as _;

impl FlatModel {
    /// Prints an expression with full variable names.
    pub fn expr_text(&self, e: ExprId) -> String {
        self.exprs.display_with(
            e,
            &ModelNames {
                model: self,
                function: None,
            },
        )
    }

    fn statement_text(&self, out: &mut String, s: &Statement, indent: usize, function: Option<&Function>) {
        let names = ModelNames { model: self, function };
        let text = |e: ExprId| self.exprs.display_with(e, &names);
        let pad = "  ".repeat(indent);
        match s {
            Statement::Assign { target, value, .. } => {
                let target = match target {
                    Place::Local(k) => names.local(*k),
                    Place::Var(v) => self.var(*v).name.clone(),
                };
                let _ = writeln!(out, "{pad}{target} := {};", text(*value));
            }
            Statement::If {
                branches, else_branch, ..
            } => {
                for (i, (c, body)) in branches.iter().enumerate() {
                    let _ = writeln!(out, "{pad}{} {} then", if i == 0 { "if" } else { "elseif" }, text(*c));
                    for s in body {
                        self.statement_text(out, s, indent + 1, function);
                    }
                }
                if !else_branch.is_empty() {
                    let _ = writeln!(out, "{pad}else");
                    for s in else_branch {
                        self.statement_text(out, s, indent + 1, function);
                    }
                }
                let _ = writeln!(out, "{pad}end if;");
            }
            Statement::Unrolled { iterations, .. } => {
                let _ = writeln!(
                    out,
                    "{pad}loop  // unrolled for-loop, {} iteration(s)",
                    iterations.len()
                );
                for (k, body) in iterations.iter().enumerate() {
                    let _ = writeln!(out, "{pad}  // iteration {}", k + 1);
                    for s in body {
                        self.statement_text(out, s, indent + 1, function);
                    }
                }
                let _ = writeln!(out, "{pad}end loop;");
            }
            Statement::For {
                index,
                start,
                step,
                stop,
                body,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "{pad}for {} in {}:{}:{} loop",
                    names.local(*index),
                    text(*start),
                    text(*step),
                    text(*stop)
                );
                for s in body {
                    self.statement_text(out, s, indent + 1, function);
                }
                let _ = writeln!(out, "{pad}end for;");
            }
            Statement::While { condition, body, .. } => {
                let _ = writeln!(out, "{pad}while {} loop", text(*condition));
                for s in body {
                    self.statement_text(out, s, indent + 1, function);
                }
                let _ = writeln!(out, "{pad}end while;");
            }
            Statement::Assert { condition, message, .. } => {
                let _ = writeln!(out, "{pad}assert({}, {:?});", text(*condition), message.written());
            }
            Statement::Terminate { message, .. } => {
                let _ = writeln!(out, "{pad}terminate({:?});", message.written());
            }
            Statement::Print { message, .. } => {
                let _ = writeln!(out, "{pad}print({:?});", message.written());
            }
            Statement::Call { function: f, args, .. } => {
                let name = self.functions.get(f.0 as usize).map_or("?", |g| g.name.as_str());
                let args: Vec<String> = args.iter().map(|a| text(*a)).collect();
                let _ = writeln!(out, "{pad}{name}({});", args.join(", "));
            }
            Statement::Break { .. } => {
                let _ = writeln!(out, "{pad}break;");
            }
            Statement::Return { .. } => {
                let _ = writeln!(out, "{pad}return;");
            }
        }
    }

    /// One action of a when-clause's branch, as `print` shows it.
    fn print_action(&self, out: &mut String, a: &WhenAction) {
        match a {
            WhenAction::Assign { var, value, .. } => {
                let _ = writeln!(out, "    {} = {};", self.var(*var).name, self.expr_text(*value));
            }
            WhenAction::Reinit { var, value, .. } => {
                let _ = writeln!(out, "    reinit({}, {});", self.var(*var).name, self.expr_text(*value));
            }
            WhenAction::Assert { condition, message, .. } => {
                let _ = writeln!(
                    out,
                    "    assert({}, {:?});",
                    self.expr_text(*condition),
                    message.written()
                );
            }
            WhenAction::Terminate { message, .. } | WhenAction::Print { message, .. } => {
                let guard = a.guard().map(|g| format!("if {} then ", self.expr_text(g)));
                let _ = writeln!(
                    out,
                    "    {}{}({:?});",
                    guard.unwrap_or_default(),
                    effect_name(a),
                    message.written()
                );
            }
            WhenAction::Call { call, guard, .. } => {
                let guard = guard.map(|g| format!("if {} then ", self.expr_text(g)));
                let _ = writeln!(out, "    {}{};", guard.unwrap_or_default(), self.expr_text(*call));
            }
        }
    }

    fn print_function(&self, out: &mut String, f: &Function) {
        let _ = writeln!(out, "function {}", f.name);
        for (k, slot) in f.slots.iter().enumerate() {
            let k = k as u32;
            let kind = if k < f.inputs {
                "input "
            } else if k < f.inputs + f.outputs {
                "output "
            } else {
                "protected "
            };
            let _ = write!(out, "  {kind}{} {}", type_keyword(slot.ty), slot.name);
            if let Some(d) = slot.default
                && k < f.inputs
            {
                let _ = write!(
                    out,
                    " = {}",
                    self.exprs.display_with(
                        d,
                        &ModelNames {
                            model: self,
                            function: Some(f)
                        }
                    )
                );
            }
            out.push_str(";\n");
        }
        out.push_str("algorithm\n");
        for s in &f.body {
            self.statement_text(out, s, 1, Some(f));
        }
        let _ = writeln!(out, "end {};", f.name);
    }

    /// A readable, deterministic listing: variables with kind and attributes, then each
    /// equation tagged with its origin. This is the output of `eqm flatten`.
    pub fn print(&self) -> String {
        let mut out = String::new();
        for f in &self.functions {
            self.print_function(&mut out, f);
            out.push('\n');
        }
        let unknowns = self.unknowns().count();
        let by_algorithms = self.algorithm_equation_count();
        let _ = writeln!(
            out,
            "model {} ({} variables, {} unknowns, {} equations{})",
            self.name,
            self.variables.len(),
            unknowns,
            self.equations.len(),
            if by_algorithms > 0 {
                format!(", {by_algorithms} assigned by algorithms")
            } else {
                String::new()
            }
        );
        out.push_str("variables\n");
        for v in &self.variables {
            out.push_str("  ");
            out.push_str(match v.variability {
                Variability::Constant => "constant ",
                Variability::Parameter => "parameter ",
                Variability::Discrete => "discrete ",
                Variability::Continuous => "",
            });
            out.push_str(match v.causality {
                Causality::Input => "input ",
                Causality::Output => "output ",
                Causality::None => "",
            });
            out.push_str(match v.role {
                ConnectorRole::Flow => "flow ",
                ConnectorRole::Stream => "stream ",
                ConnectorRole::Potential => "potential ",
                ConnectorRole::None => "",
            });
            out.push_str(type_keyword(v.ty));
            let _ = write!(out, " {}", v.name);
            let mut attrs: Vec<String> = Vec::new();
            let a = &v.attributes;
            for (label, value) in [
                ("start", a.start),
                ("min", a.min),
                ("max", a.max),
                ("nominal", a.nominal),
            ] {
                if let Some(e) = value {
                    attrs.push(format!("{label} = {}", self.expr_text(e)));
                }
            }
            if let Some(f) = a.fixed {
                attrs.push(format!("fixed = {f}"));
            }
            if let Some(u) = &a.unit {
                attrs.push(format!("unit = {u:?}"));
            }
            if let Some(s) = a.state_select {
                attrs.push(format!("stateSelect = {s:?}"));
            }
            if !attrs.is_empty() {
                let _ = write!(out, "({})", attrs.join(", "));
            }
            if let Some(b) = v.binding {
                let _ = write!(out, " = {}", self.expr_text(b));
                if let Some(value) = v.value
                    && self.exprs.literal(b).is_none()
                {
                    let mut s = String::new();
                    eqm_diag::text::real(&mut s, value);
                    let _ = write!(out, " (= {s})");
                }
            }
            if let Some(d) = &v.description {
                let _ = write!(out, " {d:?}");
            }
            out.push_str(";\n");
        }
        self.print_equations(&mut out, "equation", &self.equations);
        if !self.initial_equations.is_empty() {
            self.print_equations(&mut out, "initial equation", &self.initial_equations);
        }
        if !self.invariants.is_empty() {
            self.print_equations(&mut out, "invariant", &self.invariants);
        }
        for w in &self.whens {
            for (i, b) in w.branches.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  {} {} then  // {}",
                    if i == 0 { "when" } else { "elsewhen" },
                    self.expr_text(b.condition),
                    self.instance_label(w.instance)
                );
                for a in &b.actions {
                    self.print_action(&mut out, a);
                }
            }
            out.push_str("  end when;\n");
        }
        for a in &self.algorithms {
            let _ = writeln!(
                out,
                "{}algorithm  // {}",
                if a.initial { "initial " } else { "" },
                self.instance_label(a.instance)
            );
            for s in &a.statements {
                self.statement_text(&mut out, s, 1, None);
            }
        }
        for a in &self.assertions {
            let _ = writeln!(
                out,
                "  assert({}, {:?}{});  // {}",
                self.expr_text(a.condition),
                a.message.written(),
                match a.level {
                    super::AssertionLevel::Error => "",
                    super::AssertionLevel::Warning => ", AssertionLevel.warning",
                },
                self.instance_label(a.instance)
            );
        }
        let _ = writeln!(out, "end {};", self.name);
        out
    }

    fn print_equations(&self, out: &mut String, keyword: &str, equations: &[Equation]) {
        let _ = writeln!(out, "{keyword}");
        for (i, e) in equations.iter().enumerate() {
            let _ = write!(out, "  {} = {};", self.expr_text(e.lhs), self.expr_text(e.rhs));
            let _ = write!(out, "  // #{} {}", i + 1, self.origin_label(&e.origin));
            if let Some(a) = &e.array {
                let index: Vec<String> = a.index.iter().map(|i| i.to_string()).collect();
                let _ = write!(out, " [{}]", index.join(","));
            }
            out.push('\n');
        }
    }
}

fn type_keyword(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Real => "Real",
        ScalarType::Integer => "Integer",
        ScalarType::Boolean => "Boolean",
        ScalarType::String => "String",
    }
}

/// Names for printing: model variables by full name, functions by class name, and the slots of
/// the function being printed by their declared names.
struct ModelNames<'m> {
    model: &'m FlatModel,
    function: Option<&'m Function>,
}

impl Names for ModelNames<'_> {
    fn var(&self, v: VarId) -> String {
        self.model.var(v).name.clone()
    }
    fn local(&self, slot: u32) -> String {
        match self.function.and_then(|f| f.slots.get(slot as usize)) {
            Some(s) => s.name.clone(),
            None => format!("local{slot}"),
        }
    }
    fn function(&self, f: FuncId) -> String {
        match self.model.functions.get(f.0 as usize) {
            Some(function) => function.name.clone(),
            None => format!("function{}", f.0),
        }
    }
}

/// The name of the call a `terminate` or `print` action was written as.
fn effect_name(action: &WhenAction) -> &'static str {
    match action {
        WhenAction::Print { .. } => "print",
        _ => "terminate",
    }
}
