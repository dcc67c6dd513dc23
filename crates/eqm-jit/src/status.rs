//! The status block compiled code reports through: byte offsets of its `u64` fields, and the
//! codes of its failures. Compiled code writes it; `compiled` reads it back into a [`crate::JitError`].

/// 0 while nothing failed; else one of the codes below.
pub const CODE: i32 = 0;
/// With [`TABLE`]: the index of the failure in the module's table of statements.
pub const PAYLOAD: i32 = 8;
/// The root (assignment, statement list or result) of the segment that failed, counted
/// from 0 in the order the segment runs them.
pub const SITE: i32 = 16;
/// The iteration budget left in the current root.
pub const BUDGET: i32 = 24;
/// The budget every root starts with.
pub const LIMIT: i32 = 32;
/// User-function frames active now.
pub const DEPTH: i32 = 40;
/// The number of fields.
pub const FIELDS: usize = 6;
/// A statement of the table failed (assert, terminate, zero step).
pub const TABLE: i64 = 1;
pub const ITERATION_LIMIT: i64 = 2;
pub const RECURSION_LIMIT: i64 = 3;
