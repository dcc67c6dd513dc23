//! The flattener's table of function instances, and the vocabulary its entries and the
//! function bodies being flattened are described in: local variables and their slots, the
//! caller-side signatures, the frames of local names, and functions as values (passed to
//! functional inputs or given to functional parameters).
//!
//! Input: what `functions` and `functionals` make. Output: the [`FunctionTable`] the flattener
//! owns and the types both modules share. It deliberately instantiates, checks and calls
//! nothing: `functions` does.

use crate::modifier::{Modifier, Scope};
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_ir::expr::{ExprId, FuncId, Node};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::collections::BTreeMap;

/// A variable element of a function (an input, an output or a protected variable).
#[derive(Clone, Debug)]
pub(crate) struct LocalVar {
    pub dims: Vec<usize>,
    /// The scalar slots of its elements, row-major (of a record: of its fields, in order).
    pub slots: Vec<u32>,
    pub ty: ScalarType,
    pub assignable: bool,
    /// For a record: its fields, each also a local named `record.field`.
    pub record: Option<std::rc::Rc<Vec<(String, LocalVar)>>>,
    /// For a functional input: the function passed; `slots` then holds the values it binds.
    pub function: Option<std::rc::Rc<FunctionalLocal>>,
    /// For an array of records: its elements (records) in row-major order, whose slots
    /// together are `slots`.
    pub elements: Option<std::rc::Rc<Vec<LocalVar>>>,
}

impl LocalVar {
    /// The value of this variable read in a function body: its slots as `Local` nodes, a record
    /// as a record of its fields.
    pub(crate) fn value(&self, exprs: &mut eqm_ir::expr::ExprArena) -> Value {
        if let Some(elements) = &self.elements {
            let records: Vec<Value> = elements.iter().map(|e| e.value(exprs)).collect();
            return Value::Records(self.dims.clone(), records.into());
        }
        if let Some(fields) = &self.record {
            let fields = fields.iter().map(|(n, f)| (n.clone(), f.value(exprs))).collect();
            return Value::Record(std::rc::Rc::new(fields));
        }
        let elems: Vec<ExprId> = self.slots.iter().map(|s| exprs.add(Node::Local(*s))).collect();
        if self.dims.is_empty() {
            Value::Scalar(elems[0], self.ty)
        } else {
            Value::Array(self.dims.clone(), elems, self.ty)
        }
    }

    /// The value of this variable given the expressions of its slots in order (the outputs of
    /// a call).
    pub(crate) fn value_of(&self, exprs: &[ExprId]) -> Value {
        if let Some(elements) = &self.elements {
            let mut start = 0;
            let records: Vec<Value> = elements
                .iter()
                .map(|e| {
                    let v = e.value_of(&exprs[start..start + e.slots.len()]);
                    start += e.slots.len();
                    v
                })
                .collect();
            return Value::Records(self.dims.clone(), records.into());
        }
        if let Some(fields) = &self.record {
            let first = self.slots.first().copied().unwrap_or(0);
            let fields = fields
                .iter()
                .map(|(n, f)| {
                    let start = f.slots.first().map_or(0, |s| (s - first) as usize);
                    (n.clone(), f.value_of(&exprs[start..start + f.slots.len()]))
                })
                .collect();
            return Value::Record(std::rc::Rc::new(fields));
        }
        if self.dims.is_empty() {
            Value::Scalar(exprs[0], self.ty)
        } else {
            Value::Array(self.dims.clone(), exprs.to_vec(), self.ty)
        }
    }
}

/// The scalars of a record value in field order (nested records flattened), or `None` for a
/// value that is not a record.
pub(crate) fn record_scalars(v: &Value) -> Option<Vec<ExprId>> {
    if let Value::Records(_, records) = v {
        let mut out = Vec::new();
        for r in records.iter() {
            out.extend(record_scalars(r)?);
        }
        return Some(out);
    }
    let Value::Record(fields) = v else { return None };
    let mut out = Vec::new();
    for (_, f) in fields.iter() {
        match f {
            Value::Record(_) | Value::Records(..) => out.extend(record_scalars(f)?),
            other => out.extend(other.elements()),
        }
    }
    Some(out)
}

