//! When a snapshot may be restarted (DESIGN.md §4): small pure functions over recorded facts,
//! each answering "yes" or "no, because …".

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::stop::snapshot::{Snapshot, SnapshotMember};
use crate::stop::ResourceResult;

/// The member to restart: the root. A member whose title was rewritten (`next-server (v…)`)
/// is never the target — its parent command, the root, is.
pub fn target(s: &Snapshot) -> Option<&SnapshotMember> {
    s.members.iter().find(|m| m.identity == s.root)
}

/// Only a complete stop may be undone by a restart: a partial one left something running.
pub fn stop_was_complete(s: &Snapshot) -> Result<(), String> {
    match (s.signalled, s.result) {
        (Some(true), Some(ResourceResult::Stopped)) => Ok(()),
        (_, Some(ResourceResult::PartiallyStopped)) => {
            Err("the stop was partial: part of it may still run".into())
        }
        (_, Some(ResourceResult::Refused | ResourceResult::Failed)) | (Some(false), _) => {
            Err("nothing was stopped, so there is nothing to restart".into())
        }
        (_, None) | (None, _) => Err("the stop never finished recording its outcome".into()),
    }
}

/// `KEY=value` lines of the recorded environment, split at the first `=`.
pub fn env_pairs(env: &[Vec<u8>]) -> Vec<(&OsStr, &OsStr)> {
    env.iter()
        .filter_map(|kv| {
            let eq = kv.iter().position(|&b| b == b'=')?;
            Some((
                OsStr::from_bytes(&kv[..eq]),
                OsStr::from_bytes(&kv[eq + 1..]),
            ))
        })
        .collect()
}

fn is_executable_file(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// argv[0] resolved as the shell would, but by Pier, from recorded facts only: with a `/`,
/// joined to the recorded cwd; else searched in the recorded `PATH`.
pub fn resolve_program(arg0: &[u8], cwd: &Path, env: &[Vec<u8>]) -> Result<PathBuf, String> {
    let shown = String::from_utf8_lossy(arg0);
    if arg0.is_empty() {
        return Err("the recorded command is empty".into());
    }
    if arg0.contains(&b'/') {
        let p = cwd.join(OsStr::from_bytes(arg0));
        return if is_executable_file(&p) {
            Ok(p)
        } else {
            Err(format!("the program {} is gone", p.display()))
        };
    }
    let path = env_pairs(env)
        .into_iter()
        .find(|(k, _)| k.as_bytes() == b"PATH")
        .map(|(_, v)| v.as_bytes().to_vec())
        .ok_or_else(|| format!("{shown} has no folder and the recorded environment has no PATH"))?;
    path.split(|&b| b == b':')
        .map(|dir| {
            let dir = if dir.is_empty() {
                cwd.to_path_buf()
            } else {
                cwd.join(OsStr::from_bytes(dir))
            };
            dir.join(OsStr::from_bytes(arg0))
        })
        .find(|p| is_executable_file(p))
        .ok_or_else(|| format!("the program {shown} is not in the recorded PATH any more"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_against_the_recorded_cwd_and_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = vec![format!("PATH=/nonexistent:{}", bin.display()).into_bytes()];
        assert_eq!(resolve_program(b"tool", dir.path(), &env).unwrap(), tool);
        assert_eq!(resolve_program(b"bin/tool", dir.path(), &[]).unwrap(), tool);
        assert_eq!(
            resolve_program(b"./bin/tool", dir.path(), &[]).unwrap(),
            dir.path().join("./bin/tool")
        );
        assert!(resolve_program(b"tool", dir.path(), &[])
            .unwrap_err()
            .contains("no PATH"));
        assert!(resolve_program(b"gone", dir.path(), &env).is_err());
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            resolve_program(b"bin/tool", dir.path(), &[]).is_err(),
            "not executable"
        );
    }

    #[test]
    fn environment_lines_split_at_the_first_equals_sign() {
        let env = vec![b"A=1=2".to_vec(), b"EMPTY=".to_vec(), b"junk".to_vec()];
        let pairs = env_pairs(&env);
        assert_eq!(pairs.len(), 2);
        assert_eq!(pairs[0], (OsStr::new("A"), OsStr::new("1=2")));
        assert_eq!(pairs[1], (OsStr::new("EMPTY"), OsStr::new("")));
    }
}
