//! EQM: an equation-based modeling language with its own compiler.
//!
//! The pipeline and the type crossing each stage boundary are described in `ARCHITECTURE.md`.

pub mod driver;
pub mod results;
