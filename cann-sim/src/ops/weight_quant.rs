//! The kernel of `aclnnWeightQuantBatchMatmulV2`: `y = x @ ANTIQUANT(weight)
//! + bias`, `ANTIQUANT(weight) = (weight + antiquantOffset) · antiquantScale`,
//! and, with a `quantScaleOptional`, an int8 `y = QUANT(x @ ANTIQUANT(weight)
//! + bias)`.
//!
//! The rules are those of the Atlas A2/A3 parts: hicann/ops-nn
//! `matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md`
//! (its parameter table and constraints) and the checks of
//! `matmul/weight_quant_batch_matmul_v2/op_host/op_api/aclnn_weight_quant_batch_matmul_v2.cpp`
//! (`CheckDtypeValid`, `CheckScaleDtypeValid`, `CheckQuantScale`,
//! `CheckBiasDtypeValid`, `CheckQuantParamShape`); a violation is an
//! [`OpError`], which the aclnn export reports as 161002.
//!
//! The packed scales are the `UINT64`/`INT64` words of `aclnnTransQuantParam`
//! and `aclnnTransQuantParamV2` (hicann/ops-nn `quant/trans_quant_param/docs/
//! aclnnTransQuantParam.md`): the FLOAT32 scale's 19 high bits in bits 0–31
//! (`scale & 0xFFFFE000`), a 9-bit signed offset in bits 37–45, bit 46 set.

use super::int4::Int4Layout;
use super::native::{Native, read, read_i64, write};
use super::nn::{Kernel, spec};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

const NAME: &str = "WeightQuantBatchMatmulV2";

/// The `weight` of [`weight_quant_matmul`]: int8 elements, or int4 values
/// packed two per byte, found through their layout in a `uint8` input (the
/// bytes under the view).
#[derive(Debug, Clone, Copy)]
pub enum QuantWeight<'a> {
    /// An int8 tensor `[k, n]` (a strided view is gathered by the caller).
    Int8(&'a TensorSpec),
    /// An int4 view `[k, n]` over the bytes of the kernel's input.
    Int4(&'a Int4Layout),
}

/// The `antiquantScale` of [`weight_quant_matmul`].
#[derive(Debug, Clone, Copy)]
pub enum AntiquantScale<'a> {
    /// float16/bfloat16 values, of `x`'s type.
    Float(&'a TensorSpec),
    /// `UINT64`/`INT64` words of `aclnnTransQuantParamV2` (bound as int64):
    /// the A2/A3 parts' fixpipe form, with a float16 `x`, an int8 weight and
    /// an int32 offset.
    Packed(&'a TensorSpec),
}

impl AntiquantScale<'_> {
    fn spec(&self) -> &TensorSpec {
        match self {
            AntiquantScale::Float(t) | AntiquantScale::Packed(t) => t,
        }
    }
}

/// The arguments of [`weight_quant_matmul`], as the page names them.
#[derive(Debug, Clone, Copy)]
pub struct WeightQuantArgs<'a> {
    /// `x` `[m, k]`, float16 or bfloat16.
    pub x: &'a TensorSpec,
    /// `weight` `[k, n]`.
    pub weight: QuantWeight<'a>,
    /// `antiquantScale`.
    pub scale: AntiquantScale<'a>,
    /// `antiquantOffsetOptional`: the scale's float type, or int32 with a
    /// packed scale.
    pub offset: Option<&'a TensorSpec>,
    /// `quantScaleOptional`: `UINT64` words of `aclnnTransQuantParam`
    /// (bound as int64); with it `y` is int8.
    pub quant_scale: Option<&'a TensorSpec>,
    /// `quantOffsetOptional`: float32, of `quant_scale`'s shape.
    pub quant_offset: Option<&'a TensorSpec>,
    /// `biasOptional` `[n]` or `[1, n]`.
    pub bias: Option<&'a TensorSpec>,
    /// `antiquantGroupSize`.
    pub group: i64,
    /// `y`'s type.
    pub out: DType,
}

/// The FLOAT32 scale of a packed word (bits 0–31, of which the release
/// keeps the 19 high ones).
fn packed_scale(word: i64) -> f64 {
    f64::from(f32::from_bits((word as u64 & 0xFFFF_E000) as u32))
}

