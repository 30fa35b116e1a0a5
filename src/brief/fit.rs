//! Fitting a brief into a token budget.
//!
//! The brief goes to every agent on every run, so a change of 20,000 files or a range of 16,000
//! commits must not become megabytes of prompt. When the whole brief is over budget:
//!
//! 1. a long description and context file are cut to a share of the budget;
//! 2. the template is rendered with empty lists (the fixed part), with only the files, and with
//!    only the commits, which calibrates what one list line costs in *this* template (a custom
//!    template may print each file twice, or not at all);
//! 3. the files (in order of relevance) and the newest commits are kept while they fit, commits
//!    taking at most a quarter of what is left, and the rest is named by count, kind and folder
//!    in the brief's "Left out" section;
//! 4. the result is rendered and checked; if an estimate was off, the lists shrink by the
//!    overshoot and it is rendered again (a few rounds at most, then empty lists).
//!
//! Every step is linear in the lists; the template is rendered at most about ten times.

use std::collections::HashMap;

use super::{BriefContext, BriefFile, Relevance, context::cut, estimate_tokens};

/// The fitted brief's text and what fitting it cost.
pub(crate) struct Fitted {
    pub text: String,
    /// The variables the text was rendered from (lists and text as cut).
    pub vars: BriefContext,
    /// What the brief would take with nothing left out.
    pub full_tokens: usize,
    pub omitted: Vec<String>,
    pub warning: Option<String>,
}

type Render<'a> = &'a dyn Fn(&BriefContext) -> anyhow::Result<String>;

/// Renders `vars`, cutting lists and long text to fit `budget` tokens when it is set.
pub(crate) fn fit(
    mut vars: BriefContext,
    budget: Option<usize>,
    render: Render,
) -> anyhow::Result<Fitted> {
    let full = render(&vars)?;
    let full_tokens = estimate_tokens(full.len());
    let Some(budget) = budget.filter(|b| full_tokens > *b) else {
        return Ok(Fitted {
            text: full,
            vars,
            full_tokens,
            omitted: Vec::new(),
            warning: None,
        });
    };
    drop(full);

    let mut cut_text = cut_description_and_context(&mut vars, budget);
    cut_text.extend(cut_threads(&mut vars, budget));
    let all_files = std::mem::take(&mut vars.files);
    let all_commits = std::mem::take(&mut vars.commits);
    let lists = Lists {
        files: &all_files,
        commits: &all_commits,
        diff_range: format!("{}..{}", vars.merge_base_short, short(&vars.head)),
    };
    let plan = ListPlan::measure(&mut vars, &lists, &cut_text, budget, render)?;
    let text = plan.render(&mut vars, &lists, &cut_text, budget, render)?;
    let omitted = vars.omitted.clone();
    let warning = over_budget_warning(
        budget,
        full_tokens,
        &omitted,
        estimate_tokens(text.len()),
        plan.fixed,
    );
    Ok(Fitted {
        text,
        vars,
        full_tokens,
        omitted,
        warning: Some(warning),
    })
}

/// Free text first: a description and a context file each get a share of the budget. Returns
/// what was left out of them.
fn cut_description_and_context(vars: &mut BriefContext, budget: usize) -> Vec<String> {
    let mut cut_text = Vec::new();
    if let Some(desc) = vars.description.take() {
        let max = budget / 8 * 4;
        if desc.len() > max {
            cut_text.push(format!(
                "the rest of the description, after its first {}",
                kib(max)
            ));
        }
        vars.description = Some(cut(desc, max, "the description itself"));
    }
    if let Some(mut ctx) = vars.context.take() {
        let max = budget / 4 * 4;
        if ctx.text.len() > max {
            cut_text.push(format!(
                "the rest of the context file `{}`, after its first {}",
                ctx.path,
                kib(max)
            ));
            ctx.text = cut(ctx.text, max, "the file itself");
        }
        vars.context = Some(ctx);
    }
    cut_text
}

