//! Context packing: the prompt for a reviewer that cannot explore the repository (a model
//! behind an HTTP API), with the change's code in it, within the model's context budget.
//!
//! The prompt is the brief's own template in its packed form (same rules, same output
//! contract), with a "The code" section holding, per changed file in order of
//! [`relevance`](crate::brief::relevance): its diff with the surrounding code, or the whole file.
//! Files are read from the commits (one `git cat-file --batch`), never from the working tree.
//!
//! Breadth first, then depth, so that as many files as possible are seen at all:
//!
//! 1. every file's diff with 3 lines of context, most relevant first, while it fits (a file that
//!    does not fit is skipped, so smaller ones after it still get in);
//! 2. the most relevant skipped file gets the first part of its diff if a useful amount of
//!    room is left;
//! 3. shown diffs widen to their enclosing functions or blocks ([`scope`]), most relevant first;
//! 4. then to whole files, while they fit.
//!
//! What is not shown, or shown only in part, is named in the prompt's "Left out" section (file
//! names while they fit in a small reserve, then counts by kind), so the model knows what it has
//! not seen. The size is the bytes/4 estimate ([`estimate_tokens`]); the prompt is rendered and
//! checked against the budget, and packed again smaller in the rare case a custom template makes
//! it overshoot.

mod blobs;
mod render;
pub mod scope;

use std::path::PathBuf;

use crate::brief::fit::{by_kind, thousands};
use crate::brief::relevance;
use crate::brief::{BriefContext, BriefFile, context, estimate_tokens, fit};
use crate::types::{Brief, ChangeKind, ChangedFile, Target};
use blobs::Blob;
use render::{FileLines, Window, listing};

/// How to pack the prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackOptions {
    /// The most tokens the prompt may take: the model's context window less what its answer
    /// needs (the caller decides; `context_tokens` in an agent's config).
    pub context_tokens: usize,
    /// A template file to use instead of the built-in one.
    pub template: Option<PathBuf>,
    /// Leave the repository's context file out.
    pub no_context: bool,
    /// The change's earlier rounds, in a later round: a model API sees them as a CLI does.
    pub rounds: Option<crate::brief::RoundsBrief>,
}

/// Less room than this at the end is not worth part of a diff.
const MIN_PARTIAL_BYTES: usize = 2 * 1024;
/// A whole file longer than this is not offered (its diff and blocks are).
const MAX_WHOLE_BYTES: usize = 256 * 1024;

/// Packs the prompt for `target` within `opts.context_tokens`: see the module documentation.
pub fn pack(target: &Target, opts: &PackOptions) -> anyhow::Result<Brief> {
    let budget = opts.context_tokens;
    if budget == 0 {
        anyhow::bail!("a context budget of 0 tokens holds no prompt: set `context_tokens` above 0");
    }
    let (ctx, context_note) = if opts.no_context {
        (None, None)
    } else {
        context::find(target)?
    };
    let context_path = ctx.as_ref().map(|c| c.path.clone());
    let context_from_base = context_note.is_some();
    let (source, name) = crate::brief::template_source(opts.template.as_deref())?;
    let render = |v: &BriefContext| crate::brief::render(&source, &name, v);

    let mut vars = BriefContext::new(target, ctx);
    vars.budget_tokens = Some(budget);
    vars.rounds = opts.rounds.as_ref().map(crate::brief::RoundsBrief::escaped);
    let ranked = std::mem::take(&mut vars.files);
    vars.packed = Some(String::new());
    // The header (facts, description, commits, context file) takes at most half the budget.
    let header = fit::fit(vars, Some(budget / 2), &render)?;
    let header_tokens = estimate_tokens(header.text.len());
    let mut vars = header.vars;

    let mut files = load(target, &ranked)?;
    let everything: usize = files.iter_mut().map(|f| f.cost(Level::Diff)).sum();
    let full_tokens = header.full_tokens + estimate_tokens(everything);

    let mut material_tokens = budget.saturating_sub(header_tokens);
    let mut text;
    let mut packed;
    let mut rounds = 0;
    loop {
        packed = pack_files(&mut files, material_tokens.saturating_mul(4));
        vars.packed = Some(packed.text.clone());
        vars.omitted = header.omitted.clone();
        vars.omitted.extend(packed.omitted.iter().cloned());
        text = render(&vars)?;
        let got = estimate_tokens(text.len());
        rounds += 1;
        if got <= budget || material_tokens == 0 || rounds >= 5 {
            break;
        }
        let over = got - budget;
        material_tokens = material_tokens.saturating_sub(over + material_tokens / 50 + 1);
    }

    let got = estimate_tokens(text.len());
    let mut brief = Brief::new(text, context_path, opts.template.clone());
    brief.budget_tokens = Some(budget);
    brief.full_tokens = full_tokens;
    brief.omitted = vars.omitted;
    brief.context_from_base = context_from_base;
    brief.context_note = context_note;
    if !brief.omitted.is_empty() || got > budget {
        let mut warning = format!(
            "the change does not fit a context of {} tokens (about {} with every diff): the \
             prompt shows {} of {} changed files ({} whole, {} with their enclosing code, {} as a \
             diff, {} in part)",
            thousands(budget),
            thousands(full_tokens),
            thousands(packed.counts.shown()),
            thousands(files.len()),
            thousands(packed.counts.whole),
            thousands(packed.counts.scope),
            thousands(packed.counts.diff),
            thousands(packed.counts.partial),
        );
        if got > budget {
            warning.push_str(&format!(
                "; even so it takes about {} tokens, over the budget",
                thousands(got)
            ));
        }
        brief.warning = Some(warning);
    }
    Ok(brief)
}

