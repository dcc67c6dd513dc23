//! Component instantiation: what a declared element becomes, a variable, an instance of a class
//! (instantiated with its own elements and equations), or an array of either.
//!
//! Input: an instance and one element of its class layout, with the modifiers that reach it (from
//! the enclosing instance, the `extends` clause, the declaration and the type, in Modelica's
//! precedence). Output: the element's [`Member`], its variables created through `variables` and
//! its instances instantiated recursively, the type of its declaration resolved through short
//! class definitions. It deliberately does not apply attributes or bindings to variables (that
//! is `variables`) and does not flatten equations (that is `equations`).

use crate::flattener::Flattener;
use crate::layout::ResolvedType;
use crate::layout::{ArrayMember, ElementDecl, Member};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use crate::value;
use crate::variables::VarSpec;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{self, InstanceId};
use eqm_syntax::ast;
use std::rc::Rc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Instantiates every element of `instance`, then its equations.
    pub(crate) fn instantiate(&mut self, instance: InstanceId) {
        let parent = self.model.instances[instance.0 as usize].parent;
        let class = self.instances[instance.0 as usize].class;
        let chain = match self.caches.instantiating.last() {
            None => parent.is_none(),
            Some(&(below, chain)) => chain && parent == Some(below),
        };
        self.caches.instantiating.push((instance, chain));
        self.caches
            .instantiating_by_class
            .entry(class)
            .or_default()
            .push(instance);
        self.instantiate_contents(instance);
        self.caches.instantiating.pop();
        if let Some(list) = self.caches.instantiating_by_class.get_mut(&class) {
            list.pop();
        }
    }

    /// The work of [`Self::instantiate`].
    fn instantiate_contents(&mut self, instance: InstanceId) {
        let layout = self.instances[instance.0 as usize].layout.clone();
        self.check_modifier_targets(instance);
        for k in 0..layout.elements.len() {
            // Past a limit of the whole model, or at an unread library class, nothing more is
            // built (see `Flattener::stopped`).
            if self.stopped() {
                return;
            }
            self.ensure_member_at(instance, k);
        }
        if self.stopped() {
            return;
        }
        // Every member is instantiated now; the modifier is not needed again.
        self.instances[instance.0 as usize].modifier = None;
        for eq in &layout.equations {
            let scope = Scope {
                instance: Some(instance),
                class: eq.class,
            };
            let outer = std::mem::replace(&mut self.connections.graph.nested_may_wait, eq.builds_and_asks_graph);
            self.flatten_equation(eq.equation, scope, &mut Vec::new(), eq.initial);
            self.connections.graph.nested_may_wait = outer;
        }
        if !layout.counting_equations.is_empty() {
            self.connections.connector_uses.get_or_insert_default();
            for &(eq, class, initial) in &layout.counting_equations {
                let scope = Scope {
                    instance: Some(instance),
                    class,
                };
                let late = crate::connections::LateEquation {
                    equation: eq,
                    scope,
                    initial,
                    loops: Vec::new(),
                };
                self.connections.counting_equations.push(late);
            }
        }
        for &(eq, class) in &layout.invariants {
            let scope = Scope {
                instance: Some(instance),
                class,
            };
            self.flatten_invariant(eq, scope);
        }
        for &(statements, class, initial, span) in &layout.algorithms {
            let scope = Scope {
                instance: Some(instance),
                class,
            };
            self.flatten_algorithm(statements, scope, initial, span);
        }
    }

    pub(crate) fn resolve_type(
        &mut self,
        scope_class: ClassId,
        name: &'a ast::Name,
        depth: usize,
    ) -> Option<Rc<ResolvedType<'a>>> {
        let key = (scope_class, name as *const ast::Name);
        if let Some(known) = self.caches.types.get(&key) {
            return known.clone();
        }
        let resolved = self.resolve_type_uncached(scope_class, name, depth).map(Rc::new);
        self.caches.types.insert(key, resolved.clone());
        resolved
    }

    fn resolve_type_uncached(
        &mut self,
        scope_class: ClassId,
        name: &'a ast::Name,
        depth: usize,
    ) -> Option<ResolvedType<'a>> {
        let target = match self.table.lookup(scope_class, name) {
            Ok(t) => t,
            Err(_) => {
                self.unknown_class(scope_class, name);
                return None;
            }
        };
        self.resolve_target(target, name, depth)
    }

    /// The type of a component declared with the class name `name` in `scope`: the cached
    /// [`Self::resolve_type`], unless the name's first part is a replaceable class redeclared
    /// around `scope` (then the redeclared class, with the redeclaration's modifiers first).
    pub(crate) fn component_type(&mut self, scope: Scope, name: &'a ast::Name) -> Option<Rc<ResolvedType<'a>>> {
        let errors = self.diagnostics.len();
        match self.redirected(scope, name, 0) {
            None => self.resolve_type(scope.class, name, 0),
            Some(Ok((target, modifier))) => {
                let mut resolved = self.resolve_target(target, name, 0)?;
                resolved.modifier = modifier.merge_owned(resolved.modifier);
                Some(Rc::new(resolved))
            }
            Some(Err(_)) => {
                if self.diagnostics.len() == errors {
                    self.unknown_class(scope.class, name);
                }
                None
            }
        }
    }

    /// The type `name` denotes once looked up as `target`, following short class definitions.
    fn resolve_target(&mut self, target: TypeRef, name: &'a ast::Name, depth: usize) -> Option<ResolvedType<'a>> {
        let mut resolved = ResolvedType {
            target,
            modifier: Modifier::default(),
            prefixes: ast::TypePrefix::default(),
            dims: Vec::new(),
            is_connector: false,
            class_name: eqm_syntax::pretty::name_text(name),
            enumeration: None,
            external_object: None,
        };
        if let TypeRef::Class(c) = target {
            let entry = self.table.get(c);
            resolved.class_name = entry.full_name.clone();
            if self.is_external_object(c) {
                // An external object is a parameter holding the handle its constructor returns
                // (a C pointer's bits in a double), created once before the initialization.
                resolved.target = TypeRef::Builtin(eqm_ir::flat::ScalarType::Real);
                resolved.prefixes.variability = ast::Variability::Parameter;
                resolved.external_object = Some(c);
                return Some(resolved);
            }
            if let ast::ClassBody::Enumeration { literals, open, .. } = &entry.def.body {
                if *open {
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        format!(
                            "`{}` is an unspecified enumeration `enumeration(:)`, which EQM does not support yet",
                            entry.full_name
                        ),
                        name.span,
                        "not supported",
                    ));
                    return None;
                }
                if !self.enumeration_literals_valid(literals) {
                    return None;
                }
                // An enumeration's values are its literals' positions, Integers from 1.
                resolved.target = TypeRef::Builtin(eqm_ir::flat::ScalarType::Integer);
                resolved.enumeration = Some(literals);
                return Some(resolved);
            }
            resolved.is_connector = entry.def.kind.is_connector();
            if let Some(mut predefined) = self.long_form_predefined_type(c, depth) {
                predefined.class_name = resolved.class_name;
                predefined.is_connector |= resolved.is_connector;
                return Some(predefined);
            }
            if let ast::ClassBody::Short {
                prefixes,
                base,
                dims,
                modification,
                ..
            } = &entry.def.body
                // A chain of short definitions without a cycle names each class at most once,
                // so one longer than the table is a cycle; its last class is then taken as it
                // is, and collecting its layout reports the cycle (E0212).
                && depth < self.table.classes.len()
            {
                let parent = entry.parent.unwrap_or(c);
                // A short definition of a builtin, an enumeration or another short class is
                // followed, so that it has the attributes of the type it ends at (`connector
                // DigitalSignal = Logic` has those of the enumeration `Logic`); one of a long
                // class stays the class itself (its body is collected like an extends), unless
                // the definition adds dimensions (`type Color = TypeInteger[3]`): the base class
                // is then the element type of an array, which only following it can give.
                let base_type = self.table.lookup(parent, base).ok();
                let follows = !dims.is_empty()
                    || match base_type {
                        Some(TypeRef::Builtin(_)) => true,
                        // A long `type` extends a predefined type (`type ReferenceAngle
                        // extends Angle; function equalityConstraint ... end ReferenceAngle;`),
                        // so a short definition of it is a scalar too.
                        Some(TypeRef::Class(b)) => {
                            let def = self.table.get(b).def;
                            def.kind == ast::ClassKind::Type
                                || matches!(
                                    def.body,
                                    ast::ClassBody::Short { .. } | ast::ClassBody::Enumeration { .. }
                                )
                        }
                        None => true,
                    };
                if follows {
                    let base_resolved = self.resolve_type(parent, base, depth + 1)?;
                    let mut inner = ResolvedType::clone(&base_resolved);
                    let scope = Scope {
                        instance: None,
                        class: parent,
                    };
                    if let Some(m) = modification {
                        inner.modifier = Modifier::from_class_modification(m, scope).merge(&inner.modifier);
                    }
                    inner.prefixes = merge_prefixes(*prefixes, inner.prefixes);
                    let mut all_dims: Vec<&'a ast::Subscript> = dims.iter().collect();
                    all_dims.extend(inner.dims);
                    inner.dims = all_dims;
                    inner.is_connector |= resolved.is_connector;
                    inner.class_name = resolved.class_name;
                    return Some(inner);
                }
                // A short definition that stays the class still gives its components its
                // prefixes (`connector ComplexInput = input Complex`).
                resolved.prefixes = *prefixes;
            }
        }
        Some(resolved)
    }

    /// The member a declared element becomes in `instance`: variables, instances, a functional
    /// parameter, or `Absent`/`Failed`. `slot` is the member's place in `members`, where the
    /// instances of a class member are published before their contents are made.
    pub(crate) fn instantiate_element(
        &mut self,
        instance: InstanceId,
        element: &ElementDecl<'a>,
        slot: usize,
    ) -> Member {
        if element.clause.outer && !self.outer_unmodified(instance, element) {
            return Member::Failed;
        }
        if element.clause.outer
            && !std::mem::take(&mut self.automatic_inner_next)
            && let Some(member) = self.outer_element(instance, element)
        {
            return self.inner_checked(instance, element, member);
        }
        let Some(declared) = self.declaration_of(instance, element) else {
            return Member::Failed;
        };
        let DeclaredElement {
            clause,
            decl,
            resolved,
            modifier,
            condition,
            dims_from,
            declared_prefixes,
        } = declared;
        if !self.component_depth_allowed(instance, decl.name.span) {
            return Member::Failed;
        }
        if let Some((condition, condition_scope)) = condition {
            match self.eval_structural_bool(condition, condition_scope, "the condition of a conditional component") {
                Some(false) => return Member::Absent,
                Some(true) => {}
                None => return Member::Failed,
            }
        }
        if self.sized_by_connects(instance, dims_from, &modifier) {
            let name = decl.name.name.clone();
            self.expandable.unsized_members.insert((instance, name));
            return Member::Absent;
        }
        let Some(dims) = self.element_dims(dims_from, decl, &resolved, &modifier) else {
            return Member::Failed;
        };
        // `size(x, k)` in x's own binding reads these sizes while x is being made (from the
        // check that the binding fits on).
        self.declaring.push((instance, decl.name.name.as_str(), dims.clone()));
        if !self.binding_fits(&modifier, &dims, decl) {
            return self.failed_declaration();
        }
        let prefixes = merge_prefixes(declared_prefixes, resolved.prefixes);
        if !self.connection_prefix_allowed(instance, prefixes.connection, resolved.target, decl.name.span)
            || !self.type_prefixes_allowed(instance, prefixes, &resolved, decl.name.span)
        {
            return self.failed_declaration();
        }
        let parent_state = &self.instances[instance.0 as usize];
        let variability = combine_variability(parent_state.variability, prefixes.variability);
        let causality = match prefixes.causality {
            ast::Causality::Input => flat::Causality::Input,
            ast::Causality::Output => flat::Causality::Output,
            ast::Causality::None => parent_state.causality,
        };
        let parent_name = &self.model.instances[instance.0 as usize].name;
        let mut base_name = String::with_capacity(parent_name.len() + 1 + decl.name.name.len());
        if !parent_name.is_empty() {
            base_name.push_str(parent_name);
            base_name.push('.');
        }
        base_name.push_str(&decl.name.name);
        let Some(total) = self.check_array_size(&dims, decl.name.span, &format!("`{}`", decl.name.name)) else {
            return self.failed_declaration();
        };
        // A scalar component is its only element and takes the modifier and name as they are,
        // without copying them; an array's elements each get their own.
        let elements = if dims.is_empty() {
            Elements {
                scalar: Some((modifier, base_name)),
                modifier: Modifier::default(),
                base_name: String::new(),
                dims,
                total,
            }
        } else {
            Elements {
                scalar: None,
                modifier,
                base_name,
                dims,
                total,
            }
        };
        let kinds = Kinds {
            variability,
            causality,
            connection: self.instances[instance.0 as usize].connection_of_element(prefixes.connection),
        };
        let member = match resolved.target {
            TypeRef::Builtin(ty) => self.builtin_member(instance, decl, &resolved, ty, kinds, elements),
            TypeRef::Class(class) if self.table.get(class).def.kind.is_function() => {
                if !elements.dims.is_empty() {
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        "an array of functional parameters is not supported",
                        decl.name.span,
                        "an array of functions",
                    ));
                    return self.failed_declaration();
                }
                let Some((m, path)) = elements.scalar else {
                    return self.failed_declaration();
                };
                self.functional_parameter(class, &path, &decl.name, m.binding.as_ref())
            }
            TypeRef::Class(class) => {
                let parts = (clause, decl, &*resolved);
                self.class_member(instance, parts, class, kinds, elements, slot)
            }
        };
        self.declaring.pop();
        member
    }

    /// A component that could not be made: no longer being declared.
    fn failed_declaration(&mut self) -> Member {
        self.declaring.pop();
        Member::Failed
    }

    /// The declaration an element stands for in `instance` after redeclarations, with its
    /// resolved type and its modifier merged in Modelica's order; `None` after a reported error.
    pub(crate) fn declaration_of(
        &mut self,
        instance: InstanceId,
        element: &ElementDecl<'a>,
    ) -> Option<DeclaredElement<'a>> {
        let (clause, decl) = (element.clause, element.decl);
        let scope = Scope {
            instance: Some(instance),
            class: element.class,
        };
        // Modelica precedence: the enclosing instance's modifier, then the extends clause's,
        // then the declaration's own, then the type's.
        let (mut outer, _) = match &self.instances[instance.0 as usize].modifier {
            Some(m) => m.child(&decl.name.name),
            None => Default::default(),
        };
        let (from_extends, _) = element.extends_modifier.child(&decl.name.name);
        if !self.final_respected(element, &outer, &from_extends) || !self.protected_respected(element, &outer) {
            return None;
        }
        let mut from_extends = from_extends.in_instance(&|class| self.instance_holding(instance, class));
        // A redeclaration from outside (`Board b(redeclare Capacitor load)`) replaces the
        // declaration; so does one in a derived class (the layout's element, with its
        // `original`). The replaced declaration keeps its condition, and its prefixes and
        // dimensions where the new one has none.
        let redeclared = crate::modifier::Redeclare::over(outer.redeclare.take(), from_extends.redeclare.take());
        // The declaration a redeclaration replaces gives the constraint and its modifiers: the
        // redeclaration before it, if an inner modifier made one with its own `constrainedby`
        // clause. One without keeps the constraint of the declaration it replaced (Modelica
        // 7.3.2), so `redeclare replaceable IdealSensor sensor` may be redeclared again as any
        // subtype of the original declaration's constraint, not only of `IdealSensor`.
        let mut replaced = None;
        let (clause, decl, type_scope, original) = match redeclared.map(|r| (r, r.element)) {
            Some((r, ast::RedeclaredElement::Component(new_clause))) => {
                if !self.check_redeclarable((clause, decl, scope), (new_clause, r.scope), r.span) {
                    return None;
                }
                let original = crate::layout::Original {
                    clause,
                    decl,
                    class: element.class,
                };
                if let Some((ast::RedeclaredElement::Component(before), before_scope)) = r.replaces {
                    if !self.check_redeclared_again(before, r.span) {
                        return None;
                    }
                    if before.redeclarable.constraint.is_some() {
                        replaced = Some(crate::layout::Original {
                            clause: before,
                            decl: &before.components[0],
                            class: before_scope.class,
                        });
                    }
                }
                (new_clause, &new_clause.components[0], r.scope, Some(original))
            }
            // A class redeclaration named like a component redeclares no class: reported with
            // the instance's modifier (E0221).
            Some((_, ast::RedeclaredElement::Class(_))) => return None,
            None => (clause, decl, scope, element.original),
        };
        let replaced = replaced.or(original);
        let resolved = self.component_type(type_scope, &clause.type_name)?;
        if let Some(original) = replaced
            && let Some(constraint) = self.component_constraint(original, instance)
            && !self.check_subtype(resolved.target, constraint, decl.name.span)
        {
            return None;
        }
        if !self.own_constraint_respected(instance, (clause, decl, type_scope), resolved.target, replaced) {
            return None;
        }
        let own = decl
            .modification
            .as_ref()
            .map(|m| Modifier::from_ast(m, type_scope))
            .unwrap_or_default();
        // A binding of a whole record from outside (`x5 = x3` in an extends clause or an
        // instance's modifier) gives every field its value: the declaration's own values of
        // fields (`C1 x5(a = 5)`) give way to it, as outer modifiers win.
        let own = match resolved.target {
            TypeRef::Class(c) if (outer.binding.is_some() || from_extends.binding.is_some()) && self.is_record(c) => {
                own.without_field_values()
            }
            _ => own,
        };
        // A declaration written for an earlier version of a library names the elements its
        // classes had then.
        let own = match resolved.target {
            TypeRef::Class(class) if !self.table.conversions.is_empty() => {
                let table = self.table;
                own.converted(|old| table.converted_element(type_scope.class, class, old))
            }
            _ => own,
        };
        // The replaced declaration's parts are evaluated where it was written.
        let original_scope = original.map(|o| Scope {
            instance: Some(instance),
            class: o.class,
        });
        let carried = replaced.map(|o| {
            let scope = Scope {
                instance: Some(instance),
                class: o.class,
            };
            crate::redeclare::carried_modifier(o, scope)
        });
        // A redeclaration in a modifier stands where that modifier stands, before the extends
        // clause's.
        let modifier = if redeclared.is_some() {
            outer.merge_owned(own).merge_owned(from_extends)
        } else {
            outer.merge_owned(from_extends).merge_owned(own)
        };
        // A replaceable declaration that is not redeclared keeps its constraining clause's
        // modifiers too, below its own (`replaceable A a constrainedby A(y = 6)`).
        let carried = carried.or_else(|| crate::redeclare::constraint_modifier(clause, type_scope));
        let modifier = match carried {
            Some(c) => modifier.merge_owned(c),
            None => modifier,
        }
        .merge_owned(self.nested_class_modifier(instance, element, clause, &resolved))
        .merge(&resolved.modifier);
        if !self.final_arguments_respected(&modifier) {
            return None;
        }
        // The condition is always the replaced declaration's; its dimensions and prefixes are
        // kept where the new declaration writes none.
        let (condition, condition_scope) = match (original, original_scope) {
            (Some(o), Some(s)) => (o.decl.condition.as_ref(), s),
            _ => (decl.condition.as_ref(), type_scope),
        };
        let dims_from = match (original, original_scope) {
            (Some(o), Some(s)) if clause.type_dims.is_empty() && decl.dims.is_empty() => (o.clause, o.decl, s),
            _ => (clause, decl, type_scope),
        };
        let declared_prefixes = match original {
            Some(o) => merge_prefixes(clause.prefixes, o.clause.prefixes),
            None => clause.prefixes,
        };
        Some(DeclaredElement {
            clause,
            decl,
            resolved,
            modifier,
            condition: condition.map(|c| (c, condition_scope)),
            dims_from,
            declared_prefixes,
        })
    }

    /// The sizes of a component's dimensions: those of its type prefix, of its declaration
    /// (`dims_from`, the replaced declaration's when the new one writes none) and of its type;
    /// `None` after a reported error.
    pub(crate) fn element_dims(
        &mut self,
        dims_from: (&'a ast::ComponentClause, &'a ast::ComponentDecl, Scope),
        decl: &'a ast::ComponentDecl,
        resolved: &ResolvedType<'a>,
        modifier: &Modifier<'a>,
    ) -> Option<Vec<usize>> {
        let (dims_clause, dims_decl, scope) = dims_from;
        let mut dims = Vec::new();
        // `Real[2] y[3]` is a `Real[3, 2]`: the dimensions after the name come first, then those
        // after the type, then those of the type's definition.
        for sub in (dims_decl.dims.iter())
            .chain(dims_clause.type_dims.iter())
            .chain(resolved.dims.iter().copied())
        {
            match sub {
                // `parameter Real p[:] = {1, 2, 3}`: the size is the binding's (the modifier
                // that wins, also one given from outside).
                ast::Subscript::Colon(span) => match self.binding_size(modifier, dims.len()) {
                    Ok(Some(n)) => dims.push(n),
                    // The binding's own error has been reported.
                    Err(()) => return None,
                    Ok(None) => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            "an array size `:` needs a binding that gives it (`p[:] = {1, 2, 3}`)",
                            *span,
                            "no binding gives this size",
                        ));
                        return None;
                    }
                },
                // `parameter Real A[:, size(A, 1)]`: a size of the component being declared,
                // from a dimension already found (the component itself is not there yet).
                ast::Subscript::Expr(e) if let Some(n) = own_size(e, &decl.name.name, &dims) => dims.push(n),
                // A type as a dimension (`Real w[Mode]`): its number of literals.
                ast::Subscript::Expr(e) if let Some(n) = self.type_dimension(e, scope) => dims.push(n),
                ast::Subscript::Expr(e) => match self.eval_structural_int(e, scope, "an array size") {
                    Some(n) if n >= 0 => dims.push(n as usize),
                    Some(n) => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("array size is negative ({n})"),
                            e.span,
                            "must be zero or more",
                        ));
                        return None;
                    }
                    None => return None,
                },
            }
        }
        Some(dims)
    }

    /// The variables of a component of a built-in type (one per element).
    fn builtin_member(
        &mut self,
        instance: InstanceId,
        decl: &'a ast::ComponentDecl,
        resolved: &ResolvedType<'a>,
        ty: flat::ScalarType,
        kinds: Kinds,
        mut elements: Elements<'a>,
    ) -> Member {
        let total = elements.total;
        if !self.model_has_room(self.model.variables.len(), total, decl.name.span, "variables") {
            return Member::Failed;
        }
        let mut vars = Vec::with_capacity(total);
        let description = decl.description.as_ref().map(|d| self.shared(&d.text));
        // The elements share their bindings' values (an instance made while evaluating them
        // keeps its own, and gives back these afterwards).
        // `String(v)` during the run shows a literal's name, not its position.
        let literal_names: Option<std::sync::Arc<[String]>> = resolved
            .enumeration
            .map(|literals| literals.iter().map(|l| l.name.name.clone()).collect());
        let enumeration_type = self.enumeration_type(resolved);
        let outer_bindings = std::mem::replace(
            &mut self.caches.array_bindings,
            (total > 1).then(eqm_ir::expr::FxHashMap::default),
        );
        let evaluate = decl
            .annotation
            .as_ref()
            .is_some_and(crate::variables::evaluate_annotation);
        let declared = (elements.dims.len() == 1).then(|| (elements.dims[0], decl.name.name.clone()));
        let outer_declared = std::mem::replace(&mut self.context.declared_vector, declared);
        for flat_index in 0..total {
            let (m, name) = elements.element(flat_index);
            if let Some(class) = resolved.external_object
                && m.binding.is_none()
            {
                self.diagnostics.push(Diagnostic::error(
                    "E0329",
                    format!(
                        "the external object `{name}` has no binding; Modelica creates it by calling its constructor (`{} {name} = {}(...)`)",
                        self.table.get(class).def.name.name,
                        self.table.get(class).def.name.name
                    ),
                    decl.name.span,
                    "no binding",
                ));
                return Member::Failed;
            }
            let v = self.new_variable(VarSpec {
                name,
                instance,
                ty,
                variability: kinds.variability,
                causality: kinds.causality,
                connection: kinds.connection,
                in_connector: self.instances[instance.0 as usize].is_connector,
                is_connector_type: resolved.is_connector,
                modifier: &m,
                description: description.clone(),
                span: decl.name.span,
            });
            // `annotation(Evaluate = true)` makes a parameter structural: its value is part of
            // the compiled model, changed only by compiling again (an FMU exports it as fixed).
            if evaluate && kinds.variability == flat::Variability::Parameter {
                let read = self.model.exprs.var(v);
                self.note_structural(read);
            }
            // The binding is checked once, on the first element: the others share its form.
            if flat_index == 0
                && let Some(binding) = &m.binding
            {
                let variable = &self.model.variables[v.0 as usize];
                let value = variable.binding;
                self.binding_type_agrees(binding, literal_names.as_ref(), variable.ty, value);
            }
            // An enumeration starts at its first literal unless told otherwise.
            if let Some(names) = &literal_names {
                if self.model.variables[v.0 as usize].attributes.start.is_none() {
                    let first = self.model.exprs.int(1);
                    self.model.variables[v.0 as usize].attributes.start = Some(first);
                }
                self.enumeration_names.insert(v, names.clone());
            }
            if let Some(ty) = &enumeration_type {
                self.model.enumerations.push((v, ty.clone()));
            }
            if resolved.external_object.is_some() {
                self.model.objects.push(v);
            }
            vars.push(v);
        }
        self.caches.array_bindings = outer_bindings;
        self.context.declared_vector = outer_declared;
        if elements.dims.is_empty() {
            Member::Var(vars[0])
        } else {
            Member::VarArray(ArrayMember::new(elements.dims, vars))
        }
    }

    /// The instances of a component of a class type (one per element), each instantiated.
    ///
    /// The instances are made first and stand in the member's `slot` before their contents are
    /// instantiated: Modelica's dependencies are between variables, not components, so a
    /// modifier may read other members of its own component (`v(startTime = -v.rising)`) or of
    /// a component whose modifier reads this one (`a(r = b.on)`, `b(r = a.on)`). A member read
    /// while it is itself being made is still the cycle `ensure_member_at` reports.
    fn class_member(
        &mut self,
        instance: InstanceId,
        (clause, decl, resolved): (&'a ast::ComponentClause, &'a ast::ComponentDecl, &ResolvedType<'a>),
        class: ClassId,
        kinds: Kinds,
        mut elements: Elements<'a>,
        slot: usize,
    ) -> Member {
        let total = elements.total;
        let kind = self.table.get(class).def.kind;
        if kind.is_package() || kind.is_function() {
            self.diagnostics.push(Diagnostic::error(
                "E0214",
                format!(
                    "`{}` is a {} and cannot be a component type",
                    resolved.class_name,
                    kind.keyword()
                ),
                clause.type_name.span,
                "not instantiable",
            ));
            return Member::Failed;
        }
        if self.table.is_partial(class) {
            self.diagnostics.push(Diagnostic::error(
                "E0214",
                format!(
                    "`{}` is partial and cannot be the class of a component of the model",
                    resolved.class_name
                ),
                clause.type_name.span,
                "partial class",
            ));
            return Member::Failed;
        }
        if total > 0
            && let Some(outer) = self.enclosing_instance_of(instance, class)
        {
            self.class_contains_itself(outer, class, clause, decl);
            return Member::Failed;
        }
        if !self.model_has_room(self.model.instances.len(), total, decl.name.span, "components") {
            return Member::Failed;
        }
        // A record component's binding gives each field its part.
        let fields: Vec<&'a str> = if kind.is_record() {
            self.layout(class)
                .elements
                .iter()
                .map(|el| el.decl.name.name.as_str())
                .collect()
        } else {
            Vec::new()
        };
        let mut insts = Vec::with_capacity(total);
        for flat_index in 0..total {
            let (m, name) = elements.element(flat_index);
            let m = if fields.is_empty() { m } else { m.bind_fields(&fields) };
            let child = self.new_instance(
                name,
                class,
                Some(instance),
                decl.name.span,
                m,
                kinds.variability,
                kinds.causality,
                resolved.is_connector,
            );
            self.instances[child.0 as usize].flow = kinds.connection == ast::Connection::Flow;
            self.instances[child.0 as usize].stream = kinds.connection == ast::Connection::Stream;
            insts.push(child);
        }
        let member = if elements.dims.is_empty() {
            Member::Inst(insts[0])
        } else {
            Member::InstArray(ArrayMember::new(elements.dims, insts.clone()))
        };
        self.members[slot] = member.clone();
        let alike = elements.modifier.same_for_every_element();
        if self.caches.shallow_slot == Some(slot) {
            let element = slot - self.instances[instance.0 as usize].first_member;
            let shell = crate::caches::Shell {
                instance,
                element,
                instances: insts,
                alike,
                name: &decl.name,
            };
            self.caches.shells.insert(slot, shell);
            return member;
        }
        self.instantiate_component_instances(&insts, alike, &decl.name);
        member
    }

    /// The instance, `instance` itself or one enclosing it, whose class is `class`: a component
    /// of that class inside it would contain itself, and instantiating it would never end.
    /// While `instance` is the innermost instance being instantiated and the instances being
    /// instantiated are the chain enclosing it (always, unless a lookup instantiates a member
    /// of an outer instance early), the answer is the innermost of them of that class; else it
    /// walks up the parents.
    fn enclosing_instance_of(&self, instance: InstanceId, class: ClassId) -> Option<InstanceId> {
        if let Some(&(innermost, true)) = self.caches.instantiating.last()
            && innermost == instance
        {
            return self
                .caches
                .instantiating_by_class
                .get(&class)
                .and_then(|list| list.last().copied());
        }
        let mut current = Some(instance);
        while let Some(i) = current {
            if self.instances[i.0 as usize].class == class {
                return Some(i);
            }
            current = self.model.instances[i.0 as usize].parent;
        }
        None
    }

    /// Reports E0315 for the component `decl` of class `class`, which `outer` (an instance of
    /// the same class) already encloses, naming the chain of components from `outer` down.
    fn class_contains_itself(
        &mut self,
        outer: InstanceId,
        class: ClassId,
        clause: &ast::ComponentClause,
        decl: &ast::ComponentDecl,
    ) {
        let class_name = self.table.get(class).full_name.clone();
        let outer_name = &self.model.instances[outer.0 as usize].name;
        let label = format!("an instance of `{class_name}` inside an instance of `{class_name}`");
        let mut d = Diagnostic::error(
            "E0315",
            format!("class `{class_name}` contains itself"),
            clause.type_name.span,
            label,
        )
        .with_label(decl.name.span, "this component");
        d = if outer_name.is_empty() {
            d.with_note(format!(
                "the model itself is an instance of `{class_name}`, so its component `{}` would contain another, and so on without end",
                decl.name.name
            ))
        } else {
            d.with_note(format!(
                "`{outer_name}` is an instance of `{class_name}`, so this component inside it would contain another, and so on without end"
            ))
        };
        self.diagnostics.push(d.with_help(
            "a component cannot be of the class that encloses it, directly, through other components or through `extends`",
        ));
    }
}

