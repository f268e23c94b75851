//! Devices as the runtime holds them: each set device's reference count
//! and primary context (`aclrtSetDevice`, `aclrtResetDevice`).

use super::Context;
use super::error::{Error, ErrorKind};
use crate::state;
use parking_lot::Mutex;
use std::sync::Arc;

/// Whether programs run on a host with the devices attached — the runtime's
/// "online" mode — rather than on a device's own control CPU ("offline"):
/// always, for the simulated machine (a server with NPU cards).
pub fn runs_on_host() -> bool {
    true
}

/// Serialises the creation of primary contexts.
static SETUP: Mutex<()> = Mutex::new(());

/// Retains `device` (a valid logical id) and makes its primary context the
/// calling thread's current context.
///
/// # Errors
///
/// [`ErrorKind::NoStreamResource`] when the primary context's default
/// stream cannot be made.
pub fn set(device: u32) -> Result<Arc<Context>, Error> {
    let _setup = SETUP.lock();
    let existing = state::global().lock().device(device).primary.clone();
    let ctx = match existing {
        Some(ctx) => ctx,
        None => {
            let ctx = super::create_context(device, true)?;
            state::global().lock().device(device).primary = Some(ctx.clone());
            ctx
        }
    };
    state::global().lock().retain_device(device);
    state::set_current_context(Some(ctx.clone()));
    // A process using a device publishes its telemetry (npu-smi-rs --backend sim).
    crate::telemetry::activate();
    Ok(ctx)
}

/// The default device of `aclInit`'s config, set on a thread without a
/// context by a call that needs one, as the runtime does
/// (hicann/runtime `src/runtime/core/src/runtime.cc`,
/// `Runtime::CurrentContext(isNeedSetDevice, deviceId)`: `SetDevice(defaultDeviceId)`
/// and its primary context). `None` when it cannot be set (the call then
/// fails as without a context).
pub fn set_implicitly(device: u32) -> Option<Arc<Context>> {
    let count = crate::config::get().ok()?.device_count();
    if device >= count {
        return None;
    }
    set(device).ok()
}

/// Drops one reference on `device` (all of them when `force`); at 0 its
/// primary context is destroyed, after the work queued on its streams.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] when called from a blocking callback or host
/// function of the primary context's streams (the reset would wait for
/// itself); [`ErrorKind::ContextRelease`] when the device is not set.
pub fn reset(device: u32, force: bool) -> Result<(), Error> {
    let (left, primary) = {
        let _setup = SETUP.lock();
        let mut st = state::global().lock();
        let last = force || st.device(device).refs == 1;
        if last
            && let Some(p) = &st.device(device).primary
            && p.is_running_own_callback()
        {
            return Err(Error::new(
                ErrorKind::ParamInvalid,
                format!(
                    "called from a blocking callback or host function of a stream of device \
                     {device}'s primary context; the reset waits for that stream, so it would \
                     never return"
                ),
            ));
        }
        let left = st.release_device(device, force);
        let primary = if left == Some(0) {
            st.device(device).primary.take()
        } else {
            None
        };
        (left, primary)
    };
    match left {
        None => Err(Error::new(
            ErrorKind::ContextRelease,
            format!("device {device} has not been set, or has already been reset"),
        )),
        Some(_) => {
            if let Some(ctx) = primary {
                // Waits for the work queued on its streams, then destroys
                // them; threads whose current context it was have none.
                ctx.tear_down();
            }
            Ok(())
        }
    }
}
