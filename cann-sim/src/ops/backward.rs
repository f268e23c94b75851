//! The kernels of the module operators of the training set and their
//! backwards (convolution, pooling, normalisation): each function checks
//! the shapes, dtypes and attributes of one call and returns the output
//! specs with the kernel that computes them, as [`super::nn`] does. The
//! operators' pages are cited in the operator table
//! (`acl-sys/operators.toml`); a violated rule is an [`OpError`], which the
//! aclnn exports report as 161002.
//!
//! Optional gradients: a backward that takes an `outputMask` computes (and
//! lists among its outputs) only the gradients the mask selects, in the
//! order input, weight, bias.

use super::broadcast::contiguous_strides;
use super::native::{Native, read, read_i64, write};
use super::nn::{
    ConvAttrs, Kernel, Pool, check_cast, check_group_dims, numel, per_dim, pool2d, spec,
};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// `what` is float32, float16 or bfloat16 (the dtypes of every page here).
fn check_float(name: &str, what: &str, t: &TensorSpec) -> Res<()> {
    if matches!(t.dtype, DType::F32 | DType::F16 | DType::BF16) {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} is {}; it must be float32, float16 or bfloat16",
            t.dtype.name()
        ))
    }
}

fn check_shape(name: &str, what: &str, got: &[i64], want: &[i64], rule: &str) -> Res<()> {
    if got == want {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} is {}, but {rule} is {}",
            fmt_shape(got),
            fmt_shape(want)
        ))
    }
}

/// The output specs of the gradients `mask` selects: `(dtype, shape)` per
/// gradient, each dtype given when selected.
fn masked_outputs(
    name: &str,
    what: [&str; 3],
    mask: [bool; 3],
    dtypes: [Option<DType>; 3],
    shapes: [Vec<i64>; 3],
    result: DType,
) -> Res<Vec<TensorSpec>> {
    let mut outs = Vec::new();
    for (k, shape) in shapes.into_iter().enumerate() {
        if !mask[k] {
            continue;
        }
        let Some(d) = dtypes[k] else {
            return err(format!(
                "{name}: outputMask selects {} but it is null",
                what[k]
            ));
        };
        check_cast(name, what[k], result, d)?;
        outs.push(spec(d, shape));
    }
    Ok(outs)
}

