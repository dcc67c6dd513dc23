//! The abstract syntax tree of `.eqm` files.
//!
//! Input: built by the grammar actions in `grammar/eqm.lalrpop`.
//! Output: consumed by the pretty-printer and by name resolution.
//! Every node carries a [`Span`]; description strings and annotations are kept so that tools can
//! show them. The AST is syntax only: no name is resolved and no type is checked here.
//!
//! Invariant: no expression is nested deeper than [`MAX_EXPR_DEPTH`]. The grammar enforces it
//! while building nodes (see [`Expr::depth`]), so every later recursive pass over expressions is
//! bounded and cannot overflow the stack, whatever the input. Long runs of one left-associative
//! operator (`a1 + a2 + ... + a10000`) are one flat [`ExprKind::Chain`], so their length is not
//! depth.

use eqm_diag::source::Span;
use serde::{Deserialize, Serialize};

/// The deepest expression nesting the front end accepts. Real models stay far below; deeper
/// input (generated or hostile) gets diagnostic E0106 instead of a stack overflow later.
pub const MAX_EXPR_DEPTH: u32 = 1000;

/// The deepest nesting of classes the front end accepts (E0112 beyond): the later stages name
/// every class by its full dotted name, so memory grows with the square of the nesting. Real
/// libraries nest a handful of levels.
pub const MAX_CLASS_DEPTH: usize = 1000;

/// The deepest nesting of equations and statements in if, for, when and while blocks the front
/// end accepts (E0113 beyond). Every later stage walks these blocks recursively, each level
/// taking a few frames of the compiler's stack (`stack::COMPILER_STACK_SIZE`), so the bound is
/// what keeps hostile input from overflowing it; real models nest a handful of levels.
pub const MAX_BLOCK_DEPTH: usize = 50_000;

/// An identifier with its location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A dotted name such as `Mechanics.Translational.Mass` (class names, import paths).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Name {
    /// True for a name written with a leading dot (`.Modelica.Blocks`), looked up from the top.
    pub global: bool,
    pub parts: Vec<Ident>,
    pub span: Span,
}

/// A string used as a description (`Real x "position";`); adjacent strings joined with `+`
/// are concatenated by the parser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Description {
    pub text: String,
    pub span: Span,
}

/// One parsed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDefinition {
    /// `within;` is `Some(None)`, `within A.B;` is `Some(Some(A.B))`.
    pub within: Option<Option<Name>>,
    pub classes: Vec<ClassDef>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ClassKind {
    Class,
    Model,
    Block,
    Connector,
    /// `expandable connector`: a bus whose members are those its connects make present.
    ExpandableConnector,
    Package,
    Function,
    Record,
    Type,
    /// `operator record`: a record whose operators and constructors its `operator` classes
    /// overload.
    OperatorRecord,
    /// `operator '+'`: the functions of one overloaded operator, like a package of them.
    Operator,
    /// `operator function '+'`: an overloaded operator that is one function.
    OperatorFunction,
}

impl ClassKind {
    /// Whether the class is a function (an overloaded operator's one included).
    pub fn is_function(self) -> bool {
        matches!(self, ClassKind::Function | ClassKind::OperatorFunction)
    }

    /// Whether the class is a record (an operator record included).
    pub fn is_record(self) -> bool {
        matches!(self, ClassKind::Record | ClassKind::OperatorRecord)
    }

    /// Whether the class holds classes only, like a package (an `operator` class included).
    pub fn is_package(self) -> bool {
        matches!(self, ClassKind::Package | ClassKind::Operator)
    }

    /// Whether instances of the class are connectors (expandable or not).
    pub fn is_connector(self) -> bool {
        matches!(self, ClassKind::Connector | ClassKind::ExpandableConnector)
    }

