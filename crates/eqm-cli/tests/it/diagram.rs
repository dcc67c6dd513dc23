//! `eqm diagram FILE... [--model M] --svg OUT.svg` as a user runs it: the file is written for
//! every example and for a model of the library named without a file, the same bytes each
//! time; a model with errors exits with 1 and writes nothing; a missing `--svg`, a missing
//! file or model, an unreadable file and an unwritable path are usage errors.

use crate::cli::eqm;
use crate::svg;
use std::path::{Path, PathBuf};

/// A directory for one test's files, removed when the test ends (also when it fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("eqm-diagram-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().expect("a UTF-8 path").to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `eqm diagram` with `args` then `--svg out`: (exit code, stderr).
fn diagram(args: &[&str], out: &str) -> (i32, String) {
    let mut all = vec!["diagram"];
    all.extend_from_slice(args);
    all.extend(["--svg", out]);
    let (code, _, stderr) = eqm(&all);
    (code, stderr)
}

/// The drawing written to `out`, read back.
fn drawing(out: &str) -> svg::Drawing {
    svg::drawing(&std::fs::read_to_string(out).expect("the SVG file exists"))
}

#[test]
fn every_example_gets_its_diagram() {
    let scratch = Scratch::new("examples");
    let mut examples: Vec<PathBuf> = std::fs::read_dir(Path::new(crate::REPO).join("examples"))
        .expect("the examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
        .collect();
    examples.sort();
    assert!(!examples.is_empty());
    for example in examples {
        let name = example.file_name().and_then(|n| n.to_str()).expect("a file name");
        let out = scratch.file(&format!("{name}.svg"));
        let (code, stderr) = diagram(&[example.to_str().expect("a UTF-8 path")], &out);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(stderr.contains(&format!("wrote {out}")), "{stderr}");
        assert!(drawing(&out).overlap().is_none(), "{name}");
    }
}

#[test]
fn the_drawing_shows_the_components_and_connections() {
    let scratch = Scratch::new("drive");
    let out = scratch.file("drive.svg");
    let (code, stderr) = diagram(&["examples/drive_train.eqm"], &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("(8 components, 0 connectors, 7 connections)"),
        "{stderr}"
    );
    let first = std::fs::read(&out).expect("the SVG file exists");
    let drawn = drawing(&out);
    assert_eq!((drawn.boxes.len(), drawn.links.len()), (8, 7));
    assert_eq!(drawn.find("step").class, "Blocks.Sources.Step");
    let signal = ("step.y", "torque.tau", "signal");
    assert!(
        drawn
            .links
            .iter()
            .any(|l| (l.a.as_str(), l.b.as_str(), l.kind.as_str()) == signal)
    );
    // The same command writes the same bytes.
    diagram(&["examples/drive_train.eqm"], &out);
    assert_eq!(std::fs::read(&out).expect("written again"), first);
}

#[test]
fn a_library_model_needs_no_file() {
    let scratch = Scratch::new("library");
    let out = scratch.file("mass.svg");
    let (code, stderr) = diagram(&["--model", "Mechanics.Translational.Components.Mass"], &out);
    assert_eq!(code, 0, "{stderr}");
    let drawn = drawing(&out);
    assert_eq!(drawn.boxes.len(), 2, "a mass has its two flanges only");
    assert!(drawn.boxes.iter().all(|b| b.connector));
}

#[test]
fn a_wrong_model_exits_with_1_and_writes_nothing() {
    let scratch = Scratch::new("wrong");
    let model = scratch.file("wrong.eqm");
    std::fs::write(&model, "model Wrong\n  Nowhere.Thing t;\nend Wrong;\n").expect("model written");
    let out = scratch.file("wrong.svg");
    let (code, stderr) = diagram(&[&model], &out);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("[E0202] Error"), "{stderr}");
    assert!(!Path::new(&out).exists());
}

#[test]
fn usage_errors_exit_with_2() {
    let scratch = Scratch::new("usage");
    let out = scratch.file("out.svg");
    let (code, _, stderr) = eqm(&["diagram", "examples/spring_mass.eqm"]);
    assert_eq!(code, 2, "no --svg: {stderr}");
    assert!(stderr.contains("--svg"), "{stderr}");
    let (code, stderr) = diagram(&[], &out);
    assert_eq!(code, 2, "neither a file nor --model: {stderr}");
    let (code, stderr) = diagram(&["examples/no_such_model.eqm"], &out);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    let unwritable = scratch.file("no-such-directory/out.svg");
    let (code, stderr) = diagram(&["examples/spring_mass.eqm"], &unwritable);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
}
