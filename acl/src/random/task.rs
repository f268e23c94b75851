//! The runtime's built-in random-number task (`aclrtRandomNumAsync`): the
//! device's generator engine fills device memory with uniform, normal or
//! truncated-normal numbers, or a dropout bitmask, without an operator.
//!
//! Unlike the [`Generator`](super::Generator)'s operators, whose seed and
//! offset are fixed when the call is made on the host, the task keeps its
//! state in device memory: a [`RandomCounter`] of 16 bytes that each task
//! reads and advances when it runs. So a task captured in a graph draws
//! new numbers at every launch — the way to put dropout or noise inside a
//! captured training step.
//!
//! Availability is the SoC's: the API reference lists Atlas A2 and A3; other
//! SoCs fail with `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000). Element
//! types: uniform numbers of `f32`, `f16`, `bf16`, `i32`, `i64`, `u32`,
//! `u64`; normal numbers and dropout masks of the three float types (other
//! types fail with the runtime's 100000 or 107000).
//!
//! On the simulator the numbers come from its Philox4x32-10 (the counter's
//! low 64 bits are the offset, advanced by 4 per task); the device's bit
//! pattern differs, the distributions do not.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::random::task::{Distribution, RandomCounter};
//! use acl::{Device, Runtime};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let mut counter = RandomCounter::new(&s)?;
//! let mut noise = s.alloc_zeros::<f32>(1000)?;
//! s.random_fill(&mut noise, Distribution::Uniform { low: -1.0, high: 1.0 }, 42, &mut counter)?;
//! let v = noise.to_host_vec()?;
//! assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::Result;
use crate::memory::track::{record_accesses, wait_for_conflicts};
use crate::memory::{DeviceBuffer, DeviceMemory, DeviceMemoryMut, Element};
use crate::result::{self, raw};
use crate::{Error, Stream};

/// What [`Stream::random_fill`] draws.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Distribution<T> {
    /// Uniform in `[low, high)` (integers: each integer of the range equally
    /// likely).
    Uniform {
        /// The smallest value.
        low: T,
        /// The bound above every value.
        high: T,
    },
    /// `mean + std·z`, `z` standard normal.
    Normal {
        /// The mean.
        mean: T,
        /// The standard deviation.
        std: T,
    },
    /// As [`Distribution::Normal`], with `z` within `[-2, 2]`.
    TruncatedNormal {
        /// The mean.
        mean: T,
        /// The standard deviation.
        std: T,
    },
}

/// The generator state the random task reads and advances: 16 bytes of
/// device memory. Successive tasks with one counter (and one seed) draw
/// different numbers; a new counter (or [`RandomCounter::reset`]) repeats
/// them.
#[derive(Debug)]
pub struct RandomCounter {
    state: DeviceBuffer<u64>,
}

impl RandomCounter {
    /// A counter at zero on `stream`'s device.
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc_zeros`].
    pub fn new(stream: &Stream) -> Result<Self> {
        Ok(RandomCounter {
            state: stream.alloc_zeros(2)?,
        })
    }

    /// Sets the counter back to zero (queued on `stream`).
    ///
    /// # Errors
    ///
    /// As [`Stream::memset`].
    pub fn reset(&mut self, stream: &Stream) -> Result<()> {
        stream.memset(&mut self.state, 0)
    }

    /// The 16 bytes, as two little-endian words, copied to the host (waits
    /// for the queued tasks that advance it).
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::to_host_vec`].
    pub fn to_host(&self) -> Result<[u64; 2]> {
        let v = self.state.to_host_vec()?;
        Ok([v[0], v[1]])
    }
}

/// The task's description for `n` elements into `result`.
fn task_info(
    ty: raw::aclDataType,
    func: raw::aclrtRandomNumFuncType,
    params: [&[u8]; 2],
    result: *mut std::ffi::c_void,
    counter: *mut std::ffi::c_void,
    seed: u64,
    n: u64,
) -> raw::aclrtRandomNumTaskInfo {
    let value = |bytes: &[u8]| {
        let mut p = raw::aclrtRandomParaInfo::default();
        p.valueOrAddr[..bytes.len()].copy_from_slice(bytes);
        p.size = bytes.len() as u8;
        p
    };
    let mut func_info = raw::aclrtRandomNumFuncParaInfo {
        funcType: func,
        ..Default::default()
    };
    func_info.paramInfo.uniformDisInfo = raw::aclrtUniformDisInfo {
        min: value(params[0]),
        max: value(params[1]),
    };
    raw::aclrtRandomNumTaskInfo {
        dataType: ty,
        randomNumFuncParaInfo: func_info,
        randomParaAddr: std::ptr::null_mut(),
        randomResultAddr: result,
        randomCounterAddr: counter,
        randomSeed: value(&seed.to_le_bytes()),
        randomNum: value(&n.to_le_bytes()),
        rsv: [0; 8],
    }
}

