//! The math blocks against arithmetic and the routing blocks against the sizes and order of
//! their vectors.

use super::*;

#[test]
fn math_blocks_compute_their_arithmetic() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant a(k = 3);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.Gain gain(k = 2.5);
           Modelica.Blocks.Math.Add add(k1 = 2, k2 = -1);
           Modelica.Blocks.Math.Add3 add3(k3 = 4);
           Modelica.Blocks.Math.Product product;
           Modelica.Blocks.Math.Division division;
           Modelica.Blocks.Math.Feedback feedback;
           Modelica.Blocks.Math.Abs abs1;
           Modelica.Blocks.Math.Sqrt sqrt1;
           Modelica.Blocks.Math.Max max1;
           Modelica.Blocks.Math.Min min1;
           Modelica.Blocks.Math.Sum sum1(nin = 2, k = {1, 2});
           Modelica.Blocks.Math.MatrixGain matrixGain(K = [1, 2; 3, 4]);",
        "  connect(a.y, gain.u);
           connect(a.y, add.u1); connect(b.y, add.u2);
           connect(a.y, add3.u1); connect(a.y, add3.u2); connect(b.y, add3.u3);
           connect(a.y, product.u1); connect(b.y, product.u2);
           connect(a.y, division.u1); connect(b.y, division.u2);
           connect(a.y, feedback.u1); connect(b.y, feedback.u2);
           connect(b.y, abs1.u); connect(a.y, sqrt1.u);
           connect(a.y, max1.u1); connect(b.y, max1.u2);
           connect(a.y, min1.u1); connect(b.y, min1.u2);
           connect(a.y, sum1.u[1]); connect(b.y, sum1.u[2]);
           connect(a.y, matrixGain.u[1]); connect(b.y, matrixGain.u[2]);",
    );
    let r = run(&text, 1.0);
    for (name, value) in [
        ("gain.y", 7.5),
        ("add.y", 8.0),
        ("add3.y", -2.0),
        ("product.y", -6.0),
        ("division.y", -1.5),
        ("feedback.y", 5.0),
        ("abs1.y", 2.0),
        ("sqrt1.y", 3f64.sqrt()),
        ("max1.y", 3.0),
        ("min1.y", -2.0),
        ("sum1.y", -1.0),
        ("matrixGain.y[1]", -1.0),
        ("matrixGain.y[2]", 1.0),
    ] {
        check(&r, name, 0.5, value, 1e-14);
    }
}

