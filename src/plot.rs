//! Plots of simulation results as SVG files.
//!
//! Input: named series of `(time, value)` points, with units where the model declares them.
//! Output: the text of a standalone SVG plot with labelled axes (the unit in the y label when
//! all series share one) and a legend. It deliberately does not read files or choose what to
//! plot; `main.rs` does.

use plotters::prelude::*;

/// One curve of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub unit: Option<String>,
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` over time into an SVG document.
pub fn svg(series: &[Series]) -> Result<String, String> {
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
    let mut out = String::new();
    let result: Result<(), Box<dyn std::error::Error>> = (|| {
        let root = SVGBackend::with_string(&mut out, (960, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("time [s]")
            .y_desc(y_label.as_str())
            .draw()?;
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
                ))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    })();
    result.map_err(|e| format!("the plot could not be drawn: {e}"))?;
    Ok(out)
}
