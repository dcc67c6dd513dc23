//! Overloaded operators of operator records: `a + b`, `a - b`, `-a`, `a*b`, `a/b`, `a^b`,
//! `a == b`, `a <> b` (and the relations and logical operators an operator record defines,
//! `not a` included) written on records, and `sum` and `String` of them.
//!
//! Input: an operator and its evaluated operands, at least one of them a record or an array of
//! records. Output: the value of the call of the one function of the operator that Modelica's
//! rule chooses: the functions of the operator in the operand types' operator records whose
//! inputs the operands match (an Integer also where a Real is expected); when none does, those
//! matched after one operand is converted by its record's constructor of one argument
//! (`2*c` is `Complex(2)*c`); when still none does and an operand is an array, the operator
//! applied element by element where Modelica defines it so (`+` and `-` of two arrays of one
//! size, `*` of an array and a scalar, `/` of an array by a scalar). No match, or more than one
//! at the step that decides, is E0309. It deliberately does not evaluate the operator's
//! function: the call is an ordinary call of it, inlined or not by the later stages.
//!
//! The operator record of a value comes from where the value was made (a record instance read
//! whole, a function's result, see `eval_context`), or else from the declaration of a
//! function's local variable it names.

use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::operators::{ArgType, type_of, valid_match};
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_syntax::ast;

/// The name of the operator class that overloads a binary operator.
fn binary_operator_name(op: ast::BinaryOp) -> &'static str {
    use ast::BinaryOp as B;
    match op {
        B::Add | B::ElemAdd => "'+'",
        B::Sub | B::ElemSub => "'-'",
        B::Mul | B::ElemMul => "'*'",
        B::Div | B::ElemDiv => "'/'",
        B::Pow | B::ElemPow => "'^'",
        B::Eq => "'=='",
        B::Ne => "'<>'",
        B::Lt => "'<'",
        B::Le => "'<='",
        B::Gt => "'>'",
        B::Ge => "'>='",
        B::And => "'and'",
        B::Or => "'or'",
    }
}

/// A function chosen for an operator, with the operand the constructor converts first, if any.
#[derive(Clone, Copy, PartialEq)]
struct Choice {
    function: ClassId,
    conversion: Option<(usize, ClassId)>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Notes the operator record class of a record value made as a value of `class`.
    pub(crate) fn remember_record_class(&mut self, v: &Value, class: ClassId) {
        let Some(record) = self.operator_record(class) else {
            return;
        };
        match v {
            Value::Record(fields) => self.context.operator_records.remember(fields, record),
            Value::Records(_, elements) => {
                for element in elements.iter() {
                    if let Value::Record(fields) = element {
                        self.context.operator_records.remember(fields, record);
                    }
                }
            }
            _ => {}
        }
    }

    /// Notes the operator record class of the first output of a call of function `f`.
    pub(crate) fn remember_output_record(&mut self, f: ClassId, outputs: &[Value]) {
        let Some(first) = outputs.first().filter(|v| v.is_record()) else {
            return;
        };
        let declared = self
            .function_components(f)
            .find(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Output);
        if let Some((clause, _, part)) = declared
            && let Ok(TypeRef::Class(class)) = self.table.lookup(part, &clause.type_name)
        {
            self.remember_record_class(first, class);
        }
    }

    /// The operator record of a record operand `v` written as `at`, `None` when it is a record
    /// of no operator record or its type cannot be told.
    fn operand_record(&mut self, v: &Value, at: &ast::Expr, scope: Scope) -> Option<ClassId> {
        if let Some(class) = self.known_operator_record(v) {
            return Some(class);
        }
        self.declared_record(at, scope)
    }

    /// The operator record a record value (or the first element of an array of them) was made
    /// as, if that is known.
    pub(crate) fn known_operator_record(&self, v: &Value) -> Option<ClassId> {
        let fields = match v {
            Value::Record(fields) => fields,
            Value::Records(_, elements) => match elements.first() {
                Some(Value::Record(fields)) => fields,
                _ => return None,
            },
            _ => return None,
        };
        self.context.operator_records.class_of(fields)
    }

