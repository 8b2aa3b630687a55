//! ParaView time series: one VTK XML PolyData file (`.vtp`, ASCII) per frame and a
//! `.pvd` collection listing every frame with its time.
//!
//! # Files
//! [`VtkWriter::new`] creates `<run>/vtk/`; each [`VtkWriter::write_frame`] writes
//! `<run>/vtk/frame_NNNNNN.vtp` (frames numbered from 0, at least six digits), and
//! [`VtkWriter::finish`] writes `<run>/vtk/frames.pvd` ([`PVD_FILE`]), which lists
//! every frame with `timestep` = its simulated time, s. Open the `.pvd` in ParaView to
//! play the run. Every file is written whole or not at all (a temporary file in the
//! same directory, synced, then renamed over the final name). If the run stops before
//! [`VtkWriter::finish`], the frames written so far stay, without a `.pvd`.
//!
//! The files are deterministic: the same inputs give byte-identical files. Numbers are
//! written in the shortest form that reads back to the same value at the run's
//! precision ([`crate::sim::Scalar`]): exponent notation for very small or large values
//! (`1e-17`), `.0` on whole numbers.
//!
//! # Geometry
//! One `<Piece>` holds all bodies, in body order; each body's points come in one block:
//! first its shape's points, then its 4 pose-frame points. Coordinates are world
//! coordinates, m: each shape is tessellated in its body frame (centred at the centre
//! of mass; capsule and cylinder axis = body z) and transformed by the body's pose
//! `x_world = R x_body + p`.
//!
//! The *pose frame* of a body is 3 line cells from its centre of mass along its body x,
//! y and z axes, each of length [`axis_length`] (0.75 × the shape's largest extent,
//! [`DEFAULT_AXIS_LENGTH`] for a body without shape). A body without shape is drawn as a
//! point: one vertex cell on its centre of mass (the frame's first point).
//!
//! Tessellation ([`SEGMENTS`] = 12 segments around the axis):
//!
//! | shape    | points (shape + frame) | verts | lines | polys                                   |
//! |----------|------------------------|-------|-------|-----------------------------------------|
//! | none     | 0 + 4 = 4              | 1     | 3     | 0                                       |
//! | box      | 8 + 4 = 12             | 0     | 3     | 6 quads                                 |
//! | sphere   | 62 + 4 = 66            | 0     | 3     | 72: 24 triangles at the poles, 48 quads |
//! | cylinder | 24 + 4 = 28            | 0     | 3     | 14: 12 side quads, 2 twelve-sided caps  |
//! | capsule  | 74 + 4 = 78            | 0     | 3     | 84: 24 triangles at the poles, 60 quads |
//!
//! The sphere has 2 poles and 5 rings of 12 points (polar angles 30°, 60°, …, 150°);
//! the capsule has 2 poles and 6 rings (30°, 60°, 90° on the upper half-ball, 90°,
//! 120°, 150° on the lower one); the cylinder has its two rim rings. Polygons are
//! oriented with outward normals (counter-clockwise seen from outside).
//! [`mesh_counts`] gives these numbers (the tessellation is in `vtk/mesh.rs`).
//!
//! # Attributes
//! * cell data `body` (Int32): the body index of every cell;
//! * cell data `axis` (Int32): 0, 1, 2 for the pose-frame lines along body x, y, z, −1
//!   for shape cells and vertices;
//! * point data `body` (Int32): the body index of every point;
//! * field data `TimeValue` (Float64): the frame's time, s.

use crate::scene::ShapeSpec;
use crate::sim::{Scalar, Simulation};
use nalgebra::{Matrix3, Vector3};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;
use thiserror::Error;

mod mesh;

pub use mesh::{axis_length, mesh_counts, MeshCounts};
use mesh::{check_shape, Mesh};

/// Segments around the axis of round shapes.
pub const SEGMENTS: usize = 12;
/// The subdirectory of the run folder that holds the VTK files.
pub const VTK_DIR: &str = "vtk";
/// The collection file's name, in [`VTK_DIR`].
pub const PVD_FILE: &str = "frames.pvd";
/// Pose-frame axis length of a body without shape, m.
pub const DEFAULT_AXIS_LENGTH: f64 = 0.1;