#[test]
fn math_functions_and_routing_blocks() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant a(k = 0.5);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.Sin sin1;
           Modelica.Blocks.Math.Cos cos1;
           Modelica.Blocks.Math.Exp exp1;
           Modelica.Blocks.Math.Log log1;
           Modelica.Blocks.Math.Tan tan1;
           Modelica.Blocks.Math.Asin asin1;
           Modelica.Blocks.Math.Acos acos1;
           Modelica.Blocks.Math.Atan atan1;
           Modelica.Blocks.Math.Sinh sinh1;
           Modelica.Blocks.Math.Cosh cosh1;
           Modelica.Blocks.Math.Tanh tanh1;
           Modelica.Blocks.Math.Log10 log10a;
           Modelica.Blocks.Math.Atan2 atan2a;
           Modelica.Blocks.Math.Power pow2(base = 2, useExp = false);
           Modelica.Blocks.Math.Power powE;
           Modelica.Blocks.Routing.Replicator rep(nout = 3);
           Modelica.Blocks.Routing.Multiplex2 mux(n1 = 1, n2 = 2);
           Modelica.Blocks.Routing.DeMultiplex2 demux(n1 = 2, n2 = 1);
           Modelica.Blocks.Routing.Extractor ex(nin = 3);
           Modelica.Blocks.Sources.IntegerStep index(height = 1, offset = 1, startTime = 1);",
        "  connect(a.y, sin1.u); connect(a.y, cos1.u); connect(a.y, exp1.u); connect(a.y, log1.u);
           connect(a.y, tan1.u); connect(a.y, asin1.u); connect(a.y, acos1.u); connect(b.y, atan1.u);
           connect(a.y, sinh1.u); connect(a.y, cosh1.u); connect(a.y, tanh1.u); connect(a.y, log10a.u);
           connect(a.y, atan2a.u1); connect(b.y, atan2a.u2);
           connect(b.y, pow2.u); connect(a.y, powE.u);
           connect(b.y, rep.u);
           connect(a.y, mux.u1[1]); connect(rep.y[2], mux.u2[1]); connect(sin1.y, mux.u2[2]);
           connect(mux.y, demux.u);
           connect(mux.y, ex.u); connect(index.y, ex.index);",
    );
    let r = run(&text, 2.0);
    let s = 0.5f64.sin();
    for (name, t, y) in [
        ("sin1.y", 0.5, s),
        ("cos1.y", 0.5, 0.5f64.cos()),
        ("exp1.y", 0.5, 0.5f64.exp()),
        ("log1.y", 0.5, -(2.0f64.ln())),
        ("atan2a.y", 0.5, PI - 0.25f64.atan()),
        // sin(pi/6) = 1/2 and cos(pi/3) = 1/2; atan(-2) = -atan(2).
        ("tan1.y", 0.5, 0.5f64.sin() / 0.5f64.cos()),
        ("asin1.y", 0.5, PI / 6.0),
        ("acos1.y", 0.5, PI / 3.0),
        ("atan1.y", 0.5, -(2.0f64.atan())),
        ("sinh1.y", 0.5, (0.5f64.exp() - (-0.5f64).exp()) / 2.0),
        ("cosh1.y", 0.5, (0.5f64.exp() + (-0.5f64).exp()) / 2.0),
        ("tanh1.y", 0.5, (1.0f64.exp() - 1.0) / (1.0f64.exp() + 1.0)),
        ("log10a.y", 0.5, -(2.0f64.ln()) / 10.0f64.ln()),
        ("pow2.y", 0.5, 0.25),
        ("powE.y", 0.5, 0.5f64.exp()),
        ("rep.y[1]", 0.5, -2.0),
        ("rep.y[3]", 0.5, -2.0),
        ("mux.y[1]", 0.5, 0.5),
        ("mux.y[2]", 0.5, -2.0),
        ("mux.y[3]", 0.5, s),
        ("demux.y1[1]", 0.5, 0.5),
        ("demux.y1[2]", 0.5, -2.0),
        ("demux.y2[1]", 0.5, s),
        ("ex.y", 0.5, 0.5),
        ("ex.y", 1.5, -2.0),
    ] {
        check(&r, name, t, y, 1e-12);
    }
}

