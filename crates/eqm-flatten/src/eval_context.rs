//! What an expression is evaluated in beyond its scope: the frames of the function bodies being
//! flattened, the iterators bound to values, the sizes `end` stands for and the depth of
//! functional parameters' bodies.
//!
//! Input: pushed and popped by `functions`, `iterators`, `eval` and `functionals` as they
//! enter and leave bodies, constructors and subscripts. Output: the innermost binding of each.
//! It deliberately evaluates nothing.

use crate::function_table::Frame;
use crate::value::Value;

/// What an expression is evaluated in beyond its scope: the local names of the function bodies
/// being flattened, the iterators of array constructors and reductions bound to values, and the
/// sizes `end` stands for.
#[derive(Default)]
pub(crate) struct EvalContext {
    /// Local names of the function bodies being flattened (innermost last).
    pub(crate) frames: Vec<Frame>,
    /// Iterators of array constructors and reductions bound to values (innermost last).
    pub(crate) iterators: Vec<BoundIterator>,
    /// The sizes of the dimensions whose subscripts are being evaluated (innermost last): what
    /// `end` stands for.
    pub(crate) end_sizes: Vec<usize>,
    /// How many bodies of functional parameters are being evaluated, one inside another.
    pub(crate) lambda_depth: usize,
    /// Whether an if-expression around is being evaluated again with the branches its known
    /// conditions exclude left out: the if-expressions inside then go that way at once.
    pub(crate) excluding_branches: bool,
}

/// An iterator bound to a value (see [`Range::Values`](crate::iterators::Range::Values)), with
/// the number of loop indices bound when it was, so that the innermost of a loop index and an
/// iterator of the same name wins.
#[derive(Clone, Debug)]
pub(crate) struct BoundIterator {
    pub name: String,
    pub value: Value,
    pub loops_below: usize,
}
