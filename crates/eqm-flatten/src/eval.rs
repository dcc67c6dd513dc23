//! Evaluation of AST expressions into flat values: name resolution inside instances, arrays,
//! built-ins and compile-time evaluation of structural expressions.

use super::modifier::Scope;
use super::value::{self, Value};
use super::{Flattener, Member};
use eqm_diag::Diagnostic;
use eqm_ir::builtins::{Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, ExprId, Node, UnOp, VarId};
use eqm_ir::flat::{InstanceId, ScalarType};
use eqm_syntax::ast;
use std::borrow::Cow;
use std::rc::Rc;

/// Loop indices in scope: `for i in 1:N` binds `i` to an integer while its body is flattened.
pub type Loops = Vec<(String, i64)>;

/// What a component reference denotes.
#[derive(Clone, Debug)]
pub enum Target {
    Var(VarId),
    Inst(InstanceId),
}

impl<'t, 'a> Flattener<'t, 'a> {
    pub(crate) fn eval(&mut self, e: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> Option<Value> {
        use ast::ExprKind as K;
        let arena = &mut self.model.exprs;
        Some(match &e.kind {
            K::Integer(v) => Value::Scalar(arena.int(*v), ScalarType::Integer),
            K::Real(v) => Value::Scalar(arena.real(*v), ScalarType::Real),
            K::Bool(b) => Value::Scalar(arena.boolean(*b), ScalarType::Boolean),
            K::String(s) => Value::Str(s.clone()),
            K::Error => return None,
            K::Ref(c) => return self.eval_ref(c, scope, loops),
            K::Call { function, args } => return self.eval_call(e, function, args, scope, loops),
            K::Unary { op, operand } => {
                let v = self.eval(operand, scope, loops)?;
                match op {
                    ast::UnaryOp::Plus | ast::UnaryOp::ElemPlus => v,
                    ast::UnaryOp::Neg | ast::UnaryOp::ElemNeg => {
                        self.expect_numeric(&v, operand)?;
                        let ty = v.ty();
                        value::map_unary(&mut self.model.exprs, UnOp::Neg, &v, ty)
                    }
                    ast::UnaryOp::Not => {
                        self.expect_type(&v, ScalarType::Boolean, operand)?;
                        value::map_unary(&mut self.model.exprs, UnOp::Not, &v, ScalarType::Boolean)
                    }
                }
            }
            K::Binary { op, lhs, rhs } => {
                let a = self.eval(lhs, scope, loops)?;
                let b = self.eval(rhs, scope, loops)?;
                return self.eval_binary(e, *op, a, b, lhs, rhs);
            }
            K::If { branches, else_value } => {
                let mut result = self.eval(else_value, scope, loops)?;
                for (condition, then_value) in branches.iter().rev() {
                    let c = self.eval(condition, scope, loops)?;
                    self.expect_type(&c, ScalarType::Boolean, condition)?;
                    let Value::Scalar(c, _) = c else { return None };
                    let t = self.eval(then_value, scope, loops)?;
                    if !value::same_dims(t.dims(), result.dims()) {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            "the branches of this if-expression have different array sizes",
                            e.span,
                            "branches must agree",
                        ));
                        return None;
                    }
                    let ty = if t.ty() == ScalarType::Integer && result.ty() == ScalarType::Integer {
                        ScalarType::Integer
                    } else {
                        t.ty()
                    };
                    // A branch decided at compile time (a parameter condition) is taken directly.
                    if let Some(known) = self.model.exprs.literal(c) {
                        result = if known != 0.0 { t } else { result };
                        continue;
                    }
                    let elements: Vec<ExprId> = t
                        .elements()
                        .into_iter()
                        .zip(result.elements())
                        .map(|(x, y)| self.model.exprs.add(Node::If(c, x, y)))
                        .collect();
                    result = match t.dims() {
                        [] => Value::Scalar(elements[0], ty),
                        d => Value::Array(d.to_vec(), elements, ty),
                    };
                }
                result
            }
            K::Array(items) => {
                let values: Option<Vec<Value>> = items.iter().map(|i| self.eval(i, scope, loops)).collect();
                return self.concat(values?, e);
            }
            K::Matrix(rows) => {
                let mut row_values = Vec::new();
                for row in rows {
                    let values: Option<Vec<Value>> = row.iter().map(|i| self.eval(i, scope, loops)).collect();
                    row_values.push(self.concat(values?, e)?);
                }
                return self.concat(row_values, e);
            }
            K::Range { start, step, stop } => {
                let a = self.eval_structural_int(start, scope, "a range bound")?;
                let s = match step {
                    Some(s) => self.eval_structural_int(s, scope, "a range step")?,
                    None => 1,
                };
                let b = self.eval_structural_int(stop, scope, "a range bound")?;
                if s == 0 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "range step is zero",
                        e.span,
                        "would never end",
                    ));
                    return None;
                }
                let mut elems = Vec::new();
                let mut i = a;
                while (s > 0 && i <= b) || (s < 0 && i >= b) {
                    elems.push(self.model.exprs.int(i));
                    i += s;
                }
                Value::Array(vec![elems.len()], elems, ScalarType::Integer)
            }
            K::Tuple(_) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0307",
                    "a parenthesised list is only allowed on the left of a multi-output call",
                    e.span,
                    "not a value",
                ));
                return None;
            }
        })
    }

    fn expect_numeric(&mut self, v: &Value, at: &ast::Expr) -> Option<()> {
        if matches!(v.ty(), ScalarType::Real | ScalarType::Integer) {
            return Some(());
        }
        self.diagnostics.push(Diagnostic::error(
            "E0306",
            format!("expected a number, found {}", super::type_name(v.ty())),
            at.span,
            format!("this is {}", super::type_name(v.ty())),
        ));
        None
    }

    fn expect_type(&mut self, v: &Value, ty: ScalarType, at: &ast::Expr) -> Option<()> {
        if v.ty() == ty {
            return Some(());
        }
        self.diagnostics.push(Diagnostic::error(
            "E0306",
            format!("expected {}, found {}", super::type_name(ty), super::type_name(v.ty())),
            at.span,
            format!("this is {}", super::type_name(v.ty())),
        ));
        None
    }

    fn eval_binary(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        a: Value,
        b: Value,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
    ) -> Option<Value> {
        use ast::BinaryOp as B;
        let (flat_op, logical) = match op {
            B::Add | B::ElemAdd => (BinOp::Add, false),
            B::Sub | B::ElemSub => (BinOp::Sub, false),
            B::Mul | B::ElemMul => (BinOp::Mul, false),
            B::Div | B::ElemDiv => (BinOp::Div, false),
            B::Pow | B::ElemPow => (BinOp::Pow, false),
            B::Eq => (BinOp::Eq, false),
            B::Ne => (BinOp::Ne, false),
            B::Lt => (BinOp::Lt, false),
            B::Le => (BinOp::Le, false),
            B::Gt => (BinOp::Gt, false),
            B::Ge => (BinOp::Ge, false),
            B::And => (BinOp::And, true),
            B::Or => (BinOp::Or, true),
        };
        if let (Value::Str(x), Value::Str(y), BinOp::Add) = (&a, &b, flat_op) {
            return Some(Value::Str(format!("{x}{y}")));
        }
        let ty = if logical {
            self.expect_type(&a, ScalarType::Boolean, lhs)?;
            self.expect_type(&b, ScalarType::Boolean, rhs)?;
            ScalarType::Boolean
        } else if flat_op.is_relation() {
            if a.ty() == ScalarType::Boolean || b.ty() == ScalarType::Boolean {
                if a.ty() != b.ty() || !matches!(flat_op, BinOp::Eq | BinOp::Ne) {
                    self.expect_numeric(
                        if a.ty() == ScalarType::Boolean { &a } else { &b },
                        if a.ty() == ScalarType::Boolean { lhs } else { rhs },
                    )?;
                }
            } else {
                self.expect_numeric(&a, lhs)?;
                self.expect_numeric(&b, rhs)?;
            }
            ScalarType::Boolean
        } else {
            self.expect_numeric(&a, lhs)?;
            self.expect_numeric(&b, rhs)?;
            value::numeric_result(a.ty(), b.ty(), flat_op)
        };
        if flat_op.is_relation() && (!a.dims().is_empty() || !b.dims().is_empty()) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "relations compare scalars, not arrays",
                e.span,
                "array operand",
            ));
            return None;
        }
        // Matrix and vector products: `*` on two arrays is not element-wise in Modelica.
        if op == B::Mul && !a.dims().is_empty() && !b.dims().is_empty() {
            return self.matrix_product(e, &a, &b, ty);
        }
        match value::elementwise(&mut self.model.exprs, flat_op, &a, &b, ty) {
            Some(v) => Some(v),
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("array sizes {:?} and {:?} do not match", a.dims(), b.dims()),
                    e.span,
                    "operands of different sizes",
                ));
                None
            }
        }
    }

    fn matrix_product(&mut self, e: &ast::Expr, a: &Value, b: &Value, ty: eqm_ir::flat::ScalarType) -> Option<Value> {
        let (ad, bd) = (a.dims().to_vec(), b.dims().to_vec());
        let (ae, be) = (a.elements(), b.elements());
        let inner = *ad.last()?;
        if inner != bd[0] || ad.len() > 2 || bd.len() > 2 {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("cannot multiply arrays of sizes {ad:?} and {bd:?}"),
                e.span,
                "inner dimensions differ",
            ));
            return None;
        }
        let rows = if ad.len() == 2 { ad[0] } else { 1 };
        let cols = if bd.len() == 2 { bd[1] } else { 1 };
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                let terms: Vec<ExprId> = (0..inner)
                    .map(|k| self.model.exprs.binary(BinOp::Mul, ae[r * inner + k], be[k * cols + c]))
                    .collect();
                out.push(value::sum(&mut self.model.exprs, &terms));
            }
        }
        Some(match (ad.len(), bd.len()) {
            (1, 1) => Value::Scalar(out[0], ty),
            (2, 1) => Value::Array(vec![rows], out, ty),
            (1, 2) => Value::Array(vec![cols], out, ty),
            _ => Value::Array(vec![rows, cols], out, ty),
        })
    }

    /// `{a, b, c}`: stacks values of equal shape along a new first dimension.
    fn concat(&mut self, values: Vec<Value>, e: &ast::Expr) -> Option<Value> {
        let Some(first) = values.first() else {
            return Some(Value::Array(vec![0], Vec::new(), ScalarType::Real));
        };
        let inner = first.dims().to_vec();
        let mut ty = first.ty();
        let mut elems = Vec::new();
        for v in &values {
            if !value::same_dims(v.dims(), &inner) || matches!(v, Value::Str(_)) {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "array elements have different sizes or kinds",
                    e.span,
                    "elements must agree",
                ));
                return None;
            }
            if v.ty() == ScalarType::Real {
                ty = ScalarType::Real;
            }
            elems.extend(v.elements());
        }
        let mut dims = vec![values.len()];
        dims.extend(inner);
        Some(Value::Array(dims, elems, ty))
    }

    /// Resolves a reference used as a value.
    fn eval_ref(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Value> {
        let first = &c.parts[0];
        if c.parts.len() == 1
            && first.subscripts.is_empty()
            && let Some((_, v)) = loops.iter().rev().find(|(n, _)| *n == first.name.name)
        {
            return Some(Value::Scalar(self.model.exprs.int(*v), ScalarType::Integer));
        }
        if self.is_local(scope, &first.name.name) {
            return self.eval_local(c, scope, loops);
        }
        // A reference to one variable (most references) is resolved once, directly.
        if let Some(instance) = scope.instance
            && let Some(Target::Var(v)) = self.single_target(c, instance, scope, loops)?
        {
            return Some(Value::Scalar(self.model.exprs.var(v), self.model.var(v).ty));
        }
        if let Some(instance) = scope.instance
            && self.member(instance, &first.name.name).is_some()
        {
            let (dims, targets) = self.resolve_targets(c, scope, loops)?;
            let mut elems = Vec::with_capacity(targets.len());
            let mut ty = None;
            for t in targets {
                match t {
                    Target::Var(v) => {
                        ty = Some(self.model.var(v).ty);
                        elems.push(self.model.exprs.var(v));
                    }
                    Target::Inst(i) => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0308",
                            format!("`{}` is a component, not a variable", eqm_syntax::pretty::print_ref(c)),
                            c.span,
                            format!("an instance of {}", self.model.instances[i.0 as usize].class_name),
                        ));
                        return None;
                    }
                }
            }
            let ty = ty.unwrap_or(ScalarType::Real);
            return Some(if dims.is_empty() {
                Value::Scalar(elems[0], ty)
            } else {
                Value::Array(dims, elems, ty)
            });
        }
        if c.parts.len() == 1 && first.name.name == "time" {
            return Some(Value::Scalar(self.model.exprs.add(Node::Time), ScalarType::Real));
        }
        if c.parts.len() == 1 && matches!(first.name.name.as_str(), "true" | "false") {
            return Some(Value::Scalar(
                self.model.exprs.boolean(first.name.name == "true"),
                ScalarType::Boolean,
            ));
        }
        if let Some(v) = self.package_constant(c, scope, loops) {
            return v;
        }
        self.unknown_name(c, scope, loops);
        None
    }

    fn unknown_name(&mut self, c: &ast::ComponentRef, scope: Scope, loops: &Loops) {
        let name = &c.parts[0].name.name;
        let mut candidates: Vec<String> = loops.iter().map(|(n, _)| n.clone()).collect();
        if let Some(i) = scope.instance {
            candidates.extend(self.instances[i.0 as usize].layout.names().map(String::from));
        }
        candidates.push("time".to_string());
        let mut d = Diagnostic::error(
            "E0205",
            format!("unknown variable `{name}`"),
            c.parts[0].name.span,
            "not declared in this class",
        );
        if let Some(s) = eqm_diag::did_you_mean(name, candidates.iter().map(|s| s.as_str())) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        self.diagnostics.push(d);
    }

    /// A constant declared in a package or enclosing class (`Constants.pi`, or `pi` inside it).
    fn package_constant(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Option<Value>> {
        let (class, name) = if c.parts.len() == 1 {
            // An unqualified name: the constants of enclosing classes.
            let mut current = Some(scope.class);
            let mut found = None;
            while let Some(cls) = current {
                if self.find_constant_decl(cls, &c.parts[0].name.name).is_some() {
                    found = Some(cls);
                    break;
                }
                current = self.table.get(cls).parent;
            }
            (found?, &c.parts[0].name.name)
        } else {
            let parts = &c.parts[..c.parts.len() - 1];
            let name = ast::Name {
                global: c.global,
                parts: parts.iter().map(|p| p.name.clone()).collect(),
                span: c.span,
            };
            match self.table.lookup(scope.class, &name) {
                Ok(crate::resolve::TypeRef::Class(cls)) => (cls, &c.parts.last()?.name.name),
                _ => return None,
            }
        };
        let key = (class, name.clone());
        if let Some(v) = self.package_constants.get(&key) {
            return Some(v.clone());
        }
        let Some((decl, _)) = self.find_constant_decl(class, name) else {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!("`{}` has no constant `{name}`", self.table.get(class).full_name),
                c.span,
                "not found",
            ));
            return Some(None);
        };
        self.package_constants.insert(key.clone(), None);
        let value = match decl.modification.as_ref().and_then(|m| m.binding.as_ref()) {
            Some(binding) => self.eval(binding, Scope { instance: None, class }, loops),
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!("constant `{name}` has no value"),
                    decl.name.span,
                    "a constant needs a binding",
                ));
                None
            }
        };
        let subscripts_ok = c.parts.last().is_some_and(|p| p.subscripts.is_empty());
        let value = if subscripts_ok { value } else { None };
        self.package_constants.insert(key, value.clone());
        Some(value)
    }

    fn find_constant_decl(
        &self,
        class: crate::resolve::ClassId,
        name: &str,
    ) -> Option<(&'a ast::ComponentDecl, &'a ast::ComponentClause)> {
        self.table.get(class).elements().find_map(|(e, _)| match e {
            ast::Element::Component(clause)
                if matches!(
                    clause.prefixes.variability,
                    ast::Variability::Constant | ast::Variability::Parameter
                ) =>
            {
                clause
                    .components
                    .iter()
                    .find(|d| d.name.name == name)
                    .map(|d| (d, clause))
            }
            _ => None,
        })
    }

    /// Resolves a reference to the variables or instances it denotes, with array dimensions.
    pub(crate) fn resolve_targets(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<usize>, Vec<Target>)> {
        let instance = scope.instance?;
        if let Some(target) = self.single_target(c, instance, scope, loops)? {
            return Some((Vec::new(), vec![target]));
        }
        let mut current: Vec<InstanceId> = vec![instance];
        let mut dims: Vec<usize> = Vec::new();
        let mut result: Option<Vec<Target>> = None;
        for (k, part) in c.parts.iter().enumerate() {
            if result.is_some() {
                self.diagnostics.push(Diagnostic::error(
                    "E0205",
                    format!(
                        "`{}` is a variable and has no member `{}`",
                        eqm_syntax::pretty::print_ref(c),
                        part.name.name
                    ),
                    part.name.span,
                    "no such member",
                ));
                return None;
            }
            // The member in each instance of the outer selection; arrays are shared, not copied,
            // so that picking one element of a large array costs O(1).
            let mut next_insts: Vec<Rc<[InstanceId]>> = Vec::new();
            let mut next_vars: Vec<Rc<[VarId]>> = Vec::new();
            let mut member_dims: Rc<[usize]> = Rc::from([]);
            for inst in &current {
                let Some(member) = self.ensure_member(*inst, &part.name.name) else {
                    if k == 0 {
                        self.unknown_name(c, scope, loops);
                    } else {
                        let class = self.model.instances[inst.0 as usize].class_name.clone();
                        let layout = self.instances[inst.0 as usize].layout.clone();
                        let mut d = Diagnostic::error(
                            "E0205",
                            format!("`{class}` has no component `{}`", part.name.name),
                            part.name.span,
                            "no such component",
                        );
                        if let Some(s) = eqm_diag::did_you_mean(&part.name.name, layout.names()) {
                            d = d.with_help(format!("did you mean `{s}`?"));
                        }
                        self.diagnostics.push(d);
                    }
                    return None;
                };
                match member {
                    Member::Var(v) => next_vars.push(Rc::from([v])),
                    Member::VarArray(array) => {
                        member_dims = array.dims.clone();
                        next_vars.push(array.elements.clone());
                    }
                    Member::Inst(i) => next_insts.push(Rc::from([i])),
                    Member::InstArray(array) => {
                        member_dims = array.dims.clone();
                        next_insts.push(array.elements.clone());
                    }
                    Member::Failed => return None,
                    Member::Absent => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0215",
                            format!(
                                "`{}` is a conditional component that is not present (its condition is false)",
                                part.name.name
                            ),
                            part.name.span,
                            "absent component",
                        ));
                        return None;
                    }
                    Member::InProgress | Member::Pending => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0216",
                            format!("`{}` depends on itself through its declaration", part.name.name),
                            part.name.span,
                            "cyclic declaration",
                        ));
                        return None;
                    }
                }
            }
            // Apply this part's subscripts to the member's own dimensions, for each element of
            // the outer selection.
            let selection = self.subscript_selection(&part.subscripts, &member_dims, scope, loops, c)?;
            dims.extend(selection.0.iter().copied());
            if !next_vars.is_empty() {
                let picked = next_vars
                    .iter()
                    .flat_map(|member| selection.1.iter().filter_map(|&s| member.get(s)))
                    .map(|v| Target::Var(*v));
                result = Some(picked.collect());
            } else {
                current = next_insts
                    .iter()
                    .flat_map(|member| selection.1.iter().filter_map(|&s| member.get(s).copied()))
                    .collect();
            }
        }
        let targets = result.unwrap_or_else(|| current.into_iter().map(Target::Inst).collect());
        Some((dims, targets))
    }

    /// The common case of [`Self::resolve_targets`] without its selections: a reference to one
    /// variable or instance through scalar members and single array elements, like
    /// `flange_a.s` or `m[i - 1].flange_b`. `Some(None)` for anything else, and for a reference
    /// the general path reports as an error: it then resolves it again, which instantiates
    /// nothing new and adds no new expression. `None` when evaluating a subscript failed (and
    /// was reported), where the general path would have stopped too. The steps and their order
    /// are those of the general path, so that both report the same.
    fn single_target(
        &mut self,
        c: &'a ast::ComponentRef,
        instance: InstanceId,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Target>> {
        let mut current = instance;
        for (k, part) in c.parts.iter().enumerate() {
            let last = k + 1 == c.parts.len();
            let Some(member) = self.ensure_member(current, &part.name.name) else {
                return Some(None);
            };
            let element = match member {
                Member::Var(v) if last && part.subscripts.is_empty() => return Some(Some(Target::Var(v))),
                Member::Inst(i) if part.subscripts.is_empty() => Target::Inst(i),
                Member::VarArray(array) if last => match self.single_element(part, &array.dims, scope, loops)? {
                    Some(e) => Target::Var(array.elements[e]),
                    None => return Some(None),
                },
                Member::InstArray(array) => match self.single_element(part, &array.dims, scope, loops)? {
                    Some(e) => Target::Inst(array.elements[e]),
                    None => return Some(None),
                },
                _ => return Some(None),
            };
            match element {
                Target::Inst(i) if !last => current = i,
                _ => return Some(Some(element)),
            }
        }
        Some(None)
    }

    /// The flat index of the element of an array member with `dims` that `part`'s subscripts
    /// pick, when there is one subscript per dimension and each is a scalar known at compile
    /// time within bounds. `Some(None)` otherwise, `None` when evaluating a subscript failed.
    /// Evaluates the subscripts in order and stops at the first that is not such a scalar, as
    /// [`Self::subscript_selection`] does.
    fn single_element(
        &mut self,
        part: &'a ast::RefPart,
        dims: &[usize],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<usize>> {
        if part.subscripts.len() != dims.len() || dims.is_empty() {
            return Some(None);
        }
        let mut flat = 0;
        for (sub, &n) in part.subscripts.iter().zip(dims) {
            let ast::Subscript::Expr(e) = sub else {
                return Some(None);
            };
            let Value::Scalar(x, _) = self.eval(e, scope, loops)? else {
                return Some(None);
            };
            let Some(i) = self.model.exprs.literal(x).or_else(|| self.consts.eval(&self.model, x)) else {
                return Some(None);
            };
            let i = i as i64;
            if i < 1 || i as usize > n {
                return Some(None);
            }
            flat = flat * n + (i as usize - 1);
        }
        Some(Some(flat))
    }

    /// For subscripts on an array member: the resulting dimensions and the selected flat indices.
    pub(crate) fn subscript_selection(
        &mut self,
        subs: &'a [ast::Subscript],
        dims: &[usize],
        scope: Scope,
        loops: &mut Loops,
        c: &ast::ComponentRef,
    ) -> Option<(Vec<usize>, Vec<usize>)> {
        if subs.is_empty() {
            return Some((dims.to_vec(), (0..dims.iter().product::<usize>().max(1)).collect()));
        }
        if subs.len() > dims.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!(
                    "too many subscripts: `{}` has {} dimension(s)",
                    eqm_syntax::pretty::print_ref(c),
                    dims.len()
                ),
                c.span,
                "too many subscripts",
            ));
            return None;
        }
        let mut per_dim: Vec<Vec<usize>> = Vec::new();
        let mut out_dims = Vec::new();
        for (k, &n) in dims.iter().enumerate() {
            match subs.get(k) {
                None | Some(ast::Subscript::Colon(_)) => {
                    per_dim.push((0..n).collect());
                    out_dims.push(n);
                }
                Some(ast::Subscript::Expr(e)) => {
                    let v = self.eval(e, scope, loops)?;
                    let mut picked = Vec::new();
                    for &x in v.as_slice() {
                        let Some(i) = self.model.exprs.literal(x).or_else(|| self.consts.eval(&self.model, x)) else {
                            self.diagnostics.push(Diagnostic::error(
                                "E0206",
                                "subscript is not known at compile time",
                                e.span,
                                "must be a constant, parameter or loop index",
                            ));
                            return None;
                        };
                        let i = i as i64;
                        if i < 1 || i as usize > n {
                            self.diagnostics.push(Diagnostic::error(
                                "E0304",
                                format!("index {i} is out of bounds 1..{n}"),
                                e.span,
                                "out of bounds",
                            ));
                            return None;
                        }
                        picked.push(i as usize - 1);
                    }
                    if !v.dims().is_empty() {
                        out_dims.push(picked.len());
                    }
                    per_dim.push(picked);
                }
            }
        }
        let mut flat = vec![0usize];
        for (k, choices) in per_dim.iter().enumerate() {
            let stride: usize = dims[k + 1..].iter().product();
            flat = flat
                .iter()
                .flat_map(|base| choices.iter().map(move |c| base + c * stride))
                .collect();
        }
        Some((out_dims, flat))
    }

    fn eval_call(
        &mut self,
        e: &'a ast::Expr,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let name = ref_text(function);
        let Some(builtin) = Builtin::by_name(&name) else {
            if let Some(class) = self.function_class(function, scope) {
                let (_, outputs) = self.user_call(class, function, args, e.span, scope, loops)?;
                let Some(first) = outputs.into_iter().next() else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0309",
                        format!("`{name}` has no output, so its call has no value"),
                        e.span,
                        "no value",
                    ));
                    return None;
                };
                return Some(first);
            }
            let mut d = Diagnostic::error(
                "E0204",
                format!("unknown function `{name}`"),
                function.span,
                "no such function",
            );
            if let Some(s) = eqm_diag::did_you_mean(&name, eqm_ir::builtins::ALL.iter().map(|b| b.name())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diagnostics.push(d);
            return None;
        };
        let info = builtin.info();
        let n = args.positional.len();
        if !args.named.is_empty() || n < info.min_args as usize || n > info.max_args as usize {
            let expected = if info.min_args == info.max_args {
                format!("{}", info.min_args)
            } else {
                format!("{} to {}", info.min_args, info.max_args)
            };
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{name}` takes {expected} positional argument(s), found {n}{}",
                    if args.named.is_empty() { "" } else { " and named ones" }
                ),
                e.span,
                "wrong number of arguments",
            ));
            return None;
        }
        if info.kind == BuiltinKind::Array {
            return self.eval_array_builtin(e, builtin, args, scope, loops);
        }
        let mut values = Vec::with_capacity(n);
        for a in &args.positional {
            values.push(self.eval(a, scope, loops)?);
        }
        match builtin {
            Builtin::Initial | Builtin::Terminal => {
                return Some(Value::Scalar(
                    self.model.exprs.builtin(builtin, Vec::new()),
                    ScalarType::Boolean,
                ));
            }
            Builtin::Sample | Builtin::Edge | Builtin::Change => {
                let elems: Vec<ExprId> = values.iter().flat_map(|v| v.elements()).collect();
                return Some(Value::Scalar(
                    self.model.exprs.builtin(builtin, elems),
                    ScalarType::Boolean,
                ));
            }
            Builtin::Reinit | Builtin::Assert | Builtin::Terminate => {
                self.diagnostics.push(Diagnostic::error(
                    "E0310",
                    format!("`{name}` is an equation, not a value"),
                    e.span,
                    "cannot be used in an expression",
                ));
                return None;
            }
            Builtin::Min | Builtin::Max if n == 1 => {
                let elems = values[0].elements();
                let ty = values[0].ty();
                let Some((first, rest)) = elems.split_first() else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`{name}` of an empty array"),
                        e.span,
                        "no elements",
                    ));
                    return None;
                };
                let r = rest
                    .iter()
                    .fold(*first, |acc, x| self.model.exprs.builtin(builtin, vec![acc, *x]));
                return Some(Value::Scalar(r, ty));
            }
            _ => {}
        }
        for (v, a) in values.iter().zip(&args.positional) {
            if builtin != Builtin::Pre && builtin != Builtin::Smooth && builtin != Builtin::NoEvent {
                self.expect_numeric(v, a)?;
            }
        }
        let ty = match builtin {
            Builtin::Pre | Builtin::NoEvent | Builtin::Der => {
                if builtin == Builtin::Der {
                    ScalarType::Real
                } else {
                    values[0].ty()
                }
            }
            Builtin::Smooth => values[1].ty(),
            Builtin::Abs | Builtin::Min | Builtin::Max if values.iter().all(|v| v.ty() == ScalarType::Integer) => {
                ScalarType::Integer
            }
            Builtin::Integer | Builtin::Div | Builtin::Sign
                if values.iter().all(|v| v.ty() == ScalarType::Integer) || builtin == Builtin::Integer =>
            {
                ScalarType::Integer
            }
            _ => ScalarType::Real,
        };
        // Scalar functions apply element-wise to arrays (Modelica's vectorisation).
        let dims = values
            .iter()
            .map(|v| v.dims().to_vec())
            .find(|d| !d.is_empty())
            .unwrap_or_default();
        let count = dims.iter().product::<usize>().max(1);
        let mut out = Vec::with_capacity(count);
        for k in 0..count {
            let mut call_args = Vec::with_capacity(values.len());
            for v in &values {
                match v {
                    Value::Scalar(x, _) => call_args.push(*x),
                    Value::Array(d, xs, _) if *d == dims => call_args.push(xs[k]),
                    _ => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("arguments of `{name}` have different array sizes"),
                            e.span,
                            "sizes differ",
                        ));
                        return None;
                    }
                }
            }
            out.push(self.model.exprs.builtin(builtin, call_args));
        }
        Some(if dims.is_empty() {
            Value::Scalar(out[0], ty)
        } else {
            Value::Array(dims, out, ty)
        })
    }

    fn eval_array_builtin(
        &mut self,
        e: &'a ast::Expr,
        builtin: Builtin,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let a = &args.positional;
        let int = |f: &mut Self, v: i64| Value::Scalar(f.model.exprs.int(v), ScalarType::Integer);
        match builtin {
            Builtin::Size => {
                let v = self.eval(&a[0], scope, loops)?;
                let dims = v.dims().to_vec();
                if a.len() == 2 {
                    let k = self.eval_structural_int(&a[1], scope, "the dimension of `size`")?;
                    match dims.get((k - 1).max(0) as usize).filter(|_| k >= 1) {
                        Some(&n) => Some(int(self, n as i64)),
                        None => {
                            self.diagnostics.push(Diagnostic::error(
                                "E0304",
                                format!("dimension {k} does not exist"),
                                a[1].span,
                                "out of range",
                            ));
                            None
                        }
                    }
                } else {
                    let elems: Vec<ExprId> = dims.iter().map(|&n| self.model.exprs.int(n as i64)).collect();
                    Some(Value::Array(vec![elems.len()], elems, ScalarType::Integer))
                }
            }
            Builtin::Ndims => {
                let v = self.eval(&a[0], scope, loops)?;
                Some(int(self, v.dims().len() as i64))
            }
            Builtin::Sum | Builtin::Product => {
                let v = self.eval(&a[0], scope, loops)?;
                let ty = v.ty();
                let elems = v.elements();
                let op = if builtin == Builtin::Sum {
                    BinOp::Add
                } else {
                    BinOp::Mul
                };
                let r = match elems.split_first() {
                    None => {
                        if builtin == Builtin::Sum {
                            self.model.exprs.int(0)
                        } else {
                            self.model.exprs.int(1)
                        }
                    }
                    Some((first, rest)) => rest.iter().fold(*first, |acc, x| self.model.exprs.binary(op, acc, *x)),
                };
                Some(Value::Scalar(r, ty))
            }
            Builtin::Fill | Builtin::Zeros | Builtin::Ones => {
                let (fill, dim_args) = match builtin {
                    Builtin::Fill => (self.eval(&a[0], scope, loops)?, &a[1..]),
                    Builtin::Zeros => (int(self, 0), &a[..]),
                    _ => (int(self, 1), &a[..]),
                };
                let Value::Scalar(x, ty) = fill else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`fill` needs a scalar value",
                        a[0].span,
                        "array value",
                    ));
                    return None;
                };
                let mut dims = Vec::new();
                for d in dim_args {
                    dims.push(self.eval_structural_int(d, scope, "an array size")?.max(0) as usize);
                }
                let count = dims.iter().product();
                Some(Value::Array(dims, vec![x; count], ty))
            }
            Builtin::Identity => {
                let n = self.eval_structural_int(&a[0], scope, "the size of `identity`")?.max(0) as usize;
                let (zero, one) = (self.model.exprs.int(0), self.model.exprs.int(1));
                let elems = (0..n * n).map(|k| if k / n == k % n { one } else { zero }).collect();
                Some(Value::Array(vec![n, n], elems, ScalarType::Integer))
            }
            Builtin::Transpose => {
                let v = self.eval(&a[0], scope, loops)?;
                let Value::Array(d, xs, ty) = &v else { return Some(v) };
                if d.len() != 2 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`transpose` needs a matrix",
                        a[0].span,
                        "not a matrix",
                    ));
                    return None;
                }
                let (r, c) = (d[0], d[1]);
                let elems = (0..r * c).map(|k| xs[(k % r) * c + k / r]).collect();
                Some(Value::Array(vec![c, r], elems, *ty))
            }
            Builtin::Linspace => {
                let x1 = self.eval(&a[0], scope, loops)?;
                let x2 = self.eval(&a[1], scope, loops)?;
                let n = self.eval_structural_int(&a[2], scope, "the count of `linspace`")?;
                if n < 2 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`linspace` needs at least 2 points",
                        a[2].span,
                        "too few points",
                    ));
                    return None;
                }
                let (Value::Scalar(x1, _), Value::Scalar(x2, _)) = (x1, x2) else {
                    return None;
                };
                let diff = self.model.exprs.binary(BinOp::Sub, x2, x1);
                let denom = self.model.exprs.int(n - 1);
                let step = self.model.exprs.binary(BinOp::Div, diff, denom);
                let elems = (0..n)
                    .map(|k| {
                        let kk = self.model.exprs.int(k);
                        let off = self.model.exprs.binary(BinOp::Mul, kk, step);
                        self.model.exprs.binary(BinOp::Add, x1, off)
                    })
                    .collect();
                Some(Value::Array(vec![n as usize], elems, ScalarType::Real))
            }
            Builtin::Cross => {
                let x = self.eval(&a[0], scope, loops)?.elements();
                let y = self.eval(&a[1], scope, loops)?.elements();
                if x.len() != 3 || y.len() != 3 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`cross` needs two 3-vectors",
                        e.span,
                        "not 3-vectors",
                    ));
                    return None;
                }
                let mut comp = |i: usize, j: usize| {
                    let p = self.model.exprs.binary(BinOp::Mul, x[i], y[j]);
                    let q = self.model.exprs.binary(BinOp::Mul, x[j], y[i]);
                    self.model.exprs.binary(BinOp::Sub, p, q)
                };
                let elems = vec![comp(1, 2), comp(2, 0), comp(0, 1)];
                Some(Value::Array(vec![3], elems, ScalarType::Real))
            }
            _ => None,
        }
    }

    /// Evaluates an expression that must be an integer known at compile time.
    pub(crate) fn eval_structural_int(&mut self, e: &'a ast::Expr, scope: Scope, what: &str) -> Option<i64> {
        let v = self.structural(e, scope, what)?;
        if v.fract() != 0.0 {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                format!("{what} must be an integer, found {v}"),
                e.span,
                "not an integer",
            ));
            return None;
        }
        Some(v as i64)
    }

    pub(crate) fn eval_structural_bool(&mut self, e: &'a ast::Expr, scope: Scope, what: &str) -> Option<bool> {
        self.structural(e, scope, what).map(|v| v != 0.0)
    }

    fn structural(&mut self, e: &'a ast::Expr, scope: Scope, what: &str) -> Option<f64> {
        let v = self.eval(e, scope, &mut Vec::new())?;
        let Value::Scalar(x, _) = v else {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("{what} must be a scalar"),
                e.span,
                "array value",
            ));
            return None;
        };
        match self.consts.eval(&self.model, x) {
            Some(v) => Some(v),
            None => {
                let mut d = Diagnostic::error(
                    "E0206",
                    format!("{what} must be known at compile time"),
                    e.span,
                    "depends on values only known during simulation",
                );
                if let Some(var) = self.consts.blocker(&self.model, x) {
                    let v = self.model.var(var);
                    d = d.with_label(
                        v.span,
                        format!("`{}` is not a parameter or constant with a known value", v.name),
                    );
                }
                self.diagnostics.push(
                    d.with_help("use parameters or constants with bindings for sizes, ranges and such conditions"),
                );
                None
            }
        }
    }
}

/// The text of a reference as [`eqm_syntax::pretty::print_ref`] prints it, borrowed from the
/// source for a plain one-part name (most function names), which needs no printing.
fn ref_text(c: &ast::ComponentRef) -> Cow<'_, str> {
    match c.parts.as_slice() {
        [part] if !c.global && part.subscripts.is_empty() => Cow::Borrowed(&part.name.name),
        _ => Cow::Owned(eqm_syntax::pretty::print_ref(c)),
    }
}
