//! Secrets kept out of everything deep-review shows or saves: command lines, the run bundle's
//! files (raw output, stderr, the review), progress lines and reports.
//!
//! Three nets, from the most to the least certain:
//! 1. the values of this process's secret-named variables (`*KEY*`, `*TOKEN*`, `*SECRET*`,
//!    `*PASS*`, `*PWD`, `COOKIE`, `SESSION`, credentials, auth): wherever they appear, verbatim,
//!    whatever their characters (an AWS secret key holds `/`, `+` and `=`), and each line of a
//!    value of several lines (a PEM key) on its own; only a value that is the path of an
//!    existing file (`SSH_AUTH_SOCK`, `XAUTHORITY`) is not a secret itself;
//! 2. credentials in URLs (`https://user:pw@host` → `https://***@host`) and `Authorization:` /
//!    `Proxy-Authorization:` headers (any scheme: Basic, Bearer, token);
//! 3. values that look like a known kind of token (`sk-...`, `ghp_...`, `github_pat_...`,
//!    GitLab's `glpat-...` / `glcbt-...` and kin, `AIza...`, `xox?-...`, `Bearer ...`).

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;

pub const REDACTED: &str = "***";

/// A variable or option name that holds a secret. `env_key` (Codex: the *name* of the variable
/// holding the key) is not a secret.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with("env_key") {
        return false;
    }
    const WORDS: &[&str] = &[
        "key",
        "token",
        "secret",
        "pass",
        "credential",
        "auth",
        "cookie",
        "session",
    ];
    WORDS.iter().any(|w| lower.contains(w)) || lower.ends_with("pwd")
}

// Word boundaries are ASCII ones (`(?-u:\b)`): a Unicode `\b` makes the regex engine leave its
// DFA for a much slower one on any text with a non-ASCII character, and every report has some.
static URL_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)([a-z][a-z0-9+.\-]*://)[^/\s:@]+(?::[^/\s@]*)?@")
        .expect("static regex")
});

static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(?-u:\b)((?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^\r\n"',}]+"#)
        .expect("static regex")
});

static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(sk-[A-Za-z0-9_\-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|gl(?:pat|cbt|dt|rt|ptt|ft|soat|oas|imt|agent|ffct)-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{16,}|xox[abprs]-[A-Za-z0-9\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})",
    )
    .expect("static regex")
});

/// The shortest value redacted: shorter ones would match ordinary words.
const MIN_SECRET_LEN: usize = 8;

/// The word every header [`AUTH_HEADER`] hides holds, in any case: a search for it alone is
/// about three times faster than the header's own pattern, whose case-insensitive start has no
/// literal for the regex engine to look for first.
static AUTH_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i-u)authorization").expect("static regex"));

/// The secret values to hide, with what says whether a text holds anything to hide at all, so
/// the common case (nothing) costs a few fast scans of the text.
pub struct Secrets {
    /// Longest first, so a value containing another is replaced whole.
    values: Vec<String>,
    /// Any of the values: a literal alternation, which the regex engine searches for as
    /// literals. `None` when there are none, or too many to compile (then every text is
    /// redacted value by value).
    any_value: Option<Regex>,
}

