//! The collectives proper: all-reduce, broadcast, reduce, gathers, scatters,
//! all-to-all and barrier.

use super::*;

impl Comm {
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
