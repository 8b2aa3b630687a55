//! Vector joint constraints between rigid bodies (paper Sections 5.2–5.5, Appendix F.1
//! and F.3), and the scalar ("normed") joints of Section 5.1 they are compared against.
//!
//! # Joint frames
//! Each side k = 1, 2 of a joint is a body with pose (pₖ, Rₖ) (m, world frame;
//! body → world) and a [`JointFrame`] (rₖ, Jₖ) = (r^J_k, R^J_k) fixed to it (m, body
//! frame; joint → body). The joint frame's world pose is (69)–(70):
//!
//! ```text
//! p̄ₖ = pₖ + Rₖ rₖ        R̄ₖ = Rₖ Jₖ
//! ```
//!
//! A side whose body is `None` is the fixed world (a one-sided joint, Section 5.2.1):
//! its frame is the joint's world pose and it has no gradient.
//!
//! # Constraints
//! With e = R̄₁ ⊟ R̄₂ (10) and [·]₁₋₂ the first two rows:
//!
//! | joint | C | rows | eq. |
//! |---|---|---|---|
//! | [`Fixed`] | `[p̄₁ − p̄₂ ; e]` | 6 | (71) |
//! | [`Revolute`] | `[p̄₁ − p̄₂ ; [e]₁₋₂]` | 5 | (72) |
//! | [`Spherical`] | `p̄₁ − p̄₂` | 3 | (75) |
//! | [`Prismatic`] | `[[R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂ ; e]` | 5 | (79) |
//! | [`NormedJoint`] ([`NormedFixed`], [`NormedRevolute`], [`NormedSpherical`], [`NormedPrismatic`]) | the norm of each part above, e.g. `[‖p̄₁ − p̄₂‖ ; ‖[e]₁₋₂‖]` | 2 (spherical 1) | (67), 5.1 |
//!
//! The revolute axis and the prismatic slide axis are the joint frames' z axis. The
//! joint angle θ_rev = −e₃ ((73) with the sign reversed: side 2 relative to side 1,
//! as the twist (78)) and the slide d_pr = [R̄₁ᵀ(p̄₂ − p̄₁)]₃ (80) — the
//! variables of joint limits (74) — come with their gradients from
//! [`JointKinematics`], and so do the swing and twist angles of R_Δ = R̄₁ᵀR̄₂
//! (76)–(78) ([`limit_spherical`]). [`PrescribedFrame`] holds a body's frame on a
//! target frame that moves with time (prescribed motion for inverse dynamics,
//! Section 9.1).
//!
//! # Limits
//! Each limit is its own one-row inequality constraint (λ ≥ 0, active only when
//! violated, projected row by row), added to the world next to the joint it limits,
//! with the same bodies and frames. A two-sided limit writes the row of the nearer
//! limit.
//!
//! | limit | variable | C ≥ 0 | eq. |
//! |---|---|---|---|
//! | [`RevoluteLimit`] | θ_rev (73), unwrapped across ±π | θ − θ_min, θ_max − θ | (74) |
//! | [`SphericalSwingLimit`] | θ_swing (77) ∈ [0, π] | θ_max − θ_swing | (164) |
//! | [`SphericalTwistLimit`] | θ_twist (78), unwrapped across ±π | θ − θ_min, θ_max − θ | (164), (170) |
//! | [`PrismaticLimit`] | d_pr (80), m | d − d_min, d_max − d | (74), (80) |
//!
//! # Drives and motors
//! With u = R̄₁ᵀ(p̄₂ − p̄₁) and ε = R̄₁ ⊟ (R̄₂ Exp(θ_target)), the on-manifold form of
//! (81) (see [`drive`]):
//!
//! | constraint | C | rows | α | eq. |
//! |---|---|---|---|---|
//! | [`RevoluteDrive`] | `[u ; ε]`, θ_target = θ e₃ | 6 | `(0,0,0,0,0,1/k)` | (81), 5.6.1 |
//! | [`SphericalDrive`] | `[u ; ε]` | 6 | `(0,0,0,1/k_x,1/k_y,1/k_z)` | (81), 5.6.2 |
//! | [`PrismaticDrive`] | `[u − d e₃ ; R̄₁ ⊟ R̄₂]` | 6 | `(0,0,1/k,0,0,0)` | (81), 5.6.3 |
//! | [`VelocityMotor`] | `q − (q_start + s h)`, \|λ\| ≤ F_max h² | 1 | 0 | – |
//!
//! A drive *replaces* the joint it drives (its hard rows are the joint); a limit or a
//! motor sits next to the joint (or drive), as its own constraint. Drive targets and
//! motor speeds can change every step or follow a function of time through a
//! [`TargetHandle`] ([`target`]), read by [`crate::xpbd::Constraint::begin_substep`].
//!
//! # Structure
//! All four joints are one generic type, [`VectorJoint`]`<T, G, K>`: the two
//! [`JointAttachments`], a compliance and a damping per row, the constructors and the
//! [`crate::xpbd::Constraint`] impl. What differs is the zero-sized [`JointKind`] marker
//! `K` ([`FixedKind`], [`RevoluteKind`], [`SphericalKind`], [`PrismaticKind`]), which
//! gives the name, the number of rows and [`JointKind::write`]. [`Fixed`],
//! [`Revolute`], [`Spherical`] and [`Prismatic`] are aliases of `VectorJoint` with
//! these markers, and carry each joint's documentation.
//!
//! # Gradients
//! Every joint implements [`crate::xpbd::Constraint`] and writes, per body, the n×6
//! block `[∂C/∂p | D_R C]` of (59) (world-frame position perturbations, body-frame
//! rotation perturbations `R ⊞ δθ`). The blocks are derived by the chain rule from
//! (20)–(23) and (28); see [`JointKinematics`] for the formulas and `proofs/joint_*.md`
//! for the derivations. They are checked against central differences
//! ([`crate::lie::numdiff::poses_to_vector`]) in `tests/joint/gradients.rs`.
//!
//! The prismatic R₁ block is not the printed (174), which differentiates the literal
//! (173) [R̄₁ᵀp₂]₁₋₂: in (79) p̄₁ also depends on R₁, and the block is
//! [J₁ᵀ(R₁ᵀ(p̄₂ − p₁))^]₁₋₂ with p₁ the body position.
//!
//! # Validity
//! The rotation rows use Log, which jumps at a relative rotation of π (the branch cut);
//! their gradients use Γ⁻¹(e) (27), finite for |e| ≤ π. Joints are meant to be held
//! near e = 0, where everything is smooth.
//!
//! # Errors
//! Constructors return [`crate::xpbd::XpbdError`]: `InvalidJoint` for two world sides
//! or one body twice (and a compliance or damping vector of the wrong length),
//! `NonFinite` / `Lie` for an invalid frame, `BadCompliance` / `BadDamping` for a
//! negative or non-finite compliance / damping.
//! A joint naming a body that is not in the world is rejected by
//! [`crate::xpbd::World::add_constraint`] with `UnknownBody`.

