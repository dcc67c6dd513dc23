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
pub mod events;
pub mod exec;
pub mod explain;
pub mod expr;
pub mod flat;
pub mod flatten;
pub mod graphview;
pub mod hybrid;
pub mod index;
pub mod init;
pub mod integrators;
pub mod interp;
pub mod jacobian;
pub mod jit;
pub mod plan;
pub mod plot;
pub mod projection;
pub mod resolve;
pub mod results;
pub mod sim;
pub mod slot;
pub mod source;
pub mod stdlib;
pub mod structural;
pub mod symbolic;
pub mod syntax;