#[test]
fn conversions_timer_comparisons_and_pass_throughs() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.25, amplitude = 2);
           Modelica.Blocks.Sources.BooleanPulse bp(width = 25, period = 1, startTime = 0.5);
           Modelica.Blocks.Logical.Timer timer;
           Modelica.Blocks.Math.BooleanToReal b2r(realTrue = 3, realFalse = -1);
           Modelica.Blocks.Math.BooleanToInteger b2i;
           Modelica.Blocks.Math.RealToInteger r2i;
           Modelica.Blocks.Math.IntegerToReal i2r;
           Modelica.Blocks.Logical.GreaterEqualThreshold ge(threshold = 1);
           Modelica.Blocks.Logical.LessEqual le;
           Modelica.Blocks.Routing.RealPassThrough rp;
           Modelica.Blocks.Sources.Constant zero(k = 0);",
        "  connect(bp.y, timer.u); connect(bp.y, b2r.u); connect(bp.y, b2i.u);
           connect(sine.y, r2i.u); connect(r2i.y, i2r.u); connect(sine.y, ge.u);
           connect(sine.y, le.u1); connect(zero.y, le.u2); connect(sine.y, rp.u);",
    );
    let r = run(&text, 4.0);
    // The pulse is true within [0.5, 0.75) and [1.5, 1.75); the sine is 2 sin(pi t/2).
    for (name, t, y) in [
        ("timer.y", 0.25, 0.0),
        ("timer.y", 0.7, 0.2),
        ("timer.y", 0.9, 0.0),
        ("timer.y", 1.7, 0.2),
        ("b2r.y", 0.6, 3.0),
        ("b2r.y", 0.9, -1.0),
        ("b2i.y", 0.6, 1.0),
        ("b2i.y", 0.9, 0.0),
        // 2 sin(0.1 pi) = 0.618 rounds to 1, 2 sin(0.3 pi) = 1.618 to 2, and their negatives.
        ("r2i.y", 0.2, 1.0),
        ("r2i.y", 0.6, 2.0),
        ("i2r.y", 2.2, -1.0),
        ("i2r.y", 3.0, -2.0),
        ("ge.y", 0.25, 0.0),
        ("ge.y", 0.5, 1.0),
        ("le.y", 1.0, 0.0),
        ("le.y", 3.0, 1.0),
        ("rp.y", 0.5, 2f64.sqrt()),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn multiplexers_keep_sizes_and_order() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c[7](k = {1, 2, 3, 4, 5, 6, 7});
           Modelica.Blocks.Routing.Multiplex3 mux3(n2 = 2);
           Modelica.Blocks.Routing.Multiplex4 mux4;
           Modelica.Blocks.Routing.Multiplex5 mux5(n5 = 2);
           Modelica.Blocks.Routing.Multiplex6 mux6(n1 = 2);
           Modelica.Blocks.Routing.DeMultiplex3 demux3(n1 = 2, n2 = 1, n3 = 1);
           Modelica.Blocks.Routing.DeMultiplex4 demux4(n4 = 3);
           Modelica.Blocks.Routing.DeMultiplex5 demux5(n3 = 2, n5 = 2);
           Modelica.Blocks.Routing.DeMultiplex6 demux6(n6 = 2);
           Modelica.Blocks.Routing.ExtractSignal ex(nin = 4, nout = 3, extract = {4, 1, 4});
           Modelica.Blocks.Routing.BooleanReplicator br(nout = 2);
           Modelica.Blocks.Routing.IntegerReplicator ir(nout = 3);
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Sources.IntegerConstant five(k = 5);",
        "  connect(c[1].y, mux3.u1[1]); connect(c[2].y, mux3.u2[1]); connect(c[3].y, mux3.u2[2]);
           connect(c[4].y, mux3.u3[1]);
           connect(c[4].y, mux4.u1[1]); connect(c[3].y, mux4.u2[1]); connect(c[2].y, mux4.u3[1]);
           connect(c[1].y, mux4.u4[1]);
           connect(c[1].y, mux5.u1[1]);
           connect(c[1].y, mux5.u2[1]); connect(c[2].y, mux5.u3[1]); connect(c[3].y, mux5.u4[1]);
           connect(c[4].y, mux5.u5[1]); connect(c[5].y, mux5.u5[2]);
           connect(c[7].y, mux6.u1[1]); connect(c[6].y, mux6.u1[2]); connect(c[5].y, mux6.u2[1]);
           connect(c[4].y, mux6.u3[1]); connect(c[3].y, mux6.u4[1]); connect(c[2].y, mux6.u5[1]);
           connect(c[1].y, mux6.u6[1]);
           connect(mux3.y, demux3.u); connect(mux5.y, demux4.u); connect(mux6.y, demux5.u);
           connect(mux6.y, demux6.u); connect(mux4.y, ex.u);
           connect(yes.y, br.u); connect(five.y, ir.u);",
    );
    let r = run(&text, 0.1);
    let expect = |name: &str, values: &[f64]| {
        for (i, v) in values.iter().enumerate() {
            check(&r, &format!("{name}[{}]", i + 1), 0.05, *v, 0.0);
        }
        let next = format!("{name}[{}]", values.len() + 1);
        assert!(r.column(&next).is_none(), "{next} exists");
    };
    expect("mux3.y", &[1.0, 2.0, 3.0, 4.0]);
    expect("mux4.y", &[4.0, 3.0, 2.0, 1.0]);
    expect("mux5.y", &[1.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    expect("mux6.y", &[7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    expect("demux3.y1", &[1.0, 2.0]);
    expect("demux3.y2", &[3.0]);
    expect("demux3.y3", &[4.0]);
    expect("demux4.y1", &[1.0]);
    expect("demux4.y2", &[1.0]);
    expect("demux4.y4", &[3.0, 4.0, 5.0]);
    expect("demux5.y2", &[6.0]);
    expect("demux5.y3", &[5.0, 4.0]);
    expect("demux5.y4", &[3.0]);
    expect("demux5.y5", &[2.0, 1.0]);
    expect("demux6.y5", &[3.0]);
    expect("demux6.y6", &[2.0, 1.0]);
    expect("ex.y", &[1.0, 4.0, 1.0]);
    expect("br.y", &[1.0, 1.0]);
    expect("ir.y", &[5.0, 5.0, 5.0]);
}

#[test]
fn multi_input_math_means_and_conversions() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.5, amplitude = 2);
           Modelica.Blocks.Sources.Constant a(k = 3);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.MultiSum sum3(nu = 3, k = {1, 2, 3});
           Modelica.Blocks.Math.MultiSum none;
           Modelica.Blocks.Math.MultiProduct prod3(nu = 3);
           Modelica.Blocks.Math.MultiProduct empty;
           Modelica.Blocks.Math.MinMax mm(nu = 3);
           Modelica.Blocks.Math.Mean mean(f = 0.5);
           Modelica.Blocks.Math.Mean meanPos(f = 1, yGreaterOrEqualZero = true);
           Modelica.Blocks.Math.RootMeanSquare rms(f = 0.5);
           Modelica.Blocks.Sources.Sine late(f = 0.5, amplitude = 2, startTime = 0.25);
           Modelica.Blocks.Math.Sign sign1;
           Modelica.Blocks.Math.RealToBoolean r2b(threshold = 1);
           Modelica.Blocks.Math.IntegerToBoolean i2b(threshold = 2);
           Modelica.Blocks.Sources.IntegerStep istep(height = 2, startTime = 1);
           Modelica.Blocks.Math.RectangularToPolar r2p;
           Modelica.Blocks.Math.PolarToRectangular p2r;
           Modelica.Blocks.Sources.RealExpression shifted(y = 1 + sine.y);",
        "  connect(a.y, sum3.u[1]); connect(b.y, sum3.u[2]); connect(sine.y, sum3.u[3]);
           connect(a.y, prod3.u[1]); connect(b.y, prod3.u[2]); connect(sine.y, prod3.u[3]);
           connect(a.y, mm.u[1]); connect(b.y, mm.u[2]); connect(sine.y, mm.u[3]);
           connect(shifted.y, mean.u); connect(sine.y, meanPos.u); connect(sine.y, rms.u);
           connect(late.y, sign1.u); connect(late.y, r2b.u); connect(istep.y, i2b.u);
           connect(a.y, r2p.u_re); connect(b.y, r2p.u_im);
           connect(r2p.y_abs, p2r.u_abs); connect(r2p.y_arg, p2r.u_arg);",
    );
    let r = run(&text, 4.5);
    let sine = |t: f64| 2.0 * (PI * t).sin();
    for (name, t, expected) in [
        ("sum3.y", 0.5, 3.0 - 4.0 + 3.0 * 2.0),
        ("none.y", 0.5, 0.0),
        ("prod3.y", 0.25, -6.0 * sine(0.25)),
        ("empty.y", 0.5, 1.0),
        ("mm.yMax", 0.5, 3.0),
        ("mm.yMin", 0.5, -2.0),
        ("mm.yMin", 1.5, -2.0),
        ("mm.yMax", 3.5, 3.0),
        // Means over the periods [0, 2) and [2, 4): 0 during the first, then 1 (the sine has no
        // mean); the mean over [0, 1) of 2 sin(pi t) is 4/pi, over [1, 2) it is -4/pi, held at 0.
        ("mean.y", 1.0, 0.0),
        ("mean.y", 2.5, 1.0),
        ("mean.y", 4.25, 1.0),
        ("meanPos.y", 1.5, 4.0 / PI),
        ("meanPos.y", 2.5, 0.0),
        ("rms.y", 1.0, 0.0),
        ("rms.y", 3.0, 2f64.sqrt()),
        // late is 0 before 0.25, then 2 sin(pi (t - 0.25)): sqrt(2) at 0.5, -sqrt(2) at 1.5.
        ("sign1.y", 0.1, 0.0),
        ("sign1.y", 0.5, 1.0),
        ("sign1.y", 1.5, -1.0),
        ("r2b.y", 0.1, 0.0),
        ("r2b.y", 0.5, 1.0),
        ("r2b.y", 1.5, 0.0),
        ("i2b.y", 0.5, 0.0),
        ("i2b.y", 1.5, 1.0),
        ("r2p.y_abs", 0.5, 13f64.sqrt()),
        ("r2p.y_arg", 0.5, (-2f64).atan2(3.0)),
        ("p2r.y_re", 0.5, 3.0),
        ("p2r.y_im", 0.5, -2.0),
    ] {
        check(&r, name, t, expected, 1e-8);
    }
}

