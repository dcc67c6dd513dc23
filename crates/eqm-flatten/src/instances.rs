//! Instances and their members: class layouts collected once per class, the instances of the
//! flat model made with their members pending, and a member instantiated when something needs
//! it (so declaration order never matters). A component that a declaration reaches through to
//! one of its members is made as a shell, its instances without their contents, which the walk
//! over its instance's members completes: dependencies are between variables, not components.
//!
//! Input: the class table, through the [`Flattener`]. Output: the [`ClassLayout`]s (kept in the
//! flattener's caches), the [`InstanceState`]s and, on demand, the [`Member`] each element
//! became. It deliberately does not decide what an element becomes: `instantiate` does, when
//! [`Flattener::ensure_member_at`] asks for a pending member.

use crate::flattener::Flattener;
use crate::layout::ClassRedeclare;
use crate::layout::{ClassLayout, ElementDecl, InstanceState, Member, NameKey, Original};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::FxHashSet;
use eqm_ir::flat::{self, InstanceId};
use eqm_syntax::ast;
use std::rc::Rc;
use std::sync::Arc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The instance, `instance` or one enclosing it, whose class (or a class it extends)
    /// holds the text of `class`: where a modifier written in `class` finds its components.
    /// `instance` itself when none does (a class outside every instance, such as a package).
    pub(crate) fn instance_holding(&self, instance: InstanceId, class: ClassId) -> InstanceId {
        let mut current = Some(instance);
        while let Some(i) = current {
            if self.instances[i.0 as usize].layout.classes.contains(&class) {
                return i;
            }
            current = self.model.instances[i.0 as usize].parent;
        }
        instance
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_instance(
        &mut self,
        name: String,
        class: ClassId,
        parent: Option<InstanceId>,
        span: Span,
        modifier: Modifier<'a>,
        variability: flat::Variability,
        causality: flat::Causality,
        is_connector: bool,
    ) -> InstanceId {
        let id = InstanceId(self.model.instances.len() as u32);
        let layout = self.layout(class);
        let class_name = self.class_name(class);
        self.model.instances.push(flat::Instance {
            name,
            class_name,
            parent,
            is_connector,
            span,
        });
        let class_redeclares = crate::redeclare::in_modifier(&modifier);
        let empty = modifier.binding.is_none() && modifier.args.is_empty();
        let first_member = self.members.len();
        let depth = parent.map_or(0, |p| self.instances[p.0 as usize].depth + 1);
        self.members
            .resize(first_member + layout.elements.len(), Member::Pending);
        self.instances.push(InstanceState {
            class,
            modifier: (!empty).then(|| Box::new(modifier)),
            class_redeclares,
            first_member,
            layout,
            variability,
            causality,
            flow: false,
            stream: false,
            is_connector,
            depth,
        });
        if self.table.get(class).def.kind == ast::ClassKind::ExpandableConnector {
            self.expandable.instances.push(id);
        }
        id
    }

    fn class_name(&mut self, class: ClassId) -> Arc<str> {
        let table = self.table;
        self.caches.class_names[class.0 as usize]
            .get_or_insert_with(|| table.get(class).full_name.as_str().into())
            .clone()
    }

    /// One shared copy of a description or unit text.
    pub(crate) fn shared(&mut self, text: &'a str) -> Arc<str> {
        self.caches
            .strings
            .entry((text.as_ptr(), text.len()))
            .or_insert_with(|| text.into())
            .clone()
    }

    /// The layout of `class`. A layout whose collection reported errors is not kept, so that
    /// every instance reports them as before.
    pub(crate) fn layout(&mut self, class: ClassId) -> Rc<ClassLayout<'a>> {
        if let Some(layout) = &self.caches.layouts[class.0 as usize] {
            return layout.clone();
        }
        let errors = self.diagnostics.len();
        self.check_class_restrictions(class);
        let mut collected = ClassLayout::default();
        self.collect(class, Modifier::default(), &mut collected, &mut FxHashSet::default());
        self.check_inherited_classes(&collected.classes);
        let mut elements = std::mem::take(&mut collected.elements);
        let mut by_name: Vec<(NameKey, &'a str, usize)> = Vec::with_capacity(elements.len());
        let mut seen = std::collections::BTreeMap::new();
        let mut layout = collected;
        for mut element in elements.drain(..) {
            let name = element.decl.name.name.as_str();
            if let Some(&k) = seen.get(name) {
                let kept: &mut ElementDecl<'a> = &mut layout.elements[k];
                // A redeclaration in a derived class takes the place of the inherited element.
                if element.clause.redeclarable.redeclare && kept.original.is_none() {
                    self.check_redeclared_visibility(&element, kept);
                    element.original = Some(Original {
                        clause: kept.clause,
                        decl: kept.decl,
                        class: kept.class,
                    });
                    *kept = element;
                } else if kept.clause.redeclarable.redeclare && kept.original.is_none() {
                    self.check_redeclared_visibility(kept, &element);
                    kept.original = Some(Original {
                        clause: element.clause,
                        decl: element.decl,
                        class: element.class,
                    });
                } else if kept.class != element.class && !same_declaration(kept, &element) {
                    // Otherwise an element inherited twice (diamond) is the same element, and
                    // two declarations of one name must be alike (Modelica's section 7.1): the
                    // first is kept.
                    self.report_unlike_duplicate(class, kept, &element);
                }
                continue;
            }
            seen.insert(name, layout.elements.len());
            by_name.push((NameKey::of(name), name, layout.elements.len()));
            layout.elements.push(element);
        }
        self.check_element_redeclarations(&layout);
        by_name.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        layout.by_name = by_name;
        let layout = Rc::new(layout);
        if self.diagnostics.len() == errors {
            self.caches.layouts[class.0 as usize] = Some(layout.clone());
        }
        layout
    }

    /// E0218 for two declarations of one name in `class` and its base classes that are not
    /// written alike (`Integer x = 1;` beside an inherited `Real x = 2;`), shown at the one
    /// `class` declares itself, if any. (Two in one class are reported where the class's
    /// declarations are checked.)
    fn report_unlike_duplicate(&mut self, class: ClassId, first: &ElementDecl<'a>, second: &ElementDecl<'a>) {
        let (kept, other) = if first.class == class {
            (second, first)
        } else {
            (first, second)
        };
        let name = &other.decl.name.name;
        self.diagnostics.push(
            Diagnostic::error(
                "E0218",
                format!(
                    "`{name}` is declared twice, in `{}` and `{}`, and the two declarations differ",
                    self.table.get(other.class).full_name,
                    self.table.get(kept.class).full_name
                ),
                other.decl.name.span,
                "second declaration",
            )
            .with_label(kept.decl.name.span, "first declaration")
            .with_help("an element inherited twice, or declared and inherited, must be declared alike each time; rename one, or redeclare it"),
        );
    }

    /// Collects the elements and equations of `class` and of every class it extends. Modifiers
    /// are scoped to no instance: the layout is shared by all instances.
    ///
    /// `path` holds the classes whose `extends` clauses are being followed: a class met again on
    /// it extends itself. Inheritance chains of any length are fine (libraries nest deeper than
    /// any fixed bound one might pick), and a class reached twice on different paths (a diamond)
    /// is no cycle. The path is a set, so that checking it costs the same at any depth (a list
    /// made a chain of n `extends` levels cost n^2).
    fn collect(
        &mut self,
        class: ClassId,
        extends_modifier: Modifier<'a>,
        out: &mut ClassLayout<'a>,
        path: &mut FxHashSet<ClassId>,
    ) {
        if path.contains(&class) {
            let def = self.table.get(class).def;
            self.diagnostics.push(Diagnostic::error(
                "E0212",
                format!("`{}` extends itself (directly or through other classes)", def.name.name),
                def.name.span,
                "cyclic inheritance",
            ));
            return;
        }
        let entry = self.table.get(class);
        out.classes.push(class);
        if let ast::ClassBody::Short { base, modification, .. } = &entry.def.body {
            // `model M = N(k = 1);` behaves like `model M extends N(k = 1); end M;`.
            let scope = Scope {
                instance: None,
                class: entry.parent.unwrap_or(class),
            };
            let modifier = match modification {
                Some(m) => extends_modifier.merge(&Modifier::from_class_modification(m, scope)),
                None => extends_modifier,
            };
            match self.table.lookup(entry.parent.unwrap_or(class), base) {
                Ok(TypeRef::Class(b)) => {
                    path.insert(class);
                    self.collect(b, modifier, out, path);
                    path.remove(&class);
                }
                Ok(TypeRef::Builtin(_)) => {}
                Err(_) => {
                    out.incomplete = true;
                    self.unknown_class(entry.parent.unwrap_or(class), base);
                }
            }
            return;
        }
        for section in entry.sections() {
            match section {
                ast::Section::Elements {
                    elements, visibility, ..
                } => {
                    for element in elements {
                        match element {
                            ast::Element::Component(clause) => {
                                for decl in &clause.components {
                                    out.elements.push(ElementDecl {
                                        clause,
                                        decl,
                                        class,
                                        extends_modifier: extends_modifier.clone(),
                                        original: None,
                                        protected: *visibility == ast::Visibility::Protected,
                                    });
                                }
                            }
                            ast::Element::Extends(x) => match self.base_class(class, x) {
                                Ok(TypeRef::Class(base)) => {
                                    self.check_base(class, base, x);
                                    self.check_combined_base(class, Some(base), x);
                                    let scope = Scope { instance: None, class };
                                    let modifier = match &x.modification {
                                        Some(m) => extends_modifier
                                            .clone()
                                            .merge(&Modifier::from_class_modification(m, scope)),
                                        None => extends_modifier.clone(),
                                    };
                                    path.insert(class);
                                    let first = out.elements.len();
                                    self.collect(base, modifier, out, path);
                                    path.remove(&class);
                                    // The elements inherited through a protected `extends`
                                    // clause are protected (Modelica's section 7.1.2).
                                    if *visibility == ast::Visibility::Protected {
                                        out.elements[first..].iter_mut().for_each(|e| e.protected = true);
                                    }
                                    // `extends Board(redeclare model Ctl = PI)` redeclares a
                                    // class of the base, over the base's own redeclarations.
                                    if let Some(m) = &x.modification {
                                        let scope = Scope { instance: None, class };
                                        for r in crate::redeclare::in_class_modification(m, scope) {
                                            // A class the base does not have is reported, not
                                            // silently ignored.
                                            self.check_class_redeclaration(base, &r, true);
                                            out.class_redeclares.push(r);
                                        }
                                    }
                                }
                                Ok(TypeRef::Builtin(_)) => self.check_combined_base(class, None, x),
                                Err(reported) => {
                                    out.incomplete = true;
                                    if !reported {
                                        self.unknown_class(class, &x.base)
                                    }
                                }
                            },
                            ast::Element::Class(def) => {
                                let nested = self.table.get(class).nested.get(def.name.name.as_str()).copied();
                                if let Some(n) = nested {
                                    self.check_class_extends(n);
                                }
                                if def.redeclarable.redeclare {
                                    out.class_redeclares.push(ClassRedeclare {
                                        name: &def.name.name,
                                        def,
                                        scope: Scope { instance: None, class },
                                        class: nested,
                                        span: def.name.span,
                                    });
                                }
                            }
                            ast::Element::Import(import) => self.check_import(import),
                        }
                    }
                }
                ast::Section::Equations { initial, equations, .. } => {
                    for e in equations {
                        use crate::overconstrained::GraphUse;
                        match crate::overconstrained::graph_use(e) {
                            GraphUse::Late => out.counting_equations.push((e, class, *initial)),
                            graph_use => out.equations.push(crate::layout::LayoutEquation {
                                equation: e,
                                class,
                                initial: *initial,
                                builds_and_asks_graph: graph_use == GraphUse::BuildsAndAsks,
                            }),
                        }
                    }
                }
                ast::Section::Invariants { equations, .. } => {
                    out.invariants.extend(equations.iter().map(|e| (e, class)))
                }
                // Only functions have external clauses; the function's instantiation reads it.
                ast::Section::External { .. } => {}
                ast::Section::Algorithm {
                    initial,
                    statements,
                    span,
                } => out.algorithms.push((statements, class, *initial, *span)),
            }
        }
    }

    /// The member `name` of `instance` as it stands, without instantiating it.
    pub(crate) fn member(&self, instance: InstanceId, name: &str) -> Option<&Member> {
        let state = &self.instances[instance.0 as usize];
        Some(&self.members[state.first_member + state.layout.index(name)?])
    }

    /// The cycle of declarations that a read of member `name` of `instance`, which is being
    /// instantiated, closes: the full names of the members from that one to the one reading it,
    /// and that one again (`a -> b -> a`). Only called to report the cycle, so the walk along
    /// the members being instantiated costs nothing on the way of a model without one.
    pub(crate) fn declaration_cycle(&self, instance: InstanceId, name: &str) -> String {
        let Some(k) = self.instances[instance.0 as usize].layout.index(name) else {
            return format!("`{name}`");
        };
        let in_progress = &self.caches.members_in_progress;
        let from = in_progress.iter().rposition(|&m| m == (instance, k)).unwrap_or(0);
        let full_name = |&(i, k): &(InstanceId, usize)| {
            let parent = &self.model.instances[i.0 as usize].name;
            let element = &self.instances[i.0 as usize].layout.elements[k].decl.name.name;
            if parent.is_empty() {
                format!("`{element}`")
            } else {
                format!("`{parent}.{element}`")
            }
        };
        let mut names: Vec<String> = in_progress[from..].iter().map(full_name).collect();
        names.push(full_name(&(instance, k)));
        names.join(" -> ")
    }

    /// Instantiates member `name` of `instance` if it is still pending, and returns it.
    pub(crate) fn ensure_member(&mut self, instance: InstanceId, name: &str) -> Option<Member> {
        let k = self.instances[instance.0 as usize].layout.index(name)?;
        Some(self.ensure_member_at(instance, k))
    }

    /// The member `name` of `instance`, for a reference that goes on through it
    /// (`transformer1.VectorGroup`). While a declaration is being made, a component reached
    /// this way whose own modifiers read a member being made is made without its contents (a
    /// shell): Modelica's dependencies are between variables, and the binding of
    /// `transformerData1.C1` that reads the constant `transformer1.VectorGroup` does not depend
    /// on `transformer1(R1 = transformerData1.R1)`, which instantiating all of `transformer1`
    /// would evaluate, closing a false cycle. Other components are made whole, as when they are
    /// reached otherwise, so that the order of the model's variables does not change. The walk
    /// over the instance's members completes a shell (`ensure_member_at`), as does any
    /// reference to the component itself; [`Self::complete_shells`] completes those no walk
    /// reaches.
    pub(crate) fn reach_member(&mut self, instance: InstanceId, name: &str) -> Option<Member> {
        let state = &self.instances[instance.0 as usize];
        let k = state.layout.index(name)?;
        let slot = state.first_member + k;
        if !matches!(self.members[slot], Member::Pending) {
            return Some(self.members[slot].clone());
        }
        if !self.modifiers_read_members_in_progress(instance, k) {
            return Some(self.ensure_member_at(instance, k));
        }
        let outer = self.caches.shallow_slot.replace(slot);
        let member = self.ensure_member_at(instance, k);
        self.caches.shallow_slot = outer;
        Some(member)
    }

    /// Instantiates the instances of one component, in order. `alike` when every element has
    /// the same modifier: then each adds what the second added (the first may also have built
    /// what they all read outside), so the size of the whole array is known after the second,
    /// and a model past the limit is refused before the rest is built.
    pub(crate) fn instantiate_component_instances(&mut self, insts: &[InstanceId], alike: bool, name: &ast::Ident) {
        let mut before = self.model_size();
        for (k, &child) in insts.iter().enumerate() {
            if self.stopped() {
                break;
            }
            self.instantiate(child);
            if alike && k == 1 {
                let one = self.model_size().minus(before);
                let rest = insts.len() - 2;
                if !self.predicted_size_has_room(one, rest, name.span, &name.name) {
                    break;
                }
            }
            before = self.model_size();
        }
    }

    /// Whether the modification written with element `k` of `instance` reads a member of
    /// `instance` that is being made (its name's first part names one).
    fn modifiers_read_members_in_progress(&self, instance: InstanceId, k: usize) -> bool {
        let in_progress = &self.caches.members_in_progress;
        if in_progress.is_empty() {
            return false;
        }
        let layout = &self.instances[instance.0 as usize].layout;
        let Some(modification) = &layout.elements[k].decl.modification else {
            return false;
        };
        let mut found = false;
        let mut reads = |c: &ast::ComponentRef| {
            found |= layout
                .index(&c.parts[0].name.name)
                .is_some_and(|j| in_progress.contains(&(instance, j)));
        };
        let mut pending = vec![modification];
        while let Some(m) = pending.pop() {
            if let Some(binding) = &m.binding {
                eqm_syntax::visit::refs_in_expr(binding, &mut reads);
            }
            if let Some(class_modification) = &m.class_modification {
                pending.extend(
                    class_modification
                        .arguments
                        .iter()
                        .filter_map(|a| a.modification.as_ref()),
                );
            }
        }
        found
    }

    /// Instantiates the contents of a component made as a shell, as its member.
    fn complete_shell(&mut self, shell: crate::caches::Shell<'a>) {
        self.caches.members_in_progress.push((shell.instance, shell.element));
        self.instantiate_component_instances(&shell.instances, shell.alike, shell.name);
        self.caches.members_in_progress.pop();
    }

    /// Completes the shells no walk over members reached (those inside instances that are not
    /// walked), in the order of their slots.
    pub(crate) fn complete_shells(&mut self) {
        while let Some((_, shell)) = self.caches.shells.pop_first() {
            if self.stopped() {
                return;
            }
            self.complete_shell(shell);
        }
    }

    /// Whether the element `name` of `instance` is declared with a condition (its replaced
    /// declaration's, when a redeclaration replaced it).
    pub(crate) fn is_conditional_element(&self, instance: InstanceId, name: &str) -> bool {
        let layout = &self.instances[instance.0 as usize].layout;
        layout.index(name).is_some_and(|k| {
            let element = &layout.elements[k];
            element.original.map_or(element.decl, |o| o.decl).condition.is_some()
        })
    }

    /// Instantiates element `k` of `instance`'s layout if it is still pending, and returns it.
    pub(crate) fn ensure_member_at(&mut self, instance: InstanceId, k: usize) -> Member {
        let state = &self.instances[instance.0 as usize];
        let slot = state.first_member + k;
        if !matches!(self.members[slot], Member::Pending) {
            if let Some(shell) = self.caches.shells.remove(&slot) {
                self.complete_shell(shell);
            }
            return self.members[slot].clone();
        }
        self.members[slot] = Member::InProgress;
        let layout = state.layout.clone();
        let deferred = self.deferred_starts.len();
        self.caches.members_in_progress.push((instance, k));
        let result = self.instantiate_element(instance, &layout.elements[k], slot);
        self.caches.members_in_progress.pop();
        self.members[slot] = result.clone();
        if self.deferred_starts.len() > deferred {
            self.finish_deferred_starts(deferred);
        }
        result
    }
}

/// Whether two elements of one name are the same declaration, or two written alike (their
/// descriptions and annotations aside), which Modelica merges into one.
fn same_declaration(a: &ElementDecl<'_>, b: &ElementDecl<'_>) -> bool {
    if std::ptr::eq(a.decl, b.decl) {
        return true;
    }
    let written = |e: &ElementDecl<'_>| {
        let mut clause = e.clause.clone();
        clause.components = vec![e.decl.clone()];
        clause.components[0].description = None;
        clause.components[0].annotation = None;
        eqm_syntax::normalize::normalize_component_clause(&mut clause);
        clause
    };
    written(a) == written(b)
}
