//! User functions and algorithm sections run by the interpreter, checked against the values
//! their statements give by hand.
//!
//! An algorithm section that restarts from the start values, `while` loops, `for` loops with
//! `break` and negative steps, early returns, several outputs and recursion.

use super::*;

#[test]
fn cooling_runs_its_function_and_algorithm_section() {
    let program = check("cooling.eqm", &example("cooling.eqm"));
    let mut inst = instance(&program);
    // h = 10*(1 + 0.02*|T - Tamb|), C*der(T) = -h*A*(T - Tamb); Tamb is 293 before t = 600
    // and 295 after.
    let expected = |t_amb: f64, t: f64| {
        let h = 10.0 * (1.0 + 0.02 * (t - t_amb).abs());
        -h * 0.05 * (t - t_amb) / 1000.0
    };
    assert_close(rhs(&mut inst, 0.0, &[360.0])[0], expected(293.0, 360.0), 1e-14);
    assert_eq!(inst.value("Tamb", &[360.0]), Some(293.0));
    // `time > 600` in the algorithm is a relation like any other: frozen between events, it
    // switches when the event handling sets it (here by hand, as the event at 600 would).
    let relation = program.symbols().lookup("$rel1").expect("the relation's variable");
    let Some(eqm_ir::slot::Slot::Work(slot)) = program.slot_of(relation) else {
        panic!("the relation has no work slot")
    };
    assert_close(rhs(&mut inst, 700.0, &[360.0])[0], expected(293.0, 360.0), 1e-14);
    inst.set_work(slot, 1.0);
    assert_close(rhs(&mut inst, 700.0, &[360.0])[0], expected(295.0, 360.0), 1e-14);
    // The algorithm starts from the start value of Tamb each time, so evaluating again does
    // not add 2 twice, and with the relation false again the earlier value comes back.
    assert_close(rhs(&mut inst, 700.0, &[290.0])[0], expected(295.0, 290.0), 1e-14);
    inst.set_work(slot, 0.0);
    assert_close(rhs(&mut inst, 100.0, &[300.0])[0], expected(293.0, 300.0), 1e-14);
}

#[test]
fn user_function_with_a_while_loop() {
    let program = check(
        "while.eqm",
        "model UsesWhile
           function sumTo \"1 + 2 + ... + n\"
             input Real n;
             output Real s;
           protected
             Real i;
           algorithm
             s := 0;
             i := 1;
             while i <= n loop
               s := s + i;
               i := i + 1;
             end while;
           end sumTo;
           parameter Real n = 4;
           Real x(start = 0, fixed = true);
         equation
           der(x) = sumTo(n) + sumTo(x);
         end UsesWhile;",
    );
    let mut inst = instance(&program);
    assert_eq!(rhs(&mut inst, 0.0, &[0.0]), vec![10.0]);
    assert_eq!(rhs(&mut inst, 0.0, &[3.5]), vec![16.0]);
    inst.set_param("n", 100.0).unwrap();
    assert_eq!(rhs(&mut inst, 0.0, &[0.0]), vec![5050.0]);
}

#[test]
fn user_functions_with_for_break_return_several_outputs_and_recursion() {
    let program = check(
        "functions.eqm",
        "model Functions
           function stats \"sum and sum of squares of 1..n, stopping after 10 terms\"
             input Integer n;
             output Real s = 0;
             output Real q = 0;
           algorithm
             for i in 1:n loop
               if i > 10 then
                 break;
               end if;
               s := s + i;
               q := q + i*i;
             end for;
           end stats;
           function fact
             input Integer n;
             output Real y;
           algorithm
             if n <= 1 then
               y := 1;
               return;
             end if;
             y := n*fact(n - 1);
           end fact;
           function down \"counts down with a negative step\"
             input Integer n;
             output Real last;
           algorithm
             for i in n:-2:1 loop
               last := i;
             end for;
           end down;
           parameter Integer n = 3;
           Real a;
           Real b;
           Real c;
           Real d;
           Real x(start = 0, fixed = true);
         equation
           (a, b) = stats(n);
           c = fact(n + 2);
           d = down(n + 4);
           der(x) = a + b + c + d;
         end Functions;",
    );
    let mut inst = instance(&program);
    let dx = rhs(&mut inst, 0.0, &[0.0]);
    assert_eq!(inst.value("a", &[0.0]), Some(6.0));
    assert_eq!(inst.value("b", &[0.0]), Some(14.0));
    assert_eq!(inst.value("c", &[0.0]), Some(120.0));
    assert_eq!(inst.value("d", &[0.0]), Some(1.0));
    assert_eq!(dx, vec![141.0]);
    // The loop stops after 10 terms.
    inst.set_param("n", 50.0).unwrap();
    rhs(&mut inst, 0.0, &[0.0]);
    assert_eq!(inst.value("a", &[0.0]), Some(55.0));
    assert_eq!(inst.value("b", &[0.0]), Some(385.0));
}