impl Secrets {
    /// The secrets of this process's environment, read once.
    pub fn of_environment() -> &'static Secrets {
        static SECRETS: OnceLock<Secrets> = OnceLock::new();
        SECRETS.get_or_init(|| {
            Secrets::new(secrets_of(
                std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))),
            ))
        })
    }

    fn new(mut values: Vec<String>) -> Secrets {
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        let any_value = (!values.is_empty())
            .then(|| {
                let escaped: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
                Regex::new(&escaped.join("|")).ok()
            })
            .flatten();
        Secrets { values, any_value }
    }

    /// Whether `text` holds anything [`Secrets::redact`] hides. Each pattern on its own rather
    /// than one set of them: a set has no literal to look for first and scanned a large report
    /// at a third of the speed, and this is asked of every line deep-review writes.
    fn holds_any(&self, text: &str) -> bool {
        let any_value = match &self.any_value {
            Some(re) => re.is_match(text),
            None => !self.values.is_empty(),
        };
        any_value
            || URL_CREDENTIALS.is_match(text)
            || TOKENS.is_match(text)
            || (AUTH_WORD.is_match(text) && AUTH_HEADER.is_match(text))
    }

    /// `text` with every secret replaced by `***`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.holds_any(text) {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), REDACTED));
            }
        }
        for (re, with) in [
            (&*URL_CREDENTIALS, "${1}***@"),
            (&*AUTH_HEADER, "${1}***"),
            (&*TOKENS, REDACTED),
        ] {
            if re.is_match(&out) {
                out = Cow::Owned(re.replace_all(&out, with).into_owned());
            }
        }
        out
    }

    /// [`Secrets::redact`] of bytes: the bytes themselves when there is nothing to redact (not
    /// UTF-8 included), else the redacted text. Bytes that are UTF-8 (every report) are taken
    /// as text after the standard library's fast check; only others go through the lossy
    /// reading, whose slower check of a 25 MB report cost 14 ms.
    pub fn redact_bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        match self.redact(&text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(redacted) => Cow::Owned(redacted.into_bytes()),
        }
    }
}

/// The secrets among `vars`: every value of a secret-named variable of [`MIN_SECRET_LEN`] or
/// more, whatever its characters, and each line of a value of several lines (output is read
/// and redacted line by line). A value that is the path of an existing file names where a
/// secret is (`SSH_AUTH_SOCK`, `GOOGLE_APPLICATION_CREDENTIALS`); it is not one.
fn secrets_of(vars: impl Iterator<Item = (String, std::ffi::OsString)>) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for (name, value) in vars {
        if !is_secret_name(&name) {
            continue;
        }
        let value = value.to_string_lossy().into_owned();
        let path = std::path::Path::new(&value);
        if path.is_absolute() && path.exists() {
            continue;
        }
        for line in value.lines().map(|l| l.trim_end_matches('\r')) {
            if line.len() >= MIN_SECRET_LEN && line != value {
                values.push(line.to_string());
            }
        }
        if value.len() >= MIN_SECRET_LEN {
            values.push(value);
        }
    }
    values
}

/// `text` with every secret of this process's environment replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    Secrets::of_environment().redact(text)
}

/// [`redact`] of bytes ([`Secrets::redact_bytes`]).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    Secrets::of_environment().redact_bytes(bytes)
}

/// Redacts output written as it streams, in pieces cut anywhere (a model API's chunks, an
/// agent's 8 MB reads of a line with no end): a secret split between two pieces is still
/// found. Text up to the last line end of what came is redacted and given back (no secret
/// spans a line: values of several lines are redacted line by line); the rest waits for the
/// next piece, unless it grows past [`StreamRedactor::HOLD`], when all but its end goes out,
/// cut so that no secret value is split.
pub struct StreamRedactor {
    secrets: &'static Secrets,
    pending: Vec<u8>,
}

impl Default for StreamRedactor {
    fn default() -> Self {
        StreamRedactor::new(Secrets::of_environment())
    }
}

impl StreamRedactor {
    /// The most bytes of a line held back (or the longest secret value, if longer).
    const HOLD: usize = 64 * 1024;

    pub fn new(secrets: &'static Secrets) -> StreamRedactor {
        StreamRedactor {
            secrets,
            pending: Vec::new(),
        }
    }

