//! The kernels of 2-D upsampling (nearest, bilinear, bicubic) and their
//! backwards, as [`super::nn`]'s: each checks one call and returns the
//! output specs with the kernel. Every mode is separable: an output row
//! (column) is a weighted sum of input rows (columns), so the forward is
//! `Y = Wh · X · Wwᵀ` per plane and the backward its transpose,
//! `dX = Whᵀ · dY · Ww`. The weights follow the pages
//! (`hicann/ops-cv image/upsample_*`), which are torch's
//! (`area_pixel_compute_scale`, `cubic_convolution1/2` with A = −0.75).

use super::native::{Native, read, write};
use super::nn::{Kernel, numel, spec};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// The interpolation of an upsampling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Nearest neighbour: `src = floor(dst · scale)`.
    Nearest,
    /// Bilinear, the two neighbours (`alignCorners`).
    Bilinear(bool),
    /// Bicubic, the four neighbours (`alignCorners`).
    Bicubic(bool),
}

/// Per output index, the input indices and weights it reads.
type Taps = Vec<Vec<(usize, f64)>>;

/// torch's `area_pixel_compute_scale`: the input step per output step.
fn step(len: i64, out: i64, align: bool, scale: f64) -> f64 {
    if align {
        if out > 1 {
            (len - 1) as f64 / (out - 1) as f64
        } else {
            0.0
        }
    } else if scale > 0.0 {
        1.0 / scale
    } else {
        len as f64 / out as f64
    }
}

fn cubic1(x: f64, a: f64) -> f64 {
    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
}

fn cubic2(x: f64, a: f64) -> f64 {
    ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
}

/// The taps of one dimension of `len` inputs and `out` outputs.
fn taps(mode: Mode, len: i64, out: i64, scale: f64) -> Taps {
    let last = (len - 1).max(0);
    let clamp = |i: i64| i.clamp(0, last) as usize;
    (0..out)
        .map(|o| match mode {
            Mode::Nearest => {
                let src = if scale > 0.0 {
                    (o as f64 / scale).floor() as i64
                } else {
                    o * len / out
                };
                vec![(clamp(src), 1.0)]
            }
            Mode::Bilinear(align) => {
                let s = step(len, out, align, scale);
                let src = if align {
                    s * o as f64
                } else {
                    (s * (o as f64 + 0.5) - 0.5).max(0.0)
                };
                let i0 = (src.floor() as i64).min(last);
                let l1 = src - i0 as f64;
                vec![(clamp(i0), 1.0 - l1), (clamp(i0 + 1), l1)]
            }
            Mode::Bicubic(align) => {
                let s = step(len, out, align, scale);
                let src = if align {
                    s * o as f64
                } else {
                    s * (o as f64 + 0.5) - 0.5
                };
                let i = src.floor() as i64;
                let t = src - i as f64;
                let a = -0.75;
                let w = [
                    cubic2(t + 1.0, a),
                    cubic1(t, a),
                    cubic1(1.0 - t, a),
                    cubic2(2.0 - t, a),
                ];
                (0..4).map(|k| (clamp(i - 1 + k as i64), w[k])).collect()
            }
        })
        .collect()
}

/// The kernel of an upsampling of `planes` planes `h×w → oh×ow`
/// (`backward`: the transpose, from `oh×ow` gradients to `h×w`).
#[allow(clippy::too_many_arguments)]
fn separable(
    name: &'static str,
    out: TensorSpec,
    planes: usize,
    (h, w): (i64, i64),
    (oh, ow): (i64, i64),
    mode: Mode,
    scales: (f64, f64),
    backward: bool,
) -> Kernel {
    let th = taps(mode, h, oh, scales.0);
    let tw = taps(mode, w, ow, scales.1);
    let (h, w, oh, ow) = (h as usize, w as usize, oh as usize, ow as usize);
    Kernel {
        outputs: vec![out],
        native: Native::new(name, move |i, o| {
            let src = read(&i[0]);
            let mut dst = vec![0.0; o[0].spec.numel()];
            for p in 0..planes {
                let (xb, yb) = (p * h * w, p * oh * ow);
                for (a, ra) in th.iter().enumerate() {
                    for (b, rb) in tw.iter().enumerate() {
                        for &(y, wy) in ra {
                            for &(x, wx) in rb {
                                let (at_in, at_out) = (xb + y * w + x, yb + a * ow + b);
                                if backward {
                                    dst[at_in] += wy * wx * src[at_out];
                                } else {
                                    dst[at_out] += wy * wx * src[at_in];
                                }
                            }
                        }
                    }
                }
            }
            write(&mut o[0], &dst);
            Ok(())
        }),
    }
}