#[test]
fn math_boolean_blocks_reduce_any_number_of_inputs() {
    // Three inputs: a on [0.5, 2), b on [1, 3), c on [1.5, 2.5).
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable a(table = {0.5, 2});
           Modelica.Blocks.Sources.BooleanTable b(table = {1, 3});
           Modelica.Blocks.Sources.BooleanTable c(table = {1.5, 2.5});
           Modelica.Blocks.MathBoolean.And and3(nu = 3);
           Modelica.Blocks.MathBoolean.Or or3(nu = 3);
           Modelica.Blocks.MathBoolean.Xor xor3(nu = 3);
           Modelica.Blocks.MathBoolean.Nand nand3(nu = 3);
           Modelica.Blocks.MathBoolean.Nor nor3(nu = 3);
           Modelica.Blocks.MathBoolean.And andNone;
           Modelica.Blocks.MathBoolean.OnDelay onDelay(delayTime = 0.75);
           Modelica.Blocks.MathBoolean.RisingEdge rising;
           Integer nRising(start = 0, fixed = true);",
        "  connect(a.y, and3.u[1]); connect(b.y, and3.u[2]); connect(c.y, and3.u[3]);
           connect(a.y, or3.u[1]); connect(b.y, or3.u[2]); connect(c.y, or3.u[3]);
           connect(a.y, xor3.u[1]); connect(b.y, xor3.u[2]); connect(c.y, xor3.u[3]);
           connect(a.y, nand3.u[1]); connect(b.y, nand3.u[2]); connect(c.y, nand3.u[3]);
           connect(a.y, nor3.u[1]); connect(b.y, nor3.u[2]); connect(c.y, nor3.u[3]);
           connect(a.y, onDelay.u); connect(c.y, rising.u);
           when rising.y then nRising = pre(nRising) + 1; end when;",
    );
    let r = run(&text, 3.5);
    // Number of true inputs: 0, 1, 2, 3, 2, 1, 0 on the intervals split at 0.5, 1, 1.5, 2, 2.5, 3.
    for (t, n_true) in [
        (0.25, 0),
        (0.75, 1),
        (1.25, 2),
        (1.75, 3),
        (2.25, 2),
        (2.75, 1),
        (3.25, 0),
    ] {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        check(&r, "and3.y", t, flag(n_true == 3), 0.0);
        check(&r, "or3.y", t, flag(n_true > 0), 0.0);
        check(&r, "xor3.y", t, flag(n_true == 1), 0.0);
        check(&r, "nand3.y", t, flag(n_true != 3), 0.0);
        check(&r, "nor3.y", t, flag(n_true == 0), 0.0);
        check(&r, "andNone.y", t, 0.0, 0.0);
    }
    // a rises at 0.5 and stays true until 2: the on-delay output is true on [1.25, 2).
    for (t, y) in [(0.75, 0.0), (1.2, 0.0), (1.3, 1.0), (1.9, 1.0), (2.1, 0.0)] {
        check(&r, "onDelay.y", t, y, 0.0);
    }
    check(&r, "nRising", 3.5, 1.0, 0.0);
}

