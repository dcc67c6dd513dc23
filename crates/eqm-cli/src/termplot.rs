//! Plots of simulation results as text, for a terminal.
//!
//! Input: the series that the SVG and PNG plots take ([`Series`]: a name, an optional unit and
//! `(time, value)` points), and a size in terminal cells. [`render`] draws values over time;
//! [`render_xy`] draws a phase portrait, one series' values over another's.
//!
//! Output: plain text of at most `height` lines, each ending in a newline and at most `width`
//! characters long. Curves are drawn in Unicode braille characters, each cell holding 2 × 4
//! dots, and consecutive points are joined by straight lines so that curves are continuous. The
//! y axis carries 3 to 5 tick numbers on steps of 1, 2 or 5 × 10^k (fewer when a panel is only
//! a few rows high), the x axis carries as many such numbers as fit, with its label below them.
//! The same input always gives the same text.
//!
//! Several series are drawn in panels stacked over one shared x axis, each panel with its own
//! y axis and headed by the series' name and unit, in the order given. Braille dots cannot tell
//! curves apart without colour, and overlaid curves with markers become unreadable where they
//! cross, so panels are the one form that reads in plain text; when the height does not leave
//! every panel at least two rows, the first panels are drawn and a last line names the rest.
//!
//! The range of each axis is the range of its finite data, so the highest value lies in the top
//! row of dots and the lowest in the bottom row; a range too short for three tick numbers is
//! widened to whole steps, and a constant series is given a range around its value. A point with
//! a NaN or infinite coordinate is not drawn and breaks its curve into two.
//!
//! It deliberately does not use colour or other escape sequences, does not ask the terminal for
//! its size (see [`terminal_size`]), does not interpolate between two series sampled at
//! different times (a phase portrait pairs points by position), and does not choose what to
//! plot; the caller does.

use crate::plot::Series;
use std::borrow::Cow;

/// The size assumed when the environment does not give one: columns, then lines.
const FALLBACK_SIZE: (usize, usize) = (80, 24);

/// The fewest rows of braille cells a panel is drawn with.
const MIN_ROWS: usize = 2;

/// The fewest columns of braille cells a plot is drawn with.
const MIN_COLS: usize = 4;

/// The most tick numbers on an axis.
const MAX_TICKS: usize = 5;

/// Lines below the panels: the x axis, its tick numbers and its label.
const X_AXIS_LINES: usize = 3;

/// A range shorter than this fraction of its magnitude is treated as a single value.
const FLAT: f64 = 1e-10;

/// The label of the time axis.
const TIME_LABEL: &str = "time [s]";

/// The braille bit of each dot, indexed by the dot's column (0 or 1) and row (0 to 3) in a cell.
const DOT_BITS: [[u8; 4]; 2] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]];

/// The terminal size in cells, `(columns, lines)`, from the `COLUMNS` and `LINES` environment
/// variables, each falling back to 80 columns and 24 lines when unset or not a positive number.
pub(crate) fn terminal_size() -> (usize, usize) {
    size_from(
        std::env::var("COLUMNS").ok().as_deref(),
        std::env::var("LINES").ok().as_deref(),
    )
}

/// The terminal size from the values of `COLUMNS` and `LINES`, with the fallback for each.
fn size_from(columns: Option<&str>, lines: Option<&str>) -> (usize, usize) {
    let read = |v: Option<&str>| v.and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    (
        read(columns).unwrap_or(FALLBACK_SIZE.0),
        read(lines).unwrap_or(FALLBACK_SIZE.1),
    )
}

/// Draws `series` over time in `width` × `height` terminal cells, one panel per series.
pub(crate) fn render(series: &[Series], width: usize, height: usize) -> String {
    let panels: Vec<Panel> = series
        .iter()
        .map(|s| Panel {
            title: label(s),
            points: Cow::Borrowed(&s.points),
        })
        .collect();
    draw(&panels, TIME_LABEL, width, height)
}