/// The 9-bit signed offset of a packed word (bits 37–45).
fn packed_offset(word: i64) -> f64 {
    let o = ((word as u64 >> 37) & 0x1FF) as i32;
    f64::from(if o >= 256 { o - 512 } else { o })
}

/// The dtype rules of the A2/A3 parts (`CheckDtypeValid`,
/// `CheckScaleDtypeValid`, `CheckQuantScale`, `CheckBiasDtypeValid`).
fn check_dtypes(a: &WeightQuantArgs<'_>) -> Res<()> {
    let (x, out) = (a.x.dtype, a.out);
    if !matches!(x, DType::F16 | DType::BF16) {
        return err(format!(
            "{NAME}: x is {}; it must be float16 or bfloat16",
            x.name()
        ));
    }
    if let QuantWeight::Int8(t) = a.weight
        && t.dtype != DType::I8
    {
        return err(format!(
            "{NAME}: weight is {}; it must be int8 or int4",
            t.dtype.name()
        ));
    }
    if a.quant_scale.is_none() && a.quant_offset.is_some() {
        return err(format!(
            "{NAME}: quantOffsetOptional is given without quantScaleOptional"
        ));
    }
    match a.quant_scale {
        Some(_) if out != DType::I8 => {
            return err(format!(
                "{NAME}: y is {}; with quantScaleOptional it must be int8",
                out.name()
            ));
        }
        None if out != x => {
            return err(format!(
                "{NAME}: y is {}; without quantScaleOptional it must be x's type, {}",
                out.name(),
                x.name()
            ));
        }
        _ => {}
    }
    if let Some(q) = a.quant_offset
        && q.dtype != DType::F32
    {
        return err(format!(
            "{NAME}: quantOffsetOptional is {}; it must be float32",
            q.dtype.name()
        ));
    }
    match a.scale {
        AntiquantScale::Packed(_) => {
            if x != DType::F16 {
                return err(format!(
                    "{NAME}: x is {}; with a uint64/int64 antiquantScale it must be float16",
                    x.name()
                ));
            }
            if !matches!(a.weight, QuantWeight::Int8(_)) {
                return err(format!(
                    "{NAME}: weight is int4; with a uint64/int64 antiquantScale it must be int8"
                ));
            }
            if let Some(o) = a.offset
                && o.dtype != DType::I32
            {
                return err(format!(
                    "{NAME}: antiquantOffsetOptional is {}; with a uint64/int64 antiquantScale it must be int32",
                    o.dtype.name()
                ));
            }
            if out != DType::F16 {
                return err(format!(
                    "{NAME}: y is {}; with a uint64/int64 antiquantScale it must be float16",
                    out.name()
                ));
            }
        }
        AntiquantScale::Float(s) => {
            if let Some(o) = a.offset
                && o.dtype == DType::I32
            {
                return err(format!(
                    "{NAME}: antiquantOffsetOptional is int32, which needs a uint64/int64 antiquantScale (it is {})",
                    s.dtype.name()
                ));
            }
            if s.dtype != x {
                return err(format!(
                    "{NAME}: antiquantScale is {}; it must be x's type, {}",
                    s.dtype.name(),
                    x.name()
                ));
            }
            if let Some(o) = a.offset
                && o.dtype != s.dtype
            {
                return err(format!(
                    "{NAME}: antiquantOffsetOptional is {}; it must be antiquantScale's type, {}",
                    o.dtype.name(),
                    s.dtype.name()
                ));
            }
        }
    }
    if let Some(b) = a.bias {
        let want = if x == DType::F16 {
            DType::F16
        } else {
            DType::F32
        };
        if b.dtype != want {
            return err(format!(
                "{NAME}: biasOptional is {}; with x {} it must be {}",
                b.dtype.name(),
                x.name(),
                want.name()
            ));
        }
    }
    Ok(())
}

