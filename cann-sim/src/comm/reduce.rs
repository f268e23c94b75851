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
//! [`ErrorKind::NotSupported`] (`HCCL_E_NOT_SUPPORT`). Collectives that only
//! move data accept every [`DataType`]; the exports refuse the types of the
//! header the simulator does not move (int128, the fp8 family).

use super::error::{ErrorKind, Fail};

/// The element types HCCL collectives move (`HcclDataType`'s, less int128
/// and the fp8 family, which the simulator does not handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// int8.
    Int8,
    /// int16.
    Int16,
    /// int32.
    Int32,
    /// fp16.
    Fp16,
    /// fp32.
    Fp32,
    /// int64.
    Int64,
    /// uint64.
    Uint64,
    /// uint8.
    Uint8,
    /// uint16.
    Uint16,
    /// uint32.
    Uint32,
    /// fp64.
    Fp64,
    /// bfp16 (bfloat16).
    Bfp16,
}

impl DataType {
    const ALL: [DataType; 12] = [
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Fp16,
        DataType::Fp32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Uint8,
        DataType::Uint16,
        DataType::Uint32,
        DataType::Fp64,
        DataType::Bfp16,
    ];

    /// Element size in bytes.
    pub fn size(self) -> usize {
        match self {
            DataType::Int8 | DataType::Uint8 => 1,
            DataType::Int16 | DataType::Uint16 | DataType::Fp16 | DataType::Bfp16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Fp32 => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Fp64 => 8,
        }
    }

    /// The header's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Fp16 => "fp16",
            DataType::Fp32 => "fp32",
            DataType::Int64 => "int64",
            DataType::Uint64 => "uint64",
            DataType::Uint8 => "uint8",
            DataType::Uint16 => "uint16",
            DataType::Uint32 => "uint32",
            DataType::Fp64 => "fp64",
            DataType::Bfp16 => "bfp16",
        }
    }

    /// Its number in signatures exchanged between ranks.
    pub(super) fn to_wire(self) -> u32 {
        super::wire::number_of(&Self::ALL, &self)
    }

    /// The type numbered `n` by [`DataType::to_wire`].
    pub(super) fn from_wire(n: u32) -> Option<DataType> {
        super::wire::numbered(&Self::ALL, n)
    }
}

/// The reduction operations (`HcclReduceOp`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// sum.
    Sum,
    /// prod.
    Prod,
    /// max.
    Max,
    /// min.
    Min,
}

impl ReduceOp {
    const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The header's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// Its number in signatures exchanged between ranks.
    pub(super) fn to_wire(self) -> u32 {
        super::wire::number_of(&Self::ALL, &self)
    }

    /// The op numbered `n` by [`ReduceOp::to_wire`].
    pub(super) fn from_wire(n: u32) -> Option<ReduceOp> {
        super::wire::numbered(&Self::ALL, n)
    }
}

/// Whether the simulated SoC is an Ascend 950 (wider reduction types).
fn soc_is_950() -> bool {
    crate::config::get().is_ok_and(|c| c.soc_name.starts_with("Ascend950"))
}

/// Checks that a reduction of `dt` with `op` is supported on the simulated
/// SoC (see the module docs).
///
/// # Errors
///
/// [`ErrorKind::NotSupported`] for a pair the SoC does not reduce.
pub fn check_reduce(dt: DataType, op: ReduceOp) -> Result<(), Fail> {
    let wide = soc_is_950();
    let typed = match dt {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Fp16
        | DataType::Fp32
        | DataType::Bfp16 => true,
        DataType::Uint64 | DataType::Fp64 => wide,
        _ => false,
    };
    let soc = crate::config::get().map_or("Ascend910B3", |c| c.soc_name.as_str());
    if !typed {
        return Err(Fail::new(
            ErrorKind::NotSupported,
            format!(
                "reductions of {} are not supported on {soc} (Atlas A2/A3 reduce int8, int16, \
                 int32, int64, fp16, fp32 and bfp16)",
                dt.name()
            ),
        ));
    }
    if op == ReduceOp::Prod && matches!(dt, DataType::Int16 | DataType::Bfp16) {
        return Err(Fail::new(
            ErrorKind::NotSupported,
            format!("the prod reduction does not support {} on {soc}", dt.name()),
        ));
    }
    Ok(())
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
            ReduceOp::Sum => zip_typed::<N, $t>($acc, $x, ld, st, $sum),
            ReduceOp::Prod => zip_typed::<N, $t>($acc, $x, ld, st, $prod),
            ReduceOp::Max => zip_typed::<N, $t>($acc, $x, ld, st, |a, b| a.max(b)),
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
            ReduceOp::Sum => zip_apply::<2, f32>($acc, $x, ld, st, |a, b| a + b),
            ReduceOp::Prod => zip_apply::<2, f32>($acc, $x, ld, st, |a, b| a * b),
            ReduceOp::Max => zip_apply::<2, f32>($acc, $x, ld, st, f32::max),
            _ => zip_apply::<2, f32>($acc, $x, ld, st, f32::min),
        }
    }};
}

