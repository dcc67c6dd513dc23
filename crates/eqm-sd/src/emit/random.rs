//! The random functions of both dialects: XMILE's `RANDOM(min, max [, seed])`,
//! `NORMAL(mean, sd [, seed])`, `EXPRND(mean [, seed])`, `LOGNORMAL(mean, sd [, seed])` and
//! `POISSON(mean [, seed])`, isee's `BETA(alpha, beta [, seed])`, `BINOMIAL(n, p [, seed])`,
//! `GAMMA(shape, scale [, seed])`, `TRIANGULAR(lower, mode, upper [, seed])` and
//! `WEIBULL(shape, scale [, seed])`; Vensim's `RANDOM UNIFORM(min, max, seed)`, `RANDOM NORMAL(min,
//! max, mean, sd, seed)`, `RANDOM EXPONENTIAL`, `RANDOM POISSON`, `RANDOM WEIBULL` and `RANDOM
//! GAMMA` (`min, max, parameter(s), shift, stretch, seed`), `RANDOM BETA`, `RANDOM BINOMIAL`
//! and `RANDOM NEGATIVE BINOMIAL` (two parameters) and `RANDOM TRIANGULAR(min, max, start,
//! peak, end, seed)`.
//!
//! Input: the call in the context of the element being defined. Output: a call of a function
//! the model holds, which gives the value of the current step. Each call draws from its own
//! stream of the Park-Miller "minimal standard" generator (`x -> 48271*x mod (2^31 - 1)`,
//! exact in double precision), a new value at every step and the same value within a step
//! (the stages of RK4 included). The value of step `k` is a function of the step alone: the
//! stream's state at the start jumped ahead by `1024*k` draws (the powers computed by
//! squaring, each product split so that it stays exact), so a run needs no events and no
//! state, and a run again gives the same numbers. A step draws what it needs from its 1024:
//! one for a uniform value, one for an exponential, a Poisson, a triangular, a Weibull, a
//! binomial or a negative binomial value (the last three and the Poisson one the inverse of
//! the distribution function at the uniform draw, summed term by term in logarithms so that
//! nothing underflows), two per try for a normal (Box-Muller) and for a lognormal (`exp` of a
//! normal draw: its arguments are the mean and standard deviation of the logarithm), three per
//! try of Marsaglia and Tsang's method for a gamma value (and two gamma values for a beta
//! one). The draw is multiplied by the stretch and the shift added; a truncated value is drawn
//! again until it falls in `[min, max]`, and after 512 tries or 1000 draws outside it (a range
//! with less than about a thousandth of the distribution) the value is the nearer bound. A
//! parameter outside its distribution's range stops the run with an assertion.
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
        let draw = match draw_of(builtin, &a) {
            Some(draw) => draw,
            None => return Err(unsupported(expr, &format!("the random function {builtin:?}"))),
        };
        let seed_at = draw.seed_at;
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
        let Draw {
            kind,
            low,
            high,
            parameters: [p1, p2, p3],
            shift,
            stretch,
            ..
        } = draw;
        Ok(format!(
            "{function}(time, {start}, {dt}, {}, {}, {kind}, {low}, {high}, {p1}, {p2}, {p3}, {shift}, {stretch})",
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

/// A call's draw: its kind (the body's `kind`), its bounds, the distribution's parameters,
/// the shift and stretch applied to the draw before it is truncated, and where the call's seed
/// is among its arguments.
struct Draw {
    kind: u32,
    low: String,
    high: String,
    parameters: [String; 3],
    shift: String,
    stretch: String,
    seed_at: usize,
}

/// The draw of a call of `builtin` with the arguments `a` (numeric forms), `None` for a
/// builtin that draws nothing.
fn draw_of(builtin: Builtin, a: &[String]) -> Option<Draw> {
    let arg = |k: usize| a.get(k).cloned().unwrap_or_else(|| "0".to_string());
    let unbounded = || ("-1e300".to_string(), "1e300".to_string());
    let bounded = || (arg(0), arg(1));
    // (kind, bounds, parameters, shift, stretch, seed's place)
    let (kind, (low, high), parameters, (shift, stretch), seed_at) = match builtin {
        Builtin::RandomUniform => (1, bounded(), [arg(0), arg(1), zero()], (zero(), one()), 2),
        Builtin::RandomNormal => (2, bounded(), [zero(), zero(), zero()], (arg(2), arg(3)), 4),
        Builtin::Normal => (2, unbounded(), [zero(), zero(), zero()], (arg(0), arg(1)), 2),
        Builtin::RandomExponential => (3, bounded(), [zero(), zero(), zero()], (arg(2), arg(3)), 4),
        Builtin::Exprnd => (3, unbounded(), [zero(), zero(), zero()], (zero(), arg(0)), 1),
        Builtin::Lognormal => (4, unbounded(), [arg(0), arg(1), zero()], (zero(), one()), 2),
        Builtin::Poisson => (5, unbounded(), [arg(0), zero(), zero()], (zero(), one()), 1),
        Builtin::RandomPoisson => (5, bounded(), [arg(2), zero(), zero()], (arg(3), arg(4)), 5),
        Builtin::RandomTriangular => (6, bounded(), [arg(2), arg(3), arg(4)], (zero(), one()), 5),
        Builtin::RandomWeibull => (7, bounded(), [arg(2), one(), zero()], (arg(3), arg(4)), 5),
        // An order below 1 is taken as 1, as Vensim documents.
        Builtin::RandomGamma => (
            8,
            bounded(),
            [format!("max({}, 1)", arg(2)), zero(), zero()],
            (arg(3), arg(4)),
            5,
        ),
        Builtin::RandomBeta => (9, bounded(), [arg(2), arg(3), zero()], (arg(4), arg(5)), 6),
        Builtin::RandomBinomial => (10, bounded(), [arg(2), arg(3), zero()], (arg(4), arg(5)), 6),
        Builtin::RandomNegativeBinomial => (11, bounded(), [arg(2), arg(3), zero()], (arg(4), arg(5)), 6),
        Builtin::Beta => (9, unbounded(), [arg(0), arg(1), zero()], (zero(), one()), 2),
        Builtin::Binomial => (10, unbounded(), [arg(1), arg(0), zero()], (zero(), one()), 2),
        Builtin::Gamma => (8, unbounded(), [arg(0), zero(), zero()], (zero(), arg(1)), 2),
        Builtin::Triangular => (6, unbounded(), [arg(0), arg(1), arg(2)], (zero(), one()), 3),
        Builtin::Weibull => (7, unbounded(), [arg(0), zero(), zero()], (zero(), arg(1)), 2),
        _ => return None,
    };
    Some(Draw {
        kind,
        low,
        high,
        parameters,
        shift,
        stretch,
        seed_at,
    })
}

/// The text of 0, an argument a draw does not use.
fn zero() -> String {
    "0".to_string()
}

/// The text of 1, a stretch that leaves a draw as it is.
fn one() -> String {
    "1".to_string()
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
    input Integer kind \"1 uniform on [p1, p2], 2 normal, 3 exponential of mean 1, 4 lognormal (p1, p2 the mean and deviation of its logarithm), 5 Poisson of mean p1, 6 triangular on [p1, p3] with its mode at p2, 7 Weibull of shape p1 and scale 1 (mean 1 where p2 is 1), 8 gamma of shape p1 and scale 1, 9 beta of shapes p1 and p2, 10 binomial of p2 trials of probability p1, 11 negative binomial: the trials until the p2-th success of probability p1\";
    input Real low \"The least value\";
    input Real high \"The greatest value\";
    input Real p1 \"The first parameter of the distribution\";
    input Real p2 \"The second parameter of the distribution\";
    input Real p3 \"The third parameter of the distribution\";
    input Real shift \"Added to the draw times the stretch\";
    input Real stretch \"The factor of the draw\";
    output Real value \"The value of the step: shift + stretch*draw, drawn again until it lies in [low, high]\";
  protected
    constant Real m = 2147483647;
    constant Real budget = 1000 \"The draws a step may use of its 1024\";
    Real k;
    Real x;
    Real base;
    Real u1;
    Real u2;
    Real z;
    Real draw;
    Real draws;
    Integer tries;
    Boolean found;
    Boolean accepted;
    Real logTerm;
    Real cumulative;
    Real limit;
    Real alpha;
    Real d;
    Real c;
    Real v;
    Real g1;
    Real g2;
    Real weibullScale;
    Real lanczos;
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
    if kind == 5 then
      assert(p1 >= 0, \"the mean of a Poisson draw must not be negative\");
    elseif kind == 6 then
      assert(p1 <= p2 and p2 <= p3 and p1 < p3, \"a triangular draw needs start <= peak <= end, start < end\");
    elseif kind == 7 then
      assert(p1 > 0, \"the shape of a Weibull draw must be positive\");
      // With p2 = 1, the scale that gives the mean 1: 1/Gamma(1 + 1/shape), by Lanczos'
      // approximation.
      z := 1/p1;
      lanczos := 0.99999999999980993 + 676.5203681218851/(z + 1) - 1259.1392167224028/(z + 2)
        + 771.32342877765313/(z + 3) - 176.61502916214059/(z + 4) + 12.507343278686905/(z + 5)
        - 0.13857109526572012/(z + 6) + 9.9843695780195716e-6/(z + 7) + 1.5056327351493116e-7/(z + 8);
      weibullScale := if p2 > 0.5 then 1/(sqrt(2*3.141592653589793)*(z + 7.5)^(z + 0.5)*exp(-(z + 7.5))*lanczos) else 1;
    elseif kind == 8 then
      assert(p1 > 0, \"the shape of a gamma draw must be positive\");
    elseif kind == 9 then
      assert(p1 > 0 and p2 > 0, \"the shapes of a beta draw must be positive\");
    elseif kind == 10 then
      assert(p1 >= 0 and p1 <= 1 and p2 >= 0, \"a binomial draw needs a probability in [0, 1] and trials not negative\");
    elseif kind == 11 then
      assert(p1 > 0 and p1 <= 1 and p2 > 0, \"a negative binomial draw needs a probability in (0, 1] and a positive number of successes\");
    end if;
    found := false;
    tries := 0;
    draws := 0;
    value := low;
    while not found and tries < 512 and draws < budget loop
      x := mod(48271*x, m);
      u1 := x/m;
      draws := draws + 1;
      if kind == 1 then
        draw := p1 + (p2 - p1)*u1;
      elseif kind == 2 or kind == 4 then
        x := mod(48271*x, m);
        u2 := x/m;
        draws := draws + 1;
        draw := sqrt(-2*log(u1))*cos(6.283185307179586*u2);
        if kind == 4 then
          draw := exp(p1 + p2*draw);
        end if;
      elseif kind == 3 then
        draw := -log(u1);
      elseif kind == 5 then
        // The inverse of the distribution function, term by term in logarithms.
        draw := 0;
        logTerm := -p1;
        cumulative := exp(logTerm);
        while cumulative < u1 and draw < p1 + 50*sqrt(p1) + 50 loop
          draw := draw + 1;
          logTerm := logTerm + log(p1) - log(draw);
          cumulative := cumulative + exp(logTerm);
        end while;
      elseif kind == 6 then
        if u1 < (p2 - p1)/(p3 - p1) then
          draw := p1 + sqrt(u1*(p3 - p1)*(p2 - p1));
        else
          draw := p3 - sqrt((1 - u1)*(p3 - p1)*(p3 - p2));
        end if;
      elseif kind == 7 then
        draw := weibullScale*(-log(u1))^(1/p1);
      elseif kind == 8 or kind == 9 then
        // Marsaglia and Tsang's method for each gamma draw (a shape below 1 raised by one
        // and the draw scaled by a uniform one to the power 1/shape); a beta draw is
        // g1/(g1 + g2) of two.
        g1 := 0;
        g2 := 0;
        for j in 1:(if kind == 9 then 2 else 1) loop
          alpha := if j == 1 then p1 else p2;
          d := (if alpha < 1 then alpha + 1 else alpha) - 1/3;
          c := 1/sqrt(9*d);
          accepted := false;
          v := 1;
          while not accepted and draws < budget loop
            x := mod(48271*x, m);
            u1 := x/m;
            x := mod(48271*x, m);
            u2 := x/m;
            z := sqrt(-2*log(u1))*cos(6.283185307179586*u2);
            v := (1 + c*z)^3;
            x := mod(48271*x, m);
            u1 := x/m;
            draws := draws + 3;
            accepted := v > 0 and log(u1) < 0.5*z*z + d - d*v + d*log(max(v, 1e-300));
          end while;
          v := d*max(v, 0);
          if alpha < 1 then
            x := mod(48271*x, m);
            u1 := x/m;
            draws := draws + 1;
            v := v*u1^(1/alpha);
          end if;
          if j == 1 then
            g1 := v;
          else
            g2 := v;
          end if;
        end for;
        draw := if kind == 8 then g1 elseif g1 + g2 > 0 then g1/(g1 + g2) else 0.5;
      elseif kind == 10 then
        // The successes of p2 trials: the inverse of the distribution function.
        limit := floor(p2 + 0.5);
        if p1 <= 0 then
          draw := 0;
        elseif p1 >= 1 then
          draw := limit;
        else
          draw := 0;
          logTerm := limit*log(1 - p1);
          cumulative := exp(logTerm);
          while cumulative < u1 and draw < limit loop
            logTerm := logTerm + log(limit - draw) - log(draw + 1) + log(p1) - log(1 - p1);
            draw := draw + 1;
            cumulative := cumulative + exp(logTerm);
          end while;
        end if;
      elseif kind == 11 then
        // The trials until the p2-th success: p2 plus the failures before it.
        limit := floor(p2 + 0.5);
        draw := 0;
        if p1 < 1 then
          logTerm := limit*log(p1);
          cumulative := exp(logTerm);
          while cumulative < u1 and draw < limit*(1 - p1)/p1 + 50*sqrt(limit*(1 - p1))/p1 + 50 loop
            logTerm := logTerm + log(draw + limit) - log(draw + 1) + log(1 - p1);
            draw := draw + 1;
            cumulative := cumulative + exp(logTerm);
          end while;
        end if;
        draw := limit + draw;
      end if;
      value := shift + stretch*draw;
      found := value >= low and value <= high;
      tries := tries + 1;
    end while;
    if not found then
      value := min(max(value, low), high);
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
