//! [`CommConfig`]: options of a new communicator (`HcclCommConfig`).

use crate::error::{Error, Result};
use crate::result::{self, raw};
use std::time::Duration;

/// How deterministic a communicator's reductions are (`hcclDeterministic`).
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Determinism {
    /// Reduction order may vary between runs (0).
    Off,
    /// Reproducible reduction order (1).
    On,
    /// Strict: reproducible across communicator shapes too (2). HCCL
    /// accepts it on Atlas A2 (910B) parts only; elsewhere the
    /// communicator is refused with `HCCL_E_PARA` (hicann/hcomm
    /// `comm_config.cc`, `SetConfigDeterministic`).
    Strict,
}

/// Options for a new communicator. Unset options keep HCCL's defaults (and
/// its environment variables, e.g. `HCCL_BUFFSIZE`, `HCCL_EXEC_TIMEOUT`).
/// Every rank should pass the same options.
///
/// ```
/// use std::time::Duration;
/// let config = hccl::CommConfig::default()
///     .buffer_size_mib(64)
///     .deterministic(true)
///     .name("tp_group")
///     .exec_timeout(Duration::from_secs(60));
/// assert_eq!(config.to_raw().unwrap().hcclBufferSize, 64);
/// ```
///
/// `Send + Sync`: plain data.
#[doc(alias = "HcclCommConfig")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommConfig {
    /// `hcclBufferSize`: the communication buffer in MiB (≥ 1; each
    /// communicator holds two of them in HBM).
    pub buffer_size_mib: Option<u32>,
    /// `hcclDeterministic`: reproducible reduction order.
    pub deterministic: Option<Determinism>,
    /// `hcclCommName`: at most 127 bytes, no NUL.
    pub name: Option<String>,
    /// `hcclExecTimeOut`: how long a collective waits for its peers (whole
    /// seconds, rounded up; zero waits forever).
    pub exec_timeout: Option<Duration>,
}

impl CommConfig {
    /// Sets [`CommConfig::buffer_size_mib`].
    pub fn buffer_size_mib(mut self, mib: u32) -> CommConfig {
        self.buffer_size_mib = Some(mib);
        self
    }

    /// Sets [`CommConfig::deterministic`] to [`Determinism::On`] or
    /// [`Determinism::Off`].
    pub fn deterministic(mut self, on: bool) -> CommConfig {
        self.deterministic = Some(if on {
            Determinism::On
        } else {
            Determinism::Off
        });
        self
    }

    /// Sets [`CommConfig::deterministic`].
    ///
    /// ```
    /// use hccl::{CommConfig, Determinism};
    /// let c = CommConfig::default().determinism(Determinism::Strict);
    /// assert_eq!(c.to_raw().unwrap().hcclDeterministic, 2);
    /// ```
    pub fn determinism(mut self, d: Determinism) -> CommConfig {
        self.deterministic = Some(d);
        self
    }

    /// Sets [`CommConfig::name`].
    pub fn name(mut self, name: impl Into<String>) -> CommConfig {
        self.name = Some(name.into());
        self
    }

    /// Sets [`CommConfig::exec_timeout`].
    pub fn exec_timeout(mut self, timeout: Duration) -> CommConfig {
        self.exec_timeout = Some(timeout);
        self
    }

    /// The C struct, initialised as `HcclCommConfigInit` does, with the set
    /// options filled in.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a buffer of 0 MiB, a name of 128 bytes
    /// or more or with a NUL, an exec timeout beyond `i32::MAX` seconds.
    #[doc(alias = "HcclCommConfigInit")]
    pub fn to_raw(&self) -> Result<raw::HcclCommConfig> {
        const F: &str = "CommConfig";
        // The loaded HCCL's own defaults (releases before CANN 8.5 do not
        // know the "not set" values; see `result::comm_config_init`).
        let mut c = result::comm_config_init();
        if let Some(mib) = self.buffer_size_mib {
            if mib == 0 {
                return Err(Error::invalid(F, "buffer_size_mib must be at least 1"));
            }
            c.hcclBufferSize = mib;
        }
        if let Some(d) = self.deterministic {
            c.hcclDeterministic = match d {
                Determinism::Off => 0,
                Determinism::On => 1,
                Determinism::Strict => 2,
            };
        }
        if let Some(name) = &self.name {
            let max = raw::COMM_NAME_MAX_LENGTH as usize - 1;
            if name.len() > max || name.as_bytes().contains(&0) {
                return Err(Error::invalid(
                    F,
                    format!("the name must be at most {max} bytes without NUL, got {name:?}"),
                ));
            }
            for (d, &s) in c.hcclCommName.iter_mut().zip(name.as_bytes()) {
                *d = s as core::ffi::c_char;
            }
            c.hcclCommName[name.len()] = 0;
        }
        if let Some(t) = self.exec_timeout {
            // Whole seconds, rounded up; `Duration::MAX` rounds past u64.
            let secs = u128::from(t.as_secs()) + u128::from(t.subsec_nanos() > 0);
            c.hcclExecTimeOut = i32::try_from(secs).map_err(|_| {
                Error::invalid(F, format!("exec_timeout {secs} s exceeds i32::MAX seconds"))
            })?;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_options_keep_the_not_set_values() {
        let c = CommConfig::default().to_raw().unwrap();
        assert_eq!(c.hcclBufferSize, raw::HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET);
        assert_eq!(c.hcclExecTimeOut, raw::HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET);
        assert_eq!(c.hcclCommName[0], 0);
    }

    #[test]
    fn exec_timeout_rounds_up_to_whole_seconds() {
        let c = CommConfig::default()
            .exec_timeout(Duration::from_millis(1500))
            .to_raw()
            .unwrap();
        assert_eq!(c.hcclExecTimeOut, 2);
    }

    #[test]
    fn invalid_options_are_rejected_before_hccl() {
        assert_eq!(
            CommConfig::default()
                .buffer_size_mib(0)
                .to_raw()
                .unwrap_err()
                .to_string(),
            "CommConfig: buffer_size_mib must be at least 1"
        );
        assert!(
            CommConfig::default()
                .name("x".repeat(128))
                .to_raw()
                .is_err()
        );
        assert!(CommConfig::default().name("a\0b").to_raw().is_err());
    }

    #[test]
    fn exec_timeout_of_duration_max_is_an_error_not_an_overflow() {
        assert_eq!(
            CommConfig::default()
                .exec_timeout(Duration::MAX)
                .to_raw()
                .unwrap_err()
                .to_string(),
            "CommConfig: exec_timeout 18446744073709551616 s exceeds i32::MAX seconds"
        );
        assert_eq!(
            CommConfig::default()
                .exec_timeout(Duration::from_secs(i32::MAX as u64 + 1))
                .to_raw()
                .unwrap_err()
                .to_string(),
            "CommConfig: exec_timeout 2147483648 s exceeds i32::MAX seconds"
        );
    }
}
