//! The quantised-scale forms of `aclnnWeightQuantBatchMatmulV2` on the
//! Atlas A2/A3 parts, through the simulator's C ABI, against host
//! references: a packed `UINT64`/`INT64` antiquantScale (the fixpipe form:
//! float16 `x`, a transposed int8 weight, an int32 antiquantOffset), and an
//! int8 `y` quantised with a packed `quantScaleOptional`; the refusals of
//! the release with their exact status.
//!
//! Pages: hicann/ops-nn `matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md`
//! (the formulas, the dtype table, the A2/A3 constraints), `quant/trans_quant_param/docs/aclnnTransQuantParam.md`
//! (the packed word: the FLOAT32 scale's 19 high bits in bits 0–31, a 9-bit
//! offset in bits 37–45, bit 46 set).

#![allow(non_snake_case)]

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;
#[path = "common/wqbmm.rs"]
mod wqbmm;

use acl_sys::aclnn::{
    ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, aclTensor,
};
use acl_sys::{
    ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_FORMAT_ND, ACL_INT8, ACL_INT32, ACL_INT64, ACL_UINT64,
};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use common::{recent_error, use_device};
use half::f16;
use wqbmm::{Call, destroy, pattern};

const F: &str = "aclnnWeightQuantBatchMatmulV2GetWorkspaceSize";

/// `aclnnTransQuantParam(V2)`'s word for `scale` (and `offset`), by its
/// page's formula.
fn word(scale: f32, offset: Option<f32>) -> u64 {
    let mut w = u64::from(scale.to_bits() & 0xFFFF_E000) | (1 << 46);
    if let Some(o) = offset {
        let o = (o.round() as i32).clamp(-256, 255);
        w = (w & 0x4000_FFFF_FFFF) | (((o as u64) & 0x1FF) << 37);
    }
    w
}

/// The scale a word carries: the FLOAT32 truncated to its 19 high bits.
fn truncated(scale: f32) -> f64 {
    f64::from(f32::from_bits(scale.to_bits() & 0xFFFF_E000))
}

/// The `[r, c]` view with strides `[1, r]` of `[c, r]` row-major memory.
fn transposed_tensor(r: i64, c: i64, dtype: i32, data: *mut u8) -> *mut aclTensor {
    // SAFETY: arrays valid for their lengths.
    let t = unsafe {
        aclCreateTensor(
            [r, c].as_ptr(),
            2,
            dtype,
            [1, r].as_ptr(),
            0,
            ACL_FORMAT_ND,
            [r * c].as_ptr(),
            1,
            data.cast(),
        )
    };
    assert!(!t.is_null(), "{}", recent_error());
    t
}

/// The fixpipe form: x f16 `[m, 64]`, the int8 weight stored `[n, k]` and
/// viewed `[k, n]`, per-channel packed scales of dtype `scale_dtype` and
/// int32 offsets; `y` against `Σ x · (w + offset) · truncated(scale)`.
fn packed_antiquant_scale_matches_the_host_reference(scale_dtype: i32) {
    use_device(0);
    let (m, k, n) = (3usize, 64usize, 64usize);
    let w_nk: Vec<i8> = pattern(n * k, 5, -128, 127)
        .iter()
        .map(|&v| v as i8)
        .collect();
    let xs: Vec<f16> = pattern(m * k, 9, -8, 8)
        .iter()
        .map(|&v| f16::from_f32(v as f32 * 0.125))
        .collect();
    // Scales whose low mantissa bits the word drops (0.01 is not a short
    // binary fraction): the result uses the truncated value.
    let scales: Vec<f32> = (0..n).map(|c| 0.01 + 0.001 * c as f32).collect();
    let offsets: Vec<i32> = pattern(n, 13, -128, 127);
    let words: Vec<u64> = scales.iter().map(|&s| word(s, None)).collect();
    let (dx, dw, ds, doff) = (upload(&xs), upload(&w_nk), upload(&words), upload(&offsets));
    let dy = upload(&vec![f16::ZERO; m * n]);
    let mut c = Call::new(
        tensor(&[m as i64, k as i64], ACL_FLOAT16, dx),
        transposed_tensor(k as i64, n as i64, ACL_INT8, dw),
        tensor(&[n as i64], scale_dtype, ds),
        tensor(&[m as i64, n as i64], ACL_FLOAT16, dy),
    );
    c.offset = tensor(&[n as i64], ACL_INT32, doff);
    assert_eq!(c.run(), ACLNN_SUCCESS, "{}", recent_error());
    let got = download::<f16>(dy, m * n);
    for r in 0..m {
        for col in 0..n {
            let want: f64 = (0..k)
                .map(|p| {
                    f64::from(xs[r * k + p].to_f32())
                        * (f64::from(w_nk[col * k + p]) + f64::from(offsets[col]))
                        * truncated(scales[col])
                })
                .sum();
            let g = f64::from(got[r * n + col].to_f32());
            assert!(
                (g - want).abs() <= 2e-3 * want.abs().max(1.0),
                "y[{r},{col}] = {g}, want {want}"
            );
        }
    }
    destroy(&[c.x, c.w, c.scale, c.offset, c.y], &[dx, dw, ds, doff, dy]);
}

