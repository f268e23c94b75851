//! Collectives: methods of [`Comm`] that queue work on an `acl` [`Stream`].
//!
//! Each call returns once the collective is queued; it runs asynchronously,
//! and its result is ready once the stream (or an event recorded after it)
//! is synchronised — which is also where a failed collective reports
//! (for example `ACL_ERROR_RT_FFTS_PLUS_TIMEOUT`, 507048, when a peer never
//! joined), with [`Comm::async_error`] saying what HCCL saw.
//!
//! # Checks before HCCL
//!
//! - Buffer lengths are checked against the communicator's size, e.g. an
//!   all-gather's output must hold input × ranks elements
//!   ([`Error::InvalidArgument`] with both numbers).
//! - The stream must be a created stream (not the default one) on the
//!   communicator's device, and every buffer must live on that device.
//! - The element type comes from the Rust type ([`HcclType`]).
//!
//! # Memory safety
//!
//! Buffers follow `acl`'s access tracking (`acl::memory::track`): a
//! collective's stream first waits, on the device, for the queued accesses
//! its buffers conflict with (the send buffer is read, the receive buffer
//! written), and the collective's accesses are recorded once it is queued.
//! No buffer is freed (or reused by the caching allocator) while a
//! collective still uses it, and no host access sees it half-written. Inside
//! a [`group`], HCCL queues the sends and receives at `HcclGroupEnd`: the
//! group keeps their memory alive until then (a buffer dropped inside the
//! closure is freed only after the work that uses it) and orders them there.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, DeviceBuffer, Runtime};
//! use hccl::{Comm, CommConfig, ReduceOp, RootInfo};
//!
//! // Two ranks as two threads of this process, devices 0 and 1.
//! let rt = Runtime::init()?;
//! let root = RootInfo::for_device(&Device::new(&rt, 0)?)?;
//! let handles: Vec<_> = (0..2u32)
//!     .map(|rank| {
//!         let (rt, root) = (rt.clone(), root.clone());
//!         std::thread::spawn(move || -> Result<Vec<f32>, hccl::Error> {
//!             let npu = Device::new(&rt, rank)?;
//!             let comm = Comm::init_root_info(&npu, &root, 2, rank, &CommConfig::default())?;
//!             let stream = npu.new_stream()?;
//!             let mut x = DeviceBuffer::from_host(&npu, &[rank as f32 + 1.0; 4])?;
//!             comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)?;
//!             stream.synchronize()?;
//!             Ok(x.to_host_vec()?)
//!         })
//!     })
//!     .collect();
//! for h in handles {
//!     assert_eq!(h.join().unwrap()?, [3.0; 4]);
//! }
//! # Ok::<(), hccl::Error>(())
//! ```

use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::result::{self, raw};
use crate::types::{DataType, HcclType, ReduceOp};
use acl::memory::Access;
use acl::{DeviceMemory, DeviceMemoryMut, Stream};
use std::ffi::c_void;
use std::marker::PhantomData;

/// Open groups on this thread, and the deferred accesses per stream.
type GroupState = (u32, Vec<(Stream, Vec<Access>)>);

