//! The discrete blocks against their difference equations worked by hand and the logical
//! blocks against truth sequences counted at their events.

use super::*;

#[test]
fn fixed_delay_and_the_discrete_blocks_sample_a_ramp() {
    let text = model(
        "  Modelica.Blocks.Sources.Ramp ramp(height = 4, duration = 4);
           Modelica.Blocks.Nonlinear.FixedDelay fd(delayTime = 1);
           Modelica.Blocks.Discrete.Sampler smp(samplePeriod = 0.5, startTime = 0.25);
           Modelica.Blocks.Discrete.ZeroOrderHold zoh(samplePeriod = 0.5);
           Modelica.Blocks.Discrete.UnitDelay ud(samplePeriod = 0.5, y_start = -1);",
        "  connect(ramp.y, fd.u);
           connect(ramp.y, smp.u);
           connect(ramp.y, zoh.u);
           connect(ramp.y, ud.u);",
    );
    let r = run(&text, 4.0);
    for (name, t, y) in [
        // The ramp is y = time; the delay holds its start value 0 for the first second.
        ("fd.y", 0.5, 0.0),
        ("fd.y", 2.5, 1.5),
        // Sampled at the start and at 0.25 + 0.5 k.
        ("smp.y", 0.2, 0.0),
        ("smp.y", 0.3, 0.25),
        ("smp.y", 1.1, 0.75),
        // Held from 0.5 k.
        ("zoh.y", 0.3, 0.0),
        ("zoh.y", 0.6, 0.5),
        ("zoh.y", 1.99, 1.5),
        // One sample period late: y_start until the second tick.
        ("ud.y", 0.3, -1.0),
        ("ud.y", 0.6, 0.0),
        ("ud.y", 1.2, 0.5),
        ("ud.y", 3.7, 3.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn logical_blocks_and_boolean_sources_follow_their_truth_tables() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanStep bs(startTime = 1);
           Modelica.Blocks.Sources.BooleanPulse bp(width = 25, period = 1, startTime = 0.5);
           Modelica.Blocks.Sources.IntegerStep is(height = 3, offset = -1, startTime = 2);
           Modelica.Blocks.Sources.RealExpression re(y = 2*time + 1);
           Modelica.Blocks.Sources.BooleanExpression be(y = time > 1.5);
           Modelica.Blocks.Logical.And and1;
           Modelica.Blocks.Logical.Or or1;
           Modelica.Blocks.Logical.Xor xor1;
           Modelica.Blocks.Logical.Not not1;
           Modelica.Blocks.Logical.Nand nand1;
           Modelica.Blocks.Logical.Nor nor1;
           Modelica.Blocks.Sources.Sine sine(f = 0.25, amplitude = 2);
           Modelica.Blocks.Logical.GreaterThreshold gt(threshold = 1);
           Modelica.Blocks.Logical.LessThreshold lt(threshold = -1);
           Modelica.Blocks.Logical.Greater g;
           Modelica.Blocks.Logical.Less l;
           Modelica.Blocks.Logical.Switch sw;
           Modelica.Blocks.Logical.Hysteresis hys(uLow = -1, uHigh = 1);
           Modelica.Blocks.Logical.OnOffController onoff(bandwidth = 1);
           Modelica.Blocks.Sources.Constant zero(k = 0);",
        "  connect(bs.y, and1.u1); connect(be.y, and1.u2);
           connect(bs.y, or1.u1); connect(be.y, or1.u2);
           connect(bs.y, xor1.u1); connect(be.y, xor1.u2);
           connect(bs.y, not1.u);
           connect(bs.y, nand1.u1); connect(be.y, nand1.u2);
           connect(bs.y, nor1.u1); connect(be.y, nor1.u2);
           connect(sine.y, gt.u); connect(sine.y, lt.u);
           connect(sine.y, g.u1); connect(zero.y, g.u2);
           connect(sine.y, l.u1); connect(zero.y, l.u2);
           connect(re.y, sw.u1); connect(bp.y, sw.u2); connect(sine.y, sw.u3);
           connect(sine.y, hys.u);
           connect(zero.y, onoff.reference); connect(sine.y, onoff.u);",
    );
    let r = run(&text, 5.0);
    // The sine is 2 sin(pi t/2): 1 at t = 1/3, 2 at t = 1, -1 at t = 7/3, -2 at t = 3.
    let sine = |t: f64| 2.0 * (PI * t / 2.0).sin();
    for (name, t, y) in [
        ("bs.y", 0.5, 0.0),
        ("bs.y", 1.5, 1.0),
        ("bp.y", 0.25, 0.0),
        ("bp.y", 0.6, 1.0),
        ("bp.y", 0.9, 0.0),
        ("bp.y", 1.6, 1.0),
        ("is.y", 1.0, -1.0),
        ("is.y", 3.0, 2.0),
        ("re.y", 1.0, 3.0),
        ("be.y", 1.0, 0.0),
        ("be.y", 2.0, 1.0),
        ("and1.y", 1.25, 0.0),
        ("and1.y", 2.0, 1.0),
        ("or1.y", 0.5, 0.0),
        ("or1.y", 1.25, 1.0),
        ("xor1.y", 1.25, 1.0),
        ("xor1.y", 2.0, 0.0),
        ("not1.y", 0.5, 1.0),
        ("nand1.y", 1.25, 1.0),
        ("nand1.y", 2.0, 0.0),
        ("nor1.y", 0.5, 1.0),
        ("nor1.y", 1.25, 0.0),
        ("not1.y", 1.5, 0.0),
        ("gt.y", 0.25, 0.0),
        ("gt.y", 0.5, 1.0),
        ("lt.y", 2.2, 0.0),
        ("lt.y", 2.5, 1.0),
        ("g.y", 1.0, 1.0),
        ("g.y", 3.0, 0.0),
        ("l.y", 1.0, 0.0),
        ("l.y", 3.0, 1.0),
        ("sw.y", 0.6, 2.2),
        ("sw.y", 0.9, sine(0.9)),
        // Switches on above 1 (t = 1/3) and off below -1 (t = 7/3), keeping its value between.
        ("hys.y", 0.25, 0.0),
        ("hys.y", 0.5, 1.0),
        ("hys.y", 2.0, 1.0),
        ("hys.y", 2.5, 0.0),
        ("hys.y", 3.9, 0.0),
        ("hys.y", 4.5, 1.0),
        // On below -0.5, off at 0.5 and above, unchanged in between.
        ("onoff.y", 0.25, 0.0),
        ("onoff.y", 2.2, 1.0),
        ("onoff.y", 3.9, 1.0),
        ("onoff.y", 4.2, 0.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn pre_edge_change_and_the_flip_flop_follow_their_truth_sequences() {
    // The input u is true on [0.25, 0.75), [1.25, 1.5) and from 2.5 on; the reset r on
    // [1, 1.1) and [2, 2.2).
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable u(table = {0.25, 0.75, 1.25, 1.5, 2.5});
           Modelica.Blocks.Sources.BooleanTable r(table = {1, 1.1, 2, 2.2});
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Logical.Pre pre1;
           Modelica.Blocks.Logical.Pre preTrue(pre_u_start = true);
           Modelica.Blocks.Logical.Edge rising;
           Modelica.Blocks.Logical.FallingEdge falling;
           Modelica.Blocks.Logical.Change change1;
           Modelica.Blocks.Logical.Change changeStart(pre_u_start = true);
           Modelica.Blocks.Logical.RSFlipFlop ff;
           Modelica.Blocks.Logical.RSFlipFlop both(Qini = true);
           Modelica.Blocks.Logical.LogicalSwitch ls;
           Integer nRising(start = 0, fixed = true);
           Integer nFalling(start = 0, fixed = true);
           Integer nChange(start = 0, fixed = true);
           Integer nPre(start = 0, fixed = true);
           Integer nStart(start = 0, fixed = true);
           discrete Real preAtStart(start = -1, fixed = true);
           discrete Real preAtRise(start = -1, fixed = true);
           discrete Real preAtFall(start = -1, fixed = true);",
        "  connect(u.y, pre1.u); connect(u.y, preTrue.u); connect(u.y, rising.u);
           connect(u.y, falling.u); connect(u.y, change1.u); connect(u.y, changeStart.u);
           connect(u.y, ff.S); connect(r.y, ff.R);
           connect(yes.y, both.S); connect(r.y, both.R);
           connect(yes.y, ls.u1); connect(u.y, ls.u2); connect(r.y, ls.u3);
           when rising.y then nRising = pre(nRising) + 1; end when;
           when falling.y then nFalling = pre(nFalling) + 1; end when;
           when change1.y then nChange = pre(nChange) + 1; end when;
           when changeStart.y then nStart = pre(nStart) + 1; end when;
           when pre1.y then nPre = pre(nPre) + 1; end when;
           // At the events of u, pre1.y is its value before them.
           when rising.y then preAtRise = if pre1.y then 1 else 0; end when;
           when falling.y then preAtFall = if pre1.y then 1 else 0; end when;
           // At the start (initial() is true at the event there) Pre outputs pre_u_start.
           when initial() then preAtStart = if preTrue.y then 1 else 0; end when;",
    );
    let r = run(&text, 3.0);
    for (name, t, expected) in [
        // Rising edges at 0.25, 1.25, 2.5; falling at 0.75, 1.5; five changes. The change at the
        // start of changeStart is u = false against pre_u_start = true.
        ("nRising", 0.5, 1.0),
        ("nRising", 3.0, 3.0),
        ("nFalling", 1.0, 1.0),
        ("nFalling", 3.0, 2.0),
        ("nChange", 3.0, 5.0),
        ("nStart", 0.1, 1.0),
        ("nStart", 3.0, 6.0),
        ("preAtRise", 0.5, 0.0),
        ("preAtFall", 1.0, 1.0),
        ("preAtStart", 1.0, 1.0),
        // Between events pre(u) is u and the edge outputs are false.
        ("pre1.y", 0.5, 1.0),
        ("pre1.y", 1.0, 0.0),
        ("preTrue.y", 0.1, 0.0),
        ("rising.y", 0.5, 0.0),
        ("change1.y", 0.5, 0.0),
        // Set by u at 0.25, reset by r at 1, set at 1.25, reset at 2, set at 2.5.
        ("ff.Q", 0.1, 0.0),
        ("ff.QI", 0.1, 1.0),
        ("ff.Q", 0.5, 1.0),
        ("ff.Q", 0.9, 1.0),
        ("ff.Q", 1.05, 0.0),
        ("ff.QI", 1.05, 1.0),
        ("ff.Q", 1.2, 0.0),
        ("ff.Q", 1.3, 1.0),
        ("ff.Q", 1.9, 1.0),
        ("ff.Q", 2.1, 0.0),
        ("ff.Q", 2.4, 0.0),
        ("ff.Q", 2.9, 1.0),
        // S always true: Q is true except while R is, when both outputs are false.
        ("both.Q", 0.5, 1.0),
        ("both.Q", 1.05, 0.0),
        ("both.QI", 1.05, 0.0),
        ("both.Q", 1.5, 1.0),
        ("both.QI", 1.5, 0.0),
        ("ls.y", 0.5, 1.0),
        ("ls.y", 1.05, 1.0),
        ("ls.y", 1.2, 0.0),
    ] {
        check(&r, name, t, expected, 0.0);
    }
}

#[test]
fn discrete_blocks_follow_their_difference_equations() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.25);
           Modelica.Blocks.Sources.BooleanPulse pulse(width = 20, period = 1, startTime = 0.3);
           Modelica.Blocks.Discrete.TriggeredSampler ts(y_start = -1);
           Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Discrete.TransferFunction tf(b = {1}, a = {1, -0.5}, samplePeriod = 0.5);
           Modelica.Blocks.Discrete.TransferFunction tf2(b = {1, 0.5}, a = {1, -0.2, 0.1},
             samplePeriod = 0.5);
           Modelica.Blocks.Sources.RealExpression square(y = time^2);
           Modelica.Blocks.Discrete.FirstOrderHold foh(samplePeriod = 0.5);
           Modelica.Blocks.Discrete.StateSpace ss(A = [0.5], B = [1], C = [2], D = [1],
             samplePeriod = 1);",
        "  connect(sine.y, ts.u); connect(pulse.y, ts.trigger);
           connect(one.y, tf.u); connect(one.y, tf2.u);
           connect(square.y, foh.u); connect(one.y, ss.u[1]);",
    );
    let r = run(&text, 4.0);
    let sine = |t: f64| (2.0 * PI * 0.25 * t).sin();
    for (name, t, expected) in [
        // Sampled at the rising edges 0.3, 1.3, 2.3 and held.
        ("ts.y", 0.2, -1.0),
        ("ts.y", 0.9, sine(0.3)),
        ("ts.y", 1.9, sine(1.3)),
        ("ts.y", 3.9, sine(3.3)),
        // FirstOrderHold of t^2 with T = 0.5: after the tick tk the line through the samples at
        // tk - T and tk, 0 before the second tick.
        ("foh.y", 0.25, 0.0),
        ("foh.y", 0.6, 0.25 + 0.5 * 0.1),
        ("foh.y", 1.2, 1.0 + 1.5 * 0.2),
        ("foh.y", 3.7, 12.25 + 6.5 * 0.2),
        // y(k) = C x(k-1) + D u, x(k) = A x(k-1) + B u from x = 0 at the ticks 0, 1, 2, 3.
        ("ss.y[1]", 0.5, 1.0),
        ("ss.y[1]", 1.5, 3.0),
        ("ss.y[1]", 2.5, 4.0),
        ("ss.y[1]", 3.5, 4.5),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
    // The difference equations by hand: w(k) = (u - a2 w(k-1) - a3 w(k-2))/a1 and
    // y(k) = sum of the numerator (padded to the denominator's size) times w(k), w(k-1), ...
    let difference = |b: &[f64], a: &[f64], ticks: usize| {
        let mut bb = vec![0.0; a.len() - b.len()];
        bb.extend_from_slice(b);
        let mut w = vec![0.0; a.len()];
        let mut y = Vec::new();
        for _ in 0..ticks {
            w.rotate_right(1);
            w[0] = (1.0 - (1..a.len()).map(|i| a[i] * w[i]).sum::<f64>()) / a[0];
            y.push(bb.iter().zip(&w).map(|(b, w)| b * w).sum::<f64>());
        }
        y
    };
    let y1 = difference(&[1.0], &[1.0, -0.5], 8);
    let y2 = difference(&[1.0, 0.5], &[1.0, -0.2, 0.1], 8);
    // The first transfer function is 2 (1 - 0.5^k) at tick k.
    assert!((y1[3] - 2.0 * (1.0 - 0.125)).abs() < 1e-15);
    for k in 0..8 {
        let t = 0.5 * k as f64 + 0.25;
        check(&r, "tf.y", t, y1[k], 1e-12);
        check(&r, "tf2.y", t, y2[k], 1e-12);
    }
}

#[test]
fn pade_delay_logical_delay_and_triggered_max() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Nonlinear.PadeDelay p1(delayTime = 0.5);
           Modelica.Blocks.Nonlinear.PadeDelay p2(delayTime = 0.5, n = 2);
           Modelica.Blocks.Sources.BooleanTable u(table = {0.5, 1, 1.2, 2.5});
           Modelica.Blocks.Logical.LogicalDelay ld(delayTime = 0.3);
           Modelica.Blocks.Sources.Sine sine(f = 0.5, phase = 0.2);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.3, startTime = 0.1);
           Modelica.Blocks.Discrete.TriggeredMax tm;",
        "  connect(one.y, p1.u); connect(one.y, p2.u); connect(u.y, ld.u);
           connect(sine.y, tm.u); connect(trigger.y, tm.trigger);",
    );
    let r = run(&text, 3.0);
    // Step responses with T = 0.5: [1/1] is (1 - s T/2)/(1 + s T/2), so y = 1 - 2 exp(-2 t/T);
    // [2/2] is (1 - s T/2 + (s T)^2/12)/(1 + s T/2 + (s T)^2/12), so
    // y = 1 - 4 sqrt(3) exp(-3 t/T) sin(sqrt(3) t/T).
    let t_d = 0.5;
    for t in [0.1, 0.3, 1.0, 2.0] {
        check(&r, "p1.y", t, 1.0 - 2.0 * (-2.0 * t / t_d).exp(), 1e-7);
        let y2 = 1.0 - 4.0 * 3f64.sqrt() * (-3.0 * t / t_d).exp() * (3f64.sqrt() * t / t_d).sin();
        check(&r, "p2.y", t, y2, 1e-7);
    }
    // u is true on [0.5, 1) and [1.2, 2.5): y1 falls 0.3 after u (not at 1.3, since u rose again
    // at 1.2), y2 rises 0.3 after u.
    for (t, y1, y2) in [
        (0.4, 0.0, 0.0),
        (0.6, 1.0, 0.0),
        (0.9, 1.0, 1.0),
        (1.1, 1.0, 0.0),
        (1.4, 1.0, 0.0),
        (1.6, 1.0, 1.0),
        (2.7, 1.0, 0.0),
        (2.9, 0.0, 0.0),
    ] {
        check(&r, "ld.y1", t, y1, 0.0);
        check(&r, "ld.y2", t, y2, 0.0);
    }
    // The largest |sin(pi t + 0.2)| at the ticks 0.1, 0.4, 0.7, ...: the tick at 0.4 is the
    // closest to the peak at 0.4363, and later ticks repeat these values every 2 s.
    let s = |t: f64| (PI * t + 0.2).sin().abs();
    check(&r, "tm.y", 0.05, 0.0, 0.0);
    check(&r, "tm.y", 0.2, s(0.1), 1e-12);
    check(&r, "tm.y", 2.9, s(0.4), 1e-12);
    assert!((0..10).map(|k| s(0.1 + 0.3 * k as f64)).all(|v| v <= s(0.4) + 1e-12));
}
