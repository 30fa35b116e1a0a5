//! Small text helpers every stage and front-end shares, written once: counts with their noun,
//! durations read and written, names made safe for a file name, and text made safe for a
//! terminal.

use std::time::Duration;

/// "1 file", "3 files": `n` with the noun in the right number.
pub fn plural<N: TryInto<u64>>(n: N, one: &str, many: &str) -> String {
    let n: u64 = n.try_into().unwrap_or(u64::MAX);
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `word` with its indefinite article: "an important", "a critical", "a suggestion".
pub fn with_article(word: &str) -> String {
    let vowel = word
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// "4m12s", "12s", "2.5s", "1h2m": short, for progress lines and command output.
pub fn duration_short(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 3600 {
        format!("{}h{}m", secs / 3600, (secs % 3600) / 60)
    } else if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else if secs >= 10 || d.subsec_millis() == 0 {
        format!("{secs}s")
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// "15 min 6 s", "42 s": as the reference reports write a wall-clock time.
pub fn duration_long(seconds: f64) -> String {
    let total = seconds.max(0.0).round() as u64;
    let (m, s) = (total / 60, total % 60);
    if m == 0 {
        format!("{s} s")
    } else {
        format!("{m} min {s} s")
    }
}

/// The longest duration deep-review waits for anything: a hundred years, "never" in practice.
/// Durations from config, the command line or a server (`timeout = "18446744073709551615s"`, a
/// `retry-after` of 1e300) saturate here instead of overflowing an `Instant` or a `Duration`.
pub const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `from + after`, or `from + FOREVER` when that is later or would overflow: a deadline never
/// panics, however long the timeout it comes from.
pub fn deadline(from: std::time::Instant, after: Duration) -> std::time::Instant {
    let after = after.min(FOREVER);
    from.checked_add(after)
        .or_else(|| from.checked_add(Duration::from_secs(24 * 3600)))
        .unwrap_or(from)
}

/// Seconds as a [`Duration`]: negative and NaN are zero, too many are [`FOREVER`] (never the
/// panic of `Duration::from_secs_f64`).
pub fn seconds(s: f64) -> Duration {
    if s.is_nan() || s <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(s).map_or(FOREVER, |d| d.min(FOREVER))
}

/// Reads a duration as people write one: `30m`, `90s`, `1h30m`, `1h 30m`, `500ms`, `15 min 6 s`,
/// `` `37 min 45 s` `` and `12:05` (minutes and seconds). A number without a unit (`30`: seconds?
/// minutes?) is refused rather than guessed. The units are humantime's.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let hint = "write a duration like `30m`, `90s` or `1h30m`";
    let s = text.trim().trim_matches('`').trim();
    if s.is_empty() {
        return Err(format!("empty duration: {hint}"));
    }
    if s.contains(':') && s.chars().all(|c| c.is_ascii_digit() || c == ':') {
        let mut total: u64 = 0;
        for part in s.split(':') {
            let n: u64 = part
                .parse()
                .map_err(|_| format!("`{text}` is not a duration: {hint}"))?;
            total = total.saturating_mul(60).saturating_add(n);
        }
        return Ok(Duration::from_secs(total).min(FOREVER));
    }
    let parsed = humantime::parse_duration(s).map_err(|err| match err {
        humantime::DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
            format!("`{text}` has a number without a unit: {hint}")
        }
        humantime::DurationError::UnknownUnit { unit, .. } => {
            format!("`{unit}` in `{text}` is not a unit (h, m, s, ms): {hint}")
        }
        humantime::DurationError::NumberOverflow => {
            format!("`{text}` is too large a duration: {hint}")
        }
        _ => format!("`{text}` is not a duration: {hint}"),
    })?;
    // A duration past a hundred years means "no limit": it saturates there.
    Ok(parsed.min(FOREVER))
}

/// A name made safe as one file-name component: ASCII letters, digits, `.`, `_` and `-`; anything
/// else becomes `-`, runs of `-` collapse, the ends are trimmed (`feat/x y` → `feat-x-y`, `../x`
/// → `x`), and at most 80 characters are kept. `fallback` when nothing is left.
pub fn safe_file_name(name: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.');
    let mut label: String = trimmed.chars().take(80).collect();
    if label.is_empty() {
        label.push_str(fallback);
    }
    label
}

/// At most `max` characters of `text`, with `…` in place of the rest.
pub fn truncate_chars(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((at, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..at])),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// `text` safe to print on a terminal: control characters (escape sequences, bells, carriage
/// returns, C1 controls) are shown as `\x1b`-style escapes instead of acting on the terminal,
/// and invisible characters that change how text reads as `\u{202e}` ([`reveal_invisible`]).
/// An agent's output, a file name or a commit subject can carry `\x1b]52;c;...` (a clipboard
/// write) or a title change; printed raw, they would act. Newlines and tabs are kept.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| is_unsafe_control(c) || is_invisible(c))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_control(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else if is_invisible(c) {
            push_revealed(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` with every character that changes how text reads without being seen written out as
/// `\u{202e}`: bidirectional embeddings, overrides, isolates and marks (a `\u{202e}` makes
/// `exe.txt` of `txt.exe`, or code read in another order than it runs: "Trojan Source"),
/// zero-width spaces and joiners, word joiners and invisible operators, the byte order mark.
/// The one function the terminal, the Markdown and HTML reports and forge comments share.
pub fn reveal_invisible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_invisible(c) {
            push_revealed(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn push_revealed(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = write!(out, "\\u{{{:04x}}}", c as u32);
}

/// Characters that change how text reads and show nothing themselves ([`reveal_invisible`]).
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{061c}'                     // Arabic letter mark
        | '\u{115f}' | '\u{1160}'      // Hangul fillers
        | '\u{17b4}' | '\u{17b5}'      // Khmer invisible vowels
        | '\u{180e}'                   // Mongolian vowel separator
        | '\u{200b}'..='\u{200f}'      // zero-width space, non-joiner, joiner; LRM, RLM
        | '\u{202a}'..='\u{202e}'      // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}'      // word joiner, invisible operators
        | '\u{2066}'..='\u{206f}'      // bidi isolates, deprecated format characters
        | '\u{3164}' | '\u{ffa0}'      // Hangul fillers
        | '\u{feff}'                   // zero-width no-break space (BOM)
    )
}

/// [`printable`] for one line: newlines and tabs become spaces as well.
pub fn printable_line(text: &str) -> String {
    printable(text).replace(['\n', '\t'], " ")
}

fn is_unsafe_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_line_separator(c)
}

/// A control character, or Unicode's line and paragraph separators: what may not stand in a
/// one-line name.
fn breaks_a_name(c: char) -> bool {
    c.is_control() || is_line_separator(c)
}

fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Why `name` cannot be a display name, if it cannot: a display name is written into headings,
/// table rows and comments, so a newline or another control character in it would start a
/// heading of its own (`\n## Verdict`) or an HTML comment in the report.
pub fn display_name_problem(name: &str) -> Option<String> {
    let bad = name.chars().find(|&c| breaks_a_name(c))?;
    let what = match bad {
        '\n' | '\r' | '\u{2028}' | '\u{2029}' => "a line break".to_string(),
        '\t' => "a tab".to_string(),
        c => format!("the control character {}", printable(&c.to_string())),
    };
    Some(format!(
        "the display name {:?} holds {what}: write it on one line, with printable characters",
        printable_line(name)
    ))
}

/// A display name as one line of printable text, whatever it holds (one read from a saved
/// report): control characters become spaces.
pub fn one_line_name(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(breaks_a_name) {
        return std::borrow::Cow::Borrowed(name);
    }
    let flat: String = name
        .chars()
        .map(|c| if breaks_a_name(c) { ' ' } else { c })
        .collect();
    std::borrow::Cow::Owned(flat.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Writes one line to standard error. Unlike `eprintln!`, a closed stderr (`deep-review run
/// 2>&1 | head -1`) is not a panic: the line is dropped, the run goes on and its report is
/// written.
pub fn say(line: &str) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// [`say`] with `format!` arguments.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::text::say(&format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_saturate_instead_of_overflowing() {
        let now = std::time::Instant::now();
        assert!(deadline(now, Duration::MAX) > now);
        assert_eq!(
            deadline(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert_eq!(seconds(1e300), FOREVER);
        assert_eq!(seconds(f64::INFINITY), FOREVER);
        assert_eq!(seconds(f64::NAN), Duration::ZERO);
        assert_eq!(seconds(-3.0), Duration::ZERO);
        assert_eq!(seconds(1.5), Duration::from_millis(1500));
        assert_eq!(parse_duration("18446744073709551615s"), Ok(FOREVER));
        assert_eq!(parse_duration("99999999999999:00"), Ok(FOREVER));
        assert_eq!(duration_short(FOREVER), "876000h0m");
    }

    #[test]
    fn articles_follow_the_sound() {
        assert_eq!(with_article("important"), "an important");
        assert_eq!(with_article("critical"), "a critical");
        assert_eq!(with_article("suggestion"), "a suggestion");
    }

    #[test]
    fn counts_read_naturally() {
        assert_eq!(plural(1u32, "file", "files"), "1 file");
        assert_eq!(plural(3u64, "retry", "retries"), "3 retries");
    }

    #[test]
    fn durations_are_written_short_and_long() {
        assert_eq!(duration_short(Duration::from_millis(2500)), "2.5s");
        assert_eq!(duration_short(Duration::from_secs(59)), "59s");
        assert_eq!(duration_short(Duration::from_secs(252)), "4m12s");
        assert_eq!(duration_short(Duration::from_secs(3720)), "1h2m");
        assert_eq!(duration_long(906.0), "15 min 6 s");
        assert_eq!(duration_long(42.4), "42 s");
    }

    #[test]
    fn durations_are_read_as_written_in_config_and_reports() {
        let secs = |s: &str| parse_duration(s).map(|d| d.as_secs_f64());
        assert_eq!(secs("30m"), Ok(1800.0));
        assert_eq!(secs("1h 30m"), Ok(5400.0));
        assert_eq!(secs("500ms"), Ok(0.5));
        assert_eq!(secs("`15 min 6 s`"), Ok(906.0));
        assert_eq!(secs("5m 07s"), Ok(307.0));
        assert_eq!(secs("7:09"), Ok(429.0));
        for bad in ["", "30", "m", "5x", "-3m", "soon"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("30").unwrap_err().contains("without a unit"));
    }

    #[test]
    fn control_characters_cannot_act_on_the_terminal() {
        let hostile = "ok \x1b]52;c;aGVsbG8=\x07 \x1b[2J\r\u{9b}31m";
        let shown = printable(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(shown, "ok \\x1b]52;c;aGVsbG8=\\x07 \\x1b[2J\\x0d\\x9b31m");
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(printable_line("two\nlines"), "two lines");
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate_chars("héllo", 10), "héllo");
        assert_eq!(truncate_chars("héllo", 2), "hé…");
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(safe_file_name("feat/new thing", "change"), "feat-new-thing");
        assert_eq!(safe_file_name("user//x..y", "change"), "user-x..y");
        assert_eq!(safe_file_name("../../etc", "change"), "etc");
        assert_eq!(safe_file_name("///", "change"), "change");
        assert_eq!(safe_file_name("ünï", "change"), "n");
        assert_eq!(safe_file_name("", "agent"), "agent");
    }
}
