//! Typed operators over tensors and views: `acl::ops::matmul(&stream, &a,
//! &b, &mut c)` instead of descriptor plumbing.
//!
//! Inputs are anything readable as a tensor (`&impl` [`AsView<T>`]: a
//! [`Tensor`], a [`TensorView`], a [`TensorViewMut`]); outputs anything
//! writable (`&mut impl` [`AsViewMut<T>`]: a [`Tensor`], a
//! [`TensorViewMut`]). Views carry strides and an offset, so an operator
//! reads a transposed or sliced operand, or writes into a slice of a larger
//! tensor (a KV cache), with no copy (see [`crate::tensor`]). Operators
//! whose name ends in `_` work in place on one writable view (`relu_`).
//!
//! Each function checks shapes with CANN's rules (NumPy broadcasting,
//! matmul dimensions, axes in range, permutations) and the output's shape
//! against the result's, **before** any C call ([`Error::InvalidArgument`]
//! naming the function), then runs CANN's aclnn operator on `stream`
//! through [`crate::aclnn`] (`aclnnXxxGetWorkspaceSize` + `aclnnXxx`, the
//! API torch_npu uses): the `aclTensor`s are made from the views for the
//! call and released when it returns. The functions return once the
//! operator is queued.
//!
//! Which data types an operator takes is the operator library's rule
//! (aclnn status `161002`, `ACLNN_ERR_PARAM_INVALID`, otherwise): the
//! elementwise, matmul, reduce and softmax operators take `f32`,
//! [`half::f16`] and [`half::bf16`] (and most `i32`).
//!
//! Which operator module to use when: [the crate docs](crate#operators-which-module).
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, ops};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let a = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = Tensor::from_host(&s, &[1.0f32, 0.0, 0.0, 1.0], &[2, 2])?;
//! let mut c = Tensor::zeros(&s, &[2, 2])?;
//! ops::matmul(&s, &a, &b, &mut c)?;
//! assert_eq!(c.to_host_vec()?, [1.0, 2.0, 3.0, 4.0]);
//! // aᵀ, as a view: no copy.
//! ops::matmul(&s, &a.view().transpose(0, 1)?, &b, &mut c)?;
//! assert_eq!(c.to_host_vec()?, [1.0, 3.0, 2.0, 4.0]);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::Stream;
use crate::aclnn;
use crate::error::{Error, Result};
use crate::memory::Element;
pub use crate::tensor::{AsView, AsViewMut, Tensor, TensorView, TensorViewMut};

/// The `aclTensor` of an input view, for the call.
fn nn<'a, T: Element>(v: &TensorView<'a, T>) -> Result<aclnn::TensorArg<'a>> {
    aclnn::TensorArg::from_view(v)
}