/// `y = x @ ((weight + offset) · scale) + bias` with an int8 or int4
/// `weight` `[k, n]` (or `[n, k]` viewed transposed), `scale`/`offset` per
/// tensor (`[1]`, `[1, 1]`), per output channel (`[n]`, `[1, n]`) or per
/// group of `group` rows (`[⌈k / group⌉, n]`); with `quant_scale`, `y` is
/// int8: `(x @ ANTIQUANT(weight) + bias) · quantScale + quantOffset`,
/// rounded to the nearest integer (ties to even) and saturated.
///
/// The release's rules (the page's parameter table and constraints, and
/// the op_api checks cited in the module docs): k and n in [1, 65535], no
/// empty tensor, a group size of 0 or a multiple of 32 in [32, k − 1], the
/// dtype rules of [`WeightQuantArgs`]' fields, an int4 weight's rows whole
/// bytes (its unit-stride dimension even), `quantScaleOptional` `[1]`,
/// `[n]` or `[1, n]` and `quantOffsetOptional` of its shape.
///
/// The quantisation offset is the one packed in `quantScaleOptional`
/// (`aclnnTransQuantParam`'s `offset`): the A2/A3 kernels hand only the
/// packed words to the fixpipe (hicann/ops-nn `matmul/weight_quant_batch_matmul_v2/
/// op_kernel/weight_quant_batch_matmul_v2_custom.h`, `SetQuantScalar`/
/// `SetQuantVector`) and do not read `quantOffsetOptional`, which is
/// checked but not added.
pub fn weight_quant_matmul(a: WeightQuantArgs<'_>) -> Res<Kernel> {
    check_dtypes(&a)?;
    let (x, scale) = (a.x, a.scale.spec());
    let w_shape = match a.weight {
        QuantWeight::Int8(t) => &t.shape,
        QuantWeight::Int4(l) => &l.shape,
    };
    if x.shape.len() != 2 || w_shape.len() != 2 || x.shape[1] != w_shape[0] {
        return err(format!(
            "{NAME}: x {} and weight {} do not multiply",
            fmt_shape(&x.shape),
            fmt_shape(w_shape)
        ));
    }
    let (m, k, n) = (x.shape[0], x.shape[1], w_shape[1]);
    if m < 1 || !(1..=65535).contains(&k) || !(1..=65535).contains(&n) {
        return err(format!(
            "{NAME}: m = {m}, k = {k}, n = {n}: k and n must lie in [1, 65535] and m be at least 1 (no empty tensors)"
        ));
    }
    if let QuantWeight::Int4(l) = a.weight
        && let Some(d) = (0..2).find(|&d| l.strides[d] == 1 && l.shape[d] > 1)
        && l.shape[d] % 2 != 0
    {
        return err(format!(
            "{NAME}: an int4 weight's unit-stride dimension must be even (whole bytes per row), got {} of {}",
            l.shape[d],
            fmt_shape(&l.shape)
        ));
    }
    let group = a.group;
    if group != 0 && (group < 32 || group > k - 1 || group % 32 != 0) {
        return err(format!(
            "{NAME}: antiquantGroupSize {group} must be 0 or a multiple of 32 in [32, k - 1] (k = {k})"
        ));
    }
    let groups = if group > 0 {
        (k + group - 1) / group
    } else {
        1
    };
    let per_tensor = |t: &TensorSpec| t.shape == [1] || t.shape == [1, 1];
    let per_channel = |t: &TensorSpec| t.shape == [n] || t.shape == [1, n];
    let ok_scale =
        |t: &TensorSpec| per_tensor(t) || per_channel(t) || (group > 0 && t.shape == [groups, n]);
    if !ok_scale(scale) || a.offset.is_some_and(|o| o.shape != scale.shape) {
        return err(format!(
            "{NAME}: antiquantScale {} (and antiquantOffset) must be [1], [{n}], [1, {n}] or [{groups}, {n}] with a group size",
            fmt_shape(&scale.shape)
        ));
    }
    if let Some(q) = a.quant_scale {
        if !(q.shape == [1] || per_channel(q)) {
            return err(format!(
                "{NAME}: quantScaleOptional {} must be [1], [{n}] or [1, {n}]",
                fmt_shape(&q.shape)
            ));
        }
        if let Some(o) = a.quant_offset
            && o.shape != q.shape
        {
            return err(format!(
                "{NAME}: quantOffsetOptional {} must have quantScaleOptional's shape {}",
                fmt_shape(&o.shape),
                fmt_shape(&q.shape)
            ));
        }
    }
    if let Some(b) = a.bias
        && b.shape != [n]
        && b.shape != [1, n]
    {
        return err(format!(
            "{NAME}: bias {} must be [{n}] or [1, {n}]",
            fmt_shape(&b.shape)
        ));
    }
    let scale_at = if per_tensor(scale) {
        |_: usize, _: usize, _: usize, _: usize| 0
    } else if group > 0 && scale.shape == [groups, n] {
        |r: usize, c: usize, nu: usize, gsz: usize| (r / gsz) * nu + c
    } else {
        |_: usize, c: usize, _: usize, _: usize| c
    };
    let int4 = match a.weight {
        QuantWeight::Int4(l) => Some(l.clone()),
        QuantWeight::Int8(_) => None,
    };
    let packed = matches!(a.scale, AntiquantScale::Packed(_));
    let (has_off, has_bias) = (a.offset.is_some(), a.bias.is_some());
    let quant_per_tensor = a.quant_scale.map(|q| q.shape == [1]);
    let (mu, ku, nu, gsz) = (m as usize, k as usize, n as usize, group.max(1) as usize);
    Ok(Kernel {
        outputs: vec![spec(a.out, vec![m, n])],
        native: Native::new(NAME, move |i, o| {
            let xv = read(&i[0]);
            let wv = match &int4 {
                Some(l) => l.unpack(i[1].data),
                None => read(&i[1]),
            };
            let sv: Vec<f64> = if packed {
                read_i64(&i[2]).into_iter().map(packed_scale).collect()
            } else {
                read(&i[2])
            };
            let mut next = 3;
            let mut take = |present: bool| {
                present.then(|| {
                    next += 1;
                    next - 1
                })
            };
            let (oi, bi, qi) = (
                take(has_off),
                take(has_bias),
                take(quant_per_tensor.is_some()),
            );
            let ov = oi.map(|j| read(&i[j]));
            let bv = bi.map(|j| read(&i[j]));
            let qv = qi.map(|j| read_i64(&i[j]));
            let deq: Vec<f64> = (0..ku * nu)
                .map(|p| {
                    let (r, c) = (p / nu, p % nu);
                    let s = scale_at(r, c, nu, gsz);
                    (wv[p] + ov.as_ref().map_or(0.0, |o| o[s])) * sv[s]
                })
                .collect();
            let mut y = vec![0.0; mu * nu];
            for r in 0..mu {
                for c in 0..nu {
                    let acc = (0..ku)
                        .map(|p| xv[r * ku + p] * deq[p * nu + c])
                        .sum::<f64>()
                        + bv.as_ref().map_or(0.0, |b| b[c]);
                    y[r * nu + c] = match (&qv, quant_per_tensor) {
                        (Some(q), Some(one)) => {
                            let word = q[if one { 0 } else { c }];
                            (acc * packed_scale(word) + packed_offset(word))
                                .round_ties_even()
                                .clamp(-128.0, 127.0)
                        }
                        _ => acc,
                    };
                }
            }
            write(&mut o[0], &y);
            Ok(())
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `aclnnTransQuantParam`'s word for `scale` and `offset`, as its page
    /// gives the formula.
    fn word(scale: f32, offset: Option<f32>) -> i64 {
        let mut w = u64::from(scale.to_bits() & 0xFFFF_E000) | (1 << 46);
        if let Some(o) = offset {
            let o = (o.round() as i32).clamp(-256, 255);
            w = (w & 0x4000_FFFF_FFFF) | (((o as u64) & 0x1FF) << 37);
        }
        w as i64
    }

    #[test]
    fn packed_words_decode_to_the_truncated_scale_and_the_signed_offset() {
        assert_eq!(packed_scale(word(0.5, None)), 0.5);
        assert_eq!(packed_offset(word(0.5, None)), 0.0);
        assert_eq!(packed_offset(word(2.0, Some(-3.0))), -3.0);
        assert_eq!(packed_offset(word(2.0, Some(255.0))), 255.0);
        assert_eq!(packed_offset(word(2.0, Some(-256.0))), -256.0);
        // 19 high bits: 1 + 2^-10 survives, 1 + 2^-11 does not.
        assert_eq!(
            packed_scale(word(1.0 + 2f32.powi(-10), None)),
            1.0 + 2f64.powi(-10)
        );
        assert_eq!(packed_scale(word(1.0 + 2f32.powi(-11), None)), 1.0);
    }
}
