//! Libraries stored as Modelica stores packages on the file system, read class by class as
//! lookups reach them.
//!
//! Input: the library directories a front end names (`--library`, `EQMPATH`, `MODELICAPATH`, in
//! that order) and a [`LibraryStore`] through which every directory is listed and every file is
//! read. Each directory either holds top-level packages (`Name/package.mo`, `Name.mo`), or is a
//! package directory itself (it has a `package.mo`), or is a single-file package (`Name.mo`).
//! Output: the classes known to exist but not read yet ([`Libraries::unloaded`]; the class table
//! marks them so that a lookup reaching one asks for it), and for a class asked for, the file to
//! read and the place its class must take (its name, and the package it is `within`).
//!
//! The policy of what is read when lives here, the same for every front end: a top-level
//! package's `package.mo` is read when a lookup first reaches the package; its directory is then
//! listed (with `package.order`), so that its sub-packages and class files are known by name, and
//! each of them is read only when a lookup reaches it in turn. The first directory that holds a
//! top-level package of a name provides it; a later one is not looked at for that name.
//!
//! Not done here: parsing and checking the files (`Sources` does, and reports a `within` that
//! does not match the place of the file), and any IO: the store reads.

use eqm_diag::{Diagnostic, Severity};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub is_dir: bool,
}

/// How a front end reads library directories: the binary through the file system, a test from
/// texts it holds (and counting what it was asked for). The library decides what to read and
/// when; the store only answers.
pub trait LibraryStore: Send + Sync {
    /// The entries of a directory, in any order; the message when it cannot be listed.
    fn list_dir(&self, dir: &Path) -> Result<Vec<DirEntry>, String>;
    /// The text of a file; the message when it cannot be read.
    fn read_file(&self, path: &Path) -> Result<String, String>;
    /// Whether a file exists (without reading it).
    fn is_file(&self, path: &Path) -> bool;
}

impl std::fmt::Debug for dyn LibraryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LibraryStore")
    }
}

/// Where a class of a library is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// A package directory with its `package.mo`.
    Directory(PathBuf),
    /// One file holding the class (`Name.mo`).
    File(PathBuf),
}

#[derive(Debug)]
struct Node {
    name: String,
    /// The dotted name of the enclosing package, `None` for a top-level package.
    within: Option<String>,
    place: Place,
    loaded: bool,
    /// The classes of a loaded package directory in the order of its `package.order` (the
    /// classes it does not name after them, sorted by name).
    order: Vec<String>,
}

/// The class a library file must hold, at the place it is stored; see [`Libraries::file_of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryFile {
    /// The file to read (`package.mo` of a package directory).
    pub path: PathBuf,
    /// The name of the class the file must define.
    pub name: String,
    /// The package the file must say it is `within` (`None` for a top-level package).
    pub within: Option<String>,
}

/// The library directories of a session and what of them was read; see the module
/// documentation.
#[derive(Debug, Default)]
pub struct Libraries {
    store: Option<Arc<dyn LibraryStore>>,
    nodes: Vec<Node>,
    /// Every class known to be stored, by its dotted name.
    by_name: BTreeMap<String, usize>,
    /// The number of files read so far (listings not counted).
    files_read: usize,
}

impl Libraries {
    /// The top-level packages of `dirs`, found by listing each directory once through `store`;
    /// nothing is read yet. A directory that cannot be listed is a warning (W0240), as a missing
    /// directory on a search path is not the model's error.
    pub fn new(store: Arc<dyn LibraryStore>, dirs: &[PathBuf]) -> (Libraries, Vec<Diagnostic>) {
        let mut libraries = Libraries {
            store: Some(store.clone()),
            ..Libraries::default()
        };
        let mut diagnostics = Vec::new();
        for dir in dirs {
            if dir.extension().is_some_and(|x| x == "mo") && store.is_file(dir) {
                if let Some(name) = package_name(dir) {
                    libraries.add(name, None, Place::File(dir.clone()));
                }
                continue;
            }
            let entries = match store.list_dir(dir) {
                Ok(entries) => entries,
                Err(e) => {
                    diagnostics.push(Diagnostic {
                        code: "W0240",
                        severity: Severity::Warning,
                        message: format!("the library directory {} cannot be read: {e}", dir.display()),
                        labels: Vec::new(),
                        notes: Vec::new(),
                        help: None,
                    });
                    continue;
                }
            };
            if entries.iter().any(|e| !e.is_dir && e.name == "package.mo") {
                // The directory is a package itself (`--library .../Modelica`).
                if let Some(name) = package_name(dir) {
                    libraries.add(name, None, Place::Directory(dir.clone()));
                }
                continue;
            }
            for (name, place) in stored_classes(store.as_ref(), dir, entries) {
                libraries.add(name, None, place);
            }
        }
        (libraries, diagnostics)
    }

