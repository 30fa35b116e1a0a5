//! One request to a forge's API, sent until it is answered. Both forges retry the same way:
//! network failures and server errors back off 1, 2, 4, 8 s when the request is safe to repeat
//! (a POST that failed with a 502 may have been done), and a rate limit is waited out as long as
//! the forge's budget allows. What differs per forge stands behind [`ForgeApi`]: how the token
//! travels, which requests may be repeated, what a rate limit looks like and how long one may
//! wait, and the sentences that say what to do.
//!
//! Calls block: the transport runs its requests on its own small tokio runtime, so the rest of
//! deep-review (synchronous stages) calls it like any function. Never call it from inside an
//! async task.

use std::time::Duration;

use anyhow::Context;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use serde::de::DeserializeOwned;

use super::{
    backoff, decode, decode_or_null, error_chain, install_crypto_provider, origin_of, read_limited,
};

/// Attempts per request: the first and up to four retries.
pub const MAX_ATTEMPTS: u32 = 5;

/// A request as the forge clients describe it; `what` names it in every message.
pub struct Request<'a> {
    pub method: Method,
    pub url: Url,
    pub body: Option<&'a Value>,
    pub what: &'a str,
}

/// A response: status, headers and the body read whole (bounded).
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// One forge's API: what it decides in the retry loop that [`Transport::send`] runs, and the
/// requests every forge client offers, built on it.
pub trait ForgeApi: Sized {
    /// `GitHub`, `GitLab`: the server, as messages name it.
    const NAME: &'static str;
    /// The variable that sets the API's address, named when the API cannot be reached.
    const API_VARIABLE: &'static str;
    /// What one request remembers of the rate limits it met (GitHub lengthens each repeated
    /// secondary limit).
    type Limits: Default;

    /// The request with the token in the header this forge reads.
    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder;
    /// Whether sending `request` twice does no harm.
    fn repeatable(&self, request: &Request) -> bool;
    /// How long a refused answer asks to wait, when it is a rate limit.
    fn rate_limit(&self, answer: &Answer, limits: &mut Self::Limits) -> Option<Duration>;
    /// Whether one more `wait`, after `waited` in all, is still worth it.
    fn may_wait(&self, wait: Duration, waited: Duration) -> bool;
    /// The sentence for a rate limit not waited out: when to come back.
    fn rate_limited(&self, request: &Request, wait: Duration, waited: Duration) -> anyhow::Error;
    /// The sentence for a refused request.
    fn refused(&self, request: &Request, answer: &Answer) -> anyhow::Error;
    /// The transport this forge's requests go through.
    fn transport(&self) -> &Transport;
    /// Refuses, before anything is sent, an address the token must not go to.
    fn admit(&self, url: &Url, what: &str) -> anyhow::Result<()>;

    /// One request, retried as this module's rules and the forge's say; `what` names it in
    /// every message.
    fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        what: &str,
    ) -> anyhow::Result<Answer> {
        self.admit(&url, what)?;
        let request = Request {
            method,
            url,
            body,
            what,
        };
        self.transport().send(self, request)
    }

    /// GET `url` as JSON.
    fn get<T: DeserializeOwned>(&self, url: Url, what: &str) -> anyhow::Result<T> {
        let answer = self.send(Method::GET, url, None, what)?;
        decode(Self::NAME, &answer.body, what)
    }

    /// A request with a JSON body; returns the JSON answer (`Null` for an empty one).
    fn send_json(
        &self,
        method: Method,
        url: Url,
        body: &Value,
        what: &str,
    ) -> anyhow::Result<Value> {
        let answer = self.send(method, url, Some(body), what)?;
        decode_or_null(Self::NAME, &answer.body, what)
    }
}

/// The HTTP client and the runtime it runs on, for one forge's API.
pub struct Transport {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
}

impl Transport {
    /// A client with deep-review's user agent and timeouts; `configure` adds what `forge`
    /// needs (its default headers, its redirect policy).
    pub fn new(
        forge: &str,
        configure: impl FnOnce(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
    ) -> anyhow::Result<Transport> {
        install_crypto_provider();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .with_context(|| format!("cannot start the runtime for {forge} requests"))?;
        let builder = reqwest::Client::builder()
            .user_agent(concat!("deep-review/", env!("CARGO_PKG_VERSION")));
        let http = configure(builder)
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(60))
            .build()
            .with_context(|| format!("cannot set up the HTTP client for {forge}"))?;
        Ok(Transport { runtime, http })
    }

