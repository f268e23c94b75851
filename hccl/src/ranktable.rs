//! [`RankTable`]: the JSON cluster description of `HcclCommInitClusterInfo`.
//!
//! ```json
//! {"status": "completed", "version": "1.0", "server_count": "1",
//!  "server_list": [{"server_id": "10.0.0.1",
//!                   "device": [{"device_id": "0", "device_ip": "192.168.1.8",
//!                               "device_port": "16666", "rank_id": "0"}]}]}
//! ```
//!
//! `rank_id` values must run from 0 without gaps or repeats, `device_id`
//! values must be unique per server, `server_count` must match the list,
//! and `status` must be `"completed"` (`docs/zh/user_guide/cluster_info_config/rank_table_config_a2.md`).
//! Numbers may be written as strings (as real tables do) or as numbers.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::Path;

/// A number written as a JSON string or number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Num(u64);

impl Serialize for Num {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Num, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(Num(n)),
            Raw::S(s) => s
                .trim()
                .parse()
                .map(Num)
                .map_err(|_| serde::de::Error::custom(format!("{s:?} is not a whole number"))),
        }
    }
}

/// One device of a server.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankTableDevice {
    /// `device_id`: the NPU on its server.
    pub device_id: u32,
    /// `device_ip`: the NPU's own NIC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_ip: Option<String>,
    /// `device_port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_port: Option<u16>,
    /// `rank_id`.
    pub rank_id: u32,
}

/// One server.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankTableServer {
    /// `server_id`: usually the host's IP address.
    pub server_id: String,
    /// `host_ip`, when the table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
    /// Its devices.
    pub device: Vec<RankTableDevice>,
}

#[derive(Serialize, Deserialize)]
struct RawDevice {
    device_id: Num,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device_ip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device_port: Option<Num>,
    rank_id: Num,
}

#[derive(Serialize, Deserialize)]
struct RawServer {
    server_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_ip: Option<String>,
    device: Vec<RawDevice>,
}

#[derive(Serialize, Deserialize)]
struct RawTable {
    status: String,
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_count: Option<Num>,
    server_list: Vec<RawServer>,
}

/// A validated rank table.
///
/// ```
/// let table = hccl::RankTable::local(2, &[41000, 41001]);
/// assert_eq!(table.rank_count(), 2);
/// let json = table.to_json();
/// assert_eq!(hccl::RankTable::parse(&json)?, table);
/// # Ok::<(), hccl::Error>(())
/// ```
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankTable {
    /// `version`.
    pub version: String,
    /// `server_list`.
    pub servers: Vec<RankTableServer>,
}

fn bad(source: &str, reason: impl Into<String>) -> Error {
    Error::RankTable {
        source_name: source.to_string(),
        reason: reason.into(),
    }
}

