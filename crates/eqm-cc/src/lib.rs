//! The front ends' files outside the project: external C functions, the syntax trees of
//! library files kept between runs ([`DiskTreeCache`], in `trees`), and where the FMU runtime
//! library is ([`fmu_runtime`], in `runtime`).
//!
//! External C functions: each [`ExternalUnit`] the flattener writes is compiled
//! with the system C compiler into a shared object, which is loaded and whose wrapper is
//! returned as a [`LinkedSymbol`].
//!
//! Input: the unit (C text, include and library directories, libraries), the compiler to run
//! and the cache directory, both chosen by the front end. Output: the loaded wrapper, or a
//! [`LinkError`] whose message names the cause: no compiler, the compiler's own message (a C
//! syntax error, a library not found, an undefined symbol: units are linked with
//! `-Wl,--no-undefined`, so a symbol missing after linking is a link error rather than a crash
//! at the first call), or a shared object that does not load.
//!
//! C code that includes `ModelicaUtilities.h`, as the C code of Modelica libraries does, finds
//! EQM's own copy of the header (written into the cache directory) after the unit's include
//! directories; the functions it declares are defined in every unit.
//!
//! The libraries a unit names are searched in each `LibraryDirectory`'s platform
//! subdirectory (`linux64`) first, as Modelica tools do, then in the directory itself. A
//! library with no prebuilt file there whose C sources the installation ships is built from
//! them at first use ([`sources`]) and its objects are linked into the unit.
//!
//! A shared object is kept in the cache directory under a hash of everything its build reads:
//! the compiler, the flags, the unit, and the contents of the files in its include directories
//! and of the libraries it names, so an edited header or library is compiled again and an
//! unchanged one is only loaded. A build writes a temporary file and renames it, so two
//! processes building the same unit never load a half-written object. This crate sits at the
//! edge with the binary: it runs a process, touches the file system and holds the only
//! `unsafe` outside `eqm-jit` (loading a library). It deliberately does not decide the compiler
//! or the cache directory (the binary does) and never calls a wrapper (`eqm_jit::call_external`
//! does).

mod runtime;
mod sources;
mod support;
mod trees;

pub use runtime::{FMU_RUNTIME, fmu_runtime, fmu_runtime_bytes, host_platform};
pub use trees::DiskTreeCache;

use eqm_ir::external::{ExternalUnit, LinkError, LinkExternal, LinkedSymbol};
use sources::SourceLibrary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use support::{Fnv, directory_files, error, not_run};

/// EQM's cache directory, the same for every front end and every kind of kept file: `eqm`
/// under `XDG_CACHE_HOME`, else under `HOME/.cache`, else under the temporary directory.
pub fn cache_root() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("eqm")
}

/// The flags of every build: position-independent code for a shared object, optimised, and
/// every symbol resolved when it is linked.
const FLAGS: [&str; 5] = ["-shared", "-fPIC", "-O2", "-Wl,--no-undefined", "-o"];

/// The header `ModelicaUtilities.h` that the C code of Modelica libraries includes: the
/// declarations of the functions every unit defines (its messages, warnings and errors, and
/// the strings it allocates). Its directory comes after the unit's own include directories, so
/// a library that ships its own copy of the header reads that one.
const MODELICA_UTILITIES_H: &str = r#"#ifndef EQM_MODELICA_UTILITIES_H
#define EQM_MODELICA_UTILITIES_H
#include <stdarg.h>
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void ModelicaMessage(const char* string);
void ModelicaFormatMessage(const char* format, ...);
void ModelicaVFormatMessage(const char* format, va_list args);
void ModelicaWarning(const char* string);
void ModelicaFormatWarning(const char* format, ...);
void ModelicaVFormatWarning(const char* format, va_list args);
_Noreturn void ModelicaError(const char* string);
_Noreturn void ModelicaFormatError(const char* format, ...);
_Noreturn void ModelicaVFormatError(const char* format, va_list args);
char* ModelicaAllocateString(size_t len);
char* ModelicaAllocateStringWithErrorReturn(size_t len);
char* ModelicaDuplicateString(const char* str);
char* ModelicaDuplicateStringWithErrorReturn(const char* str);
#ifdef __cplusplus
}
#endif
#endif
"#;

/// External functions compiled by a system C compiler, each shared object cached on disk and
/// loaded once per process.
pub struct SystemCompiler {
    compiler: String,
    cache: PathBuf,
    loaded: Mutex<BTreeMap<u64, Arc<libloading::Library>>>,
}

