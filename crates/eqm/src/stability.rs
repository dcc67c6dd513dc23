//! The stability of integration methods for a model's eigenvalues, and its picture.
//!
//! Input: eigenvalues `λ` (complex numbers), a step `h` and a [`Method`]; or a compiled model,
//! whose eigenvalues come from its analysis ([`crate::analyze`]: the linearisation at its
//! steady state and the eigenvalue decomposition are made there). Output: the numbers of
//! [`eqm_integrators::stability`] (re-exported here: stability functions, largest stable steps,
//! the advice), the advice and time scales of a model ([`advice_for`], [`time_scales_for`]), and
//! [`svg`]: a standalone SVG drawing of the complex plane with the method's stability region
//! shaded and the points `z = hλ` marked (filled where the step is stable for that eigenvalue,
//! hollow red where it is not, grey for growing modes, which do not limit the step), with
//! labelled axes. The region is drawn by sampling a grid of cells, so its edge is as fine as a
//! cell (a 160 × 120 grid). The window covers the region near the origin and every point, with
//! equal scales on both axes, so that a stiff model's far eigenvalues make the region small, as
//! it is. The advice as text and JSON ([`advice_text`], [`advice_json`]) is written with the
//! rest of an analysis's report and re-exported here. Nothing here linearises a model or
//! decomposes a matrix, and nothing writes files.

pub use crate::analyze::{advice_json, advice_text};
pub use eqm_integrators::stability::*;

use eqm_diag::svg::{Page, SvgDocument};
use eqm_diag::text::{coordinate, format_number, xml_escape};
use eqm_integrators::Method;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 540.0;
const MARGIN: f64 = 56.0;
const COLUMNS: usize = 160;
const ROWS: usize = 120;
const REGION_FILL: &str = "#cfe6cf";
const STABLE_POINT: &str = "#1f5fa8";
const UNSTABLE_POINT: &str = "#c62828";
const GROWING_POINT: &str = "#777777";

/// The drawing for `method`; `None` for `auto`, which has no single stability region.
pub fn svg(method: &Method, eigenvalues: &[C64], h: f64) -> Option<String> {
    let function = StabilityFunction::of(method)?;
    let name = match method {
        Method::Bdf => "bdf (order 5)".to_string(),
        m => m.name().to_string(),
    };
    Some(svg_of(&function, &name, eigenvalues, h))
}

/// The part of the complex plane drawn and where it lies on the page: the usual extent of the
/// regions of explicit methods around the origin and every point with a margin, widened to
/// equal scales on both axes.
struct Window {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Page units per unit of `z`, the same on both axes.
    scale: f64,
    /// The top of the plot on the page, below the heading and the legend.
    top: f64,
    plot_w: f64,
    plot_h: f64,
}

impl Window {
    fn around(points: &[C64]) -> Window {
        let mut x0 = points.iter().map(|z| z.re).fold(-3.5, f64::min) * 1.1;
        let mut x1 = points.iter().map(|z| z.re).fold(1.5, f64::max) * 1.1;
        let half = points.iter().map(|z| z.im.abs()).fold(3.0, f64::max) * 1.1;
        let (mut y0, mut y1) = (-half, half);
        let (plot_w, plot_h) = (WIDTH - 2.0 * MARGIN, HEIGHT - 2.0 * MARGIN - 30.0);
        // Equal scales: widen whichever range is too narrow for its side.
        let scale = (plot_w / (x1 - x0)).min(plot_h / (y1 - y0));
        let (extra_x, extra_y) = (plot_w / scale - (x1 - x0), plot_h / scale - (y1 - y0));
        x0 -= extra_x / 2.0;
        x1 += extra_x / 2.0;
        y0 -= extra_y / 2.0;
        y1 += extra_y / 2.0;
        Window {
            x0,
            x1,
            y0,
            y1,
            scale,
            top: MARGIN + 30.0,
            plot_w,
            plot_h,
        }
    }

    /// The page's x of the real part `x`.
    fn px(&self, x: f64) -> f64 {
        MARGIN + (x - self.x0) * self.scale
    }