/// The bytes of one element (`DeviceRepr` types have no padding).
fn bytes_of<T: Element>(v: &T) -> &[u8] {
    // SAFETY: `T: DeviceRepr` is a plain number type without padding, so
    // all `size_of::<T>()` bytes of `v` are initialised.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }
}

impl Stream {
    /// Queues the runtime's random task: fills `dst` with numbers of `dist`
    /// from `seed` and `counter`, and advances the counter.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtRandomNumAsync`: 207000 on a SoC
    /// without the generator, 100000 or 107000 for a type the distribution
    /// does not take (see the [module docs](self)); memory of another device.
    #[doc(alias = "aclrtRandomNumAsync")]
    pub fn random_fill<T: Element>(
        &self,
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
        dist: Distribution<T>,
        seed: u64,
        counter: &mut RandomCounter,
    ) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let (func, a, b) = match &dist {
            Distribution::Uniform { low, high } => {
                (raw::ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, low, high)
            }
            Distribution::Normal { mean, std } => {
                (raw::ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, mean, std)
            }
            Distribution::TruncatedNormal { mean, std } => (
                raw::ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
                mean,
                std,
            ),
        };
        let n = dst.len() as u64;
        let result = dst.device_ptr_mut();
        let info = task_info(
            T::DATA_TYPE.to_raw(),
            func,
            [bytes_of(a), bytes_of(b)],
            result,
            counter.state.device_ptr_mut(),
            seed,
            n,
        );
        let uses = [(dst.allocation(), true), (counter.state.allocation(), true)];
        self.queue_random(&info, &uses)
    }

    /// Queues the runtime's dropout-bitmask task: `elements` bits into
    /// `mask` (least significant first), bit `i` set when element `i` is
    /// kept, which happens with probability `1 − ratio`; advances `counter`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `mask` holds fewer than
    /// `⌈elements / 8⌉` bytes or `ratio` is not in `[0, 1]`; the runtime's
    /// error from `aclrtRandomNumAsync`.
    #[doc(alias = "aclrtRandomNumAsync")]
    pub fn dropout_bitmask(
        &self,
        mask: &mut (impl DeviceMemoryMut<u8> + ?Sized),
        elements: u64,
        ratio: f32,
        seed: u64,
        counter: &mut RandomCounter,
    ) -> Result<()> {
        const F: &str = "Stream::dropout_bitmask";
        if !(0.0..=1.0).contains(&ratio) {
            return Err(Error::invalid(
                F,
                format!("ratio {ratio} is not a fraction in [0, 1]"),
            ));
        }
        let bytes = elements.div_ceil(8);
        if (mask.len() as u64) < bytes {
            return Err(Error::invalid(
                F,
                format!(
                    "{elements} elements need {bytes} mask bytes; the mask has {}",
                    mask.len()
                ),
            ));
        }
        if elements == 0 {
            return Ok(());
        }
        let info = task_info(
            raw::ACL_FLOAT,
            raw::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
            [&ratio.to_le_bytes(), &[0]],
            mask.device_ptr_mut(),
            counter.state.device_ptr_mut(),
            seed,
            elements,
        );
        let uses = [
            (mask.allocation(), true),
            (counter.state.allocation(), true),
        ];
        self.queue_random(&info, &uses)
    }

    fn queue_random(
        &self,
        info: &raw::aclrtRandomNumTaskInfo,
        uses: &[(&std::sync::Arc<crate::memory::Allocation>, bool); 2],
    ) -> Result<()> {
        let seen = wait_for_conflicts(self, uses.iter().copied())?;
        // SAFETY: `info` names live device memory borrowed mutably by the
        // caller for the whole call (the result and the counter), with the
        // lengths the task writes; the accesses recorded below keep both
        // allocated and ordered with their other uses until the task ran.
        unsafe { result::random_num_async(info, self.as_raw(), std::ptr::null_mut())? };
        record_accesses(self, &seen, uses.iter().copied());
        Ok(())
    }
}
