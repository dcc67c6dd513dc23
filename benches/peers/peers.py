#!/usr/bin/env python3
"""SciPy's and SUNDIALS CVODE's side of the side-by-side benchmark (`bash benches/peers/run`).

Input: the problems of `benches/peers.rs`, written out again here (the right-hand sides of the
stiff ones in `benches/stiff_problems.py`): Van der Pol with mu = 1000
(Hairer's scaling, to t = 2), Robertson to t = 1e5, HIRES (to 321.8122), the regularised
stick-slip oscillator (x0 = 1e-3, to t = 12) and the chain of N = 100, 1000, 10,000 masses (to
t = 100, state [s_1..s_N, v_1..v_N]). Output: one CSV row per (problem, rtol, tool, method) on
standard output, in the columns of `benches/peers/table.py`; progress on standard error.

SciPy: `solve_ivp` with RK45 and DOP853 (explicit) and BDF and Radau (implicit), given the exact
Jacobian (dense for the small problems, a constant scipy.sparse matrix for the chain, so the
implicit methods use a sparse LU). The small problems' right-hand sides are plain Python
functions, the chain's uses NumPy vector operations.

CVODE: SUNDIALS CVODES through casadi (the `cvodes` integrator plugin), with Adams and functional
iteration (the explicit-like variant) and with BDF and Newton iteration; the right-hand side is a
casadi expression evaluated by casadi's virtual machine, and the Jacobian is the exact one from
casadi's algorithmic differentiation, sparse, factored by casadi's sparse LU (csparse). casadi by
default recomputes the Jacobian before every factorisation; this benchmark turns that off so
CVODE reuses Jacobians as SUNDIALS does on its own.

Timing and error follow `benches/peers.rs`: the best wall time of 3 to 10 solves (1 when a solve
takes over 10 s) of the solve alone (building the right-hand side, the Jacobian and casadi's
integrator object is not timed), and max_i |x_i - ref_i| / (|ref_i| + atol/rtol) at the end time.
Deliberately not here: EQM and diffsol, and the table.
"""

import math
import os
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.integrate import solve_ivp

try:
    import casadi as ca
except ImportError:  # casadi has no wheel for every platform: CVODE's rows say so
    ca = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from stiff_problems import HIRES_REFERENCE, HIRES_Y0, VDP_REFERENCE, hires, robertson, vdp  # noqa: E402

RTOLS = (1e-4, 1e-6, 1e-8, 1e-10)
# A solve slower than this (seconds) skips the tighter tolerances of its method.
SKIP_AFTER_S = 15.0


# The small problems: f(y, lib) works on Python lists with lib = math and on casadi symbols
# with lib = casadi, so that both tools integrate the same expressions. Van der Pol, Robertson
# and HIRES come from benches/stiff_problems.py, which benches/stiff_compare.py shares.
def stick_slip(y, lib):
    return [y[1], -2.0 / math.pi * lib.atan((y[1] - 0.4) / 1e-3) - y[0]]


def vdp_jac(y):
    return [[0.0, 1.0], [(-2.0 * y[0] * y[1] - 1.0) / 1e-6, (1.0 - y[0] * y[0]) / 1e-6]]


