//! The predefined enumeration types of Modelica that are classes rather than built-in types:
//! `StateSelect`, the type of the `stateSelect` attribute of `Real`, and `AssertionLevel`, the
//! type of the level of `assert`.
//!
//! Input: nothing; this is static data. Output: [`TEXT`], their definitions as Modelica text,
//! which `Sources` parses once and puts first among the library files, so that they live in the
//! global scope and any class of the same name (a user's or a library's) shadows them, as
//! Modelica's lookup rule says; and the literal lists the flattener compares a value's type
//! with. It deliberately defines nothing else: `Real`, `Integer`, `Boolean` and `String` are
//! built into name resolution, and the predefined classes EQM does not support
//! (`ExternalObject`, `Clock`, `Connections`) are reported where they are used.

/// The name the predefined classes' text goes by in diagnostics.
pub const FILE_NAME: &str = "<predefined>";

/// The definitions, with the descriptions Modelica gives the literals of `StateSelect`.
pub const TEXT: &str = r#"type StateSelect = enumeration(
  never "Do not use as state at all.",
  avoid "Use as state, if it cannot be avoided (but only if variable appears differentiated and no other potential state with attribute default, prefer, or always can be selected).",
  default "Use as state if appropriate, but only if variable appears differentiated.",
  prefer "Prefer it as state over those having the default value (also variables can be selected, which do not appear differentiated).",
  always "Do use it as a state.") "The values of the stateSelect attribute of Real";
type AssertionLevel = enumeration(warning, error) "The levels of assert";
"#;

/// A predefined enumeration type: its name and its literals, in order.
pub struct Enumeration {
    pub name: &'static str,
    pub literals: &'static [&'static str],
}

/// `StateSelect`.
pub const STATE_SELECT: Enumeration = Enumeration {
    name: "StateSelect",
    literals: &["never", "avoid", "default", "prefer", "always"],
};

/// `AssertionLevel`.
pub const ASSERTION_LEVEL: Enumeration = Enumeration {
    name: "AssertionLevel",
    literals: &["warning", "error"],
};

#[cfg(test)]
mod tests {
    use super::*;
    use eqm_diag::source::FileId;
    use eqm_syntax::ast;

    #[test]
    fn the_text_parses_and_defines_the_literal_lists() {
        let (tree, diagnostics) = eqm_syntax::parse_file(FileId(0), TEXT);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let literals = |name: &str| -> Vec<String> {
            let class = tree.classes.iter().find(|c| c.name.name == name).expect(name);
            let ast::ClassBody::Enumeration { literals, .. } = &class.body else {
                panic!("{name} is not an enumeration");
            };
            literals.iter().map(|l| l.name.name.clone()).collect()
        };
        for ty in [STATE_SELECT, ASSERTION_LEVEL] {
            assert_eq!(literals(ty.name), ty.literals);
        }
    }
}
