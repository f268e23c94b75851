//! Rank tables (`HcclCommInitClusterInfo`): a small JSON reader and the
//! table's validation.
//!
//! The format (`docs/zh/user_guide/cluster_info_config/rank_table_config_a2.md`):
//!
//! ```json
//! {"status": "completed", "version": "1.0", "server_count": "1",
//!  "server_list": [{"server_id": "127.0.0.1",
//!                   "device": [{"device_id": "0", "device_ip": "192.168.1.8",
//!                               "device_port": "16666", "rank_id": "0"}]}]}
//! ```
//!
//! Numbers may be strings (as the real files write them) or JSON numbers.
//! The simulator connects rank `r` at the IP of its server (`host_ip` when
//! the server has one, else `server_id`) and its `device_port`, or
//! `HCCL_IF_BASE_PORT` (default 60000) + `device_id` without one; the
//! NPU-side `device_ip` is not a host address and is only checked for form.

use super::bootstrap::TableRank;
use super::error::{ErrorKind, Fail};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object (keys sorted).
    Obj(BTreeMap<String, Json>),
}

/// Parses JSON text.
///
/// # Errors
///
/// A sentence with the byte offset of the problem.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!(
            "unexpected text after the JSON value at byte {}",
            p.i
        ));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("invalid JSON at byte {}: {what}", self.i))
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 64 {
            return self.err("nested too deeply");
        }
        self.ws();
        match self.b.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => {
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(m));
                }
                loop {
                    self.ws();
                    let Json::Str(k) = self.string()? else {
                        return self.err("expected a key");
                    };
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return self.err("expected ':'");
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    m.insert(k, v);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(m));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(a));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => self.string(),
            Some(b't') if self.b[self.i..].starts_with(b"true") => {
                self.i += 4;
                Ok(Json::Bool(true))
            }
            Some(b'f') if self.b[self.i..].starts_with(b"false") => {
                self.i += 5;
                Ok(Json::Bool(false))
            }
            Some(b'n') if self.b[self.i..].starts_with(b"null") => {
                self.i += 4;
                Ok(Json::Null)
            }
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.b.len()
                    && matches!(
                        self.b[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let s = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
                s.parse::<f64>()
                    .map(Json::Num)
                    .or_else(|_| self.err("a malformed number"))
            }
            Some(_) => self.err("unexpected character"),
        }
    }

    fn string(&mut self) -> Result<Json, String> {
        if self.b.get(self.i) != Some(&b'"') {
            return self.err("expected a string");
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.b.get(self.i) {
                None => return self.err("an unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Json::Str(String::from_utf8_lossy(&out).into_owned()));
                }
                Some(b'\\') => {
                    let c = self.b.get(self.i + 1).copied();
                    self.i += 2;
                    match c {
                        Some(b'n') => out.push(b'\n'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'r') => out.push(b'\r'),
                        Some(b'b') => out.push(8),
                        Some(b'f') => out.push(12),
                        Some(b'u') => {
                            let hex = self
                                .b
                                .get(self.i..self.i + 4)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            let Some(cp) = hex else {
                                return self.err("a bad \\u escape");
                            };
                            self.i += 4;
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        Some(c) => out.push(c),
                        None => return self.err("an unterminated string"),
                    }
                }
                Some(&c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

fn field<'a>(o: &'a BTreeMap<String, Json>, key: &str, at: &str) -> Result<&'a Json, String> {
    o.get(key).ok_or_else(|| format!("{at} has no \"{key}\""))
}

fn text(v: &Json, what: &str) -> Result<String, String> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        Json::Num(n) => Ok(format!("{n}")),
        _ => Err(format!("{what} must be a string")),
    }
}

fn number(v: &Json, what: &str) -> Result<u64, String> {
    let n = match v {
        Json::Str(s) => s.trim().parse::<u64>().ok(),
        Json::Num(n) if *n >= 0.0 && n.fract() == 0.0 && *n < 1e15 => Some(*n as u64),
        _ => None,
    };
    n.ok_or_else(|| format!("{what} must be a whole number (as a string or a number), got {v:?}"))
}

/// Reads the rank table file at `path` ([`read`]).
///
/// # Errors
///
/// [`ErrorKind::OpenFile`] when the file cannot be read,
/// [`ErrorKind::Para`] for a table [`read`] refuses; each sentence names
/// the file.
pub fn load(path: &str) -> Result<(Vec<TableRank>, u64), Fail> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Fail::new(
            ErrorKind::OpenFile,
            format!("cannot read the rank table {path}: {e}"),
        )
    })?;
    read(&text).map_err(|e| Fail::new(ErrorKind::Para, format!("rank table {path}: {e}")))
}

