//! Replaceable classes and components and their redeclarations, as Modelica defines them.
//!
//! Input: the `replaceable` and `redeclare` elements of the class table, the redeclarations in
//! modifiers and `extends` clauses, and the instances being flattened. Output: for a class name
//! used in an instance, the class it denotes there, with the modifiers that the redeclaration
//! and the constraining clause add ([`Flattener::lookup_class`]); and the checks of
//! redeclarations (E0221): only replaceable, non-final, non-constant elements are redeclared, an
//! element redeclaration replaces an inherited element and keeps its visibility, an element
//! redeclared without `replaceable` is not redeclared again, and the new class (and a replaceable
//! element's own type, and a new constraining class) has every element of the constraining
//! class. Component redeclarations themselves are applied where a component is
//! instantiated (`instantiate`). A class extending its inherited version (`redeclare model
//! extends B ... end B;`) is a nested class of the deriving class like any other: with
//! `redeclare` it is a class redeclaration, and its base (the inherited `B`) is what
//! [`Flattener::base_class`] answers, checked here (E0221).
//!
//! Lookup stays static (the class table) for every name whose first part is not a replaceable
//! class; only those names pay for the walk over the enclosing instances, and a model without
//! replaceable classes pays nothing.

use crate::flattener::Flattener;
use crate::layout::ClassRedeclare;
use crate::layout::{ClassLayout, ElementDecl, Original};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, LookupError, TypeRef};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::flat::InstanceId;
use eqm_syntax::ast;
use std::rc::Rc;

/// The class redeclarations among the arguments of an instance's modifier.
pub(crate) fn in_modifier<'a>(modifier: &Modifier<'a>) -> Option<Rc<[ClassRedeclare<'a>]>> {
    let found: Vec<ClassRedeclare<'a>> = modifier
        .args
        .iter()
        .filter_map(|arg| {
            let r = arg.modifier.redeclare?;
            let ast::RedeclaredElement::Class(def) = r.element else {
                return None;
            };
            Some(ClassRedeclare {
                name: arg.name,
                def,
                scope: r.scope,
                class: None,
                span: r.span,
            })
        })
        .collect();
    (!found.is_empty()).then(|| found.into())
}

/// The class redeclarations among the arguments of an `extends` clause's modification.
pub(crate) fn in_class_modification<'a>(
    m: &'a ast::ClassModification,
    scope: Scope,
) -> impl Iterator<Item = ClassRedeclare<'a>> + 'a {
    m.arguments
        .iter()
        .filter_map(move |arg| match arg.redeclare.as_deref() {
            Some(ast::RedeclaredElement::Class(def)) => Some(ClassRedeclare {
                name: &def.name.name,
                def,
                scope,
                class: None,
                span: arg.span,
            }),
            _ => None,
        })
}