/// Draws the values of `y` over the values of `x` (a phase portrait) in `width` × `height`
/// terminal cells. The two series are paired point by point, as the results of one run are
/// sampled at the same times; points beyond the shorter series are left out.
pub(crate) fn render_xy(x: &Series, y: &Series, width: usize, height: usize) -> String {
    let points = x
        .points
        .iter()
        .zip(&y.points)
        .map(|(&(_, a), &(_, b))| (a, b))
        .collect();
    let panel = Panel {
        title: label(y),
        points: Cow::Owned(points),
    };
    draw(&[panel], &label(x), width, height)
}

/// One panel to draw: its heading and its points, x first.
struct Panel<'a> {
    title: String,
    points: Cow<'a, [(f64, f64)]>,
}

/// A series' name with its unit in brackets.
fn label(s: &Series) -> String {
    match &s.unit {
        Some(u) => format!("{} [{u}]", s.name),
        None => s.name.clone(),
    }
}

/// Whether both coordinates of a point are finite.
fn finite(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite()
}

/// The smallest and largest of `values`, or `None` when there are none.
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A range that can be drawn: `extent` itself when it is long enough, else a range around its
/// middle; no data gives the range around zero.
fn drawable(extent: Option<(f64, f64)>) -> (f64, f64) {
    let (lo, hi) = extent.unwrap_or((0.0, 0.0));
    if hi - lo > FLAT * lo.abs().max(hi.abs()) {
        return (lo, hi);
    }
    let mid = lo / 2.0 + hi / 2.0;
    // Half the value on either side, or one unit where that is no range at all (zero, or so
    // small that the halves round away).
    let pad = mid.abs() / 2.0;
    let pad = if mid - pad < mid + pad { pad } else { 1.0 };
    ((mid - pad).max(f64::MIN), (mid + pad).min(f64::MAX))
}

/// One text line: `text` with control characters shown as spaces, cut to `width` characters (a
/// cut marked by an ellipsis), with a newline.
fn line(text: &str, width: usize) -> String {
    let chars: Vec<char> = text
        .trim_end()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out: String = if chars.len() <= width {
        chars.into_iter().collect()
    } else if width == 0 {
        String::new()
    } else {
        chars[..width - 1].iter().chain(['…'].iter()).collect()
    };
    out.push('\n');
    out
}

/// A one-line message in place of a plot; nothing when there is no line to write it on.
fn message(text: &str, width: usize, height: usize) -> String {
    if height == 0 { String::new() } else { line(text, width) }
}

/// An axis: its range, its tick values and their labels.
#[derive(Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// The axis over `lo..hi` (with `lo < hi`) with at most `max` tick numbers on the smallest
    /// step of 1, 2 or 5 × 10^k that keeps to `max`. When that step leaves fewer than three
    /// numbers inside the range (and `max` allows three), the range is widened to whole steps.
    fn new(lo: f64, hi: f64, max: usize) -> Axis {
        let plain = Axis { lo, hi, ticks: vec![] };
        let span = hi / 2.0 - lo / 2.0;
        if !(span > 0.0 && span.is_finite()) || max == 0 {
            return plain;
        }
        // Start one decade below any step that could do, and go up until one does.
        let first = (2.0 * span / max as f64).log10().floor().clamp(-400.0, 400.0) as i32 - 1;
        for exp in first..first + 4 {
            for mantissa in [1.0, 2.0, 5.0] {
                let step = Step { mantissa, exp };
                let Some((a, b)) = step.interior(lo, hi) else { continue };
                if b - a + 1.0 > max as f64 {
                    continue;
                }
                let (mut a, mut b, mut lo, mut hi) = (a, b, lo, hi);
                if b - a + 1.0 < 3.0 && max >= 3 {
                    let (wa, wb) = ((lo / step.size()).floor(), (hi / step.size()).ceil());
                    if wb - wa < max as f64 {
                        (a, b, lo, hi) = (wa, wb, step.value(wa), step.value(wb));
                    }
                }
                let values: Vec<f64> = (0..=(b - a) as usize).map(|i| step.value(a + i as f64)).collect();
                let labels = format_ticks(&values, exp);
                return Axis {
                    lo,
                    hi,
                    ticks: values.into_iter().zip(labels).collect(),
                };
            }
        }
        plain
    }

    /// Where `v` lies on the axis: 0 at `lo`, 1 at `hi`, without overflow for any finite range.
    fn fraction(&self, v: f64) -> f64 {
        (v / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0)
    }
}

