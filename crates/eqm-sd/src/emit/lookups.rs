//! The tables of arrayed graphical functions (Vensim's `table[a, b]((x, y), ...)`, one table
//! per element), and of auxiliaries whose elements each read their own graphical function
//! (Vensim's data variables, `WITH LOOKUP` written element by element).
//!
//! Input: the model's variables and the writer's arrays. Output: a table parameter for each
//! element of an arrayed lookup table that a definition covers, keyed by the table's name with
//! the element's indices (`name[1,2]`, as [`Arrays::indexed`] writes a reference to that
//! element), which a call `table[dim](x)` reads through [`crate::ir::Function::SubscriptedLookup`].
//! An element no definition covers has no table: a call of it is E1002 where it is written.
//! Scalar tables, and tables with one definition for all elements, are written by the model
//! writer itself.

use super::ModelWriter;
use super::arrays::Arrays;
use super::expr::table;
use crate::ir::{Definition, Equation, GraphKind, Kind};
use crate::names::{canonical, identifier};
use std::collections::HashMap;

/// Adds the table of every element of the model's arrayed lookup tables to `tables`, and
/// their declarations to `declarations`.
pub(super) fn element_tables(
    writer: &ModelWriter,
    tables: &mut HashMap<String, (String, GraphKind)>,
    declarations: &mut Vec<String>,
) {
    for v in writer
        .model
        .variables
        .iter()
        .filter(|v| matches!(v.kind, Kind::Lookup | Kind::Aux))
    {
        let key = canonical(&v.name);
        // A table over dimensions with one definition for all elements is written once.
        if matches!(v.definition, Definition::Uniform(_)) {
            continue;
        }
        let Some(dims) = writer.arrays.dims.get(&key).filter(|d| !d.is_empty()) else {
            continue;
        };
        let Some(elements) = writer.arrays.elements_of(dims) else {
            continue;
        };
        for element in &elements {
            let graph = match writer.equation_of(v, element) {
                Ok((Equation::Table(graph), _)) if matches!(v.kind, Kind::Lookup) => graph,
                Ok((Equation::Graph { graph, .. }, _)) if matches!(v.kind, Kind::Aux) => graph,
                _ => continue,
            };
            let table_id = identifier(&writer.arrays.display(&format!("{} graph", v.name), element));
            declarations.push(format!(
                "parameter Real {table_id}[{}, 2] = {} \"The graphical function of {}\";",
                graph.x.len(),
                table(graph),
                writer.arrays.display(&v.name, element).replace('"', "'")
            ));
            tables.insert(Arrays::indexed(&key, element), (table_id, graph.kind));
        }
    }
}
