//! Enumeration types: `type Mode = enumeration(Off, Heating, Cooling);`.
//!
//! Input: references in expressions and array dimensions that name an enumeration type or one
//! of its literals. Output: the flat model's representation of them: a literal is the Integer of
//! its position (`Mode.Heating` is 2), a variable of an enumeration type is an Integer variable
//! starting at the first literal, the type used as a dimension (`Real w[Mode]`) is its number of
//! literals, and the type used as a value (`for m in Mode loop`) is the vector of its literals;
//! `Boolean` as a dimension or a range means `false, true`. Comparisons, `Integer(e)` and
//! subscripts then work on the Integers; the variables of an enumeration type keep their literal
//! names, and `String(e)` finds the enumeration type of its expression from its form (a
//! literal, a variable, a function's result, an if-expression), so that it shows a literal's
//! name. The flat model keeps the enumeration type of each variable declared with one only as
//! a side table (`FlatModel::enumerations`, for the FMI export): results show a literal's
//! position. Mixing enumeration values with numbers is refused by `enumeration_types`; comparing
//! values of two different enumeration types is not rejected.

use crate::flattener::Flattener;
use crate::layout::ResolvedType;
use crate::modifier::Scope;
use crate::resolve::TypeRef;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, Node};
use eqm_ir::flat::{EnumerationType, ScalarType};
use eqm_syntax::ast;
use std::sync::Arc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The enumeration type of a component's resolved type, named by its class's full name
    /// (the name written in the declaration when it is not a class).
    pub(crate) fn enumeration_type(&self, resolved: &ResolvedType<'a>) -> Option<Arc<EnumerationType>> {
        let literals = resolved.enumeration?;
        let name = match resolved.target {
            TypeRef::Class(class) => self.table.get(class).full_name.clone(),
            TypeRef::Builtin(_) => resolved.class_name.clone(),
        };
        let literals = literals
            .iter()
            .map(|l| (l.name.name.clone(), l.description.as_ref().map(|d| d.text.clone())))
            .collect();
        Some(Arc::new(EnumerationType { name, literals }))
    }

    /// The enumeration class a reference without subscripts names (`Mode`, `Pkg.Mode`), if any.
    pub(crate) fn enumeration_class(&self, c: &ast::ComponentRef, scope: Scope) -> Option<crate::resolve::ClassId> {
        self.class_named(c, scope)
            .filter(|&class| self.table.get(class).enumeration().is_some())
    }

    /// Whether `c` names the type `Boolean`, itself or through short class definitions (`type
    /// B = Boolean;`).
    pub(crate) fn names_boolean(&self, c: &ast::ComponentRef, scope: Scope) -> bool {
        if c.parts.len() == 1 && c.parts[0].subscripts.is_empty() && c.parts[0].name.name == "Boolean" {
            return true;
        }
        let Some(class) = self.class_named(c, scope) else {
            return false;
        };
        // Only short definitions without dimensions lead to `Boolean` (`type B = Boolean;`).
        for link in self.table.short_definition_chain(class) {
            let crate::resolve::TypeRef::Class(named) = link else {
                return link == crate::resolve::TypeRef::Builtin(ScalarType::Boolean);
            };
            match &self.table.get(named).def.body {
                ast::ClassBody::Short { dims, .. } if dims.is_empty() => {}
                _ => return false,
            }
        }
        false
    }

    /// The size of a dimension written as a type: an enumeration's number of literals, or 2 for
    /// `Boolean`; `None` for any other expression.
    pub(crate) fn type_dimension(&self, e: &ast::Expr, scope: Scope) -> Option<usize> {
        let ast::ExprKind::Ref(c) = &e.kind else { return None };
        if self.names_boolean(c, scope) {
            return Some(2);
        }
        let class = self.enumeration_class(c, scope)?;
        self.table.get(class).enumeration().map(<[_]>::len)
    }

    /// A reference to an enumeration type as a value (the vector of its literals, for ranges:
    /// `for m in Mode loop`), to `Boolean` (`{false, true}`), or to a literal (`Mode.Heating`,
    /// its position). `None` when `c` names none of these; `Some(None)` after the diagnostic for
    /// a literal its enumeration does not have.
    pub(crate) fn enumeration_value(&mut self, c: &ast::ComponentRef, scope: Scope) -> Option<Option<Value>> {
        if self.names_boolean(c, scope) {
            let elements = vec![self.model.exprs.boolean(false), self.model.exprs.boolean(true)];
            return Some(Some(Value::Array(vec![2], elements, ScalarType::Boolean)));
        }
        if let Some(class) = self.enumeration_class(c, scope) {
            let n = self.table.get(class).enumeration().map_or(0, <[_]>::len);
            let elements = (1..=n as i64).map(|k| self.model.exprs.int(k)).collect();
            return Some(Some(Value::Array(vec![n], elements, ScalarType::Integer)));
        }
        let (literal, path) = c.parts.split_last()?;
        if !literal.subscripts.is_empty() {
            return None;
        }
        if path.is_empty() {
            return self.imported_literal_value(&literal.name.name, scope);
        }
        let type_ref = ast::ComponentRef {
            global: c.global,
            parts: path.to_vec(),
            span: c.span,
        };
        let class = self.enumeration_class(&type_ref, scope)?;
        let literals = self.table.get(class).enumeration()?;
        let Some(position) = literals.iter().position(|l| l.name.name == literal.name.name) else {
            let mut d = Diagnostic::error(
                "E0205",
                format!(
                    "the enumeration `{}` has no literal `{}`",
                    self.table.get(class).full_name,
                    literal.name.name
                ),
                literal.name.span,
                "no such literal",
            );
            if let Some(s) = eqm_diag::did_you_mean(&literal.name.name, literals.iter().map(|l| l.name.name.as_str())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diagnostics.push(d);
            return Some(None);
        };
        Some(Some(Value::Scalar(
            self.model.exprs.int(position as i64 + 1),
            ScalarType::Integer,
        )))
    }

    /// A literal that an import of the scope's class or of a class enclosing it names by its
    /// simple name (`Heating` after `import P.Mode.Heating;`), as its position. A constant of
    /// that name declared in a class on the way shadows the import, as lookup finds it first.
    fn imported_literal_value(&mut self, name: &str, scope: Scope) -> Option<Option<Value>> {
        // Most references reach here through classes without imports: no element is scanned
        // for them (the lookup of constants that follows does that once).
        let table = self.table;
        let mut chain = std::iter::successors(Some(scope.class), |&c| table.get(c).parent);
        if chain.all(|c| table.get(c).imports().next().is_none()) {
            return None;
        }
        let mut current = Some(scope.class);
        while let Some(class) = current {
            if self.find_constant_decl(class, name).is_some() {
                return None;
            }
            if let Some(position) = self.imported_literal(class, name) {
                let literal = self.model.exprs.int(position as i64 + 1);
                return Some(Some(Value::Scalar(literal, ScalarType::Integer)));
            }
            current = self.table.get(class).parent;
        }
        None
    }

    /// The name of the literal a reference names (`Mode.Heating` gives `Heating`), for
    /// `String(e)`.
    pub(crate) fn enumeration_literal_name(&self, e: &ast::Expr, scope: Scope) -> Option<String> {
        let ast::ExprKind::Ref(c) = &e.kind else { return None };
        let (literal, path) = c.parts.split_last()?;
        let type_ref = ast::ComponentRef {
            global: c.global,
            parts: path.to_vec(),
            span: c.span,
        };
        let class = self.enumeration_class(&type_ref, scope)?;
        let literals = self.table.get(class).enumeration()?;
        literals
            .iter()
            .any(|l| l.name.name == literal.name.name)
            .then(|| literal.name.name.clone())
    }

    /// The literal names of the enumeration `x` is a value of, when `x` is a variable of an
    /// enumeration type or its `pre`.
    pub(crate) fn enumeration_names_of(&self, x: ExprId) -> Option<std::sync::Arc<[String]>> {
        let exprs = &self.model.exprs;
        let var = match exprs.get(x) {
            Node::Var(v) => *v,
            Node::Call(Callee::Builtin(Builtin::Pre), args) => match &args[..] {
                [a] => match exprs.get(*a) {
                    Node::Var(v) => *v,
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        self.enumeration_names.get(&var).cloned()
    }

    /// The literal names of the enumeration type of `e`, whose value is `x`, for `String(e)`:
    /// a literal, a variable of an enumeration type (or an element of an array of them, or its
    /// `pre`), a local or the result of a function declared of one, and the expressions that
    /// pass such a value through (`if`, `pre`, `noEvent`, `min`, `max`, a subscripted call or
    /// array, a comprehension or reduction). The operands are visited with a stack of their own, so a deep if-chain costs
    /// no recursion. `None` when `e` is of no enumeration type.
    pub(crate) fn enumeration_names_of_expr(
        &mut self,
        e: &'a ast::Expr,
        x: ExprId,
        scope: Scope,
        loops: &mut crate::eval::Loops,
    ) -> Option<Arc<[String]>> {
        if let Some(names) = self.enumeration_names_of(x) {
            return Some(names);
        }
        // Re-evaluating an operand may repeat a diagnostic that its evaluation for the value
        // already gave, or report one of a branch the value did not take: they are dropped.
        let reported = self.diagnostics.len();
        let mut pending = vec![e];
        let mut found = None;
        while let Some(e) = pending.pop() {
            match &e.kind {
                ast::ExprKind::Ref(c) => {
                    found = self.enumeration_names_of_ref(c, scope, loops);
                }
                ast::ExprKind::If { branches, else_value } => {
                    pending.push(else_value);
                    pending.extend(branches.iter().map(|(_, value)| value));
                }
                ast::ExprKind::Index { base, .. } => pending.push(base),
                ast::ExprKind::Comprehension { body, .. } | ast::ExprKind::Reduction { body, .. } => pending.push(body),
                ast::ExprKind::Array(elements) => pending.extend(elements.first()),
                ast::ExprKind::Call { function, args } => {
                    let name = function.parts.last().map_or("", |p| p.name.name.as_str());
                    let passes_through = function.parts.len() == 1
                        && matches!(
                            name,
                            "pre" | "previous" | "noEvent" | "hold" | "min" | "max" | "homotopy"
                        );
                    if passes_through {
                        pending.extend(args.positional.first());
                    } else {
                        found = self.function_result_enumeration(function, scope);
                    }
                }
                _ => {}
            }
            if found.is_some() {
                break;
            }
        }
        self.diagnostics.truncate(reported);
        found
    }

    /// The literal names of the enumeration type of the component `c` refers to, or of the
    /// enumeration `c` names a literal of.
    fn enumeration_names_of_ref(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut crate::eval::Loops,
    ) -> Option<Arc<[String]>> {
        if let Some((literal, path)) = c.parts.split_last()
            && !path.is_empty()
            && literal.subscripts.is_empty()
        {
            let type_ref = ast::ComponentRef {
                global: c.global,
                parts: path.to_vec(),
                span: c.span,
            };
            if let Some(class) = self.enumeration_class(&type_ref, scope) {
                return self.table.get(class).enumeration().map(literal_names);
            }
        }
        let first = &c.parts[0].name.name;
        // A local of the function being flattened: the type it is declared with.
        if self.is_local(scope, first) {
            let (clause, part) = self
                .function_components(scope.class)
                .find(|(_, decl, _)| decl.name.name == *first)
                .map(|(clause, _, part)| (clause, part))?;
            return self.declared_enumeration(&clause.type_name, part);
        }
        // An element of an array of variables picked during the run.
        if let [part] = &c.parts[..]
            && !part.subscripts.is_empty()
            && let Some(instance) = scope.instance
            && let Some(crate::layout::Member::VarArray(array)) = self.member(instance, &part.name.name)
        {
            let element = *array.elements.first()?;
            return self.enumeration_names.get(&element).cloned();
        }
        match self.eval_ref(c, scope, loops)? {
            Value::Scalar(x, ScalarType::Integer) => self.enumeration_names_of(x),
            _ => None,
        }
    }

    /// The literal a value of the predefined enumeration type `ty` (`StateSelect`, `AssertionLevel`)
    /// stands for, as its position from 0: `x` is the value of `e`, written in `scope`, for
    /// `what`, reported with `code` when of the wrong type. The value may be any expression of that type known at compile time (a literal,
    /// a parameter of the type, an if-expression choosing between them); one of another type,
    /// or one known only during the run, is reported.
    pub(crate) fn predefined_literal(
        &mut self,
        e: &'a ast::Expr,
        x: ExprId,
        scope: Scope,
        ty: &crate::predefined::Enumeration,
        what: &str,
        code: &'static str,
    ) -> Option<usize> {
        let (type_name, literals) = (ty.name, ty.literals);
        let names = self.enumeration_names_of_expr(e, x, scope, &mut Vec::new());
        if !names.is_some_and(|names| names.iter().map(String::as_str).eq(literals.iter().copied())) {
            self.diagnostics.push(
                Diagnostic::error(
                    code,
                    format!("{what} must be a value of the enumeration `{type_name}`"),
                    e.span,
                    format!("not a {type_name} value"),
                )
                .with_help(format!(
                    "use one of {}",
                    literals
                        .iter()
                        .map(|l| format!("{type_name}.{l}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return None;
        }
        let Some(position) = self.consts.eval(&self.model, x) else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0206",
                    format!("{what} must be known at compile time"),
                    e.span,
                    "depends on values only known during simulation",
                )
                .with_help("use a literal or a parameter with a known value"),
            );
            return None;
        };
        self.note_structural(x);
        // The type check above makes the value one of the literals' positions, 1 to n.
        let k = position as usize;
        (1..=literals.len()).contains(&k).then(|| k - 1)
    }

    /// The literal names of the enumeration type of the (first) output of the function
    /// `function` names.
    fn function_result_enumeration(&mut self, function: &ast::ComponentRef, scope: Scope) -> Option<Arc<[String]>> {
        let class = self.function_class(function, scope)?.class;
        let (clause, part) = self
            .function_components(class)
            .find(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Output)
            .map(|(clause, _, part)| (clause, part))?;
        self.declared_enumeration(&clause.type_name, part)
    }

    /// The literal names of the type `type_name`, written in the class `part`, when it is an
    /// enumeration or a short definition of one (`type Level = Mode;`).
    fn declared_enumeration(&self, type_name: &ast::Name, part: crate::resolve::ClassId) -> Option<Arc<[String]>> {
        let (mut scope, mut name) = (part, type_name);
        // A chain of short definitions names each class once, so one longer than the table is
        // a cycle.
        for _ in 0..=self.table.classes.len() {
            let Ok(crate::resolve::TypeRef::Class(class)) = self.table.lookup(scope, name) else {
                return None;
            };
            let entry = self.table.get(class);
            if let Some(literals) = entry.enumeration() {
                return Some(literal_names(literals));
            }
            let ast::ClassBody::Short { base, .. } = &entry.def.body else {
                return None;
            };
            (scope, name) = (entry.parent.unwrap_or(class), base);
        }
        None
    }
}

/// The names of an enumeration's literals, in order.
fn literal_names(literals: &[ast::EnumLiteral]) -> Arc<[String]> {
    literals.iter().map(|l| l.name.name.clone()).collect()
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether each literal of an enumeration type is declared once (one pass with a set of the
    /// names seen); E0218 otherwise. A literal named like an attribute of enumeration types
    /// (`fixed`, `start`, ...) is accepted: EQM's System Dynamics library names one `fixed`.
    pub(crate) fn enumeration_literals_valid(&mut self, literals: &[eqm_syntax::ast::EnumLiteral]) -> bool {
        let mut seen = eqm_ir::expr::FxHashSet::default();
        for literal in literals {
            let name = literal.name.name.as_str();
            if !seen.insert(name) {
                self.diagnostics.push(Diagnostic::error(
                    "E0218",
                    format!("the enumeration literal `{name}` is declared twice"),
                    literal.name.span,
                    "second declaration",
                ));
                return false;
            }
        }
        true
    }
}
