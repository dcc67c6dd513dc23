//! What the flattener computes once and shares: class names, description and unit texts, class
//! layouts, resolved component types, package constants, variable attributes and the values of
//! the bindings the elements of one array component share; and the redeclarations it has
//! checked, so that each is checked once.
//!
//! Input: the values the job modules computed the first time they were asked. Output: the same
//! values on every later request, shared (`Arc`, `Rc`) rather than copied, so that the 10^5
//! instances of one class cost one layout and one copy of each text. It deliberately decides
//! nothing about what is cached: the job modules (`layout`, `instantiate`, `names`, `variables`)
//! fill and read these tables, and `redeclare` the checked redeclarations; this module only
//! owns them.

use crate::layout::{ClassLayout, ResolvedType};
use crate::resolve::{ClassId, ClassTable};
use crate::value::Value;
use eqm_ir::expr::FxHashMap;
use eqm_ir::flat;
use eqm_syntax::ast;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::rc::Rc;
use std::sync::Arc;

/// The flattener's caches, each keyed so that equal requests find one entry.
pub(crate) struct Caches<'a> {
    /// Full class names by class id, shared by the instances of a class.
    pub(crate) class_names: Vec<Option<Arc<str>>>,
    /// Descriptions and units, one shared copy per text of the source, keyed by the text's
    /// address and length: every instance of a class shares its declarations' texts, and a
    /// pointer hashes faster than the text.
    pub(crate) strings: FxHashMap<(*const u8, usize), Arc<str>>,
    /// The ranges of for-equations whose variability is judged (by the range's node in the
    /// AST): every value of an enclosing loop and every instance of a class meets the same
    /// range, which is judged once. Only used for lookups, never iterated.
    pub(crate) judged_ranges: HashSet<*const ast::Expr>,
    /// Layouts by class id, once collected without errors.
    pub(crate) layouts: Vec<Option<Rc<ClassLayout<'a>>>>,
    /// Resolved component types by (scope, the type name's node in the AST): every instance of
    /// a class resolves the same declarations, so a chain of 10^5 masses resolves `Units.Mass`
    /// once. Shared (`Rc`), so that a lookup copies no modifier or name. Only used for lookups,
    /// never iterated.
    pub(crate) types: FxHashMap<(ClassId, *const ast::Name), Option<Rc<ResolvedType<'a>>>>,
    /// Values of package constants by (package, name); `None` while one is being evaluated or
    /// when it has no value.
    pub(crate) package_constants: BTreeMap<(ClassId, String), Option<Value>>,
    /// Whether the constant of a class that a dotted name reads (`M.x`) is protected, asked
    /// at each such reference.
    pub(crate) protected_constants: BTreeMap<(ClassId, String), bool>,
    /// While a binding a package inherits is evaluated, the package it was declared in and the
    /// package it is evaluated for, innermost last (see `Flattener::with_view`).
    pub(crate) package_views: Vec<(ClassId, ClassId)>,
    /// The attributes of a variable before they are known: empty, and shared.
    pub(crate) no_attributes: flat::Attributes,
    /// The attributes made last, by hash slot (see `Flattener::share_attributes`).
    pub(crate) recent_attributes: Vec<Option<flat::Attributes>>,
    /// While the elements of one array component are made, the values of the bindings they
    /// share, by (the binding's node in the AST, its scope's instance and class): each element
    /// of `parameter Real W[n, n] = {{...} for i in 1:n}` picks its own element from one value
    /// instead of evaluating the whole constructor again, which made an n x n matrix cost n^4.
    /// `None` outside an array component, so that no value outlives the elements it is for.
    pub(crate) array_bindings: Option<FxHashMap<BindingKey, Rc<Value>>>,
    /// The instances being instantiated, innermost last, each with whether it and every one
    /// below it is the parent of the next (so that the list is the chain of enclosing
    /// instances), and the same instances by class: the check that a component does not
    /// contain its own class then costs one lookup instead of a walk up the nesting, which
    /// made a chain of n nested components cost n^2.
    pub(crate) instantiating: Vec<(flat::InstanceId, bool)>,
    pub(crate) instantiating_by_class: FxHashMap<ClassId, Vec<flat::InstanceId>>,
    /// The members being instantiated (instance and element index), innermost last: when a
    /// member reads one of them, the part of this list from that member on is the cycle of
    /// declarations to report.
    pub(crate) members_in_progress: Vec<(flat::InstanceId, usize)>,
    /// Components a declaration reached through (`transformer1.VectorGroup` in the binding of
    /// another component's parameter) before the walk over their instance's members got to
    /// them, by member slot: their instances are made, their contents not yet (see
    /// `Flattener::reach_member`). Ordered, so that the ones no walk completes are completed in
    /// one deterministic order at the end.
    pub(crate) shells: BTreeMap<usize, Shell<'a>>,
    /// The slot of the member `Flattener::reach_member` is making, while it makes it.
    pub(crate) shallow_slot: Option<usize>,
}

