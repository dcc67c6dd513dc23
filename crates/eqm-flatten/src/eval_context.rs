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
    /// The number of elements a range computed during the run must have in the expression
    /// being evaluated (the size of what it is assigned to or equated with), if any: see
    /// `range_values`.
    pub(crate) range_length: Option<RangeLength>,
    /// How many ranges computed during the run were refused for want of such a length.
    pub(crate) run_time_ranges_refused: usize,
    /// The ranges computed during the run evaluated under a [`RangeLength::bound`] length.
    pub(crate) bounded_ranges: Vec<BoundedRange>,
    /// The size and name of the vector component being declared, whose binding may take its
    /// length from it (`Real y[2] = u[1:n]`).
    pub(crate) declared_vector: Option<(usize, String)>,
    /// How many bodies of reductions computed by generated functions are being evaluated, one
    /// inside another (see `reduction_functions`).
    pub(crate) reduction_depth: u32,
    /// Whether an if-expression around is being evaluated again with the branches its known
    /// conditions exclude left out: the if-expressions inside then go that way at once.
    pub(crate) excluding_branches: bool,
    /// The operator record class of each record value made so far that is one.
    pub(crate) operator_records: OperatorRecordValues,
}

/// The operator record class of record values, known where a value is made (a record instance
/// read whole, a function's result), since a record value holds only its fields: an operator
/// written on the value (`a + b`) is looked up in that class.
///
/// A value is known by the address of its fields, and each entry keeps its fields alive, so
/// that no other record can later take the same address.
#[derive(Default)]
pub(crate) struct OperatorRecordValues {
    by_address: std::collections::HashMap<usize, (RecordFields, crate::resolve::ClassId)>,
}

type RecordFields = std::rc::Rc<Vec<(String, Value)>>;

impl OperatorRecordValues {
    /// Records that the record with `fields` is a value of the operator record `class`.
    pub(crate) fn remember(&mut self, fields: &RecordFields, class: crate::resolve::ClassId) {
        let address = std::rc::Rc::as_ptr(fields) as usize;
        self.by_address.insert(address, (fields.clone(), class));
    }

    /// The operator record class of the record with `fields`, if it is known.
    pub(crate) fn class_of(&self, fields: &RecordFields) -> Option<crate::resolve::ClassId> {
        let address = std::rc::Rc::as_ptr(fields) as usize;
        self.by_address.get(&address).map(|(_, class)| *class)
    }
}

/// The number of elements a range computed during the run must have where it is evaluated,
/// and what gives that number ("`y` has 3 elements"), for the run-time diagnostic.
#[derive(Clone, Debug)]
pub(crate) struct RangeLength {
    pub length: usize,
    pub against: String,
    /// The length is only the most elements the range may have (an assignment to a slice whose
    /// range is computed during the run): the range gives that many elements unchecked and is
    /// recorded in [`EvalContext::bounded_ranges`], for the assignment to check and mask.
    pub bound: bool,
}

/// A range `start:step:stop` computed during the run, as written and where.
#[derive(Clone, Debug)]
pub(crate) struct BoundedRange {
    pub start: eqm_ir::expr::ExprId,
    pub step: eqm_ir::expr::ExprId,
    pub stop: eqm_ir::expr::ExprId,
    pub written: String,
    pub span: eqm_diag::source::Span,
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
