//! Random numbers on the device: a [`Generator`] holds a seed and a Philox
//! offset, as torch_npu's `NPUGeneratorImpl` does, and draws with the
//! release's stateless operators (`aclnnInplaceUniform`,
//! `aclnnInplaceNormal`, `aclnnInplaceBernoulli`, `aclnnRandperm`,
//! `aclnnMultinomial`, `aclnnDropout`), each given the generator's
//! `(seed, offset)`.
//!
//! # The (seed, offset) contract
//!
//! Each draw takes the current offset and advances it by 12: the 10 that
//! op-plugin asks for per call (`LEGACY_RAND_COUNTER_OFFSET`,
//! `op_plugin/utils/RandomUtil.h`) rounded up to a multiple of 4, as
//! `NPUGeneratorImpl::philox_engine_inputs` rounds every increment. So:
//!
//! - a seeded run is reproducible: the same calls in the same order draw the
//!   same numbers ([`Generator::set_seed`] restarts the sequence);
//! - two draws never use the same counters, whichever streams or threads
//!   they run on: the offset is taken and advanced under a lock, when the
//!   call is made on the host;
//! - a draw's numbers do not depend on streams or threads, only on
//!   `(seed, offset)`, the shape and the arguments.
//!
//! On the simulator each element reads its own Philox4x32-10 subsequence
//! (`cann_sim::ops::random` states the layout); the device's bit pattern
//! differs, its distributions do not (the tests check mean, variance and a
//! Kolmogorov–Smirnov statistic at fixed seeds).
//!
//! # Graph capture
//!
//! A captured draw would repeat the same numbers at every replay (its
//! `(seed, offset)` are part of the recorded operator). As torch_npu's
//! `philox_engine_inputs` asserts, drawing on a capturing stream is refused.
//! For dropout in a captured training step, draw the mask before each
//! launch ([`Generator::dropout_mask`], queued on the stream: no host
//! synchronisation) and apply it inside the graph ([`dropout_apply`]).
//! Or draw inside the graph with the runtime's random task ([`task`]:
//! [`Stream::dropout_bitmask`] writes the same bit mask layout that
//! `aclnnDropoutDoMask` applies), whose state lives in device memory, so
//! each launch draws new numbers. (The release's
//! `aclnnInplaceUniformTensor`-style operators, which read the seed and
//! offset from device memory as torch_npu does under capture, are not in the
//! operator table yet.)
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, random::Generator};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let g = Generator::new(42);
//! let mut x = Tensor::<f32>::zeros(&s, &[1000])?;
//! g.uniform_(&s, &mut x, -1.0, 1.0)?;
//! let v = x.to_host_vec()?;
//! assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
//! // The same seed and offset give the same numbers.
//! let again = Generator::new(42);
//! let mut y = Tensor::<f32>::zeros(&s, &[1000])?;
//! again.uniform_(&s, &mut y, -1.0, 1.0)?;
//! assert_eq!(y.to_host_vec()?, v);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::Stream;
use crate::aclnn::{self, IntArray, Scalar, TensorArg, TensorArgMut};
use crate::error::{Error, Result};
use crate::graph::CaptureStatus;
use crate::memory::Element;
use crate::tensor::{AsView, AsViewMut, Tensor};
use parking_lot::Mutex;

/// The offset increment op-plugin asks for per random operator
/// (`LEGACY_RAND_COUNTER_OFFSET`, `op_plugin/utils/RandomUtil.h`).
pub const CALL_INCREMENT: u64 = 10;

/// A device random-number generator: a seed and a Philox offset.
///
/// `Send + Sync`: the state is behind a lock, so one generator may be shared
/// by threads and streams; each draw takes its own offset.
#[derive(Debug)]
pub struct Generator {
    state: Mutex<State>,
}

#[derive(Debug, Clone, Copy)]
struct State {
    seed: u64,
    offset: u64,
}

/// The bytes of the bit mask of a dropout over `numel` elements: one bit
/// per element, rounded up to 128 bits (`align(numel, 128) / 8`, the page of
/// `aclnnDropout`).
pub fn dropout_mask_len(numel: usize) -> usize {
    numel.div_ceil(128) * 16
}

fn arg<'a, T: Element>(v: &crate::tensor::TensorView<'a, T>) -> Result<TensorArg<'a>> {
    TensorArg::from_view(v)
}

