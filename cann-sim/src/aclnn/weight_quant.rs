//! The planning function of `aclnnWeightQuantBatchMatmulV2`: binds its C
//! arguments (an int4 weight through [`super::int4`], the `UINT64`/`INT64`
//! packed scales as int64 words) and asks the engine
//! ([`crate::ops::weight_quant`]) for the kernel, which checks the page's
//! rules (161002).
//!
//! Refused beyond those: an int32 weight (int4 values packed by
//! `aclnnConvertWeightToINT4Pack`) and the Ascend 950 forms (float8/float4/
//! hifloat8/float32 weights, a float8_e8m0 scale), which the simulator has
//! no kernel for (561003); a packed antiquantScale outside the one template
//! the A2/A3 parts run it with (561002, as the release's tiling finds no
//! template).

#![allow(non_snake_case)]

use super::exec::{self, Obj, View};
use super::nn::{input, opt_input, output, planned};
use super::operators::Planned;
use crate::ops::DType;
use crate::ops::weight_quant::{self as wq, AntiquantScale, QuantWeight, WeightQuantArgs};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID,
    aclTensor, aclnnStatus,
};

/// A `UINT64`/`INT64` tensor argument bound as int64 words (the simulator's
/// engine has no unsigned 64-bit type; the bits are the same).
fn bound_words(f: &str, what: &str, h: *const aclTensor) -> Result<View, aclnnStatus> {
    let o = exec::tensor_arg(f, what, h as usize)?;
    let Obj::Tensor(t) = &*o else {
        return Err(exec::kind_mismatch(f, what));
    };
    let (spec, strides) = exec::checked_layout(f, what, t, DType::I64, false)?;
    let addr = (t.offset as usize)
        .checked_mul(8)
        .and_then(|b| t.addr.checked_add(b))
        .ok_or_else(|| {
            fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("{f}: {what}: offset overflows"),
            )
        })?;
    Ok(View {
        spec,
        addr,
        strides,
    })
}

/// Whether a view is the transpose of a contiguous matrix (`[r, c]` with
/// strides `[1, r]`).
fn transposed(shape: &[i64], strides: Option<&[i64]>) -> bool {
    shape.len() == 2 && strides == Some(&[1, shape[0]][..])
}

