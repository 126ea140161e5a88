//! `KERN_PROCARGS2` buffers built the way XNU writes them, and what the decoder makes of them.
//!
//! The writer below follows the kernel step by step (XNU xnu-11417, `bsd/kern/kern_exec.c` and
//! `bsd/kern/kern_sysctl.c`), so a fixture has the padding, the apple strings and the cuts a
//! real Mac gives:
//! - `exec_save_path` puts `executable_path=` and the path first; `exec_extract_strings` pads
//!   it with NULs to a pointer boundary, copies argv then envp, and pads the end of envp to a
//!   pointer boundary again; `exec_add_apple_strings` appends the apple strings, `pfz=` first,
//!   and pads their end.
//! - `sysctl_procargsx` drops the `executable_path=` key, puts argc in front, and, when it
//!   withholds the environment (`omit_env_vars`), ends the copy right after argv's last NUL.

use super::*;

const PTR: usize = 8;
const EXECUTABLE_KEY: &[u8] = b"executable_path=";

/// What a process was exec'd with.
struct Exec<'a> {
    path: &'a [u8],
    argv: &'a [&'a [u8]],
    envp: &'a [&'a [u8]],
}

/// The apple strings a 64-bit process gets, in the kernel's order.
const APPLE: &[&[u8]] = &[
    b"pfz=0x7ffffff80000",
    b"stack_guard=0x8d9e5c5bd6f40055",
    b"malloc_entropy=0x2e2b7a5d3a1d8e11,0x5b1f0d97aa2c3e44",
    b"ptr_munge=0x1c7e3bf2a9d04e55",
    b"main_stack=0x16f5d4000,0x800000,0x16b5d4000,0x4000000",
    b"executable_file=0x1a01000004,0x3c0f8a1",
    b"dyld_file=0x1a01000004,0xfffffff0000a2b3",
    b"executable_cdhash=5f6b0a4bcfcc4a4c0e2d1b8b8a5c2d6f8e1d9c7a",
    b"th_port=0x103",
];

fn pad_to_pointer(area: &mut Vec<u8>) {
    while !area.len().is_multiple_of(PTR) {
        area.push(0);
    }
}

fn push_string(area: &mut Vec<u8>, s: &[u8]) {
    area.extend_from_slice(s);
    area.push(0);
}

/// The strings area as `exec_copyout_strings` leaves it on the new process's stack.
fn strings_area(exec: &Exec) -> (Vec<u8>, usize) {
    let mut area = EXECUTABLE_KEY.to_vec();
    push_string(&mut area, exec.path);
    pad_to_pointer(&mut area);
    for a in exec.argv {
        push_string(&mut area, a);
    }
    let end_of_argv = area.len();
    for e in exec.envp {
        push_string(&mut area, e);
    }
    pad_to_pointer(&mut area);
    for s in APPLE {
        push_string(&mut area, s);
    }
    pad_to_pointer(&mut area);
    (area, end_of_argv)
}

/// What `sysctl(KERN_PROCARGS2)` copies out; `withhold` is `omit_env_vars`.
fn procargs2(exec: &Exec, withhold: bool) -> Vec<u8> {
    let (area, end_of_argv) = strings_area(exec);
    let area = &area[EXECUTABLE_KEY.len()..];
    let end = if withhold {
        end_of_argv - EXECUTABLE_KEY.len()
    } else {
        area.len()
    };
    let argc = i32::try_from(exec.argv.len()).unwrap();
    let mut out = argc.to_ne_bytes().to_vec();
    out.extend_from_slice(&area[..end]);
    out
}

fn owned(strings: &[&[u8]]) -> Vec<Vec<u8>> {
    strings.iter().map(|s| s.to_vec()).collect()
}

const VITE: Exec = Exec {
    path: b"/opt/homebrew/bin/node",
    argv: &[b"node", b"/Users/me/shop/node_modules/.bin/vite"],
    envp: &[
        b"PATH=/opt/homebrew/bin:/usr/bin",
        b"HOME=/Users/me",
        b"TERM=xterm-256color",
    ],
};

#[test]
fn argv_and_the_environment_end_at_the_apple_strings() {
    let p = parse_procargs2(&procargs2(&VITE, false)).unwrap();
    assert_eq!(p.exec_path, b"/opt/homebrew/bin/node");
    assert_eq!(p.argv, owned(VITE.argv));
    assert_eq!(p.env, Ok(owned(VITE.envp)));
}

