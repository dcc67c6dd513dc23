// About 1100 equations written with arrays and for-equations, with 160 small linear algebraic
// loops (one per resistive node) that the structural analysis tears: compare HeatLine.mo.
model Ladder "An RC ladder in N cells written with arrays and for-equations: each cell has a capacitive node v, a series resistor to its resistive node u, a resistor from u to ground and a series resistor from u to the next cell; each resistive node is a small algebraic loop"
  parameter Integer N = 160;
  parameter Real R[N] = fill(1, N) "Series resistances";
  parameter Real Rg[N] = fill(10, N) "Resistances to ground";
  parameter Real C = 1e-3;
  parameter Real V0 = 1 "Source voltage";
  Real v[N](each start = 0, each fixed = true) "Capacitive node voltages";
  Real u[N] "Resistive node voltages";
  Real ia[N] "Current from v[k] to u[k]";
  Real ib[N] "Current from u[k] to v[k + 1] (to ground in the last cell)";
  Real ig[N] "Current from u[k] to ground";
  Real p[N] "Power dissipated in the series resistors";
  Real q[N] "Charge on the capacitors";
equation
  for k in 1:N loop
    ia[k] = (v[k] - u[k]) / R[k];
    ia[k] = ib[k] + ig[k];
  end for;
  for k in 1:N - 1 loop
    ib[k] = (u[k] - v[k + 1]) / R[k];
  end for;
  ib[N] = u[N] / R[N];
  ig = u ./ Rg;
  C * der(v[1]) = (V0 - v[1]) / R[1] - ia[1];
  for k in 2:N loop
    C * der(v[k]) = ib[k - 1] - ia[k];
  end for;
  p = R .* ia .* ia;
  q = C * v;
end Ladder;
