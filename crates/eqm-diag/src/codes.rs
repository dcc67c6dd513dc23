//! The registry of diagnostic codes: every code a [`Diagnostic`](crate::Diagnostic) may carry is
//! defined here exactly once (in the table of the submodule `table`), with its severity, the stage that reports it and a one-line
//! description of what it means to a user.
//!
//! Input: a code as the stages write it (`"E0201"`). Output: its [`CodeInfo`] ([`describe`]), or
//! the whole table [`CODES`], sorted by code, from which `docs/errors.md` is generated.
//! This module neither creates nor renders diagnostics, and stages keep writing their codes as
//! string literals: the constructors of [`Diagnostic`](crate::Diagnostic) check in debug builds
//! that a code is registered with their severity, and the crate's tests check that every code
//! written in the sources is registered and that every registered code is written somewhere.
//!
//! A code is a letter and four digits. The letter is the severity (`E` error, `W` warning, `N`
//! note), the first two digits the stage ([`Stage::of`]), the last two the problem; `x99` is an
//! internal error of stage `x`.

use crate::Severity;

/// The part of the pipeline that reports a code, given by the code's first two digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// `x10xx`: reading a system-dynamics file (XMILE, Stella, Vensim) into an `.eqm` model.
    Import,
    /// `x01xx`: lexing and parsing.
    Syntax,
    /// `x02xx`: names, lookup and the declarations they lead to.
    Names,
    /// `x03xx`: instantiation, types, arrays and connections.
    Instantiation,
    /// `x04xx`: the balance of equations and unknowns.
    Balance,
    /// `x05xx`: structural analysis (matching, index reduction, initialization).
    Structural,
    /// `x06xx`: building the executable program.
    CodeGeneration,
    /// `x07xx`: evaluation and simulation.
    Simulation,
    /// `x08xx`: model analysis (steady state, linearisation, modes).
    Analysis,
    /// `x09xx`: exporting a model (FMI).
    Export,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 10] = [
        Stage::Import,
        Stage::Syntax,
        Stage::Names,
        Stage::Instantiation,
        Stage::Balance,
        Stage::Structural,
        Stage::CodeGeneration,
        Stage::Simulation,
        Stage::Analysis,
        Stage::Export,
    ];

    /// The stage a code's first two digits name (`"E0304"` → [`Stage::Instantiation`]), or `None`
    /// when the code is not a letter and four digits or names no stage.
    pub fn of(code: &str) -> Option<Stage> {
        let digits = code.get(1..3)?;
        Stage::ALL.into_iter().find(|s| s.digits() == digits)
    }

    /// The two digits after the letter that codes of this stage start with.
    pub fn digits(self) -> &'static str {
        match self {
            Stage::Import => "10",
            Stage::Syntax => "01",
            Stage::Names => "02",
            Stage::Instantiation => "03",
            Stage::Balance => "04",
            Stage::Structural => "05",
            Stage::CodeGeneration => "06",
            Stage::Simulation => "07",
            Stage::Analysis => "08",
            Stage::Export => "09",
        }
    }

    /// A heading for the stage.
    pub fn title(self) -> &'static str {
        match self {
            Stage::Import => "Importing system-dynamics files",
            Stage::Syntax => "Lexing and parsing",
            Stage::Names => "Names and lookup",
            Stage::Instantiation => "Instantiation, types, arrays and connections",
            Stage::Balance => "Balance",
            Stage::Structural => "Structural analysis",
            Stage::CodeGeneration => "Code generation",
            Stage::Simulation => "Simulation",
            Stage::Analysis => "Model analysis",
            Stage::Export => "Export",
        }
    }

    /// One sentence on what the stage checks.
    pub fn summary(self) -> &'static str {
        match self {
            Stage::Import => {
                "Reading a Stella/XMILE or Vensim file and translating it into an `.eqm` model on the \
                 SystemDynamics library."
            }
            Stage::Syntax => "Reading the text of a file: characters, literals, comments and the grammar.",
            Stage::Names => {
                "Finding the model, the classes, variables and functions that names refer to, and checking \
                 declarations and function bodies."
            }
            Stage::Instantiation => {
                "Building the flat model: modifiers and attributes, types, array sizes, calls, when-clauses and \
                 connections."
            }
            Stage::Balance => "Counting equations against unknowns, per component.",
            Stage::Structural => {
                "Matching equations to unknowns, index reduction, alias elimination and the initial system."
            }
            Stage::CodeGeneration => {
                "Building the executable program: parameters, start values, algorithm sections, events and \
                 when-clauses."
            }
            Stage::Simulation => {
                "Evaluating the model and simulating it: nonlinear solving, assertions, events and run-time \
                 settings."
            }
            Stage::Analysis => {
                "Analysing a model before simulating it: steady state, linearisation and modes (`eqm analyze`)."
            }
            Stage::Export => "Exporting a model as a Functional Mock-up Unit (`eqm fmu`).",
        }
    }
}

/// What one diagnostic code means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The code, as diagnostics carry it (`"E0201"`).
    pub code: &'static str,
    /// The severity of every diagnostic with this code.
    pub severity: Severity,
    /// The stage that reports it.
    pub stage: Stage,
    /// What the code means to a user, in one line.
    pub description: &'static str,
}

const fn code(code: &'static str, severity: Severity, stage: Stage, description: &'static str) -> CodeInfo {
    CodeInfo {
        code,
        severity,
        stage,
        description,
    }
}

mod table;
pub use table::CODES;

/// What `code` means, or `None` when it is not registered.
pub fn describe(code: &str) -> Option<&'static CodeInfo> {
    CODES
        .binary_search_by(|info| info.code.cmp(code))
        .ok()
        .map(|i| &CODES[i])
}