    /// Takes the next piece; returns what may be written now, redacted.
    pub fn push<'p>(&mut self, piece: &'p [u8]) -> Cow<'p, [u8]> {
        // The common case, a whole line and nothing held back: no copy.
        if self.pending.is_empty() && piece.last() == Some(&b'\n') {
            return self.secrets.redact_bytes(piece);
        }
        // What is pending holds no line end (it was cut after the last one): only the new
        // piece is searched, so a long line costs its length, not its square.
        let before = self.pending.len();
        self.pending.extend_from_slice(piece);
        let line_end = piece
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |nl| before + nl + 1);
        let longest = self.secrets.values.first().map_or(0, String::len);
        let hold = Self::HOLD.max(longest);
        let cut = if self.pending.len() - line_end > hold {
            self.safe_cut(self.pending.len() - hold)
        } else {
            line_end
        };
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        Cow::Owned(self.secrets.redact_bytes(&ready).into_owned())
    }

    /// What is left at the end of the stream, redacted.
    pub fn finish(&mut self) -> Vec<u8> {
        let rest = std::mem::take(&mut self.pending);
        self.secrets.redact_bytes(&rest).into_owned()
    }

    /// `at`, moved back before every secret value that spans it, and to a character boundary.
    fn safe_cut(&self, mut at: usize) -> usize {
        let text = &self.pending;
        loop {
            let before = at;
            for v in self.secrets.values.iter().map(String::as_bytes) {
                let from = at.saturating_sub(v.len() - 1);
                let to = (at + v.len() - 1).min(text.len());
                if let Some(i) = text[from..to].windows(v.len()).position(|w| w == v) {
                    at = at.min(from + i);
                }
            }
            if at == before {
                break;
            }
        }
        while at > 0 && at < text.len() && (text[at] & 0b1100_0000) == 0b1000_0000 {
            at -= 1;
        }
        at
    }
}

/// A writer of streamed output through a [`StreamRedactor`]; what is held back at the end is
/// written when it is dropped, however the stream ended.
pub struct RedactingWriter<W: std::io::Write> {
    out: W,
    redactor: StreamRedactor,
}

impl<W: std::io::Write> RedactingWriter<W> {
    pub fn new(out: W) -> Self {
        RedactingWriter {
            out,
            redactor: StreamRedactor::default(),
        }
    }

    /// Writes what of `piece` can be written now, redacted (errors are the caller's to ignore:
    /// the bundle is best effort, the stream goes on).
    pub fn write_piece(&mut self, piece: &[u8]) {
        let _ = self.out.write_all(&self.redactor.push(piece));
    }
}

impl<W: std::io::Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = self.out.write_all(&self.redactor.finish());
        let _ = self.out.flush();
    }
}

/// A writer that redacts what goes through it line by line: what is written is held until a
/// line ends, and whole lines go out redacted in pieces of [`RedactedLines::PIECE`] bytes or
/// more, so a large document (an 8 MB report) is redacted as it is written, never held whole.
///
/// Lines are never cut, so it hides exactly what [`redact`] of the whole text hides as long as
/// no secret spans a line end: the patterns stop at line ends (the header's `\s*` before its
/// `:` aside, which a JSON or Markdown line end never precedes), and a value of several lines
/// is hidden line by line ([`Secrets`]). Unlike [`StreamRedactor`], a long line is held whole:
/// a report's text was held whole before it was written, so this costs nothing new.
pub struct RedactedLines<W: std::io::Write> {
    out: W,
    secrets: &'static Secrets,
    pending: Vec<u8>,
}

impl<W: std::io::Write> RedactedLines<W> {
    /// How much is held before the whole lines of it are redacted and written.
    const PIECE: usize = 64 * 1024;

    /// Hides the secrets of this process's environment.
    pub fn new(out: W) -> Self {
        RedactedLines::with(out, Secrets::of_environment())
    }

    fn with(out: W, secrets: &'static Secrets) -> Self {
        RedactedLines {
            out,
            secrets,
            pending: Vec::with_capacity(2 * Self::PIECE),
        }
    }

    /// Redacts and writes what is held up to `end`.
    fn write_out(&mut self, end: usize) -> std::io::Result<()> {
        self.out
            .write_all(&self.secrets.redact_bytes(&self.pending[..end]))?;
        self.pending.drain(..end);
        Ok(())
    }

