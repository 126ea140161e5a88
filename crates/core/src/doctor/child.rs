//! The self-test's own process: what `pier doctor` starts and then looks for with the probe.
//! It listens on a free loopback port, connects to itself, says so on stdout, and then obeys
//! its stdin one line at a time: `spin` burns CPU until `rest`, and the end of stdin (the
//! doctor is done, or gone) ends it. It never outlives the doctor that started it.

use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The line the child prints once its sockets are open: `listening <port> <client port>`.
pub const READY: &str = "listening";

/// Runs the child; returns when stdin ends. `exit_at_once`: the zombie check's child, which
/// ends as soon as it starts (its parent does not reap it until the check is done).
pub fn main(exit_at_once: bool) -> std::io::Result<()> {
    if exit_at_once {
        return Ok(());
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let port = listener.local_addr()?.port();
    let client = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    let (_server_end, _) = listener.accept()?;
    let client_port = client.local_addr()?.port();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{READY} {port} {client_port}")?;
    out.flush()?;
    drop(out);

    let spinning = Arc::new(AtomicBool::new(false));
    let mut spinner: Option<std::thread::JoinHandle<()>> = None;
    for line in std::io::stdin().lock().lines() {
        match line?.trim() {
            "spin" if spinner.is_none() => {
                spinning.store(true, Ordering::Relaxed);
                let flag = Arc::clone(&spinning);
                spinner = Some(std::thread::spawn(move || {
                    let mut x = 0u64;
                    while flag.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }));
            }
            "rest" => {
                spinning.store(false, Ordering::Relaxed);
                if let Some(t) = spinner.take() {
                    let _ = t.join();
                }
            }
            _ => {}
        }
    }
    spinning.store(false, Ordering::Relaxed);
    Ok(())
}