/// Writes the selected gradients, in order, to the outputs.
fn write_masked(o: &mut [super::Output<'_>], grads: [Option<Vec<f64>>; 3]) {
    for (slot, g) in grads.into_iter().flatten().enumerate() {
        write(&mut o[slot], &g);
    }
}

// ---------------------------------------------------------------------------
// Convolution.
// ---------------------------------------------------------------------------

/// ConvolutionBackward (1-D, 2-D, 3-D; transposed; groups; dilation): the
/// gradients of [`super::nn::convolution`] with respect to its input,
/// weight and bias (of `bias_size` channels), those `mask` selects, each
/// stored as `outs`' dtype.
pub fn convolution_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    w: &TensorSpec,
    bias_size: Option<i64>,
    a: &ConvAttrs,
    mask: [bool; 3],
    outs: [Option<DType>; 3],
) -> Res<Kernel> {
    let name = "ConvolutionBackward";
    for (what, t) in [("gradOutput", grad), ("input", x), ("weight", w)] {
        check_float(name, what, t)?;
    }
    // The forward's rules give the output's shape (and check the rest).
    let fwd = super::nn::convolution(x, w, None, a, grad.dtype)?;
    let yshape = fwd.outputs[0].shape.clone();
    check_shape(
        name,
        "gradOutput",
        &grad.shape,
        &yshape,
        "the convolution's output",
    )?;
    let n = x.shape.len() - 2;
    let stride = per_dim(name, "stride", &a.stride, n, 1)?;
    let pad = per_dim(name, "padding", &a.padding, n, 0)?;
    let dil = per_dim(name, "dilation", &a.dilation, n, 1)?;
    let cout = yshape[1];
    let bias_shape = if mask[2] {
        match bias_size {
            Some(b) if b == cout => vec![b],
            Some(b) => {
                return err(format!(
                    "{name}: biasSizes [{b}] is not the output channels [{cout}]"
                ));
            }
            None => return err(format!("{name}: biasSizes must have one entry")),
        }
    } else {
        vec![cout]
    };
    let outputs = masked_outputs(
        name,
        ["gradInput", "gradWeight", "gradBias"],
        mask,
        outs,
        [x.shape.clone(), w.shape.clone(), bias_shape],
        grad.dtype,
    )?;
    let transposed = a.transposed;
    let (batch, ci, co, g) = (
        x.shape[0] as usize,
        x.shape[1] as usize,
        cout as usize,
        a.groups as usize,
    );
    let ins: Vec<i64> = x.shape[2..].to_vec();
    let ys: Vec<i64> = yshape[2..].to_vec();
    let ks: Vec<i64> = w.shape[2..].to_vec();
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let (gy, xv, wv) = (read(&i[0]), read(&i[1]), read(&i[2]));
            let mut dx = mask[0].then(|| vec![0.0; xv.len()]);
            let mut dw = mask[1].then(|| vec![0.0; wv.len()]);
            let (cig, cog) = (ci / g, co / g);
            let (isz, osz, ksz) = (numel(&ins), numel(&ys), numel(&ks));
            let (ist, ost, kst) = (
                contiguous_strides(&ins),
                contiguous_strides(&ys),
                contiguous_strides(&ks),
            );
            // The pairs of the forward (nn::convolution): out = in·stride −
            // pad + k·dil (transposed), in = out·stride − pad + k·dil.
            let (outer, outer_st, outer_dims, limit, inner_st) = if transposed {
                (isz, &ist, &ins, &ys, &ost)
            } else {
                (osz, &ost, &ys, &ins, &ist)
            };
            for kk in 0..ksz {
                for p in 0..outer {
                    let mut q = 0usize;
                    let mut inside = true;
                    for d in 0..n {
                        let pd = ((p / outer_st[d]) % outer_dims[d] as usize) as i64;
                        let kd = ((kk / kst[d]) % ks[d] as usize) as i64;
                        let t = pd * stride[d] - pad[d] + kd * dil[d];
                        if !(0..limit[d]).contains(&t) {
                            inside = false;
                            break;
                        }
                        q += t as usize * inner_st[d];
                    }
                    if !inside {
                        continue;
                    }
                    let (ipos, opos) = if transposed { (p, q) } else { (q, p) };
                    for s in 0..batch {
                        for grp in 0..g {
                            for oc in 0..cog {
                                let oc_all = grp * cog + oc;
                                let gyv = gy[(s * co + oc_all) * osz + opos];
                                for ic in 0..cig {
                                    let ic_all = grp * cig + ic;
                                    let wi = if transposed {
                                        (ic_all * cog + oc) * ksz + kk
                                    } else {
                                        (oc_all * cig + ic) * ksz + kk
                                    };
                                    let xi = (s * ci + ic_all) * isz + ipos;
                                    if let Some(dx) = &mut dx {
                                        dx[xi] += gyv * wv[wi];
                                    }
                                    if let Some(dw) = &mut dw {
                                        dw[wi] += xv[xi] * gyv;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let db = mask[2].then(|| {
                let mut db = vec![0.0; co];
                for (k, v) in gy.iter().enumerate() {
                    db[(k / osz.max(1)) % co] += v;
                }
                db
            });
            write_masked(o, [dx, dw, db]);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Pooling.
// ---------------------------------------------------------------------------

/// The pooling geometry the forward [`pool2d`] gives for `x`: its output
/// shape, checked against `grad`.
#[allow(clippy::too_many_arguments)]
fn pooled(
    name: &str,
    grad: &TensorSpec,
    x: &TensorSpec,
    kernel: &[i64],
    stride: &[i64],
    pads: [i64; 4],
    dilation: &[i64],
    ceil: bool,
    pool: Pool,
    indices: Option<DType>,
) -> Res<Vec<i64>> {
    for (what, t) in [("gradOutput", grad), ("self", x)] {
        check_float(name, what, t)?;
    }
    let fwd = pool2d(
        x, kernel, stride, pads, dilation, ceil, pool, x.dtype, indices,
    )?;
    let shape = fwd.outputs[0].shape.clone();
    check_shape(
        name,
        "gradOutput",
        &grad.shape,
        &shape,
        "the pooling's output",
    )?;
    Ok(shape)
}

/// MaxPool2dWithIndicesBackward: each gradient goes to the input element
/// its index (flat within the `H·W` plane, as the forward writes) names.
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    indices: &TensorSpec,
    kernel: &[i64],
    stride: &[i64],
    pads: [i64; 4],
    dilation: &[i64],
    ceil: bool,
    out: DType,
) -> Res<Kernel> {
    let name = "MaxPool2dWithIndicesBackward";
    if !matches!(indices.dtype, DType::I32 | DType::I64) {
        return err(format!(
            "{name}: indices is {}; it must be int32 or int64",
            indices.dtype.name()
        ));
    }
    let shape = pooled(
        name,
        grad,
        x,
        kernel,
        stride,
        pads,
        dilation,
        ceil,
        Pool::Max,
        Some(indices.dtype),
    )?;
    check_shape(name, "indices", &indices.shape, &shape, "gradOutput")?;
    check_cast(name, "gradInput", grad.dtype, out)?;
    let r = x.shape.len();
    let hw = numel(&x.shape[r - 2..]);
    let per_plane = numel(&shape[r - 2..]);
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let (gy, idx) = (read(&i[0]), read_i64(&i[2]));
            let mut dx = vec![0.0; o[0].spec.numel()];
            for (k, (&g, &at)) in gy.iter().zip(&idx).enumerate() {
                if !(0..hw as i64).contains(&at) {
                    return Err(OpError::Input(format!(
                        "{name}: indices[{k}] = {at} is outside the {hw} elements of a plane"
                    )));
                }
                dx[(k / per_plane) * hw + at as usize] += g;
            }
            write(&mut o[0], &dx);
            Ok(())
        }),
    })
}

/// AvgPool2dBackward: each output's gradient, divided by the divisor the
/// forward used, spread over the input elements of its window.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    kernel: &[i64],
    stride: &[i64],
    pads: [i64; 4],
    ceil: bool,
    count_pad: bool,
    divisor: i64,
    out: DType,
) -> Res<Kernel> {
    let name = "AvgPool2dBackward";
    let pool = Pool::Avg { count_pad, divisor };
    let shape = pooled(name, grad, x, kernel, stride, pads, &[], ceil, pool, None)?;
    check_cast(name, "gradInput", grad.dtype, out)?;
    let k = per_dim(name, "kernelSize", kernel, 2, 1)?;
    let st = if stride.is_empty() {
        k.clone()
    } else {
        per_dim(name, "stride", stride, 2, 1)?
    };
    let r = x.shape.len();
    let (h, w) = (x.shape[r - 2], x.shape[r - 1]);
    let (oh, ow) = (shape[r - 2], shape[r - 1]);
    let planes = numel(&x.shape[..r - 2]);
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let gy = read(&i[0]);
            let mut dx = vec![0.0; planes * (h * w) as usize];
            for p in 0..planes {
                for a in 0..oh {
                    for b in 0..ow {
                        let (y0, x0) = (a * st[0] - pads[0], b * st[1] - pads[1]);
                        // The window's elements and its divisor, as the
                        // forward (nn::pool2d) counts them.
                        let (mut cells, mut cnt_pad) = (Vec::new(), 0i64);
                        for u in 0..k[0] {
                            for v in 0..k[1] {
                                let (yy, xx) = (y0 + u, x0 + v);
                                if (0..h).contains(&yy) && (0..w).contains(&xx) {
                                    cells.push((yy * w + xx) as usize);
                                    cnt_pad += 1;
                                } else if yy < h + pads[2] && xx < w + pads[3] {
                                    cnt_pad += 1;
                                }
                            }
                        }
                        let div = if divisor > 0 {
                            divisor
                        } else if count_pad {
                            cnt_pad
                        } else {
                            cells.len() as i64
                        };
                        let g = gy[(p * oh as usize + a as usize) * ow as usize + b as usize]
                            / div.max(1) as f64;
                        for c in cells {
                            dx[p * (h * w) as usize + c] += g;
                        }
                    }
                }
            }
            write(&mut o[0], &dx);
            Ok(())
        }),
    })
}

