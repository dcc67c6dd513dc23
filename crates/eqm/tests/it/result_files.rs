//! Result files: the Parquet, Arrow IPC and MAT v4 files of a run, read back with the Arrow and
//! Parquet readers and with a MAT v4 reader of this test's own, hold the names, units,
//! descriptions and values of the CSV of the same run, bit for bit.

use super::compile;
use eqm::result_files::{ArrowFileWriter, MatWriter};
use eqm::sweep::{self, SweepAxis};
use eqm::{CsvWriter, ModelOptions, ResultFileInfo, ResultFormat, ResultWriter, RowSink, RunSettings, Session};
use std::io::{Cursor, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_schema::SchemaRef;

/// A falling ball with drag: a parameter (run-time, so it goes to MAT's `data_1` when asked
/// for), two states, units and descriptions.
const FALL: &str = r#"model Fall "A ball falling against air drag"
  parameter Real k(unit = "1/s") = 0.5 "Drag coefficient";
  Real h(unit = "m", start = 10, fixed = true) "Height";
  Real v(unit = "m/s", start = 0, fixed = true) "Speed";
equation
  der(h) = v;
  der(v) = -9.81 - k*v;
end Fall;"#;

/// The files of one run of `FALL` with the columns `h`, `v`, `k`.
struct Files {
    csv: String,
    parquet: Vec<u8>,
    arrow: Vec<u8>,
    mat: Vec<u8>,
}

fn run_fall() -> Files {
    let mut model = compile(FALL);
    let settings = RunSettings {
        stop: Some(2.0),
        interval: Some(0.01),
        variables: Some(vec!["h".into(), "v".into(), "k".into()]),
        ..RunSettings::default()
    };
    let (_, plan) = model.plan_run(&settings, &[]);
    let plan = plan.expect("the run is planned");
    let info = model.result_file_info(&plan.settings);
    let names: Vec<&str> = plan.columns.iter().map(|c| c.name.as_str()).collect();
    let (mut parquet, mut arrow, mut mat) = (Vec::new(), Vec::new(), Cursor::new(Vec::new()));
    let mut csv = CsvWriter::new(Vec::new(), &names).expect("csv");
    {
        let mut p = ArrowFileWriter::parquet(&mut parquet, &plan.columns, &info).expect("parquet");
        let mut a = ArrowFileWriter::arrow_ipc(&mut arrow, &plan.columns, &info).expect("arrow");
        let mut m = MatWriter::new(&mut mat, &plan.columns).expect("mat");
        model
            .simulate_into(&plan.settings, &plan.columns, &mut |t: f64, v: &[f64]| {
                csv.row(t, v)?;
                p.row(t, v)?;
                a.row(t, v)?;
                m.row(t, v)
            })
            .expect("the run succeeds");
        p.finish().expect("parquet footer");
        a.finish().expect("arrow footer");
        m.finish().expect("mat row count");
    }
    Files {
        csv: String::from_utf8(csv.into_inner()).expect("utf-8"),
        parquet,
        arrow,
        mat: mat.into_inner(),
    }
}

/// The CSV's header and its columns, each parsed back to the exact doubles.
fn csv_columns(csv: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    let mut columns = vec![Vec::new(); header.len()];
    for line in lines {
        for (k, field) in line.split(',').enumerate() {
            columns[k].push(field.parse::<f64>().expect("a number"));
        }
    }
    (header, columns)
}

/// Asserts that two columns hold the same doubles, bit for bit.
fn assert_same_bits(name: &str, got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len(), "{name}: row count");
    for (i, (a, b)) in got.iter().zip(expected).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "{name}, row {i}: {a} is not {b}");
    }
}