    /// The page's y of the imaginary part `y`.
    fn py(&self, y: f64) -> f64 {
        self.top + (self.y1 - y) * self.scale
    }
}

/// The drawing of the region of `function`, titled with `name`; see the module documentation.
pub fn svg_of(function: &StabilityFunction, name: &str, eigenvalues: &[C64], h: f64) -> String {
    let points: Vec<C64> = eigenvalues
        .iter()
        .map(|l| l * h)
        .filter(|z| z.re.is_finite() && z.im.is_finite())
        .collect();
    let w = Window::around(&points);
    // The page's size is written in whole numbers, as the picture always was.
    let mut out = SvgDocument::begin(Page::new(WIDTH, HEIGHT, 12));
    out.background();
    out.heading(
        MARGIN,
        24,
        14,
        &format!(
            "{name}: stability region (shaded) and z = h·λ for h = {}",
            format_number(h)
        ),
    );
    out.push_str(&format!(
        "<text class=\"legend\" x=\"{}\" y=\"44\">filled: stable at h; hollow red: unstable at h; grey: growing mode (Re λ &gt; 0)</text>\n",
        coordinate(MARGIN)
    ));
    region(&mut out, function, &w);
    axes(&mut out, &w);
    eigenvalue_points(&mut out, function, eigenvalues, &points, &w);
    out.finish()
}

/// The stability region, one rectangle per run of stable cells in a row.
fn region(out: &mut SvgDocument, function: &StabilityFunction, w: &Window) {
    let (cell_w, cell_h) = ((w.x1 - w.x0) / COLUMNS as f64, (w.y1 - w.y0) / ROWS as f64);
    // Rows overlap a little and edges stay crisp, so no hairline gaps show between them.
    out.push_str("<g class=\"region\" shape-rendering=\"crispEdges\">\n");
    for row in 0..ROWS {
        let y = w.y1 - (row as f64 + 0.5) * cell_h;
        let mut start: Option<usize> = None;
        for col in 0..=COLUMNS {
            let stable = col < COLUMNS && function.is_stable(C64::new(w.x0 + (col as f64 + 0.5) * cell_w, y));
            match (stable, start) {
                (true, None) => start = Some(col),
                (false, Some(s)) => {
                    out.push_str(&format!(
                        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{REGION_FILL}\"/>\n",
                        coordinate(w.px(w.x0 + s as f64 * cell_w)),
                        coordinate(w.py(y + 0.5 * cell_h)),
                        coordinate((col - s) as f64 * cell_w * w.scale),
                        coordinate(cell_h * w.scale + 0.6)
                    ));
                    start = None;
                }
                _ => {}
            }
        }
    }
    out.push_str("</g>\n");
}

/// The frame, the axes through the origin, the ticks and the axis labels.
fn axes(out: &mut SvgDocument, w: &Window) {
    out.push_str(&format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\"/>\n",
        coordinate(w.px(w.x0)),
        coordinate(w.py(w.y1)),
        coordinate(w.plot_w),
        coordinate(w.plot_h)
    ));
    if (w.x0..=w.x1).contains(&0.0) {
        out.push_str(&line(w.px(0.0), w.py(w.y0), w.px(0.0), w.py(w.y1), "#555555"));
    }
    if (w.y0..=w.y1).contains(&0.0) {
        out.push_str(&line(w.px(w.x0), w.py(0.0), w.px(w.x1), w.py(0.0), "#555555"));
    }
    let step = tick_step((w.x1 - w.x0).max(w.y1 - w.y0));
    let mut tick = (w.x0 / step).ceil() * step;
    while tick <= w.x1 {
        out.push_str(&line(w.px(tick), w.py(w.y0), w.px(tick), w.py(w.y0) + 5.0, "#000000"));
        out.push_str(&format!(
            "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            coordinate(w.px(tick)),
            coordinate(w.py(w.y0) + 18.0),
            format_number(round_tick(tick, step))
        ));
        tick += step;
    }
    let mut tick = (w.y0 / step).ceil() * step;
    while tick <= w.y1 {
        out.push_str(&line(w.px(w.x0) - 5.0, w.py(tick), w.px(w.x0), w.py(tick), "#000000"));
        out.push_str(&format!(
            "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
            coordinate(w.px(w.x0) - 8.0),
            coordinate(w.py(tick) + 4.0),
            format_number(round_tick(tick, step))
        ));
        tick += step;
    }
    out.push_str(&format!(
        "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">Re z</text>\n",
        coordinate(MARGIN + w.plot_w / 2.0),
        coordinate(HEIGHT - 8.0)
    ));
    out.push_str(&format!(
        "<text class=\"axis\" x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">Im z</text>\n",
        coordinate(w.top + w.plot_h / 2.0),
        coordinate(w.top + w.plot_h / 2.0)
    ));
}

