//! The filtering proxy an agent's traffic goes through: HTTP `CONNECT` (what HTTPS clients send
//! to a proxy) and plain-HTTP requests in absolute form, each let through only to a destination
//! of the agent's [`super::Allowlist`], and the forwards of local endpoints.
//!
//! The destination is decided once per connection, from the request head, before any byte
//! reaches a server; the connection is then a byte pipe to that destination alone, so nothing
//! later on it (a second request naming another host) can change where it goes. Refusals are
//! answered `403` with the reason, so the agent's own error says what happened.
//!
//! When deep-review itself runs behind a proxy (`HTTPS_PROXY` in its own environment, as in a
//! company network), allowed connections go on through that proxy, except to hosts its
//! `NO_PROXY` lists and to loopback addresses.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::Activity;

/// The most bytes of a request head read before the destination is known.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The proxy deep-review itself goes through, from its own environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    host: String,
    port: u16,
    /// `Proxy-Authorization` value when the proxy URL carries credentials.
    authorization: Option<String>,
    /// `NO_PROXY` entries, lower case.
    bypass: Vec<String>,
}

impl Upstream {
    /// The upstream proxy of `get`'s environment (`HTTPS_PROXY`, then `HTTP_PROXY`, either
    /// case), if it is an `http://` proxy.
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Option<Upstream> {
        let url = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
            .iter()
            .find_map(|v| get(v).filter(|s| !s.trim().is_empty()))?;
        let url = reqwest::Url::parse(url.trim()).ok()?;
        if url.scheme() != "http" {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authorization = (!url.username().is_empty()).then(|| {
            use base64::Engine;
            let user = percent_encoding::percent_decode_str(url.username()).decode_utf8_lossy();
            let pass = percent_encoding::percent_decode_str(url.password().unwrap_or(""))
                .decode_utf8_lossy();
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"))
            )
        });
        let bypass = ["NO_PROXY", "no_proxy"]
            .iter()
            .find_map(|v| get(v))
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        Some(Upstream {
            host: host.to_string(),
            port,
            authorization,
            bypass,
        })
    }

    /// Whether `host` is reached directly rather than through this proxy.
    fn bypassed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        super::is_loopback(&host)
            || self
                .bypass
                .iter()
                .any(|b| b == "*" || host == *b || host.ends_with(&format!(".{b}")))
    }
}

/// What the proxy needs for every connection of one agent.
pub struct Egress {
    pub activity: Arc<Activity>,
    pub upstream: Option<Upstream>,
}

/// Connections one agent may hold open through one listener at a time: more than any CLI
/// opens, few enough that an agent cannot use up deep-review's descriptors.
const MAX_CONNECTIONS: usize = 64;

/// Serves the proxy on `listener` until the task is aborted.
pub async fn serve_proxy(listener: TcpListener, egress: Arc<Egress>) {
    serve_each(listener, move |client| {
        proxy_connection(client, Arc::clone(&egress))
    })
    .await
}

/// Serves a forward of a local endpoint: every connection on `listener` (inside the agent's
/// network namespace) is piped to `127.0.0.1:port` on the host.
pub async fn serve_forward(listener: TcpListener, port: u16, egress: Arc<Egress>) {
    serve_each(listener, move |mut client| {
        let egress = Arc::clone(&egress);
        async move {
            egress
                .activity
                .record("127.0.0.1", port, true, "forward", None);
            let Ok(mut server) = dial("127.0.0.1", port).await else {
                return;
            };
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        }
    })
    .await
}

