//! The report as Markdown, in the reference layout of the Deep Review reports: metadata table,
//! Executive Summary, Critical/Important/Suggestions, Design Observations, Testing,
//! Documentation, Acknowledged Limitations, the Agent Performance Retro and the raw reviews
//! verbatim in the appendix. The report reader reads this layout back (round trip).

use std::fmt::Write;

use crate::types::{
    AgentRetro, AttributedNote, MergedFinding, ObservationKind, PriorItem, Report, RequestKind,
    Resolution, ReviewThread, RoundStatus, RunStatus, Severity, Tier,
};

const RULE: &str = "\n---\n\n";

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let displays = DisplayNames::new(report);
    metadata(&mut out, report);
    out.push_str(RULE);
    section(&mut out, "Executive Summary", &report.summary);
    out.push_str(RULE);
    if since_rounds(&mut out, report) {
        out.push_str(RULE);
    }

    for severity in Severity::ALL {
        let title = match severity {
            Severity::Critical => "Critical Issues",
            Severity::Important => "Important Issues",
            Severity::Suggestion => "Suggestions",
        };
        let list: Vec<&MergedFinding> = report
            .findings
            .iter()
            .filter(|f| f.is_shown() && f.severity == severity)
            .collect();
        findings_section(&mut out, title, &list, &displays);
        out.push_str(RULE);
    }

    set_aside_findings(&mut out, report, &displays);
    observations(&mut out, report, &displays);
    out.push_str(RULE);
    testing(&mut out, &report.testing_gaps, &displays);
    out.push_str(RULE);
    notes_section(
        &mut out,
        "Documentation Assessment",
        &report.documentation,
        &displays,
    );
    out.push_str(RULE);
    notes_section(
        &mut out,
        "Acknowledged Limitations",
        &report.limitations,
        &displays,
    );
    declined(&mut out, &report.prior_rounds.declined);
    out.push_str(RULE);
    if report.meta.pr.is_some() || !report.unresolved_feedback.is_empty() {
        let kind = report.meta.pr.as_ref().map(|p| p.kind).unwrap_or_default();
        unresolved_feedback(&mut out, &report.unresolved_feedback, kind);
        out.push_str(RULE);
    }
    retro(&mut out, &report.agents);
    run_notes(&mut out, report);
    out.push_str(RULE);
    appendix(&mut out, report);
    if let Some(res) = &report.resolution {
        out.push_str(RULE);
        out.push_str(&resolution(res));
    }
    // Agents' text, file names and commit subjects are someone else's: no control character
    // in them may act on the terminal of whoever reads the report with `cat`.
    match crate::text::printable(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// The findings kept out of the main lists: unverified, then low confidence, each section
/// only when it has one.
fn set_aside_findings(out: &mut String, report: &Report, displays: &DisplayNames) {
    let unverified: Vec<&MergedFinding> = report
        .findings
        .iter()
        .filter(|f| f.tier == Tier::Unverified)
        .collect();
    if !unverified.is_empty() {
        out.push_str("## Unverified Findings\n\nRaised by one reviewer only, and the code they cite \
            is not in the repository at head: likely false positives, kept here so nothing is lost.\n\n");
        for f in unverified {
            finding(out, f, displays);
        }
        out.push_str(RULE);
    }
    let low: Vec<&MergedFinding> = report
        .findings
        .iter()
        .filter(|f| f.tier == Tier::LowConfidence)
        .collect();
    if !low.is_empty() {
        let _ = writeln!(
            out,
            "## Low Confidence\n\n<details>\n<summary>{} finding{} with too little support to \
             stand among the findings</summary>\n",
            low.len(),
            if low.len() == 1 { "" } else { "s" }
        );
        for f in low {
            finding(out, f, displays);
        }
        out.push_str("</details>\n");
        out.push_str(RULE);
    }
}

/// `## Run Notes`: the check of the user's checkout and the run's warnings, when any.
fn run_notes(out: &mut String, report: &Report) {
    if !report.warnings.is_empty() || report.checkout.is_some() {
        out.push_str(RULE);
        out.push_str("## Run Notes\n\n");
        if let Some(check) = &report.checkout {
            let _ = writeln!(out, "- {}", checkout_sentence(check));
        }
        for w in &report.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
}

/// The "Since Round N" table: every earlier finding this round has something to say about.
/// Returns false (and writes nothing) in a first round.
fn since_rounds(out: &mut String, report: &Report) -> bool {
    let p = &report.prior_rounds;
    let Some(since) = p.since_round else {
        return false;
    };
    let _ = writeln!(
        out,
        "## Since Round {since}
"
    );
    if p.is_empty() {
        let _ = writeln!(
            out,
            "Round {since} raised nothing this round could compare with.",
        );
        return true;
    }
    out.push_str("| Round | Finding | Status | Now | Note |\n|---|---|---|---|---|\n");
    for (status, items) in [
        ("regressed", &p.regressed),
        ("persisting", &p.persisting),
        ("resolved", &p.resolved),
        ("declined", &p.declined),
    ] {
        for i in items {
            let id = if i.id.is_empty() {
                String::new()
            } else {
                format!("{} ", i.id)
            };
            let mut note = i.reason.clone();
            if status == "declined" {
                note = match &i.action {
                    Some(a) if note.is_empty() => a.to_string(),
                    Some(a) => format!("{a}: {note}"),
                    None => note,
                };
                if !i.raised_again.is_empty() {
                    note.push_str(&format!(
                        " (raised again and set aside: {})",
                        i.raised_again.join("; ")
                    ));
                }
            }
            let _ = writeln!(
                out,
                "| {} | {} | {status} | {} | {} |",
                i.round,
                cell(&format!("{id}{}", i.title)),
                i.now.as_deref().unwrap_or("—"),
                cell(&note)
            );
        }
    }
    true
}

/// "### Declined in prior rounds", in the reference reports' words: what the author declined
/// earlier, with the reason, and what this round raised again under it.
fn declined(out: &mut String, items: &[PriorItem]) {
    if items.is_empty() {
        return;
    }
    out.push_str("\n### Declined in prior rounds\n\n");
    for i in items {
        let id = if i.id.is_empty() {
            String::new()
        } else {
            format!(" ({})", i.id)
        };
        let mut line = format!(
            "- **{}** — declined Round {}{id}: {}",
            one_paragraph(&i.title),
            i.round,
            one_paragraph(&i.reason).trim_end_matches('.')
        );
        line.push('.');
        if !i.raised_again.is_empty() {
            line.push_str(&format!(
                " Raised again this round and set aside: {}.",
                one_paragraph(&i.raised_again.join("; "))
            ));
        }
        let _ = writeln!(out, "{line}");
    }
}

/// The `## Resolution` section in the reference layout: the Addressed and Commit rows, then one
/// row per decision.
pub fn resolution(res: &Resolution) -> String {
    let mut out = String::from("## Resolution\n\n| | |\n|---|---|\n");
    if let Some(day) = res.addressed {
        let _ = writeln!(out, "| **Addressed** | {day} |");
    }
    if !res.commits.is_empty() || res.commit_note.is_some() {
        let mut commits: Vec<String> = res
            .commits
            .iter()
            .map(|c| {
                if c.subject.is_empty() {
                    format!("`{}`", c.sha)
                } else {
                    format!("`{} {}`", c.sha, c.subject.replace('`', "'"))
                }
            })
            .collect::<Vec<_>>();
        if let Some(note) = &res.commit_note {
            commits.push(format!("({note})"));
        }
        let text = commits.join(" + ").replace(" + (", " (");
        let _ = writeln!(out, "| **Commit** | {} |", cell(&text));
    }
    out.push_str("\n| # | Finding | Action | Reason |\n|---|---------|--------|--------|\n");
    for (n, item) in res.items.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            n + 1,
            cell(&format!("{}: {}", finding_name(&item.id), item.title)),
            cell(item.action.as_str()),
            cell(&item.reason)
        );
    }
    out
}

