//! Values of expressions while flattening: scalars, arrays of scalars, and strings.
//!
//! Input: nodes of the flat model's expression arena. Output: [`Value`]s, arrays expanded to
//! their elements (row-major), which is what "expanded to scalars" means for the flat model, and
//! the names and indices of array elements. Element-wise arithmetic and broadcasting of scalars
//! live here so that equations, bindings and modifiers share one implementation. It deliberately
//! reports nothing: callers turn a `None` (sizes that do not match) into their own diagnostic.

use eqm_ir::expr::{BinOp, ExprArena, ExprId, UnOp};
use eqm_ir::flat::ScalarType;
use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub enum Value {
    Scalar(ExprId, ScalarType),
    /// Dimensions and elements in row-major order.
    Array(Vec<usize>, Vec<ExprId>, ScalarType),
    /// A String: its text, whose parts may be values known only during the run
    /// (`"x = " + String(x)`, for the message of an assertion).
    Str(eqm_ir::flat::Message),
    /// A record: its fields by name, in declaration order.
    Record(std::rc::Rc<Vec<(String, Value)>>),
    /// An array of records: dimensions and the elements (each a [`Value::Record`] with the
    /// same fields) in row-major order.
    Records(Vec<usize>, std::rc::Rc<[Value]>),
}

impl Value {
    pub fn ty(&self) -> ScalarType {
        match self {
            Value::Scalar(_, t) | Value::Array(_, _, t) => *t,
            // A record has no type of scalars; the checks that use the type reject it.
            Value::Str(_) | Value::Record(_) | Value::Records(..) => ScalarType::String,
        }
    }

    /// Whether the value is a record or an array of records.
    pub fn is_record(&self) -> bool {
        matches!(self, Value::Record(_) | Value::Records(..))
    }

    pub fn dims(&self) -> &[usize] {
        match self {
            Value::Array(d, _, _) | Value::Records(d, _) => d,
            _ => &[],
        }
    }

    /// All scalar elements (one for a scalar), borrowed.
    pub fn as_slice(&self) -> &[ExprId] {
        match self {
            Value::Scalar(e, _) => std::slice::from_ref(e),
            Value::Array(_, v, _) => v,
            Value::Str(_) | Value::Record(_) | Value::Records(..) => &[],
        }
    }

    /// All scalar elements (one for a scalar).
    pub fn elements(&self) -> Vec<ExprId> {
        match self {
            Value::Scalar(e, _) => vec![*e],
            Value::Array(_, v, _) => v.clone(),
            Value::Str(_) | Value::Record(_) | Value::Records(..) => Vec::new(),
        }
    }

    /// Element `index` along the first dimension.
    pub fn index_first(&self, index: usize) -> Option<Value> {
        if let Value::Records(dims, records) = self {
            let (&n, rest) = dims.split_first()?;
            let stride: usize = rest.iter().product();
            if index >= n {
                return None;
            }
            let part = &records[index * stride..(index + 1) * stride];
            return Some(if rest.is_empty() {
                part[0].clone()
            } else {
                Value::Records(rest.to_vec(), part.into())
            });
        }
        let Value::Array(dims, elems, ty) = self else {
            return None;
        };
        let (&n, rest) = dims.split_first()?;
        if index >= n {
            return None;
        }
        let stride: usize = rest.iter().product();
        let part = elems[index * stride..(index + 1) * stride].to_vec();
        Some(if rest.is_empty() {
            Value::Scalar(part[0], *ty)
        } else {
            Value::Array(rest.to_vec(), part, *ty)
        })
    }
}

/// Whether two values with dimensions `a` and `b` have the same shape. Two scalars (no
/// dimensions) are recognised by their lengths alone: `==` on empty slices still calls `memcmp`
/// with their dangling addresses, and glibc's AVX-512 `memcmp` then does a masked load there
/// that needs a microcode assist (about 85 ns instead of 1.5 ns). Almost every comparison while
/// flattening a long chain is one of two scalars.
pub fn same_dims(a: &[usize], b: &[usize]) -> bool {
    match (a, b) {
        ([], []) => true,
        _ => a == b,
    }
}

