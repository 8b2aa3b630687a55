//! PNG charts: valid images with text, robust to unusual data; streaming decimation.
#![cfg(feature = "cli")]

use lie_xpbd::pipeline::plot::{
    render_png, series_from_csv, ChartSpec, Decimator, PlotError, Series, HEIGHT, WIDTH,
};
use std::io::Write;

fn spec(log_y: bool) -> ChartSpec {
    ChartSpec {
        title: "Constraint residual".into(),
        x_label: "t (s)".into(),
        y_label: "residual (m)".into(),
        log_y,
    }
}

fn series(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: label.into(),
        points,
    }
}

/// Decodes the PNG and checks its size; returns the RGB image.
fn decode(png: &[u8]) -> image::RgbImage {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG magic bytes");
    let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .expect("decodable PNG")
        .to_rgb8();
    assert_eq!(img.dimensions(), (WIDTH, HEIGHT));
    img
}

/// Number of non-white pixels in a rectangle.
fn ink(img: &image::RgbImage, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            if img.get_pixel(x, y).0 != [255, 255, 255] {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn png_is_valid_and_has_text() {
    let pts = (0..1000)
        .map(|k| (k as f64 * 1e-3, (k as f64 * 0.01).sin()))
        .collect();
    let png = render_png(&spec(false), &[series("sin", pts)]).unwrap();
    let img = decode(&png);
    // The title band (top 45 px) is not blank: text was rendered with the embedded font.
    let title_ink = ink(&img, 0, 0, WIDTH, 45);
    assert!(
        title_ink > 200,
        "title area has {title_ink} non-white pixels"
    );
    // Not a single colour overall, and has coloured (non-grey) line pixels.
    let coloured = img.pixels().filter(|p| {
        let [r, g, b] = p.0;
        r.abs_diff(g) > 40 || g.abs_diff(b) > 40
    });
    assert!(coloured.count() > 500);
}

#[test]
fn empty_title_leaves_title_area_blank() {
    // Counter-check of the text test: without a title the band has (almost) no ink.
    let mut s = spec(false);
    s.title.clear();
    let png = render_png(&s, &[series("a", vec![(0.0, 1.0), (1.0, 2.0)])]).unwrap();
    let img = decode(&png);
    assert!(ink(&img, 0, 0, WIDTH, 12) < 50);
}

#[test]
fn identical_inputs_give_identical_png() {
    let pts: Vec<_> = (0..100).map(|k| (k as f64, (k * k) as f64)).collect();
    let a = render_png(&spec(true), &[series("sq", pts.clone())]).unwrap();
    let b = render_png(&spec(true), &[series("sq", pts)]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn edge_cases_do_not_panic() {
    let cases: Vec<(bool, Vec<Series>)> = vec![
        (false, vec![]),
        (true, vec![]),
        (false, vec![series("empty", vec![])]),
        (true, vec![series("empty", vec![]), series("", vec![])]),
        (false, vec![series("one", vec![(1.0, 2.0)])]),
        (true, vec![series("one", vec![(1.0, 2.0)])]),
        (
            false,
            vec![series("flat", vec![(0.0, 5.0), (1.0, 5.0), (2.0, 5.0)])],
        ),
        (true, vec![series("flat", vec![(0.0, 5.0), (1.0, 5.0)])]),
        (false, vec![series("zero", vec![(0.0, 0.0), (0.0, 0.0)])]),
        (true, vec![series("zero", vec![(0.0, 0.0), (1.0, 0.0)])]),
        (true, vec![series("neg", vec![(0.0, -1.0), (1.0, -2.0)])]),
        (
            true,
            vec![series(
                "mixed",
                vec![(0.0, -1.0), (1.0, 2.0), (2.0, 0.0), (3.0, 1e-3)],
            )],
        ),
        (
            false,
            vec![series(
                "nonfinite",
                vec![
                    (f64::NAN, 1.0),
                    (0.0, f64::INFINITY),
                    (1.0, f64::NEG_INFINITY),
                    (2.0, f64::NAN),
                ],
            )],
        ),
        (true, vec![series("nan", vec![(f64::NAN, f64::NAN)])]),
        (
            false,
            vec![series(
                "nan-mixed",
                vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0)],
            )],
        ),
        (
            true,
            vec![series("decades", vec![(0.0, 1e-300), (1.0, 1e300)])],
        ),
        (
            true,
            vec![series("subnormal", vec![(0.0, 5e-324), (1.0, 1.0)])],
        ),
        (
            true,
            vec![series("huge", vec![(0.0, f64::MAX), (1.0, f64::MAX)])],
        ),
        (
            false,
            vec![series("huge", vec![(0.0, f64::MAX), (1.0, f64::MAX)])],
        ),
        (
            false,
            vec![series("tiny", vec![(0.0, 1e-320), (1.0, 2e-320)])],
        ),
        (
            false,
            vec![series(
                "offset",
                vec![(1e9, 1.0), (1e9 + 1e-6, 1.0 + 1e-15)],
            )],
        ),
        (
            false,
            vec![series("wide-x", vec![(-1e300, 0.0), (1e300, 1.0)])],
        ),
        (
            false,
            vec![series("decades", vec![(0.0, 1e-12), (1.0, 1e12)])],
        ),
        (
            false,
            vec![series("neg-x", vec![(-5.0, -1.0), (-5.0, -1.0)])],
        ),
        (
            true,
            (0..12)
                .map(|i| series(&format!("s{i}"), vec![(0.0, 1.0 + i as f64), (1.0, 2.0)]))
                .collect(),
        ),
    ];
    for (i, (log_y, s)) in cases.into_iter().enumerate() {
        let start = std::time::Instant::now();
        let png = render_png(&spec(log_y), &s)
            .unwrap_or_else(|e| panic!("case {i} ({:?}): {e}", s.first().map(|s| &s.label)));
        decode(&png);
        assert!(
            start.elapsed().as_secs() < 20,
            "case {i} took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn overflowing_linear_range_is_an_error() {
    let s = series("overflow", vec![(0.0, -1e308), (1.0, 1e308)]);
    match render_png(&spec(false), &[s]) {
        Err(PlotError::Range { axis: "y", .. }) => {}
        other => panic!("{:?}", other.map(|v| v.len())),
    }
}

#[test]
fn long_series_are_decimated_when_rendering() {
    let pts: Vec<_> = (0..200_000).map(|k| (k as f64, (k % 977) as f64)).collect();
    let png = render_png(&spec(false), &[series("saw", pts)]).unwrap();
    decode(&png);
    // Long series with gaps (NaN, or y ≤ 0 on a log axis): few long runs, many short
    // runs.
    let gaps = |n: usize, every: usize| -> Vec<(f64, f64)> {
        (0..n)
            .map(|k| {
                (
                    k as f64,
                    if k % every == 0 {
                        f64::NAN
                    } else {
                        1.0 + (k % 13) as f64
                    },
                )
            })
            .collect()
    };
    let alternating: Vec<_> = (0..100_000)
        .map(|k| (k as f64, if k % 2 == 0 { 1.0 } else { -1.0 }))
        .collect();
    for (log_y, pts) in [
        (false, gaps(50_000, 5000)),
        (false, gaps(20_000, 10)),
        (true, alternating),
    ] {
        let start = std::time::Instant::now();
        decode(&render_png(&spec(log_y), &[series("gappy", pts)]).unwrap());
        assert!(start.elapsed().as_secs() < 20);
    }
}

#[test]
fn decimation_keeps_bucket_extremes_and_bounded_length() {
    let n = 1_000_000u64;
    let max_points = 4000;
    let y = |k: u64| ((k as f64) * 0.001).sin() + if k % 99_991 == 7 { 5.0 } else { 0.0 };
    let mut d = Decimator::new(max_points);
    for k in 0..n {
        d.push(k as f64, y(k));
    }
    assert_eq!(d.count(), n);
    let stride = d.stride();
    assert!(stride.is_power_of_two());
    let out = d.finish();
    assert!(out.len() <= max_points, "{} points", out.len());
    assert!(out.len() >= max_points / 4, "{} points", out.len());
    // In input order.
    assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
    // Every bucket's min and max are kept.
    let mut start = 0;
    while start < n {
        let end = (start + stride).min(n);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in start..end {
            lo = lo.min(y(k));
            hi = hi.max(y(k));
        }
        let kept: Vec<f64> = out
            .iter()
            .filter(|p| p.0 >= start as f64 && p.0 < end as f64)
            .map(|p| p.1)
            .collect();
        assert!(kept.len() <= 2);
        assert!(
            kept.contains(&lo) && kept.contains(&hi),
            "bucket at {start}"
        );
        start = end;
    }
    // The spikes survive.
    assert_eq!(out.iter().filter(|p| p.1 > 4.0).count(), 11);
}

#[test]
fn decimation_small_inputs_and_non_finite() {
    let mut d = Decimator::new(0); // raised to the minimum
    assert_eq!(d.clone().finish(), vec![]);
    for k in 0..1000 {
        d.push(k as f64, (k % 7) as f64);
    }
    let out = d.finish();
    assert!(out.len() <= Decimator::MIN_POINTS && out.len() >= 2);
    assert!(out.contains(&(0.0, 0.0)) && out.iter().any(|p| p.1 == 6.0));

    let mut d = Decimator::new(100);
    d.push(f64::NAN, 1.0);
    d.push(0.0, f64::INFINITY);
    assert_eq!(d.skipped(), 2);
    for k in 0..5 {
        d.push(k as f64, k as f64);
    }
    assert_eq!(d.finish().len(), 5);

    let mut d = Decimator::new(10);
    for k in 0..10_000 {
        d.push(k as f64, 1.0); // all equal
    }
    let out = d.finish();
    assert!(out.len() <= 10 && !out.is_empty());
    assert!(out.iter().all(|p| p.1 == 1.0));
}

#[test]
fn csv_streams_through_decimators() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("residuals.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "t,primal_residual,constraint_residual").unwrap();
    for k in 0..100_000 {
        let t = k as f64 * 1e-3;
        writeln!(
            f,
            "{t},{},{}",
            (-t).exp(),
            if k == 5 {
                "NaN".into()
            } else {
                format!("{}", t * t)
            }
        )
        .unwrap();
    }
    writeln!(f, "100,,1").unwrap(); // empty field: no point for that column
    drop(f);

    let s = series_from_csv(
        &path,
        "t",
        &["constraint_residual", "primal_residual"],
        1000,
    )
    .unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].label, "constraint_residual");
    assert!(s[0].points.len() <= 1000 && s[1].points.len() <= 1000);
    assert_eq!(s[0].points.last(), Some(&(100.0, 1.0)));
    assert!(s[1].points.iter().all(|p| p.0 < 100.0));
    assert!(s[0].points.iter().all(|p| p.1.is_finite()));
    // Global extremes survive.
    assert!(s[1].points.contains(&(0.0, 1.0)));
    let png = render_png(&spec(true), &s).unwrap();
    decode(&png);

    match series_from_csv(&path, "t", &["nope"], 100) {
        Err(PlotError::MissingColumn { column, .. }) => assert_eq!(column, "nope"),
        other => panic!("{other:?}"),
    }
    match series_from_csv(&dir.path().join("missing.csv"), "t", &[], 100) {
        Err(PlotError::Io { .. }) => {}
        other => panic!("{other:?}"),
    }
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "t,x\n0,1\n1,abc\n").unwrap();
    match series_from_csv(&bad, "t", &["x"], 100) {
        Err(PlotError::Parse { line, value, .. }) => {
            assert_eq!(line, 3);
            assert_eq!(value, "abc");
        }
        other => panic!("{other:?}"),
    }
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "t,x\n0,1\n1,2,3\n").unwrap();
    assert!(matches!(
        series_from_csv(&ragged, "t", &["x"], 100),
        Err(PlotError::Csv { .. })
    ));
}
