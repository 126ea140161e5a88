//! When a snapshot may be restarted (docs/design.md §4): small pure functions over recorded facts,
//! each answering "yes" or "no, because …".

use super::error::NotRestartable;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::diagnose::kinds::chain;
use crate::model::outcome::ResourceResult;
use crate::model::snapshot::{Snapshot, SnapshotMember};

/// What a recorded argv is to a restart: a command, or a title never exec'd (see
/// [`chain::ArgvIs`]).
fn argv_is(m: &SnapshotMember) -> chain::ArgvIs {
    let argv: Vec<&[u8]> = m.argv.iter().map(|a| a.0.as_slice()).collect();
    chain::ArgvIs::of(&argv)
}

/// The member to restart: the root, or below a root that rewrote its title, the member whose
/// command brings the whole tree back (see [`chain::restart_target`]; npm's `sh -c`).
pub fn target(s: &Snapshot) -> Result<&SnapshotMember, NotRestartable> {
    let root = s
        .members
        .iter()
        .position(|m| m.identity == s.root)
        .ok_or(NotRestartable::RootNotRecorded)?;
    let nodes: Vec<chain::Node> = s
        .members
        .iter()
        .map(|m| chain::Node {
            pid: m.identity.pid,
            ppid: m.ppid,
            argv: argv_is(m),
        })
        .collect();
    match chain::restart_target(&nodes, root) {
        Ok(i) => Ok(&s.members[i]),
        Err(chain::NoTarget::Lost(i)) => Err(NotRestartable::CommandLost(nodes[i].pid)),
        Err(chain::NoTarget::Several(i)) => Err(NotRestartable::SeveralCommands(nodes[i].pid)),
    }
}

/// What a file would be exec'd as. Anything else would make `execvp` fall back to running it
/// with `/bin/sh` — a shell Pier did not mean to run.
pub fn is_directly_executable(head: &[u8]) -> bool {
    const MAGICS: &[&[u8]] = &[
        b"\x7fELF",
        b"#!",
        &[0xfe, 0xed, 0xfa, 0xce],
        &[0xfe, 0xed, 0xfa, 0xcf],
        &[0xce, 0xfa, 0xed, 0xfe],
        &[0xcf, 0xfa, 0xed, 0xfe],
        &[0xca, 0xfe, 0xba, 0xbe],
    ];
    MAGICS.iter().any(|m| head.starts_with(m))
}

/// The recorded executable without the kernel's " (deleted)" suffix.
pub fn recorded_exe(m: &SnapshotMember) -> PathBuf {
    let raw = m.exe.0.strip_suffix(b" (deleted)").unwrap_or(&m.exe.0);
    PathBuf::from(OsStr::from_bytes(raw))
}

/// Only a complete stop may be undone by a restart: a partial one left something running.
pub fn stop_was_complete(s: &Snapshot) -> Result<(), NotRestartable> {
    match (s.signalled, s.result) {
        (Some(true), Some(ResourceResult::Stopped)) => Ok(()),
        // Reconciled after Pier ended mid-stop (`stop/reconcile.rs`): whether a signal went out
        // is unknown, but every member is gone, which is what a restart needs.
        (None, Some(ResourceResult::Stopped)) if s.reconciled_at.is_some() => Ok(()),
        (_, Some(ResourceResult::PartiallyStopped)) => Err(NotRestartable::Partial),
        (_, Some(ResourceResult::NotStopped)) => Err(NotRestartable::NotStopped),
        // A dry run writes no record; a record that says so stopped nothing either.
        (_, Some(ResourceResult::Refused | ResourceResult::Failed | ResourceResult::WouldStop))
        | (Some(false), _) => Err(NotRestartable::NothingStopped),
        (_, None) | (None, _) => Err(NotRestartable::NeverRecorded),
    }
}

