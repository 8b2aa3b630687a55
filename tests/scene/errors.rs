//! One malformed scene file per kind of mistake (`tests/scenes/bad/`): each is rejected
//! with a typed error naming the file, the line and column, the field path and what is
//! allowed, never a panic.

use lie_xpbd::scene::{Scene, SceneError, SceneErrorKind};

fn load(name: &str) -> SceneError {
    let path = format!(
        "{}/tests/scenes/bad/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    match Scene::load(&path) {
        Ok(_) => panic!("{name}.toml was accepted"),
        Err(e) => {
            assert!(e.origin.ends_with(&format!("{name}.toml")), "{e}");
            e
        }
    }
}

/// Asserts kind, line, field path and a fragment of the message.
fn expect(name: &str, kind: SceneErrorKind, line: Option<usize>, path: &str, fragment: &str) {
    let e = load(name);
    let shown = e.to_string();
    assert_eq!(e.kind, kind, "{shown}");
    assert_eq!(e.line, line, "{shown}");
    assert_eq!(e.path.to_string(), path, "{shown}");
    assert!(shown.contains(fragment), "'{fragment}' not in: {shown}");
    if let Some(l) = line {
        assert!(shown.contains(&format!("{name}.toml:{l}:")), "{shown}");
    }
}

#[test]
fn toml_syntax_error_has_line_and_column() {
    let e = load("syntax");
    assert_eq!(e.kind, SceneErrorKind::Syntax);
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.column.is_some());
}

/// New-user finding: a key given twice was reported as "duplicate key" without the key.
#[test]
fn duplicate_key_is_named() {
    expect(
        "duplicate_key",
        SceneErrorKind::Syntax,
        Some(9),
        "",
        "duplicate key `position`",
    );
}

#[test]
fn wrong_type() {
    expect(
        "wrong_type",
        SceneErrorKind::Schema,
        Some(3),
        "solver.dt",
        "invalid type",
    );
}

#[test]
fn unknown_field_lists_the_valid_ones() {
    expect(
        "unknown_field",
        SceneErrorKind::Schema,
        Some(3),
        "solver.dtt",
        "expected one of `dt`",
    );
}

#[test]
fn negative_density() {
    expect(
        "negative_density",
        SceneErrorKind::Invalid,
        Some(5),
        "bodies[0].density",
        "kg/m³",
    );
}

#[test]
fn zero_mass() {
    expect(
        "zero_mass",
        SceneErrorKind::Invalid,
        Some(4),
        "bodies[0].mass",
        "positive",
    );
}

#[test]
fn zero_size() {
    expect(
        "zero_size",
        SceneErrorKind::Invalid,
        Some(4),
        "bodies[0].shape.size[1]",
        "edge length",
    );
}

#[test]
fn joint_naming_a_missing_body_lists_the_bodies() {
    expect(
        "unknown_body",
        SceneErrorKind::Invalid,
        Some(9),
        "joints[0].body2",
        "valid values: a, world",
    );
}

#[test]
fn joint_joining_a_body_to_itself() {
    expect(
        "self_joint",
        SceneErrorKind::Invalid,
        Some(9),
        "joints[0].body2",
        "two different bodies",
    );
}

#[test]
fn zero_quaternion() {
    expect(
        "zero_quaternion",
        SceneErrorKind::Invalid,
        Some(6),
        "bodies[0].orientation.quaternion",
        "norm 1",
    );
}

#[test]
fn non_unit_quaternion() {
    expect(
        "non_unit_quaternion",
        SceneErrorKind::Invalid,
        Some(6),
        "bodies[0].orientation.quaternion",
        "norm 1",
    );
}

#[test]
fn time_step_not_positive() {
    expect(
        "zero_dt",
        SceneErrorKind::Invalid,
        Some(3),
        "solver.dt",
        "time step must be positive",
    );
}

#[test]
fn unsupported_version() {
    expect(
        "version_2",
        SceneErrorKind::Version,
        Some(1),
        "version",
        "unsupported version 2",
    );
}

#[test]
fn missing_version() {
    expect(
        "no_version",
        SceneErrorKind::Version,
        None,
        "",
        "missing `version = 1`",
    );
}

#[test]
fn unknown_joint_type_lists_the_types() {
    expect(
        "unknown_joint_type",
        SceneErrorKind::Schema,
        Some(7),
        "joints[0].type",
        "revolute",
    );
}

#[test]
fn compliance_of_the_wrong_length() {
    expect(
        "compliance_rows",
        SceneErrorKind::Invalid,
        Some(10),
        "joints[0].compliance",
        "5 rows",
    );
}

#[test]
fn unknown_shape_lists_the_shapes() {
    expect(
        "unknown_shape",
        SceneErrorKind::Schema,
        Some(4),
        "bodies[0].shape.type",
        "capsule",
    );
}