#[test]
fn a_uint64_antiquant_scale_with_int32_offsets_matches_the_host_reference() {
    packed_antiquant_scale_matches_the_host_reference(ACL_UINT64);
}

#[test]
fn an_int64_antiquant_scale_reads_the_same_words() {
    packed_antiquant_scale_matches_the_host_reference(ACL_INT64);
}

#[test]
fn an_int8_y_is_quantised_with_the_packed_quant_scale_rounded_and_saturated() {
    use_device(0);
    // x [2, 4] f16, weight [4, 3] int8 contiguous, antiquantScale f16 [3].
    let xs = [1.0f32, 2.0, -1.0, 0.5, 3.0, -2.0, 4.0, 1.0];
    let w: [i8; 12] = [1, -2, 3, 4, 5, -6, -7, 8, 9, 10, -11, 12];
    let scales = [0.5f32, 1.0, 0.25];
    let bias = [1.0f32, -2.0, 0.0];
    // Per channel: scale and offset packed by aclnnTransQuantParam; the
    // first channel saturates, the third has a negative offset.
    let (qs, qo) = ([16.0f32, 0.75, 1.5], [3.0f32, 0.0, -5.0]);
    let words: Vec<u64> = qs.iter().zip(qo).map(|(&s, o)| word(s, Some(o))).collect();
    let x16: Vec<f16> = xs.iter().map(|&v| f16::from_f32(v)).collect();
    let s16: Vec<f16> = scales.iter().map(|&v| f16::from_f32(v)).collect();
    let (dx, dw, ds, db, dq, dqo) = (
        upload(&x16),
        upload(&w),
        upload(&s16),
        upload(&bias),
        upload(&words),
        upload(&qo),
    );
    let dy = upload(&[0i8; 6]);
    let mut c = Call::new(
        tensor(&[2, 4], ACL_FLOAT16, dx),
        tensor(&[4, 3], ACL_INT8, dw),
        tensor(&[3], ACL_FLOAT16, ds),
        tensor(&[2, 3], ACL_INT8, dy),
    );
    // x float16: a float32 bias is refused, float16 taken.
    let b16: Vec<f16> = bias.iter().map(|&v| f16::from_f32(v)).collect();
    let db16 = upload(&b16);
    c.bias = tensor(&[3], ACL_FLOAT16, db16);
    c.quant_scale = tensor(&[3], ACL_UINT64, dq);
    c.quant_offset = tensor(&[3], ACL_FLOAT, dqo);
    assert_eq!(c.run(), ACLNN_SUCCESS, "{}", recent_error());
    let mut want = [0i8; 6];
    for r in 0..2 {
        for col in 0..3 {
            let acc: f64 = (0..4)
                .map(|p| {
                    f64::from(xs[r * 4 + p]) * f64::from(w[p * 3 + col]) * f64::from(scales[col])
                })
                .sum::<f64>()
                + f64::from(bias[col]);
            let q = (acc * f64::from(qs[col]) + f64::from(qo[col]))
                .round_ties_even()
                .clamp(-128.0, 127.0);
            want[r * 3 + col] = q as i8;
        }
    }
    assert_eq!(download::<i8>(dy, 6), want);
    assert!(want.contains(&127), "a value saturates: {want:?}");
    destroy(
        &[
            c.x,
            c.w,
            c.scale,
            c.bias,
            c.quant_scale,
            c.quant_offset,
            c.y,
        ],
        &[dx, dw, ds, db, dq, dqo, dy, db16],
    );
}

