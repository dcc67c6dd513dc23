//! External C functions other than those of the C math library: the C translation unit of one
//! external clause, linked through the front end's [`LinkExternal`].
//!
//! Input: the external clause's C function name, its arguments (inputs as values: scalars and
//! arrays of the function's locals, sizes, String constants, records; outputs written through
//! pointers as their slots), the output its result is assigned to if any, and the clause's
//! annotation (`Include`, `IncludeDirectory`, `Library`, `LibraryDirectory`, Modelica).
//! Output: an [`ExternalUnit`] (the `Include` text, then a wrapper `double eqm_external(double*
//! a)` that converts the arguments as Modelica maps them: Real to `double`, Integer and
//! Boolean to `int`, an array to a pointer to its first element, `size(...)` to `size_t`, a
//! String to a `const char*` literal, a record to a pointer to a struct; outputs to `double*` or
//! `int*` buffers), the linked function recorded in `FlatModel::externals` and the assignments
//! of its outputs; or a diagnostic naming the function and why it cannot be provided. It
//! deliberately runs no compiler and touches no file: a `modelica://Pkg/...` directory becomes a
//! path next to the file that defines `Pkg`, and the front end does the rest.

use crate::flattener::Flattener;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprId, Node};
use eqm_ir::external::{ExternalFunction, ExternalUnit};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::fmt::Write;
use std::path::Path;

/// The slot [`Flattener::external_c_call`] gives the call of a C function that writes no output:
/// the caller assigns it to the hidden output of a function declared without outputs.
pub(super) const EFFECT_ONLY: u32 = u32::MAX;

/// One argument of an external call: its value (unused for an output), whether it is a
/// `size(...)` (a `size_t`), and the output it writes when it names one.
pub(super) struct ExternalArg {
    pub value: Value,
    pub is_size: bool,
    /// An external object (a `void*` in C, its bits carried in a double).
    pub is_object: bool,
    pub output: Option<OutputArg>,
    pub span: Span,
}

/// An output of the function passed to C as a pointer (Modelica: `double*`, `int*`):
/// its slots in row-major order, its type, and which slots have a value before
/// the call (from a binding: Modelica initialises such an output before the call).
pub(super) struct OutputArg {
    pub slots: Vec<u32>,
    pub ty: ScalarType,
    pub bound: Vec<bool>,
    /// False for a record or an array of records, which EQM does not pass as outputs.
    pub plain: bool,
}

