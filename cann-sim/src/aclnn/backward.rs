//! The planning functions of the module operators of the training set and
//! their backwards (convolution, pooling, normalisation, upsampling): each
//! looks up its C arguments, asks the engine ([`crate::ops::backward`],
//! [`crate::ops::upsample`]) for the kernel and builds the plan, as
//! [`super::nn`]'s do. The table's `sim` entries call these by path.
//!
//! `outputMask`: a gradient the mask selects must have its output (null is
//! 161001); one it does not select is neither computed nor written, its
//! output may be null. A mask that is not 3 long is 161001 for
//! ConvolutionBackward and BatchNormBackward (their releases check it
//! with the null pointers) and 161002 for LayerNormBackward and
//! GroupNormBackward (sources cited per function).

#![allow(non_snake_case)]

use super::exec::{self, Kind, Obj, View};
use super::nn::{input, ints, invalid, opt_input, opt_output, output, planned};
use super::operators::Planned;
use crate::ops::backward::{self as bw, BatchNormArgs};
use crate::ops::nn::ConvAttrs;
use crate::ops::upsample::{self as up, Mode};
use crate::ops::{DType, TensorSpec};
use crate::recent_error::fail;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_NULLPTR, aclBoolArray, aclIntArray, aclTensor, aclnnStatus};

/// The output names of each subset of three optional gradients, indexed by
/// the mask's bits (first gradient = bit 0).
macro_rules! subsets {
    ($a:literal, $b:literal, $c:literal) => {
        [
            &[],
            &[$a],
            &[$b],
            &[$a, $b],
            &[$c],
            &[$a, $c],
            &[$b, $c],
            &[$a, $b, $c],
        ]
    };
}

type Names = [&'static [&'static str]; 8];

/// The mask, the outputs of the selected gradients and their dtypes.
type Grads = ([bool; 3], Vec<View>, [Option<DType>; 3]);

/// A bool array argument (null 161001).
fn bools(f: &str, what: &str, h: *const aclBoolArray) -> Result<Vec<bool>, aclnnStatus> {
    let o = exec::arg(f, what, h as usize, Kind::BoolArray)?;
    match &*o {
        Obj::BoolArray(v) => Ok(v.clone()),
        _ => Err(invalid(f, &format!("{what} is not a bool array"))),
    }
}

/// The optional gradients of a backward: `outputMask` (3 entries, else
/// `bad_len`), and the output of each selected gradient (null 161001).
fn masked_grads(
    f: &'static str,
    mask: *const aclBoolArray,
    bad_len: aclnnStatus,
    outs: [(&str, *const aclTensor); 3],
) -> Result<Grads, aclnnStatus> {
    let m = bools(f, "outputMask", mask)?;
    let Ok(m) = <[bool; 3]>::try_from(m.as_slice()) else {
        return Err(fail(
            bad_len,
            format!("{f}: outputMask has {} entries; it needs 3", m.len()),
        ));
    };
    let (mut views, mut dtypes) = (Vec::new(), [None; 3]);
    for (k, (what, h)) in outs.into_iter().enumerate() {
        if m[k] {
            let v = output(f, what, h)?;
            dtypes[k] = Some(v.spec.dtype);
            views.push(v);
        }
    }
    Ok((m, views, dtypes))
}

fn mask_index(m: [bool; 3]) -> usize {
    usize::from(m[0]) | usize::from(m[1]) << 1 | usize::from(m[2]) << 2
}

fn cube_math(f: &str, cube: i8) -> Result<(), aclnnStatus> {
    if (0..=3).contains(&cube) {
        Ok(())
    } else {
        Err(invalid(f, &format!("cubeMathType {cube} is not 0..=3")))
    }
}

/// The padding of a 2-D pooling, 1 or 2 entries, as (top, left, bottom,
/// right).
fn pads2(f: &str, what: &str, p: &[i64]) -> Result<[i64; 4], aclnnStatus> {
    match p.len() {
        1 => Ok([p[0]; 4]),
        2 => Ok([p[0], p[1], p[0], p[1]]),
        n => Err(invalid(
            f,
            &format!("{what} has {n} entries; it needs 1 or 2"),
        )),
    }
}

// ---------------------------------------------------------------------------
// Convolution.
// ---------------------------------------------------------------------------