#[test]
fn exponentials_sinc_rectified_mean_integer_change_and_table_2dv() {
    let text = model(
        "  Modelica.Blocks.Sources.Exponentials ex(outMax = 2, riseTime = 1, riseTimeConst = 0.5,
             fallTimeConst = 0.25, startTime = 0.5);
           Modelica.Blocks.Sources.Sinc sinc(f = 0.5, startTime = 0.5, amplitude = 3);
           Modelica.Blocks.Sources.Sine sine(f = 1);
           Modelica.Blocks.Math.RectifiedMean rm(f = 1);
           Modelica.Blocks.Sources.IntegerStep is(startTime = 1.3);
           Modelica.Blocks.Math.IntegerChange ic;
           Integer n(start = 0, fixed = true);
           Modelica.Blocks.Sources.ContinuousClock u;
           Modelica.Blocks.Sources.ContinuousClock u2(offset = -1);
           Modelica.Blocks.Tables.CombiTable2Dv t2(n = 2,
             table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10]);",
        "  connect(sine.y, rm.u); connect(is.y, ic.u);
           when ic.y then n = pre(n) + 1; end when;
           connect(u.y, t2.u1[1]); connect(u2.y, t2.u2[1]);
           connect(u2.y, t2.u1[2]); connect(u.y, t2.u2[2]);",
    );
    let r = run(&text, 3.0);
    let rise = |t: f64| 2.0 * (1.0 - (-(t - 0.5) / 0.5f64).exp());
    let x = |t: f64| PI * (t - 0.5);
    for (name, t, expected) in [
        ("ex.y", 0.25, 0.0),
        ("ex.y", 1.0, rise(1.0)),
        ("ex.y", 2.0, rise(1.5) * (-0.5 / 0.25f64).exp()),
        ("sinc.y", 0.25, 0.0),
        ("sinc.y", 0.5, 3.0),
        ("sinc.y", 1.0, 3.0 * x(1.0).sin() / x(1.0)),
        ("sinc.y", 2.0, 3.0 * x(2.0).sin() / x(2.0)),
        // The mean of |sin(2 pi t)| over a period is 2/pi, output from the end of the first.
        ("rm.y", 0.5, 0.0),
        ("rm.y", 1.5, 2.0 / PI),
        ("n", 1.0, 0.0),
        ("n", 2.0, 1.0),
        // y[1] at (t, t - 1) and y[2] at (t - 1, t) in the table of the CombiTable2Ds test: at
        // t = 3 the lines through the last two points continue, 10 + 3 and 10 + 7.
        ("t2.y[1]", 1.0, 1.0),
        ("t2.y[2]", 1.0, 1.0),
        ("t2.y[1]", 3.0, 13.0),
        ("t2.y[2]", 3.0, 17.0),
    ] {
        check(&r, name, t, expected, 1e-8);
    }
}

