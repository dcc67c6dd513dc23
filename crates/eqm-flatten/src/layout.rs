//! The vocabulary of the instance tree: the layout of a class (its own and inherited elements and
//! sections, collected once per class), the state of each instance, the [`Member`] each declared
//! element became, what a reference denotes ([`Target`]), a component's resolved type, and what
//! connecting needs of each variable ([`VarKind`]).
//!
//! Input: the types of `resolve` and `modifier` it is built from. Output: the types the
//! flattener's state and its job modules share. It deliberately does no work and does not know
//! the flattener: `instances` collects layouts and makes instances, `instantiate` decides what
//! an element becomes, `names` what a reference denotes.

use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use eqm_diag::source::Span;
use eqm_ir::expr::VarId;
use eqm_ir::flat::{self, InstanceId};
use eqm_ir::flat::{ConnectorRole, ScalarType};
use eqm_syntax::ast;
use std::rc::Rc;

/// A component member of an instance.
#[derive(Clone, Debug)]
pub(crate) enum Member {
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
    /// A functional parameter (`parameter Law law;`): its index in
    /// `Flattener::functional_parameters`.
    Function(u32),
}

/// The elements of an array component, row-major, with its dimensions.
#[derive(Debug)]
pub(crate) struct ArrayMember<T> {
    pub(crate) dims: Rc<[usize]>,
    pub(crate) elements: Rc<[T]>,
}

impl<T> ArrayMember<T> {
    pub(crate) fn new(dims: Vec<usize>, elements: Vec<T>) -> Rc<ArrayMember<T>> {
        Rc::new(ArrayMember {
            dims: dims.into(),
            elements: elements.into(),
        })
    }
}

/// A declared component of a class (its own or inherited).
pub(crate) struct ElementDecl<'a> {
    pub(crate) clause: &'a ast::ComponentClause,
    pub(crate) decl: &'a ast::ComponentDecl,
    /// The class whose body declares it (a base class for inherited elements).
    pub(crate) class: ClassId,
    /// Modifiers from the `extends` clauses through which it was inherited. Their bindings have
    /// no instance in their scope, because the layout is shared by all instances of the class;
    /// [`Modifier::in_instance`] supplies it.
    pub(crate) extends_modifier: Modifier<'a>,
    /// For an element redeclaration in a derived class (`redeclare Capacitor load;`): the
    /// inherited declaration it replaces, with the class that declares it.
    pub(crate) original: Option<Original<'a>>,
    /// Whether it is declared in a protected section: then it is named only by its simple name
    /// inside the class and the classes extending it, never through a component (`a.x`).
    pub(crate) protected: bool,
}

/// A declaration that a redeclaration replaces: its prefixes, dimensions, condition and (without
/// a `constrainedby` clause) its modifiers carry over to the new one.
#[derive(Clone, Copy)]
pub(crate) struct Original<'a> {
    pub(crate) clause: &'a ast::ComponentClause,
    pub(crate) decl: &'a ast::ComponentDecl,
    pub(crate) class: ClassId,
}

/// An equation of a class's layout, with what its flattening needs to know beforehand.
#[derive(Clone, Copy)]
pub(crate) struct LayoutEquation<'a> {
    pub(crate) equation: &'a ast::Equation,
    /// The class that declares it, its scope.
    pub(crate) class: ClassId,
    pub(crate) initial: bool,
    /// Whether it adds to the connection graph and also asks it.
    pub(crate) builds_and_asks_graph: bool,
}

