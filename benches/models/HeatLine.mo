// About 1100 equations written with arrays and for-equations, the size at which EQM and Rumoca
// are compared in benches/README.md: the rows are simple and causal, so the time goes to flattening
// arrays, alias elimination and sorting, not to algebraic loops.
model HeatLine "A rod in N segments: heat conduction between neighbours, loss to the air, a heater at one end"
  parameter Integer N = 220;
  parameter Real L = 1 "Length";
  parameter Real k = 50 "Conductivity";
  parameter Real A = 1e-4 "Cross-section";
  parameter Real rho_c = 3.6e6 "Volumetric heat capacity";
  parameter Real h = 10 "Heat transfer coefficient to the air";
  parameter Real p = 0.01 "Perimeter";
  parameter Real T_air = 293.15;
  parameter Real dx = L / N;
  parameter Real C = rho_c * A * dx;
  parameter Real G = k * A / dx;
  Real T[N](each start = 293.15, each fixed = true) "Segment temperatures";
  Real Q[N + 1] "Heat flows into segment i from segment i - 1";
  Real Qair[N] "Heat loss to the air";
  Real dT[N] "Temperature above the air";
  Real E[N] "Stored heat above the air";
equation
  Q[1] = 10;
  Q[N + 1] = 0;
  for i in 2:N loop
    Q[i] = G * (T[i - 1] - T[i]);
  end for;
  dT = T - fill(T_air, N);
  E = C * dT;
  for i in 1:N loop
    Qair[i] = h * p * dx * dT[i];
    C * der(T[i]) = Q[i] - Q[i + 1] - Qair[i];
  end for;
end HeatLine;