/// A kind its client starts on demand (an MCP server, a headless browser, a language server:
/// `family`, `kinds::family` outside tests) is never restarted from a snapshot: its
/// client starts one again when it needs one, and one started here would talk to no one. A
/// snapshot written before kinds were kept names none: it restarts as before.
pub fn not_started_by_its_client(
    s: &Snapshot,
    family: impl Fn(&str) -> crate::diagnose::kinds::Family,
) -> Result<(), NotRestartable> {
    match s.kind.as_deref().map(|k| (k, family(k))) {
        Some((kind, f)) if f.started_by_its_client() => Err(NotRestartable::StartedByItsClient {
            kind: kind.to_owned(),
            family: f.describe(),
        }),
        _ => Ok(()),
    }
}

/// A program a process manager ran (stopped with Force, docs/design.md §2.9) is its
/// manager's to start again: Pier would run it outside the manager, with the manager's
/// variables in its environment, and the manager could start it a second time.
pub fn not_a_managers(s: &Snapshot) -> Result<(), NotRestartable> {
    let Some(m) = s.managed_by.as_ref().filter(|m| m.started_it()) else {
        return Ok(());
    };
    Err(NotRestartable::Managers {
        manager: m.manager.clone(),
        program: m.program.clone(),
    })
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
pub fn resolve_program(
    arg0: &[u8],
    cwd: &Path,
    env: &[Vec<u8>],
) -> Result<PathBuf, NotRestartable> {
    let shown = String::from_utf8_lossy(arg0);
    if arg0.is_empty() {
        return Err(NotRestartable::EmptyCommand);
    }
    if arg0.contains(&b'/') {
        let p = cwd.join(OsStr::from_bytes(arg0));
        return if is_executable_file(&p) {
            Ok(p)
        } else {
            Err(NotRestartable::ProgramGone(p))
        };
    }
    let path = env_pairs(env)
        .into_iter()
        .find(|(k, _)| k.as_bytes() == b"PATH")
        .map(|(_, v)| v.as_bytes().to_vec())
        .ok_or_else(|| NotRestartable::NoPath(shown.clone().into_owned()))?;
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
        .ok_or_else(|| NotRestartable::NotInPath(shown.into_owned()))
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
        assert_eq!(
            resolve_program(b"tool", dir.path(), &[]).unwrap_err(),
            NotRestartable::NoPath("tool".into())
        );
        assert!(resolve_program(b"gone", dir.path(), &env).is_err());
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            resolve_program(b"bin/tool", dir.path(), &[]).is_err(),
            "not executable"
        );
    }

    #[test]
    fn only_real_programs_are_directly_executable() {
        assert!(is_directly_executable(b"\x7fELF\x02\x01"));
        assert!(is_directly_executable(b"#!/usr/bin/env node\n"));
        assert!(is_directly_executable(&[0xcf, 0xfa, 0xed, 0xfe, 7]));
        assert!(
            !is_directly_executable(b"echo hi\n"),
            "execvp would hand this to /bin/sh"
        );
        assert!(!is_directly_executable(b""));
    }

    fn member(argv: &[&str]) -> SnapshotMember {
        use crate::model::bytes::ByteString;
        SnapshotMember {
            identity: crate::model::Identity {
                pid: 1,
                start_time: 1,
            },
            ppid: 0,
            uid: 0,
            argv: argv
                .iter()
                .map(|a| ByteString(a.as_bytes().to_vec()))
                .collect(),
            env: None,
            exe: ByteString(b"/usr/bin/node (deleted)".to_vec()),
            cwd: None,
            memory: None,
        }
    }

    #[test]
    fn rewritten_titles_are_told_from_commands() {
        use chain::ArgvIs::{Command, LauncherTitle, Title};
        assert_eq!(argv_is(&member(&["npm run dev"])), LauncherTitle);
        assert_eq!(argv_is(&member(&["next-server (v14.2.0)"])), Title);
        assert_eq!(
            argv_is(&member(&["node", "", ""])),
            Title,
            "padding left by a title"
        );
        assert_eq!(argv_is(&member(&["sh", "-c", "vite; true"])), Command);
        assert_eq!(argv_is(&member(&["vite"])), Command);
        assert_eq!(recorded_exe(&member(&["x"])), Path::new("/usr/bin/node"));
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
