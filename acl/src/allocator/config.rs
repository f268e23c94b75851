//! Sizes, rounding and the validated configuration.
//!
//! Every constant is torch_npu's (`NPUCachingAllocator.cpp`, anonymous
//! namespace at the top), which took them from PyTorch's
//! `CUDACachingAllocator`.

use crate::error::{Error, Result};

const MIB: usize = 1024 * 1024;

/// Every block size is a multiple of this, and no block is smaller
/// (torch_npu `kMinBlockSize`).
pub const MIN_BLOCK_SIZE: usize = 512;
/// Every block's address is a multiple of this (512 bytes): the alignment
/// the driver gives `aclrtMalloc`'s memory (the runtime asks `halMemAlloc`
/// for 2^9 bytes, `MEM_SET_ALIGN_SIZE(9ULL)` in hicann/runtime
/// `src/runtime/driver/npu_driver_standard_soc.cc`; the API reference
/// promises only 64), which blocks keep since they are carved from a
/// segment's base at multiples of [`MIN_BLOCK_SIZE`].
pub const ALIGNMENT: usize = 512;
const _: () = assert!(MIN_BLOCK_SIZE.is_multiple_of(ALIGNMENT));

/// The largest request (after rounding) served by the small pool
/// (torch_npu `kSmallSize`, 1 MiB).
pub const SMALL_SIZE: usize = MIB;
/// Default size of a small-pool segment (torch_npu `kSmallBuffer`, 2 MiB).
pub const SMALL_BUFFER: usize = 2 * MIB;
/// Default size of a large-pool segment for requests below
/// [`MIN_LARGE_ALLOC`] (torch_npu `kLargeBuffer`, 20 MiB).
pub const LARGE_BUFFER: usize = 20 * MIB;
/// Requests (after rounding) from [`SMALL_SIZE`] up to, not including, this
/// share large segments; larger ones get a segment of their own
/// (torch_npu `kMinLargeAlloc`, 10 MiB).
pub const MIN_LARGE_ALLOC: usize = 10 * MIB;
/// Own segments of large requests are rounded up to a multiple of this
/// (torch_npu `kRoundLarge`, 2 MiB).
pub const ROUND_LARGE: usize = 2 * MIB;
/// Bytes added to every request before rounding (torch_npu `AddPadSize()`:
/// 32 on every SoC except Ascend 950 with CANN ≥ 9.1.0, where it is 0). It
/// mirrors the 32 bytes `aclrtMalloc` adds itself, which kernels may touch
/// past the end of a tensor.
pub const DEFAULT_PADDING: usize = 32;
/// A cached block of `max_split_size` or more serves a request of that size
/// class only if it is less than this much larger (torch_npu reuses
/// `kLargeBuffer` for the limit in `get_free_block`).
pub const OVERSIZE_SLACK: usize = LARGE_BUFFER;
/// Bounds of [`AllocatorConfig::large_segment_size`] (torch_npu
/// `segment_size_mb`: 20 to 512 MiB).
pub const LARGE_SEGMENT_RANGE: (usize, usize) = (20 * MIB, 512 * MIB);
/// Largest accepted [`AllocatorConfig::padding`].
pub const MAX_PADDING: usize = MIN_BLOCK_SIZE;

/// The caching allocator's settings (torch_npu's `PYTORCH_NPU_ALLOC_CONF`
/// subset that applies to plain segments).
///
/// Build it from [`Default`] and change fields; the allocator checks it with
/// [`AllocatorConfig::validate`] when it is created.
///
/// ```
/// use acl::allocator::AllocatorConfig;
/// let config = AllocatorConfig {
///     max_split_size: Some(256 << 20),
///     ..AllocatorConfig::default()
/// };
/// config.validate()?;
/// # Ok::<(), acl::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocatorConfig {
    /// Blocks of this size or more are never split, and a request below it is
    /// never served by such a block (torch_npu `max_split_size_mb`). `None`,
    /// the default, means no limit. Must be larger than
    /// [`large_segment_size`](Self::large_segment_size) (torch_npu: "too
    /// small, must be > 20" MiB).
    pub max_split_size: Option<usize>,
    /// Size of the segments small requests are packed into. Default
    /// [`SMALL_BUFFER`] (2 MiB). A multiple of [`MIN_BLOCK_SIZE`], at least
    /// [`SMALL_SIZE`].
    pub small_segment_size: usize,
    /// Size of the segments that requests from 1 MiB to 10 MiB share. Default
    /// [`LARGE_BUFFER`] (20 MiB). A multiple of [`MIN_BLOCK_SIZE`] within
    /// [`LARGE_SEGMENT_RANGE`].
    pub large_segment_size: usize,
    /// Bytes added to each request before rounding. Default
    /// [`DEFAULT_PADDING`] (32); at most [`MAX_PADDING`].
    pub padding: usize,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            max_split_size: None,
            small_segment_size: SMALL_BUFFER,
            large_segment_size: LARGE_BUFFER,
            padding: DEFAULT_PADDING,
        }
    }
}

