//! The exporter's HTTP server: hyper's HTTP/1 server on a tokio runtime of
//! two worker threads (a second one keeps the tail latency low when the
//! first is busy or descheduled), with limits on what one client can take.
//!
//! - Request heads: at most [`MAX_HEADER_BYTES`] (else 431) and read within
//!   [`Options::io_timeout`] (else the connection is closed); an idle
//!   keep-alive connection is closed after the same time.
//! - Bodies: no route takes one. A request that announces a body is answered
//!   413 and its connection closed; the body is never read.
//! - Responses: a client that does not take a response for
//!   [`Options::io_timeout`] (a write that makes no progress) is dropped.
//! - Connections: at most [`Options::max_connections`] at once; beyond that
//!   a new connection is answered 503 (when its socket takes the answer at
//!   once) and closed. Nothing waits in a queue.
//! - Scrapes: each connection is its own task, so a slow client delays
//!   nobody; telemetry is read on a blocking thread, one read at a time,
//!   and requests that wait together share the next read ([`Reads`]). A read
//!   that takes longer than [`Options::read_timeout`] (a wedged driver) or
//!   fails is answered with the last good read, its samples stamped with
//!   its time.
//! - Half-closed connections: a client that shuts its side down after its
//!   request is answered.
//! - `accept` failures: a client's failure is skipped, a lack of resources
//!   (descriptors, memory) is reported once and retried with backoff, and
//!   anything else ends `serve` with an error.

use crate::{Error, Npu};
use http_body_util::Full;
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{ALLOW, CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Semaphore, watch};

/// The largest request head (request line and headers) accepted, in bytes.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// hyper's per-connection buffer limit (its minimum is 8 KiB): what one
/// connection can make the exporter hold, reading or writing.
const MAX_BUF_BYTES: usize = 16 * 1024;

/// The send buffer of each connection (Linux doubles it for bookkeeping):
/// a scrape of 8 chips is about 14 KiB.
const SEND_BUFFER_BYTES: usize = 32 * 1024;

/// The longest wait between `accept` retries when resources are short.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The shortest time between two reports of `accept` failures.
const REPORT_QUIET: Duration = Duration::from_secs(60);

/// How the exporter serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Stop after answering this many requests (for tests).
    pub max_requests: Option<u64>,
    /// Connections served at once; more are refused (503) at once.
    pub max_connections: usize,
    /// The time a client has to send a request head, and to take each part
    /// of a response; an idle keep-alive connection is closed after it too.
    pub io_timeout: Duration,
    /// The longest a scrape waits for a read of the NPUs; after it, the
    /// last good read is served, stamped with its time.
    pub read_timeout: Duration,
}

impl Default for Options {
    /// No request limit, 512 connections (half of the common descriptor
    /// limit of 1024), 10 s of I/O time (Prometheus' default scrape
    /// timeout), 5 s of read time (an answer well within that timeout).
    fn default() -> Self {
        Options {
            max_requests: None,
            max_connections: 512,
            io_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(5),
        }
    }
}

/// Binds the exporter's listening socket.
///
/// # Errors
///
/// When `listen` cannot be bound; the message says what to change.
pub fn bind(listen: &str) -> Result<std::net::TcpListener, Error> {
    let hint = |e: &io::Error| match e.kind() {
        io::ErrorKind::AddrInUse => {
            " (another program, perhaps another exporter, listens there: stop it or choose another port with --listen)"
        }
        io::ErrorKind::PermissionDenied => {
            " (ports below 1024 need privileges: choose a port of 1024 or more with --listen)"
        }
        io::ErrorKind::AddrNotAvailable => {
            " (no interface of this machine has that address: use 127.0.0.1, 0.0.0.0 or one of its addresses)"
        }
        _ => " (give HOST:PORT, e.g. 127.0.0.1:9101 or 0.0.0.0:8082)",
    };
    std::net::TcpListener::bind(listen).map_err(|e| Error::Command {
        command: format!("export --listen {listen}"),
        detail: format!("cannot listen on {listen}: {e}{}", hint(&e)),
    })
}

