//! Syntax trees of library files kept between runs: a second session takes the tree of an
//! unchanged file from the cache instead of parsing it, gets the same model and the same
//! diagnostics (at the right file and line, whatever number the file has in the new session),
//! and never takes a tree for a changed text, a text with syntax errors, or bytes that do not
//! decode.

use eqm::{DirEntry, LibraryPath, LibraryStore, ModelOptions, RunSettings, Session, TreeCache};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Files held in memory by path.
struct Files(BTreeMap<PathBuf, String>);

impl LibraryStore for Files {
    fn list_dir(&self, dir: &Path) -> Result<Vec<DirEntry>, String> {
        let mut entries: BTreeMap<String, bool> = BTreeMap::new();
        for path in self.0.keys() {
            if let Ok(rest) = path.strip_prefix(dir) {
                let mut parts = rest.components();
                if let Some(first) = parts.next() {
                    entries.insert(first.as_os_str().to_string_lossy().into_owned(), parts.next().is_some());
                }
            }
        }
        Ok(entries
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn read_file(&self, path: &Path) -> Result<String, String> {
        self.0.get(path).cloned().ok_or_else(|| "no such file".to_string())
    }

    fn is_file(&self, path: &Path) -> bool {
        self.0.contains_key(path)
    }
}

/// Trees kept in memory, counting what was found and what was saved.
#[derive(Default)]
struct Kept {
    trees: Mutex<BTreeMap<u64, Vec<u8>>>,
    found: Mutex<usize>,
    saved: Mutex<usize>,
}

impl TreeCache for Kept {
    fn load(&self, key: u64) -> Option<Vec<u8>> {
        let bytes = self.trees.lock().unwrap().get(&key).cloned();
        *self.found.lock().unwrap() += usize::from(bytes.is_some());
        bytes
    }

    fn save(&self, key: u64, bytes: &[u8]) {
        *self.saved.lock().unwrap() += 1;
        self.trees.lock().unwrap().insert(key, bytes.to_vec());
    }
}

impl Kept {
    fn counts(&self) -> (usize, usize) {
        let counts = (*self.found.lock().unwrap(), *self.saved.lock().unwrap());
        *self.found.lock().unwrap() = 0;
        *self.saved.lock().unwrap() = 0;
        counts
    }
}

const LIBRARY: &[(&str, &str)] = &[
    (
        "/libs/Lib/package.mo",
        "within;\npackage Lib\n  constant Real base = 2;\nend Lib;\n",
    ),
    (
        "/libs/Lib/Gain.mo",
        "within Lib;\nblock Gain\n  parameter Real k = 3 * base;\n  input Real u;\n  output Real y;\nequation\n  y = k * u;\nend Gain;\n",
    ),
    (
        "/libs/Lib/Broken.mo",
        "within Lib;\nmodel Broken\n  Real z = 1;\n  Real w = notDeclared;\nend Broken;\n",
    ),
];

/// A session over `library` with `cache`, whose user files are `extra` (to shift the numbers
/// the library files get) and a model `M` using `class`.
fn session(library: &[(&str, &str)], cache: &Arc<Kept>, extra: usize, class: &str) -> Session {
    let files = Files(library.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect());
    let path = LibraryPath {
        store: Arc::new(files),
        directories: vec![PathBuf::from("/libs")],
        eqm_file_directories: Vec::new(),
        tree_cache: Some(cache.clone() as Arc<dyn TreeCache>),
    };
    let mut user: Vec<(String, Vec<u8>)> = (0..extra)
        .map(|k| (format!("extra{k}.eqm"), format!("model E{k}\nend E{k};\n").into_bytes()))
        .collect();
    user.push((
        "m.eqm".to_string(),
        format!("model M\n  {class} c(u = 7);\nend M;\n").into_bytes(),
    ));
    Session::with_libraries(Vec::new(), user, &[], Some(path), Some("M"))
}

fn final_y(session: &mut Session) -> f64 {
    let mut model = session
        .compile(Some("M"), &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model.simulate(&RunSettings::default()).expect("runs");
    result.final_value("c.y").expect("c.y is a result column")
}

#[test]
fn an_unchanged_library_file_is_parsed_once_and_its_kept_tree_gives_the_same_model() {
    let cache = Arc::new(Kept::default());
    // k = 3 * base = 6, u = 7.
    assert_eq!(final_y(&mut session(LIBRARY, &cache, 0, "Lib.Gain")), 42.0);
    assert_eq!(cache.counts(), (0, 2), "Lib/package.mo and Gain.mo parsed and kept");
    assert_eq!(final_y(&mut session(LIBRARY, &cache, 3, "Lib.Gain")), 42.0);
    assert_eq!(cache.counts(), (2, 0), "both taken from the cache, nothing parsed");
}

#[test]
fn a_changed_library_file_is_parsed_again() {
    let cache = Arc::new(Kept::default());
    assert_eq!(final_y(&mut session(LIBRARY, &cache, 0, "Lib.Gain")), 42.0);
    cache.counts();
    let mut changed = LIBRARY.to_vec();
    changed[1].1 = "within Lib;\nblock Gain\n  parameter Real k = 5 * base;\n  input Real u;\n  output Real y;\nequation\n  y = k * u;\nend Gain;\n";
    // k = 5 * base = 10: the new text, not the kept tree of the old one.
    assert_eq!(final_y(&mut session(&changed, &cache, 0, "Lib.Gain")), 70.0);
    assert_eq!(
        cache.counts(),
        (1, 1),
        "package.mo found, the changed Gain.mo parsed and kept"
    );
}

#[test]
fn a_diagnostic_in_a_kept_tree_points_at_its_file_and_line() {
    let cache = Arc::new(Kept::default());
    let mut first = session(LIBRARY, &cache, 0, "Lib.Broken");
    assert!(first.check(Some("M"), &ModelOptions::default()).is_none());
    let expected = first.render_diagnostics(false);
    assert!(expected.contains("/libs/Lib/Broken.mo:4:12"), "{expected}");
    cache.counts();
    // Five more user files: the library files get other numbers than in the first session.
    let mut second = session(LIBRARY, &cache, 5, "Lib.Broken");
    assert!(second.check(Some("M"), &ModelOptions::default()).is_none());
    assert_eq!(cache.counts().0, 2, "the trees came from the cache");
    assert_eq!(second.render_diagnostics(false), expected);
}

#[test]
fn a_file_with_syntax_errors_is_not_kept_and_bytes_that_do_not_decode_are_parsed_again() {
    let cache = Arc::new(Kept::default());
    let mut broken = LIBRARY.to_vec();
    broken[2].1 = "within Lib;\nmodel Broken\n  Real z = ;\nend Broken;\n";
    let mut first = session(&broken, &cache, 0, "Lib.Broken");
    assert!(first.check(Some("M"), &ModelOptions::default()).is_none());
    assert_eq!(cache.counts(), (0, 1), "only Lib/package.mo is kept");
    // Every kept tree replaced by bytes that are not a tree: each file is parsed as if nothing
    // were kept, and the model is the same.
    for bytes in cache.trees.lock().unwrap().values_mut() {
        *bytes = vec![0xff; 3];
    }
    assert_eq!(final_y(&mut session(LIBRARY, &cache, 0, "Lib.Gain")), 42.0);
}
