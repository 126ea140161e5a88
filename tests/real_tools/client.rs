//! The real clients: headless Chromium on the page (it holds the HMR websocket), a held TCP
//! connection, and one HTTP GET that must answer with a status line.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::truth;
use crate::common::{self, Started};

/// A client the test started; dropping it ends it (Chromium by identity, its whole tree).
pub enum Connected {
    Browser { child: Child, who: Started },
    Tcp(TcpStream),
}

impl Connected {
    /// The processes holding the client's sockets.
    pub fn processes(&self) -> Vec<Started> {
        match self {
            Connected::Browser { who, .. } => truth::tree(*who),
            Connected::Tcp(_) => truth::identity(std::process::id()).into_iter().collect(),
        }
    }

    /// The client ends of its connections to `servers` right now (from the socket tables).
    pub fn ends(&self, servers: &std::collections::BTreeSet<SocketAddr>) -> Vec<SocketAddr> {
        let ends = truth::client_ends(&self.processes(), servers);
        match self {
            Connected::Tcp(s) => s
                .local_addr()
                .into_iter()
                .filter(|a| ends.contains(a))
                .collect(),
            Connected::Browser { .. } => ends.into_iter().collect(),
        }
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        if let Connected::Browser { child, who } = self {
            for p in truth::tree(*who) {
                common::kill_by_identity(p);
            }
            let _ = child.wait();
        }
    }
}

/// Headless Chromium on `url`, with its profile in `profile`; it works in `cwd`.
pub fn browser(url: &str, profile: &Path, cwd: &Path) -> Result<Connected, String> {
    let child = Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .current_dir(cwd)
        .env("TMPDIR", cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            format!(
                "chromium could not be started ({e}): run scripts/real-tools.sh (apt: chromium)"
            )
        })?;
    let who = truth::identity(child.id()).ok_or("chromium exited at once")?;
    Ok(Connected::Browser { child, who })
}

/// A TCP connection to `to`, held open until dropped.
pub fn tcp(to: SocketAddr) -> Result<Connected, String> {
    TcpStream::connect_timeout(&to, Duration::from_secs(5))
        .map(Connected::Tcp)
        .map_err(|e| format!("connect to {to}: {e}"))
}

/// `GET path` on `to`; the first line of the answer, which must be an HTTP status line. The
/// server may compile the page first (Next): one read may take up to `wait`.
pub fn http_get(to: SocketAddr, path: &str, wait: Duration) -> Result<String, String> {
    let end = Instant::now() + wait;
    let mut last = String::new();
    while Instant::now() < end {
        match get_once(to, path, end.saturating_duration_since(Instant::now())) {
            Ok(line) if line.starts_with("HTTP/") => return Ok(line),
            Ok(line) => last = format!("answered {line:?}, not a status line"),
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(format!("GET {path} on {to}: {last}"))
}

fn get_once(to: SocketAddr, path: &str, wait: Duration) -> Result<String, String> {
    let mut s =
        TcpStream::connect_timeout(&to, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(wait.max(Duration::from_millis(100))))
        .map_err(|e| e.to_string())?;
    let host = match to {
        SocketAddr::V4(_) => format!("localhost:{}", to.port()),
        SocketAddr::V6(_) => format!("[::1]:{}", to.port()),
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(line.trim_end().to_owned())
}

/// One whole request, as a browser or curl makes it: `GET path` with `Connection: close`, the
/// answer read to its end, then closed — a clean close (FIN), which leaves the connection in
/// the tables for a minute (TIME-WAIT). The status line and the bytes read. (A client that
/// closes with the answer unread resets the connection instead, and a reset leaves nothing in
/// the tables: [`http_get`] reads one line, and is no whole request.)
pub fn whole_request(
    to: SocketAddr,
    path: &str,
    wait: Duration,
) -> Result<(String, usize), String> {
    use std::io::Read;
    let mut s =
        TcpStream::connect_timeout(&to, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(wait)).map_err(|e| e.to_string())?;
    let host = match to {
        SocketAddr::V4(_) => format!("localhost:{}", to.port()),
        SocketAddr::V6(_) => format!("[::1]:{}", to.port()),
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("GET {path} on {to}: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let line = text.lines().next().unwrap_or_default().to_owned();
    if !line.starts_with("HTTP/") {
        return Err(format!("GET {path} on {to} answered {line:?}"));
    }
    Ok((line, answer.len()))
}
