//! Components on support flanges and fixed flanges: reaction torques, a chain of masses with
//! dampers against its modes and a locked rotor.

use super::*;

/// Support flanges. A torque source of 2 N.m with its support on a housing inertia of
/// 4 kg.m2 turns a rotor of 1 kg.m2 forward (w = 2t) and the housing backwards with the reaction
/// torque (w = -0.5t). An ideal gear of ratio 2 whose support turns at 1 rad/s, driven at
/// 5 rad/s: relative to the support the input turns at 4 rad/s and the output at 2 rad/s, so
/// the output turns at 3 rad/s absolutely; a damper of 3 N.m.s/rad there needs 9 N.m, the input
/// 4.5 N.m, and the support takes the difference, 4.5 N.m. A torque source without a support
/// flange acts against the fixed housing as before.
const SUPPORT: &str = "model Support \"Sources and gears with support flanges\"
  Modelica.Mechanics.Rotational.Components.Inertia housing(J = 4, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Inertia rotor(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.Torque torque(useSupport = true);
  Modelica.Blocks.Sources.Constant k(k = 2);
  Modelica.Mechanics.Rotational.Components.IdealGear gear(ratio = 2, useSupport = true);
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed housingSpeed(w_fixed = 1, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Sources.ConstantSpeed inputSpeed(w_fixed = 5, phi(start = 0, fixed = true));
  Modelica.Mechanics.Rotational.Components.Damper damper(d = 3);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Sources.Torque plain;
  Modelica.Mechanics.Rotational.Components.Inertia plainLoad(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
equation
  connect(k.y, torque.tau);
  connect(torque.flange, rotor.flange_a);
  connect(torque.support, housing.flange_a);
  connect(housingSpeed.flange, gear.support);
  connect(inputSpeed.flange, gear.flange_a);
  connect(gear.flange_b, damper.flange_b);
  connect(damper.flange_a, fixed.flange);
  connect(k.y, plain.tau);
  connect(plain.flange, plainLoad.flange_a);
end Support;
";

#[test]
fn support_flanges_take_the_reaction_torque_and_carry_the_gear() {
    let result = run(SUPPORT, 2.0);
    for t in [0.5_f64, 1.0, 2.0] {
        check(&result, "rotor.w", t, 2.0 * t, 1e-9);
        check(&result, "housing.w", t, -0.5 * t, 1e-9);
        check(&result, "plainLoad.w", t, 2.0 * t, 1e-9);
        check(&result, "gear.phi_a", t, 4.0 * t, 1e-9);
        check(&result, "gear.phi_b", t, 2.0 * t, 1e-9);
        check(&result, "gear.flange_b.phi", t, 3.0 * t, 1e-9);
        check(&result, "damper.tau", t, 9.0, 1e-9);
        check(&result, "inputSpeed.flange.tau", t, -4.5, 1e-9);
        check(&result, "housingSpeed.flange.tau", t, -4.5, 1e-9);
    }
}

/// The chain of `crates/eqm-testkit/src/chain.rs` (three masses m = 1, springs c = 100 with parallel
/// dampers d = 0.1, the first tied to a fixed flange, the last displaced by 1) built from the
/// library's components of `package` (`Mechanics` or `Modelica.Mechanics`).
fn damped_chain(package: &str, damper: &str) -> String {
    format!(
        "model DampedChain
  {package}.Translational.Components.Fixed fixed(s0 = 0);
  {package}.Translational.Components.Spring spring[3](each c = 100);
  {package}.Translational.Components.{damper} damper[3](each d = 0.1);
  {package}.Translational.Components.Mass mass[3](each m = 1,
    s(start = {{0, 0, 1}}, each fixed = true), v(each start = 0, each fixed = true));
equation
  connect(fixed.flange, spring[1].flange_a);
  connect(fixed.flange, damper[1].flange_a);
  for i in 1:3 loop
    connect(spring[i].flange_b, mass[i].flange_a);
    connect(damper[i].flange_b, mass[i].flange_a);
  end for;
  for i in 1:2 loop
    connect(mass[i].flange_b, spring[i + 1].flange_a);
    connect(mass[i].flange_b, damper[i + 1].flange_a);
  end for;
end DampedChain;
"
    )
}

#[test]
fn a_chain_with_dampers_on_a_fixed_flange_follows_its_modes() {
    // The damper at the fixed flange differentiates the flange's position, which alias
    // elimination replaces by the parameter s0: its derivative is 0 (was rejected as der() of
    // something that is not a state). Both packages' dampers, against the modal closed form.
    let chain = crate::chain::Chain::standard(3);
    for (package, damper) in [("Mechanics", "Damper"), ("Modelica.Mechanics", "Damper")] {
        let result = run(&damped_chain(package, damper), 2.0);
        // Times on the output grid (stop/500), where rows are not interpolated.
        for t in [0.0, 0.2, 0.4, 1.0, 2.0] {
            let exact = chain.exact(t);
            for i in 0..3 {
                check(&result, &format!("mass[{}].s", i + 1), t, exact[i], 1e-7);
                check(&result, &format!("mass[{}].v", i + 1), t, exact[3 + i], 1e-6);
            }
        }
    }
}

#[test]
fn an_emf_on_a_fixed_flange_is_a_locked_rotor() {
    // w = der(phi) of the flange held by Fixed is 0, so the EMF induces nothing: i = V/R and the
    // motor's torque k*i goes into the support.
    let text = "model Locked
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor r(R = 2);
  Modelica.Electrical.Analog.Basic.EMF emf(k = 0.5);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
equation
  connect(source.p, r.p);
  connect(r.n, emf.p);
  connect(emf.n, source.n);
  connect(source.n, ground.p);
  connect(emf.flange, fixed.flange);
end Locked;
";
    let result = run(text, 1.0);
    for t in [0.0, 0.5, 1.0] {
        check(&result, "emf.w", t, 0.0, 1e-12);
        check(&result, "emf.i", t, 5.0, 1e-12);
        check(&result, "fixed.flange.tau", t, 2.5, 1e-12);
    }
}
