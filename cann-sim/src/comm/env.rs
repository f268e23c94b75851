//! HCCL's environment variables: read and checked once per process, as
//! HCCL's `InitExternalInput` does (hicann/hcomm
//! `src/legacy/ascend910/platform/common/externalinput.cc`: a mutex, an
//! `initialized` flag set only when every variable parsed, so a bad value
//! fails every call that reads the environment until it is fixed and the
//! process restarted).
//!
//! | variable | accepted | default | source |
//! |---|---|---|---|
//! | `HCCL_CONNECT_TIMEOUT` | whole seconds in [120, 7200]; bootstrap waits the value + 20 s | 120 | `ParseLinkConnTimeOut`; hicann/hccl `docs/zh/user_guide/hccl_env/HCCL_CONNECT_TIMEOUT.md` |
//! | `HCCL_EXEC_TIMEOUT` | 910B / 910_93 (and 950): [0, 2147483647] s, 0 = never, up to two decimals; other SoCs: (0, 17340] s floored to a multiple of 68 (at least 68) | 1836 | `SetHccLExecTimeOut`; `HCCL_EXEC_TIMEOUT.md` |
//! | `HCCL_IF_BASE_PORT` | [1024, 65520]; the root info's port is this + the physical device id | any free port of 60000–60031 | `ParseHcclIfBasePort`; `topoinfo_detect.cc` `SetupServer`; `HCCL_IF_BASE_PORT.md` |
//! | `HCCL_HOST_SOCKET_PORT_RANGE` | `auto` (the OS picks), or ports and ranges `a,b-c`; wins over `HCCL_IF_BASE_PORT` | unset | `HCCL_HOST_SOCKET_PORT_RANGE.md` |
//! | `HCCL_OP_EXPANSION_MODE` | `AIV`: collectives time out after at most 1091 s | | `hccl_aiv.cc` `GetAivTimeout` |
//!
//! A value outside these is `HCCL_E_PARA` from the call that reads the
//! environment (`HcclGetRootInfo`, the `HcclCommInit*` functions).
//!
//! Simulator extensions for tests (read once, like the rest):
//! `CANN_SIM_HCCL_CONNECT_TIMEOUT_MS` (the whole bootstrap wait, in ms,
//! without the 20 s margin) and `CANN_SIM_HCCL_EXEC_TIMEOUT_MS` (the exec
//! timeout in ms unless a communicator's config sets one).

use super::error::{ErrorKind, Fail};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

/// `HCCL_CONNECT_TIMEOUT`'s default, minimum and maximum (s).
pub const CONNECT_DEFAULT_S: u32 = 120;
const CONNECT_MIN_S: u32 = 120;
const CONNECT_MAX_S: u32 = 7200;
/// What bootstrap waits beyond `HCCL_CONNECT_TIMEOUT` (to tell the other
/// ranks why initialisation failed; `HCCL_CONNECT_TIMEOUT.md`).
pub const CONNECT_MARGIN_S: u64 = 20;
/// `HCCL_EXEC_TIMEOUT`'s default: 27 × 68 s (`NOTIFY_DEFAULT_WAIT_TIME`,
/// hicann/hcomm `src/legacy/ascend910/pub_inc/hccl_common.h`).
pub const EXEC_DEFAULT_S: f64 = 1836.0;
/// The largest exec timeout on 910B / 910_93 (`NOTIFY_MAX_WAIT_TIME_910_93`).
const EXEC_MAX_WIDE_S: f64 = 2_147_483_647.0;
/// The largest exec timeout elsewhere: 255 × 68 s (`NOTIFY_MAX_WAIT_TIME`).
const EXEC_MAX_NARROW_S: f64 = 17340.0;
/// The granule of exec timeouts outside 910B / 910_93.
const EXEC_STEP_S: f64 = 68.0;
/// The AIV expansion mode's default and largest timeout (`AIV_TIMEOUT_MAX`,
/// hicann/hcomm `src/legacy/ascend910/algorithm/pub_inc/hccl_aiv.h`).
pub const AIV_MAX_S: f64 = 1091.0;
/// `HCCL_IF_BASE_PORT`'s range (`HCCL_BASE_PORT_MIN`, `HOST_PORT_MAX`).
const BASE_PORT_MIN: u32 = 1024;
const BASE_PORT_MAX: u32 = 65520;
/// The ports a root server tries when no port variable is set
/// (`HOST_CONTROL_BASE_PORT` and the 31 after it).
pub const DEFAULT_PORTS: (u16, u16) = (60000, 60031);
/// Longest value of a numeric variable (`MAX_LEN_OF_DIGIT_ENV`).
const MAX_DIGITS: usize = 10;

