//! The end of a run: earlier results merged (`--merge`) and the chart written (`--plot`).

use std::path::{Path, PathBuf};

use super::report::BenchReport;
use super::{BenchError, plot, setting};

/// Reads earlier `--json` outputs and puts their configurations together.
pub fn merge(files: &[PathBuf]) -> Result<BenchReport, BenchError> {
    let mut merged: Option<BenchReport> = None;
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| BenchError::File {
            what: "--merge",
            path: f.clone(),
            reason: e.to_string(),
        })?;
        let r: BenchReport = serde_json::from_str(&text).map_err(|e| BenchError::File {
            what: "--merge",
            path: f.clone(),
            reason: format!("not a `sluice bench --json` output: {e}"),
        })?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => {
                m.machine.load_end = r.machine.load_end;
                m.configs.extend(r.configs);
            }
        }
    }
    merged.ok_or_else(|| setting("--merge", "no file given"))
}

/// Writes the chart of `report` to `path`.
pub fn write_plot(
    report: &BenchReport,
    title: Option<&str>,
    path: &Path,
) -> Result<(), BenchError> {
    let s = &report.settings;
    let default_title = format!("{} loss vs offered load", s.transport.to_uppercase());
    let m = &report.machine;
    let load = m
        .load_start
        .map(|l| format!(", load {:.2}", l[0]))
        .unwrap_or_default();
    let subtitle = format!(
        "{}, {} s per step, {} · {} cores{load}",
        s.describe_messages(),
        s.duration_secs,
        s.sender.describe(),
        m.cores
    );
    let svg = plot::svg(title.unwrap_or(&default_title), &subtitle, &report.configs);
    std::fs::write(path, svg).map_err(|e| BenchError::File {
        what: "--plot",
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}