/// What the wrapper of one external call is made of: the doubles it reads, the C statements
/// before the call, and each argument of the call with its C type.
#[derive(Default)]
struct WrapperParts {
    elements: Vec<ExprId>,
    prelude: String,
    call_args: Vec<String>,
    prototype: Vec<String>,
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

/// The start of every unit, before the `Include` text: the state of the error handling of
/// `ModelicaError` (a jump back to the wrapper, per thread) and its reader, and the
/// conversions of an external object between its `void*` and the double that carries its bits.
const RUNTIME_HEAD: &str = r#"#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static _Thread_local jmp_buf* eqm_on_error = NULL;
static _Thread_local char eqm_error_text[2048];
const char* eqm_external_error(void) { return eqm_error_text; }
static void* eqm_object_of(double d) { void* p = NULL; memcpy(&p, &d, sizeof p); return p; }
static double eqm_handle_of(void* p) { double d = 0.0; memcpy(&d, &p, sizeof p); return d; }
"#;

/// The end of every unit: the functions of `ModelicaUtilities.h` that C code of Modelica
/// libraries calls. An error keeps its message and jumps back to the wrapper, which returns
/// NaN (the back end then reports the message); messages and warnings go to standard error.
const RUNTIME_TAIL: &str = r#"
static _Noreturn void eqm_fail(const char* format, va_list args) {
    vsnprintf(eqm_error_text, sizeof eqm_error_text, format, args);
    if (eqm_on_error) longjmp(*eqm_on_error, 1);
    fputs(eqm_error_text, stderr);
    abort();
}
_Noreturn void ModelicaVFormatError(const char* format, va_list args) { eqm_fail(format, args); }
_Noreturn void ModelicaFormatError(const char* format, ...) { va_list args; va_start(args, format); eqm_fail(format, args); }
_Noreturn void ModelicaError(const char* string) { ModelicaFormatError("%s", string); }
void ModelicaVFormatMessage(const char* format, va_list args) { vfprintf(stderr, format, args); }
void ModelicaFormatMessage(const char* format, ...) { va_list args; va_start(args, format); vfprintf(stderr, format, args); va_end(args); }
void ModelicaMessage(const char* string) { fputs(string, stderr); }
void ModelicaVFormatWarning(const char* format, va_list args) { fputs("warning: ", stderr); vfprintf(stderr, format, args); fputc('\n', stderr); }
void ModelicaFormatWarning(const char* format, ...) { va_list args; va_start(args, format); ModelicaVFormatWarning(format, args); va_end(args); }
void ModelicaWarning(const char* string) { ModelicaFormatWarning("%s", string); }
char* ModelicaAllocateStringWithErrorReturn(size_t len) { char* s = calloc(len + 1, 1); return s; }
char* ModelicaAllocateString(size_t len) { char* s = calloc(len + 1, 1); if (!s) ModelicaError("out of memory"); return s; }
char* ModelicaDuplicateStringWithErrorReturn(const char* str) { char* s = ModelicaAllocateStringWithErrorReturn(strlen(str)); if (s) strcpy(s, str); return s; }
char* ModelicaDuplicateString(const char* str) { char* s = ModelicaAllocateString(strlen(str)); strcpy(s, str); return s; }
"#;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The call of external C function `c_function` with `args`, compiled and linked through the
    /// front end, as the assignments of the function's outputs (slot, value): `result` is the
    /// output the C function returns, if any; the outputs among `args` are written through
    /// pointers; a function that writes no output is its one call, for the slot [`EFFECT_ONLY`].
    /// `None` after a diagnostic at `span`.
    ///
    /// A function that returns its one result and writes nothing through a pointer is one call
    /// of the wrapper. Otherwise every output element is a call of the wrapper with the index of
    /// that element after the arguments: the wrapper calls the C function once for a set of
    /// arguments, keeps all its outputs (per thread, so parallel runs do not share them) and
    /// returns the element asked for, so a function with n outputs runs once, not n times, while
    /// each back end still reads one double per call.
    // Long function: it writes the C wrapper, whose parts (conversions, output buffers, the
    // cache) belong together, then links it.
    #[allow(clippy::too_many_arguments)] // The parts of one external clause, read by the caller.
    pub(super) fn external_c_call(
        &mut self,
        function: &str,
        c_function: &str,
        args: &[ExternalArg],
        result: Option<(u32, ScalarType)>,
        result_is_object: bool,
        annotation: Option<&'a ast::Annotation>,
        span: Span,
    ) -> Option<Vec<(u32, ExprId)>> {
        let cannot = |why: String| {
            Diagnostic::error(
                "E0325",
                format!("the external function `{c_function}` of `{function}` cannot be provided: {why}"),
                span,
                "this external function",
            )
        };
        let returns = match result.map(|(_, ty)| ty) {
            None => "void",
            Some(_) if result_is_object => "void*",
            Some(ScalarType::Real) => "double",
            Some(ScalarType::Integer | ScalarType::Boolean) => "int",
            Some(ScalarType::String) => {
                self.diagnostics
                    .push(cannot("a String result is not supported".to_string()));
                return None;
            }
        };
        let mut parts = WrapperParts::default();
        for (k, arg) in args.iter().enumerate() {
            if arg.output.is_some() {
                continue;
            }
            if let Err(why) = self.external_input(k, arg, &mut parts) {
                self.diagnostics
                    .push(cannot(format!("argument {} {why}", k + 1)).with_label(arg.span, "this argument"));
                return None;
            }
        }
        // The outputs written through pointers: each a buffer in the wrapper, initialised from
        // the output's value before the call where it has one (read as extra elements).
        let mut targets: Vec<u32> = result.iter().map(|(slot, _)| *slot).collect();
        let mut copy_out = String::new();
        let mut output_args = Vec::new();
        for (k, arg) in args.iter().enumerate() {
            let Some(output) = &arg.output else {
                output_args.push(None);
                continue;
            };
            if !output.plain || output.ty == ScalarType::String {
                self.diagnostics.push(
                    cannot(format!(
                        "argument {} is an output of a type EQM cannot receive from C (it receives Real, Integer and Boolean scalars and arrays)",
                        k + 1
                    ))
                    .with_label(arg.span, "this argument"),
                );
                return None;
            }
            let n = output.slots.len();
            let (c_type, convert) = match output.ty {
                ScalarType::Real => ("double", ""),
                ScalarType::Boolean => ("int", " != 0"),
                _ => ("int", ""),
            };
            let _ = writeln!(parts.prelude, "        {c_type} o{k}[{}] = {{0}};", n.max(1));
            // The buffer is filled and read by loops, one for each run of consecutive elements,
            // so the wrapper's text (and the C compiler's time) does not grow with the arrays.
            let mut j = 0;
            while j < n {
                let first = j;
                let bound_at = |j: usize| output.bound.get(j).copied().unwrap_or(false);
                let bound = bound_at(j);
                while j < n && bound_at(j) == bound {
                    j += 1;
                }
                if bound {
                    let at = parts.elements.len();
                    for &slot in &output.slots[first..j] {
                        parts.elements.push(self.model.exprs.add(Node::Local(slot)));
                    }
                    let _ = writeln!(
                        parts.prelude,
                        "        for (size_t j = {first}; j < {j}; ++j) o{k}[j] = ({c_type})a[{at} - {first} + j];"
                    );
                }
            }
            let base = targets.len();
            if n > 0 {
                let _ = writeln!(
                    copy_out,
                    "        for (size_t j = 0; j < {n}; ++j) out[{base} + j] = (double)(o{k}[j]{convert});"
                );
            }
            targets.extend(&output.slots);
            output_args.push(Some(k));
        }
        // The call's arguments in their order: inputs as converted, outputs as their buffers.
        let mut inputs_in_order = parts.call_args.iter().zip(&parts.prototype);
        let mut call_args = Vec::new();
        let mut prototype = Vec::new();
        for (arg, output) in args.iter().zip(&output_args) {
            if let Some(k) = output {
                call_args.push(format!("o{k}"));
                let ty = arg.output.as_ref().map_or(ScalarType::Real, |o| o.ty);
                prototype.push(if ty == ScalarType::Real { "double*" } else { "int*" }.to_string());
            } else {
                let (c_arg, c_type) = inputs_in_order.next()?;
                call_args.push(c_arg.clone());
                prototype.push(c_type.clone());
            }
        }
        let links = self.link_annotation(function, annotation)?;
        let mut source = String::from(RUNTIME_HEAD);
        for text in &links.include {
            source.push_str(text);
            source.push('\n');
        }
        if links.include.is_empty() {
            // Without an `Include` the tool declares the function from its Modelica
            // declaration; with one, the included text declares it.
            let params = if prototype.is_empty() {
                "void".to_string()
            } else {
                prototype.join(", ")
            };
            let _ = writeln!(source, "extern {returns} {c_function}({params});");
        }
        let call = format!("{c_function}({})", call_args.join(", "));
        let simple = targets.len() == 1 && output_args.iter().all(Option::is_none);
        if simple {
            let cast = match returns {
                "double" => "",
                "void*" => "eqm_handle_of",
                _ => "(double)",
            };
            let _ = write!(
                source,
                "static double eqm_body(double* a) {{\n    (void)a;\n{}    return {cast}({call});\n}}\n",
                parts.prelude
            );
        } else if targets.is_empty() {
            // A function without outputs (a destructor) runs at every call: nothing is kept.
            let _ = write!(
                source,
                "static double eqm_body(double* a) {{\n    (void)a;\n{}        {call};\n    return 0.0;\n}}\n",
                parts.prelude
            );
        } else {
            let stored = parts.elements.len();
            let returned = match result {
                Some((_, ScalarType::Boolean)) => format!("        out[0] = (double)({call} != 0);\n"),
                Some(_) => format!("        out[0] = (double){call};\n"),
                None => format!("        {call};\n"),
            };
            let _ = write!(
                source,
                "static double eqm_body(double* a) {{\n    static _Thread_local double in[{}];\n    static _Thread_local double out[{}];\n    static _Thread_local int valid = 0;\n    if (!valid || memcmp(in, a, {stored} * sizeof(double)) != 0) {{\n{}{returned}{copy_out}        memcpy(in, a, {stored} * sizeof(double));\n        valid = 1;\n    }}\n    return out[(size_t)a[{stored}]];\n}}\n",
                stored + 1,
                targets.len().max(1),
                parts.prelude,
            );
        }
        // A library the front end builds from C sources is a shared library with its own
        // `ModelicaUtilities.h` functions and an error-target function (a weak reference here,
        // null for any other library): the wrapper gives it the same place to jump back to.
        let mut register = String::new();
        let mut unregister = String::new();
        for library in &links.libraries {
            let target = error_target(library);
            let _ = writeln!(
                source,
                "extern void {target}(jmp_buf* on_error, char* text) __attribute__((weak));"
            );
            let _ = writeln!(register, "    if ({target}) {target}(&here, eqm_error_text);");
            let _ = writeln!(unregister, "    if ({target}) {target}(NULL, NULL);");
        }
        // The wrapper runs the body with a place to jump back to when the C code calls
        // `ModelicaError`: it then returns NaN, with the message kept for the back end.
        let _ = write!(
            source,
            "double {WRAPPER}(double* a) {{\n    jmp_buf here;\n    jmp_buf* outer = eqm_on_error;\n    eqm_error_text[0] = 0;\n    if (setjmp(here)) {{\n        eqm_on_error = outer;\n{unregister}        return NAN;\n    }}\n    eqm_on_error = &here;\n{register}    double r = eqm_body(a);\n    eqm_on_error = outer;\n{unregister}    return r;\n}}\n{RUNTIME_TAIL}"
        );
        let arity = parts.elements.len() + usize::from(!simple && !targets.is_empty());
        let unit = ExternalUnit {
            function: function.to_string(),
            c_function: c_function.to_string(),
            symbol: WRAPPER.to_string(),
            source,
            arity,
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
            destructor: None,
        });
        if simple {
            let call = self.model.exprs.call(Callee::External(k), parts.elements);
            return Some(vec![(targets[0], call)]);
        }
        if targets.is_empty() {
            let call = self.model.exprs.call(Callee::External(k), parts.elements);
            return Some(vec![(EFFECT_ONLY, call)]);
        }
        let assignments = targets
            .iter()
            .enumerate()
            .map(|(index, &slot)| {
                let mut elements = parts.elements.clone();
                elements.push(self.model.exprs.int(index as i64));
                (slot, self.model.exprs.call(Callee::External(k), elements))
            })
            .collect();
        Some(assignments)
    }

    /// Adds input argument `k` of an external call to the wrapper: its doubles to the elements,
    /// the C expression that passes it converted as Modelica maps it, and its C type;
    /// why it cannot be passed otherwise (the text after "argument k").
    fn external_input(&mut self, k: usize, arg: &ExternalArg, parts: &mut WrapperParts) -> Result<(), String> {
        let at = parts.elements.len();
        let (c_arg, c_type) = match (&arg.value, arg.is_size) {
            (Value::Scalar(x, _), false) if arg.is_object => {
                parts.elements.push(*x);
                (format!("eqm_object_of(a[{at}])"), "void*".to_string())
            }
            (Value::Scalar(x, ScalarType::Integer | ScalarType::Real), true) => {
                parts.elements.push(*x);
                (format!("(size_t)a[{at}]"), "size_t".to_string())
            }
            (Value::Scalar(x, ty @ (ScalarType::Real | ScalarType::Integer | ScalarType::Boolean)), false) => {
                parts.elements.push(*x);
                (scalar_conversion(*ty, at), c_scalar_type(*ty).to_string())
            }
            (Value::Array(_, items, ScalarType::Real), false) => {
                parts.elements.extend(items.iter().copied());
                (format!("a + {at}"), "const double*".to_string())
            }
            (Value::Array(_, items, ty @ (ScalarType::Integer | ScalarType::Boolean)), false) => {
                parts.elements.extend(items.iter().copied());
                let n = items.len().max(1);
                let convert = if *ty == ScalarType::Boolean { " != 0.0" } else { "" };
                let _ = writeln!(
                    parts.prelude,
                    "        int i{k}[{n}];\n        for (size_t j = 0; j < {}; ++j) i{k}[j] = (int)(a[{at} + j]{convert});",
                    items.len()
                );
                (format!("i{k}"), "const int*".to_string())
            }
            (Value::Str(message), false) if message.as_literal().is_some() => {
                let text = message.as_literal().unwrap_or_default();
                (c_string_literal(&text), "const char*".to_string())
            }
            (Value::Str(_) | Value::Scalar(_, ScalarType::String), false) => {
                return Err("is a String known only during the run; EQM passes a String to C only when its text is known when the model is compiled (a literal, or a String parameter or constant)".to_string());
            }
            (Value::Record(fields), false) => {
                // Modelica: a record is passed as a pointer to a struct with its fields
                // in declaration order (nested records as nested structs).
                let mut declaration = String::new();
                let mut initializer = String::new();
                self.record_struct(fields, parts, &mut declaration, &mut initializer)
                    .map_err(|field| format!("is a record whose field `{field}` is not a Real, Integer or Boolean scalar or a record of them (Modelica maps no other field to C)"))?;
                let _ = writeln!(parts.prelude, "        {declaration} r{k} = {initializer};");
                (format!("(void*)&r{k}"), "void*".to_string())
            }
            _ => {
                return Err(
                    "is of a type EQM cannot pass to C (it passes Real, Integer and Boolean scalars and arrays, Strings known when the model is compiled, and records of scalars)"
                        .to_string(),
                );
            }
        };
        parts.call_args.push(c_arg);
        parts.prototype.push(c_type);
        Ok(())
    }

    /// The C type (`struct { double x; int n; }`) and initialiser of a record value passed to C,
    /// its scalars appended to the wrapper's elements; the name of a field that C cannot take.
    fn record_struct(
        &mut self,
        fields: &[(String, Value)],
        parts: &mut WrapperParts,
        declaration: &mut String,
        initializer: &mut String,
    ) -> Result<(), String> {
        declaration.push_str("struct {");
        initializer.push('{');
        for (j, (name, value)) in fields.iter().enumerate() {
            if j > 0 {
                initializer.push_str(", ");
            }
            match value {
                Value::Scalar(x, ty @ (ScalarType::Real | ScalarType::Integer | ScalarType::Boolean)) => {
                    let at = parts.elements.len();
                    parts.elements.push(*x);
                    let _ = write!(declaration, " {} f{j};", c_scalar_type(*ty));
                    initializer.push_str(&scalar_conversion(*ty, at));
                }
                Value::Record(inner) => {
                    self.record_struct(inner, parts, declaration, initializer)?;
                    let _ = write!(declaration, " f{j};");
                }
                _ => return Err(name.clone()),
            }
        }
        declaration.push_str(" }");
        initializer.push('}');
        Ok(())
    }

    /// The `Include`, `IncludeDirectory`, `Library` and `LibraryDirectory` of an external
    /// clause's annotation, directories resolved, with the defaults Modelica gives the
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

    /// A directory of an annotation as a path: `modelica://Pkg.Sub/rest` is `rest` in the
    /// directory that stands for `Pkg.Sub`: the directory of the file that defines the top-level
    /// class `Pkg`, with a subdirectory for each further part of the class name (`Sub/rest`),
    /// as a library stored as directories maps its packages. `file://path` is `path`, anything
    /// else is taken as written.
    pub(super) fn resource_path(&self, uri: &str) -> String {
        if let Some(rest) = uri.strip_prefix("modelica://") {
            let (class, path) = rest.split_once('/').unwrap_or((rest, ""));
            let mut parts = class.split('.').filter(|part| !part.is_empty());
            let top = parts.next().unwrap_or(class);
            let file = self.table.find(top).map(|c| self.table.get(c).def.name.span.file);
            let source = file.map_or("<unknown>", |f| self.options.data_files.source(f));
            let mut dir = Path::new(source).parent().unwrap_or(Path::new("")).to_path_buf();
            dir.extend(parts);
            return dir.join(path).display().to_string();
        }
        uri.strip_prefix("file://").unwrap_or(uri).to_string()
    }
}