/// What to do after `accept` failed with `error`, the `streak`-th failure in
/// a row (0 for the first): `Some(delay)` to retry after `delay` (zero when
/// the failure was one client's), `None` when retrying cannot help.
///
/// A lack of resources (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) passes when
/// connections close: retried after 10 ms, doubling up to 1 s. Errors a
/// pending connection hands to `accept` (aborted, reset, network down, …;
/// see accept(2)) are that client's: retried at once. Anything else (a
/// closed or invalid socket) is fatal.
pub fn accept_retry(error: &io::Error, streak: u32) -> Option<Duration> {
    if matches!(
        error.kind(),
        io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return Some(Duration::ZERO);
    }
    match error.raw_os_error()? {
        libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => {
            let backoff = Duration::from_millis(10).saturating_mul(1 << streak.min(10));
            Some(backoff.min(MAX_ACCEPT_BACKOFF))
        }
        libc::EINTR
        | libc::EAGAIN
        | libc::ECONNABORTED
        | libc::EPROTO
        | libc::EPERM
        | libc::ENETDOWN
        | libc::ENOPROTOOPT
        | libc::EHOSTDOWN
        | libc::ENONET
        | libc::EHOSTUNREACH
        | libc::EOPNOTSUPP
        | libc::ENETUNREACH
        | libc::ETIMEDOUT => Some(Duration::ZERO),
        _ => None,
    }
}

/// Answers requests on `listener` until `options.max_requests` have been
/// answered (never, without a limit).
///
/// # Errors
///
/// When the runtime cannot start, or `accept` fails in a way retrying
/// cannot cure ([`accept_retry`]).
pub fn serve(npu: &Npu, listener: std::net::TcpListener, options: &Options) -> Result<(), Error> {
    let failed = |detail: String| Error::Command {
        command: "export".to_string(),
        detail,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| {
            failed(format!(
                "cannot start the HTTP server's runtime: {e} (raise the descriptor or thread limits)"
            ))
        })?;
    let result = runtime
        .block_on(async {
            let listener = listener
                .set_nonblocking(true)
                .and_then(|()| tokio::net::TcpListener::from_std(listener))
                .map_err(|e| format!("cannot use the listening socket: {e}"))?;
            accept_loop(npu, listener, options).await
        })
        .map_err(failed);
    // A scrape still reading the devices (its client gone) is not waited for.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// What every connection shares.
struct Shared {
    npu: Npu,
    reads: Arc<Reads>,
    served: AtomicU64,
    max_requests: Option<u64>,
    /// Set once `max_requests` have been answered.
    stop: watch::Sender<bool>,
}

async fn accept_loop(
    npu: &Npu,
    listener: tokio::net::TcpListener,
    options: &Options,
) -> Result<(), String> {
    let (stop, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        npu: npu.clone(),
        reads: Arc::new(Reads::new(options.read_timeout)),
        served: AtomicU64::new(0),
        max_requests: options.max_requests,
        stop,
    });
    let max_connections = options.max_connections.clamp(1, 1 << 20);
    let slots = Arc::new(Semaphore::new(max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.io_timeout)
        // A client may shut its side down after sending its request (some
        // health checkers do): it is still answered.
        .half_close(true)
        .max_header_size(MAX_HEADER_BYTES)
        .max_buf_size(MAX_BUF_BYTES);
    let mut stopped = shared.stop.subscribe();
    let mut streak = 0u32;
    // A lack of resources is reported once a minute at most, and its end
    // once after each report.
    let mut last_report: Option<tokio::time::Instant> = None;
    let mut reported = false;
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stopped.wait_for(|s| *s) => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                if reported {
                    eprintln!("npu-smi-rs: export: accepting connections again");
                    reported = false;
                }
                streak = 0;
                stream
            }
            Err(e) => {
                let Some(delay) = accept_retry(&e, streak) else {
                    return Err(format!(
                        "accepting a connection failed: {e} (restart the exporter; if it recurs, report it with this message)"
                    ));
                };
                if delay > Duration::ZERO {
                    if streak == 0 && last_report.is_none_or(|t| t.elapsed() >= REPORT_QUIET) {
                        last_report = Some(tokio::time::Instant::now());
                        reported = true;
                        eprintln!(
                            "npu-smi-rs: export: accepting a connection failed: {e}; retrying until it succeeds \
                             (raise the descriptor limit, `ulimit -n`, or lower --max-connections, now {max_connections})"
                        );
                    }
                    streak = streak.saturating_add(1);
                    tokio::time::sleep(delay).await;
                }
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            refuse(&stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        // A fixed, small send buffer: a client that never reads holds
        // little kernel memory, and filling it costs the server little.
        let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER_BYTES);
        let io = TokioIo::new(Deadlined::new(stream, options.io_timeout));
        let service_shared = Arc::clone(&shared);
        let service = hyper::service::service_fn(move |request| {
            let shared = Arc::clone(&service_shared);
            async move { Ok::<_, std::convert::Infallible>(answer(&shared, request).await) }
        });
        let connection = http.serve_connection(io, service);
        let mut stopped = shared.stop.subscribe();
        tokio::spawn(async move {
            let _slot = slot;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                // A client's I/O error or timeout ends its connection only.
                _ = connection.as_mut() => return,
                _ = stopped.wait_for(|s| *s) => connection.as_mut().graceful_shutdown(),
            }
            let _ = connection.await;
        });
    }
    drop(listener);
    // Let the last responses go out; each connection ends within its timeouts.
    let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(
        options.io_timeout.saturating_mul(2),
        slots.acquire_many(all),
    )
    .await;
    Ok(())
}