/// A tick step, `mantissa` × 10^`exp`.
#[derive(Debug, Clone, Copy)]
struct Step {
    mantissa: f64,
    exp: i32,
}

impl Step {
    fn size(self) -> f64 {
        self.value(1.0)
    }

    /// The `i`-th multiple of the step, computed so that decimal steps give the nearest double.
    fn value(self, i: f64) -> f64 {
        if self.exp >= 0 {
            i * self.mantissa * 10f64.powi(self.exp)
        } else {
            i * self.mantissa / 10f64.powi(-self.exp)
        }
    }

    /// The first and last multiple of the step within `lo..hi` (up to rounding), as multiples.
    fn interior(self, lo: f64, hi: f64) -> Option<(f64, f64)> {
        let size = self.size();
        if !(size.is_finite() && size > 0.0) {
            return None;
        }
        let a = (lo / size - 1e-9).ceil();
        let b = (hi / size + 1e-9).floor();
        (a.is_finite() && b.is_finite() && a <= b).then_some((a, b))
    }
}

/// Compact labels for tick values on a step of 10^`exp` (times 1, 2 or 5): plain decimals with
/// no trailing zeros, or powers of ten when the numbers are very large or very small.
fn format_ticks(values: &[f64], exp: i32) -> Vec<String> {
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let scientific = largest >= 1e6 || (largest > 0.0 && largest < 1e-3);
    values
        .iter()
        .map(|&v| {
            if v == 0.0 {
                "0".to_string()
            } else if scientific {
                let digits = ((v.abs().log10().floor() as i32 - exp).max(0) as usize).min(15);
                let text = format!("{v:.digits$e}");
                match text.split_once('e') {
                    Some((m, e)) => format!("{}e{e}", trim_zeros(m)),
                    None => text,
                }
            } else {
                let digits = (-exp).clamp(0, 15) as usize;
                trim_zeros(&format!("{v:.digits$}")).to_string()
            }
        })
        .collect()
}

/// A decimal number without trailing zeros after its point, nor a trailing point.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A grid of braille cells, each a set of 2 × 4 dots.
struct Canvas {
    cols: usize,
    rows: usize,
    cells: Vec<u8>,
}

impl Canvas {
    fn new(cols: usize, rows: usize) -> Canvas {
        Canvas {
            cols,
            rows,
            cells: vec![0; cols * rows],
        }
    }

