//! The device buffers of a collective: validated when the call is made, and
//! again (still the same live allocation) every time the task touches them.
//!
//! A collective waits for its peers without holding the allocation table's
//! lock, so device memory is only touched in short, locked steps: copy a
//! piece out, reduce a received piece in, write a piece. Memory freed (or
//! reallocated) after the call but before the task is done is a fault of the
//! task (`ACL_ERROR_RT_SYS_DMA`, as for queued copies).

use super::error::{ErrorKind, Fail};
use super::reduce::{DataType, ReduceOp};
use crate::state::{self, MemTable, Region};

/// A device range a collective reads or writes.
#[derive(Debug, Clone, Copy)]
pub struct Mem {
    /// First address.
    pub addr: usize,
    /// Bytes.
    pub len: usize,
    /// The allocation it lay in at the call (`None` for an empty range).
    alloc: Option<u64>,
    /// The parameter's name, for messages.
    pub role: &'static str,
}

impl Mem {
    /// Validates a buffer argument of `function`: `len` bytes at `addr`
    /// (not null unless empty), device memory of `device`, aligned to
    /// `align` bytes. An empty range may be anywhere.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Para`] for memory that is not device memory of `device`
    /// (host memory, another device, freed, past the end of its allocation)
    /// or misaligned.
    pub fn arg(
        function: &str,
        role: &'static str,
        addr: usize,
        len: usize,
        device: u32,
        align: usize,
    ) -> Result<Mem, Fail> {
        if len == 0 {
            return Ok(Mem {
                addr,
                len: 0,
                alloc: None,
                role,
            });
        }
        let para = |msg: String| Fail::new(ErrorKind::Para, msg);
        if !addr.is_multiple_of(align) {
            return Err(para(format!(
                "{role} {addr:#x} is not aligned to the element size ({align} bytes)"
            )));
        }
        let region = crate::check::range(&state::memory().read(), function, role, addr, len)
            .map_err(|e| para(format!("{role}: {e}")))?;
        match region {
            Region::Device { device: d, id, .. } if d == device => Ok(Mem {
                addr,
                len,
                alloc: Some(id),
                role,
            }),
            Region::Device { device: d, .. } => Err(para(format!(
                "{role} {addr:#x} is memory of device {d}, but the communicator's rank runs on \
                 device {device}"
            ))),
            other => Err(para(format!(
                "{role} {addr:#x} ({len} bytes) is not device memory: it is {other}"
            ))),
        }
    }

    /// Whether two ranges overlap.
    pub fn overlaps(&self, other: &Mem) -> bool {
        self.len > 0
            && other.len > 0
            && self.addr < other.addr + other.len
            && other.addr < self.addr + self.len
    }

    fn check(&self, table: &MemTable, off: usize, len: usize) -> Result<usize, Fail> {
        if off + len > self.len {
            return Err(Fail::new(
                ErrorKind::Internal,
                format!(
                    "internal: {} access [{off}, {}) past its {} bytes",
                    self.role,
                    off + len,
                    self.len
                ),
            ));
        }
        // From the buffer's first byte, so that a buffer spanning adjacent
        // virtual-memory mappings is still recognised by its first one.
        match table.check_range(self.addr, off + len) {
            Ok(r) if r.alloc_id().is_some() && r.alloc_id() == self.alloc => Ok(self.addr + off),
            _ => Err(Fail {
                kind: ErrorKind::Memory,
                msg: format!(
                    "{} {:#x} ({} bytes) was freed before the collective used it",
                    self.role, self.addr, self.len
                ),
                memory: true,
                remote: false,
            }),
        }
    }