    /// Records a stored class unless one of its name is known already (the first found wins).
    fn add(&mut self, name: String, within: Option<String>, place: Place) {
        let full = match &within {
            Some(w) => format!("{w}.{name}"),
            None => name.clone(),
        };
        if self.by_name.contains_key(&full) {
            return;
        }
        self.by_name.insert(full, self.nodes.len());
        self.nodes.push(Node {
            name,
            within,
            place,
            loaded: false,
            order: Vec::new(),
        });
    }

    /// Whether a top-level package of this name is stored in a library directory (it then
    /// replaces an embedded package of the same name entirely).
    pub fn provides(&self, top_level: &str) -> bool {
        self.by_name.contains_key(top_level)
    }

    /// Whether the class of this dotted name was read.
    pub fn is_loaded(&self, full_name: &str) -> bool {
        self.by_name.get(full_name).is_some_and(|&k| self.nodes[k].loaded)
    }

    /// The classes known by name that were not read, each `(enclosing package, name)` with
    /// `None` for a top-level package, sorted.
    pub fn unloaded(&self) -> Vec<(Option<&str>, &str)> {
        self.nodes
            .iter()
            .filter(|n| !n.loaded)
            .map(|n| (n.within.as_deref(), n.name.as_str()))
            .collect()
    }

    /// The file to read for the class `full_name` when it is stored and not read yet.
    pub fn file_of(&self, full_name: &str) -> Option<LibraryFile> {
        let node = &self.nodes[*self.by_name.get(full_name)?];
        if node.loaded {
            return None;
        }
        let path = match &node.place {
            Place::Directory(dir) => dir.join("package.mo"),
            Place::File(file) => file.clone(),
        };
        Some(LibraryFile {
            path,
            name: node.name.clone(),
            within: node.within.clone(),
        })
    }

    /// Reads a library file through the store (counted in [`Libraries::files_read`]).
    pub fn read(&mut self, path: &Path) -> Result<String, String> {
        let store = self.store.as_ref().ok_or("no library store")?;
        self.files_read += 1;
        store.read_file(path)
    }

    /// The number of library files read so far.
    pub fn files_read(&self) -> usize {
        self.files_read
    }

    /// Records that the class `full_name` was read, its file defining the nested classes
    /// `defined`. A package directory is listed then (and its `package.order` read), so that its
    /// other classes become known by name; a class the file defines itself is not looked for
    /// in a file of its own.
    pub fn mark_loaded(&mut self, full_name: &str, defined: &[&str]) {
        let Some(&k) = self.by_name.get(full_name) else {
            return;
        };
        self.nodes[k].loaded = true;
        let Place::Directory(dir) = self.nodes[k].place.clone() else {
            return;
        };
        let Some(store) = self.store.clone() else {
            return;
        };
        let entries = store.list_dir(&dir).unwrap_or_default();
        let mut names: BTreeSet<String> = defined.iter().map(|s| s.to_string()).collect();
        for (name, place) in stored_classes(store.as_ref(), &dir, entries) {
            if names.insert(name.clone()) {
                self.add(name, Some(full_name.to_string()), place);
            }
        }
        let order_file = dir.join("package.order");
        let listed = if store.is_file(&order_file) {
            self.files_read += 1;
            store.read_file(&order_file).unwrap_or_default()
        } else {
            String::new()
        };
        let mut order: Vec<String> = Vec::new();
        for line in listed.lines().map(str::trim) {
            if names.remove(line) {
                order.push(line.to_string());
            }
        }
        order.extend(names);
        self.nodes[k].order = order;
    }

    /// The classes of the package `full_name` in the order of its `package.order` (those it
    /// does not name after them, sorted); empty for a package that was not read or is not a
    /// package directory.
    pub fn order(&self, full_name: &str) -> &[String] {
        self.by_name.get(full_name).map_or(&[], |&k| &self.nodes[k].order)
    }
}

/// The top-level package name of a library path: the file name without `.mo`, or a
/// directory's name without the version Modelica allows after a space (`Modelica 4.1.0`).
fn package_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".mo").unwrap_or(name);
    let name = name.split(' ').next().unwrap_or(name);
    is_identifier(name).then(|| name.to_string())
}

/// The classes stored in a directory: sub-directories with a `package.mo` and `Name.mo` files
/// (not `package.mo`), sorted by name so that the result does not depend on the listing order.
fn stored_classes(store: &dyn LibraryStore, dir: &Path, mut entries: Vec<DirEntry>) -> Vec<(String, Place)> {
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let mut found = Vec::new();
    for entry in entries {
        let path = dir.join(&entry.name);
        if entry.is_dir {
            if let Some(name) = package_name(&path)
                && store.is_file(&path.join("package.mo"))
            {
                found.push((name, Place::Directory(path)));
            }
        } else if entry.name != "package.mo"
            && entry.name.ends_with(".mo")
            && let Some(name) = package_name(&path)
        {
            found.push((name, Place::File(path)));
        }
    }
    found
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
