//! The sources at chosen times against their defining formulas, and the tables at and between
//! their points (with the integral of a time table across its jumps against the hand integral).

use super::*;

#[test]
fn step_constant_ramp_and_the_sines_follow_their_formulas() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c(k = 3);
           Modelica.Blocks.Sources.Step step(height = 2, offset = 1, startTime = 1);
           Modelica.Blocks.Sources.Ramp ramp(height = 2, duration = 2, offset = 0.5, startTime = 1);
           Modelica.Blocks.Sources.Sine sine(amplitude = 2, f = 0.5, offset = 1);
           Modelica.Blocks.Sources.Cosine cosine(amplitude = 2, f = 0.5);
           Modelica.Blocks.Sources.ExpSine expSine(amplitude = 1, f = 0.25, damping = 0.5);
           Modelica.Blocks.Sources.Sine late(f = 1, startTime = 0.5, phase = 0.3);",
        "",
    );
    let r = run(&text, 4.0);
    // A quarter period of the sine (period 2) is t = 0.5, a half period t = 1.
    for (name, t, expected) in [
        ("c.y", 2.0, 3.0),
        ("step.y", 0.5, 1.0),
        ("step.y", 1.5, 3.0),
        ("ramp.y", 0.5, 0.5),
        ("ramp.y", 2.0, 1.5),
        ("ramp.y", 3.5, 2.5),
        ("sine.y", 0.5, 3.0),
        ("sine.y", 1.0, 1.0),
        ("cosine.y", 0.0, 2.0),
        ("cosine.y", 1.0, -2.0),
        ("expSine.y", 1.0, (-0.5f64).exp()),
        ("late.y", 0.25, 0.0),
    ] {
        check(&r, name, t, expected, 1e-9);
    }
    check(&r, "late.y", 0.75, (2.0 * PI * 0.25 + 0.3).sin(), 1e-6);
}

#[test]
fn pulse_sawtooth_and_trapezoid_switch_at_their_times() {
    let text = model(
        "  Modelica.Blocks.Sources.Pulse pulse(amplitude = 2, width = 30, period = 1,
             nperiod = 2, startTime = 0.5);
           Modelica.Blocks.Sources.SawTooth saw(amplitude = 2, period = 1);
           Modelica.Blocks.Sources.Trapezoid trap(amplitude = 2, rising = 0.2, width = 0.3,
             falling = 0.1, period = 1, offset = 1);",
        "",
    );
    let r = run(&text, 4.0);
    // The pulse is 2 within [0.5, 0.8) and [1.5, 1.8), and 0 after its two periods.
    for (t, y) in [(0.25, 0.0), (0.6, 2.0), (0.9, 0.0), (1.7, 2.0), (1.85, 0.0), (2.6, 0.0)] {
        check(&r, "pulse.y", t, y, 1e-9);
    }
    for (t, y) in [(0.25, 0.5), (1.5, 1.0), (2.75, 1.5)] {
        check(&r, "saw.y", t, y, 1e-9);
    }
    // Rising over [0, 0.2), at the amplitude over [0.2, 0.5), falling over [0.5, 0.6), then 0.
    for (t, y) in [(0.1, 2.0), (0.3, 3.0), (0.55, 2.0), (0.8, 1.0), (1.1, 2.0), (2.4, 3.0)] {
        check(&r, "trap.y", t, y, 1e-9);
    }
}

#[test]
fn time_table_interpolates_linearly() {
    let text = model(
        "  Modelica.Blocks.Sources.TimeTable tt(table = [0, 0; 1, 1; 2, 4], startTime = 0.5,
             offset = 1);
           Modelica.Blocks.Sources.TimeTable jump(table = [0, 0; 1, 1; 1, 3; 2, 3], shiftTime = 0.5);
           Modelica.Blocks.Continuous.Integrator area;",
        "  connect(jump.y, area.u);",
    );
    let r = run(&text, 3.0);
    check(&r, "tt.y", 0.25, 1.0, 0.0);
    check(&r, "tt.y", 1.0, 1.5, 1e-9);
    check(&r, "tt.y", 2.0, 3.5, 1e-9);
    // Past the last row the last interval continues: 4 + 3*0.5.
    check(&r, "tt.y", 3.0, 6.5, 1e-9);
    // Read at time - 0.5: the first interval extended before the first row, the jump from 1 to 3
    // at t = 1.5. The integral to t = 2 is the integral of the table from -0.5 to 1.5:
    // (1 - 0.25)/2 + 3*0.5.
    check(&r, "jump.y", 0.25, -0.25, 1e-12);
    check(&r, "jump.y", 1.25, 0.75, 1e-12);
    check(&r, "jump.y", 1.75, 3.0, 1e-12);
    check(&r, "area.y", 2.0, 0.375 + 1.5, 1e-9);
}