/// The window `[start, end)` of output position `i` of `o` over `len`
/// elements: `floor(i·len/o)` to `ceil((i+1)·len/o)` (torch's adaptive
/// pooling).
fn adaptive_window(i: i64, o: i64, len: i64) -> (i64, i64) {
    ((i * len) / o, ((i + 1) * len + o - 1) / o)
}

fn adaptive_shape(name: &str, x: &TensorSpec, size: &[i64]) -> Res<Vec<i64>> {
    let r = x.shape.len();
    if !(3..=4).contains(&r) {
        return err(format!(
            "{name}: self {} must be 3-D or 4-D",
            fmt_shape(&x.shape)
        ));
    }
    if size.len() != 2 || size.iter().any(|&v| v <= 0) {
        return err(format!(
            "{name}: outputSize {size:?} must be two positive sizes"
        ));
    }
    let mut shape = x.shape[..r - 2].to_vec();
    shape.extend(size);
    Ok(shape)
}

/// AdaptiveAvgPool2d of `[N, C, H, W]` or `[C, H, W]` to `size`: each
/// output the mean of its `adaptive_window`.
pub fn adaptive_avg_pool2d(x: &TensorSpec, size: &[i64], out: DType) -> Res<Kernel> {
    let name = "AdaptiveAvgPool2d";
    check_float(name, "self", x)?;
    let shape = adaptive_shape(name, x, size)?;
    check_cast(name, "out", x.dtype, out)?;
    let geo = AdaptiveGeo::new(&x.shape, size);
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut y = Vec::with_capacity(o[0].spec.numel());
            geo.each(|src, cnt, _| {
                y.push(src.iter().map(|&s| xv[s]).sum::<f64>() / cnt);
            });
            write(&mut o[0], &y);
            Ok(())
        }),
    })
}

