//! Contexts: a device, a default stream, the streams created in it, and a
//! host-function thread.

use super::report::{self, Report, Subscriber, Take};
use super::stream::Stream;
use super::{CONTEXTS, STREAMS};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

struct HostThread {
    sub: Arc<Subscriber>,
    handle: JoinHandle<()>,
}

/// A context.
pub struct Context {
    /// Process-unique id.
    pub id: u64,
    /// Logical device.
    pub device: u32,
    /// Whether it is the device's primary (default) context, made by
    /// `aclrtSetDevice`.
    pub primary: bool,
    alive: AtomicBool,
    /// The default stream: what a null `aclrtStream` means in this context.
    pub default_stream: Arc<Stream>,
    streams: Mutex<Vec<Arc<Stream>>>,
    host: Mutex<Option<HostThread>>,
    /// Its system parameters (`aclrtCtxSetSysParamOpt`).
    pub sys_params: super::settings::SysParams,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.id)
            .field("device", &self.device)
            .field("primary", &self.primary)
            .field("alive", &self.is_alive())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A new live context (not registered; see [`super::create_context`]).
    pub fn new(id: u64, device: u32, primary: bool, default_stream: Arc<Stream>) -> Context {
        Context {
            id,
            device,
            primary,
            alive: AtomicBool::new(true),
            default_stream,
            streams: Mutex::new(Vec::new()),
            host: Mutex::new(None),
            sys_params: super::settings::SysParams::new(),
        }
    }

    /// Its handle: its address, under which the handle table knows it
    /// (the exports give it to C as an opaque pointer).
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Whether it has not been destroyed.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// "context 3 (device 0, primary)", for messages.
    pub fn label(&self) -> String {
        format!(
            "context {} (device {}{})",
            self.id,
            self.device,
            if self.primary { ", primary" } else { "" }
        )
    }

    /// Adds a stream created in this context.
    pub fn add_stream(&self, s: Arc<Stream>) {
        self.streams.lock().push(s);
    }

    /// Removes a destroyed stream.
    pub fn remove_stream(&self, s: &Arc<Stream>) {
        self.streams.lock().retain(|x| !Arc::ptr_eq(x, s));
    }

    /// The streams created in it (not the default one).
    pub fn streams(&self) -> Vec<Arc<Stream>> {
        self.streams.lock().clone()
    }

    /// Starts the host-function thread if it is not running.
    ///
    /// # Errors
    ///
    /// The reason the thread cannot be started.
    pub fn ensure_host_thread(&self) -> Result<(), String> {
        let mut h = self.host.lock();
        if h.is_some() {
            return Ok(());
        }
        let sub = Arc::new(Subscriber::new(self.device));
        let thread_sub = sub.clone();
        let handle = std::thread::Builder::new()
            .name(format!("cann-sim-hostfunc-ctx{}", self.id))
            .spawn(move || {
                while let Take::Reports(reports) = thread_sub.take(None) {
                    for r in reports {
                        report::run(r);
                    }
                }
            })
            .map_err(|e| {
                format!(
                    "cannot start the host-function thread of {}: {e}",
                    self.label()
                )
            })?;
        *h = Some(HostThread { sub, handle });
        Ok(())
    }

    /// Hands a host function to the context's thread.
    ///
    /// # Errors
    ///
    /// A message when the thread is not running.
    pub fn post_host_func(&self, r: Report) -> Result<(), String> {
        let sub = self.host.lock().as_ref().map(|h| h.sub.clone());
        match sub {
            Some(s) => s.post(r),
            None => Err(format!(
                "{} has no host-function thread; the host function was not called",
                self.label()
            )),
        }
    }

    /// Whether the host-function thread runs.
    pub fn has_host_thread(&self) -> bool {
        self.host.lock().is_some()
    }

    /// Whether the calling thread is running a blocking callback or host
    /// function of one of the context's streams (tearing the context down
    /// from there would wait for itself).
    pub fn is_running_own_callback(&self) -> bool {
        let running = report::running_blocking_callback_of();
        running != 0
            && self
                .streams()
                .iter()
                .chain(std::iter::once(&self.default_stream))
                .any(|s| Arc::as_ptr(&s.shared) as usize == running)
    }

    /// Destroys the context: finishes and destroys its streams (the default
    /// one last), stops its host-function thread and unregisters every
    /// handle. Threads whose current context it was have none afterwards.
    pub fn tear_down(self: &Arc<Self>) {
        // From now on no thread has it as its current context, so no new
        // work arrives through the null stream; queued work still finishes.
        self.alive.store(false, Ordering::Release);
        let streams: Vec<Arc<Stream>> = std::mem::take(&mut *self.streams.lock());
        for s in streams.iter().chain(std::iter::once(&self.default_stream)) {
            super::destroy_stream(s, false);
        }
        let host = self.host.lock().take();
        if let Some(h) = host {
            h.sub.close(&format!("{} was destroyed", self.label()));
            let _ = h.handle.join();
        }
        CONTEXTS.lock().remove(Arc::as_ptr(self) as usize);
        // The default stream's handle was unregistered by destroy_stream.
        debug_assert!(matches!(
            STREAMS
                .lock()
                .get(Arc::as_ptr(&self.default_stream) as usize),
            super::handles::Lookup::Destroyed | super::handles::Lookup::Unknown
        ));
    }
}
