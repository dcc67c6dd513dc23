//! References in expressions: what a name denotes where it is used, a loop index, a local of the
//! function being flattened, variables and instances reached through members and subscripts, the
//! predefined `time`, `true` and `false`, or a constant of a package or enclosing class.
//!
//! Input: an AST component reference, its [`Scope`] and the loop indices in scope. Output: the
//! value it has, or the [`Target`]s it denotes with their array dimensions (for equations,
//! connects and assignments), instantiating members on first use; diagnostics for names that
//! denote nothing. It deliberately does not resolve class names (that is `resolve`).

use crate::constant_lookup::ConstantLookup;
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::Member;
use crate::layout::Target;
use crate::modifier::Scope;
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, Node, VarId};
use eqm_ir::flat::{InstanceId, ScalarType};
use eqm_syntax::ast;
use std::rc::Rc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Resolves a reference used as a value.
    pub(crate) fn eval_ref(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Value> {
        let first = &c.parts[0];
        if c.parts.len() == 1
            && let Some(value) = self.bound_iterator(&first.name.name, loops)
        {
            if first.subscripts.is_empty() {
                return Some(value);
            }
            // A row of a matrix iterated over, subscripted: `r[2] for r in A`.
            let (dims, picked) = self.subscript_selection(&first.subscripts, value.dims(), scope, loops, c)?;
            return Some(pick(&value, dims, &picked));
        }
        if c.parts.len() == 1
            && first.subscripts.is_empty()
            && let Some((_, v)) = loops.iter().rev().find(|(n, _)| *n == first.name.name)
        {
            return Some(Value::Scalar(self.model.exprs.int(*v), ScalarType::Integer));
        }
        if self.is_local(scope, &first.name.name) {
            return self.eval_local(c, scope, loops);
        }
        if self.uses_conditional(c, scope) {
            return None;
        }
        let visible = scope
            .instance
            .filter(|&instance| self.declared_beyond_scope(instance, scope, &first.name.name).is_none());
        // A reference to one variable (most references) is resolved once, directly.
        if let Some(instance) = visible
            && let Some(Target::Var(v)) = self.single_target(c, instance, scope, loops)?
        {
            return Some(Value::Scalar(self.model.exprs.var(v), self.model.var(v).ty));
        }
        if let Some(instance) = visible
            && self.member(instance, &first.name.name).is_some()
        {
            if c.parts.len() == 1
                && !first.subscripts.is_empty()
                && let Some(v) = self.dynamic_selection(c, instance, scope, loops)
            {
                return Some(v);
            }
            let (dims, targets) = self.resolve_targets(c, scope, loops)?;
            // A record instance read as a whole.
            if let ([Target::Inst(i)], true) = (targets.as_slice(), dims.is_empty())
                && self.is_record(self.instances[i.0 as usize].class)
            {
                return self.record_value(*i, c);
            }
            // An array of record instances read as a whole.
            if !dims.is_empty()
                && let Some(Target::Inst(i)) = targets.first()
                && self.is_record(self.instances[i.0 as usize].class)
            {
                let mut records = Vec::with_capacity(targets.len());
                for t in &targets {
                    let Target::Inst(i) = *t else { return None };
                    records.push(self.record_value(i, c)?);
                }
                return Some(Value::Records(dims, records.into()));
            }
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
            // `time` is a variable of models and blocks (Modelica 3.6.7): a record or connector
            // is a value that holds no time of its own. A function reading `time` is EQM's
            // extension (the system-dynamics functions of time, `STEP`, `RAMP`, `PULSE`):
            // it reads the time of the evaluation that calls it.
            let kind = self.table.get(scope.class).def.kind;
            if kind.is_record() || kind.is_connector() {
                self.diagnostics.push(Diagnostic::error(
                    "E0205",
                    "`time` is only available in models, blocks and functions, not in a record or connector",
                    c.span,
                    "not available here",
                ));
                return None;
            }
            return Some(Value::Scalar(self.model.exprs.add(Node::Time), ScalarType::Real));
        }
        if c.parts.len() == 1 && matches!(first.name.name.as_str(), "true" | "false") {
            return Some(Value::Scalar(
                self.model.exprs.boolean(first.name.name == "true"),
                ScalarType::Boolean,
            ));
        }
        if let Some(v) = self.enumeration_value(c, scope) {
            return v;
        }
        if let Some(v) = self.package_constant(c, scope, loops) {
            return v;
        }
        self.unknown_name(c, scope, loops);
        None
    }

    /// `getInstanceName()`: the name of the model being flattened (the last part of its class
    /// name) followed by the path of the instance the call is written in, such as
    /// `Vehicle.engine.controller`; the model's name alone in the model itself and where no
    /// instance encloses the call (in a function, where Modelica leaves the value open).
    pub(crate) fn instance_name(&mut self, e: &ast::Expr, args: &ast::CallArgs, scope: Scope) -> Option<Value> {
        if !args.positional.is_empty() || !args.named.is_empty() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                "`getInstanceName` takes no arguments",
                e.span,
                "wrong arguments",
            ));
            return None;
        }
        let model = last_name_part(&self.model.instances[0].class_name);
        let path = match scope.instance {
            Some(i) => self.model.instances[i.0 as usize].name.as_str(),
            None => "",
        };
        let text = if path.is_empty() {
            model.to_string()
        } else {
            format!("{model}.{path}")
        };
        Some(Value::Str(eqm_ir::flat::Message::literal(text)))
    }

    fn unknown_name(&mut self, c: &ast::ComponentRef, scope: Scope, loops: &Loops) {
        if scope
            .instance
            .is_some_and(|i| self.instances[i.0 as usize].layout.incomplete)
        {
            return;
        }
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
        if let Some(instance) = scope.instance
            && let Some(declared_in) = self.declared_beyond_scope(instance, scope, name)
        {
            let written_in = &self.table.get(scope.class).full_name;
            let declared_in = &self.table.get(declared_in).full_name;
            d = Diagnostic::error(
                "E0205",
                format!("unknown variable `{name}` in `{written_in}`: `{name}` is declared in `{declared_in}`, which extends it"),
                c.parts[0].name.span,
                "not declared in this class",
            )
            .with_help(format!(
                "the equations and bindings of a base class see only the base class's elements: declare `{name}` in `{written_in}` (and modify it in `{declared_in}`), or write the use in `{declared_in}`"
            ));
        }
        self.diagnostics.push(d);
    }

    /// The class that declares `name` when it is an element of `instance` that the class the
    /// reference is written in cannot see: an element that a class extending it declares
    /// (Modelica 5.6.1, 7.1: the
    /// contents of a base class are looked up in the base class, where the derived class's
    /// own elements do not exist). Such a reference looks further, to an enclosing class's
    /// constant, or is unknown. Only asked where the reference is written in a base class of
    /// the instance's class, so a class's own references cost one comparison.
    pub(crate) fn declared_beyond_scope(&mut self, instance: InstanceId, scope: Scope, name: &str) -> Option<ClassId> {
        let state = &self.instances[instance.0 as usize];
        if state.class == scope.class || !state.layout.classes.contains(&scope.class) {
            return None;
        }
        let declared_in = state.layout.elements[state.layout.index(name)?].class;
        (declared_in != scope.class && self.layout(scope.class).index(name).is_none()).then_some(declared_in)
    }

    /// A constant declared in a package or enclosing class (`Constants.pi`, or `pi` inside it).
    fn package_constant(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Option<Value>> {
        let (class, name) = if c.parts.len() == 1 {
            match self.enclosing_constant(&c.parts[0].name, scope) {
                ConstantLookup::Found(class, name) => (class, name),
                ConstantLookup::NotFound => return None,
                ConstantLookup::Refused => return Some(None),
            }
        } else {
            let parts = &c.parts[..c.parts.len() - 1];
            let name = ast::Name {
                global: c.global,
                parts: parts.iter().map(|p| p.name.clone()).collect(),
                span: c.span,
            };
            let class = match self.lookup_class(scope, &name) {
                Ok((crate::resolve::TypeRef::Class(cls), _)) => cls,
                _ => return None,
            };
            let last = &c.parts.last()?.name;
            if self.table.is_partial(class) {
                self.constant_of_partial_class(class, &name);
                return Some(None);
            }
            let key = (class, last.name.clone());
            let protected = match self.caches.protected_constants.get(&key) {
                Some(&known) => known,
                None => {
                    let found = self.find_constant(class, &last.name).is_some_and(|f| f.protected);
                    self.caches.protected_constants.insert(key, found);
                    found
                }
            };
            if protected {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0205",
                        format!(
                            "`{}` is protected in `{}`: it cannot be named with a dot",
                            last.name,
                            self.table.get(class).full_name
                        ),
                        last.span,
                        "protected element",
                    )
                    .with_help("a protected element is named by its simple name only, inside its class and the classes extending it"),
                );
                return Some(None);
            }
            if !self.table.satisfies_package(class) {
                self.constant_of_non_package(class, last);
                return Some(None);
            }
            (class, last.name.as_str())
        };
        let key = (class, name.to_string());
        if let Some(v) = self.caches.package_constants.get(&key) {
            // The cache holds the whole constant; its subscripts are this reference's.
            return Some(
                v.clone()
                    .and_then(|whole| self.subscripted_constant(whole, c, scope, loops)),
            );
        }
        let Some(found) = self.find_constant(class, name) else {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!("`{}` has no constant `{name}`", self.table.get(class).full_name),
                c.span,
                "not found",
            ));
            return Some(None);
        };
        self.caches.package_constants.insert(key.clone(), None);
        // An inherited binding reads the constants of the package asked for, not those of the
        // base that declares it (`nS` in `extends PartialMedium(substanceNames = {"a", "b"})`).
        let value = match found.binding {
            Some(binding) => self.with_view(found.scope, if found.inherited { class } else { found.scope }, |f| {
                f.eval(
                    binding,
                    Scope {
                        instance: None,
                        class: found.scope,
                    },
                    loops,
                )
            }),
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!("constant `{name}` has no value"),
                    found.decl.name.span,
                    "a constant needs a binding",
                ));
                None
            }
        };
        self.caches.package_constants.insert(key, value.clone());
        Some(value.and_then(|whole| self.subscripted_constant(whole, c, scope, loops)))
    }

    /// Reports E0214 for a constant looked up inside the partial class `class`, named `name`
    /// (Modelica 5.3.2: the class a name is looked up inside shall not be partial in a model
    /// to simulate; a replaceable package is redeclared with one that is not).
    fn constant_of_partial_class(&mut self, class: crate::resolve::ClassId, name: &ast::Name) {
        let full_name = &self.table.get(class).full_name;
        self.diagnostics.push(
            Diagnostic::error(
                "E0214",
                format!("`{full_name}` is partial: a constant cannot be looked up inside it"),
                name.span,
                "partial class",
            )
            .with_help("use a class that is not partial, or redeclare the replaceable package with one"),
        );
    }

    /// The enumeration type and position of the literal that an import of `class` makes visible
    /// as `ident`: `import P.Mode.Heating;`, `import H = P.Mode.Heating;` or
    /// `import P.Mode.{Off, Heating};`.
    pub(crate) fn imported_literal(&self, class: crate::resolve::ClassId, ident: &str) -> Option<usize> {
        self.imported_elements(class, ident)
            .into_iter()
            .find_map(|(enumeration, name)| {
                let literals = self.table.get(enumeration).enumeration()?;
                literals.iter().position(|l| l.name.name == name)
            })
    }

    /// Every (class, element name) that an import of `class` could make visible as `ident`,
    /// in the order of the imports; whether the class has such an element is the caller's
    /// question.
    pub(crate) fn imported_elements<'n>(
        &self,
        class: crate::resolve::ClassId,
        ident: &'n str,
    ) -> Vec<(crate::resolve::ClassId, &'n str)>
    where
        'a: 'n,
    {
        let table = self.table;
        let package_of = |parts: &[ast::Ident]| table.resolve_path(parts.iter().map(|p| p.name.as_str()));
        let mut found = Vec::new();
        for import in crate::resolve::by_import_priority(table.get(class).imports()) {
            let element = match &import.kind {
                ast::ImportKind::Qualified(n)
                    if n.parts.len() > 1 && n.parts.last().is_some_and(|p| p.name == ident) =>
                {
                    package_of(&n.parts[..n.parts.len() - 1]).map(|p| (p, ident))
                }
                ast::ImportKind::Renamed { alias, name } if alias.name == ident && name.parts.len() > 1 => {
                    let Some(last) = name.parts.last() else { continue };
                    package_of(&name.parts[..name.parts.len() - 1]).map(|p| (p, last.name.as_str()))
                }
                ast::ImportKind::Unqualified(n) => package_of(&n.parts).map(|p| (p, ident)),
                ast::ImportKind::Multiple { package, names } if names.iter().any(|n| n.name == ident) => {
                    package_of(&package.parts).map(|p| (p, ident))
                }
                _ => None,
            };
            found.extend(element);
        }
        found
    }

    /// The declaration of the constant or parameter `name` that `class` itself declares, and
    /// whether it is protected.
    pub(crate) fn find_constant_decl(
        &self,
        class: crate::resolve::ClassId,
        name: &str,
    ) -> Option<(&'a ast::ComponentDecl, bool)> {
        let (clause, decl, protected) = self.own_component(class, name)?;
        matches!(
            clause.prefixes.variability,
            ast::Variability::Constant | ast::Variability::Parameter
        )
        .then_some((decl, protected))
    }

    /// The declaration of the component `name` that `class` itself declares (not one it
    /// inherits), its clause, and whether it is protected.
    pub(crate) fn own_component(
        &self,
        class: crate::resolve::ClassId,
        name: &str,
    ) -> Option<(&'a ast::ComponentClause, &'a ast::ComponentDecl, bool)> {
        self.table.get(class).elements().find_map(|(e, visibility)| match e {
            ast::Element::Component(clause) => clause
                .components
                .iter()
                .find(|d| d.name.name == name)
                .map(|d| (clause, d, visibility == ast::Visibility::Protected)),
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
        if self
            .declared_beyond_scope(instance, scope, &c.parts[0].name.name)
            .is_some()
        {
            self.unknown_name(c, scope, loops);
            return None;
        }
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
                if k > 0 && self.protected_through_component(*inst, part) {
                    return None;
                }
                let through = k + 1 < c.parts.len();
                let member = if through {
                    self.reach_member(*inst, &part.name.name)
                } else {
                    self.ensure_member(*inst, &part.name.name)
                };
                let Some(member) = member else {
                    if k == 0 {
                        self.unknown_name(c, scope, loops);
                    } else if !self.instances[inst.0 as usize].layout.incomplete {
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
                    Member::Function(_) => {
                        self.diagnostics.push(
                            Diagnostic::error(
                                "E0306",
                                format!("`{}` is a functional parameter, not a value", part.name.name),
                                part.name.span,
                                "a function",
                            )
                            .with_help(format!("call it: `{}(x)`", part.name.name)),
                        );
                        return None;
                    }
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
                        let cycle = self.declaration_cycle(*inst, &part.name.name);
                        self.diagnostics.push(Diagnostic::error(
                            "E0216",
                            format!(
                                "`{}` depends on itself through its declaration: {cycle}",
                                part.name.name
                            ),
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

    /// E0205, and true, when `part` names a protected element of `instance` through the
    /// component (`a.x` with `x` protected in `a`'s class): Modelica names protected elements
    /// only by their simple names, inside the class and the classes extending it.
    fn protected_through_component(&mut self, instance: InstanceId, part: &ast::RefPart) -> bool {
        if !self.instances[instance.0 as usize].layout.is_protected(&part.name.name) {
            return false;
        }
        let class = self.model.instances[instance.0 as usize].class_name.clone();
        self.diagnostics.push(Diagnostic::error(
            "E0205",
            format!(
                "`{}` is protected in `{class}`: it cannot be named through a component",
                part.name.name
            ),
            part.name.span,
            "protected element",
        ));
        true
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
            if k > 0 && self.protected_through_component(current, part) {
                return None;
            }
            let member = if last {
                self.ensure_member(current, &part.name.name)
            } else {
                self.reach_member(current, &part.name.name)
            };
            let Some(member) = member else {
                return Some(None);
            };
            let element = match member {
                Member::Var(v) if last && part.subscripts.is_empty() => return Some(Some(Target::Var(v))),
                Member::Inst(i) if part.subscripts.is_empty() => Target::Inst(i),
                Member::VarArray(_) if last && !self.subscripts_fit_dimensions(current, part) => return None,
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
            let Value::Scalar(x, _) = self.eval_subscript(e, n, scope, loops)? else {
                return Some(None);
            };
            let Some(i) = self.known_value(x) else {
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

    /// `value` (a call's result) subscripted: `f(x)[2]`.
    pub(crate) fn subscripted(
        &mut self,
        value: Value,
        subscripts: &'a [ast::Subscript],
        e: &ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let c = ast::ComponentRef {
            global: false,
            parts: Vec::new(),
            span: e.span,
        };
        let (dims, picked) = self.subscript_selection(subscripts, value.dims(), scope, loops, &c)?;
        Some(pick(&value, dims, &picked))
    }

    /// Evaluates the subscript `e` of a dimension of size `n`, in which `end` stands for `n`.
    pub(crate) fn eval_subscript(
        &mut self,
        e: &'a ast::Expr,
        n: usize,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        self.context.end_sizes.push(n);
        let v = self.eval(e, scope, loops);
        self.context.end_sizes.pop();
        Some(self.boolean_positions(v?))
    }

    /// A Boolean subscript (of a dimension of `Boolean` size) as the Integer position it picks:
    /// `false` is 1 and `true` 2, also for a value known only during the run
    /// (`if b then 2 else 1`). Any other value as it is.
    fn boolean_positions(&mut self, v: Value) -> Value {
        if v.ty() != ScalarType::Boolean {
            return v;
        }
        let exprs = &mut self.model.exprs;
        let (one, two) = (exprs.int(1), exprs.int(2));
        let position = |exprs: &mut eqm_ir::expr::ExprArena, x: ExprId| match exprs.literal(x) {
            Some(b) => exprs.int(i64::from(b != 0.0) + 1),
            None => exprs.add(Node::If(x, two, one)),
        };
        match v {
            Value::Scalar(x, _) => Value::Scalar(position(exprs, x), ScalarType::Integer),
            Value::Array(dims, xs, _) => {
                let positions = xs.into_iter().map(|x| position(exprs, x)).collect();
                Value::Array(dims, positions, ScalarType::Integer)
            }
            other => other,
        }
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
            return Some((dims.to_vec(), (0..dims.iter().product::<usize>()).collect()));
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
                    let v = self.eval_subscript(e, n, scope, loops)?;
                    let mut picked = Vec::new();
                    for &x in v.as_slice() {
                        let Some(i) = self.known_value(x) else {
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

    /// The value of a subscript known at compile time: a literal, or an expression of constants
    /// and parameters with known values.
    pub(crate) fn known_value(&mut self, x: ExprId) -> Option<f64> {
        self.model.exprs.literal(x).or_else(|| {
            let value = self.consts.eval(&self.model, x);
            if value.is_some() {
                self.note_structural(x);
            }
            value
        })
    }
}

/// The elements `picked` (flat indices) of `value` as a value of `dims`.
fn pick(value: &Value, dims: Vec<usize>, picked: &[usize]) -> Value {
    let elements = value.as_slice();
    let selected: Vec<ExprId> = picked.iter().map(|&k| elements[k]).collect();
    match dims.as_slice() {
        [] => Value::Scalar(selected[0], value.ty()),
        _ => Value::Array(dims, selected, value.ty()),
    }
}

/// The last part of a dotted class name (`Vehicle` of `MyLib.Vehicle`), where a dot inside a
/// quoted identifier (`'a.b'`) separates nothing.
fn last_name_part(name: &str) -> &str {
    let mut quoted = false;
    let mut start = 0;
    for (k, c) in name.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '.' if !quoted => start = k + 1,
            _ => {}
        }
    }
    &name[start..]
}

/// The text of a reference as [`eqm_syntax::pretty::print_ref`] prints it, borrowed from the
/// source for a plain one-part name (most function names), which needs no printing.
pub(crate) fn ref_text(c: &ast::ComponentRef) -> std::borrow::Cow<'_, str> {
    match c.parts.as_slice() {
        [part] if !c.global && part.subscripts.is_empty() => std::borrow::Cow::Borrowed(&part.name.name),
        _ => std::borrow::Cow::Owned(eqm_syntax::pretty::print_ref(c)),
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether reference `c` names a conditional component of the instance it is written in,
    /// which may only be modified or connected (Modelica 4.4.5): read or assigned, it would make
    /// the equations depend on whether it is present. Reports E0215 then, except in a branch of
    /// an if-equation chosen at translation.
    pub(crate) fn uses_conditional(&mut self, c: &ast::ComponentRef, scope: Scope) -> bool {
        let first = &c.parts[0].name;
        let Some(instance) = scope.instance else {
            return false;
        };
        // EQM lets the equations of a branch chosen at translation read a conditional
        // component (`if useHeatPort then T = heatPort.T;`): present exactly when its
        // condition holds, the branch is the component's own equations.
        if self.chosen_branches > 0 {
            return false;
        }
        if !self.is_conditional_element(instance, &first.name) {
            return false;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0215",
            format!(
                "`{}` is a conditional component: it can only be modified or connected, not used in an expression",
                first.name
            ),
            first.span,
            "conditional component",
        ));
        true
    }
}