#[test]
fn combi_time_table_interpolates_and_extrapolates_its_columns() {
    let text = model(
        "  Modelica.Blocks.Sources.CombiTimeTable lin(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
               Modelica.Blocks.Sources.CombiTimeTable file(table = readMatrix(\"tab.csv\"), columns = {3},
                 smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments, offset = {1});
               Modelica.Blocks.Sources.CombiTimeTable per(table = [0, 0; 1, 2; 2, 0],
                 extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic, startTime = 0.5,
                 shiftTime = 0.5);
               Modelica.Blocks.Sources.CombiTimeTable hold(table = [0, 0; 1, 2; 2, 0],
                 extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint, offset = {5});",
        "",
    );
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
    // The data file as the session's reader gives it: a header line and three rows.
    session.set_data_reader(|path: &std::path::Path| {
        assert!(path.ends_with("tab.csv"), "{}", path.display());
        Ok(b"t, a, b\n0, 0, 10\n1, 2, 20\n3, 2, 0\n".to_vec())
    });
    let compiled = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let r = run_tight(compiled, 4.0, Some(0.01));
    // Linear segments; past the last row the line through the last two rows continues.
    for (name, t, y) in [
        ("lin.y[1]", 0.5, 1.0),
        ("lin.y[1]", 2.0, 2.0),
        ("lin.y[1]", 4.0, 2.0),
        ("lin.y[2]", 0.5, 15.0),
        ("lin.y[2]", 2.0, 10.0),
        ("lin.y[2]", 4.0, -10.0),
        // Constant segments of the third column read from the file, plus the offset 1.
        ("file.y[1]", 0.5, 11.0),
        ("file.y[1]", 1.5, 21.0),
        ("file.y[1]", 3.5, 1.0),
        // Periodic with period 2, read at time - 0.5; zero before the start time 0.5.
        ("per.y[1]", 0.25, 0.0),
        ("per.y[1]", 1.0, 1.0),
        ("per.y[1]", 2.0, 1.0),
        ("per.y[1]", 3.0, 1.0),
        ("per.y[1]", 3.75, 1.5),
        // Held at the last row past the end, plus the offset 5.
        ("hold.y[1]", 0.5, 6.0),
        ("hold.y[1]", 1.5, 6.0),
        ("hold.y[1]", 3.0, 5.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn combi_time_table_rows_are_time_events_so_integrals_across_jumps_are_exact() {
    // Each state integrates one table: a jump from 1 to 3 at t = 1 (two rows with the same time),
    // constant segments 1, 2, -1 switching at 0.7 and 1.3, and a periodic table with a jump from 1
    // to 2 at its table time 0.3, read at (time - 0.1)/2 so its period is 1 s.
    let text = model(
        "  Modelica.Blocks.Sources.CombiTimeTable lin(table = [0, 0; 1, 1; 1, 3; 2, 3]);
           Modelica.Blocks.Sources.CombiTimeTable cst(table = [0, 1; 0.7, 2; 1.3, -1],
             smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments);
           Modelica.Blocks.Sources.CombiTimeTable per(table = [0, 0; 0.3, 1; 0.3, 2; 0.5, 0],
             timeScale = 2, shiftTime = 0.1,
             extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic);
           Modelica.Blocks.Continuous.Integrator x1;
           Modelica.Blocks.Continuous.Integrator x2;
           Modelica.Blocks.Continuous.Integrator x3;",
        "  connect(lin.y[1], x1.u); connect(cst.y[1], x2.u); connect(per.y[1], x3.u);",
    );
    let r = run(&text, 2.0);
    // By hand: the ramp gives 1/2 by t = 1 and the level 3 adds 3 per second after it; the
    // constant segments 0.7*1 + 0.6*2 - 0.7*1 = 1.2; the periodic table 2*(0.3*1/2 + 0.2*2/2)
    // = 0.7 per period, starting at t = 0 at table time -0.05, which is 0.45 in the period.
    for (name, t, expected) in [
        ("x1.y", 1.0, 0.5),
        ("x1.y", 1.5, 2.0),
        ("x1.y", 2.0, 3.5),
        ("x2.y", 1.0, 0.7 + 0.3 * 2.0),
        ("x2.y", 2.0, 1.2),
        ("x3.y", 1.0, 0.7),
        ("x3.y", 2.0, 1.4),
        ("lin.y[1]", 0.99, 0.99),
        ("lin.y[1]", 1.01, 3.0),
        ("cst.y[1]", 1.29, 2.0),
        ("cst.y[1]", 1.31, -1.0),
        // Table time (0.69 - 0.1)/2 = 0.295 on the rise from 0 to 1 over [0, 0.3), and 0.305 on
        // the fall from 2 to 0 over [0.3, 0.5).
        ("per.y[1]", 0.69, 0.295 / 0.3),
        ("per.y[1]", 0.71, 2.0 - 2.0 * 0.005 / 0.2),
    ] {
        check(&r, name, t, expected, 1e-9);
    }
}

#[test]
fn combi_tables_interpolate_at_their_inputs() {
    let text = model(
        "  Modelica.Blocks.Sources.ContinuousClock u;
           Modelica.Blocks.Sources.ContinuousClock u2(offset = -1);
           Modelica.Blocks.Tables.CombiTable1Ds lin(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
           Modelica.Blocks.Tables.CombiTable1Ds cst(table = [0, 0, 10; 1, 2, 20; 3, 2, 0],
             columns = {3}, smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments,
             extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint);
           Modelica.Blocks.Tables.CombiTable1Dv vec(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
           Modelica.Blocks.Tables.CombiTable2Ds bil(table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10]);
           Modelica.Blocks.Tables.CombiTable2Ds hold(table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10],
             extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint);",
        "  connect(u.y, lin.u); connect(u.y, cst.u);
           connect(u.y, vec.u[1]); connect(u2.y, vec.u[2]);
           connect(u.y, bil.u1); connect(u2.y, bil.u2);
           connect(u.y, hold.u1); connect(u2.y, hold.u2);",
    );
    let r = run(&text, 4.0);
    // The 2-D table has the u1 grid {0, 2}, the u2 grid {0, 1, 2} and the values
    // {0, 1, 4} at u1 = 0 and {2, 3, 10} at u1 = 2; bil is read at (t, t - 1).
    let bilinear = |u1: f64, u2: f64| {
        let row = |v: [f64; 3]| {
            if u2 <= 1.0 {
                v[0] + (v[1] - v[0]) * u2
            } else {
                v[1] + (v[2] - v[1]) * (u2 - 1.0)
            }
        };
        let (a, b) = (row([0.0, 1.0, 4.0]), row([2.0, 3.0, 10.0]));
        a + (b - a) * u1 / 2.0
    };
    for (name, t, expected) in [
        // At the grid points and between them; past the last point the line through the last
        // two continues.
        ("lin.y[1]", 1.0, 2.0),
        ("lin.y[1]", 0.25, 0.5),
        ("lin.y[2]", 2.0, 10.0),
        ("lin.y[2]", 3.0, 0.0),
        ("lin.y[2]", 4.0, -10.0),
        ("cst.y[1]", 0.5, 10.0),
        ("cst.y[1]", 1.0, 20.0),
        ("cst.y[1]", 2.99, 20.0),
        ("cst.y[1]", 3.5, 0.0),
        // Each output at its own input: column 2 at t, column 3 at t - 1.
        ("vec.y[1]", 0.5, 1.0),
        ("vec.y[2]", 0.5, 5.0),
        ("vec.y[2]", 2.5, 15.0),
        ("bil.y", 1.0, 1.0),
        ("bil.y", 1.5, bilinear(1.5, 0.5)),
        ("bil.y", 2.0, 3.0),
        ("bil.y", 2.5, bilinear(2.5, 1.5)),
        ("bil.y", 3.5, bilinear(3.5, 2.5)),
        // Held at the grid's edges: (4, 3) reads the corner value 10.
        ("hold.y", 4.0, 10.0),
        ("hold.y", 0.5, 0.5 * 2.0 / 2.0),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
    // The bilinear formula is not the trivial one: at (1.5, 0.5) it is 0.5 + 0.75*(2.5 - 0.5).
    check(&r, "bil.y", 1.5, 2.0, 1e-12);
}

#[test]
fn boolean_integer_and_clock_sources() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable bt(table = {0.25, 0.75, 1.25, 1.5, 2.5});
           Modelica.Blocks.Sources.BooleanTable per(table = {0.5, 1, 1.5}, startValue = true,
             extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic);
           Modelica.Blocks.Sources.IntegerTable it(table = [0, 1; 1, 3; 2, -5]);
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Sources.BooleanConstant no(k = false);
           Modelica.Blocks.Sources.IntegerConstant four(k = 4);
           Modelica.Blocks.Sources.IntegerExpression ie(y = 2*four.y);
           Modelica.Blocks.Sources.ContinuousClock clock(offset = 1, startTime = 0.5);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.4, startTime = 0.2);
           Integer ticks(start = 0, fixed = true);",
        "  when trigger.y then ticks = pre(ticks) + 1; end when;",
    );
    let r = run(&text, 3.0);
    for (name, t, expected) in [
        ("bt.y", 0.1, 0.0),
        ("bt.y", 0.5, 1.0),
        ("bt.y", 1.0, 0.0),
        ("bt.y", 1.4, 1.0),
        ("bt.y", 2.0, 0.0),
        ("bt.y", 2.9, 1.0),
        // Period 1 from 0.5: false on [0.5, 1), true on [1, 1.5), repeated before and after.
        ("per.y", 0.2, 1.0),
        ("per.y", 0.7, 0.0),
        ("per.y", 1.2, 1.0),
        ("per.y", 1.7, 0.0),
        ("per.y", 2.2, 1.0),
        ("it.y", 0.5, 1.0),
        ("it.y", 1.5, 3.0),
        ("it.y", 2.5, -5.0),
        ("yes.y", 1.0, 1.0),
        ("no.y", 1.0, 0.0),
        ("four.y", 1.0, 4.0),
        ("ie.y", 1.0, 8.0),
        ("clock.y", 0.3, 1.0),
        ("clock.y", 2.0, 2.5),
        // Ticks at 0.2, 0.6, ..., 2.6: three by t = 1.1, seven by t = 3.
        ("ticks", 1.1, 3.0),
        ("ticks", 3.0, 7.0),
        ("trigger.y", 1.1, 0.0),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
}

#[test]
fn triggered_trapezoid_zero_crossing_and_terminate_simulation() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable u(table = {0.25, 0.75, 1.25, 1.5});
           Modelica.Blocks.Logical.TriggeredTrapezoid trap(amplitude = 2, rising = 0.5,
             falling = 0.25, offset = 1);
           Modelica.Blocks.Sources.Sine sine(f = 1, phase = 0.3);
           Modelica.Blocks.Logical.ZeroCrossing zc;
           Modelica.Blocks.Sources.ContinuousClock clock;
           Modelica.Blocks.Logical.GreaterThreshold late(threshold = 2.3);
           Modelica.Blocks.Logical.TerminateSimulation stop(condition = late.y,
             terminationText = \"the clock passed 2.3\");
           Integer crossings(start = 0, fixed = true);",
        "  connect(u.y, trap.u); connect(sine.y, zc.u); connect(u.y, zc.enable);
           connect(clock.y, late.u);
           when zc.y then crossings = pre(crossings) + 1; end when;",
    );
    let r = run(&text, 4.0);
    // The run ends where the clock passes 2.3.
    let end = *r.time().last().unwrap();
    assert!((end - 2.3).abs() < 1e-9, "the run ends at {end}");
    let (_, message) = r.summary.terminated.clone().expect("terminated");
    assert_eq!(message, "the clock passed 2.3");
    // Rises at 4 per second from 0.25 and reaches 3 at 0.75, falls at 8 per second to 1 at 1;
    // rises again from 1.25, turns at 2 at 1.5 and is back at 1 at 1.625.
    for (t, y) in [
        (0.1, 1.0),
        (0.5, 2.0),
        (0.875, 2.0),
        (1.1, 1.0),
        (1.375, 1.5),
        (1.56, 1.52),
        (2.0, 1.0),
    ] {
        check(&r, "trap.y", t, y, 1e-9);
    }
    // sin(2 pi t + 0.3) crosses zero at (k pi - 0.3)/(2 pi): 0.4523 and 0.9523 while u is true
    // on [0.25, 0.75) and [1.25, 1.5), and 1.4523 in the second window.
    let cross = |k: f64| (k * PI - 0.3) / (2.0 * PI);
    assert!(cross(1.0) > 0.25 && cross(2.0) > 0.75 && cross(3.0) > 1.25 && cross(3.0) < 1.5);
    check(&r, "crossings", 0.5, 1.0, 0.0);
    check(&r, "crossings", 1.2, 1.0, 0.0);
    check(&r, "crossings", 2.0, 2.0, 0.0);
}

#[test]
fn tables_whose_abscissas_decrease_are_refused() {
    for (block, message) in [
        (
            "Modelica.Blocks.Sources.CombiTimeTable t(table = [0, 0; 2, 1; 1, 3]);",
            "the times in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Sources.BooleanTable t(table = {1, 0.5});",
            "the times in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Tables.CombiTable1Ds t(table = [0, 0; 2, 1; 1, 3]);
             Modelica.Blocks.Sources.Constant c; equation connect(c.y, t.u);",
            "the abscissas in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Tables.CombiTable2Ds t(table = [0, 0, 1; 0, 1, 2; -1, 3, 4]);
             Modelica.Blocks.Sources.Constant c; equation connect(c.y, t.u1); connect(c.y, t.u2);",
            "the grids in the first column and the first row of the table must not decrease",
        ),
    ] {
        let mut m = compile(&format!("model M\n  {block}\nend M;\n"));
        let settings = RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        };
        let error = m.simulate(&settings).err().unwrap_or_else(|| panic!("{block} runs"));
        assert!(error.to_string().contains(message), "{block}: {error}");
    }
}