#[test]
fn math_integer_sums_products_and_triggered_add() {
    let text = model(
        "  Modelica.Blocks.Sources.IntegerStep a(height = 2, offset = 1, startTime = 1);
           Modelica.Blocks.Sources.IntegerConstant b(k = -3);
           Modelica.Blocks.MathInteger.Sum s(nu = 2);
           Modelica.Blocks.MathInteger.Product p(nu = 2);
           Modelica.Blocks.MathInteger.Sum none;
           Modelica.Blocks.MathInteger.Product empty;
           Modelica.Blocks.MathInteger.TriggeredAdd ta(y_start = 10);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.5, startTime = 0.25);",
        "  connect(a.y, s.u[1]); connect(b.y, s.u[2]); connect(a.y, p.u[1]); connect(b.y, p.u[2]);
           connect(a.y, ta.u); connect(trigger.y, ta.trigger);",
    );
    let r = run(&text, 2.0);
    // a is 1 before t = 1 and 3 after; ta adds it at 0.25, 0.75, 1.25 and 1.75.
    for (name, t, expected) in [
        ("s.y", 0.5, -2.0),
        ("s.y", 1.5, 0.0),
        ("p.y", 0.5, -3.0),
        ("p.y", 1.5, -9.0),
        ("none.y", 0.5, 0.0),
        ("empty.y", 0.5, 1.0),
        ("ta.y", 0.1, 10.0),
        ("ta.y", 0.5, 11.0),
        ("ta.y", 1.0, 12.0),
        ("ta.y", 1.5, 15.0),
        ("ta.y", 2.0, 18.0),
    ] {
        check(&r, name, t, expected, 0.0);
    }
}
