//! Data types and reduction kernels of the simulated HCCL.
//!
//! Reductions work on raw bytes in native byte order, element by element:
//! integers wrap on overflow (two's complement, as the hardware's integer
//! adders and multipliers do), floats follow IEEE arithmetic, and `f16` /
//! `bf16` are computed in `f32` and rounded back after every step (as the
//! device's vector units do per element).
//!
//! Which (type, op) pairs a reduction accepts depends on the simulated SoC,
//! as documented for `HcclAllReduce` (hicann/hccl
//! `docs/zh/api_ref/comm_op_interface/HcclAllReduce.md`): Atlas A2/A3
//! (`Ascend910B*`, `Ascend910_93*`, the default) reduce int8, int16, int32,
//! int64, fp16, fp32 and bf16, without `prod` for int16 and bf16; Ascend 950
//! (`Ascend950*`) adds uint64 and fp64. Every other pair is
//! `HCCL_E_NOT_SUPPORT`. Collectives that only move data accept every type.

use hccl_sys::*;

/// Element size in bytes of a data type HCCL can move, or `None` for types
/// the simulator does not handle (int128, the fp8 family, unknown values).
pub fn type_size(dt: HcclDataType) -> Option<usize> {
    Some(match dt {
        HCCL_DATA_TYPE_INT8 | HCCL_DATA_TYPE_UINT8 => 1,
        HCCL_DATA_TYPE_INT16
        | HCCL_DATA_TYPE_UINT16
        | HCCL_DATA_TYPE_FP16
        | HCCL_DATA_TYPE_BFP16 => 2,
        HCCL_DATA_TYPE_INT32 | HCCL_DATA_TYPE_UINT32 | HCCL_DATA_TYPE_FP32 => 4,
        HCCL_DATA_TYPE_INT64 | HCCL_DATA_TYPE_UINT64 | HCCL_DATA_TYPE_FP64 => 8,
        _ => return None,
    })
}

/// The header's name of a data type, for messages.
pub fn type_name(dt: HcclDataType) -> String {
    match dt {
        HCCL_DATA_TYPE_INT8 => "int8".into(),
        HCCL_DATA_TYPE_INT16 => "int16".into(),
        HCCL_DATA_TYPE_INT32 => "int32".into(),
        HCCL_DATA_TYPE_FP16 => "fp16".into(),
        HCCL_DATA_TYPE_FP32 => "fp32".into(),
        HCCL_DATA_TYPE_INT64 => "int64".into(),
        HCCL_DATA_TYPE_UINT64 => "uint64".into(),
        HCCL_DATA_TYPE_UINT8 => "uint8".into(),
        HCCL_DATA_TYPE_UINT16 => "uint16".into(),
        HCCL_DATA_TYPE_UINT32 => "uint32".into(),
        HCCL_DATA_TYPE_FP64 => "fp64".into(),
        HCCL_DATA_TYPE_BFP16 => "bfp16".into(),
        HCCL_DATA_TYPE_INT128 => "int128".into(),
        HCCL_DATA_TYPE_HIF8 => "hif8".into(),
        HCCL_DATA_TYPE_FP8E4M3 => "fp8e4m3".into(),
        HCCL_DATA_TYPE_FP8E5M2 => "fp8e5m2".into(),
        HCCL_DATA_TYPE_FP8E8M0 => "fp8e8m0".into(),
        other => format!("unknown data type {other}"),
    }
}

/// The header's name of a reduce op, for messages.
pub fn op_name(op: HcclReduceOp) -> String {
    match op {
        HCCL_REDUCE_SUM => "sum".into(),
        HCCL_REDUCE_PROD => "prod".into(),
        HCCL_REDUCE_MAX => "max".into(),
        HCCL_REDUCE_MIN => "min".into(),
        other => format!("unknown reduce op {other}"),
    }
}

/// Checks that `dt` can be moved (any collective).
///
/// # Errors
///
/// `(HCCL_E_NOT_SUPPORT, why)` for int128 and the fp8 family,
/// `(HCCL_E_PARA, why)` for values outside the enum.
pub fn check_type(dt: HcclDataType) -> Result<usize, (HcclResult, String)> {
    match type_size(dt) {
        Some(s) => Ok(s),
        None if matches!(
            dt,
            HCCL_DATA_TYPE_INT128
                | HCCL_DATA_TYPE_HIF8
                | HCCL_DATA_TYPE_FP8E4M3
                | HCCL_DATA_TYPE_FP8E5M2
                | HCCL_DATA_TYPE_FP8E8M0
        ) =>
        {
            Err((
                HCCL_E_NOT_SUPPORT,
                format!("data type {} is not supported by cann-sim", type_name(dt)),
            ))
        }
        None => Err((
            HCCL_E_PARA,
            format!("dataType {dt} is not a valid HcclDataType"),
        )),
    }
}

/// Whether the simulated SoC is an Ascend 950 (wider reduction types).
fn soc_is_950() -> bool {
    crate::config::get().is_ok_and(|c| c.soc_name.starts_with("Ascend950"))
}

