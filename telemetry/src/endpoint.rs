//! The OpenMetrics scrape endpoint: `GET /metrics` over plain HTTP/1.1 on a background thread.
//!
//! Owns: one listening socket, the connections it has open, and the thread that serves them.
//! Must never: listen beyond loopback unless asked ([`EndpointOptions::allow_non_loopback`]),
//! hold more than [`EndpointOptions::max_connections`] connections, give a connection longer
//! than [`EndpointOptions::request_deadline`] from accept to the last byte of its answer, read
//! an unbounded request, or outlive its [`MetricsEndpoint`] handle (dropping it never waits for
//! a client).
//!
//! # Protocol
//! 1. [`MetricsEndpoint::start`] refuses non-loopback addresses (unless allowed), binds, sets the
//!    listener non-blocking and starts the `lanegraph-metrics` thread.
//! 2. The thread loops every [`POLL_INTERVAL`] at most, checking the stop flag each time. All
//!    sockets are non-blocking: no client can make the thread wait.
//! 3. It accepts every pending connection. At the cap, the connection open longest without a
//!    complete request is closed to make room (idle or trickling clients cannot lock a scraper
//!    out); one with an answer in progress is never evicted.
//! 4. Per connection it reads what has arrived, up to [`MAX_REQUEST_BYTES`] of head. A complete
//!    head is answered: `GET /metrics` (or `/`) with a fresh exposition, `404` for other paths,
//!    `405` for other methods, `400` for garbage, `431` for a head over the limit, `500` when a
//!    computed metric panics while rendering (the thread keeps serving). A connection past its
//!    deadline is answered `408` if it has not sent a whole request and closed either way.
//! 5. Dropping the handle sets the stop flag (release) and joins the thread: within one poll
//!    interval, whatever the clients do, the port is free.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::openmetrics;
use super::registry::Registry;
use super::EndpointError;

/// How long the thread sleeps when nothing happened (bounds drop latency and idle CPU).
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Largest request head read (a scrape request is a few hundred bytes).
pub(crate) const MAX_REQUEST_BYTES: usize = 8 * 1024;

/// How the endpoint may be exposed and how much a client may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointOptions {
    /// Serve on a non-loopback address (exposes metrics to the network: opt in on purpose;
    /// the demo's flag is `--metrics-remote`).
    pub allow_non_loopback: bool,
    /// Connections held open at once (default 16); see the protocol, step 3.
    pub max_connections: usize,
    /// Time from accept to the answer's last byte (default 2 s); a slower client is cut off.
    pub request_deadline: Duration,
}

impl Default for EndpointOptions {
    fn default() -> Self {
        EndpointOptions {
            allow_non_loopback: false,
            max_connections: 16,
            request_deadline: Duration::from_secs(2),
        }
    }
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
                .spawn(move || {
                    Server {
                        listener,
                        registry,
                        options,
                        conns: Vec::new(),
                    }
                    .run(&stop, &served)
                })
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

