//! The tensor descriptors (`aclTensor`) of operator arguments, kept per
//! thread for reuse.
//!
//! `aclCreateTensor` copies its arguments (view dims, strides, offset,
//! format, storage dims, data address) into a host-side descriptor, and no
//! function of the aclnn objects API changes one afterwards: the API has no
//! setter for a user's tensor (hicann/opbase `docs/zh/nnopbase/aclnn/`: the
//! objects are created, read by the operators and destroyed). Once the call
//! that used it has returned, a descriptor therefore describes exactly what
//! a new one made from the same arguments would. torch_npu's op-plugin goes
//! further and reruns whole executors over descriptors it keeps
//! (`aclSetAclOpExecutorRepeatable`, its `PTA_ACLNN_CACHE`).
//!
//! Programs call operators over the same buffers again and again (a training
//! step, a decoder layer, the caching allocator handing back the same
//! blocks), so a [`TensorArg`](super::TensorArg) takes an idle descriptor
//! with the same arguments from its thread's cache, and gives it back when
//! dropped, instead of one `aclCreateTensor` and one `aclDestroyTensor` per
//! argument per call. At most [`CAPACITY`] descriptors are kept per thread;
//! an idle one is destroyed when its slot is needed, and the idle ones when
//! the thread ends or at [`release_cached_descriptors`].
//!
//! A lent descriptor is owned by its argument: the argument types are
//! neither `Send` nor `Sync`, so it comes back on the thread that lent it.

use crate::error::Result;
use crate::kept::{self, Kind, Lent, Pool};
use crate::result::{self, raw};
use raw::aclTensor;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::thread::LocalKey;

pub use crate::kept::CAPACITY;

/// The most dimensions (view or storage) a kept descriptor has; larger ones
/// are made and destroyed per call.
const MAX_RANK: usize = 8;

/// `aclCreateTensor`'s arguments, as a descriptor was made from them.
#[derive(Clone, Copy)]
pub(super) struct Key {
    addr: usize,
    dtype: raw::aclDataType,
    format: i32,
    offset: i64,
    rank: u8,
    storage_rank: u8,
    dims: [i64; MAX_RANK],
    strides: [i64; MAX_RANK],
    storage: [i64; MAX_RANK],
}

/// The descriptors' kind of kept object.
pub(super) enum Tensors {}

thread_local! {
    static TENSORS: RefCell<Pool<Tensors>> = const { RefCell::new(Pool::new()) };
}

impl Kind for Tensors {
    type Raw = aclTensor;
    type Key = Key;
    fn pool() -> &'static LocalKey<RefCell<Pool<Self>>> {
        &TENSORS
    }
    fn destroy(raw: NonNull<aclTensor>) {
        // SAFETY: made by `aclCreateTensor`; the pool and its `Lent`s
        // destroy each descriptor once, when nothing else holds it.
        let _ = unsafe { result::destroy_tensor(raw.as_ptr()) };
    }
}

/// A descriptor an argument owns while it lives.
pub(super) type Descriptor = Lent<Tensors>;

/// What [`make`] is asked for, borrowed from the caller.
#[derive(Clone, Copy)]
pub(super) struct Request<'a> {
    pub dtype: raw::aclDataType,
    pub dims: &'a [i64],
    pub strides: &'a [i64],
    pub offset: i64,
    pub format: i32,
    pub storage: &'a [i64],
    pub data: *mut c_void,
}

impl Request<'_> {
    /// Whether a descriptor made from `key` is the one asked for.
    fn is(&self, key: &Key) -> bool {
        let r = usize::from(key.rank);
        let sr = usize::from(key.storage_rank);
        key.addr == self.data as usize
            && r == self.dims.len()
            && r == self.strides.len()
            && sr == self.storage.len()
            && key.dtype == self.dtype
            && key.offset == self.offset
            && key.format == self.format
            // Element by element: these are a few values, where a slice
            // comparison would call `bcmp`.
            && (0..r).all(|i| key.dims[i] == self.dims[i] && key.strides[i] == self.strides[i])
            && (0..sr).all(|i| key.storage[i] == self.storage[i])
    }

    /// The key of this request, when it fits one.
    fn key(&self) -> Option<Key> {
        let fits = |s: &[i64]| s.len() <= MAX_RANK;
        if !(fits(self.dims) && fits(self.strides) && fits(self.storage))
            || self.dims.len() != self.strides.len()
        {
            return None;
        }
        let mut key = Key {
            addr: self.data as usize,
            dtype: self.dtype,
            format: self.format,
            offset: self.offset,
            // Both at most MAX_RANK (checked above).
            rank: self.dims.len() as u8,
            storage_rank: self.storage.len() as u8,
            dims: [0; MAX_RANK],
            strides: [0; MAX_RANK],
            storage: [0; MAX_RANK],
        };
        key.dims[..self.dims.len()].copy_from_slice(self.dims);
        key.strides[..self.strides.len()].copy_from_slice(self.strides);
        key.storage[..self.storage.len()].copy_from_slice(self.storage);
        Some(key)
    }
}

/// The descriptor `req` asks for: an idle one made from the same arguments,
/// or a new one (kept in a free or idle slot when there is one).
///
/// # Errors
///
/// The status of `aclCreateTensor`.
pub(super) fn make(req: Request<'_>) -> Result<Descriptor> {
    Lent::take(
        |key| req.is(key),
        || req.key(),
        || {
            result::create_tensor(
                req.dims,
                req.dtype,
                req.strides,
                req.offset,
                req.format,
                req.storage,
                req.data,
            )
        },
    )
}

/// Destroys the calling thread's idle cached tensor descriptors (those of
/// arguments already dropped), for example before `aclFinalize` or to see
/// the runtime's object count settle. Descriptors of live arguments are
/// destroyed when those are dropped. Returns how many were destroyed.
#[doc(alias = "aclDestroyTensor")]
pub fn release_cached_descriptors() -> usize {
    kept::release_idle::<Tensors>()
}