/// `S4` → `Suggestion #4`, `T3` → `Testing Gap #3`: how Resolution tables name findings.
fn finding_name(id: &str) -> String {
    let mut chars = id.chars();
    let kind = match chars.next().map(|c| c.to_ascii_uppercase()) {
        Some('C') => "Critical",
        Some('I') => "Important",
        Some('S') => "Suggestion",
        Some('T') => "Testing Gap",
        Some('U') => "Unverified",
        Some('L') => "Low confidence",
        _ => return id.to_string(),
    };
    format!("{kind} #{}", chars.as_str())
}

/// Text for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    one_paragraph(text).replace('|', "\\|")
}

/// Agent short names → the names the report shows ([`Report::display_of`]).
struct DisplayNames<'r>(&'r Report);

impl<'r> DisplayNames<'r> {
    fn new(report: &'r Report) -> Self {
        DisplayNames(report)
    }

    fn of<'a>(&'a self, name: &'a str) -> &'a str {
        self.0.display_of(name)
    }

    fn list(&self, names: &[String]) -> String {
        names
            .iter()
            .map(|n| self.of(n))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn metadata(out: &mut String, report: &Report) {
    let m = &report.meta;
    let _ = writeln!(out, "# Deep Review: {}\n", m.id);
    out.push_str("| | |\n|---|---|\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(
            out,
            "| **{k}** | {} |",
            v.replace('|', "\\|").replace('\n', " ")
        );
    };
    if let Some(date) = m.date {
        row("Date", date.format("%Y-%m-%d %H:%M").to_string());
    }
    if let Some(repo) = &m.repo {
        row("Repo", repo.clone());
    }
    if let Some(round) = m.round {
        row(
            "Round",
            match &m.round_of {
                Some(of) => format!("{round} (of {of})"),
                None => round.to_string(),
            },
        );
    }
    if let Some(author) = &m.author {
        row("Author", author.clone());
    }
    if let Some(pr) = &m.pr {
        let link = match &pr.url {
            Some(url) => format!("[{}]({url})", pr.reference()),
            None => pr.reference(),
        };
        row(pr.kind.short(), format!("{link} — {}", pr.title));
    }
    if let Some(branch) = &m.branch {
        row("Branch", format!("`{branch}`"));
    }
    if let Some(head) = &m.head {
        row("Head", format!("`{head}`"));
    }
    if !m.commits.is_empty() {
        let commits: Vec<String> = m
            .commits
            .iter()
            .map(|c| format!("`{}` {}", c.sha, c.subject))
            .collect();
        row("Commits", commits.join("<br>"));
    }
    let reviewers: Vec<String> = m
        .reviewers
        .iter()
        .map(|r| match &r.effort {
            Some(effort) => format!("{} (effort: {effort})", r.display),
            None => r.display.clone(),
        })
        .collect();
    row("Reviewers", reviewers.join(", "));
    row(
        "Verdict",
        format!("**{}** — {}", report.verdict, report.verdict_rationale),
    );
    if let Some(s) = m.wall_clock_s {
        row(
            "Wall-clock time",
            format!("`{}`", crate::text::duration_long(s)),
        );
    }
}

fn section(out: &mut String, title: &str, body: &str) {
    let _ = writeln!(out, "## {title}\n");
    if body.trim().is_empty() {
        out.push_str("None.\n");
    } else {
        let _ = writeln!(out, "{}", no_headings(body.trim_end()));
    }
}

/// Agents' text in the report's own sections, with every heading line outside code escaped
/// (`\## Resolution`): a heading in a finding's body or a summary would otherwise read back as a
/// section of the report (its Resolution, its declined list), which only the report writes.
fn no_headings(text: &str) -> std::borrow::Cow<'_, str> {
    let mut fences = crate::parse::lines::Fences::default();
    let mut out = String::new();
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let code = fences.code(line);
        if !code && crate::parse::lines::atx_heading(line).is_some() {
            let indent = line.len() - line.trim_start_matches(' ').len();
            out.push_str(&line[..indent]);
            out.push('\\');
            out.push_str(&line[indent..]);
            changed = true;
        } else {
            out.push_str(line);
        }
    }
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