    pub fn keyword(self) -> &'static str {
        match self {
            ClassKind::Class => "class",
            ClassKind::Model => "model",
            ClassKind::Block => "block",
            ClassKind::Connector => "connector",
            ClassKind::ExpandableConnector => "expandable connector",
            ClassKind::Package => "package",
            ClassKind::Function => "function",
            ClassKind::Record => "record",
            ClassKind::Type => "type",
            ClassKind::OperatorRecord => "operator record",
            ClassKind::Operator => "operator",
            ClassKind::OperatorFunction => "operator function",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassDef {
    pub encapsulated: bool,
    pub partial: bool,
    pub kind: ClassKind,
    pub name: Ident,
    pub body: ClassBody,
    /// `replaceable model Load = Resistor constrainedby TwoPin;` inside a class.
    pub redeclarable: Redeclarable,
    /// `final model B ... end B;` inside a class: neither modified nor redeclared.
    pub is_final: bool,
    pub span: Span,
}

impl ClassDef {
    /// The class's own annotation, if it has one.
    pub fn annotation(&self) -> Option<&Annotation> {
        match &self.body {
            ClassBody::Long { annotation, .. }
            | ClassBody::Short { annotation, .. }
            | ClassBody::Enumeration { annotation, .. } => annotation.as_ref(),
        }
    }
}

/// The `replaceable` and `redeclare` prefixes of an element and its `constrainedby` clause
/// as Modelica defines them. Empty for most elements, so without an allocation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Redeclarable {
    pub replaceable: bool,
    pub redeclare: bool,
    pub constraint: Option<Box<Constraint>>,
}

/// `constrainedby TwoPin(v(start = 0))`: the class every redeclaration must be a subtype of,
/// with modifiers that every redeclaration keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Constraint {
    pub name: Name,
    pub modification: Option<ClassModification>,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

/// The element a `redeclare` modifier argument puts in place of the one it names:
/// `redeclare model Load = Capacitor(C = 1e-3)` or `redeclare Capacitor load(C = 1e-3)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RedeclaredElement {
    Class(ClassDef),
    Component(ComponentClause),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClassBody {
    /// `model M "doc" ... end M;`
    Long {
        description: Option<Description>,
        sections: Vec<Section>,
        annotation: Option<Annotation>,
        /// The name after `end`; the parser checks it against the class name.
        end_name: Ident,
    },
    /// `type Mode = enumeration(Off "switched off", On);`: the literals in order (their values
    /// are 1, 2, ...); `enumeration(:)`, an unspecified enumeration, has `open` set.
    Enumeration {
        literals: Vec<EnumLiteral>,
        open: bool,
        description: Option<Description>,
        annotation: Option<Annotation>,
    },
    /// `type Force = Real(unit = "N") "doc";` and `connector C = input Real;`
    Short {
        prefixes: TypePrefix,
        base: Name,
        dims: Vec<Subscript>,
        modification: Option<ClassModification>,
        description: Option<Description>,
        annotation: Option<Annotation>,
    },
}

/// One literal of an enumeration type, with its description string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnumLiteral {
    pub name: Ident,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
}

/// One part of a class body, in source order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Section {
    /// Declarations. The first, unlabelled list is public.
    Elements {
        visibility: Visibility,
        elements: Vec<Element>,
        span: Span,
    },
    Equations {
        initial: bool,
        equations: Vec<Equation>,
        span: Span,
    },
    Algorithm {
        initial: bool,
        statements: Vec<Statement>,
        span: Span,
    },
    /// EQM extension: declared invariants `g(x) = 0` kept by constraint stabilisation (see
    /// `docs/language.md`, "Declared invariants").
    Invariants { equations: Vec<Equation>, span: Span },
    /// A function's `external "C" y = f(u, v) annotation(...);` clause: its language and the call
    /// (`None`: the default, the function's own name with its inputs).
    External {
        language: Option<String>,
        call: Option<ExternalCall>,
        annotation: Option<Annotation>,
        span: Span,
    },
}

