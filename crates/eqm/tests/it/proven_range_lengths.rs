//! Ranges whose bounds are computed during the run but whose number of elements is not
//! (`u[i - 1:i]` has 2 elements whatever `i` is): passed whole to a function from a model
//! equation, from a function body and from a loop over a range computed during the run, and
//! used as the state of a small random number generator updated in a when-clause. Every value
//! is derived by hand from the model's text, and each model runs with both back ends, which must
//! agree bit for bit. A subscript that such a range moves outside its array stops the run.

use crate::subscripts::{at, failure, run_both};

/// `k` is 2 until the sample at t = 1, then 3, then 4 from t = 2.
const PAIRS: &str = "
function weigh \"u[1] + 10 u[2]\"
  input Real u[2];
  output Real y;
algorithm
  y := u[1] + 10*u[2];
end weigh;

function pairAt \"weigh(v[k - 1:k]), the slice taken inside a function\"
  input Real v[:];
  input Integer k;
  output Real y;
algorithm
  y := weigh(v[k - 1:k]);
end pairAt;

function chain \"the sum of weigh(w[i - 1:i]) for i in 2:n, w = {1, ..., n}\"
  input Integer n;
  output Real s;
protected
  Real w[n];
  Integer m \"n, as a local: the bounds of the loops are computed during the run\";
algorithm
  m := n;
  for i in 1:m loop
    w[i] := i;
  end for;
  s := 0;
  for i in 2:m loop
    s := s + weigh(w[i - 1:i]);
  end for;
end chain;

model Pairs
  parameter Real v[4] = {1, 2, 3, 4};
  discrete Integer k(start = 2, fixed = true);
  Real y \"from a model equation\";
  Real z \"from a function body\";
  Real c \"from a loop of a function whose size is its input\";
  Real d \"a descending range of 2 elements\";
  parameter Integer p = 2;
  Real e \"a range of p elements\";
equation
  when sample(1, 1) then
    k = pre(k) + 1;
  end when;
  y = time*weigh(v[k - 1:k]);
  z = pairAt(v, k);
  c = chain(4);
  d = weigh(v[k:-1:k - 1]);
  e = weigh(v[k - p + 1:k]);
end Pairs;
";

#[test]
fn a_range_of_run_time_bounds_and_constant_length_is_passed_whole_to_a_function() {
    let r = run_both(PAIRS, 2.5);
    let v = [1.0, 2.0, 3.0, 4.0];
    for (t, k) in [(0.5, 2usize), (1.5, 3), (2.5, 4)] {
        assert_eq!(at(&r, "k", t), k as f64);
        let weigh = v[k - 2] + 10.0 * v[k - 1];
        assert_eq!(at(&r, "y", t), t * weigh, "y at {t}");
        assert_eq!(at(&r, "z", t), weigh, "z at {t}");
        assert_eq!(at(&r, "d", t), v[k - 1] + 10.0 * v[k - 2], "d at {t}");
        assert_eq!(at(&r, "e", t), weigh, "e at {t}");
    }
    // By hand: (1 + 20) + (2 + 30) + (3 + 40) = 96.
    assert_eq!(at(&r, "c", 1.5), 96.0);
    // `p` gives the size of `v[k - p + 1:k]`: a new value needs the model flattened again.
    let model = crate::compile(PAIRS);
    let p = model.parameters().into_iter().find(|p| p.name == "p").expect("p");
    assert!(p.structural, "p sizes a range, so it is structural");
}

/// `k` reaches 5 at t = 3, where `v[k - 1:k]` selects past the end of `v`.
const PAST_THE_END: &str = "
function weigh
  input Real u[2];
  output Real y;
algorithm
  y := u[1] + 10*u[2];
end weigh;

model PastTheEnd
  parameter Real v[4] = {1, 2, 3, 4};
  discrete Integer k(start = 2, fixed = true);
  Real y;
equation
  when sample(1, 1) then
    k = pre(k) + 1;
  end when;
  y = weigh(v[k - 1:k]);
end PastTheEnd;
";

