use super::*;
use crate::probe::fake::process;

fn named(argv: &[&str], comm: &str) -> (String, ClientKind) {
    let mut p = process(300, 1, argv);
    p.comm = comm.to_owned();
    program_of(&p)
}

#[test]
fn a_client_is_named_by_its_program_file_name() {
    assert_eq!(
        named(&["/usr/bin/curl", "-s", "http://127.0.0.1:8000/"], "curl"),
        ("curl".into(), ClientKind::HttpClient)
    );
    assert_eq!(
        named(&["/opt/google/chrome/chrome", "--type=utility"], "chrome"),
        ("chrome".into(), ClientKind::Browser)
    );
}

#[test]
fn an_interpreters_script_names_the_client() {
    assert_eq!(
        named(&["/usr/bin/python3", "-m", "pytest", "-x"], "python3"),
        ("pytest".into(), ClientKind::TestRunner)
    );
    assert_eq!(
        named(
            &["node", "/p/node_modules/vitest/vitest.mjs", "run"],
            "node"
        ),
        ("vitest".into(), ClientKind::TestRunner)
    );
}

#[test]
fn a_macos_helper_is_named_without_its_role() {
    assert_eq!(
        named(
            &["/Applications/Google Chrome.app/x/Google Chrome Helper (Renderer)"],
            "Google Chrome He"
        ),
        ("Google Chrome Helper".into(), ClientKind::Browser)
    );
}

#[test]
fn a_name_inside_the_command_line_is_no_client() {
    // `grep curl` is grep, whatever it searches for.
    assert_eq!(
        named(&["/usr/bin/grep", "curl", "chrome"], "grep"),
        ("grep".into(), ClientKind::Unknown)
    );
    assert_eq!(
        named(&["/usr/bin/python3", "/srv/chrome_client.py"], "python3"),
        ("chrome_client.py".into(), ClientKind::Unknown)
    );
}

#[test]
fn another_users_client_is_named_by_its_kernel_name_only() {
    let mut p = process(300, 1, &["/usr/bin/curl", "-H", "Authorization: secret"]);
    p.comm = "curl".into();
    p.uid = 1001;
    let c = client_of(&p, 1000);
    assert!(c.other_user);
    assert_eq!(c.program, "curl");
    assert_eq!(c.command, None);
    let own = client_of(&p, 1001);
    assert_eq!(
        own.command.as_deref(),
        Some("curl -H Authorization: secret")
    );
}
