//! Int4 weights (`ACL_INT4`, two values per byte) in
//! `aclnnWeightQuantBatchMatmulV2`, through the simulator's C ABI: the
//! transposed per-group layout ggml's CANN backend gives Q4_0 weights, a
//! contiguous per-channel weight with an offset, and the release's
//! refusals with their exact status (hicann/ops-nn
//! `matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md`).

#![allow(non_snake_case)]

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;
#[path = "common/wqbmm.rs"]
mod wqbmm;

use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, aclTensor,
};
use acl_sys::{ACL_FLOAT16, ACL_FORMAT_ND, ACL_INT4, ACL_INT32};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use common::{recent_error, use_device};
use half::f16;
use wqbmm::{Call, destroy, pattern};

/// Packs signed 4-bit values two per byte, the even index in the low nibble.
fn pack(values: &[i8]) -> Vec<u8> {
    values
        .chunks(2)
        .map(|p| (p[0] as u8 & 0x0F) | ((p.get(1).copied().unwrap_or(0) as u8 & 0x0F) << 4))
        .collect()
}

/// An int4 tensor of `dims` with `strides` (in values) over `storage`
/// values at `data`.
fn int4_tensor(
    dims: &[i64],
    strides: &[i64],
    offset: i64,
    storage: i64,
    data: *mut u8,
) -> *mut aclTensor {
    // SAFETY: arrays valid for their lengths.
    let t = unsafe {
        aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            ACL_INT4,
            strides.as_ptr(),
            offset,
            ACL_FORMAT_ND,
            [storage].as_ptr(),
            1,
            data.cast(),
        )
    };
    assert!(!t.is_null(), "{}", recent_error());
    t
}

fn halves(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}

#[test]
fn a_transposed_per_group_int4_weight_multiplies_as_ggml_passes_q4_0() {
    use_device(0);
    let (m, k, n, group) = (2usize, 64usize, 3usize, 32usize);
    // The weight as stored: [n, k] row-major (each output channel's k
    // values together, whole bytes per row), viewed as [k, n].
    let w_nk: Vec<i8> = pattern(n * k, 7, -8, 7).iter().map(|&v| v as i8).collect();
    let xs: Vec<f32> = pattern(m * k, 3, -4, 4)
        .iter()
        .map(|&v| v as f32 * 0.25)
        .collect();
    let scales: Vec<f32> = (0..(k / group) * n)
        .map(|i| 0.5 + 0.125 * i as f32)
        .collect();
    let (dx, dw, ds) = (
        upload(&halves(&xs)),
        upload(&pack(&w_nk)),
        upload(&halves(&scales)),
    );
    let dy = upload(&vec![f16::ZERO; m * n]);
    let c = Call {
        group: group as i32,
        ..Call::new(
            tensor(&[m as i64, k as i64], ACL_FLOAT16, dx),
            int4_tensor(&[k as i64, n as i64], &[1, k as i64], 0, (n * k) as i64, dw),
            tensor(&[(k / group) as i64, n as i64], ACL_FLOAT16, ds),
            tensor(&[m as i64, n as i64], ACL_FLOAT16, dy),
        )
    };
    assert_eq!(c.run(), ACLNN_SUCCESS, "{}", recent_error());
    let got: Vec<f32> = download::<f16>(dy, m * n)
        .iter()
        .map(|v| v.to_f32())
        .collect();
    for r in 0..m {
        for col in 0..n {
            let want: f64 = (0..k)
                .map(|p| {
                    let w = f64::from(w_nk[col * k + p]) * f64::from(scales[(p / group) * n + col]);
                    f64::from(f16::from_f32(xs[r * k + p]).to_f32()) * w
                })
                .sum();
            let g = f64::from(got[r * n + col]);
            assert!(
                (g - want).abs() <= 1e-3 * want.abs().max(1.0),
                "y[{r},{col}] = {g}, want {want}"
            );
        }
    }
    destroy(&[c.x, c.w, c.scale, c.y], &[dx, dw, ds, dy]);
}

