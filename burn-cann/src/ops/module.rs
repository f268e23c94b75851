//! `ModuleOps` for [`Cann`]: convolution, pooling and interpolation on
//! their aclnn operators.

use super::*;
use crate::Cann;
use crate::kernel::unsupported;
use acl::aclnn::{CubeMathType, IntArray};
use burn_backend::ops::{
    AttentionModuleOptions, ConvOptions, ConvTransposeOptions, DeformConv2dBackward,
    DeformConvOptions, InterpolateMode, InterpolateOptions, MaxPool2dBackward,
    MaxPool2dWithIndices, ModuleOps, attention::attention_fallback,
};
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor};

fn ints(v: &[usize]) -> R<IntArray> {
    IntArray::new(&v.iter().map(|&x| x as i64).collect::<Vec<_>>())
}

/// Output length of a convolution or pooling window along one axis.
fn window_out(
    op: &'static str,
    input: usize,
    k: usize,
    stride: usize,
    pad_total: usize,
    dilation: usize,
    ceil: bool,
) -> R<usize> {
    let span = dilation * (k.max(1) - 1) + 1;
    let padded = input + pad_total;
    if padded < span || stride == 0 {
        return Err(crate::kernel::invalid(
            op,
            format!(
                "a window of {span} (kernel {k}, dilation {dilation}) does not fit an input of {input} padded by {pad_total}"
            ),
        ));
    }
    let n = padded - span;
    Ok(if ceil {
        n.div_ceil(stride) + 1
    } else {
        n / stride + 1
    })
}

/// `aclnnConvolution`, forward or transposed, 1-D to 3-D.
#[allow(clippy::too_many_arguments)]
fn convolution(
    op: &'static str,
    x: CannTensor,
    weight: CannTensor,
    bias: Option<CannTensor>,
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    transposed: bool,
    padding_out: &[usize],
    groups: usize,
) -> CannTensor {
    ok(
        op,
        (|| {
            let n = stride.len();
            if x.shape.len() != n + 2 || weight.shape.len() != n + 2 {
                return Err(crate::kernel::invalid(
                    op,
                    format!(
                        "x {:?} and weight {:?} do not fit a {n}-D convolution",
                        x.shape, weight.shape
                    ),
                ));
            }
            let mut shape = vec![x.shape[0]];
            if transposed {
                shape.push(weight.shape[1] * groups);
                for i in 0..n {
                    let k = weight.shape[2 + i];
                    let o = (x.shape[2 + i].max(1) - 1) * stride[i]
                        + dilation[i] * (k - 1)
                        + padding_out[i]
                        + 1;
                    shape.push(o.saturating_sub(2 * padding[i]));
                }
            } else {
                shape.push(weight.shape[0]);
                for i in 0..n {
                    shape.push(window_out(
                        op,
                        x.shape[2 + i],
                        weight.shape[2 + i],
                        stride[i],
                        2 * padding[i],
                        dilation[i],
                        false,
                    )?);
                }
            }
            let (st, pa, di, po) = (
                ints(stride)?,
                ints(padding)?,
                ints(dilation)?,
                ints(padding_out)?,
            );
            let w = weight.arg()?;
            let b = bias.as_ref().map(|b| b.arg()).transpose()?;
            kernel::map1(&x, x.kind(), &shape, |s, a, o| {
                aclnn::convolution(
                    s,
                    a,
                    &w,
                    b.as_ref(),
                    &st,
                    &pa,
                    &di,
                    transposed,
                    &po,
                    groups as i64,
                    o,
                    CubeMathType::KeepDtype,
                )
            })
        })(),
    )
}

/// The 2-D pooling output shape.
fn pool_shape(
    op: &'static str,
    x: &CannTensor,
    k: [usize; 2],
    s: [usize; 2],
    p: [usize; 2],
    d: [usize; 2],
    ceil: bool,
) -> R<Vec<usize>> {
    if x.shape.len() != 4 {
        return Err(crate::kernel::invalid(
            op,
            format!("x has shape {:?}; it must be [N, C, H, W]", x.shape),
        ));
    }
    Ok(vec![
        x.shape[0],
        x.shape[1],
        window_out(op, x.shape[2], k[0], s[0], 2 * p[0], d[0], ceil)?,
        window_out(op, x.shape[3], k[1], s[1], 2 * p[1], d[1], ceil)?,
    ])
}

