//! The experiment pipeline behind the `lie-xpbd` program (feature `cli`, on by
//! default): output files written whole or not at all, recording channels, summaries,
//! plots, ParaView files, comparisons and sweeps. Every experiment is a scene file run
//! through this one path.

pub mod commands;
pub mod compare;
pub mod files;
pub mod jacobians;
pub mod plot;
pub mod record;
pub mod reproduce;
pub mod run;
pub mod sweep;
pub mod vtk;
