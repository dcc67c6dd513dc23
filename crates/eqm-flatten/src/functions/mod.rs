//! User-defined functions: their interfaces, bodies and calls.
//!
//! Input: `function` classes reached through calls. Output: [`Function`](eqm_ir::flat::Function)s (scalar slots and
//! a statement body, flattened by `statements`) and, for each call, the call node with the
//! values of its outputs. Arrays are expanded to scalar slots here, as everywhere in the flat
//! model, so array sizes inside functions must be known at compile time: a function whose
//! inputs are declared with `:` (`input Real u[:]`) is instantiated once for each combination of
//! its arguments' sizes, so that `size(u, 1)` and outputs sized from it (`output Real
//! y[size(u, 1)]`) are known in each instance. Calls are checked here: arity, named arguments,
//! defaults, argument types and sizes. This module deliberately does not inline, evaluate or
//! differentiate functions; later stages do, except for the partial derivatives Modelica
//! declares as classes (`function f_T = der(f, T)`), made here as functions of their own.
//!
//! Its modules: `interface` (what a function class declares, and its instance for a call),
//! `instantiate` (the flat function and its body), `locals` (the slots of its variables),
//! `references` (locals read and assigned in a body), `calls` (checked calls), `vectorised`
//! (functions of scalars applied to the elements of array arguments) and `external`
//! (external C functions linked through the front end), `objects` (external objects: their
//! classes, constructors and destructors), `modelica_strings` (the string functions
//! of the Modelica external C library, evaluated at compile time) and `modelica_files` (its
//! functions that read files, evaluated at compile time through the front end's reader),
//! `derivatives` (the `derivative` annotations, with their functions instantiated),
//! `partial_derivatives` (the functions `der(f, x)` declares),
//! `string_inputs` (String inputs holding values known only during the run, passed as hidden
//! scalar inputs), `lapack` (the LAPACK routines of external "FORTRAN 77" functions, run as the
//! functions of the embedded `LinearAlgebra`).

mod calls;
mod derivatives;
mod external;
mod instantiate;
mod interface;
mod lapack;
mod locals;
mod modelica_files;
mod modelica_strings;
mod objects;
mod partial_derivatives;
mod references;
mod string_inputs;
mod vectorised;

pub(crate) use instantiate::EFFECT_OUTPUT;
