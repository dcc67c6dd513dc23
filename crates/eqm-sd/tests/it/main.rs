//! The integration tests of `eqm-sd`: one binary, one module per family.
mod vensim;