/// The components and sections of a class including inherited ones. Every instance of a class
/// has the same layout, so it is collected once per class and shared: a chain of 10^5 masses
/// walks `Mass` and its base classes once and keeps no member names per instance.
#[derive(Default)]
pub(crate) struct ClassLayout<'a> {
    /// In declaration order, each name once: an element inherited twice (diamond) is the same
    /// element, and the first is kept.
    pub(crate) elements: Vec<ElementDecl<'a>>,
    /// Element names with their key and index in `elements`, sorted by key and then by name
    /// for lookups: most comparisons are then decided by comparing two integers.
    pub(crate) by_name: Vec<(NameKey, &'a str, usize)>,
    pub(crate) equations: Vec<LayoutEquation<'a>>,
    /// The equations that call `cardinality`: flattened after every connect of the model is
    /// known, since `cardinality(c)` counts the connects that name `c`, also those of the
    /// enclosing class.
    pub(crate) counting_equations: Vec<(&'a ast::Equation, ClassId, bool)>,
    pub(crate) invariants: Vec<(&'a ast::Equation, ClassId)>,
    pub(crate) algorithms: Vec<(&'a [ast::Statement], ClassId, bool, Span)>,
    /// The class and every class it extends: the classes whose replaceable classes an instance
    /// of this class may see redeclared.
    pub(crate) classes: Vec<ClassId>,
    /// Replaceable classes redeclared by the class or its bases (`redeclare model Ctl = PI;`
    /// as an element or in an `extends` modifier), most derived last.
    pub(crate) class_redeclares: Vec<ClassRedeclare<'a>>,
    /// Whether a base class, or the class a short definition names, was not found (and was
    /// reported): a name missing from the layout may be one of its elements, so it is not
    /// reported again as unknown, which would be a false follow-on error.
    pub(crate) incomplete: bool,
}

impl<'a> ClassLayout<'a> {
    /// Whether the element `name` is protected.
    pub(crate) fn is_protected(&self, name: &str) -> bool {
        self.index(name).is_some_and(|k| self.elements[k].protected)
    }

    pub(crate) fn index(&self, name: &str) -> Option<usize> {
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
    pub(crate) fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.elements.iter().map(|e| e.decl.name.name.as_str())
    }
}

/// Per-instance flattening state.
pub(crate) struct InstanceState<'a> {
    pub(crate) class: ClassId,
    /// The modifier from the enclosing instance until the members are instantiated; `None`
    /// when empty (most instances), boxed otherwise to keep the state of every instance small.
    pub(crate) modifier: Option<Box<Modifier<'a>>>,
    pub(crate) layout: Rc<ClassLayout<'a>>,
    /// Where its members, indexed like `layout.elements`, start in
    /// [`Flattener::members`](crate::flattener::Flattener::members).
    pub(crate) first_member: usize,
    /// Replaceable classes that the modifier of this instance redeclares; `None` when there
    /// are none (most instances).
    pub(crate) class_redeclares: Option<Rc<[ClassRedeclare<'a>]>>,
    /// Inherited variability (`parameter` on a record component makes its fields parameters).
    pub(crate) variability: flat::Variability,
    pub(crate) causality: flat::Causality,
    /// Declared `flow` (or inside a component that is): a record of flow variables
    /// (`flow Complex i;`) makes each of its fields a flow variable.
    pub(crate) flow: bool,
    /// Declared `stream` (or inside a component that is): each scalar of a record declared
    /// `stream` is a stream variable.
    pub(crate) stream: bool,
    pub(crate) is_connector: bool,
    /// How many component levels enclose it: 0 for the model itself.
    pub(crate) depth: u32,
}

impl InstanceState<'_> {
    /// The connection kind of an element declared with `declared`: that of the instance when it
    /// is `flow` or `stream` (each scalar of a record so declared is one).
    pub(crate) fn connection_of_element(&self, declared: ast::Connection) -> ast::Connection {
        match (self.flow, self.stream) {
            (true, _) => ast::Connection::Flow,
            (_, true) => ast::Connection::Stream,
            _ => declared,
        }
    }
}

/// The length and the first eight bytes of a name: equal for equal names, and different for
/// almost all different names of one class.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct NameKey(usize, u64);

impl NameKey {
    pub(crate) fn of(name: &str) -> NameKey {
        let bytes = name.as_bytes();
        let start = bytes
            .iter()
            .take(8)
            .enumerate()
            .fold(0u64, |word, (i, &b)| word | (u64::from(b) << (8 * i)));
        NameKey(bytes.len(), start)
    }
}

/// A redeclaration of a replaceable class: `redeclare model Ctl = PI(k = 2)` in a modifier, in
/// an `extends` clause or as an element of a derived class.
#[derive(Clone, Debug)]
pub(crate) struct ClassRedeclare<'a> {
    pub(crate) name: &'a str,
    pub(crate) def: &'a ast::ClassDef,
    /// Where the new class's name and modifiers are looked up and evaluated. Redeclarations of
    /// a class layout have no instance; the instance that uses them supplies it.
    pub(crate) scope: Scope,
    /// The class table's entry of an element redeclaration (the nested class it declares).
    pub(crate) class: Option<ClassId>,
    pub(crate) span: Span,
}

/// The prefixes and class of a resolved component type, after following short class definitions.
#[derive(Clone)]
pub(crate) struct ResolvedType<'a> {
    pub(crate) target: TypeRef,
    /// Modifiers of the short class definitions on the way (innermost last).
    pub(crate) modifier: Modifier<'a>,
    pub(crate) prefixes: ast::TypePrefix,
    pub(crate) dims: Vec<&'a ast::Subscript>,
    pub(crate) is_connector: bool,
    pub(crate) class_name: String,
    /// For an enumeration type: its literals (its values are their positions, the Integers 1,
    /// 2, ...).
    pub(crate) enumeration: Option<&'a [ast::EnumLiteral]>,
    /// For an external object class (extending `ExternalObject`): the class. A component of
    /// it is a parameter holding the object's handle.
    pub(crate) external_object: Option<ClassId>,
}

/// What a component reference denotes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Var(VarId),
    Inst(InstanceId),
}

/// The kind of a flat variable as connecting sees it (a copy of fields of `flat::Variable`).
#[derive(Clone, Copy)]
pub(crate) struct VarKind {
    pub(crate) variability: flat::Variability,
    pub(crate) role: ConnectorRole,
    pub(crate) causality: flat::Causality,
    pub(crate) ty: ScalarType,
    /// Whether the variable's type is a connector (signal connectors like `RealInput`).
    pub(crate) is_connector_type: bool,
}

impl VarKind {
    /// Whether the variable can be connected: parameters and constants are not.
    pub(crate) fn is_time_varying(self) -> bool {
        self.variability.is_time_varying()
    }
}

/// An inner element EQM added for the outer elements of one name that have no inner element.
pub(crate) struct AutomaticInner {
    /// The class of the outer elements: each other outer element of the name must have it.
    pub(crate) class: TypeRef,
    pub(crate) member: Member,
}
