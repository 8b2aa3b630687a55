//! PNG line charts of recorded channels (residuals, energy, …), drawn with `plotters`
//! and encoded with `image`.
//!
//! Text is drawn with DejaVu Sans, embedded in the program (`src/pipeline/fonts/`,
//! license in `LICENSE-DejaVu.txt` there), so no system font library or installed font
//! is needed and a chart looks the same on every machine.
//!
//! # Robustness
//! Charts are drawn from user data and never panic on it:
//! * non-finite points (`NaN`, `±inf`) are skipped, and the line is broken there;
//! * on a logarithmic y axis ([`ChartSpec::log_y`]) points with y ≤ 0 are skipped (a
//!   gap, with a note giving their number), a range wider than [`MAX_LOG_RATIO`] is cut
//!   at the bottom (with a note), and
//!   if no series has a positive value the chart falls back to a linear axis with a
//!   note saying so;
//! * a chart without any drawable point is drawn empty with the note "no data";
//! * a range of a single value is padded so that the axis has a width;
//! * ranges spanning many decades (log axis) or many orders of magnitude are fine; a
//!   linear range whose width overflows `f64` (e.g. from −1e308 to 1e308) is an error,
//!   [`PlotError::Range`].
//!
//! Long series are reduced with a [`Decimator`] (min/max per bucket), which keeps every
//! spike visible; [`render_png`] itself decimates series longer than
//! [`RENDER_MAX_POINTS`].
//!
//! Layout: this file holds the chart types and the renderer; `decimate.rs` the
//! [`Decimator`]; `read.rs` [`series_from_csv`].
//!
//! # Example
//! ```
//! use lie_xpbd::pipeline::plot::{render_png, ChartSpec, Decimator, Series};
//!
//! let mut d = Decimator::new(1000);
//! for k in 0..100_000 {
//!     let t = k as f64 * 1e-3;
//!     d.push(t, (-t).exp());
//! }
//! let series = [Series { label: "decay".into(), points: d.finish() }];
//! let spec = ChartSpec {
//!     title: "Exponential decay".into(),
//!     x_label: "t (s)".into(),
//!     y_label: "x".into(),
//!     log_y: true,
//! };
//! let png = render_png(&spec, &series).unwrap();
//! assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
//! ```

use image::codecs::png::PngEncoder;
use image::{ColorType, ImageEncoder};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;
use thiserror::Error;

mod decimate;
mod read;

pub use decimate::Decimator;
pub use read::series_from_csv;

/// Width of the rendered image, pixels.
pub const WIDTH: u32 = 1000;
/// Height of the rendered image, pixels.
pub const HEIGHT: u32 = 600;
/// [`render_png`] decimates a series longer than this to [`RENDER_MAX_POINTS`]` / 2`
/// points with a [`Decimator`].
pub const RENDER_MAX_POINTS: usize = 8000;

/// The embedded font (DejaVu Sans; see `src/pipeline/fonts/LICENSE-DejaVu.txt`).
static FONT_BYTES: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
/// Name under which the embedded font is registered with plotters.
const FONT: &str = "sans-serif";

/// Line colours, in series order (cycled).
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// One line of a chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend text (may be empty: no legend entry).
    pub label: String,
    /// Points (x, y) in drawing order, in the units of the chart's axes. Non-finite
    /// points are skipped.
    pub points: Vec<(f64, f64)>,
}

/// Title, axis labels and scale of a chart.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChartSpec {
    /// Title drawn above the chart.
    pub title: String,
    /// Label of the x axis (quantity and unit, e.g. `t (s)`).
    pub x_label: String,
    /// Label of the y axis (quantity and unit).
    pub y_label: String,
    /// Logarithmic y axis (base 10); points with y ≤ 0 are then skipped.
    pub log_y: bool,
}

