//! The stream functions of the Modelica external C library that a model calls for their
//! effect: `Modelica.Utilities.Streams.print` (`external "C" ModelicaInternal_print(string,
//! fileName)`), `Modelica.Utilities.Streams.error` (`external "C" ModelicaError(string)`) and
//! `Modelica.Utilities.Streams.close` (`external "C" ModelicaStreams_closeFile(fileName)`,
//! which has nothing to do: no file is kept open).
//!
//! Input: a call written as an equation or a statement, whose function is declared
//! `external "C"` with one of those names (as the Modelica Standard Library and EQM's own
//! `Modelica.Utilities` declare them). Output: the [`StreamEffect`] with its message, a string
//! whose values are read when the effect happens, which the caller turns into a when-action or
//! a statement; or a diagnostic. It deliberately does no IO: a printed line goes to the front
//! end with the run's results, and printing to a file (a `fileName` other than `""`) is refused.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use eqm_diag::Diagnostic;
use eqm_ir::flat::Message;
use eqm_syntax::ast;

/// What a call of a stream function does.
pub(crate) enum StreamEffect {
    /// `print(message)`: the line is handed to the front end.
    Print(Message),
    /// `error(message)`: the run stops with the message.
    Error(Message),
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// When `function` is `print` or `error` of the Modelica external C library, the effect of
    /// calling it with `args` (`Some(None)` after a diagnostic); `None` for any other function.
    pub(crate) fn stream_call(
        &mut self,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<StreamEffect>> {
        let class = self.function_class(function, scope)?.class;
        let call = self.table.get(class).sections().iter().find_map(|s| match s {
            ast::Section::External { call: Some(call), .. } => Some(call),
            _ => None,
        })?;
        let c_name = call.function.name.as_str();
        let print = match c_name {
            "ModelicaInternal_print" => true,
            "ModelicaError" => false,
            // EQM keeps no file open (the files a model reads are read when it is compiled),
            // so closing one has nothing to do.
            "ModelicaStreams_closeFile" => return Some(None),
            _ => return None,
        };
        let inputs = self.input_names(class);
        // The expression the caller gives the input that the external call's argument `k`
        // names (positionally or by name), if any.
        let argument = |k: usize| -> Option<&'a ast::Expr> {
            let ast::ExprKind::Ref(r) = &call.args.get(k)?.kind else {
                return None;
            };
            let name = r.parts.first()?.name.name.as_str();
            let position = inputs.iter().position(|i| *i == name)?;
            args.positional
                .get(position)
                .or_else(|| args.named.iter().find(|(n, _)| n.name == name).map(|(_, e)| e))
        };
        let (text, file) = (argument(0), argument(1));
        let message = match text {
            Some(e) => self.message(e, scope, loops),
            None => Message::default(),
        };
        if print && let Some(file) = file {
            let value = self.eval(file, scope, loops);
            let name = value
                .as_ref()
                .and_then(|v| self.known_string(v))
                .and_then(|m| m.as_literal());
            if name.as_deref() != Some("") {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0325",
                        "`Modelica.Utilities.Streams.print` to a file is not provided: EQM prints to the run's output only",
                        file.span,
                        "a file name",
                    )
                    .with_help("leave out `fileName` (or give `\"\"`), and redirect the printed lines where you need them"),
                );
                return Some(None);
            }
        }
        Some(Some(if print {
            StreamEffect::Print(message)
        } else {
            StreamEffect::Error(message)
        }))
    }
}
