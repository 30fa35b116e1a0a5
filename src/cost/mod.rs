//! What a review costs: tokens priced per model, from the user's `[prices."model"]` over a
//! built-in table of list prices (each entry names the date its price was checked).
//!
//! Costs here are estimates by design: list prices ignore discounts, cached input is priced as
//! plain input (an upper bound), and tokens a server did not report are counted at four bytes a
//! token ([`crate::types::TokenUsage::estimated`]). A CLI that reports its own cost (Claude
//! Code's `total_cost_usd`) is believed instead.

use std::collections::BTreeMap;

use crate::types::{AgentSpec, TokenUsage};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

impl Price {
    /// What `input` and `output` tokens cost.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_mtok + output as f64 * self.output_per_mtok) / 1_000_000.0
    }
}

/// One entry of the built-in table: a model name (or the start of one), its list price, and
/// the date that price was read from the provider's price page.
struct ListPrice {
    model: &'static str,
    input: f64,
    output: f64,
    as_of: &'static str,
}

const fn list(model: &'static str, input: f64, output: f64, as_of: &'static str) -> ListPrice {
    ListPrice {
        model,
        input,
        output,
        as_of,
    }
}

/// List prices of common models, per million tokens (standard tier, no batch or cache
/// discounts). A name matches a model that is it or starts with it followed by `-`, so
/// `claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`; the longest match wins.
const LIST_PRICES: &[ListPrice] = &[
    list("claude-opus-4-6", 5.0, 25.0, "2026-03-21"),
    list("claude-opus-4-5", 5.0, 25.0, "2026-03-21"),
    list("claude-opus-4-1", 15.0, 75.0, "2026-03-21"),
    list("claude-opus-4", 15.0, 75.0, "2026-03-21"),
    list("claude-sonnet-4-6", 3.0, 15.0, "2026-03-21"),
    list("claude-sonnet-4-5", 3.0, 15.0, "2026-03-21"),
    list("claude-sonnet-4", 3.0, 15.0, "2026-03-21"),
    list("claude-haiku-4-5", 1.0, 5.0, "2026-03-21"),
    list("claude-3-5-haiku", 0.8, 4.0, "2025-08-01"),
    // Claude Code's model aliases.
    list("opus", 5.0, 25.0, "2026-03-21"),
    list("sonnet", 3.0, 15.0, "2026-03-21"),
    list("haiku", 1.0, 5.0, "2026-03-21"),
    list("gpt-5", 1.25, 10.0, "2025-11-20"),
    list("gpt-5-mini", 0.25, 2.0, "2025-11-20"),
    list("gpt-5-nano", 0.05, 0.4, "2025-11-20"),
    list("gpt-5.1", 1.25, 10.0, "2025-11-20"),
    list("gpt-4.1", 2.0, 8.0, "2025-11-20"),
    list("gpt-4.1-mini", 0.4, 1.6, "2025-11-20"),
    list("gpt-4o", 2.5, 10.0, "2025-11-20"),
    list("gpt-4o-mini", 0.15, 0.6, "2025-11-20"),
    list("o3", 2.0, 8.0, "2025-11-20"),
    list("o4-mini", 1.1, 4.4, "2025-11-20"),
    list("gemini-2.5-pro", 1.25, 10.0, "2025-11-20"),
    list("gemini-2.5-flash", 0.3, 2.5, "2025-11-20"),
    list("gemini-2.5-flash-lite", 0.1, 0.4, "2025-11-20"),
];

/// A model's price and where it comes from, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    pub price: Price,
    /// "list price of gpt-5 as of 2025-11-20", "your price for qwen2.5-coder".
    pub basis: String,
    /// The price is the user's own (`[prices]`), not the list's: "at your price", not "at the
    /// your price".
    pub users_own: bool,
}

/// The prices a run uses: the user's own over the built-in list prices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    user: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The built-in list prices with the user's `[prices."model"]` over them.
    pub fn new(user: BTreeMap<String, Price>) -> PriceTable {
        PriceTable {
            user: user
                .into_iter()
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v))
                .collect(),
        }
    }

    /// The price of `model`: the user's entry for it (exact, then the longest name it starts
    /// with), else the list's. A gateway's `vendor/model` is looked up by its last part too.
    pub fn lookup(&self, model: &str) -> Option<Priced> {
        let wanted = model.trim().to_ascii_lowercase();
        let bare = wanted.rsplit('/').next().unwrap_or(&wanted).to_string();
        for name in [&wanted, &bare] {
            if let Some((key, price)) =
                best_match(self.user.iter().map(|(k, v)| (k.as_str(), v)), name)
            {
                return Some(Priced {
                    price: *price,
                    basis: format!("your price for {key}"),
                    users_own: true,
                });
            }
        }
        for name in [&wanted, &bare] {
            let found = best_match(LIST_PRICES.iter().map(|l| (l.model, l)), name);
            if let Some((_, l)) = found {
                return Some(Priced {
                    price: Price {
                        input_per_mtok: l.input,
                        output_per_mtok: l.output,
                    },
                    basis: format!("list price of {} as of {}", l.model, l.as_of),
                    users_own: false,
                });
            }
        }
        None
    }

    /// The price of the model `spec` uses, when it names one that has a price.
    pub fn for_agent(&self, spec: &AgentSpec) -> Option<Priced> {
        spec.model.as_deref().and_then(|m| self.lookup(m))
    }
}

