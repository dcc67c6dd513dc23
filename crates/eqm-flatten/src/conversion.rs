//! The conversion of classes written for an earlier version of a library: a library says, in
//! its top-level package's `conversion(from(version = {...}, script = "modelica://..."))`
//! annotation, which earlier versions a script converts from, and the script says what was
//! renamed (`convertClass("Modelica.SIunits", "Modelica.Units.SI")`) and which parameters of
//! which classes were renamed (`convertElement({"Modelica.Blocks.Sources.Sine"}, "freqHz", "f")`).
//! A model whose package says it uses such an earlier version (`uses(Modelica(version =
//! "3.2.2"))`) is read as if written for the library found: the class table looks its class
//! names up through [`Conversions::class`], and the flattener renames the modifiers of the
//! renamed parameters.
//!
//! Input: the script's text. Output: [`Conversions`], the renamed classes and elements and the
//! modifiers that are gone. It deliberately reads only the statements that rename
//! (`convertClass`, `convertElement`) or drop a modifier (`convertModifiers` with no new
//! modifiers); a statement that writes new modifiers from the old values (`convertModifiers`
//! with new ones, `convertClassIf`) or only warns (`convertMessage`) is left out, and a model
//! that needs one gets the diagnostic of the unconverted name instead of a guess.

use eqm_diag::source::FileId;
use eqm_syntax::ast;
use eqm_syntax::lexer::{Lexer, Token};
use std::collections::BTreeMap;

/// What a conversion script renames, by the old names.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Conversions {
    /// The new dotted name of each renamed class, by its old dotted name.
    classes: BTreeMap<String, String>,
    /// The renamed elements (parameters, components) of each class, by the class's new dotted
    /// name: `(old name, new name)`.
    elements: BTreeMap<String, Vec<(String, String)>>,
    /// The modifiers of each class (by its new dotted name) that the new version no longer
    /// has and that mean nothing there: `convertModifiers(classes, {"limitsAtInit"}, fill("", 0))`.
    removed: BTreeMap<String, Vec<String>>,
}

/// What becomes of a modifier of an element of a converted class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementConversion<'c> {
    /// The element has a new name.
    Renamed(&'c str),
    /// The element is gone and its modifier means nothing: it is dropped.
    Removed,
}

impl Conversions {
    /// Reads a conversion script. Statements it does not read are skipped.
    pub fn parse(text: &str) -> Conversions {
        let mut conversions = Conversions::default();
        for statement in statements(text) {
            let Some(call) = parse_call(statement) else {
                continue;
            };
            conversions.add(&call);
        }
        conversions
    }

    /// Whether the script renames anything.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.elements.is_empty() && self.removed.is_empty()
    }

    fn add(&mut self, (name, args): &(String, Vec<Vec<String>>)) {
        match (name.as_str(), &args[..]) {
            ("convertClass", [old, new]) if old.len() == 1 && new.len() == 1 => {
                self.classes.insert(old[0].clone(), new[0].clone());
            }
            ("convertElement", [classes, old, new]) if old.len() == new.len() => {
                for class in classes {
                    let renamed = self.elements.entry(class.clone()).or_default();
                    renamed.extend(old.iter().cloned().zip(new.iter().cloned()));
                }
            }
            // Only the form that drops modifiers; one that writes new modifiers from the old
            // values is not read.
            ("convertModifiers", [classes, old, new, ..]) if new.is_empty() => {
                for class in classes {
                    self.removed
                        .entry(class.clone())
                        .or_default()
                        .extend(old.iter().cloned());
                }
            }
            _ => {}
        }
    }

    /// The new dotted name of the class an old dotted name denotes: the most specific rule whose
    /// old name is `dotted` or a package enclosing it, with the rest of the name kept
    /// (`Modelica.SIunits.Time` is `Modelica.Units.SI.Time`). `None` when no rule applies.
    pub fn class(&self, dotted: &str) -> Option<String> {
        let mut end = dotted.len();
        loop {
            let prefix = &dotted[..end];
            if let Some(new) = self.classes.get(prefix) {
                return Some(format!("{new}{}", &dotted[end..]));
            }
            end = prefix.rfind('.')?;
        }
    }

    /// What becomes of a modifier of the element `old` of class `class` (by its new dotted
    /// name); `None` when it stays as it is.
    pub fn element(&self, class: &str, old: &str) -> Option<ElementConversion<'_>> {
        let renamed = self.elements.get(class).and_then(|r| r.iter().find(|(o, _)| o == old));
        if let Some((_, new)) = renamed {
            return Some(ElementConversion::Renamed(new));
        }
        let removed = self.removed.get(class).is_some_and(|r| r.iter().any(|o| o == old));
        removed.then_some(ElementConversion::Removed)
    }
}