fn findings_section(
    out: &mut String,
    title: &str,
    list: &[&MergedFinding],
    displays: &DisplayNames<'_>,
) {
    let _ = writeln!(out, "## {title}\n");
    if list.is_empty() {
        out.push_str("None.\n");
        return;
    }
    for f in list {
        finding(out, f, displays);
    }
}

fn finding(out: &mut String, f: &MergedFinding, displays: &DisplayNames<'_>) {
    let locations: Vec<String> = f.locations.iter().map(|l| format!("`{l}`")).collect();
    let location = if locations.is_empty() {
        String::new()
    } else {
        format!(" — {}", locations.join(", "))
    };
    let category = f
        .category
        .as_ref()
        .map(|c| format!(", {c}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "**{}. {}**{location} [{}] ({}{category})\n",
        f.id,
        f.title,
        displays.list(&f.agents),
        f.severity
    );
    let mut notes = Vec::new();
    match (&f.round_status, &f.prior) {
        (RoundStatus::Regressed, Some(p)) => notes.push(format!(
            "Round: **regressed**, marked fixed in round {}{}.",
            p.round,
            prior_id(&p.id)
        )),
        (RoundStatus::Persisting, Some(p)) => notes.push(format!(
            "Round: persisting since round {}{}.",
            p.round,
            prior_id(&p.id)
        )),
        _ => {}
    }
    if let Some(c) = &f.calibration {
        notes.push(format!("Severity: {c}."));
    }
    if let Some(r) = &f.confidence_reason {
        notes.push(format!("Record: {r}."));
    }
    if let Some(note) = f.verification.as_ref().and_then(|v| v.note.as_ref()) {
        notes.push(format!("Verification: {note}."));
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "> {}\n", notes.join(" "));
    }
    if let Some(code) = &f.code {
        fenced(out, code.language.as_deref().unwrap_or(""), &code.code);
    }
    if !f.body.trim().is_empty() {
        let _ = writeln!(out, "{}\n", no_headings(f.body.trim()));
    }
    if let Some(fix) = &f.fix {
        let fix = no_headings(fix.trim());
        let fix = fix.as_ref();
        if fix.to_ascii_lowercase().starts_with("fix") {
            let _ = writeln!(out, "{fix}\n");
        } else {
            let _ = writeln!(out, "Fix: {fix}\n");
        }
    }
    if let Some(diff) = &f.fix_diff {
        fenced(out, "diff", diff);
    }
    if f.sources.len() > 1 {
        let ids: Vec<String> = f
            .sources
            .iter()
            .map(|s| match &s.noted_in {
                Some(section) => format!("also noted by {} in {section}", displays.of(&s.agent)),
                None => {
                    let sev = s.severity.map(|v| format!(", {v}")).unwrap_or_default();
                    format!("{} {}{sev}", displays.of(&s.agent), s.id)
                }
            })
            .collect();
        let _ = writeln!(out, "_Sources: {}._\n", ids.join("; "));
    }
}