pub mod attachments;
pub mod drive;
pub mod fixed;
pub mod frame;
pub mod kinematics;
pub mod limit;
pub mod limit_prismatic;
mod limit_row;
pub mod limit_spherical;
pub mod motor;
pub mod normed;
pub mod prescribed;
pub mod prismatic;
pub mod revolute;
pub mod spherical;
pub mod target;
pub mod vector;

pub use attachments::JointAttachments;
pub use drive::{
    relative_rotation_target, DriveKind, JointDrive, PrismaticDrive, PrismaticDriveKind,
    RevoluteDrive, RevoluteDriveKind, SphericalDrive, SphericalDriveKind,
};
pub use fixed::{Fixed, FixedKind};
pub use frame::JointFrame;
pub use kinematics::{Block3, JointKinematics};
pub use limit::{wrap_angle, RevoluteLimit};
pub use limit_prismatic::PrismaticLimit;
pub use limit_spherical::{SphericalSwingLimit, SphericalTwistLimit};
pub use motor::{MotorAxis, VelocityMotor};
pub use normed::{
    norm_gradient, NormedFixed, NormedJoint, NormedKind, NormedPrismatic, NormedRevolute,
    NormedRows, NormedSpherical,
};
pub use prescribed::{HeldRotation, PrescribedFrame};
pub use prismatic::{Prismatic, PrismaticKind};
pub use revolute::{Revolute, RevoluteKind};
pub use spherical::{Spherical, SphericalKind};
pub use target::{TargetHandle, TargetSchedule, TargetValue};
pub use vector::{JointKind, JointRows, VectorJoint};
