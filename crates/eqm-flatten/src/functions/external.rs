//! External C functions other than those of the C math library: the C translation unit of one
//! external clause, linked through the front end's [`LinkExternal`].
//!
//! Input: the external clause's C function name, its arguments as values (scalars and arrays of
//! the function's locals, sizes), the type of the output its result is assigned to and the
//! clause's annotation (`Include`, `IncludeDirectory`, `Library`, `LibraryDirectory`, MLS 3.6
//! §12.9.4). Output: an [`ExternalUnit`] (the `Include` text, then a wrapper
//! `double eqm_external(double* a)` that converts the arguments as MLS 3.6 §12.9.1 maps them:
//! Real to `double`, Integer and Boolean to `int`, an array to a pointer to its first element and
//! `size(...)` to `size_t`), the linked function recorded in `FlatModel::externals` and the
//! assignment of its call to the output; or a diagnostic naming the function and why it cannot
//! be provided. It deliberately runs no compiler and touches no file: a `modelica://Pkg/...`
//! directory becomes a path next to the file that defines `Pkg`, and the front end does the
//! rest.

use crate::flattener::Flattener;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprId};
use eqm_ir::external::{ExternalFunction, ExternalUnit};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::fmt::Write;
use std::path::Path;

/// One argument of an external call: its value, and whether it is a `size(...)` (a `size_t`).
pub(super) struct ExternalArg {
    pub value: Value,
    pub is_size: bool,
    pub span: Span,
}

/// What an external clause's annotation names, each a literal string (or an array of them).
#[derive(Default)]
struct LinkAnnotation {
    include: Vec<String>,
    include_directories: Vec<String>,
    libraries: Vec<String>,
    library_directories: Vec<String>,
}

/// The symbol of every wrapper; each unit is a shared object of its own, so one name serves.
const WRAPPER: &str = "eqm_external";

impl<'t, 'a> Flattener<'t, 'a> {
    /// The call of external C function `c_function` with `args`, compiled and linked through the
    /// front end, as an expression of the output's type; `None` after a diagnostic at `span`.
    pub(super) fn external_c_call(
        &mut self,
        function: &str,
        c_function: &str,
        args: &[ExternalArg],
        output: ScalarType,
        annotation: Option<&'a ast::Annotation>,
        span: Span,
    ) -> Option<ExprId> {
        let cannot = |why: String| {
            Diagnostic::error(
                "E0325",
                format!("the external function `{c_function}` of `{function}` cannot be provided: {why}"),
                span,
                "this external function",
            )
        };
        let return_cast = match output {
            ScalarType::Real => "",
            ScalarType::Integer | ScalarType::Boolean => "(double)",
            ScalarType::String => {
                self.diagnostics
                    .push(cannot("a String result is not supported".to_string()));
                return None;
            }
        };
        let mut elements = Vec::new();
        let mut prelude = String::new();
        let mut call_args = Vec::new();
        let mut prototype = Vec::new();
        for (k, arg) in args.iter().enumerate() {
            let at = elements.len();
            let (c_arg, c_type) = match (&arg.value, arg.is_size) {
                (Value::Scalar(x, ScalarType::Integer | ScalarType::Real), true) => {
                    elements.push(*x);
                    (format!("(size_t)a[{at}]"), "size_t")
                }
                (Value::Scalar(x, ScalarType::Real), false) => {
                    elements.push(*x);
                    (format!("a[{at}]"), "double")
                }
                (Value::Scalar(x, ScalarType::Integer), false) => {
                    elements.push(*x);
                    (format!("(int)a[{at}]"), "int")
                }
                (Value::Scalar(x, ScalarType::Boolean), false) => {
                    elements.push(*x);
                    (format!("(int)(a[{at}] != 0.0)"), "int")
                }
                (Value::Array(_, items, ScalarType::Real), false) => {
                    elements.extend(items.iter().copied());
                    (format!("a + {at}"), "const double*")
                }
                (Value::Array(_, items, ty @ (ScalarType::Integer | ScalarType::Boolean)), false) => {
                    elements.extend(items.iter().copied());
                    let n = items.len().max(1);
                    let convert = if *ty == ScalarType::Boolean { " != 0.0" } else { "" };
                    let _ = writeln!(
                        prelude,
                        "    int i{k}[{n}];\n    for (size_t j = 0; j < {}; ++j) i{k}[j] = (int)(a[{at} + j]{convert});",
                        items.len()
                    );
                    (format!("i{k}"), "const int*")
                }
                _ => {
                    self.diagnostics.push(
                        cannot(format!(
                            "argument {} is of a type EQM cannot pass to C (it passes Real, Integer and Boolean scalars and arrays)",
                            k + 1
                        ))
                        .with_label(arg.span, "this argument"),
                    );
                    return None;
                }
            };
            call_args.push(c_arg);
            prototype.push(c_type);
        }
        let links = self.link_annotation(function, annotation)?;
        let mut source = String::new();
        for text in &links.include {
            source.push_str(text);
            source.push('\n');
        }
        source.push_str("#include <stddef.h>\n");
        if links.include.is_empty() {
            // Without an `Include` the tool declares the function from its Modelica
            // declaration (MLS 3.6 §12.9.1); with one, the included text declares it.
            let returns = if return_cast.is_empty() { "double" } else { "int" };
            let params = if prototype.is_empty() {
                "void".to_string()
            } else {
                prototype.join(", ")
            };
            let _ = writeln!(source, "extern {returns} {c_function}({params});");
        }
        let _ = write!(
            source,
            "double {WRAPPER}(double* a) {{\n    (void)a;\n{prelude}    return {return_cast}{c_function}({});\n}}\n",
            call_args.join(", ")
        );
        let unit = ExternalUnit {
            function: function.to_string(),
            c_function: c_function.to_string(),
            symbol: WRAPPER.to_string(),
            source,
            arity: elements.len(),
            include_directories: links.include_directories,
            libraries: links.libraries,
            library_directories: links.library_directories,
        };
        let Some(linker) = self.options.external.clone() else {
            self.diagnostics.push(
                cannot("this front end compiles no C code".to_string())
                    .with_help("the `eqm` command compiles external C functions with the system C compiler `cc`"),
            );
            return None;
        };
        let symbol = match linker.link(&unit) {
            Ok(symbol) => symbol,
            Err(e) => {
                self.diagnostics.push(cannot(e.message));
                return None;
            }
        };
        let k = self.model.externals.len() as u32;
        self.model.externals.push(ExternalFunction {
            name: function.to_string(),
            c_function: c_function.to_string(),
            symbol,
        });
        Some(self.model.exprs.call(Callee::External(k), elements))
    }

