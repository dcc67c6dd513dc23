//! The standard library, embedded in the binary.
//!
//! Input: nothing; this is static data. Output: [`FILES`], the text of every `stdlib/*.eqm` file
//! paired with its path relative to the repository root. Embedding the library with
//! `include_str!` means `eqm` finds `Units`, `Constants`, `Blocks`, `Mechanics`, `Electrical`,
//! `Hydraulics`, `LinearAlgebra`, `SystemDynamics` and `Modelica` from any working directory without an installation step; the
//! same files stay readable (and editable for library development) under `stdlib/`.
//!
//! Each file holds exactly one package, named like the file: a top-level package `P` in `P.eqm`,
//! or, in a file that starts `within P;`, a member `M` that it adds to `P` in `P_M.eqm` (listed
//! after `P.eqm`, and under `P` in [`PACKAGES`]). Name resolution looks a top-level name up
//! here last, after the enclosing scopes, the imports and the user's files (see `resolve`). The library's contents are described in `docs/language.md`, "The standard
//! library". This module deliberately parses nothing: `Sources` parses the packages it needs.
//!
//! For library development, [`file_text`] takes a file's text from replacements a front end
//! read (the `eqm` binary reads them from the directory `EQM_STDLIB_DIR` names), so that an
//! edited `stdlib/*.eqm` takes effect without rebuilding `eqm`; a file without a replacement is
//! taken from the binary. Nothing here reads files or the environment.

/// Every standard-library file as `(path, text)`, in dependency order: a package only refers to
/// packages listed before it (`Units` and `Constants` first, `Blocks` before the physical
/// domains that use its signal connectors).
pub const FILES: &[(&str, &str)] = &[
    ("stdlib/Units.eqm", include_str!("../../../stdlib/Units.eqm")),
    ("stdlib/Constants.eqm", include_str!("../../../stdlib/Constants.eqm")),
    ("stdlib/Blocks.eqm", include_str!("../../../stdlib/Blocks.eqm")),
    ("stdlib/Mechanics.eqm", include_str!("../../../stdlib/Mechanics.eqm")),
    ("stdlib/Electrical.eqm", include_str!("../../../stdlib/Electrical.eqm")),
    ("stdlib/Hydraulics.eqm", include_str!("../../../stdlib/Hydraulics.eqm")),
    (
        "stdlib/LinearAlgebra.eqm",
        include_str!("../../../stdlib/LinearAlgebra.eqm"),
    ),
    (
        "stdlib/SystemDynamics.eqm",
        include_str!("../../../stdlib/SystemDynamics.eqm"),
    ),
    ("stdlib/Modelica.eqm", include_str!("../../../stdlib/Modelica.eqm")),
    (
        "stdlib/Modelica_Blocks.eqm",
        include_str!("../../../stdlib/Modelica_Blocks.eqm"),
    ),
    (
        "stdlib/Modelica_Mechanics.eqm",
        include_str!("../../../stdlib/Modelica_Mechanics.eqm"),
    ),
    (
        "stdlib/Modelica_Electrical.eqm",
        include_str!("../../../stdlib/Modelica_Electrical.eqm"),
    ),
    (
        "stdlib/Modelica_Utilities.eqm",
        include_str!("../../../stdlib/Modelica_Utilities.eqm"),
    ),
    (
        "stdlib/Modelica_Math.eqm",
        include_str!("../../../stdlib/Modelica_Math.eqm"),
    ),
];

/// The names of the top-level packages in [`FILES`], in the same order (a file that adds to a
/// package with `within` gives that package's name).
pub const PACKAGES: &[&str] = &[
    "Units",
    "Constants",
    "Blocks",
    "Mechanics",
    "Electrical",
    "Hydraulics",
    "LinearAlgebra",
    "SystemDynamics",
    "Modelica",
    "Modelica",
    "Modelica",
    "Modelica",
    "Modelica",
    "Modelica",
];

/// The text of the library file that defines the top-level package `name`, if there is one.
pub fn file_of_package(name: &str) -> Option<(&'static str, &'static str)> {
    PACKAGES.iter().position(|p| *p == name).map(|i| FILES[i])
}

/// The file name of the library file `FILES[index]` without its directory (`Mechanics.eqm`):
/// the name a replacement of it goes by.
pub fn file_name(index: usize) -> &'static str {
    let path = FILES[index].0;
    path.rsplit('/').next().unwrap_or(path)
}

/// The text of the library file `FILES[index]`: the replacement of the same file name among
/// `replacements` (each `(file name, text)`) when there is one, otherwise the embedded text.
pub fn file_text(index: usize, replacements: &[(String, String)]) -> &str {
    let name = file_name(index);
    match replacements.iter().find(|(file, _)| file == name) {
        Some((_, text)) => text,
        None => FILES[index].1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eqm_diag::source::FileId;
    use eqm_syntax::ast::ClassKind;
    use eqm_syntax::parse_file;

    #[test]
    fn every_file_parses_without_diagnostics() {
        for (i, (path, text)) in FILES.iter().enumerate() {
            let (_ast, diagnostics) = parse_file(FileId(i as u32), text);
            assert!(diagnostics.is_empty(), "{path} has diagnostics: {diagnostics:#?}");
        }
    }

    #[test]
    fn each_file_defines_its_one_package() {
        assert_eq!(FILES.len(), PACKAGES.len());
        for (k, ((path, text), name)) in FILES.iter().zip(PACKAGES).enumerate() {
            let (ast, _) = parse_file(FileId(0), text);
            assert_eq!(ast.classes.len(), 1, "{path} must hold exactly one top-level class");
            let class = &ast.classes[0];
            assert_eq!(class.kind, ClassKind::Package, "{path}: {name} must be a package");
            match &ast.within {
                // A file `within P;` adds its package to P, defined by an earlier file.
                Some(Some(within)) => {
                    let parent = within.parts[0].name.as_str();
                    assert_eq!(parent, *name, "{path} must add to package {name}");
                    assert!(PACKAGES[..k].contains(name), "{path}: {name} must come first");
                    let member = &class.name.name;
                    assert_eq!(*path, format!("stdlib/{name}_{member}.eqm"));
                }
                _ => {
                    assert_eq!(class.name.name, *name, "{path} must define package {name}");
                    assert_eq!(*path, format!("stdlib/{name}.eqm"));
                }
            }
        }
    }

    #[test]
    fn a_replacement_stands_for_the_embedded_file() {
        let k = PACKAGES.iter().position(|p| *p == "Mechanics").unwrap();
        assert_eq!(file_name(k), "Mechanics.eqm");
        let replacements = [(
            "Mechanics.eqm".to_string(),
            "package Mechanics end Mechanics;".to_string(),
        )];
        assert_eq!(file_text(k, &replacements), "package Mechanics end Mechanics;");
        assert_eq!(file_text(0, &replacements), FILES[0].1);
    }

    #[test]
    fn package_lookup_finds_the_file() {
        let (path, text) = file_of_package("Mechanics").expect("Mechanics is in the library");
        assert_eq!(path, "stdlib/Mechanics.eqm");
        assert!(text.contains("package Mechanics"));
        assert!(file_of_package("Modelica.Blocks").is_none());
    }
}
