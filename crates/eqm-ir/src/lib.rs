//! The intermediate representations shared by the stages after parsing, and the symbolic core
//! that works on them.
//!
//! - [`ids`]: the ids of expressions, variables and functions, and the operators;
//! - [`expr`]: scalar expressions in a hash-consing arena;
//! - [`builtins`]: the one table of built-in functions and operators;
//! - [`disjoint_sets`]: union-find, for the stages that group connected things;
//! - [`symbolic`]: evaluation, simplification, differentiation and solving of expressions;
//! - [`flat`]: the flat model, the flattener's output;
//! - [`external`]: external C functions, from the unit a front end compiles to the symbol a
//!   back end calls;
//! - [`slot`]: the run-time memory layout every back end shares;
//! - [`shared_call`]: the assignments of one multi-output call, which a back end evaluates once.
//!
//! Nothing here reads source text or runs a model.

pub mod builtins;
pub mod disjoint_sets;
pub mod expr;
pub mod external;
pub mod failure;
pub mod flat;
pub mod ids;
pub mod shared_call;
pub mod slot;
pub mod symbolic;
