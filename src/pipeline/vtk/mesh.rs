//! Tessellation of the body shapes in their body frames (see the table in the
//! [module documentation](super)), and the counts of points and cells it gives.

use super::{VtkError, DEFAULT_AXIS_LENGTH, SEGMENTS};
use crate::scene::ShapeSpec;
use nalgebra::Vector3;
use std::f64::consts::PI;

/// Points and cells of one body in a frame (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeshCounts {
    /// Points (shape + 4 frame points).
    pub points: usize,
    /// Vertex cells.
    pub verts: usize,
    /// Line cells.
    pub lines: usize,
    /// Polygon cells.
    pub polys: usize,
}

impl std::ops::Add for MeshCounts {
    type Output = MeshCounts;
    fn add(self, o: MeshCounts) -> MeshCounts {
        MeshCounts {
            points: self.points + o.points,
            verts: self.verts + o.verts,
            lines: self.lines + o.lines,
            polys: self.polys + o.polys,
        }
    }
}

/// Points and cells a body of this shape contributes to each frame.
pub fn mesh_counts(shape: Option<&ShapeSpec>) -> MeshCounts {
    let (points, polys) = match shape {
        None => (0, 0),
        Some(ShapeSpec::Box { .. }) => (8, 6),
        Some(ShapeSpec::Sphere { .. }) => (2 + 5 * SEGMENTS, 2 * SEGMENTS + 4 * SEGMENTS),
        Some(ShapeSpec::Cylinder { .. }) => (2 * SEGMENTS, SEGMENTS + 2),
        Some(ShapeSpec::Capsule { .. }) => (2 + 6 * SEGMENTS, 2 * SEGMENTS + 5 * SEGMENTS),
    };
    MeshCounts {
        points: points + 4,
        verts: usize::from(shape.is_none()),
        lines: 3,
        polys,
    }
}

/// Pose-frame axis length of a body of this shape, m: 0.75 × its largest extent
/// (box: largest edge; sphere: diameter; cylinder: max(diameter, length); capsule:
/// length + diameter), or [`DEFAULT_AXIS_LENGTH`] without shape.
pub fn axis_length(shape: Option<&ShapeSpec>) -> f64 {
    0.75 * match shape {
        None => return DEFAULT_AXIS_LENGTH,
        Some(ShapeSpec::Box { size }) => size[0].max(size[1]).max(size[2]),
        Some(ShapeSpec::Sphere { radius }) => 2.0 * radius,
        Some(ShapeSpec::Cylinder { radius, length }) => (2.0 * radius).max(*length),
        Some(ShapeSpec::Capsule { radius, length }) => length + 2.0 * radius,
    }
}

/// A body's mesh in its body frame.
#[derive(Debug, Clone)]
pub(super) struct Mesh {
    /// Shape points then the 4 frame points, m, body frame.
    pub(super) points: Vec<Vector3<f64>>,
    /// Polygons (indices into `points`).
    pub(super) polys: Vec<Vec<usize>>,
    /// Whether the body is drawn as a point.
    pub(super) vertex: bool,
}

impl Mesh {
    pub(super) fn new(shape: Option<&ShapeSpec>) -> Self {
        let (mut points, polys) = match shape {
            None => (Vec::new(), Vec::new()),
            Some(ShapeSpec::Box { size }) => cuboid(size),
            Some(&ShapeSpec::Sphere { radius: r }) => {
                let rings: Vec<(f64, f64)> = (1..=5)
                    .map(|k| {
                        let th = k as f64 * PI / 6.0;
                        (r * th.sin(), r * th.cos())
                    })
                    .collect();
                revolved(Some(r), &rings, Some(-r), false)
            }
            Some(&ShapeSpec::Cylinder { radius: r, length }) => {
                let h = length / 2.0;
                revolved(None, &[(r, h), (r, -h)], None, true)
            }
            Some(&ShapeSpec::Capsule { radius: r, length }) => {
                let h = length / 2.0;
                let rings: Vec<(f64, f64)> = (1..=6)
                    .map(|k| {
                        // 30°, 60°, 90° | 90°, 120°, 150°
                        let (kk, z0) = if k <= 3 { (k, h) } else { (k - 1, -h) };
                        let th = kk as f64 * PI / 6.0;
                        (r * th.sin(), z0 + r * th.cos())
                    })
                    .collect();
                revolved(Some(h + r), &rings, Some(-h - r), false)
            }
        };
        let l = axis_length(shape);
        points.push(Vector3::zeros());
        points.push(Vector3::new(l, 0.0, 0.0));
        points.push(Vector3::new(0.0, l, 0.0));
        points.push(Vector3::new(0.0, 0.0, l));
        Mesh {
            points,
            polys,
            vertex: shape.is_none(),
        }
    }

