//! The shapes a secret takes in an argument: a name that says so, a URL's password, a known
//! token's prefix. Each a small matcher, written by hand (no regex in the engine).

use super::MASK;

/// Words that name a secret wherever they stand in a name (`--api-key`, `DB_PASSWORD`).
const SECRET_WORDS: &[&str] = &[
    "token",
    "tokens",
    "key",
    "keys",
    "apikey",
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "pass",
    "passphrase",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "creds",
    "private",
];

/// Endings that name a secret inside one word (`authtoken`, `clientsecret`, `PGPASSWORD`).
const SECRET_ENDINGS: &[&str] = &["token", "key", "secret", "password", "passwd"];

/// Last words that make a name say where or what kind a secret is, not hold it
/// (`--key-file`, `--auth-mode`): their value is kept.
const NOT_THE_SECRET: &[&str] = &["file", "path", "dir", "type", "mode", "method", "url"];

/// A name's words, lower-cased: split at anything not a letter or digit, and where a lower
/// case letter meets an upper case one (`accessToken`).
fn words(name: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            out.push(String::new());
            prev_lower = false;
            continue;
        }
        if prev_lower && c.is_ascii_uppercase() {
            out.push(String::new());
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        if let Some(w) = out.last_mut() {
            w.push(c.to_ascii_lowercase());
        }
    }
    out.retain(|w| !w.is_empty());
    out
}

/// A name that says its value is a secret: one of its words is a secret's, or ends like one,
/// and its last word does not say it is only where or what kind the secret is.
pub fn is_secret_name(name: &str) -> bool {
    let words = words(name);
    let secret = |w: &String| {
        SECRET_WORDS.contains(&w.as_str()) || SECRET_ENDINGS.iter().any(|e| w.ends_with(e))
    };
    let only_about = words
        .last()
        .is_some_and(|w| NOT_THE_SECRET.contains(&w.as_str()));
    words.iter().any(secret) && !only_about
}

/// A flag named like a secret (`--api-key`, `--authToken`, `-Dspring.datasource.password`).
/// Why `--no-…` never is: a negated flag is a switch and takes no value, so the word after it
/// is an argument of its own (`--no-auth ./site`).
pub fn is_secret_flag(flag: &str) -> bool {
    let name = flag.trim_start_matches('-');
    !name.starts_with("no-") && is_secret_name(name)
}

/// A shell-style assignment's name (`GITHUB_TOKEN`, `password` in a libpq line): a letter or
/// `_`, then letters, digits and `_`. Why so strict: `a=b` inside a path or an option's value
/// is not a name.
pub fn is_assignment_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A short flag that carries a password for the programs that define it so. Why per program:
/// `-p` is a port to most dev servers and a password only to MySQL's tools.
pub struct ShortFlag {
    programs: &'static [&'static str],
    /// The flag (`-p`).
    pub flag: &'static str,
    /// Whether the word after a bare flag is the password (`redis-cli -a X`); MySQL's bare
    /// `-p` prompts, and the word after it is the database.
    pub value_next: bool,
}

const SHORT_FLAGS: &[ShortFlag] = &[
    ShortFlag {
        programs: &[
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlsh",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
        ],
        flag: "-p",
        value_next: false,
    },
    ShortFlag {
        programs: &["redis-cli", "valkey-cli"],
        flag: "-a",
        value_next: true,
    },
    ShortFlag {
        programs: &["sshpass"],
        flag: "-p",
        value_next: true,
    },
];

/// The short password flag of the program a word names, by its file name.
pub fn short_flag(word: &str) -> Option<&'static ShortFlag> {
    let name = word.rsplit('/').next().unwrap_or(word);
    SHORT_FLAGS.iter().find(|r| r.programs.contains(&name))
}

/// Every URL's password in `s` masked (`postgres://u:X@h/db` → `postgres://u:•••@h/db`). A
/// user name alone (`ssh://git@host`) is kept: it is who, not a secret.
pub fn url_passwords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@').and_then(|a| {
            let user_info = &authority[..a];
            user_info.find(':').map(|c| (c, a))
        }) {
            Some((colon, at)) if at > colon + 1 => {
                out.push_str(&authority[..=colon]);
                out.push_str(MASK);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Known tokens' prefixes, each kept visible (it says what kind of secret was there).
const PREFIXES: &[&str] = &[
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "xoxb-",
    "xoxp-",
    "sk-",
];

/// A token's length, its prefix included, below which a prefixed word is a name, not a token
/// (`sk-learn` is a package).
const TOKEN_MIN: usize = 20;

/// Every run of token characters in `s` that has a known token's shape, masked after its
/// prefix: `ghp_…`, `github_pat_…`, `sk-…`, `xoxb-…`/`xoxp-…` of 20 characters or more, and an
/// AWS access key id (`AKIA` and 16 upper-case letters or digits).
pub fn tokens(s: &str) -> String {
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let start = rest.find(is_token_char).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c| !is_token_char(c)).unwrap_or(rest.len());
        let run = &rest[..end];
        match token_prefix(run) {
            Some(prefix) => {
                out.push_str(prefix);
                out.push_str(MASK);
            }
            None => out.push_str(run),
        }
        rest = &rest[end..];
    }
    out
}

/// The prefix of a run shaped like a known token, if it is one.
fn token_prefix(run: &str) -> Option<&str> {
    if let Some(key) = run.strip_prefix("AKIA") {
        let id = key.len() == 16
            && key
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        return id.then_some("AKIA");
    }
    let prefix = PREFIXES.iter().find(|p| run.starts_with(*p))?;
    (run.len() >= TOKEN_MIN).then_some(&run[..prefix.len()])
}