static CONV: Names = subsets!("gradInput", "gradWeight", "gradBias");

/// aclnnConvolutionBackward. The null checks, the outputMask length (161001)
/// and the masked outputs follow hicann/ops-nn
/// `conv/convolution_backward/op_api/convolution_backward_checker.cpp`
/// (`CheckNotNull`); cubeMathType outside 0..=3 is 161002
/// (`CheckCubeMathTypeConvBackwardCommon`).
#[allow(clippy::too_many_arguments)]
pub(super) fn convolution_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    w: *const aclTensor,
    bias_sizes: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    transposed: bool,
    output_padding: *const aclIntArray,
    groups: i32,
    mask: *const aclBoolArray,
    cube: i8,
    grad_input: *const aclTensor,
    grad_weight: *const aclTensor,
    grad_bias: *const aclTensor,
) -> Planned {
    let (gv, xv, wv) = (
        input(f, "gradOutput", grad)?,
        input(f, "input", x)?,
        input(f, "weight", w)?,
    );
    let attrs = ConvAttrs {
        stride: ints(f, "stride", stride)?,
        padding: ints(f, "padding", padding)?,
        dilation: ints(f, "dilation", dilation)?,
        transposed,
        output_padding: ints(f, "outputPadding", output_padding)?,
        groups: i64::from(groups),
    };
    let (m, outs, dtypes) = masked_grads(
        f,
        mask,
        ACLNN_ERR_PARAM_NULLPTR,
        [
            ("gradInput", grad_input),
            ("gradWeight", grad_weight),
            ("gradBias", grad_bias),
        ],
    )?;
    cube_math(f, cube)?;
    let bias_size = if m[2] {
        let b = ints(f, "biasSizes", bias_sizes)?;
        if b.len() != 1 {
            return Err(invalid(
                f,
                &format!("biasSizes has {} entries; it needs 1", b.len()),
            ));
        }
        Some(b[0])
    } else {
        None
    };
    let k = bw::convolution_backward(&gv.spec, &xv.spec, &wv.spec, bias_size, &attrs, m, dtypes);
    planned(f, CONV[mask_index(m)], vec![gv, xv, wv], outs, k)
}

// ---------------------------------------------------------------------------
// Pooling.
// ---------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
pub(super) fn max_pool2d_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    indices: *const aclTensor,
    kernel: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    ceil: bool,
    grad_input: *const aclTensor,
) -> Planned {
    let (gv, xv, iv) = (
        input(f, "gradOutput", grad)?,
        input(f, "self", x)?,
        input(f, "indices", indices)?,
    );
    let (k, st, p, dl) = (
        ints(f, "kernelSize", kernel)?,
        ints(f, "stride", stride)?,
        ints(f, "padding", padding)?,
        ints(f, "dilation", dilation)?,
    );
    let p4 = pads2(f, "padding", &p)?;
    let ov = output(f, "gradInput", grad_input)?;
    let kern = bw::max_pool2d_backward(
        &gv.spec,
        &xv.spec,
        &iv.spec,
        &k,
        &st,
        p4,
        &dl,
        ceil,
        ov.spec.dtype,
    );
    planned(f, &["gradInput"], vec![gv, xv, iv], vec![ov], kern)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn avg_pool2d_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    kernel: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    ceil: bool,
    count_pad: bool,
    divisor: i64,
    cube: i8,
    grad_input: *const aclTensor,
) -> Planned {
    let (gv, xv) = (input(f, "gradOutput", grad)?, input(f, "self", x)?);
    let k = ints(f, "kernelSize", kernel)?;
    let st = if stride.is_null() {
        Vec::new()
    } else {
        ints(f, "stride", stride)?
    };
    let p4 = pads2(f, "padding", &ints(f, "padding", padding)?)?;
    let ov = output(f, "gradInput", grad_input)?;
    cube_math(f, cube)?;
    let kern = bw::avg_pool2d_backward(
        &gv.spec,
        &xv.spec,
        &k,
        &st,
        p4,
        ceil,
        count_pad,
        divisor,
        ov.spec.dtype,
    );
    planned(f, &["gradInput"], vec![gv, xv], vec![ov], kern)
}

