//! The one representation of a system-dynamics model that both readers produce (XMILE/Stella
//! and Vensim) and the writer of `.eqm` text consumes.
//!
//! Input: what a reader found in a file. Output: plain data, with every name kept as the file
//! writes it for display and as its [`canonical`](crate::names::canonical) key for lookup.
//! This module deliberately holds no behaviour of either dialect: a reader maps its own
//! builtins, argument orders and defaults onto [`Builtin`] (whose documentation gives the one
//! meaning and argument order), so the writer never asks which file a model came from.

use eqm_diag::source::Span;

/// Which reader produced a file (kept for messages and the conformance table only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OASIS XMILE 1.0 (`.xmile`).
    Xmile,
    /// isee Stella/iThink's XMILE (`.stmx`), including the Stella 10 layout with the variables
    /// directly under `<model>`.
    Stella,
    /// Vensim's text format (`.mdl`).
    Vensim,
}

/// A whole file: its main model, the models its modules instantiate, its macros, dimensions
/// and simulation specs.
#[derive(Debug, Clone, PartialEq)]
pub struct SdFile {
    pub dialect: Dialect,
    /// The model's name: the file's own name for it, else the file name without extension.
    pub name: String,
    pub specs: SimSpecs,
    /// Every dimension (subscript range) of the file, in the file's order.
    pub dimensions: Vec<Dimension>,
    /// The main model first, then the models that modules instantiate, in the file's order.
    pub models: Vec<SdModel>,
    pub macros: Vec<Macro>,
    /// The file's documentation (XMILE `<header>` caption or notes, Vensim's first comment).
    pub doc: Option<String>,
}

/// The simulation specs. Vensim's `INITIAL TIME`, `FINAL TIME`, `TIME STEP` and `SAVEPER` are
/// also ordinary variables of the model; the reader evaluates them here.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSpecs {
    pub start: f64,
    pub stop: f64,
    pub dt: f64,
    /// The spacing of the saved results; `None` saves every `dt`.
    pub save_step: Option<f64>,
    pub method: Method,
    pub time_units: Option<String>,
    /// Whether the stop changes during the run (Vensim's `FINAL TIME` of an expression of
    /// `Time`): `stop` is then its value at the start, and the run ends at the first step
    /// whose time has reached the model's `FINAL TIME`.
    pub dynamic_stop: bool,
}

/// The integration method a file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Euler,
    /// Runge-Kutta of order 2 (Heun's method, as Stella and Vensim define RK2).
    Rk2,
    /// The classical Runge-Kutta method of order 4.
    Rk4,
}

/// A dimension (XMILE `<dim>`, a Vensim subscript range) with its elements in order. A
/// dimension given only by its size has the elements `"1"`, `"2"`, ... .
#[derive(Debug, Clone, PartialEq)]
pub struct Dimension {
    /// The name as written.
    pub name: String,
    pub elements: Vec<String>,
    /// For a subrange: the dimension whose elements these are (Vensim `sub: a, b` of `dim`).
    pub subrange_of: Option<String>,
    /// Vensim's `-> other` mappings: the dimension this one maps to, with the element of
    /// `other` each element of this one corresponds to (in this dimension's order).
    pub maps_to: Vec<DimensionMapping>,
    pub origin: Span,
}

/// One mapping of a dimension onto another (Vensim `dim: a, b -> other`).
#[derive(Debug, Clone, PartialEq)]
pub struct DimensionMapping {
    pub to: String,
    /// The element of `to` for each element of the dimension, in order.
    pub elements: Vec<String>,
}

/// One model: the main model, or one that a module instantiates.
#[derive(Debug, Clone, PartialEq)]
pub struct SdModel {
    /// The name as written (empty for an unnamed main model).
    pub name: String,
    pub variables: Vec<Variable>,
    pub doc: Option<String>,
}

/// A variable: a stock, a flow, an auxiliary (converter), a standalone graphical function or a
/// module.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The name as written in the file (spaces, case and quotes kept, escapes resolved); the
    /// results report it under this name.
    pub name: String,
    pub kind: Kind,
    /// The names of the variable's dimensions, in order (empty: a scalar).
    pub dimensions: Vec<String>,
    pub definition: Definition,
    pub units: Option<String>,
    pub doc: Option<String>,
    /// Where the variable is defined in the file.
    pub origin: Span,
    /// Its place in the file's diagram, where the file has one.
    pub position: Option<Position>,
    /// The range of values the file declares for display or checking (XMILE `<range>`, Vensim
    /// `[min, max]`), where it gives one.
    pub range: Option<(f64, f64)>,
}