#[test]
fn a_range_of_constant_length_that_leaves_its_array_stops_the_run() {
    for interpreter in [false, true] {
        let (time, d) = failure(PAST_THE_END, 4.0, interpreter);
        assert!((time - 3.0).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(d.message.contains("is 5, outside 1..4"), "{}", d.message);
    }
}

/// A generator in the style of the xorshift ones: its state is a pair of Integers, each step
/// makes a new pair and a number in (0, 1). The longer initial state is filled pair by pair in a
/// loop whose bounds are computed during the run, each pair from the previous one.
const GENERATOR: &str = "
function step \"the next state {s1 + s2, 7 s1 + 3 s2 + 1} (mod 101) and its number\"
  input Integer s[2];
  output Real r;
  output Integer next[2];
algorithm
  next := {mod(s[1] + s[2], 101), mod(7*s[1] + 3*s[2] + 1, 101)};
  r := next[2]/101;
end step;

function initialState \"n states from the seed, two by two\"
  input Integer seed;
  input Integer n;
  output Integer state[n];
protected
  Real r;
  Integer aux[2];
  Integer nEven;
algorithm
  state[1:2] := {seed, seed + 1};
  nEven := 2*div(n, 2);
  for i in 3:2:nEven loop
    (r, aux) := step(state[i - 2:i - 1]);
    state[i:i + 1] := aux;
  end for;
  if n >= 3 and n <> nEven then
    (r, aux) := step(state[n - 2:n - 1]);
    state[n] := aux[1];
  end if;
end initialState;

model Generator
  discrete Integer table[5](each start = 0, each fixed = true);
  discrete Integer state[2](each start = 0, each fixed = true);
  discrete Integer k(start = 1, fixed = true);
  discrete Real r(start = 0, fixed = true);
  discrete Real q(start = 0, fixed = true);
  discrete Integer pair[2](each start = 0, each fixed = true);
algorithm
  when initial() then
    table := initialState(4, 5);
    state := table[1:2];
  elsewhen sample(0.5, 0.5) then
    (r, state) := step(pre(state));
    k := mod(pre(k), 4) + 1;
    (q, pair) := step(table[k:k + 1]);
  end when;
end Generator;
";

/// The generator's step, written again from its definition.
fn step(s: [i64; 2]) -> (f64, [i64; 2]) {
    let next = [(s[0] + s[1]) % 101, (7 * s[0] + 3 * s[1] + 1) % 101];
    (next[1] as f64 / 101.0, next)
}

#[test]
fn a_generator_state_updated_in_a_when_clause_gives_the_hand_computed_numbers() {
    let r = run_both(GENERATOR, 3.5);
    // By hand: {4, 5}; step({4, 5}) = {9, 44}; step({9, 44}) = {53, 196 mod 101 = 95}, whose
    // first element ends the odd-sized state.
    let table = [4, 5, 9, 44, 53];
    for (i, &x) in table.iter().enumerate() {
        assert_eq!(at(&r, &format!("table[{}]", i + 1), 0.25), x as f64, "table[{}]", i + 1);
    }
    assert_eq!((at(&r, "state[1]", 0.25), at(&r, "state[2]", 0.25)), (4.0, 5.0));
    // The first sample: step({4, 5}) = {9, 44}, r = 44/101.
    assert_eq!(at(&r, "r", 0.75), 44.0 / 101.0);
    let mut state = [4, 5];
    let mut k = 1;
    for event in 1..=6 {
        let t = 0.5 * event as f64 + 0.25;
        let (number, next) = step(state);
        state = next;
        k = k % 4 + 1;
        let (q, pair) = step([table[k - 1], table[k]]);
        assert_eq!(at(&r, "r", t), number, "r at {t}");
        assert_eq!(
            [at(&r, "state[1]", t), at(&r, "state[2]", t)],
            state.map(|x| x as f64),
            "state at {t}"
        );
        assert_eq!(at(&r, "k", t), k as f64, "k at {t}");
        assert_eq!(at(&r, "q", t), q, "q at {t}");
        assert_eq!(
            [at(&r, "pair[1]", t), at(&r, "pair[2]", t)],
            pair.map(|x| x as f64),
            "pair at {t}"
        );
    }
}
