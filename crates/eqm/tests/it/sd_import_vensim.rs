//! Vensim files (`.mdl`) run through the library: stocks given by `INTEG(rate, initial)`,
//! element-wise definitions over elements, subranges and dimensions in any spelling, mapped
//! dimensions and array functions of expressions. Checked against the Euler iterates and the
//! element values computed by hand, not against earlier output.

use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

fn run(name: &str, text: &str) -> SimulationResult {
    let mut session = Session::with_source_bytes(vec![(name.to_string(), text.as_bytes().to_vec())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    model.simulate(&RunSettings::default()).expect("the model runs")
}

/// A Vensim file of `equations` (each `name = value`, Vensim's `~ ~ |` added) with the
/// control variables of a run from 0 to `stop` in steps of `dt`.
fn mdl(equations: &[&str], stop: f64, dt: f64) -> String {
    let mut text = String::from("{UTF-8}\n");
    for e in equations {
        text.push_str(e);
        text.push_str("\n\t~\t\n\t~\t\t|\n\n");
    }
    for control in [
        format!("FINAL TIME = {stop}"),
        "INITIAL TIME = 0".to_string(),
        "SAVEPER = TIME STEP".to_string(),
        format!("TIME STEP = {dt}"),
    ] {
        text.push_str(&control);
        text.push_str("\n\t~\tMonth\n\t~\t\t|\n\n");
    }
    text
}

/// A stock whose definition is its rate (`INTEG`) has no named flows: it integrates the
/// rate. The teacup cools by Euler's recurrence `T(k+1) = T(k) - DT*(T(k) - 70)/10`, so
/// `T(k) = 70 + 110*(1 - DT/10)^k`, and a stock starting at -10 with rate 1 is `-10 + t`.
#[test]
fn a_vensim_stock_integrates_the_rate_of_its_definition() {
    let text = mdl(
        &[
            "Teacup Temperature = INTEG(-Heat Loss to Room, 180)",
            "Heat Loss to Room = (Teacup Temperature - Room Temperature) / Characteristic Time",
            "Room Temperature = 70",
            "Characteristic Time = 10",
            "FlowA = 1",
            "StockA = INTEG(FlowA, -10)",
        ],
        30.0,
        0.125,
    );
    let result = run("teacup.mdl", &text);
    assert_eq!(result.len(), 241, "one row per DT from 0 to 30");
    let temperature = result.column("Teacup Temperature").expect("a column");
    let loss = result.column("Heat Loss to Room").expect("a column");
    let stock = result.column("StockA").expect("a column");
    for k in 0..temperature.len() {
        let expected = 70.0 + 110.0 * (1.0 - 0.125 / 10.0f64).powi(k as i32);
        assert!(
            (temperature[k] - expected).abs() <= 1e-11 * expected,
            "row {k}: {} instead of {expected}",
            temperature[k]
        );
        assert!(
            (loss[k] - (expected - 70.0) / 10.0).abs() <= 1e-11,
            "row {k}: heat loss {}",
            loss[k]
        );
        assert!(
            (stock[k] - (-10.0 + 0.125 * k as f64)).abs() <= 1e-12,
            "row {k}: StockA {}",
            stock[k]
        );
    }
}

/// Element-wise definitions by element and by subrange, references over a dimension spelled
/// otherwise than the variable's (`dima` for `DimA`), over a subrange of it, over a mapped
/// dimension (`DimB -> DimA` pairs `B1` with `A1`), a 2-D array, a sum of a product of arrays
/// and an arrayed `INTEG`: `scaled = (10, 200, 300)`, `mapped = base = (1, 2, 3)`,
/// `grid[Ai, Bj] = 10 i + j`, `total = 1*10 + 2*200 + 3*300 = 1310` and `stock[Ai] = i t`.
#[test]
fn vensim_subscripts_resolve_by_element_through_subranges_and_mappings() {
    let text = mdl(
        &[
            "DimA: A1, A2, A3",
            "SubA: A2, A3",
            "DimB: B1, B2, B3 -> DimA",
            "base[dima] = 1, 2, 3",
            "scaled[A1] = 10",
            "scaled[SubA] = base[suba] * 100",
            "mapped[DimB] = base[DimA]",
            "grid[DimA, DimB] = base[DimA] * 10 + mapped[DimB]",
            "total = SUM(base[DimA!] * scaled[DimA!])",
            "stock[DIMA] = INTEG(base[dima], 0)",
        ],
        4.0,
        0.5,
    );
    let result = run("arrays.mdl", &text);
    let at = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"))[0];
    for (i, expected) in [10.0, 200.0, 300.0].into_iter().enumerate() {
        assert_eq!(at(&format!("scaled[A{}]", i + 1)), expected);
        assert_eq!(at(&format!("mapped[B{}]", i + 1)), (i + 1) as f64);
    }
    for i in 1..=3 {
        for j in 1..=3 {
            assert_eq!(at(&format!("grid[A{i},B{j}]")), (10 * i + j) as f64);
        }
    }
    assert_eq!(at("total"), 1310.0);
    for i in 1..=3 {
        let stock = result.column(&format!("stock[A{i}]")).expect("a column");
        assert_eq!(stock.len(), 9);
        for (k, s) in stock.iter().enumerate() {
            assert!(
                (s - (i as f64) * 0.5 * k as f64).abs() <= 1e-12,
                "stock[A{i}] row {k}: {s}"
            );
        }
    }
}

/// Vensim's test inputs and the forms written out of others, at DT = 0.5 from 0 to 6:
/// `PULSE(2, 1.5)` is 1 at 2, 2.5 and 3; `PULSE(2, 0)` one step at 2; `PULSE TRAIN(1, 0.5,
/// 2, 5)` one step at 1, 3 and 5; `QUANTUM(10, 3)` is 9 and `QUANTUM(10, -3)` 10 (a
/// negative quantum in a quotient); `MODULO(Time, 3) < 2` compares an `if` expression;
/// `GAME(5)` is its input.
#[test]
fn vensim_pulses_quantum_modulo_and_game_follow_their_definitions() {
    let text = mdl(
        &[
            "p = PULSE(2, 1.5)",
            "p0 = PULSE(2, 0)",
            "train = PULSE TRAIN(1, 0.5, 2, 5)",
            "quantum = QUANTUM(10, 3)",
            "quantum negative = QUANTUM(10, -3)",
            "low = IF THEN ELSE(MODULO(Time, 3) < 2, 1, 0)",
            "played = GAME(5)",
        ],
        6.0,
        0.5,
    );
    let result = run("inputs.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (p, p0, train, low) = (column("p"), column("p0"), column("train"), column("low"));
    assert_eq!(p.len(), 13);
    for k in 0..13 {
        let t = 0.5 * k as f64;
        let one = |b: bool| if b { 1.0 } else { 0.0 };
        assert_eq!(p[k], one((2.0..3.5).contains(&t)), "PULSE at {t}");
        assert_eq!(p0[k], one(t == 2.0), "PULSE of width 0 at {t}");
        assert_eq!(train[k], one([1.0, 3.0, 5.0].contains(&t)), "PULSE TRAIN at {t}");
        assert_eq!(low[k], one(t % 3.0 < 2.0), "MODULO at {t}");
    }
    assert_eq!(column("quantum")[0], 9.0);
    assert_eq!(column("quantum negative")[0], 10.0);
    assert_eq!(column("played")[0], 5.0);
}

/// Orders and delay times read once, at the start, with DT = 1: `DELAY FIXED(Time, 1.5, -1)`
/// delays by 2 whole steps; `DELAY FIXED(Time, Time + 0.4, 7)` by 0.4 at the start, at least
/// one step; `SMOOTH N(10, 2, 0, 2 + STEP(1, 5))` has the order 2 of the start, so its stages
/// of time constant 1 = DT pass the input on one step each (0, 0, then 10); `DELAY N(10,
/// 1.5, 0, 3)` falls to one stage (1.5 holds one whole step), whose level follows
/// `L(k+1) = L(k)/3 + 10`, so the output is `10*(1 - 3^-k)`. An order only an array's
/// smooth names is read the same way.
#[test]
fn vensim_delay_times_and_orders_are_read_at_the_start_in_whole_steps() {
    let text = mdl(
        &[
            "input = Time",
            "fixed = DELAY FIXED(input, 1.5, -1)",
            "fixed short = DELAY FIXED(input, Time + 0.4, 7)",
            "order = 2 + STEP(1, 5)",
            "smoothed = SMOOTH N(10, 2, 0, order)",
            "delayed = DELAY N(10, 1.5, 0, 3)",
            "dims: X1, X2",
            "order two = 2 + STEP(1, 5)",
            "smoothed array[dims] = SMOOTH N(10, 2, 0, order two)",
        ],
        8.0,
        1.0,
    );
    let result = run("orders.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (fixed, short, smoothed, delayed) = (
        column("fixed"),
        column("fixed short"),
        column("smoothed"),
        column("delayed"),
    );
    assert_eq!(fixed.len(), 9);
    for k in 0..9 {
        let t = k as f64;
        assert_eq!(fixed[k], if k < 2 { -1.0 } else { t - 2.0 }, "DELAY FIXED at {t}");
        assert_eq!(short[k], if k < 1 { 7.0 } else { t - 1.0 }, "DELAY FIXED of 0.4 at {t}");
        assert_eq!(smoothed[k], if k < 2 { 0.0 } else { 10.0 }, "SMOOTH N at {t}");
        for x in ["X1", "X2"] {
            let array = column(&format!("smoothed array[{x}]"));
            assert_eq!(array[k], smoothed[k], "SMOOTH N of an array at {t}");
        }
        let expected = 10.0 * (1.0 - 3f64.powi(-(k as i32)));
        assert!((delayed[k] - expected).abs() <= 1e-12, "DELAY N at {t}: {}", delayed[k]);
    }
}

/// A Vensim macro whose value is its body's stock keeps one copy of the stock per call:
/// `ACCUM(input, start) = INTEG(input*twice, start)` with `twice = 2` gives `10 + 2t` for
/// `ACCUM(1, 10)`, `6t` for `ACCUM(3, 0)`, and two independent copies add up to `20 + 4t`.
#[test]
fn a_vensim_macro_with_a_stock_keeps_one_copy_per_call() {
    let text = mdl(
        &["a = ACCUM(1, 10)", "b = ACCUM(3, 0)", "c = ACCUM(1, 10) + ACCUM(1, 10)"],
        5.0,
        0.5,
    );
    let text = text.replacen(
        "{UTF-8}\n",
        "{UTF-8}\n:MACRO: ACCUM(input, start)\nACCUM = INTEG(input * twice, start)\n\t~\t\n\t~\t\t|\n\
         twice = 2\n\t~\t\n\t~\t\t|\n:END OF MACRO:\n",
        1,
    );
    let result = run("macro.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (a, b, c) = (column("a"), column("b"), column("c"));
    assert_eq!(a.len(), 11);
    for k in 0..11 {
        let t = 0.5 * k as f64;
        assert!((a[k] - (10.0 + 2.0 * t)).abs() <= 1e-12, "a at {t}: {}", a[k]);
        assert!((b[k] - 6.0 * t).abs() <= 1e-12, "b at {t}: {}", b[k]);
        assert!((c[k] - (20.0 + 4.0 * t)).abs() <= 1e-12, "c at {t}: {}", c[k]);
    }
}

/// `ACTIVE INITIAL(Time, 45)` gives 45 to the initialization only: a stock starting at it
/// with rate 1 is `45 + t` while the value is `t`. `SAMPLE IF TRUE(MODULO(Time, 3) = 0,
/// 10 Time, -1)` holds 0 until 3, then 30 until 6; `SAMPLE IF TRUE(Time > 2, Time, -1)` is
/// the initial -1 until the condition first holds.
#[test]
fn vensim_active_initial_and_sample_if_true_follow_their_definitions() {
    let text = mdl(
        &[
            "Value A = ACTIVE INITIAL(Time, 45)",
            "Stock A = INTEG(1, Value A)",
            "sampled = SAMPLE IF TRUE(MODULO(Time, 3) = 0, Time * 10, -1)",
            "late = SAMPLE IF TRUE(Time > 2, Time, -1)",
        ],
        6.0,
        1.0,
    );
    let result = run("memory.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (value, stock, sampled, late) = (column("Value A"), column("Stock A"), column("sampled"), column("late"));
    assert_eq!(value.len(), 7);
    for k in 0..7 {
        let t = k as f64;
        assert_eq!(value[k], t, "Value A at {t}");
        assert_eq!(stock[k], 45.0 + t, "Stock A at {t}");
        assert_eq!(sampled[k], 30.0 * (k / 3) as f64, "sampled at {t}");
        assert_eq!(late[k], if k > 2 { t } else { -1.0 }, "late at {t}");
    }
}

/// A dimension that occurs twice (`matrix[dim, dim]`) takes the element of each place: the
/// lists `1, 10` and `5, 40` give `matrix[A,B] = 10` and `matrix[B,A] = 5`. An element that
/// no definition covers (`part[B]`) is 0, left out of the results and named by W1002.
#[test]
fn vensim_repeated_dimensions_and_elements_without_definition() {
    let text = mdl(
        &[
            "dim: A, B",
            "matrix[A, dim] = 1, 10",
            "matrix[B, dim] = 5, 40",
            "a2b = matrix[A, B]",
            "b2a = matrix[B, A]",
            "part[A] = 2",
        ],
        1.0,
        1.0,
    );
    let mut session = Session::with_source_bytes(vec![("partial.mdl".to_string(), text.into_bytes())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let diagnostics = session.render_diagnostics(false);
    assert!(
        diagnostics.contains("W1002") && diagnostics.contains("part[B]"),
        "{diagnostics}"
    );
    let result = model.simulate(&RunSettings::default()).expect("the model runs");
    let at = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"))[0];
    assert_eq!(at("a2b"), 10.0);
    assert_eq!(at("b2a"), 5.0);
    assert_eq!(at("matrix[B,B]"), 40.0);
    assert_eq!(at("part[A]"), 2.0);
    assert!(
        result.column("part[B]").is_none(),
        "an element without definition is no result"
    );
}

/// An array of stocks that all start at one number starts each element there, with no
/// initialization system of its own: `Cup[k]` cools with its own time constant `5 + k`, so
/// by Euler's recurrence `T_k(n) = 70 + 110*(1 - DT/(5 + k))^n`, and their mean is the mean of
/// those.
#[test]
fn an_array_of_stocks_starting_at_one_number_starts_each_element_there() {
    let text = mdl(
        &[
            "Cup: (c1-c3)",
            "T[Cup] = INTEG(-(T[Cup] - 70)/Tau[Cup], 180)",
            "Tau[Cup] = 5 + Cup",
            "Mean T = SUM(T[Cup!])/3",
        ],
        2.0,
        0.25,
    );
    let imported = eqm_sd::import(eqm_diag::source::FileId(0), "cups.mdl", &text, eqm_sd::Format::Vensim);
    let eqm_text = imported.text.expect("the file imports");
    assert!(eqm_text.contains("(each start = 180, each fixed = true)"), "{eqm_text}");
    assert!(!eqm_text.contains("initial equation"), "{eqm_text}");
    let result = run("cups.mdl", &text);
    let steps = 8;
    let expected: Vec<f64> = (1..=3)
        .map(|k| 70.0 + 110.0 * (1.0 - 0.25 / (5.0 + k as f64)).powi(steps))
        .collect();
    for (k, want) in expected.iter().enumerate() {
        let column = result.column(&format!("T[c{}]", k + 1)).expect("a column per element");
        let got = *column.last().expect("rows");
        assert!((got - want).abs() <= 1e-12 * want, "T[c{}] = {got}, not {want}", k + 1);
    }
    let mean = *result.column("Mean T").expect("a column").last().expect("rows");
    let want = expected.iter().sum::<f64>() / 3.0;
    assert!((mean - want).abs() <= 1e-12 * want, "{mean} vs {want}");
}

/// Vensim's `:NA:` is the finite value -2^109: a variable that takes it holds it exactly from
/// `Time > 5` on (DT = 1), and the test `v = :NA:` finds it there.
#[test]
fn vensim_na_is_a_finite_value_that_a_test_finds() {
    let text = mdl(
        &[
            "v = IF THEN ELSE(Time > 5, :NA:, Time)",
            "missing = IF THEN ELSE(v = :NA:, 1, 0)",
        ],
        10.0,
        1.0,
    );
    let result = run("na.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (v, missing) = (column("v"), column("missing"));
    assert_eq!(v.len(), 11);
    let na = -(2.0f64.powi(109));
    for k in 0..11 {
        let t = k as f64;
        assert_eq!(v[k], if t > 5.0 { na } else { t }, "v at {t}");
        assert_eq!(missing[k], if t > 5.0 { 1.0 } else { 0.0 }, "the test at {t}");
    }
}

/// Each element of an arrayed lookup table is a table of its own: `t[A]` is the line through
/// (0,0) and (10,10), so `y[A] = Time`; `t[B]`'s points, written out of order, are (0,5),
/// (1,3), (2,1), so `y[B] = 5 - 2 Time` up to 2 and 1 after it (the last value held);
/// `z = t[B](0.5) = 4`. `GET TIME VALUE(0, offset, 0)` is `Time + offset` (the dimension's
/// element number in the offset: 1, 2, 3).
#[test]
fn vensim_arrayed_lookup_tables_and_get_time_value() {
    let text = mdl(
        &[
            "d: A, B",
            "t[A]((0,0),(10,10))",
            "t[B]((2,1),(0,5),(1,3))",
            "y[d] = t[d](Time)",
            "z = t[B](0.5)",
            "e: E1, E2, E3",
            "g[e] = GET TIME VALUE(0, (e - 2) * 10, 0)",
        ],
        3.0,
        0.5,
    );
    let result = run("lookups.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let (ya, yb, z) = (column("y[A]"), column("y[B]"), column("z"));
    assert_eq!(ya.len(), 7);
    for k in 0..7 {
        let t = 0.5 * k as f64;
        assert!((ya[k] - t).abs() <= 1e-12, "y[A] at {t}: {}", ya[k]);
        let expected = if t <= 2.0 { 5.0 - 2.0 * t } else { 1.0 };
        assert!((yb[k] - expected).abs() <= 1e-12, "y[B] at {t}: {}", yb[k]);
        assert!((z[k] - 4.0).abs() <= 1e-12, "z at {t}: {}", z[k]);
        for (i, element) in ["E1", "E2", "E3"].into_iter().enumerate() {
            let g = column(&format!("g[{element}]"))[k];
            let expected = t + (i as f64 - 1.0) * 10.0;
            assert!((g - expected).abs() <= 1e-12, "g[{element}] at {t}: {g}");
        }
    }
}

/// Vensim's `DELAY N` of a delay time that changes: the `k`-th stage drains at the delay time
/// of `k - 1` steps before. With DT = 1, order 2, input `Time`, initial value 1 and delay time
/// `T(t) = 2 + STEP(2, 3)`, the stages start at `1*T(0)/2 = 1` and follow Euler's recurrence
/// `L1 += t - L1/(T(t)/2)`, `L2 += L1/(T(t)/2) - L2/(T(t-1)/2)` (`T(-1) = T(0)`), the output
/// being `L2/(T(t-1)/2)`; a stage drained at the present delay time would differ from `t = 3`.
#[test]
fn vensim_delay_n_stages_keep_the_delay_time_they_were_given() {
    let text = mdl(
        &[
            "delay time = 2 + STEP(2, 3)",
            "delayed = DELAY N(Time, delay time, 1, 2)",
        ],
        10.0,
        1.0,
    );
    let result = run("delay_n.mdl", &text);
    let delayed = result.column("delayed").expect("a column");
    assert_eq!(delayed.len(), 11);
    let time_at = |t: f64| if t >= 3.0 { 4.0 } else { 2.0 };
    let (mut l1, mut l2) = (1.0, 1.0);
    for (k, got) in delayed.iter().enumerate() {
        let t = k as f64;
        let (now, before) = (time_at(t), time_at((t - 1.0).max(0.0)));
        let out1 = l1 / (now / 2.0);
        let out2 = l2 / (before / 2.0);
        assert!((got - out2).abs() <= 1e-12, "DELAY N at {t}: {got} instead of {out2}");
        l1 += t - out1;
        l2 += out1 - out2;
    }
}

/// `INVERT MATRIX`: the inverse of `[4, 7; 2, 6]` is `[6, -7; -2, 4]/10`; the inverse of each
/// 3 by 3 matrix `m3[s]` times the matrix is the identity; a matrix that changes,
/// `[Time + 2, 1; 1, 1]` of determinant `Time + 1`, has the inverse `[1, -1; -1, Time + 2]/(Time + 1)`.
#[test]
fn vensim_invert_matrix_gives_the_inverse_of_each_matrix() {
    let text = mdl(
        &[
            "d: A, B",
            "d1: A, B",
            "r: h, m, l",
            "c: h, m, l",
            "s: S1, S2",
            "m[d, d1] = 4, 7; 2, 6;",
            "inverse[d, d1] = INVERT MATRIX(m[d, d1], 2)",
            "m3[S1, r, c] = 3, 0, 2; 2, 0, -2; 0, 1, 1;",
            "m3[S2, r, c] = 1, 0, 5; 2, 1, 5; 3, 4, 0;",
            "inverse3[s, r, c] = INVERT MATRIX(m3[s, r, c], 3)",
            "tm[A, A] = Time + 2",
            "tm[A, B] = 1",
            "tm[B, A] = 1",
            "tm[B, B] = 1",
            "inverse time[d, d1] = INVERT MATRIX(tm[d, d1], 2)",
        ],
        2.0,
        0.5,
    );
    let result = run("invert.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    for (element, expected) in [("A,A", 0.6), ("A,B", -0.7), ("B,A", -0.2), ("B,B", 0.4)] {
        let got = column(&format!("inverse[{element}]"))[0];
        assert!((got - expected).abs() <= 1e-12, "inverse[{element}]: {got}");
    }
    let names = ["h", "m", "l"];
    for s in ["S1", "S2"] {
        for (p, row) in names.iter().enumerate() {
            for (q, col) in names.iter().enumerate() {
                let product: f64 = names
                    .iter()
                    .map(|k| column(&format!("m3[{s},{row},{k}]"))[0] * column(&format!("inverse3[{s},{k},{col}]"))[0])
                    .sum();
                let identity = if p == q { 1.0 } else { 0.0 };
                assert!(
                    (product - identity).abs() <= 1e-12,
                    "{s}: (M M^-1)[{row},{col}] = {product}"
                );
            }
        }
    }
    let times = result.time().to_vec();
    for (element, numerator) in [("A,A", 1.0), ("A,B", -1.0), ("B,A", -1.0)] {
        for (k, got) in column(&format!("inverse time[{element}]")).iter().enumerate() {
            let expected = numerator / (times[k] + 1.0);
            assert!(
                (got - expected).abs() <= 1e-12,
                "inverse time[{element}] at {}: {got}",
                times[k]
            );
        }
    }
    for (k, got) in column("inverse time[B,B]").iter().enumerate() {
        let expected = (times[k] + 2.0) / (times[k] + 1.0);
        assert!(
            (got - expected).abs() <= 1e-12,
            "inverse time[B,B] at {}: {got}",
            times[k]
        );
    }
}

/// `VECTOR SELECT` over `sel = (1, 0, 2)` and `x = (3, 5, 4)` selects A and C: the weighted
/// sum 1*3 + 2*4 = 11, product 3*8 = 24, minimum 3, maximum 8, mean 5.5, the product of
/// `x^sel` 3*16 = 48, and unweighted sum 7, product 12, minimum 3, maximum 4, mean 3.5 (actions
/// 0 to 10, chosen by `Time` during the run with DT = 1); nothing selected gives the missing
/// value -1; a selection over two dimensions reduces the `!` one for each element of the other.
#[test]
fn vensim_vector_select_reduces_the_selected_elements() {
    let text = mdl(
        &[
            "d: A, B, C",
            "e: E1, E2",
            "sel[d] = 1, 0, 2",
            "x[d] = 3, 5, 4",
            "zeros[d] = 0, 0, 0",
            "m[d, e] = 1, 0; 0, 1; 1, 1;",
            "by action = VECTOR SELECT(sel[d!], x[d!], -1, Time, 0)",
            "weighted max = VECTOR SELECT(sel[d!], x[d!], -1, 3, 0)",
            "none = VECTOR SELECT(zeros[d!], x[d!], -1, 0, 0)",
            "per column[e] = VECTOR SELECT(m[d!, e], x[d!], -1, 6, 0)",
        ],
        10.0,
        1.0,
    );
    let result = run("vector_select.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let expected = [11.0, 24.0, 3.0, 8.0, 5.5, 48.0, 7.0, 12.0, 3.0, 4.0, 3.5];
    let by_action = column("by action");
    assert_eq!(by_action.len(), 11);
    for (k, want) in expected.iter().enumerate() {
        assert_eq!(by_action[k], *want, "action {k}");
    }
    assert_eq!(column("weighted max")[0], 8.0);
    assert_eq!(column("none")[0], -1.0);
    assert_eq!(column("per column[E1]")[0], 7.0);
    assert_eq!(column("per column[E2]")[0], 9.0);
}

/// `VECTOR SELECT` over `d!` in an equation over `d` runs over every element of `d`, while a
/// plain `d` beside it names the element being defined; the `!` dimensions of the two
/// arguments together span the elements reduced. With `s = (1, 2)`, `x = (3, 5)` and the
/// columns of `m` (1, 0, 0) and (0, 1, 1): `y[d]` is `1*3 + 2*5 = 13` for both elements, `z[A]`
/// selects row E1 with both elements of `x` (8) and `z[B]` rows E2 and E3 with them (16), and
/// `w[d] = (1 + 2)*x[d]` is (9, 15).
#[test]
fn vensim_vector_select_over_a_dimension_of_its_equation_runs_over_all_of_it() {
    let text = mdl(
        &[
            "d: A, B",
            "e: E1, E2, E3",
            "s[d] = 1, 2",
            "x[d] = 3, 5",
            "m[e, d] = 1, 0; 0, 1; 0, 1;",
            "y[d] = VECTOR SELECT(s[d!], x[d!], 0, 0, 0)",
            "z[d] = VECTOR SELECT(m[e!, d], x[d!], -1, 0, 0)",
            "w[d] = VECTOR SELECT(s[d!], x[d], -1, 0, 0)",
        ],
        1.0,
        1.0,
    );
    let result = run("vs.mdl", &text);
    let value = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"))[0];
    for (name, want) in [
        ("y[A]", 13.0),
        ("y[B]", 13.0),
        ("z[A]", 8.0),
        ("z[B]", 16.0),
        ("w[A]", 9.0),
        ("w[B]", 15.0),
    ] {
        assert_eq!(value(name), want, "{name}");
    }
}

/// `ALLOCATE BY PRIORITY` of requests (10, 6, 3) at priorities (2, 4, 3) with width 3: each
/// priority spread over a band 3 wide, the supply `Time` (DT = 1) fills the highest bands
/// first. By hand, with `L` the level where the shares sum to the supply: up to 2 only B is
/// served; at 3, `L = 25/6` gives B 8/3 and C 1/3; at 8, `L = 115/38` gives (30, 94, 28)/19;
/// at 12 B is full and `L = 61/26` gives A 50/13 and C 28/13; from 19 on every request is
/// filled. A second group (`r`) with the supply 8 throughout shares its own helper.
#[test]
fn vensim_allocate_by_priority_fills_the_highest_bands_first() {
    let text = mdl(
        &[
            "d: A, B, C",
            "r: R1, R2",
            "request[d] = 10, 6, 3",
            "priority[d] = 2, 4, 3",
            "supply[R1] = Time ~~|\nsupply[R2] = 8",
            "allocation[d] = ALLOCATE BY PRIORITY(request[d], priority[d], ELMCOUNT(d), 3, Time)",
            "by group[r, d] = ALLOCATE BY PRIORITY(request[d], priority[d], 3, 3, supply[r])",
        ],
        20.0,
        1.0,
    );
    let result = run("allocate.mdl", &text);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"));
    let expected: [(usize, [f64; 3]); 7] = [
        (0, [0.0, 0.0, 0.0]),
        (1, [0.0, 1.0, 0.0]),
        (3, [0.0, 8.0 / 3.0, 1.0 / 3.0]),
        (8, [30.0 / 19.0, 94.0 / 19.0, 28.0 / 19.0]),
        (12, [50.0 / 13.0, 6.0, 28.0 / 13.0]),
        (19, [10.0, 6.0, 3.0]),
        (20, [10.0, 6.0, 3.0]),
    ];
    for (t, want) in expected {
        for (e, name) in ["A", "B", "C"].iter().enumerate() {
            let got = column(&format!("allocation[{name}]"))[t];
            assert!(
                (got - want[e]).abs() <= 1e-12,
                "allocation[{name}] at {t}: {got}, not {}",
                want[e]
            );
            let got = column(&format!("by group[R1,{name}]"))[t];
            assert!((got - want[e]).abs() <= 1e-12, "by group[R1,{name}] at {t}: {got}");
            let got = column(&format!("by group[R2,{name}]"))[t];
            let at_8 = [30.0 / 19.0, 94.0 / 19.0, 28.0 / 19.0][e];
            assert!((got - at_8).abs() <= 1e-12, "by group[R2,{name}] at {t}: {got}");
        }
    }
}

/// `ALLOCATE BY PRIORITY` of a size other than the requesters' number is `E1006`; a negative
/// request stops the run, as Vensim refuses it.
#[test]
fn vensim_allocate_by_priority_refuses_a_wrong_size_and_a_negative_request() {
    let wrong = mdl(
        &[
            "d: A, B",
            "request[d] = 1, 2",
            "a[d] = ALLOCATE BY PRIORITY(request[d], request[d], 3, 1, 1)",
        ],
        1.0,
        1.0,
    );
    let mut session = Session::with_source_bytes(vec![("size.mdl".to_string(), wrong.into_bytes())], &[], None);
    assert!(session.compile(None, &ModelOptions::default()).is_none());
    assert!(
        session.diagnostics().iter().any(|d| d.code == "E1006"),
        "{}",
        session.render_diagnostics(false)
    );
    let negative = mdl(
        &[
            "d: A, B",
            "request[A] = 1 ~~|\nrequest[B] = 2 - Time",
            "a[d] = ALLOCATE BY PRIORITY(request[d], request[d], 2, 1, 1)",
        ],
        4.0,
        1.0,
    );
    let mut session = Session::with_source_bytes(vec![("negative.mdl".to_string(), negative.into_bytes())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let error = model
        .simulate(&RunSettings::default())
        .expect_err("a negative request stops the run");
    assert!(error.to_string().contains("a request is negative"), "{error}");
}

/// `ALLOCATE AVAILABLE` by the priority profiles (type, priority, width, extra), each worked
/// by hand at the level where the shares sum to the supply: rectangular bands as
/// `ALLOCATE BY PRIORITY` ((30, 94, 28)/19 of 8); triangular bands [0, 4] and [2, 4] share
/// `2*10*((4 - L)/4)^2 + 2*6*((4 - L)/2)^2 = 4.25*(4 - L)^2`, so a supply of 1.0625 puts L at
/// 3.5 and gives (0.3125, 0.75); Laplace profiles of scales 1 and 2 at priority 0 share
/// `5*exp(-L) + 5*exp(-L/2)`, so 3.75 puts L at 2*ln(2) and gives (1.25, 2.5); normal
/// profiles at priorities 0 and 1 of deviation 1 meet at L = 0.5 for a supply of 10, giving
/// `5*erfc(0.5/sqrt(2))` and the rest, with Vensim's `erfc` (Abramowitz and Stegun 7.1.25).
#[test]
fn vensim_allocate_available_shares_by_the_priority_profiles() {
    let text = mdl(
        &[
            "d: A, B",
            "e: A3, B3, C3",
            "pprofile: ptype, ppriority, pwidth, pextra",
            "rect[e, pprofile] = 1, 2, 3, 0; 1, 4, 3, 0; 1, 3, 3, 0;",
            "req rect[e] = 10, 6, 3",
            "alloc rect[e] = ALLOCATE AVAILABLE(req rect[e], rect[e, ptype], 8)",
            "tri[d, pprofile] = 2, 2, 4, 0; 2, 3, 2, 0;",
            "req tri[d] = 10, 6",
            "alloc tri[d] = ALLOCATE AVAILABLE(req tri[d], tri[d, ptype], 1.0625)",
            "laplace[d, pprofile] = 4, 0, 1, 0; 4, 0, 2, 0;",
            "req laplace[d] = 10, 10",
            "alloc laplace[d] = ALLOCATE AVAILABLE(req laplace[d], laplace[d, ptype], 3.75)",
            "normal[d, pprofile] = 3, 0, 1, 0; 3, 1, 1, 0;",
            "req normal[d] = 10, 10",
            "alloc normal[d] = ALLOCATE AVAILABLE(req normal[d], normal[d, ptype], 10)",
        ],
        1.0,
        1.0,
    );
    let result = run("allocate_available.mdl", &text);
    let value = |name: &str| result.column(name).unwrap_or_else(|| panic!("a column {name}"))[0];
    let x = 0.5 / 2f64.sqrt();
    let t = 1.0 / (1.0 + 0.47047 * x);
    let erfc = (0.3480242 * t - 0.0958798 * t * t + 0.7478556 * t * t * t) * (-x * x).exp();
    for (name, want) in [
        ("alloc rect[A3]", 30.0 / 19.0),
        ("alloc rect[B3]", 94.0 / 19.0),
        ("alloc rect[C3]", 28.0 / 19.0),
        ("alloc tri[A]", 0.3125),
        ("alloc tri[B]", 0.75),
        ("alloc laplace[A]", 1.25),
        ("alloc laplace[B]", 2.5),
        ("alloc normal[A]", 5.0 * erfc),
        ("alloc normal[B]", 10.0 - 5.0 * erfc),
    ] {
        let got = value(name);
        assert!((got - want).abs() <= 1e-12, "{name}: {got}, not {want}");
    }
}

/// A priority profile of a type other than 1 to 4 stops the run with a message naming the
/// supported ones.
#[test]
fn vensim_allocate_available_stops_at_an_unsupported_profile() {
    let text = mdl(
        &[
            "d: A, B",
            "pprofile: ptype, ppriority, pwidth, pextra",
            "fixed[d, pprofile] = 0, 1, 1, 0; 1, 2, 1, 0;",
            "req[d] = 3, 4",
            "alloc[d] = ALLOCATE AVAILABLE(req[d], fixed[d, ptype], 5)",
        ],
        1.0,
        1.0,
    );
    let mut session = Session::with_source_bytes(vec![("fixed.mdl".to_string(), text.into_bytes())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let error = model
        .simulate(&RunSettings::default())
        .expect_err("profile 0 stops the run");
    assert!(
        format!("{error:?}").contains("only the priority profiles 1 to 4"),
        "{error:?}"
    );
}

/// A `FINAL TIME` that depends on `Time` is read at every step, and the run ends at the
/// first step whose time has reached it: with DT = 0.25, `x = 2*Time` passes 3 after 1.5, so
/// `FINAL TIME` becomes `Time` at 1.75, the last row (a stock of rate 1 from 0 is 1.75 there);
/// before, it is 20, the run's planned stop. A `FINAL TIME` that rises beyond its value at
/// the start stops the run at that value with a message rather than ending it early.
#[test]
fn a_vensim_final_time_that_changes_ends_the_run_where_the_time_reaches_it() {
    let text = mdl(&["x = 2*Time", "s = INTEG(1, 0)"], 20.0, 0.25)
        .replace("FINAL TIME = 20", "FINAL TIME = IF THEN ELSE(x > 3, Time, 20)");
    let result = run("final.mdl", &text);
    let time = result.time();
    let stock = result.column("s").expect("a column");
    let last = *time.last().expect("rows");
    assert_eq!(last, 1.75, "the run ends at the first step past x = 3");
    assert_eq!(*stock.last().expect("rows"), 1.75);
    // The check at each step is an event, so a step's row may come twice (before and after
    // it), with the same values: the distinct times are the steps.
    let mut times = time.to_vec();
    times.dedup();
    assert_eq!(times, [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]);
    for (t, s) in time.iter().zip(&stock) {
        assert_eq!(s, t, "the stock of rate 1 from 0 at {t}");
    }
    let final_time = result.column("FINAL TIME").expect("a column");
    assert_eq!(final_time[0], 20.0);
    assert_eq!(*final_time.last().expect("rows"), 1.75);

    let rising =
        mdl(&["x = Time"], 10.0, 1.0).replace("FINAL TIME = 10", "FINAL TIME = IF THEN ELSE(Time < 5, 10, 50)");
    let mut session = Session::with_source_bytes(vec![("rising.mdl".to_string(), rising.into_bytes())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let error = model
        .simulate(&RunSettings::default())
        .expect_err("a FINAL TIME beyond the planned stop stops the run");
    assert!(error.to_string().contains("FINAL TIME lies beyond"), "{error}");
}

/// `VECTOR SORT ORDER`, `VECTOR RANK` and `VECTOR REORDER` over the last dimension of their
/// vector, by hand: `v = (3, -1, 4, 1)` sorted ascending is B, D, A, C, so its sort order is
/// the 0-based places (1, 3, 0, 2) and its ranks (3, 1, 4, 2); descending (2, 0, 3, 1) and
/// (2, 4, 1, 3); reordered by the ascending order it is (-1, 1, 3, 4). Equal values keep the
/// order of their elements: `w = (2, 1, 2, 1)` ranks (3, 1, 4, 2). Each row of a matrix is a
/// vector of its own, and the values are those of each step: `y = v*(1 - 2*Time)` is `-v` at
/// 1, whose ascending ranks are the descending ranks of `v`. A mapped dimension (`sd -> dim`)
/// names the places too.
#[test]
fn vensim_vector_sort_order_rank_and_reorder_follow_their_definitions() {
    let text = mdl(
        &[
            "dim: A, B, C, D",
            "sd: s1, s2, s3, s4 -> dim",
            "r: R1, R2",
            "v[dim] = 3, -1, 4, 1",
            "w[dim] = 2, 1, 2, 1",
            "m[r, dim] = 3, -1, 4, 1; 1, 2, 3, 4",
            "y[dim] = v[dim]*(1 - 2*Time)",
            "order[sd] = VECTOR SORT ORDER(v[dim], 1)",
            "order down[dim] = VECTOR SORT ORDER(v[dim], 0)",
            "rank[dim] = VECTOR RANK(v[dim], 1)",
            "rank down[dim] = VECTOR RANK(v[dim], 0)",
            "tied[dim] = VECTOR RANK(w[dim], 1)",
            "sorted[sd] = VECTOR REORDER(v[dim], order[sd])",
            "rows[r, dim] = VECTOR RANK(m[r, dim], 0)",
            "moving[dim] = VECTOR RANK(y[dim], 1)",
        ],
        1.0,
        1.0,
    );
    let result = run("order.mdl", &text);
    let at = |name: &str, row: usize| result.column(name).unwrap_or_else(|| panic!("no column {name}"))[row];
    let expect = |name: &str, elements: &[&str], values: &[f64], row: usize| {
        for (e, v) in elements.iter().zip(values) {
            let column = format!("{name}[{e}]");
            assert_eq!(at(&column, row), *v, "{column} at row {row}");
        }
    };
    let d = ["A", "B", "C", "D"];
    let sd = ["s1", "s2", "s3", "s4"];
    expect("order", &sd, &[1.0, 3.0, 0.0, 2.0], 0);
    expect("order down", &d, &[2.0, 0.0, 3.0, 1.0], 0);
    expect("rank", &d, &[3.0, 1.0, 4.0, 2.0], 0);
    expect("rank down", &d, &[2.0, 4.0, 1.0, 3.0], 0);
    expect("tied", &d, &[3.0, 1.0, 4.0, 2.0], 0);
    expect("sorted", &sd, &[-1.0, 1.0, 3.0, 4.0], 0);
    expect("rows", &["R1,A", "R1,B", "R1,C", "R1,D"], &[2.0, 4.0, 1.0, 3.0], 0);
    expect("rows", &["R2,A", "R2,B", "R2,C", "R2,D"], &[4.0, 3.0, 2.0, 1.0], 0);
    expect("moving", &d, &[3.0, 1.0, 4.0, 2.0], 0);
    let last = result.len() - 1;
    assert_eq!(result.time()[last], 1.0);
    expect("moving", &d, &[2.0, 4.0, 1.0, 3.0], last);

    // A direction other than the number 1 or 0, a vector that is an expression, and one whose
    // last subscript is an element, are named.
    for equation in [
        "bad[dim] = VECTOR RANK(v[dim], 2)",
        "bad[dim] = VECTOR RANK(v[dim] + 1, 1)",
        "bad[dim] = VECTOR RANK(v[A], 1)",
    ] {
        let text = mdl(&["dim: A, B", "v[dim] = 1, 2", equation], 1.0, 1.0);
        let mut session = Session::with_source_bytes(vec![("bad.mdl".to_string(), text.into_bytes())], &[], None);
        assert!(session.compile(None, &ModelOptions::default()).is_none(), "{equation}");
        let rendered = session.render_diagnostics(false);
        assert!(
            session.diagnostics().iter().any(|d| d.code == "E1002") && rendered.contains("VECTOR RANK"),
            "{equation}: {rendered}"
        );
    }
}

/// A data variable read `:RAW:` has the value of its data at the data's times and Vensim's
/// `:NA:` (-2^109) at every other time: data at 0, 2 and 3 read with DT = 1 from 0 to 4, and
/// data at 0.3 and 0.7 read with DT = 0.1, whose steps are sums of binary fractions.
#[test]
fn vensim_raw_data_is_na_between_the_times_of_the_data() {
    let run_raw = |csv: &'static [u8], stop: f64, dt: f64| {
        let text = mdl(&["x :RAW: := GET DIRECT DATA('series.csv', ',', 'A', 'B2')"], stop, dt);
        let reader = move |path: &std::path::Path| {
            if path.file_name().is_some_and(|n| n == "series.csv") {
                Ok(csv.to_vec())
            } else {
                Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
            }
        };
        let mut session = Session::with_libraries_reading_data(
            Vec::new(),
            vec![("raw.mdl".to_string(), text.into_bytes())],
            &[],
            None,
            Some(std::sync::Arc::new(reader)),
            None,
        );
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        model.simulate(&RunSettings::default()).expect("the model runs")
    };
    let na = -(2.0f64.powi(109));
    let result = run_raw(b"time,x\n0,10\n2,20\n3,30\n", 4.0, 1.0);
    assert_eq!(result.time(), [0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(result.column("x").expect("a column"), [10.0, na, 20.0, 30.0, na]);
    // The decimal times of the data meet the steps of DT = 0.1, whose sums are binary.
    let result = run_raw(b"time,x\n0.3,3\n0.7,7\n", 1.0, 0.1);
    let x = result.column("x").expect("a column");
    for (k, value) in x.iter().enumerate() {
        let expected = match k {
            3 => 3.0,
            7 => 7.0,
            _ => na,
        };
        assert_eq!(*value, expected, "step {k}");
    }
}
