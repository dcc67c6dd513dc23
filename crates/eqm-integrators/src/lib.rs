//! Integrators: the numerical core of `eqm run`, independent of the model compiler.
//!
//! Input: an [`OdeSystem`] `x' = f(t, x)` (the compiled model's right-hand side, or any test
//! problem), an initial point, a [`Method`] with its [`Options`], and the output request.
//! Output: rows `(t, x)` handed to an observer as they are computed, and on failure an
//! [`IntegrationError`] that names the time (and for non-finite values, every component).
//!
//! Two layers:
//! - a [`Stepper`] takes one accepted step at a time, never beyond a time limit, and can
//!   interpolate inside its last step (dense output) and restart from any point. Event location
//!   (zero crossings evaluated on the dense output, then a restart at the event) belongs on top
//!   of this trait, not inside the methods;
//! - [`integrate()`] drives a stepper from `t0` to `t_end` and emits the requested output times by
//!   interpolation, so output never forces the step size.
//!
//! One module per family: [`explicit`] (fixed-step Runge–Kutta from any [`tableau::Tableau`]),
//! [`adaptive`] (embedded pairs with step size control: rkf45, dopri5, tsit5 and Verner's vern6
//! to vern9, whose coefficients and interpolants are in [`pairs`]), [`multistep`]
//! (Adams–Bashforth), [`implicit`] (implicit Euler and the trapezoid for stiff problems),
//! [`bdf`] (variable-order, variable-step BDF for stiff problems), [`radau`] (Radau IIA of
//! order 5 for stiff problems; both also with a fixed step), [`dirk`] (diagonally implicit
//! Runge–Kutta methods from user tableaux), [`auto`] (DOPRI5 switching to BDF), and
//! [`stability`] (each method's stability function, the largest stable step for a set of
//! eigenvalues, and the step and method advice built on them). What the families share has
//! one module each, private to the crate: the system and its evaluation (`system`), the
//! options (`options`), the errors (`error`), the counters and the budget of attempts
//! (`stats`), the [`Stepper`] trait with the bookkeeping of step ends (`stepper`), step size
//! control (`control`), Jacobians (`jacobian`, which builds them, and [`linalg`], which factors
//! them: dense and sparse LU), the methods by name (`method`) and the driving loop
//! (`integrate`); the crate root only re-exports their public items. They are layered without
//! a circle: `error`, then `stats`, `system`, `stepper` and `control`, each importing only
//! from those before it (and `control` from the fixed-step clock of `explicit`); `linalg`
//! imports nothing of the crate's and `jacobian` builds on it.
//!
//! Deliberately not here: events (the simulator builds them on [`Stepper`]), integration
//! backwards in time, and any IO. Explicit methods allocate nothing in their inner loops: every
//! buffer is sized in `initialize` (the implicit ones allocate when they factor a new matrix).

pub mod adaptive;
pub mod auto;
pub mod bdf;
pub mod dirk;
pub mod explicit;
pub mod implicit;
pub mod linalg;
pub mod multistep;
pub mod pairs;
pub mod radau;
pub mod stability;
pub mod tableau;

mod control;
mod error;
mod integrate;
mod jacobian;
mod method;
mod options;
mod stats;
mod stepper;
mod system;

pub use error::{IntegrationError, Quantity};
pub use integrate::{Outcome, Output, Schedule, integrate};
pub use jacobian::jacobian_of;
pub use method::{Method, stepper_for};
pub use options::{Atol, DEFAULT_MAX_STEPS, Options};
pub use stats::Stats;
pub use stepper::{StepInfo, Stepper};
pub use system::{OdeSystem, RhsError};
