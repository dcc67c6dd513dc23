//! The random functions of both dialects: XMILE's `RANDOM(min, max [, seed])`,
//! `NORMAL(mean, sd [, seed])`, `EXPRND(mean [, seed])`, `LOGNORMAL(mean, sd [, seed])` and
//! `POISSON(mean [, seed])`, Vensim's `RANDOM UNIFORM(min, max, seed)`, `RANDOM NORMAL(min,
//! max, mean, sd, seed)` and `RANDOM EXPONENTIAL(min, max, shift, stretch, seed)`.
//!
//! Input: the call in the context of the element being defined. Output: a call of a function
//! the model holds, which gives the value of the current step. Each call draws from its own
//! stream of the Park-Miller "minimal standard" generator (`x -> 48271*x mod (2^31 - 1)`,
//! exact in double precision), a new value at every step and the same value within a step
//! (the stages of RK4 included). The value of step `k` is a function of the step alone: the
//! stream's state at the start jumped ahead by `1024*k` draws (the powers computed by
//! squaring, each product split so that it stays exact), so a run needs no events and no
//! state, and a run again gives the same numbers. A step draws what it needs from its 1024:
//! one for a uniform value, one for an exponential, two per try for a normal (Box-Muller) and
//! for a lognormal (`exp` of a normal draw: its arguments are the mean and standard deviation
//! of the logarithm), one for a Poisson value (the inverse of its distribution function at
//! the uniform draw, summed term by term in logarithms so that a large mean does not
//! underflow; a negative mean stops the run); a truncated draw is tried again until it falls
//! in `[min, max]`, and after 512 tries outside it (a range with less than about a thousandth
//! of the distribution) the value is the nearer bound.
//!
//! The seed: a call with a seed starts its stream from `1 + seed mod (2^31 - 2)` (the whole
//! part of the seed's absolute value, read at the start), advanced by eight draws so that
//! small seeds do not start with small numbers; calls with the same seed draw the same
//! numbers. A call without one (XMILE's optional seed) takes its place among the model's
//! random calls without a seed as its seed (1, 2, ...). Not supported (E1002): a seed whose
//! value at the start does not follow from numbers and constants.

use super::expr::{ModelFunction, Writer, unsupported};
use crate::ir::{Builtin, Expr};
use eqm_diag::Diagnostic;

/// The modulus of the generator, the prime `2^31 - 1`.
const MODULUS: u64 = 2_147_483_647;
/// The multiplier of the generator.
const MULTIPLIER: u64 = 48_271;
/// The draws each step has to itself.
const DRAWS_PER_STEP: u64 = 1024;

impl Writer<'_, '_> {
    /// The value of the step of a random builtin's call.
    pub(super) fn random(&mut self, expr: &Expr, builtin: Builtin, args: &[Expr]) -> Result<String, Diagnostic> {
        let a = self.real_args(args)?;
        // Each builtin as the draw's kind (1 uniform, 2 normal, 3 exponential, 4 lognormal,
        // 5 Poisson), its bounds, its two shape parameters and where its seed is.
        let wide = ("-1e300".to_string(), "1e300".to_string());
        let (kind, (low, high), shift, scale, seed_at) = match builtin {
            Builtin::RandomUniform => (1, (a[0].clone(), a[1].clone()), "0".into(), "1".into(), 2),
            Builtin::RandomNormal => (2, (a[0].clone(), a[1].clone()), a[2].clone(), a[3].clone(), 4),
            Builtin::Normal => (2, wide, a[0].clone(), a[1].clone(), 2),
            Builtin::Exprnd => (3, wide, "0".into(), a[0].clone(), 1),
            Builtin::Lognormal => (4, wide, a[0].clone(), a[1].clone(), 2),
            Builtin::Poisson => (5, wide, "0".into(), a[0].clone(), 1),
            Builtin::RandomExponential => (3, (a[0].clone(), a[1].clone()), a[2].clone(), a[3].clone(), 4),
            other => return Err(unsupported(expr, &format!("the random function {other:?}"))),
        };
        let seed = match args.get(seed_at) {
            Some(seed) => self.scope.start_values.value(seed).ok_or_else(|| {
                unsupported(
                    seed,
                    "a seed whose value at the start does not follow from numbers and constants",
                )
            })?,
            None => {
                self.helpers.unseeded_random_calls += 1;
                self.helpers.unseeded_random_calls as f64
            }
        };
        let function = self.model_function(
            ModelFunction::RandomDraw,
            "random draw",
            "The value of a step of a random stream (Park-Miller's minimal standard generator)",
            RANDOM_BODY,
        );
        let (start, dt) = (self.scope.start, self.scope.dt);
        Ok(format!(
            "{function}(time, {start}, {dt}, {}, {}, {kind}, {low}, {high}, {shift}, {scale})",
            first_state(seed),
            power_mod(MULTIPLIER, DRAWS_PER_STEP),
        ))
    }

