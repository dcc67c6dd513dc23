//! Rates at the bounds, discrete reservoirs and the runs that must stop because a reservoir
//! would lose or invent material.

use super::*;

/// The decision table of `constrainedRate`, in the order its rows are checked: the rate for a
/// wanted rate `w`, the causalities and data of the upstream and the downstream reservoir.
fn decision(w: f64, in_info: usize, in_data: f64, out_info: usize, out_data: f64) -> f64 {
    const FIXED: usize = 2;
    const CAPPED: usize = 3;
    match (in_info, out_info) {
        (FIXED, _) => in_data,
        (CAPPED, CAPPED) => w.min(in_data).min(out_data),
        (CAPPED, _) => w.min(in_data),
        (_, FIXED) => out_data,
        (_, CAPPED) => w.min(out_data),
        _ => w,
    }
}

#[test]
fn flows_decide_their_rates_by_the_table_of_constrained_rate() {
    // Reservoirs that publish given causalities and data, a flow between every pair, for a
    // wanted rate below, between and above the data (and negative), and the function itself.
    let mut model = compile(
        "Table",
        Some(
            "model Table
  import SystemDynamics.Interfaces.{Causality, MassPortR, constrainedRate};
  model Publisher
    parameter Causality info;
    parameter Real data;
    MassPortR port;
  equation
    port.info = info;
    port.data = data;
  end Publisher;
  parameter Real w = 1;
  Publisher up[3](info = {Causality.free, Causality.dictated, Causality.capped}, each data = 2);
  Publisher down[3](info = {Causality.free, Causality.dictated, Causality.capped}, each data = 3);
  SystemDynamics.Flows.Flow f[3, 3](each u = w*time);
  Real r[3, 3] = {{constrainedRate(w*time, up[i].info, 2, down[j].info, 3) for j in 1:3} for i in 1:3};
equation
  for i in 1:3, j in 1:3 loop
    connect(up[i].port, f[i, j].inflow);
    connect(f[i, j].outflow, down[j].port);
  end for;
end Table;
",
        ),
    );
    let result = run(&mut model, 4.0, None);
    for t in [0.0, 1.0, 2.5, 3.5, 4.0] {
        for i in 1..=3 {
            for j in 1..=3 {
                let expected = decision(t, i, 2.0, j, 3.0);
                check(&result, &format!("f[{i},{j}].rate"), t, expected, 1e-12);
                check(&result, &format!("r[{i},{j}]"), t, expected, 1e-12);
            }
        }
    }
    // A negative wanted rate (a flow running backwards) is not limited by a cap.
    model.set_parameter("w", -1.0).unwrap();
    let result = run(&mut model, 2.0, None);
    check(&result, "f[3,3].rate", 2.0, -2.0, 1e-12);
    check(&result, "f[2,3].rate", 2.0, 2.0, 1e-12);
    check(&result, "f[1,2].rate", 2.0, 3.0, 1e-12);
}

#[test]
fn a_tick_books_the_rate_before_a_switch_at_the_same_instant() {
    // The discrete reservoirs book pre(rate), the left limit of a continuous rate: at a tick
    // where a time event switches the rate (t = 1 here), the value before the switch.
    let mut model = compile(
        "Coincide",
        Some(
            "model Coincide
  Real r = if time >= 1 then 2 else 0;
  Real x(start = 0, fixed = true);
  Real y = -x;
  discrete Real b(start = 0, fixed = true);
  discrete Real c(start = 0, fixed = true);
  discrete Real d(start = 0, fixed = true);
  discrete Real a(start = 0, fixed = true);
equation
  der(x) = 1;
  when sample(0, 1) then
    b = pre(r);
    c = pre(2*r + 1);
    d = pre(y);
  end when;
algorithm
  when sample(0.5, 1) then
    a := pre(y);
  end when;
end Coincide;
",
        ),
    );
    let result = run(&mut model, 2.5, None);
    check(&result, "b", 1.0, 0.0, 0.0);
    check(&result, "c", 1.0, 1.0, 0.0);
    check(&result, "b", 2.0, 2.0, 0.0);
    check(&result, "c", 2.0, 5.0, 0.0);
    // The left limit of a variable that alias elimination removed (y = -x), in a when-equation
    // and in an algorithm.
    check(&result, "d", 2.0, -2.0, 1e-12);
    check(&result, "a", 1.5, -1.5, 1e-12);
}