    /// The `Include`, `IncludeDirectory`, `Library` and `LibraryDirectory` of an external
    /// clause's annotation, directories resolved, with the defaults MLS 3.6 §12.9.4 gives the
    /// directories (`modelica://Top/Resources/Include` and `.../Library` of the function's
    /// top-level package); `None` after a diagnostic.
    fn link_annotation(&mut self, function: &str, annotation: Option<&'a ast::Annotation>) -> Option<LinkAnnotation> {
        let mut links = LinkAnnotation::default();
        let top = function.split('.').next().unwrap_or(function);
        let mut include_directory = format!("modelica://{top}/Resources/Include");
        let mut library_directory = format!("modelica://{top}/Resources/Library");
        for arg in annotation.map_or(&[][..], |a| &a.modification.arguments[..]) {
            let name = arg.name.parts[0].name.as_str();
            if !matches!(name, "Include" | "IncludeDirectory" | "Library" | "LibraryDirectory") {
                continue;
            }
            let Some(binding) = arg.modification.as_ref().and_then(|m| m.binding.as_ref()) else {
                continue;
            };
            let texts = match &binding.kind {
                ast::ExprKind::String(s) => vec![s.clone()],
                ast::ExprKind::Array(items) => items
                    .iter()
                    .map(|item| match &item.kind {
                        ast::ExprKind::String(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            if texts.is_empty() {
                self.diagnostics.push(Diagnostic::error(
                    "E0325",
                    format!(
                        "`{name}` of the external function `{function}` must be a literal string or an array of them"
                    ),
                    binding.span,
                    "not a literal string",
                ));
                return None;
            }
            match name {
                "Include" => links.include.extend(texts),
                "Library" => links.libraries.extend(texts),
                "IncludeDirectory" => include_directory = texts[0].clone(),
                _ => library_directory = texts[0].clone(),
            }
        }
        links.include_directories.push(self.resource_path(&include_directory));
        links.library_directories.push(self.resource_path(&library_directory));
        Some(links)
    }

    /// A directory of an annotation as a path: `modelica://Pkg/rest` is `rest` in the directory
    /// of the file that defines the top-level class `Pkg` (MLS 3.6 §13.5), `file://path` is
    /// `path`, anything else is taken as written.
    fn resource_path(&self, uri: &str) -> String {
        if let Some(rest) = uri.strip_prefix("modelica://") {
            let (class, path) = rest.split_once('/').unwrap_or((rest, ""));
            let top = class.split('.').next().unwrap_or(class);
            let file = self.table.find(top).map(|c| self.table.get(c).def.name.span.file);
            let source = file.map_or("<unknown>", |f| self.options.data_files.source(f));
            let dir = Path::new(source).parent().unwrap_or(Path::new(""));
            return dir.join(path).display().to_string();
        }
        uri.strip_prefix("file://").unwrap_or(uri).to_string()
    }
}
