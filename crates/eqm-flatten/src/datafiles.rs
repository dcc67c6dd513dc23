//! Data files a model reads while it is flattened: `readMatrix("file.csv")`, a Real matrix of
//! constant size from a file of numbers (a table of a graphical function, measured data).
//!
//! Input: the call's argument (a String known at compile time: a literal, or a String parameter
//! or constant bound to one), the name of the source file the call is written in, and the front
//! end's [`ReadData`]. Output: the matrix, or the problem (with the file's own line) that `calls`
//! reports as `E0318` at the `readMatrix` call, which also turns the matrix into Real literals.
//!
//! A relative path is relative to the directory of the source file the call is written in, and
//! for a source that is not a file of its own (the embedded standard library, `<stdlib>/...`) to
//! the current directory. The flattener never touches the file system itself: it asks the
//! [`ReadData`] the front end gave (the same one the Vensim importer reads through), so IO stays at the edge and tests give texts. The text is
//! read by [`parse_matrix`], a pure function: numbers separated by commas, semicolons or
//! whitespace, one row per line; empty lines and lines starting with `#` are skipped, and so is
//! a first line without any number (a header). Each file is read and parsed once per
//! flattening, however many instances call it.
//!
//! The text files of `Streams.readLine` and `Streams.countLines` ([`TextFile`]: the text and
//! where its lines start) and the question of `Files.exist` (`DataFiles::stat`) go through the
//! same reader.

use eqm_diag::source::{FileId, ReadData};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// What finding a data file needs: the reader and the names of the source files, which locate
/// relative paths. Part of the flattener's [`Options`](crate::Options), which
/// [`Sources::flatten`](crate::Sources::flatten) fills from its reader and its files.
#[derive(Debug, Clone, Default)]
pub struct DataFiles {
    reader: Option<Arc<dyn ReadData>>,
    /// Source file names by `FileId`.
    sources: Vec<String>,
}

impl DataFiles {
    /// Data files read by `reader`, named in the source files `sources` (by `FileId`).
    pub fn new(reader: Option<Arc<dyn ReadData>>, sources: Vec<String>) -> DataFiles {
        DataFiles { reader, sources }
    }

    /// Whether a reader was given: only then can a file that was not read have been looked
    /// for in the wrong directory.
    pub(crate) fn has_reader(&self) -> bool {
        self.reader.is_some()
    }

    /// The name of source file `file`; a file the map does not know counts as no file.
    pub(crate) fn source(&self, file: FileId) -> &str {
        self.sources.get(file.0 as usize).map_or("<unknown>", String::as_str)
    }

    /// The text of the file at `path`, or why it cannot be read.
    pub(crate) fn read(&self, path: &Path) -> Result<String, Problem> {
        let problem = |message: String| Problem { line: None, message };
        match &self.reader {
            None => Err(problem("no file reader was given to the compiler".to_string())),
            Some(reader) => {
                let bytes = reader.read(path).map_err(|e| problem(e.to_string()))?;
                // The reader gives bytes (a Vensim spreadsheet is binary); these files are text,
                // and a file that is not UTF-8 is refused rather than read with replacements.
                String::from_utf8(bytes).map_err(|e| {
                    problem(format!(
                        "the file is not UTF-8 text (invalid bytes at byte {})",
                        e.utf8_error().valid_up_to()
                    ))
                })
            }
        }
    }
}

