//! User-defined functions: their interfaces, bodies and calls.
//!
//! Input: `function` classes reached through calls. Output: [`Function`](eqm_ir::flat::Function)s (scalar slots and
//! a statement body, flattened by `statements`) and, for each call, the call node with the
//! values of its outputs. Arrays are expanded to scalar slots here, as everywhere in the flat
//! model, so array sizes inside functions must be known at compile time: a function whose
//! inputs are declared with `:` (`input Real u[:]`) is instantiated once for each combination of
//! its arguments' sizes, so that `size(u, 1)` and outputs sized from it (`output Real
//! y[size(u, 1)]`) are known in each instance. Calls are checked here: arity, named arguments,
//! defaults, argument types and sizes. This module deliberately does not inline, evaluate or
//! differentiate functions; later stages do.
//!
//! Its modules: `interface` (what a function class declares, and its instance for a call),
//! `instantiate` (the flat function and its body), `locals` (the slots of its variables),
//! `references` (locals read and assigned in a body) and `calls` (checked calls).

mod calls;
mod instantiate;
mod interface;
mod locals;
mod references;

use crate::functionals::{FunctionalKey, FunctionalLocal};
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_ir::expr::{ExprId, FuncId, Node};
use eqm_ir::flat::ScalarType;
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
            Value::Record(_) => out.extend(record_scalars(f)?),
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
/// declared with `:`, and the functions passed to its functional inputs.
pub(crate) type FunctionKey = (ClassId, Vec<Vec<usize>>, Vec<FunctionalKey>);

/// The functions instantiated so far, and their interfaces as their callers see them.
#[derive(Default)]
pub(crate) struct FunctionTable {
    /// Functions instantiated so far (`None`: its declaration has errors). Keyed by the class,
    /// the sizes of the arguments of its inputs declared with `:` and the functions passed to
    /// its functional inputs: such a function is instantiated once per combination it is
    /// called with.
    pub(crate) ids: BTreeMap<FunctionKey, Option<FuncId>>,
    /// Caller-side interfaces, indexed like the flat model's functions.
    pub(crate) signatures: Vec<Signature>,
}

/// The local names visible while a function body is flattened.
#[derive(Debug)]
pub(crate) struct Frame {
    pub locals: BTreeMap<String, LocalVar>,
}

/// The elements of a value assigned to `count` scalar places (a scalar fills all of them).
pub(crate) fn broadcast(v: &Value, count: usize) -> Vec<ExprId> {
    match v {
        Value::Scalar(x, _) => vec![*x; count.max(1)],
        _ => v.elements(),
    }
}
