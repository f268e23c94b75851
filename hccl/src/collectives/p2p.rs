//! Point-to-point: send, receive and batches of both.

use super::*;

impl Comm {
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
