//! Integration tests of `eqm-compile`. The passes from the flat model to the executable program: aliases, index reduction, events, the plan, the initialization problem, explain and the graph view.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::models;
use eqm_testkit::pipeline;
use eqm_testkit::ui_harness;

mod derivatives;
mod events;
mod graphview;
mod link;
mod structural;

pub use eqm_testkit::REPO;
