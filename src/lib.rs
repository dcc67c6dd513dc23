//! EQM: an equation-based modeling language with its own compiler.
//!
//! The pipeline and the type crossing each stage boundary are described in `ARCHITECTURE.md`.
//! Every stage is a pure function from one data type to the next; IO happens only in the
//! binary (`src/main.rs`) and the driver's file loading.

#![deny(unsafe_code)]

pub mod alias;
pub mod builtins;
pub mod dae;
pub mod diag;
pub mod driver;
pub mod explain;
pub mod expr;
pub mod flat;
pub mod flatten;
pub mod jit;
pub mod plan;
pub mod resolve;
pub mod slot;
pub mod source;
pub mod stdlib;
pub mod structural;
pub mod symbolic;
pub mod syntax;