/// The C name of the function by which a wrapper tells library `name`, when the front end built
/// it from C sources, where to jump when its C code calls `ModelicaError`:
/// `eqm_error_target_` and the name with every character that cannot be in a C identifier made
/// `_` (the front end defines the same name in such a library).
fn error_target(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("eqm_error_target_{id}")
}

/// The C type of a scalar of type `ty`.
fn c_scalar_type(ty: ScalarType) -> &'static str {
    if ty == ScalarType::Real { "double" } else { "int" }
}

/// The C expression of the scalar of type `ty` at `a[at]`, converted from its double.
fn scalar_conversion(ty: ScalarType, at: usize) -> String {
    match ty {
        ScalarType::Real => format!("a[{at}]"),
        ScalarType::Boolean => format!("(int)(a[{at}] != 0.0)"),
        _ => format!("(int)a[{at}]"),
    }
}

/// `text` as a C string literal: quotes, backslashes and every byte outside printable ASCII
/// escaped in octal (three digits, so a following digit cannot join the escape).
fn c_string_literal(text: &str) -> String {
    let mut literal = String::from("\"");
    for byte in text.bytes() {
        match byte {
            b'"' | b'\\' => {
                literal.push('\\');
                literal.push(byte as char);
            }
            // `?` is escaped too, so that no trigraph forms.
            0x20..=0x7e if byte != b'?' => literal.push(byte as char),
            _ => {
                let _ = write!(literal, "\\{byte:03o}");
            }
        }
    }
    literal.push('"');
    literal
}
