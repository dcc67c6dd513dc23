//! The `final` prefix (Modelica 7.2.6): an element declared `final`, or given a value by a
//! `final` modifier, takes no modifier from outside it; nor does a protected element, which
//! only the `extends` clauses of the classes extending its class may modify.
//!
//! Input: an element being declared in an instance, with the modifier of the enclosing
//! instance for it, the modifiers of the `extends` clauses it was inherited through, and its
//! merged modifier. Output: E0345 naming the modifier that changes what `final` fixed. It
//! deliberately lets through the values a record's binding hands its fields (`R r = R(...)`
//! gives a final field its own value), and does not check redeclarations (E0221 does).

use crate::flattener::Flattener;
use crate::layout::ElementDecl;
use crate::modifier::Modifier;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether `element`, given `outer` by the enclosing instance and `from_extends` by the
    /// extends clauses it came through, respects `final`: a final declaration takes neither, and
    /// a final modifier of an extends clause takes no outer one. E0345 otherwise.
    pub(crate) fn final_respected(
        &mut self,
        element: &ElementDecl<'a>,
        outer: &Modifier<'a>,
        from_extends: &Modifier<'a>,
    ) -> bool {
        let name = element.decl.name.name.as_str();
        let fixed_by = if element.clause.is_final {
            Some(element.decl.name.span)
        } else {
            element
                .extends_modifier
                .args
                .iter()
                .find(|a| a.name == name && a.is_final)
                .map(|a| a.span)
        };
        let Some(fixed) = fixed_by else {
            return true;
        };
        let changed = if changes(outer) {
            outer_span(outer)
        } else if element.clause.is_final && changes(from_extends) {
            outer_span(from_extends)
        } else {
            return true;
        };
        self.report_final(name, changed.unwrap_or(fixed), fixed);
        false
    }

    /// Whether the merged modifier of an element changes none of its elements or attributes
    /// that a final argument inside it fixes (`tf(b = {1})` over `tf(final b = {2})`, `unit` of
    /// a type `Real(final unit = "rad")`). E0345 otherwise.
    pub(crate) fn final_arguments_respected(&mut self, modifier: &Modifier<'a>) -> bool {
        let Some((changed, fixed)) = modifier.overridden_final() else {
            return true;
        };
        let name = modifier
            .args
            .iter()
            .find(|a| a.span == fixed)
            .map_or("", |a| a.name)
            .to_string();
        self.report_final(&name, changed, fixed);
        false
    }

    /// Whether a protected element is left unmodified by the modifier `outer` of the component
    /// holding it (`A a(x = 4)` with `x` protected in `A` is E0345): Modelica lets only the
    /// classes extending a class modify its protected elements, in their `extends` clauses.
    pub(crate) fn protected_respected(&mut self, element: &ElementDecl<'a>, outer: &Modifier<'a>) -> bool {
        if !element.protected || (!changes(outer) && outer.redeclare.is_none()) {
            return true;
        }
        let at = outer_span(outer).or_else(|| outer.redeclare.as_ref().map(|r| r.span));
        self.diagnostics.push(
            Diagnostic::error(
                "E0345",
                format!(
                    "`{}` is protected in `{}` and cannot be modified or redeclared from outside it",
                    element.decl.name.name,
                    self.table.get(element.class).full_name
                ),
                at.unwrap_or(element.decl.name.span),
                "modifies a protected element",
            )
            .with_label(element.decl.name.span, "declared protected here")
            .with_help("only a class extending it may modify a protected element, in its `extends` clause"),
        );
        false
    }

    fn report_final(&mut self, name: &str, changed: Span, fixed: Span) {
        self.diagnostics.push(
            Diagnostic::error(
                "E0345",
                format!("`{name}` is final and cannot be modified"),
                changed,
                "modifies a final element",
            )
            .with_label(fixed, "made final here"),
        );
    }
}

/// Whether a modifier changes its element's value or attributes: a value or an argument other
/// than the values a record's binding hands its fields (which leave a final field as it is). A
/// redeclaration is left to the check of redeclarations.
fn changes(m: &Modifier<'_>) -> bool {
    !m.args.is_empty() || m.binding.as_ref().is_some_and(|b| b.fields.is_empty())
}

/// Where a modifier is written: its binding, else its first argument.
fn outer_span(m: &Modifier<'_>) -> Option<Span> {
    m.binding
        .as_ref()
        .map(|b| b.expr.span)
        .or_else(|| m.args.first().map(|a| a.span))
}