    /// Writes the rest, redacted, and gives back the writer (flushed).
    pub fn finish(mut self) -> std::io::Result<W> {
        self.write_out(self.pending.len())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: std::io::Write> std::io::Write for RedactedLines<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let before = self.pending.len();
        self.pending.extend_from_slice(buf);
        // Only `buf` is searched for a line end, so that a long line costs its length, not its
        // square: when it holds none, what is held waits for a piece that does.
        if self.pending.len() >= Self::PIECE
            && let Some(nl) = buf.iter().rposition(|b| *b == b'\n')
        {
            self.write_out(before + nl + 1)?;
        }
        Ok(buf.len())
    }

    /// Writes nothing held: a line that has not ended may still grow into a secret.
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// An option name that takes a secret as its value (`--api-key X`, `--token=X`). Narrower than
/// [`is_secret_name`]: `--no-session-persistence` is a switch, not a secret.
fn is_secret_flag(flag: &str) -> bool {
    let lower = flag.to_ascii_lowercase();
    !lower.ends_with("env_key")
        && ["key", "token", "secret", "password", "passwd", "credential"]
            .iter()
            .any(|w| lower.contains(w))
}

/// Command-line arguments with secrets hidden: `--api-key X`, `--token=X`, `-c ...api_key=X`,
/// and any argument that holds a secret value.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next {
            out.push(REDACTED.to_string());
            hide_next = false;
            continue;
        }
        if let Some(flag) = arg.strip_prefix("--")
            && !flag.contains('=')
            && is_secret_flag(flag)
        {
            out.push(arg.clone());
            hide_next = true;
            continue;
        }
        if let Some((key, _)) = arg.split_once('=')
            && is_secret_flag(key.trim_start_matches('-'))
        {
            out.push(format!("{key}={REDACTED}"));
            continue;
        }
        out.push(redact(arg).into_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "OPENAI_API_KEY",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASS",
            "MYSQL_PWD",
            "PGPASSWORD",
            "COOKIE",
            "SESSION",
            "AUTH_HEADER",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "model_providers.fake.env_key", "LANG"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn urls_headers_and_tokens_are_hidden() {
        let text = "clone https://user:hunter2@example.com/r.git and git://tok@host/x\n\
            Authorization: Basic dXNlcjpwYXNz\n\
            {\"authorization\": \"token abc123xyz\"}\n\
            key sk-abcdefghijklmnop and ghp_abcdefghijklmnopqrstu\n\
            gitlab glpat-Ab1_cD2-eF3gH4iJ5kL6 job glcbt-64_Ab1cD2eF3gH4iJ5kL6";
        let shown = redact(text);
        for secret in [
            "hunter2",
            "user:",
            "tok@",
            "dXNlcjpwYXNz",
            "abc123xyz",
            "sk-abcdefghijklmnop",
            "ghp_abcd",
            "Ab1_cD2",
            "Ab1cD2eF3",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("https://***@example.com/r.git"), "{shown}");
        assert_eq!(redact("nothing secret here"), "nothing secret here");
    }

    fn secrets(vars: &[(&str, &str)]) -> &'static Secrets {
        Box::leak(Box::new(Secrets::new(secrets_of(
            vars.iter()
                .map(|(k, v)| (k.to_string(), std::ffi::OsString::from(v))),
        ))))
    }

    const AWS: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY+a=";

    #[test]
    fn every_value_of_a_secret_variable_is_hidden_whatever_its_characters() {
        let s = secrets(&[
            ("AWS_SECRET_ACCESS_KEY", AWS),
            ("GATEWAY_TOKEN", "tok/with+slash=="),
            (
                "APP_PRIVATE_KEY",
                "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END KEY-----",
            ),
            ("SSH_AUTH_SOCK", "/tmp"),
            ("SHORT_KEY", "abc"),
            ("HOME", "/root/not-a-secret-name"),
        ]);
        let text = format!(
            "key {AWS} in a line; tok/with+slash== too\nMIIEvQIBADANBgkqhkiG9w0B\nsocket /tmp abc /root/not-a-secret-name"
        );
        let shown = s.redact(&text);
        assert_eq!(
            shown,
            "key *** in a line; *** too\n***\nsocket /tmp abc /root/not-a-secret-name"
        );
    }

    #[test]
    fn a_secret_split_between_pieces_of_a_stream_is_hidden() {
        let s = secrets(&[("AWS_SECRET_ACCESS_KEY", AWS)]);
        let text = format!("{{\"text\":\"the key is {AWS} ok\"}}\nnext line {AWS}\n");
        // Every cut of the stream into two pieces, and into one-byte pieces.
        for cut in 0..text.len() {
            let mut stream = StreamRedactor::new(s);
            let mut out = stream.push(&text.as_bytes()[..cut]).into_owned();
            out.extend_from_slice(&stream.push(&text.as_bytes()[cut..]));
            out.extend(stream.finish());
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains("bPxRfiCY"), "cut at {cut}: {out}");
            assert_eq!(out.matches("***").count(), 2, "cut at {cut}: {out}");
        }
        let mut stream = StreamRedactor::new(s);
        let mut out = Vec::new();
        for b in text.as_bytes() {
            out.extend_from_slice(&stream.push(std::slice::from_ref(b)));
        }
        out.extend(stream.finish());
        assert_eq!(String::from_utf8(out).unwrap(), s.redact(&text));
        // A line with no end, longer than what is held back: still cut whole.
        let flood = format!(
            "{}{AWS}{}",
            "x".repeat(StreamRedactor::HOLD - 10),
            "y".repeat(100)
        );
        let mut stream = StreamRedactor::new(s);
        let mut out = Vec::new();
        for piece in flood.as_bytes().chunks(4096) {
            out.extend_from_slice(&stream.push(piece));
        }
        out.extend(stream.finish());
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains("bPxRfiCY") && out.contains("***"));
        assert_eq!(out.len(), flood.len() - AWS.len() + 3);
    }

    #[test]
    fn a_document_written_through_redacted_lines_hides_what_redacting_it_whole_hides() {
        use std::io::Write as _;
        let s = secrets(&[("AWS_SECRET_ACCESS_KEY", AWS)]);
        // Pieces of every size, lines longer than what is held, secrets at every offset.
        let mut text = String::new();
        for i in 0..3000 {
            let pad = "x".repeat(i % 97);
            text.push_str(&format!(
                "  \"line {i}\": \"{pad}{AWS} Bearer abcdefgh{i}\",\n"
            ));
            if i % 500 == 0 {
                text.push_str(&"y".repeat(RedactedLines::<Vec<u8>>::PIECE + i));
            }
        }
        for piece in [1, 7, 4096, 70_000] {
            let mut out = RedactedLines::with(Vec::new(), s);
            for chunk in text.as_bytes().chunks(piece) {
                out.write_all(chunk).unwrap();
            }
            let written = out.finish().unwrap();
            assert!(
                String::from_utf8(written).unwrap() == s.redact(&text),
                "pieces of {piece} bytes"
            );
        }
        assert!(!s.redact(&text).contains("bPxRfiCY"));
    }

    #[test]
    fn arguments_naming_secrets_are_hidden() {
        let args: Vec<String> = [
            "--api-key",
            "plainsecret",
            "-c",
            "model_providers.x.api_key=hunter2",
            "-c",
            "model_providers.fake.env_key=FAKE_API_KEY",
            "--password=p",
            "--no-session-persistence",
            "--max-turns",
            "12",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let shown = redact_args(&args).join(" ");
        assert!(
            !shown.contains("plainsecret") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("env_key=FAKE_API_KEY"), "{shown}");
        assert!(shown.contains("--password=***"), "{shown}");
        assert!(
            shown.ends_with("--no-session-persistence --max-turns 12"),
            "{shown}"
        );
    }
}
