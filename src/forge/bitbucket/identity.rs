//! Who the token is on Bitbucket, so that deep-review's own comments are told from anyone
//! else's, copies of them included.
//!
//! The token's user is asked for (`/user`) when the token may ask. An access token usually may
//! not (it has no `account` scope), so deep-review's comments also carry a hidden line,
//! `[//]: # (deep-review:sig:HEX)`, where HEX is a SHA-256 of a key derived from the token and
//! of the comment's author: only the token's user can write a comment whose signature names its
//! own author. Someone who copies deep-review's comment, signature and all, is its author, not
//! deep-review's user, and the signature does not match them. The first comment of a pull
//! request is posted before deep-review knows its own uuid: Bitbucket's answer says it, and
//! the comment is signed by an edit.

use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::api::ApiComment;
use super::body;

/// The signature's length in hex digits (128 bits).
const SIGNATURE_HEX: usize = 32;

pub struct Identity {
    key: Vec<u8>,
    me: Mutex<Option<String>>,
}

impl Identity {
    /// The key is derived from the token's secret; the secret itself is never written.
    pub fn new(secret: &str) -> Identity {
        let mut hasher = Sha256::new();
        hasher.update(b"deep-review bitbucket comment signature\0");
        hasher.update(secret.as_bytes());
        Identity {
            key: hasher.finalize().to_vec(),
            me: Mutex::new(None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.me.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The token's user's uuid, once known.
    pub fn me(&self) -> Option<String> {
        self.lock().clone()
    }

    pub fn set(&self, uuid: &str) {
        *self.lock() = Some(uuid.to_string());
    }

    /// The signature of a comment written by `uuid`.
    pub fn signature_for(&self, uuid: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(&self.key);
        hasher.update(uuid.to_ascii_lowercase().as_bytes());
        let mut hex = hex::encode(hasher.finalize());
        hex.truncate(SIGNATURE_HEX);
        hex
    }

    /// The signature deep-review's comments carry, once its uuid is known.
    pub fn signature(&self) -> Option<String> {
        self.me().map(|uuid| self.signature_for(&uuid))
    }

    /// The author of the first comment signed for its own author: the token's user.
    pub fn recognise(&self, comments: &[ApiComment]) -> Option<String> {
        comments.iter().find_map(|c| {
            let uuid = c.user.as_ref()?.uuid.as_deref()?;
            let signature = body::signature_of(&c.content.raw)?;
            (signature == self.signature_for(uuid)).then(|| uuid.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn comment(uuid: &str, raw: &str) -> ApiComment {
        serde_json::from_value(json!({
            "id": 1, "content": { "raw": raw }, "user": { "uuid": uuid }
        }))
        .unwrap()
    }

    #[test]
    fn only_the_token_signs_for_its_own_author() {
        let ours = Identity::new("token-a");
        let me = "{00000000-0000-4000-8000-000000000001}";
        let signed = body::to_bitbucket(
            "<!-- deep-review:summary -->\ntext",
            Some(&ours.signature_for(me)),
        );
        assert_eq!(ours.recognise(&[comment(me, &signed)]).as_deref(), Some(me));
        let copy = comment("{00000000-0000-4000-8000-000000000002}", &signed);
        assert_eq!(
            ours.recognise(&[copy]),
            None,
            "a copy names the wrong author"
        );
        let other_token = Identity::new("token-b");
        assert_eq!(other_token.recognise(&[comment(me, &signed)]), None);
        assert_eq!(ours.signature_for(me).len(), SIGNATURE_HEX);
    }
}