/// Answers a connection beyond the limit with 503, if its socket takes the
/// answer without waiting, and closes it (on drop).
fn refuse(stream: &tokio::net::TcpStream) {
    const BUSY: &[u8] =
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Length: 57\r\nConnection: close\r\nRetry-After: 1\r\n\r\n\
npu-smi-rs exporter: too many connections, retry shortly\n";
    let _ = stream.try_write(BUSY);
}

type Answer = Response<Full<Bytes>>;

fn text(status: StatusCode, body: impl Into<Bytes>) -> Answer {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

async fn answer(shared: &Shared, request: Request<Incoming>) -> Answer {
    let response = route(shared, &request).await;
    let served = shared
        .served
        .fetch_add(1, Ordering::Relaxed)
        .saturating_add(1);
    if shared.max_requests.is_some_and(|m| served >= m) {
        shared.stop.send_replace(true);
    }
    response
}

async fn route(shared: &Shared, request: &Request<Incoming>) -> Answer {
    if !request.body().is_end_stream() {
        // Never read: the connection is closed after the answer.
        let mut response = text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the exporter takes no request body: send GET /metrics without one\n",
        );
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/metrics") => scrape(shared).await,
        (&Method::GET, "/") => text(
            StatusCode::OK,
            "npu-smi-rs exporter: metrics are at /metrics\n",
        ),
        (&Method::HEAD, _) => {
            let mut response = text(
                StatusCode::METHOD_NOT_ALLOWED,
                "use GET: metrics are at /metrics\n",
            );
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET"));
            response
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: metrics are at /metrics\n",
        ),
    }
}

/// The result of one telemetry read, encoded: metrics text, or the error's
/// message.
type Scrape = Result<Bytes, String>;

/// The last successful read: its metrics and when it finished.
struct Good {
    metrics: Bytes,
    at: SystemTime,
}

#[derive(Default)]
struct ReadState {
    /// How many reads have started.
    started: u64,
    /// When the read in flight started.
    running_since: Option<Instant>,
    /// The last finished read: its number (from 1) and result.
    last: Option<(u64, Scrape)>,
    /// The last successful read.
    good: Option<Arc<Good>>,
    /// Whether stale answers have been reported since the last good read.
    stale_reported: bool,
}

