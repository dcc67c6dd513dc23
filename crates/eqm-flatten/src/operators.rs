//! Operator records: the overloaded constructors of an `operator record` (`Complex(1, 2)` calls
//! the one function of `Complex.'constructor'` whose inputs the arguments match).
//!
//! Input: a call that names a record class, with its arguments. Output: the function of the
//! record's `'constructor'` operator the call resolves to by Modelica's matching rule (each
//! positional argument of the type of its input, Integer and Real alike; each named argument
//! naming a later input of its type; every other input with a default), `None` for a record
//! without a `'constructor'` (whose automatic constructor is then called), or the diagnostic
//! when no function or more than one matches. It deliberately does not evaluate the call
//! (`calls` does, as an ordinary call of that function).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

/// The type of an argument or an input as the matching rule compares them, with its number of
/// dimensions: a record is known by its fields' names (Modelica's records are equivalent when
/// their components are).
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum ArgType {
    Other(ScalarType, usize),
    Record(Vec<String>, usize),
}

impl ArgType {
    /// Whether an argument of this type matches an input of type `input`: the same type, with
    /// Integer and Real treated as one (Modelica's rule for choosing an overloaded function).
    pub(crate) fn fits(&self, input: &ArgType) -> bool {
        let number = |t: &ScalarType| matches!(t, ScalarType::Integer | ScalarType::Real);
        match (self, input) {
            (ArgType::Other(a, m), ArgType::Other(b, n)) if number(a) && number(b) => m == n,
            _ => self == input,
        }
    }

    /// The text of the type in a diagnostic.
    pub(crate) fn describe(&self) -> String {
        let (name, ndims) = match self {
            ArgType::Other(ty, n) => (crate::value::type_name(*ty).to_string(), *n),
            ArgType::Record(fields, n) => (format!("a record of {}", fields.join(", ")), *n),
        };
        if ndims == 0 {
            name
        } else {
            format!("{name} ({ndims}-dimensional array)")
        }
    }
}

fn scalar(ty: ScalarType, ndims: usize) -> ArgType {
    ArgType::Other(ty, ndims)
}