/// Checks the batches of a Parquet or Arrow file of `FALL` against its CSV: the schema's
/// names, `double` types, units, descriptions and file metadata, and every value.
fn check_batches(schema: &SchemaRef, batches: &[RecordBatch], csv: &str) {
    let (header, expected) = csv_columns(csv);
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, header);
    let meta = |k: usize, key: &str| schema.field(k).metadata().get(key).cloned();
    let expected_meta = [
        ("s", "Simulation time"),
        ("m", "Height"),
        ("m/s", "Speed"),
        ("1/s", "Drag coefficient"),
    ];
    for (k, (unit, description)) in expected_meta.iter().enumerate() {
        assert_eq!(*schema.field(k).data_type(), arrow_schema::DataType::Float64);
        assert_eq!(meta(k, "unit").as_deref(), Some(*unit), "{}", header[k]);
        assert_eq!(meta(k, "description").as_deref(), Some(*description), "{}", header[k]);
    }
    let file = schema.metadata();
    assert_eq!(file.get("model").map(String::as_str), Some("Fall"));
    assert_eq!(file.get("experiment.stop").map(String::as_str), Some("2"));
    assert_eq!(file.get("experiment.interval").map(String::as_str), Some("0.01"));
    for (k, name) in header.iter().enumerate() {
        let got: Vec<f64> = batches
            .iter()
            .flat_map(|b| b.column(k).as_primitive::<Float64Type>().values().to_vec())
            .collect();
        assert_same_bits(name, &got, &expected[k]);
    }
}

#[test]
fn parquet_and_arrow_files_hold_the_csv_values_units_and_descriptions() {
    let files = run_fall();
    assert_eq!(csv_columns(&files.csv).1[0].len(), 201, "rows every 0.01 from 0 to 2");
    let path = std::env::temp_dir().join(format!("eqm-result-files-{}.parquet", std::process::id()));
    std::fs::write(&path, &files.parquet).expect("temp file");
    let file = std::fs::File::open(&path).expect("temp file");
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).expect("a Parquet file");
    // The file's schema, with the metadata the writer stored.
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder
        .build()
        .expect("a reader")
        .map(|b| b.expect("a batch"))
        .collect();
    let _ = std::fs::remove_file(&path);
    check_batches(&schema, &batches, &files.csv);

    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(files.arrow), None).expect("an Arrow file");
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("a batch")).collect();
    check_batches(&schema, &batches, &files.csv);
}

/// One matrix of a MAT v4 file: its type code, size and raw data.
struct Matrix {
    name: String,
    kind: i32,
    rows: usize,
    columns: usize,
    data: Vec<u8>,
}

/// Reads every matrix of a little-endian MAT v4 file, as the format defines it: five 32-bit
/// integers (type, rows, columns, imaginary flag, name length), the name with its NUL, then
/// the data in column-major order.
fn read_mat4(bytes: &[u8]) -> Vec<Matrix> {
    let mut at = 0;
    let int = |at: &mut usize| {
        let v = i32::from_le_bytes(bytes[*at..*at + 4].try_into().expect("4 bytes"));
        *at += 4;
        v
    };
    let mut all = Vec::new();
    while at < bytes.len() {
        let (kind, rows, columns, imaginary, name_length) =
            (int(&mut at), int(&mut at), int(&mut at), int(&mut at), int(&mut at));
        assert_eq!(imaginary, 0);
        let name_bytes = &bytes[at..at + name_length as usize];
        assert_eq!(name_bytes.last(), Some(&0), "a name ends with NUL");
        let name = String::from_utf8(name_bytes[..name_bytes.len() - 1].to_vec()).expect("name");
        at += name_length as usize;
        let size = match kind {
            0 => 8,
            20 => 4,
            51 => 1,
            other => panic!("{name}: unexpected type {other}"),
        };
        let length = rows as usize * columns as usize * size;
        all.push(Matrix {
            name,
            kind,
            rows: rows as usize,
            columns: columns as usize,
            data: bytes[at..at + length].to_vec(),
        });
        at += length;
    }
    all
}

impl Matrix {
    fn doubles(&self) -> Vec<f64> {
        assert_eq!(self.kind, 0, "{}", self.name);
        let bytes = self.data.chunks(8);
        bytes
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }

    fn ints(&self) -> Vec<i32> {
        assert_eq!(self.kind, 20, "{}", self.name);
        let bytes = self.data.chunks(4);
        bytes
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()
    }