#[test]
fn when_clauses_that_fire_together_read_each_others_new_values() {
    // A discrete reservoir's check (in its base class) reads what the concrete class books at
    // the same tick in another when-clause, written before or after it.
    for order in [["b = a;", "a = pre(a) + 1;"], ["a = pre(a) + 1;", "b = a;"]] {
        let text = format!(
            "model Together
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
equation
  when sample(0.5, 1) then
    {}
  end when;
  when sample(0.5, 1) then
    {}
  end when;
end Together;
",
            order[0], order[1]
        );
        let mut model = compile("Together", Some(&text));
        let result = run(&mut model, 2.0, None);
        check(&result, "b", 0.5, 1.0, 0.0);
        check(&result, "b", 1.5, 2.0, 0.0);
    }
}

#[test]
fn a_bounded_stock_with_less_inflow_than_outflow_passes_the_inflow_on() {
    // At the lower bound the outflow would empty S1 and the inflow refill it: S1 stays at 0 and
    // the outflow takes exactly what comes in (Filippov sliding on the bound).
    let mut model = compile(
        "Slide",
        Some(
            "model Slide
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow fill(constRate = 0.2);
  Reservoirs.SaturatedStock S1(m0 = 1, minLevel = 0);
  Flows.ConstantFlow drain(constRate = 0.5);
  Reservoirs.Stock S2;
equation
  connect(source.outflow, fill.inflow);
  connect(fill.outflow, S1.inflow);
  connect(S1.outflow, drain.inflow);
  connect(drain.outflow, S2.inflow);
end Slide;
",
        ),
    );
    let result = run(&mut model, 6.0, None);
    let empty = 1.0 / 0.3;
    check(&result, "S1.m", 3.0, 1.0 - 0.3 * 3.0, 1e-9);
    check(&result, "S2.m", empty, 0.5 * empty, 1e-9);
    for t in [4.0, 5.0, 6.0] {
        check(&result, "S1.m", t, 0.0, 1e-9);
        check(&result, "drain.rate", t, 0.2, 1e-9);
        check(&result, "S2.m", t, 0.5 * empty + 0.2 * (t - empty), 1e-9);
    }
}

#[test]
fn a_uniflow_never_runs_backwards() {
    let text = "model Backwards
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.Stock a(m0 = 1);
  Flows.ConstantFlow f(constRate = -1, uniflow = UNI);
  Reservoirs.Stock b(m0 = 1);
equation
  connect(a.outflow, f.inflow);
  connect(f.outflow, b.inflow);
end Backwards;
";
    let mut biflow = compile("Backwards", Some(&text.replace("UNI", "false")));
    let result = run(&mut biflow, 1.0, None);
    check(&result, "a.m", 1.0, 2.0, 1e-12);
    check(&result, "b.m", 1.0, 0.0, 1e-12);
    let mut uniflow = compile("Backwards", Some(&text.replace("UNI", "true")));
    let result = run(&mut uniflow, 1.0, None);
    check(&result, "f.rate", 0.5, 0.0, 0.0);
    check(&result, "a.m", 1.0, 1.0, 0.0);
}

#[test]
fn two_reservoirs_joined_directly_or_flows_without_a_reservoir_are_rejected() {
    for text in [
        "model Two
  SystemDynamics.Reservoirs.Stock a(m0 = 1);
  SystemDynamics.Reservoirs.Stock b;
equation
  connect(a.outflow, b.inflow);
end Two;
",
        "model NoReservoir
  SystemDynamics.Reservoirs.CloudSource s;
  SystemDynamics.Flows.ConstantFlow f;
  SystemDynamics.Flows.ConstantFlow g;
equation
  connect(s.outflow, f.inflow);
  connect(f.outflow, g.inflow);
end NoReservoir;
",
    ] {
        let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
        assert!(session.compile(None, &ModelOptions::default()).is_none(), "{text}");
        // Two reservoir ports are two sources of the causality `info` in one connection set
        // (E0343); flows joined without a reservoir leave `info` without a source, which the
        // balance check reports (E0401).
        let expected = if text.contains("model Two") { "E0343" } else { "E0401" };
        assert!(
            session.diagnostics().iter().any(|d| d.code == expected),
            "{}",
            session.render_diagnostics(false)
        );
    }
}

