//! Integration tests of `eqm-compile`. The passes from the flat model to the executable program: aliases, index reduction, events, the plan, the initialization problem, explain and the graph view.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/models.rs"]
mod models;
#[path = "../../../../tests/support/pipeline.rs"]
mod pipeline;
#[path = "../../../../tests/support/ui_harness.rs"]
mod ui_harness;

mod derivatives;
mod events;
mod graphview;
mod link;
mod structural;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
