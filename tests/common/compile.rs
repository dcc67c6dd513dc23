//! Compiling a model given as text with the embedded standard library, as the driver does for
//! `eqm run`, for tests that work on the executable programs.
#![allow(dead_code)]

use eqm::driver::{Compiled, Session};

/// The model and initialization programs of the only model in `text`; panics with the
/// rendered diagnostics when it does not compile.
pub fn compile(name: &str, text: &str) -> Compiled {
    let mut session = Session::new();
    session.add_embedded_stdlib();
    session.add_file(name, text.to_string());
    session
        .compile(None, &eqm::flatten::Options::default())
        .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)))
}