/// Runs `handle` on every connection `listener` accepts, at most [`MAX_CONNECTIONS`] at once,
/// until the task is aborted: the connections are this task's own ([`JoinSet`]), so they end
/// with it and none outlives the agent's attempt. A failed accept (out of descriptors, a
/// connection reset before it was taken) is waited out, not the end of the agent's network.
async fn serve_each<F, Fut>(listener: TcpListener, handle: F)
where
    F: Fn(TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    let Ok(permit) = Arc::clone(&limit).acquire_owned().await else {
                        return;
                    };
                    let connection = handle(client);
                    connections.spawn(async move {
                        connection.await;
                        drop(permit);
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// What a client asked the proxy for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// `CONNECT host:port`: a tunnel.
    Connect { host: String, port: u16 },
    /// `GET http://host:port/path`: a plain-HTTP request, to be sent on in origin form.
    Forward {
        host: String,
        port: u16,
        /// The request head rewritten for the server (origin-form target, no `Proxy-*`
        /// headers).
        head: Vec<u8>,
    },
}

/// One client connection: read the head, decide, then pipe or refuse.
async fn proxy_connection(mut client: TcpStream, egress: Arc<Egress>) {
    let Ok(Ok((head_len, buffered))) =
        tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await
    else {
        return;
    };
    let request = match parse_request(&buffered[..head_len]) {
        Ok(request) => request,
        Err(reason) => {
            let _ = respond(&mut client, 400, &reason).await;
            return;
        }
    };
    let (host, port) = match &request {
        Request::Connect { host, port } | Request::Forward { host, port, .. } => {
            (host.clone(), *port)
        }
    };
    let activity = &egress.activity;
    if !activity.allowlist().allows(&host, port) {
        let reason = "not an allowed host for this agent";
        activity.record(&host, port, false, "proxy", Some(reason));
        let _ = respond(
            &mut client,
            403,
            &format!(
                "deep-review sandbox: {}:{port} is {reason} (allowed: {})",
                crate::text::printable_line(&host),
                activity.allowlist().describe().join(", ")
            ),
        )
        .await;
        return;
    }
    let mut server = match connect(&host, port, egress.upstream.as_ref()).await {
        Ok(server) => server,
        Err(err) => {
            activity.record(&host, port, true, "proxy", Some("could not connect"));
            let _ = respond(
                &mut client,
                502,
                &format!("could not reach {host}:{port}: {err}"),
            )
            .await;
            return;
        }
    };
    activity.record(&host, port, true, "proxy", None);
    let rest = &buffered[head_len..];
    let sent = match &request {
        Request::Connect { .. } => client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .and(server.write_all(rest).await),
        Request::Forward { head, .. } => server
            .write_all(head)
            .await
            .and(server.write_all(rest).await),
    };
    if sent.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
    }
}

/// Reads until the end of the request head; returns its length and everything read (the head
/// and whatever came after it).
async fn read_head(client: &mut TcpStream) -> std::io::Result<(usize, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let searched_from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf[searched_from..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
        {
            return Ok((searched_from + at + 4, buf));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(std::io::Error::other("request head too long"));
        }
    }
}

/// Parses a request head (httparse): the destination, and for plain HTTP the head to send on.
fn parse_request(head: &[u8]) -> Result<Request, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("not an HTTP request".into()),
    }
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target)
            .ok_or_else(|| format!("CONNECT needs host:port, not `{target}`"))?;
        return Ok(Request::Connect { host, port });
    }
    let url = reqwest::Url::parse(target)
        .map_err(|_| "a proxy request must name an absolute http:// URL".to_string())?;
    if url.scheme() != "http" {
        return Err(format!("`{}` requests go through CONNECT", url.scheme()));
    }
    // An IPv6 host without its brackets: as the allowlist compares it and `connect` dials it.
    let host = url
        .host_str()
        .ok_or("the URL names no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let mut origin = url.path().to_string();
    if let Some(query) = url.query() {
        origin.push('?');
        origin.push_str(query);
    }
    // The request goes to the host the allowlist checked: its `Host` is the URL's, never the
    // client's (a CDN routes by `Host`), and the connection carries this one request only.
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut out =
        format!("{method} {origin} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n")
            .into_bytes();
    for header in req.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "host" || name == "connection" {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(Request::Forward {
        host,
        port,
        head: out,
    })
}

/// `host:port` or `[v6]:port`.
fn split_authority(authority: &str) -> Option<(String, u16)> {
    let (host, port) = authority.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Connects to the destination, directly or through the upstream proxy.
async fn connect(host: &str, port: u16, upstream: Option<&Upstream>) -> std::io::Result<TcpStream> {
    match upstream.filter(|u| !u.bypassed(host)) {
        None => dial(host, port).await,
        Some(upstream) => {
            let mut stream = dial(&upstream.host, upstream.port).await?;
            let authority = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
            if let Some(auth) = &upstream.authorization {
                head.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            let (len, buf) = read_response_head(&mut stream).await?;
            let status_ok =
                buf[..len].starts_with(b"HTTP/1.1 200") || buf[..len].starts_with(b"HTTP/1.0 200");
            if !status_ok || len != buf.len() {
                return Err(std::io::Error::other(
                    "the upstream proxy refused the tunnel",
                ));
            }
            Ok(stream)
        }
    }
}

/// A TCP connection to `host:port`, given up after [`CONNECT_TIMEOUT`].
async fn dial(host: &str, port: u16) -> std::io::Result<TcpStream> {
    tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port)))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

async fn read_response_head(stream: &mut TcpStream) -> std::io::Result<(usize, Vec<u8>)> {
    tokio::time::timeout(HEAD_TIMEOUT, read_head(stream))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

/// Answers the client with a status and a one-line reason, and closes.
async fn respond(client: &mut TcpStream, status: u16, reason: &str) -> std::io::Result<()> {
    let title = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("{reason}\n");
    let text = format!(
        "HTTP/1.1 {status} {title}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_name_their_destination() {
        assert_eq!(
            parse_request(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap(),
            Request::Connect {
                host: "api.anthropic.com".into(),
                port: 443
            }
        );
        assert_eq!(
            parse_request(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap(),
            Request::Connect {
                host: "::1".into(),
                port: 8080
            }
        );
        let Request::Forward { host, port, head } = parse_request(
            b"POST http://10.0.0.5:11434/v1/chat?x=1 HTTP/1.1\r\nHost: 10.0.0.5\r\nProxy-Authorization: Basic x\r\n\r\n",
        )
        .unwrap() else {
            panic!("not a forward")
        };
        assert_eq!((host.as_str(), port), ("10.0.0.5", 11434));
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("POST /v1/chat?x=1 HTTP/1.1\r\n"), "{head}");
        assert!(!head.contains("Proxy-"), "{head}");
        // The request goes to the host that was checked, once.
        let Request::Forward { host, head, .. } = parse_request(
            b"GET http://[::1]:8080/ HTTP/1.1\r\nHost: attacker.example\r\nConnection: keep-alive\r\n\r\n",
        )
        .unwrap() else {
            panic!("not a forward")
        };
        assert_eq!(host, "::1");
        let head = String::from_utf8(head).unwrap();
        assert!(
            head.contains("\r\nHost: [::1]:8080\r\nConnection: close\r\n"),
            "{head}"
        );
        assert!(
            !head.contains("attacker") && !head.contains("keep-alive"),
            "{head}"
        );
        assert!(parse_request(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_request(b"CONNECT nohost HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn the_upstream_proxy_comes_from_the_environment_with_its_bypass_list() {
        let env = |name: &str| match name {
            "HTTPS_PROXY" => Some("http://u:p%40ss@proxy.corp:3128".to_string()),
            "NO_PROXY" => Some("localhost, .corp.example ,10.1.2.3".to_string()),
            _ => None,
        };
        let up = Upstream::from_env(&env).unwrap();
        assert_eq!((up.host.as_str(), up.port), ("proxy.corp", 3128));
        assert!(up.authorization.as_deref().unwrap().starts_with("Basic "));
        assert!(up.bypassed("git.corp.example"));
        assert!(up.bypassed("127.0.0.1"));
        assert!(up.bypassed("10.1.2.3"));
        assert!(!up.bypassed("api.anthropic.com"));
        assert!(Upstream::from_env(&|_| None).is_none());
    }
}