/// Reads and validates a rank table; returns its ranks by `rank_id` and a
/// fingerprint of its content (the communicator's id).
///
/// # Errors
///
/// A sentence naming the first problem: not JSON, `status` not
/// `"completed"`, `server_count` not matching `server_list`, a missing
/// field, a `rank_id` repeated or leaving a gap, a `device_id` repeated on
/// one server, an address that is not an IP.
pub fn read(text_in: &str) -> Result<(Vec<TableRank>, u64), String> {
    let root = parse(text_in)?;
    let Json::Obj(o) = &root else {
        return Err("the rank table is not a JSON object".into());
    };
    let status = text(field(o, "status", "the rank table")?, "\"status\"")?;
    if status != "completed" {
        return Err(format!(
            "the rank table's \"status\" is \"{status}\"; it must be \"completed\""
        ));
    }
    text(field(o, "version", "the rank table")?, "\"version\"")?;
    let Json::Arr(servers) = field(o, "server_list", "the rank table")? else {
        return Err("\"server_list\" must be an array".into());
    };
    if let Some(c) = o.get("server_count") {
        let c = number(c, "\"server_count\"")?;
        if c != servers.len() as u64 {
            return Err(format!(
                "\"server_count\" is {c} but \"server_list\" has {} servers",
                servers.len()
            ));
        }
    }
    // The process's checked HCCL_IF_BASE_PORT (see `super::env`), else 60000.
    let base = super::env::current()
        .base_port
        .unwrap_or(super::env::DEFAULT_PORTS.0);
    let mut ranks: Vec<TableRank> = Vec::new();
    for (si, s) in servers.iter().enumerate() {
        let at = format!("server_list[{si}]");
        let Json::Obj(so) = s else {
            return Err(format!("{at} is not an object"));
        };
        let server_id = text(field(so, "server_id", &at)?, "\"server_id\"")?;
        let host = match so.get("host_ip") {
            Some(h) => text(h, "\"host_ip\"")?,
            None => server_id.clone(),
        };
        let ip: IpAddr = host.parse().map_err(|_| {
            format!(
                "{at}: \"{host}\" is not an IP address (the simulator connects to a server at its \
                 host_ip, or else its server_id)"
            )
        })?;
        let Json::Arr(devs) = field(so, "device", &at)? else {
            return Err(format!("{at}.device must be an array"));
        };
        let mut seen_dev = Vec::new();
        for (di, d) in devs.iter().enumerate() {
            let at = format!("{at}.device[{di}]");
            let Json::Obj(dobj) = d else {
                return Err(format!("{at} is not an object"));
            };
            let device = number(field(dobj, "device_id", &at)?, &format!("{at}.device_id"))?;
            let rank = number(field(dobj, "rank_id", &at)?, &format!("{at}.rank_id"))?;
            if let Some(dip) = dobj.get("device_ip") {
                let dip = text(dip, "device_ip")?;
                dip.parse::<IpAddr>()
                    .map_err(|_| format!("{at}.device_ip \"{dip}\" is not an IP address"))?;
            }
            let port = match dobj.get("device_port") {
                Some(p) => number(p, &format!("{at}.device_port"))?,
                None => u64::from(base) + device,
            };
            let port = u16::try_from(port)
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("{at}: port {port} is not a TCP port (1..=65535)"))?;
            if seen_dev.contains(&device) {
                return Err(format!(
                    "{at}: device_id {device} appears twice on server {server_id}"
                ));
            }
            seen_dev.push(device);
            let (Ok(rank), Ok(device)) = (u32::try_from(rank), u32::try_from(device)) else {
                return Err(format!("{at}: rank_id or device_id is too large"));
            };
            ranks.push(TableRank {
                rank,
                addr: SocketAddr::new(ip, port),
                device,
            });
        }
    }
    if ranks.is_empty() {
        return Err("the rank table lists no device".into());
    }
    ranks.sort_by_key(|r| r.rank);
    for (i, r) in ranks.iter().enumerate() {
        if r.rank as usize != i {
            return Err(if i > 0 && ranks[i - 1].rank == r.rank {
                format!("rank_id {} appears twice", r.rank)
            } else {
                format!(
                    "the rank_id values must be 0..{} without gaps; {i} is missing",
                    ranks.len()
                )
            });
        }
    }
    for (i, a) in ranks.iter().enumerate() {
        if let Some(b) = ranks[i + 1..].iter().find(|b| b.addr == a.addr) {
            return Err(format!(
                "ranks {} and {} would both listen on {}",
                a.rank, b.rank, a.addr
            ));
        }
    }
    let canon: String = ranks
        .iter()
        .map(|r| format!("{}@{}#{};", r.rank, r.addr, r.device))
        .collect();
    Ok((ranks, super::wire::fnv(canon.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = r#"{"status":"completed","version":"1.0","server_count":"1",
      "server_list":[{"server_id":"127.0.0.1","device":[
        {"device_id":"1","device_ip":"192.168.1.9","device_port":"40001","rank_id":"1"},
        {"device_id":0,"device_ip":"192.168.1.8","device_port":40000,"rank_id":"0"}]}]}"#;

    #[test]
    fn reads_ranks_in_rank_order_with_string_or_number_fields() {
        let (ranks, fp) = read(TABLE).unwrap();
        assert_eq!(ranks.len(), 2);
        assert_eq!(ranks[0].addr, "127.0.0.1:40000".parse().unwrap());
        assert_eq!((ranks[1].rank, ranks[1].device), (1, 1));
        assert_eq!(read(TABLE).unwrap().1, fp);
    }

    #[test]
    fn rejects_gaps_duplicates_and_bad_status_with_sentences() {
        let dup = TABLE.replace(r#""rank_id":"1""#, r#""rank_id":"0""#);
        assert_eq!(read(&dup).unwrap_err(), "rank_id 0 appears twice");
        let gap = TABLE.replace(r#""rank_id":"1""#, r#""rank_id":"2""#);
        assert!(read(&gap).unwrap_err().contains("1 is missing"));
        let st = TABLE.replace("completed", "initializing");
        assert!(read(&st).unwrap_err().contains("\"initializing\""));
        let count = TABLE.replace(r#""server_count":"1""#, r#""server_count":"2""#);
        assert!(read(&count).unwrap_err().contains("server_count"));
        assert!(read("{").unwrap_err().contains("invalid JSON"));
    }
}