/// A component made without its contents: the member (instance and element index) it stands
/// in, its instances, and what instantiating them later needs to know.
pub(crate) struct Shell<'a> {
    pub(crate) instance: flat::InstanceId,
    pub(crate) element: usize,
    pub(crate) instances: Vec<flat::InstanceId>,
    /// Whether every element of the component has the same modifier (see
    /// `Flattener::instantiate_component_instances`).
    pub(crate) alike: bool,
    pub(crate) name: &'a ast::Ident,
}

/// What identifies the value of a binding while the elements of one array are made: the
/// binding's node in the AST, and the instance and class of the scope it is evaluated in.
pub(crate) type BindingKey = (*const ast::Expr, Option<flat::InstanceId>, ClassId);

impl Caches<'_> {
    /// Empty caches for a class table of `class_count` classes.
    pub(crate) fn new(class_count: usize) -> Self {
        Caches {
            class_names: vec![None; class_count],
            strings: FxHashMap::default(),
            judged_ranges: HashSet::new(),
            layouts: vec![None; class_count],
            types: FxHashMap::default(),
            package_constants: BTreeMap::new(),
            protected_constants: BTreeMap::new(),
            package_views: Vec::new(),
            no_attributes: flat::Attributes::default(),
            recent_attributes: vec![None; 256],
            members_in_progress: Vec::new(),
            array_bindings: None,
            instantiating: Vec::new(),
            instantiating_by_class: FxHashMap::default(),
            shells: BTreeMap::new(),
            shallow_slot: None,
        }
    }
}

/// The flattener's bookkeeping of redeclarations: whether any class is replaceable, and which
/// redeclarations were checked already.
pub(crate) struct Redeclarations {
    /// Whether any class is replaceable: only then may a class name denote different classes
    /// in different instances.
    pub(crate) has_replaceable_classes: bool,
    /// The (new class, constraining class, redeclaration's offset) already checked by
    /// `check_subtype`: a redeclaration applied to every element of an array is checked once.
    pub(crate) subtypes_checked: BTreeSet<(ClassId, ClassId, u32)>,
    /// Element redeclarations already checked (by their declaration's address).
    pub(crate) redeclarations_checked: HashSet<*const ast::ComponentDecl>,
    /// Classes extending their inherited version whose base was already checked (every class
    /// deriving from one collects its `extends` clauses again).
    pub(crate) class_extends_checked: HashSet<ClassId>,
    /// Classes redeclared as elements (`redeclare model B ... end B;`) already checked against
    /// the inherited class they replace.
    pub(crate) class_redeclarations_checked: HashSet<ClassId>,
    /// Whether any class extends its inherited version: only then may an enclosing package of
    /// a name stand for another one (`package_views`).
    pub(crate) has_class_extends: bool,
    /// The (class, base) pairs whose kinds the search for inherited package constants checked.
    pub(crate) base_kinds_checked: HashSet<(ClassId, ClassId)>,
    /// The classes whose contents were checked against their kind (`class_restrictions`).
    pub(crate) contents_checked: HashSet<ClassId>,
    /// The answers of `Flattener::inherited_with_other_meaning`, by (package called through,
    /// package declaring): asked at every call of such a function.
    pub(crate) inherited_meanings: std::collections::HashMap<(ClassId, ClassId), bool>,
}

impl Redeclarations {
    /// Nothing checked yet, for the classes of `table`.
    pub(crate) fn new(table: &ClassTable<'_>) -> Self {
        Redeclarations {
            has_replaceable_classes: table.classes.iter().any(|c| c.def.redeclarable.replaceable),
            subtypes_checked: BTreeSet::new(),
            redeclarations_checked: HashSet::new(),
            class_extends_checked: HashSet::new(),
            class_redeclarations_checked: HashSet::new(),
            has_class_extends: table.has_class_extends(),
            base_kinds_checked: HashSet::new(),
            contents_checked: HashSet::new(),
            inherited_meanings: Default::default(),
        }
    }
}