/// Which exec-timeout rules a SoC follows (`SetHccLExecTimeOut` tells
/// `DEV_TYPE_910B` / `DEV_TYPE_910_93` from the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocRules {
    /// Atlas A2 / A3 (and Ascend 950): [0, 2^31 − 1] s, 0 = never.
    Wide,
    /// Atlas training (910) and inference (310P) series: (0, 17340] s in
    /// steps of 68 s.
    Narrow,
}

impl SocRules {
    /// The rules of the SoC named `soc` (`aclrtGetSocName`'s form).
    pub fn of(soc: &str) -> SocRules {
        if soc.starts_with("Ascend910B")
            || soc.starts_with("Ascend910_93")
            || soc.starts_with("Ascend950")
        {
            SocRules::Wide
        } else {
            SocRules::Narrow
        }
    }

    /// The rules of the simulated SoC.
    pub fn simulated() -> SocRules {
        SocRules::of(
            crate::config::get().map_or(crate::config::DEFAULT_SOC_NAME, |c| c.soc_name.as_str()),
        )
    }

    /// The exec timeout `secs` stands for, `Some(0.0)` meaning never; `None`
    /// when the SoC does not accept it. Outside 910B / 910_93 it is floored
    /// to a multiple of 68 s, and at least 68 s (`SetHccLExecTimeOut`,
    /// `CommConfig::SetConfigExecTimeout`).
    pub fn exec_timeout(self, secs: f64) -> Option<f64> {
        match self {
            SocRules::Wide => (0.0..=EXEC_MAX_WIDE_S).contains(&secs).then_some(secs),
            SocRules::Narrow if secs > 0.0 && secs <= EXEC_MAX_NARROW_S => {
                Some(((secs / EXEC_STEP_S).floor()).max(1.0) * EXEC_STEP_S)
            }
            SocRules::Narrow => None,
        }
    }

    fn range(self) -> &'static str {
        match self {
            SocRules::Wide => "0 (never) to 2147483647 s on 910B / 910_93",
            SocRules::Narrow => {
                "more than 0 and at most 17340 s on this SoC (rounded down to a multiple of 68 s)"
            }
        }
    }
}

/// Where a root server may listen (`HCCL_HOST_SOCKET_PORT_RANGE`,
/// `HCCL_IF_BASE_PORT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ports {
    /// Neither variable: the first free port of 60000–60031.
    Default,
    /// `HCCL_IF_BASE_PORT`: exactly this + the physical device id.
    Base(u16),
    /// `HCCL_HOST_SOCKET_PORT_RANGE=auto`: a port the OS picks.
    Auto,
    /// `HCCL_HOST_SOCKET_PORT_RANGE` ports and ranges: the first free one.
    Ranges(Vec<(u16, u16)>),
}

/// The process's HCCL environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Env {
    /// `HCCL_CONNECT_TIMEOUT` in s.
    pub connect_s: u32,
    /// `CANN_SIM_HCCL_CONNECT_TIMEOUT_MS`, when set.
    pub connect_ms: Option<u64>,
    /// `HCCL_EXEC_TIMEOUT` after the SoC's rounding, when set (0: never).
    pub exec_s: Option<f64>,
    /// `CANN_SIM_HCCL_EXEC_TIMEOUT_MS`, when set (0: never).
    pub exec_ms: Option<u64>,
    /// Where root servers listen.
    pub ports: Ports,
    /// `HCCL_IF_BASE_PORT`, when set (rank tables' default port base too).
    pub base_port: Option<u16>,
    /// `HCCL_OP_EXPANSION_MODE=AIV`.
    pub aiv: bool,
}

