//! Names from the system, made safe to show: a folder, an argv, a kernel name or a log line
//! may hold any character, and printed as it is, an escape sequence clears the screen or
//! retitles the window, a newline breaks a card in two, and a bidi override makes a line read
//! differently than it is.
//!
//! One rule, applied once, where text is shown (the text cards, the stop, history and restart
//! text, log lines, the app's menu labels): every character that could act on a terminal or
//! reorder a line is written as a visible escape, and a backslash as two, so what is shown
//! reads back to exactly one text. The data (every JSON document, the records, evidence
//! messages, reasons) keeps the text as it was read.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is written as an escape: C0 controls (newline, tab, ESC, BEL, …), DEL, C1
/// controls (U+0080–U+009F, which 8-bit terminals read as ESC sequences: U+009B is CSI), the
/// bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and marks (U+200E,
/// U+200F, U+061C), the line and paragraph separators (U+2028, U+2029: a name stays on one
/// line), and the backslash, the escapes' own sign.
fn escaped(c: char) -> bool {
    matches!(
        c,
        '\\' | '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// Writes one escaped character: `\\`, `\n`, `\r`, `\t`, `\e` (ESC), `\xNN` for the other
/// C0 controls and DEL (one byte each), `\u{NNNN}` for every code point above them.
fn push_escape(out: &mut String, c: char) {
    let _ = match c {
        '\\' => write!(out, "\\\\"),
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        '\t' => write!(out, "\\t"),
        '\u{1b}' => write!(out, "\\e"),
        '\u{0}'..='\u{7f}' => write!(out, "\\x{:02x}", c as u32),
        _ => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// `text` as it may be shown on a terminal or in a menu: see the module's doc. Borrowed when
/// nothing needs escaping (the common case). A U+FFFD that stands for bytes that were not
/// UTF-8 (the scan's lossy text) is shown as it is: it is printable, and the bytes are gone.
///
/// ```
/// use pier_core::words::for_terminal;
/// assert_eq!(for_terminal("shop-web"), "shop-web");
/// assert_eq!(for_terminal("\u{1b}[2J\u{1b}]0;pwned\u{7}"), "\\e[2J\\e]0;pwned\\x07");
/// assert_eq!(for_terminal("a\\nb"), "a\\\\nb");
/// ```
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(escaped) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if escaped(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Bytes (a path, an argv word, as the OS holds them) as they may be shown: the UTF-8 runs as
/// [`for_terminal`] writes them, and each byte that is not UTF-8 as `\xNN` (never U+FFFD, so
/// two different names never read the same). `\xNN` below 0x80 is a control character,
/// above it a byte that is not UTF-8; `\u{NN}` is a code point, so the C1 character U+009B
/// and the lone byte 0x9B read apart.
pub fn bytes_for_terminal(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return for_terminal(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&for_terminal(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

/// A path as it may be shown: [`bytes_for_terminal`] of its bytes.
pub fn path_for_terminal(path: &std::path::Path) -> Cow<'_, str> {
    use std::os::unix::ffi::OsStrExt;
    bytes_for_terminal(path.as_os_str().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn plain_names_are_borrowed_as_they_are() {
        for name in [
            "shop-web",
            "/home/me/code/api",
            "café ☕",
            "a b (c) [d]",
            "",
            "�",
        ] {
            assert!(
                matches!(for_terminal(name), Cow::Borrowed(n) if n == name),
                "{name}"
            );
        }
    }

    /// The folder name of the brief: clear the screen, retitle the window, ring the bell.
    #[test]
    fn escape_sequences_are_shown_not_sent() {
        let shown = for_terminal("\u{1b}[2J\u{1b}]0;pwned\u{7}");
        assert_eq!(shown, "\\e[2J\\e]0;pwned\\x07");
        assert!(!shown.contains(|c: char| c.is_control()));
    }

    #[test]
    fn newlines_tabs_and_other_c0_controls_stay_on_one_line() {
        assert_eq!(for_terminal("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(for_terminal("\0\u{8}\u{7f}"), "\\x00\\x08\\x7f");
    }

    #[test]
    fn c1_controls_are_code_points() {
        // U+009B is CSI for a terminal that reads 8-bit controls; U+0085 is NEL, a newline.
        assert_eq!(for_terminal("a\u{9b}2Jb\u{85}"), "a\\u{9b}2Jb\\u{85}");
        assert_eq!(
            for_terminal("\u{80}\u{9f}\u{a0}"),
            "\\u{80}\\u{9f}\u{a0}",
            "NBSP is text"
        );
    }

    /// "Trojan Source": an override makes `txt.exe` read as `exe.txt`.
    #[test]
    fn bidi_overrides_isolates_and_marks_are_shown() {
        assert_eq!(for_terminal("doc\u{202e}txt.exe"), "doc\\u{202e}txt.exe");
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            assert_eq!(
                for_terminal(&c.to_string()),
                format!("\\u{{{:x}}}", c as u32)
            );
        }
        assert_eq!(
            for_terminal("\u{200e}\u{200f}\u{61c}"),
            "\\u{200e}\\u{200f}\\u{61c}"
        );
        assert_eq!(for_terminal("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(
            for_terminal("שלום"),
            "שלום",
            "right-to-left text itself is text"
        );
    }

    /// A name that already reads `\e` is not told apart from an ESC unless the backslash is
    /// escaped too.
    #[test]
    fn a_backslash_is_doubled_so_every_shown_text_reads_back_one_way() {
        assert_eq!(for_terminal("a\\eb"), "a\\\\eb");
        assert_eq!(for_terminal("a\u{1b}b"), "a\\eb");
        assert_ne!(for_terminal("a\\eb"), for_terminal("a\u{1b}b"));
        assert_eq!(for_terminal("C:\\x"), "C:\\\\x");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_bytes() {
        assert_eq!(bytes_for_terminal(b"plain"), "plain");
        assert!(matches!(bytes_for_terminal(b"plain"), Cow::Borrowed(_)));
        assert_eq!(bytes_for_terminal(b"bad\xff\x9bname"), "bad\\xff\\x9bname");
        assert_eq!(
            bytes_for_terminal(b"\xe2\x82"),
            "\\xe2\\x82",
            "a cut sequence is its bytes"
        );
        assert_eq!(
            bytes_for_terminal("é\u{1b}\\".as_bytes()),
            "é\\e\\\\",
            "the UTF-8 runs are escaped as text"
        );
        assert_eq!(bytes_for_terminal(b"caf\xc3\xa9\xff"), "café\\xff");
        // The C1 character and the lone byte read apart.
        assert_ne!(
            bytes_for_terminal("\u{9b}".as_bytes()),
            bytes_for_terminal(b"\x9b")
        );
        assert_eq!(
            path_for_terminal(std::path::Path::new(std::ffi::OsStr::from_bytes(
                b"/t/\xff\n"
            ))),
            "/t/\\xff\\n"
        );
    }
}