pub(crate) fn type_of(value: &Value) -> ArgType {
    match value {
        Value::Scalar(_, ty) => scalar(*ty, 0),
        Value::Array(dims, _, ty) => scalar(*ty, dims.len()),
        Value::Str(_) => ArgType::Other(ScalarType::String, 0),
        Value::Record(fields) => ArgType::Record(fields.iter().map(|(n, _)| n.clone()).collect(), 0),
        Value::Records(dims, elements) => match elements.first() {
            Some(Value::Record(fields)) => ArgType::Record(fields.iter().map(|(n, _)| n.clone()).collect(), dims.len()),
            _ => ArgType::Other(ScalarType::String, dims.len()),
        },
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The operator record `class` is or stands for through short class definitions.
    pub(crate) fn operator_record(&self, class: ClassId) -> Option<ClassId> {
        // A short definition is the class it names, also when it is written `operator
        // record` itself (`operator record ComplexCurrent = Complex(...)`): only the long
        // definition at the end of the chain decides.
        let TypeRef::Class(last) = self.table.short_definition_chain(class).last()? else {
            return None;
        };
        let def = self.table.get(last).def;
        let long = !matches!(def.body, ast::ClassBody::Short { .. });
        (long && def.kind == ast::ClassKind::OperatorRecord).then_some(last)
    }

    /// The functions of the operator `op` (`'constructor'`) of operator record `record`: those of
    /// an `operator` class, or the `operator function` itself; `None` when it defines no such
    /// operator.
    pub(crate) fn operator_functions(&self, record: ClassId, op: &str) -> Option<Vec<ClassId>> {
        let class = self.table.member_class(record, op, 0)?;
        let entry = self.table.get(class);
        if entry.def.kind.is_function() {
            return Some(vec![class]);
        }
        if entry.def.kind != ast::ClassKind::Operator {
            return None;
        }
        Some(
            entry
                .nested
                .values()
                .copied()
                .filter(|&f| self.table.get(f).def.kind.is_function())
                .collect(),
        )
    }

    /// The inputs of function `f`: name, type and whether it has a default.
    pub(crate) fn input_types(&mut self, f: ClassId) -> Option<Vec<(&'a str, ArgType, bool)>> {
        Some(
            self.typed_inputs(f)?
                .into_iter()
                .map(|(n, ty, d, _)| (n, ty, d))
                .collect(),
        )
    }

    /// The inputs of function `f`: name, type, whether it has a default, and the record class
    /// of a record input.
    #[allow(clippy::type_complexity)]
    pub(crate) fn typed_inputs(&mut self, f: ClassId) -> Option<Vec<(&'a str, ArgType, bool, Option<ClassId>)>> {
        let components: Vec<_> = self
            .function_components(f)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .collect();
        let mut inputs = Vec::with_capacity(components.len());
        for (clause, decl, part) in components {
            let ndims = clause.type_dims.len() + decl.dims.len();
            let mut record = None;
            let ty = match self.table.lookup(part, &clause.type_name).ok()? {
                TypeRef::Builtin(ty) => scalar(ty, ndims),
                TypeRef::Class(c) if self.is_record(c) => {
                    record = Some(c);
                    let fields = self.layout(c).names().map(str::to_string).collect();
                    ArgType::Record(fields, ndims)
                }
                // An enumeration or another class: compared by identity of its name only,
                // which no argument type equals, so such an input never matches.
                TypeRef::Class(_) => return None,
            };
            let default = decl.modification.as_ref().is_some_and(|m| m.binding.is_some());
            inputs.push((decl.name.name.as_str(), ty, default, record));
        }
        Some(inputs)
    }

    /// A call naming a record class: the one function of an operator record's `'constructor'`
    /// operator that the arguments match, or the record's own constructor when it has none.
    pub(crate) fn record_call(
        &mut self,
        e: &'a ast::Expr,
        class: ClassId,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let Some(constructor) = self.overloaded_constructor(class, args, scope, loops, e.span)? else {
            return self.record_constructor(e, class, args, scope, loops);
        };
        let callee = crate::function_table::FunctionRef::plain(constructor, Default::default());
        let (_, outputs) = self.user_call(&callee, function, args, e.span, scope, loops)?;
        outputs.into_iter().next()
    }

    /// The functions of `record`'s `'constructor'` operator that one argument of type `arg`
    /// matches: the implicit conversions of an operand to the operator record (`2*c` as
    /// `Complex(2)*c`).
    pub(crate) fn converting_constructors(&mut self, record: ClassId, arg: &ArgType) -> Vec<ClassId> {
        let Some(record) = self.operator_record(record) else {
            return Vec::new();
        };
        let candidates = self.operator_functions(record, "'constructor'").unwrap_or_default();
        let mut found = Vec::new();
        for f in candidates {
            if let Some(inputs) = self.input_types(f)
                && valid_match(&inputs, std::slice::from_ref(arg), &[])
            {
                found.push(f);
            }
        }
        found
    }

    /// The function of `record`'s `'constructor'` operator that the call's arguments match,
    /// `Some(None)` when the record has no such operator, `None` after a reported error.
    fn overloaded_constructor(
        &mut self,
        record: ClassId,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
        span: Span,
    ) -> Option<Option<ClassId>> {
        let Some(operator_record) = self.operator_record(record) else {
            return Some(None);
        };
        let Some(candidates) = self.operator_functions(operator_record, "'constructor'") else {
            return Some(None);
        };
        let mut positional = Vec::with_capacity(args.positional.len());
        for a in &args.positional {
            let value = self.eval(a, scope, loops)?;
            positional.push(type_of(&value));
        }
        let mut named = Vec::with_capacity(args.named.len());
        for (name, a) in &args.named {
            let value = self.eval(a, scope, loops)?;
            named.push((name.name.as_str(), type_of(&value)));
        }
        let mut matching = Vec::new();
        for f in candidates {
            if let Some(inputs) = self.input_types(f)
                && valid_match(&inputs, &positional, &named)
            {
                matching.push(f);
            }
        }
        let record_name = self.table.get(operator_record).full_name.clone();
        match matching.as_slice() {
            [f] => Some(Some(*f)),
            [] => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0309",
                        format!("no constructor of the operator record `{record_name}` takes these arguments"),
                        span,
                        "no matching constructor",
                    )
                    .with_help(format!(
                        "the functions of `{record_name}.'constructor'` are the ways to build one"
                    )),
                );
                None
            }
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|&f| format!("`{}`", self.table.get(f).full_name))
                    .collect();
                self.diagnostics.push(Diagnostic::error(
                    "E0309",
                    format!(
                        "the call of the operator record `{record_name}` matches several constructors: {}",
                        names.join(", ")
                    ),
                    span,
                    "ambiguous",
                ));
                None
            }
        }
    }
}

/// Modelica's valid match of a call with `positional` and `named` arguments for a function with
/// `inputs`: positional arguments of the types of the first inputs, named ones of later inputs
/// of their types, each input given once, and every input not given with a default.
pub(crate) fn valid_match(inputs: &[(&str, ArgType, bool)], positional: &[ArgType], named: &[(&str, ArgType)]) -> bool {
    if positional.len() > inputs.len() {
        return false;
    }
    let mut given = vec![false; inputs.len()];
    for (k, ty) in positional.iter().enumerate() {
        if !ty.fits(&inputs[k].1) {
            return false;
        }
        given[k] = true;
    }
    for (name, ty) in named {
        let Some(k) = inputs.iter().position(|(n, _, _)| n == name) else {
            return false;
        };
        if given[k] || !ty.fits(&inputs[k].1) {
            return false;
        }
        given[k] = true;
    }
    inputs
        .iter()
        .zip(&given)
        .all(|((_, _, default), given)| *given || *default)
}
