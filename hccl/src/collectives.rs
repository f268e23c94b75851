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
        })
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

    /// Reduces `send` over all ranks into every rank's `recv` (same length).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for unequal lengths, a default stream, or
    /// memory of another device; HCCL's error ([`ErrorCode::NotSupport`](crate::ErrorCode::NotSupport)
    /// for a type/op pair the NPU does not reduce).
    #[doc(alias = "HcclAllReduce")]
    pub fn all_reduce<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_reduce";
        self.need(F, "recv", recv.len(), send.len(), "the length of send")?;
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: live device buffers of `len` elements of T, ordered
            // with their other uses by `issue`.
            unsafe {
                result::all_reduce(
                    s,
                    r,
                    len_u64(send.len()),
                    T::DATA_TYPE.raw(),
                    op.raw(),
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// All-reduce in place: every rank's `buf` becomes the reduction of all.
    ///
    /// # Errors
    ///
    /// As [`Comm::all_reduce`].
    #[doc(alias = "HcclAllReduce")]
    pub fn all_reduce_in_place<T: HcclType>(
        &self,
        buf: &mut (impl DeviceMemoryMut<T> + ?Sized),
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let p = buf.device_ptr_mut();
        let n = len_u64(buf.len());
        let uses = vec![("buf", buf.write_access())];
        self.issue("Comm::all_reduce_in_place", stream, uses, || {
            // SAFETY: as `all_reduce`, with send == recv (allowed by HCCL).
            unsafe {
                result::all_reduce(
                    p,
                    p,
                    n,
                    T::DATA_TYPE.raw(),
                    op.raw(),
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Copies the root's `buf` into every other rank's `buf` (same length
    /// on every rank).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a root out of range; as [`Comm::all_reduce`].
    #[doc(alias = "HcclBroadcast")]
    pub fn broadcast<T: HcclType>(
        &self,
        buf: &mut (impl DeviceMemoryMut<T> + ?Sized),
        root: u32,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::broadcast";
        self.check_root(F, root)?;
        let p = buf.device_ptr_mut();
        let a = buf.write_access();
        self.issue_one_buffer(F, stream, result::broadcast, (buf, p, a), root)
    }

    fn check_root(&self, f: &'static str, root: u32) -> Result<()> {
        if root >= self.size() {
            return Err(Error::invalid(
                f,
                format!(
                    "root {root} is not a rank of the communicator (0..{})",
                    self.size()
                ),
            ));
        }
        Ok(())
    }

    /// Reduces `send` over all ranks into the root's `recv`. The root must
    /// pass `Some(recv)` (as long as `send`); the others pass `None`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the root has no `recv` (or another
    /// rank has one), for lengths or a root out of range; as [`Comm::all_reduce`].
    #[doc(alias = "HcclReduce")]
    pub fn reduce<T: HcclType, R: DeviceMemoryMut<T> + ?Sized>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: Option<&mut R>,
        op: ReduceOp,
        root: u32,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::reduce";
        self.check_root(F, root)?;
        let mut uses = vec![("send", send.read_access())];
        let r = match self.root_only(F, "recv", recv, root)? {
            Some(r) => {
                self.need(F, "recv", r.len(), send.len(), "the length of send")?;
                let p = r.device_ptr_mut();
                uses.push(("recv", r.write_access()));
                p
            }
            None => std::ptr::null_mut(),
        };
        let s = send.device_ptr().cast_mut();
        let n = len_u64(send.len());
        self.issue(F, stream, uses, || {
            // SAFETY: live device buffers of `n` elements (recv only on the root).
            unsafe {
                result::reduce(
                    s,
                    r,
                    n,
                    T::DATA_TYPE.raw(),
                    op.raw(),
                    root,
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Gathers every rank's `send` into every rank's `recv`, in rank order:
    /// `recv` holds `send.len()` × ranks elements.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `recv` is not `send` × ranks long; as
    /// [`Comm::all_reduce`].
    #[doc(alias = "HcclAllGather")]
    pub fn all_gather<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_gather";
        let want = times_ranks(F, "send", send.len(), self.size())?;
        let how = format!("send × ranks = {} × {}", send.len(), self.size());
        self.need(F, "recv", recv.len(), want, &how)?;
        let n = len_u64(send.len());
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: live device buffers of the checked lengths.
            unsafe {
                result::all_gather(s, r, n, T::DATA_TYPE.raw(), self.as_raw(), stream.as_raw())
            }
        })
    }

    fn check_v(
        &self,
        f: &'static str,
        counts: &[u64],
        displs: &[u64],
        buf_len: usize,
        what: &str,
    ) -> Result<()> {
        let n = self.size() as usize;
        if counts.len() != n || displs.len() != n {
            return Err(Error::invalid(
                f,
                format!(
                    "counts and displacements need one entry per rank ({n}), got {} and {}",
                    counts.len(),
                    displs.len()
                ),
            ));
        }
        for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
            let end = c.saturating_add(d);
            if end > len_u64(buf_len) {
                return Err(Error::invalid(
                    f,
                    format!(
                        "rank {i}'s block [{d}, {end}) lies outside {what} ({buf_len} elements)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// All-gather with a size per rank: rank `i`'s `send` lands in every
    /// rank's `recv[recv_displs[i]..][..recv_counts[i]]`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the arrays are not one per rank, a
    /// block lies outside `recv`, or `send.len() != recv_counts[rank]`.
    #[doc(alias = "HcclAllGatherV")]
    pub fn all_gather_v<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        recv_counts: &[u64],
        recv_displs: &[u64],
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_gather_v";
        self.check_v(F, recv_counts, recv_displs, recv.len(), "recv")?;
        let mine = recv_counts[self.rank() as usize];
        if len_u64(send.len()) != mine {
            return Err(Error::invalid(
                F,
                format!(
                    "send has {} elements, but recv_counts[{}] is {mine}",
                    send.len(),
                    self.rank()
                ),
            ));
        }
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: buffers and arrays of the checked lengths.
            unsafe {
                result::all_gather_v(
                    s,
                    mine,
                    r,
                    recv_counts.as_ptr().cast(),
                    recv_displs.as_ptr().cast(),
                    T::DATA_TYPE.raw(),
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Reduces `send` (ranks × `recv.len()` elements) over all ranks and
    /// scatters the result: rank `i` gets block `i` in `recv`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `send` is not `recv` × ranks long; as
    /// [`Comm::all_reduce`].
    #[doc(alias = "HcclReduceScatter")]
    pub fn reduce_scatter<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::reduce_scatter";
        let want = times_ranks(F, "recv", recv.len(), self.size())?;
        let how = format!("recv × ranks = {} × {}", recv.len(), self.size());
        self.need(F, "send", send.len(), want, &how)?;
        let n = len_u64(recv.len());
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: live device buffers of the checked lengths.
            unsafe {
                result::reduce_scatter(
                    s,
                    r,
                    n,
                    T::DATA_TYPE.raw(),
                    op.raw(),
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Reduce-scatter with a size per rank: block `i` of `send`
    /// (`send_counts[i]` elements at `send_displs[i]`) is reduced over all
    /// ranks into rank `i`'s `recv`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the arrays are not one per rank, a
    /// block lies outside `send`, or `recv.len() != send_counts[rank]`.
    #[doc(alias = "HcclReduceScatterV")]
    pub fn reduce_scatter_v<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        send_counts: &[u64],
        send_displs: &[u64],
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::reduce_scatter_v";
        self.check_v(F, send_counts, send_displs, send.len(), "send")?;
        let mine = send_counts[self.rank() as usize];
        if len_u64(recv.len()) != mine {
            return Err(Error::invalid(
                F,
                format!(
                    "recv has {} elements, but send_counts[{}] is {mine}",
                    recv.len(),
                    self.rank()
                ),
            ));
        }
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: buffers and arrays of the checked lengths.
            unsafe {
                result::reduce_scatter_v(
                    s,
                    send_counts.as_ptr().cast(),
                    send_displs.as_ptr().cast(),
                    r,
                    mine,
                    T::DATA_TYPE.raw(),
                    op.raw(),
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Splits the root's `send` (ranks × `recv.len()` elements) over the
    /// ranks: rank `i` gets block `i`. The root passes `Some(send)`, the
    /// others `None`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the root has no `send` (or another
    /// rank has one) or its length is wrong; as [`Comm::all_reduce`].
    #[doc(alias = "HcclScatter")]
    pub fn scatter<T: HcclType, S: DeviceMemory<T> + ?Sized>(
        &self,
        send: Option<&S>,
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        root: u32,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::scatter";
        self.check_root(F, root)?;
        let r = recv.device_ptr_mut();
        let mut uses = vec![("recv", recv.write_access())];
        let s = match self.root_only(F, "send", send, root)? {
            Some(s) => {
                let want = times_ranks(F, "recv", recv.len(), self.size())?;
                let how = format!("recv × ranks = {} × {}", recv.len(), self.size());
                self.need(F, "send", s.len(), want, &how)?;
                uses.push(("send", s.read_access()));
                s.device_ptr().cast_mut()
            }
            None => std::ptr::null_mut(),
        };
        let n = len_u64(recv.len());
        self.issue(F, stream, uses, || {
            // SAFETY: live device buffers of the checked lengths.
            unsafe {
                result::scatter(
                    s,
                    r,
                    n,
                    T::DATA_TYPE.raw(),
                    root,
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// Every rank sends block `j` of `send` to rank `j` and receives rank
    /// `i`'s block into block `i` of `recv`; blocks are `len / ranks` long.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the lengths differ or are not a
    /// multiple of the size; as [`Comm::all_reduce`].
    #[doc(alias = "HcclAlltoAll")]
    pub fn all_to_all<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_to_all";
        self.need(F, "recv", recv.len(), send.len(), "the length of send")?;
        let n = self.size() as usize;
        // A communicator has at least one rank; the checked division keeps a
        // broken invariant an error rather than a division by zero.
        let block = match (send.len().checked_div(n), send.len().checked_rem(n)) {
            (Some(b), Some(0)) => b,
            _ => {
                return Err(Error::invalid(
                    F,
                    format!(
                        "send has {} elements, not a multiple of the {n} ranks",
                        send.len()
                    ),
                ));
            }
        };
        let block = len_u64(block);
        let dt = T::DATA_TYPE.raw();
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: live device buffers of the checked lengths.
            unsafe { result::allto_all(s, block, dt, r, block, dt, self.as_raw(), stream.as_raw()) }
        })
    }

    /// All-to-all with sizes per pair: `send_counts[j]` elements at
    /// `send_displs[j]` go to rank `j`; rank `i`'s `recv_counts[i]` elements
    /// land at `recv_displs[i]`. Each pair's counts must agree.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when an array is not one per rank or a
    /// block lies outside its buffer; HCCL's error.
    #[doc(alias = "HcclAlltoAllV")]
    #[allow(clippy::too_many_arguments)]
    pub fn all_to_all_v<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        send_counts: &[u64],
        send_displs: &[u64],
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        recv_counts: &[u64],
        recv_displs: &[u64],
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_to_all_v";
        self.check_v(F, send_counts, send_displs, send.len(), "send")?;
        self.check_v(F, recv_counts, recv_displs, recv.len(), "recv")?;
        let dt = T::DATA_TYPE.raw();
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: buffers and arrays of the checked lengths.
            unsafe {
                result::allto_all_v(
                    s,
                    send_counts.as_ptr().cast(),
                    send_displs.as_ptr().cast(),
                    dt,
                    r,
                    recv_counts.as_ptr().cast(),
                    recv_displs.as_ptr().cast(),
                    dt,
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    /// All-to-all from one matrix every rank shares: `matrix[i * ranks + j]`
    /// elements go from rank `i` to rank `j`, packed in rank order in both
    /// `send` and `recv`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the matrix is not ranks × ranks, this
    /// rank's row or column sum overflows `u64`, or a buffer is shorter than
    /// its row (send) or column (recv) sum.
    #[doc(alias = "HcclAlltoAllVC")]
    pub fn all_to_all_vc<T: HcclType>(
        &self,
        send: &(impl DeviceMemory<T> + ?Sized),
        matrix: &[u64],
        recv: &mut (impl DeviceMemoryMut<T> + ?Sized),
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::all_to_all_vc";
        let n = self.size() as usize;
        let entries = n.checked_mul(n);
        if entries != Some(matrix.len()) {
            return Err(Error::invalid(
                F,
                format!(
                    "the matrix has {} entries, not ranks² = {}",
                    matrix.len(),
                    entries.map_or_else(|| format!("{n}²"), |e| e.to_string())
                ),
            ));
        }
        let me = self.rank() as usize;
        let overflow = |what: &str| {
            Error::invalid(
                F,
                format!("the matrix's {what} of rank {me} adds up to more than u64::MAX elements"),
            )
        };
        // Rows of n entries (n >= 1: this rank is one of them).
        let rows = || matrix.chunks_exact(n.max(1));
        let row = rows()
            .nth(me)
            .unwrap_or_default()
            .iter()
            .try_fold(0u64, |sum, &c| sum.checked_add(c))
            .ok_or_else(|| overflow("row (what it sends)"))?;
        let col = rows()
            .filter_map(|r| r.get(me))
            .try_fold(0u64, |sum, &c| sum.checked_add(c))
            .ok_or_else(|| overflow("column (what it receives)"))?;
        if row > len_u64(send.len()) || col > len_u64(recv.len()) {
            return Err(Error::invalid(
                F,
                format!(
                    "this rank sends {row} and receives {col} elements, but send has {} and recv {}",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let dt = T::DATA_TYPE.raw();
        self.issue_send_recv(F, stream, send, recv, |s, r| {
            // SAFETY: buffers of the checked lengths, a matrix of n² u64.
            unsafe {
                result::allto_all_vc(
                    s,
                    matrix.as_ptr().cast(),
                    dt,
                    r,
                    dt,
                    self.as_raw(),
                    stream.as_raw(),
                )
            }
        })
    }

    fn check_peer(&self, f: &'static str, peer: u32) -> Result<()> {
        if peer >= self.size() || peer == self.rank() {
            return Err(Error::invalid(
                f,
                format!(
                    "peer {peer} must be another rank of the communicator (0..{}, not {})",
                    self.size(),
                    self.rank()
                ),
            ));
        }
        Ok(())
    }

    /// Sends `buf` to rank `peer`, which must [`Comm::recv`] as many
    /// elements of the same type. Blocks the stream until the receiver is
    /// ready: a pair of ranks that both send first deadlocks unless the
    /// calls are in a [`group`] or a [`Comm::batch_send_recv`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a peer out of range or this rank; as
    /// [`Comm::all_reduce`].
    #[doc(alias = "HcclSend")]
    pub fn send<T: HcclType>(
        &self,
        buf: &(impl DeviceMemory<T> + ?Sized),
        peer: u32,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::send";
        self.check_peer(F, peer)?;
        let p = buf.device_ptr().cast_mut();
        let a = buf.read_access();
        self.issue_one_buffer(F, stream, result::send, (buf, p, a), peer)
    }

    /// Receives `buf.len()` elements from rank `peer`.
    ///
    /// # Errors
    ///
    /// As [`Comm::send`].
    #[doc(alias = "HcclRecv")]
    pub fn recv<T: HcclType>(
        &self,
        buf: &mut (impl DeviceMemoryMut<T> + ?Sized),
        peer: u32,
        stream: &Stream,
    ) -> Result<()> {
        const F: &str = "Comm::recv";
        self.check_peer(F, peer)?;
        let p = buf.device_ptr_mut();
        let a = buf.write_access();
        self.issue_one_buffer(F, stream, result::recv, (buf, p, a), peer)
    }

    /// Runs several sends and receives as one operation, in an order that
    /// cannot deadlock.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for no operations or a peer out of range;
    /// as [`Comm::all_reduce`].
    #[doc(alias = "HcclBatchSendRecv")]
    pub fn batch_send_recv(&self, ops: &mut [P2pOp<'_>], stream: &Stream) -> Result<()> {
        const F: &str = "Comm::batch_send_recv";
        if ops.is_empty() {
            return Err(Error::invalid(F, "no operations"));
        }
        for op in ops.iter() {
            self.check_peer(F, op.peer)?;
        }
        let mut items: Vec<raw::HcclSendRecvItem> = ops
            .iter()
            .map(|op| raw::HcclSendRecvItem {
                sendRecvType: if op.send {
                    raw::HCCL_SEND
                } else {
                    raw::HCCL_RECV
                },
                buf: op.ptr,
                count: len_u64(op.len),
                dataType: op.data_type.raw(),
                remoteRank: op.peer,
            })
            .collect();
        let uses: Vec<(&str, Access)> =
            ops.iter().map(|op| ("buffer", op.access.clone())).collect();
        let n = items.len() as u32;
        self.issue(F, stream, uses, || {
            // SAFETY: `items` describes live device buffers, borrowed by `ops`.
            unsafe {
                result::batch_send_recv(items.as_mut_ptr(), n, self.as_raw(), stream.as_raw())
            }
        })
    }

    /// Completes on each rank once every rank has reached it.
    ///
    /// # Errors
    ///
    /// As [`Comm::all_reduce`].
    #[doc(alias = "HcclBarrier")]
    pub fn barrier(&self, stream: &Stream) -> Result<()> {
        self.issue("Comm::barrier", stream, Vec::new(), || {
            // SAFETY: live handles.
            unsafe { result::barrier(self.as_raw(), stream.as_raw()) }
        })
    }
}

/// One send or receive of [`Comm::batch_send_recv`], borrowing its buffer.
///
/// `Send + Sync` like the buffers it borrows.
#[derive(Debug)]
pub struct P2pOp<'a> {
    send: bool,
    ptr: *mut c_void,
    len: usize,
    data_type: DataType,
    peer: u32,
    access: Access,
    _buf: PhantomData<&'a mut ()>,
}

// SAFETY: the pointer is device memory the host never dereferences, borrowed
// for 'a like the DeviceBuffer it came from (which is Send + Sync).
unsafe impl Send for P2pOp<'_> {}
// SAFETY: as above; shared access only reads the fields.
unsafe impl Sync for P2pOp<'_> {}

impl<'a> P2pOp<'a> {
    /// Sends `buf` to `peer`.
    pub fn send<T: HcclType>(buf: &'a (impl DeviceMemory<T> + ?Sized), peer: u32) -> P2pOp<'a> {
        P2pOp {
            send: true,
            ptr: buf.device_ptr().cast_mut(),
            len: buf.len(),
            data_type: T::DATA_TYPE,
            peer,
            access: buf.read_access(),
            _buf: PhantomData,
        }
    }

    /// Receives `buf.len()` elements from `peer` into `buf`.
    pub fn recv<T: HcclType>(
        buf: &'a mut (impl DeviceMemoryMut<T> + ?Sized),
        peer: u32,
    ) -> P2pOp<'a> {
        let access = buf.write_access();
        P2pOp {
            send: false,
            ptr: buf.device_ptr_mut(),
            len: buf.len(),
            data_type: T::DATA_TYPE,
            peer,
            access,
            _buf: PhantomData,
        }
    }

    /// The other rank.
    pub fn peer(&self) -> u32 {
        self.peer
    }

    /// Whether this is a send.
    pub fn is_send(&self) -> bool {
        self.send
    }
}

/// Runs `f` inside `HcclGroupStart`/`HcclGroupEnd`: the sends and receives
/// it issues (on this thread) are queued together, so their order cannot
/// deadlock. The group is ended even when `f` fails.
///
/// # Errors
///
/// `f`'s error, else HCCL's error from starting or ending the group.
#[doc(alias = "HcclGroupStart")]
#[doc(alias = "HcclGroupEnd")]
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    result::group_start()?;
    GROUP.with(|g| g.borrow_mut().0 += 1);
    let guard = OpenGroup { ended: false };
    let out = f();
    let ended = guard.end();
    let value = out?;
    ended.map(|()| value)
}

/// A group started on this thread: ended exactly once, by [`OpenGroup::end`]
/// or, if the closure panicked, by its drop.
struct OpenGroup {
    ended: bool,
}

impl OpenGroup {
    fn end(mut self) -> Result<()> {
        self.ended = true;
        end_group()
    }
}

impl Drop for OpenGroup {
    fn drop(&mut self) {
        if !self.ended
            && let Err(e) = end_group()
        {
            crate::release::record("group", e);
        }
    }
}

/// Ends the innermost group. At the outermost one, where HCCL queues the
/// group's sends and receives, their streams first wait for the accesses
/// the memory conflicts with, and the new accesses are recorded after.
fn end_group() -> Result<()> {
    let owed = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        g.0 = g.0.saturating_sub(1);
        if g.0 == 0 {
            std::mem::take(&mut g.1)
        } else {
            Vec::new()
        }
    });
    let mut prepared = Vec::with_capacity(owed.len());
    let mut unordered = Vec::new();
    let mut ordering = Ok(());
    for (stream, uses) in &owed {
        match acl::memory::prepare(stream, uses.as_slice()) {
            Ok(p) => prepared.push(p),
            Err(e) => {
                // The device-side wait failed: wait on the host for what
                // these uses conflict with (on whichever device), so that
                // nothing the group queues can race with earlier work.
                for u in uses {
                    if let Err(e2) = u.wait_on_host() {
                        ordering = ordering.and(Err(Error::Acl(e2)));
                    }
                }
                ordering = ordering.and(Err(Error::Acl(e)));
                unordered.push((stream, uses));
            }
        }
    }
    // Ends the group started by `group`.
    let ended = result::group_end();
    // Queued (or not, on failure: recording extra accesses is harmless).
    for p in prepared {
        p.commit();
    }
    for (stream, uses) in unordered {
        acl::memory::record(stream, uses);
    }
    ended.and(ordering)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(e: Error) -> (&'static str, String) {
        match e {
            Error::InvalidArgument { function, reason } => (function, reason),
            other => panic!("expected InvalidArgument, got {other}"),
        }
    }

    #[test]
    fn buffer_lengths_times_ranks_are_checked_not_wrapped() {
        assert_eq!(times_ranks("Comm::all_gather", "send", 4, 2).unwrap(), 8);
        assert_eq!(
            times_ranks("Comm::all_gather", "send", 0, u32::MAX).unwrap(),
            0
        );
        let e = times_ranks("Comm::all_gather", "send", usize::MAX / 2 + 1, 2).unwrap_err();
        assert_eq!(
            reason(e),
            (
                "Comm::all_gather",
                format!(
                    "send × ranks = {} × 2 elements is more than usize::MAX",
                    usize::MAX / 2 + 1
                )
            )
        );
    }
}
