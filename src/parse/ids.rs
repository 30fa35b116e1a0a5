//! Unique finding ids within one review, in time linear in the number of findings.
//!
//! A review may repeat an id thousands of times (a hostile or looping agent): asking "is
//! `S1-2` free? `S1-3`?" from 2 upwards for every repeat is quadratic, and over a `Vec` cubic.
//! Here each base id remembers the next suffix to try and each section letter the next free
//! number (a union-find "next free" map), so every id costs amortised O(1) hash look-ups.

use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub(crate) struct IdAllocator {
    used: HashSet<String>,
    /// Per base id: the next `-k` suffix to try.
    next_suffix: HashMap<String, u64>,
    /// Per letter asked for numbers: `n → a number ≥ n that may be free` (path-compressed on
    /// look-up). A number absent from the map is free.
    next_free: HashMap<char, HashMap<u64, u64>>,
}

impl IdAllocator {
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.used.contains(id)
    }

    /// Takes `id` as it is when free, else the first free `{id}-{k}` (k ≥ 2). Returns the id
    /// given and whether it differs from the one asked for.
    pub(crate) fn unique(&mut self, id: &str) -> (String, bool) {
        if !self.used.insert(id.to_string()) {
            return (self.suffixed(id), true);
        }
        self.mark_taken(id);
        (id.to_string(), false)
    }

    /// The first free `{base}-{k}` (k ≥ 2), taken.
    pub(crate) fn suffixed(&mut self, base: &str) -> String {
        let mut k = self.next_suffix.get(base).copied().unwrap_or(2);
        let mut id = format!("{base}-{k}");
        while self.used.contains(&id) {
            k += 1;
            id = format!("{base}-{k}");
        }
        self.next_suffix.insert(base.to_string(), k + 1);
        self.insert(id.clone());
        id
    }

    /// The smallest free `{letter}{n}` with `n ≥ from`, taken.
    pub(crate) fn numbered(&mut self, letter: char, from: u64) -> String {
        // Every id is taken through `insert`, which keeps the letter's map once it exists.
        let n = self.find_free(letter, from);
        let id = format!("{letter}{n}");
        self.insert(id.clone());
        id
    }

    fn insert(&mut self, id: String) {
        self.mark_taken(&id);
        self.used.insert(id);
    }

    /// Keeps the "next free" map of the id's letter up to date. Only letters asked for
    /// numbers keep a map; the others are read from `used` the first time (see `find_free`).
    fn mark_taken(&mut self, id: &str) {
        if !self.next_free.is_empty()
            && let Some((letter, n)) = letter_number(id)
            && self.next_free.contains_key(&letter)
        {
            self.mark(letter, n);
        }
    }

    /// Records that `{letter}{n}` is taken: the next free number from `n` is at least `n + 1`.
    fn mark(&mut self, letter: char, n: u64) {
        self.next_free
            .entry(letter)
            .or_default()
            .insert(n, n.saturating_add(1));
    }

    /// Follows the "next free" links from `n`, compressing the path it walked.
    fn find_free(&mut self, letter: char, n: u64) -> u64 {
        if !self.next_free.contains_key(&letter) {
            // The first number asked of this letter: learn the numbers taken so far.
            let taken: Vec<u64> = self
                .used
                .iter()
                .filter_map(|id| letter_number(id))
                .filter(|(l, _)| *l == letter)
                .map(|(_, n)| n)
                .collect();
            self.next_free.insert(letter, HashMap::new());
            for t in taken {
                self.mark(letter, t);
            }
        }
        let Some(map) = self.next_free.get_mut(&letter) else {
            return n;
        };
        let mut root = n;
        while let Some(&next) = map.get(&root) {
            if next == root {
                break;
            }
            root = next;
        }
        let mut cur = n;
        while cur != root {
            let next = map.get(&cur).copied().unwrap_or(root);
            map.insert(cur, root);
            cur = next;
        }
        root
    }
}

/// `S12` → (`S`, 12): the ids a section letter and number give.
fn letter_number(id: &str) -> Option<(char, u64)> {
    let mut chars = id.chars();
    let letter = chars.next().filter(char::is_ascii_uppercase)?;
    let digits = chars.as_str();
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((letter, digits.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_get_the_next_free_suffix() {
        let mut ids = IdAllocator::default();
        assert_eq!(ids.unique("S1"), ("S1".into(), false));
        assert_eq!(ids.unique("S1"), ("S1-2".into(), true));
        // A reviewer's own `S1-3` is respected.
        assert_eq!(ids.unique("S1-3"), ("S1-3".into(), false));
        assert_eq!(ids.unique("S1"), ("S1-4".into(), true));
        assert_eq!(ids.suffixed("F"), "F-2");
        assert_eq!(ids.suffixed("F"), "F-3");
    }

    #[test]
    fn numbered_ids_fill_from_the_position_and_skip_taken_ones() {
        let mut ids = IdAllocator::default();
        ids.unique("I2");
        assert_eq!(ids.numbered('I', 1), "I1");
        assert_eq!(ids.numbered('I', 2), "I3");
        assert_eq!(ids.numbered('I', 1), "I4");
        assert_eq!(ids.numbered('S', 1), "S1");
        // A hole below the cursor is still found from a lower position.
        ids.unique("C5");
        assert_eq!(ids.numbered('C', 4), "C4");
        assert_eq!(ids.numbered('C', 4), "C6");
        assert_eq!(ids.numbered('C', 1), "C1");
    }

    #[test]
    fn many_repeats_stay_unique() {
        let mut ids = IdAllocator::default();
        let mut seen = HashSet::new();
        for _ in 0..5_000 {
            assert!(seen.insert(ids.unique("C1").0));
            assert!(seen.insert(ids.numbered('C', 1)));
        }
    }
}