/// The prefixes of a declaration whose type (a short class definition) has prefixes too: each
/// the declaration's own, where it wrote one.
/// A declared element after its redeclarations: the declaration that counts, its resolved type
/// and merged modifier, its condition and where its dimensions are written.
pub(crate) struct DeclaredElement<'a> {
    pub(crate) clause: &'a ast::ComponentClause,
    pub(crate) decl: &'a ast::ComponentDecl,
    pub(crate) resolved: Rc<ResolvedType<'a>>,
    pub(crate) modifier: Modifier<'a>,
    /// The condition of a conditional component and the scope it is evaluated in.
    pub(crate) condition: Option<(&'a ast::Expr, Scope)>,
    /// The clause and declaration whose dimensions count, and their scope.
    pub(crate) dims_from: (&'a ast::ComponentClause, &'a ast::ComponentDecl, Scope),
    pub(crate) declared_prefixes: ast::TypePrefix,
}

/// The elements of a component: for a scalar, its modifier and name as they are (`scalar`);
/// for an array, the modifier and name that each element's are derived from.
struct Elements<'a> {
    scalar: Option<(Modifier<'a>, String)>,
    modifier: Modifier<'a>,
    base_name: String,
    dims: Vec<usize>,
    total: usize,
}

impl<'a> Elements<'a> {
    /// The modifier and name of element `flat_index` (row-major); a scalar component's are
    /// taken as they are.
    fn element(&mut self, flat_index: usize) -> (Modifier<'a>, String) {
        self.scalar
            .take()
            .unwrap_or_else(|| array_element(&self.modifier, &self.base_name, &self.dims, flat_index))
    }
}

