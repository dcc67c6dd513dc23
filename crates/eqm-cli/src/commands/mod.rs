//! One module per command of the command line, each with the function `main` that `main.rs`
//! calls: it reads what the command needs (through `load`), calls the library and prints what
//! it returns (through `output`), and gives the exit code. The REPL reuses the commands that
//! have colon-command counterparts (`run`, `sweep`, `analyze`).

pub(crate) mod analyze;
pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod diagram;
pub(crate) mod explain;
pub(crate) mod flatten;
pub(crate) mod fmu;
pub(crate) mod import;
pub(crate) mod library;
pub(crate) mod repl;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod sweep;
