// Length: ~610 lines, a third of them tests; one type (OutputDir) and its errors, kept whole.
//! Output files of the pipeline, each written whole or not at all, and the exact time
//! of a step.
//!
//! * [`OutputDir`]: a destination directory in which files are staged (from bytes
//!   ([`OutputDir::stage_bytes`]), JSON ([`OutputDir::stage_json`]), any writer
//!   ([`OutputDir::stage_with`]) or streamed row by row as a run goes
//!   ([`OutputDir::stage_stream`], a [`StagedWriter`] handed back with
//!   [`OutputDir::add`])) and appear under their final names only on
//!   [`OutputDir::commit`]. [`OutputDir::check_targets`] refuses, before any work is
//!   done, a target that could not be replaced.
//! * [`OutputError`]: everything that can go wrong while writing them.
//! * [`step_time`]: simulated time `t0 + k·Δt` computed exactly in decimal, so a file
//!   says `0.009`, never `0.009000000000000001`.
//!
//! What the files contain is described where they are made: [`super::record`] (a run's
//! channels), [`super::run`] (its summaries and plots), [`super::compare`] (the
//! comparison study).
//!
//! # Whole or not at all
//! [`OutputDir`] stages every file as a hidden temporary file in the destination
//! directory (written, flushed and synced), and only [`OutputDir::commit`] renames them
//! to their final names. Dropping an `OutputDir` before the commit deletes whatever was
//! staged, so an error midway leaves no partial file behind. The commit first checks
//! every target (none may be a directory) and renames only if all pass, so a failure
//! it can foresee leaves the earlier files untouched. (A rename within one directory
//! is atomic; a rename that still fails, or a crash, between two renames can leave
//! some new files next to older ones, never a truncated file: the error
//! [`OutputError::Commit`] then lists the files already replaced.)
//!
//! # Example
//! ```
//! use lie_xpbd::pipeline::files::{step_time, OutputDir};
//! use std::io::Write;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut out = OutputDir::create(dir.path()).unwrap();
//! out.check_targets(&["rows.csv", "summary.json"]).unwrap();
//! let mut rows = out.stage_stream("rows.csv").unwrap();
//! writeln!(rows, "t").unwrap();
//! for k in 1..=3 {
//!     writeln!(rows, "{}", step_time(0.0, k, 0.1)).unwrap(); // 0.1, 0.2, 0.3
//! }
//! out.add(rows).unwrap();
//! out.stage_json("summary.json", &[1, 2, 3]).unwrap();
//! assert!(!dir.path().join("rows.csv").exists()); // nothing before the commit
//! let written = out.commit().unwrap();
//! assert!(written[1].ends_with("summary.json"));
//! assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), "t\n0.1\n0.2\n0.3\n");
//! ```

use serde::Serialize;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;
use thiserror::Error;