/// AdaptiveAvgPool2dBackward: each output's gradient over its window's
/// size, added to the window's elements; `out` has `self`'s shape.
pub fn adaptive_avg_pool2d_backward(grad: &TensorSpec, x: &TensorSpec, out: DType) -> Res<Kernel> {
    let name = "AdaptiveAvgPool2dBackward";
    for (what, t) in [("gradOutput", grad), ("self", x)] {
        check_float(name, what, t)?;
    }
    let r = x.shape.len();
    if grad.shape.len() != r || !(3..=4).contains(&r) || grad.shape[..r - 2] != x.shape[..r - 2] {
        return err(format!(
            "{name}: gradOutput {} and self {} must be 3-D or 4-D with the same leading dimensions",
            fmt_shape(&grad.shape),
            fmt_shape(&x.shape)
        ));
    }
    let size = grad.shape[r - 2..].to_vec();
    adaptive_shape(name, x, &size)?;
    check_cast(name, "out", grad.dtype, out)?;
    let geo = AdaptiveGeo::new(&x.shape, &size);
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let gy = read(&i[0]);
            let mut dx = vec![0.0; o[0].spec.numel()];
            geo.each(|src, cnt, k| {
                for &s in src {
                    dx[s] += gy[k] / cnt;
                }
            });
            write(&mut o[0], &dx);
            Ok(())
        }),
    })
}

/// The windows of adaptive pooling over the last two dimensions.
#[derive(Clone)]
struct AdaptiveGeo {
    planes: usize,
    h: i64,
    w: i64,
    oh: i64,
    ow: i64,
}

impl AdaptiveGeo {
    fn new(shape: &[i64], size: &[i64]) -> AdaptiveGeo {
        let r = shape.len();
        AdaptiveGeo {
            planes: numel(&shape[..r - 2]),
            h: shape[r - 2],
            w: shape[r - 1],
            oh: size[0],
            ow: size[1],
        }
    }