/// How much of a file the prompt shows, least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Nothing,
    /// The first part of its diff.
    Partial,
    Diff,
    Scope,
    Whole,
}

/// One changed file, ready to be shown at any level.
struct PackFile {
    shown: BriefFile,
    body: Body,
    /// Listings made so far: diff, scope, whole.
    diff: Option<String>,
    scope: Option<String>,
    whole: Option<String>,
}

enum Body {
    /// Both sides as text, and the hunks.
    Text {
        old: String,
        new: String,
        file: ChangedFile,
    },
    /// Nothing to list, with why (binary, submodule, renamed unchanged, too large).
    Note(String),
}

impl PackFile {
    fn heading(&self) -> String {
        let f = &self.shown;
        let what = if f.submodule {
            format!("submodule pointer {}", f.kind)
        } else if f.binary {
            format!("binary, {}", f.kind)
        } else if f.kind == "modified" {
            format!("+{} −{}", f.added, f.removed)
        } else {
            format!("+{} −{}, {}", f.added, f.removed, f.kind)
        };
        let from = f
            .old_path
            .as_ref()
            .map(|o| format!(" from `{o}`"))
            .unwrap_or_default();
        format!("## `{}` ({what}){from}", f.path)
    }

    fn listing(&mut self, level: Level) -> Option<&str> {
        let Body::Text { old, new, file } = &self.body else {
            return None;
        };
        let (slot, window) = match level {
            Level::Diff | Level::Partial => (&mut self.diff, Window::Lines(3)),
            Level::Scope => (&mut self.scope, Window::Scope),
            Level::Whole => (&mut self.whole, Window::Whole),
            Level::Nothing => return None,
        };
        if slot.is_none() {
            if level == Level::Whole && new.len() + old.len() > MAX_WHOLE_BYTES {
                return None;
            }
            let lines = FileLines::new(old, new);
            let mut out = String::new();
            listing(&lines, &file.hunks, window, &mut out);
            *slot = Some(out);
        }
        slot.as_deref()
    }

    /// The bytes of this file's section at `level` (`0` when it has no such listing).
    fn cost(&mut self, level: Level) -> usize {
        let heading = self.heading().len();
        match &self.body {
            Body::Note(note) => heading + note.len() + 4,
            Body::Text { .. } => self
                .listing(level)
                .map_or(0, |l| heading + LABEL_BYTES + l.len() + FENCE_BYTES),
        }
    }
}

/// Room for ": the whole file" and the like after a heading.
const LABEL_BYTES: usize = 40;
/// Two fence lines and the blank lines around a section.
const FENCE_BYTES: usize = 12;

