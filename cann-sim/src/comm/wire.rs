//! What the simulated HCCL puts on the wire: the root info blob, the
//! bootstrap messages, the frames ranks exchange, and the timeouts.
//!
//! All integers are little-endian. Every socket is TCP; addresses are
//! whatever the root info or the rank table names (loopback in tests).

use super::error::ErrorKind;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The first bytes of a root info made by this simulator.
pub const ROOT_MAGIC: &[u8; 8] = b"CSIMHCCL";
/// The root info layout version.
pub const ROOT_VERSION: u32 = 1;
/// Offset and room of the root host's address text in the blob.
const HOST_AT: usize = 32;
const HOST_ROOM: usize = 64;

/// What a root info says: where its root server listens, and the
/// communicator's unique id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The root server's address.
    pub addr: SocketAddr,
    /// Unique per `HcclGetRootInfo` call.
    pub uid: u64,
}

impl Root {
    /// Writes the blob into `out` (the 4,108 bytes of an `HcclRootInfo`):
    /// magic, version, port, unique id, host text, zeros.
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(o) = out.get_mut(at..at + bytes.len()) {
                o.copy_from_slice(bytes);
            }
        };
        put(0, ROOT_MAGIC);
        put(8, &ROOT_VERSION.to_le_bytes());
        put(12, &self.addr.port().to_le_bytes());
        put(16, &self.uid.to_le_bytes());
        let host = self.addr.ip().to_string();
        put(HOST_AT, &host.as_bytes()[..host.len().min(HOST_ROOM - 1)]);
    }

    /// Reads a blob.
    ///
    /// # Errors
    ///
    /// A sentence when the blob was not made by this simulator's
    /// `HcclGetRootInfo` (all zeros, another version, garbage).
    pub fn decode(b: &[u8]) -> Result<Root, String> {
        if b.get(..8) != Some(&ROOT_MAGIC[..]) {
            return Err(if b.iter().all(|&x| x == 0) {
                "the root info is all zeros (it was not filled by HcclGetRootInfo)".to_string()
            } else {
                "the root info was not made by cann-sim's HcclGetRootInfo (wrong magic)".to_string()
            });
        }
        let version = u32_at(b, 8);
        if version != ROOT_VERSION {
            return Err(format!(
                "the root info has layout version {version}; this cann-sim reads version {ROOT_VERSION}"
            ));
        }
        let port = u16::from_le_bytes([
            b.get(12).copied().unwrap_or(0),
            b.get(13).copied().unwrap_or(0),
        ]);
        let uid = u64_at(b, 16);
        let host_bytes = b.get(HOST_AT..HOST_AT + HOST_ROOM).unwrap_or_default();
        let end = host_bytes
            .iter()
            .position(|&x| x == 0)
            .unwrap_or(host_bytes.len());
        let host = std::str::from_utf8(&host_bytes[..end])
            .ok()
            .and_then(|h| h.parse::<IpAddr>().ok())
            .ok_or("the root info's host address is not an IP address")?;
        Ok(Root {
            addr: SocketAddr::new(host, port),
            uid,
        })
    }
}