/// The pull request's review threads: the oldest first, within the description's share.
/// Returns what was left out of them.
fn cut_threads(vars: &mut BriefContext, budget: usize) -> Option<String> {
    if vars.threads.is_empty() {
        return None;
    }
    let max = budget / 8 * 4;
    let mut used = 0;
    let keep = vars
        .threads
        .iter()
        .take_while(|t| {
            used += t.body.len() + t.location.as_ref().map_or(0, String::len) + 80;
            used <= max
        })
        .count();
    if keep >= vars.threads.len() {
        return None;
    }
    let left_out = format!(
        "the last {} of the pull request's unresolved review threads (the report lists them all)",
        vars.threads.len() - keep
    );
    vars.threads.truncate(keep);
    Some(left_out)
}

/// How many files and commits to show first, from what the lists cost in this template.
struct ListPlan {
    /// Tokens of the brief with empty lists.
    fixed: usize,
    /// Tokens the budget leaves for the lists.
    avail: usize,
    files: usize,
    commits: usize,
}

impl ListPlan {
    /// Renders the fixed part and each list on its own, and fits the lists to what is left
    /// (commits taking at most a quarter).
    fn measure(
        vars: &mut BriefContext,
        lists: &Lists,
        cut_text: &[String],
        budget: usize,
        render: Render,
    ) -> anyhow::Result<Self> {
        // The cost of the fixed part, and of each list on its own, in this template.
        vars.omitted = lists.omitted(0, 0, cut_text);
        let fixed = tokens(render, vars)?;
        vars.files = lists.files.to_vec();
        let files_cost = tokens(render, vars)?.saturating_sub(fixed);
        vars.files = Vec::new();
        vars.commits = lists.commits.to_vec();
        let commits_cost = tokens(render, vars)?.saturating_sub(fixed);

        let file_weights: Vec<usize> = lists
            .files
            .iter()
            .map(|f| f.path.len() + f.old_path.as_ref().map_or(0, String::len) + 24)
            .collect();
        // Newest first: the commits kept are the last ones.
        let commit_weights: Vec<usize> = lists
            .commits
            .iter()
            .rev()
            .map(|c| c.sha.len() + c.subject.len() + 8)
            .collect();
        let file_price = Price::new(&file_weights, files_cost);
        let commit_price = Price::new(&commit_weights, commits_cost);

        let avail = budget.saturating_sub(fixed);
        let commit_share = commits_cost.min(avail / 4);
        let files = file_price.fits(avail - commit_share);
        let commits = commit_price.fits(avail - file_price.cost(files));
        Ok(ListPlan {
            fixed,
            avail,
            files,
            commits,
        })
    }

    /// Renders with the planned lists; if an estimate was off, shrinks them by the overshoot
    /// and renders again (six rounds at most, then empty lists).
    fn render(
        &self,
        vars: &mut BriefContext,
        lists: &Lists,
        cut_text: &[String],
        budget: usize,
        render: Render,
    ) -> anyhow::Result<String> {
        let (mut n_files, mut n_commits) = (self.files, self.commits);
        let mut rounds = 0;
        loop {
            vars.files = lists.files[..n_files].to_vec();
            vars.commits = lists.commits[lists.commits.len() - n_commits..].to_vec();
            vars.omitted = lists.omitted(n_files, n_commits, cut_text);
            let text = render(vars)?;
            let got = estimate_tokens(text.len());
            rounds += 1;
            if got <= budget || (n_files == 0 && n_commits == 0) {
                return Ok(text);
            }
            if rounds >= 6 {
                n_files = 0;
                n_commits = 0;
                continue;
            }
            // Shrink both lists by the overshoot, and a little more.
            let over_lists = got.saturating_sub(self.fixed).max(1);
            let factor = self.avail as f64 / over_lists as f64 * 0.9;
            n_files = (n_files as f64 * factor) as usize;
            n_commits = (n_commits as f64 * factor) as usize;
        }
    }
}

/// The warning of a brief that was cut, and of one still over its budget.
fn over_budget_warning(
    budget: usize,
    full_tokens: usize,
    omitted: &[String],
    got: usize,
    fixed: usize,
) -> String {
    let mut warning = format!(
        "the change does not fit a brief of {} tokens (about {} with everything listed): left \
         out {}",
        thousands(budget),
        thousands(full_tokens),
        omitted.join("; ")
    );
    if got > budget {
        warning.push_str(&format!(
            "; even so the brief takes about {} tokens, over its budget (the template and \
             context alone take about {})",
            thousands(got),
            thousands(fixed)
        ));
    }
    warning
}

