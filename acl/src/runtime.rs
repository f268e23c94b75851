//! AscendCL's process-wide lifecycle.
//!
//! AscendCL must be initialised once per process (`aclInit`) and finalized
//! once at the end (`aclFinalize`). [`Runtime`] is a reference-counted handle
//! to that session: the first [`Runtime::init`] calls `aclInit`, later ones
//! share it, and the last handle dropped calls `aclFinalize` — after every
//! device and buffer, since those hold a `Runtime` themselves, so teardown
//! order follows from ownership.
//!
//! If `aclInit` answers `ACL_ERROR_REPEAT_INITIALIZE` (100002), someone else
//! in the process (another library, a Python host) initialised AscendCL; the
//! handle then never finalizes it, so the other owner is not pulled from
//! under its feet.

use crate::error::{Error, Result};
use crate::result::raw;
use crate::{ErrorCode, release, result};
use std::sync::Mutex;

/// A handle to the process's AscendCL session. Cloning counts another
/// reference; `Send + Sync` (the session is process-wide).
#[derive(Debug)]
pub struct Runtime {
    owns_init: bool,
}

/// The session: live handles, and whether our `aclInit` started it. Handles
/// are counted under this lock, so an `aclFinalize` can never race with the
/// `aclInit` of a new session.
#[derive(Debug)]
struct Session {
    handles: usize,
    owns_init: bool,
}

static SESSION: Mutex<Option<Session>> = Mutex::new(None);

fn session() -> std::sync::MutexGuard<'static, Option<Session>> {
    crate::lock::lock(&SESSION)
}

/// AscendCL's version, as reported by `aclrtGetVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version.
    pub major: i32,
    /// Minor version.
    pub minor: i32,
    /// Patch version.
    pub patch: i32,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Where the program runs (`aclrtRunMode`), from [`Runtime::run_mode`].
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunMode {
    /// On a device's own control CPU (`ACL_DEVICE`, the runtime's offline
    /// mode): host and device memory are one.
    Device,
    /// On a host with the devices attached (`ACL_HOST`).
    Host,
}

impl Runtime {
    /// Initialises AscendCL (once per process) and returns a handle to it.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when no AscendCL library can be loaded;
    /// [`Error::Acl`] when `aclInit` fails for another reason than an
    /// earlier initialisation.
    #[doc(alias = "aclInit")]
    pub fn init() -> Result<Runtime> {
        let mut session = session();
        if let Some(s) = session.as_mut() {
            s.handles += 1;
            return Ok(Runtime {
                owns_init: s.owns_init,
            });
        }
        let owns_init = match result::init(None)? {
            0 => true,
            code if ErrorCode::from_raw(code) == ErrorCode::RepeatInitialize => {
                // Clear the runtime's message about the repeat: it is expected.
                let _ = Error::from_code("aclInit", code);
                false
            }
            code => return Err(Error::from_code("aclInit", code)),
        };
        *session = Some(Session {
            handles: 1,
            owns_init,
        });
        Ok(Runtime { owns_init })
    }

    /// Whether this process's session was started by this crate (and will be
    /// finalized by it), rather than by someone else.
    pub fn owns_initialization(&self) -> bool {
        self.owns_init
    }

    /// AscendCL's version.
    ///
    /// # Errors
    ///
    /// [`Error::Acl`] from `aclrtGetVersion`.
    #[doc(alias = "aclrtGetVersion")]
    pub fn version(&self) -> Result<Version> {
        let (major, minor, patch) = result::get_version()?;
        Ok(Version {
            major,
            minor,
            patch,
        })
    }

    /// The SoC name, e.g. `"Ascend910B3"`.
    ///
    /// # Errors
    ///
    /// [`Error::Acl`] when the runtime cannot tell.
    #[doc(alias = "aclrtGetSocName")]
    pub fn soc_name(&self) -> Result<String> {
        result::get_soc_name()
    }

    /// Where this program runs: on a host with the devices attached (the
    /// usual server case) or on a device's own control CPU.
    ///
    /// # Errors
    ///
    /// [`Error::Acl`] from `aclrtGetRunMode`.
    #[doc(alias = "aclrtGetRunMode")]
    pub fn run_mode(&self) -> Result<RunMode> {
        Ok(match result::get_run_mode()? {
            raw::ACL_DEVICE => RunMode::Device,
            _ => RunMode::Host,
        })
    }

    /// Device `ordinal`: the same [`Device`](crate::Device) for every call
    /// while a handle to it lives (as [`Device::new`](crate::Device::new)).
    ///
    /// # Errors
    ///
    /// As [`Device::new`](crate::Device::new).
    #[doc(alias = "aclrtSetDevice")]
    pub fn device(&self, ordinal: u32) -> Result<crate::Device> {
        crate::Device::new(self, ordinal)
    }

    /// The number of visible NPUs (after `ASCEND_RT_VISIBLE_DEVICES`).
    ///
    /// # Errors
    ///
    /// [`Error::Acl`] from `aclrtGetDeviceCount`.
    #[doc(alias = "aclrtGetDeviceCount")]
    pub fn device_count(&self) -> Result<u32> {
        result::get_device_count()
    }
}

impl Clone for Runtime {
    fn clone(&self) -> Runtime {
        if let Some(s) = session().as_mut() {
            s.handles += 1;
        }
        Runtime {
            owns_init: self.owns_init,
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let mut session = session();
        let Some(s) = session.as_mut() else { return };
        s.handles = s.handles.saturating_sub(1);
        if s.handles > 0 {
            return;
        }
        if crate::device::in_host_fn() {
            // AscendCL may not be called inside a host function (and
            // finalizing waits for its stream): the release thread finalizes
            // once the host function has returned — unless a new handle has
            // taken the session over by then.
            drop(session);
            release::in_background(Box::new(|| {
                let mut session = crate::runtime::session();
                if session.as_ref().is_some_and(|s| s.handles == 0) {
                    end_session(&mut session);
                }
            }));
        } else {
            end_session(&mut session);
        }
    }
}

/// Ends the session (the last handle is gone), finalizing AscendCL if this
/// crate initialised it.
fn end_session(session: &mut Option<Session>) {
    if let Some(s) = session.take()
        && s.owns_init
        // SAFETY: the session's last `Runtime` handle is gone and this crate
        // initialised it; every other handle of this crate holds a `Runtime`,
        // so none is left to use what `aclFinalize` releases.
        && let Err(e) = unsafe { result::finalize() }
    {
        release::record("Runtime", e);
    }
}
