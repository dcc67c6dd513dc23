//! Records as values: a component of a record type read as a whole (`q = p`), record
//! constructors (`Point(x = 1, y = 2)`, `Point(1, 2)`), and the binding of a record component
//! (`Point p = Point(1, 2)`, handed to its fields by `Modifier::bind_fields`).
//!
//! Input: references to record instances and calls named by a record class. Output: a
//! [`Value::Record`] with the fields in declaration order (inherited ones included), whose
//! equations are one per field (`equations`); an array of record values (`{R(1, 2), R(3, 4)}`,
//! or an array of record components read as a whole) is a [`Value::Records`], whose elements
//! bind the elements of an array of record components; a record field that is an array of
//! records is a [`Value::Records`] inside the record. An if-expression between records chooses
//! field by field (`select_records`). Records in functions (also arrays of
//! them) are locals with a slot per scalar field (`functions`). It deliberately does not handle
//! records in `connect` beyond their fields: that remains a diagnostic.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::{ClassLayout, ElementDecl, Member};
use crate::modifier::Scope;
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::InstanceId;
use eqm_syntax::ast;
use std::rc::Rc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether `class` is a record, also through short class definitions (`connector
    /// ComplexOutput = output Complex;` makes a connector of a record type).
    pub(crate) fn is_record(&self, class: ClassId) -> bool {
        self.table
            .short_definition_chain(class)
            .any(|link| matches!(link, crate::resolve::TypeRef::Class(c) if self.table.get(c).def.kind.is_record()))
    }

    /// The value of a record instance: each field's value, nested records as records.
    pub(crate) fn record_value(&mut self, instance: InstanceId, at: &ast::ComponentRef) -> Option<Value> {
        let layout = self.instances[instance.0 as usize].layout.clone();
        let mut fields = Vec::with_capacity(layout.elements.len());
        for (k, element) in layout.elements.iter().enumerate() {
            let name = element.decl.name.name.clone();
            let value = match self.ensure_member_at(instance, k) {
                Member::Var(v) => Value::Scalar(self.model.exprs.var(v), self.model.var(v).ty),
                Member::VarArray(array) => {
                    // An empty array carries no scalar, so its element type decides nothing.
                    let ty = array
                        .elements
                        .first()
                        .map_or(eqm_ir::flat::ScalarType::Real, |&v| self.model.var(v).ty);
                    let elements = array.elements.iter().map(|&v| self.model.exprs.var(v)).collect();
                    Value::Array(array.dims.to_vec(), elements, ty)
                }
                Member::Inst(i) if self.is_record(self.instances[i.0 as usize].class) => self.record_value(i, at)?,
                // An array of records as a field (`record Pair R rs[2]; end Pair;`).
                // A record's components of a class type are records, so an
                // empty array of them is an empty array of records: it carries no scalar.
                Member::InstArray(array)
                    if array
                        .elements
                        .first()
                        .is_none_or(|i| self.is_record(self.instances[i.0 as usize].class)) =>
                {
                    let mut records = Vec::with_capacity(array.elements.len());
                    for &i in array.elements.iter() {
                        records.push(self.record_value(i, at)?);
                    }
                    Value::Records(array.dims.to_vec(), records.into())
                }
                _ => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        format!(
                            "the field `{name}` of `{}` cannot be used in a record value",
                            eqm_syntax::pretty::print_ref(at)
                        ),
                        at.span,
                        "not supported",
                    ));
                    return None;
                }
            };
            fields.push((name, value));
        }
        let value = Value::Record(Rc::new(fields));
        self.remember_record_class(&value, self.instances[instance.0 as usize].class);
        Some(value)
    }

    /// `{R(1, 2), R(3, 4)}`: stacks record values (or arrays of them, all of one size) along a
    /// new first dimension. Every element must have the same fields.
    pub(crate) fn record_array(&mut self, values: Vec<Value>, e: &ast::Expr) -> Option<Value> {
        let Some(first) = values.first() else {
            return Some(Value::Records(vec![0], Rc::from([])));
        };
        let inner = first.dims().to_vec();
        let field_names = |v: &Value| -> Option<Vec<String>> {
            let first = match v {
                Value::Record(_) => v,
                Value::Records(_, elements) => elements.first()?,
                _ => return None,
            };
            let Value::Record(fields) = first else { return None };
            Some(fields.iter().map(|(n, _)| n.clone()).collect())
        };
        let names = field_names(first);
        let mut elements = Vec::new();
        for v in &values {
            if names.is_none() || field_names(v) != names || v.dims() != inner.as_slice() {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "the elements of an array of records must be records with the same fields, of one size",
                    e.span,
                    "elements must agree",
                ));
                return None;
            }
            match v {
                Value::Records(_, more) => elements.extend(more.iter().cloned()),
                _ => elements.push(v.clone()),
            }
        }
        let mut dims = vec![values.len()];
        dims.extend(inner);
        Some(Value::Records(dims, elements.into()))
    }

    /// The record class a call names, if it names one (a record constructor).
    pub(crate) fn record_class(&self, function: &ast::ComponentRef, scope: Scope) -> Option<ClassId> {
        self.class_named(function, scope).filter(|&c| self.is_record(c))
    }

    /// `R(a, b, field = c)`: the record's fields from the arguments, positional in declaration
    /// order, then by name, then from the fields' own bindings.
    pub(crate) fn record_constructor(
        &mut self,
        e: &'a ast::Expr,
        class: ClassId,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let layout = self.layout(class);
        let record = self.table.get(class).full_name.clone();
        if args.positional.len() > layout.elements.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{record}` has {} field(s), found {} positional argument(s)",
                    layout.elements.len(),
                    args.positional.len()
                ),
                args.span,
                "too many arguments",
            ));
            return None;
        }
        let mut given: Vec<Option<&'a ast::Expr>> = vec![None; layout.elements.len()];
        for (slot, a) in given.iter_mut().zip(&args.positional) {
            *slot = Some(a);
        }
        for (name, a) in &args.named {
            match layout.elements.iter().position(|el| el.decl.name.name == name.name) {
                Some(k) if given[k].is_none() => given[k] = Some(a),
                Some(_) => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0309",
                        format!("field `{}` of `{record}` is given twice", name.name),
                        name.span,
                        "given twice",
                    ));
                    return None;
                }
                None => {
                    let mut d = Diagnostic::error(
                        "E0309",
                        format!("`{record}` has no field `{}`", name.name),
                        name.span,
                        "no such field",
                    );
                    let names = layout.elements.iter().map(|el| el.decl.name.name.as_str());
                    if let Some(s) = eqm_diag::did_you_mean(&name.name, names) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    }
                    self.diagnostics.push(d);
                    return None;
                }
            }
        }
        let mut values: Vec<Option<Value>> = Vec::with_capacity(given.len());
        let mut defaults = Vec::new();
        for (k, (element, arg)) in layout.elements.iter().zip(given).enumerate() {
            match arg {
                Some(a) => values.push(Some(self.eval(a, scope, loops)?)),
                None => match self.field_default(element) {
                    Some((default, default_scope)) => {
                        values.push(None);
                        defaults.push((k, default, default_scope));
                    }
                    None => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0309",
                            format!("missing field `{}` of `{record}`", element.decl.name.name),
                            e.span,
                            "field missing",
                        ));
                        return None;
                    }
                },
            }
        }
        self.field_defaults(&layout, &mut values, defaults)?;
        let fields = layout
            .elements
            .iter()
            .zip(values)
            .map(|(element, value)| Some((element.decl.name.name.clone(), value?)))
            .collect::<Option<Vec<_>>>()?;
        let value = Value::Record(Rc::new(fields));
        self.remember_record_class(&value, class);
        Some(value)
    }

    /// Evaluates the defaults of the fields a constructor call does not give (`(field, default,
    /// scope)`), each with the fields computed before it bound to their values in this call:
    /// the constructor's inputs are its fields (MLS 12.6), so `PlasticNdFeB()`, whose `extends`
    /// clause gives `H_cBRef = 400000`, has `final H_cB = H_cBRef*(...)` of that value, not of
    /// the base's declared one. A default is evaluated after the fields it names; defaults
    /// that name each other are evaluated in declaration order.
    fn field_defaults(
        &mut self,
        layout: &ClassLayout<'a>,
        values: &mut [Option<Value>],
        mut defaults: Vec<(usize, &'a ast::Expr, Scope)>,
    ) -> Option<()> {
        let field_index = |name: &str| layout.elements.iter().position(|el| el.decl.name.name == name);
        while !defaults.is_empty() {
            let ready = defaults
                .iter()
                .position(|(_, default, _)| {
                    let mut waits = false;
                    eqm_syntax::visit::refs_in_expr(default, &mut |c| {
                        waits |= c.parts.len() == 1
                            && field_index(&c.parts[0].name.name).is_some_and(|j| values[j].is_none());
                    });
                    !waits
                })
                .unwrap_or(0);
            let (k, default, default_scope) = defaults.remove(ready);
            let outer_iterators = std::mem::take(&mut self.context.iterators);
            for (element, value) in layout.elements.iter().zip(values.iter()) {
                if let Some(value) = value {
                    self.context.iterators.push(crate::eval_context::BoundIterator {
                        name: element.decl.name.name.clone(),
                        value: value.clone(),
                        loops_below: 0,
                    });
                }
            }
            let value = self.eval(default, default_scope, &mut Vec::new());
            self.context.iterators = outer_iterators;
            values[k] = Some(value?);
        }
        Some(())
    }

    /// The default of a record field that a constructor call does not give, with the scope it is
    /// evaluated in: the binding an `extends` clause gives it (`record M extends Base(mu = 1210);
    /// end M;` makes `M()` have mu = 1210), else the declaration's own. Modelica's precedence
    /// puts the extends clause's modifier above the declaration.
    fn field_default(&self, element: &ElementDecl<'a>) -> Option<(&'a ast::Expr, Scope)> {
        let (from_extends, _) = element.extends_modifier.child(&element.decl.name.name);
        if let Some(binding) = from_extends
            .binding
            .filter(|b| b.select.is_empty() && b.fields.is_empty())
        {
            return Some((binding.expr, binding.scope));
        }
        let own = element.decl.modification.as_ref()?.binding.as_ref()?;
        Some((
            own,
            Scope {
                instance: None,
                class: element.class,
            },
        ))
    }

    /// `if c then t else f` where the branches are records or arrays of records: the branch
    /// itself when `c` is known at compile time, else field by field. Branches of different
    /// record types or sizes are an error.
    pub(crate) fn select_records(&mut self, e: &ast::Expr, c: ExprId, t: Value, f: Value) -> Option<Value> {
        // The combined value is built even for a known condition, so that branches of
        // different types are an error either way.
        let combined = crate::value::select_records(&mut self.model.exprs, c, &t, &f);
        let class = self
            .known_operator_record(&t)
            .or_else(|| self.known_operator_record(&f));
        let chosen = match (combined, self.model.exprs.literal(c)) {
            (Some(_), Some(known)) => Some(if known != 0.0 { t } else { f }),
            (combined, _) => combined,
        };
        if let (Some(value), Some(class)) = (&chosen, class) {
            self.remember_record_class(value, class);
        }
        if chosen.is_none() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "the branches of this if-expression must be records of one type (and arrays of them of one size)",
                e.span,
                "branches must agree",
            ));
        }
        chosen
    }
}