fn prior_id(id: &str) -> String {
    if id.is_empty() {
        String::new()
    } else {
        format!(" ({id})")
    }
}

/// A fenced code block whose fence is longer than any backtick run inside it.
fn fenced(out: &mut String, lang: &str, code: &str) {
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(
        out,
        "{fence}{lang}\n{}\n{fence}\n",
        code.trim_end_matches('\n')
    );
}

fn observations(out: &mut String, report: &Report, displays: &DisplayNames<'_>) {
    out.push_str("## Design Observations\n\n");
    if report.observations.is_empty() {
        out.push_str("None.\n");
        return;
    }
    for (kind, title) in [
        (ObservationKind::Concern, "Concerns"),
        (ObservationKind::Strength, "Strengths"),
    ] {
        let list: Vec<_> = report
            .observations
            .iter()
            .filter(|o| o.kind == kind)
            .collect();
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "**{title}**\n");
        for o in list {
            let lead = o
                .title
                .as_ref()
                .map(|t| format!("**{t}** "))
                .unwrap_or_default();
            let scopes = if o.scopes.is_empty() {
                String::new()
            } else {
                format!("({}) ", o.scopes.join(", "))
            };
            let _ = writeln!(
                out,
                "- {lead}{scopes}[{}] — {}",
                displays.list(&o.agents),
                one_paragraph(&o.text)
            );
        }
        out.push('\n');
    }
}