#[test]
fn a_queue_keeps_its_batches_in_order_and_loses_nothing() {
    // 3 per tick arrive at the ticks 0.1 .. 3.1; 1 per tick leaves from the front batch. With
    // room for two batches apart, the third arrival joins the second.
    let mut model = compile(
        "Q",
        Some(
            "model Q
  import SystemDynamics.{Reservoirs, Flows, Converters};
  Reservoirs.CloudSource source;
  Converters.TimeSwitchedConverter r(switchTime = 3.5, oldValue = 3, newValue = 0);
  Flows.Flow arrive;
  Reservoirs.Queue queue(nMax = 2);
  Flows.ConstantFlow leave(constRate = 1);
  Reservoirs.StockD store;
equation
  connect(source.outflow, arrive.inflow);
  connect(r.y, arrive.u);
  connect(arrive.outflow, queue.inflow);
  connect(queue.outflow, leave.inflow);
  connect(leave.outflow, store.inflow);
end Q;
",
        ),
    );
    let result = run(&mut model, 16.0, None);
    // Tick: batches, number of batches, store.
    let table: [(f64, [f64; 2], f64, f64); 7] = [
        (0.1, [3.0, 0.0], 1.0, 0.0),
        (1.1, [2.0, 3.0], 2.0, 1.0),
        (2.1, [1.0, 6.0], 2.0, 2.0),
        (3.1, [6.0, 3.0], 2.0, 3.0),
        (9.1, [3.0, 0.0], 1.0, 9.0),
        (12.1, [0.0, 0.0], 0.0, 12.0),
        (15.1, [0.0, 0.0], 0.0, 12.0),
    ];
    for (t, batches, n, store) in table {
        check(&result, "queue.batch[1]", t, batches[0], 1e-12);
        check(&result, "queue.batch[2]", t, batches[1], 1e-12);
        check(&result, "queue.n", t, n, 0.0);
        check(&result, "store.m", t, store, 1e-12);
    }
    for k in 3..16 {
        let t = 0.1 + k as f64;
        let total = result.value_at("queue.m", t).unwrap() + result.value_at("store.m", t).unwrap();
        assert!((total - 12.0).abs() < 1e-12, "{total} at {t}");
    }
}

#[test]
fn discrete_amounts_are_rates_times_the_sample_period() {
    // With ticks every 0.5, a discrete stock fed at the rate 2 holds 2 t at its ticks, and an
    // oven that cooks for one time unit (two ticks) passes every batch of 3 on.
    let mut model = compile(
        "Half",
        Some(
            "model Half
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow feed(constRate = 2);
  Reservoirs.StockD d(startTime = 0.5, samplePeriod = 0.5);
  Reservoirs.CloudSource source2;
  Flows.ConstantFlow feed2(constRate = 2);
  Reservoirs.Oven oven(capacity = 3, cookingTime = 1, startTime = 0.25, samplePeriod = 0.5);
  Flows.ConstantFlow release;
  Reservoirs.Stock out;
equation
  connect(source.outflow, feed.inflow);
  connect(feed.outflow, d.inflow);
  connect(source2.outflow, feed2.inflow);
  connect(feed2.outflow, oven.inflow);
  connect(oven.outflow, release.inflow);
  connect(release.outflow, out.inflow);
end Half;
",
        ),
    );
    let result = run(&mut model, 12.0, None);
    for k in 1..24 {
        let t = 0.5 * k as f64;
        check(&result, "d.m", t, 2.0 * t, 1e-12);
    }
    // The oven takes 2*0.5 = 1 per tick: full at 1.25, cooking during the ticks 1.75 and
    // 2.25, releasing its 3 at the rate 3/0.5 during (2.25, 2.75), and so on every 2 time units.
    for (t, load) in [(0.25, 1.0), (0.75, 2.0), (1.25, 3.0), (2.25, 1.0), (3.25, 3.0)] {
        check(&result, "oven.load", t, load, 1e-12);
    }
    check(&result, "release.rate", 2.0, 0.0, 0.0);
    check(&result, "release.rate", 2.5, 6.0, 0.0);
    check(&result, "out.m", 2.75, 3.0, 1e-9);
    check(&result, "out.m", 12.0, 15.0, 1e-9);
}

