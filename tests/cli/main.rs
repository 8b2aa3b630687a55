//! Integration tests of the program and the experiment pipeline (feature `cli`): the
//! built `lie-xpbd` run as a child process (`run`, `sweep`, `reproduce*`; helpers in
//! `cli_common`) and the pipeline's outputs (`pipeline_*`): one test binary
//! (`cargo test --test cli`), one module per topic.

mod cli_common;

mod pipeline_compare;
mod pipeline_plot;
mod pipeline_vtk;
mod reproduce;
mod reproduce_cantilever;
mod reproduce_f32;
mod reproduce_figure11;
mod reproduce_interrupted;
mod reproduce_shear_locking;
mod reproduce_spring;
mod run;
mod sweep;