impl Env {
    /// Reads the environment through `var`, for a SoC following `rules`.
    ///
    /// # Errors
    ///
    /// `HCCL_E_PARA` naming the first bad variable, its value and what is
    /// accepted.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>, rules: SocRules) -> Result<Env, Fail> {
        let bad = |name: &str, v: &str, want: &str| {
            Fail::new(
                ErrorKind::Para,
                format!(
                    "environment variable {name}={v:?} is invalid: expected {want}; fix or unset it"
                ),
            )
        };
        let digits = |v: &str| {
            !v.is_empty() && v.len() <= MAX_DIGITS && v.bytes().all(|b| b.is_ascii_digit())
        };
        let connect_s = match var("HCCL_CONNECT_TIMEOUT") {
            None => CONNECT_DEFAULT_S,
            Some(v) => match v.parse::<u32>() {
                Ok(s) if digits(&v) && (CONNECT_MIN_S..=CONNECT_MAX_S).contains(&s) => s,
                _ => {
                    return Err(bad(
                        "HCCL_CONNECT_TIMEOUT",
                        &v,
                        "whole seconds from 120 to 7200",
                    ));
                }
            },
        };
        let exec_s = match var("HCCL_EXEC_TIMEOUT") {
            None => None,
            Some(v) => {
                // Digits with at most two decimals (`IsValidExecTimeOutMs`).
                let (int, frac) = v.split_once('.').unwrap_or((&v, "0"));
                let shaped = v.len() <= MAX_DIGITS
                    && digits(int)
                    && (1..=2).contains(&frac.len())
                    && frac.bytes().all(|b| b.is_ascii_digit());
                match v
                    .parse::<f64>()
                    .ok()
                    .filter(|_| shaped)
                    .and_then(|s| rules.exec_timeout(s))
                {
                    Some(s) => Some(s),
                    None => {
                        let want = format!("seconds with at most two decimals, {}", rules.range());
                        return Err(bad("HCCL_EXEC_TIMEOUT", &v, &want));
                    }
                }
            }
        };
        let base = match var("HCCL_IF_BASE_PORT") {
            None => None,
            Some(v) => match v.parse::<u32>() {
                Ok(p) if digits(&v) && (BASE_PORT_MIN..=BASE_PORT_MAX).contains(&p) => {
                    Some(p as u16)
                }
                _ => return Err(bad("HCCL_IF_BASE_PORT", &v, "a port from 1024 to 65520")),
            },
        };
        let ports = match var("HCCL_HOST_SOCKET_PORT_RANGE") {
            Some(v) => parse_ranges(&v).ok_or_else(|| {
                bad(
                    "HCCL_HOST_SOCKET_PORT_RANGE",
                    &v,
                    "\"auto\" or ports and ranges in 1..=65535 such as \"60000,60050-60100\", not overlapping",
                )
            })?,
            None => base.map_or(Ports::Default, Ports::Base),
        };
        check_others(&var, rules)?;
        let ms = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        Ok(Env {
            connect_s,
            connect_ms: ms("CANN_SIM_HCCL_CONNECT_TIMEOUT_MS").filter(|&v| v > 0),
            exec_s,
            exec_ms: ms("CANN_SIM_HCCL_EXEC_TIMEOUT_MS"),
            ports,
            base_port: base,
            aiv: var("HCCL_OP_EXPANSION_MODE").is_some_and(|v| v.trim() == "AIV"),
        })
    }

    /// How long bootstrap waits for the other ranks: `HCCL_CONNECT_TIMEOUT`
    /// + 20 s, or the simulator's millisecond override.
    pub fn connect_wait(&self) -> Duration {
        self.connect_ms.map_or_else(
            || Duration::from_secs(u64::from(self.connect_s) + CONNECT_MARGIN_S),
            Duration::from_millis,
        )
    }

    /// How long a collective of a communicator waits for a peer (`None`:
    /// forever). `config_s` is its config's `hcclExecTimeOut` when set, `aiv`
    /// whether its config asks for the AIV expansion mode. A config value
    /// the SoC does not accept is ignored and the environment's applies, as
    /// `CommConfig::SetConfigExecTimeout` does (a warning in HCCL's log,
    /// success); the simulator records a message for `aclGetRecentErrMsg`.
    pub fn exec_timeout(
        &self,
        config_s: Option<i32>,
        aiv: bool,
        rules: SocRules,
    ) -> Option<Duration> {
        let from_config = config_s.and_then(|s| {
            let ok = rules.exec_timeout(f64::from(s));
            if ok.is_none() {
                crate::recent_error::record(format!(
                    "HcclCommConfig: hcclExecTimeOut {s} s is ignored (expected {}); the \
                     environment's exec timeout applies",
                    rules.range()
                ));
            }
            ok
        });
        let set = from_config.or(self.exec_s);
        if aiv || self.aiv {
            // AIV: 1091 s unless set; 0 or more than 1091 s is 1091 s.
            let s = set
                .filter(|&s| s > 0.0)
                .map_or(AIV_MAX_S, |s| s.min(AIV_MAX_S));
            return Some(Duration::from_secs_f64(s));
        }
        if from_config.is_none()
            && let Some(ms) = self.exec_ms
        {
            return (ms > 0).then(|| Duration::from_millis(ms));
        }
        let s = set.unwrap_or(EXEC_DEFAULT_S);
        (s > 0.0).then(|| Duration::from_secs_f64(s))
    }
}