    /// Calls `f(input offsets, window size, output offset)` per output
    /// element, in order.
    fn each(&self, mut f: impl FnMut(&[usize], f64, usize)) {
        let mut src = Vec::new();
        let mut k = 0;
        for p in 0..self.planes {
            let base = p * (self.h * self.w) as usize;
            for a in 0..self.oh {
                let (h0, h1) = adaptive_window(a, self.oh, self.h);
                for b in 0..self.ow {
                    let (w0, w1) = adaptive_window(b, self.ow, self.w);
                    src.clear();
                    for yy in h0..h1 {
                        for xx in w0..w1 {
                            src.push(base + (yy * self.w + xx) as usize);
                        }
                    }
                    f(&src, src.len().max(1) as f64, k);
                    k += 1;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

/// The gradient with respect to the input of a normalisation over groups of
/// `m` elements: `dx = rstd · (g − mean(g) − x̂ · mean(g · x̂))` with
/// `g = dy · scale`, `x̂ = (x − mean) · rstd` (`centered`: without the
/// `mean(g)` term, RMS normalisation).
fn norm_input_grad(g: &[f64], xhat: &[f64], rstd: f64, centered: bool) -> Vec<f64> {
    let m = g.len().max(1) as f64;
    let mg = if centered {
        g.iter().sum::<f64>() / m
    } else {
        0.0
    };
    let mgx = g.iter().zip(xhat).map(|(a, b)| a * b).sum::<f64>() / m;
    g.iter()
        .zip(xhat)
        .map(|(gi, xi)| rstd * (gi - mg - xi * mgx))
        .collect()
}

/// LayerNormBackward over the trailing `normalized` dimensions, from the
/// forward's mean and rstd (`x`'s leading dimensions then 1s).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    normalized: &[i64],
    mean: &TensorSpec,
    rstd: &TensorSpec,
    weight: Option<&TensorSpec>,
    bias: Option<&TensorSpec>,
    mask: [bool; 3],
    outs: [Option<DType>; 3],
) -> Res<Kernel> {
    let name = "LayerNormBackward";
    for (what, t) in [
        ("gradOut", Some(grad)),
        ("input", Some(x)),
        ("mean", Some(mean)),
        ("rstd", Some(rstd)),
        ("weightOptional", weight),
        ("biasOptional", bias),
    ] {
        if let Some(t) = t {
            check_float(name, what, t)?;
        }
    }
    check_shape(name, "gradOut", &grad.shape, &x.shape, "input")?;
    let (r, k) = (x.shape.len(), normalized.len());
    if k == 0 || k > r || x.shape[r - k..] != *normalized {
        return err(format!(
            "{name}: normalizedShape {} must be the trailing dimensions of input {}",
            fmt_shape(normalized),
            fmt_shape(&x.shape)
        ));
    }
    let mut stat = x.shape[..r - k].to_vec();
    stat.extend(std::iter::repeat_n(1, k));
    for (what, t) in [("mean", mean), ("rstd", rstd)] {
        if numel(&t.shape) != numel(&stat)
            || t.shape[..t.shape.len().min(r - k)] != stat[..t.shape.len().min(r - k)]
        {
            return err(format!(
                "{name}: {what} {} must be input's leading dimensions then 1s, {}",
                fmt_shape(&t.shape),
                fmt_shape(&stat)
            ));
        }
    }
    for (what, t) in [("weightOptional", weight), ("biasOptional", bias)] {
        if let Some(t) = t {
            check_shape(name, what, &t.shape, normalized, "normalizedShape")?;
        }
    }
    let outputs = masked_outputs(
        name,
        ["gradInputOut", "gradWeightOut", "gradBiasOut"],
        mask,
        outs,
        [x.shape.clone(), normalized.to_vec(), normalized.to_vec()],
        grad.dtype,
    )?;
    let inner = numel(normalized);
    let has_w = weight.is_some();
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let (gy, xv, mv, rv) = (read(&i[0]), read(&i[1]), read(&i[2]), read(&i[3]));
            let w = has_w.then(|| read(&i[4]));
            let rows = xv.len().checked_div(inner).unwrap_or(0);
            let mut dx = vec![0.0; xv.len()];
            let (mut dw, mut db) = (vec![0.0; inner], vec![0.0; inner]);
            for row in 0..rows {
                let span = row * inner..(row + 1) * inner;
                let xhat: Vec<f64> = xv[span.clone()]
                    .iter()
                    .map(|v| (v - mv[row]) * rv[row])
                    .collect();
                let dy = &gy[span.clone()];
                let g: Vec<f64> = dy
                    .iter()
                    .enumerate()
                    .map(|(j, d)| d * w.as_ref().map_or(1.0, |w| w[j]))
                    .collect();
                dx[span].copy_from_slice(&norm_input_grad(&g, &xhat, rv[row], true));
                for j in 0..inner {
                    dw[j] += dy[j] * xhat[j];
                    db[j] += dy[j];
                }
            }
            write_masked(
                o,
                [
                    mask[0].then_some(dx),
                    mask[1].then_some(dw),
                    mask[2].then_some(db),
                ],
            );
            Ok(())
        }),
    })
}

/// RmsNormGrad: `dx` and `dgamma` of `y = x · rstd · gamma` over gamma's
/// trailing dimensions, from the forward's rstd (x's leading dimensions).
pub fn rms_norm_grad(
    dy: &TensorSpec,
    x: &TensorSpec,
    rstd: &TensorSpec,
    gamma: &TensorSpec,
    outs: [DType; 2],
) -> Res<Kernel> {
    let name = "RmsNormGrad";
    for (what, t) in [("dy", dy), ("x", x), ("gamma", gamma)] {
        check_float(name, what, t)?;
    }
    if rstd.dtype != DType::F32 || outs[1] != DType::F32 {
        return err(format!(
            "{name}: rstd is {} and dgammaOut {}; both must be float32",
            rstd.dtype.name(),
            outs[1].name()
        ));
    }
    check_shape(name, "x", &x.shape, &dy.shape, "dy")?;
    let (r, k) = (x.shape.len(), gamma.shape.len());
    if k == 0 || k >= r || x.shape[r - k..] != gamma.shape[..] {
        return err(format!(
            "{name}: gamma {} must be the trailing dimensions of x {}",
            fmt_shape(&gamma.shape),
            fmt_shape(&x.shape)
        ));
    }
    let rows = numel(&x.shape[..r - k]);
    if numel(&rstd.shape) != rows {
        return err(format!(
            "{name}: rstd {} must hold one value per row of x's leading dimensions {}",
            fmt_shape(&rstd.shape),
            fmt_shape(&x.shape[..r - k])
        ));
    }
    check_cast(name, "dxOut", dy.dtype, outs[0])?;
    let inner = numel(&gamma.shape);
    Ok(Kernel {
        outputs: vec![
            spec(outs[0], x.shape.clone()),
            spec(outs[1], gamma.shape.clone()),
        ],
        native: Native::new(name, move |i, o| {
            let (gy, xv, rv, gm) = (read(&i[0]), read(&i[1]), read(&i[2]), read(&i[3]));
            let mut dx = vec![0.0; xv.len()];
            let mut dg = vec![0.0; inner];
            for (row, &r) in rv.iter().enumerate().take(rows) {
                let span = row * inner..(row + 1) * inner;
                let xhat: Vec<f64> = xv[span.clone()].iter().map(|v| v * r).collect();
                let d = &gy[span.clone()];
                let g: Vec<f64> = d.iter().zip(&gm).map(|(a, b)| a * b).collect();
                dx[span].copy_from_slice(&norm_input_grad(&g, &xhat, r, false));
                for (acc, (a, b)) in dg.iter_mut().zip(d.iter().zip(&xhat)) {
                    *acc += a * b;
                }
            }
            write(&mut o[0], &dx);
            write(&mut o[1], &dg);
            Ok(())
        }),
    })
}