/// The one template that runs a packed antiquantScale on the A2/A3 parts
/// (hicann/ops-nn `matmul/weight_quant_batch_matmul_v2/op_host/op_tiling/
/// weight_quant_batch_matmul_v2_tiling_fixpipe.cpp`, `CheckShapeIsCapable`;
/// the page's antiquantScale constraint): k and n multiples of 64, m in
/// [1, 96], the weight transposed, x not, per-channel scales. Anything
/// else finds no tiling (561002).
fn fixpipe_template(
    f: &str,
    x: &View,
    w: &View,
    scale: &View,
    group: i32,
) -> Result<(), aclnnStatus> {
    let (m, k) = (x.spec.shape[0], x.spec.shape[1]);
    let n = w.spec.shape[1];
    let why = if k % 64 != 0 || n % 64 != 0 {
        Some(format!("k = {k} and n = {n} must be multiples of 64"))
    } else if m > 96 {
        Some(format!("m = {m} must lie in [1, 96]"))
    } else if !transposed(&w.spec.shape, w.strides.as_deref()) {
        Some("the weight must be a transposed view ([n, k] memory viewed as [k, n])".into())
    } else if transposed(&x.spec.shape, x.strides.as_deref()) {
        Some("x must not be transposed".into())
    } else if group != 0 || !(scale.spec.shape == [n] || scale.spec.shape == [1, n]) {
        Some(format!(
            "the scales must be per channel ([{n}] or [1, {n}], group size 0)"
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(fail(
            ACLNN_ERR_INNER_TILING_ERROR,
            format!("{f}: a uint64/int64 antiquantScale runs only in the fixpipe template: {why}"),
        )),
        None => Ok(()),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn weight_quant_matmul(
    f: &'static str,
    x: *const aclTensor,
    w: *const aclTensor,
    scale: *const aclTensor,
    offset: *const aclTensor,
    quant_scale: *const aclTensor,
    quant_offset: *const aclTensor,
    bias: *const aclTensor,
    group: i32,
    y: *const aclTensor,
) -> Planned {
    let no_kernel = |what: String| {
        Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!("{f}: {what} is not supported by cann-sim"),
        ))
    };
    let w_dtype = exec::dtype_of(w as usize);
    if w_dtype == Some(acl_sys::ACL_INT32) {
        // hicann/ops-nn aclnnWeightQuantBatchMatmulV2.md: an int32 weight holds
        // eight int4 values packed by aclnnConvertWeightToINT4Pack.
        return Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: an int32 weight (int4 values packed by aclnnConvertWeightToINT4Pack) is not supported by cann-sim; pass an int4 weight"
            ),
        ));
    }
    // The page's Ascend 950 forms (its superscript 2: not on A2/A3).
    if let Some(d) = w_dtype.filter(|d| {
        [
            acl_sys::ACL_FLOAT8_E4M3FN,
            acl_sys::ACL_HIFLOAT8,
            acl_sys::ACL_FLOAT,
            acl_sys::ACL_FLOAT4_E2M1,
        ]
        .contains(d)
    }) {
        return no_kernel(format!("a weight of aclDataType {d} (an Ascend 950 form)"));
    }
    let scale_dtype = exec::dtype_of(scale as usize);
    if scale_dtype == Some(acl_sys::ACL_FLOAT8_E8M0) {
        return no_kernel("a float8_e8m0 antiquantScale (the Ascend 950 MX form)".into());
    }
    let xv = input(f, "x", x)?;
    let (wv, int4) = if super::int4::is_int4(w) {
        let (v, l) = super::int4::bound_int4(f, "weight", w)?;
        (v, Some(l))
    } else {
        (input(f, "weight", w)?, None)
    };
    let packed = matches!(scale_dtype, Some(acl_sys::ACL_UINT64 | acl_sys::ACL_INT64));
    let sv = if packed {
        bound_words(f, "antiquantScale", scale)?
    } else {
        input(f, "antiquantScale", scale)?
    };
    let qsv = if quant_scale.is_null() {
        None
    } else if exec::dtype_of(quant_scale as usize) == Some(acl_sys::ACL_UINT64) {
        Some(bound_words(f, "quantScaleOptional", quant_scale)?)
    } else {
        // op_api CheckQuantScale: only UINT64, from aclnnTransQuantParam.
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{f}: quantScaleOptional must be uint64 (from aclnnTransQuantParam)"),
        ));
    };
    let (ov_, bv, qov) = (
        opt_input(f, "antiquantOffsetOptional", offset)?,
        opt_input(f, "biasOptional", bias)?,
        opt_input(f, "quantOffsetOptional", quant_offset)?,
    );
    let yv = output(f, "y", y)?;
    let k = wq::weight_quant_matmul(WeightQuantArgs {
        x: &xv.spec,
        weight: match &int4 {
            Some(l) => QuantWeight::Int4(l),
            None => QuantWeight::Int8(&wv.spec),
        },
        scale: if packed {
            AntiquantScale::Packed(&sv.spec)
        } else {
            AntiquantScale::Float(&sv.spec)
        },
        offset: ov_.as_ref().map(|o| &o.spec),
        quant_scale: qsv.as_ref().map(|q| &q.spec),
        quant_offset: qov.as_ref().map(|q| &q.spec),
        bias: bv.as_ref().map(|b| &b.spec),
        group: i64::from(group),
        out: yv.spec.dtype,
    });
    if packed && k.is_ok() {
        fixpipe_template(f, &xv, &wv, &sv, group)?;
    }
    // Inputs in the kernel's order; quantOffsetOptional last (bound, as
    // the operator takes it, and not read: see the kernel's docs).
    let inputs = [Some(xv), Some(wv), Some(sv), ov_, bv, qsv, qov]
        .into_iter()
        .flatten()
        .collect();
    planned(f, &["y"], inputs, vec![yv], k)
}
