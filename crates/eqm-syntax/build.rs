//! Generates the LR parser from `grammar/eqm.lalrpop` into `OUT_DIR`, never into the source tree.

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(out_dir)
        .emit_rerun_directives(true)
        .process()
        .expect("the EQM grammar must generate without conflicts");
}