/// The entry whose name is `model` or the longest that `model` starts with followed by `-`
/// (or `.`, `:` or `@`: `gpt-5.1`, `qwen2.5-coder:14b`, `model@2025`).
fn best_match<'a, T>(
    entries: impl Iterator<Item = (&'a str, T)>,
    model: &str,
) -> Option<(&'a str, T)> {
    let mut best: Option<(&'a str, T)> = None;
    for (name, value) in entries {
        let fits = model == name
            || model
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(['-', ':', '@']));
        if fits && best.as_ref().is_none_or(|(b, _)| name.len() > b.len()) {
            best = Some((name, value));
        }
    }
    best
}

/// What a run cost, from its tokens and the price table: `(usd, basis)`.
pub fn price_tokens(priced: &Priced, tokens: &TokenUsage) -> (f64, String) {
    let usd = priced.price.cost(tokens.input, tokens.output);
    let which = if tokens.estimated {
        "estimated"
    } else {
        "reported"
    };
    let the = if priced.users_own { "" } else { "the " };
    (usd, format!("{which} tokens at {the}{}", priced.basis))
}

/// Output a CLI agent is expected to write when nothing bounds it: a long review.
pub const EXPECTED_CLI_OUTPUT_TOKENS: u64 = 4_000;

/// An estimate of what running `spec` on a prompt of `prompt_tokens` costs before it runs:
/// the prompt at the input price plus the expected output (a model API's `max_output_tokens`,
/// an upper bound; a CLI's [`EXPECTED_CLI_OUTPUT_TOKENS`]). A CLI reads files beyond its
/// prompt, so its real cost is higher. `None` when the model has no price.
pub fn estimate(table: &PriceTable, spec: &AgentSpec, prompt_tokens: usize) -> Option<f64> {
    let priced = table.for_agent(spec)?;
    let output = if spec.kind.is_http() {
        u64::from(spec.max_output_tokens())
    } else {
        EXPECTED_CLI_OUTPUT_TOKENS
    };
    Some(priced.price.cost(prompt_tokens as u64, output))
}

/// `$0.0123` for small amounts, `$1.23` above a dollar.
pub fn usd(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_model_names_find_their_list_price() {
        let table = PriceTable::default();
        let p = table.lookup("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(p.price.input_per_mtok, 3.0);
        assert!(
            p.basis.contains("list price of claude-sonnet-4-5 as of"),
            "{}",
            p.basis
        );
        // The longest name wins: gpt-5-mini is not gpt-5.
        assert_eq!(
            table
                .lookup("gpt-5-mini-2025-08-07")
                .unwrap()
                .price
                .output_per_mtok,
            2.0
        );
        assert_eq!(table.lookup("gpt-5").unwrap().price.output_per_mtok, 10.0);
        assert_eq!(
            table
                .lookup("openrouter/gpt-4o")
                .unwrap()
                .price
                .input_per_mtok,
            2.5
        );
        assert!(table.lookup("gpt-50").is_none());
        assert!(table.lookup("smollm2").is_none());
    }

    #[test]
    fn the_users_price_wins_over_the_list() {
        let mut user = BTreeMap::new();
        user.insert(
            "GPT-5".to_string(),
            Price {
                input_per_mtok: 1.0,
                output_per_mtok: 2.0,
            },
        );
        user.insert(
            "qwen2.5-coder".to_string(),
            Price {
                input_per_mtok: 0.0,
                output_per_mtok: 0.0,
            },
        );
        let table = PriceTable::new(user);
        let p = table.lookup("gpt-5").unwrap();
        assert_eq!(p.price.output_per_mtok, 2.0);
        assert_eq!(p.basis, "your price for gpt-5");
        assert_eq!(
            table.lookup("qwen2.5-coder:14b").unwrap().basis,
            "your price for qwen2.5-coder"
        );
    }

    #[test]
    fn tokens_are_priced_per_million_and_estimates_say_so() {
        let priced = PriceTable::default().lookup("claude-haiku-4-5").unwrap();
        let tokens = TokenUsage {
            input: 2_000_000,
            output: 100_000,
            cached: 0,
            estimated: true,
        };
        let (usd_amount, basis) = price_tokens(&priced, &tokens);
        assert!((usd_amount - 2.5).abs() < 1e-9);
        assert!(basis.starts_with("estimated tokens"), "{basis}");
        assert_eq!(usd(2.5), "$2.50");
        assert_eq!(usd(0.00123), "$0.0012");
    }

    #[test]
    fn the_basis_reads_as_english_for_list_and_own_prices() {
        let reported = TokenUsage {
            input: 1_000,
            output: 100,
            cached: 0,
            estimated: false,
        };
        let list = PriceTable::default().lookup("claude-haiku-4-5").unwrap();
        let (_, basis) = price_tokens(&list, &reported);
        assert!(
            basis.starts_with("reported tokens at the list price of "),
            "{basis}"
        );
        let own = PriceTable::new(BTreeMap::from([(
            "gpt-5".to_string(),
            Price {
                input_per_mtok: 1.0,
                output_per_mtok: 2.0,
            },
        )]))
        .lookup("gpt-5")
        .unwrap();
        let (_, basis) = price_tokens(&own, &reported);
        assert_eq!(basis, "reported tokens at your price for gpt-5");
    }
}