pub(super) fn adaptive_avg_pool2d(
    f: &'static str,
    x: *const aclTensor,
    size: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let sz = ints(f, "outputSize", size)?;
    let ov = output(f, "out", out)?;
    let k = bw::adaptive_avg_pool2d(&xv.spec, &sz, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

pub(super) fn adaptive_avg_pool2d_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (gv, xv) = (input(f, "gradOutput", grad)?, input(f, "self", x)?);
    let ov = output(f, "out", out)?;
    let k = bw::adaptive_avg_pool2d_backward(&gv.spec, &xv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![gv, xv], vec![ov], k)
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

static LAYER_NORM: Names = subsets!("gradInputOut", "gradWeightOut", "gradBiasOut");

/// aclnnLayerNormBackward: an outputMask that is not 3 long is 161002,
/// a selected gradient's null output 161001 (hicann/ops-nn
/// `norm/layer_norm_grad_v3/op_host/op_api/aclnn_layer_norm_backward.cpp`).
#[allow(clippy::too_many_arguments)]
pub(super) fn layer_norm_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    normalized: *const aclIntArray,
    mean: *const aclTensor,
    rstd: *const aclTensor,
    weight: *const aclTensor,
    bias: *const aclTensor,
    mask: *const aclBoolArray,
    grad_input: *const aclTensor,
    grad_weight: *const aclTensor,
    grad_bias: *const aclTensor,
) -> Planned {
    let (gv, xv) = (input(f, "gradOut", grad)?, input(f, "input", x)?);
    let shape = ints(f, "normalizedShape", normalized)?;
    let (mv, rv) = (input(f, "mean", mean)?, input(f, "rstd", rstd)?);
    let (wv, bv) = (
        opt_input(f, "weightOptional", weight)?,
        opt_input(f, "biasOptional", bias)?,
    );
    let (m, outs, dtypes) = masked_grads(
        f,
        mask,
        acl_sys::aclnn::ACLNN_ERR_PARAM_INVALID,
        [
            ("gradInputOut", grad_input),
            ("gradWeightOut", grad_weight),
            ("gradBiasOut", grad_bias),
        ],
    )?;
    let k = bw::layer_norm_backward(
        &gv.spec,
        &xv.spec,
        &shape,
        &mv.spec,
        &rv.spec,
        wv.as_ref().map(|v| &v.spec),
        bv.as_ref().map(|v| &v.spec),
        m,
        dtypes,
    );
    // The bias is checked but not read.
    let inputs = [Some(gv), Some(xv), Some(mv), Some(rv), wv]
        .into_iter()
        .flatten()
        .collect();
    planned(f, LAYER_NORM[mask_index(m)], inputs, outs, k)
}

pub(super) fn rms_norm_grad(
    f: &'static str,
    dy: *const aclTensor,
    x: *const aclTensor,
    rstd: *const aclTensor,
    gamma: *const aclTensor,
    dx: *const aclTensor,
    dgamma: *const aclTensor,
) -> Planned {
    let (dv, xv, rv, gv) = (
        input(f, "dy", dy)?,
        input(f, "x", x)?,
        input(f, "rstd", rstd)?,
        input(f, "gamma", gamma)?,
    );
    let (ov, gov) = (output(f, "dxOut", dx)?, output(f, "dgammaOut", dgamma)?);
    let k = bw::rms_norm_grad(
        &dv.spec,
        &xv.spec,
        &rv.spec,
        &gv.spec,
        [ov.spec.dtype, gov.spec.dtype],
    );
    planned(
        f,
        &["dxOut", "dgammaOut"],
        vec![dv, xv, rv, gv],
        vec![ov, gov],
        k,
    )
}

static GROUP_NORM: Names = subsets!("gradInput", "gradGammaOut", "gradBetaOut");

/// aclnnGroupNormBackward: outputMask not 3 long is 161002 (the page's
/// return codes, hicann/ops-nn `norm/group_norm_grad/docs`).
#[allow(clippy::too_many_arguments)]
pub(super) fn group_norm_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    mean: *const aclTensor,
    rstd: *const aclTensor,
    gamma: *const aclTensor,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    mask: *const aclBoolArray,
    grad_input: *const aclTensor,
    grad_gamma: *const aclTensor,
    grad_beta: *const aclTensor,
) -> Planned {
    let (gv, xv, mv, rv) = (
        input(f, "gradOut", grad)?,
        input(f, "input", x)?,
        input(f, "mean", mean)?,
        input(f, "rstd", rstd)?,
    );
    let gm = opt_input(f, "gamma", gamma)?;
    let (m, outs, dtypes) = masked_grads(
        f,
        mask,
        acl_sys::aclnn::ACLNN_ERR_PARAM_INVALID,
        [
            ("gradInput", grad_input),
            ("gradGammaOut", grad_gamma),
            ("gradBetaOut", grad_beta),
        ],
    )?;
    let k = bw::group_norm_backward(
        &gv.spec,
        &xv.spec,
        &mv.spec,
        &rv.spec,
        gm.as_ref().map(|v| &v.spec),
        [n, c, hxw, group],
        m,
        dtypes,
    );
    let inputs = [Some(gv), Some(xv), Some(mv), Some(rv), gm]
        .into_iter()
        .flatten()
        .collect();
    planned(f, GROUP_NORM[mask_index(m)], inputs, outs, k)
}