/// The other variables `InitEnvVarParam` checks (hicann/hcomm
/// `src/legacy/ascend910/platform/common/externalinput.cc`) whose values the
/// simulator does not use, so that a value real HCCL refuses is refused
/// here too: `HCCL_WHITELIST_DISABLE` 0 or 1; `HCCL_SOCKET_FAMILY` `AF_INET`
/// or `AF_INET6`; `HCCL_RDMA_TC` 0–255 in steps of 4; `HCCL_RDMA_SL` 0–7;
/// `HCCL_RDMA_TIMEOUT` 5–20 on 910B / 910_93, else 5–24;
/// `HCCL_RDMA_RETRY_CNT` 1–7; `HCCL_BUFFSIZE` at least 1 (MB);
/// `HCCL_DETERMINISTIC` `true`, `false` or `strict` (any case; `strict`
/// only on 910B / 910_93, else `HCCL_E_NOT_SUPPORT`).
fn check_others(var: &impl Fn(&str) -> Option<String>, rules: SocRules) -> Result<(), Fail> {
    let uint = |name: &str, min: u64, max: u64, step: u64| -> Result<(), Fail> {
        let Some(v) = var(name) else {
            return Ok(());
        };
        let ok = !v.is_empty()
            && v.len() <= MAX_DIGITS
            && v.bytes().all(|b| b.is_ascii_digit())
            && v.parse::<u64>()
                .is_ok_and(|n| (min..=max).contains(&n) && n % step == 0);
        if ok {
            return Ok(());
        }
        let steps = if step > 1 {
            format!(" in steps of {step}")
        } else {
            String::new()
        };
        Err(Fail::new(
            ErrorKind::Para,
            format!(
                "environment variable {name}={v:?} is invalid: expected a whole number from {min} \
                 to {max}{steps}; fix or unset it"
            ),
        ))
    };
    let wide = rules == SocRules::Wide;
    uint("HCCL_WHITELIST_DISABLE", 0, 1, 1)?;
    uint("HCCL_RDMA_TC", 0, 255, 4)?;
    uint("HCCL_RDMA_SL", 0, 7, 1)?;
    uint("HCCL_RDMA_TIMEOUT", 5, if wide { 20 } else { 24 }, 1)?;
    uint("HCCL_RDMA_RETRY_CNT", 1, 7, 1)?;
    uint("HCCL_BUFFSIZE", 1, u64::from(u32::MAX), 1)?;
    if let Some(v) = var("HCCL_SOCKET_FAMILY")
        && v != "AF_INET"
        && v != "AF_INET6"
    {
        return Err(Fail::new(
            ErrorKind::Para,
            format!(
                "environment variable HCCL_SOCKET_FAMILY={v:?} is invalid: expected AF_INET or AF_INET6"
            ),
        ));
    }
    if let Some(v) = var("HCCL_DETERMINISTIC") {
        match v.to_ascii_uppercase().as_str() {
            "TRUE" | "FALSE" => {}
            "STRICT" if wide => {}
            "STRICT" => {
                return Err(Fail::new(
                    ErrorKind::NotSupported,
                    "HCCL_DETERMINISTIC=strict (reduction order preservation) is supported on \
                     Atlas A2 / A3 only; use true",
                ));
            }
            _ => {
                return Err(Fail::new(
                    ErrorKind::Para,
                    format!(
                        "environment variable HCCL_DETERMINISTIC={v:?} is invalid: expected true, \
                         false or strict"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Parses `HCCL_HOST_SOCKET_PORT_RANGE`.
fn parse_ranges(v: &str) -> Option<Ports> {
    if v.trim() == "auto" {
        return Some(Ports::Auto);
    }
    let mut out: Vec<(u16, u16)> = Vec::new();
    for part in v.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?);
        if a == 0 || b < a || out.iter().any(|&(x, y)| a <= y && x <= b) {
            return None;
        }
        out.push((a, b));
    }
    Some(Ports::Ranges(out))
}

static ENV: Mutex<Option<Arc<Env>>> = Mutex::new(None);

/// The process's HCCL environment, read on first success and kept.
///
/// # Errors
///
/// As [`Env::from_vars`]; nothing is kept, so a later call reads again.
pub fn get() -> Result<Arc<Env>, Fail> {
    let mut slot = ENV.lock();
    if let Some(e) = slot.as_ref() {
        return Ok(e.clone());
    }
    let e = Arc::new(Env::from_vars(
        |k| std::env::var(k).ok(),
        SocRules::simulated(),
    )?);
    *slot = Some(e.clone());
    Ok(e)
}

/// The environment if it has been read successfully, else its defaults (for
/// waits inside calls that checked it already).
pub fn current() -> Arc<Env> {
    get().unwrap_or_else(|_| {
        Arc::new(Env {
            connect_s: CONNECT_DEFAULT_S,
            connect_ms: None,
            exec_s: None,
            exec_ms: None,
            ports: Ports::Default,
            base_port: None,
            aiv: false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)], rules: SocRules) -> Result<Env, Fail> {
        Env::from_vars(
            |k| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_string())
            },
            rules,
        )
    }

    #[test]
    fn connect_timeout_is_120_to_7200_whole_seconds_plus_20() {
        let w =
            |v: &str| env(&[("HCCL_CONNECT_TIMEOUT", v)], SocRules::Wide).map(|e| e.connect_wait());
        assert_eq!(
            env(&[], SocRules::Wide).unwrap().connect_wait(),
            Duration::from_secs(140)
        );
        assert_eq!(w("150").unwrap(), Duration::from_secs(170));
        assert_eq!(w("7200").unwrap(), Duration::from_secs(7220));
        for bad in [
            "119",
            "7201",
            "0",
            "-5",
            "12a",
            "",
            " 200",
            "150.5",
            "99999999999",
        ] {
            assert_eq!(w(bad).unwrap_err().kind, ErrorKind::Para, "{bad:?}");
        }
    }

    #[test]
    fn exec_timeout_follows_the_soc() {
        let wide = |v: &str| env(&[("HCCL_EXEC_TIMEOUT", v)], SocRules::Wide).map(|e| e.exec_s);
        assert_eq!(wide("0").unwrap(), Some(0.0));
        assert_eq!(wide("0.05").unwrap(), Some(0.05));
        assert_eq!(wide("2147483647").unwrap(), Some(2_147_483_647.0));
        for bad in ["2147483648", "1.234", "-1", "1e3", "abc", ".5", "5."] {
            assert_eq!(wide(bad).unwrap_err().kind, ErrorKind::Para, "{bad:?}");
        }
        let narrow = |v: &str| env(&[("HCCL_EXEC_TIMEOUT", v)], SocRules::Narrow).map(|e| e.exec_s);
        assert_eq!(narrow("600").unwrap(), Some(544.0));
        assert_eq!(narrow("10").unwrap(), Some(68.0));
        assert_eq!(narrow("17340").unwrap(), Some(17340.0));
        for bad in ["0", "17341"] {
            assert_eq!(narrow(bad).unwrap_err().kind, ErrorKind::Para, "{bad:?}");
        }
    }

    #[test]
    fn the_config_wins_and_aiv_caps_at_1091() {
        let e = env(&[("HCCL_EXEC_TIMEOUT", "100")], SocRules::Wide).unwrap();
        let d = |c, aiv| e.exec_timeout(c, aiv, SocRules::Wide);
        assert_eq!(d(None, false), Some(Duration::from_secs(100)));
        assert_eq!(d(Some(7), false), Some(Duration::from_secs(7)));
        assert_eq!(d(Some(0), false), None);
        assert_eq!(d(Some(-3), false), Some(Duration::from_secs(100)));
        assert_eq!(d(Some(2000), true), Some(Duration::from_secs(1091)));
        assert_eq!(d(Some(0), true), Some(Duration::from_secs(1091)));
        let none = env(&[], SocRules::Wide).unwrap();
        assert_eq!(
            none.exec_timeout(None, false, SocRules::Wide),
            Some(Duration::from_secs(1836))
        );
        assert_eq!(
            none.exec_timeout(None, true, SocRules::Wide),
            Some(Duration::from_secs(1091))
        );
        assert_eq!(
            none.exec_timeout(Some(100), false, SocRules::Narrow),
            Some(Duration::from_secs(68))
        );
    }

    #[test]
    fn ports_come_from_the_range_the_base_or_the_default() {
        let p = |vars: &[(&str, &str)]| env(vars, SocRules::Wide).map(|e| e.ports);
        assert_eq!(p(&[]).unwrap(), Ports::Default);
        assert_eq!(
            p(&[("HCCL_IF_BASE_PORT", "50000")]).unwrap(),
            Ports::Base(50000)
        );
        for bad in ["1023", "65521", "x"] {
            assert_eq!(
                p(&[("HCCL_IF_BASE_PORT", bad)]).unwrap_err().kind,
                ErrorKind::Para
            );
        }
        assert_eq!(
            p(&[
                ("HCCL_HOST_SOCKET_PORT_RANGE", "auto"),
                ("HCCL_IF_BASE_PORT", "50000")
            ])
            .unwrap(),
            Ports::Auto
        );
        assert_eq!(
            p(&[("HCCL_HOST_SOCKET_PORT_RANGE", "60000,60050-60100")]).unwrap(),
            Ports::Ranges(vec![(60000, 60000), (60050, 60100)])
        );
        for bad in ["60000-50000", "1-10,5", "0", "x"] {
            assert_eq!(
                p(&[("HCCL_HOST_SOCKET_PORT_RANGE", bad)]).unwrap_err().kind,
                ErrorKind::Para
            );
        }
    }

    #[test]
    fn other_variables_real_hccl_checks_are_checked() {
        let kind = |k: &str, v: &str, r| env(&[(k, v)], r).err().map(|f| f.kind);
        for (k, v) in [
            ("HCCL_WHITELIST_DISABLE", "1"),
            ("HCCL_RDMA_TC", "132"),
            ("HCCL_RDMA_SL", "7"),
            ("HCCL_RDMA_TIMEOUT", "20"),
            ("HCCL_RDMA_RETRY_CNT", "1"),
            ("HCCL_BUFFSIZE", "200"),
            ("HCCL_SOCKET_FAMILY", "AF_INET6"),
            ("HCCL_DETERMINISTIC", "True"),
            ("HCCL_DETERMINISTIC", "strict"),
        ] {
            assert_eq!(kind(k, v, SocRules::Wide), None, "{k}={v}");
        }
        for (k, v) in [
            ("HCCL_WHITELIST_DISABLE", "2"),
            ("HCCL_RDMA_TC", "130"),
            ("HCCL_RDMA_TC", "256"),
            ("HCCL_RDMA_SL", "8"),
            ("HCCL_RDMA_TIMEOUT", "21"),
            ("HCCL_RDMA_TIMEOUT", "4"),
            ("HCCL_RDMA_RETRY_CNT", "0"),
            ("HCCL_BUFFSIZE", "0"),
            ("HCCL_SOCKET_FAMILY", "inet"),
            ("HCCL_DETERMINISTIC", "1"),
        ] {
            assert_eq!(kind(k, v, SocRules::Wide), Some(ErrorKind::Para), "{k}={v}");
        }
        assert_eq!(kind("HCCL_RDMA_TIMEOUT", "24", SocRules::Narrow), None);
        assert_eq!(
            kind("HCCL_DETERMINISTIC", "strict", SocRules::Narrow),
            Some(ErrorKind::NotSupported)
        );
    }

    #[test]
    fn socs_are_classified_by_name() {
        for (soc, r) in [
            ("Ascend910B3", SocRules::Wide),
            ("Ascend910_9391", SocRules::Wide),
            ("Ascend950PR_9599", SocRules::Wide),
            ("Ascend910ProB", SocRules::Narrow),
            ("Ascend910A", SocRules::Narrow),
            ("Ascend310P3", SocRules::Narrow),
        ] {
            assert_eq!(SocRules::of(soc), r, "{soc}");
        }
    }
}
