//! The `lie-xpbd reproduce` commands: each runs one study of `crate::pipeline::reproduce`
//! into its output folder with progress on stderr, then prints the study's Markdown
//! summary (the report macros `out!`, `outln!`, `errln!` come from the parent module).

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// The end of every `lie-xpbd reproduce` command: prints the study's Markdown summary
/// and where the outputs are, or the error. Exit 0, 1 (a run or the files failed), 2
/// (an option is invalid: nothing was run or written) or 130 (interrupted: what was
/// computed is summarised).
fn finish_reproduce(
    result: Result<String, crate::pipeline::reproduce::ReproduceError>,
    out: &std::path::Path,
    interrupt: &AtomicBool,
) -> ExitCode {
    match result {
        Ok(summary) => {
            out!("{summary}");
            outln!("Outputs written to {}", out.display());
            if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// `lie-xpbd reproduce f32`: [`crate::pipeline::reproduce::f32::reproduce_f32`] into
/// `out`; prints the Markdown summary. Exit 0, 1 (a scene or the files failed), 2 (an
/// invalid option, nothing written) or 130 (interrupted: the finished scenes are
/// summarised).
pub fn reproduce_f32_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::f32::F32Options,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::f32::{markdown, reproduce_f32};
    let progress = |k: usize, n: usize, what: &str| {
        errln!("[{}/{n}] {what}", k + 1);
    };
    finish_reproduce(
        reproduce_f32(out, opts, interrupt, &progress).map(|r| markdown(&r)),
        out,
        interrupt,
    )
}

/// `lie-xpbd reproduce rigid`: [`crate::pipeline::reproduce::reproduce_rigid`] into
/// `out`; prints the Markdown summary. Exit 0, 1 (a run or the files failed), 2 (an
/// invalid option, nothing written) or 130
/// (interrupted: what was computed is summarised).
pub fn reproduce_rigid_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::RigidOptions,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::{markdown, reproduce_rigid};
    let progress = |k: usize, n: usize, scene: &str, mode: &str| {
        errln!("[{}/{n}] {scene}, mode {mode}", k + 1);
    };
    finish_reproduce(
        reproduce_rigid(out, opts, interrupt, &progress).map(|r| markdown(&r, opts)),
        out,
        interrupt,
    )
}

/// `lie-xpbd reproduce cantilever`:
/// [`crate::pipeline::reproduce::cantilever::reproduce_cantilever`] into `out`; prints
/// the Markdown summary. Exit 0, 1 (a run or the files failed), 2 (an invalid option,
/// nothing written) or 130 (interrupted).
pub fn reproduce_cantilever_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::cantilever::CantileverOptions,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::cantilever::{markdown, reproduce_cantilever};
    let progress = |k: usize, n: usize, what: &str| {
        errln!("[{}/{n}] {what}", k + 1);
    };
    finish_reproduce(
        reproduce_cantilever(out, opts, interrupt, &progress).map(|r| markdown(&r)),
        out,
        interrupt,
    )
}

/// `lie-xpbd reproduce shear-locking`:
/// [`crate::pipeline::reproduce::shear_locking::reproduce_shear_locking`] into `out`;
/// prints the Markdown summary. Exit 0, 1 (a run or the files failed), 2 (an invalid
/// option, nothing written) or 130.
pub fn reproduce_shear_locking_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::shear_locking::ShearLockingOptions,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::shear_locking::{markdown, reproduce_shear_locking};
    let progress = |k: usize, n: usize, what: &str| {
        errln!("[{}/{n}] {what}", k + 1);
    };
    finish_reproduce(
        reproduce_shear_locking(out, opts, interrupt, &progress).map(|r| markdown(&r)),
        out,
        interrupt,
    )
}

/// `lie-xpbd reproduce figure11`:
/// [`crate::pipeline::reproduce::figure11::reproduce_figure11`] into `out`; prints the
/// Markdown summary. Exit 0, 1 (a run or the files failed), 2 (an invalid option,
/// nothing written) or 130 (interrupted).
pub fn reproduce_figure11_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::figure11::Figure11Options,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::figure11::{markdown, reproduce_figure11};
    let progress = |k: usize, n: usize, what: &str| {
        errln!("[{}/{n}] {what}", k + 1);
    };
    finish_reproduce(
        reproduce_figure11(out, opts, interrupt, &progress).map(|r| markdown(&r)),
        out,
        interrupt,
    )
}

/// `lie-xpbd reproduce spring`:
/// [`crate::pipeline::reproduce::spring::reproduce_spring`] into `out`; prints the
/// Markdown summary. Exit 0, 1 (a run or the files failed), 2 (an invalid option,
/// nothing written) or 130 (interrupted).
pub fn reproduce_spring_command(
    out: &std::path::Path,
    opts: &crate::pipeline::reproduce::spring::SpringOptions,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::reproduce::spring::{markdown, reproduce_spring};
    let progress = |k: usize, n: usize, what: &str| {
        errln!("[{}/{n}] {what}", k + 1);
    };
    finish_reproduce(
        reproduce_spring(out, opts, interrupt, &progress).map(|r| markdown(&r)),
        out,
        interrupt,
    )
}