#[test]
fn the_quantised_forms_the_release_refuses_fail_with_its_status() {
    use_device(0);
    let (dx, dw, ds, dy, dq) = (
        upload(&[f16::ONE; 128 * 64]),
        upload(&[1i8; 64 * 64]),
        upload(&[word(1.0, None); 64]),
        upload(&[f16::ZERO; 128 * 64]),
        upload(&[word(1.0, None); 64]),
    );
    let x = tensor(&[2, 64], ACL_FLOAT16, dx);
    let xb = tensor(&[2, 64], ACL_BF16, dx);
    let x97 = tensor(&[97, 64], ACL_FLOAT16, dx);
    let wt = transposed_tensor(64, 64, ACL_INT8, dw);
    let wc = tensor(&[64, 64], ACL_INT8, dw);
    let (s16, s64) = (
        tensor(&[64], ACL_FLOAT16, ds),
        tensor(&[64], ACL_UINT64, ds),
    );
    let (y, y8, yb, y97) = (
        tensor(&[2, 64], ACL_FLOAT16, dy),
        tensor(&[2, 64], ACL_INT8, dy),
        tensor(&[2, 64], ACL_BF16, dy),
        tensor(&[97, 64], ACL_FLOAT16, dy),
    );
    let (q64, qf, off32) = (
        tensor(&[64], ACL_UINT64, dq),
        tensor(&[64], ACL_FLOAT, dq),
        tensor(&[64], ACL_INT32, dq),
    );
    let cases: Vec<(Call, i32, &str)> = vec![
        (
            Call {
                quant_scale: q64,
                ..Call::new(x, wc, s16, y)
            },
            ACLNN_ERR_PARAM_INVALID,
            "y is float16; with quantScaleOptional it must be int8",
        ),
        (
            Call {
                quant_offset: qf,
                ..Call::new(x, wc, s16, y)
            },
            ACLNN_ERR_PARAM_INVALID,
            "quantOffsetOptional is given without quantScaleOptional",
        ),
        (
            Call {
                quant_scale: qf,
                ..Call::new(x, wc, s16, y8)
            },
            ACLNN_ERR_PARAM_INVALID,
            "quantScaleOptional is float32",
        ),
        (
            Call::new(x, wc, s16, y8),
            ACLNN_ERR_PARAM_INVALID,
            "y is int8; without quantScaleOptional it must be x's type, float16",
        ),
        (
            Call {
                offset: off32,
                ..Call::new(x, wc, s16, y)
            },
            ACLNN_ERR_PARAM_INVALID,
            "antiquantOffsetOptional is int32, which needs a uint64/int64 antiquantScale",
        ),
        (
            Call::new(xb, wt, s64, yb),
            ACLNN_ERR_PARAM_INVALID,
            "x is bfloat16; with a uint64/int64 antiquantScale it must be float16",
        ),
        (
            Call {
                quant_scale: q64,
                ..Call::new(x, wt, s64, y8)
            },
            ACLNN_ERR_PARAM_INVALID,
            "y is int8; with a uint64/int64 antiquantScale it must be float16",
        ),
        (
            Call::new(x97, wt, s64, y97),
            ACLNN_ERR_INNER_TILING_ERROR,
            "fixpipe template: m = 97 must lie in [1, 96]",
        ),
        (
            Call::new(x, wc, s64, y),
            ACLNN_ERR_INNER_TILING_ERROR,
            "fixpipe template: the weight must be a transposed view",
        ),
    ];
    for (call, code, want) in cases {
        let msg = fails(call.run(), code, F);
        assert!(msg.contains(want), "want {want:?} in {msg}");
    }
    destroy(
        &[x, xb, x97, wt, wc, s16, s64, y, y8, yb, y97, q64, qf, off32],
        &[dx, dw, ds, dy, dq],
    );
}

#[test]
fn on_atlas_a2_a_bfloat16_bias_and_a_float8_weight_are_refused_naming_the_a2_lists() {
    // The page's superscript 2: the A2/A3 parts take no BFLOAT16 bias and
    // no FLOAT8_E4M3FN/HIFLOAT8/FLOAT/FLOAT4_E2M1 weight (the default SoC,
    // Ascend910B3, is an A2 part).
    use_device(0);
    let (dx, dw, ds, dy) = (
        upload(&[0u16; 8]),
        upload(&[0u8; 8]),
        upload(&[0u16; 2]),
        upload(&[0u16; 4]),
    );
    let x = tensor(&[2, 4], ACL_BF16, dx);
    let (w8, wf8) = (
        tensor(&[4, 2], ACL_INT8, dw),
        tensor(&[4, 2], acl_sys::ACL_FLOAT8_E4M3FN, dw),
    );
    let (s, b, y) = (
        tensor(&[2], ACL_BF16, ds),
        tensor(&[2], ACL_BF16, ds),
        tensor(&[2, 2], ACL_BF16, dy),
    );
    let msg = fails(
        Call {
            bias: b,
            ..Call::new(x, w8, s, y)
        }
        .run(),
        ACLNN_ERR_PARAM_INVALID,
        F,
    );
    assert_eq!(
        msg,
        format!(
            "{F}: biasOptional is bfloat16; on Atlas A2 (Ascend910B3) the operator takes float16, float32"
        )
    );
    let msg = fails(Call::new(x, wf8, s, y).run(), ACLNN_ERR_PARAM_INVALID, F);
    assert!(
        msg.ends_with("on Atlas A2 (Ascend910B3) the operator takes int8, int4, int32"),
        "{msg}"
    );
    assert!(msg.starts_with(&format!("{F}: weight is ")), "{msg}");
    destroy(&[x, w8, wf8, s, b, y], &[dx, dw, ds, dy]);
}
