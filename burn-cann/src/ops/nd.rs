//! Burn's multi-dimensional gather and scatter (`gather_nd`, `scatter_nd`)
//! on aclnn's one-dimensional index operators: the leading `K` dims of
//! `data` (`K`, the last dim of `indices`) are flattened into one, each
//! `K`-tuple of `indices` becomes a linear index on the device (multiplied
//! by the row-major strides of those dims, `aclnnMul`, and summed over the
//! last axis, `aclnnReduceSum`), and the work is `aclnnIndexSelect`,
//! `aclnnIndexAdd` or `aclnnInplaceIndexCopy` along dim 0.

use crate::kernel::{self, R, invalid, ok, unsupported};
use crate::tensor::CannTensor;
use acl::aclnn;
use burn_backend::TensorData;
use burn_backend::tensor::IndexingUpdateOp;

/// The parts of an nd-indexing: `K`, the number of index tuples and the
/// shape of `data` after its first `K` dims.
struct Nd {
    k: usize,
    batch: Vec<usize>,
    rest: Vec<usize>,
}

impl Nd {
    /// The shape of the gathered slices (and of scattered values):
    /// `indices.shape[..-1] ++ data.shape[K..]`.
    fn slices(&self) -> Vec<usize> {
        [&self.batch[..], &self.rest[..]].concat()
    }
}

fn split(op: &'static str, data: &CannTensor, indices: &CannTensor) -> R<Nd> {
    let k = indices.shape.last().copied().unwrap_or(0);
    if indices.shape.is_empty() || k == 0 || k > data.shape.len() {
        return Err(invalid(
            op,
            format!(
                "indices of shape {:?} for data of shape {:?}: the last dim of indices must be \
                 between 1 and the rank of data",
                indices.shape, data.shape
            ),
        ));
    }
    Ok(Nd {
        k,
        batch: indices.shape[..indices.shape.len() - 1].to_vec(),
        rest: data.shape[k..].to_vec(),
    })
}

/// The linear indices (shape `[tuples]`, `indices`' int kind) of the
/// `K`-tuples of `indices` into the first `K` dims of `data_shape`.
fn linear(indices: &CannTensor, data_shape: &[usize], k: usize) -> R<CannTensor> {
    let mut strides = vec![1i64; k];
    for i in (0..k.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * data_shape[i + 1] as i64;
    }
    let strides = CannTensor::from_data(
        TensorData::new(strides, [k]),
        indices.kind(),
        &indices.device,
    )?;
    let scaled = kernel::binary("gather_nd", indices, &strides, None, |s, a, b, o| {
        aclnn::mul(s, a, b, o)
    })?;
    let kind = indices.kind();
    let last = scaled.shape.len() - 1;
    let sum = kernel::reduce(&scaled, Some(last), kind, |s, a, axes, o| {
        aclnn::reduce_sum(s, a, axes, true, kind.acl(), o)
    })?;
    let n = sum.numel();
    kernel::reshape(sum, &[n])
}

/// `data` with its first `k` dims flattened into one.
fn flat(data: CannTensor, k: usize) -> R<CannTensor> {
    let lead: usize = data.shape[..k].iter().product();
    let mut shape = vec![lead];
    shape.extend_from_slice(&data.shape[k..]);
    kernel::reshape(data, &shape)
}

/// Slices of `data` at the `K`-tuples of `indices`: shape
/// `indices.shape[..-1] ++ data.shape[K..]`.
pub(crate) fn gather_nd(op: &str, data: CannTensor, indices: CannTensor) -> CannTensor {
    ok(
        op,
        (|| {
            let nd = split("gather_nd", &data, &indices)?;
            let shape = nd.slices();
            let lin = linear(&indices, &data.shape, nd.k)?;
            let out = kernel::index_select(&flat(data, nd.k)?, 0, &lin)?;
            kernel::reshape(out, &shape)
        })(),
    )
}

/// `data` with `values` (shape `indices.shape[..-1] ++ data.shape[K..]`)
/// added at or written over the slices the `K`-tuples of `indices` name.
pub(crate) fn scatter_nd(
    op: &'static str,
    data: CannTensor,
    indices: CannTensor,
    values: CannTensor,
    update: IndexingUpdateOp,
) -> CannTensor {
    if !matches!(update, IndexingUpdateOp::Add | IndexingUpdateOp::Assign) {
        unsupported(
            op,
            &format!(
                "{update:?} updates: CANN's index operators add (aclnnIndexAdd) or copy \
                 (aclnnInplaceIndexCopy) only"
            ),
        );
    }
    ok(
        op,
        (|| {
            let nd = split("scatter_nd", &data, &indices)?;
            let want = nd.slices();
            if values.shape != want {
                return Err(invalid(
                    "scatter_nd",
                    format!(
                        "values of shape {:?} for indices {:?} into data {:?} (expected {want:?})",
                        values.shape, indices.shape, data.shape
                    ),
                ));
            }
            let shape = data.shape.clone();
            let lin = linear(&indices, &shape, nd.k)?;
            let target = flat(data, nd.k)?;
            let mut vshape = vec![lin.numel()];
            vshape.extend_from_slice(&nd.rest);
            let values = kernel::cast(kernel::reshape(values, &vshape)?, target.kind())?;
            let (i, v) = (lin.arg()?, values.arg()?);
            let out = if lin.numel() == 0 {
                target
            } else if matches!(update, IndexingUpdateOp::Add) {
                let alpha = kernel::scalar(target.kind(), 1.0)?;
                kernel::unary(&target, None, |s, a, o| {
                    aclnn::index_add(s, a, 0, &i, &v, &alpha, o)
                })?
            } else {
                kernel::in_place(target, |s, o| aclnn::index_copy_(s, o, 0, &i, &v))?
            };
            kernel::reshape(out, &shape)
        })(),
    )
}