/// A point of a diagram in the file's own coordinates (x to the right, y downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

/// What a variable is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A stock. XMILE names its inflows and outflows (each the name of a flow variable);
    /// Vensim gives the net rate in the definition ([`Equation::Stock`] with `rate`).
    Stock {
        inflows: Vec<String>,
        outflows: Vec<String>,
        /// XMILE `<non_negative/>`: the outflows are cut so that the stock never falls below 0
        /// within a step.
        non_negative: bool,
        /// An isee conveyor, queue or oven instead of a plain stock.
        special: Option<Box<SpecialStock>>,
    },
    /// A flow (XMILE `<flow>`); `non_negative` makes it a uniflow that never runs backwards.
    Flow { non_negative: bool },
    /// An auxiliary (converter, constant, Vensim's auxiliaries and constants).
    Aux,
    /// A graphical function on its own, called by name (Vensim's lookup `name((x,y),...)`, an
    /// XMILE `<gf name>` or an aux with a `<gf>` and no equation).
    Lookup,
    /// An instance of another model of the file ([`SdFile::models`]).
    Module {
        model: String,
        /// The inputs bound: `(name inside the module, expression outside)`.
        inputs: Vec<(String, Expr)>,
    },
}

/// isee's stocks with their own behaviour, kept with their settings for the writer to map onto
/// the SystemDynamics library's classes.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecialStock {
    /// A conveyor: what enters leaves after the transit time (`<len>`, read at the start).
    Conveyor {
        transit_time: Expr,
    },
    Queue,
    Oven {
        capacity: Option<Expr>,
        cook_time: Expr,
        fill_time: Option<Expr>,
    },
}

/// How a variable is defined: one definition for all its elements, or one per element or
/// group of elements.
#[derive(Debug, Clone, PartialEq)]
pub enum Definition {
    /// A scalar's definition, or an array's definition that applies to all its elements
    /// (XMILE apply-to-all, Vensim `x[dim] = ...`), written with the dimension names.
    Uniform(Equation),
    /// Element-wise definitions, in the file's order: each with the subscripts it covers (an
    /// element name, or a dimension or subrange name standing for all its elements).
    Elements(Vec<(Vec<String>, Equation)>),
}

/// The right-hand side of one definition.
#[derive(Debug, Clone, PartialEq)]
pub enum Equation {
    /// An auxiliary's or a flow's value.
    Value(Expr),
    /// A stock: its net rate (Vensim's `INTEG(rate, initial)`; `None` for an XMILE stock, whose
    /// rate is the sum of its inflows minus its outflows) and its initial value.
    Stock { rate: Option<Expr>, initial: Expr },
    /// The value of a graphical function at `input` (XMILE `<gf>` under an aux or flow with an
    /// equation, Vensim `WITH LOOKUP(input, table)`).
    Graph { input: Expr, graph: GraphicalFunction },
    /// A standalone graphical function ([`Kind::Lookup`]).
    Table(GraphicalFunction),
    /// Vensim's `A FUNCTION OF(...)` and data variables without values: declared, not defined.
    Undefined,
}

/// A graphical function (lookup table).
#[derive(Debug, Clone, PartialEq)]
pub struct GraphicalFunction {
    pub kind: GraphKind,
    /// The x values, increasing (from `<xpts>`, or spread evenly over `<xscale>`).
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub origin: Span,
}

/// How a graphical function reads between and beyond its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphKind {
    /// Straight lines between the points, the end values held outside them.
    Continuous,
    /// Straight lines between the points, the first and last segments extended outside them.
    Extrapolate,
    /// The value of the last point at or left of the input, held until the next point.
    Discrete,
    /// The value of the point whose x is the input (within a relative 1e-9), Vensim's `:NA:`
    /// (-2^109) at any other input: a data variable read `:RAW:`.
    Raw,
}

