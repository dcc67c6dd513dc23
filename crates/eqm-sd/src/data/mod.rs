//! The data files Vensim's `GET XLS ...` and `GET DIRECT ...` functions read: spreadsheets
//! (`.xls`, `.xlsx`, `.xlsm`, `.xlsb`, `.ods`) and delimited text (`.csv`, `.tab`, `.txt`),
//! as grids of cells.
//!
//! Input: a file's name as the model writes it, resolved against the directory of the model
//! file, and the bytes a [`ReadData`] gives for it (the front end's reader: this crate never
//! touches the file system), plus a sheet name, or for a text file the delimiter. Output: the
//! sheet as a [`Grid`] (rows and columns from 0, so that `A1` is `(0, 0)`) and the workbook's
//! named ranges, or the reason it cannot be read, which the reader reports at the call.
//!
//! Each file is read and parsed once per import, however many calls name it. What it does not
//! do: evaluate formulas (a spreadsheet's cached values are read, as Vensim reads them),
//! convert dates, or read Vensim's own `.vdf` data files, which are binary and undocumented.

pub mod cells;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// How a front end gives the bytes of a data file a model names: the one reader of every
/// front end, which the Modelica reads share.
pub use eqm_diag::source::ReadData;

/// One cell of a sheet.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Empty,
    Number(f64),
    Text(String),
}

impl Cell {
    /// The number the cell holds, if it holds one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Number(v) => Some(*v),
            _ => None,
        }
    }
}

/// A sheet's cells by row, then column (from 0); a cell outside the rows or a row's cells is
/// empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grid {
    pub rows: Vec<Vec<Cell>>,
}

const EMPTY: Cell = Cell::Empty;

impl Grid {
    /// The cell at `(row, column)`, both from 0.
    pub fn cell(&self, row: usize, column: usize) -> &Cell {
        self.rows.get(row).and_then(|r| r.get(column)).unwrap_or(&EMPTY)
    }
}

/// A workbook's named range: its name, the sheet it refers to and its corners (row, column,
/// from 0, inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedRange {
    pub name: String,
    pub sheet: String,
    pub first: (usize, usize),
    pub last: (usize, usize),
}

/// A file read: its sheets by name (a text file has one, named after its delimiter) and its
/// named ranges.
#[derive(Debug, Clone, Default)]
pub struct Book {
    pub sheets: Vec<(String, Grid)>,
    pub names: Vec<NamedRange>,
    /// Whether the file is a delimited text (its one sheet is the one every call reads).
    pub text: bool,
}

impl Book {
    /// The sheet of this name (compared without regard to case, as the spreadsheet programs
    /// compare sheet names).
    pub fn sheet(&self, name: &str) -> Option<&Grid> {
        let wanted = name.trim().to_lowercase();
        self.sheets
            .iter()
            .find(|(n, _)| n.to_lowercase() == wanted)
            .map(|(_, grid)| grid)
    }

    /// The named range `name` as the sheet `sheet` sees it: one local to that sheet before a
    /// global one of the same name (names compared without regard to case).
    pub fn named(&self, name: &str, sheet: &str) -> Option<&NamedRange> {
        let wanted = name.trim().to_lowercase();
        let mut found = self.names.iter().filter(|n| n.name.to_lowercase() == wanted);
        let all: Vec<&NamedRange> = found.by_ref().collect();
        all.iter()
            .find(|n| n.sheet.eq_ignore_ascii_case(sheet))
            .or(all.first())
            .copied()
    }
}

/// The data files of one import: the front end's reader, the directory names are relative to,
/// and each file read so far (by its path and, for a text file, its delimiter).
#[derive(Default)]
pub struct DataFiles {
    reader: Option<Arc<dyn ReadData>>,
    directory: PathBuf,
    read: RefCell<HashMap<(PathBuf, String), Loaded>>,
}

/// A file read and parsed, or why it could not be.
type Loaded = Result<Rc<Book>, String>;

impl std::fmt::Debug for DataFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataFiles").field("directory", &self.directory).finish()
    }
}

