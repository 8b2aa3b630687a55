//! ParaView output: every frame is well-formed VTK XML with the documented point and
//! cell counts and the bodies' poses; the `.pvd` lists every frame; output is
//! deterministic and written whole.
#![cfg(feature = "cli")]

use lie_xpbd::pipeline::vtk::{mesh_counts, MeshCounts, VtkError, VtkWriter, PVD_FILE, VTK_DIR};
use lie_xpbd::scene::{Scene, ShapeSpec};
use lie_xpbd::sim::{build_simulation, Rotation, Scalar, Simulation};
use nalgebra::Vector3;
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::HashMap;
use std::path::Path;

/// One body of each shape, a body without shape (drawn as a point) and a fixed one.
const SHAPES_TOML: &str = r#"
version = 1
name = "shapes"

[solver]
dt = 0.01

[[bodies]]
name = "box"
shape = { type = "box", size = [0.2, 0.4, 0.6] }
density = 1000.0
position = [0.0, 1.0, 0.0]
orientation = { axis = [1.0, 2.0, 3.0], angle_deg = 40.0 }
angular_velocity = [1.0, -2.0, 0.5]

[[bodies]]
name = "ball"
shape = { type = "sphere", radius = 0.25 }
density = 500.0
position = [1.0, 0.0, 0.0]
angular_velocity = [0.0, 3.0, 0.0]

[[bodies]]
name = "can"
shape = { type = "cylinder", radius = 0.1, length = 0.5 }
density = 800.0
position = [2.0, 0.0, 0.0]
orientation = { axis = [0.0, 1.0, 0.0], angle_deg = 90.0 }
angular_velocity = [0.5, 0.5, 0.5]

[[bodies]]
name = "pill"
shape = { type = "capsule", radius = 0.05, length = 0.3 }
density = 900.0
position = [3.0, 0.0, 0.0]
velocity = [0.0, 1.0, 0.0]

[[bodies]]
name = "dot"
mass = 1.0
inertia = [0.01, 0.01, 0.01]
position = [4.0, 0.0, 0.0]

[[bodies]]
name = "floor"
shape = { type = "box", size = [10.0, 0.1, 10.0] }
position = [0.0, -2.0, 0.0]
fixed = true
"#;

/// Documented per-body counts (module docs of `pipeline::vtk`).
fn documented(shape: Option<&ShapeSpec>) -> MeshCounts {
    let (points, verts, lines, polys) = match shape {
        None => (4, 1, 3, 0),
        Some(ShapeSpec::Box { .. }) => (12, 0, 3, 6),
        Some(ShapeSpec::Sphere { .. }) => (66, 0, 3, 72),
        Some(ShapeSpec::Cylinder { .. }) => (28, 0, 3, 14),
        Some(ShapeSpec::Capsule { .. }) => (78, 0, 3, 84),
    };
    MeshCounts {
        points,
        verts,
        lines,
        polys,
    }
}

fn bodies(scene: &Scene) -> Vec<(String, Option<ShapeSpec>)> {
    scene
        .file()
        .bodies
        .iter()
        .map(|b| (b.name.clone(), b.shape))
        .collect()
}

/// A pose recorded when a frame was written: (position, rotation matrix).
type Pose = (Vector3<f64>, nalgebra::Matrix3<f64>);

/// Runs `scene`, writing `frames` frames 5 steps apart; returns each frame's time and
/// body poses.
fn run(dir: &Path, scene: &Scene, scalar: Scalar, frames: usize) -> Vec<(f64, Vec<Pose>)> {
    let mut sim = build_simulation(scene, Rotation::Quaternion, scalar).unwrap();
    let dt = scene.file().solver.dt;
    let mut vtk = VtkWriter::new(dir, &bodies(scene)).unwrap();
    let mut written = Vec::new();
    for _ in 0..frames {
        let t = sim.steps() as f64 * dt;
        vtk.write_frame(t, sim.as_ref()).unwrap();
        let n = sim.body_names().len();
        written.push((
            t,
            (0..n)
                .map(|i| (sim.position(i), sim.rotation_matrix(i)))
                .collect(),
        ));
        for _ in 0..5 {
            sim.step().unwrap();
        }
    }
    assert_eq!(vtk.frames(), frames);
    let pvd = vtk.finish().unwrap();
    assert_eq!(pvd, dir.join(VTK_DIR).join(PVD_FILE));
    written
}

/// A parsed `.vtp`: the Piece's attributes and every DataArray by (section, name).
#[derive(Debug, Default)]
struct Vtp {
    piece: HashMap<String, usize>,
    arrays: HashMap<(String, String), Vec<f64>>,
}

