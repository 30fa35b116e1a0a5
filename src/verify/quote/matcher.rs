//! Matching one reading of a quote against a file, in time linear in the file for a given
//! quote.
//!
//! A reading is segments separated by elisions. Each segment's occurrences are found on their
//! own: at every line where its first required line matches, the rest of the segment is
//! matched forward (blank and comment lines passed over, at most `skip` other lines between
//! two quoted lines). Then the occurrences are chained: after an occurrence of the first
//! segment, the earliest occurrence of the second that starts after it, and so on. Taking the
//! earliest next occurrence is never wrong for an elision that may stand for any number of
//! lines (it leaves the most room for the rest), so there is no backtracking to bound, and a
//! common anchor (`}` on every third line) cannot bind the match to its first occurrence: every
//! occurrence is tried. Each occurrence's chain is worked out once, from the last segment back,
//! so chaining costs `O(occurrences × log n)` however many elisions the quote has; finding the
//! occurrences costs `O(n × quote lines)`, with the quote cut at 400 lines.

use super::FileText;
use super::lines::{LineKind, matches_at};
use super::reading::{QLine, Reading};

/// How many file lines an elision may stand for.
const MAX_GAP: usize = 2000;

/// How strict one attempt is.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pass {
    /// Non-blank, non-comment file lines that may sit between two quoted lines unquoted
    /// (reviewers skip a line now and then without saying so).
    pub skip: usize,
    /// Required quoted lines that may be found nowhere (a corrupted line).
    pub drops: usize,
}

/// Where one segment occurs: file line indices (0-based, inclusive) and the quoted lines it
/// had to leave unmatched.
#[derive(Debug, Clone, Copy)]
struct Occurrence {
    start: usize,
    end: usize,
    drops: usize,
}

/// Every place `reading` occurs in `file` under `pass`, as 1-based inclusive line ranges in
/// file order.
pub(super) fn find(reading: &Reading, file: &FileText, pass: Pass) -> Vec<(u32, u32)> {
    let Some((first, rest)) = reading.segments.split_first() else {
        return Vec::new();
    };
    let heads = occurrences(first, file, pass, 0);
    let Some(earliest) = heads.first() else {
        return Vec::new();
    };
    let mut tails: Vec<Vec<Occurrence>> = Vec::with_capacity(rest.len());
    for segment in rest {
        let occ = occurrences(segment, file, pass, earliest.end + 1);
        if occ.is_empty() {
            return Vec::new();
        }
        tails.push(occ);
    }
    // Where the quote ends, and the lines it dropped, when segment `s + 1` is at each of its
    // occurrences: worked out from the last segment back, each occurrence once, so a quote of
    // many elisions over a file of many anchors stays `O(occurrences × log n)`.
    let mut reach: Vec<Option<(usize, usize)>> = match tails.last() {
        Some(last) => last.iter().map(|o| Some((o.end, o.drops))).collect(),
        None => Vec::new(),
    };
    for s in (0..tails.len().saturating_sub(1)).rev() {
        reach = tails[s]
            .iter()
            .map(|o| chain(o, &tails[s + 1], &reach))
            .collect();
    }
    let mut found: Vec<(u32, u32)> = Vec::new();
    for head in &heads {
        let end = match tails.first() {
            None => Some((head.end, head.drops)),
            Some(next) => chain(head, next, &reach),
        };
        if let Some((end, drops)) = end
            && drops <= pass.drops
        {
            let span = (to_line(head.start), to_line(end));
            if found.last() != Some(&span) {
                found.push(span);
            }
        }
    }
    found
}

/// Follows occurrence `o` with the earliest occurrence of the next segment that starts after
/// it (within [`MAX_GAP`]): where the quote then ends and how many lines it dropped, from
/// `reach` (the same for each occurrence of the next segment).
fn chain(
    o: &Occurrence,
    next: &[Occurrence],
    reach: &[Option<(usize, usize)>],
) -> Option<(usize, usize)> {
    let at = next.partition_point(|n| n.start <= o.end);
    let n = next.get(at)?;
    if n.start - o.end > MAX_GAP {
        return None;
    }
    let (end, drops) = reach[at]?;
    Some((end, drops + o.drops))
}

fn to_line(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

/// Every occurrence of `segment` that starts at or after line index `from`, in order.
fn occurrences(segment: &[QLine], file: &FileText, pass: Pass, from: usize) -> Vec<Occurrence> {
    // The anchor is the first required line; on a lossy pass also the next ones, for when
    // the first is the corrupted line.
    let anchors: Vec<usize> = segment
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.optional)
        .map(|(i, _)| i)
        .take(pass.drops.min(2) + 1)
        .collect();
    let mut out = Vec::new();
    for start in from..file.folded.len() {
        if file.kinds[start] == LineKind::Blank {
            continue;
        }
        for (dropped, &anchor) in anchors.iter().enumerate() {
            if let Some((end, drops)) = match_segment(segment, anchor, dropped, file, start, pass) {
                out.push(Occurrence { start, end, drops });
                break;
            }
        }
    }
    out
}

/// Matches `segment` with its line `anchor` at file line `start` and the lines after it
/// forward; `dropped` required lines before the anchor count as unmatched. The last line index
/// matched and the lines left unmatched.
fn match_segment(
    segment: &[QLine],
    anchor: usize,
    dropped: usize,
    file: &FileText,
    start: usize,
    pass: Pass,
) -> Option<(usize, usize)> {
    let mut end = matches_at(&segment[anchor], file, start)?;
    let mut drops = dropped;
    let mut pos = end + 1;
    for q in &segment[anchor + 1..] {
        match next_match(q, file, pos, pass.skip) {
            Some(e) => {
                end = e;
                pos = e + 1;
            }
            None if q.optional => {}
            None if drops < pass.drops => drops += 1,
            None => return None,
        }
    }
    Some((end, drops))
}

/// The first place from line index `pos` where `q` matches: blank lines are passed over, and
/// so are comment lines when `q` is code, at no cost; at most `skip` other lines may be passed.
/// Each step is constant time (the file knows where its next code line is), so this costs
/// `O(skip)`.
fn next_match(q: &QLine, file: &FileText, pos: usize, skip: usize) -> Option<usize> {
    let n = file.folded.len();
    let mut skipped = 0usize;
    let mut j = pos;
    while j < n {
        j = file.next_nonblank[j] as usize;
        if j >= n {
            return None;
        }
        if let Some(e) = matches_at(q, file, j) {
            return Some(e);
        }
        if file.kinds[j] == LineKind::Comment && !q.comment {
            j = file.next_code[j] as usize;
            continue;
        }
        skipped += 1;
        if skipped > skip {
            return None;
        }
        j += 1;
    }
    None
}