/// GroupNormBackward of `[N, C, *]` in `group` groups, from the forward's
/// mean and rstd (`N·group` values each).
#[allow(clippy::too_many_arguments)]
pub fn group_norm_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    mean: &TensorSpec,
    rstd: &TensorSpec,
    gamma: Option<&TensorSpec>,
    dims: [i64; 4],
    mask: [bool; 3],
    outs: [Option<DType>; 3],
) -> Res<Kernel> {
    let name = "GroupNormBackward";
    let [n, c, hxw, group] = dims;
    for (what, t) in [
        ("gradOut", Some(grad)),
        ("input", Some(x)),
        ("mean", Some(mean)),
        ("rstd", Some(rstd)),
        ("gamma", gamma),
    ] {
        if let Some(t) = t {
            check_float(name, what, t)?;
        }
    }
    check_shape(name, "gradOut", &grad.shape, &x.shape, "input")?;
    check_group_dims(name, "input", x, dims)?;
    for (what, t) in [("mean", mean), ("rstd", rstd)] {
        if numel(&t.shape) as i64 != n * group {
            return err(format!(
                "{name}: {what} {} must hold N·group = {} values",
                fmt_shape(&t.shape),
                n * group
            ));
        }
    }
    if let Some(g) = gamma
        && numel(&g.shape) as i64 != c
    {
        return err(format!(
            "{name}: gamma {} must hold C = {c} values",
            fmt_shape(&g.shape)
        ));
    }
    let outputs = masked_outputs(
        name,
        ["gradInput", "gradGammaOut", "gradBetaOut"],
        mask,
        outs,
        [x.shape.clone(), vec![c], vec![c]],
        grad.dtype,
    )?;
    let has_g = gamma.is_some();
    let (nn, gg, cpg, hw) = (
        n as usize,
        group as usize,
        (c / group) as usize,
        hxw as usize,
    );
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let (gy, xv, mv, rv) = (read(&i[0]), read(&i[1]), read(&i[2]), read(&i[3]));
            let gm = has_g.then(|| read(&i[4]));
            let mut dx = vec![0.0; xv.len()];
            let (mut dgamma, mut dbeta) = (vec![0.0; cpg * gg], vec![0.0; cpg * gg]);
            for s in 0..nn {
                for q in 0..gg {
                    let start = (s * gg + q) * cpg * hw;
                    let span = start..start + cpg * hw;
                    let (m, r) = (mv[s * gg + q], rv[s * gg + q]);
                    let xhat: Vec<f64> = xv[span.clone()].iter().map(|v| (v - m) * r).collect();
                    let dy = &gy[span.clone()];
                    let g: Vec<f64> = dy
                        .iter()
                        .enumerate()
                        .map(|(j, d)| {
                            let ch = q * cpg + j / hw.max(1);
                            d * gm.as_ref().map_or(1.0, |gm| gm[ch])
                        })
                        .collect();
                    dx[span].copy_from_slice(&norm_input_grad(&g, &xhat, r, true));
                    for (j, d) in dy.iter().enumerate() {
                        let ch = q * cpg + j / hw.max(1);
                        dgamma[ch] += d * xhat[j];
                        dbeta[ch] += d;
                    }
                }
            }
            write_masked(
                o,
                [
                    mask[0].then_some(dx),
                    mask[1].then_some(dgamma),
                    mask[2].then_some(dbeta),
                ],
            );
            Ok(())
        }),
    })
}

/// The channel count of a batch-norm input `[N, C, *]` (2-D to 8-D).
fn bn_channels(name: &str, what: &str, x: &TensorSpec) -> Res<i64> {
    if !(2..=8).contains(&x.shape.len()) {
        return err(format!(
            "{name}: {what} {} must have 2 to 8 dimensions",
            fmt_shape(&x.shape)
        ));
    }
    Ok(x.shape[1])
}