fn parse_vtp(path: &Path) -> Vtp {
    let text = std::fs::read_to_string(path).unwrap();
    let mut reader = Reader::from_str(&text);
    reader.config_mut().trim_text(true);
    let mut vtp = Vtp::default();
    let mut stack: Vec<String> = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut root_seen = false;
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        {
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let attrs: HashMap<String, String> = e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (
                            String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                            a.unescape_value().unwrap().into_owned(),
                        )
                    })
                    .collect();
                if stack.is_empty() {
                    assert_eq!(name, "VTKFile");
                    assert_eq!(attrs["type"], "PolyData");
                    root_seen = true;
                }
                if name == "Piece" {
                    for key in [
                        "NumberOfPoints",
                        "NumberOfVerts",
                        "NumberOfLines",
                        "NumberOfStrips",
                        "NumberOfPolys",
                    ] {
                        vtp.piece.insert(key.into(), attrs[key].parse().unwrap());
                    }
                }
                if name == "DataArray" {
                    assert_eq!(attrs["format"], "ascii");
                    let section = stack.last().unwrap().clone();
                    let key = (section, attrs["Name"].clone());
                    vtp.arrays.insert(key.clone(), Vec::new());
                    current = Some(key);
                }
                stack.push(name);
            }
            Event::Text(t) => {
                if let Some(key) = &current {
                    let s = t.decode().unwrap();
                    let values = s.split_whitespace().map(|v| v.parse::<f64>().unwrap());
                    vtp.arrays.get_mut(key).unwrap().extend(values);
                }
            }
            Event::End(e) => {
                let name = stack.pop().unwrap();
                assert_eq!(name.as_bytes(), e.name().as_ref());
                current = None;
            }
            Event::Empty(_) => panic!("unexpected empty element in {}", path.display()),
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(root_seen && stack.is_empty(), "{}", path.display());
    vtp
}

fn array<'a>(vtp: &'a Vtp, section: &str, name: &str) -> &'a [f64] {
    vtp.arrays
        .get(&(section.to_string(), name.to_string()))
        .unwrap_or_else(|| panic!("no {section}/{name}"))
}