#[test]
fn a_contiguous_per_channel_int4_weight_applies_the_offset() {
    use_device(0);
    // x [1, 2], weight [2, 2] = [[1, -2], [3, 4]] (odd offset 1 into the
    // storage: the view starts in a high nibble), scale [2], offset [2].
    let storage: Vec<i8> = vec![5, 1, -2, 3, 4, 0];
    let (dx, dw) = (upload(&halves(&[1.0, 2.0])), upload(&pack(&storage)));
    let (ds, doff) = (upload(&halves(&[0.5, 2.0])), upload(&halves(&[1.0, 0.0])));
    let dy = upload(&[f16::ZERO; 2]);
    let c = Call {
        offset: tensor(&[2], ACL_FLOAT16, doff),
        ..Call::new(
            tensor(&[1, 2], ACL_FLOAT16, dx),
            int4_tensor(&[2, 2], &[2, 1], 1, 6, dw),
            tensor(&[2], ACL_FLOAT16, ds),
            tensor(&[1, 2], ACL_FLOAT16, dy),
        )
    };
    assert_eq!(c.run(), ACLNN_SUCCESS, "{}", recent_error());
    // Column 0: 1·(1+1)·0.5 + 2·(3+1)·0.5 = 5; column 1: 1·(-2)·2 + 2·4·2 = 12.
    let got: Vec<f32> = download::<f16>(dy, 2).iter().map(|v| v.to_f32()).collect();
    assert_eq!(got, [5.0, 12.0]);
    destroy(&[c.x, c.w, c.scale, c.offset, c.y], &[dx, dw, ds, doff, dy]);
}

#[test]
fn int4_weights_the_release_refuses_fail_with_its_status() {
    use_device(0);
    const F: &str = "aclnnWeightQuantBatchMatmulV2GetWorkspaceSize";
    let (dx, dw, ds, dy) = (
        upload(&[f16::ONE; 64 * 2]),
        upload(&[0u8; 64 * 4]),
        upload(&[f16::ONE; 8]),
        upload(&[f16::ZERO; 8]),
    );
    let x = tensor(&[2, 64], ACL_FLOAT16, dx);
    let y3 = tensor(&[2, 3], ACL_FLOAT16, dy);
    let s3 = tensor(&[3], ACL_FLOAT16, ds);
    // A contiguous [64, 3] int4 weight: rows of 3 values are not whole bytes.
    let odd = int4_tensor(&[64, 3], &[3, 1], 0, 192, dw);
    let call = |w, scale, group, y| Call {
        group,
        ..Call::new(x, w, scale, y)
    };
    let msg = fails(call(odd, s3, 0, y3).run(), ACLNN_ERR_PARAM_INVALID, F);
    assert!(msg.contains("unit-stride dimension must be even"), "{msg}");
    // A group size that is not a multiple of 32.
    let (y4, w4) = (
        tensor(&[2, 4], ACL_FLOAT16, dy),
        int4_tensor(&[64, 4], &[4, 1], 0, 256, dw),
    );
    let s_groups = tensor(&[2, 4], ACL_FLOAT16, ds);
    let msg = fails(call(w4, s_groups, 48, y4).run(), ACLNN_ERR_PARAM_INVALID, F);
    assert!(
        msg.contains("antiquantGroupSize 48 must be 0 or a multiple of 32"),
        "{msg}"
    );
    // A view that reaches past its storage.
    let long = int4_tensor(&[64, 4], &[4, 1], 2, 256, dw);
    let s4 = tensor(&[4], ACL_FLOAT16, ds);
    let msg = fails(call(long, s4, 0, y4).run(), ACLNN_ERR_PARAM_INVALID, F);
    assert!(msg.contains("does not fit in storage"), "{msg}");
    // int32 weights (eight packed values each, from
    // aclnnConvertWeightToINT4Pack) are beyond the simulator's kernels.
    let packed = tensor(&[64, 1], ACL_INT32, dw);
    let msg = fails(
        call(packed, s4, 0, y4).run(),
        ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
        F,
    );
    assert!(msg.contains("is not supported by cann-sim"), "{msg}");
    destroy(
        &[x, y3, s3, odd, y4, w4, s_groups, long, s4, packed],
        &[dx, dw, ds, dy],
    );
}
