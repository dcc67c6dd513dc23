#!/usr/bin/env python3
"""The table of the side-by-side benchmark (`bash benches/peers/run`).

Input: CSV files with the columns problem, rtol, atol, tool, method, jacobian, runs, time_ms,
error, steps, status (one per tool: `cargo bench --bench peers`, the diffsol crate's `peers`
mode, `benches/peers/peers.py`). Output: one table on standard output, rows grouped by problem
and tolerance, and with `--csv FILE` the merged rows in that order. It deliberately computes
nothing: every number comes from the tool that measured it.
"""

import csv
import sys

PROBLEMS = ["Van der Pol (mu = 1000)", "Robertson", "HIRES", "Stick-slip (x0 = 1e-3)",
            "Chain N=100", "Chain N=1000", "Chain N=10000"]
TOOLS = ["EQM", "diffsol", "SciPy", "CVODE"]
COLUMNS = ["problem", "rtol", "atol", "tool", "method", "jacobian", "runs", "time_ms", "error", "steps",
           "status"]


def order(row):
    problem = PROBLEMS.index(row["problem"]) if row["problem"] in PROBLEMS else len(PROBLEMS)
    tool = TOOLS.index(row["tool"]) if row["tool"] in TOOLS else len(TOOLS)
    # Explicit methods before implicit ones within a tool: their jacobian column is "-".
    return (problem, row["problem"], -float(row["rtol"]), row["jacobian"] != "-", tool, row["method"])


def main():
    args = sys.argv[1:]
    out = None
    if "--csv" in args:
        i = args.index("--csv")
        out = args[i + 1]
        del args[i:i + 2]
    rows = []
    for path in args:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if set(COLUMNS) - set(row):
                    sys.exit(f"{path}: not a benchmark file (columns {sorted(row)})")
                rows.append(row)
    rows.sort(key=order)
    header = f"{'problem':<24} {'rtol':>6} {'tool':<8} {'method':<14} {'jacobian':<18} {'time ms':>10} " \
             f"{'error':>9} {'steps':>8} {'runs':>4}  status"
    print(header)
    previous = None
    for row in rows:
        # The tools print the tolerance in different notations: group by its value.
        group = (row["problem"], float(row["rtol"]))
        if previous is not None and group != previous:
            print()
        previous = group
        time_ms = f"{float(row['time_ms']):.3f}" if row["time_ms"] else ""
        status = "" if row["status"] == "ok" else row["status"]
        print(f"{row['problem']:<24} {float(row['rtol']):>6.0e} {row['tool']:<8} {row['method']:<14} "
              f"{row['jacobian']:<18} {time_ms:>10} {row['error']:>9} {row['steps']:>8} {row['runs']:>4}  {status}")
    if out:
        with open(out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