def robertson_jac(y):
    return [[-0.04, 1e4 * y[2], 1e4 * y[1]],
            [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
            [0.0, 6e7 * y[1], 0.0]]


def hires_jac(y):
    return [[-1.71, 0.43, 8.32, 0, 0, 0, 0, 0],
            [1.71, -8.75, 0, 0, 0, 0, 0, 0],
            [0, 0, -10.03, 0.43, 0.035, 0, 0, 0],
            [0, 8.32, 1.71, -1.12, 0, 0, 0, 0],
            [0, 0, 0, 0, -1.745, 0.43, 0.43, 0],
            [0, 0, 0, 0.69, 1.71, -280.0 * y[7] - 0.43, 0.69, -280.0 * y[5]],
            [0, 0, 0, 0, 0, 280.0 * y[7], -1.81, 280.0 * y[5]],
            [0, 0, 0, 0, 0, -280.0 * y[7], 1.81, -280.0 * y[5]]]


def stick_slip_jac(y):
    u = (y[1] - 0.4) / 1e-3
    return [[0.0, 1.0], [-1.0, -2.0 / math.pi / 1e-3 / (1.0 + u * u)]]


# (name, f, exact Jacobian, y0, t_end, reference, atol factor, stiff only). The references:
# published for Van der Pol and HIRES; SciPy's Radau at rtol 1e-13 for Robertson to 1e5 and
# the stick-slip oscillator (the same numbers as in benches/peers.rs).
SMALL = [
    ("Van der Pol (mu = 1000)", vdp, vdp_jac, [2.0, -0.66], 2.0, VDP_REFERENCE, 1.0, True),
    ("Robertson", robertson, robertson_jac, [1.0, 0.0, 0.0], 1e5,
     [0.01786592114209984, 7.274751468436486e-08, 0.9821340061103834], 1e-10, True),
    ("HIRES", hires, hires_jac, HIRES_Y0, 321.8122, HIRES_REFERENCE, 1e-4, True),
    ("Stick-slip (x0 = 1e-3)", stick_slip, stick_slip_jac, [0.0, 0.0], 12.0,
     [1.044859120664063, -0.35542880600223203], 1.0, False),
]

CHAIN_C, CHAIN_D, CHAIN_M, CHAIN_T_END = 100.0, 0.1, 1.0, 100.0


def chain_matrix(n):
    """T: tridiagonal, 2 on the diagonal except 1 in the last row, -1 beside it (sparse)."""
    diagonal = np.full(n, 2.0)
    diagonal[-1] = 1.0
    off = np.full(n - 1, -1.0)
    return sp.diags([off, diagonal, off], [-1, 0, 1], format="csr")


def chain_rhs(n):
    """s' = v, m v' = -c T s - d T v, written with NumPy slices (O(n))."""
    c, d, m = CHAIN_C, CHAIN_D, CHAIN_M

    def rhs(t, x):
        s, v = x[:n], x[n:]
        # The force of spring and damper i on mass i from mass i - 1 (the wall for i = 1).
        f = np.empty(n)
        f[0] = c * s[0] + d * v[0]
        f[1:] = c * (s[1:] - s[:-1]) + d * (v[1:] - v[:-1])
        dv = np.empty(n)
        dv[:-1] = (f[1:] - f[:-1]) / m
        dv[-1] = -f[-1] / m
        return np.concatenate((v, dv))
    return rhs


def chain_jacobian(n):
    t = chain_matrix(n)
    identity = sp.identity(n, format="csr")
    zero = sp.csr_matrix((n, n))
    return sp.bmat([[zero, identity], [-CHAIN_C / CHAIN_M * t, -CHAIN_D / CHAIN_M * t]], format="csc")


def chain_exact(n, t):
    """The closed form at t: mode k of T has eigenvalue 4 sin^2(theta_k / 2), theta_k =
    (2k-1) pi / (2n+1), eigenvector sin(j theta_k) with squared norm (2n+1)/4, and is a damped
    oscillator q'' + d lambda q' + c lambda q = 0 (m = 1) from q(0) = sin(n theta_k) / norm^2 at
    rest. The sines take their arguments reduced exactly (j (2k-1) modulo 2 (2n+1), in
    integers), so the sum is accurate for n = 10,000 too. Computed in blocks of modes: O(n^2)."""
    k = np.arange(1, n + 1)
    odd = 2 * k - 1
    period = 2 * (2 * n + 1)
    theta = odd * math.pi / (2 * n + 1)
    lam = 4.0 * np.sin(theta / 2.0) ** 2
    omega2 = CHAIN_C * lam / CHAIN_M
    sigma = CHAIN_D * lam / CHAIN_M / 2.0
    omega_d = np.sqrt(omega2 - sigma * sigma)
    q0 = np.sin(((n * odd) % period) * math.pi / (2 * n + 1)) / ((2 * n + 1) / 4.0)
    decay = np.exp(-sigma * t)
    q = q0 * decay * (np.cos(omega_d * t) + sigma / omega_d * np.sin(omega_d * t))
    dq = -q0 * decay * omega2 / omega_d * np.sin(omega_d * t)
    s = np.zeros(n)
    v = np.zeros(n)
    j = np.arange(1, n + 1)
    block = max(1, 4_000_000 // n)
    for start in range(0, n, block):
        ks = slice(start, min(n, start + block))
        phi = np.sin(((np.outer(odd[ks], j)) % period) * (math.pi / (2 * n + 1)))
        s += q[ks] @ phi
        v += dq[ks] @ phi
    return np.concatenate((s, v))


def best_of(solve):
    """The timing protocol of benches/peers.rs: (runs, best time in ms, last result); a solve
    that raises or reports failure ends the repetition."""
    runs, total, best, result = 0, 0.0, float("inf"), None
    while True:
        start = time.perf_counter()
        result = solve()
        elapsed = time.perf_counter() - start
        runs += 1
        total += elapsed
        best = min(best, elapsed)
        ok = result[0] is not None
        if not (ok and runs < 10 and (total < 1.0 or (runs < 3 and total < 10.0))):
            return runs, best * 1e3, result


def error_of(x, reference, rtol, atol):
    x, reference = np.asarray(x), np.asarray(reference)
    return float(np.max(np.abs(x - reference) / (np.abs(reference) + atol / rtol)))


def row(problem, rtol, atol, tool, method, jacobian, runs="0", ms="", err="", steps="", status="ok"):
    status = status.replace(",", ";").replace("\n", " ")
    print(f"{problem},{rtol:e},{atol:e},{tool},{method},{jacobian},{runs},{ms},{err},{steps},{status}",
          flush=True)


def scipy_solver(rhs, jac, y0, t_end, method, rtol, atol):
    """A function that solves once: (end state or None, steps or error message)."""
    def solve():
        # Only the implicit methods take a Jacobian (the others warn about one).
        extra = {"jac": jac} if method in ("BDF", "Radau") else {}
        try:
            sol = solve_ivp(rhs, (0.0, t_end), y0, method=method, rtol=rtol, atol=atol, t_eval=[t_end], **extra)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as e:
            return None, f"{type(e).__name__}: {e}"
        if not sol.success:
            return None, sol.message
        # solve_ivp reports evaluations, not accepted steps (only the list of all step ends,
        # which for the chain would hold every state of every step), so steps stay empty.
        return sol.y[:, -1], ""
    return solve


def cvode_solver(expression, symbols, y0, t_end, method, rtol, atol):
    options = {
        "reltol": rtol,
        "abstol": atol,
        "max_num_steps": 50_000_000,
        "linear_multistep_method": "bdf" if method == "BDF" else "adams",
        "nonlinear_solver_iteration": "newton" if method == "BDF" else "functional",
        "linear_solver": "csparse",
        "always_recalculate_jacobian": False,
        "disable_internal_warnings": True,
    }
    integrator = ca.integrator("cvodes", "cvodes", {"x": symbols, "ode": expression}, 0.0, t_end, options)

    def solve():
        try:
            out = integrator(x0=y0)
        except RuntimeError as e:
            return None, str(e).splitlines()[-1] if str(e) else "CVODES failed"
        stats = integrator.stats()
        if not stats.get("success", True):
            return None, stats.get("return_status", "CVODES failed")
        return np.array(out["xf"]).ravel(), stats.get("nsteps", "")
    return solve


def run_rows(problem, atol_factor, reference, solvers, selected):
    """solvers: (tool, method, jacobian, make) with make(rtol, atol) -> solve function."""
    for tool, method, jacobian, make in solvers:
        if not selected(f"{problem} {tool} {method}"):
            continue
        print(f"{tool}: {problem} {method}", file=sys.stderr, flush=True)
        skip = None
        for rtol in RTOLS:
            atol = rtol * atol_factor
            if skip is not None:
                row(problem, rtol, atol, tool, method, jacobian, status=f"skipped: {skip}")
                continue
            if make is None:
                row(problem, rtol, atol, tool, method, jacobian, status="skipped: casadi is not installed")
                continue
            runs, ms, (x, steps) = best_of(make(rtol, atol))
            if x is None:
                row(problem, rtol, atol, tool, method, jacobian, status=f"failed: {steps}")
            else:
                row(problem, rtol, atol, tool, method, jacobian, runs, f"{ms:.4f}",
                    f"{error_of(x, reference, rtol, atol):.3e}", steps)
            if ms > SKIP_AFTER_S * 1e3:
                skip = f"rtol {rtol:.0e} took {ms / 1e3:.0f} s"


def main():
    # Words select rows regardless of case, as on EQM's and diffsol's sides.
    filters = [a.lower() for a in sys.argv[1:] if not a.startswith("-")]

    def selected(label):
        return all(f in label.lower() for f in filters)

    print("problem,rtol,atol,tool,method,jacobian,runs,time_ms,error,steps,status")
    print(f"SciPy {scipy.__version__}, casadi {ca.__version__ if ca else 'missing'}", file=sys.stderr)
    for name, f, jac, y0, t_end, reference, atol_factor, stiff_only in SMALL:
        n = len(y0)
        rhs = lambda t, y, f=f: f(y, math)  # noqa: E731
        jacobian = lambda t, y, jac=jac: np.array(jac(y))  # noqa: E731
        methods = ([] if stiff_only else ["RK45", "DOP853"]) + ["BDF", "Radau"]
        solvers = [("SciPy", m, "exact" if m in ("BDF", "Radau") else "-",
                    lambda rtol, atol, m=m: scipy_solver(rhs, jacobian, y0, t_end, m, rtol, atol))
                   for m in methods]
        if ca is not None:
            symbols = ca.SX.sym("y", n)
            expression = ca.vertcat(*f(symbols, ca))
        for m in ([] if stiff_only else ["Adams"]) + ["BDF"]:
            make = None if ca is None else (
                lambda rtol, atol, m=m: cvode_solver(expression, symbols, y0, t_end, m, rtol, atol))
            solvers.append(("CVODE", m, "exact (AD)" if m == "BDF" else "-", make))
        run_rows(name, atol_factor, reference, solvers, selected)

    for n in (100, 1000, 10_000):
        name = f"Chain N={n}"
        if not any(selected(f"{name} {tool} {m}") for tool, m in
                   [("SciPy", "RK45"), ("SciPy", "DOP853"), ("SciPy", "BDF"), ("SciPy", "Radau"),
                    ("CVODE", "Adams"), ("CVODE", "BDF")]):
            continue
        started = time.perf_counter()
        reference = chain_exact(n, CHAIN_T_END)
        print(f"{name}: closed form in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        y0 = np.zeros(2 * n)
        y0[n - 1] = 1.0
        rhs = chain_rhs(n)
        jac = chain_jacobian(n)
        check_chain(rhs, jac, n)
        solvers = [("SciPy", m, "exact sparse" if m in ("BDF", "Radau") else "-",
                    lambda rtol, atol, m=m: scipy_solver(rhs, jac, y0, CHAIN_T_END, m, rtol, atol))
                   for m in ("RK45", "DOP853", "BDF", "Radau")]
        if ca is not None:
            symbols = ca.SX.sym("x", 2 * n)
            s, v = symbols[:n], symbols[n:]
            t_matrix = ca.DM(chain_matrix(n).tocsc())
            expression = ca.vertcat(v, (-CHAIN_C * ca.mtimes(t_matrix, s) - CHAIN_D * ca.mtimes(t_matrix, v))
                                    / CHAIN_M)
        for m in ("Adams", "BDF"):
            make = None if ca is None else (
                lambda rtol, atol, m=m: cvode_solver(expression, symbols, y0, CHAIN_T_END, m, rtol, atol))
            solvers.append(("CVODE", m, "exact sparse (AD)" if m == "BDF" else "-", make))
        run_rows(name, 1.0, reference, solvers, selected)


def check_chain(rhs, jac, n):
    """The NumPy right-hand side against the sparse Jacobian (the chain is linear, so they must
    agree to rounding at any point), and the closed form against the equations for a small
    chain by central differences in time: a wrong reference cannot pass as an error."""
    x = np.sin(np.arange(2 * n) * 0.7)
    assert np.allclose(rhs(0.0, x), jac @ x, rtol=1e-12, atol=1e-9), "chain: rhs and Jacobian differ"
    small, t, delta = 7, 1.3, 1e-6
    derivative = (chain_exact(small, t + delta) - chain_exact(small, t - delta)) / (2 * delta)
    expected = chain_rhs(small)(t, chain_exact(small, t))
    assert np.allclose(derivative, expected, rtol=1e-6, atol=1e-6), "chain: the closed form is wrong"
    start = chain_exact(small, 0.0)
    assert abs(start[small - 1] - 1.0) < 1e-12 and np.max(np.abs(np.delete(start, small - 1))) < 1e-12, \
        "chain: the closed form does not start at the initial state"


if __name__ == "__main__":
    main()
