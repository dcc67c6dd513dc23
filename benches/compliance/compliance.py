#!/usr/bin/env python3
"""EQM's `check` against the Modelica Association's compliance suite.

Usage: python3 benches/compliance/compliance.py SUITE [EQM]

SUITE is a checkout of the compliance suite (the directory holding `ModelicaCompliance/`);
EQM is the `eqm` binary (default target/release/eqm). Every test model carries
`__ModelicaAssociation(TestCase(shouldPass = ...))`; a model that should pass must be accepted
by `eqm check`, one that should not must be refused (those refused only when run, such as a
failing assertion, count as accepted here). Prints the counts, then each disagreement with
the first error line, and writes every outcome to `target/compliance/results.json`. Two
models are checked at a time; nothing here is timed.
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def cases(suite):
    """(model name, should pass) for every test model of the suite, sorted by name."""
    found = []
    for directory, _, files in os.walk(os.path.join(suite, "ModelicaCompliance")):
        for file in files:
            if not file.endswith(".mo") or file == "package.mo":
                continue
            path = os.path.join(directory, file)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            verdict = re.search(r"shouldPass\s*=\s*(true|false)", text)
            if verdict:
                name = os.path.relpath(path, suite)[:-3].replace(os.sep, ".")
                # The test case is the class whose annotation holds the verdict: the file's own
                # class, or one nested in it (a quoted name kept out of the file system).
                end = re.compile(r"\bend\s+('(?:[^'\\]|\\.)*'|\w+)\s*;").search(text, verdict.end())
                if end and end.group(1) != name.rsplit(".", 1)[-1]:
                    name = f"{name}.{end.group(1)}"
                found.append((name, verdict.group(1) == "true"))
    return sorted(found)


def check(eqm, suite, case):
    name, should_pass = case
    env = dict(os.environ, MODELICAPATH=suite)
    try:
        run = subprocess.run([eqm, "check", "--model", name], env=env, capture_output=True, text=True, timeout=120)
        return name, should_pass, run.returncode == 0, run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        return name, should_pass, False, "timed out after 120 s"


def first_error(output):
    lines = [line for line in output.splitlines() if re.search(r"Error|timed out", line)]
    return lines[0][:160] if lines else output[:160]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    suite = os.path.abspath(sys.argv[1])
    eqm = sys.argv[2] if len(sys.argv) > 2 else "target/release/eqm"
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda c: check(eqm, suite, c), cases(suite)))
    accepted_illegal = [r for r in results if not r[1] and r[2]]
    refused_legal = [r for r in results if r[1] and not r[2]]
    print(f"{len(results)} models: {len(accepted_illegal)} illegal ones accepted, {len(refused_legal)} legal ones refused")
    for name, *_ in accepted_illegal:
        print(f"accepted {name}")
    for name, _, _, output in refused_legal:
        print(f"refused  {name} | {first_error(output)}")
    os.makedirs("target/compliance", exist_ok=True)
    with open("target/compliance/results.json", "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