/// The variability, causality and connection prefix a component's members get.
#[derive(Clone, Copy)]
struct Kinds {
    variability: flat::Variability,
    causality: flat::Causality,
    connection: ast::Connection,
}

fn merge_prefixes(outer: ast::TypePrefix, inner: ast::TypePrefix) -> ast::TypePrefix {
    ast::TypePrefix {
        connection: outer_or_inner(outer.connection, inner.connection, ast::Connection::None),
        variability: outer_or_inner(outer.variability, inner.variability, ast::Variability::Continuous),
        causality: outer_or_inner(outer.causality, inner.causality, ast::Causality::None),
    }
}

/// The outer declaration's prefix, unless it left it at `unset` (wrote none): then the inner one.
fn outer_or_inner<T: PartialEq>(outer: T, inner: T, unset: T) -> T {
    if outer != unset { outer } else { inner }
}

fn combine_variability(parent: flat::Variability, own: ast::Variability) -> flat::Variability {
    let own = match own {
        ast::Variability::Continuous => flat::Variability::Continuous,
        ast::Variability::Discrete => flat::Variability::Discrete,
        ast::Variability::Parameter => flat::Variability::Parameter,
        ast::Variability::Constant => flat::Variability::Constant,
    };
    let rank = |v: flat::Variability| match v {
        flat::Variability::Continuous => 0,
        flat::Variability::Discrete => 1,
        flat::Variability::Parameter => 2,
        flat::Variability::Constant => 3,
    };
    if rank(parent) > rank(own) { parent } else { own }
}