/// aclnnBatchNorm: saveMean and saveInvstd must be given in training
/// (161001), may be null in inference (hicann/ops-nn
/// `norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp`, `CheckNotNull`).
/// The running statistics are read (inputs) and, in training, updated
/// (outputs).
#[allow(clippy::too_many_arguments)]
pub(super) fn batch_norm(
    f: &'static str,
    x: *const aclTensor,
    weight: *const aclTensor,
    bias: *const aclTensor,
    running_mean: *const aclTensor,
    running_var: *const aclTensor,
    training: bool,
    momentum: f64,
    eps: f64,
    out: *const aclTensor,
    save_mean: *const aclTensor,
    save_invstd: *const aclTensor,
) -> Planned {
    let xv = input(f, "input", x)?;
    let ov = output(f, "output", out)?;
    let (sm, si) = if training {
        (
            Some(output(f, "saveMean", save_mean)?),
            Some(output(f, "saveInvstd", save_invstd)?),
        )
    } else {
        (
            opt_output(f, "saveMean", save_mean)?,
            opt_output(f, "saveInvstd", save_invstd)?,
        )
    };
    let (wv, bv) = (opt_input(f, "weight", weight)?, opt_input(f, "bias", bias)?);
    let (rm, rv) = (
        opt_output(f, "runningMean", running_mean)?,
        opt_output(f, "runningVar", running_var)?,
    );
    let empty = TensorSpec {
        dtype: xv.spec.dtype,
        shape: vec![0],
    };
    let args = BatchNormArgs {
        input: &xv.spec,
        weight: wv.as_ref().map(|v| &v.spec),
        bias: bv.as_ref().map(|v| &v.spec),
        running_mean: rm.as_ref().map(|v| &v.spec),
        running_var: rv.as_ref().map(|v| &v.spec),
    };
    let save = [
        sm.as_ref().map_or(&empty, |v| &v.spec),
        si.as_ref().map_or(&empty, |v| &v.spec),
    ];
    let k = bw::batch_norm(args, training, momentum, eps, &ov.spec, save);
    let inputs = [Some(xv.clone()), wv, bv, rm.clone(), rv.clone()]
        .into_iter()
        .flatten()
        .collect();
    let (names, outputs): (&'static [&'static str], Vec<View>) = if training {
        let outs = [Some(ov), sm, si, rm.clone(), rv.clone()];
        let names: &'static [&'static str] = match (rm.is_some(), rv.is_some()) {
            (true, true) => &[
                "output",
                "saveMean",
                "saveInvstd",
                "runningMean",
                "runningVar",
            ],
            (true, false) => &["output", "saveMean", "saveInvstd", "runningMean"],
            (false, true) => &["output", "saveMean", "saveInvstd", "runningVar"],
            (false, false) => &["output", "saveMean", "saveInvstd"],
        };
        (names, outs.into_iter().flatten().collect())
    } else {
        (&["output"], vec![ov])
    };
    planned(f, names, inputs, outputs, k)
}

static BATCH_NORM: Names = subsets!("gradInput", "gradWeight", "gradBias");