/// Checks that a reduction of `dt` with `op` is supported on the simulated
/// SoC (see the module docs); returns the element size.
///
/// # Errors
///
/// `(HCCL_E_PARA, why)` for an op outside the enum, `(HCCL_E_NOT_SUPPORT,
/// why)` for a pair the SoC does not reduce.
pub fn check_reduce(dt: HcclDataType, op: HcclReduceOp) -> Result<usize, (HcclResult, String)> {
    let size = check_type(dt)?;
    if op > HCCL_REDUCE_MIN {
        return Err((
            HCCL_E_PARA,
            format!("op {op} is not a valid HcclReduceOp (sum 0, prod 1, max 2, min 3)"),
        ));
    }
    let wide = soc_is_950();
    let typed = match dt {
        HCCL_DATA_TYPE_INT8 | HCCL_DATA_TYPE_INT16 | HCCL_DATA_TYPE_INT32
        | HCCL_DATA_TYPE_INT64 | HCCL_DATA_TYPE_FP16 | HCCL_DATA_TYPE_FP32
        | HCCL_DATA_TYPE_BFP16 => true,
        HCCL_DATA_TYPE_UINT64 | HCCL_DATA_TYPE_FP64 => wide,
        _ => false,
    };
    let soc = crate::config::get().map_or("Ascend910B3", |c| c.soc_name.as_str());
    if !typed {
        return Err((
            HCCL_E_NOT_SUPPORT,
            format!(
                "reductions of {} are not supported on {soc} (Atlas A2/A3 reduce int8, int16, \
                 int32, int64, fp16, fp32 and bfp16)",
                type_name(dt)
            ),
        ));
    }
    if op == HCCL_REDUCE_PROD && matches!(dt, HCCL_DATA_TYPE_INT16 | HCCL_DATA_TYPE_BFP16) {
        return Err((
            HCCL_E_NOT_SUPPORT,
            format!(
                "the prod reduction does not support {} on {soc}",
                type_name(dt)
            ),
        ));
    }
    Ok(size)
}

/// `acc[i] = f(acc[i], x[i])` over the `N`-byte elements of two byte
/// ranges. Generic over `f` so that each operation gets its own inlined
/// (and vectorisable) loop instead of a call per element.
#[inline(always)]
fn zip_apply<const N: usize, T>(
    acc: &mut [u8],
    x: &[u8],
    load: impl Fn([u8; N]) -> T,
    store: impl Fn(T) -> [u8; N],
    f: impl Fn(T, T) -> T,
) {
    for (a, b) in acc.chunks_exact_mut(N).zip(x.chunks_exact(N)) {
        let (Ok(va), Ok(vb)) = (<[u8; N]>::try_from(&*a), <[u8; N]>::try_from(b)) else {
            continue;
        };
        a.copy_from_slice(&store(f(load(va), load(vb))));
    }
}

/// `acc[i] = f(acc[i], x[i])` over elements of a primitive numeric type:
/// typed (vectorisable) when both ranges are aligned for `T`, else through
/// bytes.
#[inline(always)]
fn zip_typed<const N: usize, T: Copy>(
    acc: &mut [u8],
    x: &[u8],
    load: impl Fn([u8; N]) -> T,
    store: impl Fn(T) -> [u8; N],
    f: impl Fn(T, T) -> T,
) {
    // SAFETY: `T` is a primitive integer or float (every caller passes one):
    // any bit pattern is a valid value and it has no padding, so viewing
    // aligned bytes as `T`s is sound; the unaligned ends come back as bytes.
    let ((ap, a, asuf), (xp, xs, xsuf)) = unsafe { (acc.align_to_mut::<T>(), x.align_to::<T>()) };
    if ap.is_empty() && xp.is_empty() && asuf.is_empty() && xsuf.is_empty() && a.len() == xs.len() {
        for (a, &b) in a.iter_mut().zip(xs) {
            *a = f(*a, b);
        }
        return;
    }
    zip_apply::<N, T>(acc, x, load, store, f);
}

/// One loop per reduce operation over elements of a primitive type.
macro_rules! kernel {
    ($t:ty, $acc:expr, $x:expr, $op:expr, $sum:expr, $prod:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        let (ld, st) = (<$t>::from_ne_bytes, <$t>::to_ne_bytes);
        match $op {
            HCCL_REDUCE_SUM => zip_typed::<N, $t>($acc, $x, ld, st, $sum),
            HCCL_REDUCE_PROD => zip_typed::<N, $t>($acc, $x, ld, st, $prod),
            HCCL_REDUCE_MAX => zip_typed::<N, $t>($acc, $x, ld, st, |a, b| a.max(b)),
            _ => zip_typed::<N, $t>($acc, $x, ld, st, |a, b| a.min(b)),
        }
    }};
}