fn check_channel(name: &str, what: &str, t: Option<&TensorSpec>, c: i64) -> Res<()> {
    match t {
        Some(t) if t.shape != [c] => err(format!(
            "{name}: {what} {} must be [C={c}]",
            fmt_shape(&t.shape)
        )),
        Some(t) => check_float(name, what, t),
        None => Ok(()),
    }
}

/// Per channel `c` of `[N, C, *]` data, the element offsets.
fn channel_sum(v: &[f64], c: usize, inner: usize, ch: usize, f: impl Fn(usize) -> f64) -> f64 {
    let batch = v.len().checked_div(c * inner).unwrap_or(0);
    let mut acc = 0.0;
    for s in 0..batch {
        let base = (s * c + ch) * inner;
        for k in base..base + inner {
            acc += f(k);
        }
    }
    acc
}

/// The tensors of a BatchNorm call the kernel reads.
#[derive(Clone, Copy, Debug)]
pub struct BatchNormArgs<'a> {
    /// `[N, C, *]`.
    pub input: &'a TensorSpec,
    /// `[C]`, optional.
    pub weight: Option<&'a TensorSpec>,
    /// `[C]`, optional.
    pub bias: Option<&'a TensorSpec>,
    /// `[C]`, optional (read, and updated in training).
    pub running_mean: Option<&'a TensorSpec>,
    /// `[C]`, optional (read, and updated in training).
    pub running_var: Option<&'a TensorSpec>,
}

/// BatchNorm. Training: the batch's mean and (biased) variance normalise,
/// `saveMean` is the mean and `saveInvstd` the batch variance (the A2/A3
/// release stores the variance there, per the page's product notes), and
/// the running statistics become `(1 − momentum)·running + momentum·batch`
/// (the variance unbiased). Inference: the running statistics normalise;
/// nothing else is written. Inputs of the kernel: input, weight, bias,
/// runningMean, runningVar (those present); outputs: output, then in
/// training saveMean, saveInvstd, runningMean, runningVar (present).
pub fn batch_norm(
    a: BatchNormArgs<'_>,
    training: bool,
    momentum: f64,
    eps: f64,
    output: &TensorSpec,
    save: [&TensorSpec; 2],
) -> Res<Kernel> {
    let name = "BatchNorm";
    let x = a.input;
    check_float(name, "input", x)?;
    let c = bn_channels(name, "input", x)?;
    for (what, t) in [
        ("weight", a.weight),
        ("bias", a.bias),
        ("runningMean", a.running_mean),
        ("runningVar", a.running_var),
    ] {
        check_channel(name, what, t, c)?;
    }
    let (rm, rv) = (a.running_mean.is_some(), a.running_var.is_some());
    if !(training || rm && rv) {
        return err(format!(
            "{name}: inference (training false) needs runningMean and runningVar"
        ));
    }
    check_float(name, "output", output)?;
    check_shape(name, "output", &output.shape, &x.shape, "input")?;
    let mut outputs = vec![output.clone()];
    if training {
        for (what, t) in [("saveMean", save[0]), ("saveInvstd", save[1])] {
            check_float(name, what, t)?;
            check_shape(name, what, &t.shape, &[c], "[C]")?;
            outputs.push(t.clone());
        }
        outputs.extend(a.running_mean.cloned());
        outputs.extend(a.running_var.cloned());
    }
    let (has_w, has_b) = (a.weight.is_some(), a.bias.is_some());
    let cc = c as usize;
    let inner = numel(&x.shape[2..]);
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut next = 1;
            let mut take = |present: bool| {
                present.then(|| {
                    next += 1;
                    read(&i[next - 1])
                })
            };
            let (w, b, run_m, run_v) = (take(has_w), take(has_b), take(rm), take(rv));
            let count = xv.len().checked_div(cc).unwrap_or(0);
            let (mut mean, mut var) = (vec![0.0; cc], vec![0.0; cc]);
            for ch in 0..cc {
                if training {
                    let m = channel_sum(&xv, cc, inner, ch, |k| xv[k]) / count.max(1) as f64;
                    let v = channel_sum(&xv, cc, inner, ch, |k| (xv[k] - m).powi(2))
                        / count.max(1) as f64;
                    (mean[ch], var[ch]) = (m, v);
                } else if let (Some(m), Some(v)) = (&run_m, &run_v) {
                    (mean[ch], var[ch]) = (m[ch], v[ch]);
                }
            }
            let mut y = vec![0.0; xv.len()];
            for (k, out) in y.iter_mut().enumerate() {
                let ch = (k / inner.max(1)) % cc;
                let mut t = (xv[k] - mean[ch]) / (var[ch] + eps).sqrt();
                if let Some(w) = &w {
                    t *= w[ch];
                }
                if let Some(b) = &b {
                    t += b[ch];
                }
                *out = t;
            }
            write(&mut o[0], &y);
            if training {
                write(&mut o[1], &mean);
                write(&mut o[2], &var);
                let unbias = if count > 1 {
                    count as f64 / (count - 1) as f64
                } else {
                    1.0
                };
                let running = [(run_m, &mean, 1.0), (run_v, &var, unbias)];
                for (slot, (old, batch, f)) in running
                    .into_iter()
                    .filter(|(old, ..)| old.is_some())
                    .enumerate()
                {
                    let old = old.unwrap_or_default();
                    let upd: Vec<f64> = (0..cc)
                        .map(|ch| (1.0 - momentum) * old[ch] + momentum * batch[ch] * f)
                        .collect();
                    write(&mut o[3 + slot], &upd);
                }
            }
            Ok(())
        }),
    })
}