/// `acc[i] = acc[i] op x[i]` over the elements of two equal byte ranges.
/// Every type and op computes here; which pairs a collective may ask for is
/// [`check_reduce`]'s to say.
pub fn reduce(dt: DataType, op: ReduceOp, acc: &mut [u8], x: &[u8]) {
    match dt {
        DataType::Int8 => int_kernel!(i8, acc, x, op),
        DataType::Uint8 => int_kernel!(u8, acc, x, op),
        DataType::Int16 => int_kernel!(i16, acc, x, op),
        DataType::Uint16 => int_kernel!(u16, acc, x, op),
        DataType::Int32 => int_kernel!(i32, acc, x, op),
        DataType::Uint32 => int_kernel!(u32, acc, x, op),
        DataType::Int64 => int_kernel!(i64, acc, x, op),
        DataType::Uint64 => int_kernel!(u64, acc, x, op),
        DataType::Fp32 => float_kernel!(f32, acc, x, op),
        DataType::Fp64 => float_kernel!(f64, acc, x, op),
        DataType::Fp16 => half_kernel!(half::f16, acc, x, op),
        DataType::Bfp16 => half_kernel!(half::bf16, acc, x, op),
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
        reduce(DataType::Int8, ReduceOp::Sum, &mut acc, &x);
        assert_eq!(acc, bytes(&[i8::MIN, 1, -4, 14], i8::to_ne_bytes));
        let mut acc = bytes(&[3u32, 9, 2], u32::to_ne_bytes);
        let x = bytes(&[5u32, 1, 2], u32::to_ne_bytes);
        reduce(DataType::Uint32, ReduceOp::Min, &mut acc.clone(), &x);
        reduce(DataType::Uint32, ReduceOp::Max, &mut acc, &x);
        assert_eq!(acc, bytes(&[5u32, 9, 2], u32::to_ne_bytes));
    }

    #[test]
    fn half_types_reduce_through_f32() {
        let mut acc = bytes(&[half::f16::from_f32(1.5)], |v| v.to_bits().to_ne_bytes());
        let x = bytes(&[half::f16::from_f32(2.25)], |v| v.to_bits().to_ne_bytes());
        reduce(DataType::Fp16, ReduceOp::Prod, &mut acc, &x);
        assert_eq!(
            acc,
            bytes(&[half::f16::from_f32(3.375)], |v| v.to_bits().to_ne_bytes())
        );
    }

    #[test]
    fn a2_rejects_prod_of_int16_and_reductions_of_unsigned_types() {
        assert_eq!(check_reduce(DataType::Fp32, ReduceOp::Sum), Ok(()));
        let kind = |dt, op| check_reduce(dt, op).map_err(|f| f.kind);
        assert_eq!(
            kind(DataType::Int16, ReduceOp::Prod),
            Err(ErrorKind::NotSupported)
        );
        assert_eq!(
            kind(DataType::Uint32, ReduceOp::Sum),
            Err(ErrorKind::NotSupported)
        );
    }

    #[test]
    fn types_and_ops_round_trip_through_their_wire_numbers() {
        for d in DataType::ALL {
            assert_eq!(DataType::from_wire(d.to_wire()), Some(d));
        }
        for o in ReduceOp::ALL {
            assert_eq!(ReduceOp::from_wire(o.to_wire()), Some(o));
        }
        assert_eq!(DataType::from_wire(12), None);
        assert_eq!(ReduceOp::from_wire(4), None);
    }
}
