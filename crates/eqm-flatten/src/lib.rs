//! Instantiation and flattening: a class becomes one flat model.
//!
//! Input: a [`ClassTable`] and the name of the model to simulate. Output: a [`FlatModel`] with
//! scalar variables and equations (each with origin and span), connection sets, when-clauses and
//! assertions, plus diagnostics (`E02xx` names, `E03xx` instantiation and connections, `E04xx`
//! balance). Components are instantiated on demand, so declaration order never matters;
//! structural parameters (array sizes, for ranges, parameter-only if conditions) are evaluated at
//! compile time. This stage deliberately does no symbolic simplification and no alias
//! elimination: the flat model shows the equations exactly as the model produces them.

pub mod resolve;
pub mod sources;
pub mod stdlib;

mod balance;
mod connect;
mod consteval;
mod equations;
mod eval;
mod functions;
mod modifier;
mod value;

pub use sources::Sources;

use crate::resolve::{ClassId, ClassTable, TypeRef};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::FxHashMap;
use eqm_ir::expr::{ExprId, VarId};
use eqm_ir::flat::{self, ConnectorRole, FlatModel, InstanceId, ScalarType};
use eqm_syntax::ast;
use modifier::{Modifier, Scope};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::BuildHasher as _;
use std::rc::Rc;
use std::sync::Arc;
use value::Value;

/// Settings that change the flat model without editing files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--param NAME=VALUE` overrides of top-level parameters.
    pub parameters: Vec<(String, f64)>,
}

/// Flattens `model`. Returns the model when no error was found, and all diagnostics.
pub fn flatten(table: &ClassTable<'_>, model: &str, options: &Options) -> (Option<FlatModel>, Vec<Diagnostic>) {
    let Some(class) = table.find(model) else {
        let names = table.all_names();
        let last = model.rsplit('.').next().unwrap_or(model);
        let suggestion = eqm_diag::did_you_mean(model, names.iter().copied())
            .or_else(|| names.iter().copied().find(|n| n.rsplit('.').next() == Some(last)));
        let mut d = Diagnostic {
            code: "E0201",
            severity: eqm_diag::Severity::Error,
            message: format!("no model named `{model}`"),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        };
        if let Some(s) = suggestion {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        return (None, vec![d]);
    };
    let mut f = Flattener::new(table, class, options);
    f.run();
    let Flattener { model, diagnostics, .. } = f;
    let ok = !eqm_diag::has_errors(&diagnostics);
    (ok.then_some(model), diagnostics)
}

/// Names the single top-level model among the user's classes, for commands without `--model`.
pub fn default_model(files: &[&ast::StoredDefinition]) -> Result<String, Vec<String>> {
    let candidates: Vec<String> = files
        .iter()
        .flat_map(|f| &f.classes)
        .filter(|c| {
            matches!(
                c.kind,
                ast::ClassKind::Model | ast::ClassKind::Block | ast::ClassKind::Class
            ) && !c.partial
        })
        .map(|c| c.name.name.clone())
        .collect();
    if candidates.len() == 1 {
        Ok(candidates[0].clone())
    } else {
        Err(candidates)
    }
}

/// A component member of an instance.
#[derive(Clone, Debug)]
enum Member {
    /// Declared, not instantiated yet.
    Pending,
    InProgress,
    /// A conditional component whose condition is false.
    Absent,
    /// A component whose declaration had errors (already reported).
    Failed,
    Var(VarId),
    /// Arrays are shared (`Rc`), because every reference to one element looks the member up,
    /// and boxed behind one pointer, which keeps every member (most are scalars) small.
    VarArray(Rc<ArrayMember<VarId>>),
    Inst(InstanceId),
    InstArray(Rc<ArrayMember<InstanceId>>),
}

/// The elements of an array component, row-major, with its dimensions.
#[derive(Debug)]
struct ArrayMember<T> {
    dims: Rc<[usize]>,
    elements: Rc<[T]>,
}

impl<T> ArrayMember<T> {
    fn new(dims: Vec<usize>, elements: Vec<T>) -> Rc<ArrayMember<T>> {
        Rc::new(ArrayMember {
            dims: dims.into(),
            elements: elements.into(),
        })
    }
}

/// A declared component of a class (its own or inherited).
struct ElementDecl<'a> {
    clause: &'a ast::ComponentClause,
    decl: &'a ast::ComponentDecl,
    /// The class whose body declares it (a base class for inherited elements).
    class: ClassId,
    /// Modifiers from the `extends` clauses through which it was inherited. Their bindings have
    /// no instance in their scope, because the layout is shared by all instances of the class;
    /// [`Modifier::in_instance`] supplies it.
    extends_modifier: Modifier<'a>,
}