/// Reads both sides of every changed file (from the commits) in `ranked` order.
fn load(target: &Target, ranked: &[BriefFile]) -> anyhow::Result<Vec<PackFile>> {
    let ids = crate::target::diff::blob_ids(&target.repo, &target.merge_base, &target.head)?;
    let order = relevance::order(target.changed_files.iter().map(|f| f.path.as_str()));
    let zero = |id: &str| id.bytes().all(|b| b == b'0');
    let mut wanted = Vec::new();
    for f in &target.changed_files {
        if let Some((old, new)) = ids.get(&f.path) {
            for id in [old, new] {
                if !zero(id) && !f.submodule && !f.binary {
                    wanted.push(id.clone());
                }
            }
        }
    }
    let mut store = blobs::read_blobs(&target.repo, &wanted)?;
    let mut text_of = |id: &str| -> Result<String, String> {
        if zero(id) {
            return Ok(String::new());
        }
        match store.remove(id) {
            Some(Blob::Text(bytes)) if bytes.contains(&0) => Err("binary".to_string()),
            Some(Blob::Text(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Some(Blob::TooLarge(size)) => Err(format!(
                "too large to show ({:.1} MB)",
                size as f64 / 1_048_576.0
            )),
            Some(Blob::Missing) | None => Err("not readable from git".to_string()),
        }
    };

    let mut files = Vec::with_capacity(order.len());
    for ((i, _), shown) in order.into_iter().zip(ranked.iter().cloned()) {
        let f = &target.changed_files[i];
        let body = if f.submodule {
            Body::Note("A submodule pointer: not shown.".to_string())
        } else if f.binary {
            Body::Note("A binary file: not shown.".to_string())
        } else if f.hunks.is_empty() {
            Body::Note(match f.kind {
                ChangeKind::Renamed | ChangeKind::Copied => {
                    "Moved with its content unchanged.".to_string()
                }
                _ => "No change to its lines (a mode or type change).".to_string(),
            })
        } else {
            let (old_id, new_id) = ids
                .get(&f.path)
                .cloned()
                .unwrap_or_else(|| (String::from("0"), String::from("0")));
            match (text_of(&old_id), text_of(&new_id)) {
                (Ok(old), Ok(new)) => Body::Text {
                    old,
                    new,
                    file: f.clone(),
                },
                (Err(why), _) | (_, Err(why)) => Body::Note(format!("Not shown: {why}.")),
            }
        };
        files.push(PackFile {
            shown,
            body,
            diff: None,
            scope: None,
            whole: None,
        });
    }
    Ok(files)
}

/// How many files are shown at each level.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    whole: usize,
    scope: usize,
    diff: usize,
    partial: usize,
    notes: usize,
}

impl Counts {
    fn shown(&self) -> usize {
        self.whole + self.scope + self.diff + self.partial + self.notes
    }
}

struct Packed {
    text: String,
    omitted: Vec<String>,
    counts: Counts,
}

/// Chooses each file's level within `max_bytes` and writes the "The code" text; see the module
/// documentation for the order.
fn pack_files(files: &mut [PackFile], max_bytes: usize) -> Packed {
    // A small reserve names what is left out.
    let reserve = (max_bytes / 20).clamp(256, 16 * 1024).min(max_bytes);
    let mut room = max_bytes - reserve;
    let mut level = vec![Level::Nothing; files.len()];
    let mut partial_cut = None;

    // 1. Diffs (and notes), most relevant first, skipping what does not fit.
    for (i, f) in files.iter_mut().enumerate() {
        let cost = f.cost(Level::Diff);
        if cost > 0 && cost <= room {
            room -= cost;
            level[i] = Level::Diff;
        }
    }
    // 2. Part of the most relevant diff that did not fit.
    if room >= MIN_PARTIAL_BYTES
        && let Some(i) = (0..files.len())
            .find(|&i| level[i] == Level::Nothing && matches!(files[i].body, Body::Text { .. }))
    {
        let overhead = files[i].heading().len() + LABEL_BYTES + FENCE_BYTES + 64;
        let keep = room.saturating_sub(overhead);
        if let Some(diff) = files[i].listing(Level::Diff) {
            let cut = cut_at_line(diff, keep);
            if cut > 0 {
                room -= (overhead + cut).min(room);
                partial_cut = Some((i, cut));
                level[i] = Level::Partial;
            }
        }
    }
    // 3 and 4. Widen, most relevant first: enclosing blocks, then whole files.
    widen(files, &mut level, &mut room);

    let mut text = String::with_capacity(max_bytes.min(64 << 20));
    let mut counts = Counts::default();
    for (i, f) in files.iter_mut().enumerate() {
        let heading = f.heading();
        if let Body::Note(note) = &f.body {
            if level[i] != Level::Nothing {
                counts.notes += 1;
                text.push_str(&format!("{heading}\n\n{note}\n\n"));
            }
            continue;
        }
        let label = match level[i] {
            Level::Nothing => continue,
            Level::Partial => {
                counts.partial += 1;
                "the first part of its diff"
            }
            Level::Diff => {
                counts.diff += 1;
                "its diff"
            }
            Level::Scope => {
                counts.scope += 1;
                "its diff in the enclosing code"
            }
            Level::Whole => {
                counts.whole += 1;
                "the whole file"
            }
        };
        let Some(listing) = f.listing(level[i]) else {
            continue;
        };
        let body = match (level[i], partial_cut) {
            (Level::Partial, Some((_, cut))) => &listing[..cut],
            _ => listing,
        };
        text.push_str(&heading);
        text.push_str(": ");
        text.push_str(label);
        text.push_str("\n\n```\n");
        text.push_str(body);
        if level[i] == Level::Partial {
            text.push_str("   ... (the rest of this diff did not fit)\n");
        }
        text.push_str("```\n\n");
    }
    let text = text.trim_end().to_string();

    let omitted = left_out(files, &level, partial_cut.map(|(i, _)| i), reserve);
    Packed {
        text,
        omitted,
        counts,
    }
}

/// Widens the files whose diff is in, most relevant first: to their enclosing blocks, then to
/// whole files, each while it fits in `room` (which it spends).
fn widen(files: &mut [PackFile], level: &mut [Level], room: &mut usize) {
    for target_level in [Level::Scope, Level::Whole] {
        for (i, f) in files.iter_mut().enumerate() {
            if !matches!(level[i], Level::Diff | Level::Scope) || level[i] >= target_level {
                continue;
            }
            let now = f.cost(level[i]);
            let wider = f.cost(target_level);
            if wider == 0 {
                continue;
            }
            let extra = wider.saturating_sub(now);
            if extra <= *room {
                *room -= extra;
                level[i] = target_level;
            }
        }
    }
}

/// The longest prefix of `text` of whole lines within `max` bytes.
fn cut_at_line(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    text[..max].rfind('\n').map_or(0, |at| at + 1)
}

/// The sentences that name what the prompt does not show, within about `reserve` bytes.
fn left_out(
    files: &[PackFile],
    level: &[Level],
    partial: Option<usize>,
    reserve: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let missing: Vec<&PackFile> = files
        .iter()
        .zip(level)
        .filter(|(_, l)| **l == Level::Nothing)
        .map(|(f, _)| f)
        .collect();
    if !missing.is_empty() {
        let shown_files: Vec<BriefFile> = missing.iter().map(|f| f.shown.clone()).collect();
        let mut sentence = format!(
            "the code of {} of the {} changed files (by kind {}): ",
            thousands(missing.len()),
            thousands(files.len()),
            by_kind(&shown_files)
        );
        let limit = sentence.len() + reserve.saturating_sub(200);
        let mut named = 0;
        for f in &missing {
            let name = format!("`{}`", f.shown.path);
            if sentence.len() + name.len() + 2 > limit {
                break;
            }
            if named > 0 {
                sentence.push_str(", ");
            }
            sentence.push_str(&name);
            named += 1;
        }
        if named < missing.len() {
            let rest = &missing[named..];
            let rest_files: Vec<BriefFile> = rest.iter().map(|f| f.shown.clone()).collect();
            if named > 0 {
                sentence.push_str(", ");
            }
            sentence.push_str(&format!(
                "and {} more ({})",
                thousands(rest.len()),
                by_kind(&rest_files)
            ));
        }
        out.push(sentence);
    }
    if let Some(i) = partial {
        out.push(format!(
            "the end of the diff of `{}`, which is shown only in part",
            files[i].shown.path
        ));
    }
    let diff_only = level.iter().filter(|l| **l == Level::Diff).count();
    if diff_only > 0 {
        out.push(format!(
            "the code around the changes of {}, shown only with 3 lines of context",
            crate::text::plural(diff_only, "file", "files")
        ));
    }
    out
}