fn bad(reason: String) -> Error {
    Error::invalid("AllocatorConfig", reason)
}

impl AllocatorConfig {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the first bad field.
    pub fn validate(&self) -> Result<()> {
        let small = self.small_segment_size;
        if small < SMALL_SIZE || !small.is_multiple_of(MIN_BLOCK_SIZE) {
            return Err(bad(format!(
                "small_segment_size {small} must be a multiple of {MIN_BLOCK_SIZE} and at least {SMALL_SIZE}"
            )));
        }
        let large = self.large_segment_size;
        let (lo, hi) = LARGE_SEGMENT_RANGE;
        if !(lo..=hi).contains(&large) || !large.is_multiple_of(MIN_BLOCK_SIZE) {
            return Err(bad(format!(
                "large_segment_size {large} must be a multiple of {MIN_BLOCK_SIZE} within [{lo}, {hi}]"
            )));
        }
        match self.max_split_size {
            Some(max) if max <= large => {
                return Err(bad(format!(
                    "max_split_size {max} must be larger than large_segment_size {large}"
                )));
            }
            _ => {}
        }
        if self.padding > MAX_PADDING {
            return Err(bad(format!(
                "padding {} must be at most {MAX_PADDING}",
                self.padding
            )));
        }
        Ok(())
    }

    /// `max_split_size`, with `usize::MAX` for no limit.
    pub(crate) fn split_limit(&self) -> usize {
        self.max_split_size.unwrap_or(usize::MAX)
    }

    /// The block size for a request of `bytes`: `bytes + padding` rounded up
    /// to a multiple of [`MIN_BLOCK_SIZE`] (torch_npu `round_size`). A request
    /// of 0 bytes gets the smallest block.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the result would overflow `usize`.
    #[inline]
    pub fn round_size(&self, bytes: usize) -> Result<usize> {
        bytes
            .checked_add(self.padding)
            .and_then(|b| b.checked_next_multiple_of(MIN_BLOCK_SIZE))
            .map(|b| b.max(MIN_BLOCK_SIZE))
            .ok_or_else(|| {
                Error::invalid(
                    "CachingAllocator::allocate",
                    format!("a request of {bytes} bytes overflows the address space"),
                )
            })
    }

    /// The segment size to request from the backend when no cached block
    /// fits a block of `size` bytes (an output of
    /// [`round_size`](Self::round_size)); torch_npu `get_allocation_size`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the result would overflow `usize`.
    pub fn allocation_size(&self, size: usize) -> Result<usize> {
        if size <= SMALL_SIZE {
            Ok(self.small_segment_size)
        } else if size < MIN_LARGE_ALLOC {
            Ok(self.large_segment_size)
        } else {
            size.checked_next_multiple_of(ROUND_LARGE).ok_or_else(|| {
                Error::invalid(
                    "CachingAllocator::allocate",
                    format!("a block of {size} bytes overflows the address space"),
                )
            })
        }
    }
}

/// Which pool a block belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// Blocks of at most [`SMALL_SIZE`], carved from small segments.
    Small = 0,
    /// Everything larger.
    Large = 1,
}

impl PoolKind {
    /// The pool for a block of `size` (rounded) bytes (torch_npu `get_pool`).
    pub fn for_size(size: usize) -> PoolKind {
        if size <= SMALL_SIZE {
            PoolKind::Small
        } else {
            PoolKind::Large
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Formats a byte count like torch's `format_size` ("512 bytes", "1.50 MiB").
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    // Precision loss above 2^53 bytes only affects the 2nd decimal of a
    // many-PiB figure.
    #[allow(clippy::cast_precision_loss)]
    let f = bytes as f64;
    if bytes <= KIB {
        format!("{bytes} bytes")
    } else if bytes <= MIB {
        format!("{:.2} KiB", f / KIB as f64)
    } else if bytes <= GIB {
        format!("{:.2} MiB", f / MIB as f64)
    } else {
        format!("{:.2} GiB", f / GIB as f64)
    }
}
