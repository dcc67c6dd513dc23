//! Libraries built from the C sources of a Modelica library's installation: a `Library`
//! annotation that names a library with no prebuilt file for this platform is compiled at first
//! use from the sources the installation ships, and the objects are kept in the cache.
//!
//! Input: one library name of a unit, the unit's `LibraryDirectory` and `IncludeDirectory`
//! paths, the compiler and the cache directory. Output: the object files that make the
//! library (each compiled once for its contents and kept under a hash of everything it reads),
//! to link into the units that name it as one shared library; or nothing when the installation has no
//! sources for it (the linker then looks for it as for any other library).
//!
//! A Modelica library stores its prebuilt libraries in `Resources/Library/<platform>` and its C
//! sources in `Resources/C-Sources`, whose `readme.txt` says which files make which library
//! ("- NAME (...) containing:" followed by one file per line; a line with a condition after the
//! file name, such as a file only for another platform's compiler, is not taken). A library the
//! readme does not name is made of the file `NAME.c` when there is one. The sources are searched
//! in the `C-Sources` directory beside each library directory, then in each include directory.
//!
//! The library is a shared library of its own in the cache, made of its objects and of the
//! `ModelicaUtilities.h` functions its C code calls (`ModelicaError`, `ModelicaAllocateString`,
//! ...), which behave as those every unit defines: an error jumps back to the wrapper that
//! called, which registers itself through the library's error-target function before each call.
//! Every unit that names the library loads that one copy, so a variable the C code keeps in a
//! `static` (the state of an impure random number generator) is one per process.

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

    /// The shared library of this library in `cache`, built unless the cache holds it: its
    /// objects and the `ModelicaUtilities.h` functions ([`callbacks`]), bound to its own
    /// definitions (`-Bsymbolic`) so that the units loading it never stand in for them.
    pub(crate) fn shared_library(&self, compiler: &str, cache: &Path) -> Result<PathBuf, LinkError> {
        let objects = self.objects(compiler, cache)?;
        let dir = cache.join(format!("{}-{:016x}", self.name, self.key));
        let library = dir.join(format!("lib{}.so", self.name));
        if library.is_file() {
            return Ok(library);
        }
        let source = dir.join("eqm-callbacks.c");
        std::fs::write(&source, callbacks(&self.name))
            .map_err(|e| error(format!("cannot write `{}`: {e}", source.display())))?;
        let partial = dir.join(format!("lib{}.{}.so", self.name, std::process::id()));
        let output = Command::new(compiler)
            .args(["-shared", "-fPIC", "-O2", "-Wl,--no-undefined", "-Wl,-Bsymbolic", "-o"])
            .arg(&partial)
            .arg(&source)
            .args(&objects)
            .arg("-lm")
            .output()
            .map_err(|e| not_run(compiler, &e))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            return Err(error(format!(
                "the library `{}` is built from the C sources in `{}`, and linking its objects failed ({}):\n{}",
                self.name,
                self.directory.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            )));
        }
        std::fs::rename(&partial, &library).map_err(|e| error(format!("cannot write `{}`: {e}", library.display())))?;
        Ok(library)
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

/// The C name of the function by which a unit tells library `name` where to jump when its C
/// code calls `ModelicaError`: `eqm_error_target_` and the name with every character that
/// cannot be in a C identifier made `_` (the flattener writes the same name into every
/// wrapper, as a weak reference that only a library built from sources defines).
fn error_target(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("eqm_error_target_{id}")
}

/// The `ModelicaUtilities.h` functions of a library built from sources, in its shared library:
/// an error is written into the message buffer of the unit whose wrapper is calling and jumps
/// back to that wrapper, both registered by the wrapper before each call through the library's
/// error-target function (a thread's own, so parallel runs do not share them); messages and
/// warnings go to standard error, as in every unit.
fn callbacks(name: &str) -> String {
    let target = error_target(name);
    format!(
        r#"#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static _Thread_local jmp_buf* eqm_on_error = NULL;
static _Thread_local char* eqm_error_text = NULL;
void {target}(jmp_buf* on_error, char* text) {{ eqm_on_error = on_error; eqm_error_text = text; }}
static _Noreturn void eqm_fail(const char* format, va_list args) {{
    char fallback[2048];
    char* text = eqm_error_text ? eqm_error_text : fallback;
    vsnprintf(text, 2048, format, args);
    if (eqm_on_error) longjmp(*eqm_on_error, 1);
    fputs(text, stderr);
    abort();
}}
_Noreturn void ModelicaVFormatError(const char* format, va_list args) {{ eqm_fail(format, args); }}
_Noreturn void ModelicaFormatError(const char* format, ...) {{ va_list args; va_start(args, format); eqm_fail(format, args); }}
_Noreturn void ModelicaError(const char* string) {{ ModelicaFormatError("%s", string); }}
void ModelicaVFormatMessage(const char* format, va_list args) {{ vfprintf(stderr, format, args); }}
void ModelicaFormatMessage(const char* format, ...) {{ va_list args; va_start(args, format); vfprintf(stderr, format, args); va_end(args); }}
void ModelicaMessage(const char* string) {{ fputs(string, stderr); }}
void ModelicaVFormatWarning(const char* format, va_list args) {{ fputs("warning: ", stderr); vfprintf(stderr, format, args); fputc('\n', stderr); }}
void ModelicaFormatWarning(const char* format, ...) {{ va_list args; va_start(args, format); ModelicaVFormatWarning(format, args); va_end(args); }}
void ModelicaWarning(const char* string) {{ ModelicaFormatWarning("%s", string); }}
char* ModelicaAllocateStringWithErrorReturn(size_t len) {{ return calloc(len + 1, 1); }}
char* ModelicaAllocateString(size_t len) {{ char* s = calloc(len + 1, 1); if (!s) ModelicaError("out of memory"); return s; }}
char* ModelicaDuplicateStringWithErrorReturn(const char* str) {{ char* s = ModelicaAllocateStringWithErrorReturn(strlen(str)); if (s) strcpy(s, str); return s; }}
char* ModelicaDuplicateString(const char* str) {{ char* s = ModelicaAllocateString(strlen(str)); strcpy(s, str); return s; }}
"#
    )
}