/// The components and sections of a class including inherited ones. Every instance of a class
/// has the same layout, so it is collected once per class and shared: a chain of 10^5 masses
/// walks `Mass` and its base classes once and keeps no member names per instance.
#[derive(Default)]
struct ClassLayout<'a> {
    /// In declaration order, each name once: an element inherited twice (diamond) is the same
    /// element, and the first is kept.
    elements: Vec<ElementDecl<'a>>,
    /// Element names with their key and index in `elements`, sorted by key and then by name
    /// for lookups: most comparisons are then decided by comparing two integers.
    by_name: Vec<(NameKey, &'a str, usize)>,
    equations: Vec<(&'a ast::Equation, ClassId, bool)>,
    invariants: Vec<(&'a ast::Equation, ClassId)>,
    algorithms: Vec<(&'a [ast::Statement], ClassId, bool, Span)>,
}

impl<'a> ClassLayout<'a> {
    fn index(&self, name: &str) -> Option<usize> {
        let key = NameKey::of(name);
        // Names with equal keys have the same length and first eight bytes: only the rest of
        // longer names is left to compare.
        let rest = name.as_bytes().get(8..).unwrap_or_default();
        // Most names fit in the key: then equal keys are equal names, and no byte comparison
        // (a call to `memcmp`, which used to be a quarter of the time of flattening) is needed.
        let k = self
            .by_name
            .binary_search_by(|(k, n, _)| {
                k.cmp(&key).then_with(|| {
                    if rest.is_empty() {
                        std::cmp::Ordering::Equal
                    } else {
                        n.as_bytes().get(8..).unwrap_or_default().cmp(rest)
                    }
                })
            })
            .ok()?;
        Some(self.by_name[k].2)
    }

    /// Element names in declaration order (for connector leaf lists and messages).
    fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.elements.iter().map(|e| e.decl.name.name.as_str())
    }
}

/// Per-instance flattening state.
struct InstanceState<'a> {
    class: ClassId,
    /// The modifier from the enclosing instance until the members are instantiated; `None`
    /// when empty (most instances), boxed otherwise to keep the state of every instance small.
    modifier: Option<Box<Modifier<'a>>>,
    layout: Rc<ClassLayout<'a>>,
    /// Where its members, indexed like `layout.elements`, start in [`Flattener::members`].
    first_member: usize,
    /// Inherited variability (`parameter` on a record component makes its fields parameters).
    variability: flat::Variability,
    causality: flat::Causality,
    is_connector: bool,
}

/// The prefixes and class of a resolved component type, after following short class definitions.
#[derive(Clone)]
struct ResolvedType<'a> {
    target: TypeRef,
    /// Modifiers of the short class definitions on the way (innermost last).
    modifier: Modifier<'a>,
    prefixes: ast::TypePrefix,
    dims: Vec<&'a ast::Subscript>,
    is_connector: bool,
    class_name: String,
}

/// The kind of a flat variable as connecting sees it (a copy of fields of `flat::Variable`).
#[derive(Clone, Copy)]
struct VarKind {
    variability: flat::Variability,
    role: ConnectorRole,
    causality: flat::Causality,
    ty: ScalarType,
    /// Whether the variable's type is a connector (signal connectors like `RealInput`).
    is_connector_type: bool,
}

impl VarKind {
    /// Whether the variable can be connected: parameters and constants are not.
    fn is_time_varying(self) -> bool {
        self.variability.is_time_varying()
    }
}

pub(crate) struct Flattener<'t, 'a> {
    table: &'t ClassTable<'a>,
    root_class: ClassId,
    options: &'t Options,
    pub(crate) model: FlatModel,
    pub(crate) diagnostics: Vec<Diagnostic>,
    instances: Vec<InstanceState<'a>>,
    /// The members of all instances, each instance's in one run: one vector instead of a small
    /// one per instance.
    members: Vec<Member>,
    /// Full class names by class id, shared by the instances of a class.
    class_names: Vec<Option<Arc<str>>>,
    /// Descriptions and units, one shared copy per text of the source, keyed by the text's
    /// address and length: every instance of a class shares its declarations' texts, and a
    /// pointer hashes faster than the text.
    strings: FxHashMap<(*const u8, usize), Arc<str>>,
    /// Layouts by class id, once collected without errors.
    layouts: Vec<Option<Rc<ClassLayout<'a>>>>,
    /// Resolved `connect` equations, turned into connection sets after instantiation.
    connects: Vec<connect::ResolvedConnect>,
    /// The scalar pairs of all connects.
    connect_pairs: Vec<connect::ConnectPair>,
    /// What connecting needs of each variable, by `VarId`: a few bytes each instead of the
    /// whole `flat::Variable`, so that connecting a large model reads a small array that stays in
    /// the cache rather than one cache line per variable.
    var_kinds: Vec<VarKind>,
    consts: consteval::ConstCache,
    package_constants: BTreeMap<(ClassId, String), Option<Value>>,
    used_overrides: Vec<bool>,
    /// Functions instantiated so far (`None`: its declaration has errors).
    function_ids: BTreeMap<ClassId, Option<eqm_ir::expr::FuncId>>,
    /// Caller-side interfaces, indexed like `model.functions`.
    signatures: Vec<functions::Signature>,
    /// Local names of the function bodies being flattened (innermost last).
    frames: Vec<functions::Frame>,
    /// Resolved component types by (scope, the type name's node in the AST): every instance of
    /// a class resolves the same declarations, so a chain of 10^5 masses resolves `Units.Mass`
    /// once. Shared (`Rc`), so that a lookup copies no modifier or name. Only used for lookups,
    /// never iterated.
    type_cache: FxHashMap<(ClassId, *const ast::Name), Option<Rc<ResolvedType<'a>>>>,
    /// Reused by [`Self::flatten_equation`] for the flat equations of one equation.
    equation_buffer: Vec<flat::Equation>,
    /// The attributes of a variable before they are known: empty, and shared.
    no_attributes: flat::Attributes,
    /// See [`Self::share_attributes`].
    recent_attributes: Vec<Option<flat::Attributes>>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    fn new(table: &'t ClassTable<'a>, root_class: ClassId, options: &'t Options) -> Self {
        Flattener {
            table,
            root_class,
            options,
            model: FlatModel {
                name: table.get(root_class).full_name.clone(),
                ..FlatModel::default()
            },
            diagnostics: Vec::new(),
            instances: Vec::new(),
            members: Vec::new(),
            class_names: vec![None; table.classes.len()],
            strings: FxHashMap::default(),
            layouts: vec![None; table.classes.len()],
            connects: Vec::new(),
            connect_pairs: Vec::new(),
            var_kinds: Vec::new(),
            consts: consteval::ConstCache::default(),
            package_constants: BTreeMap::new(),
            used_overrides: vec![false; options.parameters.len()],
            function_ids: BTreeMap::new(),
            signatures: Vec::new(),
            frames: Vec::new(),
            type_cache: FxHashMap::default(),
            equation_buffer: Vec::new(),
            no_attributes: flat::Attributes::default(),
            recent_attributes: vec![None; 256],
        }
    }

