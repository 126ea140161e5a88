//! A tiny std-only HTTP server, run by `cargo watch -x run` in Pier's real-tools suite.
//! The port comes from the PORT environment variable.
use std::io::{Read, Write};
use std::net::TcpListener;

fn main() {
    let port = std::env::var("PORT").unwrap_or_else(|_| "8080".to_owned());
    // Not inlined into the string: the suite fills a placeholder of that spelling in fixtures.
    let address = format!("127.0.0.1:{}", port);
    let listener = TcpListener::bind(&address).expect("bind");
    println!("listening on {}", address);
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let mut buf = [0u8; 1024];
        let _ = stream.read(&mut buf);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n");
    }
}