/// What a scrape gets from [`Reads::read`].
enum Outcome {
    /// A read that started after the request arrived.
    Fresh(Bytes),
    /// The last good read, because no fresh one came in time or it failed.
    Stale(Arc<Good>),
    /// No read to serve: the message.
    Failed(StatusCode, String),
}

/// Reads of the devices, one at a time and shared: a request waits for a
/// read that started after it arrived, and every request that was waiting
/// when a read started takes that read's result. A flood of requests costs
/// at most one read in flight and one to come, and each answer is fresh.
///
/// A read that does not finish within the read timeout (a wedged driver or
/// `npu-smi`), or that fails, does not stall scrapes: they are answered with
/// the last good read, every sample stamped with the time of that read (as
/// Ascend's npu-exporter stamps its cached samples), so that Prometheus sees
/// the data is old. A read still running after the timeout is not repeated:
/// later requests get the stale answer at once until it ends.
struct Reads {
    state: std::sync::Mutex<ReadState>,
    /// The number of the last finished read.
    finished: watch::Sender<u64>,
    timeout: Duration,
}

impl Reads {
    fn new(timeout: Duration) -> Reads {
        Reads {
            state: std::sync::Mutex::new(ReadState::default()),
            finished: watch::channel(0).0,
            timeout,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn read(self: &Arc<Self>, npu: &Npu) -> Outcome {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut finished = self.finished.subscribe();
        // A read that started before this request does not count.
        let want = self.state().started.saturating_add(1);
        loop {
            {
                let mut state = self.state();
                if let Some((number, result)) = &state.last
                    && *number >= want
                {
                    return match result.clone() {
                        Ok(metrics) => Outcome::Fresh(metrics),
                        Err(message) => Self::stale(&mut state, message),
                    };
                }
                match state.running_since {
                    None => {
                        state.started = state.started.saturating_add(1);
                        state.running_since = Some(Instant::now());
                        self.start(npu.clone(), state.started);
                    }
                    Some(since) if since.elapsed() >= self.timeout => {
                        let why = format!(
                            "reading the NPUs has taken {} s so far (still running)",
                            since.elapsed().as_secs()
                        );
                        return Self::stale(&mut state, why);
                    }
                    Some(_) => {}
                }
            }
            if !matches!(
                tokio::time::timeout_at(deadline, finished.changed()).await,
                Ok(Ok(()))
            ) {
                let why = format!(
                    "reading the NPUs did not finish within the read timeout ({} ms; it goes on)",
                    self.timeout.as_millis()
                );
                return Self::stale(&mut self.state(), why);
            }
        }
    }

    /// Starts read `number` on a blocking thread; it records its result
    /// whether or not anyone still waits for it.
    fn start(self: &Arc<Self>, npu: Npu, number: u64) {
        let reads = Arc::clone(self);
        // Not awaited: a wedged read holds its blocking thread, not a scrape.
        drop(tokio::task::spawn_blocking(move || {
            let result = super::super::statuses(&npu)
                .map(|devices| Bytes::from(super::encode(&devices)))
                .map_err(|e| format!("reading the NPUs failed: {e}"));
            let mut state = reads.state();
            state.running_since = None;
            if let Ok(metrics) = &result {
                state.good = Some(Arc::new(Good {
                    metrics: metrics.clone(),
                    at: SystemTime::now(),
                }));
                if std::mem::take(&mut state.stale_reported) {
                    eprintln!("npu-smi-rs: export: reading the NPUs works again");
                }
            }
            state.last = Some((number, result));
            drop(state);
            reads.finished.send_replace(number);
        }));
    }

    /// The last good read, for a request that cannot have a fresh one
    /// because of `why` (reported on standard error once until a read
    /// succeeds again); without one, the failure.
    fn stale(state: &mut ReadState, why: String) -> Outcome {
        let Some(good) = state.good.clone() else {
            return Outcome::Failed(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{why}; no earlier read to serve\n"),
            );
        };
        if !std::mem::replace(&mut state.stale_reported, true) {
            let age = good.at.elapsed().unwrap_or_default().as_secs_f64();
            eprintln!(
                "npu-smi-rs: export: {why}; serving the last good read (from {age:.1} s ago, \
                 its samples stamped with its time) until a read succeeds"
            );
        }
        Outcome::Stale(good)
    }
}

/// `metrics` (OpenMetrics text) with every sample stamped with `at`.
fn stamped(metrics: &[u8], at: SystemTime) -> Bytes {
    let since_epoch = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let stamp = format!(
        " {}.{:03}",
        since_epoch.as_secs(),
        since_epoch.subsec_millis()
    );
    let mut out = Vec::with_capacity(metrics.len() + metrics.len() / 4);
    for line in metrics.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(body);
        if !body.is_empty() && !body.starts_with(b"#") {
            out.extend_from_slice(stamp.as_bytes());
        }
        if body.len() < line.len() {
            out.push(b'\n');
        }
    }
    Bytes::from(out)
}

fn metrics_answer(body: Bytes) -> Answer {
    let mut response = text(StatusCode::OK, body);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(super::CONTENT_TYPE));
    response
}

