//! `aclnnCalculateMatmulWeightSizeV2`, the one-phase helper that sizes a
//! matmul weight for [`trans_matmul_weight`](super::trans_matmul_weight).

use super::IntArray;
use crate::error::Result;
use crate::memory::DataType;
use crate::result;

/// The number of **elements** (multiply by the element size for bytes) a
/// matmul weight of `shape` (2 to 6 dimensions, `[batch..., n, k]`) and
/// `data_type` occupies once [`trans_matmul_weight`](super::trans_matmul_weight)
/// has converted it to the Cube unit's layout: the batch dimensions as they
/// are, the last two rounded up to 16 × 16 for float16/bfloat16 and to
/// 16 × 32 for int8 (hicann/ops-math
/// `conversion/trans_data/docs/aclnnCalculateMatmulWeightSizeV2.md`; e.g.
/// int8 `[510, 270]` is `512 · 288 = 147456`). Allocate the weight's buffer
/// with at least this many elements before converting it.
///
/// # Errors
///
/// `161002` for a shape of fewer than 2 or more than 6 dimensions or with a
/// 0 dimension; `361001` on a SoC the release does not support (the Atlas
/// training parts); a load error.
#[doc(alias = "aclnnCalculateMatmulWeightSizeV2")]
pub fn calculate_matmul_weight_size_v2(shape: &[i64], data_type: DataType) -> Result<u64> {
    let array = IntArray::new(shape)?;
    // SAFETY: `array` is live for the call.
    unsafe { result::nn_calculate_matmul_weight_size_v2(array.as_raw(), data_type.to_raw()) }
}