/// How deep redeclarations may refer to redeclarations of enclosing instances
/// (`redeclare package Medium = Medium`); each step moves outwards, so only a model nested this
/// deep could reach it.
const MAX_REDIRECTS: usize = 256;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Resolves a class name used in `scope`: the class table's answer, unless the name's first
    /// part is a replaceable class that an instance around `scope` redeclared. Returns the class
    /// and the modifiers the redeclaration adds (outermost first). `Err` when the name is
    /// unknown (not reported here).
    pub(crate) fn lookup_class(
        &mut self,
        scope: Scope,
        name: &ast::Name,
    ) -> Result<(TypeRef, Modifier<'a>), LookupError> {
        match self.redirected(scope, name, 0) {
            Some(found) => found,
            None => self.table.lookup(scope.class, name).map(|t| (t, Modifier::default())),
        }
    }

    /// [`Self::lookup_class`] for a name whose first part is a redeclared replaceable class, or
    /// a class of an enclosing package that the instance sees as another package
    /// ([`Self::viewed_class`]); `None` for any other name.
    pub(crate) fn redirected(
        &mut self,
        scope: Scope,
        name: &ast::Name,
        depth: usize,
    ) -> Option<Result<(TypeRef, Modifier<'a>), LookupError>> {
        self.redeclared_name(scope, name, depth).or_else(|| {
            self.viewed_class(scope, name)
                .map(|viewed| Ok((viewed, Modifier::default())))
        })
    }

    /// [`Self::redirected`] for a redeclared replaceable class.
    fn redeclared_name(
        &mut self,
        scope: Scope,
        name: &ast::Name,
        depth: usize,
    ) -> Option<Result<(TypeRef, Modifier<'a>), LookupError>> {
        if !self.redeclarations.has_replaceable_classes || name.global || depth > MAX_REDIRECTS {
            return None;
        }
        let instance = scope.instance?;
        // Every component type of a model with a replaceable class comes here: the first part
        // is looked up without building a name.
        let Some(TypeRef::Class(replaceable)) = self.table.lookup_simple(scope.class, &name.parts[0].name) else {
            return None;
        };
        let entry = self.table.get(replaceable);
        if !entry.def.redeclarable.replaceable {
            return None;
        }
        let owner = entry.parent?;
        let (owner_instance, choice) = self.redeclaration_of(instance, replaceable, owner)?;
        let (target, modifier) = match self.redeclared_class(owner_instance, replaceable, owner, &choice, depth) {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        if name.parts.len() == 1 {
            return Some(Ok((target, modifier)));
        }
        // A member of the redeclared class (`Medium.Temperature`, `Medium.density`).
        let mut found = target;
        for (i, part) in name.parts.iter().enumerate().skip(1) {
            found = match found {
                TypeRef::Class(c) => match self.table.member_class(c, &part.name, 0) {
                    Some(m) => TypeRef::Class(m),
                    None => return Some(Err(LookupError::NotFound { resolved_parts: i })),
                },
                TypeRef::Builtin(_) => return Some(Err(LookupError::NotFound { resolved_parts: i })),
            };
        }
        if !modifier.is_empty() {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                format!(
                    "`{}` names a member of a redeclared class that has modifiers, which EQM does not support yet",
                    eqm_syntax::pretty::name_text(name)
                ),
                name.span,
                "the modifiers of the redeclared class would not reach this member",
            ));
            return Some(Err(LookupError::NotFound { resolved_parts: 1 }));
        }
        Some(Ok((found, Modifier::default())))
    }

    /// The instance whose class declares or inherits the replaceable class `replaceable`
    /// (declared in `owner`), found from `instance` outwards, and the redeclaration that
    /// instance makes of it: from its modifier first, then from its class and bases.
    fn redeclaration_of(
        &mut self,
        instance: InstanceId,
        replaceable: ClassId,
        owner: ClassId,
    ) -> Option<(InstanceId, ClassRedeclare<'a>)> {
        let name = self.table.get(replaceable).def.name.name.as_str();
        let mut current = Some(instance);
        while let Some(j) = current {
            let state = &self.instances[j.0 as usize];
            if state.layout.classes.contains(&owner) {
                let from_modifier = state
                    .class_redeclares
                    .iter()
                    .flat_map(|r| r.iter())
                    .find(|r| r.name == name);
                let from_class = || {
                    state
                        .layout
                        .class_redeclares
                        .iter()
                        .rev()
                        .find(|r| r.name == name && r.class != Some(replaceable))
                };
                return from_modifier.or_else(from_class).map(|r| (j, r.clone()));
            }
            current = self.model.instances[j.0 as usize].parent;
        }
        None
    }

    /// The class a redeclaration chooses, with its modifiers followed by those of the
    /// constraining clause (or, without one, those of the replaceable class's own definition):
    /// `replaceable model Ctl = P(k = 1)` redeclared as `PI(Ti = 2)` is `PI(Ti = 2, k = 1)`.
    fn redeclared_class(
        &mut self,
        owner_instance: InstanceId,
        replaceable: ClassId,
        owner: ClassId,
        choice: &ClassRedeclare<'a>,
        depth: usize,
    ) -> Result<(TypeRef, Modifier<'a>), LookupError> {
        let scope = Scope {
            instance: choice.scope.instance.or(Some(owner_instance)),
            class: choice.scope.class,
        };
        let (target, own) = match &choice.def.body {
            ast::ClassBody::Short { base, modification, .. } => {
                let (target, inherited) = match self.redirected(scope, base, depth + 1) {
                    Some(found) => found,
                    None => self.table.lookup(scope.class, base).map(|t| (t, Modifier::default())),
                }
                .inspect_err(|_| self.unknown_class(scope.class, base))?;
                let own = match modification {
                    Some(m) => Modifier::from_class_modification(m, scope).merge_owned(inherited),
                    None => inherited,
                };
                (target, own)
            }
            _ => match choice.class {
                Some(c) => (TypeRef::Class(c), Modifier::default()),
                None => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        "a redeclaration of an enumeration in a modifier is not supported yet",
                        choice.span,
                        "not supported",
                    ));
                    return Err(LookupError::NotFound { resolved_parts: 0 });
                }
            },
        };
        let def = self.table.get(replaceable).def;
        let owner_scope = Scope {
            instance: Some(owner_instance),
            class: owner,
        };
        let carried = match (&def.redeclarable.constraint, &def.body) {
            (Some(c), _) => c.modification.as_ref(),
            (None, ast::ClassBody::Short { modification, .. }) => modification.as_ref(),
            (None, _) => None,
        };
        let carried = carried
            .map(|m| Modifier::from_class_modification(m, owner_scope))
            .unwrap_or_default();
        if let Some(constraint) = self.constraining_class(replaceable)
            && !self.check_subtype(target, constraint, choice.span)
        {
            return Err(LookupError::NotFound { resolved_parts: 0 });
        }
        Ok((target, own.merge_owned(carried)))
    }

    /// The class every redeclaration of the replaceable class `replaceable` must be a subtype
    /// of: its `constrainedby` class, or else the class it is defined as.
    fn constraining_class(&mut self, replaceable: ClassId) -> Option<TypeRef> {
        let entry = self.table.get(replaceable);
        let scope = entry.parent.unwrap_or(replaceable);
        match (&entry.def.redeclarable.constraint, &entry.def.body) {
            (Some(c), _) => self.table.lookup(scope, &c.name).ok(),
            (None, ast::ClassBody::Short { base, .. }) => self.table.lookup(scope, base).ok(),
            (None, _) => Some(TypeRef::Class(replaceable)),
        }
    }

    /// The class a redeclaration of the component `original` must be a subtype of: its
    /// `constrainedby` class, or else its declared type.
    pub(crate) fn component_constraint(&mut self, original: Original<'a>, instance: InstanceId) -> Option<TypeRef> {
        let scope = Scope {
            instance: Some(instance),
            class: original.class,
        };
        let name = match &original.clause.redeclarable.constraint {
            Some(c) => &c.name,
            None => &original.clause.type_name,
        };
        self.lookup_class(scope, name).ok().map(|(t, _)| t)
    }

    /// Checks a declaration's own `constrainedby` clause (`replaceable A a constrainedby B`):
    /// its type must be a subtype of that class, and when it redeclares `replaced`, that class
    /// must be a subtype of the constraint it replaces (Modelica's section 7.3.2). E0221 and
    /// false otherwise.
    pub(crate) fn own_constraint_respected(
        &mut self,
        instance: InstanceId,
        (clause, decl, scope): (&'a ast::ComponentClause, &'a ast::ComponentDecl, Scope),
        declared: TypeRef,
        replaced: Option<Original<'a>>,
    ) -> bool {
        if clause.redeclarable.constraint.is_none() {
            return true;
        }
        let own = Original {
            clause,
            decl,
            class: scope.class,
        };
        let Some(constraint) = self.component_constraint(own, instance) else {
            return true;
        };
        if !self.check_subtype(declared, constraint, decl.name.span) {
            return false;
        }
        match replaced.and_then(|r| self.component_constraint(r, instance)) {
            Some(before) => self.check_subtype(constraint, before, decl.name.span),
            None => true,
        }
    }

    /// Checks that a replaceable class is a subtype of its own `constrainedby` class
    /// (`replaceable model C = B constrainedby A` needs every element of `A` in `B`).
    pub(crate) fn check_replaceable_class(&mut self, class: ClassId) {
        let entry = self.table.get(class);
        if !entry.def.redeclarable.replaceable || entry.def.redeclarable.constraint.is_none() {
            return;
        }
        let span = entry.def.name.span;
        let own = match &entry.def.body {
            ast::ClassBody::Short { base, .. } => self.table.lookup(entry.parent.unwrap_or(class), base).ok(),
            _ => Some(TypeRef::Class(class)),
        };
        if let (Some(own), Some(constraint)) = (own, self.constraining_class(class)) {
            self.check_subtype(own, constraint, span);
        }
    }

    /// Reports E0221 unless `new` has every element of `constraint` (the essential part of
    /// Modelica's subtype relation: a redeclared class must fit every use of the old one).
    /// Checked once per pair of classes and redeclaration.
    pub(crate) fn check_subtype(&mut self, new: TypeRef, constraint: TypeRef, span: Span) -> bool {
        let (TypeRef::Class(new), TypeRef::Class(constraint)) = (new, constraint) else {
            return true;
        };
        if new == constraint
            || !self
                .redeclarations
                .subtypes_checked
                .insert((new, constraint, span.start))
        {
            return true;
        }
        let new_layout = self.layout(new);
        let constraint_layout = self.layout(constraint);
        let missing: Vec<&str> = constraint_layout
            .names()
            .filter(|n| new_layout.index(n).is_none())
            .collect();
        if missing.is_empty() {
            return true;
        }
        let new_name = self.table.get(new).full_name.clone();
        let constraint_name = self.table.get(constraint).full_name.clone();
        self.diagnostics.push(
            Diagnostic::error(
                "E0221",
                format!("`{new_name}` cannot replace a `{constraint_name}`: it has no `{}`", missing.join("`, `")),
                span,
                "not a subtype of the constraining class",
            )
            .with_help(format!(
                "a redeclared class needs every element of `{constraint_name}`; a `constrainedby` clause on the replaceable declaration names a more general constraining class"
            )),
        );
        false
    }

    /// Checks the element redeclarations of a class's layout: each replaces an inherited
    /// element (E0221 when none of that name is inherited) that is replaceable and not final.
    pub(crate) fn check_element_redeclarations(&mut self, layout: &ClassLayout<'a>) {
        for element in &layout.elements {
            // Each redeclaration is checked once, in the first layout that includes it.
            if !element.clause.redeclarable.redeclare
                || !self
                    .redeclarations
                    .redeclarations_checked
                    .insert(element.decl as *const _)
            {
                continue;
            }
            match element.original {
                None => self.diagnostics.push(Diagnostic::error(
                    "E0221",
                    format!(
                        "`redeclare {}` redeclares an element that no base class of `{}` declares",
                        element.decl.name.name,
                        self.table.get(element.class).full_name
                    ),
                    element.decl.name.span,
                    "nothing inherited of this name",
                )),
                Some(original) => {
                    let scope = |class| Scope { instance: None, class };
                    self.check_redeclarable(
                        (original.clause, original.decl, scope(original.class)),
                        (element.clause, scope(element.class)),
                        element.decl.name.span,
                    );
                }
            }
        }
    }

    /// Reports E0221 when the declaration `original` may not be redeclared by `new` at `at`
    /// (see [`Self::check_replaceable`]); false then.
    pub(crate) fn check_redeclarable(
        &mut self,
        (clause, decl, scope): (&'a ast::ComponentClause, &ast::ComponentDecl, Scope),
        new: (&'a ast::ComponentClause, Scope),
        at: Span,
    ) -> bool {
        let same_type = self.same_declared_type((clause, scope), new);
        self.check_replaceable(clause, decl, at, same_type)
    }

    /// Whether two component declarations name the same type: a redeclaration that keeps the
    /// type may change only array dimensions and variability, and needs no `replaceable`
    /// (Modelica 7.3.5). A type name that does not resolve is reported where the declaration is
    /// instantiated, not here.
    fn same_declared_type(
        &mut self,
        (original, original_scope): (&'a ast::ComponentClause, Scope),
        (new, new_scope): (&'a ast::ComponentClause, Scope),
    ) -> bool {
        let errors = self.diagnostics.len();
        let a = self.component_type(original_scope, &original.type_name);
        let b = self.component_type(new_scope, &new.type_name);
        self.diagnostics.truncate(errors);
        matches!((a, b), (Some(a), Some(b)) if a.target == b.target)
    }

    /// Reports E0221 when the declaration `decl` may not be redeclared (it is final or a
    /// constant, or not replaceable while the redeclaration changes its type, which
    /// `same_type` says it does not); false then.
    fn check_replaceable(
        &mut self,
        clause: &ast::ComponentClause,
        decl: &ast::ComponentDecl,
        at: Span,
        same_type: bool,
    ) -> bool {
        let reason = if clause.is_final {
            "it is final"
        } else if clause.prefixes.variability == ast::Variability::Constant {
            "it is a constant"
        } else if !clause.redeclarable.replaceable && !same_type {
            "it is not replaceable"
        } else {
            return true;
        };
        self.diagnostics.push(
            Diagnostic::error(
                "E0221",
                format!("`{}` cannot be redeclared: {reason}", decl.name.name),
                at,
                "redeclared here",
            )
            .with_label(decl.name.span, "declared here")
            .with_help(format!(
                "declare it `replaceable {} {}` to allow redeclaring it",
                eqm_syntax::pretty::name_text(&clause.type_name),
                decl.name.name
            )),
        );
        false
    }

    /// Reports E0221 when a redeclaration replaces the earlier redeclaration `before`, which
    /// was not declared `replaceable` (Modelica's section 7.3.2: without it the redeclared
    /// element is no longer replaceable); false then.
    pub(crate) fn check_redeclared_again(&mut self, before: &ast::ComponentClause, at: Span) -> bool {
        if before.redeclarable.replaceable {
            return true;
        }
        let name = &before.components[0].name;
        self.diagnostics.push(
            Diagnostic::error(
                "E0221",
                format!(
                    "`{}` cannot be redeclared again: the redeclaration before it is not replaceable",
                    name.name
                ),
                at,
                "redeclared here",
            )
            .with_label(name.span, "redeclared before here, without `replaceable`")
            .with_help(format!(
                "write `redeclare replaceable {} {}` to allow redeclaring it again",
                eqm_syntax::pretty::name_text(&before.type_name),
                name.name
            )),
        );
        false
    }

    /// The base class of the `extends` clause `x` of `class`; `Err(true)` after a diagnostic,
    /// `Err(false)` when the base's name denotes nothing (for the caller to report). For a
    /// class extending its inherited version this is the inherited class, which must exist and
    /// be replaceable (E0221, checked once per class).
    pub(crate) fn base_class(&mut self, class: ClassId, x: &ast::Extends) -> Result<TypeRef, bool> {
        if !x.inherited {
            return self.table.lookup_base(class, &x.base).map_err(|_| false);
        }
        let found = self.table.inherited_class(class, 0);
        let error = self.class_extends_error(class, found, x);
        let ok = error.is_none();
        if let Some(d) = error
            && self.redeclarations.class_extends_checked.insert(class)
        {
            self.diagnostics.push(d);
        }
        match found {
            Some(b) if ok => Ok(TypeRef::Class(b)),
            _ => Err(true),
        }
    }

    /// Checks `class` when it extends its inherited version (see [`Self::base_class`]): every
    /// class a laid-out class declares is checked, also one that is used only as a function.
    pub(crate) fn check_class_extends(&mut self, class: ClassId) {
        let class_extends = self.table.get(class).extends().next().filter(|x| x.inherited);
        if let Some(x) = class_extends {
            let _ = self.base_class(class, x);
        }
        if !self.redeclarations.class_redeclarations_checked.insert(class) {
            return;
        }
        if self.table.get(class).def.redeclarable.redeclare {
            self.check_class_element_redeclaration(class, class_extends.is_some());
        }
        self.check_replaceable_class(class);
    }

    /// Checks `class`, declared `redeclare model B ... end B;` in a class whose base class has
    /// a class `B`: that class must exist, be replaceable and not final, and keep its
    /// visibility (Modelica's section 7.3.3: a protected element cannot be redeclared as public,
    /// or a public one as protected). A class extending its inherited version had the first two
    /// checked by [`Self::base_class`].
    fn check_class_element_redeclaration(&mut self, class: ClassId, class_extends: bool) {
        let entry = self.table.get(class);
        let name = entry.def.name.name.clone();
        let at = entry.def.name.span;
        let inherited = self.table.inherited_class(class, 0);
        let reason = match inherited {
            None if class_extends => return,
            None => "no base class of the enclosing class has a class of this name",
            Some(b) if !class_extends && !self.table.get(b).def.redeclarable.replaceable => {
                "that class is not replaceable"
            }
            Some(b) if self.table.get(b).def.is_final => "that class is final",
            Some(b) => match visibility_change(self.table.get(b).protected, entry.protected) {
                Some(change) => change,
                None => return,
            },
        };
        let mut d = Diagnostic::error(
            "E0221",
            format!("`{name}` cannot be redeclared: {reason}"),
            at,
            "redeclared here",
        );
        if let Some(b) = inherited {
            d = d.with_label(self.table.get(b).def.name.span, "declared here");
        }
        self.diagnostics.push(d);
    }

    /// Reports E0221 when a redeclared element changes the visibility of the element it
    /// replaces (Modelica's section 7.3.3).
    pub(crate) fn check_redeclared_visibility(&mut self, new: &ElementDecl<'a>, old: &ElementDecl<'a>) {
        if let Some(change) = visibility_change(old.protected, new.protected) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0221",
                    format!("`{}` cannot be redeclared: {change}", new.decl.name.name),
                    new.decl.name.span,
                    "redeclared here",
                )
                .with_label(old.decl.name.span, "declared here"),
            );
        }
    }

    /// The E0221 diagnostic for the clause `x` of `class`, a class extending its inherited
    /// version `inherited`, unless that class exists and is replaceable (Modelica's section
    /// 7.3.1: only an inherited replaceable class can be extended this way), or E0336 when its
    /// kind may not extend the inherited class's.
    pub(crate) fn class_extends_error(
        &self,
        class: ClassId,
        inherited: Option<ClassId>,
        x: &ast::Extends,
    ) -> Option<Diagnostic> {
        let entry = self.table.get(class);
        let written = format!("{} extends {}", entry.def.kind.keyword(), entry.def.name.name);
        let enclosing = entry.parent.map_or_else(
            || "the top level".to_string(),
            |p| format!("`{}`", self.table.get(p).full_name),
        );
        match inherited {
            None => Some(
                Diagnostic::error(
                    "E0221",
                    format!(
                        "`{written}` extends an inherited class, but no base class of {enclosing} has a class `{}`",
                        entry.def.name.name
                    ),
                    x.span,
                    "nothing inherited of this name",
                )
                .with_help(
                    "a class extending its inherited version needs a replaceable class of that name in a base class",
                ),
            ),
            Some(b) if !self.table.get(b).def.redeclarable.replaceable => Some(
                Diagnostic::error(
                    "E0221",
                    format!(
                        "`{written}` extends `{}`, which is not replaceable",
                        self.table.get(b).full_name
                    ),
                    x.span,
                    "extends a class that is not replaceable",
                )
                .with_label(self.table.get(b).def.name.span, "declared here")
                .with_help(format!(
                    "declare it `replaceable {} {}` to allow extending it this way",
                    self.table.get(b).def.kind.keyword(),
                    entry.def.name.name
                )),
            ),
            Some(b) if !crate::resolve::may_extend(entry.def.kind, self.table.get(b).def.kind) => Some(
                Diagnostic::error(
                    "E0336",
                    format!(
                        "a {} cannot extend the {} `{}`",
                        entry.def.kind.keyword(),
                        self.table.get(b).def.kind.keyword(),
                        self.table.get(b).full_name
                    ),
                    x.span,
                    "base class of another kind",
                )
                .with_label(self.table.get(b).def.name.span, "declared here"),
            ),
            Some(_) => None,
        }
    }

    /// Reports E0221 when the class `def`, redeclared in the modifier of the short class
    /// definition `short` (`package P2 = P(redeclare model A = B)`), names no replaceable class
    /// of the class `short` defines.
    pub(crate) fn check_short_class_redeclaration(&mut self, short: ClassId, def: &'a ast::ClassDef) {
        let entry = self.table.get(short);
        let ast::ClassBody::Short { base, .. } = &entry.def.body else {
            return;
        };
        let scope = entry.parent.unwrap_or(short);
        if let Ok(TypeRef::Class(base)) = self.table.lookup(scope, base) {
            let redeclare = ClassRedeclare {
                name: &def.name.name,
                def,
                scope: Scope {
                    instance: None,
                    class: scope,
                },
                class: None,
                span: def.name.span,
            };
            self.check_class_redeclaration(base, &redeclare, false);
        }
    }

    /// Reports E0221 for a class redeclaration in the modifier of an instance of `class`, or
    /// of an `extends` clause naming `class` (`through_extends`), that names no replaceable
    /// class of it, a final one, or from outside a protected one.
    pub(crate) fn check_class_redeclaration(
        &mut self,
        class: ClassId,
        redeclare: &ClassRedeclare<'a>,
        through_extends: bool,
    ) {
        let target = self.table.member_class(class, redeclare.name, 0);
        let reason = match target {
            None => "it has no class of this name",
            Some(t) if !self.table.get(t).def.redeclarable.replaceable => "that class is not replaceable",
            Some(t) if self.table.get(t).def.is_final => "that class is final",
            Some(t) if !through_extends && self.table.get(t).protected => {
                "that class is protected (only a class extending it may redeclare it, in its `extends` clause)"
            }
            Some(_) => return,
        };
        let mut d = Diagnostic::error(
            "E0221",
            format!(
                "`{}` cannot be redeclared in `{}`: {reason}",
                redeclare.name,
                self.table.get(class).full_name
            ),
            redeclare.span,
            "redeclared here",
        );
        if let Some(t) = target {
            d = d.with_label(self.table.get(t).def.name.span, "declared here");
        }
        self.diagnostics.push(d);
    }
}