/// The `aclTensor` of an output view, for the call.
fn nn_mut<T: Element>(v: TensorViewMut<'_, T>) -> Result<aclnn::TensorArgMut<'_>> {
    aclnn::TensorArgMut::from_view(v)
}

/// `acl::aclnn`'s operators in the shapes the typed functions share, where
/// the C signature has more: `alpha` 1 for add and sub, the input's dtype
/// for the reductions, the dims of a permutation as an [`aclnn::IntArray`].
mod adapt {
    use super::*;
    use aclnn::{IntArray, Scalar, TensorArg, TensorArgMut};

    pub(super) fn add(
        s: &Stream,
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        o: &mut TensorArgMut<'_>,
    ) -> Result<()> {
        aclnn::add(s, a, b, &Scalar::new(1.0f32)?, o)
    }
    pub(super) fn sub(
        s: &Stream,
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        o: &mut TensorArgMut<'_>,
    ) -> Result<()> {
        aclnn::sub(s, a, b, &Scalar::new(1.0f32)?, o)
    }
    pub(super) fn add_(s: &Stream, x: &mut TensorArgMut<'_>, b: &TensorArg<'_>) -> Result<()> {
        aclnn::add_(s, x, b, &Scalar::new(1.0f32)?)
    }
    pub(super) fn sub_(s: &Stream, x: &mut TensorArgMut<'_>, b: &TensorArg<'_>) -> Result<()> {
        aclnn::sub_(s, x, b, &Scalar::new(1.0f32)?)
    }
    pub(super) fn reduce_sum(
        s: &Stream,
        x: &TensorArg<'_>,
        axes: &[i64],
        keep: bool,
        o: &mut TensorArgMut<'_>,
    ) -> Result<()> {
        aclnn::reduce_sum(s, x, &IntArray::new(axes)?, keep, x.data_type(), o)
    }
    pub(super) fn mean(
        s: &Stream,
        x: &TensorArg<'_>,
        axes: &[i64],
        keep: bool,
        o: &mut TensorArgMut<'_>,
    ) -> Result<()> {
        aclnn::mean(s, x, &IntArray::new(axes)?, keep, x.data_type(), o)
    }
    pub(super) fn amax(
        s: &Stream,
        x: &TensorArg<'_>,
        axes: &[i64],
        keep: bool,
        o: &mut TensorArgMut<'_>,
    ) -> Result<()> {
        aclnn::amax(s, x, &IntArray::new(axes)?, keep, o)
    }
}

mod backward;
pub mod dynamic;
mod elementwise;
mod inplace;
mod layout;
mod matmul;
mod nn;
mod optim;
mod paged;
mod reduce;
mod select;
mod shape;

pub use backward::*;
pub use elementwise::*;
pub use inplace::*;
pub use layout::*;
pub use matmul::*;
pub use nn::*;
pub use optim::*;
pub use paged::*;
pub use reduce::*;
pub use select::*;
pub use shape::broadcast_shapes;
use shape::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes("t", &[2, 3], &[3]).unwrap(), [2, 3]);
        assert_eq!(
            broadcast_shapes("t", &[4, 1, 3], &[2, 1]).unwrap(),
            [4, 2, 3]
        );
        assert_eq!(broadcast_shapes("t", &[], &[5]).unwrap(), [5]);
        let e = broadcast_shapes("t", &[2, 3], &[2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: shapes [2, 3] and [2] do not broadcast (dimension 1: 3 vs 2)"
        );
    }

    #[test]
    fn reduce_shapes_drop_or_keep_axes() {
        assert_eq!(reduce_shape("t", &[2, 3, 4], &[1], false).unwrap(), [2, 4]);
        assert_eq!(
            reduce_shape("t", &[2, 3, 4], &[-1, 0], true).unwrap(),
            [1, 3, 1]
        );
        // No axes: every axis (aclnn's rule).
        assert_eq!(reduce_shape("t", &[2, 3], &[], false).unwrap(), [0usize; 0]);
        assert_eq!(reduce_shape("t", &[2, 3], &[], true).unwrap(), [1, 1]);
        assert!(reduce_shape("t", &[2, 3], &[2], false).is_err());
        assert!(reduce_shape("t", &[2, 3], &[-3], false).is_err());
    }

    #[test]
    fn matmul_shapes_transpose_and_broadcast_the_batch() {
        assert_eq!(
            matmul_shape("t", &[2, 3], false, &[3, 4], false).unwrap(),
            [2, 4]
        );
        assert_eq!(
            matmul_shape("t", &[3, 2], true, &[3, 4], false).unwrap(),
            [2, 4]
        );
        assert_eq!(
            matmul_shape("t", &[2, 3], false, &[4, 3], true).unwrap(),
            [2, 4]
        );
        assert_eq!(
            matmul_shape("t", &[5, 1, 2, 3], false, &[7, 3, 4], false).unwrap(),
            [5, 7, 2, 4]
        );
        assert_eq!(
            matmul_shape("t", &[6, 2, 3], false, &[3, 4], false).unwrap(),
            [6, 2, 4]
        );
        let e = matmul_shape("t", &[2, 3], false, &[2, 3], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: inner dimensions differ: [2, 3] @ [2, 3] (3 vs 2)"
        );
        let e = matmul_shape("t", &[3], false, &[3, 4], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: matrix products take operands of at least 2 dimensions, got [3] and [3, 4]"
        );
        let e = matmul_shape("t", &[2, 2, 3], false, &[3, 3, 4], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: shapes [2] and [3] do not broadcast (dimension 0: 2 vs 3)"
        );
    }

    #[test]
    fn conv2d_shapes_follow_padding_stride_dilation_and_groups() {
        let w = |s: usize, p: usize, d: usize| Window2d {
            kernel: [0, 0], // conv2d takes the kernel from the weight
            stride: [s, s],
            padding: [p, p],
            dilation: [d, d],
        };
        let x = [2, 4, 10, 8];
        assert_eq!(
            conv2d_shape("t", &x, &[6, 4, 3, 3], w(1, 0, 1), 1).unwrap(),
            [2, 6, 8, 6]
        );
        assert_eq!(
            conv2d_shape("t", &x, &[6, 4, 3, 3], w(1, 1, 1), 1).unwrap(),
            [2, 6, 10, 8]
        );
        assert_eq!(
            conv2d_shape("t", &x, &[6, 4, 3, 3], w(2, 0, 2), 1).unwrap(),
            [2, 6, 3, 2]
        );
        // Non-square kernels: height and width each use their own size.
        assert_eq!(
            conv2d_shape("t", &x, &[6, 2, 5, 1], w(1, 0, 1), 2).unwrap(),
            [2, 6, 6, 8]
        );
        let misfit = |x: &[usize], wt: &[usize], g: usize| {
            conv2d_shape("t", x, wt, w(1, 0, 1), g)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            misfit(&x, &[6, 4, 3, 3], 2),
            "t: x [2, 4, 10, 8] and weight [6, 4, 3, 3] do not fit a 2-D convolution with 2 groups"
        );
        assert_eq!(
            misfit(&x, &[5, 2, 3, 3], 2),
            "t: x [2, 4, 10, 8] and weight [5, 2, 3, 3] do not fit a 2-D convolution with 2 groups"
        );
        assert_eq!(
            misfit(&x, &[6, 4, 3, 3], 0),
            "t: x [2, 4, 10, 8] and weight [6, 4, 3, 3] do not fit a 2-D convolution with 0 groups"
        );
        assert!(misfit(&[4, 10, 8], &[6, 4, 3, 3], 1).contains("do not fit a 2-D convolution"));
        assert!(misfit(&x, &[6, usize::MAX, 3, 3], 2).contains("do not fit"));
        let e = conv2d_shape("t", &x, &[6, 4, 11, 3], w(1, 0, 1), 1).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("does not fit an input of 10 along dimension 0"),
            "{e}"
        );
    }

    #[test]
    fn pool2d_shapes_round_down_and_reject_windows_that_do_not_fit() {
        let x = [2, 3, 7, 6];
        assert_eq!(
            pool2d_shape("t", &x, Window2d::square(2, 2)).unwrap(),
            [2, 3, 3, 3]
        );
        assert_eq!(
            pool2d_shape("t", &x, Window2d::square(3, 1)).unwrap(),
            [2, 3, 5, 4]
        );
        let padded = Window2d {
            padding: [1, 0],
            ..Window2d::square(3, 2)
        };
        assert_eq!(pool2d_shape("t", &x, padded).unwrap(), [2, 3, 4, 2]);
        let dilated = Window2d {
            dilation: [2, 3],
            ..Window2d::square(2, 1)
        };
        assert_eq!(pool2d_shape("t", &x, dilated).unwrap(), [2, 3, 5, 3]);
        let e = pool2d_shape("t", &[3, 7, 6], Window2d::square(2, 2)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: x has shape [3, 7, 6]; it must be [N, C, H, W]"
        );
        for bad in [
            Window2d::square(8, 1),
            Window2d::square(2, 0),
            Window2d::square(0, 1),
            Window2d {
                dilation: [0, 1],
                ..Window2d::square(2, 1)
            },
            Window2d {
                padding: [usize::MAX, 0],
                ..Window2d::square(2, 1)
            },
            Window2d {
                dilation: [usize::MAX, 1],
                ..Window2d::square(3, 1)
            },
        ] {
            let e = pool2d_shape("t", &x, bad).unwrap_err();
            assert!(
                e.to_string().starts_with("t: a window of ")
                    && e.to_string()
                        .ends_with("does not fit an input of 7 along dimension 0"),
                "{bad:?}: {e}"
            );
        }
    }
}