/// The call of an external function: `y = f(u, v)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalCall {
    pub output: Option<ComponentRef>,
    pub function: Ident,
    pub args: Vec<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Visibility {
    Public,
    Protected,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Element {
    Class(Box<ClassDef>),
    Extends(Extends),
    Import(Import),
    Component(ComponentClause),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extends {
    pub base: Name,
    pub modification: Option<ClassModification>,
    pub annotation: Option<Annotation>,
    pub span: Span,
    /// The clause of a class extending its inherited version (`model extends B(m) ... end B;`,
    /// Modelica's `class extends`): written in the class header and kept as the first element of
    /// the class, its base is the class `B` that the enclosing class inherits from one of its
    /// own `extends` clauses, not the class the name `B` denotes by lookup (the class itself).
    pub inherited: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ImportKind {
    /// `import A.B.C;` makes `C` visible.
    Qualified(Name),
    /// `import A.B.*;` makes every member of `A.B` visible.
    Unqualified(Name),
    /// `import X = A.B.C;`
    Renamed { alias: Ident, name: Name },
    /// `import A.B.{C, D};`
    Multiple { package: Name, names: Vec<Ident> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    pub kind: ImportKind,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Connection {
    /// No prefix: a potential variable in a connector, an ordinary variable elsewhere.
    #[default]
    None,
    Flow,
    /// `stream`: a quantity carried by the connector's flow (Modelica chapter 15).
    Stream,
    /// EQM's explicit `potential` prefix.
    Potential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Variability {
    #[default]
    Continuous,
    Discrete,
    Parameter,
    Constant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Causality {
    #[default]
    None,
    Input,
    Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TypePrefix {
    pub connection: Connection,
    pub variability: Variability,
    pub causality: Causality,
}

/// `parameter Real x[3](each start = 0) = {1, 2, 3} "doc", y;`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentClause {
    pub is_final: bool,
    pub redeclarable: Redeclarable,
    /// `inner`: the component that `outer` declarations of the same name in the components
    /// below refer to.
    pub inner: bool,
    /// `outer`: a reference to the `inner` component of this name in an enclosing component.
    pub outer: bool,
    pub prefixes: TypePrefix,
    pub type_name: Name,
    /// Dimensions written after the type (`Real[3] x;`), shared by all declared components.
    pub type_dims: Vec<Subscript>,
    pub components: Vec<ComponentDecl>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentDecl {
    pub name: Ident,
    pub dims: Vec<Subscript>,
    pub modification: Option<Modification>,
    /// A conditional component `Resistor r if useR;`.
    pub condition: Option<Expr>,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

/// What may follow a declared name or a modified element: `(args)`, `= expr`, or both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Modification {
    pub class_modification: Option<ClassModification>,
    pub binding: Option<Expr>,
    pub span: Span,
}

/// `(a = 1, each b(start = 2), final c)`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassModification {
    pub arguments: Vec<ModArgument>,
    pub span: Span,
}

/// One argument of a class modification: `each final s.start = 1 "doc"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModArgument {
    pub each: bool,
    pub is_final: bool,
    /// A dotted path (`s.start`) naming the element modified.
    pub name: Name,
    pub modification: Option<Modification>,
    pub description: Option<Description>,
    /// `redeclare Capacitor load(C = 1)` or `redeclare model Load = Capacitor`: the new element;
    /// `name` is then its name and `modification` is empty.
    pub redeclare: Option<Box<RedeclaredElement>>,
    pub span: Span,
}

/// `annotation(...)`: parsed as a generic class modification and otherwise uninterpreted here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub modification: ClassModification,
    pub span: Span,
}

/// An array subscript or dimension: an expression or `:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Subscript {
    Colon(Span),
    Expr(Expr),
}

/// A reference to a component or variable: `m[i].flange_a.s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentRef {
    pub global: bool,
    pub parts: Vec<RefPart>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefPart {
    pub name: Ident,
    pub subscripts: Vec<Subscript>,
}

impl ComponentRef {
    /// The reference as written, without subscripts' contents (`m[..].s`), for messages.
    pub fn dotted(&self) -> String {
        let mut s = String::new();
        if self.global {
            s.push('.');
        }
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                s.push('.');
            }
            s.push_str(&p.name.name);
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Equation {
    pub kind: EquationKind,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EquationKind {
    /// `lhs = rhs;`
    Simple { lhs: Expr, rhs: Expr },
    /// `connect(a, b);`
    Connect { a: ComponentRef, b: ComponentRef },
    /// `if c then ... elseif d then ... else ... end if;`
    If {
        branches: Vec<(Expr, Vec<Equation>)>,
        else_branch: Vec<Equation>,
    },
    /// `for i in 1:N, j in 1:M loop ... end for;`
    For {
        indices: Vec<ForIndex>,
        body: Vec<Equation>,
    },
    /// `when c then ... elsewhen d then ... end when;`
    When { branches: Vec<(Expr, Vec<Equation>)> },
    /// A call used as an equation: `reinit(x, 0)`, `assert(c, "msg")`, `terminate("msg")`.
    Call { function: ComponentRef, args: CallArgs },
}

/// `i in 1:N`; without a range the range is deduced from the body (Modelica `for i loop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForIndex {
    pub name: Ident,
    pub range: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub kind: StatementKind,
    pub description: Option<Description>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StatementKind {
    /// `x := e;`
    Assign {
        target: ComponentRef,
        value: Expr,
    },
    /// `(a, , b) := f(x);` — empty slots discard outputs.
    MultiAssign {
        targets: Vec<Option<ComponentRef>>,
        function: ComponentRef,
        args: CallArgs,
    },
    /// A call for its effect: `assert(x > 0, "x must be positive");`
    Call {
        function: ComponentRef,
        args: CallArgs,
    },
    If {
        branches: Vec<(Expr, Vec<Statement>)>,
        else_branch: Vec<Statement>,
    },
    For {
        indices: Vec<ForIndex>,
        body: Vec<Statement>,
    },
    While {
        condition: Expr,
        body: Vec<Statement>,
    },
    When {
        branches: Vec<(Expr, Vec<Statement>)>,
    },
    Return,
    Break,
}

/// Arguments of a call: positional first, then named (`f(x, y = 2)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallArgs {
    pub positional: Vec<Expr>,
    pub named: Vec<(Ident, Expr)>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Nesting depth of this expression (a leaf is 1). Kept on the node so the grammar can bound
    /// nesting in O(1) per node; see [`MAX_EXPR_DEPTH`].
    pub depth: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    /// Element-wise `.-` and `.+` in unary position.
    ElemNeg,
    ElemPlus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    ElemAdd,
    ElemSub,
    ElemMul,
    ElemDiv,
    ElemPow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Pow => "^",
            BinaryOp::ElemAdd => ".+",
            BinaryOp::ElemSub => ".-",
            BinaryOp::ElemMul => ".*",
            BinaryOp::ElemDiv => "./",
            BinaryOp::ElemPow => ".^",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }

    /// The precedence level of a left-associative operator that the parser keeps in one flat
    /// [`ExprKind::Chain`] with the others of its level (`+ - .+ .-`, `* / .* ./`, `and`,
    /// `or`); `None` for the others (relations do not associate, `^` is not chained).
    pub fn chain_level(self) -> Option<u8> {
        match self {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::ElemAdd | BinaryOp::ElemSub => Some(1),
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::ElemMul | BinaryOp::ElemDiv => Some(2),
            BinaryOp::And => Some(3),
            BinaryOp::Or => Some(4),
            _ => None,
        }
    }

    pub fn is_relation(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    Integer(i64),
    Real(f64),
    String(String),
    Bool(bool),
    Ref(ComponentRef),
    /// `f(args)`; also `der(x)`, `initial()`, `sample(0, 1)` and the other built-ins.
    Call {
        function: ComponentRef,
        args: CallArgs,
    },
    /// `function f(a = 2)` as the argument of a functional input: `f` with `a` bound.
    PartialApplication {
        function: ComponentRef,
        args: CallArgs,
    },
    /// `function(s) = 0.1*s*(1 - s/K)`: a function written as an expression of its inputs, the
    /// value of a functional parameter (an EQM extension).
    Lambda {
        params: Vec<Ident>,
        body: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Three or more operands joined by left-associative operators of one level (see
    /// [`BinaryOp::chain_level`]): `a + b - c` is `first = a`, `rest = [(+, b), (-, c)]` and
    /// means `(a + b) - c`. The parser builds it instead of nested [`ExprKind::Binary`] nodes,
    /// so a sum of 10^4 terms is two levels deep, not 10^4, and passes over it loop over its
    /// operands instead of recursing once per term.
    Chain {
        first: Box<Expr>,
        rest: Vec<(BinaryOp, Expr)>,
    },
    /// `if c then a elseif d then b else e`
    If {
        branches: Vec<(Expr, Expr)>,
        else_value: Box<Expr>,
    },
    /// `{a, b, c}`
    Array(Vec<Expr>),
    /// `[a, b; c, d]`: rows of columns.
    Matrix(Vec<Vec<Expr>>),
    /// `start:stop` or `start:step:stop`
    Range {
        start: Box<Expr>,
        step: Option<Box<Expr>>,
        stop: Box<Expr>,
    },
    /// `(a, , b)` on the left of an equation with a multi-output call; `None` discards.
    Tuple(Vec<Option<Expr>>),
    /// `end` in a subscript: the size of the dimension it indexes (`x[end]`, `x[2:end]`).
    End,
    /// A call's result subscripted: `f(x)[2]`, `f(x)[:, 1]`.
    Index {
        base: Box<Expr>,
        subscripts: Vec<Subscript>,
    },
    /// `{body for i in r, j in s}`: one element per value of the iterators; the last iterator
    /// is the first (outermost) dimension.
    Comprehension {
        body: Box<Expr>,
        indices: Vec<ForIndex>,
    },
    /// `f(body for i in r, ...)`: the reduction `sum`, `product`, `min` or `max` of the values,
    /// or `array(...)`, the array constructor.
    Reduction {
        function: ComponentRef,
        body: Box<Expr>,
        indices: Vec<ForIndex>,
    },
    /// Placeholder for an expression that could not be parsed; its error was already reported.
    Error,
}

impl Expr {
    /// Builds a node, computing its depth from its children.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let depth = 1 + kind.child_depth();
        Expr { kind, span, depth }
    }

    /// True when the node is a placeholder left by error recovery.
    pub fn is_error(&self) -> bool {
        matches!(self.kind, ExprKind::Error)
    }
}

impl ExprKind {
    /// The depth of the deepest direct child (0 for leaves). Only direct children are looked at,
    /// so this is O(number of children) and never recursive.
    pub(crate) fn child_depth(&self) -> u32 {
        fn sub(s: &[Subscript]) -> u32 {
            s.iter()
                .map(|s| match s {
                    Subscript::Expr(e) => e.depth,
                    Subscript::Colon(_) => 0,
                })
                .max()
                .unwrap_or(0)
        }
        fn index_depth(indices: &[ForIndex]) -> u32 {
            indices
                .iter()
                .filter_map(|i| i.range.as_ref())
                .map(|r| r.depth)
                .max()
                .unwrap_or(0)
        }
        fn cref(c: &ComponentRef) -> u32 {
            c.parts.iter().map(|p| sub(&p.subscripts)).max().unwrap_or(0)
        }
        fn args(a: &CallArgs) -> u32 {
            a.positional
                .iter()
                .chain(a.named.iter().map(|(_, e)| e))
                .map(|e| e.depth)
                .max()
                .unwrap_or(0)
        }
        match self {
            ExprKind::Integer(_)
            | ExprKind::Real(_)
            | ExprKind::String(_)
            | ExprKind::Bool(_)
            | ExprKind::Error
            | ExprKind::End => 0,
            ExprKind::Ref(c) => cref(c),
            ExprKind::Call { function, args: a } | ExprKind::PartialApplication { function, args: a } => {
                cref(function).max(args(a))
            }
            ExprKind::Unary { operand, .. } | ExprKind::Lambda { body: operand, .. } => operand.depth,
            ExprKind::Binary { lhs, rhs, .. } => lhs.depth.max(rhs.depth),
            ExprKind::Chain { first, rest } => rest.iter().map(|(_, e)| e.depth).fold(first.depth, u32::max),
            ExprKind::If { branches, else_value } => branches
                .iter()
                .map(|(c, v)| c.depth.max(v.depth))
                .max()
                .unwrap_or(0)
                .max(else_value.depth),
            ExprKind::Array(items) => items.iter().map(|e| e.depth).max().unwrap_or(0),
            ExprKind::Matrix(rows) => rows.iter().flatten().map(|e| e.depth).max().unwrap_or(0),
            ExprKind::Range { start, step, stop } => {
                start.depth.max(stop.depth).max(step.as_ref().map_or(0, |s| s.depth))
            }
            ExprKind::Tuple(items) => items.iter().flatten().map(|e| e.depth).max().unwrap_or(0),
            ExprKind::Comprehension { body, indices } => body.depth.max(index_depth(indices)),
            ExprKind::Index { base, subscripts } => base.depth.max(sub(subscripts)),
            ExprKind::Reduction {
                function,
                body,
                indices,
            } => cref(function).max(body.depth).max(index_depth(indices)),
        }
    }
}