    /// `request`, retried as [`ForgeApi`] and this module's rules say, until it is answered or
    /// refused for good.
    pub fn send<F: ForgeApi>(&self, forge: &F, request: Request) -> anyhow::Result<Answer> {
        self.runtime.block_on(self.send_async(forge, &request))
    }

    async fn send_async<F: ForgeApi>(
        &self,
        forge: &F,
        request: &Request<'_>,
    ) -> anyhow::Result<Answer> {
        let mut retry = Retry::new(forge, request);
        loop {
            retry.attempt += 1;
            let step = match self.send_once(forge, request).await {
                Ok(response) => {
                    let answer = read_answer(response, F::NAME, request.what).await?;
                    retry.after_answer(answer)
                }
                Err(err) => retry.after_failure(&err),
            };
            match step {
                Step::Done(answer) => return answer,
                Step::Wait(wait) => tokio::time::sleep(wait).await,
            }
        }
    }

    async fn send_once<F: ForgeApi>(
        &self,
        forge: &F,
        request: &Request<'_>,
    ) -> reqwest::Result<reqwest::Response> {
        let mut builder = forge.authorize(
            self.http
                .request(request.method.clone(), request.url.clone()),
        );
        if let Some(body) = request.body {
            builder = builder.json(body);
        }
        builder.send().await
    }
}

/// What comes after one attempt.
enum Step {
    /// The answer, or the error that ends the request.
    Done(anyhow::Result<Answer>),
    /// Wait this long, then try again.
    Wait(Duration),
}

/// One request's retry state: how many attempts, how long it waited for rate limits.
struct Retry<'a, F: ForgeApi> {
    forge: &'a F,
    request: &'a Request<'a>,
    repeatable: bool,
    attempt: u32,
    waited: Duration,
    limits: F::Limits,
}

impl<'a, F: ForgeApi> Retry<'a, F> {
    fn new(forge: &'a F, request: &'a Request<'a>) -> Self {
        Retry {
            forge,
            request,
            repeatable: forge.repeatable(request),
            attempt: 0,
            waited: Duration::ZERO,
            limits: F::Limits::default(),
        }
    }

    /// Another attempt of a request that is safe to repeat may follow.
    fn may_retry(&self) -> bool {
        self.repeatable && self.attempt < MAX_ATTEMPTS
    }

    /// The server was not reached: back off and retry, or say so.
    fn after_failure(&self, err: &reqwest::Error) -> Step {
        if self.may_retry() {
            return Step::Wait(backoff(self.attempt));
        }
        Step::Done(Err(anyhow::anyhow!(
            "cannot reach {} for {} at {} ({}): check {} and the network",
            F::NAME,
            self.request.what,
            origin_of(&self.request.url),
            error_chain(err),
            F::API_VARIABLE
        )))
    }

    /// Success, a rate limit to wait out, a server error to back off from, or a refusal.
    /// A rate limit first: GitHub's GraphQL API says it with a 200.
    fn after_answer(&mut self, answer: Answer) -> Step {
        if let Some(wait) = self.forge.rate_limit(&answer, &mut self.limits) {
            if self.forge.may_wait(wait, self.waited) && self.attempt < MAX_ATTEMPTS {
                self.waited += wait;
                return Step::Wait(wait);
            }
            return Step::Done(Err(self.forge.rate_limited(
                self.request,
                wait,
                self.waited,
            )));
        }
        if answer.status.is_success() {
            return Step::Done(Ok(answer));
        }
        if answer.status.is_server_error() && self.may_retry() {
            return Step::Wait(backoff(self.attempt));
        }
        Step::Done(Err(self.forge.refused(self.request, &answer)))
    }
}

/// The status, headers and bounded body of `response`.
async fn read_answer(
    response: reqwest::Response,
    forge: &str,
    what: &str,
) -> anyhow::Result<Answer> {
    let status = response.status();
    let headers = response.headers().clone();
    let body = read_limited(response, forge, what).await?;
    Ok(Answer {
        status,
        headers,
        body,
    })
}