impl DataFiles {
    /// The kind of file `path` names, as `Modelica.Utilities.Types.FileType` counts them: 1
    /// no file, 2 a regular file, 3 a directory. The front end gives only a reader, so the kind
    /// is what reading tells: a file that reads is regular, one that is a directory says so,
    /// and one that is not found is none; any other failure (no permission, a device) is `Err`,
    /// not a guess.
    pub(crate) fn stat(&self, path: &Path) -> Result<i64, String> {
        let Some(reader) = &self.reader else {
            return Err("no file reader was given to the compiler".to_string());
        };
        match reader.read(path) {
            Ok(_) => Ok(2),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(1),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(3),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The text file at `path` with its lines found, or why it cannot be read.
    pub(crate) fn text_file(&self, path: &Path) -> Result<TextFile, String> {
        self.read(path).map(TextFile::new).map_err(|p| p.message)
    }
}

/// A text file read by `Streams.readLine` and `Streams.countLines`, with where each line
/// starts, so reading every line of a file costs its length once.
#[derive(Debug)]
pub(crate) struct TextFile {
    text: String,
    /// The byte offset of each line's first character.
    line_starts: Vec<usize>,
}

impl TextFile {
    /// The lines of `text`, as Modelica's C library counts them: a line is what a newline
    /// ends, and the text after the last newline when there is any.
    fn new(text: String) -> TextFile {
        let mut line_starts = Vec::new();
        let mut start_of_line = true;
        for (k, byte) in text.bytes().enumerate() {
            if start_of_line {
                line_starts.push(k);
            }
            start_of_line = byte == b'\n';
        }
        TextFile { text, line_starts }
    }

    /// The number of lines.
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line `k` (from 1) without its line end (`\n` or `\r\n`), `None` past the last line.
    pub(crate) fn line(&self, k: usize) -> Option<&str> {
        let start = *self.line_starts.get(k.checked_sub(1)?)?;
        let end = self.line_starts.get(k).copied().unwrap_or(self.text.len());
        let line = &self.text[start..end];
        let line = line.strip_suffix('\n').unwrap_or(line);
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// The text files read so far in one flattening, by path, or why not.
pub(crate) type TextFilesRead = BTreeMap<PathBuf, Result<Rc<TextFile>, String>>;

/// The data files read so far in one flattening, each by its resolved path, parsed or why not:
/// a table in a class instantiated many times is read once.
pub(crate) type ReadFiles = BTreeMap<PathBuf, Result<Rc<Matrix>, Problem>>;

/// A matrix read from a file: `rows × columns` values, row by row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matrix {
    pub(crate) rows: usize,
    pub(crate) columns: usize,
    pub(crate) values: Vec<f64>,
}

/// Why a file is not a matrix: a message, and the file's line (from 1) when one is at fault.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

/// The matrix in `text`: one row per line, numbers separated by commas or semicolons (then
/// each field is one number, and an empty field is an error) or by whitespace. Empty lines and
/// lines whose first character other than whitespace is `#` are skipped, and so is the first
/// other line when none of its fields is a number (a header such as `x, y`). Every row must have
/// as many numbers as the first, every field must be a finite number, and there must be at least
/// one row. A first line with numbers and other fields is an error rather than a header, so
/// that a mistyped number in the first row is reported instead of losing the row.
pub(crate) fn parse_matrix(text: &str) -> Result<Matrix, Problem> {
    let mut values = Vec::new();
    let mut columns = None;
    let mut first = true;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = if line.contains([',', ';']) {
            line.split([',', ';']).map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let parsed: Vec<Option<f64>> = fields
            .iter()
            .map(|f| f.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect();
        if std::mem::take(&mut first) && parsed.iter().all(Option::is_none) {
            continue;
        }
        if let Some(k) = parsed.iter().position(Option::is_none) {
            let message = match fields[k] {
                "" => format!("field {} is empty", k + 1),
                field => format!("field {} `{field}` is not a finite number", k + 1),
            };
            return Err(Problem {
                line: Some(number),
                message,
            });
        }
        let wanted = *columns.get_or_insert(fields.len());
        if fields.len() != wanted {
            return Err(Problem {
                line: Some(number),
                message: format!(
                    "{} number{}, but the first row has {wanted}",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                ),
            });
        }
        values.extend(parsed.into_iter().flatten());
    }
    match columns {
        Some(columns) => Ok(Matrix {
            rows: values.len() / columns,
            columns,
            values,
        }),
        None => Err(Problem {
            line: None,
            message: "it holds no rows of numbers".to_string(),
        }),
    }
}

/// The file `name` means in a call written in the source file `source`: relative to that file's
/// directory, or to the current directory for a source that is no file (`<stdlib>/...`).
pub(crate) fn resolve_data_file(source: &str, name: &str) -> PathBuf {
    let path = Path::new(name);
    if path.is_absolute() || source.starts_with('<') {
        return path.to_path_buf();
    }
    match Path::new(source).parent() {
        Some(dir) => dir.join(path),
        None => path.to_path_buf(),
    }
}