#[test]
fn duplicate_body_name() {
    expect(
        "duplicate_body",
        SceneErrorKind::Invalid,
        Some(7),
        "bodies[1].name",
        "unique",
    );
}

#[test]
fn physically_impossible_inertia() {
    expect(
        "impossible_inertia",
        SceneErrorKind::Invalid,
        Some(5),
        "bodies[0].inertia",
        "I₁ + I₂ ≥ I₃",
    );
}

#[test]
fn bad_overrides_name_the_override_and_leave_the_scene_unchanged() {
    let mut s = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "p.toml").unwrap();
    let before = s.clone();
    let e = s.set("solver.dt", "-1").unwrap_err();
    assert!(e.to_string().contains("--set solver.dt=-1"), "{e}");
    let e = s.set("bodies.nope.mass", "1").unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Override);
    assert!(e.to_string().contains("no element named 'nope'"), "{e}");
    let e = s.set_assignment("solver.dt").unwrap_err();
    assert!(e.to_string().contains("key=value"), "{e}");
    assert!(s.set("version", "2").is_err());
    assert_eq!(s, before);
    // Whole numbers written as floats are accepted for counts; fractions are not.
    s.set("solver.substeps", "1e3").unwrap();
    assert_eq!(s.file().solver.substeps, 1000);
    assert!(s.set("solver.substeps", "2.5").is_err());
    s.set("bodies.link1.density", "500").unwrap();
    assert_eq!(s.file().bodies[1].density, Some(500.0));
    s.set("solver.mode", "rows").unwrap();
}

#[test]
fn step_count_overflow_is_rejected() {
    let mut s = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "p.toml").unwrap();
    s.set("run.duration", "1e300").unwrap();
    s.set("solver.dt", "1e-9").unwrap();
    let e = s.steps().unwrap_err();
    assert!(e.to_string().contains("at most"), "{e}");
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "version = 1",
        "version = 1\n[[bodies]]",
        "\u{0}\u{1}",
        "version = 1\nbodies = 3",
        "version = 'x'",
        "version = 1\n[run]\nrecord = [\"x\"]",
    ] {
        assert!(Scene::from_toml(text, "g.toml").is_err(), "{text:?}");
    }
}

fn pendulum() -> Scene {
    Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "p.toml").unwrap()
}

/// Review finding: `name = "/tmp/x"` or `"../x"` made `out/<name>` escape `out/`.
#[test]
fn scene_name_cannot_escape_the_output_folder() {
    for bad in [
        "\"/tmp/x\"",
        "\"../escape\"",
        "\"a/b\"",
        "\"\"",
        "\".\"",
        "\"..\"",
    ] {
        let e = pendulum().set("name", bad).unwrap_err();
        assert_eq!(e.path.to_string(), "name", "{bad}: {e}");
        assert!(e.message.contains("output folder"), "{e}");
    }
    assert!(pendulum().set("name", "\"pendulum-2.b\"").is_ok());
}

/// Review finding: a newline in a body name split the CSV header over several lines.
#[test]
fn names_with_control_characters_are_rejected() {
    let e = pendulum().set("bodies[0].name", "\"a\\nb\"").unwrap_err();
    assert!(e.message.contains("control characters"), "{e}");
    let e = pendulum().set("joints[0].name", "\"p\\tq\"").unwrap_err();
    assert!(e.message.contains("control characters"), "{e}");
}

/// Review finding: a misspelt orientation key or a short quaternion got only a generic
/// "an orientation: … or …" message.
#[test]
fn orientation_mistakes_get_their_own_message() {
    let mut s = pendulum();
    let e = s
        .set("bodies[0].orientation", "{axis=[0,0,1],angle=30.0}")
        .unwrap_err();
    assert!(
        e.message.contains("unknown field `angle`") && e.message.contains("angle_deg"),
        "{e}"
    );
    let e = s
        .set("bodies[0].orientation", "{quaternion=[0,0,1]}")
        .unwrap_err();
    assert!(e.message.contains("length 3"), "{e}");
    let e = s
        .set("bodies[0].orientation", "{axis=[0,0,1]}")
        .unwrap_err();
    assert!(e.message.contains("angle_deg"), "{e}");
}

/// Review finding: in f32, a non-finite gravity was reported at `solver.dt` and a body
/// position at `bodies[0].density`.
#[test]
fn f32_range_errors_name_the_right_field() {
    use lie_xpbd::lie::SO3Matrix;
    let mut s = pendulum();
    s.set("solver.gravity", "[0, -1e300, 0]").unwrap();
    let e = s.build::<f32, SO3Matrix<f32>>().err().unwrap();
    assert_eq!(e.path.to_string(), "solver.gravity", "{e}");
    let mut s = pendulum();
    s.set("bodies.link0.position", "[1e300, 0, 0]").unwrap();
    let e = s.build::<f32, SO3Matrix<f32>>().err().unwrap();
    assert_eq!(e.path.to_string(), "bodies[0].position", "{e}");
    let mut s = pendulum();
    s.set("solver.dt", "1e-50").unwrap();
    s.set("run.duration", "1e-40").unwrap();
    let e = s.build::<f32, SO3Matrix<f32>>().err().unwrap();
    assert!(
        e.message.contains("1e-50 s") && !e.message.contains("dt = 0"),
        "{e}"
    );
}