fn testing(out: &mut String, gaps: &[AttributedNote], displays: &DisplayNames<'_>) {
    out.push_str("## Testing Assessment\n\n");
    if gaps.is_empty() {
        out.push_str("None.\n");
        return;
    }
    out.push_str("Untested scenarios, ranked by the reviewers:\n\n");
    for (i, g) in gaps.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. {} [{}]",
            i + 1,
            one_paragraph(&g.text),
            displays.list(&g.agents)
        );
    }
}

fn notes_section(
    out: &mut String,
    title: &str,
    notes: &[AttributedNote],
    displays: &DisplayNames<'_>,
) {
    let _ = writeln!(out, "## {title}\n");
    if notes.is_empty() {
        out.push_str("None.\n");
        return;
    }
    for n in notes {
        let _ = writeln!(
            out,
            "- {} [{}]",
            one_paragraph(&n.text),
            displays.list(&n.agents)
        );
    }
}

/// The pull request's (or merge request's) review threads that were open when the review started: where, who, and
/// the comment as a quote. The comments are other people's text: control characters are shown,
/// and a line that would read as a heading (which a report reader takes for a section) or a
/// setext underline is escaped.
fn unresolved_feedback(out: &mut String, threads: &[ReviewThread], kind: RequestKind) {
    out.push_str(
        "## Unresolved Feedback

",
    );
    if threads.is_empty() {
        let _ = writeln!(out, "No unresolved {} review comments.", kind.short());
        return;
    }
    for t in threads {
        let mut head = match (&t.path, t.line) {
            (Some(p), Some(l)) => format!("`{}:{l}`", inline_code_text(p)),
            (Some(p), None) => format!("`{}`", inline_code_text(p)),
            _ => format!("The {}", kind.noun()),
        };
        if let Some(a) = &t.author {
            head.push_str(&format!(
                " — @{}",
                one_paragraph(&crate::text::printable_line(a))
            ));
        }
        let mut extra = Vec::new();
        if t.outdated {
            extra.push("outdated".to_string());
        }
        if t.replies > 0 {
            extra.push(crate::text::plural(t.replies, "reply", "replies"));
        }
        if !extra.is_empty() {
            head.push_str(&format!(" ({})", extra.join(", ")));
        }
        if let Some(url) = t
            .url
            .as_deref()
            .filter(|u| crate::report::links::is_safe_href(u))
        {
            head.push_str(&format!(" [thread]({url})"));
        }
        let _ = writeln!(out, "- {head}\n");
        for line in crate::text::printable(t.body.trim()).lines() {
            let l = line.trim_end();
            let quoted = if l.trim_start().starts_with('#')
                || (!l.trim().is_empty() && l.trim().chars().all(|c| c == '=' || c == '-'))
            {
                format!("\\{}", l.trim_start())
            } else {
                l.to_string()
            };
            let _ = writeln!(out, "  > {quoted}");
        }
        out.push('\n');
    }
}

/// A path for a code span: no backticks or line breaks to end it early.
fn inline_code_text(path: &str) -> String {
    crate::text::printable_line(path).replace('`', "'")
}

/// Folds a multi-line note into one line so it stays one bullet.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn retro(out: &mut String, agents: &[AgentRetro]) {
    out.push_str("## Agent Performance Retro\n\n");
    for a in agents {
        let _ = writeln!(out, "### [{}]\n", a.display);
        let _ = writeln!(out, "{}\n", agent_paragraph(a));
    }
    out.push_str("### Summary\n\n");
    let mut header = String::from("| Metric |");
    let mut sep = String::from("|---|");
    for a in agents {
        let _ = write!(header, " {} |", a.display);
        sep.push_str("---|");
    }
    let _ = writeln!(out, "{header}\n{sep}");
    for (metric, cells) in retro_rows(agents) {
        let mut line = format!("| {metric} |");
        for cell in cells {
            let _ = write!(line, " {cell} |");
        }
        let _ = writeln!(out, "{line}");
    }
}