/// aclnnBatchNormBackward: an outputMask that is not 3 long and a selected
/// gradient's null output are 161001 (hicann/ops-nn
/// `norm/batch_norm_grad_v3/op_host/op_api/aclnn_batch_norm_backward.cpp`,
/// `CheckMaskNotNull`); the statistics may be null where the mode does
/// not read them.
#[allow(clippy::too_many_arguments)]
pub(super) fn batch_norm_backward(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    weight: *const aclTensor,
    running_mean: *const aclTensor,
    running_var: *const aclTensor,
    save_mean: *const aclTensor,
    save_invstd: *const aclTensor,
    training: bool,
    eps: f64,
    mask: *const aclBoolArray,
    grad_input: *const aclTensor,
    grad_weight: *const aclTensor,
    grad_bias: *const aclTensor,
) -> Planned {
    let (gv, xv) = (input(f, "gradOut", grad)?, input(f, "input", x)?);
    let (m, outs, dtypes) = masked_grads(
        f,
        mask,
        ACLNN_ERR_PARAM_NULLPTR,
        [
            ("gradInput", grad_input),
            ("gradWeight", grad_weight),
            ("gradBias", grad_bias),
        ],
    )?;
    let stats = [
        opt_input(f, "weight", weight)?,
        opt_input(f, "runningMean", running_mean)?,
        opt_input(f, "runningVar", running_var)?,
        opt_input(f, "saveMean", save_mean)?,
        opt_input(f, "saveInvstd", save_invstd)?,
    ];
    let specs = [0, 1, 2, 3, 4].map(|k| stats[k].as_ref().map(|v| &v.spec));
    let k = bw::batch_norm_backward(&gv.spec, &xv.spec, specs, training, eps, m, dtypes);
    let inputs = [Some(gv), Some(xv)]
        .into_iter()
        .chain(stats)
        .flatten()
        .collect();
    planned(f, BATCH_NORM[mask_index(m)], inputs, outs, k)
}

// ---------------------------------------------------------------------------
// Upsampling.
// ---------------------------------------------------------------------------

/// aclnnUpsampleBilinear2d (self f32/f16/bf16/f64) and
/// aclnnUpsampleBicubic2d (f32/f16/bf16).
#[allow(clippy::too_many_arguments)]
pub(super) fn upsample2d(
    f: &'static str,
    x: *const aclTensor,
    size: *const aclIntArray,
    align: bool,
    scales_h: f64,
    scales_w: f64,
    out: *const aclTensor,
    bicubic: bool,
) -> Planned {
    let xv = input(f, "self", x)?;
    let sz = ints(f, "outputSize", size)?;
    let ov = output(f, "out", out)?;
    let (mode, dtypes): (Mode, &[DType]) = if bicubic {
        (Mode::Bicubic(align), &[DType::F32, DType::F16, DType::BF16])
    } else {
        (
            Mode::Bilinear(align),
            &[DType::F32, DType::F16, DType::BF16, DType::F64],
        )
    };
    let k = up::upsample2d(
        &xv.spec,
        &sz,
        mode,
        (scales_h, scales_w),
        ov.spec.dtype,
        dtypes,
    );
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// The backwards of the upsamplings: `mode` None is nearest, else
/// (bicubic, alignCorners).
#[allow(clippy::too_many_arguments)]
pub(super) fn upsample2d_backward(
    f: &'static str,
    grad: *const aclTensor,
    output_size: *const aclIntArray,
    input_size: *const aclIntArray,
    mode: Option<(bool, bool)>,
    scales_h: f64,
    scales_w: f64,
    out: *const aclTensor,
    out_name: &'static str,
) -> Planned {
    let gv = input(f, "gradOut", grad)?;
    let (os, is) = (
        ints(f, "outputSize", output_size)?,
        ints(f, "inputSize", input_size)?,
    );
    let ov = output(f, out_name, out)?;
    let mode = match mode {
        None => Mode::Nearest,
        Some((true, align)) => Mode::Bicubic(align),
        Some((false, align)) => Mode::Bilinear(align),
    };
    let k = up::upsample2d_backward(
        &gv.spec,
        &os,
        &is,
        mode,
        (scales_h, scales_w),
        ov.spec.dtype,
    );
    let names: &'static [&'static str] = if out_name == "out" {
        &["out"]
    } else {
        &["gradInput"]
    };
    planned(f, names, vec![gv], vec![ov], k)
}