fn arg_mut<T: Element>(v: crate::tensor::TensorViewMut<'_, T>) -> Result<TensorArgMut<'_>> {
    TensorArgMut::from_view(v)
}

fn as_i64(function: &'static str, what: &str, v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::invalid(function, format!("{what} {v} is above i64::MAX")))
}

impl Generator {
    /// A generator at `seed`, offset 0.
    pub fn new(seed: u64) -> Generator {
        Generator {
            state: Mutex::new(State { seed, offset: 0 }),
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.state.lock().seed
    }

    /// The offset the next draw takes.
    pub fn offset(&self) -> u64 {
        self.state.lock().offset
    }

    /// Restarts the generator at `seed`, offset 0 (torch's `manual_seed`).
    pub fn set_seed(&self, seed: u64) {
        *self.state.lock() = State { seed, offset: 0 };
    }

    /// Sets the offset the next draw takes (torch's `set_offset`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an offset that is not a multiple of 4
    /// (every Philox block has 4 words; torch_npu asserts the same).
    pub fn set_offset(&self, offset: u64) -> Result<()> {
        if !offset.is_multiple_of(4) {
            return Err(Error::invalid(
                "Generator::set_offset",
                format!("offset {offset} is not a multiple of 4"),
            ));
        }
        self.state.lock().offset = offset;
        Ok(())
    }

    /// The `(seed, offset)` of one draw, advancing the offset by `increment`
    /// rounded up to a multiple of 4 (`NPUGeneratorImpl::
    /// philox_engine_inputs`). The offset wraps at 2⁶⁴.
    pub fn philox_engine_inputs(&self, increment: u64) -> (u64, u64) {
        let step = increment.div_ceil(4).wrapping_mul(4);
        let mut st = self.state.lock();
        let drawn = (st.seed, st.offset);
        st.offset = st.offset.wrapping_add(step);
        drawn
    }

    /// The inputs of one operator call on `stream`; refused while the
    /// stream captures (replays would repeat the numbers).
    fn draw(&self, function: &'static str, stream: &Stream) -> Result<(u64, u64)> {
        if stream.capture_status()? != CaptureStatus::None {
            return Err(Error::invalid(
                function,
                "the stream is capturing a graph: a captured draw would repeat the same numbers \
                 at every replay (torch_npu refuses it too); draw outside the capture",
            ));
        }
        Ok(self.philox_engine_inputs(CALL_INCREMENT))
    }

    /// Fills `x` with uniform numbers in `[from, to)` (integer types: the
    /// integers of `[from, to)`, each equally likely).
    ///
    /// # Errors
    ///
    /// The aclnn status of `aclnnInplaceUniform` (161002 for `from > to`
    /// or an element type it does not take); [`Error::InvalidArgument`] on
    /// a capturing stream.
    #[doc(alias = "aclnnInplaceUniform")]
    pub fn uniform_<T: Element>(
        &self,
        stream: &Stream,
        x: &mut impl AsViewMut<T>,
        from: f64,
        to: f64,
    ) -> Result<()> {
        let (seed, offset) = self.draw("Generator::uniform_", stream)?;
        aclnn::uniform_(stream, &mut arg_mut(x.view_mut())?, from, to, seed, offset)
    }

    /// Fills `x` with normal numbers of `mean` and standard deviation
    /// `std`.
    ///
    /// # Errors
    ///
    /// The aclnn status of `aclnnInplaceNormal` (161002 for a negative
    /// `std`, or an element type other than f16, bf16, f32, f64);
    /// [`Error::InvalidArgument`] on a capturing stream.
    #[doc(alias = "aclnnInplaceNormal")]
    pub fn normal_<T: Element>(
        &self,
        stream: &Stream,
        x: &mut impl AsViewMut<T>,
        mean: f32,
        std: f32,
    ) -> Result<()> {
        let (seed, offset) = self.draw("Generator::normal_", stream)?;
        aclnn::normal_(
            stream,
            &mut arg_mut(x.view_mut())?,
            mean,
            std,
            seed as i64,
            offset as i64,
        )
    }

    /// Fills `x` with 1 with probability `p`, else 0.
    ///
    /// # Errors
    ///
    /// The aclnn status of `aclnnInplaceBernoulli` (161002 for `p` outside
    /// `[0, 1]`); [`Error::InvalidArgument`] on a capturing stream.
    #[doc(alias = "aclnnInplaceBernoulli")]
    pub fn bernoulli_<T: Element>(
        &self,
        stream: &Stream,
        x: &mut impl AsViewMut<T>,
        p: f64,
    ) -> Result<()> {
        let prob = Scalar::new(p)?;
        let (seed, offset) = self.draw("Generator::bernoulli_", stream)?;
        aclnn::bernoulli_(
            stream,
            &mut arg_mut(x.view_mut())?,
            &prob,
            seed as i64,
            offset as i64,
        )
    }

    /// A random permutation of `0..n` into `out` (`[n]`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an `out` that is not `[n]`, or on a
    /// capturing stream; the aclnn status of `aclnnRandperm`.
    #[doc(alias = "aclnnRandperm")]
    pub fn randperm<T: Element>(
        &self,
        stream: &Stream,
        n: usize,
        out: &mut impl AsViewMut<T>,
    ) -> Result<()> {
        const F: &str = "Generator::randperm";
        let out = out.view_mut();
        if out.shape() != [n] {
            return Err(Error::invalid(
                F,
                format!("out has shape {:?}, not [{n}]", out.shape()),
            ));
        }
        let n = as_i64(F, "n", n)?;
        let (seed, offset) = self.draw(F, stream)?;
        aclnn::randperm(stream, n, seed as i64, offset as i64, &mut arg_mut(out)?)
    }

    /// [`Generator::randperm`] into a new tensor.
    ///
    /// # Errors
    ///
    /// As [`Generator::randperm`].
    pub fn randperm_new<T: Element>(&self, stream: &Stream, n: usize) -> Result<Tensor<T>> {
        let mut out = Tensor::zeros(stream, &[n])?;
        self.randperm(stream, n, &mut out)?;
        Ok(out)
    }

    /// `num_samples` category indices per row of `probs` (`[C]` or `[N,
    /// C]`, non-negative weights) into `out` (`[num_samples]` or `[N,
    /// num_samples]`), with or without replacement.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `probs` of another rank, `out` of
    /// another shape, `num_samples` 0 or (without replacement) above `C`,
    /// or a capturing stream; the aclnn status of `aclnnMultinomial`.
    /// Weights that are negative, not finite, or too few positive for the
    /// draw are a fault of the kernel, reported by the next synchronisation.
    #[doc(alias = "aclnnMultinomial")]
    pub fn multinomial<T: Element>(
        &self,
        stream: &Stream,
        probs: &impl AsView<T>,
        num_samples: usize,
        replacement: bool,
        out: &mut impl AsViewMut<i64>,
    ) -> Result<()> {
        const F: &str = "Generator::multinomial";
        let (p, out) = (probs.view(), out.view_mut());
        let want = multinomial_shape(F, p.shape(), num_samples, replacement)?;
        if out.shape() != want.as_slice() {
            return Err(Error::invalid(
                F,
                format!(
                    "out has shape {:?}, the draw has shape {want:?}",
                    out.shape()
                ),
            ));
        }
        let k = as_i64(F, "num_samples", num_samples)?;
        let (seed, offset) = self.draw(F, stream)?;
        aclnn::multinomial(
            stream,
            &arg(&p)?,
            k,
            replacement,
            seed as i64,
            offset as i64,
            &mut arg_mut(out)?,
        )
    }

    /// [`Generator::multinomial`] into a new tensor.
    ///
    /// # Errors
    ///
    /// As [`Generator::multinomial`].
    pub fn multinomial_new<T: Element>(
        &self,
        stream: &Stream,
        probs: &impl AsView<T>,
        num_samples: usize,
        replacement: bool,
    ) -> Result<Tensor<i64>> {
        let want = multinomial_shape(
            "Generator::multinomial",
            probs.view().shape(),
            num_samples,
            replacement,
        )?;
        let mut out = Tensor::zeros(stream, &want)?;
        self.multinomial(stream, probs, num_samples, replacement, &mut out)?;
        Ok(out)
    }

    /// Dropout of `x` with probability `p` (`aclnnDropout`): `out` holds the
    /// kept elements scaled by `1 / (1 − p)` and zeros, `mask` the bits
    /// (1: kept; [`dropout_mask_len`] bytes). With `train` false, or `p` 0
    /// or 1, `out` is `x` (zeros for `p = 1`) and `mask` is not written.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an `out` of another shape than `x`, a
    /// `mask` of another length, or a capturing stream; the aclnn status
    /// (161002 for `p` outside `[0, 1]`, an empty or 0-dimensional `x`).
    #[doc(alias = "aclnnDropout")]
    pub fn dropout<T: Element>(
        &self,
        stream: &Stream,
        x: &impl AsView<T>,
        p: f64,
        train: bool,
        out: &mut impl AsViewMut<T>,
        mask: &mut impl AsViewMut<u8>,
    ) -> Result<()> {
        const F: &str = "Generator::dropout";
        let (x, out, mask) = (x.view(), out.view_mut(), mask.view_mut());
        if out.shape() != x.shape() {
            return Err(Error::invalid(
                F,
                format!("out has shape {:?}, x {:?}", out.shape(), x.shape()),
            ));
        }
        let want = dropout_mask_len(x.len());
        if mask.shape() != [want] {
            return Err(Error::invalid(
                F,
                format!(
                    "mask has shape {:?}; a dropout of {} elements needs [{want}] bytes",
                    mask.shape(),
                    x.len()
                ),
            ));
        }
        let (seed, offset) = self.draw(F, stream)?;
        aclnn::dropout(
            stream,
            &arg(&x)?,
            p,
            train,
            seed as i64,
            offset as i64,
            &mut arg_mut(out)?,
            &mut arg_mut(mask)?,
        )
    }

    /// [`Generator::dropout`] into new tensors: the output and the mask.
    ///
    /// # Errors
    ///
    /// As [`Generator::dropout`].
    pub fn dropout_new<T: Element>(
        &self,
        stream: &Stream,
        x: &impl AsView<T>,
        p: f64,
        train: bool,
    ) -> Result<(Tensor<T>, Tensor<u8>)> {
        let x = x.view();
        let mut out = Tensor::zeros(stream, x.shape())?;
        let mut mask = Tensor::zeros(stream, &[dropout_mask_len(x.len())])?;
        self.dropout(stream, &x, p, train, &mut out, &mut mask)?;
        Ok((out, mask))
    }

    /// A dropout bit mask for a tensor of `shape` (`aclnnDropoutGenMask`):
    /// the mask [`Generator::dropout`] would draw at the same offset.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `mask` of another length or a
    /// capturing stream; the aclnn status (161002 for `p` outside `[0,
    /// 1]`).
    #[doc(alias = "aclnnDropoutGenMask")]
    pub fn dropout_mask(
        &self,
        stream: &Stream,
        shape: &[usize],
        p: f64,
        mask: &mut impl AsViewMut<u8>,
    ) -> Result<()> {
        const F: &str = "Generator::dropout_mask";
        let mask = mask.view_mut();
        let numel: usize = shape.iter().product();
        let want = dropout_mask_len(numel);
        if mask.shape() != [want] {
            return Err(Error::invalid(
                F,
                format!(
                    "mask has shape {:?}; {numel} elements need [{want}] bytes",
                    mask.shape()
                ),
            ));
        }
        let dims = shape
            .iter()
            .map(|&d| as_i64(F, "dimension", d))
            .collect::<Result<Vec<_>>>()?;
        let dims = IntArray::new(&dims)?;
        let (seed, offset) = self.draw(F, stream)?;
        aclnn::dropout_gen_mask(
            stream,
            &dims,
            p,
            seed as i64,
            offset as i64,
            &mut arg_mut(mask)?,
        )
    }
}

/// Applies a dropout bit `mask` to `x` (`aclnnDropoutDoMask`): kept elements
/// scaled by `1 / (1 − p)`, the others 0.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an `out` of another shape than `x` or a
/// `mask` of another length; the aclnn status (161002 for `p` outside
/// `[0, 1]`).
#[doc(alias = "aclnnDropoutDoMask")]
pub fn dropout_apply<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    mask: &impl AsView<u8>,
    p: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "random::dropout_apply";
    let (x, mask, out) = (x.view(), mask.view(), out.view_mut());
    if out.shape() != x.shape() {
        return Err(Error::invalid(
            F,
            format!("out has shape {:?}, x {:?}", out.shape(), x.shape()),
        ));
    }
    let want = dropout_mask_len(x.len());
    if mask.len() != want {
        return Err(Error::invalid(
            F,
            format!(
                "mask holds {} bytes; {} elements need {want}",
                mask.len(),
                x.len()
            ),
        ));
    }
    aclnn::dropout_do_mask(stream, &arg(&x)?, &arg(&mask)?, p, &mut arg_mut(out)?)
}

/// The shape of a multinomial draw, or why there is none.
fn multinomial_shape(
    function: &'static str,
    probs: &[usize],
    num_samples: usize,
    replacement: bool,
) -> Result<Vec<usize>> {
    let c = match probs {
        [c] | [_, c] => *c,
        _ => {
            return Err(Error::invalid(
                function,
                format!("probs has shape {probs:?}; it must be [C] or [N, C]"),
            ));
        }
    };
    if num_samples == 0 {
        return Err(Error::invalid(function, "num_samples is 0"));
    }
    if !replacement && num_samples > c {
        return Err(Error::invalid(
            function,
            format!("{num_samples} samples without replacement from {c} categories"),
        ));
    }
    let mut want = probs.to_vec();
    if let Some(last) = want.last_mut() {
        *last = num_samples;
    }
    Ok(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_advances_by_multiples_of_four() {
        let g = Generator::new(5);
        assert_eq!(g.philox_engine_inputs(10), (5, 0));
        assert_eq!(g.philox_engine_inputs(1), (5, 12));
        assert_eq!(g.philox_engine_inputs(0), (5, 16));
        assert_eq!(g.offset(), 16);
        g.set_seed(9);
        assert_eq!((g.seed(), g.offset()), (9, 0));
        assert!(g.set_offset(6).is_err());
        g.set_offset(8).unwrap();
        assert_eq!(g.philox_engine_inputs(4), (9, 8));
    }

    #[test]
    fn masks_round_up_to_128_bits() {
        assert_eq!(dropout_mask_len(0), 0);
        assert_eq!(dropout_mask_len(1), 16);
        assert_eq!(dropout_mask_len(1111), 144);
    }
}

pub mod task;
