//! `eqm check` scale on deep nesting: a chain of `depth` component levels
//! (`model M1 M2 m; end M1; ...`) and a chain of `depth` `extends` levels
//! (`model M1 extends M2; end M1; ...`), each ending in one state.
//!
//! Run with `cargo bench --bench nesting [depth...]` (release; default depths 2 500, 5 000,
//! 10 000 and 20 000 for `extends`, and 125, 250, 500 and 1000 for components, which nest at most
//! 1000 levels deep). Prints the wall time of each stage of `Session::check` per shape and
//! depth, and the ratio t(2d)/t(d) of the whole check. Goal: a ratio near 2 (linear in the
//! depth). Checking that a component does not contain its own class once walked up every
//! enclosing instance for every component, so that a chain of components took time depth^2.
//! The compiler runs on its own thread with a large stack, as the front ends run it.

use eqm_testkit::models::{component_chain, extends_chain};

mod common;

/// A model text of a given depth.
type Generator = fn(usize) -> String;

/// Checks model `M1` of `text`: the total time in ms and the time of each stage.
fn check(text: String) -> (f64, String) {
    eqm_syntax::stack::with_compiler_stack(move || {
        let (total, stages) = common::timed_check("chain.eqm", text, Some("M1"));
        (total, common::stage_list(&stages))
    })
}

fn main() {
    let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let shapes: [(&str, Generator, Vec<usize>); 2] = [
        ("components", component_chain, vec![125, 250, 500, 1000]),
        ("extends", extends_chain, vec![2_500, 5_000, 10_000, 20_000]),
    ];
    for (shape, generate, default_depths) in shapes {
        let depths = if given.is_empty() { &default_depths } else { &given };
        let mut previous: Option<(usize, f64)> = None;
        for &depth in depths {
            let (total, stages) = check(generate(depth));
            let ratio = previous.map_or(String::from("-"), |(d, t)| {
                format!("{:.2} (x{})", total / t, depth / d.max(1))
            });
            println!("{shape:>10} depth {depth:>6}: check {total:>9.1} ms, ratio {ratio}; {stages}");
            previous = Some((depth, total));
        }
    }
}
