//! Parse + consolidate on generated reviews: 10 agents with N findings each.
//!
//! Each agent's finding `j` names defect `j % (N * 3 / 4)` in one of many files, in wording of its
//! own, so a quarter of the findings are repeats that clustering must merge and the rest are
//! distinct. Run: `cargo bench --bench consolidate`. `consolidate_fifth_round` consolidates the
//! same reviews as the fifth round of their change (four earlier reports with decisions), to
//! measure what matching against earlier rounds adds.

use deep_review::consolidate::{ConsolidateOptions, consolidate};
use deep_review::parse::parse_review;

const AGENTS: usize = 10;

fn main() {
    divan::main();
}

/// A tiny deterministic generator, so runs are comparable.
fn word(seed: usize) -> &'static str {
    const WORDS: &[&str] = &[
        "cache", "buffer", "token", "session", "handler", "parser", "queue", "lock", "retry",
        "timeout", "index", "cursor", "payload", "schema", "config", "worker", "channel", "socket",
        "stream", "batch", "offset", "window", "limit", "counter", "registry", "snapshot",
    ];
    WORDS[(seed.wrapping_mul(2654435761) >> 7) % WORDS.len()]
}

fn review_text(agent: usize, n: usize) -> String {
    let defects = (n * 3 / 4).max(1);
    let mut out = String::from(
        "## Executive Summary\n\nGenerated review.\n\n## Findings\n\n### Important Issues\n\n",
    );
    for j in 0..n {
        let d = (j + agent * 7) % defects;
        let (a, b, c) = (word(d), word(d + 101), word(d + 977));
        out.push_str(&format!(
            "{}. **{} {} leaks the {} in module {d}** — `src/m{}/f{}.rs:{}-{}` (important, regression)\n\n\
             ```rust\nlet {a}_{d} = {b}_{c}(input_{d});\n```\n\n\
             The `{a}_{d}` path drops the `{c}` guard; reviewer {agent} saw it fail under load. \
             Fix: keep the guard.\n\n",
            j + 1,
            a,
            b,
            c,
            d % 50,
            d,
            10 + d % 300,
            14 + d % 300,
        ));
    }
    out.push_str("## Coverage Summary\n\n- `src/lib.rs` — Reviewed\n");
    out
}

#[divan::bench(args = [100, 250, 500, 1000], sample_count = 5)]
fn parse_and_consolidate(bencher: divan::Bencher, n: usize) {
    let texts: Vec<String> = (0..AGENTS).map(|a| review_text(a, n)).collect();
    bencher.bench(|| {
        let reviews: Vec<_> = texts
            .iter()
            .enumerate()
            .map(|(a, t)| parse_review(&format!("agent{a}"), t))
            .collect();
        consolidate(&reviews, &ConsolidateOptions::default())
    });
}

#[divan::bench(args = [1000], sample_count = 3)]
fn parse_only(bencher: divan::Bencher, n: usize) {
    let texts: Vec<String> = (0..AGENTS).map(|a| review_text(a, n)).collect();
    bencher.bench(|| {
        texts
            .iter()
            .enumerate()
            .map(|(a, t)| parse_review(&format!("agent{a}"), t))
            .collect::<Vec<_>>()
    });
}

#[divan::bench(args = [1000], sample_count = 3)]
fn consolidate_only(bencher: divan::Bencher, n: usize) {
    let reviews: Vec<_> = (0..AGENTS)
        .map(|a| parse_review(&format!("agent{a}"), &review_text(a, n)))
        .collect();
    bencher.bench(|| consolidate(&reviews, &ConsolidateOptions::default()));
}

/// A first round of the same reviews, for comparison with `consolidate_fifth_round`.
#[divan::bench(args = [100, 500, 1000], sample_count = 3)]
fn consolidate_first_round(bencher: divan::Bencher, n: usize) {
    let reviews: Vec<_> = (0..AGENTS)
        .map(|a| parse_review(&format!("agent{a}"), &review_text(a, n)))
        .collect();
    bencher.bench(|| consolidate(&reviews, &ConsolidateOptions::default()));
}

/// The same change in its fifth round: four earlier reports of the generated reviews, each with
/// a Resolution that declines every third finding and fixes every third, so matching has a
/// decision to look up for most findings. Compare with `consolidate_only` at the same size.
#[divan::bench(args = [100, 500, 1000], sample_count = 3)]
fn consolidate_fifth_round(bencher: divan::Bencher, n: usize) {
    use deep_review::rounds::history::{assemble, from_report};
    use deep_review::types::{Action, Resolution, ResolutionItem};
    let reviews: Vec<_> = (0..AGENTS)
        .map(|a| parse_review(&format!("agent{a}"), &review_text(a, n)))
        .collect();
    let earlier = consolidate(&reviews, &ConsolidateOptions::default());
    let reads = (1..=4)
        .map(|round| {
            let mut report = earlier.clone();
            report.meta.round = Some(round);
            report.meta.id = format!("r{round}");
            report.resolution = Some(Resolution {
                items: report
                    .findings
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % 3 != 2)
                    .map(|(i, f)| ResolutionItem {
                        id: f.id.clone(),
                        title: f.title.clone(),
                        action: if i % 3 == 0 {
                            Action::Skipped
                        } else {
                            Action::Fixed
                        },
                        reason: "generated".into(),
                    })
                    .collect(),
                ..Resolution::default()
            });
            from_report(&report)
        })
        .collect();
    let opts = ConsolidateOptions {
        history: assemble(None, reads, Vec::new()),
        ..ConsolidateOptions::default()
    };
    bencher.bench(|| consolidate(&reviews, &opts));
}