    /// Sets the dot in dot column `x` and dot row `y` (0 at the top); dots outside are ignored.
    fn set(&mut self, x: i64, y: i64) {
        let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y)) else {
            return;
        };
        if x < 2 * self.cols && y < 4 * self.rows {
            self.cells[(y / 4) * self.cols + x / 2] |= DOT_BITS[x % 2][y % 4];
        }
    }

    /// Draws the dots of a straight line from `a` to `b`, both ends included (Bresenham).
    fn line(&mut self, a: (i64, i64), b: (i64, i64)) {
        let (dx, dy) = ((b.0 - a.0).abs(), -(b.1 - a.1).abs());
        let (sx, sy) = ((b.0 - a.0).signum(), (b.1 - a.1).signum());
        let (mut x, mut y, mut err) = (a.0, a.1, dx + dy);
        loop {
            self.set(x, y);
            if (x, y) == b {
                return;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws `points` as a curve on the axes `x` and `y`: each run of finite points as a
    /// polyline, clipped to the canvas, and a lone finite point as one dot.
    fn curve(&mut self, points: &[(f64, f64)], x: &Axis, y: &Axis) {
        let (w, h) = ((2 * self.cols - 1) as f64, (4 * self.rows - 1) as f64);
        let to_dots = |p: &(f64, f64)| (x.fraction(p.0) * w, (1.0 - y.fraction(p.1)) * h);
        let bounds = (-0.5, w + 0.5, -0.5, h + 0.5);
        let round = |p: (f64, f64)| (p.0.round() as i64, p.1.round() as i64);
        let mut previous = None;
        for p in points {
            if !finite(p) {
                previous = None;
                continue;
            }
            let here = to_dots(p);
            match previous {
                Some(there) => {
                    if let Some((a, b)) = clip(there, here, bounds) {
                        self.line(round(a), round(b));
                    }
                }
                None => {
                    if let Some((a, _)) = clip(here, here, bounds) {
                        let (dx, dy) = round(a);
                        self.set(dx, dy);
                    }
                }
            }
            previous = Some(here);
        }
    }

    /// Row `r` as text: a braille character per cell with dots, a space per empty cell.
    fn row(&self, r: usize) -> String {
        self.cells[r * self.cols..(r + 1) * self.cols]
            .iter()
            .map(|&bits| {
                if bits == 0 {
                    ' '
                } else {
                    char::from_u32(0x2800 + u32::from(bits)).unwrap_or(' ')
                }
            })
            .collect()
    }
}

/// The part of the segment from `a` to `b` inside `(x0, x1, y0, y1)`, or `None` when none of it
/// is (Liang–Barsky).
fn clip(a: (f64, f64), b: (f64, f64), (x0, x1, y0, y1): (f64, f64, f64, f64)) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - x0), (dx, x1 - a.0), (-dy, a.1 - y0), (dy, y1 - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    (t0 <= t1).then_some(((a.0 + t0 * dx, a.1 + t0 * dy), (a.0 + t1 * dx, a.1 + t1 * dy)))
}

/// The most y tick numbers for a panel `rows` cells high: one for every second row, 2 to 5.
fn y_ticks_for(rows: usize) -> usize {
    (rows / 2 + 1).clamp(2, MAX_TICKS)
}

/// Draws `panels` stacked over a shared x axis labelled `x_label`.
fn draw(panels: &[Panel], x_label: &str, width: usize, height: usize) -> String {
    if panels.is_empty() {
        return message("(nothing to plot)", width, height);
    }
    let finite_points = || panels.iter().flat_map(|p| p.points.iter().filter(|p| finite(p)));
    let Some(x_extent) = extent(finite_points().map(|p| p.0)) else {
        return message("(no finite values to plot)", width, height);
    };
    let (x_lo, x_hi) = drawable(Some(x_extent));

    // The vertical budget: the x axis at the bottom, a note when not every panel fits, and per
    // panel a heading and its rows.
    let per_panel = 1 + MIN_ROWS;
    let available = height.saturating_sub(X_AXIS_LINES);
    let (shown, note) = if available >= panels.len() * per_panel {
        (panels.len(), 0)
    } else {
        (available.saturating_sub(1) / per_panel, 1)
    };
    if shown == 0 {
        return message("(too small to plot)", width, height);
    }
    let rows_total = available - note - shown;
    let rows: Vec<usize> = (0..shown)
        .map(|i| rows_total / shown + usize::from(i < rows_total % shown))
        .collect();

    let y_axes: Vec<Axis> = panels[..shown]
        .iter()
        .zip(&rows)
        .map(|(p, &r)| {
            let (lo, hi) = drawable(extent(p.points.iter().filter(|p| finite(p)).map(|p| p.1)));
            Axis::new(lo, hi, y_ticks_for(r))
        })
        .collect();
    let label_width = y_axes
        .iter()
        .flat_map(|a| &a.ticks)
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(0);
    let gutter = label_width + 2;
    if width < gutter + MIN_COLS {
        return message("(too small to plot)", width, height);
    }
    let cols = width - gutter;
    let (x_axis, x_numbers) = x_axis(x_lo, x_hi, cols, gutter, width);

    let mut out = String::new();
    for ((panel, y_axis), &r) in panels.iter().zip(&y_axes).zip(&rows) {
        let mut canvas = Canvas::new(cols, r);
        canvas.curve(&panel.points, &x_axis, y_axis);
        let mut labels = vec![None; r];
        for (v, text) in &y_axis.ticks {
            let dot = ((1.0 - y_axis.fraction(*v)) * (4 * r - 1) as f64)
                .round()
                .clamp(0.0, (4 * r - 1) as f64);
            labels[dot as usize / 4].get_or_insert(text.as_str());
        }
        let title = if panel.points.iter().any(finite) {
            panel.title.clone()
        } else {
            format!("{} (no finite values)", panel.title)
        };
        out += &line(&format!("{:gutter$}{title}", ""), width);
        for (i, tick) in labels.iter().enumerate() {
            let (text, axis) = match tick {
                Some(t) => (*t, '┤'),
                None => ("", '│'),
            };
            out += &line(&format!("{text:>label_width$} {axis}{}", canvas.row(i)), width);
        }
    }
    let mut axis_line: Vec<char> = format!("{:w$}└{}", "", "─".repeat(cols), w = gutter - 1)
        .chars()
        .collect();
    for &(cell, _) in &x_numbers {
        axis_line[gutter + cell] = '┬';
    }
    out += &line(&axis_line.into_iter().collect::<String>(), width);
    let mut numbers = vec![' '; width];
    for (cell, text) in &x_numbers {
        let start = placement(gutter + cell, text, width);
        numbers.splice(start..start + text.chars().count(), text.chars());
    }
    out += &line(&numbers.into_iter().collect::<String>(), width);
    let label_len = x_label.chars().count();
    out += &line(
        &format!(
            "{:pad$}{x_label}",
            "",
            pad = gutter + cols.saturating_sub(label_len) / 2
        ),
        width,
    );
    if note == 1 {
        let rest: Vec<&str> = panels[shown..].iter().map(|p| p.title.as_str()).collect();
        out += &line(&format!("(not shown: {})", rest.join(", ")), width);
    }
    out
}

/// Where a tick number centred on column `centre` starts, kept within `width` columns.
fn placement(centre: usize, text: &str, width: usize) -> usize {
    let len = text.chars().count();
    centre.saturating_sub(len / 2).min(width.saturating_sub(len))
}

/// The x axis over `lo..hi` for a plot `cols` cells wide right of a `gutter`, with the most tick
/// numbers (up to five) that fit side by side in `width` columns, and the cell column and label
/// of each tick.
fn x_axis(lo: f64, hi: f64, cols: usize, gutter: usize, width: usize) -> (Axis, Vec<(usize, String)>) {
    for max in (2..=MAX_TICKS).rev() {
        let axis = Axis::new(lo, hi, max);
        let dots = (2 * cols - 1) as f64;
        let numbers: Vec<(usize, String)> = axis
            .ticks
            .iter()
            .map(|(v, text)| {
                (
                    (axis.fraction(*v) * dots).round().clamp(0.0, dots) as usize / 2,
                    text.clone(),
                )
            })
            .collect();
        let mut free = 0;
        let fits = numbers.iter().all(|(cell, text)| {
            let start = placement(gutter + cell, text, width);
            let ok = start >= free && text.chars().count() <= width;
            free = start + text.chars().count() + 1;
            ok
        });
        if fits {
            return (axis, numbers);
        }
    }
    (Axis { lo, hi, ticks: vec![] }, vec![])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, unit: Option<&str>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            unit: unit.map(str::to_string),
            points,
        }
    }

    fn sampled(n: usize, t_end: f64, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..=n)
            .map(|i| t_end * i as f64 / n as f64)
            .map(|t| (t, f(t)))
            .collect()
    }

    /// The rows of braille cells in a rendering: what follows the y axis on each plot line.
    fn plot_rows(out: &str) -> Vec<Vec<char>> {
        out.lines()
            .filter_map(|l| l.split_once(['┤', '│']).map(|(_, rest)| rest.chars().collect()))
            .collect()
    }

    /// The braille bits of a cell, 0 for a space.
    fn bits(c: char) -> u32 {
        match c as u32 {
            b @ 0x2800..=0x28ff => b - 0x2800,
            _ => 0,
        }
    }

    /// The y tick labels of a rendering, top to bottom.
    fn y_labels(out: &str) -> Vec<String> {
        out.lines()
            .filter_map(|l| l.split_once('┤').map(|(label, _)| label.trim().to_string()))
            .collect()
    }

    fn tick_labels(lo: f64, hi: f64, max: usize) -> Vec<String> {
        Axis::new(lo, hi, max).ticks.into_iter().map(|(_, l)| l).collect()
    }

    fn assert_fits(out: &str, width: usize, height: usize) {
        assert!(
            out.lines().count() <= height,
            "{} lines for {height}:\n{out}",
            out.lines().count()
        );
        for l in out.lines() {
            assert!(l.chars().count() <= width, "line longer than {width}: {l:?}");
        }
    }

    #[test]
    fn a_sine_reaches_the_top_and_bottom_rows() {
        let s = series(
            "x",
            Some("m"),
            sampled(400, 1.0, |t| (2.0 * std::f64::consts::PI * t).sin()),
        );
        let out = render(&[s], 60, 20);
        let rows = plot_rows(&out);
        assert_eq!(rows.len(), 20 - 1 - X_AXIS_LINES, "{out}");
        let top: u32 = rows[0].iter().map(|&c| bits(c)).fold(0, |a, b| a | b);
        let bottom: u32 = rows[rows.len() - 1].iter().map(|&c| bits(c)).fold(0, |a, b| a | b);
        assert!(top & 0x09 != 0, "no dot in the top dot row:\n{out}");
        assert!(bottom & 0xc0 != 0, "no dot in the bottom dot row:\n{out}");
        assert_eq!(y_labels(&out), ["1", "0.5", "0", "-0.5", "-1"], "{out}");
        assert!(out.starts_with(&format!("{:6}x [m]\n", "")), "{out}");
        assert!(out.contains(TIME_LABEL), "{out}");
    }

    #[test]
    fn a_straight_line_from_two_points_is_continuous() {
        let s = series("y", None, vec![(0.0, 1.0), (10.0, 21.0)]);
        let out = render(&[s], 50, 16);
        let rows = plot_rows(&out);
        let cols = rows.iter().map(Vec::len).max().unwrap();
        for c in 0..cols {
            assert!(
                rows.iter().any(|r| r.get(c).is_some_and(|&ch| bits(ch) != 0)),
                "column {c} is empty:\n{out}"
            );
        }
        // Every dot column too, steep or shallow.
        for (a, b) in [((0, 0), (39, 7)), ((0, 0), (3, 31)), ((39, 31), (0, 0))] {
            let mut canvas = Canvas::new(20, 8);
            canvas.line(a, b);
            for x in a.0.min(b.0)..=a.0.max(b.0) {
                let (cell, bit) = (x as usize / 2, x as usize % 2);
                let column = DOT_BITS[bit].iter().fold(0, |m, b| m | b);
                assert!(
                    (0..8).any(|r| canvas.cells[r * 20 + cell] & column != 0),
                    "dot column {x} is empty"
                );
            }
            for y in a.1.min(b.1)..=a.1.max(b.1) {
                let row = y as usize;
                let bits = DOT_BITS[0][row % 4] | DOT_BITS[1][row % 4];
                assert!(
                    (0..20).any(|c| canvas.cells[(row / 4) * 20 + c] & bits != 0),
                    "dot row {y} is empty"
                );
            }
        }
    }

    #[test]
    fn ticks_are_nice_numbers() {
        assert_eq!(tick_labels(0.0, 10.0, 5), ["0", "5", "10"]);
        assert_eq!(tick_labels(-1.0, 1.0, 5), ["-1", "-0.5", "0", "0.5", "1"]);
        assert_eq!(tick_labels(0.0, 1.0, 5), ["0", "0.5", "1"]);
        assert_eq!(tick_labels(0.0, 0.3, 5), ["0", "0.1", "0.2", "0.3"]);
        assert_eq!(tick_labels(2.0, 7.0, 5), ["2", "4", "6"]);
        assert_eq!(tick_labels(0.0, 1e7, 5), ["0", "5e6", "1e7"]);
        assert_eq!(tick_labels(0.0, 2e-4, 5), ["0", "5e-5", "1e-4", "1.5e-4", "2e-4"]);
        assert_eq!(tick_labels(0.0, 2e-4, 3), ["0", "1e-4", "2e-4"]);
        assert_eq!(tick_labels(-3.5e-5, 2.5e-5, 5), ["-2e-5", "0", "2e-5"]);
        assert_eq!(tick_labels(100.0, 100.5, 5), ["100", "100.2", "100.4"]);
        // Too few numbers inside: the range is widened to whole steps.
        let axis = Axis::new(0.1, 12.9, 5);
        assert_eq!(
            axis.ticks.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>(),
            ["0", "5", "10", "15"]
        );
        assert_eq!((axis.lo, axis.hi), (0.0, 15.0));
        // Between three and five numbers for any range.
        for i in 1..2000 {
            let (lo, hi) = (-(i as f64) * 0.37, i as f64 * 1.13);
            let n = Axis::new(lo, hi, 5).ticks.len();
            assert!((3..=5).contains(&n), "{n} ticks on {lo}..{hi}");
        }
    }

    #[test]
    fn axes_show_the_expected_numbers() {
        let s = series("v", Some("m/s"), vec![(0.0, 0.0), (10.0, 10.0)]);
        let out = render(&[s], 40, 12);
        assert_eq!(y_labels(&out), ["10", "5", "0"], "{out}");
        let numbers = out.lines().rev().nth(1).unwrap();
        assert_eq!(
            numbers.split_whitespace().collect::<Vec<_>>(),
            ["0", "5", "10"],
            "{out}"
        );
        assert_eq!(out.lines().last().unwrap().trim(), TIME_LABEL);
        assert_eq!(out.lines().next().unwrap().trim(), "v [m/s]");
        let axis = out.lines().rev().nth(2).unwrap();
        assert_eq!(axis.matches('┬').count(), 3, "{out}");
        assert!(axis.trim_start().starts_with("└┬"), "{out}");
        assert!(axis.ends_with('┬'), "{out}");
    }

    #[test]
    fn output_is_deterministic_and_fits() {
        let many = [
            series("a", Some("m"), sampled(300, 5.0, |t| t.sin() * 1e3)),
            series("b", None, sampled(50, 5.0, |t| t * t)),
            series("c", Some("K"), sampled(7, 5.0, |t| 300.0 - t)),
        ];
        for (width, height) in [(80, 24), (40, 10), (20, 6), (120, 50), (12, 7), (200, 8), (5, 30)] {
            let first = render(&many, width, height);
            assert_eq!(first, render(&many, width, height));
            assert_fits(&first, width, height);
            let xy = render_xy(&many[0], &many[1], width, height);
            assert_eq!(xy, render_xy(&many[0], &many[1], width, height));
            assert_fits(&xy, width, height);
        }
        // When everything fits, the plot takes exactly the height given.
        assert_eq!(render(&many, 80, 24).lines().count(), 24);
    }

    #[test]
    fn series_stack_in_order_and_what_does_not_fit_is_named() {
        let many: Vec<Series> = ["a", "b", "c"]
            .iter()
            .map(|n| series(n, Some("m"), sampled(10, 1.0, |t| t)))
            .collect();
        let out = render(&many, 40, 24);
        let headings: Vec<&str> = out
            .lines()
            .filter(|l| l.trim().ends_with("[m]"))
            .map(str::trim)
            .collect();
        assert_eq!(headings, ["a [m]", "b [m]", "c [m]"], "{out}");
        let out = render(&many, 60, 10);
        assert_fits(&out, 60, 10);
        assert!(out.contains("a [m]") && out.contains("b [m]"), "{out}");
        assert!(out.lines().last().unwrap().contains("c [m]"), "{out}");
    }

    #[test]
    fn nan_and_infinity_break_the_curve() {
        let mut points = sampled(40, 4.0, |t| t);
        points[20].1 = f64::NAN;
        points[21].1 = f64::INFINITY;
        points[22].0 = f64::NEG_INFINITY;
        let out = render(&[series("g", None, points)], 44, 12);
        let rows = plot_rows(&out);
        let cols = rows.iter().map(Vec::len).max().unwrap();
        let empty = (0..cols)
            .filter(|&c| rows.iter().all(|r| r.get(c).is_none_or(|&ch| bits(ch) == 0)))
            .count();
        assert!(empty >= 1, "no gap:\n{out}");
        // The range ignores the infinite values.
        assert_eq!(y_labels(&out).first().map(String::as_str), Some("4"), "{out}");
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        let constant = series("c", None, sampled(20, 1.0, |_| 3.0));
        let out = render(std::slice::from_ref(&constant), 40, 12);
        let rows = plot_rows(&out);
        let filled: Vec<usize> = (0..rows.len())
            .filter(|&r| rows[r].iter().any(|&c| bits(c) != 0))
            .collect();
        assert_eq!(filled.len(), 1, "a flat line is one row:\n{out}");
        assert!(
            filled[0] > 0 && filled[0] < rows.len() - 1,
            "the flat line is inside the range:\n{out}"
        );
        assert!(y_labels(&out).contains(&"3".to_string()), "{out}");

        let one = series("p", Some("m"), vec![(2.0, 5.0)]);
        let out = render(std::slice::from_ref(&one), 40, 12);
        assert_eq!(
            plot_rows(&out).iter().flatten().filter(|&&c| bits(c) != 0).count(),
            1,
            "{out}"
        );

        let empty = series("e\nf", Some("\t"), vec![]);
        let nan = series("n", None, vec![(0.0, f64::NAN), (f64::INFINITY, 1.0)]);
        let huge = series("h", None, vec![(0.0, -f64::MAX), (1.0, f64::MAX), (f64::MAX, 0.0)]);
        let tiny = series("t", None, vec![(0.0, 1.0), (1e-300, 1.0 + 1e-15), (2e-300, 5e-324)]);
        let inputs: Vec<Vec<Series>> = vec![
            vec![],
            vec![empty.clone()],
            vec![nan.clone()],
            vec![empty.clone(), constant.clone()],
            vec![huge.clone()],
            vec![tiny.clone()],
            vec![one.clone(), nan.clone(), huge.clone()],
        ];
        for input in &inputs {
            for (w, h) in [(0, 0), (1, 1), (3, 2), (10, 5), (10, 6), (80, 24)] {
                assert_fits(&render(input, w, h), w, h);
            }
        }
        for (x, y) in [
            (&empty, &one),
            (&one, &one),
            (&huge, &tiny),
            (&nan, &constant),
            (&constant, &huge),
        ] {
            for (w, h) in [(0, 0), (2, 9), (80, 24)] {
                assert_fits(&render_xy(x, y, w, h), w, h);
            }
        }
        assert_eq!(render(&[], 40, 10), "(nothing to plot)\n");
        assert_eq!(render(&[nan], 40, 10), "(no finite values to plot)\n");
        assert_eq!(render(&[empty, constant], 0, 0), "");
    }

    #[test]
    fn a_phase_portrait_draws_y_over_x() {
        let tau = 2.0 * std::f64::consts::PI;
        let x = series("x", Some("m"), sampled(500, 1.0, |t| (tau * t).cos()));
        let v = series("v", Some("m/s"), sampled(500, 1.0, |t| -(tau * t).sin() * 3.0));
        let out = render_xy(&x, &v, 50, 20);
        assert_eq!(out.lines().next().unwrap().trim(), "v [m/s]");
        assert_eq!(out.lines().last().unwrap().trim(), "x [m]");
        assert_eq!(y_labels(&out), ["2", "0", "-2"], "{out}");
        let rows = plot_rows(&out);
        // A closed curve touches all four sides and leaves the middle empty.
        let any = |r: &Vec<char>| r.iter().any(|&c| bits(c) != 0);
        assert!(any(&rows[0]) && any(&rows[rows.len() - 1]), "{out}");
        let cols = rows.iter().map(Vec::len).max().unwrap();
        let column = |c: usize| rows.iter().any(|r| r.get(c).is_some_and(|&ch| bits(ch) != 0));
        assert!(column(0) && column(cols - 1), "{out}");
        assert!(
            rows[rows.len() / 2].iter().filter(|&&c| bits(c) != 0).count() <= 4,
            "{out}"
        );
    }

    #[test]
    fn terminal_size_reads_the_environment_values() {
        assert_eq!(size_from(Some("120"), Some("40")), (120, 40));
        assert_eq!(size_from(None, None), (80, 24));
        assert_eq!(size_from(Some("wide"), Some("0")), (80, 24));
        assert_eq!(size_from(Some(" 100 "), None), (100, 24));
        let (w, h) = terminal_size();
        assert!(w > 0 && h > 0);
    }
}