    /// The body of [`EndpointHooks::requests_served`](crate::hooks::EndpointHooks::requests_served), which documents it.
    pub(crate) fn requests_served(&self) -> u64 {
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

/// One open connection.
struct Conn {
    stream: TcpStream,
    opened: Instant,
    head: Vec<u8>,
    /// The answer once the request is complete, and how much of it was written.
    out: Option<(Vec<u8>, usize)>,
}

struct Server {
    listener: TcpListener,
    registry: Registry,
    options: EndpointOptions,
    conns: Vec<Conn>,
}

impl Server {
    fn run(mut self, stop: &AtomicBool, served: &AtomicU64) {
        while !stop.load(Ordering::Acquire) {
            let mut progress = self.accept();
            let now = Instant::now();
            let mut i = 0;
            while i < self.conns.len() {
                match self.step(i, now, served) {
                    Step::Keep(moved) => {
                        progress |= moved;
                        i += 1;
                    }
                    Step::Close => {
                        self.conns.swap_remove(i);
                        progress = true;
                    }
                }
            }
            if !progress {
                std::thread::sleep(POLL_INTERVAL);
            }
        }
    }

    /// Step 3: accepts every pending connection, making room at the cap.
    fn accept(&mut self) -> bool {
        let mut any = false;
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    any = true;
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if self.conns.len() >= self.options.max_connections.max(1) {
                        // Evict the oldest connection still waiting for its request.
                        let victim = self
                            .conns
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| c.out.is_none())
                            .min_by_key(|(_, c)| c.opened)
                            .map(|(i, _)| i);
                        match victim {
                            Some(v) => {
                                self.conns.swap_remove(v);
                            }
                            None => {
                                // Every slot is answering: refuse the newcomer.
                                let _ = (&stream).write(
                                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                                );
                                continue;
                            }
                        }
                    }
                    self.conns.push(Conn {
                        stream,
                        opened: Instant::now(),
                        head: Vec::new(),
                        out: None,
                    });
                }
                Err(_) => return any,
            }
        }
    }

    /// Step 4 for connection `i`.
    fn step(&mut self, i: usize, now: Instant, served: &AtomicU64) -> Step {
        let deadline = self.options.request_deadline;
        let registry = &self.registry;
        let c = &mut self.conns[i];
        let late = now.duration_since(c.opened) > deadline;
        let mut moved = false;
        if c.out.is_none() {
            let mut chunk = [0u8; 1024];
            loop {
                match c.stream.read(&mut chunk) {
                    Ok(0) => {
                        // The client closed before a whole request: nothing to answer.
                        if !head_complete(&c.head) {
                            return Step::Close;
                        }
                        break;
                    }
                    Ok(n) => {
                        moved = true;
                        let room = MAX_REQUEST_BYTES + 1 - c.head.len().min(MAX_REQUEST_BYTES + 1);
                        c.head.extend_from_slice(&chunk[..n.min(room)]);
                        if head_complete(&c.head) || c.head.len() > MAX_REQUEST_BYTES {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return Step::Close,
                }
            }
            let answer = if head_complete(&c.head) {
                Some(answer(&c.head, registry))
            } else if c.head.len() > MAX_REQUEST_BYTES {
                Some(response(
                    "431 Request Header Fields Too Large",
                    "text/plain",
                    "request head over 8 KiB\n",
                ))
            } else if late {
                Some(response(
                    "408 Request Timeout",
                    "text/plain",
                    "no complete request in time\n",
                ))
            } else {
                None
            };
            if let Some(a) = answer {
                // Counted before answering, so a client that has read its answer sees it.
                served.fetch_add(1, Ordering::Relaxed);
                c.out = Some((a, 0));
                moved = true;
            }
        }
        if let Some((bytes, written)) = c.out.as_mut() {
            while *written < bytes.len() {
                match c.stream.write(&bytes[*written..]) {
                    Ok(0) => return Step::Close,
                    Ok(n) => {
                        *written += n;
                        moved = true;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return Step::Close,
                }
            }
            if *written == bytes.len() {
                let _ = c.stream.flush();
                return Step::Close;
            }
        }
        if late && c.out.as_ref().is_some_and(|(b, w)| *w < b.len()) {
            // An answer the client would not take in time: give up on it.
            return Step::Close;
        }
        Step::Keep(moved)
    }
}

enum Step {
    /// Keep the connection; whether anything happened on it.
    Keep(bool),
    /// Close it (answered, failed, or out of time).
    Close,
}

/// Whether `head` holds a whole HTTP request head.
fn head_complete(head: &[u8]) -> bool {
    head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n")
}

/// The whole response to a request head.
fn answer(head: &[u8], registry: &Registry) -> Vec<u8> {
    let head = String::from_utf8_lossy(head);
    let request_line = head.lines().next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let (method, path, version) = (parts.next(), parts.next(), parts.next());
    let well_formed = version.is_some_and(|v| v.starts_with("HTTP/")) && parts.next().is_none();
    match (method, path) {
        _ if !well_formed => response("400 Bad Request", "text/plain", "malformed request\n"),
        // A computed metric is user code: if it panics, answer 500 and keep serving.
        (Some("GET"), Some("/metrics" | "/")) => {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                openmetrics::render(registry)
            })) {
                Ok(text) => response("200 OK", openmetrics::CONTENT_TYPE, &text),
                Err(_) => response(
                    "500 Internal Server Error",
                    "text/plain",
                    "a computed metric panicked while rendering (see stderr)\n",
                ),
            }
        }
        (Some("GET"), Some(_)) => response(
            "404 Not Found",
            "text/plain",
            "not found: scrape /metrics\n",
        ),
        (Some(_), Some(_)) => response(
            "405 Method Not Allowed",
            "text/plain",
            "only GET is served\n",
        ),
        _ => response("400 Bad Request", "text/plain", "malformed request\n"),
    }
}

