//! Which project a resource belongs to: the nearest folder, walking up from the root's cwd,
//! that holds a project marker. `$HOME` and `/` are never projects (a dotfiles repo in `$HOME`
//! would otherwise swallow every stray process).

use std::path::{Path, PathBuf};

use crate::trust::{judge, Entry, Me};

/// Files or folders that make a folder a project, in the order they are reported.
pub const MARKERS: &[&str] = &[
    ".git",
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "go.mod",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "deno.json",
];

/// A project folder and the marker that made it one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDir {
    /// The project folder.
    pub path: PathBuf,
    /// The marker found in it, one of [`MARKERS`] (the first in their order).
    pub marker: &'static str,
}

/// The real filesystem's answer to "which marker does this folder hold?". A marker counts
/// only when it and its folder are the user's (or root's) and no one else can write the
/// folder (`trust::judge`): another user's `package.json` in `/tmp` would otherwise make every
/// process of the user's that works in `/tmp` a candidate.
pub fn marker_on_disk(dir: &Path) -> Option<&'static str> {
    let me = Me::current();
    let entry = |p: &Path| Entry::at(p).ok();
    judge(dir, &entry(dir)?, None, me).ok()?;
    MARKERS.iter().copied().find(|m| {
        let marker = dir.join(m);
        entry(&marker).is_some_and(|e| judge(&marker, &e, None, me).is_ok())
    })
}

/// The nearest project holding `cwd`, nearest first. `marker_at` answers for one folder.
pub fn find_project(
    cwd: &Path,
    home: Option<&Path>,
    marker_at: &dyn Fn(&Path) -> Option<&'static str>,
) -> Option<ProjectDir> {
    cwd.ancestors()
        .filter(|dir| dir.parent().is_some() && Some(*dir) != home)
        .find_map(|dir| {
            marker_at(dir).map(|marker| ProjectDir {
                path: dir.to_path_buf(),
                marker,
            })
        })
}

/// Whether `path` lies inside one of `roots` (or no roots were given).
pub fn is_under(path: &Path, roots: &[PathBuf]) -> bool {
    roots.is_empty() || roots.iter().any(|r| path.starts_with(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markers(
        dirs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&Path) -> Option<&'static str> {
        move |d: &Path| {
            dirs.iter()
                .find(|(p, _)| Path::new(p) == d)
                .map(|(_, m)| *m)
        }
    }

    #[test]
    fn the_nearest_marked_folder_is_the_project() {
        let m = markers(&[("/h/u/mono", ".git"), ("/h/u/mono/web", "package.json")]);
        let p = find_project(Path::new("/h/u/mono/web/src"), Some(Path::new("/h/u")), &m).unwrap();
        assert_eq!(p.path, Path::new("/h/u/mono/web"));
        assert_eq!(p.marker, "package.json");
    }

    #[test]
    fn home_and_root_are_never_projects() {
        let m = markers(&[("/h/u", ".git"), ("/", "package.json")]);
        assert_eq!(
            find_project(Path::new("/h/u/scratch"), Some(Path::new("/h/u")), &m),
            None
        );
        assert_eq!(find_project(Path::new("/"), None, &m), None);
    }

    #[test]
    fn no_marker_means_no_project() {
        let m = markers(&[]);
        assert_eq!(find_project(Path::new("/tmp/x"), None, &m), None);
    }

    #[test]
    fn under_matches_whole_path_components() {
        let roots = vec![PathBuf::from("/tmp/a")];
        assert!(is_under(Path::new("/tmp/a/p"), &roots));
        assert!(!is_under(Path::new("/tmp/ab/p"), &roots));
        assert!(is_under(Path::new("/anything"), &[]));
    }

    #[test]
    fn the_disk_check_sees_a_real_marker() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(marker_on_disk(dir.path()), None);
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(marker_on_disk(dir.path()), Some("Cargo.toml"));
    }

    /// A folder anyone may write (`/tmp`) holds no project, whoever's the marker: another
    /// user could have planted it. Nor does a marker another user owns.
    #[test]
    fn a_marker_counts_only_in_a_folder_no_one_else_can_write() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        let chmod = |mode| {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        chmod(0o1777);
        assert_eq!(marker_on_disk(dir.path()), None, "sticky, like /tmp");
        chmod(0o757);
        assert_eq!(marker_on_disk(dir.path()), None);
        chmod(0o755);
        assert_eq!(marker_on_disk(dir.path()), Some("package.json"));
        // Handing a file to another user needs root; elsewhere this part says so and stops.
        if std::os::unix::fs::chown(dir.path().join("package.json"), Some(65534), None).is_err() {
            eprintln!("skipped: only root can hand a file to another user");
            return;
        }
        assert_eq!(marker_on_disk(dir.path()), None, "another user's marker");
    }
}
