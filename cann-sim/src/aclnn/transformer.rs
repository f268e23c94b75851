//! The operators a transformer decoder needs beyond the elementwise,
//! matmul and softmax set of [`super::operators`]: the mapping to CANN
//! operators (as `aclnnXxx` plans them on the device):
//!
//! | aclnn | CANN op | notes |
//! |---|---|---|
//! | Embedding | GatherV2 | `axis` 0; `weight` 2-D |
//! | RmsNorm | (planned kernel, `nn.rs`) | mixed float types; `rstdOut` as the release takes it; a gamma that does not fit is 561002 |
//! | RotaryPositionEmbedding | RotaryPositionEmbedding | `mode` 0..=3 (161002 else); cann-sim has kernels for 0 and 1 only (561003) |
//! | SwiGlu | SwiGlu | `dim` |
//! | ArgMax | ArgMaxV2 | `dtype` = `out`'s (int32/int64); `keepdim` keeps the reduced dimension as 1 |
//! | InplaceCopy | Cast | to `selfRef`'s type; `src` broadcasts to `selfRef` (read with stride 0) |
//! | Muls | (planned kernel, `nn.rs`) | a float scalar makes an integer tensor's result float |
//! | InplaceMaskedFillScalar | MaskedFill | `mask` bool, broadcasting to `selfRef`; `value` converted to `selfRef`'s type |

#![allow(non_snake_case)]

use super::exec::{self, PlanIn, View, bound, contiguous_strides, i64_input, scalar_arg};
use super::operators::{Planned, dev, plan, plan_out};
use crate::ops::{AttrValue, Attrs, DType, TensorSpec};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID,
    aclScalar, aclTensor, aclnnStatus,
};

fn invalid(msg: String) -> aclnnStatus {
    fail(ACLNN_ERR_PARAM_INVALID, msg)
}

pub(super) fn embedding(
    f: &str,
    weight: *const aclTensor,
    indices: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    // Every argument is looked up (null: 161001) before any is judged.
    let w = bound(f, "weight", weight as usize, false)?;
    let indices = dev(f, "indices", indices as usize)?;
    let out = bound(f, "out", out as usize, true)?;
    if w.spec.shape.len() != 2 {
        return Err(invalid(format!(
            "{f}: weight must be 2-D, got {:?}",
            w.spec.shape
        )));
    }
    let inputs = vec![PlanIn::Device(w), indices, i64_input(&[0])];
    Ok(plan(
        "aclnnEmbedding",
        "GatherV2",
        Attrs::new(),
        inputs,
        out,
    ))
}

pub(super) fn rotary(
    f: &str,
    x: *const aclTensor,
    cos: *const aclTensor,
    sin: *const aclTensor,
    mode: i64,
    out: *const aclTensor,
) -> Planned {
    let inputs = vec![
        dev(f, "x", x as usize)?,
        dev(f, "cos", cos as usize)?,
        dev(f, "sin", sin as usize)?,
    ];
    let out = bound(f, "out", out as usize, true)?;
    match mode {
        0 | 1 => {}
        2 | 3 => {
            return Err(fail(
                ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                format!(
                    "{f}: mode {mode} is not supported by cann-sim (only 0 half, 1 interleave)"
                ),
            ));
        }
        // The release refuses an unknown mode in its tiling, 561002
        // (hicann/ops-transformer `posembedding/rotary_position_embedding/
        // op_host/rotary_position_embedding_tiling*.cpp`, mode check).
        _ => {
            return Err(fail(
                ACLNN_ERR_INNER_TILING_ERROR,
                format!("{f}: mode {mode} is not 0..=3"),
            ));
        }
    }
    // So are cos/sin whose size does not fit x (the same tiling): a shape
    // rule of the kernel, not of the parameter check.
    let shape = |p: &PlanIn| match p {
        PlanIn::Device(v) => v.spec.shape.clone(),
        PlanIn::Host(s, _) => s.shape.clone(),
    };
    let xs = shape(&inputs[0]);
    for (name, p) in [("cos", &inputs[1]), ("sin", &inputs[2])] {
        let t = shape(p);
        let fits = xs.len() == 4
            && t.len() == 4
            && t[3] == xs[3]
            && t.iter().zip(&xs).all(|(&a, &b)| a == b || a == 1);
        if xs.len() == 4 && t.len() == 4 && !fits {
            return Err(fail(
                ACLNN_ERR_INNER_TILING_ERROR,
                format!(
                    "{f}: {name} {t:?} does not fit x {xs:?} (its last dimension must equal x's and the others equal or 1)"
                ),
            ));
        }
    }
    let attrs = Attrs::from([("mode".to_string(), AttrValue::Int(mode))]);
    Ok(plan(
        "aclnnRotaryPositionEmbedding",
        "RotaryPositionEmbedding",
        attrs,
        inputs,
        out,
    ))
}

