//! Page attention: attention over key/value caches kept in fixed-size
//! blocks, as LLM servers keep them (vLLM's paged KV cache). A sequence's
//! keys are the rows of the blocks its row of the block table names, in
//! order; blocks are shared, reused and handed out without moving data.

use super::nn::{dims_i64, fused_attention};
use super::shape::expect_shape;
use super::*;
use crate::memory::Bool;
use aclnn::IntArray;

/// Key and value caches in blocks, and which blocks hold each sequence
/// (the `key`/`value`, `blockTable`, `blockSize` and `actualSeqLengthsKv`
/// of `aclnnFusedInferAttentionScoreV2`'s page attention).
///
/// `Send`/`Sync` as the views it holds: it borrows device memory, shared.
#[derive(Debug, Clone, Copy)]
pub struct PagedKv<'a, T: Element> {
    /// The key cache, `[blocks, block_size, kv_heads · D]`.
    pub key: TensorView<'a, T>,
    /// The value cache, the key cache's shape.
    pub value: TensorView<'a, T>,
    /// `[B, blocks per sequence]`: row `b` lists the blocks of sequence
    /// `b`; entries past what its length needs are never read.
    pub block_table: TensorView<'a, i32>,
    /// The valid keys of each sequence (`B` values).
    pub lengths: &'a [usize],
    /// Key/value heads (dividing the query's heads: grouped-query attention).
    pub kv_heads: usize,
}

/// Attention of `q` `[B, N, S, D]` over paged keys and values:
/// `softmax(scale · Q Kᵀ) V`, the keys of sequence `b` being the first
/// `lengths[b]` rows of its blocks, with the optional bool `mask`
/// (`[B or 1, 1, S, T]` or fewer leading dimensions, `T` at least the
/// longest length, true hides a key)
/// for prefill. `f16` and `bf16` (the page-attention types of Atlas A2;
/// hicann/ops-transformer `aclnnFusedInferAttentionScoreV2.md`).
///
/// Block ids are not checked by the operator (the release's rule:
/// "当前不会对blockid的合法性进行校验"), and checking them here would need
/// the table on the host; on the simulator a used id outside the cache
/// fails the task with `ACL_ERROR_RT_AICORE_EXCEPTION` rather than reading
/// beyond it.
///
/// # Safety
///
/// Every entry of `kv.block_table` that a sequence's length reaches (the
/// first `⌈lengths[b] / block_size⌉` of row `b`) must be a block of the
/// caches (`0 ≤ id < blocks`) when the operator runs: on an NPU another id
/// reads device memory outside the caches, which the crate's ordering does
/// not cover (another stream may be writing it).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a type other than f16/bf16, shapes that
/// do not fit (a block size that is not 128, 256, 384 or 512, caches of
/// different shapes, a table without a row per sequence, lengths beyond
/// what a row's blocks hold, heads that do not divide), or an `out` of
/// another shape than `q`; the aclnn status.
#[doc(alias = "aclnnFusedInferAttentionScoreV2")]
pub unsafe fn paged_attention<T: Element>(
    stream: &Stream,
    q: &impl AsView<T>,
    kv: &PagedKv<'_, T>,
    mask: Option<&TensorView<'_, Bool>>,
    scale: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::paged_attention";
    let (q, out) = (q.view(), out.view_mut());
    if !matches!(
        T::DATA_TYPE,
        crate::DataType::Float16 | crate::DataType::BFloat16
    ) {
        return Err(Error::invalid(
            F,
            format!(
                "{} caches; page attention takes float16 or bfloat16",
                T::DATA_TYPE
            ),
        ));
    }
    let (qs, ks, ts) = (q.shape(), kv.key.shape(), kv.block_table.shape());
    let fits = qs.len() == 4
        && ks.len() == 3
        && kv.value.shape() == ks
        && kv.kv_heads > 0
        && qs[1] % kv.kv_heads == 0
        && ks[2] == kv.kv_heads * qs[3]
        && ts.len() == 2
        && ts[0] == qs[0]
        && ts[1] > 0;
    if !fits {
        return Err(Error::invalid(
            F,
            format!(
                "q {qs:?}, caches {ks:?}/{:?}, block table {ts:?} and {} key/value heads are not \
                 [B, N, S, D], [blocks, block size, heads · D] twice and [B, blocks per sequence] \
                 with the heads dividing N",
                kv.value.shape(),
                kv.kv_heads
            ),
        ));
    }
    let block = ks[1];
    if !(128..=512).contains(&block) || block % 128 != 0 {
        return Err(Error::invalid(
            F,
            format!("block size {block}; it must be 128, 256, 384 or 512"),
        ));
    }
    let room = ts[1] * block;
    if kv.lengths.len() != qs[0] || kv.lengths.iter().any(|&l| l > room) {
        return Err(Error::invalid(
            F,
            format!(
                "lengths {:?}: one per sequence ({}), each at most the {room} keys a table row holds",
                kv.lengths, qs[0]
            ),
        ));
    }
    expect_shape(F, out.shape(), qs)?;
    let heads = dims_i64(F, &[qs[1], kv.kv_heads, block])?;
    let lengths = IntArray::new(&dims_i64(F, kv.lengths)?)?;
    let table = nn(&kv.block_table)?;
    fused_attention(
        stream,
        (q, kv.key, kv.value),
        mask,
        (heads[0], heads[1]),
        scale,
        Some((&lengths, &table, heads[2])),
        out,
    )
}

/// [`paged_attention`] into a new tensor.
///
/// # Errors
///
/// As [`paged_attention`].
///
/// # Safety
///
/// As [`paged_attention`]: the block ids the lengths reach name blocks of
/// the caches.
pub unsafe fn paged_attention_new<T: Element>(
    stream: &Stream,
    q: &impl AsView<T>,
    kv: &PagedKv<'_, T>,
    mask: Option<&TensorView<'_, Bool>>,
    scale: f64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, q.view().shape())?;
    // SAFETY: the caller's contract, forwarded.
    unsafe { paged_attention(stream, q, kv, mask, scale, &mut out) }?;
    Ok(out)
}
