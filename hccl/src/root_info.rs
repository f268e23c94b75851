//! [`RootInfo`]: the 4,108-byte blob that names a communicator.

use crate::error::{Error, Result};
use crate::result::{self, raw};
use std::fmt;
use std::str::FromStr;

/// Bytes in a root info (`HCCL_ROOT_INFO_BYTES`).
pub const ROOT_INFO_BYTES: usize = raw::HCCL_ROOT_INFO_BYTES as usize;

/// The prefix of a root info's text form.
const TEXT_PREFIX: &str = "hccl-root-v1:";

/// A communicator's root info (`HcclRootInfo`): made once, by the process
/// of rank 0 ([`RootInfo::new`]), and given to every rank by any means —
/// its bytes ([`RootInfo::as_bytes`]) or its text
/// ([`RootInfo::to_text`], for environment variables and command lines).
/// It holds the root's address and port and a unique id.
///
/// `Send + Sync`: plain bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct RootInfo {
    bytes: Box<[u8; ROOT_INFO_BYTES]>,
}

impl fmt::Debug for RootInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let used = self.used();
        f.debug_struct("RootInfo")
            .field(
                "bytes",
                &format_args!("{used} of {ROOT_INFO_BYTES} non-zero-padded"),
            )
            .finish()
    }
}

impl RootInfo {
    /// Asks HCCL for a new root info, on the device bound to the calling
    /// thread ([`RootInfo::for_device`] binds one first). The calling
    /// process serves the communicator's rendezvous: it must stay alive, and
    /// one of its ranks is usually rank 0. HCCL listens on
    /// `HCCL_IF_BASE_PORT` + the device's physical id, or on the first free
    /// port of 60000–60031 when that variable is unset (hicann/hccl
    /// `docs/zh/user_guide/hccl_env/HCCL_IF_BASE_PORT.md`);
    /// `HCCL_HOST_SOCKET_PORT_RANGE=auto` lets the OS pick (for several
    /// jobs on one host).
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Runtime`](crate::ErrorCode::Runtime) when no device is
    /// bound to the thread; [`ErrorCode::Unavail`](crate::ErrorCode::Unavail)
    /// when the port is in use; [`ErrorCode::Para`](crate::ErrorCode::Para)
    /// for an invalid `HCCL_*` variable; or the library's error.
    #[doc(alias = "HcclGetRootInfo")]
    pub fn new() -> Result<RootInfo> {
        Ok(RootInfo::from_raw(&result::get_root_info()?))
    }

    /// As [`RootInfo::new`], on `device` (bound to the calling thread
    /// first).
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// let rt = acl::Runtime::init()?;
    /// let device = acl::Device::new(&rt, 0)?;
    /// let root = hccl::RootInfo::for_device(&device)?;
    /// assert_eq!(root.as_bytes().len(), hccl::ROOT_INFO_BYTES);
    /// # Ok::<(), hccl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`RootInfo::new`], or binding the device.
    pub fn for_device(device: &acl::Device) -> Result<RootInfo> {
        device.bind()?;
        RootInfo::new()
    }

    /// Asks HCCL for one of several root infos of a scalable communicator
    /// ([`Comm::init_root_infos`](crate::Comm::init_root_infos)); each
    /// serves part of the rendezvous, from the process that made it.
    ///
    /// # Errors
    ///
    /// As [`RootInfo::new`].
    #[doc(alias = "HcclGetRootInfoScalable")]
    pub fn new_scalable() -> Result<RootInfo> {
        Ok(RootInfo::from_raw(&result::get_root_info_scalable()?))
    }

    /// A root info from its bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `bytes` is not 4,108 bytes long.
    pub fn from_bytes(bytes: &[u8]) -> Result<RootInfo> {
        let arr: [u8; ROOT_INFO_BYTES] = bytes.try_into().map_err(|_| {
            Error::invalid(
                "RootInfo::from_bytes",
                format!(
                    "a root info is {ROOT_INFO_BYTES} bytes (HCCL_ROOT_INFO_BYTES), not {}",
                    bytes.len()
                ),
            )
        })?;
        Ok(RootInfo {
            bytes: Box::new(arr),
        })
    }

    /// The 4,108 bytes.
    pub fn as_bytes(&self) -> &[u8; ROOT_INFO_BYTES] {
        &self.bytes
    }

    /// The C struct.
    pub fn to_raw(&self) -> raw::HcclRootInfo {
        let mut raw = raw::HcclRootInfo::default();
        for (d, &s) in raw.internal.iter_mut().zip(self.bytes.iter()) {
            *d = s as core::ffi::c_char;
        }
        raw
    }

    /// From the C struct.
    pub fn from_raw(raw: &raw::HcclRootInfo) -> RootInfo {
        let mut bytes = Box::new([0u8; ROOT_INFO_BYTES]);
        for (d, &s) in bytes.iter_mut().zip(raw.internal.iter()) {
            *d = s as u8;
        }
        RootInfo { bytes }
    }

    fn used(&self) -> usize {
        self.bytes
            .iter()
            .rposition(|&b| b != 0)
            .map_or(0, |i| i + 1)
    }

    /// A compact text form: `hccl-root-v1:` then the bytes in hex up to the
    /// last non-zero one (the rest of the blob is zeros). Parse it back
    /// with [`str::parse`].
    pub fn to_text(&self) -> String {
        let used = self.used();
        let mut s = String::with_capacity(TEXT_PREFIX.len() + 2 * used);
        s.push_str(TEXT_PREFIX);
        for b in &self.bytes[..used] {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }
}

impl FromStr for RootInfo {
    type Err = Error;

    /// Parses [`RootInfo::to_text`].
    fn from_str(s: &str) -> Result<RootInfo> {
        let bad = |why: &str| Error::invalid("RootInfo::from_str", why.to_string());
        let hex = s
            .trim()
            .strip_prefix(TEXT_PREFIX)
            .ok_or_else(|| bad("the text does not start with \"hccl-root-v1:\""))?;
        if hex.len() % 2 != 0 || hex.len() / 2 > ROOT_INFO_BYTES {
            return Err(bad(&format!(
                "{} hex digits do not make at most {ROOT_INFO_BYTES} whole bytes",
                hex.len()
            )));
        }
        let mut bytes = Box::new([0u8; ROOT_INFO_BYTES]);
        for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
            let digits = std::str::from_utf8(pair).map_err(|_| bad("not hex"))?;
            bytes[i] = u8::from_str_radix(digits, 16)
                .map_err(|_| bad(&format!("{digits:?} is not a hex byte")))?;
        }
        Ok(RootInfo { bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_bytes_round_trip() {
        let mut b = [0u8; ROOT_INFO_BYTES];
        b[..5].copy_from_slice(b"\x01ABC\xff");
        let r = RootInfo::from_bytes(&b).unwrap();
        assert_eq!(r.to_text(), "hccl-root-v1:01414243ff");
        assert_eq!(r.to_text().parse::<RootInfo>().unwrap(), r);
        assert_eq!(RootInfo::from_raw(&r.to_raw()), r);
    }

    #[test]
    fn malformed_text_and_lengths_are_rejected_with_reasons() {
        assert_eq!(
            RootInfo::from_bytes(&[0; 10]).unwrap_err().to_string(),
            "RootInfo::from_bytes: a root info is 4108 bytes (HCCL_ROOT_INFO_BYTES), not 10"
        );
        assert!("xyz".parse::<RootInfo>().is_err());
        assert!("hccl-root-v1:0".parse::<RootInfo>().is_err());
        assert!("hccl-root-v1:zz".parse::<RootInfo>().is_err());
    }
}