pub(super) fn swi_glu(f: &str, x: *const aclTensor, dim: i64, out: *const aclTensor) -> Planned {
    let inputs = vec![dev(f, "x", x as usize)?];
    let attrs = Attrs::from([("dim".to_string(), AttrValue::Int(dim))]);
    plan_out(f, "aclnnSwiGlu", "SwiGlu", attrs, inputs, out)
}

pub(super) fn arg_max(
    f: &str,
    x: *const aclTensor,
    dim: i64,
    keepdim: bool,
    out: *const aclTensor,
) -> Planned {
    let x = bound(f, "self", x as usize, false)?;
    let mut out = bound(f, "out", out as usize, true)?;
    let rank = x.spec.shape.len();
    let Some(a) = crate::ops::normalize_axis(dim, rank.max(1)) else {
        return Err(invalid(format!(
            "{f}: dim {dim} is out of range for self of shape {:?}",
            x.spec.shape
        )));
    };
    if keepdim && rank > 0 {
        // ArgMaxV2 drops the dimension: write `out` without its size-1 axis.
        if out.spec.shape.len() != rank || out.spec.shape[a] != 1 {
            return Err(invalid(format!(
                "{f}: with keepdim, out must be self's shape {:?} with dimension {a} of 1, got {:?}",
                x.spec.shape, out.spec.shape
            )));
        }
        out.spec.shape.remove(a);
        if let Some(st) = &mut out.strides {
            st.remove(a);
        }
    }
    let attrs = Attrs::from([(
        "dtype".to_string(),
        AttrValue::DataType(out.spec.dtype.to_acl()),
    )]);
    let inputs = vec![PlanIn::Device(x), i64_input(&[dim])];
    Ok(plan("aclnnArgMax", "ArgMaxV2", attrs, inputs, out))
}

/// Whether `src` broadcasts to `shape` (NumPy rules, `shape` unchanged:
/// aligned at the last dimension, each of `src`'s equal or 1).
pub(super) fn broadcasts_to(src: &[i64], shape: &[i64]) -> bool {
    src.len() <= shape.len()
        && src
            .iter()
            .zip(&shape[shape.len() - src.len()..])
            .all(|(&s, &d)| s == d || s == 1)
}

/// `src` read as a tensor of `shape` (NumPy broadcasting: stride 0 along
/// the dimensions it broadcasts).
fn broadcast_view(f: &str, src: View, shape: &[i64]) -> Result<View, aclnnStatus> {
    if src.spec.shape == shape {
        return Ok(src);
    }
    let (sr, r) = (src.spec.shape.len(), shape.len());
    if !broadcasts_to(&src.spec.shape, shape) {
        return Err(invalid(format!(
            "{f}: src of shape {:?} does not broadcast to selfRef of shape {shape:?}",
            src.spec.shape
        )));
    }
    let own = src
        .strides
        .clone()
        .unwrap_or_else(|| contiguous_strides(&src.spec.shape));
    let mut strides = vec![0i64; r];
    for (i, (&d, &s)) in src.spec.shape.iter().zip(&own).enumerate() {
        strides[r - sr + i] = if d == 1 { 0 } else { s };
    }
    Ok(View {
        spec: crate::ops::TensorSpec {
            dtype: src.spec.dtype,
            shape: shape.to_vec(),
        },
        addr: src.addr,
        strides: Some(strides),
    })
}

pub(super) fn inplace_copy(f: &str, dst: *const aclTensor, src: *const aclTensor) -> Planned {
    let dst = bound(f, "selfRef", dst as usize, true)?;
    let src = bound(f, "src", src as usize, false)?;
    let src = broadcast_view(f, src, &dst.spec.shape)?;
    let attrs = Attrs::from([(
        "dst_type".to_string(),
        AttrValue::DataType(dst.spec.dtype.to_acl()),
    )]);
    Ok(plan(
        "aclnnInplaceCopy",
        "Cast",
        attrs,
        vec![PlanIn::Device(src)],
        dst,
    ))
}

/// A scalar argument as a constant input of `dtype` (converted).
fn scalar_input(
    f: &str,
    what: &str,
    value: *const aclScalar,
    dtype: DType,
) -> Result<PlanIn, aclnnStatus> {
    let (d, b) = scalar_arg(f, what, value as usize)?;
    Ok(PlanIn::Host(
        TensorSpec {
            dtype,
            shape: vec![],
        },
        exec::from_f64(dtype, exec::to_f64(d, &b)),
    ))
}

pub(super) fn masked_fill(
    f: &str,
    x: *const aclTensor,
    mask: *const aclTensor,
    value: *const aclScalar,
) -> Planned {
    let out = bound(f, "selfRef", x as usize, true)?;
    let mask = dev(f, "mask", mask as usize)?;
    let value = scalar_input(f, "value", value, out.spec.dtype)?;
    let inputs = vec![PlanIn::Device(out.clone()), mask, value];
    Ok(plan(
        "aclnnInplaceMaskedFillScalar",
        "MaskedFill",
        Attrs::new(),
        inputs,
        out,
    ))
}
