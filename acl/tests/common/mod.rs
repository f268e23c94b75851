//! Shared setup for the integration tests: the simulator and a runtime.

#![allow(dead_code)]

use acl::{Device, Runtime};

/// Installs cann-sim and initialises AscendCL.
pub fn runtime() -> Runtime {
    cann_sim::install().expect("cann-sim installs");
    Runtime::init().expect("aclInit")
}

/// Device `n` of a fresh runtime handle.
pub fn device(n: u32) -> Device {
    Device::new(&runtime(), n).expect("device")
}

/// How many reports cann-sim's check mode made so far in this process.
pub fn reports() -> u64 {
    cann_sim::check::reports().count
}

/// The latest check-mode reports' messages.
pub fn recent() -> Vec<String> {
    cann_sim::check::reports()
        .recent
        .into_iter()
        .map(|r| r.message)
        .collect()
}

/// Blocks `stream` behind a host function until the returned sender is
/// dropped or sent to (or 30 s pass).
pub fn block(stream: &acl::Stream) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(30));
        })
        .unwrap();
    tx
}

/// A graph doing `acc += x` through a temporary (an aclnn add into `tmp`,
/// then a copy back), captured on `s` in `mode`.
pub fn accumulate(
    s: &acl::Stream,
    mode: acl::graph::CaptureMode,
    x: &acl::DeviceBuffer<f32>,
    acc: &mut acl::DeviceBuffer<f32>,
    tmp: &mut acl::DeviceBuffer<f32>,
) -> acl::graph::Graph {
    use acl::aclnn::{self, Scalar, TensorArg, TensorArgMut};
    let n = x.len();
    let (graph, ()) = s
        .capture(mode, |s| {
            {
                let (tx, ta) = (TensorArg::new(x, &[n])?, TensorArg::new(&*acc, &[n])?);
                let mut tt = TensorArgMut::new(tmp, &[n])?;
                aclnn::add(s, &tx, &ta, &Scalar::new(1.0f32)?, &mut tt)?;
            }
            s.copy_dtod(tmp, acc)
        })
        .expect("the accumulating graph is captured");
    graph
}

/// One test at a time, for tests that count the simulator's live aclnn
/// handles (process-wide). On drop, before unlocking, it destroys the
/// calling thread's idle kept descriptors and data buffers: otherwise the
/// thread-exit destructor of a finished test's pool could destroy them while
/// the next test counts.
#[allow(dead_code, reason = "used by the tests that count handles only")]
pub struct Serial(
    #[allow(dead_code, reason = "held for its drop")] std::sync::MutexGuard<'static, ()>,
);

#[allow(dead_code, reason = "used by the tests that count handles only")]
impl Serial {
    pub fn lock(m: &'static std::sync::Mutex<()>) -> Serial {
        Serial(m.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Serial {
    fn drop(&mut self) {
        acl::aclnn::release_cached_descriptors();
        acl::aclop::release_cached_buffers();
    }
}
