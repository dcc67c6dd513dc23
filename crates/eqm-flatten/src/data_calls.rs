//! The calls that read a data file while the model is flattened (`readMatrix("file.csv")`):
//! the file's name, a String known at compile time, and the matrix `datafiles` reads.
//!
//! Input: the call and its scope. Output: the matrix as Real literals, or E0318 with the file's
//! own line. It deliberately reads no file itself: `datafiles` asks the front end's reader.

use crate::datafiles::{parse_matrix, resolve_data_file};
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::path::Path;
use std::rc::Rc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `readMatrix(file)`: the file's numbers as a Real matrix of constant size.
    pub(crate) fn read_matrix(&mut self, e: &'a ast::Expr, arg: &'a ast::Expr, scope: Scope) -> Option<Value> {
        let name = self.compile_time_string(arg, scope)?;
        let options: &'t crate::Options = self.options;
        let files = &options.data_files;
        let source = files.source(e.span.file);
        let path = resolve_data_file(source, &name);
        let matrix = match self.data_files_read.get(&path) {
            Some(known) => known.clone(),
            None => {
                let result = files.read(&path).and_then(|text| parse_matrix(&text).map(Rc::new));
                self.data_files_read.insert(path.clone(), result.clone());
                result
            }
        };
        let shown = path.display();
        let matrix = match matrix {
            Ok(matrix) => matrix,
            Err(problem) => {
                let at = problem.line.map(|n| format!(" line {n}")).unwrap_or_default();
                let mut d = Diagnostic::error(
                    "E0318",
                    format!(
                        "`readMatrix` cannot use the data file `{shown}`{at}: {}",
                        problem.message
                    ),
                    e.span,
                    "this data file",
                );
                // A file that could not be read may be looked for in the wrong directory.
                if files.has_reader()
                    && problem.line.is_none()
                    && Path::new(&name).is_relative()
                    && !source.starts_with('<')
                {
                    d = d.with_note(format!(
                        "a relative path is relative to the directory of `{source}`, the file the call is written in"
                    ));
                }
                self.diagnostics.push(d);
                return None;
            }
        };
        let dims = [matrix.rows, matrix.columns];
        self.check_array_size(&dims, e.span, &format!("the matrix of `{shown}`"))?;
        let elements = matrix.values.iter().map(|&v| self.model.exprs.real(v)).collect();
        Some(Value::Array(dims.to_vec(), elements, ScalarType::Real))
    }

    /// The value of `e` as a String known at compile time: a literal (or literals joined with
    /// `+`), or a String parameter or constant whose binding is one.
    fn compile_time_string(&mut self, e: &'a ast::Expr, scope: Scope) -> Option<String> {
        let value = self.eval(e, scope, &mut Vec::new())?;
        if !matches!(value, Value::Str(_) | Value::Scalar(_, ScalarType::String)) {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                "`readMatrix` takes the name of a file, a String",
                e.span,
                "not a String",
            ));
            return None;
        }
        if let Some(text) = self.known_string(&value).and_then(|s| s.as_literal()) {
            return Some(text);
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0206",
                "the file name of `readMatrix` must be known at compile time",
                e.span,
                "not a String literal or a parameter bound to one",
            )
            .with_help("write the name as a literal (\"table.csv\") or bind a String parameter to one"),
        );
        None
    }
}
