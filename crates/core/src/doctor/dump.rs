//! `pier doctor --dump DIR`: the raw OS buffers the probe decodes, read from the doctor's own
//! test process, written as files with a manifest of what the process was started with, so
//! the first run on a new OS release gives the decoders real fixtures. The test process runs
//! with [`super::CHILD_ENV`] only: nothing of the user's is in them.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::fault::Fault;
use crate::probe::{self, Pid};

/// What the test process was started with: what its buffers must decode to.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Facts {
    pub pid: Pid,
    pub argv: Vec<String>,
    pub env: Vec<String>,
    pub cwd: String,
    pub exe: String,
    pub port: u16,
    pub client_port: u16,
}

#[derive(Serialize)]
struct Manifest<'a> {
    schema: u32,
    version: &'static str,
    os: String,
    started_with: &'a Facts,
    /// Each buffer: its file, or why it could not be read.
    buffers: Vec<Entry>,
}

#[derive(Serialize)]
struct Entry {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Writes the buffers of `facts.pid` and `manifest.json` into `dir` (created if missing).
pub(super) fn write(dir: &Path, facts: &Facts) -> Result<PathBuf, Fault> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Fault::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut buffers = Vec::new();
    for (name, read) in probe::raw::buffers(facts.pid) {
        let entry = match read {
            Ok(bytes) => {
                let file = format!("{name}.bin");
                std::fs::write(dir.join(&file), &bytes).map_err(io(&dir.join(&file)))?;
                Entry {
                    name,
                    file: Some(file),
                    bytes: Some(bytes.len()),
                    error: None,
                }
            }
            Err(e) => Entry {
                name,
                file: None,
                bytes: None,
                error: Some(e.to_string()),
            },
        };
        buffers.push(entry);
    }
    let manifest = Manifest {
        schema: crate::model::doctor::DOCTOR_SCHEMA,
        version: env!("CARGO_PKG_VERSION"),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        started_with: facts,
        buffers,
    };
    let text = serde_json::to_string_pretty(&manifest)?;
    let path = dir.join("manifest.json");
    std::fs::write(&path, text + "\n").map_err(io(&path))?;
    Ok(dir.to_path_buf())
}
