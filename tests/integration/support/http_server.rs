//! A small HTTP/1.1 server on a free port of 127.0.0.1, on a thread and runtime of its own: what
//! the fake model server and the fake GitHub API answer through. Dropping it stops accepting,
//! and dropping its runtime cancels every open connection, hanging ones too.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub struct Server {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves every request with `handle(request, the server's own address)`; `name` names the
    /// thread and the panics of a server that cannot start.
    pub fn start<H, F>(name: &str, handle: H) -> Server
    where
        H: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static,
    {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let label = name.to_string();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .unwrap_or_else(|e| panic!("tokio runtime for the {label}: {e}"));
                runtime.block_on(serve(label, handle, addr_tx, shutdown_rx));
            })
            .unwrap_or_else(|e| panic!("spawn the {name} thread: {e}"));
        let addr = addr_rx
            .recv()
            .unwrap_or_else(|_| panic!("the {name} did not report its address"));
        Server {
            addr,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve<H, F>(
    label: String,
    handle: H,
    addr_tx: std::sync::mpsc::Sender<SocketAddr>,
    mut shutdown: oneshot::Receiver<()>,
) where
    H: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind the {label} on 127.0.0.1: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("the {label}'s address: {e}"));
    let _ = addr_tx.send(addr);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let handle = handle.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(req, addr));
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}