/// Whether `name` is that of a file [`OutputDir`] stages: `.NAME.XXXXXX.tmp`, X
/// alphanumeric.
fn is_staged_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.rsplit_once('.'))
        .is_some_and(|(base, random)| {
            !base.is_empty()
                && random.len() == OutputDir::RANDOM_CHARS
                && random.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Everything that can go wrong while writing outputs.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The output path exists but is a file (or something else), not a directory.
    #[error("'{}' exists and is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The output directory could not be created.
    #[error("cannot create directory '{}': {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// No file can be created in the output directory (e.g. no permission).
    #[error("cannot create files in directory '{}': {source}", path.display())]
    NotWritable {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A file in the output directory could not be created, written or renamed.
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        /// The file (or directory, for the write probe).
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A value could not be serialised to JSON.
    #[error("cannot write JSON '{}': {source}", path.display())]
    Json {
        /// The destination file.
        path: PathBuf,
        /// The serialiser's error.
        source: serde_json::Error,
    },
    /// A file name given to [`OutputDir`] is not a plain name (empty, `.`/`..`, or
    /// contains a path separator).
    #[error("'{name}' is not a plain file name")]
    BadFileName {
        /// The name given.
        name: String,
    },
    /// [`super::record::Recorder::new`] was asked to record every 0th step.
    #[error("the recording interval must be at least 1 step")]
    ZeroInterval,
    /// A file to be written exists as a directory, so it cannot be replaced.
    #[error("'{}' is a directory, so the file of that name cannot be written", path.display())]
    TargetIsDirectory {
        /// The path of the file to be written.
        path: PathBuf,
    },
    /// Renaming a staged file to its final name failed after the targets were checked;
    /// the files in `replaced` already hold this run's contents, the others (including
    /// `path`) still hold whatever was there before.
    #[error("cannot write '{}': {source}; {}", path.display(), replaced_note(replaced))]
    Commit {
        /// The file whose rename failed.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
        /// The files already replaced by this commit, in order.
        replaced: Vec<PathBuf>,
    },
}

/// The part of [`OutputError::Commit`]'s message that says which files were replaced.
fn replaced_note(replaced: &[PathBuf]) -> String {
    if replaced.is_empty() {
        "no file was replaced".into()
    } else {
        let names: Vec<String> = replaced
            .iter()
            .map(|p| format!("'{}'", p.display()))
            .collect();
        format!(
            "already replaced with this run's output: {} (the other files are older)",
            names.join(", ")
        )
    }
}

/// `x` as an exact decimal `m × 10^e`, from its shortest round-trip representation.
fn decimal(x: f64) -> Option<(i128, i32)> {
    if !x.is_finite() {
        return None;
    }
    let s = format!("{x:e}"); // e.g. "1e-3", "-1.25e2", "0e0"
    let (mantissa, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let m: i128 = format!("{int}{frac}").parse().ok()?;
    Some((m, exp - i32::try_from(frac.len()).ok()?))
}

/// Simulated time after `steps` steps of `dt` from `t0`, s: `t0 + steps·dt` computed
/// exactly on the decimal values of `t0` and `dt` (their shortest representations, i.e.
/// the numbers as typed) and rounded once to the nearest `f64`.
///
/// Repeated or multiplied binary floating point drifts (`9 × 0.001` is
/// `0.009000000000000001` in `f64`, `0.90000004` in `f32`); this prints `0.009`, `0.3`,
/// `4512.458` at any magnitude. It is at least as exact as rounding to a 1e-12 s grid,
/// and unlike such a grid it also stays exact beyond t ≈ 4500 s (where 1e-12 s drops
/// below the spacing of `f64`) and for sub-picosecond `dt`. Falls back to plain `f64`
/// arithmetic only if the decimals do not fit in 128 bits (e.g. `dt` = 1e-300 with a
/// non-zero `t0`).
///
/// ```
/// assert_eq!(lie_xpbd::pipeline::files::step_time(0.0, 9, 0.001), 0.009);
/// assert_eq!(lie_xpbd::pipeline::files::step_time(0.0, 3, 0.1), 0.3);
/// ```
pub fn step_time(t0: f64, steps: u64, dt: f64) -> f64 {
    let exact = || -> Option<f64> {
        let (m0, e0) = decimal(t0)?;
        let (m1, e1) = decimal(dt)?;
        let m1 = m1.checked_mul(i128::from(steps))?;
        let e = match (m0, m1) {
            (0, _) => e1,
            (_, 0) => e0,
            _ => e0.min(e1),
        };
        let scale = |m: i128, from: i32| -> Option<i128> {
            if m == 0 {
                return Some(0);
            }
            m.checked_mul(10i128.checked_pow(u32::try_from(from - e).ok()?)?)
        };
        let m = scale(m0, e0)?.checked_add(scale(m1, e1)?)?;
        format!("{m}e{e}").parse().ok()
    };
    exact().unwrap_or(t0 + steps as f64 * dt)
}

/// A file being written for an [`OutputDir`] (from [`OutputDir::stage_stream`]): a
/// hidden temporary file in the destination directory behind a [`BufWriter`]. Write to
/// it with [`std::io::Write`], then hand it to [`OutputDir::add`]; dropped instead, it
/// deletes its file.
#[derive(Debug)]
pub struct StagedWriter {
    writer: BufWriter<NamedTempFile>,
    path: PathBuf,
}

impl StagedWriter {
    /// The path the file will have after [`OutputDir::commit`].
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Write for StagedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// An output directory whose files are staged as hidden temporary files and appear
/// under their final names only on [`OutputDir::commit`].
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    staged: Vec<(NamedTempFile, PathBuf)>,
}

impl OutputDir {
    /// Creates `dir` (and its parents) if needed, and checks that files can be created
    /// in it.
    ///
    /// # Errors
    /// [`OutputError::NotADirectory`] if the path exists and is not a directory,
    /// [`OutputError::CreateDir`] if it cannot be created, [`OutputError::NotWritable`]
    /// if a file cannot be created in it (e.g. no permission).
    pub fn create(dir: impl AsRef<Path>) -> Result<Self, OutputError> {
        let dir = dir.as_ref().to_path_buf();
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::NotADirectory { path: dir });
        }
        fs::create_dir_all(&dir).map_err(|source| {
            // A parent that is a file reports the path as "not a directory".
            OutputError::CreateDir {
                path: dir.clone(),
                source,
            }
        })?;
        // Probe: the staged files are created the same way.
        Self::temp_file(&dir, "probe").map_err(|source| OutputError::NotWritable {
            path: dir.clone(),
            source,
        })?;
        Ok(Self {
            dir,
            staged: Vec::new(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Deletes the hidden temporary files `.NAME.XXXXXX.tmp` (the names this type
    /// stages under) that a process killed before its commit left in the directory.
    /// Call it only while no other `OutputDir` of the same directory is staging: their
    /// files would go too. Returns the files deleted; one that cannot be deleted is
    /// left (it is hidden, and never renamed to a final name).
    pub fn remove_stale_temporaries(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| e.file_name().to_str().is_some_and(is_staged_name))
            .map(|e| e.path())
            .filter(|p| fs::remove_file(p).is_ok())
            .collect()
    }

    /// Checks that files `names` (plain file names) could be written in the directory:
    /// none of them exists as a directory. [`OutputDir::commit`] checks again.
    ///
    /// # Errors
    /// [`OutputError::BadFileName`] or [`OutputError::TargetIsDirectory`] for the first
    /// name that fails.
    pub fn check_targets(&self, names: &[&str]) -> Result<(), OutputError> {
        for name in names {
            Self::check_name(name)?;
            Self::check_target(&self.dir.join(name))?;
        }
        Ok(())
    }

    fn check_name(name: &str) -> Result<(), OutputError> {
        let plain = Path::new(name).file_name().is_some_and(|f| f == name);
        if plain {
            Ok(())
        } else {
            Err(OutputError::BadFileName { name: name.into() })
        }
    }

    /// A rename replaces a file or a symbolic link, but not a directory.
    fn check_target(path: &Path) -> Result<(), OutputError> {
        match fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => Err(OutputError::TargetIsDirectory {
                path: path.to_path_buf(),
            }),
            _ => Ok(()),
        }
    }

    /// Stages `bytes` as file `name`. Returns its final path.
    ///
    /// # Errors
    /// As [`OutputDir::stage_with`].
    pub fn stage_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        let path = self.dir.join(name);
        self.stage_with(
            name,
            |w| w.write_all(bytes),
            |_, source| OutputError::Write { path, source },
        )
    }

    /// Random characters in a staged file's name (`tempfile`'s default).
    const RANDOM_CHARS: usize = 6;

    fn temp_file(dir: &Path, name: &str) -> io::Result<NamedTempFile> {
        let prefix = format!(".{name}.");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix)
            .suffix(".tmp")
            .rand_bytes(Self::RANDOM_CHARS);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like a file made by `File::create` (the umask still applies), not 0600.
            b.permissions(fs::Permissions::from_mode(0o644));
        }
        b.tempfile_in(dir)
    }

    /// Stages file `name` (a plain file name) with contents written by `write`.
    /// Returns its final path.
    ///
    /// # Errors
    /// [`OutputError::BadFileName`], or [`OutputError::Write`] if the temporary file
    /// cannot be created, written or synced; `write`'s own errors are passed to
    /// `map_err` together with the final path.
    pub fn stage_with<E>(
        &mut self,
        name: &str,
        write: impl FnOnce(&mut BufWriter<&File>) -> Result<(), E>,
        map_err: impl FnOnce(PathBuf, E) -> OutputError,
    ) -> Result<PathBuf, OutputError> {
        Self::check_name(name)?;
        let path = self.dir.join(name);
        let io_err = |source| OutputError::Write {
            path: path.clone(),
            source,
        };
        let tmp = Self::temp_file(&self.dir, name).map_err(io_err)?;
        {
            let mut w = BufWriter::new(tmp.as_file());
            write(&mut w).map_err(|e| map_err(path.clone(), e))?;
            w.flush().map_err(io_err)?;
        }
        tmp.as_file().sync_all().map_err(io_err)?;
        self.staged.push((tmp, path.clone()));
        Ok(path)
    }

    /// Opens file `name` (a plain file name) for streaming: a hidden temporary file in
    /// the directory, written through a buffer. Hand it back with [`OutputDir::add`] to
    /// stage it; a [`StagedWriter`] dropped without being added deletes its file, and
    /// nothing appears under the final name before [`OutputDir::commit`].
    ///
    /// # Errors
    /// [`OutputError::BadFileName`], or [`OutputError::Write`] if the temporary file
    /// cannot be created.
    pub fn stage_stream(&self, name: &str) -> Result<StagedWriter, OutputError> {
        Self::check_name(name)?;
        let path = self.dir.join(name);
        let tmp = Self::temp_file(&self.dir, name).map_err(|source| OutputError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(StagedWriter {
            writer: BufWriter::new(tmp),
            path,
        })
    }

    /// Stages a file opened by [`OutputDir::stage_stream`]: flushes and syncs it, and
    /// adds it to the files [`OutputDir::commit`] renames (to the final path it was
    /// opened with). Returns that final path.
    ///
    /// # Errors
    /// [`OutputError::Write`] if flushing or syncing fails (the file is then deleted).
    pub fn add(&mut self, writer: StagedWriter) -> Result<PathBuf, OutputError> {
        let StagedWriter { writer, path } = writer;
        let io_err = |source| OutputError::Write {
            path: path.clone(),
            source,
        };
        let tmp = writer.into_inner().map_err(|e| io_err(e.into_error()))?;
        tmp.as_file().sync_all().map_err(io_err)?;
        self.staged.push((tmp, path.clone()));
        Ok(path)
    }

    /// Stages `value` as pretty-printed JSON file `name` (with a final newline).
    /// Returns its final path.
    ///
    /// # Errors
    /// As [`OutputDir::stage_with`], with [`OutputError::Json`] for serialiser errors.
    pub fn stage_json<S: Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &S,
    ) -> Result<PathBuf, OutputError> {
        self.stage_with(
            name,
            |w| {
                serde_json::to_writer_pretty(&mut *w, value)?;
                w.write_all(b"\n").map_err(serde_json::Error::io)
            },
            |path, source| OutputError::Json { path, source },
        )
    }

    /// Renames every staged file to its final name (replacing an existing file) and
    /// returns the final paths in staging order. Every target is checked before the
    /// first rename, so that the files of the directory stay those of one run.
    ///
    /// # Errors
    /// [`OutputError::TargetIsDirectory`] if a target is a directory (nothing is
    /// renamed); [`OutputError::Commit`] if a rename fails anyway, listing the files
    /// already replaced. The staged files not renamed are deleted.
    pub fn commit(mut self) -> Result<Vec<PathBuf>, OutputError> {
        for (_, path) in &self.staged {
            Self::check_target(path)?;
        }
        let mut done = Vec::with_capacity(self.staged.len());
        for (tmp, path) in self.staged.drain(..) {
            if let Err(e) = tmp.persist(&path) {
                return Err(OutputError::Commit {
                    path,
                    source: e.error,
                    replaced: done,
                });
            }
            done.push(path);
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    type R<X = ()> = Result<X, Box<dyn std::error::Error>>;

    fn read(path: &Path) -> R<String> {
        Ok(fs::read_to_string(path)?)
    }

    #[test]
    fn output_dir_commits_whole_files() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path().join("a/b");
        let mut out = OutputDir::create(&dir)?;
        out.stage_bytes("x.csv", b"t\n1.0\n")?;
        out.stage_json("s.json", &serde_json::json!({"k": 1}))?;
        // Nothing visible under the final names before the commit.
        assert!(!dir.join("x.csv").exists());
        let paths = out.commit()?;
        assert_eq!(paths, vec![dir.join("x.csv"), dir.join("s.json")]);
        assert_eq!(read(&dir.join("x.csv"))?, "t\n1.0\n");
        let v: serde_json::Value = serde_json::from_str(&read(&dir.join("s.json"))?)?;
        assert_eq!(v["k"], 1);
        let names = fs::read_dir(&dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
        Ok(())
    }

    #[test]
    fn streamed_files_appear_only_on_commit() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        let mut out = OutputDir::create(dir)?;
        let mut w = out.stage_stream("s.csv")?;
        assert_eq!(w.path(), dir.join("s.csv"));
        for i in 0..1000 {
            writeln!(w, "{i}")?;
        }
        let dropped = out.stage_stream("dropped.csv")?;
        drop(dropped);
        assert!(matches!(
            out.stage_stream("a/b"),
            Err(OutputError::BadFileName { .. })
        ));
        assert_eq!(out.add(w)?, dir.join("s.csv"));
        assert!(!dir.join("s.csv").exists());
        let paths = out.commit()?;
        assert_eq!(paths, vec![dir.join("s.csv")]);
        let text = read(&dir.join("s.csv"))?;
        assert_eq!(text.lines().count(), 1000);
        assert_eq!(fs::read_dir(dir)?.count(), 1, "no temporary files left");
        // Streamed but never committed: nothing is left.
        let mut out = OutputDir::create(dir.join("d"))?;
        let mut w = out.stage_stream("x.csv")?;
        writeln!(w, "x")?;
        out.add(w)?;
        drop(out);
        assert_eq!(fs::read_dir(dir.join("d"))?.count(), 0);
        Ok(())
    }

    #[test]
    fn output_dir_dropped_leaves_nothing() -> R {
        let root = tempfile::tempdir()?;
        let mut out = OutputDir::create(root.path())?;
        out.stage_json("s.json", &[1, 2])?;
        drop(out);
        assert_eq!(fs::read_dir(root.path())?.count(), 0);
        Ok(())
    }

    #[test]
    fn output_dir_rejects_files_and_bad_names() -> R {
        let root = tempfile::tempdir()?;
        let file = root.path().join("f");
        fs::write(&file, "x")?;
        assert!(matches!(
            OutputDir::create(&file),
            Err(OutputError::NotADirectory { .. })
        ));
        assert!(matches!(
            OutputDir::create(file.join("sub")),
            Err(OutputError::CreateDir { .. })
        ));
        let mut out = OutputDir::create(root.path().join("d"))?;
        for bad in ["", ".", "..", "a/b"] {
            assert!(matches!(
                out.stage_json(bad, &1),
                Err(OutputError::BadFileName { .. })
            ));
        }
        Ok(())
    }

    #[test]
    fn times_do_not_drift() {
        // Plain f64/f32 arithmetic drifts; step_time does not, at any magnitude.
        assert_ne!(9.0 * 0.001, 0.009);
        assert_eq!(step_time(0.0, 9, 0.001), 0.009);
        assert_eq!(step_time(0.0, 300, 0.001), 0.3);
        assert_eq!(step_time(0.0, 3, 0.1), 0.3);
        assert_eq!(step_time(0.0, 4_512_458, 0.001), 4512.458);
        assert_eq!(step_time(0.0, 10_000_001, 0.001), 10000.001);
        assert_eq!(step_time(0.0, 0, 0.001), 0.0);
        assert_eq!(step_time(1.5, 2, 0.25), 2.0);
        assert_eq!(step_time(0.1, 2, 0.1), 0.3);
        assert_eq!(step_time(0.0, 7, 1e-15), 7e-15);
        assert_eq!(step_time(0.0, 3, 1e-300), 3e-300);
        assert_eq!(step_time(0.0, 11, 2.5e10), 2.75e11);
        // Falls back to f64 arithmetic when the decimals do not fit.
        assert_eq!(step_time(1.0, 1, 1e-300), 1.0);
        assert!(step_time(0.0, 1, f64::NAN).is_nan());
        for k in 0..2000u64 {
            let t = step_time(0.0, k, 0.001);
            let s = t.to_string();
            assert!(s.split('.').nth(1).is_none_or(|f| f.len() <= 3), "{s}");
        }
    }

    #[test]
    fn commit_checks_every_target_before_renaming() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        fs::write(dir.join("a.csv"), "old a")?;
        fs::create_dir(dir.join("b.csv"))?;
        let mut out = OutputDir::create(dir)?;
        assert!(matches!(
            out.check_targets(&["a.csv", "b.csv"]),
            Err(OutputError::TargetIsDirectory { .. })
        ));
        out.stage_json("a.csv", &1)?;
        out.stage_json("b.csv", &2)?;
        let e = out.commit().unwrap_err();
        assert!(matches!(e, OutputError::TargetIsDirectory { .. }), "{e}");
        assert!(e.to_string().contains("b.csv"), "{e}");
        assert_eq!(read(&dir.join("a.csv"))?, "old a", "nothing was replaced");
        assert!(dir.join("b.csv").is_dir());
        assert_eq!(fs::read_dir(dir)?.count(), 2, "no temporary files left");
        Ok(())
    }

    #[test]
    fn commit_failing_midway_names_the_replaced_files() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        let mut out = OutputDir::create(dir)?;
        out.stage_json("a.json", &1)?;
        out.stage_json("b.json", &2)?;
        // Make the second rename fail after the checks: its staged file vanishes.
        fs::remove_file(out.staged[1].0.path())?;
        let e = out.commit().unwrap_err();
        let OutputError::Commit { path, replaced, .. } = &e else {
            panic!("expected a commit error, got {e}");
        };
        assert_eq!(path, &dir.join("b.json"));
        assert_eq!(replaced, &vec![dir.join("a.json")]);
        let msg = e.to_string();
        assert!(
            msg.contains("b.json") && msg.contains("already replaced"),
            "{msg}"
        );
        assert!(msg.contains("a.json"), "{msg}");
        assert_eq!(read(&dir.join("a.json"))?, "1\n");
        Ok(())
    }
}
