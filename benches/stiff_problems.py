"""The right-hand sides and published references of the stiff problems that both Python
benchmarks run: `benches/stiff_compare.py` and `benches/peers/peers.py` (the same problems as
`crates/eqm-testkit/src/stiff.rs`). Each f(y, lib) returns the derivatives as a list and uses only
arithmetic, so it works on Python lists and on casadi symbols alike; `lib` is there for the
problems that call a function (such as atan) from the library of their arguments.
"""


def vdp(y, lib):
    return [y[1], ((1.0 - y[0] * y[0]) * y[1] - y[0]) / 1e-6]


def robertson(y, lib):
    return [
        -0.04 * y[0] + 1e4 * y[1] * y[2],
        0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1],
        3e7 * y[1] * y[1],
    ]


def hires(y, lib):
    f6 = 280.0 * y[5] * y[7]
    return [
        -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
        1.71 * y[0] - 8.75 * y[1],
        -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
        8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
        -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6],
        -f6 + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
        f6 - 1.81 * y[6],
        -f6 + 1.81 * y[6],
    ]


# Van der Pol with mu = 1000 in Hairer's scaling, to t = 2, and HIRES to t = 321.8122: the
# published states at the end time (IVP test set).
VDP_REFERENCE = [0.1706167732170469e1, -0.8928097010248125]
HIRES_Y0 = [1, 0, 0, 0, 0, 0, 0, 0.0057]
HIRES_REFERENCE = [0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4,
                   0.1175651343283149e-2, 0.2386356198831331e-2, 0.6238968252742796e-2,
                   0.2849998395185769e-2, 0.2850001604814231e-2]
