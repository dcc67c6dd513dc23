"""Reads EQM's result files back with the data tools: Parquet and Arrow IPC with pyarrow and
pandas, MAT v4 with scipy.io.loadmat and with a reader of this script's own (each matrix's
header unpacked field by field), and checks that they hold the names, units, descriptions,
dtypes and values of the CSV of the same run, bit for bit. The files of a sweep and of the
REPL (`:run --out`, `:save`) carry the same units, descriptions and model metadata.

Usage: python3 check_result_files.py EQM_BINARY SCRATCH_DIRECTORY (run in the repository root).
Exits non-zero with a message on the first difference.
"""

import csv as _csv
import os
import struct
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


# The MAT v4 layout read a second way, without scipy: each matrix is a header of five
# little-endian 32-bit integers (type, rows, columns, imaginary flag, name length), its name
# with a closing NUL, then rows x columns elements stored column by column.
ELEMENT = {0: ("d", 8), 2: ("i", 4), 5: ("B", 1)}  # the type's digit P: double, int32, uint8


def read_mat4(path):
    data = Path(path).read_bytes()
    at, matrices = 0, {}
    while at < len(data):
        kind, rows, columns, imaginary, name_length = struct.unpack_from("<5i", data, at)
        at += 20
        name = data[at:at + name_length - 1].decode("ascii")
        check(data[at + name_length - 1] == 0, f"MAT: the name {name} ends with NUL")
        at += name_length
        machine, zero, precision, text = kind // 1000, kind // 100 % 10, kind // 10 % 10, kind % 10
        check((machine, zero, imaginary) == (0, 0, 0), f"MAT: {name} is little-endian, real: {kind}")
        check(precision in ELEMENT and text in (0, 1), f"MAT: type of {name}: {kind}")
        code, size = ELEMENT[precision]
        count = rows * columns
        values = struct.unpack_from(f"<{count}{code}", data, at)
        at += count * size
        # Column c of the matrix is values[c*rows:(c+1)*rows].
        matrices[name] = (kind, rows, columns, [values[c * rows:(c + 1) * rows] for c in range(columns)])
    check(at == len(data), "MAT: nothing after the last matrix")
    return matrices


def column_texts(matrix):
    """Each column of a character matrix as text (the transposed layout: one per variable)."""
    return ["".join(map(chr, column)).rstrip("\x00") for column in matrix[3]]


def check_mat4(path, expected_names, expected_meta, csv_columns, stop):
    m = read_mat4(path)
    check(list(m) == ["Aclass", "name", "description", "dataInfo", "data_1", "data_2"], f"MAT matrices {list(m)}")
    kind, rows, columns, aclass = m["Aclass"]
    check((kind, rows, columns) == (51, 4, 11), f"Aclass header {kind} {rows} {columns}")
    # Aclass is not transposed: row r is the r-th element of every column.
    lines = ["".join(chr(col[r]) for col in aclass).rstrip("\x00") for r in range(rows)]
    check(lines == ["Atrajectory", "1.1", "", "binTrans"], f"Aclass {lines}")
    n = len(expected_names)
    check(m["name"][0] == 51 and m["name"][2] == n, f"name header {m['name'][:3]}")
    check(column_texts(m["name"]) == expected_names, f"MAT names {column_texts(m['name'])}")
    descriptions = [f"{expected_meta[k][1]} [{expected_meta[k][0]}]" for k in expected_names]
    check(column_texts(m["description"]) == descriptions, f"MAT descriptions {column_texts(m['description'])}")
    kind, rows, columns, info = m["dataInfo"]
    check((kind, rows, columns) == (20, 4, n), f"dataInfo header {kind} {rows} {columns}")
    check(list(info[0]) == [0, 1, 0, -1], f"dataInfo of time {info[0]}")
    for k in range(1, n):
        check(list(info[k]) == [2, k + 1, 0, -1], f"dataInfo of {expected_names[k]}: {info[k]}")
    kind, rows, columns, data_1 = m["data_1"]
    check((kind, rows, columns) == (0, 1, 2), f"data_1 header {kind} {rows} {columns}")
    check([c[0] for c in data_1] == [0.0, stop], f"data_1 holds the start and stop time: {data_1}")
    kind, rows, columns, data_2 = m["data_2"]
    points = len(csv_columns["time"])
    check((kind, rows, columns) == (0, n, points), f"data_2 header {kind} {rows} {columns}")
    for k, name in enumerate(expected_names):
        got = struct.pack(f"<{points}d", *(point[k] for point in data_2))
        want = struct.pack(f"<{points}d", *csv_columns[name])
        check(got == want, f"MAT (own reader) values of {name}")


check_mat4(paths["mat"], names, EXPECTED_META, csv, 3.0)


def check_described(schema, what, parameters, stop):
    """The fields of a sweep's or the REPL's table: parameters plain, the variables described
    as in a single run's file; the file names the model and its experiment."""
    for field in schema:
        meta = field.metadata or {}
        if field.name in parameters:
            check(b"unit" not in meta, f"{what}: the parameter {field.name} has no unit")
            continue
        unit, description = EXPECTED_META[field.name]
        check(meta.get(b"unit") == unit.encode(), f"{what}: unit of {field.name}: {meta}")
        check(meta.get(b"description") == description.encode(), f"{what}: description of {field.name}")
    file_meta = schema.metadata or {}
    check(file_meta.get(b"model") == b"BouncingBall", f"{what}: file metadata {file_meta}")
    check(file_meta.get(b"experiment.stop") == stop, f"{what}: experiment {file_meta}")


sweep_path = SCRATCH / "sweep.parquet"
done = subprocess.run([EQM, "run", MODEL, "--stop", "1", "--sweep", "e=0.5,0.8", "--out", str(sweep_path)],
                      capture_output=True, text=True)
check(done.returncode == 0, f"eqm run --sweep --out: {done.stderr}")
sweep_table = pq.read_table(sweep_path)
check(sweep_table.column_names == ["e"] + names, f"sweep names {sweep_table.column_names}")
check_described(sweep_table.schema, "sweep Parquet", {"e"}, b"1")

# The REPL's `:run --out` and `:save` write what `eqm run --out` writes.
repl_parquet, repl_mat, repl_csv = SCRATCH / "repl.parquet", SCRATCH / "repl.mat", SCRATCH / "repl.csv"
script = (f":load {MODEL}\n:run --stop 1 --out {repl_parquet} as base\n:save base {repl_mat}\n"
          f":save base {repl_csv}\n:quit\n")
done = subprocess.run([EQM, "repl"], input=script, capture_output=True, text=True,
                      env={**os.environ, "HOME": str(SCRATCH)})
check(done.returncode == 0 and repl_mat.exists(), f"eqm repl: {done.stdout}{done.stderr}")
check_described(pq.read_table(repl_parquet).schema, "REPL Parquet", set(), b"1")
with open(repl_csv, newline="") as f:
    lines = list(_csv.reader(f))
repl_columns = {name: [float(row[k]) for row in lines[1:]] for k, name in enumerate(lines[0])}
check(lines[0] == names, f"REPL CSV header {lines[0]}")
check_mat4(repl_mat, names, EXPECTED_META, repl_columns, 1.0)

print(f"result files: all {checks} checks hold")
