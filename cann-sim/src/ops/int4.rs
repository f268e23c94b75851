//! Packed 4-bit integers (`ACL_INT4`, data type 29): two signed values per
//! byte, two's complement in each nibble, the element of even index in the
//! low nibble and the next one in the high nibble. Shapes, strides and
//! offsets of an int4 tensor count values, not bytes (`aclCreateTensor`
//! takes them in elements of the data type), so an element's byte is its
//! value index halved.
//!
//! The kernels never see int4 as an element type: the operators that take
//! it (WeightQuantBatchMatmulV2's `weight`) get the bytes under the view as
//! a `uint8` input and an [`Int4Layout`] that finds each value in them.
//! Layout documented at hicann/ops-nn
//! `matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md`
//! (an int4 weight's last dimension is even: whole bytes per row), and the
//! nibble order as ggml's CANN backend packs Q4_0 weights for that operator.

/// Where the values of an int4 view lie in the bytes handed to the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Int4Layout {
    /// The view's dimensions, in values.
    pub shape: Vec<i64>,
    /// The view's strides, in values (non-negative).
    pub strides: Vec<i64>,
    /// The value index of the view's first element, counted from the first
    /// byte handed to the kernel (0 or 1: the low or high nibble).
    pub first: usize,
}

impl Int4Layout {
    /// The value at value index `at` of `bytes`.
    pub fn value_at(bytes: &[u8], at: usize) -> i8 {
        let byte = bytes[at / 2];
        let nibble = if at.is_multiple_of(2) {
            byte & 0x0F
        } else {
            byte >> 4
        };
        // Sign-extend the 4-bit two's complement value.
        ((nibble << 4) as i8) >> 4
    }

    /// The view's values in row-major order, as `f64`.
    pub fn unpack(&self, bytes: &[u8]) -> Vec<f64> {
        let n: usize = self.shape.iter().map(|&d| d.max(0) as usize).product();
        let mut out = Vec::with_capacity(n);
        let mut index = vec![0i64; self.shape.len()];
        for _ in 0..n {
            let at = self.first as i64
                + index
                    .iter()
                    .zip(&self.strides)
                    .map(|(i, s)| i * s)
                    .sum::<i64>();
            out.push(f64::from(Int4Layout::value_at(bytes, at as usize)));
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < self.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        out
    }

    /// Bytes from the one holding the first value to the one holding the
    /// last (0 for an empty view).
    pub fn span_bytes(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        let last = self.first as i64
            + self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(&d, &s)| (d - 1) * s)
                .sum::<i64>();
        last as usize / 2 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_decode_low_first_and_sign_extend() {
        // Values 1, -1 (0xF), 7, -8 (0x8).
        let bytes = [0xF1u8, 0x87];
        let got: Vec<i8> = (0..4).map(|i| Int4Layout::value_at(&bytes, i)).collect();
        assert_eq!(got, [1, -1, 7, -8]);
    }

    #[test]
    fn a_transposed_view_reads_columns_of_the_storage() {
        // Storage [2, 4] row-major: 0 1 2 3 / 4 5 6 7; the view [4, 2] with
        // strides [1, 4] is its transpose.
        let bytes = [0x10u8, 0x32, 0x54, 0x76];
        let l = Int4Layout {
            shape: vec![4, 2],
            strides: vec![1, 4],
            first: 0,
        };
        assert_eq!(l.unpack(&bytes), [0.0, 4.0, 1.0, 5.0, 2.0, 6.0, 3.0, 7.0]);
        assert_eq!(l.span_bytes(), 4);
    }

    #[test]
    fn an_odd_first_value_starts_in_the_high_nibble() {
        let l = Int4Layout {
            shape: vec![3],
            strides: vec![1],
            first: 1,
        };
        assert_eq!(l.unpack(&[0x10, 0x32]), [1.0, 2.0, 3.0]);
        assert_eq!(l.span_bytes(), 2);
        let empty = Int4Layout {
            shape: vec![0, 3],
            strides: vec![3, 1],
            first: 0,
        };
        assert_eq!(empty.span_bytes(), 0);
    }
}