fn tokens(render: Render, vars: &BriefContext) -> anyhow::Result<usize> {
    Ok(estimate_tokens(render(vars)?.len()))
}

/// What a prefix of a list costs, from each item's weight scaled to the list's measured cost.
struct Price {
    /// `prefix[k]`: the summed weight of the first `k` items.
    prefix: Vec<usize>,
    per_weight: f64,
}

impl Price {
    fn new(weights: &[usize], measured_tokens: usize) -> Price {
        let mut prefix = Vec::with_capacity(weights.len() + 1);
        prefix.push(0);
        for w in weights {
            prefix.push(prefix.last().copied().unwrap_or(0) + w);
        }
        let total = prefix.last().copied().unwrap_or(0).max(1);
        Price {
            prefix,
            per_weight: measured_tokens as f64 / total as f64,
        }
    }

    fn cost(&self, k: usize) -> usize {
        (self.prefix[k] as f64 * self.per_weight).ceil() as usize
    }

    /// The most items whose cost is within `tokens`.
    fn fits(&self, tokens: usize) -> usize {
        // The prefix sums grow: binary search for the last that fits.
        let n = self.prefix.len() - 1;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.cost(mid) <= tokens {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

/// The full lists, to name what a cut leaves out.
struct Lists<'a> {
    files: &'a [BriefFile],
    commits: &'a [super::CommitInfo],
    diff_range: String,
}

impl Lists<'_> {
    /// One sentence per thing left out when the first `files` files and the last `commits`
    /// commits are shown.
    fn omitted(&self, files: usize, commits: usize, cut_text: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let left_files = &self.files[files.min(self.files.len())..];
        if !left_files.is_empty() {
            out.push(format!(
                "{} of the {} changed files, by kind {}, most of them in {}: `git diff --stat {}` \
                 lists them all",
                thousands(left_files.len()),
                thousands(self.files.len()),
                by_kind(left_files),
                by_folder(left_files),
                self.diff_range
            ));
        }
        let left_commits = self.commits.len() - commits.min(self.commits.len());
        if left_commits > 0 {
            out.push(format!(
                "the oldest {} of the {} commits: `git log --oneline {}` lists them all",
                thousands(left_commits),
                thousands(self.commits.len()),
                self.diff_range
            ));
        }
        out.extend(cut_text.iter().cloned());
        out
    }
}

/// "12,000 generated, 3 source": counts per kind, most relevant kind first.
pub(crate) fn by_kind(files: &[BriefFile]) -> String {
    let mut counts: HashMap<Relevance, usize> = HashMap::new();
    for f in files {
        *counts.entry(f.relevance).or_default() += 1;
    }
    Relevance::ALL
        .iter()
        .filter_map(|r| {
            counts
                .get(r)
                .map(|n| format!("{} {}", thousands(*n), r.noun()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "`vendor/` (9,000), `gen/` (3,000) and 12 other folders": the top-level folders holding the
/// most of `files`, at most five named.
pub(super) fn by_folder(files: &[BriefFile]) -> String {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for f in files {
        let top = match f.path.split_once('/') {
            Some((dir, _)) => dir,
            None => ".",
        };
        *counts.entry(top).or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let named: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|(dir, n)| {
            let dir = if *dir == "." {
                "the top folder".to_string()
            } else {
                format!("`{dir}/`")
            };
            format!("{dir} ({})", thousands(*n))
        })
        .collect();
    let others = ranked.len().saturating_sub(5);
    if others > 0 {
        format!(
            "{} and {}",
            named.join(", "),
            crate::text::plural(others, "other folder", "other folders")
        )
    } else {
        named.join(", ")
    }
}

/// 20000 → "20,000".
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_prices() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(20_000), "20,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let p = Price::new(&[10, 10, 20], 20);
        assert_eq!(p.cost(2), 10);
        assert_eq!(p.fits(9), 1);
        assert_eq!(p.fits(10), 2);
        assert_eq!(p.fits(100), 3);
        assert_eq!(p.fits(0), 0);
    }
}
