//! The scene format: the shipped files parse to what their scene modules describe.

use lie_xpbd::scene::Scene;
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};

#[test]
fn shipped_pendulum_file_is_the_pendulum_module_scene() {
    let parsed = Scene::from_toml(pendulum::SCENE_TOML, "scenes/pendulum.toml").unwrap();
    assert_eq!(
        parsed.file(),
        &pendulum::scene_file(&PendulumConfig::default())
    );
    assert_eq!(parsed.steps().unwrap(), 10_000);
}
