//! The functions of the Modelica external C library that read files and ask about them
//! (`ModelicaInternal_countLines`, `_readLine`, `_stat` and `_fullPathName`, behind
//! `Streams.countLines`, `Streams.readLine`, `Files.Internal.stat` and `Files.fullPathName`
//! (which the library's `loadResource` calls), and EQM's `EqmFiles_exist` behind
//! `Files.exist`), evaluated by EQM when the model is compiled.
//!
//! Input: the name of the C function and its arguments, known at compile time (the file's
//! name must be: a literal, or a String parameter or constant bound to one). Output: the
//! values the library's C functions return for the file as it is when the model is compiled,
//! or why not. A relative name is relative to the current directory, as the C library opens
//! it. The file is read through the front end's reader once per flattening, whatever number of
//! calls read it. It deliberately does no IO of its own (the reader is the front end's), and
//! keeps no file open: `Streams.close` has nothing to close.

use super::modelica_strings::Known;
use crate::flattener::Flattener;
use std::path::Path;
use std::rc::Rc;

/// Whether `c_name` is one of the functions of this module.
pub(super) fn is_file_function(c_name: &str) -> bool {
    matches!(
        c_name,
        "ModelicaInternal_countLines"
            | "ModelicaInternal_readLine"
            | "ModelicaInternal_stat"
            | "ModelicaInternal_fullPathName"
            | "EqmFiles_exist"
    )
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The results of the file function `c_name` for `args` (its return value, then the
    /// outputs it writes through pointers), or why it cannot give them; `None` when `c_name`
    /// is not one of them.
    pub(super) fn evaluate_file_function(
        &mut self,
        c_name: &str,
        args: &[Known],
    ) -> Option<Result<Vec<Known>, String>> {
        use Known::{Boolean, Integer, Number, Text};
        if !is_file_function(c_name) {
            return None;
        }
        Some(match (c_name, args) {
            ("ModelicaInternal_countLines", [Text(name)]) => {
                self.text_file(name).map(|file| vec![Integer(file.line_count() as i64)])
            }
            ("ModelicaInternal_readLine", [Text(name), Number(line)]) => {
                let line = *line as i64;
                if line < 1 {
                    return Some(Err(format!("there is no line {line}: lines are counted from 1")));
                }
                self.text_file(name).map(|file| match file.line(line as usize) {
                    Some(text) => vec![Text(text.to_string()), Boolean(false)],
                    // Past the last line: the empty string and the end of the file.
                    None => vec![Text(String::new()), Boolean(true)],
                })
            }
            ("ModelicaInternal_stat", [Text(name)]) => self
                .options
                .data_files
                .stat(Path::new(name))
                .map(|kind| vec![Integer(kind)])
                .map_err(|why| format!("cannot tell what `{name}` is: {why}")),
            // `Files.exist`: whether the name is a file or a directory.
            ("EqmFiles_exist", [Text(name)]) => self
                .options
                .data_files
                .stat(Path::new(name))
                .map(|kind| vec![Boolean(kind > 1)])
                .map_err(|why| format!("cannot tell whether `{name}` exists: {why}")),
            // `Files.fullPathName`, which the library's default `loadResource` calls with a
            // `modelica://` URI: the resource in the directory of the library that defines the
            // top-level class the URI names, as Modelica resolves such a URI; a file name as
            // written (a relative one is relative to the current directory, where the C library
            // opens it).
            ("ModelicaInternal_fullPathName", [Text(name)]) => Ok(vec![Text(self.resource_path(name))]),
            _ => Err("EQM does not provide this function with these arguments".to_string()),
        })
    }

    /// The text file `name`, read once per flattening.
    fn text_file(&mut self, name: &str) -> Result<Rc<crate::datafiles::TextFile>, String> {
        let path = Path::new(name).to_path_buf();
        if let Some(known) = self.text_files_read.get(&path) {
            return known.clone();
        }
        let read = self
            .options
            .data_files
            .text_file(&path)
            .map(Rc::new)
            .map_err(|why| format!("cannot read `{name}`: {why}"));
        self.text_files_read.insert(path, read.clone());
        read
    }
}