/// A process-unique, hard-to-collide 64-bit id (time, pid, counter).
pub fn unique_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = t
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The little-endian `u64` at byte `i` of `b` (0 past the end).
pub fn u64_at(b: &[u8], i: usize) -> u64 {
    b.get(i..i + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// The little-endian `u32` at byte `i` of `b` (0 past the end).
pub fn u32_at(b: &[u8], i: usize) -> u32 {
    b.get(i..i + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The number of `v` on the wire: its position in `all`, the list of every
/// value of its enum (each side of a connection runs the same simulator).
pub fn number_of<T: PartialEq>(all: &[T], v: &T) -> u32 {
    all.iter().position(|x| x == v).unwrap_or(0) as u32
}

/// The value numbered `n` by [`number_of`].
pub fn numbered<T: Copy>(all: &[T], n: u32) -> Option<T> {
    all.get(usize::try_from(n).ok()?).copied()
}

/// FNV-1a, for fingerprints of argument lists and rank tables.
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

// ---- timeouts ------------------------------------------------------------

/// How long bootstrap steps wait for the other ranks: `HCCL_CONNECT_TIMEOUT`
/// + 20 s (see [`super::env`]).
pub fn connect_timeout() -> Duration {
    super::env::current().connect_wait()
}

/// The address ranks listen on and the root server binds: `HCCL_IF_IP`,
/// else loopback.
pub fn local_ip() -> IpAddr {
    std::env::var("HCCL_IF_IP")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

// ---- sockets -------------------------------------------------------------

/// How often blocked socket calls look at their deadline and abort flag.
pub const POLL: Duration = Duration::from_millis(50);

/// Connects to `addr`, retrying refused connections until `deadline`
/// (the peer may not be listening yet).
///
/// # Errors
///
/// The last connection error, when the deadline passes.
pub fn connect_retry(addr: SocketAddr, deadline: Instant) -> io::Result<TcpStream> {
    let mut wait = Duration::from_millis(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = TcpStream::connect_timeout(
            &addr,
            left.clamp(Duration::from_millis(1), Duration::from_secs(2)),
        );
        match attempt {
            Ok(s) => {
                tune(&s);
                return Ok(s);
            }
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => {
                std::thread::sleep(wait.min(deadline.saturating_duration_since(Instant::now())));
                wait = (wait * 2).min(Duration::from_millis(100));
            }
        }
    }
}

/// Socket options for data connections: no Nagle delay, large buffers.
pub fn tune(s: &TcpStream) {
    let _ = s.set_nodelay(true);
    let size: libc::c_int = 4 << 20;
    for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
        // SAFETY: a valid socket descriptor and a pointer to a c_int of the
        // length passed; a failure only leaves the default size.
        unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(s),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// Reads exactly `buf.len()` bytes before `deadline` (the socket must have
/// a read timeout of at most [`POLL`]).
///
/// # Errors
///
/// `TimedOut` when the deadline passes, `UnexpectedEof` when the peer closed.
pub fn read_exact_by(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        match s.read(&mut buf[off..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => off += n,
            Err(e) if is_would_block(&e) => {
                if Instant::now() >= deadline {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether an I/O error is a socket timeout (which Linux reports as `WouldBlock`).
pub fn is_would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Writes all of `buf`, giving up at `deadline` or when `stop()` says so
/// (the socket must have a write timeout of at most [`POLL`]).
///
/// # Errors
///
/// `TimedOut` at the deadline, `Interrupted` when stopped, or the socket's error.
pub fn write_all_by(
    s: &mut TcpStream,
    buf: &[u8],
    deadline: Option<Instant>,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        match s.write(&buf[off..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => off += n,
            Err(e) if is_would_block(&e) || e.kind() == io::ErrorKind::Interrupted => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                if stop() {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped"));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A small length-prefixed message (bootstrap): u32 length, then bytes.
pub fn send_msg(s: &mut TcpStream, body: &[u8], deadline: Instant) -> io::Result<()> {
    let mut buf = Vec::with_capacity(body.len() + 4);
    buf.extend_from_slice(&(body.len() as u32).to_le_bytes());
    buf.extend_from_slice(body);
    s.set_write_timeout(Some(POLL))?;
    write_all_by(s, &buf, Some(deadline), &|| false)
}

/// Reads one [`send_msg`] message (at most 1 MiB).
pub fn recv_msg(s: &mut TcpStream, deadline: Instant) -> io::Result<Vec<u8>> {
    s.set_read_timeout(Some(POLL))?;
    let mut len = [0u8; 4];
    read_exact_by(s, &mut len, deadline)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > 1 << 20 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a bootstrap message of {len} bytes (not from cann-sim?)"),
        ));
    }
    let mut body = vec![0u8; len];
    read_exact_by(s, &mut body, deadline)?;
    Ok(body)
}

/// A cursor over a received message.
pub struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads `b` from the start.
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() < n {
            return Err("a truncated message (not from this cann-sim version?)".to_string());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }

    /// A u32.
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }

    /// A u64.
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }

    /// A u32-length-prefixed string.
    pub fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

/// Builds a message.
#[derive(Default)]
pub struct Writer {
    /// The bytes so far.
    pub b: Vec<u8>,
}

impl Writer {
    /// A u32.
    pub fn u32(mut self, v: u32) -> Writer {
        self.b.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A u64.
    pub fn u64(mut self, v: u64) -> Writer {
        self.b.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A string.
    pub fn str(mut self, s: &str) -> Writer {
        self.b.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.b.extend_from_slice(s.as_bytes());
        self
    }
}

/// The kind of failure of an `io::Error` met while connecting.
pub fn connect_kind(e: &io::Error) -> ErrorKind {
    if is_would_block(e) {
        ErrorKind::Timeout
    } else {
        ErrorKind::TcpConnect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_info_round_trips_address_and_id() {
        let r = Root {
            addr: "10.1.2.3:60001".parse().unwrap(),
            uid: 0xDEAD_BEEF_1234,
        };
        let mut blob = [0xAAu8; 4108];
        r.encode(&mut blob);
        assert_eq!(Root::decode(&blob).unwrap(), r);
        assert!(Root::decode(&[0; 4108]).unwrap_err().contains("all zeros"));
    }

    #[test]
    fn unique_ids_differ() {
        assert_ne!(unique_id(), unique_id());
    }
}
