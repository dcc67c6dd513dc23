//! `eqm library [PACKAGE]` as a user runs it: the packages, the table of one package, and an
//! unknown package as a usage error.

use crate::cli::eqm;

#[test]
fn library_lists_the_packages_and_prints_the_table_of_one() {
    let (code, out, err) = eqm(&["library"]);
    assert_eq!(code, 0, "{err}");
    let packages: Vec<&str> = out.lines().collect();
    for expected in ["Units", "Blocks.Math", "Modelica.Blocks.Math", "Hydraulics.Components"] {
        assert!(packages.contains(&expected), "`{expected}` is not listed: {packages:?}");
    }

    let (code, out, err) = eqm(&["library", "Electrical.Analog.Basic"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().next(),
        Some("| class | kind | connectors | parameters | description |")
    );
    // The resistor's row: its pins with their connector classes, its parameter with the
    // default and unit its declaration gives, and its description string.
    let resistor = out
        .lines()
        .find(|l| l.starts_with("| `Resistor` |"))
        .unwrap_or_else(|| panic!("no row of Resistor in:\n{out}"));
    assert!(
        resistor.contains("| model | `p` (PositivePin), `n` (NegativePin) | `R = 1` (Ohm) |"),
        "{resistor}"
    );

    let (code, _, err) = eqm(&["library", "Electrical.Analog.Nothing"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`Electrical.Analog.Nothing` is no package of the standard library"),
        "{err}"
    );
}

/// Runs `eqm run --model M --library LIB` with EQM's cache directory under `cache`; the final
/// value of `y`.
fn run_with_cache(lib: &std::path::Path, cache: &std::path::Path) -> f64 {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(["run", "--model", "Lib.M", "--library"])
        .arg(lib)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("the eqm binary runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let last = out.lines().last().expect("rows");
    last.split(',').nth(1).and_then(|v| v.trim().parse().ok()).expect("y")
}

#[test]
fn library_files_are_parsed_once_and_again_when_their_text_changes() {
    let dir = std::env::temp_dir().join(format!("eqm-kept-trees-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (lib, cache) = (dir.join("libs"), dir.join("cache"));
    std::fs::create_dir_all(lib.join("Lib")).unwrap();
    std::fs::write(
        lib.join("Lib/package.mo"),
        "within;\npackage Lib\n  constant Real a = 2;\nend Lib;\n",
    )
    .unwrap();
    let model = |a: &str| {
        format!(
            "within Lib;\nmodel M\n  Real y;\nequation\n  y = {a} * time;\n  annotation(experiment(StopTime = 1));\nend M;\n"
        )
    };
    std::fs::write(lib.join("Lib/M.mo"), model("a")).unwrap();
    let trees = cache.join("eqm/trees");
    let kept = || std::fs::read_dir(&trees).map(|d| d.count()).unwrap_or(0);
    assert_eq!(run_with_cache(&lib, &cache), 2.0);
    assert_eq!(kept(), 2, "package.mo and M.mo are kept");
    assert_eq!(run_with_cache(&lib, &cache), 2.0);
    assert_eq!(kept(), 2, "the second run parses nothing new");
    std::fs::write(lib.join("Lib/M.mo"), model("3 * a")).unwrap();
    assert_eq!(run_with_cache(&lib, &cache), 6.0, "the changed text, not the kept tree");
    assert_eq!(kept(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