macro_rules! int_kernel {
    ($t:ty, $acc:expr, $x:expr, $op:expr) => {
        kernel!($t, $acc, $x, $op, <$t>::wrapping_add, <$t>::wrapping_mul)
    };
}

macro_rules! float_kernel {
    ($t:ty, $acc:expr, $x:expr, $op:expr) => {
        kernel!($t, $acc, $x, $op, |a, b| a + b, |a, b| a * b)
    };
}

/// 16-bit floats compute in f32 and round once per element.
macro_rules! half_kernel {
    ($t:ty, $acc:expr, $x:expr, $op:expr) => {{
        let ld = |b: [u8; 2]| <$t>::from_bits(u16::from_ne_bytes(b)).to_f32();
        let st = |v: f32| <$t>::from_f32(v).to_bits().to_ne_bytes();
        match $op {
            HCCL_REDUCE_SUM => zip_apply::<2, f32>($acc, $x, ld, st, |a, b| a + b),
            HCCL_REDUCE_PROD => zip_apply::<2, f32>($acc, $x, ld, st, |a, b| a * b),
            HCCL_REDUCE_MAX => zip_apply::<2, f32>($acc, $x, ld, st, f32::max),
            _ => zip_apply::<2, f32>($acc, $x, ld, st, f32::min),
        }
    }};
}

/// `acc[i] = acc[i] op x[i]` over the elements of two equal byte ranges.
/// Types and ops must have been checked ([`check_reduce`]); anything else
/// leaves `acc` unchanged.
pub fn reduce(dt: HcclDataType, op: HcclReduceOp, acc: &mut [u8], x: &[u8]) {
    match dt {
        HCCL_DATA_TYPE_INT8 => int_kernel!(i8, acc, x, op),
        HCCL_DATA_TYPE_UINT8 => int_kernel!(u8, acc, x, op),
        HCCL_DATA_TYPE_INT16 => int_kernel!(i16, acc, x, op),
        HCCL_DATA_TYPE_UINT16 => int_kernel!(u16, acc, x, op),
        HCCL_DATA_TYPE_INT32 => int_kernel!(i32, acc, x, op),
        HCCL_DATA_TYPE_UINT32 => int_kernel!(u32, acc, x, op),
        HCCL_DATA_TYPE_INT64 => int_kernel!(i64, acc, x, op),
        HCCL_DATA_TYPE_UINT64 => int_kernel!(u64, acc, x, op),
        HCCL_DATA_TYPE_FP32 => float_kernel!(f32, acc, x, op),
        HCCL_DATA_TYPE_FP64 => float_kernel!(f64, acc, x, op),
        HCCL_DATA_TYPE_FP16 => half_kernel!(half::f16, acc, x, op),
        HCCL_DATA_TYPE_BFP16 => half_kernel!(half::bf16, acc, x, op),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    #[test]
    fn integer_reductions_wrap_like_the_hardware() {
        let mut acc = bytes(&[i8::MAX, -3, 5, 7], i8::to_ne_bytes);
        let x = bytes(&[1i8, 4, -9, 7], i8::to_ne_bytes);
        reduce(HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, &mut acc, &x);
        assert_eq!(acc, bytes(&[i8::MIN, 1, -4, 14], i8::to_ne_bytes));
        let mut acc = bytes(&[3u32, 9, 2], u32::to_ne_bytes);
        let x = bytes(&[5u32, 1, 2], u32::to_ne_bytes);
        reduce(HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_MIN, &mut acc.clone(), &x);
        reduce(HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_MAX, &mut acc, &x);
        assert_eq!(acc, bytes(&[5u32, 9, 2], u32::to_ne_bytes));
    }

    #[test]
    fn half_types_reduce_through_f32() {
        let mut acc = bytes(&[half::f16::from_f32(1.5)], |v| v.to_bits().to_ne_bytes());
        let x = bytes(&[half::f16::from_f32(2.25)], |v| v.to_bits().to_ne_bytes());
        reduce(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, &mut acc, &x);
        assert_eq!(
            acc,
            bytes(&[half::f16::from_f32(3.375)], |v| v.to_bits().to_ne_bytes())
        );
    }

    #[test]
    fn a2_rejects_prod_of_int16_and_reductions_of_unsigned_types() {
        assert_eq!(check_reduce(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM), Ok(4));
        assert_eq!(
            check_reduce(HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD)
                .unwrap_err()
                .0,
            HCCL_E_NOT_SUPPORT
        );
        assert_eq!(
            check_reduce(HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM)
                .unwrap_err()
                .0,
            HCCL_E_NOT_SUPPORT
        );
        assert_eq!(
            check_reduce(HCCL_DATA_TYPE_FP32, 7).unwrap_err().0,
            HCCL_E_PARA
        );
        assert_eq!(check_type(99).unwrap_err().0, HCCL_E_PARA);
        assert_eq!(
            check_type(HCCL_DATA_TYPE_INT128).unwrap_err().0,
            HCCL_E_NOT_SUPPORT
        );
    }
}
