//! Reading a list that the API hands out page by page: a bounded number of pages, and the next
//! page read only where the token already goes.

use reqwest::Url;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;

use super::transport::Answer;
use super::{decode, next_page, same_origin};

/// The items of at most `max_pages` pages from `first` on: `get` reads a page, `next` says
/// where the following one is (`None` at the end). `true` when pages were left unread.
pub fn read_pages<T: DeserializeOwned>(
    forge: &str,
    first: Url,
    max_pages: usize,
    what: &str,
    mut get: impl FnMut(Url) -> anyhow::Result<Answer>,
    mut next: impl FnMut(&HeaderMap) -> anyhow::Result<Option<Url>>,
) -> anyhow::Result<(Vec<T>, bool)> {
    let mut url = first;
    let mut items = Vec::new();
    for _ in 0..max_pages {
        let answer = get(url)?;
        let page: Vec<T> = decode(forge, &answer.body, what)?;
        items.extend(page);
        match next(&answer.headers)? {
            Some(following) => url = following,
            None => return Ok((items, false)),
        }
    }
    Ok((items, true))
}

/// The `Link: rel="next"` page, when it is on the API's own origin. A next page elsewhere is an
/// error, not the end of the list: the token is not sent there, and a list cut short silently
/// would pass for a whole one.
pub fn next_link_on_api(
    headers: &HeaderMap,
    api: &Url,
    forge: &str,
    what: &str,
) -> anyhow::Result<Option<Url>> {
    match next_page(headers) {
        Some(next) if same_origin(&next, api) => Ok(Some(next)),
        Some(next) => anyhow::bail!(
            "{forge} sent the next page of {what} to another host ({}): not followed, the token is not sent there",
            next.host_str().unwrap_or("?")
        ),
        None => Ok(None),
    }
}