impl RankTable {
    /// Reads and validates a rank-table file.
    ///
    /// # Errors
    ///
    /// [`Error::RankTable`] naming the file and the first problem.
    pub fn from_file(path: &Path) -> Result<RankTable> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(&path.display().to_string(), format!("cannot be read: {e}")))?;
        RankTable::parse_named(&text, &path.display().to_string())
    }

    /// Parses and validates rank-table JSON.
    ///
    /// # Errors
    ///
    /// [`Error::RankTable`] with the first problem.
    pub fn parse(json: &str) -> Result<RankTable> {
        RankTable::parse_named(json, "<string>")
    }

    fn parse_named(json: &str, src: &str) -> Result<RankTable> {
        let raw: RawTable = serde_json::from_str(json)
            .map_err(|e| bad(src, format!("is not a valid rank table: {e}")))?;
        if raw.status != "completed" {
            return Err(bad(
                src,
                format!("\"status\" is {:?}; it must be \"completed\"", raw.status),
            ));
        }
        if let Some(Num(c)) = raw.server_count
            && c != raw.server_list.len() as u64
        {
            return Err(bad(
                src,
                format!(
                    "\"server_count\" is {c} but \"server_list\" has {} servers",
                    raw.server_list.len()
                ),
            ));
        }
        let mut servers = Vec::new();
        for (si, s) in raw.server_list.into_iter().enumerate() {
            let host = s.host_ip.clone().unwrap_or_else(|| s.server_id.clone());
            if host.parse::<IpAddr>().is_err() && s.host_ip.is_some() {
                return Err(bad(
                    src,
                    format!("server_list[{si}].host_ip {host:?} is not an IP address"),
                ));
            }
            let mut devices = Vec::new();
            for (di, d) in s.device.into_iter().enumerate() {
                let at = format!("server_list[{si}].device[{di}]");
                let device_id = u32::try_from(d.device_id.0)
                    .map_err(|_| bad(src, format!("{at}.device_id is too large")))?;
                let rank_id = u32::try_from(d.rank_id.0)
                    .map_err(|_| bad(src, format!("{at}.rank_id is too large")))?;
                if let Some(ip) = &d.device_ip
                    && ip.parse::<IpAddr>().is_err()
                {
                    return Err(bad(
                        src,
                        format!("{at}.device_ip {ip:?} is not an IP address"),
                    ));
                }
                let device_port = match d.device_port {
                    Some(Num(p)) => {
                        Some(u16::try_from(p).ok().filter(|&p| p > 0).ok_or_else(|| {
                            bad(src, format!("{at}.device_port {p} is not a TCP port"))
                        })?)
                    }
                    None => None,
                };
                if devices
                    .iter()
                    .any(|x: &RankTableDevice| x.device_id == device_id)
                {
                    return Err(bad(
                        src,
                        format!(
                            "{at}: device_id {device_id} appears twice on server {}",
                            s.server_id
                        ),
                    ));
                }
                devices.push(RankTableDevice {
                    device_id,
                    device_ip: d.device_ip,
                    device_port,
                    rank_id,
                });
            }
            servers.push(RankTableServer {
                server_id: s.server_id,
                host_ip: s.host_ip,
                device: devices,
            });
        }
        let table = RankTable {
            version: raw.version,
            servers,
        };
        let mut ranks: Vec<u32> = table.devices().map(|(_, d)| d.rank_id).collect();
        if ranks.is_empty() {
            return Err(bad(src, "lists no device"));
        }
        ranks.sort_unstable();
        for (i, &r) in ranks.iter().enumerate() {
            if i > 0 && ranks[i - 1] == r {
                return Err(bad(src, format!("rank_id {r} appears twice")));
            }
            if r as usize != i {
                return Err(bad(
                    src,
                    format!(
                        "rank_id values must be 0..{} without gaps; {i} is missing",
                        ranks.len()
                    ),
                ));
            }
        }
        Ok(table)
    }

    fn devices(&self) -> impl Iterator<Item = (&RankTableServer, &RankTableDevice)> {
        self.servers
            .iter()
            .flat_map(|s| s.device.iter().map(move |d| (s, d)))
    }

    /// The number of ranks.
    pub fn rank_count(&self) -> u32 {
        self.devices().count() as u32
    }

    /// The server and device of `rank`.
    pub fn rank(&self, rank: u32) -> Option<(&RankTableServer, &RankTableDevice)> {
        self.devices().find(|(_, d)| d.rank_id == rank)
    }

    /// A one-server table on 127.0.0.1: rank `i` is device `i` with port
    /// `ports[i]` (for tests and examples on one host).
    pub fn local(ranks: u32, ports: &[u16]) -> RankTable {
        RankTable {
            version: "1.0".to_string(),
            servers: vec![RankTableServer {
                server_id: "127.0.0.1".to_string(),
                host_ip: None,
                device: (0..ranks)
                    .map(|i| RankTableDevice {
                        device_id: i,
                        device_ip: Some(format!("192.168.100.{}", i + 1)),
                        device_port: ports.get(i as usize).copied(),
                        rank_id: i,
                    })
                    .collect(),
            }],
        }
    }

    /// The JSON text (numbers as strings, as real tables write them).
    pub fn to_json(&self) -> String {
        let raw = RawTable {
            status: "completed".to_string(),
            version: self.version.clone(),
            server_count: Some(Num(self.servers.len() as u64)),
            server_list: self
                .servers
                .iter()
                .map(|s| RawServer {
                    server_id: s.server_id.clone(),
                    host_ip: s.host_ip.clone(),
                    device: s
                        .device
                        .iter()
                        .map(|d| RawDevice {
                            device_id: Num(u64::from(d.device_id)),
                            device_ip: d.device_ip.clone(),
                            device_port: d.device_port.map(|p| Num(u64::from(p))),
                            rank_id: Num(u64::from(d.rank_id)),
                        })
                        .collect(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"status":"completed","version":"1.0","server_count":"1",
      "server_list":[{"server_id":"127.0.0.1","device":[
        {"device_id":"0","device_ip":"192.168.1.8","device_port":"40000","rank_id":"0"},
        {"device_id":1,"device_ip":"192.168.1.9","device_port":40001,"rank_id":1}]}]}"#;

    #[test]
    fn parses_string_and_number_fields() {
        let t = RankTable::parse(GOOD).unwrap();
        assert_eq!(t.rank_count(), 2);
        assert_eq!(t.rank(1).unwrap().1.device_port, Some(40001));
    }

    #[test]
    fn each_problem_is_named() {
        let cases = [
            (
                GOOD.replace("completed", "initializing"),
                "\"status\" is \"initializing\"",
            ),
            (
                GOOD.replace(r#""rank_id":1"#, r#""rank_id":0"#),
                "rank_id 0 appears twice",
            ),
            (
                GOOD.replace(r#""rank_id":1"#, r#""rank_id":2"#),
                "1 is missing",
            ),
            (
                GOOD.replace(r#""device_id":1"#, r#""device_id":0"#),
                "device_id 0 appears twice",
            ),
            (
                GOOD.replace(r#""server_count":"1""#, r#""server_count":"3""#),
                "\"server_count\" is 3",
            ),
            (
                GOOD.replace("192.168.1.9", "nine"),
                "device_ip \"nine\" is not an IP address",
            ),
            (
                GOOD.replace("40001", "70000"),
                "device_port 70000 is not a TCP port",
            ),
            ("{}".to_string(), "is not a valid rank table"),
        ];
        for (json, want) in cases {
            let e = RankTable::parse(&json).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
            assert!(e.starts_with("rank table <string>: "), "{e}");
        }
    }
}