    /// The numeric forms of the arguments, without parentheses where the argument is one
    /// (each is an argument of a call).
    fn real_args(&mut self, args: &[Expr]) -> Result<Vec<String>, Diagnostic> {
        args.iter().map(|a| self.real(a)).collect()
    }
}

/// The state a stream of `seed` starts from: `1 + seed mod (2^31 - 2)` advanced by eight
/// draws.
fn first_state(seed: f64) -> u64 {
    let whole = seed.abs().floor();
    let reduced = if whole.is_finite() {
        whole % (MODULUS - 1) as f64
    } else {
        0.0
    };
    let mut state = 1 + reduced as u64;
    for _ in 0..8 {
        state = state * MULTIPLIER % MODULUS;
    }
    state
}

/// `base^exponent mod (2^31 - 1)`.
fn power_mod(base: u64, mut exponent: u64) -> u64 {
    let (mut result, mut square) = (1u64, base % MODULUS);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * square % MODULUS;
        }
        square = square * square % MODULUS;
        exponent >>= 1;
    }
    result
}

/// The body of the draw: the step's index from the time, the stream's state at the step
/// (the start state times `jump^k`, by squaring; each product of two states below 2^31 split
/// at 2^16 so that every intermediate value is an integer below 2^53, exact in a double),
/// then the draws of the kind asked for.
const RANDOM_BODY: &str = "    input Real t \"The time\";
    input Real t0 \"The start of the run\";
    input Real dt \"The time step\";
    input Real first \"The stream's state at the start, a whole number from 1 to 2147483646\";
    input Real jump \"48271^1024 mod (2^31 - 1): the state's factor from one step to the next\";
    input Integer kind \"1 uniform on [low, high], 2 normal, 3 exponential (each truncated to [low, high]), 4 lognormal, 5 Poisson\";
    input Real low \"The least value\";
    input Real high \"The greatest value\";
    input Real shift \"The mean of a normal draw (of its logarithm for a lognormal one), the shift of an exponential one\";
    input Real scale \"The standard deviation of a normal draw (of its logarithm for a lognormal one), the mean of an exponential or Poisson one\";
    output Real value \"The value of the step\";
  protected
    constant Real m = 2147483647;
    Real k;
    Real x;
    Real base;
    Real u1;
    Real u2;
    Integer tries;
    Boolean found;
    Real logTerm;
    Real cumulative;
  algorithm
    k := max(0, floor((t - t0)/dt + 1e-6));
    x := first;
    base := jump;
    while k > 0 loop
      if mod(k, 2) > 0.5 then
        x := mod(mod(x*floor(base/65536), m)*65536 + x*mod(base, 65536), m);
      end if;
      base := mod(mod(base*floor(base/65536), m)*65536 + base*mod(base, 65536), m);
      k := floor(k/2);
    end while;
    if kind == 1 then
      x := mod(48271*x, m);
      value := low + (high - low)*x/m;
    elseif kind == 5 then
      assert(scale >= 0, \"the mean of a Poisson draw must not be negative\");
      x := mod(48271*x, m);
      u1 := x/m;
      value := 0;
      logTerm := -scale;
      cumulative := exp(logTerm);
      while cumulative < u1 and value < scale + 50*sqrt(scale) + 50 loop
        value := value + 1;
        logTerm := logTerm + log(scale) - log(value);
        cumulative := cumulative + exp(logTerm);
      end while;
    else
      found := false;
      tries := 0;
      value := low;
      while not found and tries < 512 loop
        x := mod(48271*x, m);
        u1 := x/m;
        if kind == 2 or kind == 4 then
          x := mod(48271*x, m);
          u2 := x/m;
          value := shift + scale*sqrt(-2*log(u1))*cos(6.283185307179586*u2);
          if kind == 4 then
            value := exp(value);
          end if;
        else
          value := shift - scale*log(u1);
        end if;
        found := value >= low and value <= high;
        tries := tries + 1;
      end while;
      if not found then
        value := min(max(value, low), high);
      end if;
    end if;
";

#[cfg(test)]
mod tests {
    use super::*;

    /// Park and Miller's check of the multiplier 48271: from the state 1, the 10000th draw is
    /// 399268537.
    #[test]
    fn the_generator_is_the_minimal_standard() {
        assert_eq!(power_mod(MULTIPLIER, 10_000), 399_268_537);
    }

    #[test]
    fn a_seed_starts_its_stream_eight_draws_on() {
        assert_eq!(first_state(0.0), power_mod(MULTIPLIER, 8));
        assert_eq!(first_state(-3.7), 4 * power_mod(MULTIPLIER, 8) % MODULUS);
    }
}