/// Everything that can go wrong while writing ParaView files.
#[derive(Debug, Error)]
pub enum VtkError {
    /// The output directory could not be created.
    #[error("cannot create directory '{}': {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A file could not be written or renamed into place.
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A shape dimension is not finite and positive (length of a capsule: ≥ 0).
    #[error("body '{body}': shape {what} = {value} is not a finite positive length")]
    BadShape {
        /// The body's name.
        body: String,
        /// The dimension (`size`, `radius`, `length`).
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// The simulation does not have the bodies the writer was made for.
    #[error("the simulation has {actual} bodies, the VTK writer was made for {expected}")]
    BodyCount {
        /// Bodies given to [`VtkWriter::new`].
        expected: usize,
        /// Bodies of the simulation.
        actual: usize,
    },
    /// A frame time is not finite.
    #[error("frame time {0} is not finite")]
    BadTime(f64),
    /// A body's pose is not finite (the simulation diverged).
    #[error("body '{body}' has a non-finite pose at t = {t} s")]
    NonFinite {
        /// The body's name.
        body: String,
        /// The frame's time, s.
        t: f64,
    },
}

/// Writes a ParaView time series of a running scene (see the module documentation for
/// the files and their contents).
///
/// ```
/// use lie_xpbd::pipeline::vtk::VtkWriter;
/// use lie_xpbd::scene::Scene;
/// use lie_xpbd::sim::{build_simulation, Rotation, Scalar};
///
/// let scene = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "pendulum.toml")?;
/// let bodies: Vec<_> = scene.file().bodies.iter().map(|b| (b.name.clone(), b.shape)).collect();
/// let mut sim = build_simulation(&scene, Rotation::Matrix, Scalar::F64)?;
/// let run = tempfile::tempdir().unwrap();
/// let mut vtk = VtkWriter::new(run.path(), &bodies).unwrap();
/// for k in 0..3 {
///     vtk.write_frame(k as f64 * 1e-3, sim.as_ref()).unwrap();
///     sim.step().unwrap();
/// }
/// let pvd = vtk.finish().unwrap();
/// assert!(pvd.ends_with("vtk/frames.pvd"));
/// assert!(run.path().join("vtk/frame_000002.vtp").is_file());
/// # Ok::<(), lie_xpbd::scene::SceneError>(())
/// ```
#[derive(Debug)]
pub struct VtkWriter {
    dir: PathBuf,
    names: Vec<String>,
    meshes: Vec<Mesh>,
    /// (time, file name) of every frame written.
    frames: Vec<(f64, String)>,
    /// Number format of the last frame's run (for the `.pvd`).
    scalar: Scalar,
}

impl VtkWriter {
    /// A writer for a scene with these bodies (name and shape, in body order; a body
    /// without shape is drawn as a point). Creates `dir/vtk/` (`dir` = the run's
    /// folder) if needed; writes nothing yet.
    ///
    /// # Errors
    /// [`VtkError::BadShape`] for a non-finite or non-positive dimension,
    /// [`VtkError::CreateDir`] if the directory cannot be created.
    pub fn new(dir: &Path, bodies: &[(String, Option<ShapeSpec>)]) -> Result<Self, VtkError> {
        for (name, shape) in bodies {
            if let Some(s) = shape {
                check_shape(name, s)?;
            }
        }
        let dir = dir.join(VTK_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| VtkError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        Ok(VtkWriter {
            dir,
            names: bodies.iter().map(|b| b.0.clone()).collect(),
            meshes: bodies.iter().map(|b| Mesh::new(b.1.as_ref())).collect(),
            frames: Vec::new(),
            scalar: Scalar::F64,
        })
    }

    /// The directory the files go to (`dir/vtk`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Writes the current state of `sim` as the next frame, at simulated time `t`, s.
    ///
    /// # Errors
    /// [`VtkError::BadTime`] if `t` is not finite, [`VtkError::BodyCount`] if `sim` has
    /// a different number of bodies, [`VtkError::NonFinite`] if a pose is not finite,
    /// [`VtkError::Write`] if the file cannot be written.
    pub fn write_frame(&mut self, t: f64, sim: &dyn Simulation) -> Result<(), VtkError> {
        if !t.is_finite() {
            return Err(VtkError::BadTime(t));
        }
        let actual = sim.body_names().len();
        if actual != self.meshes.len() {
            return Err(VtkError::BodyCount {
                expected: self.meshes.len(),
                actual,
            });
        }
        self.scalar = sim.scalar();
        let mut poses = Vec::with_capacity(self.meshes.len());
        for (i, name) in self.names.iter().enumerate() {
            let p = sim.position(i);
            let r = sim.rotation_matrix(i);
            if !(p.iter().all(|x| x.is_finite()) && r.iter().all(|x| x.is_finite())) {
                return Err(VtkError::NonFinite {
                    body: name.clone(),
                    t,
                });
            }
            poses.push((r, p));
        }
        let bytes = self.frame_xml(t, &poses);
        let name = format!("frame_{:06}.vtp", self.frames.len());
        write_whole(&self.dir.join(&name), &bytes)?;
        self.frames.push((t, name));
        Ok(())
    }

    /// Writes the `.pvd` collection listing every frame written, with its time, and
    /// returns its path (`dir/vtk/frames.pvd`).
    ///
    /// # Errors
    /// [`VtkError::Write`] if the file cannot be written.
    pub fn finish(self) -> Result<PathBuf, VtkError> {
        let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
        let fmt = |x: f64| number(self.scalar, x);
        // Writing to a Vec cannot fail.
        let _ = (|| -> io::Result<()> {
            w.write_event(Event::Decl(BytesDecl::new("1.0", None, None)))?;
            w.write_event(Event::Start(BytesStart::new("VTKFile").with_attributes([
                ("type", "Collection"),
                ("version", "0.1"),
                ("byte_order", "LittleEndian"),
            ])))?;
            w.write_event(Event::Start(BytesStart::new("Collection")))?;
            for (t, file) in &self.frames {
                let ts = fmt(*t);
                w.write_event(Event::Empty(BytesStart::new("DataSet").with_attributes([
                    ("timestep", ts.as_str()),
                    ("group", ""),
                    ("part", "0"),
                    ("file", file.as_str()),
                ])))?;
            }
            w.write_event(Event::End(BytesEnd::new("Collection")))?;
            w.write_event(Event::End(BytesEnd::new("VTKFile")))?;
            Ok(())
        })();
        let mut bytes = w.into_inner();
        bytes.push(b'\n');
        let path = self.dir.join(PVD_FILE);
        write_whole(&path, &bytes)?;
        Ok(path)
    }

    /// The `.vtp` document of one frame.
    fn frame_xml(&self, t: f64, poses: &[(Matrix3<f64>, Vector3<f64>)]) -> Vec<u8> {
        let s = self.scalar;
        let total = self
            .meshes
            .iter()
            .map(|m| MeshCounts {
                points: m.points.len(),
                verts: usize::from(m.vertex),
                lines: 3,
                polys: m.polys.len(),
            })
            .fold(MeshCounts::default(), |a, b| a + b);

        // Text of every array.
        let mut points = String::new();
        let mut point_body = String::new();
        let (mut vconn, mut voff, mut vbody) = (String::new(), String::new(), Vec::new());
        let (mut lconn, mut loff, mut lbody) = (String::new(), String::new(), Vec::new());
        let (mut pconn, mut poff, mut pbody) = (String::new(), String::new(), Vec::new());
        let (mut nv, mut nl, mut np) = (0usize, 0usize, 0usize);
        let mut base = 0usize;
        for (b, (mesh, (r, c))) in self.meshes.iter().zip(poses).enumerate() {
            for x in &mesh.points {
                let w = r * x + c;
                let _ = write!(
                    points,
                    "{} {} {} ",
                    number(s, w.x),
                    number(s, w.y),
                    number(s, w.z)
                );
                let _ = write!(point_body, "{b} ");
            }
            let centre = base + mesh.centre();
            if mesh.vertex {
                nv += 1;
                let _ = write!(vconn, "{centre} ");
                let _ = write!(voff, "{nv} ");
                vbody.push(b);
            }
            for k in 1..=3 {
                nl += 2;
                let _ = write!(lconn, "{centre} {} ", centre + k);
                let _ = write!(loff, "{nl} ");
                lbody.push(b);
            }
            for poly in &mesh.polys {
                for &i in poly {
                    let _ = write!(pconn, "{} ", base + i);
                }
                np += poly.len();
                let _ = write!(poff, "{np} ");
                pbody.push(b);
            }
            base += mesh.points.len();
        }
        // Cell data in VTK's cell order: verts, lines, polys.
        let mut cell_body = String::new();
        let mut cell_axis = String::new();
        for b in &vbody {
            let _ = write!(cell_body, "{b} ");
            cell_axis.push_str("-1 ");
        }
        for (k, b) in lbody.iter().enumerate() {
            let _ = write!(cell_body, "{b} ");
            let _ = write!(cell_axis, "{} ", k % 3);
        }
        for b in &pbody {
            let _ = write!(cell_body, "{b} ");
            cell_axis.push_str("-1 ");
        }

        let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
        let counts = [
            total.points.to_string(),
            total.verts.to_string(),
            total.lines.to_string(),
            total.polys.to_string(),
        ];
        let time = number(s, t);
        // Writing to a Vec cannot fail.
        let _ = (|| -> io::Result<()> {
            w.write_event(Event::Decl(BytesDecl::new("1.0", None, None)))?;
            w.write_event(Event::Start(BytesStart::new("VTKFile").with_attributes([
                ("type", "PolyData"),
                ("version", "1.0"),
                ("byte_order", "LittleEndian"),
                ("header_type", "UInt64"),
            ])))?;
            w.write_event(Event::Start(BytesStart::new("PolyData")))?;
            w.write_event(Event::Start(BytesStart::new("FieldData")))?;
            array(&mut w, "Float64", "TimeValue", None, Some(1), &time)?;
            w.write_event(Event::End(BytesEnd::new("FieldData")))?;
            w.write_event(Event::Start(BytesStart::new("Piece").with_attributes([
                ("NumberOfPoints", counts[0].as_str()),
                ("NumberOfVerts", counts[1].as_str()),
                ("NumberOfLines", counts[2].as_str()),
                ("NumberOfStrips", "0"),
                ("NumberOfPolys", counts[3].as_str()),
            ])))?;
            w.write_event(Event::Start(
                BytesStart::new("PointData").with_attributes([("Scalars", "body")]),
            ))?;
            array(&mut w, "Int32", "body", None, None, &point_body)?;
            w.write_event(Event::End(BytesEnd::new("PointData")))?;
            w.write_event(Event::Start(
                BytesStart::new("CellData").with_attributes([("Scalars", "body")]),
            ))?;
            array(&mut w, "Int32", "body", None, None, &cell_body)?;
            array(&mut w, "Int32", "axis", None, None, &cell_axis)?;
            w.write_event(Event::End(BytesEnd::new("CellData")))?;
            w.write_event(Event::Start(BytesStart::new("Points")))?;
            array(&mut w, "Float64", "Points", Some(3), None, &points)?;
            w.write_event(Event::End(BytesEnd::new("Points")))?;
            for (tag, conn, off) in [
                ("Verts", &vconn, &voff),
                ("Lines", &lconn, &loff),
                ("Polys", &pconn, &poff),
            ] {
                w.write_event(Event::Start(BytesStart::new(tag)))?;
                array(&mut w, "Int64", "connectivity", None, None, conn)?;
                array(&mut w, "Int64", "offsets", None, None, off)?;
                w.write_event(Event::End(BytesEnd::new(tag)))?;
            }
            w.write_event(Event::End(BytesEnd::new("Piece")))?;
            w.write_event(Event::End(BytesEnd::new("PolyData")))?;
            w.write_event(Event::End(BytesEnd::new("VTKFile")))?;
            Ok(())
        })();
        let mut bytes = w.into_inner();
        bytes.push(b'\n');
        bytes
    }
}

/// One ASCII `<DataArray>` with the given values (space-separated text).
fn array(
    w: &mut Writer<Vec<u8>>,
    ty: &str,
    name: &str,
    components: Option<usize>,
    tuples: Option<usize>,
    values: &str,
) -> io::Result<()> {
    let mut start = BytesStart::new("DataArray");
    start.push_attribute(("type", ty));
    start.push_attribute(("Name", name));
    if let Some(c) = components {
        start.push_attribute(("NumberOfComponents", c.to_string().as_str()));
    }
    if let Some(n) = tuples {
        start.push_attribute(("NumberOfTuples", n.to_string().as_str()));
    }
    start.push_attribute(("format", "ascii"));
    w.write_event(Event::Start(start))?;
    w.write_event(Event::Text(BytesText::new(values.trim_end())))?;
    w.write_event(Event::End(BytesEnd::new("DataArray")))
}

/// Shortest text that reads back to `x` at the run's precision (`{:?}`: exponent
/// notation for very small and large magnitudes).
fn number(s: Scalar, x: f64) -> String {
    match s {
        Scalar::F64 => format!("{x:?}"),
        Scalar::F32 | Scalar::F32Plain => format!("{:?}", x as f32),
    }
}

/// Names of the temporary files: `.tmp-XXXXXX`, X alphanumeric.
const TEMP_PREFIX: &str = ".tmp-";
const TEMP_RANDOM_CHARS: usize = 6;

/// Deletes from `dir` (a run's `vtk/` folder) the frames `frame_NNNNNN.vtp` numbered
/// `first` and above, and `frames.pvd` unless `keep_pvd`: what an earlier run into the
/// same folder left beyond the frames of the run that just finished (a run of 0 frames
/// removes them all). Other files are left alone; a missing folder is no error. If it
/// deleted something and the folder is then empty, the folder goes too (a run without
/// `--vtk` into a folder that had frames leaves no empty `vtk/`).
/// Returns the paths deleted.
pub fn remove_frames_from(dir: &Path, first: usize, keep_pvd: bool) -> Vec<std::path::PathBuf> {
    let removed = remove_files_where(dir, |name| {
        if name == PVD_FILE {
            return !keep_pvd;
        }
        name.strip_prefix("frame_")
            .and_then(|n| n.strip_suffix(".vtp"))
            .filter(|n| n.len() >= 6 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|k| k >= first)
    });
    if !removed.is_empty() {
        // Fails, harmlessly, unless the folder is empty.
        let _ = std::fs::remove_dir(dir);
    }
    removed
}

/// Deletes the plain files of `dir` whose (UTF-8) names `select` accepts; returns the
/// paths deleted (none if `dir` does not exist).
fn remove_files_where(dir: &Path, select: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(&select))
        .map(|e| e.path())
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect()
}

/// Deletes the temporary files `.tmp-XXXXXX` that a process killed while writing a
/// frame left in `dir` (a run's `vtk` folder); call it only while nothing writes
/// frames there. Returns the files deleted (none if `dir` does not exist).
pub fn remove_stale_temporaries(dir: &Path) -> Vec<std::path::PathBuf> {
    remove_files_where(dir, |name| {
        name.strip_prefix(TEMP_PREFIX).is_some_and(|r| {
            r.len() == TEMP_RANDOM_CHARS && r.bytes().all(|b| b.is_ascii_alphanumeric())
        })
    })
}

/// Writes `bytes` to `path` whole or not at all: a temporary file in the same directory,
/// synced, then renamed over `path`.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), VtkError> {
    let err = |source| VtkError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).rand_bytes(TEMP_RANDOM_CHARS);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Like a file made by `File::create` (the umask still applies), not tempfile's
        // 0600: the frames are for other users' viewers too.
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    persist(tmp, path).map_err(err)
}

fn persist(tmp: NamedTempFile, path: &Path) -> io::Result<()> {
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}