async fn scrape(shared: &Shared) -> Answer {
    match shared.reads.read(&shared.npu).await {
        Outcome::Fresh(metrics) => metrics_answer(metrics),
        Outcome::Stale(good) => metrics_answer(stamped(&good.metrics, good.at)),
        Outcome::Failed(status, message) => text(status, message),
    }
}

/// A connection whose writes must make progress within `timeout`: a client
/// that stops reading its responses is dropped instead of holding the
/// connection (and its buffers) forever.
struct Deadlined {
    stream: tokio::net::TcpStream,
    timeout: Duration,
    /// Armed while a write waits; cleared by any progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Deadlined {
    fn new(stream: tokio::net::TcpStream, timeout: Duration) -> Self {
        Deadlined {
            stream,
            timeout,
            stalled: None,
        }
    }

    /// Passes a write's result on, arming the deadline while it waits.
    fn track<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.timeout;
        let deadline = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not take its response in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Deadlined {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Deadlined {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.track(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.track(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_flush(cx);
        this.track(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_shutdown(cx);
        this.track(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(code: i32) -> io::Error {
        io::Error::from_raw_os_error(code)
    }

    #[test]
    fn lack_of_descriptors_is_retried_with_a_growing_capped_backoff() {
        for code in [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM] {
            assert_eq!(accept_retry(&os(code), 0), Some(Duration::from_millis(10)));
            assert_eq!(accept_retry(&os(code), 1), Some(Duration::from_millis(20)));
            assert_eq!(accept_retry(&os(code), 3), Some(Duration::from_millis(80)));
            assert_eq!(accept_retry(&os(code), 7), Some(MAX_ACCEPT_BACKOFF));
            assert_eq!(accept_retry(&os(code), u32::MAX), Some(MAX_ACCEPT_BACKOFF));
        }
    }

    #[test]
    fn a_clients_own_failure_is_retried_at_once() {
        for code in [
            libc::ECONNABORTED,
            libc::EINTR,
            libc::EPROTO,
            libc::ENETUNREACH,
        ] {
            assert_eq!(accept_retry(&os(code), 0), Some(Duration::ZERO), "{code}");
        }
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(accept_retry(&reset, 5), Some(Duration::ZERO));
    }

    #[test]
    fn stale_metrics_stamp_every_sample_and_no_comment() {
        let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_042);
        let text = b"# HELP a An a.\n# TYPE a gauge\na{id=\"0 1\"} 3.5\nb 1\n# EOF\n";
        assert_eq!(
            &stamped(text, at)[..],
            &b"# HELP a An a.\n# TYPE a gauge\na{id=\"0 1\"} 3.5 1700000000.042\nb 1 1700000000.042\n# EOF\n"[..]
        );
    }

    #[test]
    fn a_broken_listening_socket_is_fatal() {
        for code in [libc::EBADF, libc::EINVAL, libc::ENOTSOCK, libc::EFAULT] {
            assert_eq!(accept_retry(&os(code), 0), None, "{code}");
        }
        assert_eq!(accept_retry(&io::Error::other("?"), 0), None);
    }
}