impl SystemCompiler {
    /// The compiler and the cache directory the user's environment chooses, the same for
    /// every front end: `CC` when it is set and not empty, else `cc`; the cache `external-c` in
    /// EQM's cache directory ([`cache_root`]).
    pub fn from_environment() -> SystemCompiler {
        let compiler = std::env::var("CC")
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "cc".to_string());
        SystemCompiler::new(compiler, cache_root().join("external-c"))
    }

    /// A linker running `compiler` (such as `cc`) and keeping shared objects under `cache`.
    pub fn new(compiler: impl Into<String>, cache: impl Into<PathBuf>) -> SystemCompiler {
        SystemCompiler {
            compiler: compiler.into(),
            cache: cache.into(),
            loaded: Mutex::new(BTreeMap::new()),
        }
    }

    /// The shared object of `unit`, built unless the cache holds it, with the libraries it
    /// names that are built from C sources.
    fn shared_object(&self, unit: &ExternalUnit, key: u64, built: &[SourceLibrary]) -> Result<PathBuf, LinkError> {
        let dir = self.cache.join(format!("{key:016x}"));
        let object = dir.join("external.so");
        if object.is_file() {
            return Ok(object);
        }
        let mut shared_libraries = Vec::new();
        for library in built {
            shared_libraries.push(library.shared_library(&self.compiler, &self.cache.join("libraries"))?);
        }
        std::fs::create_dir_all(&dir).map_err(|e| error(format!("cannot create `{}`: {e}", dir.display())))?;
        let source = dir.join("external.c");
        std::fs::write(&source, &unit.source)
            .map_err(|e| error(format!("cannot write `{}`: {e}", source.display())))?;
        let partial = dir.join(format!("external.{}.so", std::process::id()));
        let mut command = Command::new(&self.compiler);
        command.args(FLAGS).arg(&partial).arg(&source);
        for d in &unit.include_directories {
            command.arg(format!("-I{d}"));
        }
        command.arg(format!("-I{}", self.utilities_header_directory()?.display()));
        // The libraries built from sources are shared libraries named by their absolute paths,
        // which the unit records: every unit that names one loads the same copy, so the state
        // its C code keeps in `static` variables is one per process, as Modelica's tools have it.
        command.args(&shared_libraries);
        for d in library_search_path(unit) {
            command.arg(format!("-L{}", d.display()));
        }
        for l in unit.libraries.iter().filter(|l| !built.iter().any(|b| &b.name == *l)) {
            command.arg(format!("-l{l}"));
        }
        command.arg("-lm");
        let output = command.output().map_err(|e| not_run(&self.compiler, &e))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            let message = String::from_utf8_lossy(&output.stderr);
            // A library found neither prebuilt nor as sources: say where EQM looked.
            if let Some(name) = message
                .split("cannot find -l")
                .nth(1)
                .and_then(|rest| rest.split([':', ' ', '\n']).next())
            {
                return Err(error(self.library_not_found(unit, name)));
            }
            // A symbol no object defines is the commonest failure of linking: say so first.
            let missing = message
                .split("undefined reference to `")
                .nth(1)
                .and_then(|rest| rest.split('\'').next())
                .map(|symbol| format!("the symbol `{symbol}` is missing after linking; "))
                .unwrap_or_default();
            return Err(error(format!(
                "{missing}the C compiler failed ({}):\n{}",
                output.status,
                message.trim_end()
            )));
        }
        std::fs::rename(&partial, &object).map_err(|e| error(format!("cannot write `{}`: {e}", object.display())))?;
        Ok(object)
    }

    /// The directory of EQM's `ModelicaUtilities.h` in the cache, written unless it holds the
    /// header already (through a temporary file, so that a concurrent build never reads half
    /// of it).
    fn utilities_header_directory(&self) -> Result<PathBuf, LinkError> {
        let dir = self.cache.join("include");
        let header = dir.join("ModelicaUtilities.h");
        if std::fs::read(&header).is_ok_and(|bytes| bytes == MODELICA_UTILITIES_H.as_bytes()) {
            return Ok(dir);
        }
        std::fs::create_dir_all(&dir).map_err(|e| error(format!("cannot create `{}`: {e}", dir.display())))?;
        let partial = dir.join(format!("ModelicaUtilities.h.{}", std::process::id()));
        std::fs::write(&partial, MODELICA_UTILITIES_H)
            .and_then(|()| std::fs::rename(&partial, &header))
            .map_err(|e| error(format!("cannot write `{}`: {e}", header.display())))?;
        Ok(dir)
    }

    /// Why library `name` of `unit` was found neither prebuilt nor as C sources, naming the
    /// directories searched.
    fn library_not_found(&self, unit: &ExternalUnit, name: &str) -> String {
        let searched: Vec<String> = library_search_path(unit)
            .iter()
            .map(|d| format!("`{}`", d.display()))
            .collect();
        let sources: Vec<String> = sources::source_directories(&unit.library_directories, &unit.include_directories)
            .iter()
            .map(|d| format!("`{}`", d.display()))
            .collect();
        let or_none = |list: Vec<String>| {
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        };
        format!(
            "the library `{name}` is not prebuilt for this platform (searched: {}, and the system's directories) and its C sources are not installed (searched: {})",
            or_none(searched),
            or_none(sources)
        )
    }

    /// The libraries `unit` names that have no prebuilt file in its library directories but
    /// whose C sources its installation ships.
    fn source_libraries(&self, unit: &ExternalUnit) -> Vec<SourceLibrary> {
        let search = library_search_path(unit);
        unit.libraries
            .iter()
            .filter(|l| {
                !search
                    .iter()
                    .any(|d| d.join(format!("lib{l}.a")).is_file() || d.join(format!("lib{l}.so")).is_file())
            })
            .filter_map(|l| sources::find(l, &self.compiler, &unit.library_directories, &unit.include_directories))
            .collect()
    }

    /// The cache key of `unit`: a hash of the compiler, the flags, the unit and the contents of
    /// what its build reads from its directories, with the keys of the libraries it builds
    /// from sources.
    fn key(&self, unit: &ExternalUnit, built: &[SourceLibrary]) -> u64 {
        let mut h = Fnv::default();
        h.text(&self.compiler);
        FLAGS.iter().for_each(|f| h.text(f));
        h.text(&unit.source);
        h.text(MODELICA_UTILITIES_H);
        for d in &unit.include_directories {
            h.text(d);
            for (name, bytes) in directory_files(Path::new(d)) {
                h.text(&name);
                h.bytes(&bytes);
            }
        }
        for d in library_search_path(unit) {
            h.text(&d.display().to_string());
            for l in &unit.libraries {
                for name in [format!("lib{l}.a"), format!("lib{l}.so")] {
                    if let Ok(bytes) = std::fs::read(d.join(&name)) {
                        h.text(&name);
                        h.bytes(&bytes);
                    }
                }
            }
        }
        unit.libraries.iter().for_each(|l| h.text(l));
        for library in built {
            h.text(&library.name);
            h.bytes(&library.key.to_le_bytes());
        }
        h.0
    }
}