/// BatchNormBackward. Training: from the batch statistics the forward
/// saved (`saveInvstd` holding the batch variance, as the A2/A3 forward
/// writes it); inference: from the running statistics. A missing weight
/// counts as ones. Inputs of the kernel: gradOut, input, then those of
/// weight, runningMean, runningVar, saveMean, saveInvstd that are present.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward(
    grad: &TensorSpec,
    x: &TensorSpec,
    stats: [Option<&TensorSpec>; 5],
    training: bool,
    eps: f64,
    mask: [bool; 3],
    outs: [Option<DType>; 3],
) -> Res<Kernel> {
    let name = "BatchNormBackward";
    for (what, t) in [("gradOut", grad), ("input", x)] {
        check_float(name, what, t)?;
    }
    check_shape(name, "gradOut", &grad.shape, &x.shape, "input")?;
    let c = bn_channels(name, "input", x)?;
    let names = [
        "weight",
        "runningMean",
        "runningVar",
        "saveMean",
        "saveInvstd",
    ];
    for (k, (what, t)) in names.iter().zip(stats).enumerate() {
        // The saved statistics may be empty in inference.
        if let Some(t) = t
            && k >= 3
            && !training
            && t.shape == [0]
        {
            check_float(name, what, t)?;
            continue;
        }
        check_channel(name, what, t, c)?;
    }
    let (need, why) = if training {
        ([3, 4], "training needs saveMean and saveInvstd")
    } else {
        (
            [1, 2],
            "inference (training false) needs runningMean and runningVar",
        )
    };
    if need.iter().any(|&k| stats[k].is_none()) {
        return err(format!("{name}: {why}"));
    }
    let outputs = masked_outputs(
        name,
        ["gradInput", "gradWeight", "gradBias"],
        mask,
        outs,
        [x.shape.clone(), vec![c], vec![c]],
        grad.dtype,
    )?;
    // The kernel input of each statistic.
    let mut slot = [None; 5];
    let mut next = 2;
    for (k, t) in stats.iter().enumerate() {
        if t.is_some() {
            slot[k] = Some(next);
            next += 1;
        }
    }
    let cc = c as usize;
    let inner = numel(&x.shape[2..]);
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let (gy, xv) = (read(&i[0]), read(&i[1]));
            let get = |k: usize| slot[k].map(|s| read(&i[s]));
            let w = get(0).unwrap_or_else(|| vec![1.0; cc]);
            let (mean, var) = (get(need[0]), get(need[1]));
            let (Some(mean), Some(var)) = (mean, var) else {
                return Err(OpError::Input(format!("{name}: {why}")));
            };
            let count = xv.len().checked_div(cc).unwrap_or(0).max(1) as f64;
            let batch = xv.len().checked_div(cc * inner).unwrap_or(0);
            let mut dx = vec![0.0; xv.len()];
            let (mut dw, mut db) = (vec![0.0; cc], vec![0.0; cc]);
            for ch in 0..cc {
                let invstd = 1.0 / (var[ch] + eps).sqrt();
                let sum_dy = channel_sum(&gy, cc, inner, ch, |k| gy[k]);
                let sum_dy_xhat =
                    channel_sum(&gy, cc, inner, ch, |k| gy[k] * (xv[k] - mean[ch]) * invstd);
                dw[ch] = sum_dy_xhat;
                db[ch] = sum_dy;
                for s in 0..batch {
                    let base = (s * cc + ch) * inner;
                    for k in base..base + inner {
                        dx[k] = if training {
                            let xhat = (xv[k] - mean[ch]) * invstd;
                            w[ch] * invstd * (gy[k] - sum_dy / count - xhat * sum_dy_xhat / count)
                        } else {
                            gy[k] * w[ch] * invstd
                        };
                    }
                }
            }
            write_masked(
                o,
                [
                    mask[0].then_some(dx),
                    mask[1].then_some(dw),
                    mask[2].then_some(db),
                ],
            );
            Ok(())
        }),
    })
}