    fn run(&mut self) {
        let entry = self.table.get(self.root_class);
        if matches!(
            entry.def.kind,
            ast::ClassKind::Package | ast::ClassKind::Function | ast::ClassKind::Type
        ) {
            self.diagnostics.push(Diagnostic::error(
                "E0211",
                format!("`{}` is a {}, not a model", entry.full_name, entry.def.kind.keyword()),
                entry.def.name.span,
                "cannot be simulated",
            ));
            return;
        }
        let root = self.new_instance(
            String::new(),
            self.root_class,
            None,
            entry.def.name.span,
            Modifier::default(),
            flat::Variability::Continuous,
            flat::Causality::None,
            false,
        );
        self.model.experiment = experiment(entry.def);
        self.instantiate(root);
        for (i, (name, _)) in self.options.parameters.iter().enumerate() {
            if !self.used_overrides[i] {
                self.diagnostics.push(Diagnostic {
                    code: "E0209",
                    severity: eqm_diag::Severity::Error,
                    message: format!("`--param {name}` names no parameter of `{}`", self.model.name),
                    labels: Vec::new(),
                    notes: Vec::new(),
                    help: eqm_diag::did_you_mean(
                        name,
                        self.model
                            .variables
                            .iter()
                            .filter(|v| v.variability == flat::Variability::Parameter)
                            .map(|v| v.name.as_str()),
                    )
                    .map(|s| format!("did you mean `{s}`?")),
                });
            }
        }
        if eqm_diag::has_errors(&self.diagnostics) {
            return;
        }
        self.build_connection_sets();
        self.evaluate_parameter_values();
        if !eqm_diag::has_errors(&self.diagnostics) {
            balance::check(self);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_instance(
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
        let empty = modifier.binding.is_none() && modifier.args.is_empty();
        let first_member = self.members.len();
        self.members
            .resize(first_member + layout.elements.len(), Member::Pending);
        self.instances.push(InstanceState {
            class,
            modifier: (!empty).then(|| Box::new(modifier)),
            first_member,
            layout,
            variability,
            causality,
            is_connector,
        });
        id
    }

    fn class_name(&mut self, class: ClassId) -> Arc<str> {
        let table = self.table;
        self.class_names[class.0 as usize]
            .get_or_insert_with(|| table.get(class).full_name.as_str().into())
            .clone()
    }

    /// One shared copy of a description or unit text.
    fn shared(&mut self, text: &'a str) -> Arc<str> {
        self.strings
            .entry((text.as_ptr(), text.len()))
            .or_insert_with(|| text.into())
            .clone()
    }

    /// Instantiates every element of `instance`, then its equations.
    fn instantiate(&mut self, instance: InstanceId) {
        let layout = self.instances[instance.0 as usize].layout.clone();
        self.check_modifier_targets(instance);
        for k in 0..layout.elements.len() {
            self.ensure_member_at(instance, k);
        }
        // Every member is instantiated now; the modifier is not needed again.
        self.instances[instance.0 as usize].modifier = None;
        for &(eq, class, initial) in &layout.equations {
            let scope = Scope {
                instance: Some(instance),
                class,
            };
            self.flatten_equation(eq, scope, &mut Vec::new(), initial);
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

    /// The layout of `class`. A layout whose collection reported errors is not kept, so that
    /// every instance reports them as before.
    fn layout(&mut self, class: ClassId) -> Rc<ClassLayout<'a>> {
        if let Some(layout) = &self.layouts[class.0 as usize] {
            return layout.clone();
        }
        let errors = self.diagnostics.len();
        let mut collected = ClassLayout::default();
        self.collect(class, Modifier::default(), &mut collected, 0);
        let mut elements = std::mem::take(&mut collected.elements);
        let mut by_name: Vec<(NameKey, &'a str, usize)> = Vec::with_capacity(elements.len());
        let mut seen = std::collections::BTreeSet::new();
        let mut layout = collected;
        for element in elements.drain(..) {
            let name = element.decl.name.name.as_str();
            // An element inherited twice (diamond) is the same element; keep the first.
            if !seen.insert(name) {
                continue;
            }
            by_name.push((NameKey::of(name), name, layout.elements.len()));
            layout.elements.push(element);
        }
        by_name.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        layout.by_name = by_name;
        let layout = Rc::new(layout);
        if self.diagnostics.len() == errors {
            self.layouts[class.0 as usize] = Some(layout.clone());
        }
        layout
    }

    /// Collects the elements and equations of `class` and of every class it extends. Modifiers
    /// are scoped to no instance: the layout is shared by all instances.
    fn collect(&mut self, class: ClassId, extends_modifier: Modifier<'a>, out: &mut ClassLayout<'a>, depth: usize) {
        if depth > 32 {
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
                Ok(TypeRef::Class(b)) => self.collect(b, modifier, out, depth + 1),
                Ok(TypeRef::Builtin(_)) => {}
                Err(_) => self.unknown_class(entry.parent.unwrap_or(class), base),
            }
            return;
        }
        for section in entry.sections() {
            match section {
                ast::Section::Elements { elements, .. } => {
                    for element in elements {
                        match element {
                            ast::Element::Component(clause) => {
                                for decl in &clause.components {
                                    out.elements.push(ElementDecl {
                                        clause,
                                        decl,
                                        class,
                                        extends_modifier: extends_modifier.clone(),
                                    });
                                }
                            }
                            ast::Element::Extends(x) => match self.table.lookup_base(class, &x.base) {
                                Ok(TypeRef::Class(base)) => {
                                    let scope = Scope { instance: None, class };
                                    let modifier = match &x.modification {
                                        Some(m) => extends_modifier
                                            .clone()
                                            .merge(&Modifier::from_class_modification(m, scope)),
                                        None => extends_modifier.clone(),
                                    };
                                    self.collect(base, modifier, out, depth + 1);
                                }
                                Ok(TypeRef::Builtin(_)) => {}
                                Err(_) => self.unknown_class(class, &x.base),
                            },
                            ast::Element::Class(_) | ast::Element::Import(_) => {}
                        }
                    }
                }
                ast::Section::Equations { initial, equations, .. } => {
                    out.equations.extend(equations.iter().map(|e| (e, class, *initial)))
                }
                ast::Section::Invariants { equations, .. } => {
                    out.invariants.extend(equations.iter().map(|e| (e, class)))
                }
                ast::Section::Algorithm {
                    initial,
                    statements,
                    span,
                } => out.algorithms.push((statements, class, *initial, *span)),
            }
        }
    }

    pub(crate) fn unknown_class(&mut self, scope: ClassId, name: &ast::Name) {
        let text = eqm_syntax::pretty::name_text(name);
        let visible = self.table.visible_names(scope);
        let mut d = Diagnostic::error(
            "E0202",
            format!("unknown class `{text}`"),
            name.span,
            "no class with this name is visible here",
        );
        if let Some(s) = eqm_diag::did_you_mean(&name.parts[0].name, visible.iter().map(|s| s.as_str())) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        if name.parts.len() > 1 {
            d = d.with_note(
                "a dotted name is looked up from its first part: enclosing classes, imports, then the library",
            );
        }
        self.diagnostics.push(d);
    }

    /// Reports modifier arguments that name no element of the instance.
    fn check_modifier_targets(&mut self, instance: InstanceId) {
        let state = &self.instances[instance.0 as usize];
        let mut unknown = Vec::new();
        for arg in state.modifier.iter().flat_map(|m| &m.args) {
            if state.layout.index(arg.name).is_none() {
                unknown.push((arg.name.to_string(), arg.span));
            }
        }
        if unknown.is_empty() {
            return;
        }
        let class_name = self.table.get(state.class).full_name.clone();
        let layout = state.layout.clone();
        for (name, span) in unknown {
            let mut d = Diagnostic::error(
                "E0203",
                format!("`{class_name}` has no element `{name}` to modify"),
                span,
                "modifies nothing",
            );
            if let Some(s) = eqm_diag::did_you_mean(&name, layout.names()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diagnostics.push(d);
        }
    }

    /// The member `name` of `instance` as it stands, without instantiating it.
    fn member(&self, instance: InstanceId, name: &str) -> Option<&Member> {
        let state = &self.instances[instance.0 as usize];
        Some(&self.members[state.first_member + state.layout.index(name)?])
    }

    /// Instantiates member `name` of `instance` if it is still pending, and returns it.
    fn ensure_member(&mut self, instance: InstanceId, name: &str) -> Option<Member> {
        let k = self.instances[instance.0 as usize].layout.index(name)?;
        Some(self.ensure_member_at(instance, k))
    }

    /// Instantiates element `k` of `instance`'s layout if it is still pending, and returns it.
    fn ensure_member_at(&mut self, instance: InstanceId, k: usize) -> Member {
        let state = &self.instances[instance.0 as usize];
        let slot = state.first_member + k;
        if !matches!(self.members[slot], Member::Pending) {
            return self.members[slot].clone();
        }
        self.members[slot] = Member::InProgress;
        let layout = state.layout.clone();
        let result = self.instantiate_element(instance, &layout.elements[k]);
        self.members[slot] = result.clone();
        result
    }

    fn resolve_type(
        &mut self,
        scope_class: ClassId,
        name: &'a ast::Name,
        depth: usize,
    ) -> Option<Rc<ResolvedType<'a>>> {
        let key = (scope_class, name as *const ast::Name);
        if let Some(known) = self.type_cache.get(&key) {
            return known.clone();
        }
        let resolved = self.resolve_type_uncached(scope_class, name, depth).map(Rc::new);
        self.type_cache.insert(key, resolved.clone());
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
        let mut resolved = ResolvedType {
            target,
            modifier: Modifier::default(),
            prefixes: ast::TypePrefix::default(),
            dims: Vec::new(),
            is_connector: false,
            class_name: eqm_syntax::pretty::name_text(name),
        };
        if let TypeRef::Class(c) = target {
            let entry = self.table.get(c);
            resolved.class_name = entry.full_name.clone();
            resolved.is_connector = entry.def.kind == ast::ClassKind::Connector;
            if let ast::ClassBody::Short {
                prefixes,
                base,
                dims,
                modification,
                ..
            } = &entry.def.body
                && depth < 32
            {
                let parent = entry.parent.unwrap_or(c);
                // A short definition of a builtin or another short class is followed; one of a
                // long class stays the class itself (its body is collected like an extends).
                let base_type = self.table.lookup(parent, base).ok();
                let follows = match base_type {
                    Some(TypeRef::Builtin(_)) => true,
                    Some(TypeRef::Class(b)) => matches!(self.table.get(b).def.body, ast::ClassBody::Short { .. }),
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
            }
        }
        Some(resolved)
    }

    fn instantiate_element(&mut self, instance: InstanceId, element: &ElementDecl<'a>) -> Member {
        let decl = element.decl;
        let clause = element.clause;
        let scope = Scope {
            instance: Some(instance),
            class: element.class,
        };
        let Some(resolved) = self.resolve_type(element.class, &clause.type_name, 0) else {
            return Member::Failed;
        };
        // Modelica precedence: the enclosing instance's modifier, then the extends clause's,
        // then the declaration's own, then the type's.
        let (outer, _) = match &self.instances[instance.0 as usize].modifier {
            Some(m) => m.child(&decl.name.name),
            None => Default::default(),
        };
        let (from_extends, _) = element.extends_modifier.child(&decl.name.name);
        let from_extends = from_extends.in_instance(instance);
        let own = decl
            .modification
            .as_ref()
            .map(|m| Modifier::from_ast(m, scope))
            .unwrap_or_default();
        let modifier = outer
            .merge_owned(from_extends)
            .merge_owned(own)
            .merge(&resolved.modifier);
        if let Some(condition) = &decl.condition {
            match self.eval_structural_bool(condition, scope, "the condition of a conditional component") {
                Some(false) => return Member::Absent,
                Some(true) => {}
                None => return Member::Failed,
            }
        }
        let mut dims = Vec::new();
        for sub in clause
            .type_dims
            .iter()
            .chain(decl.dims.iter())
            .chain(resolved.dims.iter().copied())
        {
            match sub {
                ast::Subscript::Colon(span) => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "array size `:` is not allowed here",
                        *span,
                        "components need known sizes",
                    ));
                    return Member::Failed;
                }
                ast::Subscript::Expr(e) => match self.eval_structural_int(e, scope, "an array size") {
                    Some(n) if n >= 0 => dims.push(n as usize),
                    Some(n) => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("array size is negative ({n})"),
                            e.span,
                            "must be zero or more",
                        ));
                        return Member::Failed;
                    }
                    None => return Member::Failed,
                },
            }
        }
        let parent_state = &self.instances[instance.0 as usize];
        let prefixes = merge_prefixes(clause.prefixes, resolved.prefixes);
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
        let total: usize = dims.iter().product();
        // A scalar component is its only element and takes the modifier and name as they are,
        // without copying them; an array's elements each get their own.
        let (mut scalar, modifier, base_name) = if dims.is_empty() {
            (Some((modifier, base_name)), Modifier::default(), String::new())
        } else {
            (None, modifier, base_name)
        };
        match resolved.target {
            TypeRef::Builtin(ty) => {
                let mut vars = Vec::with_capacity(total);
                let description = decl.description.as_ref().map(|d| self.shared(&d.text));
                for flat_index in 0..total {
                    let (m, name) = scalar
                        .take()
                        .unwrap_or_else(|| array_element(&modifier, &base_name, &dims, flat_index));
                    let v = self.new_variable(VarSpec {
                        name,
                        instance,
                        ty,
                        variability,
                        causality,
                        connection: prefixes.connection,
                        in_connector: self.instances[instance.0 as usize].is_connector,
                        is_connector_type: resolved.is_connector,
                        modifier: &m,
                        description: description.clone(),
                        span: decl.name.span,
                    });
                    vars.push(v);
                }
                if dims.is_empty() {
                    Member::Var(vars[0])
                } else {
                    Member::VarArray(ArrayMember::new(dims, vars))
                }
            }
            TypeRef::Class(class) => {
                let kind = self.table.get(class).def.kind;
                if matches!(kind, ast::ClassKind::Package | ast::ClassKind::Function) {
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
                let mut insts = Vec::with_capacity(total);
                for flat_index in 0..total {
                    let (m, name) = scalar
                        .take()
                        .unwrap_or_else(|| array_element(&modifier, &base_name, &dims, flat_index));
                    let child = self.new_instance(
                        name,
                        class,
                        Some(instance),
                        decl.name.span,
                        m,
                        variability,
                        causality,
                        resolved.is_connector,
                    );
                    self.instantiate(child);
                    insts.push(child);
                }
                if dims.is_empty() {
                    Member::Inst(insts[0])
                } else {
                    Member::InstArray(ArrayMember::new(dims, insts))
                }
            }
        }
    }

    fn new_variable(&mut self, spec: VarSpec<'_, 'a>) -> VarId {
        let id = VarId(self.model.variables.len() as u32);
        let role = match spec.connection {
            ast::Connection::Flow => ConnectorRole::Flow,
            ast::Connection::Potential => ConnectorRole::Potential,
            ast::Connection::None if spec.in_connector || spec.is_connector_type => ConnectorRole::Potential,
            ast::Connection::None => ConnectorRole::None,
        };
        self.model.variables.push(flat::Variable {
            name: spec.name,
            instance: spec.instance,
            variability: spec.variability,
            ty: spec.ty,
            causality: spec.causality,
            role,
            attributes: self.no_attributes.clone(),
            binding: None,
            value: None,
            description: spec.description,
            span: spec.span,
        });
        self.var_kinds.push(VarKind {
            variability: spec.variability,
            role,
            causality: spec.causality,
            ty: spec.ty,
            is_connector_type: spec.is_connector_type,
        });
        let scope_for_messages = spec.span;
        // Attributes.
        let mut attributes = flat::AttributeValues::default();
        for arg in &spec.modifier.args {
            let Some(binding) = &arg.modifier.binding else {
                self.diagnostics.push(Diagnostic::error(
                    "E0203",
                    format!("attribute `{}` needs a value", arg.name),
                    arg.span,
                    "write `name = value`",
                ));
                continue;
            };
            match arg.name {
                "start" | "min" | "max" | "nominal" => {
                    let Some(value) = self.eval_binding(binding, spec.ty) else {
                        continue;
                    };
                    let slot = match arg.name {
                        "start" => &mut attributes.start,
                        "min" => &mut attributes.min,
                        "max" => &mut attributes.max,
                        _ => &mut attributes.nominal,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
                "fixed" => {
                    if attributes.fixed.is_none() {
                        attributes.fixed =
                            self.eval_structural_bool(binding.expr, binding.scope, "the `fixed` attribute");
                    }
                }
                "unit" | "displayUnit" | "quantity" => {
                    if let ast::ExprKind::String(s) = &binding.expr.kind {
                        match arg.name {
                            "unit" if attributes.unit.is_none() => attributes.unit = Some(self.shared(s)),
                            "displayUnit" if attributes.display_unit.is_none() => {
                                attributes.display_unit = Some(self.shared(s))
                            }
                            _ => {}
                        }
                    } else {
                        self.diagnostics.push(Diagnostic::error(
                            "E0305",
                            format!("`{}` must be a string", arg.name),
                            binding.expr.span,
                            "expected a string literal",
                        ));
                    }
                }
                "stateSelect" => {
                    if attributes.state_select.is_none() {
                        attributes.state_select = self.state_select(binding.expr);
                    }
                }
                other => {
                    let mut d = Diagnostic::error(
                        "E0203",
                        format!("`{other}` is not an attribute of a scalar variable"),
                        arg.span,
                        "modifies nothing",
                    )
                    .with_label(scope_for_messages, "this variable has a built-in type");
                    if let Some(s) = eqm_diag::did_you_mean(
                        other,
                        [
                            "start",
                            "fixed",
                            "min",
                            "max",
                            "nominal",
                            "unit",
                            "displayUnit",
                            "stateSelect",
                            "quantity",
                        ],
                    ) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    } else {
                        d = d.with_help(
                            "the attributes are start, fixed, min, max, nominal, unit, displayUnit and stateSelect",
                        );
                    }
                    self.diagnostics.push(d);
                }
            }
        }
        self.model.variables[id.0 as usize].attributes = self.share_attributes(attributes);
        // The binding: parameters and constants keep it; other variables get an equation.
        let overridden = self.override_for(id);
        if let Some(value) = overridden {
            let e = self.model.exprs.real(value);
            self.model.variables[id.0 as usize].binding = Some(e);
        } else if let Some(binding) = &spec.modifier.binding
            && let Some(value) = self.eval_binding(binding, spec.ty)
        {
            match spec.variability {
                flat::Variability::Parameter | flat::Variability::Constant => {
                    self.model.variables[id.0 as usize].binding = Some(value);
                }
                _ => {
                    let lhs = self.model.exprs.var(id);
                    self.model.equations.push(flat::Equation {
                        lhs,
                        rhs: value,
                        origin: flat::Origin::Binding { var: id },
                        span: binding.expr.span,
                        array: None,
                    });
                }
            }
        }
        id
    }

    /// The attributes `values` as the recently made attributes that are equal, if there are any:
    /// variables declared alike share one copy. A small table indexed by hash keeps the last
    /// attributes of each hash, so that sharing costs no growing map.
    fn share_attributes(&mut self, values: flat::AttributeValues) -> flat::Attributes {
        // The hash only picks a slot, so it may be cheap: expression ids and the unit's address
        // (units are shared per source text) rather than every field and text.
        let ids = [values.start, values.min, values.max, values.nominal].map(|e| e.map_or(u32::MAX, |e| e.0));
        let unit = values.unit.as_ref().map_or(0, |u| u.as_ptr() as usize);
        let hash = eqm_ir::expr::FxBuild::default().hash_one((ids, unit));
        // The high bits, which multiplicative hashing mixes best.
        let slot = (hash >> 32) as usize % self.recent_attributes.len();
        match &self.recent_attributes[slot] {
            Some(known) if **known == values => known.clone(),
            _ => {
                let attributes = flat::Attributes::new(values);
                self.recent_attributes[slot] = Some(attributes.clone());
                attributes
            }
        }
    }

    fn override_for(&mut self, var: VarId) -> Option<f64> {
        let v = &self.model.variables[var.0 as usize];
        if v.variability != flat::Variability::Parameter {
            return None;
        }
        let i = self.options.parameters.iter().position(|(n, _)| *n == v.name)?;
        self.used_overrides[i] = true;
        Some(self.options.parameters[i].1)
    }

    fn state_select(&mut self, e: &ast::Expr) -> Option<flat::StateSelect> {
        let ast::ExprKind::Ref(c) = &e.kind else {
            return None;
        };
        let last = c.parts.last()?.name.name.as_str();
        let s = match last {
            "never" => flat::StateSelect::Never,
            "avoid" => flat::StateSelect::Avoid,
            "default" => flat::StateSelect::Default,
            "prefer" => flat::StateSelect::Prefer,
            "always" => flat::StateSelect::Always,
            _ => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0305",
                        format!("unknown stateSelect value `{last}`"),
                        e.span,
                        "not a StateSelect value",
                    )
                    .with_help("use StateSelect.never, avoid, default, prefer or always"),
                );
                return None;
            }
        };
        Some(s)
    }

    /// Evaluates a binding to one scalar expression, picking array elements as selected.
    fn eval_binding(&mut self, binding: &modifier::Binding<'a>, ty: ScalarType) -> Option<ExprId> {
        let mut value = self.eval(binding.expr, binding.scope, &mut Vec::new())?;
        for &i in &binding.select {
            value = match &value {
                // A scalar modifier on an array element applies to every element.
                Value::Scalar(..) => value.clone(),
                Value::Array(..) => match value.index_first(i) {
                    Some(v) => v,
                    None => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("the modifier has too few elements for element {}", i + 1),
                            binding.expr.span,
                            "array size does not match the component",
                        ));
                        return None;
                    }
                },
                Value::Str(_) => value.clone(),
            };
        }
        match value {
            Value::Scalar(e, t) => {
                if !types_compatible(ty, t) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0306",
                        format!("a {} value cannot bind a {} variable", type_name(t), type_name(ty)),
                        binding.expr.span,
                        format!("this is {}", type_name(t)),
                    ));
                    return None;
                }
                Some(e)
            }
            Value::Str(s) if ty == ScalarType::String => Some(self.model.exprs.add(eqm_ir::expr::Node::Str(s.into()))),
            Value::Str(_) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("a String value cannot bind a {} variable", type_name(ty)),
                    binding.expr.span,
                    "this is a String",
                ));
                None
            }
            Value::Array(dims, _, _) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("an array of size {dims:?} cannot bind a scalar"),
                    binding.expr.span,
                    "array value for a scalar",
                ));
                None
            }
        }
    }

    /// Records compile-time values of parameters that can be evaluated, for listings.
    fn evaluate_parameter_values(&mut self) {
        for i in 0..self.model.variables.len() {
            if self.var_kinds[i].is_time_varying() {
                continue;
            }
            if let Some(b) = self.model.variables[i].binding {
                let value = self.consts.eval(&self.model, b);
                self.model.variables[i].value = value;
            }
        }
    }
}

