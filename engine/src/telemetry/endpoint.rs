//! The OpenMetrics scrape endpoint: `GET /metrics` over plain HTTP/1.1 on a background thread.
//!
//! Owns: one listening socket and the thread that serves it. Must never: listen beyond loopback
//! unless asked ([`EndpointOptions::allow_non_loopback`]), serve more than one connection at a
//! time, read an unbounded request, or outlive its [`MetricsEndpoint`] handle.
//!
//! # Protocol
//! 1. [`MetricsEndpoint::start`] refuses non-loopback addresses (unless allowed), binds, sets the
//!    listener non-blocking and starts the `lanegraph-metrics` thread.
//! 2. The thread polls `accept` every [`POLL_INTERVAL`] and checks the stop flag.
//! 3. Per connection (blocking, with [`IO_TIMEOUT`] on reads and writes): read the request head
//!    (at most [`MAX_REQUEST_BYTES`]), answer `GET /metrics` (or `/`) with a fresh exposition,
//!    `404` for other paths, `405` for other methods, `400` for garbage, `500` when a computed
//!    metric panics while rendering (the thread keeps serving); close.
//! 4. Dropping the handle sets the stop flag (release) and joins the thread: at most one
//!    connection's I/O timeout plus one poll interval later, the port is free.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::openmetrics;
use super::registry::Registry;
use super::EndpointError;

/// How often the idle thread checks for a connection or a stop (bounds drop latency).
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Read and write timeout per connection (a stalled client cannot hold the thread longer).
pub const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest request head read (a scrape request is a few hundred bytes).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024;

/// How the endpoint may be exposed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointOptions {
    /// Serve on a non-loopback address (exposes metrics to the network: opt in on purpose).
    pub allow_non_loopback: bool,
}

/// A running endpoint; stops when dropped.
#[derive(Debug)]
pub struct MetricsEndpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsEndpoint {
    /// Serves `registry` on `addr` (`127.0.0.1:0` picks a free port; see [`Self::local_addr`]).
    pub fn start(
        addr: SocketAddr,
        registry: Registry,
        options: EndpointOptions,
    ) -> Result<Self, EndpointError> {
        if !addr.ip().is_loopback() && !options.allow_non_loopback {
            return Err(EndpointError::NotLoopback { addr });
        }
        let bind_err = |source| EndpointError::Bind { addr, source };
        let listener = TcpListener::bind(addr).map_err(bind_err)?;
        listener.set_nonblocking(true).map_err(bind_err)?;
        let local = listener.local_addr().map_err(bind_err)?;
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, served) = (stop.clone(), served.clone());
            std::thread::Builder::new()
                .name("lanegraph-metrics".into())
                .spawn(move || serve(listener, registry, stop, served))
                .map_err(EndpointError::Spawn)?
        };
        Ok(MetricsEndpoint {
            addr: local,
            stop,
            served,
            thread: Some(thread),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests answered so far (any status).
    pub fn requests_served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: TcpListener, registry: Registry, stop: Arc<AtomicBool>, served: Arc<AtomicU64>) {
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                // Counted before answering, so a client that has read its answer sees the count.
                served.fetch_add(1, Ordering::Relaxed);
                // A failed exchange only affects that client; keep serving.
                let _ = answer(stream, &registry);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL_INTERVAL)
            }
            Err(_) => std::thread::sleep(POLL_INTERVAL),
        }
    }
}

fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let request_line = head.lines().next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next(), parts.next());
    let (status, ctype, body) = match (method, path) {
        // A computed metric is user code: if it panics, answer 500 and keep serving.
        (Some("GET"), Some("/metrics" | "/")) => {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                openmetrics::render(registry)
            })) {
                Ok(text) => ("200 OK", openmetrics::CONTENT_TYPE, text),
                Err(_) => (
                    "500 Internal Server Error",
                    "text/plain",
                    "a computed metric panicked while rendering (see stderr)\n".into(),
                ),
            }
        }
        (Some("GET"), Some(_)) => (
            "404 Not Found",
            "text/plain",
            "not found: scrape /metrics\n".into(),
        ),
        (Some(_), Some(_)) => (
            "405 Method Not Allowed",
            "text/plain",
            "only GET is served\n".into(),
        ),
        _ => (
            "400 Bad Request",
            "text/plain",
            "malformed request\n".into(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

/// Reads up to the blank line that ends an HTTP head, at most [`MAX_REQUEST_BYTES`].
fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 512];
    while buf.len() < MAX_REQUEST_BYTES {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_metrics_and_refuses_the_rest() {
        let r = Registry::new();
        r.register_counter("frame.completed", super::super::Unit::None, "")
            .unwrap()
            .add(9);
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            r,
            EndpointOptions::default(),
        )
        .unwrap();
        let ok = get(ep.local_addr(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        assert!(ok.contains("lanegraph_frame_completed_total 9"));
        assert!(ok.ends_with("# EOF\n"));
        assert!(get(ep.local_addr(), "GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(ep.local_addr(), "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        assert_eq!(ep.requests_served(), 3);
    }

    #[test]
    fn a_panicking_computed_metric_gives_500_and_serving_goes_on() {
        let r = Registry::new();
        r.register_gauge_fn("asset.pending", super::super::Unit::None, "", || {
            panic!("boom")
        })
        .unwrap();
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            r,
            EndpointOptions::default(),
        )
        .unwrap();
        for _ in 0..2 {
            let resp = get(ep.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n");
            assert!(resp.starts_with("HTTP/1.1 500"), "{resp}");
        }
    }

    #[test]
    fn non_loopback_needs_consent_and_drop_frees_the_port() {
        let e = MetricsEndpoint::start(
            "0.0.0.0:0".parse().unwrap(),
            Registry::new(),
            EndpointOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, EndpointError::NotLoopback { .. }), "{e}");
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::new(),
            EndpointOptions::default(),
        )
        .unwrap();
        let addr = ep.local_addr();
        drop(ep);
        assert!(
            TcpStream::connect(addr).is_err(),
            "listener still open after drop"
        );
    }
}