fn response(status: &str, ctype: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` and reads the whole answer (a test failure, not a hang, after 20 s).
    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        read_answer(s)
    }

    #[test]
    fn serves_metrics_and_refuses_the_rest() {
        let r = Registry::default();
        r.register_counter("frame.completed", &[], super::super::Unit::None, "")
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
        let r = Registry::default();
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
            Registry::default(),
            EndpointOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, EndpointError::NotLoopback { .. }), "{e}");
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::default(),
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

    fn quick_deadline() -> EndpointOptions {
        EndpointOptions {
            request_deadline: Duration::from_millis(300),
            ..EndpointOptions::default()
        }
    }

    /// Reads the whole answer, failing the test (not hanging) if none comes in 20 s.
    fn read_answer(mut s: TcpStream) -> String {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).expect("an answer within 20 s");
        out
    }

    #[test]
    fn a_trickling_client_is_cut_off_at_the_deadline_and_others_are_served_meanwhile() {
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::default(),
            quick_deadline(),
        )
        .unwrap();
        let mut slow = TcpStream::connect(ep.local_addr()).unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // One byte every 50 ms: a per-read timeout never fires, the request deadline does.
        let mut cut_off = false;
        for b in b"GET /metrics HTTP/1.1\r\nX-Slow: "
            .iter()
            .chain(std::iter::repeat(&b'a'))
            .take(400)
        {
            if slow.write_all(&[*b]).is_err() {
                cut_off = true;
                break;
            }
            // Meanwhile a normal scrape is answered.
            if *b == b'X' {
                let ok = get(ep.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n");
                assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
            }
            std::thread::sleep(Duration::from_millis(50));
            let mut peek = [0u8; 64];
            slow.set_nonblocking(true).unwrap();
            let got = slow.read(&mut peek);
            slow.set_nonblocking(false).unwrap();
            if let Ok(n) = got {
                // 0: closed; n: the 408 arrived.
                assert!(
                    n == 0 || peek.starts_with(b"HTTP/1.1 408"),
                    "{:?}",
                    &peek[..n]
                );
                cut_off = true;
                break;
            }
        }
        assert!(cut_off, "the trickling client was never cut off");
    }

    #[test]
    fn two_hundred_idle_connections_do_not_keep_a_scraper_out() {
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::default(),
            EndpointOptions::default(),
        )
        .unwrap();
        let idle: Vec<TcpStream> = (0..200)
            .map(|_| TcpStream::connect(ep.local_addr()).unwrap())
            .collect();
        // The idle connections are still open (default 2 s deadline, not passed yet for most).
        let mut s = TcpStream::connect(ep.local_addr()).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let ok = read_answer(s);
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        drop(idle);
    }

    #[test]
    fn dropping_the_endpoint_never_waits_for_a_client() {
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::default(),
            EndpointOptions {
                request_deadline: Duration::from_secs(3600),
                ..EndpointOptions::default()
            },
        )
        .unwrap();
        let addr = ep.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        // A client that keeps trickling bytes for as long as the test runs.
        let client = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    if s.write_all(b"a").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(ep);
            let _ = tx.send(());
        });
        let dropped = rx.recv_timeout(Duration::from_secs(20)).is_ok();
        stop.store(true, Ordering::Relaxed);
        client.join().unwrap();
        assert!(dropped, "dropping the endpoint waited for the client");
        assert!(TcpStream::connect(addr).is_err(), "the port is free");
    }

    #[test]
    fn oversized_and_malformed_requests_get_their_status() {
        let ep = MetricsEndpoint::start(
            "127.0.0.1:0".parse().unwrap(),
            Registry::default(),
            EndpointOptions::default(),
        )
        .unwrap();
        let big = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(9000));
        let mut s = TcpStream::connect(ep.local_addr()).unwrap();
        // The server may close before the whole head is sent: ignore the write error.
        let _ = s.write_all(big.as_bytes());
        let resp = read_answer(s);
        assert!(resp.starts_with("HTTP/1.1 431"), "{resp}");
        for bad in [
            "\r\n\r\n",
            "GET\r\n\r\n",
            "GET /metrics\r\n\r\n",
            "\u{0}\u{1}\n\n",
            "GET /metrics HTTP/1.1 extra\r\n\r\n",
        ] {
            let resp = get(ep.local_addr(), bad);
            assert!(resp.starts_with("HTTP/1.1 400"), "{bad:?}: {resp}");
        }
    }
}