    /// The operator record a function's local variable (or a field of one) is declared with.
    fn declared_record(&mut self, at: &ast::Expr, scope: Scope) -> Option<ClassId> {
        let c = match &at.kind {
            ast::ExprKind::Ref(c) => c,
            ast::ExprKind::Index { base, .. } => return self.declared_record(base, scope),
            _ => return None,
        };
        if !self.is_local(scope, &c.parts[0].name.name) {
            return None;
        }
        let (clause, _, part) = self
            .function_components(scope.class)
            .find(|(_, decl, _)| decl.name.name == c.parts[0].name.name)?;
        let Ok(TypeRef::Class(mut class)) = self.table.lookup(part, &clause.type_name) else {
            return None;
        };
        for p in &c.parts[1..] {
            let layout = self.layout(class);
            let element = layout.elements.iter().find(|el| el.decl.name.name == p.name.name)?;
            let Ok(TypeRef::Class(field)) = self.table.lookup(element.class, &element.clause.type_name) else {
                return None;
            };
            class = field;
        }
        self.operator_record(class)
    }

    /// The operator record of a record operand, or E0309 when it has none.
    fn operand_record_or_report(&mut self, v: &Value, at: &ast::Expr, scope: Scope, op: &str) -> Option<ClassId> {
        if let Some(class) = self.operand_record(v, at, scope) {
            return Some(class);
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0309",
                format!("the operator {op} is applied to a record that is not of an operator record"),
                at.span,
                "a record without operators",
            )
            .with_help(
                "only an `operator record` defines operators; compute with the fields, or, for a record built \
                 where its operator record is not known, assign it to a variable of that type first",
            ),
        );
        None
    }

    /// `a op b` with a record operand (see the module's documentation).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn overloaded_binary(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        a: Value,
        b: Value,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        scope: Scope,
    ) -> Option<Value> {
        let name = binary_operator_name(op);
        let mut owners = [None, None];
        for (owner, (v, at)) in owners.iter_mut().zip([(&a, lhs), (&b, rhs)]) {
            if v.is_record() {
                *owner = Some(self.operand_record_or_report(v, at, scope, name)?);
            }
        }
        let mut records: Vec<ClassId> = owners.iter().flatten().copied().collect();
        records.dedup();
        let types = [type_of(&a), type_of(&b)];
        if let Some(choice) = self.choose_operator(&owners, name, &types, e.span)? {
            return self.apply_choice(choice, vec![a, b], e.span);
        }
        if !a.dims().is_empty() || !b.dims().is_empty() {
            return self.elementwise_operator(e, op, a, b, (lhs, rhs), &records, scope);
        }
        self.no_operator(&records, name, &types, e.span)
    }

    /// `-a` or `not a` with `a` a record or an array of records: the one-input function of the
    /// operator `name` (`'-'`, `'not'`) that matches, element by element for an array when none
    /// takes the array.
    pub(crate) fn overloaded_unary(
        &mut self,
        e: &ast::Expr,
        name: &str,
        v: Value,
        at: &ast::Expr,
        scope: Scope,
    ) -> Option<Value> {
        let record = self.operand_record_or_report(&v, at, scope, name)?;
        let types = [type_of(&v)];
        if let Some(choice) = self.choose_operator(&[Some(record)], name, &types, e.span)? {
            return self.apply_choice(choice, vec![v], e.span);
        }
        if let Value::Records(dims, elements) = &v {
            let mut results = Vec::with_capacity(elements.len());
            for element in elements.iter() {
                results.push(self.overloaded_unary(e, name, element.clone(), at, scope)?);
            }
            return collect_elements(dims.clone(), results, e, self);
        }
        self.no_operator(&[record], name, &types, e.span)
    }

    /// The function of operator `name` that operands of `types` select, each operand with its
    /// operator record (`None` for one that is no record): `Some(None)` when none does, `None`
    /// after reporting more than one.
    ///
    /// First the functions of the operands' operator records that the operands match; when
    /// none does (and there are two operands), the functions of one operand's operator record
    /// that match once the other operand is converted by a constructor of the operator record
    /// the function's input expects (one other than the operand's own).
    fn choose_operator(
        &mut self,
        owners: &[Option<ClassId>],
        name: &str,
        types: &[ArgType],
        span: Span,
    ) -> Option<Option<Choice>> {
        let mut functions_of = Vec::with_capacity(owners.len());
        let mut union = Vec::new();
        for owner in owners {
            let functions = owner
                .and_then(|record| self.operator_functions(record, name))
                .unwrap_or_default();
            for &f in &functions {
                if !union.contains(&f) {
                    union.push(f);
                }
            }
            functions_of.push(functions);
        }
        let mut exact = Vec::new();
        for &f in &union {
            if let Some(inputs) = self.input_types(f)
                && valid_match(&inputs, types, &[])
            {
                exact.push(Choice {
                    function: f,
                    conversion: None,
                });
            }
        }
        let mut converted = Vec::new();
        if exact.is_empty() && types.len() == 2 {
            for k in 0..2 {
                for &f in &functions_of[1 - k] {
                    self.conversions(f, k, owners[k], types, &mut converted);
                }
            }
        }
        let deciding = if exact.is_empty() { converted } else { exact };
        match deciding.as_slice() {
            [] => Some(None),
            [choice] => Some(Some(*choice)),
            several => {
                self.report_ambiguous(several, name, types, span);
                None
            }
        }
    }

    /// The ways function `f` matches once operand `k` (of operator record `own`, if any) is
    /// converted by a constructor of the operator record of `f`'s input `k`.
    fn conversions(&mut self, f: ClassId, k: usize, own: Option<ClassId>, types: &[ArgType], out: &mut Vec<Choice>) {
        let Some(inputs) = self.typed_inputs(f) else { return };
        let Some((_, input_type @ ArgType::Record(_, 0), _, Some(input_record))) = inputs.get(k).cloned() else {
            return;
        };
        let target = self.operator_record(input_record);
        if target.is_none() || target == own {
            return;
        }
        let plain: Vec<_> = inputs.iter().map(|(n, ty, d, _)| (*n, ty.clone(), *d)).collect();
        let mut after = types.to_vec();
        after[k] = input_type;
        if !valid_match(&plain, &after, &[]) {
            return;
        }
        for constructor in self.converting_constructors(input_record, &types[k]) {
            out.push(Choice {
                function: f,
                conversion: Some((k, constructor)),
            });
        }
    }

    /// Reports that several functions match an operator's operands.
    fn report_ambiguous(&mut self, several: &[Choice], name: &str, types: &[ArgType], span: Span) {
        let names: Vec<String> = several
            .iter()
            .map(|c| match c.conversion {
                None => format!("`{}`", self.table.get(c.function).full_name),
                Some((k, ctor)) => format!(
                    "`{}` (operand {} converted by `{}`)",
                    self.table.get(c.function).full_name,
                    k + 1,
                    self.table.get(ctor).full_name
                ),
            })
            .collect();
        let described: Vec<String> = types.iter().map(ArgType::describe).collect();
        self.diagnostics.push(
            Diagnostic::error(
                "E0309",
                format!(
                    "the operator {name} on ({}) matches several functions: {}",
                    described.join(", "),
                    names.join(", ")
                ),
                span,
                "ambiguous operator",
            )
            .with_help("call the intended function by its name, or convert an operand explicitly"),
        );
    }

    /// Reports that no function of operator `name` takes operands of `types`.
    fn no_operator(&mut self, records: &[ClassId], name: &str, types: &[ArgType], span: Span) -> Option<Value> {
        let described: Vec<String> = types.iter().map(ArgType::describe).collect();
        let owners: Vec<String> = records
            .iter()
            .map(|&r| format!("`{}`", self.table.get(r).full_name))
            .collect();
        self.diagnostics.push(
            Diagnostic::error(
                "E0309",
                format!(
                    "no function of the operator {name} of {} takes ({})",
                    owners.join(" or "),
                    described.join(", ")
                ),
                span,
                "no matching operator",
            )
            .with_help(format!(
                "the functions of `{name}` in the operator record are the operands it takes"
            )),
        );
        None
    }

    /// Calls the chosen function with `operands`, converting one first if the choice says so.
    fn apply_choice(&mut self, choice: Choice, mut operands: Vec<Value>, span: Span) -> Option<Value> {
        if let Some((k, constructor)) = choice.conversion {
            let plain = std::mem::replace(&mut operands[k], Value::Str(Default::default()));
            operands[k] = self.call_with_values(constructor, vec![plain], span)?;
        }
        self.call_with_values(choice.function, operands, span)
    }

    /// The value of a call of function `f` with `values` for its first inputs (the others take
    /// their defaults).
    pub(crate) fn call_with_values(&mut self, f: ClassId, values: Vec<Value>, span: Span) -> Option<Value> {
        self.call_with_given(f, values.into_iter().map(Some).collect(), span)
    }

    /// The value of a call of function `f` with the inputs `values` gives (by position; the
    /// others take their defaults).
    fn call_with_given(&mut self, f: ClassId, values: Vec<Option<Value>>, span: Span) -> Option<Value> {
        let declared = self.input_declarations(f);
        let mut given: Vec<Option<(Value, Span)>> = vec![None; declared.len()];
        for (slot, v) in given.iter_mut().zip(values) {
            *slot = v.map(|v| (v, span));
        }
        let passed = vec![None; declared.len()];
        let name = self.table.get(f).full_name.clone();
        let (_, outputs) = self.instance_call(f, &name, &declared, given, &passed, (None, span))?;
        self.remember_output_record(f, &outputs);
        let Some(first) = outputs.into_iter().next() else {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("`{name}` has no output, so it gives the operator no value"),
                span,
                "no value",
            ));
            return None;
        };
        Some(first)
    }

    /// An operator on arrays, derived from the scalar operator as Modelica does for arrays of
    /// numbers: `+` and `-` (and the element-wise operators) of two arrays of one size, `*` of
    /// an array and a scalar, `/` of an array by a scalar, each element by element, and the
    /// matrix products matrix*vector and matrix*matrix (vector*vector and vector*matrix are
    /// left undefined for records).
    #[allow(clippy::too_many_arguments)]
    fn elementwise_operator(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        a: Value,
        b: Value,
        (lhs, rhs): (&ast::Expr, &ast::Expr),
        records: &[ClassId],
        scope: Scope,
    ) -> Option<Value> {
        use ast::BinaryOp as B;
        let (scalar_a, scalar_b) = (a.dims().is_empty(), b.dims().is_empty());
        let same_size = !scalar_a && !scalar_b && a.dims() == b.dims();
        if op == B::Mul && a.dims().len() == 2 && matches!(b.dims().len(), 1 | 2) && a.dims()[1] == b.dims()[0] {
            return self.record_matrix_product(e, &a, &b, (lhs, rhs), records, scope);
        }
        let allowed = match op {
            B::Add | B::Sub => same_size,
            B::ElemAdd | B::ElemSub | B::ElemMul | B::ElemDiv | B::ElemPow => same_size || scalar_a || scalar_b,
            B::Mul => scalar_a || scalar_b,
            B::Div => scalar_b,
            _ => false,
        };
        if !allowed {
            let types = [type_of(&a), type_of(&b)];
            return self.no_operator(records, binary_operator_name(op), &types, e.span);
        }
        let dims = if scalar_a { b.dims().to_vec() } else { a.dims().to_vec() };
        let count: usize = dims.iter().product();
        let mut results = Vec::with_capacity(count);
        for k in 0..count {
            let x = if scalar_a { a.clone() } else { element(&a, k) };
            let y = if scalar_b { b.clone() } else { element(&b, k) };
            results.push(self.overloaded_binary(e, op, x, y, lhs, rhs, scope)?);
        }
        collect_elements(dims, results, e, self)
    }

    /// matrix*vector and matrix*matrix of arrays with records: each element the sum of the
    /// products along the inner dimension, added left to right; the zero of `'0'` when the inner
    /// dimension is empty.
    fn record_matrix_product(
        &mut self,
        e: &ast::Expr,
        a: &Value,
        b: &Value,
        (lhs, rhs): (&ast::Expr, &ast::Expr),
        records: &[ClassId],
        scope: Scope,
    ) -> Option<Value> {
        let (rows, inner) = (a.dims()[0], a.dims()[1]);
        let columns = if b.dims().len() == 2 { b.dims()[1] } else { 1 };
        let mut results = Vec::with_capacity(rows * columns);
        for i in 0..rows {
            for j in 0..columns {
                let mut total: Option<Value> = None;
                for k in 0..inner {
                    let x = element(a, i * inner + k);
                    let y = element(b, k * columns + j);
                    let product = self.overloaded_binary(e, ast::BinaryOp::Mul, x, y, lhs, rhs, scope)?;
                    total = Some(match total {
                        None => product,
                        Some(t) => self.overloaded_binary(e, ast::BinaryOp::Add, t, product, lhs, rhs, scope)?,
                    });
                }
                results.push(match total {
                    Some(t) => t,
                    None => self.zero_of(records.first().copied(), e.span)?,
                });
            }
        }
        let mut dims = vec![rows];
        if b.dims().len() == 2 {
            dims.push(columns);
        }
        collect_elements(dims, results, e, self)
    }

    /// The value of the operator `'0'` of operator record `record`, or E0309 when it has none.
    fn zero_of(&mut self, record: Option<ClassId>, span: Span) -> Option<Value> {
        let zero = record
            .and_then(|r| self.operator_functions(r, "'0'"))
            .unwrap_or_default();
        if let [f] = zero.as_slice() {
            return self.call_with_values(*f, Vec::new(), span);
        }
        let owner = record.map_or_else(
            || "the records".to_string(),
            |r| format!("`{}`", self.table.get(r).full_name),
        );
        self.diagnostics.push(
            Diagnostic::error(
                "E0309",
                format!(
                    "the sum of no elements needs the operator '0' of {owner}, which it does not define as one function"
                ),
                span,
                "no zero",
            )
            .with_help("define `encapsulated operator function '0'` with no input and the record as its output"),
        );
        None
    }

    /// `sum(a)` of an array of records: `a[1] + a[2] + ...` with the overloaded `'+'`, the
    /// operator record's `'0'` for an empty array. `product` is not defined for records.
    pub(crate) fn overloaded_reduction(
        &mut self,
        e: &ast::Expr,
        builtin: eqm_ir::builtins::Builtin,
        v: Value,
        at: &ast::Expr,
        scope: Scope,
    ) -> Option<Value> {
        let record = self.operand_record(&v, at, scope);
        let elements: Vec<Value> = match &v {
            Value::Records(_, elements) => elements.to_vec(),
            other => vec![other.clone()],
        };
        if builtin != eqm_ir::builtins::Builtin::Sum {
            let types = [type_of(&v)];
            let records: Vec<ClassId> = record.into_iter().collect();
            return self.no_operator(&records, "'*' (of `product`)", &types, e.span);
        }
        let mut total: Option<Value> = None;
        for x in elements {
            total = Some(match total {
                None => x,
                Some(t) => self.overloaded_binary(e, ast::BinaryOp::Add, t, x, at, at, scope)?,
            });
        }
        match total {
            Some(t) => Some(t),
            None => self.zero_of(record, e.span),
        }
    }

    /// `String(r, options)` of a record: the function of its operator record's `'String'`
    /// that the arguments match.
    pub(crate) fn overloaded_string(
        &mut self,
        e: &'a ast::Expr,
        v: Value,
        at: &ast::Expr,
        named: &'a [(ast::Ident, ast::Expr)],
        scope: Scope,
        loops: &mut crate::eval::Loops,
    ) -> Option<Value> {
        let record = self.operand_record_or_report(&v, at, scope, "'String'")?;
        let mut given = Vec::with_capacity(named.len());
        for (name, arg) in named {
            given.push((name.name.as_str(), self.eval(arg, scope, loops)?));
        }
        let named_types: Vec<(&str, ArgType)> = given.iter().map(|(n, x)| (*n, type_of(x))).collect();
        let positional = [type_of(&v)];
        let mut matching = Vec::new();
        for f in self.operator_functions(record, "'String'").unwrap_or_default() {
            if let Some(inputs) = self.input_types(f)
                && valid_match(&inputs, &positional, &named_types)
            {
                matching.push(f);
            }
        }
        let [f] = matching.as_slice() else {
            let choices: Vec<Choice> = matching
                .iter()
                .map(|&function| Choice {
                    function,
                    conversion: None,
                })
                .collect();
            if choices.is_empty() {
                return self.no_operator(&[record], "'String'", &positional, e.span);
            }
            self.report_ambiguous(&choices, "'String'", &positional, e.span);
            return None;
        };
        let f = *f;
        let inputs = self.input_names(f);
        let mut values = vec![None; inputs.len()];
        values[0] = Some(v);
        for (name, x) in given {
            if let Some(k) = inputs.iter().position(|n| *n == name) {
                values[k] = Some(x);
            }
        }
        self.call_with_given(f, values, e.span)
    }
}

/// Element `k` (row-major) of an array of records or of scalars.
fn element(v: &Value, k: usize) -> Value {
    match v {
        Value::Records(_, elements) => elements[k].clone(),
        Value::Array(_, elements, ty) => Value::Scalar(elements[k], *ty),
        other => other.clone(),
    }
}

/// The elements computed by an element-wise operator, as an array of records or of scalars.
fn collect_elements(dims: Vec<usize>, results: Vec<Value>, e: &ast::Expr, f: &mut Flattener) -> Option<Value> {
    if results.iter().all(|r| matches!(r, Value::Record(_))) {
        return Some(Value::Records(dims, results.into()));
    }
    let mut elements = Vec::with_capacity(results.len());
    let mut ty = None;
    for r in &results {
        match r {
            Value::Scalar(x, t) => {
                elements.push(*x);
                ty = Some(*t);
            }
            _ => {
                f.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "the element-wise operator gives elements of different kinds",
                    e.span,
                    "elements must agree",
                ));
                return None;
            }
        }
    }
    Some(Value::Array(
        dims,
        elements,
        ty.unwrap_or(eqm_ir::flat::ScalarType::Real),
    ))
}