/// A function's interface as seen by its callers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signature {
    pub inputs: Vec<(String, LocalVar, Option<Vec<ExprId>>)>,
    pub outputs: Vec<(String, LocalVar)>,
}

/// What a function instance is made for: its class, the sizes of the arguments of its inputs
/// declared with `:`, the functions passed to its functional inputs, (for an external
/// function) the texts of its String inputs known when the model is compiled, the values
/// of the Integer inputs that give sizes of its variables, and the shapes of its String inputs
/// that hold values known only during the run (see `functions::string_inputs`).
pub(crate) type FunctionKey = (
    ClassId,
    Vec<Vec<usize>>,
    Vec<FunctionalKey>,
    KnownStrings,
    KnownIntegers,
    Vec<(String, String)>,
);

/// The Integer inputs of a function instance that give sizes of its variables (`input Integer
/// n; output Real y[n];`), with the values of the call the instance is made for, by name.
/// Modelica evaluates such sizes when the function is called; EQM, whose function variables
/// have fixed slots, makes one instance per value the calls give at compile time.
pub(crate) type KnownIntegers = Vec<(String, i64)>;

/// The String inputs of an external function instance whose texts are known when the model is
/// compiled (a literal, a String parameter or constant), by name: the instance passes them to C
/// as constants.
pub(crate) type KnownStrings = Vec<(String, String)>;

/// The String inputs of a function instance that carry values known only during the run, by
/// name, with the String each call gives (its values are the caller's expressions; only its
/// shape matters to the instance; see `functions::string_inputs`).
pub(crate) type StringTemplates = Vec<(String, eqm_ir::flat::Message)>;

/// The functions instantiated so far, and their interfaces as their callers see them.
#[derive(Default)]
pub(crate) struct FunctionTable {
    /// Functions instantiated so far (`None`: its declaration has errors). Keyed by the class,
    /// the sizes of the arguments of its inputs declared with `:` and the functions passed to
    /// its functional inputs: such a function is instantiated once per combination it is
    /// called with.
    pub(crate) ids: BTreeMap<FunctionKey, Option<FuncId>>,
    /// The keys of `ids` in the order they were entered, so that the instances made while
    /// flattening a branch that is dropped can be forgotten (see `eval_if`).
    pub(crate) entered: Vec<FunctionKey>,
    /// Caller-side interfaces, indexed like the flat model's functions.
    pub(crate) signatures: Vec<Signature>,
    /// The String inputs each function instance was made for, by `FuncId` (functions made by
    /// the flattener itself, which no call instantiates, have no entry).
    pub(crate) known_strings: Vec<KnownStrings>,
    /// The size-giving Integer inputs each function instance was made for, by `FuncId`, like
    /// `known_strings`.
    pub(crate) known_integers: Vec<KnownIntegers>,
    /// The String inputs with values known only during the run that each function instance
    /// was made for, by `FuncId`, like `known_strings`.
    pub(crate) string_templates: Vec<StringTemplates>,
    /// The texts the String outputs of each function instance hold when its body ends, by
    /// `FuncId` and name: a call of the instance gives them as known texts.
    pub(crate) output_texts: Vec<Vec<(String, eqm_ir::flat::Message)>>,
    /// The functions that stop a run when a subscript computed during the run is out of
    /// bounds, by the text of the subscripted reference, its location and the size.
    pub(crate) bounds_failures: std::collections::HashMap<(String, eqm_diag::source::Span, usize), FuncId>,
    /// The partial derivatives made of function instances (`der(f, x)`), by the instance and
    /// the inputs differentiated by, in order (`None`: it could not be made).
    pub(crate) partial_derivatives: BTreeMap<(FuncId, Vec<String>), Option<FuncId>>,
}

/// The local names visible while a function body is flattened.
#[derive(Debug)]
pub(crate) struct Frame {
    pub locals: BTreeMap<String, LocalVar>,
    /// The String inputs whose texts the function instance was made for, by name.
    pub strings: KnownStrings,
    /// The size-giving Integer inputs whose values the function instance was made for, by name.
    pub integers: KnownIntegers,
    /// The protected Real scalars that the body never assigns and whose bindings are known when
    /// the instance is made, by name, with those values (see `note_constant_local`).
    pub reals: Vec<(String, f64)>,
    /// The String inputs with values known only during the run, by name, as the body reads
    /// them (their values from the hidden input slots).
    pub templates: Vec<(String, eqm_ir::flat::Message)>,
    /// The texts the String variables of the function (not its inputs) hold at the statement
    /// being flattened, by name (see `functions::string_inputs`).
    pub texts: Vec<(String, eqm_ir::flat::Message)>,
}

