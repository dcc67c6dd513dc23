//! The methods by name: [`Method`] as the `--solver` option names them, what each needs and
//! does, and [`stepper_for`], which builds the stepper of a method.
//!
//! Input: a method's name or a user's tableau, and [`Options`]. Output: a boxed [`Stepper`]
//! whose options are checked when it is initialized. It deliberately contains no numerics.

use crate::adaptive::Adaptive;
use crate::explicit::ExplicitRk;
use crate::implicit::Theta;
use crate::multistep::AdamsBashforth;
use crate::options::Options;
use crate::stepper::Stepper;
use crate::tableau::{self, Tableau};
use crate::{auto, bdf, dirk, radau};

/// An integration method, by its `--solver` name, or a user's explicit tableau.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    Euler,
    Heun,
    Midpoint,
    Rk4,
    Rkf45,
    Dopri5,
    /// Tsitouras' 5(4) pair.
    Tsit5,
    /// Verner's "most efficient" 6(5) pair.
    Vern6,
    /// Verner's "most efficient" 7(6) pair.
    Vern7,
    /// Verner's "most efficient" 8(7) pair.
    Vern8,
    /// Verner's "most efficient" 9(8) pair.
    Vern9,
    Ab2,
    Ab4,
    ImplicitEuler,
    Trapezoid,
    /// Variable-order, variable-step BDF (NDF) for stiff problems.
    Bdf,
    /// Radau IIA of order 5 (RADAU5) for stiff problems.
    Radau5,
    /// DOPRI5, switching to BDF while the problem is stiff.
    Auto,
    /// A user-supplied explicit tableau: fixed-step, or adaptive when it has embedded weights.
    Tableau(Box<Tableau>),
}

impl Method {
    /// The methods that have a name, in the order of the CLI documentation.
    pub const NAMED: [Method; 18] = [
        Method::Euler,
        Method::Heun,
        Method::Midpoint,
        Method::Rk4,
        Method::Rkf45,
        Method::Dopri5,
        Method::Tsit5,
        Method::Vern6,
        Method::Vern7,
        Method::Vern8,
        Method::Vern9,
        Method::Ab2,
        Method::Ab4,
        Method::ImplicitEuler,
        Method::Trapezoid,
        Method::Bdf,
        Method::Radau5,
        Method::Auto,
    ];

    /// The method with this `--solver` name.
    pub fn parse(name: &str) -> Option<Method> {
        Method::NAMED.into_iter().find(|m| m.name() == name)
    }

    /// The `--solver` name (a user tableau's own name).
    pub fn name(&self) -> &str {
        match self {
            Method::Euler => "euler",
            Method::Heun => "heun",
            Method::Midpoint => "midpoint",
            Method::Rk4 => "rk4",
            Method::Rkf45 => "rkf45",
            Method::Dopri5 => "dopri5",
            Method::Tsit5 => "tsit5",
            Method::Vern6 => "vern6",
            Method::Vern7 => "vern7",
            Method::Vern8 => "vern8",
            Method::Vern9 => "vern9",
            Method::Ab2 => "ab2",
            Method::Ab4 => "ab4",
            Method::ImplicitEuler => "implicit-euler",
            Method::Trapezoid => "trapezoid",
            Method::Bdf => "bdf",
            Method::Radau5 => "radau5",
            Method::Auto => "auto",
            Method::Tableau(t) => t.name(),
        }
    }

    /// Whether the method has both modes: it controls its step size when no fixed step is given
    /// and takes steps of exactly [`Options::step`] when one is. Implicit Euler and the
    /// trapezoidal rule (adaptive by step doubling), BDF (fixed order and step, started by
    /// Radau5), Radau5, and diagonally implicit tableaux with embedded weights.
    pub fn adapts_without_step(&self) -> bool {
        match self {
            Method::ImplicitEuler | Method::Trapezoid | Method::Bdf | Method::Radau5 => true,
            Method::Tableau(t) => !t.is_explicit() && t.b_hat().is_some(),
            _ => false,
        }
    }