/// The modifiers of a replaced declaration that carry over to the new one: those of its
/// `constrainedby` clause, or without one its own, evaluated in `scope`, where it was written.
pub(crate) fn carried_modifier<'a>(original: crate::layout::Original<'a>, scope: Scope) -> Modifier<'a> {
    match &original.clause.redeclarable.constraint {
        Some(c) => c
            .modification
            .as_ref()
            .map(|m| Modifier::from_class_modification(m, scope))
            .unwrap_or_default(),
        None => original
            .decl
            .modification
            .as_ref()
            .map(|m| Modifier::from_ast(m, scope))
            .unwrap_or_default(),
    }
}

/// The modifiers of the constraining clause of `clause`, if it has one with modifiers.
pub(crate) fn constraint_modifier<'a>(clause: &'a ast::ComponentClause, scope: Scope) -> Option<Modifier<'a>> {
    let modification = clause.redeclarable.constraint.as_ref()?.modification.as_ref()?;
    Some(Modifier::from_class_modification(modification, scope))
}

/// What a redeclaration does to the visibility of the element it replaces, when it changes it.
fn visibility_change(old_protected: bool, new_protected: bool) -> Option<&'static str> {
    match (old_protected, new_protected) {
        (true, false) => Some("a protected element cannot be redeclared as public"),
        (false, true) => Some("a public element cannot be redeclared as protected"),
        _ => None,
    }
}
