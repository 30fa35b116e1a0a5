//! Durations as people write them in config: `30m`, `90s`, `1h30m`, `2h`, `500ms`.

use std::time::Duration;

/// Parses `30m`, `90s`, `1h30m`, `1h 30m`, `500ms`. Every number needs a unit, so `30` (seconds?
/// minutes?) is refused rather than guessed.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let hint = "write a duration like `30m`, `90s` or `1h30m`";
    let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if s.is_empty() {
        return Err(format!("empty duration: {hint}"));
    }
    let mut total = Duration::ZERO;
    let mut rest = s.as_str();
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: {hint}"));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{text}` is too large a duration: {hint}"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let part = match unit {
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "m" | "min" => Duration::from_secs(n.saturating_mul(60)),
            "s" => Duration::from_secs(n),
            "ms" => Duration::from_millis(n),
            "" => return Err(format!("`{text}` has a number without a unit: {hint}")),
            other => {
                return Err(format!(
                    "`{other}` in `{text}` is not a unit (h, m, s, ms): {hint}"
                ));
            }
        };
        total = total.saturating_add(part);
    }
    if total.is_zero() {
        return Err(format!(
            "`{text}` is zero: a timeout must be longer than that"
        ));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn accepted_forms() {
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn refused_forms() {
        for bad in ["", "30", "m", "5x", "0s", "1.5h", "-3m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