fn check_dtypes(name: &str, what: &str, t: &TensorSpec, ok: &[DType], out: DType) -> Res<()> {
    if !ok.contains(&t.dtype) {
        return err(format!(
            "{name}: {what} is {}; it must be one of {}",
            t.dtype.name(),
            ok.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
        ));
    }
    if out != t.dtype {
        return err(format!(
            "{name}: the output is {} but {what} is {}; they must match",
            out.name(),
            t.dtype.name()
        ));
    }
    Ok(())
}

fn check_scales(name: &str, scales: (f64, f64)) -> Res<()> {
    if scales.0 < 0.0 || scales.1 < 0.0 || scales.0.is_nan() || scales.1.is_nan() {
        return err(format!(
            "{name}: scalesH {} and scalesW {} must not be negative",
            scales.0, scales.1
        ));
    }
    Ok(())
}

fn check_size(name: &str, size: &[i64]) -> Res<(i64, i64)> {
    if size.len() != 2 || size.iter().any(|&v| v < 1) {
        return err(format!(
            "{name}: outputSize {size:?} must be two sizes of at least 1"
        ));
    }
    Ok((size[0], size[1]))
}

/// UpsampleBilinear2d / UpsampleBicubic2d of `[N, C, H, W]` to `size`.
pub fn upsample2d(
    x: &TensorSpec,
    size: &[i64],
    mode: Mode,
    scales: (f64, f64),
    out: DType,
    dtypes: &[DType],
) -> Res<Kernel> {
    let name = match mode {
        Mode::Bicubic(_) => "UpsampleBicubic2d",
        _ => "UpsampleBilinear2d",
    };
    check_dtypes(name, "self", x, dtypes, out)?;
    // The pages take no empty tensor.
    if x.shape.len() != 4 || x.shape[2] < 1 || x.shape[3] < 1 {
        return err(format!(
            "{name}: self {} must be 4-D with H and W at least 1",
            fmt_shape(&x.shape)
        ));
    }
    check_scales(name, scales)?;
    let (oh, ow) = check_size(name, size)?;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    Ok(separable(
        name,
        spec(out, vec![n, c, oh, ow]),
        numel(&[n, c]),
        (h, w),
        (oh, ow),
        mode,
        scales,
        false,
    ))
}

/// The backward of an upsampling (nearest, bilinear, bicubic): `gradOut`
/// `[N, C, outputSize]` to `inputSize` `[N, C, H, W]`.
pub fn upsample2d_backward(
    grad: &TensorSpec,
    output_size: &[i64],
    input_size: &[i64],
    mode: Mode,
    scales: (f64, f64),
    out: DType,
) -> Res<Kernel> {
    let name = match mode {
        Mode::Nearest => "UpsampleNearest2dBackward",
        Mode::Bilinear(_) => "UpsampleBilinear2dBackward",
        Mode::Bicubic(_) => "UpsampleBicubic2dBackward",
    };
    check_dtypes(
        name,
        "gradOut",
        grad,
        &[DType::F32, DType::F16, DType::BF16],
        out,
    )?;
    if grad.shape.len() != 4 {
        return err(format!(
            "{name}: gradOut {} must be 4-D",
            fmt_shape(&grad.shape)
        ));
    }
    check_scales(name, scales)?;
    let (oh, ow) = check_size(name, output_size)?;
    if input_size.len() != 4
        || input_size[2] < 1
        || input_size[3] < 1
        || input_size[..2].iter().any(|&v| v < 0)
    {
        return err(format!(
            "{name}: inputSize {input_size:?} must be [N, C, H, W] with H and W at least 1"
        ));
    }
    let want = [input_size[0], input_size[1], oh, ow];
    if grad.shape != want {
        return err(format!(
            "{name}: gradOut is {}, but inputSize and outputSize make it {}",
            fmt_shape(&grad.shape),
            fmt_shape(&want)
        ));
    }
    Ok(separable(
        name,
        spec(out, input_size.to_vec()),
        numel(&input_size[..2]),
        (input_size[2], input_size[3]),
        (oh, ow),
        mode,
        scales,
        true,
    ))
}
