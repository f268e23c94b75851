//! The simulated runtime's objects: contexts, streams (with their worker
//! threads), events, and the threads that run host callbacks.
//!
//! Every object handed to C lives in a handle table ([`handles`]): the
//! simulator validates each handle the user passes back by looking it up,
//! never by dereferencing it.

pub mod capture;
pub mod completion;
pub mod cond;
pub mod context;
pub mod device;
pub mod error;
pub mod event;
pub mod handles;
pub mod ipc_event;
pub mod kernel;
pub mod op;
pub mod report;
pub mod ri_kernel;
pub mod ri_task;
pub mod settings;
pub mod stream;
pub mod value;
pub mod vmm;

pub use context::Context;
pub use error::{Error, ErrorKind};
pub use event::Event;
pub use stream::Stream;

use crate::state;
use handles::{Registry, Table};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Live contexts (primary ones included).
pub static CONTEXTS: Table<Context> = Table::new(|| Mutex::new(Registry::default()));
/// Live streams (default streams included).
pub static STREAMS: Table<Stream> = Table::new(|| Mutex::new(Registry::default()));
/// Live events.
pub static EVENTS: Table<Event> = Table::new(|| Mutex::new(Registry::default()));

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn max_streams() -> u32 {
    crate::config::get().map_or(crate::config::DEFAULT_MAX_STREAMS, |c| c.max_streams)
}

fn max_events() -> u32 {
    crate::config::get().map_or(crate::config::DEFAULT_MAX_EVENTS, |c| c.max_events)
}

fn no_stream(device: u32) -> Error {
    let max = max_streams();
    Error::new(
        ErrorKind::NoStreamResource,
        format!(
            "device {device} has no stream left: {max} streams are live, default streams included \
             (CANN_SIM_MAX_STREAMS); destroy streams or contexts first"
        ),
    )
}

/// Creates and registers a context on `device` with its default stream.
///
/// # Errors
///
/// `ACL_ERROR_RT_NO_STREAM_RESOURCE` (207008) when the device has no stream
/// left for the default stream.
pub fn create_context(device: u32, primary: bool) -> Result<Arc<Context>, Error> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let sid = state::global()
        .lock()
        .alloc_stream_id(device, max_streams())
        .ok_or_else(|| no_stream(device))?;
    let ctx = Arc::new_cyclic(|weak| {
        let s = Arc::new(Stream::new(weak.clone(), id, device, sid, 0, 0, true));
        Context::new(id, device, primary, s)
    });
    STREAMS.lock().insert(ctx.default_stream.clone());
    CONTEXTS.lock().insert(ctx.clone());
    Ok(ctx)
}

/// Creates and registers a stream in `ctx`.
///
/// # Errors
///
/// `ACL_ERROR_RT_NO_STREAM_RESOURCE` (207008) when the device has
/// `CANN_SIM_MAX_STREAMS` streams already (the driver's
/// `DRV_ERROR_NO_STREAM_RESOURCES`, `src/runtime/core/src/common/errcode_manage.cc`).
pub fn create_stream(ctx: &Arc<Context>, priority: u32, flags: u32) -> Result<Arc<Stream>, Error> {
    let sid = state::global()
        .lock()
        .alloc_stream_id(ctx.device, max_streams())
        .ok_or_else(|| no_stream(ctx.device))?;
    let s = Arc::new(Stream::new(
        Arc::downgrade(ctx),
        ctx.id,
        ctx.device,
        sid,
        priority,
        flags,
        false,
    ));
    STREAMS.lock().insert(s.clone());
    ctx.add_stream(s.clone());
    Ok(s)
}

/// Destroys a stream: finishes its queue (or drops it when `force`), joins
/// its worker, unbinds its callback thread and unregisters it. A second call
/// for the same stream does nothing.
pub fn destroy_stream(s: &Arc<Stream>, force: bool) {
    if STREAMS.lock().remove(Arc::as_ptr(s) as usize).is_none() {
        return;
    }
    capture::abandon(s);
    s.shut_down(force);
    report::forget_stream(s);
    state::global().lock().free_stream_id(s.device, s.id);
    if !s.is_default
        && let Some(ctx) = s.ctx.upgrade()
    {
        ctx.remove_stream(s);
    }
}

/// Creates and registers an event on `device`.
///
/// # Errors
///
/// `ACL_ERROR_RT_NO_EVENT_RESOURCE` (207007) when the device has
/// `CANN_SIM_MAX_EVENTS` events. (The runtime takes an event id at record
/// time and blocks there while none is free; the simulator counts events
/// at creation instead, so that a leak shows up as an error, not a hang.)
pub fn create_event(device: u32, flags: u32, ex_mode: bool) -> Result<Arc<Event>, Error> {
    register_event(Event::new(device, flags, ex_mode))
}

/// Creates and registers an IPC event (`ACL_EVENT_IPC`) on `device` over
/// the shared record `ipc` (made here, or opened from another process's
/// handle); the counting and errors of [`create_event`].
pub fn create_ipc_event(device: u32, ipc: ipc_event::IpcEventShared) -> Result<Arc<Event>, Error> {
    register_event(Event::with_ipc(device, Arc::new(ipc)))
}

fn register_event(e: Event) -> Result<Arc<Event>, Error> {
    let device = e.device;
    {
        let max = max_events();
        let mut st = state::global().lock();
        let d = st.device(device);
        if d.events >= max {
            return Err(Error::new(
                ErrorKind::NoEventResource,
                format!(
                    "device {device} has no event left: {max} events are live (CANN_SIM_MAX_EVENTS); \
                     destroy events first"
                ),
            ));
        }
        d.events += 1;
    }
    let e = Arc::new(e);
    EVENTS.lock().insert(e.clone());
    Ok(e)
}

/// Unregisters an event. Records still queued complete normally.
pub fn destroy_event(e: &Arc<Event>) {
    if EVENTS.lock().remove(Arc::as_ptr(e) as usize).is_some() {
        if let Some(ipc) = &e.ipc {
            ipc.withdraw();
        }
        let mut st = state::global().lock();
        let d = st.device(e.device);
        d.events = d.events.saturating_sub(1);
    }
}