/// Everything that can go wrong while reading data for or rendering a chart.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The embedded font could not be loaded (a build defect, not a user error).
    #[error("the embedded font could not be loaded")]
    Font,
    /// An axis range whose width is not a finite number.
    #[error("the {axis} range [{lo}, {hi}] is too wide to draw")]
    Range {
        /// `"x"` or `"y"`.
        axis: &'static str,
        /// Smallest value.
        lo: f64,
        /// Largest value.
        hi: f64,
    },
    /// Drawing failed.
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    /// PNG encoding failed.
    #[error("cannot encode the PNG image: {0}")]
    Encode(#[from] image::ImageError),
    /// A CSV file could not be opened.
    #[error("cannot read '{}': {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A CSV file is malformed.
    #[error("cannot read CSV '{}': {source}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The reader's error.
        source: csv::Error,
    },
    /// A requested column is not in the CSV header.
    #[error("'{}' has no column '{column}'", path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
    },
    /// A CSV field is not a number.
    #[error("'{}' line {line}, column '{column}': '{value}' is not a number", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line number (1-based, the header is line 1).
        line: u64,
        /// Column name.
        column: String,
        /// The field's text.
        value: String,
    },
}

/// Registers the embedded font with plotters, once per process.
fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}
/// Renders a line chart as an encoded PNG image of [`WIDTH`]×[`HEIGHT`] pixels.
///
/// Series are drawn in order, in a fixed palette, with a legend of the non-empty
/// labels. See the module documentation for how unusual data is handled.
///
/// # Errors
/// [`PlotError::Range`] if an axis range is too wide for `f64`; [`PlotError::Draw`],
/// [`PlotError::Encode`] or [`PlotError::Font`] on internal failures.
pub fn render_png(spec: &ChartSpec, series: &[Series]) -> Result<Vec<u8>, PlotError> {
    ensure_font()?;

    // Drawable runs of each series: a skipped point breaks the line.
    let finite = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite();
    let positive = |p: &(f64, f64)| finite(p) && p.1 > 0.0;
    let count = |keep: &dyn Fn(&(f64, f64)) -> bool| -> usize {
        series
            .iter()
            .map(|s| s.points.iter().filter(|p| keep(p)).count())
            .sum()
    };
    let mut notes = Vec::new();
    let mut log_y = spec.log_y;
    let total = count(&finite);
    if log_y {
        let kept = count(&positive);
        if kept == 0 && total > 0 {
            log_y = false;
            notes.push("no positive values: linear y axis".to_string());
        } else if kept < total {
            notes.push(format!("{} points with y ≤ 0 not shown", total - kept));
        }
    }
    let lines: Vec<Vec<Vec<(f64, f64)>>> = series
        .iter()
        .map(|s| {
            if log_y {
                runs(&s.points, &positive)
            } else {
                runs(&s.points, &finite)
            }
        })
        .collect();
    if lines.iter().flatten().all(Vec::is_empty) {
        notes.push("no data".to_string());
    }

    let (x_lo, x_hi, y_lo, y_hi) = bounds(&lines);
    let (x_lo, x_hi) = linear_range("x", x_lo, x_hi)?;

    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        if log_y {
            let (lo, hi, cut) = log_range(y_lo, y_hi);
            if cut {
                notes.push(format!("values below {} not shown", tick(lo)));
            }
            draw(
                &root,
                spec,
                series,
                &lines,
                x_lo..x_hi,
                (lo..hi).log_scale(),
                0.0,
                &notes,
            )?;
        } else {
            let (lo, hi) = linear_range("y", y_lo, y_hi)?;
            draw(
                &root,
                spec,
                series,
                &lines,
                x_lo..x_hi,
                lo..hi,
                hi - lo,
                &notes,
            )?;
        }
        root.present().map_err(draw_err)?;
    }

    let mut png = Vec::new();
    PngEncoder::new(&mut png).write_image(&buf, WIDTH, HEIGHT, ColorType::Rgb8)?;
    Ok(png)
}

fn draw_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// A series with more runs than this is drawn as one run (no gaps).
const MAX_RUNS: usize = 1000;