/// The modifier and full name of element `flat_index` (row-major) of an array component with
/// `dims` (at least one): `x[2,1]` with every non-`each` binding picking its own element.
fn array_element<'a>(modifier: &Modifier<'a>, base: &str, dims: &[usize], flat_index: usize) -> (Modifier<'a>, String) {
    let indices = value::row_major_index(dims, flat_index);
    let selected = indices.iter().fold(modifier.clone(), |m, &i| m.select(i));
    (selected, value::element_name(base, &indices))
}

/// The size `size(name, k)` when `e` is that call with an integer literal `k` naming one of the
/// dimensions `known` of the component `name` being declared: MSL classes declare
/// `A[:, size(A, 1)]` for a square matrix whose first size comes from the binding.
fn own_size(e: &ast::Expr, name: &str, known: &[usize]) -> Option<usize> {
    let ast::ExprKind::Call { function, args } = &e.kind else {
        return None;
    };
    if function.parts.len() != 1 || function.parts[0].name.name != "size" || !args.named.is_empty() {
        return None;
    }
    let [array, dimension] = args.positional.as_slice() else {
        return None;
    };
    let ast::ExprKind::Ref(r) = &array.kind else {
        return None;
    };
    let is_own = !r.global && r.parts.len() == 1 && r.parts[0].subscripts.is_empty() && r.parts[0].name.name == name;
    match dimension.kind {
        ast::ExprKind::Integer(k) if is_own && k >= 1 => known.get(k as usize - 1).copied(),
        _ => None,
    }
}