struct VarSpec<'m, 'a> {
    name: String,
    instance: InstanceId,
    ty: ScalarType,
    variability: flat::Variability,
    causality: flat::Causality,
    connection: ast::Connection,
    in_connector: bool,
    is_connector_type: bool,
    modifier: &'m Modifier<'a>,
    description: Option<Arc<str>>,
    span: Span,
}

fn merge_prefixes(outer: ast::TypePrefix, inner: ast::TypePrefix) -> ast::TypePrefix {
    ast::TypePrefix {
        connection: if outer.connection != ast::Connection::None {
            outer.connection
        } else {
            inner.connection
        },
        variability: if outer.variability != ast::Variability::Continuous {
            outer.variability
        } else {
            inner.variability
        },
        causality: if outer.causality != ast::Causality::None {
            outer.causality
        } else {
            inner.causality
        },
    }
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
fn array_element<'a>(
    modifier: &Modifier<'a>,
    base: &str,
    dims: &[usize],
    mut flat_index: usize,
) -> (Modifier<'a>, String) {
    let mut indices = vec![0usize; dims.len()];
    for (k, &d) in dims.iter().enumerate().rev() {
        indices[k] = flat_index % d.max(1);
        flat_index /= d.max(1);
    }
    let selected = indices.iter().fold(modifier.clone(), |m, &i| m.select(i));
    let mut name = String::with_capacity(base.len() + 2 + 4 * indices.len());
    name.push_str(base);
    for (k, i) in indices.iter().enumerate() {
        name.push(if k == 0 { '[' } else { ',' });
        let _ = write!(name, "{}", i + 1);
    }
    name.push(']');
    (selected, name)
}