/// The eigenvalues times the step, each with its values as hover text.
fn eigenvalue_points(
    out: &mut SvgDocument,
    function: &StabilityFunction,
    eigenvalues: &[C64],
    points: &[C64],
    w: &Window,
) {
    out.push_str("<g class=\"eigenvalues\">\n");
    for (lambda, z) in eigenvalues.iter().zip(points) {
        let (color, fill) = if lambda.re > 1e-12 * lambda.norm() {
            (GROWING_POINT, GROWING_POINT)
        } else if function.is_stable(*z) {
            (STABLE_POINT, STABLE_POINT)
        } else {
            (UNSTABLE_POINT, "none")
        };
        out.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{fill}\" stroke=\"{color}\" stroke-width=\"2\"><title>{}</title></circle>\n",
            coordinate(w.px(z.re)),
            coordinate(w.py(z.im)),
            xml_escape(&format!(
                "λ = {} {} {}i, h·λ = {} {} {}i",
                format_number(lambda.re),
                if lambda.im < 0.0 { "-" } else { "+" },
                format_number(lambda.im.abs()),
                format_number(z.re),
                if z.im < 0.0 { "-" } else { "+" },
                format_number(z.im.abs())
            ))
        ));
    }
    out.push_str("</g>\n");
}

fn line(xa: f64, ya: f64, xb: f64, yb: f64, color: &str) -> String {
    format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\"/>\n",
        coordinate(xa),
        coordinate(ya),
        coordinate(xb),
        coordinate(yb)
    )
}

/// A tick spacing of 1, 2 or 5 times a power of ten giving five to ten ticks over `span`.
fn tick_step(span: f64) -> f64 {
    let raw = span / 8.0;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power)
}

/// A tick value without the rounding noise of adding the step (0.30000000000000004).
fn round_tick(value: f64, step: f64) -> f64 {
    let r = (value / step).round() * step;
    let digits = (-step.log10().floor()).max(0.0) as i32 + 1;
    let factor = 10f64.powi(digits);
    (r * factor).round() / factor
}

/// The advice for a compiled model, judging every named method: its eigenvalues from its
/// analysis ([`crate::analyze`]: linearised at its steady state, or at its start when it has
/// none). `None` when the analysis refuses the model or fails, or no mode has a finite time
/// scale.
pub fn advice_for(model: &mut crate::Model) -> Option<Advice> {
    advise(&eigenvalues_of(model)?, &judged_methods(None))
}

/// The most states for which a run without a stop time finds the model's time scales to choose
/// one: the dense eigenvalue decomposition behind them takes about a second at this size.
pub const MAX_STATES_FOR_TIME_SCALES: usize = 250;

/// The time scales of a compiled model (see [`advice_for`]), without judging any method: what
/// a run without a stop time needs (it runs to `start + 5 T_max`).
pub fn time_scales_for(model: &mut crate::Model) -> Option<TimeScales> {
    TimeScales::of(&eigenvalues_of(model)?)
}

/// The eigenvalues of the model's linearisation, without those the analysis found to be zero
/// within rounding (conserved quantities, integrators), whose time scale is no time scale.
fn eigenvalues_of(model: &mut crate::Model) -> Option<Vec<C64>> {
    let analysis = model.analyze(&crate::analyze::AnalyzeOptions::default()).ok()?;
    Some(analysis.timed_eigenvalues())
}
