//! Source files and spans.
//!
//! Input: file names and texts handed in by the edges (CLI, REPL, embedded stdlib).
//! Output: a [`SourceMap`] that every later stage refers to through [`FileId`] and [`Span`].
//! It deliberately does no IO: reading files from disk is the caller's job, and the files a
//! model names while it is compiled (a Modelica `readMatrix`, a Vensim `GET XLS DATA`) come
//! through the one [`ReadData`] the front end gives.

use std::fmt;
use std::path::Path;

/// How a front end gives the bytes of the data files a model names: the text files of
/// Modelica's `readMatrix` and `Streams.readLine`, and the spreadsheets and delimited files of
/// Vensim's `GET XLS ...` and `GET DIRECT ...`. Any `Fn(&Path) -> io::Result<Vec<u8>>` is one, so
/// a command line passes `std::fs::read` and a test a closure that returns bytes it holds.
/// Bytes rather than text, because a spreadsheet is binary; a stage that wants text decodes it.
pub trait ReadData: Send + Sync {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
}

impl<F: Fn(&Path) -> std::io::Result<Vec<u8>> + Send + Sync> ReadData for F {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self(path)
    }
}

impl fmt::Debug for dyn ReadData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReadData")
    }
}

/// Identifies one source text inside a [`SourceMap`].
///
/// A `FileId` is serialized as its number, but read back as the file that [`in_file`] names: a
/// syntax tree kept from an earlier run (when its text is unchanged) belongs to the file the
/// text has in this run's source map, whatever number it had then.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, serde::Serialize)]
pub struct FileId(pub u32);

thread_local! {
    /// The file that [`FileId`]s read back belong to, while [`in_file`] runs.
    static READ_AS: std::cell::Cell<Option<FileId>> = const { std::cell::Cell::new(None) };
}

impl<'de> serde::Deserialize<'de> for FileId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<FileId, D::Error> {
        let written = u32::deserialize(deserializer)?;
        Ok(READ_AS.with(|file| file.get()).unwrap_or(FileId(written)))
    }
}

/// Runs `read` (a deserialization of spans) so that every [`FileId`] it reads is `file`. The
/// previous setting is restored afterwards, also when `read` panics.
pub fn in_file<T>(file: FileId, read: impl FnOnce() -> T) -> T {
    struct Restore(Option<FileId>);
    impl Drop for Restore {
        fn drop(&mut self) {
            READ_AS.with(|f| f.set(self.0));
        }
    }
    let _restore = Restore(READ_AS.with(|f| f.replace(Some(file))));
    read()
}

/// A byte range inside one source file.
///
/// Spans are 12 bytes and `Copy`, so every AST node, flat equation and DAE equation can afford one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (byte offsets) in `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: clamp_u32(start),
            end: clamp_u32(end),
        }
    }

    /// The smallest span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The byte range, for slicing the source text.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

fn clamp_u32(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}..{}", self.file.0, self.start, self.end)
    }
}

/// One source text with its name and a line index for `line:col` lookups.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// One-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let line_start = self.line_starts[line] as usize;
        let end = (offset as usize).min(self.text.len());
        let col = self
            .text
            .get(line_start..end)
            .map_or(end - line_start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// The byte range of the zero-based line that holds `offset`, without its line break, and
    /// the line's index.
    pub(crate) fn line_of(&self, offset: usize) -> (usize, std::ops::Range<usize>) {
        let line = self.line_starts.partition_point(|&s| s as usize <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next as usize - 1);
        (line, start..end.max(start))
    }
}

/// All source texts of one compilation: user files, embedded stdlib files and REPL cells.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a text and returns its id. Texts over 4 GiB are truncated to keep spans 32-bit.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let mut text = text.into();
        if text.len() >= u32::MAX as usize {
            let mut cut = u32::MAX as usize - 1;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let mut line_starts = vec![0u32];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile {
            name: name.into(),
            text,
            line_starts,
        });
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `file:line:col` of the start of a span, the location format of every diagnostic.
    pub fn location(&self, span: Span) -> String {
        let file = self.get(span.file);
        let (line, col) = file.line_col(span.start);
        format!("{}:{}:{}", file.name, line, col)
    }

    /// The source text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        self.get(span.file).text.get(span.range()).unwrap_or("")
    }
}
