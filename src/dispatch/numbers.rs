//! Numbers an agent reports about its own run (its cost in USD, its token counts) are the
//! agent's word: a CLI steered by the change under review, or a model server that lies, can
//! print any number. A number is believed only when it could be true; one that could not is
//! dropped with a note, so it is never summed into `--budget-usd`, shown as the run's cost, or
//! kept in the bundle's records as if measured. deep-review then counts the run as it does one
//! that reported nothing (tokens estimated from the text, cost from the price table).

use crate::types::TokenUsage;

/// The most one agent's run of one review may be believed to cost. Today's dearest model
/// prices output at about $75 per million tokens: $10,000 is over 130 million output tokens in
/// one review, a hundred times what the largest context windows hold. A larger figure is a
/// lie or a bug, not a bill.
pub const MAX_COST_USD: f64 = 10_000.0;

/// The most tokens of one kind (input, output or cached) one agent's run may be believed to
/// have used: a billion is hundreds of turns of the largest context windows (two million
/// tokens), far past any review's turn limit.
pub const MAX_TOKENS: u64 = 1_000_000_000;

/// `usd` if it could be a real cost: finite, not negative, at most [`MAX_COST_USD`].
/// Otherwise the sentence saying why it was refused.
pub fn check_cost(usd: f64) -> Result<f64, String> {
    let why = if !usd.is_finite() {
        "is not a finite number"
    } else if usd < 0.0 {
        "is negative"
    } else if usd > MAX_COST_USD {
        "is more than any one review could cost ($10,000)"
    } else {
        return Ok(usd);
    };
    Err(format!(
        "the cost it reported ({}) {why}: it was not counted or shown",
        shown(usd)
    ))
}

/// `tokens` if every count could be real (at most [`MAX_TOKENS`] each). Otherwise the
/// sentence saying why they were refused.
pub fn check_tokens(tokens: &TokenUsage) -> Result<(), String> {
    let largest = tokens.input.max(tokens.output).max(tokens.cached);
    if largest > MAX_TOKENS {
        return Err(format!(
            "the token count it reported ({largest}) is more than any one review could use \
             ({MAX_TOKENS}): it was not counted or shown"
        ));
    }
    Ok(())
}

/// A reported cost and token usage with the ones that could not be true dropped; each one
/// dropped adds its note to `notes`.
pub fn believed(
    cost_usd: Option<f64>,
    tokens: Option<TokenUsage>,
    notes: &mut Vec<String>,
) -> (Option<f64>, Option<TokenUsage>) {
    let cost = cost_usd.and_then(|usd| check_cost(usd).map_err(|n| notes.push(n)).ok());
    let tokens = tokens.filter(|t| check_tokens(t).map_err(|n| notes.push(n)).is_ok());
    (cost, tokens)
}

/// A number as the note shows it: short, whatever its size.
fn shown(usd: f64) -> String {
    if usd.is_finite() && usd.abs() < 1e12 {
        format!("{usd}")
    } else {
        format!("{usd:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_that_could_not_be_real_are_refused_with_why() {
        assert_eq!(check_cost(0.0123), Ok(0.0123));
        assert_eq!(check_cost(0.0), Ok(0.0));
        assert_eq!(check_cost(MAX_COST_USD), Ok(MAX_COST_USD));
        assert!(
            check_cost(-99999.5)
                .unwrap_err()
                .contains("(-99999.5) is negative")
        );
        assert!(check_cost(f64::NAN).unwrap_err().contains("not a finite"));
        assert!(
            check_cost(f64::INFINITY)
                .unwrap_err()
                .contains("not a finite")
        );
        assert!(check_cost(1e300).unwrap_err().contains("(1e300)"));
        assert!(check_cost(10_000.01).is_err());
    }

    #[test]
    fn token_counts_past_the_ceiling_are_refused_and_the_rest_kept() {
        let t = |input, output| TokenUsage {
            input,
            output,
            cached: 0,
            estimated: false,
        };
        let mut notes = Vec::new();
        let (cost, tokens) = believed(Some(1.5), Some(t(10, 20)), &mut notes);
        assert_eq!((cost, tokens, notes.len()), (Some(1.5), Some(t(10, 20)), 0));
        let (cost, tokens) = believed(Some(-1.0), Some(t(10, u64::MAX)), &mut notes);
        assert_eq!((cost, tokens), (None, None));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].contains(&u64::MAX.to_string()));
    }
}