    /// Whether the method solves implicit equations with Newton iterations and so needs the
    /// Jacobian of the right-hand side (`auto` may switch to BDF at any size: with the
    /// Jacobian's pattern, large systems get a sparse LU).
    pub fn uses_jacobian(&self) -> bool {
        match self {
            Method::ImplicitEuler | Method::Trapezoid | Method::Bdf | Method::Radau5 | Method::Auto => true,
            Method::Tableau(t) => !t.is_explicit(),
            _ => false,
        }
    }

    /// Whether [`Options::step`] makes the method take fixed steps: always for the fixed-step
    /// methods, for the methods of [`Method::adapts_without_step`] when it is given, never for
    /// the explicit adaptive ones (rkf45, dopri5, tsit5, vern6 to vern9, auto, explicit tableaux with embedded
    /// weights), which ignore it.
    pub fn takes_fixed_step(&self, step_given: bool) -> bool {
        if self.adapts_without_step() {
            step_given
        } else {
            !self.is_adaptive()
        }
    }

    /// Whether the method controls its step size (reads the tolerances) when no fixed step is
    /// given; see [`Method::takes_fixed_step`] for what a given one does.
    pub fn is_adaptive(&self) -> bool {
        match self {
            Method::Rkf45
            | Method::Dopri5
            | Method::Tsit5
            | Method::Vern6
            | Method::Vern7
            | Method::Vern8
            | Method::Vern9
            | Method::Bdf
            | Method::Radau5
            | Method::Auto => true,
            Method::Tableau(t) => t.b_hat().is_some(),
            Method::Euler
            | Method::Heun
            | Method::Midpoint
            | Method::Rk4
            | Method::Ab2
            | Method::Ab4
            | Method::ImplicitEuler
            | Method::Trapezoid => false,
        }
    }
}

/// A stepper for `method`; the options are checked when it is initialized.
pub fn stepper_for(method: &Method, options: &Options) -> Box<dyn Stepper> {
    let options = options.clone();
    match method {
        Method::Euler => Box::new(ExplicitRk::new(tableau::EULER, options)),
        Method::Heun => Box::new(ExplicitRk::new(tableau::HEUN, options)),
        Method::Midpoint => Box::new(ExplicitRk::new(tableau::MIDPOINT, options)),
        Method::Rk4 => Box::new(ExplicitRk::new(tableau::RK4, options)),
        Method::Rkf45 => Box::new(Adaptive::new(tableau::FEHLBERG45, options)),
        Method::Dopri5 => Box::new(Adaptive::dopri5(options)),
        Method::Tsit5 => Box::new(Adaptive::tsit5(options)),
        Method::Vern6 => Box::new(Adaptive::vern6(options)),
        Method::Vern7 => Box::new(Adaptive::vern7(options)),
        Method::Vern8 => Box::new(Adaptive::vern8(options)),
        Method::Vern9 => Box::new(Adaptive::vern9(options)),
        Method::Ab2 => Box::new(AdamsBashforth::new(2, options)),
        Method::Ab4 => Box::new(AdamsBashforth::new(4, options)),
        Method::ImplicitEuler => Box::new(Theta::implicit_euler(options)),
        Method::Trapezoid => Box::new(Theta::trapezoid(options)),
        Method::Bdf => Box::new(bdf::Bdf::new(options)),
        Method::Radau5 => Box::new(radau::Radau::new(options)),
        Method::Auto => Box::new(auto::Auto::new(options)),
        Method::Tableau(t) if !t.is_explicit() => Box::new(dirk::Dirk::new((**t).clone(), options)),
        Method::Tableau(t) if t.b_hat().is_some() => Box::new(Adaptive::new((**t).clone(), options)),
        Method::Tableau(t) => Box::new(ExplicitRk::new((**t).clone(), options)),
    }
}