/// `if c then t else f` of two records, or two arrays of records of one size, field by field
/// (Modelica: both branches of an if-expression have one type); `None` when their fields
/// or sizes differ. The fields of a record are scalars, arrays and records of bounded nesting,
/// so the recursion is as deep as the record types are nested.
pub fn select_records(arena: &mut ExprArena, c: ExprId, t: &Value, f: &Value) -> Option<Value> {
    match (t, f) {
        (Value::Record(a), Value::Record(b)) => {
            if a.len() != b.len() {
                return None;
            }
            let mut fields = Vec::with_capacity(a.len());
            for ((name, x), (other, y)) in a.iter().zip(b.iter()) {
                if name != other {
                    return None;
                }
                fields.push((name.clone(), select_records(arena, c, x, y)?));
            }
            Some(Value::Record(std::rc::Rc::new(fields)))
        }
        (Value::Records(da, a), Value::Records(db, b)) if da == db => {
            let elements = a
                .iter()
                .zip(b.iter())
                .map(|(x, y)| select_records(arena, c, x, y))
                .collect::<Option<Vec<Value>>>()?;
            Some(Value::Records(da.clone(), elements.into()))
        }
        (Value::Scalar(x, tx), Value::Scalar(y, ty)) => {
            let joined = join_scalar_types(*tx, *ty)?;
            Some(Value::Scalar(arena.add(eqm_ir::expr::Node::If(c, *x, *y)), joined))
        }
        (Value::Array(dx, xs, tx), Value::Array(dy, ys, ty)) if same_dims(dx, dy) => {
            let joined = join_scalar_types(*tx, *ty)?;
            let elements = xs
                .iter()
                .zip(ys)
                .map(|(x, y)| arena.add(eqm_ir::expr::Node::If(c, *x, *y)))
                .collect();
            Some(Value::Array(dx.clone(), elements, joined))
        }
        _ => None,
    }
}

/// The type of a value that is either of two types: Real when one is Real and the other
/// Integer, the type itself when both agree, `None` otherwise.
fn join_scalar_types(a: ScalarType, b: ScalarType) -> Option<ScalarType> {
    match (a, b) {
        _ if a == b => Some(a),
        (ScalarType::Real, ScalarType::Integer) | (ScalarType::Integer, ScalarType::Real) => Some(ScalarType::Real),
        _ => None,
    }
}

/// The result type of arithmetic on two numeric types (Integer op Integer stays Integer).
pub fn numeric_result(a: ScalarType, b: ScalarType, op: BinOp) -> ScalarType {
    match (a, b, op) {
        (ScalarType::Integer, ScalarType::Integer, BinOp::Add | BinOp::Sub | BinOp::Mul) => ScalarType::Integer,
        _ => ScalarType::Real,
    }
}

/// Applies a binary scalar operation element-wise, broadcasting scalars. Returns `None` when
/// the array shapes differ.
pub fn elementwise(arena: &mut ExprArena, op: BinOp, a: &Value, b: &Value, ty: ScalarType) -> Option<Value> {
    match (a, b) {
        (Value::Scalar(x, _), Value::Scalar(y, _)) => Some(Value::Scalar(arena.binary(op, *x, *y), ty)),
        (Value::Array(d, xs, _), Value::Scalar(y, _)) => Some(Value::Array(
            d.clone(),
            xs.iter().map(|x| arena.binary(op, *x, *y)).collect(),
            ty,
        )),
        (Value::Scalar(x, _), Value::Array(d, ys, _)) => Some(Value::Array(
            d.clone(),
            ys.iter().map(|y| arena.binary(op, *x, *y)).collect(),
            ty,
        )),
        (Value::Array(d1, xs, _), Value::Array(d2, ys, _)) if same_dims(d1, d2) => Some(Value::Array(
            d1.clone(),
            xs.iter().zip(ys).map(|(x, y)| arena.binary(op, *x, *y)).collect(),
            ty,
        )),
        _ => None,
    }
}

