//! `eqm run --out FILE.parquet|.arrow|.mat`: the format follows the extension, the files hold
//! the values of the CSV of the same run bit for bit (also the rows before a failure), an
//! unknown extension is refused before anything runs, and a sweep is written as Parquet or
//! Arrow but not as MAT. When Python has pyarrow, pandas and scipy, the files are also read
//! back with them (`tests/results/check_result_files.py`).

use crate::cli::{Table, eqm};
use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use std::path::{Path, PathBuf};

/// A fresh directory for the files of test `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-result-files-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn parquet_batches(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).expect("written");
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("a Parquet file")
        .build()
        .expect("a reader")
        .map(|b| b.expect("a batch"))
        .collect()
}

fn arrow_batches(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).expect("written");
    arrow_ipc::reader::FileReader::try_new(file, None)
        .expect("an Arrow file")
        .map(|b| b.expect("a batch"))
        .collect()
}

/// Asserts that `batches` hold the table `csv`: the same names and, bit for bit, values.
fn assert_same_table(batches: &[RecordBatch], csv: &Table) {
    let schema = batches[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, csv.header);
    for (k, name) in csv.header.iter().enumerate() {
        let got: Vec<u64> = batches
            .iter()
            .flat_map(|b| b.column(k).as_primitive::<Float64Type>().values().to_vec())
            .map(f64::to_bits)
            .collect();
        let expected: Vec<u64> = csv.column(name).iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, expected, "{name}");
    }
}

/// The `data_2` matrix of a MAT v4 result file: its rows, columns and doubles. The matrices
/// before it are skipped by their headers (type, rows, columns, imaginary flag, name length).
fn mat_data_2(bytes: &[u8]) -> (usize, usize, Vec<f64>) {
    let mut at = 0;
    loop {
        let int = |k: usize| i32::from_le_bytes(bytes[at + 4 * k..at + 4 * k + 4].try_into().expect("4")) as usize;
        let (kind, rows, columns, name_length) = (int(0), int(1), int(2), int(4));
        let name = &bytes[at + 20..at + 20 + name_length - 1];
        at += 20 + name_length;
        let size = match kind {
            0 => 8,
            20 => 4,
            _ => 1,
        };
        if name == b"data_2" {
            let data = bytes[at..at + rows * columns * 8]
                .chunks(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8")))
                .collect();
            return (rows, columns, data);
        }
        at += rows * columns * size;
    }
}

#[test]
fn run_writes_parquet_arrow_and_mat_by_the_extension() {
    let dir = scratch("run");
    let (code, csv_text, err) = eqm(&["run", "examples/bouncing_ball.eqm"]);
    assert_eq!(code, 0, "{err}");
    let csv = Table::parse(&csv_text);
    for extension in ["parquet", "arrow", "mat", "CSV"] {
        let path = dir.join(format!("ball.{extension}"));
        let (code, out, err) = eqm(&[
            "run",
            "examples/bouncing_ball.eqm",
            "--out",
            path.to_str().expect("path"),
        ]);
        assert_eq!(code, 0, "{extension}: {err}");
        assert!(out.is_empty(), "{extension}: the rows go to the file");
        match extension {
            "parquet" => assert_same_table(&parquet_batches(&path), &csv),
            "arrow" => assert_same_table(&arrow_batches(&path), &csv),
            "mat" => {
                let (rows, columns, data) = mat_data_2(&std::fs::read(&path).expect("written"));
                assert_eq!((rows, columns), (csv.header.len(), csv.rows.len()));
                let row_major: Vec<u64> = csv.rows.iter().flatten().map(|v| v.to_bits()).collect();
                assert_eq!(data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), row_major);
            }
            _ => assert_eq!(std::fs::read_to_string(&path).expect("written"), csv_text),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_run_leaves_complete_files_with_the_rows_before_the_failure() {
    let dir = scratch("failed");
    // The bounces accumulate before t = 5: the run stops with E0711 (exit 3).
    let (code, out, err) = eqm(&["run", "examples/bouncing_ball.eqm", "--stop", "5"]);
    assert_eq!(code, 3, "{err}");
    let csv = Table::parse(&out);
    assert!(csv.rows.len() > 100, "rows before the failure");
    let parquet = dir.join("zeno.parquet");
    let (code, _, err) = eqm(&[
        "run",
        "examples/bouncing_ball.eqm",
        "--stop",
        "5",
        "--out",
        parquet.to_str().expect("path"),
    ]);
    assert_eq!(code, 3, "{err}");
    assert_same_table(&parquet_batches(&parquet), &csv);
    let mat = dir.join("zeno.mat");
    let (code, _, err) = eqm(&[
        "run",
        "examples/bouncing_ball.eqm",
        "--stop",
        "5",
        "--out",
        mat.to_str().expect("path"),
    ]);
    assert_eq!(code, 3, "{err}");
    let (_, columns, _) = mat_data_2(&std::fs::read(&mat).expect("written"));
    assert_eq!(columns, csv.rows.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_extension_is_refused_before_the_run() {
    let dir = scratch("unknown");
    let path = dir.join("ball.txt");
    let (code, _, err) = eqm(&[
        "run",
        "examples/bouncing_ball.eqm",
        "--out",
        path.to_str().expect("path"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no result file ending in .txt") && err.contains(".csv, .parquet, .arrow, .mat"),
        "{err}"
    );
    assert!(!path.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_goes_to_parquet_with_the_parameters_first_but_not_to_mat() {
    let dir = scratch("sweep");
    let args = [
        "run",
        "examples/bouncing_ball.eqm",
        "--stop",
        "1",
        "--sweep",
        "e=0.5,0.8",
    ];
    let (code, out, err) = eqm(&args);
    assert_eq!(code, 0, "{err}");
    let csv = Table::parse(&out);
    assert_eq!(csv.header[..2], ["e", "time"]);
    let path = dir.join("sweep.parquet");
    let (code, _, err) = eqm(&[&args[..], &["--out", path.to_str().expect("path")]].concat());
    assert_eq!(code, 0, "{err}");
    assert_same_table(&parquet_batches(&path), &csv);
    let mat = dir.join("sweep.mat");
    let (code, _, err) = eqm(&[&args[..], &["--out", mat.to_str().expect("path")]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a sweep cannot be written as .mat") && err.contains(".csv, .parquet, .arrow"),
        "{err}"
    );
    assert!(!mat.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn python_data_tools_read_the_files() {
    // The check needs pyarrow, pandas and scipy; CI installs them (tests/results/requirements.txt).
    let available = std::process::Command::new("python3")
        .args(["-c", "import pyarrow, pandas, scipy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        eprintln!("skipped: python3 with pyarrow, pandas and scipy is not installed");
        return;
    }
    let dir = scratch("python");
    let output = std::process::Command::new("python3")
        .arg(format!("{}/tests/results/check_result_files.py", crate::REPO))
        .arg(env!("CARGO_BIN_EXE_eqm"))
        .arg(&dir)
        .current_dir(crate::REPO)
        .output()
        .expect("python3 runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