/// A macro (XMILE `<macro>`, Vensim `:MACRO:`): parameters, the variables of its body, and the
/// expression of its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Macro {
    pub name: String,
    pub parameters: Vec<String>,
    /// Vensim's additional outputs after `:` in the macro's header.
    pub outputs: Vec<String>,
    /// The variables of its body (a macro with stocks keeps one copy per call).
    pub variables: Vec<Variable>,
    /// XMILE's `<eqn>` of the macro; Vensim's macro value is its body's variable of the macro's
    /// name.
    pub value: Option<Expr>,
    pub origin: Span,
}

/// An expression of an equation.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    /// The expression's place in the file.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Number(f64),
    /// A variable (its [`canonical`](crate::names::canonical) key; for a name inside a module,
    /// the key of each part joined by `.`), with subscripts where it has them.
    Variable {
        name: String,
        subscripts: Vec<Subscript>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    If {
        condition: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Call {
        function: Function,
        args: Vec<Expr>,
    },
}

impl Expr {
    /// The operands of the expression, in order: those of an operator, an `if`, or a call's
    /// arguments (not a variable's computed subscripts). The walks over an expression's tree
    /// push them on their own stack.
    pub fn operands(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Number(_) | ExprKind::Variable { .. } => Vec::new(),
            ExprKind::Unary { operand, .. } => vec![operand],
            ExprKind::Binary { left, right, .. } => vec![left, right],
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => vec![condition, then, otherwise],
            ExprKind::Call { args, .. } => args.iter().collect(),
        }
    }
}

/// A subscript of a variable reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Subscript {
    /// An element of a dimension (its name as written; XMILE's numeric index of a size-only
    /// dimension is its element name, `"1"`, `"2"`, ...).
    Element(String),
    /// A dimension or subrange name: in an apply-to-all definition the element that is being
    /// defined, in an array function all elements.
    Dimension(String),
    /// `*` or `dim.*` in an array function: all elements of the dimension at this position.
    Wildcard(Option<String>),
    /// A computed index, 1-based (XMILE `a[i + 1]`).
    Index(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Minus,
    Plus,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `^`, right-associative in both dialects.
    Pow,
    /// XMILE `MOD` as an operator and Vensim's `MODULO`: the remainder with the divisor's sign.
    Mod,
    Eq,
    NotEq,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    And,
    Or,
}

/// What a call calls.
#[derive(Debug, Clone, PartialEq)]
pub enum Function {
    Builtin(Builtin),
    /// A graphical function by its name (the canonical key of a [`Kind::Lookup`] variable).
    Lookup(String),
    /// One element of an arrayed graphical function (Vensim's `table[dim](x)`): its name
    /// and the subscripts that pick the element's table.
    SubscriptedLookup(String, Vec<Subscript>),
    /// A macro by its name (canonical key).
    Macro(String),
}