    /// Index of the frame's centre point.
    pub(super) fn centre(&self) -> usize {
        self.points.len() - 4
    }
}

/// A box of edge lengths `size`: 8 corners (index = x bit + 2 y bit + 4 z bit), 6 quads.
fn cuboid(size: &[f64; 3]) -> (Vec<Vector3<f64>>, Vec<Vec<usize>>) {
    let h = Vector3::new(size[0], size[1], size[2]) / 2.0;
    let points = (0..8)
        .map(|i| {
            let s = |bit: usize| if i & bit != 0 { 1.0 } else { -1.0 };
            Vector3::new(s(1) * h.x, s(2) * h.y, s(4) * h.z)
        })
        .collect();
    let polys = vec![
        vec![0, 4, 6, 2], // −x
        vec![1, 3, 7, 5], // +x
        vec![0, 1, 5, 4], // −y
        vec![2, 6, 7, 3], // +y
        vec![0, 2, 3, 1], // −z
        vec![4, 5, 7, 6], // +z
    ];
    (points, polys)
}

/// A surface of revolution about body z: an optional top pole (z), rings (radius, z)
/// from top to bottom of [`SEGMENTS`] points each, an optional bottom pole, and, if
/// `caps`, the first and last rings closed by polygons. Outward normals.
fn revolved(
    top: Option<f64>,
    rings: &[(f64, f64)],
    bottom: Option<f64>,
    caps: bool,
) -> (Vec<Vector3<f64>>, Vec<Vec<usize>>) {
    let n = SEGMENTS;
    let mut points = Vec::new();
    let mut polys = Vec::new();
    let top_index = top.map(|z| {
        points.push(Vector3::new(0.0, 0.0, z));
        points.len() - 1
    });
    let first = points.len();
    for &(r, z) in rings {
        for j in 0..n {
            let phi = 2.0 * PI * j as f64 / n as f64;
            points.push(Vector3::new(r * phi.cos(), r * phi.sin(), z));
        }
    }
    let ring = |i: usize, j: usize| first + i * n + j % n;
    let last = rings.len() - 1;
    if let Some(t) = top_index {
        for j in 0..n {
            polys.push(vec![t, ring(0, j), ring(0, j + 1)]);
        }
    }
    for i in 0..last {
        for j in 0..n {
            polys.push(vec![
                ring(i, j),
                ring(i + 1, j),
                ring(i + 1, j + 1),
                ring(i, j + 1),
            ]);
        }
    }
    if let Some(z) = bottom {
        points.push(Vector3::new(0.0, 0.0, z));
        let b = points.len() - 1;
        for j in 0..n {
            polys.push(vec![ring(last, j), b, ring(last, j + 1)]);
        }
    }
    if caps {
        polys.push((0..n).map(|j| ring(0, j)).collect());
        polys.push((0..n).rev().map(|j| ring(last, j)).collect());
    }
    (points, polys)
}

/// Checks that a shape's dimensions are finite and positive (a capsule's length may be
/// 0).
pub(super) fn check_shape(body: &str, shape: &ShapeSpec) -> Result<(), VtkError> {
    let bad = |what, value: f64, allow_zero: bool| {
        let ok = value.is_finite() && (value > 0.0 || (allow_zero && value == 0.0));
        if ok {
            Ok(())
        } else {
            Err(VtkError::BadShape {
                body: body.to_string(),
                what,
                value,
            })
        }
    };
    match *shape {
        ShapeSpec::Box { size } => size.iter().try_for_each(|&s| bad("size", s, false)),
        ShapeSpec::Sphere { radius } => bad("radius", radius, false),
        ShapeSpec::Cylinder { radius, length } => {
            bad("radius", radius, false)?;
            bad("length", length, false)
        }
        ShapeSpec::Capsule { radius, length } => {
            bad("radius", radius, false)?;
            bad("length", length, true)
        }
    }
}
