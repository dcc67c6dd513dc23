//! Libraries stored as Modelica stores packages (`package.mo`, `package.order`, one file per
//! class, single-file packages, `within`), found in library directories and read only when a
//! lookup reaches a class: small trees held by a store in memory that records every file it is
//! asked for, and the real Modelica Standard Library where it is installed.

use eqm::{DirEntry, LibraryPath, LibraryStore, ModelOptions, RunSettings, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Files held in memory by path, with every file read recorded.
#[derive(Default)]
struct MemoryStore {
    files: BTreeMap<PathBuf, String>,
    read: Mutex<Vec<PathBuf>>,
}

impl MemoryStore {
    fn new(files: &[(&str, &str)]) -> Arc<MemoryStore> {
        Arc::new(MemoryStore {
            files: files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect(),
            read: Mutex::new(Vec::new()),
        })
    }

    fn read_names(&self) -> Vec<String> {
        self.read
            .lock()
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }
}

impl LibraryStore for MemoryStore {
    fn list_dir(&self, dir: &Path) -> Result<Vec<DirEntry>, String> {
        let mut entries: BTreeMap<String, bool> = BTreeMap::new();
        for path in self.files.keys() {
            if let Ok(rest) = path.strip_prefix(dir) {
                let mut parts = rest.components();
                if let Some(first) = parts.next() {
                    let is_dir = parts.next().is_some();
                    entries.insert(first.as_os_str().to_string_lossy().into_owned(), is_dir);
                }
            }
        }
        if entries.is_empty() {
            return Err("no such directory".to_string());
        }
        Ok(entries
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn read_file(&self, path: &Path) -> Result<String, String> {
        self.read.lock().unwrap().push(path.to_path_buf());
        self.files.get(path).cloned().ok_or_else(|| "no such file".to_string())
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
}

/// The file system, for the installed Modelica Standard Library, with every file read counted.
#[derive(Default)]
struct CountingFileSystem {
    read: Mutex<Vec<PathBuf>>,
}

impl LibraryStore for CountingFileSystem {
    fn list_dir(&self, dir: &Path) -> Result<Vec<DirEntry>, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
        Ok(entries
            .filter_map(|e| e.ok())
            .map(|e| DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir: e.path().is_dir(),
            })
            .collect())
    }

    fn read_file(&self, path: &Path) -> Result<String, String> {
        self.read.lock().unwrap().push(path.to_path_buf());
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
}

fn session_with(store: Arc<dyn LibraryStore>, dirs: &[&str], user: &str, model: Option<&str>) -> Session {
    let files = if user.is_empty() {
        Vec::new()
    } else {
        vec![("m.eqm".to_string(), user.as_bytes().to_vec())]
    };
    let path = LibraryPath {
        store,
        directories: dirs.iter().map(PathBuf::from).collect(),
        eqm_file_directories: Vec::new(),
        tree_cache: None,
    };
    Session::with_libraries(Vec::new(), files, &[], Some(path), model)
}

/// A library `Lib` (a package directory with `package.order`, class files, a sub-package
/// directory) and a single-file package `Single`.
const TREE: &[(&str, &str)] = &[
    (
        "/libs/Lib/package.mo",
        "within;\npackage Lib \"a library\"\n  constant Real base = 2;\n  annotation(version = \"1.2.0\");\nend Lib;\n",
    ),
    ("/libs/Lib/package.order", "Sub\nZeta\nAlpha\nbase\n"),
    (
        "/libs/Lib/Alpha.mo",
        "within Lib;\nmodel Alpha\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend Alpha;\n",
    ),
    (
        "/libs/Lib/Zeta.mo",
        "within Lib;\nmodel Zeta\n  Real z = 1;\nend Zeta;\n",
    ),
    (
        "/libs/Lib/Sub/package.mo",
        "within Lib;\npackage Sub\n  constant Real k = 3 * base;\nend Sub;\n",
    ),
    (
        "/libs/Lib/Sub/Gain.mo",
        "within Lib.Sub;\nblock Gain\n  parameter Real k = Sub.k;\n  input Real u;\n  output Real y;\nequation\n  y = k * u;\nend Gain;\n",
    ),
    (
        "/libs/Single.mo",
        "package Single\n  constant Real c = 7;\nend Single;\n",
    ),
];

const USER: &str = "model M\n  Lib.Sub.Gain g(u = Single.c);\nend M;\n";

#[test]
fn a_class_is_read_only_when_a_lookup_reaches_it_and_package_order_orders_the_classes() {
    let store = MemoryStore::new(TREE);
    let mut session = session_with(store.clone(), &["/libs"], USER, None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model.simulate(&RunSettings::default()).expect("runs");
    // k = 3 * base = 6 (the constant of the enclosing package, found through `within`), u = 7.
    assert_eq!(result.final_value("g.y"), Some(42.0));
    // Neither Alpha nor Zeta was read, and nothing was read twice.
    assert_eq!(
        store.read_names(),
        [
            "/libs/Lib/package.mo",
            "/libs/Lib/package.order",
            "/libs/Lib/Sub/package.mo",
            "/libs/Lib/Sub/Gain.mo",
            "/libs/Single.mo",
        ]
    );
    assert_eq!(session.library_files_read(), 5);
}

#[test]
fn package_order_fixes_the_order_of_a_package_s_classes() {
    let (libraries, warnings) =
        eqm::pipeline::flatten::library::Libraries::new(MemoryStore::new(TREE), &[PathBuf::from("/libs")]);
    assert!(warnings.is_empty());
    let mut libraries = libraries;
    libraries.mark_loaded("Lib", &["base"]);
    // The classes package.order names in its order, and the rest (none here) after them.
    assert_eq!(libraries.order("Lib"), ["Sub", "Zeta", "Alpha", "base"]);
    assert!(libraries.file_of("Lib.Alpha").is_some());
    assert_eq!(
        libraries.file_of("Lib.Sub").map(|f| f.path),
        Some(PathBuf::from("/libs/Lib/Sub/package.mo"))
    );
}

#[test]
fn a_within_clause_that_does_not_match_the_place_of_the_file_is_an_error_there() {
    let mut tree = TREE.to_vec();
    tree[5] = (
        "/libs/Lib/Sub/Gain.mo",
        "within Lib;\nblock Gain\n  input Real u;\n  output Real y = u;\nend Gain;\n",
    );
    let mut session = session_with(MemoryStore::new(&tree), &["/libs"], USER, None);
    assert!(session.check(None, &ModelOptions::default()).is_none());
    let codes: Vec<&str> = session.diagnostics().iter().map(|d| d.code).collect();
    assert!(codes.contains(&"E0240"), "{codes:?}");
    let rendered = session.render_diagnostics(false);
    assert!(rendered.contains("/libs/Lib/Sub/Gain.mo:1:8"), "{rendered}");
    assert!(rendered.contains("must start with `within Lib.Sub;`"), "{rendered}");
}

#[test]
fn the_first_directory_holding_a_package_provides_it() {
    let store = MemoryStore::new(&[
        ("/first/P.mo", "package P\n  constant Real v = 1;\nend P;\n"),
        ("/second/P/package.mo", "package P\n  constant Real v = 2;\nend P;\n"),
    ]);
    let user = "model M\n  Real x = P.v;\nend M;\n";
    for (dirs, expected) in [(["/first", "/second"], 1.0), (["/second", "/first"], 2.0)] {
        let mut session = session_with(store.clone(), &dirs, user, None);
        let mut model = session.compile(None, &ModelOptions::default()).expect("compiles");
        let result = model.simulate(&RunSettings::default()).expect("runs");
        assert_eq!(result.final_value("x"), Some(expected), "{dirs:?}");
    }
}

#[test]
fn a_package_directory_given_itself_is_a_library() {
    let store = MemoryStore::new(TREE);
    let mut session = session_with(store, &["/libs/Lib", "/libs/Single.mo"], USER, None);
    let mut model = session.compile(None, &ModelOptions::default()).expect("compiles");
    let result = model.simulate(&RunSettings::default()).expect("runs");
    assert_eq!(result.final_value("g.y"), Some(42.0));
}

#[test]
fn a_directory_that_cannot_be_listed_is_a_warning() {
    let mut session = session_with(MemoryStore::new(TREE), &["/nowhere", "/libs"], USER, None);
    assert!(session.compile(None, &ModelOptions::default()).is_some());
    let warning = session.diagnostics().iter().find(|d| d.code == "W0240").expect("W0240");
    assert!(warning.message.contains("/nowhere"), "{}", warning.message);
}

#[test]
fn a_library_modelica_package_replaces_the_embedded_one_entirely() {
    // The embedded Modelica has Modelica.Blocks.Sources.Constant; this one has only `Own`.
    let store = MemoryStore::new(&[(
        "/libs/Modelica/package.mo",
        "package Modelica\n  model Own\n    Real x = 5;\n  end Own;\n  annotation(version = \"4.1.0\");\nend Modelica;\n",
    )]);
    let mut session = session_with(store.clone(), &["/libs"], "", Some("Modelica.Own"));
    let mut model = session
        .compile(Some("Modelica.Own"), &ModelOptions::default())
        .expect("compiles");
    assert_eq!(
        model.simulate(&RunSettings::default()).unwrap().final_value("x"),
        Some(5.0)
    );
    let user = "model M\n  Modelica.Blocks.Sources.Constant c(k = 1);\nend M;\n";
    let mut session = session_with(store, &["/libs"], user, None);
    assert!(session.check(None, &ModelOptions::default()).is_none());
    assert_eq!(session.diagnostics()[0].code, "E0202", "{:?}", session.diagnostics());
    // Without a Modelica on the path the embedded one is there.
    let mut session = session_with(MemoryStore::new(TREE), &["/libs"], user, None);
    assert!(session.check(None, &ModelOptions::default()).is_some());
}

#[test]
fn a_uses_annotation_with_another_version_is_a_warning() {
    let user = "model M\n  Lib.Sub.Gain g(u = 1);\n  annotation(uses(Lib(version = \"2.0\")));\nend M;\n";
    let mut session = session_with(MemoryStore::new(TREE), &["/libs"], user, None);
    assert!(session.check(None, &ModelOptions::default()).is_some());
    let warning = session.diagnostics().iter().find(|d| d.code == "W0241").expect("W0241");
    assert!(warning.message.contains("version 2.0") && warning.message.contains("1.2.0"));
    let same = user.replace("2.0", "1.2.0");
    let mut session = session_with(MemoryStore::new(TREE), &["/libs"], &same, None);
    assert!(session.check(None, &ModelOptions::default()).is_some());
    assert!(session.diagnostics().iter().all(|d| d.code != "W0241"));
}

#[test]
fn an_error_inside_a_library_file_names_the_file_line_and_the_instance() {
    let mut tree = TREE.to_vec();
    tree[5] = (
        "/libs/Lib/Sub/Gain.mo",
        "within Lib.Sub;\nblock Gain\n  input Real u;\n  output Real y;\nequation\n  y = u * missing;\nend Gain;\n",
    );
    let mut session = session_with(MemoryStore::new(&tree), &["/libs"], USER, None);
    assert!(session.check(None, &ModelOptions::default()).is_none());
    let rendered = session.render_diagnostics(false);
    assert!(rendered.contains("/libs/Lib/Sub/Gain.mo:6:11"), "{rendered}");
    assert!(rendered.contains("y = u * missing"), "{rendered}");
    assert!(rendered.contains("g"), "{rendered}");
}

/// The installed Modelica Standard Library, when this machine has it.
fn installed_msl() -> Option<&'static str> {
    let dir = "/work/shared/msl";
    if Path::new(dir).join("Modelica/package.mo").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: the Modelica Standard Library is not installed at {dir}");
        None
    }
}

#[test]
fn a_blocks_example_of_the_real_library_reads_only_the_packages_it_uses() {
    let Some(msl) = installed_msl() else {
        return;
    };
    let store = Arc::new(CountingFileSystem::default());
    let model = "Modelica.Blocks.Examples.PID_Controller";
    let mut session = session_with(store.clone(), &[msl], "", Some(model));
    let _ = session.flatten(Some(model), &ModelOptions::default());
    let read = store.read.lock().unwrap().clone();
    let read: Vec<String> = read.iter().map(|p| p.display().to_string()).collect();
    assert!(
        read.iter().any(|p| p.ends_with("Modelica/Blocks/Continuous.mo")),
        "{read:?}"
    );
    // The example drives a rotational plant, whose components have a conditional heat port:
    // those packages are reached, other domains are not.
    for other in ["/Fluid/", "/Media/", "/Electrical/", "/Magnetic/", "/Translational/"] {
        assert!(!read.iter().any(|p| p.contains(other)), "{other} read: {read:?}");
    }
    // 50 files of the library's 2553 (package.mo and package.order counted).
    assert!(read.len() <= 60, "{} files read: {read:?}", read.len());
}

#[test]
fn the_search_order_is_the_named_directories_then_eqmpath_then_modelicapath() {
    let named = [PathBuf::from("/named/a"), PathBuf::from("/named/b")];
    let order = LibraryPath::search_order(&named, Some("/eqm/one::/eqm/two"), Some(":/modelica"));
    let expected: Vec<PathBuf> = ["/named/a", "/named/b", "/eqm/one", "/eqm/two", "/modelica"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(order, expected);
    assert!(LibraryPath::search_order(&[], None, Some("")).is_empty());
}

#[test]
fn the_eqm_files_of_an_eqmpath_directory_are_read_in_full_in_name_order() {
    // Two files of one directory, `b.eqm` using what `a.eqm` declares; a directory named like
    // a file and a file of another kind are not read.
    let store = MemoryStore::new(&[
        ("/eqmlib/b.eqm", "model UsesA\n  A.Gain g(u = 3);\nend UsesA;\n"),
        (
            "/eqmlib/a.eqm",
            "package A\n  block Gain\n    input Real u;\n    output Real y = 4 * u;\n  end Gain;\nend A;\n",
        ),
        ("/eqmlib/notes.txt", "not a model"),
        ("/eqmlib/dir.eqm/inner.mo", "package Inner\nend Inner;\n"),
    ]);
    let path = LibraryPath {
        store: store.clone(),
        directories: LibraryPath::search_order(&[], Some("/eqmlib"), None),
        eqm_file_directories: LibraryPath::eqm_file_directories(Some("/eqmlib")),
        tree_cache: None,
    };
    let user = vec![("m.eqm".to_string(), b"model M\n  UsesA x;\nend M;\n".to_vec())];
    let mut session = Session::with_libraries(Vec::new(), user, &[], Some(path), Some("M"));
    let mut model = session
        .compile(Some("M"), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model.simulate(&RunSettings::default()).expect("runs");
    assert_eq!(result.final_value("x.g.y"), Some(12.0));
    assert_eq!(store.read_names(), ["/eqmlib/a.eqm", "/eqmlib/b.eqm"]);
}

#[test]
fn a_syntax_error_in_a_library_class_the_model_uses_leaves_no_model_to_run() {
    // The error is found only once a lookup reaches the class; a model whose class lost a
    // declaration to it must not be compiled and run as if the declaration were not there.
    let store = MemoryStore::new(&[(
        "/broken/L/package.mo",
        "within;\npackage L\n  model M\n    Real x = ;\n    Real y = 1;\n  end M;\nend L;\n",
    )]);
    let mut session = session_with(store, &["/broken"], "", Some("L.M"));
    assert!(session.compile(Some("L.M"), &ModelOptions::default()).is_none());
    let codes: Vec<&str> = session.diagnostics().iter().map(|d| d.code).collect();
    assert!(codes.contains(&"E0110"), "{codes:?}");
}

/// Version 2.0 of a library `Conv` that renamed the package `Units` to `SI` (and `Units.Temp` to
/// `NonSI.Celsius`), renamed the parameter `freqHz` of `Src.Sine` to `f` and removed its
/// parameter `atInit`, with the conversion script from 1.x its annotation names.
const CONVERTED: &[(&str, &str)] = &[
    (
        "/libs/Conv/package.mo",
        "within;\npackage Conv\n  annotation(version = \"2.0\", conversion(noneFromVersion = \"1.5\", \
         from(version = {\"1.0\", \"1.1\"}, script = \"modelica://Conv/Resources/Convert_from_1.mos\")));\nend Conv;\n",
    ),
    (
        "/libs/Conv/SI.mo",
        "within Conv;\npackage SI\n  type Time = Real(unit = \"s\");\n  type Frequency = Real(unit = \"Hz\");\nend SI;\n",
    ),
    (
        "/libs/Conv/NonSI.mo",
        "within Conv;\npackage NonSI\n  type Celsius = Real(unit = \"degC\");\nend NonSI;\n",
    ),
    (
        "/libs/Conv/Src.mo",
        "within Conv;\npackage Src\n  block Sine\n    parameter Conv.SI.Frequency f = 1;\n    output Real y;\n  \
         equation\n    y = sin(2*3.141592653589793*f*time);\n  end Sine;\nend Src;\n",
    ),
    (
        "/libs/Conv/Resources/Convert_from_1.mos",
        "// Conv 1.x to 2.0; a comment with a ; in it\nconvertClass(\"Conv.Units\", \"Conv.SI\");\n\
         convertClass(\"Conv.Units.Temp\", \"Conv.NonSI.Celsius\");\n\
         convertElement({\"Conv.Src.Sine\"}, \"freqHz\", \"f\");\n\
         convertModifiers({\"Conv.Src.Sine\"}, {\"atInit\"}, fill(\"\", 0), true);\n",
    ),
];

#[test]
fn a_model_for_an_earlier_version_is_read_through_the_librarys_conversion_script() {
    // Names in full, through a renaming import, through a qualified one, and a modifier of a
    // renamed and of a removed parameter.
    let user = "package P\n  model M\n    import U = Conv.Units;\n    import Conv.Units.Time;\n    \
                Conv.Units.Time t0 = 1;\n    U.Temp T = 20;\n    Time t1 = 2;\n    \
                Conv.Src.Sine s(freqHz = 0.25, atInit = true);\n  end M;\n  \
                annotation(uses(Conv(version = \"1.1\")));\nend P;\n";
    let store = MemoryStore::new(CONVERTED);
    let mut session = session_with(store.clone(), &["/libs"], user, Some("P.M"));
    let mut model = session
        .compile(Some("P.M"), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).expect("runs");
    // y = sin(2 pi f t) with f = 0.25 from the renamed modifier: sin(pi/2) = 1 at t = 1.
    let y = result.final_value("s.y").expect("s.y");
    assert!((y - 1.0).abs() < 1e-9, "{y}");
    assert_eq!(result.final_value("T"), Some(20.0));
    assert!(store.read_names().iter().any(|p| p.ends_with("Convert_from_1.mos")));
    let warning = session.diagnostics().iter().find(|d| d.code == "W0241").expect("W0241");
    assert!(warning.help.as_deref().is_some_and(|h| h.contains("conversion script")));
    // A model that says it uses a version the script does not convert from is read as
    // written: the old name is not found.
    let newer = user.replace("1.1", "1.5");
    let mut session = session_with(MemoryStore::new(CONVERTED), &["/libs"], &newer, Some("P.M"));
    assert!(session.check(Some("P.M"), &ModelOptions::default()).is_none());
    assert!(
        session.diagnostics().iter().any(|d| d.code == "E0202"),
        "{:?}",
        session.diagnostics()
    );
}