    /// The texts of a character matrix, one per column (transposed) or per row, NUL removed.
    fn texts(&self, transposed: bool) -> Vec<String> {
        assert_eq!(self.kind, 51, "{}", self.name);
        let (count, length) = if transposed {
            (self.columns, self.rows)
        } else {
            (self.rows, self.columns)
        };
        (0..count)
            .map(|i| {
                let bytes: Vec<u8> = (0..length)
                    .map(|j| {
                        if transposed {
                            self.data[i * length + j]
                        } else {
                            self.data[j * count + i]
                        }
                    })
                    .filter(|&b| b != 0)
                    .collect();
                String::from_utf8(bytes).expect("text")
            })
            .collect()
    }
}

#[test]
fn mat_file_has_the_layout_of_modelica_result_files() {
    let files = run_fall();
    let (_, csv) = csv_columns(&files.csv);
    let matrices = read_mat4(&files.mat);
    let names: Vec<&str> = matrices.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["Aclass", "name", "description", "dataInfo", "data_1", "data_2"]);
    let [aclass, name, description, info, data_1, data_2] = &matrices[..] else {
        unreachable!()
    };
    assert_eq!((aclass.rows, aclass.columns), (4, 11));
    assert_eq!(aclass.texts(false), ["Atrajectory", "1.1", "", "binTrans"]);
    assert_eq!(name.texts(true), ["time", "h", "v", "k"]);
    assert_eq!(name.columns, 4);
    assert_eq!(
        description.texts(true),
        [
            "Simulation time [s]",
            "Height [m]",
            "Speed [m/s]",
            "Drag coefficient [1/s]"
        ]
    );
    // time: the abscissa; h and v: rows 2 and 3 of data_2, undefined outside the run; k: row 2
    // of data_1, kept outside.
    assert_eq!((info.rows, info.columns), (4, 4));
    assert_eq!(info.ints(), [0, 1, 0, -1, 2, 2, 0, -1, 2, 3, 0, -1, 1, 2, 0, 0]);
    // data_1: the start and stop time and k's value in the first and last row (column-major).
    assert_eq!((data_1.rows, data_1.columns), (2, 2));
    assert_eq!(data_1.doubles(), [0.0, 0.5, 2.0, 0.5]);
    // data_2: one column of the file per row of the run: time, h, v.
    let rows = csv[0].len();
    assert_eq!((data_2.rows, data_2.columns), (3, rows));
    let values = data_2.doubles();
    for (k, csv_column) in [0, 1, 2].into_iter().zip(&csv) {
        let column: Vec<f64> = (0..rows).map(|i| values[i * 3 + k]).collect();
        assert_same_bits(&format!("data_2 row {k}"), &column, csv_column);
    }
    assert_same_bits("k", &[csv[3][0], csv[3][rows - 1]], &[0.5, 0.5]);
}

#[test]
fn a_mat_file_without_rows_is_still_complete() {
    let model = compile(FALL);
    let columns = model.columns(None).expect("columns");
    let mut out = Cursor::new(Vec::new());
    let mut writer = MatWriter::new(&mut out, &columns).expect("mat");
    writer.finish().expect("finished");
    let matrices = read_mat4(&out.into_inner());
    let data_2 = matrices.iter().find(|m| m.name == "data_2").expect("data_2");
    assert_eq!((data_2.rows, data_2.columns), (3, 0));
    // No row came, so data_1 holds no time: not a number rather than a made-up one.
    let data_1 = matrices.iter().find(|m| m.name == "data_1").expect("data_1");
    assert!(data_1.doubles().iter().all(|v| v.is_nan()));
}