/// The builtins, each with one meaning and argument order. The readers map their dialect's
/// names and argument orders onto these; optional trailing arguments may be left out where a
/// variant says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    // Mathematics: the usual one-argument functions.
    Abs,
    Sqrt,
    Exp,
    /// Natural logarithm.
    Ln,
    Log10,
    Sin,
    Cos,
    Tan,
    ArcSin,
    ArcCos,
    ArcTan,
    /// The hyperbolic functions (XMILE's `SINH`, `COSH`, `TANH`).
    Sinh,
    Cosh,
    Tanh,
    /// The largest integer not above the argument (XMILE `INT`, Vensim `INTEGER`).
    Int,
    /// Rounded half away from zero.
    Round,
    Sign,
    /// `MIN(a, b)`; with one array argument, its smallest element.
    Min,
    /// `MAX(a, b)`; with one array argument, its largest element.
    Max,
    /// π (no arguments).
    Pi,
    /// `XIDZ(a, b, x)`: `a/b`, or `x` where `b` is 0.
    Xidz,
    /// `ZIDZ(a, b)`: `a/b`, or 0 where `b` is 0.
    Zidz,
    // Time.
    /// The simulation time (no arguments).
    Time,
    /// The time step (no arguments).
    Dt,
    StartTime,
    StopTime,
    // Memory of the run.
    /// `INIT(x)`: the value `x` had at the start (XMILE `INIT`, Vensim `INITIAL`).
    Init,
    /// `PREVIOUS(x, initial)`: the value of `x` one step before, `initial` at the start.
    Previous,
    /// `ACTIVE_INITIAL(value, initial)`: `initial` while the model initializes, `value` after.
    ActiveInitial,
    /// `SAMPLE_IF_TRUE(condition, input, initial)`: `input` where `condition` holds, else the
    /// value of the last step.
    SampleIfTrue,
    // Test inputs.
    /// `STEP(height, start_time)`.
    Step,
    /// `RAMP(slope, start_time [, end_time])`: 0 before start, rising, held after end.
    Ramp,
    /// XMILE `PULSE(volume, first_time [, interval])`: `volume/dt` for one step at
    /// `first_time` and every `interval` after it (interval 0 or missing: once).
    PulseVolume,
    /// Vensim `PULSE(start, width)`: 1 from `start` for `width` (at least one step), else 0.
    PulseWidth,
    /// Vensim `PULSE TRAIN(start, width, interval, end)`.
    PulseTrain,
    // Smoothing and delays: input first, then the time constant, then optional arguments.
    /// `SMTH1(input, averaging_time [, initial])` (Vensim `SMOOTH`, `SMOOTHI`).
    Smooth1,
    /// `SMTH3(input, averaging_time [, initial])` (Vensim `SMOOTH3`, `SMOOTH3I`).
    Smooth3,
    /// `SMTHN(input, averaging_time, n [, initial])` (Vensim `SMOOTH N(input, time, initial,
    /// n)` reordered).
    SmoothN,
    /// `DELAY1(input, delay_time [, initial])` (Vensim `DELAY1`, `DELAY1I`): a material delay.
    Delay1,
    /// `DELAY3(input, delay_time [, initial])` (Vensim `DELAY3`, `DELAY3I`).
    Delay3,
    /// `DELAYN(input, delay_time, n [, initial])` (Vensim `DELAY N(input, time, initial, n)`
    /// reordered).
    DelayN,
    /// Vensim's `DELAY N(input, time, initial, n)`, reordered as [`Builtin::DelayN`]: the same
    /// stages, but the `k`-th drains at the delay time of `k - 1` steps before (the delay time
    /// a stage's content was given when it entered), which differs from `DELAYN` only where the
    /// delay time changes during the run.
    DelayNStaged,
    /// `DELAY(input, delay_time [, initial])`: the pipeline delay `input(t - delay_time)`
    /// (XMILE `DELAY`, Vensim `DELAY FIXED(input, time, initial)`, whose reader passes the
    /// delay time as Vensim uses it: `INIT` of the time rounded to whole steps, at least one).
    DelayFixed,
    /// `TREND(input, averaging_time [, initial_trend])`.
    Trend,
    /// `FORCST(input, averaging_time, horizon [, initial_trend])` (Vensim `FORECAST(input,
    /// average_time, horizon)`).
    Forecast,
    /// `NPV(stream, discount_rate [, initial [, factor]])`.
    Npv,
    // Arrays: one array argument (a variable with wildcard or dimension subscripts).
    Sum,
    Mean,
    Prod,
    Stddev,
    /// `SIZE(array)`: the number of its elements.
    Size,
    // Vensim's remaining builtins used by models.
    /// `GAME(x)`: `x` when no one plays the model interactively.
    Game,
    /// `RANDOM_UNIFORM(min, max, seed)` (XMILE `RANDOM(min, max [, seed])`): a new draw at
    /// every step.
    RandomUniform,
    /// `RANDOM_NORMAL(min, max, mean, sd, seed)`: a normal draw truncated to `[min, max]`.
    RandomNormal,
    /// XMILE `NORMAL(mean, sd [, seed])`: a normal draw.
    Normal,
    /// XMILE `EXPRND(mean [, seed])`: an exponential draw of the given mean.
    Exprnd,
    /// XMILE `LOGNORMAL(mean, sd [, seed])`: `exp` of a normal draw of that mean and standard
    /// deviation (the distribution of the logarithm).
    Lognormal,
    /// XMILE `POISSON(mean [, seed])`: a Poisson draw, a whole number, of the given mean.
    Poisson,
    /// isee's `BETA(alpha, beta [, seed])`: a beta draw.
    Beta,
    /// isee's `BINOMIAL(n, p [, seed])`: the successes of `n` trials of probability `p`.
    Binomial,
    /// isee's `GAMMA(shape, scale [, seed])`: a gamma draw.
    Gamma,
    /// isee's `TRIANGULAR(lower, mode, upper [, seed])`: a triangular draw.
    Triangular,
    /// isee's `WEIBULL(shape, scale [, seed])`: `scale*(-ln u)^(1/shape)`.
    Weibull,
    /// Vensim `RANDOM_EXPONENTIAL(min, max, shift, stretch, seed)`: `shift + stretch*e` with
    /// `e` an exponential draw of mean 1, truncated to `[min, max]`.
    RandomExponential,
    /// Vensim `RANDOM_POISSON(min, max, mean, shift, stretch, seed)`: `shift + stretch*k`, `k`
    /// a Poisson draw of the mean, truncated.
    RandomPoisson,
    /// Vensim `RANDOM_TRIANGULAR(min, max, start, peak, end, seed)`: a triangular draw on
    /// `[start, end]` with its mode at `peak`, truncated.
    RandomTriangular,
    /// Vensim `RANDOM_WEIBULL(min, max, shape, shift, stretch, seed)`: `shift + stretch*w`, `w`
    /// a Weibull draw of the shape and mean 1, truncated.
    RandomWeibull,
    /// Vensim `RANDOM_GAMMA(min, max, order, shift, stretch, seed)`: `shift + stretch*g`, `g` a
    /// gamma draw of the order (shape) and scale 1, truncated.
    RandomGamma,
    /// Vensim `RANDOM_BETA(min, max, alpha, beta, shift, stretch, seed)`: `shift + stretch*b`,
    /// `b` a beta draw, truncated.
    RandomBeta,
    /// Vensim `RANDOM_BINOMIAL(min, max, p, n, shift, stretch, seed)`: `shift + stretch*k`, `k`
    /// the successes of `n` trials of probability `p`, truncated.
    RandomBinomial,
    /// Vensim `RANDOM_NEGATIVE_BINOMIAL(min, max, p, n, shift, stretch, seed)`:
    /// `shift + stretch*k`, `k` the trials until the `n`-th success of probability `p`,
    /// truncated.
    RandomNegativeBinomial,
    /// `LOOKUP_INVERT(lookup, value)`; the first argument is a [`Function::Lookup`] name as a
    /// variable reference.
    LookupInvert,
    /// `LOOKUP_EXTRAPOLATE(lookup, x)`: the lookup read with its first and last segments
    /// extended outside its points (the first argument a lookup's name, as for
    /// [`Builtin::LookupInvert`]).
    LookupExtrapolate,
    /// `LOOKUP_FORWARD(lookup, x)`: the value of the first point at or right of `x`.
    LookupForward,
    /// `LOOKUP_BACKWARD(lookup, x)`: the value of the last point at or left of `x`.
    LookupBackward,
    /// `INVERT_MATRIX(m[..., rows, columns], n)`: the element of the inverse of the `n` by `n`
    /// matrix over the last two dimensions that the element being defined names.
    InvertMatrix,
    /// `VECTOR_SELECT(selection[d!], expression[d!], missing, numerical_action, error_action)`:
    /// a sum, product, minimum, maximum or mean over the elements whose selection is not 0.
    VectorSelect,
    /// `VECTOR_SORT_ORDER(vector[..., d], direction)`: the 0-based place in `d` of the element
    /// that comes at the place the element being defined names, sorted ascending (direction
    /// 1) or descending (0).
    VectorSortOrder,
    /// `VECTOR_RANK(vector[..., d], direction)`: the 1-based rank of the element being defined
    /// among the elements of `d`, ascending (direction 1) or descending (0).
    VectorRank,
    /// `VECTOR_REORDER(vector[..., d], order)`: the element of `d` whose 0-based place is the
    /// value of `order` for the element being defined.
    VectorReorder,
    /// `ALLOCATE_BY_PRIORITY(request[..., d], priority[..., d], size, width, supply)`: the
    /// share of the supply of the requester of `d` that the element being defined names.
    AllocateByPriority,
    /// `ALLOCATE_AVAILABLE(request[..., d], profile[..., d, ptype], available)`: the share of
    /// the available supply of the requester of `d` that the element being defined names, by
    /// the requesters' priority profiles.
    AllocateAvailable,
}
