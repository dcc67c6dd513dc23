//! Libraries built from the C sources of a Modelica library's installation: a `Library`
//! annotation that names a library with no prebuilt file for this platform is compiled at first
//! use from the sources the installation ships, and the objects are kept in the cache.
//!
//! Input: one library name of a unit, the unit's `LibraryDirectory` and `IncludeDirectory`
//! paths, the compiler and the cache directory. Output: the object files that make the
//! library (each compiled once for its contents and kept under a hash of everything it reads),
//! to link into the unit like a static library; or nothing when the installation has no
//! sources for it (the linker then looks for it as for any other library).
//!
//! A Modelica library stores its prebuilt libraries in `Resources/Library/<platform>` and its C
//! sources in `Resources/C-Sources`, whose `readme.txt` says which files make which library
//! ("- NAME (...) containing:" followed by one file per line; a line with a condition after the
//! file name, such as a file only for another platform's compiler, is not taken). A library the
//! readme does not name is made of the file `NAME.c` when there is one. The sources are searched
//! in the `C-Sources` directory beside each library directory, then in each include directory.
//!
//! The objects are linked into each unit that names the library, as a prebuilt static library
//! is: the functions of `ModelicaUtilities.h` the C code calls (`ModelicaError`,
//! `ModelicaAllocateString`, ...) are then the ones each unit defines. It deliberately builds
//! no shared library of its own: a variable the C code keeps in a `static` is therefore one per
//! external function, not one per process.

use crate::support::{Fnv, directory_files, error, not_run};
use eqm_ir::external::LinkError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The flags of every object of a library built from sources: position-independent code (it is
/// linked into shared objects), optimised.
const OBJECT_FLAGS: [&str; 3] = ["-c", "-fPIC", "-O2"];

/// The name of the file of a C-sources directory that says which files make which library.
const MANIFEST: &str = "readme.txt";

/// A library of a unit to be built from C sources: its name, the directory of its sources
/// (also searched for the headers they include) and its files with their contents.
pub(crate) struct SourceLibrary {
    pub name: String,
    pub directory: PathBuf,
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// A hash of everything the build of its objects reads: the compiler, the flags, the
    /// sources and every file beside them (the headers they include).
    pub key: u64,
}

/// The directories searched for the C sources of a library: the `C-Sources` directory beside
/// each library directory (`Resources/Library` and `Resources/C-Sources` in a Modelica
/// library), then each include directory.
pub(crate) fn source_directories(library_directories: &[String], include_directories: &[String]) -> Vec<PathBuf> {
    let beside = library_directories
        .iter()
        .filter_map(|d| Path::new(d).parent().map(|p| p.join("C-Sources")));
    let mut dirs: Vec<PathBuf> = beside.chain(include_directories.iter().map(PathBuf::from)).collect();
    dirs.dedup();
    dirs
}

/// The library `name` as the installation's C sources make it, if they do: the first source
/// directory whose manifest names it, or that holds `NAME.c`.
pub(crate) fn find(
    name: &str,
    compiler: &str,
    library_directories: &[String],
    include_directories: &[String],
) -> Option<SourceLibrary> {
    for directory in source_directories(library_directories, include_directories) {
        let listed = std::fs::read_to_string(directory.join(MANIFEST))
            .ok()
            .and_then(|text| manifest_files(&text, name));
        let files = match listed {
            Some(files) => files,
            None if directory.join(format!("{name}.c")).is_file() => vec![format!("{name}.c")],
            None => continue,
        };
        let mut read = Vec::new();
        for file in files.iter().flat_map(|f| expand(&directory, f)) {
            let bytes = std::fs::read(&file).ok()?;
            read.push((file, bytes));
        }
        if read.is_empty() {
            continue;
        }
        let mut h = Fnv::default();
        h.text(compiler);
        OBJECT_FLAGS.iter().for_each(|f| h.text(f));
        h.text(name);
        for (file, bytes) in &read {
            h.text(&file.display().to_string());
            h.bytes(bytes);
        }
        for (file, bytes) in directory_files(&directory) {
            h.text(&file);
            h.bytes(&bytes);
        }
        return Some(SourceLibrary {
            name: name.to_string(),
            directory,
            files: read,
            key: h.0,
        });
    }
    None
}

/// The files a manifest lists for library `name`, as written (`File.c` or `dir/*.c`); `None`
/// when it does not name the library.
fn manifest_files(text: &str, name: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    lines.find(|line| {
        let line = line.trim_start();
        line.strip_prefix("- ")
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|first| first == name)
    })?;
    let mut files = Vec::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with("- ") {
            break;
        }
        // A file name alone; a line with more after it names a condition (another platform).
        if line.ends_with(".c") && !line.contains(char::is_whitespace) {
            files.push(line.to_string());
        }
    }
    Some(files)
}

/// The paths a manifest entry stands for: the file itself, or for `dir/*.c` the C files of
/// `dir`, sorted by name.
fn expand(directory: &Path, entry: &str) -> Vec<PathBuf> {
    match entry.strip_suffix("*.c") {
        Some(sub) => {
            let dir = directory.join(sub);
            let mut files: Vec<PathBuf> = directory_files(&dir)
                .into_iter()
                .filter(|(name, _)| name.ends_with(".c"))
                .map(|(name, _)| dir.join(name))
                .collect();
            files.sort();
            files
        }
        None => vec![directory.join(entry)],
    }
}

impl SourceLibrary {
    /// The objects of this library in `cache`, each compiled unless the cache holds it.
    pub(crate) fn objects(&self, compiler: &str, cache: &Path) -> Result<Vec<PathBuf>, LinkError> {
        let dir = cache.join(format!("{}-{:016x}", self.name, self.key));
        std::fs::create_dir_all(&dir).map_err(|e| error(format!("cannot create `{}`: {e}", dir.display())))?;
        let mut objects = Vec::with_capacity(self.files.len());
        for (k, (file, _)) in self.files.iter().enumerate() {
            let stem = file
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            // Numbered, so that two files of one name in different directories stay apart.
            let object = dir.join(format!("{k:03}-{stem}.o"));
            if !object.is_file() {
                self.compile(compiler, file, &object)?;
            }
            objects.push(object);
        }
        Ok(objects)
    }

    /// Compiles one source into `object`, through a temporary file renamed when complete, so
    /// that two processes building the same library never link a half-written object.
    fn compile(&self, compiler: &str, file: &Path, object: &Path) -> Result<(), LinkError> {
        let partial = object.with_extension(format!("{}.o", std::process::id()));
        let output = Command::new(compiler)
            .args(OBJECT_FLAGS)
            .arg(format!("-I{}", self.directory.display()))
            .arg("-o")
            .arg(&partial)
            .arg(file)
            .output()
            .map_err(|e| not_run(compiler, &e))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            return Err(error(format!(
                "the library `{}` is built from the C sources in `{}`, and the C compiler failed on `{}` ({}):\n{}",
                self.name,
                self.directory.display(),
                file.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            )));
        }
        std::fs::rename(&partial, object).map_err(|e| error(format!("cannot write `{}`: {e}", object.display())))
    }
}

