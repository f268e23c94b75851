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
use std::time::Duration;

/// What floating-point results do on overflow (`aclrtFloatOverflowMode`).
/// A plain value: `Send + Sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverflowMode {
    /// Results saturate at the type's largest finite value.
    Saturation,
    /// Results overflow to infinity and NaN (IEEE 754), the default of the
    /// Atlas A2/A3 parts.
    InfNan,
}

/// A last-error code as an option: `None` for `ACL_SUCCESS`.
fn last_error(code: i32) -> Option<ErrorCode> {
    (code != 0).then(|| ErrorCode::from_raw(code))
}

/// `timeout` in whole seconds, rounded up; `None` is 0.
fn whole_seconds(function: &'static str, timeout: Option<Duration>) -> Result<u32> {
    let Some(t) = timeout else { return Ok(0) };
    let secs = t.as_secs() + u64::from(t.subsec_nanos() > 0);
    u32::try_from(secs.max(1)).map_err(|_| {
        Error::invalid(
            function,
            format!("the timeout {secs} s exceeds u32::MAX seconds"),
        )
    })
}

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

    /// The calling thread's last runtime error, which the runtime then
    /// clears: `None` when no runtime call of this thread has failed since
    /// the last read. Only the runtime's own codes (107xxx, 207xxx, 507xxx)
    /// are kept, not the argument checks of the ACL layer (1000xx).
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// let rt = acl::Runtime::init()?;
    /// assert_eq!(rt.take_last_error()?, None);
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when the loaded AscendCL lacks `aclrtGetLastError`.
    #[doc(alias = "aclrtGetLastError")]
    pub fn take_last_error(&self) -> Result<Option<ErrorCode>> {
        Ok(last_error(result::get_last_error(
            raw::ACL_RT_THREAD_LEVEL,
        )?))
    }

    /// Like [`Runtime::take_last_error`], leaving the error in place.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when the loaded AscendCL lacks `aclrtPeekAtLastError`.
    #[doc(alias = "aclrtPeekAtLastError")]
    pub fn peek_last_error(&self) -> Result<Option<ErrorCode>> {
        Ok(last_error(result::peek_at_last_error(
            raw::ACL_RT_THREAD_LEVEL,
        )?))
    }

    /// How long a queued wait (an event wait, a value wait) may block its
    /// stream before its task fails with `ACL_ERROR_RT_TASK_TIMEOUT`; `None`
    /// waits for ever (the default). The runtime counts whole seconds: a
    /// timeout is rounded up to the next second.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for more than `u32::MAX` seconds; the
    /// runtime's error.
    #[doc(alias = "aclrtSetOpWaitTimeout")]
    pub fn set_op_wait_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        result::set_op_wait_timeout(whole_seconds("Runtime::set_op_wait_timeout", timeout)?)
    }

    /// The timeout of an operator's execution on the device (`None`: the
    /// runtime's default), rounded up to whole seconds.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for more than `u32::MAX` seconds; the
    /// runtime's error.
    #[doc(alias = "aclrtSetOpExecuteTimeOut")]
    pub fn set_op_execute_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        result::set_op_execute_time_out(whole_seconds("Runtime::set_op_execute_timeout", timeout)?)
    }

    /// What floating-point computations do on overflow, for the process.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::OverflowMode;
    /// let rt = acl::Runtime::init()?;
    /// rt.set_overflow_mode(OverflowMode::Saturation)?;
    /// assert_eq!(rt.overflow_mode()?, OverflowMode::Saturation);
    /// rt.set_overflow_mode(OverflowMode::InfNan)?;
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's error; [`Error::Acl`] with `ACL_ERROR_INTERNAL_ERROR`
    /// for a mode this crate does not know.
    #[doc(alias = "aclrtGetDeviceSatMode")]
    pub fn overflow_mode(&self) -> Result<OverflowMode> {
        match result::get_device_sat_mode()? {
            raw::ACL_RT_OVERFLOW_MODE_SATURATION => Ok(OverflowMode::Saturation),
            raw::ACL_RT_OVERFLOW_MODE_INFNAN => Ok(OverflowMode::InfNan),
            _ => Err(Error::from_code(
                "aclrtGetDeviceSatMode",
                raw::ACL_ERROR_INTERNAL_ERROR,
            )),
        }
    }

    /// Sets what floating-point computations do on overflow, for the
    /// process (and the current device).
    ///
    /// # Errors
    ///
    /// The runtime's error.
    #[doc(alias = "aclrtSetDeviceSatMode")]
    pub fn set_overflow_mode(&self, mode: OverflowMode) -> Result<()> {
        result::set_device_sat_mode(match mode {
            OverflowMode::Saturation => raw::ACL_RT_OVERFLOW_MODE_SATURATION,
            OverflowMode::InfNan => raw::ACL_RT_OVERFLOW_MODE_INFNAN,
        })
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