/// The elements of a value assigned to `count` scalar places (a scalar fills all of them).
pub(crate) fn broadcast(v: &Value, count: usize) -> Vec<ExprId> {
    match v {
        Value::Scalar(x, _) => vec![*x; count.max(1)],
        _ => v.elements(),
    }
}

/// A function as it is called: its class (short definitions followed), the defaults that short
/// definitions and redeclarations give its inputs, the inputs a partial application or a
/// functional input bound, with their values, and whether it names a partial derivative of
/// the class's function (`function f_T = der(f, T)`).
#[derive(Clone, Debug)]
pub(crate) struct FunctionRef<'a> {
    pub(crate) class: ClassId,
    pub(crate) defaults: Modifier<'a>,
    pub(crate) bound: Vec<(String, Value)>,
    pub(crate) partial: Option<PartialDerivative>,
}

/// A partial derivative of a function (`function f_T = der(f, T)`): the inputs it is taken by,
/// in order (those of an inner definition first), and the name of the definition the call
/// names.
#[derive(Clone, Debug)]
pub(crate) struct PartialDerivative {
    pub(crate) by: Vec<String>,
    pub(crate) definition: eqm_diag::source::Span,
}

impl<'a> FunctionRef<'a> {
    pub(crate) fn plain(class: ClassId, defaults: Modifier<'a>) -> FunctionRef<'a> {
        FunctionRef {
            class,
            defaults,
            bound: Vec::new(),
            partial: None,
        }
    }

    /// What a function instance specialises on when this function is passed to one of its
    /// functional inputs.
    pub(crate) fn key(&self) -> FunctionalKey {
        FunctionalKey {
            class: self.class,
            bound: self
                .bound
                .iter()
                .map(|(name, v)| (name.clone(), v.dims().to_vec(), type_code(v.ty())))
                .collect(),
        }
    }
}

/// The function passed to a functional input and the names, sizes and types of the inputs it
/// binds: part of the key of a function instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FunctionalKey {
    pub(crate) class: ClassId,
    pub(crate) bound: Vec<(String, Vec<usize>, u8)>,
}

/// A functional input inside the function instance made for it: the function passed, and the
/// hidden inputs that carry the values it binds.
#[derive(Clone, Debug)]
pub(crate) struct FunctionalLocal {
    pub(crate) class: ClassId,
    pub(crate) bound: Vec<(String, LocalVar)>,
}

fn type_code(t: ScalarType) -> u8 {
    match t {
        ScalarType::Real => 0,
        ScalarType::Integer => 1,
        ScalarType::Boolean => 2,
        ScalarType::String => 3,
    }
}

pub(crate) fn type_of_code(code: u8) -> ScalarType {
    match code {
        1 => ScalarType::Integer,
        2 => ScalarType::Boolean,
        3 => ScalarType::String,
        _ => ScalarType::Real,
    }
}

/// The function a functional parameter of a model or block stands for (`parameter Law law;`,
/// an EQM extension: Modelica has functions as arguments of functions only). It is given by a
/// modifier or the declaration's binding, and fixed when the model is compiled.
#[derive(Clone, Debug)]
pub(crate) enum FunctionalParameter<'a> {
    /// A named function, perhaps with inputs bound (`law = function logistic(K = 100)`); a call
    /// is an ordinary call of it.
    Named(FunctionRef<'a>),
    /// `law = function(s) = 0.1*s*(1 - s/K)`: a call is the body, with the parameters bound to
    /// the arguments, evaluated where the modifier was written (so `K` is the modifier's).
    Lambda {
        params: &'a [ast::Ident],
        body: &'a ast::Expr,
        scope: Scope,
        /// The function type of the parameter: the names of the lambda's arguments.
        formal: ClassId,
    },
}