/// The maximal runs of consecutive points that `keep` accepts (a rejected point breaks
/// the line), decimated to about [`RENDER_MAX_POINTS`]` / 2` points in all if longer
/// than [`RENDER_MAX_POINTS`].
fn runs(points: &[(f64, f64)], keep: &dyn Fn(&(f64, f64)) -> bool) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut total = 0;
    let mut open = false;
    for p in points {
        if keep(p) {
            if !open {
                out.push(Vec::new());
                open = true;
            }
            if let Some(run) = out.last_mut() {
                run.push(*p);
            }
            total += 1;
        } else {
            open = false;
        }
    }
    if total <= RENDER_MAX_POINTS {
        return out;
    }
    let budget = RENDER_MAX_POINTS / 2;
    if out.len() > MAX_RUNS {
        let mut d = Decimator::new(budget);
        for &(x, y) in out.iter().flatten() {
            d.push(x, y);
        }
        return vec![d.finish()];
    }
    out.into_iter()
        .map(|run| {
            if run.len() <= Decimator::MIN_POINTS {
                return run;
            }
            let mut d = Decimator::new(budget * run.len() / total);
            for (x, y) in run {
                d.push(x, y);
            }
            d.finish()
        })
        .collect()
}

/// (x_min, x_max, y_min, y_max) over all points; NaN if there are none.
fn bounds(lines: &[Vec<Vec<(f64, f64)>>]) -> (f64, f64, f64, f64) {
    let mut b = (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    for &(x, y) in lines.iter().flatten().flatten() {
        b.0 = b.0.min(x);
        b.1 = b.1.max(x);
        b.2 = b.2.min(y);
        b.3 = b.3.max(y);
    }
    b
}

/// A drawable linear range around [lo, hi] (NaN: none): padded if a single value, with
/// a 5 % margin when it fits.
fn linear_range(axis: &'static str, lo: f64, hi: f64) -> Result<(f64, f64), PlotError> {
    if lo.is_nan() || hi.is_nan() {
        return Ok((0.0, 1.0));
    }
    let span = hi - lo;
    if !span.is_finite() {
        return Err(PlotError::Range { axis, lo, hi });
    }
    // A width below ~1e-9 of the magnitude cannot be labelled at f64 precision: pad.
    let magnitude = lo.abs().max(hi.abs());
    let min_span = (magnitude * 1e-9).max(f64::MIN_POSITIVE * 1e10);
    let (lo, hi) = if span < min_span {
        let mid = lo + span / 2.0;
        let pad = if magnitude == 0.0 {
            1.0
        } else {
            (magnitude * 0.1).max(min_span)
        };
        let clamp = |v: f64| v.clamp(-f64::MAX, f64::MAX);
        (clamp(mid - pad), clamp(mid + pad))
    } else {
        (lo, hi)
    };
    let margin = (hi - lo) * 0.05;
    let (a, b) = (lo - margin, hi + margin);
    if a.is_finite() && b.is_finite() && (b - a).is_finite() {
        Ok((a, b))
    } else if (hi - lo).is_finite() {
        Ok((lo, hi))
    } else {
        Err(PlotError::Range { axis, lo, hi })
    }
}

/// Widest logarithmic y range drawn, as a ratio hi/lo (300 decades); a wider data
/// range is cut at the bottom (with a note).
pub const MAX_LOG_RATIO: f64 = 1e300;

/// A drawable logarithmic range around positive [lo, hi] (NaN: none), padded by a
/// factor, at most [`MAX_LOG_RATIO`] wide. The flag says whether the data were cut.
fn log_range(lo: f64, hi: f64) -> (f64, f64, bool) {
    if lo.is_nan() || hi.is_nan() {
        return (1.0, 10.0, false);
    }
    let ratio = hi / lo;
    let (lo, hi) = if !ratio.is_finite() || ratio < 1.0 + 1e-9 {
        (lo / 2.0, hi * 2.0)
    } else {
        let f = ratio.powf(0.05);
        (lo / f, hi * f)
    };
    let hi = if hi.is_finite() { hi } else { f64::MAX };
    let floor = hi / MAX_LOG_RATIO;
    if lo > floor {
        (lo, hi, false)
    } else {
        (floor, hi, true)
    }
}

/// `v`, or 0 if it is rounding noise relative to the axis width `span` (a tick at
/// `-2.2e-16` is meant to be 0).
fn snap(v: f64, span: f64) -> f64 {
    if v.abs() < span.abs() * 1e-9 {
        0.0
    } else {
        v
    }
}

/// Tick label: plain decimals for moderate magnitudes, scientific notation otherwise,
/// at most 4 significant digits.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".to_string();
    }
    if (1e-3..1e5).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.3e}");
        // 1.500e-7 → 1.5e-7
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn draw<Y>(
    root: &DrawingArea<BitMapBackend<'_>, Shift>,
    spec: &ChartSpec,
    series: &[Series],
    lines: &[Vec<Vec<(f64, f64)>>],
    x: std::ops::Range<f64>,
    y: Y,
    y_span: f64,
    notes: &[String],
) -> Result<(), PlotError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let x_span = x.end - x.start;
    let mut chart = ChartBuilder::on(root)
        .caption(&spec.title, (FONT, 26))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 17))
        .x_label_formatter(&|v| tick(snap(*v, x_span)))
        .y_label_formatter(&|v| tick(snap(*v, y_span)))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(draw_err)?;

    let mut legend = false;
    for (i, (s, runs)) in series.iter().zip(lines).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let style = ShapeStyle::from(&colour).stroke_width(2);
        for (k, run) in runs.iter().enumerate() {
            let drawn = chart
                .draw_series(LineSeries::new(run.iter().copied(), style))
                .map_err(draw_err)?;
            if k == 0 && !s.label.is_empty() {
                legend = true;
                drawn.label(s.label.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            }
            // A single point draws no line: mark it.
            if run.len() == 1 {
                chart
                    .draw_series(run.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(draw_err)?;
            }
        }
    }
    if legend {
        chart
            .configure_series_labels()
            .label_font((FONT, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(draw_err)?;
    }

    // Notes, top left inside the plotting area.
    let area = chart.plotting_area();
    let (px, py) = area.get_pixel_range();
    for (k, note) in notes.iter().enumerate() {
        let pos = (px.start + 10, py.start + 10 + 20 * k as i32);
        root.draw_text(note, &(FONT, 15).into_font().color(&RED), pos)
            .map_err(draw_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(-1500.0), "-1500");
        assert_eq!(tick(1e-7), "1e-7");
        assert_eq!(tick(1.5e12), "1.5e12");
    }

    #[test]
    fn ranges() {
        assert_eq!(linear_range("x", f64::NAN, f64::NAN).unwrap(), (0.0, 1.0));
        let (a, b) = linear_range("x", 3.0, 3.0).unwrap();
        assert!(a < 3.0 && b > 3.0);
        let (a, b) = linear_range("x", 0.0, 0.0).unwrap();
        assert!(a < 0.0 && b > 0.0);
        assert!(linear_range("y", -1e308, 1e308).is_err());
        let (a, b, cut) = log_range(1e-300, 1e300);
        assert!(cut && a > 1e-300 && b > 1e300 && (b / a).is_finite());
        let (a, b, cut) = log_range(1e-100, 1e100);
        assert!(!cut && a < 1e-100 && b > 1e100);
        let (a, b, cut) = log_range(5.0, 5.0);
        assert!(!cut && a < 5.0 && b > 5.0);
        let (a, b) = linear_range("y", f64::MAX, f64::MAX).unwrap();
        assert!(a < f64::MAX && b == f64::MAX);
        let (a, b) = linear_range("y", -f64::MAX, -f64::MAX).unwrap();
        assert!(a == -f64::MAX && b > -f64::MAX);
    }
}