#[test]
fn discrete_flows_decide_at_the_ticks_and_hold_their_rates() {
    // A discrete flow that wants 2 empties a bounded discrete stock of 5 (2, 2, then the 1 that
    // is left); a discrete flow that wants the time books the sum of the tick times; a discrete
    // uniflow that wants time - 2 stays at 0 until it turns positive.
    let mut model = compile(
        "Ticks",
        Some(
            "model Ticks
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.SaturatedStockD s(m0 = 5);
  Flows.ConstantFlowD take(constRate = 2);
  Reservoirs.StockD d;
  Reservoirs.CloudSource source;
  Flows.FlowD clock(u = time);
  Reservoirs.StockD e;
  Reservoirs.CloudSource source2;
  Flows.FlowD late(u = time - 2, uniflow = true);
  Reservoirs.CloudSink sink;
equation
  connect(s.outflow, take.inflow);
  connect(take.outflow, d.inflow);
  connect(source.outflow, clock.inflow);
  connect(clock.outflow, e.inflow);
  connect(source2.outflow, late.inflow);
  connect(late.outflow, sink.inflow);
end Ticks;
",
        ),
    );
    let result = run(&mut model, 6.0, None);
    for (t, s, take, d) in [
        (0.1, 5.0, 2.0, 0.0),
        (1.1, 3.0, 2.0, 2.0),
        (2.1, 1.0, 1.0, 4.0),
        (3.1, 0.0, 0.0, 5.0),
        (5.1, 0.0, 0.0, 5.0),
    ] {
        check(&result, "s.m", t, s, 1e-12);
        check(&result, "take.rate", t + 0.5, take, 1e-12);
        check(&result, "d.m", t, d, 1e-12);
    }
    let mut booked = 0.0;
    for k in 0..6 {
        let t = 0.1 + k as f64;
        check(&result, "e.m", t, booked, 1e-12);
        check(&result, "clock.rate", t + 0.5, t, 1e-12);
        check(&result, "late.rate", t + 0.5, (t - 2.0f64).max(0.0), 1e-12);
        booked += t;
    }
    check(&result, "take.rate", 0.05, 0.0, 0.0);
}

#[test]
fn a_dictated_rate_above_the_limit_of_the_other_end_stops_the_run() {
    // A conveyor with one slat releases 5 per tick into an oven with room for 3.
    let mut model = compile(
        "Overfull",
        Some(
            "model Overfull
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.CloudSource source;
  Flows.ConstantFlow load(constRate = 5);
  Reservoirs.Conveyor belt(nDelay = 1);
  Flows.ConstantFlow unload;
  Reservoirs.Oven oven(capacity = 3);
equation
  connect(source.outflow, load.inflow);
  connect(load.outflow, belt.inflow);
  connect(belt.outflow, unload.inflow);
  connect(unload.outflow, oven.inflow);
end Overfull;
",
        ),
    );
    let (time, message) = failure(&mut model, 5.0);
    // The belt is loaded at the first tick (0.1) and unloads during the next interval.
    assert!((time - 0.1).abs() < 1e-12, "stopped at {time}");
    assert!(message.contains("exceeds the limit"), "{message}");
    assert!(message.contains("unload."), "{message}");
}

#[test]
fn outflows_that_overdraw_a_bounded_discrete_stock_stop_the_run() {
    // Each of two flows may take the whole content of 4; together they take 6.
    let mut model = compile(
        "Overdraw",
        Some(
            "model Overdraw
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.SaturatedStockD s(m0 = 4);
  Flows.ConstantFlow a(constRate = 3);
  Flows.ConstantFlow b(constRate = 3);
  Reservoirs.CloudSink sinkA;
  Reservoirs.CloudSink sinkB;
equation
  connect(s.outflow, a.inflow);
  connect(s.outflow, b.inflow);
  connect(a.outflow, sinkA.inflow);
  connect(b.outflow, sinkB.inflow);
end Overdraw;
",
        ),
    );
    let (time, message) = failure(&mut model, 5.0);
    assert!((time - 0.1).abs() < 1e-12, "stopped at {time}");
    assert!(message.contains("lower bound minLevel = 0"), "{message}");
}

#[test]
fn an_oven_that_cannot_finish_cooking_is_rejected() {
    let text = example("oven1.eqm").replace("cookingTime = 2", "cookingTime = 0.5");
    let mut model = compile("Oven1", Some(&text));
    let (time, message) = failure(&mut model, 5.0);
    assert_eq!(time, 0.0);
    assert!(message.contains("at least one sample period"), "{message}");
}