#[test]
fn every_path_and_environment_length_pads_the_same_way() {
    // Each length lands the padding (0 to 7 NULs) somewhere else: after the path, after envp.
    for n in 0..=PTR {
        let path = [b"/bin/".as_slice(), &vec![b'p'; n]].concat();
        let var = [b"A=".as_slice(), &vec![b'v'; n]].concat();
        let exec = Exec {
            path: &path,
            argv: &[b"p", b""],
            envp: &[&var],
        };
        let p = parse_procargs2(&procargs2(&exec, false)).unwrap();
        assert_eq!(p.exec_path, path);
        // An empty argument is an argument: argc counts it.
        assert_eq!(p.argv, vec![b"p".to_vec(), Vec::new()], "path length {n}");
        assert_eq!(p.env, Ok(vec![var.clone()]), "variable length {n}");
    }
}

#[test]
fn an_empty_environment_is_empty_not_withheld() {
    // `env -i node server.js`: argv, padding, then `pfz=` at once.
    let exec = Exec { envp: &[], ..VITE };
    let p = parse_procargs2(&procargs2(&exec, false)).unwrap();
    assert_eq!(p.env, Ok(Vec::new()));
}

#[test]
fn a_withheld_environment_is_withheld_not_empty() {
    let p = parse_procargs2(&procargs2(&VITE, true)).unwrap();
    assert_eq!(p.argv, owned(VITE.argv), "argv is still given");
    assert_eq!(p.env, Err(EnvGap::Withheld));
    // Whatever it had: an empty environment withheld reads the same, never as `Ok([])`.
    let bare = Exec { envp: &[], ..VITE };
    assert_eq!(
        parse_procargs2(&procargs2(&bare, true)).unwrap().env,
        Err(EnvGap::Withheld)
    );
    assert!(EnvGap::Withheld.to_string().contains("restart"));
}

#[test]
fn an_environment_cut_before_the_apple_strings_is_not_trusted() {
    let whole = procargs2(&VITE, false);
    let pfz = whole
        .windows(4)
        .position(|w| w == b"pfz=")
        .expect("the writer puts pfz= after the environment");
    let after_argv = procargs2(&VITE, true).len();
    // Every cut between the first variable and `pfz=` (inside a variable, on its NUL, in the
    // padding) leaves strings with no apple string after them.
    for cut in after_argv + 1..=pfz {
        let p = parse_procargs2(&whole[..cut]).unwrap();
        assert_eq!(p.env, Err(EnvGap::CutShort), "cut at {cut}");
    }
    // Once `pfz=` is whole (up to its NUL), so is the environment.
    let pfz_end = pfz + whole[pfz..].iter().position(|&b| b == 0).unwrap() + 1;
    for cut in pfz_end..whole.len() {
        assert_eq!(
            parse_procargs2(&whole[..cut]).unwrap().env,
            Ok(owned(VITE.envp)),
            "cut at {cut}"
        );
    }
}

#[test]
fn a_variable_named_like_a_nano_zone_setting_is_kept() {
    let exec = Exec {
        envp: &[b"MallocNanoZone=0", b"LANG=C"],
        ..VITE
    };
    let p = parse_procargs2(&procargs2(&exec, false)).unwrap();
    assert_eq!(p.env, Ok(owned(exec.envp)));
}

#[test]
fn odd_bytes_in_argv_and_environment_are_kept() {
    let exec = Exec {
        path: b"/bin/x",
        argv: &[b"x\xff", b"--name=caf\xc3\xa9"],
        envp: &[b"A=\xfe"],
    };
    let p = parse_procargs2(&procargs2(&exec, false)).unwrap();
    assert_eq!(p.argv, owned(exec.argv));
    assert_eq!(p.env, Ok(owned(exec.envp)));
}

#[test]
fn truncated_and_hostile_buffers_are_errors() {
    assert!(parse_procargs2(b"").is_err());
    assert!(parse_procargs2(&[1, 0]).is_err());
    assert!(
        parse_procargs2(&(-1i32).to_ne_bytes()).is_err(),
        "negative argc"
    );
    let mut no_nul = 1i32.to_ne_bytes().to_vec();
    no_nul.extend_from_slice(b"/bin/x");
    assert!(parse_procargs2(&no_nul).is_err(), "unterminated path");
    // Cut anywhere inside argv: an error, never a shorter argv.
    let whole = procargs2(&VITE, true);
    let argv_start = 4 + b"/opt/homebrew/bin/node".len() + 2;
    for cut in argv_start..whole.len() {
        assert!(parse_procargs2(&whole[..cut]).is_err(), "cut at {cut}");
    }
    let mut huge = procargs2(&VITE, false);
    huge[..4].copy_from_slice(&i32::MAX.to_ne_bytes());
    assert!(
        parse_procargs2(&huge).is_err(),
        "a huge argc neither allocates nor panics"
    );
}
