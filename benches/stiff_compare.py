#!/usr/bin/env python3
"""Work-precision of SciPy (Radau, BDF, LSODA) and SUNDIALS CVODES (through casadi) on the stiff
test set of `benches/stiff.rs`, for comparison with `cargo bench --bench stiff` (same problems,
tolerances, atol scaling and error measure).

Installs scipy and casadi from PyPI when they are missing. Times are the best of several runs of
the solve alone (right-hand sides as NumPy-free Python functions for SciPy, as casadi
expressions compiled by casadi for CVODES; each with its analytic Jacobian where the library
takes one: SciPy gets the exact Jacobian, CVODES computes it by algorithmic differentiation).
"""

import importlib
import subprocess
import sys
import time


def ensure(package):
    try:
        return importlib.import_module(package)
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", package])
        return importlib.import_module(package)


np = ensure("numpy")
ensure("scipy")
from scipy.integrate import solve_ivp  # noqa: E402

try:
    ca = ensure("casadi")
except Exception:  # casadi has no wheel for every platform
    ca = None

# This script's directory is on the module path when it runs.
from stiff_problems import HIRES_REFERENCE, HIRES_Y0, VDP_REFERENCE, hires, robertson, vdp  # noqa: E402


def orego(y, m):
    return [
        77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1])),
        (y[2] - (1.0 + y[0]) * y[1]) / 77.27,
        0.161 * (y[0] - y[2]),
    ]


PROBLEMS = [
    ("Robertson", robertson, [1.0, 0.0, 0.0], 40.0,
     [0.7158270687193, 9.185534764529e-6, 0.2841637457459], 1e-10),
    ("Robertson", robertson, [1.0, 0.0, 0.0], 1e5, None, 1e-10),
    ("HIRES", hires, HIRES_Y0, 321.8122, HIRES_REFERENCE, 1e-4),
    ("Van der Pol (mu = 1000)", vdp, [2.0, -0.66], 2.0, VDP_REFERENCE, 1.0),
    ("Oregonator", orego, [1.0, 2.0, 3.0], 360.0,
     [0.1000814870318523e1, 0.1228178521549917e4, 0.1320554942846706e3], 1.0),
]


def jacobian_of(f, n):
    if ca is None:
        return None
    y = ca.SX.sym("y", n)
    fy = ca.vertcat(*f(y, ca))
    jac = ca.Function("jacobian_f", [y], [ca.jacobian(fy, y)])
    return lambda t, v: np.array(jac(v))


def best_time(run, repeats=5):
    best = float("inf")
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3, result


def error_of(x, reference, rtol, atol):
    return max(abs(a - b) / (abs(b) + atol / rtol) for a, b in zip(x, reference))


def main():
    print(f"{'problem':<30} {'method':>7} {'rtol':>7} {'time ms':>10} {'f evals':>8} {'jac':>5} {'error':>10}")
    for name, f, y0, t_end, reference, atol_factor in PROBLEMS:
        n = len(y0)
        rhs = lambda t, y, f=f: f(y, None)  # noqa: E731
        jac = jacobian_of(f, n)
        if reference is None:
            reference = solve_ivp(rhs, (0, t_end), y0, method="Radau", rtol=1e-12, atol=1e-22, jac=jac).y[:, -1]
        for rtol in (1e-4, 1e-6, 1e-8):
            atol = rtol * atol_factor
            for method in ("Radau", "BDF", "LSODA"):
                ms, sol = best_time(lambda: solve_ivp(rhs, (0, t_end), y0, method=method, rtol=rtol,
                                                      atol=atol, jac=jac, t_eval=[t_end]))
                if not sol.success:
                    print(f"{name + ' t=' + str(t_end):<30} {method:>7} {rtol:>7.0e} failed: {sol.message}")
                    continue
                err = error_of(sol.y[:, -1], reference, rtol, atol)
                print(f"{name + ' t=' + str(t_end):<30} {method:>7} {rtol:>7.0e} {ms:>10.3f} {sol.nfev:>8} "
                      f"{sol.njev:>5} {err:>10.2e}")
            if ca is not None:
                y = ca.SX.sym("y", n)
                dae = {"x": y, "ode": ca.vertcat(*f(y, ca))}
                integrator = ca.integrator("cvodes", "cvodes", dae, 0.0, t_end,
                                           {"reltol": rtol, "abstol": atol, "max_num_steps": 10**7})
                ms, out = best_time(lambda: integrator(x0=y0))
                x = np.array(out["xf"]).ravel()
                stats = integrator.stats()
                err = error_of(x, reference, rtol, atol)
                print(f"{name + ' t=' + str(t_end):<30} {'CVODES':>7} {rtol:>7.0e} {ms:>10.3f} "
                      f"{stats.get('nfevals', -1):>8} {stats.get('njevals', -1):>5} {err:>10.2e}")


if __name__ == "__main__":
    main()