/// A writer that counts the bytes it was given, to see a file grow while rows come.
struct Counting(Arc<AtomicUsize>);

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len(), Ordering::SeqCst);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn long_runs_are_written_in_bounded_batches_as_the_rows_come() {
    let columns = compile(FALL).columns(None).expect("columns");
    let info = ResultFileInfo::default();
    for format in [ResultFormat::Parquet, ResultFormat::ArrowIpc] {
        let written = Arc::new(AtomicUsize::new(0));
        let out = Counting(written.clone());
        let mut writer = match format {
            ResultFormat::Parquet => ArrowFileWriter::parquet(out, &columns, &info),
            _ => ArrowFileWriter::arrow_ipc(out, &columns, &info),
        }
        .expect("writer");
        let mut sizes = Vec::new();
        for i in 0..300_000 {
            let t = i as f64 * 1e-3;
            writer.row(t, &[t.sin(), t.cos()]).expect("row");
            if i % 70_000 == 69_999 {
                sizes.push(written.load(Ordering::SeqCst));
            }
        }
        // The file grows while the rows come: between two checks, 70,000 rows apart, a row
        // group (64Ki rows) or several batches (8192 rows) were written.
        for (k, pair) in sizes.windows(2).enumerate() {
            assert!(
                pair[1] > pair[0],
                "{format:?}: nothing written between checks {k} and {}",
                k + 1
            );
        }
        let before = written.load(Ordering::SeqCst);
        assert!(
            before >= 200_000 * 3 * 8,
            "{format:?}: only {before} bytes written before the end"
        );
        writer.finish().expect("finished");
    }
}

#[test]
fn formats_are_chosen_by_extension() {
    assert_eq!(ResultFormat::from_extension("parquet"), Some(ResultFormat::Parquet));
    assert_eq!(ResultFormat::from_extension("ARROW"), Some(ResultFormat::ArrowIpc));
    assert_eq!(ResultFormat::from_extension("mat"), Some(ResultFormat::Mat));
    assert_eq!(ResultFormat::from_extension("csv"), Some(ResultFormat::Csv));
    assert_eq!(ResultFormat::from_extension("txt"), None);
    assert_eq!(ResultFormat::extensions_list(), ".csv, .parquet, .arrow, .mat");
    assert!(!ResultFormat::Mat.holds_sweeps());
}

#[test]
fn a_sweep_is_one_table_with_the_parameters_first() {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), FALL.to_string())], &[], None);
    let axes = vec![SweepAxis::parse("k=0.5,1").expect("axis")];
    let settings = RunSettings {
        stop: Some(1.0),
        interval: Some(0.25),
        ..RunSettings::default()
    };
    let swept = sweep::sweep(&mut session, None, &ModelOptions::default(), &axes, &settings, Some(1))
        .unwrap_or_else(|_| panic!("{}", session.render_diagnostics(false)));
    let mut csv = Vec::new();
    swept.write_csv(&mut csv).expect("csv");
    let (header, expected) = csv_columns(&String::from_utf8(csv).expect("utf-8"));
    assert_eq!(header, ["k", "time", "h", "v"]);
    let mut arrow = Vec::new();
    swept
        .write_file(ResultFormat::ArrowIpc, &mut arrow, &swept.info)
        .expect("arrow");
    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(arrow), None).expect("an Arrow file");
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("a batch")).collect();
    let schema = batches[0].schema();
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, header);
    // The variables carry their units and descriptions as in a single run's file, the swept
    // parameter none; the file says which model and experiment every run used.
    let meta = |k: usize, key: &str| schema.field(k).metadata().get(key).cloned();
    let expected_meta = [
        (None, None),
        (Some("s"), Some("Simulation time")),
        (Some("m"), Some("Height")),
        (Some("m/s"), Some("Speed")),
    ];
    for (k, (unit, description)) in expected_meta.iter().enumerate() {
        assert_eq!(meta(k, "unit").as_deref(), *unit, "{}", header[k]);
        assert_eq!(meta(k, "description").as_deref(), *description, "{}", header[k]);
    }
    let file = schema.metadata();
    assert_eq!(file.get("model").map(String::as_str), Some("Fall"));
    assert_eq!(file.get("experiment.stop").map(String::as_str), Some("1"));
    assert_eq!(file.get("experiment.interval").map(String::as_str), Some("0.25"));
    for (k, name) in header.iter().enumerate() {
        let got: Vec<f64> = batches
            .iter()
            .flat_map(|b| b.column(k).as_primitive::<Float64Type>().values().to_vec())
            .collect();
        assert_same_bits(name, &got, &expected[k]);
    }
    let refused = swept.write_file(ResultFormat::Mat, Vec::new(), &ResultFileInfo::default());
    assert_eq!(refused.expect_err("refused").kind(), std::io::ErrorKind::Unsupported);
}
