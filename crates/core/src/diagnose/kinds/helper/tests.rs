//! The helper table, against argv shapes seen from real launchers.
use super::helper_of;

fn helper(args: &[&str]) -> Option<&'static str> {
    let argv: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    helper_of(&argv)
}

#[test]
fn notebook_kernels_are_known_as_their_launchers_start_them() {
    // jupyter_server 2.21 with ipykernel 7.4 (the real-tools suite's JupyterLab 4.6.6), as
    // `/proc/<pid>/cmdline` showed it: the kernelspec's "python" replaced by the venv's.
    assert_eq!(
        helper(&[
            "/root/.cache/pier-real-tools/venv/python/bin/python3",
            "-m",
            "ipykernel_launcher",
            "-f",
            "/tmp/p/jupyter-runtime/kernel-5f1c0e2a-7d4b-4c55-9a0e-1b2c3d4e5f60.json",
        ]),
        Some("notebook kernel")
    );
    // VS Code's Jupyter extension: `--f=`, and a debuggable interpreter (`-X` takes a value).
    assert_eq!(
        helper(&[
            "/usr/bin/python3.12",
            "-X",
            "frozen_modules=off",
            "-m",
            "ipykernel_launcher",
            "--f=/home/u/.local/share/jupyter/runtime/kernel-v2-4242abc.json",
        ]),
        Some("notebook kernel")
    );
    // Older kernelspecs run the package itself.
    assert_eq!(
        helper(&[
            "python3",
            "-m",
            "ipykernel",
            "-f",
            "/run/user/1000/jupyter/kernel-1.json"
        ]),
        Some("notebook kernel")
    );
    // The module's own file as the script.
    assert_eq!(
        helper(&[
            "python3",
            "/venv/lib/python3.12/site-packages/ipykernel_launcher.py",
            "-f",
            "k.json"
        ]),
        Some("notebook kernel")
    );
}

#[test]
fn the_server_and_look_alikes_are_not_helpers() {
    assert_eq!(
        helper(&["/venv/bin/python3", "/venv/bin/jupyter-lab", "--no-browser"]),
        None,
        "the notebook server is the server"
    );
    assert_eq!(helper(&["vim", "ipykernel_launcher.py"]), None);
    assert_eq!(
        helper(&["sh", "-c", "python3 -m ipykernel_launcher -f k.json"]),
        None,
        "a shell running it is not the kernel (its child is)"
    );
    assert_eq!(
        helper(&["python3", "-c", "import ipykernel_launcher"]),
        None,
        "inline code names no module"
    );
    assert_eq!(helper(&["node", "ipykernel_launcher.js"]), None);
    assert_eq!(
        helper(&["/opt/bin/ipykernel_launcher", "-f", "k.json"]),
        None,
        "only an interpreter runs the module"
    );
    assert_eq!(helper(&["python3", "-m", "ipykernel_launcherx"]), None);
    assert_eq!(helper(&["python3", "-m", "uvicorn", "app:app"]), None);
    assert_eq!(helper(&[]), None);
}
