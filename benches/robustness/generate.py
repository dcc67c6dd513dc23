#!/usr/bin/env python3
"""Writes one large or deeply nested model of a given shape and size to standard output.

Usage: generate.py SHAPE N

Shapes (the model to check is named in brackets):
  neural      a neural-network-like model with N hidden neurons whose parameter matrices are
              built by array comprehensions; two layers `tanh(W*x + b)` [Net]
  packages    N packages nested in each other, the innermost holding a model [P1.P2...PN.M]
  components  a chain of N component levels, `model Mi M(i+1) m; end Mi;` [M1]
  extends     a chain of N extends levels, `model Mi extends M(i+1); end Mi;` [M1]
  nested_ifs  N if-equations nested in each other's `then` branch, run to t = 1e-4 [M]

`measure.py` runs `eqm check` (and `eqm run` for nested_ifs) on each shape at growing sizes.
"""

import sys


def neural(n: int) -> str:
    return f"""model Net
  parameter Integer n = {n};
  parameter Real W1[n, n] = {{{{sin(i*j) for j in 1:n}} for i in 1:n}};
  parameter Real b1[n] = {{0.1*i/n for i in 1:n}};
  parameter Real W2[n, n] = {{{{cos(i + j)/n for j in 1:n}} for i in 1:n}};
  parameter Real b2[n] = {{-0.1*i/n for i in 1:n}};
  Real x[n](each start = 0.1, each fixed = true);
  Real h[n];
  Real y[n];
equation
  h = tanh(W1*x + b1);
  y = tanh(W2*h + b2);
  der(x) = y - x;
end Net;
"""


def packages(n: int) -> str:
    parts = [f"package P{i}\n" for i in range(1, n + 1)]
    parts.append("model M\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend M;\n")
    parts.extend(f"end P{i};\n" for i in range(n, 0, -1))
    return "".join(parts)


def components(n: int) -> str:
    parts = [f"model M{i} M{i + 1} m; end M{i};\n" for i in range(1, n)]
    parts.append(f"model M{n} Real x(start = 1, fixed = true); equation der(x) = -x; end M{n};\n")
    return "".join(parts)


def extends(n: int) -> str:
    parts = [f"model M{i} extends M{i + 1}; end M{i};\n" for i in range(1, n)]
    parts.append(f"model M{n} Real x(start = 1, fixed = true); equation der(x) = -x; end M{n};\n")
    return "".join(parts)


def nested_ifs(n: int) -> str:
    # Level i (from 0) is `if time >= i*1e-3 then <level i+1> else u = i; end if;`; the
    # innermost sets u = n. So on ((k-1)e-3, k e-3) the value is u = k.
    parts = ["model M\n  Real u;\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = u;\n"]
    parts.extend(f"if time >= {i}e-3 then\n" for i in range(n))
    parts.append(f"u = {n};\n")
    parts.extend(f"else\nu = {i};\nend if;\n" for i in range(n - 1, -1, -1))
    parts.append("end M;\n")
    return "".join(parts)


SHAPES = {
    "neural": neural,
    "packages": packages,
    "components": components,
    "extends": extends,
    "nested_ifs": nested_ifs,
}


def model_name(shape: str, n: int) -> str:
    if shape == "neural":
        return "Net"
    if shape == "packages":
        return ".".join(f"P{i}" for i in range(1, n + 1)) + ".M"
    if shape == "nested_ifs":
        return "M"
    return "M1"


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES:
        sys.exit(__doc__)
    sys.stdout.write(SHAPES[sys.argv[1]](int(sys.argv[2])))


if __name__ == "__main__":
    main()