    /// Copies `len` bytes at `off` out.
    ///
    /// # Errors
    ///
    /// A memory fault when the buffer was freed.
    pub fn read(&self, off: usize, len: usize) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::with_capacity(len);
        if len == 0 {
            return Ok(out);
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, len)?;
        // SAFETY: `[addr, addr + len)` lies in a live allocation (checked
        // just now, kept alive by the read lock); `out` has room for `len`
        // bytes, all written before `set_len`.
        unsafe {
            std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), len);
            out.set_len(len);
        }
        Ok(out)
    }

    /// Copies `dst.len()` bytes at `off` into `dst`.
    ///
    /// # Errors
    ///
    /// A memory fault when the buffer was freed.
    pub fn read_into(&self, off: usize, dst: &mut [u8]) -> Result<(), Fail> {
        if dst.is_empty() {
            return Ok(());
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, dst.len())?;
        // SAFETY: a live range of `dst.len()` bytes (checked, lock held);
        // `dst` is host memory, not in the table.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Fills `len` bytes at `off` from `remote` in process `pid` (a direct
    /// link's DMA, see [`super::local`]); `fail` turns the OS error into the
    /// collective's failure.
    ///
    /// # Errors
    ///
    /// A memory fault when this buffer was freed, `fail(error)` when the
    /// remote range cannot be read.
    pub fn pull(
        &self,
        off: usize,
        len: usize,
        pid: u32,
        remote: usize,
        fail: impl FnOnce(std::io::Error) -> Fail,
    ) -> Result<(), Fail> {
        if len == 0 {
            return Ok(());
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, len)?;
        // SAFETY: `[addr, addr + len)` is a live allocation (checked, kept
        // alive by the read lock), written only through this raw pointer.
        unsafe { super::local::read_raw(pid, remote, addr as *mut u8, len) }.map_err(fail)
    }

    /// Copies `len` bytes of device memory at `src` (another rank's buffer
    /// in this process) to `off`; `fail(why)` when `src` is not (or no
    /// longer) device memory.
    ///
    /// # Errors
    ///
    /// A memory fault when this buffer was freed, `fail(why)` for `src`.
    pub fn copy_from_device(
        &self,
        off: usize,
        src: usize,
        len: usize,
        fail: impl FnOnce(&str) -> Fail,
    ) -> Result<(), Fail> {
        if len == 0 {
            return Ok(());
        }
        let table = state::memory().read();
        let to = self.check(&table, off, len)?;
        match table.check_range(src, len) {
            Ok(Region::Device { .. }) => {}
            _ => return Err(fail("it is no longer device memory")),
        }
        // SAFETY: both ranges are live (checked, lock held); `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, to as *mut u8, len) };
        Ok(())
    }

    /// Writes `data` at `off` with streaming (cache-bypassing) stores: for
    /// results nobody on this core reads again soon.
    ///
    /// # Errors
    ///
    /// A memory fault when the buffer was freed.
    pub fn write_stream(&self, off: usize, data: &[u8]) -> Result<(), Fail> {
        if data.is_empty() {
            return Ok(());
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, data.len())?;
        // SAFETY: as in `write`.
        unsafe { stream_copy(data.as_ptr(), addr as *mut u8, data.len()) };
        Ok(())
    }

    /// Writes `data` at `off`.
    ///
    /// # Errors
    ///
    /// A memory fault when the buffer was freed.
    pub fn write(&self, off: usize, data: &[u8]) -> Result<(), Fail> {
        if data.is_empty() {
            return Ok(());
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, data.len())?;
        // SAFETY: as in `read`; `data` is host memory, not in the table.
        unsafe { std::ptr::copy(data.as_ptr(), addr as *mut u8, data.len()) };
        Ok(())
    }

    /// `acc = acc op self[off..]` (the buffer is only read).
    ///
    /// # Errors
    ///
    /// A memory fault when the buffer was freed.
    pub fn reduce_into(
        &self,
        off: usize,
        acc: &mut [u8],
        dt: DataType,
        op: ReduceOp,
    ) -> Result<(), Fail> {
        if acc.is_empty() {
            return Ok(());
        }
        let table = state::memory().read();
        let addr = self.check(&table, off, acc.len())?;
        // SAFETY: a live range of `acc.len()` bytes (checked, lock held);
        // only read while the slice lives, and `acc` is host memory.
        let mine = unsafe { std::slice::from_raw_parts(addr as *const u8, acc.len()) };
        super::reduce::reduce(dt, op, acc, mine);
        Ok(())
    }

    /// Copies `len` bytes at `off` to `dst` at `dst_off` (device to device).
    ///
    /// # Errors
    ///
    /// A memory fault when either buffer was freed.
    pub fn copy_to(&self, off: usize, dst: &Mem, dst_off: usize, len: usize) -> Result<(), Fail> {
        if len == 0 {
            return Ok(());
        }
        let table = state::memory().read();
        let src = self.check(&table, off, len)?;
        let to = dst.check(&table, dst_off, len)?;
        // SAFETY: both ranges are live (checked, lock held); `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, to as *mut u8, len) };
        Ok(())
    }
}

/// Copies `len` bytes from `src` to `dst` with non-temporal stores where the
/// CPU has them (x86-64: SSE2 `movntdq`), so that a large copy does not read
/// every destination line first.
///
/// # Safety
///
/// `src` readable and `dst` writable for `len` bytes; the ranges do not
/// overlap.
pub unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // Plain copy up to the first 16-byte aligned destination address.
        let head = dst.align_offset(16).min(len);
        // SAFETY: inside the caller's ranges.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let body = (len - head) / 16;
        for i in 0..body {
            // SAFETY: `dst + head` is 16-byte aligned, every 16-byte step
            // stays inside the ranges (`body` whole steps fit); SSE2 is part
            // of x86-64.
            unsafe {
                let v = _mm_loadu_si128(src.add(head + i * 16).cast::<__m128i>());
                _mm_stream_si128(dst.add(head + i * 16).cast::<__m128i>(), v);
            }
        }
        let done = head + body * 16;
        // SAFETY: the tail inside the ranges; the fence orders the streaming
        // stores before anything this thread does next.
        unsafe {
            std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
            _mm_sfence();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: per the contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}