thread_local! {
    /// Open [`group`]s on this thread, and the accesses of the sends and
    /// receives queued in them: HCCL queues that work only at the group's
    /// end, so the accesses are prepared and recorded there. Holding them
    /// keeps the memory alive even if its buffer is dropped inside the group.
    static GROUP: std::cell::RefCell<GroupState> =
        const { std::cell::RefCell::new((0, Vec::new())) };
    /// The communicators work was queued through in the open groups of
    /// this thread (their handles), and those dropped meanwhile: HCCL
    /// queues a group's sends at its end, through the communicator, so a
    /// communicator dropped inside the group is destroyed after it.
    static GROUP_COMMS: std::cell::RefCell<(Vec<usize>, Vec<Comm>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Notes that `comm` queued work in the open group of this thread.
fn note_group_comm(comm: &Comm) {
    let raw = comm.as_raw() as usize;
    GROUP_COMMS.with(|c| {
        let mut c = c.borrow_mut();
        if !c.0.contains(&raw) {
            c.0.push(raw);
        }
    });
}

/// For `Comm`'s drop: when a group open on this thread queued work through
/// `comm`, hands its destruction to the group's end (the communicator is
/// moved out of `comm`, which is left empty) and returns true.
pub(crate) fn defer_destroy(comm: &mut Comm) -> bool {
    let raw = comm.as_raw() as usize;
    let in_group = GROUP.with(|g| g.borrow().0 > 0);
    if !in_group || !GROUP_COMMS.with(|c| c.borrow().0.contains(&raw)) {
        return false;
    }
    let moved = comm.take();
    GROUP_COMMS.with(|c| c.borrow_mut().1.push(moved));
    true
}

/// At the outermost group's end, after HCCL queued its work: the
/// communicators dropped inside it are destroyed now.
fn end_group_comms() {
    let dropped = GROUP_COMMS.with(|c| {
        let mut c = c.borrow_mut();
        c.0.clear();
        std::mem::take(&mut c.1)
    });
    drop(dropped);
}

/// Runs `op`, which queues work on `stream` with the memory accesses
/// `uses`, ordered with their other accesses (see `acl::memory`): `stream`
/// first waits, on the device, for the accesses it conflicts with, and the
/// new ones are recorded once queued. Inside a [`group`], HCCL may queue
/// the work at once (collectives) or only at the group's end (sends and
/// receives): the accesses are ordered and recorded both now and again at
/// the group's end, which is sound either way, and the group keeps the
/// memory alive until then.
fn ordered(stream: &Stream, uses: Vec<Access>, op: impl FnOnce() -> Result<()>) -> Result<()> {
    let in_group = GROUP.with(|g| g.borrow().0 > 0);
    let again = in_group.then(|| uses.clone());
    let prepared = acl::memory::prepare(stream, uses)?;
    op()?;
    prepared.commit();
    if let Some(uses) = again {
        GROUP.with(|g| g.borrow_mut().1.push((stream.clone(), uses)));
    }
    Ok(())
}

/// The shape of [`result::broadcast`], [`result::send`] and
/// [`result::recv`]: `(buf, count, type, root or peer, comm, stream)`.
type OneBufferFn = unsafe fn(
    *mut c_void,
    u64,
    raw::HcclDataType,
    u32,
    raw::HcclComm,
    raw::aclrtStream,
) -> Result<()>;

fn len_u64(n: usize) -> u64 {
    n as u64
}

/// `len` elements of `what` (a per-rank block) × `ranks`: the length of the
/// whole buffer the collective needs, checked.
fn times_ranks(f: &'static str, what: &str, len: usize, ranks: u32) -> Result<usize> {
    usize::try_from(ranks)
        .ok()
        .and_then(|r| len.checked_mul(r))
        .ok_or_else(|| {
            Error::invalid(
                f,
                format!("{what} × ranks = {len} × {ranks} elements is more than usize::MAX"),
            )
        })
}

impl Comm {
    fn check_stream(&self, f: &'static str, stream: &Stream) -> Result<()> {
        if stream.is_default() {
            return Err(Error::invalid(
                f,
                "collectives need a created stream (Device::new_stream); HCCL rejects the \
                 default stream",
            ));
        }
        if stream.device().ordinal() != self.device().ordinal() {
            return Err(Error::invalid(
                f,
                format!(
                    "the stream is on device {}, but this rank runs on device {}",
                    stream.device().ordinal(),
                    self.device().ordinal()
                ),
            ));
        }
        Ok(())
    }

    fn check_home(&self, f: &'static str, what: &str, access: &Access) -> Result<()> {
        let device = access.allocation().device();
        if device.ordinal() != self.device().ordinal() {
            return Err(Error::invalid(
                f,
                format!(
                    "{what} lives on device {}, but this rank runs on device {}",
                    device.ordinal(),
                    self.device().ordinal()
                ),
            ));
        }
        Ok(())
    }

    /// Checks the stream and the buffers' devices, binds the device, and
    /// calls `call` (a [`result`] function) ordered with the buffers' other
    /// accesses (`uses`).
    fn issue(
        &self,
        f: &'static str,
        stream: &Stream,
        uses: Vec<(&str, Access)>,
        call: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        self.check_stream(f, stream)?;
        for (what, a) in &uses {
            self.check_home(f, what, a)?;
        }
        {
            let mut used = self.streams.lock().unwrap_or_else(|p| p.into_inner());
            if !used.iter().any(|s| s.same_queue(stream)) {
                used.push(stream.clone());
            }
        }
        self.device().bind()?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let uses = uses.into_iter().map(|(_, a)| a).collect();
        ordered(stream, uses, || {
            self.device().bind()?;
            call()
        })?;
        if GROUP.with(|g| g.borrow().0 > 0) {
            note_group_comm(self);
        }
        Ok(())
    }

    fn need(&self, f: &'static str, what: &str, got: usize, want: usize, how: &str) -> Result<()> {
        if got != want {
            return Err(Error::invalid(
                f,
                format!("{what} has {got} elements, but needs {want} ({how})"),
            ));
        }
        Ok(())
    }

    /// [`Comm::issue`] for a collective from `send` into `recv`: `call` gets
    /// their device pointers and runs ordered with the buffers' accesses.
    fn issue_send_recv<T: HcclType>(
        &self,
        f: &'static str,
        stream: &Stream,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        call: impl FnOnce(*mut c_void, *mut c_void) -> Result<()>,
    ) -> Result<()> {
        let (s, r) = (send.device_ptr().cast_mut(), recv.device_ptr_mut());
        let uses = vec![("send", send.read_access()), ("recv", recv.write_access())];
        self.issue(f, stream, uses, || call(s, r))
    }

    /// [`Comm::issue`] for the one-buffer calls of the shape
    /// `call(buf, count, type, rank, comm, stream)` ([`result::broadcast`],
    /// [`result::send`], [`result::recv`]; `rank` is the root or the peer):
    /// `ptr` is `buf`'s device pointer, for reading or writing as `call` does.
    fn issue_one_buffer<T: HcclType>(
        &self,
        f: &'static str,
        stream: &Stream,
        call: OneBufferFn,
        (buf, ptr, access): (&(impl DeviceMemory<T> + ?Sized), *mut c_void, Access),
        rank: u32,
    ) -> Result<()> {
        let n = len_u64(buf.len());
        self.issue(f, stream, vec![("buf", access)], || {
            // SAFETY: a live device buffer of `n` elements of T, ordered
            // with its other uses by `issue`.
            unsafe {
                call(
                    ptr,
                    n,
                    T::DATA_TYPE.raw(),
                    rank,
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// The buffer only the root passes (`what`): `Some` on the root, `None`
    /// on the other ranks.
    fn root_only<B>(
        &self,
        f: &'static str,
        what: &str,
        buf: Option<B>,
        root: u32,
    ) -> Result<Option<B>> {
        match (buf, self.rank() == root) {
            (Some(b), true) => Ok(Some(b)),
            (None, false) => Ok(None),
            (None, true) => Err(Error::invalid(
                f,
                format!("the root must pass a {what} buffer"),
            )),
            (Some(_), false) => Err(Error::invalid(
                f,
                format!("only the root passes a {what} buffer"),
            )),
        }
    }
}

mod group;
mod ops;
mod p2p;

pub use group::group;
pub use p2p::P2pOp;