/// (timestep, file) of every DataSet of the `.pvd`.
fn parse_pvd(path: &Path) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut reader = Reader::from_str(&text);
    reader.config_mut().trim_text(true);
    let mut out = Vec::new();
    let mut collection = false;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"VTKFile" => {
                let ty = e.try_get_attribute("type").unwrap().unwrap();
                assert_eq!(ty.unescape_value().unwrap(), "Collection");
            }
            Event::Start(e) if e.name().as_ref() == b"Collection" => collection = true,
            Event::Empty(e) if e.name().as_ref() == b"DataSet" => {
                assert!(collection);
                let get = |k: &str| {
                    e.try_get_attribute(k)
                        .unwrap()
                        .unwrap()
                        .unescape_value()
                        .unwrap()
                        .into_owned()
                };
                out.push((get("timestep").parse().unwrap(), get("file")));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// Checks one frame against the scene's shapes and the recorded poses.
fn check_frame(vtp: &Vtp, shapes: &[(String, Option<ShapeSpec>)], poses: &[Pose], tol: f64) {
    let total = shapes.iter().fold(MeshCounts::default(), |a, (_, s)| {
        let c = documented(s.as_ref());
        assert_eq!(mesh_counts(s.as_ref()), c);
        a + c
    });
    assert_eq!(vtp.piece["NumberOfPoints"], total.points);
    assert_eq!(vtp.piece["NumberOfVerts"], total.verts);
    assert_eq!(vtp.piece["NumberOfLines"], total.lines);
    assert_eq!(vtp.piece["NumberOfStrips"], 0);
    assert_eq!(vtp.piece["NumberOfPolys"], total.polys);

    let points = array(vtp, "Points", "Points");
    assert_eq!(points.len(), 3 * total.points);
    assert!(points.iter().all(|x| x.is_finite()));
    let p = |i: usize| Vector3::new(points[3 * i], points[3 * i + 1], points[3 * i + 2]);
    let cells = total.verts + total.lines + total.polys;
    assert_eq!(array(vtp, "PointData", "body").len(), total.points);
    assert_eq!(array(vtp, "CellData", "body").len(), cells);
    assert_eq!(array(vtp, "CellData", "axis").len(), cells);
    assert_eq!(array(vtp, "FieldData", "TimeValue").len(), 1);

    // Connectivity: offsets count cells, increase, end at the connectivity length, and
    // every index is a point.
    let mut polys = Vec::new();
    for (section, n) in [
        ("Verts", total.verts),
        ("Lines", total.lines),
        ("Polys", total.polys),
    ] {
        let conn = array(vtp, section, "connectivity");
        let off = array(vtp, section, "offsets");
        assert_eq!(off.len(), n, "{section}");
        assert!(conn
            .iter()
            .all(|&i| i >= 0.0 && (i as usize) < total.points));
        let mut start = 0;
        for &o in off {
            let o = o as usize;
            assert!(o > start);
            if section == "Lines" {
                assert_eq!(o - start, 2);
            }
            if section == "Polys" {
                polys.push(
                    conn[start..o]
                        .iter()
                        .map(|&i| i as usize)
                        .collect::<Vec<_>>(),
                );
            }
            start = o;
        }
        assert_eq!(start, conn.len());
    }

    // Poses: each body's frame centre is its centre of mass; a box's corners are at
    // ±size/2 in its body frame; frame axes point along the body axes.
    let point_body = array(vtp, "PointData", "body");
    let mut base = 0;
    let mut poly_index = 0;
    for (b, ((_, shape), (c, r))) in shapes.iter().zip(poses).enumerate() {
        let counts = documented(shape.as_ref());
        let shape_points = counts.points - 4;
        assert!(point_body[base..base + counts.points]
            .iter()
            .all(|&x| x == b as f64));
        let centre = p(base + shape_points);
        assert!((centre - c).norm() < tol, "body {b}: {centre} vs {c}");
        for k in 0..3 {
            let axis = (p(base + shape_points + 1 + k) - centre).normalize();
            assert!((axis - r.column(k)).norm() < 1e3 * tol, "body {b} axis {k}");
        }
        if let Some(ShapeSpec::Box { size }) = shape {
            for i in 0..8 {
                let local = r.transpose() * (p(base + i) - c);
                for k in 0..3 {
                    assert!((local[k].abs() - size[k] / 2.0).abs() < 1e3 * tol);
                }
            }
        }
        if let Some(ShapeSpec::Sphere { radius }) = shape {
            for i in 0..shape_points {
                assert!(((p(base + i) - c).norm() - radius).abs() < 1e3 * tol);
            }
        }
        // Outward normals (every shape is convex about its centre).
        for poly in &polys[poly_index..poly_index + counts.polys] {
            let mut normal = Vector3::zeros();
            let mut centroid = Vector3::zeros();
            for (k, &i) in poly.iter().enumerate() {
                let (a, bb) = (p(i), p(poly[(k + 1) % poly.len()]));
                normal += a.cross(&bb);
                centroid += a / poly.len() as f64;
                assert!(i >= base && i < base + shape_points, "poly of body {b}");
            }
            if normal.norm() > 1e-9 {
                assert!(
                    normal.dot(&(centroid - c)) > 0.0,
                    "inward polygon, body {b}"
                );
            }
        }
        poly_index += counts.polys;
        base += counts.points;
    }
}

fn vtk_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(VTK_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn frames_have_documented_geometry_and_pvd_lists_them() {
    let scene = Scene::from_toml(SHAPES_TOML, "shapes.toml").unwrap();
    let shapes = bodies(&scene);
    let dir = tempfile::tempdir().unwrap();
    let written = run(dir.path(), &scene, Scalar::F64, 4);

    // Exactly the frames and the collection, no temporary file left.
    let mut expected: Vec<String> = (0..4).map(|k| format!("frame_{k:06}.vtp")).collect();
    expected.push(PVD_FILE.to_string());
    expected.sort();
    assert_eq!(vtk_files(dir.path()), expected);

    let pvd = parse_pvd(&dir.path().join(VTK_DIR).join(PVD_FILE));
    assert_eq!(pvd.len(), 4);
    for (k, ((t, file), (t_written, poses))) in pvd.iter().zip(&written).enumerate() {
        assert_eq!(file, &format!("frame_{k:06}.vtp"));
        assert_eq!(t, t_written, "timestep read back exactly");
        let vtp = parse_vtp(&dir.path().join(VTK_DIR).join(file));
        assert_eq!(array(&vtp, "FieldData", "TimeValue"), &[*t]);
        check_frame(&vtp, &shapes, poses, 1e-12);
    }
    // The bodies moved between frames (so poses are really per frame).
    assert!((written[3].1[3].0 - written[0].1[3].0).norm() > 1e-3);
}

#[test]
fn pendulum_frames_f32() {
    let scene = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "pendulum.toml").unwrap();
    let shapes = bodies(&scene);
    let dir = tempfile::tempdir().unwrap();
    let written = run(dir.path(), &scene, Scalar::F32, 3);
    for (k, (_, poses)) in written.iter().enumerate() {
        let vtp = parse_vtp(&dir.path().join(VTK_DIR).join(format!("frame_{k:06}.vtp")));
        assert_eq!(vtp.piece["NumberOfPoints"], 36);
        assert_eq!(vtp.piece["NumberOfLines"], 9);
        assert_eq!(vtp.piece["NumberOfPolys"], 18);
        check_frame(&vtp, &shapes, poses, 1e-5);
    }
}

#[test]
fn output_is_byte_identical() {
    let scene = Scene::from_toml(SHAPES_TOML, "shapes.toml").unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(a.path(), &scene, Scalar::F64, 3);
    run(b.path(), &scene, Scalar::F64, 3);
    let names = vtk_files(a.path());
    assert_eq!(names, vtk_files(b.path()));
    for name in names {
        let fa = std::fs::read(a.path().join(VTK_DIR).join(&name)).unwrap();
        let fb = std::fs::read(b.path().join(VTK_DIR).join(&name)).unwrap();
        assert!(fa == fb, "{name} differs");
    }
    // Rewriting into the same folder replaces the files with identical ones.
    let before = std::fs::read(a.path().join(VTK_DIR).join("frame_000001.vtp")).unwrap();
    run(a.path(), &scene, Scalar::F64, 3);
    let after = std::fs::read(a.path().join(VTK_DIR).join("frame_000001.vtp")).unwrap();
    assert_eq!(before, after);
}

#[test]
fn errors_are_typed() {
    let scene = Scene::from_toml(SHAPES_TOML, "shapes.toml").unwrap();
    let sim: Box<dyn Simulation> = build_simulation(&scene, Rotation::Matrix, Scalar::F64).unwrap();
    let dir = tempfile::tempdir().unwrap();

    let mut vtk = VtkWriter::new(dir.path(), &bodies(&scene)[..2]).unwrap();
    assert!(matches!(
        vtk.write_frame(0.0, sim.as_ref()),
        Err(VtkError::BodyCount {
            expected: 2,
            actual: 6
        })
    ));
    let mut vtk = VtkWriter::new(dir.path(), &bodies(&scene)).unwrap();
    assert!(matches!(
        vtk.write_frame(f64::NAN, sim.as_ref()),
        Err(VtkError::BadTime(_))
    ));
    assert_eq!(vtk.frames(), 0);

    for bad in [
        ShapeSpec::Sphere { radius: -1.0 },
        ShapeSpec::Box {
            size: [1.0, f64::NAN, 1.0],
        },
        ShapeSpec::Cylinder {
            radius: 1.0,
            length: 0.0,
        },
        ShapeSpec::Capsule {
            radius: 0.0,
            length: 1.0,
        },
    ] {
        assert!(matches!(
            VtkWriter::new(dir.path(), &[("b".into(), Some(bad))]),
            Err(VtkError::BadShape { .. })
        ));
    }
    // A capsule of zero length (a ball) is fine.
    VtkWriter::new(
        dir.path(),
        &[(
            "b".into(),
            Some(ShapeSpec::Capsule {
                radius: 1.0,
                length: 0.0,
            }),
        )],
    )
    .unwrap();

    // The run folder is a file: the vtk directory cannot be created.
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    assert!(matches!(
        VtkWriter::new(&file, &bodies(&scene)),
        Err(VtkError::CreateDir { .. })
    ));
}

#[test]
fn empty_run_gives_empty_collection() {
    let dir = tempfile::tempdir().unwrap();
    let vtk = VtkWriter::new(dir.path(), &[]).unwrap();
    let pvd = vtk.finish().unwrap();
    assert!(parse_pvd(&pvd).is_empty());
}

/// Regression: the frames and the collection were written with tempfile's mode 0600,
/// unreadable by other users' viewers, while every other output is 0644 (less the
/// umask). Compared with a file made by `File::create` in the same directory, so the
/// process's umask applies to both.
#[cfg(unix)]
#[test]
fn vtk_files_have_the_mode_of_other_outputs() {
    use std::os::unix::fs::PermissionsExt;
    let scene = Scene::from_toml(SHAPES_TOML, "shapes.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &scene, Scalar::F64, 2);
    let reference = dir.path().join("reference");
    std::fs::File::create(&reference).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let want = mode(&reference);
    for name in vtk_files(dir.path()) {
        let path = dir.path().join(VTK_DIR).join(&name);
        assert_eq!(
            mode(&path),
            want,
            "{name}: mode {:o}, want {want:o}",
            mode(&path)
        );
    }
}