pub fn map_unary(arena: &mut ExprArena, op: UnOp, a: &Value, ty: ScalarType) -> Value {
    match a {
        Value::Scalar(x, _) => Value::Scalar(arena.unary(op, *x), ty),
        Value::Array(d, xs, _) => Value::Array(d.clone(), xs.iter().map(|x| arena.unary(op, *x)).collect(), ty),
        Value::Str(_) | Value::Record(_) | Value::Records(..) => a.clone(),
    }
}

/// Sum of expressions as a left-leaning chain (`0` for none).
pub fn sum(arena: &mut ExprArena, items: &[ExprId]) -> ExprId {
    match items.split_first() {
        None => arena.int(0),
        Some((first, rest)) => rest.iter().fold(*first, |acc, x| arena.binary(BinOp::Add, acc, *x)),
    }
}

/// The indices (from 0) of element `flat` (row-major) of an array with `dims`. A dimension of
/// size zero counts as one, so that the arithmetic is defined (such an array has no elements).
pub fn row_major_index(dims: &[usize], mut flat: usize) -> Vec<usize> {
    let mut index = vec![0usize; dims.len()];
    for (k, &n) in dims.iter().enumerate().rev() {
        index[k] = flat % n.max(1);
        flat /= n.max(1);
    }
    index
}

/// `name[2,1]`: the name of the element with `index` (from 0) of the array `name`; `name` itself
/// for a scalar (no index).
pub fn element_name(name: &str, index: &[usize]) -> String {
    let mut text = String::with_capacity(name.len() + 2 + 4 * index.len());
    text.push_str(name);
    for (k, i) in index.iter().enumerate() {
        text.push(if k == 0 { '[' } else { ',' });
        let _ = write!(text, "{}", i + 1);
    }
    if !index.is_empty() {
        text.push(']');
    }
    text
}

/// Combines `elems` with an associative `combine` as a flat expression of bounded depth: up to
/// [`CHAIN_GROUP`] elements folded left, as written; more folded left in groups of
/// that many, the groups then combined pairwise, so that `sum` of 10^5 elements is not 10^5
/// levels deep for the passes after flattening. `None` for no elements.
pub(crate) fn fold_balanced(elems: &[ExprId], mut combine: impl FnMut(ExprId, ExprId) -> ExprId) -> Option<ExprId> {
    let mut groups: Vec<ExprId> = elems
        .chunks(CHAIN_GROUP)
        .map(|chunk| chunk[1..].iter().fold(chunk[0], |acc, &x| combine(acc, x)))
        .collect();
    while groups.len() > 1 {
        groups = groups
            .chunks(2)
            .map(|pair| match *pair {
                [a, b] => combine(a, b),
                [a] => a,
                _ => unreachable!("chunks(2) yields one or two elements"),
            })
            .collect();
    }
    groups.pop()
}

/// Whether a value of type `actual` may stand where `expected` is declared: the same type, or
/// an Integer for a Real.
pub(crate) fn types_compatible(expected: ScalarType, actual: ScalarType) -> bool {
    expected == actual || (expected == ScalarType::Real && actual == ScalarType::Integer)
}

/// The name of a scalar type as Modelica spells it.
pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Real => "Real",
        ScalarType::Integer => "Integer",
        ScalarType::Boolean => "Boolean",
        ScalarType::String => "String",
    }
}

/// How many operands of a long chain are folded left before groups are combined pairwise (see
/// `Flattener::eval_chain`); chains up to this length keep the order they are written in.
pub(crate) const CHAIN_GROUP: usize = 64;
