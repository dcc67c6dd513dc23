//! The integration tests of `eqm-sd`: one binary, one module per family.

mod vensim;
mod vensim_data;
mod xmile_diagnostics;
mod xmile_writer;