impl ModuleOps<Cann> for Cann {
    fn conv2d(
        x: FloatTensor<Cann>,
        weight: FloatTensor<Cann>,
        bias: Option<FloatTensor<Cann>>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Cann> {
        convolution(
            "conv2d",
            x,
            weight,
            bias,
            &options.stride,
            &options.padding,
            &options.dilation,
            false,
            &[0, 0],
            options.groups,
        )
    }

    fn conv3d(
        x: FloatTensor<Cann>,
        weight: FloatTensor<Cann>,
        bias: Option<FloatTensor<Cann>>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Cann> {
        convolution(
            "conv3d",
            x,
            weight,
            bias,
            &options.stride,
            &options.padding,
            &options.dilation,
            false,
            &[0, 0, 0],
            options.groups,
        )
    }

    fn conv_transpose2d(
        x: FloatTensor<Cann>,
        weight: FloatTensor<Cann>,
        bias: Option<FloatTensor<Cann>>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Cann> {
        convolution(
            "conv_transpose2d",
            x,
            weight,
            bias,
            &options.stride,
            &options.padding,
            &options.dilation,
            true,
            &options.padding_out,
            options.groups,
        )
    }

    fn conv_transpose3d(
        x: FloatTensor<Cann>,
        weight: FloatTensor<Cann>,
        bias: Option<FloatTensor<Cann>>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Cann> {
        convolution(
            "conv_transpose3d",
            x,
            weight,
            bias,
            &options.stride,
            &options.padding,
            &options.dilation,
            true,
            &options.padding_out,
            options.groups,
        )
    }

    fn deform_conv2d(
        _x: FloatTensor<Cann>,
        _offset: FloatTensor<Cann>,
        _weight: FloatTensor<Cann>,
        _mask: Option<FloatTensor<Cann>>,
        _bias: Option<FloatTensor<Cann>>,
        _options: DeformConvOptions<2>,
    ) -> FloatTensor<Cann> {
        unsupported(
            "deform_conv2d",
            "the operator table has no deformable convolution",
        )
    }

    fn deform_conv2d_backward(
        _x: FloatTensor<Cann>,
        _offset: FloatTensor<Cann>,
        _weight: FloatTensor<Cann>,
        _mask: Option<FloatTensor<Cann>>,
        _bias: Option<FloatTensor<Cann>>,
        _output_grad: FloatTensor<Cann>,
        _options: DeformConvOptions<2>,
    ) -> DeformConv2dBackward<Cann> {
        unsupported(
            "deform_conv2d_backward",
            "the operator table has no deformable convolution",
        )
    }

    fn avg_pool2d(
        x: FloatTensor<Cann>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Cann> {
        ok(
            "avg_pool2d",
            (|| {
                let shape = pool_shape(
                    "avg_pool2d",
                    &x,
                    kernel_size,
                    stride,
                    padding,
                    [1, 1],
                    ceil_mode,
                )?;
                let (k, s_, p) = (ints(&kernel_size)?, ints(&stride)?, ints(&padding)?);
                kernel::map1(&x, x.kind(), &shape, |s, a, o| {
                    aclnn::avg_pool2d(
                        s,
                        a,
                        &k,
                        &s_,
                        &p,
                        ceil_mode,
                        count_include_pad,
                        0,
                        CubeMathType::KeepDtype,
                        o,
                    )
                })
            })(),
        )
    }

    fn avg_pool2d_backward(
        x: FloatTensor<Cann>,
        grad: FloatTensor<Cann>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Cann> {
        ok(
            "avg_pool2d_backward",
            (|| {
                let (k, s_, p) = (ints(&kernel_size)?, ints(&stride)?, ints(&padding)?);
                let xa = x.arg()?;
                kernel::map1(&grad, x.kind(), &x.shape, |s, g, o| {
                    aclnn::avg_pool2d_backward(
                        s,
                        g,
                        &xa,
                        &k,
                        &s_,
                        &p,
                        ceil_mode,
                        count_include_pad,
                        0,
                        CubeMathType::KeepDtype,
                        o,
                    )
                })
            })(),
        )
    }

    fn adaptive_avg_pool2d(x: FloatTensor<Cann>, output_size: [usize; 2]) -> FloatTensor<Cann> {
        ok(
            "adaptive_avg_pool2d",
            (|| {
                let shape = vec![
                    x.shape.first().copied().unwrap_or(0),
                    x.shape.get(1).copied().unwrap_or(0),
                    output_size[0],
                    output_size[1],
                ];
                let os = ints(&output_size)?;
                kernel::map1(&x, x.kind(), &shape, |s, a, o| {
                    aclnn::adaptive_avg_pool2d(s, a, &os, o)
                })
            })(),
        )
    }

    fn adaptive_avg_pool2d_backward(
        x: FloatTensor<Cann>,
        grad: FloatTensor<Cann>,
    ) -> FloatTensor<Cann> {
        ok(
            "adaptive_avg_pool2d_backward",
            (|| {
                let xa = x.arg()?;
                kernel::map1(&grad, x.kind(), &x.shape, |s, g, o| {
                    aclnn::adaptive_avg_pool2d_backward(s, g, &xa, o)
                })
            })(),
        )
    }

    fn max_pool2d(
        x: FloatTensor<Cann>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> FloatTensor<Cann> {
        Self::max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode).output
    }

    fn max_pool2d_with_indices(
        x: FloatTensor<Cann>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> MaxPool2dWithIndices<Cann> {
        let (out, idx) = ok(
            "max_pool2d_with_indices",
            (|| {
                let shape = pool_shape(
                    "max_pool2d",
                    &x,
                    kernel_size,
                    stride,
                    padding,
                    dilation,
                    ceil_mode,
                )?;
                let (k, s_, p, d) = (
                    ints(&kernel_size)?,
                    ints(&stride)?,
                    ints(&padding)?,
                    ints(&dilation)?,
                );
                let st = x.stream();
                let mut idx = crate::tensor::Out::new(&st, Kind::I64, &shape)?;
                let out = kernel::map1(&x, x.kind(), &shape, |s, a, o| {
                    aclnn::max_pool2d_with_indices(
                        s,
                        a,
                        &k,
                        &s_,
                        &p,
                        &d,
                        ceil_mode,
                        o,
                        &mut idx.arg()?,
                    )
                })?;
                Ok((out, idx.done(x.device)))
            })(),
        );
        MaxPool2dWithIndices::new(out, idx)
    }

    fn max_pool2d_with_indices_backward(
        x: FloatTensor<Cann>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
        output_grad: FloatTensor<Cann>,
        indices: IntTensor<Cann>,
    ) -> MaxPool2dBackward<Cann> {
        MaxPool2dBackward::new(ok(
            "max_pool2d_with_indices_backward",
            (|| {
                let (k, s_, p, d) = (
                    ints(&kernel_size)?,
                    ints(&stride)?,
                    ints(&padding)?,
                    ints(&dilation)?,
                );
                // The backward of the Atlas A2/A3 parts takes int32 indices
                // only (hicann/ops-nn pooling/max_pool3d_grad_with_argmax/docs/
                // aclnnMaxPool2dWithIndicesBackward.md); the forward writes the
                // backend's int64, converted here on the device.
                let indices = kernel::cast(indices, Kind::I32)?;
                let (xa, ia) = (x.arg()?, indices.arg()?);
                kernel::map1(&output_grad, x.kind(), &x.shape, |s, g, o| {
                    aclnn::max_pool2d_with_indices_backward(
                        s, g, &xa, &ia, &k, &s_, &p, &d, ceil_mode, o,
                    )
                })
            })(),
        ))
    }

    fn interpolate(
        x: FloatTensor<Cann>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Cann> {
        ok(
            "interpolate",
            (|| {
                if x.shape.len() != 4 {
                    return Err(crate::kernel::invalid(
                        "interpolate",
                        format!("x has shape {:?}; it must be [N, C, H, W]", x.shape),
                    ));
                }
                let shape = vec![x.shape[0], x.shape[1], output_size[0], output_size[1]];
                let os = ints(&output_size)?;
                let ac = options.align_corners;
                kernel::map1(&x, x.kind(), &shape, |s, a, o| match options.mode {
                    InterpolateMode::Nearest => aclnn::upsample_nearest2d(s, a, &os, o),
                    InterpolateMode::Bilinear => {
                        aclnn::upsample_bilinear2d(s, a, &os, ac, 0.0, 0.0, o)
                    }
                    InterpolateMode::Bicubic => {
                        aclnn::upsample_bicubic2d(s, a, &os, ac, 0.0, 0.0, o)
                    }
                    InterpolateMode::Lanczos3 => {
                        unsupported("interpolate", "CANN has no Lanczos3 upsampling operator")
                    }
                })
            })(),
        )
    }

    fn interpolate_backward(
        x: FloatTensor<Cann>,
        grad: FloatTensor<Cann>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Cann> {
        ok(
            "interpolate_backward",
            (|| {
                let os = ints(&output_size)?;
                let is = ints(&x.shape)?;
                let ac = options.align_corners;
                kernel::map1(&grad, x.kind(), &x.shape, |s, g, o| match options.mode {
                    InterpolateMode::Nearest => {
                        aclnn::upsample_nearest2d_backward(s, g, &os, &is, 0.0, 0.0, o)
                    }
                    InterpolateMode::Bilinear => {
                        aclnn::upsample_bilinear2d_backward(s, g, &os, &is, ac, 0.0, 0.0, o)
                    }
                    InterpolateMode::Bicubic => {
                        aclnn::upsample_bicubic2d_backward(s, g, &os, &is, ac, 0.0, 0.0, o)
                    }
                    InterpolateMode::Lanczos3 => unsupported(
                        "interpolate_backward",
                        "CANN has no Lanczos3 upsampling operator",
                    ),
                })
            })(),
        )
    }

    fn attention(
        query: FloatTensor<Cann>,
        key: FloatTensor<Cann>,
        value: FloatTensor<Cann>,
        mask: Option<BoolTensor<Cann>>,
        attn_bias: Option<FloatTensor<Cann>>,
        options: AttentionModuleOptions,
    ) -> FloatTensor<Cann> {
        // Burn's composition of matmul, softmax and masking, all on device.
        attention_fallback::<Cann>(query, key, value, mask, attn_bias, options)
    }

    fn rfft(
        _signal: FloatTensor<Cann>,
        _dim: usize,
        _n: Option<usize>,
    ) -> (FloatTensor<Cann>, FloatTensor<Cann>) {
        unsupported("rfft", "the operator table has no FFT operator")
    }

    fn irfft(
        _spectrum_re: FloatTensor<Cann>,
        _spectrum_im: FloatTensor<Cann>,
        _dim: usize,
        _n: Option<usize>,
    ) -> FloatTensor<Cann> {
        unsupported("irfft", "the operator table has no FFT operator")
    }
}
