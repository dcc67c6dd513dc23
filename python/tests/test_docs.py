"""The Python code blocks of docs/python.md run, in order, in one namespace (as the cells of a
notebook would), from the repository root."""

import os
import re

import pytest

from conftest import REPO

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_python_tour_runs():
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    namespace = {}
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for block in blocks:
            exec(compile(block, "docs/python.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