/// The texts of a script's statements: the pieces between `;` tokens (comments and strings
/// are tokens, so a `;` inside them ends nothing).
fn statements(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (at, token, end) in Lexer::new(text, FileId(0)).flatten() {
        if matches!(token, Token::Semi) {
            pieces.push(&text[start..at]);
            start = end;
        }
    }
    pieces
}

/// A statement `f(a, b, ...)` whose arguments are strings or arrays of strings (an empty
/// array written `fill("", 0)`): the function's name and each argument's strings.
fn parse_call(statement: &str) -> Option<(String, Vec<Vec<String>>)> {
    let (expr, diagnostics) = eqm_syntax::parse_expr(FileId(0), statement);
    if !diagnostics.is_empty() {
        return None;
    }
    let ast::ExprKind::Call { function, args } = expr?.kind else {
        return None;
    };
    let [only] = &function.parts[..] else {
        return None;
    };
    let strings = args.positional.iter().map(strings).collect::<Option<Vec<_>>>()?;
    Some((only.name.name.clone(), strings))
}

/// The strings of a string argument, an array of strings, or `fill("", 0)` (none). Other
/// arguments (the flags some statements take last) count as no strings.
fn strings(e: &ast::Expr) -> Option<Vec<String>> {
    match &e.kind {
        ast::ExprKind::String(s) => Some(vec![s.clone()]),
        ast::ExprKind::Array(items) => items.iter().map(|i| strings(i)?.pop()).collect(),
        _ => Some(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"// Renames; a comment with a ; in it
convertClass("Modelica.SIunits", "Modelica.Units.SI");
convertClass("Modelica.SIunits.Conversions", "Modelica.Units.Conversions");
convertClass("Modelica.SIunits.Temp_C", "Modelica.Units.NonSI.Temperature_degC");
convertElement({"Modelica.Blocks.Sources.Sine", "Modelica.Blocks.Sources.Cosine"}, "freqHz", "f");
convertModifiers({"A.B"}, {"x"}, fill("", 0), true);
convertModifiers({"A.C"}, {"y=0"}, {"y=%y%*2"}, true);
convertMessage("Old.Internal", "No support; sorry.");
"#;

    #[test]
    fn the_most_specific_rule_renames_a_class_and_keeps_the_rest_of_its_name() {
        let c = Conversions::parse(SCRIPT);
        assert_eq!(
            c.class("Modelica.SIunits.Time").as_deref(),
            Some("Modelica.Units.SI.Time")
        );
        assert_eq!(
            c.class("Modelica.SIunits.Conversions.from_degC").as_deref(),
            Some("Modelica.Units.Conversions.from_degC")
        );
        assert_eq!(
            c.class("Modelica.SIunits.Temp_C").as_deref(),
            Some("Modelica.Units.NonSI.Temperature_degC")
        );
        // A name that only starts like a renamed one is not renamed.
        assert_eq!(c.class("Modelica.SIunitsX.Time"), None);
        assert_eq!(c.class("Modelica.Blocks.Sources.Sine"), None);
    }

    #[test]
    fn elements_are_renamed_per_class() {
        let c = Conversions::parse(SCRIPT);
        assert_eq!(
            c.element("Modelica.Blocks.Sources.Cosine", "freqHz"),
            Some(ElementConversion::Renamed("f"))
        );
        assert_eq!(c.element("Modelica.Blocks.Sources.Step", "freqHz"), None);
        assert_eq!(c.element("A.B", "x"), Some(ElementConversion::Removed));
        assert_eq!(c.element("A.B", "y"), None);
    }
}