impl DataFiles {
    /// The data files of the model file `model_file` (a path; its directory is where relative
    /// names are found), read through `reader` (none: every file is reported unreadable).
    pub fn new(reader: Option<Arc<dyn ReadData>>, model_file: &str) -> DataFiles {
        let directory = Path::new(model_file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        DataFiles {
            reader,
            directory,
            read: RefCell::default(),
        }
    }

    /// The file `name` as the model writes it; `tab` is the sheet's name, or for a text file
    /// the delimiter (which `\t` or `tab` names as the tab character). The error says why the
    /// file cannot be read, in words for a diagnostic.
    pub fn book(&self, name: &str, tab: &str) -> Result<Rc<Book>, String> {
        let path = self.directory.join(name.trim().replace('\\', "/"));
        let kind = Kind::of(&path);
        let delimiter = match kind {
            Kind::Text => delimiter(tab),
            Kind::Spreadsheet => String::new(),
        };
        let key = (path.clone(), delimiter.clone());
        if let Some(found) = self.read.borrow().get(&key) {
            return found.clone();
        }
        let book = self.load(&path, kind, &delimiter).map(Rc::new);
        self.read.borrow_mut().insert(key, book.clone());
        book
    }

    /// The paths of the files read so far (each once, in the order of the paths), whether
    /// they could be parsed or not.
    pub fn paths_read(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.read.borrow().keys().map(|(p, _)| p.clone()).collect();
        paths.sort();
        paths.dedup();
        paths
    }

    fn load(&self, path: &Path, kind: Kind, delimiter: &str) -> Result<Book, String> {
        let Some(reader) = &self.reader else {
            return Err(format!(
                "the data file `{}` cannot be read here: no reader of data files was given",
                path.display()
            ));
        };
        let bytes = reader
            .read(path)
            .map_err(|e| format!("the data file `{}` cannot be read: {e}", path.display()))?;
        match kind {
            Kind::Text => Ok(text_book(&String::from_utf8_lossy(&bytes), delimiter)),
            Kind::Spreadsheet => spreadsheet(bytes).map_err(|e| format!("the data file `{}` {e}", path.display())),
        }
    }
}

/// Whether a file is delimited text or a spreadsheet, by its extension.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Spreadsheet,
}

impl Kind {
    fn of(path: &Path) -> Kind {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_lowercase();
        match extension.as_str() {
            "csv" | "tab" | "txt" | "dat" | "prn" => Kind::Text,
            _ => Kind::Spreadsheet,
        }
    }
}

/// The delimiter a `GET DIRECT ...` call names: `,`, `;`, or the tab character for `\t`,
/// `tab` or a tab itself.
fn delimiter(tab: &str) -> String {
    match tab {
        "\\t" | "\t" => "\t".to_string(),
        t if t.eq_ignore_ascii_case("tab") => "\t".to_string(),
        t => t.to_string(),
    }
}

/// A delimited text as one sheet, named after its delimiter: each field a number where it
/// reads as one, else text, empty where it holds only white space. Double quotes around a
/// field are removed.
pub fn text_book(text: &str, delimiter: &str) -> Book {
    let separator = delimiter.chars().next().unwrap_or(',');
    let rows = text
        .lines()
        .map(|line| {
            line.split(separator)
                .map(|field| {
                    let field = field.trim().trim_matches('"').trim();
                    if field.is_empty() {
                        Cell::Empty
                    } else if let Ok(v) = field.parse::<f64>() {
                        Cell::Number(v)
                    } else {
                        Cell::Text(field.to_string())
                    }
                })
                .collect()
        })
        .collect();
    Book {
        sheets: vec![(delimiter.to_string(), Grid { rows })],
        names: Vec::new(),
        text: true,
    }
}

/// A spreadsheet's sheets and named ranges, from its bytes (any format `calamine` reads).
pub fn spreadsheet(bytes: Vec<u8>) -> Result<Book, String> {
    use calamine::Reader;
    let mut workbook = calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes))
        .map_err(|e| format!("is no spreadsheet that can be read ({e})"))?;
    let names = workbook
        .defined_names()
        .iter()
        .filter_map(|(name, formula)| cells::named_range(name, formula))
        .collect();
    let mut sheets = Vec::new();
    for name in workbook.sheet_names() {
        let range = workbook
            .worksheet_range(&name)
            .map_err(|e| format!("has a sheet `{name}` that cannot be read ({e})"))?;
        sheets.push((name, grid(&range)));
    }
    Ok(Book {
        sheets,
        names,
        text: false,
    })
}

/// A sheet's cells as a grid from `A1` (calamine's range starts at its first used cell).
fn grid(range: &calamine::Range<calamine::Data>) -> Grid {
    use calamine::Data;
    let Some((row0, column0)) = range.start() else {
        return Grid::default();
    };
    let mut rows = vec![Vec::new(); row0 as usize];
    for row in range.rows() {
        let mut cells = vec![Cell::Empty; column0 as usize];
        cells.extend(row.iter().map(|data| match data {
            Data::Int(i) => Cell::Number(*i as f64),
            Data::Float(v) => Cell::Number(*v),
            Data::Bool(b) => Cell::Number(f64::from(u8::from(*b))),
            Data::DateTime(d) => Cell::Number(d.as_f64()),
            Data::String(s) if s.trim().is_empty() => Cell::Empty,
            Data::String(s) => Cell::Text(s.trim().to_string()),
            Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
            Data::Error(_) | Data::Empty => Cell::Empty,
        }));
        rows.push(cells);
    }
    Grid { rows }
}