/// Overrides given together are checked once: a short duration with a shorter dt is
/// valid whichever comes first.
#[test]
fn overrides_given_together_are_checked_together() {
    let mut s = pendulum();
    s.set_all(&[
        ("run.duration".into(), "1e-6".into()),
        ("solver.dt".into(), "1e-7".into()),
    ])
    .unwrap();
    assert_eq!(s.steps().unwrap(), 10);
}

/// New-user finding: `substeps = 1e7` was accepted, and one step then ran for about
/// half an hour with Ctrl-C (honoured between steps) unable to stop it. A step makes at
/// most `MAX_SWEEPS_PER_STEP` = substeps × iterations projection sweeps.
#[test]
fn substeps_and_iterations_are_bounded() {
    use lie_xpbd::scene::MAX_SWEEPS_PER_STEP;
    expect(
        "too_many_substeps",
        SceneErrorKind::Invalid,
        Some(4),
        "solver.substeps",
        "substeps must be at most 10000",
    );
    let mut s = pendulum();
    let e = s.set("solver.iterations", "1e5").unwrap_err();
    assert_eq!(e.path.to_string(), "solver.iterations", "{e}");
    assert!(
        e.message.contains("at most 10000") && e.message.contains("--set solver.iterations=1e5"),
        "{e}"
    );
    // The product counts: each within the bound, together beyond it.
    s.set("solver.substeps", "200").unwrap();
    let e = s.set("solver.iterations", "100").unwrap_err();
    assert_eq!(e.path.to_string(), "solver.iterations", "{e}");
    assert!(e.message.contains("20000 projection sweeps"), "{e}");
    // The bound itself is allowed.
    s.set(
        "solver.iterations",
        &(MAX_SWEEPS_PER_STEP / 200).to_string(),
    )
    .unwrap();
    assert_eq!(
        s.file().solver.substeps * s.file().solver.iterations,
        MAX_SWEEPS_PER_STEP
    );
}

/// New-user finding: `--set $'solver.dt=2e-3\nsubsteps=3'` ran with dt = 0.002 and the
/// second line dropped, and `solver.dt=1e-3\n[foo]\nx=1` was accepted. A value with a
/// line break or more after it is an override error, and the scene is unchanged.
#[test]
fn set_value_with_a_line_break_is_rejected() {
    let mut s = pendulum();
    let before = s.clone();
    for value in [
        "2e-3\nsubsteps=3",
        "1e-3\n[foo]\nx=1",
        "1e-3\r\n",
        "rows\nx",
    ] {
        let e = s.set("solver.dt", value).unwrap_err();
        assert_eq!(e.kind, SceneErrorKind::Override, "{value:?}: {e}");
        let shown = e.to_string();
        assert!(
            shown.contains("--set solver.dt=") && shown.contains("a single TOML value"),
            "{value:?}: {shown}"
        );
        assert!(!shown.contains('\n'), "the value is shown escaped: {shown}");
        assert_eq!(s, before, "{value:?}");
    }
    let e = s.set_assignment("solver.dt=2e-3\nsubsteps=3").unwrap_err();
    assert!(
        e.to_string().contains(r"--set solver.dt=2e-3\nsubsteps=3"),
        "{e}"
    );
    assert_eq!(s, before);
    // One value, on one line, is still fine (a comment after it included).
    s.set("solver.dt", "2e-3 # a comment").unwrap();
    assert_eq!(s.file().solver.dt, 2e-3);
}

/// New-user finding: `lie-xpbd run /dev/zero` read until the out-of-memory killer
/// stopped it. A scene file is read up to `MAX_SCENE_FILE_BYTES` (16 MiB); a larger one
/// is an `Io` error naming the file and the limit.
#[test]
fn scene_file_larger_than_the_cap_is_rejected() {
    use lie_xpbd::scene::MAX_SCENE_FILE_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    // Sparse: quick to make, and read no further than the cap.
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(MAX_SCENE_FILE_BYTES + 1).unwrap();
    drop(f);
    let e = Scene::load(&path).unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Io, "{e}");
    assert!(e.origin.ends_with("huge.toml"), "{e}");
    assert!(
        e.to_string()
            .contains("the scene file is larger than 16777216 bytes"),
        "{e}"
    );
    // At the cap the size is fine (and the zeros are then a syntax error).
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(MAX_SCENE_FILE_BYTES)
        .unwrap();
    let e = Scene::load(&path).unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Syntax, "{e}");
}