/// The length and the first eight bytes of a name: equal for equal names, and different for
/// almost all different names of one class.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct NameKey(usize, u64);

impl NameKey {
    fn of(name: &str) -> NameKey {
        let bytes = name.as_bytes();
        let start = bytes
            .iter()
            .take(8)
            .enumerate()
            .fold(0u64, |word, (i, &b)| word | (u64::from(b) << (8 * i)));
        NameKey(bytes.len(), start)
    }
}

pub(crate) fn types_compatible(expected: ScalarType, actual: ScalarType) -> bool {
    expected == actual || (expected == ScalarType::Real && actual == ScalarType::Integer)
}

pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Real => "Real",
        ScalarType::Integer => "Integer",
        ScalarType::Boolean => "Boolean",
        ScalarType::String => "String",
    }
}

/// Reads `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))`.
fn experiment(def: &ast::ClassDef) -> flat::Experiment {
    let mut exp = flat::Experiment::default();
    let ast::ClassBody::Long {
        annotation: Some(annotation),
        ..
    } = &def.body
    else {
        return exp;
    };
    for arg in &annotation.modification.arguments {
        let name = arg.name.parts[0].name.as_str();
        if name == "stabilize" {
            // `stabilize(K = k)`: the gain of the constraint projection.
            let cm = arg.modification.as_ref().and_then(|m| m.class_modification.as_ref());
            for setting in cm.iter().flat_map(|cm| &cm.arguments) {
                if setting.name.parts[0].name == "K" {
                    exp.stabilize = setting
                        .modification
                        .as_ref()
                        .and_then(|m| m.binding.as_ref())
                        .and_then(literal_number)
                        .filter(|k| *k > 0.0 && k.is_finite());
                }
            }
            continue;
        }
        if name != "experiment" {
            continue;
        }
        let Some(cm) = arg.modification.as_ref().and_then(|m| m.class_modification.as_ref()) else {
            continue;
        };
        for setting in &cm.arguments {
            let value = setting
                .modification
                .as_ref()
                .and_then(|m| m.binding.as_ref())
                .and_then(literal_number);
            match setting.name.parts[0].name.as_str() {
                "StartTime" => exp.start_time = value,
                "StopTime" => exp.stop_time = value,
                "Tolerance" => exp.tolerance = value,
                "Interval" => exp.interval = value,
                _ => {}
            }
        }
    }
    exp
}

fn literal_number(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ast::ExprKind::Integer(v) => Some(*v as f64),
        ast::ExprKind::Real(v) => Some(*v),
        ast::ExprKind::Unary {
            op: ast::UnaryOp::Neg,
            operand,
        } => literal_number(operand).map(|v| -v),
        _ => None,
    }
}