impl LinkExternal for SystemCompiler {
    fn link(&self, unit: &ExternalUnit) -> Result<LinkedSymbol, LinkError> {
        let built = self.source_libraries(unit);
        let key = self.key(unit, &built);
        let known = self.loaded.lock().ok().and_then(|loaded| loaded.get(&key).cloned());
        let library = match known {
            Some(library) => library,
            None => {
                let object = self.shared_object(unit, key, &built)?;
                let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
                // SAFETY: loading runs the object's initialisers; the object is one this linker
                // compiled from the unit's C text, which the model's author wrote to be called.
                let library = unsafe { libloading::os::unix::Library::open(Some(&object), flags) }
                    .map_err(|e| error(format!("the compiled object does not load: {e}")))?;
                let library = Arc::new(libloading::Library::from(library));
                if let Ok(mut loaded) = self.loaded.lock() {
                    loaded.insert(key, library.clone());
                }
                library
            }
        };
        let symbol = format!("{}\0", unit.symbol);
        // SAFETY: the symbol is the wrapper the flattener wrote into the unit's text, a C
        // function `double(double*)`; only its address is taken here, while `library` is loaded.
        let address = unsafe { library.get::<unsafe extern "C" fn(*mut f64) -> f64>(symbol.as_bytes()) }
            .map(|f| *f as usize)
            .map_err(|e| error(format!("the symbol `{}` is missing after linking: {e}", unit.symbol)))?;
        // The unit's error reader, which every wrapper the flattener writes defines; a unit
        // without one reports a `ModelicaError` as a value that is not a number only.
        let error =
            // SAFETY: only the address of `const char* eqm_external_error(void)` is taken.
            unsafe { library.get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"eqm_external_error\0") }
                .map(|f| *f as usize)
                .unwrap_or(0);
        Ok(LinkedSymbol::new(address, unit.arity, library).with_error_reader(error))
    }
}

/// The directories searched for a unit's libraries, in order: each `LibraryDirectory` with
/// this platform's subdirectory first (`linux64` on 64-bit Linux, as Modelica names
/// platforms; the prebuilt libraries of a Modelica library are stored there), then the
/// directory itself.
fn library_search_path(unit: &ExternalUnit) -> Vec<PathBuf> {
    let mut path = Vec::new();
    for d in &unit.library_directories {
        if let Some(platform) = MODELICA_PLATFORM {
            path.push(Path::new(d).join(platform));
        }
        path.push(PathBuf::from(d));
    }
    path
}

/// Modelica's name of the platform this binary runs on, for the library subdirectory.
const MODELICA_PLATFORM: Option<&str> = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    Some("linux64")
} else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
    Some("aarch64-linux")
} else if cfg!(all(target_os = "linux", target_arch = "x86")) {
    Some("linux32")
} else if cfg!(all(target_os = "macos", target_arch = "x86_64")) {
    Some("darwin64")
} else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
    Some("aarch64-darwin")
} else {
    None
};
