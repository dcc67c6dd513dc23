//! Plots of simulation results as SVG or PNG.
//!
//! Input: named series of `(time, value)` points, with units where the model declares them.
//! Output: a plot with labelled axes (the unit in the y label when all series share one) and a
//! legend: the text of a standalone SVG document, or a PNG file (the bitmap encoder writes the
//! file itself; text is drawn with the DejaVu Sans font compiled into the binary, so PNG plots
//! need no fonts installed). It deliberately does not choose what to plot; the command line does.

use plotters::coord::Shift;
use plotters::prelude::*;

/// The plot size in pixels.
const SIZE: (u32, u32) = (960, 540);

/// One curve of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub unit: Option<String>,
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` over time into an SVG document.
pub fn svg(series: &[Series]) -> Result<String, String> {
    // Text is measured with the embedded font for SVG too.
    register_font()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(root, series)?;
    }
    Ok(out)
}

/// Draws `series` over time into the PNG file `path`.
pub fn png(series: &[Series], path: &std::path::Path) -> Result<(), String> {
    register_font()?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(root, series)
}

/// Draws `series` into `path`: PNG for a `.png` file, else SVG.
pub fn write(series: &[Series], path: &std::path::Path) -> Result<(), String> {
    if path.extension().is_some_and(|e| e == "png") {
        png(series, path)
    } else {
        svg(series)
            .and_then(|svg| std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display())))
    }
}

/// Makes the embedded font the one plotters uses for text (once per process).
fn register_font() -> Result<(), String> {
    static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(
                "sans-serif",
                FontStyle::Normal,
                include_bytes!("../../../assets/fonts/DejaVuSans.ttf"),
            )
            .map_err(|_| "the embedded font could not be loaded".to_string())
        })
        .clone()
}

/// Draws the plot on any plotters back end.
fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, series: &[Series]) -> Result<(), String> {
    let finite = |v: f64| v.is_finite();
    let points = || series.iter().flat_map(|s| s.points.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for (x, y) in points().filter(|(x, y)| finite(*x) && finite(*y)) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !(x0.is_finite() && y0.is_finite()) {
        return Err("there are no finite values to plot".to_string());
    }
    // A flat curve still gets a visible range; otherwise 5 % of head room on each side.
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = if y1 > y0 {
        0.05 * (y1 - y0)
    } else {
        y0.abs().max(1.0) * 0.5
    };
    let (y0, y1) = (y0 - pad, y1 + pad);
    let units: Vec<&str> = series.iter().filter_map(|s| s.unit.as_deref()).collect();
    let y_label = match units.first() {
        Some(u) if units.len() == series.len() && units.iter().all(|v| v == u) => format!("value [{u}]"),
        _ => "value".to_string(),
    };
    let result: Result<(), Box<dyn std::error::Error>> = (|| {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("time [s]")
            .y_desc(y_label.as_str())
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let label = match &s.unit {
                Some(u) => format!("{} [{u}]", s.name),
                None => s.name.clone(),
            };
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied().filter(|(x, y)| finite(*x) && finite(*y)),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    })();
    result.map_err(|e| format!("the plot could not be drawn: {e}"))
}
