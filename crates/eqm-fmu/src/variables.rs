//! The value references of an FMU's variables: which variable each number names, its type,
//! and whether an importer may set it as a parameter or an input.
//!
//! Input: a compiled [`Model`]. Output: [`Variables`], looked up by value reference. The
//! numbering is the library's (`eqm::fmi::variables`), the one the exported model description
//! was written with, so the runtime and the description agree by construction; in FMI 3 the
//! value reference of an array (`eqm::fmi::arrays`) stands for its elements, row-major
//! ([`Variables::elements`]). It deliberately decides nothing about the numbering itself.

use eqm::Model;
use eqm::fmi::{FmiCausality, FmiSource, FmiType, FmiVariability};

/// How an importer may set a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    /// A top-level input: set between steps.
    Input,
    /// A parameter EQM changes without compiling again.
    Parameter,
    /// Anything else: set only as a start value before the initialization.
    Other,
}

/// The type a variable is read and written as through the C ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Boolean,
    /// An enumeration: an Integer from 1 to its number of literals.
    Enumeration,
    /// A String parameter or constant, whose text is fixed when the model is compiled.
    String,
}

/// A variable with its value reference.
#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub causality: Causality,
    pub kind: Kind,
    /// Where its value is in the compiled program.
    pub source: FmiSource,
    /// The number of literals of an enumeration's type (0 for the other kinds).
    pub literals: u32,
    /// A fixed parameter: its value is part of the compiled model, so it is never set.
    pub fixed: bool,
    /// The text of a String.
    pub text: Option<String>,
}

/// The variables by value reference; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    by_reference: std::collections::HashMap<u32, Variable>,
    /// FMI 3's arrays: the value references of each array's elements, by the array's.
    arrays: std::collections::HashMap<u32, Vec<u32>>,
    /// Whether a value reference names an array (FMI 3) or always one scalar (FMI 2).
    arrays_exposed: bool,
}

impl Variables {
    /// The variables of `model`, numbered as its model description numbers them.
    pub fn of(model: &Model) -> Variables {
        let list = eqm::fmi::variables(model);
        let arrays = eqm::fmi::arrays(&list)
            .into_iter()
            .map(|a| (a.value_reference, a.elements))
            .collect();
        let by_reference = list
            .into_iter()
            .map(|v| {
                let causality = match v.causality {
                    FmiCausality::Input => Causality::Input,
                    FmiCausality::Parameter => Causality::Parameter,
                    _ => Causality::Other,
                };
                let kind = match v.ty {
                    FmiType::Real => Kind::Real,
                    FmiType::Integer => Kind::Integer,
                    FmiType::Boolean => Kind::Boolean,
                    FmiType::Enumeration => Kind::Enumeration,
                    FmiType::String => Kind::String,
                };
                let literals = v.enumeration.as_ref().map_or(0, |ty| ty.literals.len() as u32);
                let variable = Variable {
                    name: v.name,
                    causality,
                    kind,
                    source: v.source,
                    literals,
                    fixed: v.causality == FmiCausality::Parameter && v.variability == FmiVariability::Fixed,
                    text: v.text.as_deref().map(str::to_string),
                };
                (v.value_reference, variable)
            })
            .collect();
        Variables {
            by_reference,
            arrays,
            arrays_exposed: false,
        }
    }

    /// The variables as FMI 3 numbers them: an array's value reference names the whole array.
    pub fn with_arrays(mut self) -> Variables {
        self.arrays_exposed = true;
        self
    }

    /// The scalars `refs` name, in order: each array's elements row-major (FMI 3), each other
    /// reference itself.
    pub fn elements(&self, refs: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(refs.len());
        for r in refs {
            match self.arrays.get(r).filter(|_| self.arrays_exposed) {
                Some(elements) => out.extend_from_slice(elements),
                None => out.push(*r),
            }
        }
        out
    }

    /// The variable with value reference `r`.
    pub fn get(&self, r: u32) -> Option<&Variable> {
        self.by_reference.get(&r)
    }

    /// The name of the variable with value reference `r`.
    pub fn name(&self, r: u32) -> Option<&str> {
        self.get(r).map(|v| v.name.as_str())
    }
}
