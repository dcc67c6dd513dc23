//! The class annotation of a long class body, wherever the body writes it.
//!
//! Input: each `annotation(...);` the grammar reads as an item of a class body's element,
//! equation or statement lists (or after its `external` clause), in the order of the text.
//! Output: the class's one annotation, taken by the class whose body holds it (a nested class
//! takes its own first, since its body ends first). Modelica 3 puts the class annotation last,
//! just before `end`; Modelica 2 allowed annotations among the declarations, and models
//! written then still have them (`annotation(Diagram(...));` before `equation`). Such an
//! annotation is read as part of the class annotation, with warning W0101; several are joined
//! into one, their arguments in the order of the text. This module does not read what an
//! annotation says.

use super::Builder;
use crate::ast::{Annotation, ClassModification};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;

impl Builder<'_> {
    /// Records a class annotation read as an item of a class body, from `l` to `r` (its `;`
    /// included).
    pub fn annotation_item(&mut self, annotation: Annotation, l: usize, r: usize) {
        self.annotations.push((l, r, annotation));
    }

    /// The annotation of the class body that starts at `l` and whose `end` starts at `end`:
    /// the annotation items recorded since `l`, joined, each one that does not stand last
    /// (just before `end`) reported with W0101.
    pub fn class_annotation(&mut self, l: usize, end: usize) -> Option<Annotation> {
        let first = self.annotations.partition_point(|(at, _, _)| *at < l);
        let mine: Vec<(usize, usize, Annotation)> = self.annotations.drain(first..).collect();
        let last = mine.len().checked_sub(1)?;
        for (k, (_, r, annotation)) in mine.iter().enumerate() {
            if k < last || !only_trivia(&self.text[(*r).min(end)..end]) {
                self.diagnostics.push(
                    Diagnostic::warning(
                        "W0101",
                        "a class annotation among the class's declarations or equations: it is read as part of \
                         the class annotation",
                        annotation.span,
                        "not the last item of the class",
                    )
                    .with_help("Modelica 3 puts the class annotation last, just before `end`"),
                );
            }
        }
        let mut joined = mine.into_iter().map(|(_, _, a)| a);
        let mut annotation = joined.next()?;
        for more in joined {
            annotation.span = Span {
                end: more.span.end,
                ..annotation.span
            };
            annotation.modification = ClassModification {
                span: annotation.span,
                arguments: annotation
                    .modification
                    .arguments
                    .into_iter()
                    .chain(more.modification.arguments)
                    .collect(),
            };
        }
        Some(annotation)
    }
}

/// Whether `text` holds only white space and comments.
fn only_trivia(text: &str) -> bool {
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some(line) = rest.strip_prefix("//") {
            rest = line.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(block) = rest.strip_prefix("/*") {
            match block.split_once("*/") {
                Some((_, after)) => rest = after,
                None => return false,
            }
        } else {
            return false;
        }
        rest = rest.trim_start();
    }
    true
}
