//! [`PinnedPool`]: a cache of page-locked host memory.
//!
//! `aclrtMallocHost` pins pages with the kernel and maps them for the
//! device: it costs far more than `malloc`, and a data loader that pins a
//! fresh staging buffer per batch pays it every time. torch_npu keeps freed
//! pinned blocks in a caching host allocator for that reason; this pool
//! does the same for [`PinnedHostBuffer`]s: a block comes back to the pool
//! when its buffer is dropped **and** the copies queued on it have run (the
//! buffer's access record decides, as for any free), and the next buffer of
//! the same size class reuses it.
//!
//! Sizes are rounded up to a power of two (at least 4 KiB), so a block
//! serves every request of its class. The pool frees its cached blocks when
//! [`PinnedPool::empty_cache`] is called and when the pool and every buffer
//! made from it are gone.

use super::DeviceRepr;
use super::PinnedHostBuffer;
use super::track::Backing;
use crate::error::{Error, Result};
use crate::{Device, release, result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// The smallest block, in bytes.
const MIN_BLOCK: usize = 4096;

/// Figures of a [`PinnedPool`].
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedPoolStats {
    /// Bytes of blocks held by live buffers or waiting for their copies.
    pub in_use_bytes: usize,
    /// Bytes of free blocks kept for reuse.
    pub cached_bytes: usize,
    /// `aclrtMallocHost` calls made.
    pub host_allocations: u64,
    /// Buffers served from a cached block.
    pub reuses: u64,
}

/// The state shared by a pool and the buffers it made.
pub(crate) struct PoolInner {
    device: Device,
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    /// Free blocks by size class: their addresses.
    free: HashMap<usize, Vec<usize>>,
    stats: PinnedPoolStats,
}

impl PoolInner {
    /// A block whose accesses have all finished comes back (called by the
    /// release of a [`Backing::PinnedPooled`] allocation).
    pub(crate) fn give_back(&self, ptr: usize, class: usize) {
        let mut st = crate::lock::lock(&self.state);
        st.free.entry(class).or_default().push(ptr);
        st.stats.in_use_bytes -= class;
        st.stats.cached_bytes += class;
    }

    /// Frees the cached blocks.
    fn free_cached(&self) -> Result<()> {
        let blocks: Vec<(usize, Vec<usize>)> = {
            let mut st = crate::lock::lock(&self.state);
            st.stats.cached_bytes = 0;
            st.free.drain().collect()
        };
        if blocks.is_empty() {
            return Ok(());
        }
        self.device.bind()?;
        let mut first = Ok(());
        for ptr in blocks.into_iter().flat_map(|(_, v)| v) {
            // SAFETY: a block from `aclrtMallocHost`, free (no buffer holds
            // it, its copies have run), taken out of the pool: freed once.
            if let Err(e) = unsafe { result::free_host(ptr as *mut c_void) } {
                first = first.and(Err(e));
            }
        }
        first
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        if let Err(e) = self.free_cached() {
            release::record("PinnedPool", e);
        }
    }
}

/// A cache of pinned host memory for [`PinnedHostBuffer`]s: a block comes
/// back when its buffer is dropped and the copies queued on it have run,
/// and serves the next buffer of its power-of-two size class.
///
/// Cloning gives another handle to the same pool. `Send + Sync`: the state
/// is behind a lock.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::{Device, Runtime, memory::PinnedPool};
/// let npu = Device::new(&Runtime::init()?, 0)?;
/// let pool = PinnedPool::new(&npu);
/// let stream = npu.new_stream()?;
/// for batch in 0..3u32 {
///     let staging = pool.from_slice(&[batch; 1024])?;
///     let on_device = stream.clone_from_pinned(&staging)?;
///     drop(staging); // back to the pool once the copy has run,
///     stream.synchronize()?; // which it has here
///     # let _ = on_device;
/// }
/// assert_eq!(pool.stats().host_allocations, 1);
/// # Ok::<(), acl::Error>(())
/// ```
#[derive(Clone)]
pub struct PinnedPool {
    inner: Arc<PoolInner>,
}

impl std::fmt::Debug for PinnedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedPool")
            .field("device", &self.inner.device.ordinal())
            .field("stats", &self.stats())
            .finish()
    }
}

impl PinnedPool {
    /// An empty pool for copies with `device`.
    pub fn new(device: &Device) -> PinnedPool {
        PinnedPool {
            inner: Arc::new(PoolInner {
                device: device.clone(),
                state: Mutex::new(PoolState::default()),
            }),
        }
    }

    /// The pool's figures.
    pub fn stats(&self) -> PinnedPoolStats {
        crate::lock::lock(&self.inner.state).stats
    }

    /// `len` elements set to zero bytes, from a cached block or a new one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size overflows;
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the host cannot pin
    /// a new block.
    #[doc(alias = "aclrtMallocHost")]
    pub fn zeroed<T: DeviceRepr>(&self, len: usize) -> Result<PinnedHostBuffer<T>> {
        const F: &str = "PinnedPool::zeroed";
        let bytes = super::buffer::byte_len::<T>(F, len)?;
        if bytes == 0 {
            return PinnedHostBuffer::zeroed(&self.inner.device, 0);
        }
        let class = bytes
            .max(MIN_BLOCK)
            .checked_next_power_of_two()
            .ok_or_else(|| Error::invalid(F, format!("{bytes} bytes")))?;
        let cached = {
            let mut st = crate::lock::lock(&self.inner.state);
            let hit = st.free.get_mut(&class).and_then(Vec::pop);
            if hit.is_some() {
                st.stats.cached_bytes -= class;
                st.stats.reuses += 1;
            }
            st.stats.in_use_bytes += class;
            hit
        };
        let ptr = match cached {
            Some(p) => p as *mut c_void,
            None => {
                let made = self
                    .inner
                    .device
                    .bind()
                    .and_then(|()| result::malloc_host(class));
                match made {
                    Ok(p) => {
                        crate::lock::lock(&self.inner.state).stats.host_allocations += 1;
                        p
                    }
                    Err(e) => {
                        crate::lock::lock(&self.inner.state).stats.in_use_bytes -= class;
                        return Err(e);
                    }
                }
            }
        };
        // SAFETY: a block of `class >= bytes` bytes from `aclrtMallocHost`
        // (aligned for any primitive), used by nothing else: new, or free
        // with every queued copy of its last buffer finished.
        Ok(unsafe {
            PinnedHostBuffer::from_block(
                &self.inner.device,
                ptr,
                len,
                Backing::PinnedPooled(self.inner.clone(), class),
            )
        })
    }

    /// Pinned memory holding a copy of `data`, from the pool.
    ///
    /// # Errors
    ///
    /// As [`PinnedPool::zeroed`].
    pub fn from_slice<T: DeviceRepr>(&self, data: &[T]) -> Result<PinnedHostBuffer<T>> {
        let mut buf = self.zeroed(data.len())?;
        buf.as_mut_slice()?.copy_from_slice(data);
        Ok(buf)
    }

    /// Frees the cached blocks (blocks of live buffers come back later).
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtFreeHost`; the blocks are out of the
    /// pool either way.
    #[doc(alias = "aclrtFreeHost")]
    pub fn empty_cache(&self) -> Result<()> {
        self.inner.free_cached()
    }
}