/// The rows of the retro's summary table: a metric and one cell per agent, in agent order.
/// The Markdown and HTML reports show the same table.
pub(crate) fn retro_rows(agents: &[AgentRetro]) -> Vec<(&'static str, Vec<String>)> {
    let dash = || "—".to_string();
    let row = |name: &'static str, cell: &dyn Fn(&AgentRetro) -> String| {
        (name, agents.iter().map(cell).collect::<Vec<_>>())
    };
    let mut rows = vec![
        row("Status", &|a| {
            a.status
                .map(|s| match s {
                    RunStatus::Ok => "ok".to_string(),
                    RunStatus::Failed => "failed".to_string(),
                    RunStatus::TimedOut => "timed out".to_string(),
                    RunStatus::Cancelled => "cancelled".to_string(),
                })
                .unwrap_or_else(dash)
        }),
        row("Duration", &|a| {
            a.duration_s.map(clock).unwrap_or_else(dash)
        }),
        row("Critical", &|a| a.counts.critical.to_string()),
        row("Important", &|a| a.counts.important.to_string()),
        row("Suggestion", &|a| a.counts.suggestion.to_string()),
        row("Design observations", &|a| {
            a.design_observations.to_string()
        }),
        row("False positives", &|a| a.false_positives.to_string()),
        row("Unique insights", &|a| a.unique_insights.to_string()),
        row("Files reviewed", &files_reviewed),
        row("Coverage misses", &|a| a.coverage_misses.len().to_string()),
        row("Tool calls", &|a| {
            a.tool_calls.map(|n| n.to_string()).unwrap_or_else(dash)
        }),
        row("Tokens (in/out)", &|a| {
            a.tokens
                .as_ref()
                .map(|t| {
                    // `~`: counted by deep-review because the agent reported none.
                    let mark = if t.estimated { "~" } else { "" };
                    format!("{mark}{}/{mark}{}", t.input, t.output)
                })
                .unwrap_or_else(dash)
        }),
        row("Cost", &|a| {
            a.cost_usd.map(crate::cost::usd).unwrap_or_else(dash)
        }),
    ];
    if agents.iter().any(|a| a.sandbox.is_some()) {
        rows.push(row("Sandbox", &|a| a.sandbox.clone().unwrap_or_else(dash)));
    }
    if agents.iter().any(|a| a.network.is_some()) {
        rows.push(row("Network", &|a| {
            a.network
                .as_ref()
                .map(crate::dispatch::network::summary)
                .unwrap_or_else(dash)
        }));
    }
    rows
}

/// What the check of the user's checkout found, as one sentence.
pub(crate) fn checkout_sentence(check: &crate::types::CheckoutCheck) -> String {
    if check.changed.is_empty() {
        format!(
            "Your checkout was not touched: {} compared before and after the agents ran.",
            check.checked.join(", ")
        )
    } else {
        format!(
            "**Your checkout changed while the agents ran**: {} differ from before the run (check \
             them: an agent, or something else on this machine, wrote there).",
            check.changed.join(", ")
        )
    }
}

/// "12.3 MB", "512 KB", "80 bytes".
fn human_bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} bytes"),
        1_000..1_000_000 => format!("{:.0} KB", n as f64 / 1e3),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

/// `7:09`
fn clock(seconds: f64) -> String {
    let total = seconds.round() as u64;
    format!("{}:{:02}", total / 60, total % 60)
}

