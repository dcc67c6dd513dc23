"""Reads EQM's result files back with the data tools: Parquet and Arrow IPC with pyarrow and
pandas, MAT v4 with scipy.io.loadmat, and checks that they hold the names, units,
descriptions, dtypes and values of the CSV of the same run, bit for bit.

Usage: python3 check_result_files.py EQM_BINARY SCRATCH_DIRECTORY (run in the repository root).
Exits non-zero with a message on the first difference.
"""

import csv as _csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq
import scipy.io

EQM, SCRATCH = sys.argv[1], Path(sys.argv[2])
MODEL = "examples/bouncing_ball.eqm"
# The columns of the bouncing ball with their units and descriptions (the model's text).
EXPECTED_META = {
    "time": ("s", "Simulation time"),
    "h": ("m", "Height above the floor"),
    "v": ("m/s", "Velocity (upwards)"),
}
checks = 0


def check(condition, message):
    global checks
    if not condition:
        sys.exit(f"FAILED: {message}")
    checks += 1


def run(out):
    done = subprocess.run([EQM, "run", MODEL, "--out", str(out)], capture_output=True, text=True)
    check(done.returncode == 0, f"eqm run --out {out}: {done.stderr}")


def same_bits(a, b):
    a, b = np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


SCRATCH.mkdir(parents=True, exist_ok=True)
paths = {ext: SCRATCH / f"ball.{ext}" for ext in ["csv", "parquet", "arrow", "mat"]}
for path in paths.values():
    run(path)
# The CSV's numbers are the shortest text that reads back to the same double: Python's float()
# reads them exactly.
with open(paths["csv"], newline="") as f:
    lines = list(_csv.reader(f))
names = lines[0]
csv = {name: np.array([float(row[k]) for row in lines[1:]]) for k, name in enumerate(names)}
check(names == list(EXPECTED_META), f"CSV header {names}")


def check_table(table, what):
    check(table.column_names == names, f"{what}: names {table.column_names}")
    for field in table.schema:
        check(field.type == pa.float64(), f"{what}: {field.name} is {field.type}")
        unit, description = EXPECTED_META[field.name]
        meta = field.metadata or {}
        check(meta.get(b"unit") == unit.encode(), f"{what}: unit of {field.name}: {meta}")
        check(meta.get(b"description") == description.encode(), f"{what}: description of {field.name}")
    file_meta = table.schema.metadata or {}
    check(file_meta.get(b"model") == b"BouncingBall", f"{what}: file metadata {file_meta}")
    check(file_meta.get(b"experiment.stop") == b"3", f"{what}: experiment {file_meta}")
    frame = table.to_pandas()
    for name in names:
        check(frame[name].dtype == np.float64, f"{what}: dtype of {name}")
        check(same_bits(frame[name].to_numpy(), csv[name]), f"{what}: values of {name}")


check_table(pq.read_table(paths["parquet"]), "Parquet")
check(
    same_bits(pd.read_parquet(paths["parquet"])["h"].to_numpy(), csv["h"]),
    "pandas.read_parquet",
)
with pa.ipc.open_file(paths["arrow"]) as reader:
    check_table(reader.read_all(), "Arrow IPC")
check(same_bits(pd.read_feather(paths["arrow"])["v"].to_numpy(), csv["v"]), "pandas.read_feather")

# MAT v4 as Modelica tools write it; the character matrices are read as characters and joined
# by column ("binTrans"), as the readers of this layout do.
mat = scipy.io.loadmat(paths["mat"], chars_as_strings=False)


def texts(matrix, by_column):
    rows = matrix.T if by_column else matrix
    return ["".join(row).rstrip("\x00") for row in rows]


check(texts(mat["Aclass"], False) == ["Atrajectory", "1.1", "", "binTrans"], f"Aclass {mat['Aclass']}")
check(texts(mat["name"], True) == names, f"name {texts(mat['name'], True)}")
descriptions = [f"{d} [{u}]" for u, d in EXPECTED_META.values()]
check(texts(mat["description"], True) == descriptions, f"description {texts(mat['description'], True)}")
info = mat["dataInfo"]
check(info.dtype == np.int32 and info.shape == (4, 3), f"dataInfo {info.dtype} {info.shape}")
check(info[:, 0].tolist() == [0, 1, 0, -1], f"dataInfo of time {info[:, 0]}")
for k, name in enumerate(names[1:], start=1):
    check(info[:, k].tolist() == [2, k + 1, 0, -1], f"dataInfo of {name}: {info[:, k]}")
data_1, data_2 = mat["data_1"], mat["data_2"]
check(data_1.dtype == np.float64 and data_1.shape == (1, 2), f"data_1 {data_1.shape}")
check(data_1[0].tolist() == [0.0, 3.0], f"data_1 holds the start and stop time: {data_1}")
check(data_2.dtype == np.float64 and data_2.shape == (3, len(csv["time"])), f"data_2 {data_2.shape}")
for k, name in enumerate(names):
    column = abs(int(info[1, k])) - 1
    check(same_bits(data_2[column], csv[name]), f"MAT values of {name}")

print(f"result files: all {checks} checks hold")