/// The retro's paragraph about one agent, in inline Markdown (bold, code spans).
pub(crate) fn agent_paragraph(a: &AgentRetro) -> String {
    let mut parts = Vec::new();
    if let Some(err) = &a.error {
        parts.push(format!(
            "The run did not complete: {}.",
            err.trim_end_matches('.')
        ));
    }
    let total = a.counts.critical + a.counts.important + a.counts.suggestion;
    parts.push(format!(
        "Wrote {total} finding{} ({} critical, {} important, {} suggestion{}) and {} design observation{}; {} unique to it.",
        if total == 1 { "" } else { "s" },
        a.counts.critical,
        a.counts.important,
        a.counts.suggestion,
        if a.counts.suggestion == 1 { "" } else { "s" },
        a.design_observations,
        if a.design_observations == 1 { "" } else { "s" },
        a.unique_insights,
    ));
    parts.push(format!("Files reviewed: {}.", files_reviewed(a)));
    if !a.coverage_misses.is_empty() {
        let list: Vec<String> = a.coverage_misses.iter().map(|m| format!("`{m}`")).collect();
        parts.push(format!("**Coverage misses:** {}.", list.join(", ")));
    }
    if a.false_positives > 0 {
        parts.push(format!(
            "**False positives:** {} finding{} whose cited code is not in the repository.",
            a.false_positives,
            if a.false_positives == 1 { "" } else { "s" }
        ));
    }
    if !a.worktree_changes.is_empty() {
        let list: Vec<String> = a
            .worktree_changes
            .iter()
            .map(|c| format!("`{c}`"))
            .collect();
        parts.push(format!(
            "**Changed its read-only worktree:** {} (discarded with the worktree).",
            list.join(", ")
        ));
    }
    if let Some(cut) = a.output_cut_bytes {
        parts.push(format!(
            "**Output cut:** it wrote more than the output limit; the last {} were not kept.",
            human_bytes(cut)
        ));
    }
    if !a.calibrations.is_empty() {
        parts.push(format!("**Calibrated:** {}.", a.calibrations.join("; ")));
    }
    if let Some(t) = &a.tokens {
        let cost = match (&a.cost_usd, &a.cost_basis) {
            (Some(c), Some(basis)) => format!(", about {} ({basis})", crate::cost::usd(*c)),
            (Some(c), None) => format!(", about {}", crate::cost::usd(*c)),
            (None, _) => ", cost unknown (no price for its model)".to_string(),
        };
        parts.push(format!(
            "**Tokens:** {} in, {} out{}{cost}.",
            t.input,
            t.output,
            if t.estimated {
                " (estimated: none were reported)"
            } else {
                ""
            }
        ));
    }
    if let Some(note) = &a.synthesis_note {
        parts.push(format!("**Synthesizer:** {}", one_paragraph(note)));
    }
    parts.join(" ")
}

/// The raw reviews verbatim, between the lines that mark where they begin and end
/// ([`super::appendix_marks`]): a review's text never passes for the report's own sections.
fn appendix(out: &mut String, report: &Report) {
    let key = super::appendix_marks::key(&report.appendix);
    out.push_str("## Appendix: Original Reviews\n");
    let _ = writeln!(out, "{}", super::appendix_marks::open_line(&key));
    for entry in &report.appendix {
        let text = entry.text.trim_end();
        let _ = write!(out, "\n### {}\n\n{text}\n", entry.display);
        // A review cut off inside a code block (a timed-out agent) would turn every review
        // after it into code: close what it left open.
        if let Some(fence) = open_fence(text) {
            let _ = writeln!(out, "{fence}");
        }
    }
    let _ = writeln!(out, "\n{}", super::appendix_marks::end_line(&key));
}

/// The fence a Markdown text leaves open at its end, if any: a line of three or more backticks
/// or tildes (indented at most three spaces) opens a block that only the same character, at
/// least as many times, closes.
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = trimmed.chars().take_while(|x| *x == c).count();
        if run < 3 {
            continue;
        }
        match open {
            None => open = Some((c, run)),
            Some((oc, olen)) if oc == c && run >= olen && trimmed[run..].trim().is_empty() => {
                open = None
            }
            Some(_) => {}
        }
    }
    open.map(|(c, n)| c.to_string().repeat(n))
}

/// "3/5", or "—" when there was nothing to measure against.
fn files_reviewed(a: &AgentRetro) -> String {
    match a.files_reviewed {
        Some(c) => format!("{}/{}", c.reviewed, c.total),
        None => "—".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_the_reference_reports() {
        assert_eq!(crate::text::duration_long(906.0), "15 min 6 s");
        assert_eq!(clock(429.0), "7:09");
    }

    #[test]
    fn an_open_fence_is_found_and_a_closed_one_is_not() {
        assert_eq!(
            open_fence("text\n```rust\nlet x = 1;\n"),
            Some("```".into())
        );
        assert_eq!(open_fence("```rust\nx\n```\n"), None);
        assert_eq!(open_fence("~~~~\n```\n~~~\n"), Some("~~~~".into()));
        assert_eq!(open_fence("    ```\nindented code\n"), None);
    }

    #[test]
    fn fences_outgrow_backticks_inside() {
        let mut out = String::new();
        fenced(&mut out, "md", "a ``` b");
        assert!(out.starts_with("````md\n"));
    }
}
