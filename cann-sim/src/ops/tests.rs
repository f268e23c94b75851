//! Tests of the operator library against references computed in f64 on the
//! host, from the exact (already rounded) input values.
//!
//! Tolerances: integers must match exactly. Floats must satisfy
//! `|got - want| <= tol * max(|want|, 1)` with `tol` 1e-5 for float32, 1e-3
//! for float16 and 1e-2 for bfloat16 (a little above half an ulp of the
//! output type: the kernels compute in f32 and round once), i.e. relative
//! for values above 1 and absolute below. NaN must be NaN and infinities
//! equal.

use half::{bf16, f16};
use proptest::prelude::*;

use super::*;

const FLOATS: [DType; 3] = [DType::F32, DType::F16, DType::BF16];
const NUMERIC: [DType; 5] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];
const ALL_DTYPES: [DType; 9] = [
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
    DType::U8,
    DType::Bool,
];

/// An owned tensor.
#[derive(Debug, Clone)]
struct T {
    spec: TensorSpec,
    data: Vec<u8>,
}

fn spec(dtype: DType, shape: &[i64]) -> TensorSpec {
    TensorSpec {
        dtype,
        shape: shape.to_vec(),
    }
}

/// Encodes f64 values as `dtype` (rounding / truncating as a cast would).
fn enc(dtype: DType, vals: &[f64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vals.len() * dtype.size());
    for &v in vals {
        match dtype {
            DType::F32 => out.extend((v as f32).to_le_bytes()),
            DType::F16 => out.extend(f16::from_f64(v).to_le_bytes()),
            DType::BF16 => out.extend(bf16::from_f64(v).to_le_bytes()),
            DType::F64 => out.extend(v.to_le_bytes()),
            DType::I32 => out.extend((v as i32).to_le_bytes()),
            DType::I64 => out.extend((v as i64).to_le_bytes()),
            DType::I8 => out.extend((v as i8).to_le_bytes()),
            DType::U8 => out.push(v as u8),
            DType::Bool => out.push(u8::from(v != 0.0)),
        }
    }
    out
}

/// Decodes `dtype` bytes to f64 (exact).
fn dec(dtype: DType, bytes: &[u8]) -> Vec<f64> {
    match dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        DType::F16 => bytes
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes(c.try_into().unwrap()).to_f64())
            .collect(),
        DType::BF16 => bytes
            .chunks_exact(2)
            .map(|c| bf16::from_le_bytes(c.try_into().unwrap()).to_f64())
            .collect(),
        DType::F64 => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        DType::I32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        DType::I64 => bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        DType::I8 => bytes.iter().map(|&b| f64::from(b as i8)).collect(),
        DType::U8 => bytes.iter().map(|&b| f64::from(b)).collect(),
        DType::Bool => bytes.iter().map(|&b| f64::from(u8::from(b != 0))).collect(),
    }
}

fn t(dtype: DType, shape: &[i64], vals: &[f64]) -> T {
    let spec = spec(dtype, shape);
    assert_eq!(spec.numel(), vals.len(), "test data for {shape:?}");
    T {
        data: enc(dtype, vals),
        spec,
    }
}

impl T {
    fn vals(&self) -> Vec<f64> {
        dec(self.spec.dtype, &self.data)
    }
}

/// Deterministic pseudo-random values in `[lo, hi)`; integers for int dtypes.
fn rand_vals(n: usize, seed: u64, lo: f64, hi: f64, dtype: DType) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let v = lo + u * (hi - lo);
            if dtype.is_f32_family() || dtype == DType::F64 {
                v
            } else {
                v.floor()
            }
        })
        .collect()
}

fn rand_t(dtype: DType, shape: &[i64], seed: u64, lo: f64, hi: f64) -> T {
    let n = spec(dtype, shape).numel();
    t(dtype, shape, &rand_vals(n, seed, lo, hi, dtype))
}

fn idx_t(dtype: DType, vals: &[i64]) -> T {
    let v: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
    t(dtype, &[vals.len() as i64], &v)
}

fn attrs(list: &[(&str, AttrValue)]) -> Attrs {
    list.iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

fn no_attrs() -> Attrs {
    Attrs::new()
}

/// Infers (with values) and runs `op`; also checks that `infer` without
/// values agrees wherever it claims to know the shape.
fn exec(op: &str, ins: &[&T], attrs: &Attrs) -> Result<T, OpError> {
    let inputs: Vec<Input<'_>> = ins
        .iter()
        .map(|t| Input {
            spec: &t.spec,
            data: &t.data,
        })
        .collect();
    let specs = infer_with_values(op, &inputs, attrs)?;
    assert_eq!(specs.len(), 1);
    let out_spec = specs[0].clone();
    let plain: Vec<TensorSpec> = ins.iter().map(|t| t.spec.clone()).collect();
    let guess = infer(op, &plain, attrs)?;
    assert_eq!(guess[0].dtype, out_spec.dtype, "{op}: infer dtype");
    if guess[0].shape != [UNKNOWN_RANK] {
        assert_eq!(
            guess[0].shape.len(),
            out_spec.shape.len(),
            "{op}: infer rank"
        );
        for (g, w) in guess[0].shape.iter().zip(&out_spec.shape) {
            assert!(
                *g == UNKNOWN_DIM || g == w,
                "{op}: infer {guess:?} vs {out_spec:?}"
            );
        }
    }
    let mut data = vec![0xA5u8; out_spec.bytes()];
    {
        let mut outs = [Output {
            spec: &out_spec,
            data: &mut data,
        }];
        run(op, &inputs, attrs, &mut outs)?;
    }
    Ok(T {
        spec: out_spec,
        data,
    })
}

fn tol(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-5,
        DType::F16 => 1e-3,
        DType::BF16 => 1e-2,
        DType::F64 => 1e-12,
        _ => 0.0,
    }
}

fn assert_close(ctx: &str, out: &T, want: &[f64]) {
    let got = out.vals();
    assert_eq!(got.len(), want.len(), "{ctx}: element count");
    let dtype = out.spec.dtype;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if !(dtype.is_f32_family() || dtype == DType::F64) {
            assert_eq!(g, w, "{ctx}: element {i}");
        } else if w.is_nan() {
            assert!(g.is_nan(), "{ctx}: element {i}: got {g}, want NaN");
        } else if w.is_infinite() {
            assert_eq!(g, w, "{ctx}: element {i}");
        } else {
            let bound = tol(dtype) * w.abs().max(1.0);
            assert!(
                (g - w).abs() <= bound,
                "{ctx}: element {i}: got {g}, want {w} (tolerance {bound})"
            );
        }
    }
}

/// The value of an output rounded to its dtype (what `want` becomes on store).
fn rounded(dtype: DType, vals: &[f64]) -> Vec<f64> {
    dec(dtype, &enc(dtype, vals))
}

fn unravel(mut i: usize, shape: &[i64]) -> Vec<usize> {
    let mut idx = vec![0usize; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d] as usize;
        idx[d] = i % n;
        i /= n;
    }
    idx
}

fn ravel(idx: &[usize], shape: &[i64]) -> usize {
    idx.iter()
        .zip(shape)
        .fold(0, |acc, (&i, &d)| acc * d as usize + i)
}

/// The offset in an input of shape `shape` of output multi-index `out_idx`
/// under NumPy broadcasting.
fn bcast_offset(out_idx: &[usize], shape: &[i64]) -> usize {
    let pad = out_idx.len() - shape.len();
    let idx: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if n == 1 { 0 } else { out_idx[d + pad] })
        .collect();
    ravel(&idx, shape)
}

fn numpy_broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let da = if i + a.len() >= r {
                a[i + a.len() - r]
            } else {
                1
            };
            let db = if i + b.len() >= r {
                b[i + b.len() - r]
            } else {
                1
            };
            if da == db || db == 1 {
                Some(da)
            } else if da == 1 {
                Some(db)
            } else {
                None
            }
        })
        .collect()
}

fn expect_err(r: Result<T, OpError>) -> OpError {
    match r {
        Ok(t) => panic!("expected an error, got {:?}", t.spec),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- API

#[test]
fn op_types_lists_every_operator_sorted_and_each_one_parses() {
    let names = op_types();
    assert_eq!(names.len(), Op::ALL.len());
    let mut sorted = names.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, names);
    for (name, op) in names.iter().zip(Op::ALL) {
        assert_eq!(Op::parse(name).unwrap(), op);
        assert_eq!(op.name(), *name);
    }
}

#[test]
fn unknown_op_type_is_not_found_and_lists_the_supported_ones() {
    let x = t(DType::F32, &[1], &[1.0]);
    let e = expect_err(exec("Conv2D", &[&x], &no_attrs()));
    let OpError::NotFound(msg) = &e else {
        panic!("{e:?}")
    };
    assert!(msg.starts_with("op type Conv2D is not supported by cann-sim; supported: Abs, Add,"));
    assert!(msg.contains("MatMul") && msg.contains("ZerosLike"));
    assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
    assert!(matches!(
        infer("addn", &[], &no_attrs()),
        Err(OpError::NotFound(_))
    ));
}

#[test]
fn wrong_input_count_is_an_input_error_naming_the_expected_inputs() {
    let x = t(DType::F32, &[1], &[1.0]);
    let e = expect_err(exec("Add", &[&x], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("Add: expects 2 inputs (x1, x2), got 1".into())
    );
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let e = expect_err(exec("MatMul", &[&x, &x, &x, &x], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("MatMul: expects 2 or 3 inputs (x1, x2[, bias]), got 4".into())
    );
    let e = expect_err(exec("Relu", &[&x, &x], &no_attrs()));
    assert_eq!(e, OpError::Input("Relu: expects 1 input (x), got 2".into()));
}

#[test]
fn input_buffer_of_the_wrong_length_is_an_input_error() {
    let s = spec(DType::F32, &[2, 3]);
    let data = vec![0u8; 20];
    let inputs = [
        Input {
            spec: &s,
            data: &data,
        },
        Input {
            spec: &s,
            data: &data,
        },
    ];
    let e = infer_with_values("Add", &inputs, &no_attrs()).unwrap_err();
    assert_eq!(
        e,
        OpError::Input("Add: input x1 buffer is 20 bytes but float32 [2,3] needs 24".into())
    );
}

#[test]
fn output_spec_or_buffer_that_does_not_match_inference_is_an_output_error() {
    let x = t(DType::F32, &[2, 3], &[1.0; 6]);
    let inputs = [
        Input {
            spec: &x.spec,
            data: &x.data,
        },
        Input {
            spec: &x.spec,
            data: &x.data,
        },
    ];
    let check = |out_spec: TensorSpec, len: usize, want: &str| {
        let mut data = vec![7u8; len];
        let mut outs = [Output {
            spec: &out_spec,
            data: &mut data,
        }];
        let e = run("Add", &inputs, &no_attrs(), &mut outs).unwrap_err();
        assert_eq!(e, OpError::Output(want.into()));
        assert!(matches!(e, OpError::Output(_)), "{e:?}");
        assert!(data.iter().all(|&b| b == 7), "nothing written on error");
    };
    check(
        spec(DType::F16, &[2, 3]),
        12,
        "Add: output y is float16 [2,3] but the operator produces float32 [2,3]",
    );
    check(
        spec(DType::F32, &[3, 2]),
        24,
        "Add: output y is float32 [3,2] but the operator produces float32 [2,3]",
    );
    check(
        spec(DType::F32, &[2, 3]),
        23,
        "Add: output y buffer is 23 bytes but float32 [2,3] needs 24",
    );
    let s = spec(DType::F32, &[2, 3]);
    let (mut a, mut b) = (vec![0u8; 24], vec![0u8; 24]);
    let mut two = [
        Output {
            spec: &s,
            data: &mut a,
        },
        Output {
            spec: &s,
            data: &mut b,
        },
    ];
    assert_eq!(
        run("Add", &inputs, &no_attrs(), &mut two).unwrap_err(),
        OpError::Output("Add: expects 1 output (y), got 2".into())
    );
    assert_eq!(
        run("Add", &inputs, &no_attrs(), &mut []).unwrap_err(),
        OpError::Output("Add: expects 1 output (y), got 0".into())
    );
}

#[test]
fn negative_or_overflowing_input_shapes_are_input_errors_not_panics() {
    let e = infer(
        "Add",
        &[spec(DType::F32, &[2, -3]), spec(DType::F32, &[1])],
        &no_attrs(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        OpError::Input("Add: input x1 has shape [2,-3]: dimensions must be >= 0".into())
    );
    for shape in [
        vec![i64::MAX, 2],
        vec![1 << 40, 1 << 40],
        vec![1 << 62, 0, 1 << 62],
        vec![0, i64::MAX, i64::MAX],
    ] {
        let e = infer("Relu", &[spec(DType::F32, &shape)], &no_attrs()).unwrap_err();
        assert_eq!(
            e,
            OpError::Input(format!(
                "Relu: input x has shape {}: its size overflows",
                fmt_shape(&shape)
            ))
        );
        let e = infer(
            "MatMul",
            &[spec(DType::F32, &[2, 3]), spec(DType::F32, &shape)],
            &no_attrs(),
        )
        .unwrap_err();
        assert!(matches!(e, OpError::Input(_)), "{e:?}");
    }
    // Inputs that fit but whose broadcast output does not.
    let e = infer(
        "Add",
        &[
            spec(DType::F32, &[1 << 31, 1]),
            spec(DType::F32, &[1 << 31]),
        ],
        &no_attrs(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        OpError::Input("Add: the output shape [2147483648,2147483648] is too large".into())
    );
    let e = infer(
        "BatchMatMul",
        &[
            spec(DType::F32, &[1 << 40, 1, 0]),
            spec(DType::F32, &[1, 0, 1 << 30]),
        ],
        &no_attrs(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, OpError::Input(m) if m.ends_with("is too large")),
        "{e:?}"
    );
}

#[test]
fn ill_typed_or_missing_attributes_are_attr_errors() {
    let x = t(DType::F32, &[2, 2], &[1.0; 4]);
    let ax = idx_t(DType::I32, &[0]);
    let e = expect_err(exec(
        "ReduceSum",
        &[&x, &ax],
        &attrs(&[("keep_dims", AttrValue::Int(1))]),
    ));
    assert_eq!(
        e,
        OpError::Attr("ReduceSum: attribute keep_dims must be a bool, got Int(1)".into())
    );
    assert!(matches!(e, OpError::Attr(_)), "{e:?}");
    let e = expect_err(exec(
        "MatMul",
        &[&x, &x],
        &attrs(&[("transpose_x1", AttrValue::String("yes".into()))]),
    ));
    assert!(matches!(&e, OpError::Attr(m) if m.contains("transpose_x1 must be a bool")));
    let e = expect_err(exec("Cast", &[&x], &no_attrs()));
    assert_eq!(
        e,
        OpError::Attr("Cast: required attribute dst_type is missing".into())
    );
    let e = expect_err(exec(
        "SoftmaxV2",
        &[&x],
        &attrs(&[("axes", AttrValue::Int(-1))]),
    ));
    assert!(matches!(&e, OpError::Attr(m) if m.contains("axes must be a list of ints")));
    let e = expect_err(exec("Exp", &[&x], &attrs(&[("scale", AttrValue::Int(2))])));
    assert!(matches!(&e, OpError::Attr(m) if m.contains("scale must be a float")));
}

// ---------------------------------------------------------------- binary

const BINARY: [&str; 7] = [
    "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "ReluGrad",
];

fn binary_ref(op: &str, x: f64, y: f64, int: bool) -> f64 {
    match op {
        "Add" => x + y,
        "Sub" => x - y,
        "Mul" => x * y,
        "RealDiv" if int => (x / y).trunc(),
        "RealDiv" => x / y,
        "Maximum" => x.max(y),
        "Minimum" => x.min(y),
        "ReluGrad" => {
            if y > 0.0 {
                x
            } else {
                0.0
            }
        }
        _ => unreachable!(),
    }
}

/// Runs `op` on `a`, `b` and checks against the broadcasting reference.
fn check_binary(op: &str, a: &T, b: &T) {
    let out = exec(op, &[a, b], &no_attrs()).unwrap();
    let shape = numpy_broadcast(&a.spec.shape, &b.spec.shape).unwrap();
    assert_eq!(out.spec.shape, shape, "{op} shape");
    let (av, bv) = (a.vals(), b.vals());
    let int = !out.spec.dtype.is_f32_family();
    let want: Vec<f64> = (0..numel(&shape))
        .map(|i| {
            let idx = unravel(i, &shape);
            binary_ref(
                op,
                av[bcast_offset(&idx, &a.spec.shape)],
                bv[bcast_offset(&idx, &b.spec.shape)],
                int,
            )
        })
        .collect();
    let ctx = format!(
        "{op} {} {:?} with {} {:?}",
        a.spec.dtype.name(),
        a.spec.shape,
        b.spec.dtype.name(),
        b.spec.shape
    );
    assert_close(&ctx, &out, &want);
}

const BROADCAST_CASES: &[(&[i64], &[i64])] = &[
    (&[2, 3], &[2, 3]),
    (&[2, 1, 3], &[4, 3]),
    (&[4, 3], &[2, 1, 3]),
    (&[], &[2, 3]),
    (&[2, 3], &[]),
    (&[], &[]),
    (&[3], &[2, 3]),
    (&[4, 1], &[1, 5]),
    (&[1], &[3, 1, 2]),
    (&[2, 1, 4, 1], &[3, 1, 5]),
    (&[0, 3], &[1, 3]),
    (&[0], &[]),
    (&[2, 0, 3], &[2, 1, 3]),
];

#[test]
fn binary_ops_match_the_reference_for_every_dtype_and_broadcasting_case() {
    let mut seed = 1;
    for op in BINARY {
        for dtype in NUMERIC {
            for (sa, sb) in BROADCAST_CASES {
                seed += 1;
                let a = rand_t(dtype, sa, seed, -20.0, 20.0);
                let mut b = rand_t(dtype, sb, seed + 1000, -20.0, 20.0);
                if op == "RealDiv" {
                    // Keep divisors away from zero.
                    let v: Vec<f64> = b
                        .vals()
                        .iter()
                        .map(|&v| {
                            if v.abs() < 1.0 {
                                v.signum() * 1.0 + 2.0
                            } else {
                                v
                            }
                        })
                        .collect();
                    b = t(dtype, sb, &v);
                }
                check_binary(op, &a, &b);
            }
        }
    }
}

#[test]
fn add_and_mul_promote_mixed_dtypes_as_cann_does() {
    let cases = [
        (DType::F16, DType::F32, DType::F32),
        (DType::F16, DType::BF16, DType::F32),
        (DType::BF16, DType::F32, DType::F32),
        (DType::I32, DType::F16, DType::F16),
        (DType::BF16, DType::I64, DType::BF16),
        (DType::I32, DType::I64, DType::I64),
    ];
    for op in ["Add", "Mul"] {
        for (da, db, want) in cases {
            let a = rand_t(da, &[2, 3], 5, -8.0, 8.0);
            let b = rand_t(db, &[3], 6, -8.0, 8.0);
            let out = exec(op, &[&a, &b], &no_attrs()).unwrap();
            assert_eq!(out.spec.dtype, want, "{op} {da:?} {db:?}");
            check_binary(op, &a, &b);
        }
    }
}

#[test]
fn binary_ops_other_than_add_and_mul_reject_mixed_dtypes() {
    let a = rand_t(DType::F32, &[2], 1, -1.0, 1.0);
    let b = rand_t(DType::F16, &[2], 2, -1.0, 1.0);
    for op in ["Sub", "RealDiv", "Maximum", "Minimum"] {
        let e = expect_err(exec(op, &[&a, &b], &no_attrs()));
        assert_eq!(
            e,
            OpError::Input(format!(
                "{op}: x1 is float32 and x2 is float16: the dtypes must be equal"
            ))
        );
    }
    let e = expect_err(exec("ReluGrad", &[&a, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "ReluGrad: gradients is float32 and features is float16: the dtypes must be equal"
                .into()
        )
    );
}

#[test]
fn shapes_that_do_not_broadcast_are_an_input_error_naming_both_shapes() {
    let a = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[4, 3], 2, -1.0, 1.0);
    let e = expect_err(exec("Add", &[&a, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "Add: x1 is [2,3] and x2 is [4,3]: dimension 0 of the broadcast shape \
             (sizes 2 and 4) cannot be broadcast"
                .into()
        )
    );
    let c = rand_t(DType::F32, &[5, 2], 2, -1.0, 1.0);
    let e = expect_err(exec("Mul", &[&a, &c], &no_attrs()));
    assert!(matches!(&e, OpError::Input(m) if m.contains("x1 is [2,3] and x2 is [5,2]")));
}

#[test]
fn binary_ops_reject_unsupported_dtypes_with_a_dtype_error() {
    let a = t(DType::U8, &[2], &[1.0, 2.0]);
    let e = expect_err(exec("Add", &[&a, &a], &no_attrs()));
    assert_eq!(
        e,
        OpError::DType(
            "Add: input x1 has dtype uint8, which the operator does not support \
             (supported: float32, float16, bfloat16, int32, int64)"
                .into()
        )
    );
    assert!(matches!(e, OpError::DType(_)), "{e:?}");
}

#[test]
fn int32_arithmetic_wraps_like_the_device() {
    let a = t(DType::I32, &[2], &[i32::MAX as f64, i32::MIN as f64]);
    let one = t(DType::I32, &[], &[1.0]);
    let out = exec("Add", &[&a, &one], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [i32::MIN as f64, (i32::MIN + 1) as f64]);
    let out = exec("Sub", &[&a, &one], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [(i32::MAX - 1) as f64, i32::MAX as f64]);
    let two = t(DType::I32, &[], &[2.0]);
    let out = exec("Mul", &[&a, &two], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [-2.0, 0.0]);
}

#[test]
fn integer_real_div_truncates_toward_zero_and_division_by_zero_gives_zero() {
    let a = t(DType::I64, &[4], &[7.0, -7.0, 5.0, 3.0]);
    let b = t(DType::I64, &[4], &[2.0, 2.0, 0.0, -2.0]);
    let out = exec("RealDiv", &[&a, &b], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [3.0, -3.0, 0.0, -1.0]);
}

#[test]
fn float_division_by_zero_gives_ieee_infinities_and_nan() {
    let a = t(DType::F32, &[3], &[1.0, -1.0, 0.0]);
    let z = t(DType::F32, &[], &[0.0]);
    let out = exec("RealDiv", &[&a, &z], &no_attrs()).unwrap();
    assert_close("1/0", &out, &[f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
}

#[test]
fn maximum_and_minimum_propagate_nan() {
    let a = t(DType::F32, &[2], &[f64::NAN, 1.0]);
    let b = t(DType::F32, &[2], &[1.0, f64::NAN]);
    for op in ["Maximum", "Minimum"] {
        let out = exec(op, &[&a, &b], &no_attrs()).unwrap();
        assert!(out.vals().iter().all(|v| v.is_nan()), "{op}");
    }
}

#[test]
fn relu_grad_passes_gradients_where_features_are_positive_with_broadcasting() {
    let g = t(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let f = t(DType::F32, &[3], &[-1.0, 0.0, 0.5]);
    let out = exec("ReluGrad", &[&g, &f], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [0.0, 0.0, 3.0, 0.0, 0.0, 6.0]);
    assert_eq!(
        infer("ReluGrad", &[g.spec.clone(), f.spec.clone()], &no_attrs()).unwrap()[0].shape,
        [2, 3]
    );
}

fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(0i64..4, 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// For random shape pairs, Add infers NumPy's broadcast shape (or fails
    /// exactly when NumPy would) and computes the reference values.
    #[test]
    fn prop_add_broadcasting_follows_numpy(
        sa in shape_strategy(),
        sb in shape_strategy(),
        ones_a in prop::collection::vec(any::<bool>(), 5),
        ones_b in prop::collection::vec(any::<bool>(), 5),
        seed in 0u64..1000,
    ) {
        // Make the shapes compatible often: replace some dims by 1, and
        // copy b's trailing dims into a.
        let mut sa = sa;
        let mut sb = sb;
        for (d, &o) in sa.iter_mut().zip(&ones_a) { if o { *d = 1; } }
        for (d, &o) in sb.iter_mut().zip(&ones_b) { if o { *d = 1; } }
        if seed % 2 == 0 {
            let n = sa.len().min(sb.len());
            for i in 0..n {
                let (ia, ib) = (sa.len() - 1 - i, sb.len() - 1 - i);
                if sa[ia] != 1 && sb[ib] != 1 { sa[ia] = sb[ib]; }
            }
        }
        let a = rand_t(DType::F32, &sa, seed, -5.0, 5.0);
        let b = rand_t(DType::F32, &sb, seed + 1, -5.0, 5.0);
        match numpy_broadcast(&sa, &sb) {
            Some(_) => check_binary("Add", &a, &b),
            None => {
                let e = expect_err(exec("Add", &[&a, &b], &no_attrs()));
                prop_assert!(matches!(e, OpError::Input(_)));
            }
        }
    }
}

// ---------------------------------------------------------------- unary

fn unary_ref(op: &str, x: f64) -> f64 {
    match op {
        "Neg" => -x,
        "Abs" => x.abs(),
        "Exp" => x.exp(),
        "Log" => x.ln(),
        "Sqrt" => x.sqrt(),
        "Rsqrt" => 1.0 / x.sqrt(),
        "Relu" => x.max(0.0),
        "Sigmoid" => 1.0 / (1.0 + (-x).exp()),
        "Tanh" => x.tanh(),
        "Gelu" => {
            0.5 * x
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
        }
        _ => unreachable!(),
    }
}

const UNARY: [&str; 10] = [
    "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Relu", "Sigmoid", "Tanh", "Gelu",
];

#[test]
fn unary_ops_match_the_reference_for_every_float_dtype_including_scalars_and_empty() {
    for (k, op) in UNARY.into_iter().enumerate() {
        let positive = matches!(op, "Log" | "Sqrt" | "Rsqrt");
        let (lo, hi) = if positive { (0.05, 6.0) } else { (-4.0, 4.0) };
        for dtype in FLOATS {
            for shape in [&[2, 3][..], &[], &[0, 4], &[7]] {
                let x = rand_t(dtype, shape, k as u64 * 31 + 7, lo, hi);
                let out = exec(op, &[&x], &no_attrs()).unwrap();
                assert_eq!(out.spec, x.spec);
                let want: Vec<f64> = x.vals().iter().map(|&v| unary_ref(op, v)).collect();
                assert_close(&format!("{op} {dtype:?} {shape:?}"), &out, &want);
            }
        }
    }
}

#[test]
fn neg_abs_relu_work_on_int32_and_int64() {
    for dtype in [DType::I32, DType::I64] {
        let x = t(dtype, &[4], &[-3.0, 0.0, 5.0, -1.0]);
        let get = |op| exec(op, &[&x], &no_attrs()).unwrap().vals();
        assert_eq!(get("Neg"), [3.0, 0.0, -5.0, 1.0]);
        assert_eq!(get("Abs"), [3.0, 0.0, 5.0, 1.0]);
        assert_eq!(get("Relu"), [0.0, 0.0, 5.0, 0.0]);
    }
    let min = t(DType::I32, &[1], &[i32::MIN as f64]);
    let out = exec("Neg", &[&min], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [i32::MIN as f64], "wraps");
}

#[test]
fn transcendental_ops_reject_integer_dtypes_with_a_dtype_error() {
    let x = t(DType::I32, &[2], &[1.0, 2.0]);
    for op in ["Exp", "Log", "Sqrt", "Rsqrt", "Sigmoid", "Tanh", "Gelu"] {
        let e = expect_err(exec(op, &[&x], &no_attrs()));
        assert_eq!(
            e,
            OpError::DType(format!(
                "{op}: input x has dtype int32, which the operator does not support \
                 (supported: float32, float16, bfloat16)"
            ))
        );
    }
    let x = t(DType::Bool, &[1], &[1.0]);
    assert!(matches!(
        expect_err(exec("Relu", &[&x], &no_attrs())),
        OpError::DType(_)
    ));
}

#[test]
fn exp_and_log_honour_the_base_scale_and_shift_attributes() {
    let x = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let a = attrs(&[
        ("base", AttrValue::Float(2.0)),
        ("scale", AttrValue::Float(2.0)),
        ("shift", AttrValue::Float(1.0)),
    ]);
    let out = exec("Exp", &[&x], &a).unwrap();
    assert_close("2^(2x+1)", &out, &[8.0, 32.0, 128.0]);
    let out = exec("Log", &[&x], &a).unwrap();
    let want: Vec<f64> = [1.0f64, 2.0, 3.0]
        .iter()
        .map(|v| (2.0 * v + 1.0).log2())
        .collect();
    assert_close("log2(2x+1)", &out, &want);
    let e = expect_err(exec(
        "Exp",
        &[&x],
        &attrs(&[("base", AttrValue::Float(-2.0))]),
    ));
    assert_eq!(
        e,
        OpError::Attr("Exp: attribute base is -2: it must be -1 (e) or > 0".into())
    );
    let e = expect_err(exec(
        "Log",
        &[&x],
        &attrs(&[("base", AttrValue::Float(1.0))]),
    ));
    assert_eq!(
        e,
        OpError::Attr("Log: attribute base is 1: it must be -1 (e) or > 0 and not 1".into())
    );
}

// ---------------------------------------------------------------- cast

#[test]
fn cast_converts_between_every_pair_of_dtypes() {
    let float_vals = [0.0, 1.0, 2.5, -3.75, 100.0, -0.5];
    let int_vals = [0.0, 1.0, -3.0, 100.0, 7.0, -128.0];
    for src in ALL_DTYPES {
        let vals: &[f64] = match src {
            DType::U8 => &[0.0, 1.0, 3.0, 100.0, 7.0, 255.0],
            DType::Bool => &[0.0, 1.0, 1.0, 0.0, 1.0, 0.0],
            d if d.is_f32_family() || d == DType::F64 => &float_vals,
            _ => &int_vals,
        };
        let x = t(src, &[2, 3], vals);
        let xv = x.vals();
        for dst in ALL_DTYPES {
            let a = attrs(&[("dst_type", AttrValue::Int(i64::from(dst.to_acl())))]);
            let out = exec("Cast", &[&x], &a).unwrap();
            assert_eq!(out.spec, spec(dst, &[2, 3]));
            let float_src = src.is_f32_family() || src == DType::F64;
            // Reference: floats saturate-truncate to integers, integers wrap.
            let want: Vec<u8> = xv
                .iter()
                .flat_map(|&v| match dst {
                    DType::I32 if !float_src => ((v as i64) as i32).to_le_bytes().to_vec(),
                    DType::I8 if !float_src => vec![(v as i64) as i8 as u8],
                    DType::U8 if !float_src => vec![(v as i64) as u8],
                    _ => enc(dst, &[v]),
                })
                .collect();
            assert_eq!(out.data, want, "Cast {src:?} -> {dst:?}");
        }
    }
}

#[test]
fn cast_float_to_int_truncates_toward_zero_and_saturates() {
    let x = t(DType::F32, &[5], &[2.9, -2.9, 1e10, -1e10, f64::NAN]);
    let a = attrs(&[("dst_type", AttrValue::DataType(3))]);
    let out = exec("Cast", &[&x], &a).unwrap();
    assert_eq!(
        out.vals(),
        [2.0, -2.0, i32::MAX as f64, i32::MIN as f64, 0.0]
    );
    let out = exec("Cast", &[&x], &attrs(&[("dst_type", AttrValue::Int(1))])).unwrap();
    assert_eq!(out.spec.dtype, DType::F16);
    let v = out.vals();
    assert_eq!(v[2], f64::INFINITY);
    assert!(v[4].is_nan());
}

#[test]
fn cast_to_an_unsupported_dst_type_is_a_dtype_error() {
    let x = t(DType::F32, &[1], &[1.0]);
    for dst in [16, -1, 1 << 40] {
        let e = expect_err(exec(
            "Cast",
            &[&x],
            &attrs(&[("dst_type", AttrValue::Int(dst))]),
        ));
        let OpError::DType(m) = &e else {
            panic!("{e:?}")
        };
        assert!(
            m.starts_with(&format!(
                "Cast: dst_type {dst} is not a data type cann-sim supports"
            )),
            "{m}"
        );
        assert!(m.contains("bfloat16 (27)"));
    }
}

// ---------------------------------------------------------------- matmul

/// Reference `op(a) @ op(b) (+ bias)` for stored shapes, batch-broadcast.
fn matmul_ref(a: &T, b: &T, bias: Option<&T>, ta: bool, tb: bool) -> (Vec<i64>, Vec<f64>) {
    let (sa, sb) = (&a.spec.shape, &b.spec.shape);
    let (ra, rb) = (sa.len(), sb.len());
    let (m, k) = if ta {
        (sa[ra - 1], sa[ra - 2])
    } else {
        (sa[ra - 2], sa[ra - 1])
    };
    let n = if tb { sb[rb - 2] } else { sb[rb - 1] };
    let batch = numpy_broadcast(&sa[..ra - 2], &sb[..rb - 2]).unwrap();
    let (av, bv) = (a.vals(), b.vals());
    let biasv = bias.map(T::vals);
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let mut out = Vec::new();
    for bi in 0..numel(&batch) {
        let idx = unravel(bi, &batch);
        let oa = bcast_offset(&idx, &sa[..ra - 2]) * m * k;
        let ob = bcast_offset(&idx, &sb[..rb - 2]) * k * n;
        for i in 0..m {
            for j in 0..n {
                let mut s = biasv.as_ref().map_or(0.0, |v| v[j]);
                for p in 0..k {
                    let x = if ta {
                        av[oa + p * m + i]
                    } else {
                        av[oa + i * k + p]
                    };
                    let y = if tb {
                        bv[ob + j * k + p]
                    } else {
                        bv[ob + p * n + j]
                    };
                    s += x * y;
                }
                out.push(s);
            }
        }
    }
    let mut shape = batch;
    shape.extend([m as i64, n as i64]);
    (shape, out)
}

fn stored(rows: i64, cols: i64, transposed: bool) -> [i64; 2] {
    if transposed {
        [cols, rows]
    } else {
        [rows, cols]
    }
}

#[test]
fn matmul_matches_the_reference_for_every_dtype_transpose_and_bias() {
    let mut seed = 100;
    for dtype in [DType::F32, DType::F16, DType::BF16, DType::I32] {
        for (m, k, n) in [(2, 3, 4), (1, 1, 1), (5, 17, 19), (33, 70, 21), (4, 300, 3)] {
            for (t1, t2) in [(false, false), (true, false), (false, true), (true, true)] {
                for with_bias in [false, true] {
                    seed += 1;
                    let (lo, hi) = if dtype == DType::I32 {
                        (-9.0, 9.0)
                    } else {
                        (-1.0, 1.0)
                    };
                    let a = rand_t(dtype, &stored(m, k, t1), seed, lo, hi);
                    let b = rand_t(dtype, &stored(k, n, t2), seed + 7, lo, hi);
                    let bias = rand_t(dtype, &[n], seed + 9, lo, hi);
                    let at = attrs(&[
                        ("transpose_x1", AttrValue::Bool(t1)),
                        ("transpose_x2", AttrValue::Bool(t2)),
                    ]);
                    let ins: Vec<&T> = if with_bias {
                        vec![&a, &b, &bias]
                    } else {
                        vec![&a, &b]
                    };
                    let out = exec("MatMul", &ins, &at).unwrap();
                    let (shape, want) = matmul_ref(&a, &b, with_bias.then_some(&bias), t1, t2);
                    assert_eq!(out.spec, spec(dtype, &shape));
                    assert_close(
                        &format!("MatMul {dtype:?} {m}x{k}x{n} t=({t1},{t2}) bias={with_bias}"),
                        &out,
                        &want,
                    );
                }
            }
        }
    }
}

/// Sizes past the GEMM kernel's blocking (k beyond one packed block, m and
/// n beyond one register tile, and the matrix-vector shapes) with every
/// transpose: the operands' strides reach the kernel right.
#[test]
fn matmul_on_the_blocked_and_vector_paths_matches_the_reference_for_every_transpose() {
    let mut seed = 500;
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        for (m, k, n) in [(41, 700, 37), (1, 600, 130), (130, 520, 1)] {
            for (t1, t2) in [(false, false), (true, false), (false, true), (true, true)] {
                seed += 1;
                let a = rand_t(dtype, &stored(m, k, t1), seed, -1.0, 1.0);
                let b = rand_t(dtype, &stored(k, n, t2), seed + 7, -1.0, 1.0);
                let bias = rand_t(dtype, &[n], seed + 9, -1.0, 1.0);
                let at = attrs(&[
                    ("transpose_x1", AttrValue::Bool(t1)),
                    ("transpose_x2", AttrValue::Bool(t2)),
                ]);
                let out = exec("MatMul", &[&a, &b, &bias], &at).unwrap();
                let (shape, want) = matmul_ref(&a, &b, Some(&bias), t1, t2);
                assert_eq!(out.spec, spec(dtype, &shape));
                // The output's rounding plus f32 accumulation over k terms
                // (a wrong stride gives errors of order 1).
                for (i, (g, w)) in out.vals().iter().zip(&want).enumerate() {
                    let bound = tol(dtype) * w.abs().max(1.0) + 1e-7 * k as f64;
                    assert!(
                        (g - w).abs() <= bound,
                        "MatMul {dtype:?} {m}x{k}x{n} t=({t1},{t2}): element {i}: {g} vs {w}"
                    );
                }
            }
        }
    }
}

/// f32 operands and outputs are used in place when aligned for f32 and
/// copied otherwise: the same product either way, at every byte offset.
#[test]
fn f32_matmul_gives_the_same_product_for_buffers_at_any_byte_offset() {
    let a = rand_t(DType::F32, &[5, 7], 31, -1.0, 1.0);
    let b = rand_t(DType::F32, &[7, 3], 32, -1.0, 1.0);
    let bias = rand_t(DType::F32, &[3], 33, -1.0, 1.0);
    let want = exec("MatMul", &[&a, &b, &bias], &no_attrs()).unwrap();
    let out_spec = spec(DType::F32, &[5, 3]);
    /// A buffer with room for `len` bytes that start `offset` bytes past a
    /// 4-byte boundary.
    fn at_offset(len: usize, offset: usize) -> (Vec<u8>, std::ops::Range<usize>) {
        let buf = vec![0u8; len + 8];
        let start = buf.as_ptr().align_offset(4) + offset;
        (buf, start..start + len)
    }
    for offset in 0..4 {
        let place = |t: &T| {
            let (mut buf, range) = at_offset(t.data.len(), offset);
            buf[range.clone()].copy_from_slice(&t.data);
            (buf, range)
        };
        let ((ba, ra), (bb, rb), (bc, rc)) = (place(&a), place(&b), place(&bias));
        let inputs = [
            Input {
                spec: &a.spec,
                data: &ba[ra],
            },
            Input {
                spec: &b.spec,
                data: &bb[rb],
            },
            Input {
                spec: &bias.spec,
                data: &bc[rc],
            },
        ];
        let (mut out, range) = at_offset(out_spec.bytes(), offset);
        let mut outs = [Output {
            spec: &out_spec,
            data: &mut out[range.clone()],
        }];
        run("MatMul", &inputs, &no_attrs(), &mut outs).unwrap();
        assert_eq!(out[range], want.data[..], "byte offset {offset}");
    }
}

/// f16 and bf16 products accumulate in f32 and round once: 4096 products of
/// 1 sum to 4096, where an accumulator of the element type would stop at
/// 2048 (f16) or 256 (bf16).
#[test]
fn half_precision_matmul_accumulates_in_f32_and_rounds_once() {
    for dtype in [DType::F16, DType::BF16] {
        let a = t(dtype, &[2, 4096], &[1.0; 2 * 4096]);
        let b = t(dtype, &[4096, 3], &[1.0; 4096 * 3]);
        let out = exec("MatMul", &[&a, &b], &no_attrs()).unwrap();
        assert_eq!(out.vals(), vec![4096.0; 6], "{dtype:?}");
    }
}

#[test]
fn matmul_with_an_inner_dimension_mismatch_is_an_input_error_naming_the_shapes() {
    let a = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[4, 5], 2, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&a, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "MatMul: x1 is [2,3] and x2 is [4,5]: inner dimensions 3 and 4 differ".into()
        )
    );
    let e = expect_err(exec(
        "MatMul",
        &[&a, &b],
        &attrs(&[("transpose_x2", AttrValue::Bool(true))]),
    ));
    assert_eq!(
        e,
        OpError::Input(
            "MatMul: x1 is [2,3] and x2 is [4,5] (transpose_x2=true): inner dimensions 3 and 5 differ"
                .into()
        )
    );
}

#[test]
fn matmul_rejects_bad_ranks_bias_and_dtypes() {
    let a = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[3, 4], 2, -1.0, 1.0);
    let a3 = rand_t(DType::F32, &[1, 2, 3], 1, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&a3, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("MatMul: x1 has shape [1,2,3]: it must be 2-D".into())
    );
    let bad_bias = rand_t(DType::F32, &[3], 2, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&a, &b, &bad_bias], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "MatMul: bias has shape [3]: it must be [4] (the columns of the output)".into()
        )
    );
    let f16_bias = rand_t(DType::F16, &[4], 2, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&a, &b, &f16_bias], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "MatMul: bias is float16 but x1 is float32: the dtypes must be equal".into()
        )
    );
    let b16 = rand_t(DType::F16, &[3, 4], 2, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&a, &b16], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("MatMul: x1 is float32 and x2 is float16: the dtypes must be equal".into())
    );
    let i64a = rand_t(DType::I64, &[2, 3], 1, -1.0, 1.0);
    let e = expect_err(exec("MatMul", &[&i64a, &i64a], &no_attrs()));
    assert!(matches!(&e, OpError::DType(m) if m.starts_with("MatMul: input x1 has dtype int64")));
    let v = rand_t(DType::F32, &[3], 1, -1.0, 1.0);
    let e = expect_err(exec("BatchMatMul", &[&v, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("BatchMatMul: x1 has shape [3]: it must be at least 2-D".into())
    );
}

#[test]
fn matmul_with_zero_sized_dimensions_gives_the_bias_or_nothing() {
    let a = t(DType::F32, &[2, 0], &[]);
    let b = t(DType::F32, &[0, 3], &[]);
    let bias = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let out = exec("MatMul", &[&a, &b, &bias], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let out = exec("MatMul", &[&a, &b], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [0.0; 6]);
    let a = t(DType::F32, &[0, 4], &[]);
    let b = rand_t(DType::F32, &[4, 3], 1, -1.0, 1.0);
    let out = exec("MatMul", &[&a, &b], &no_attrs()).unwrap();
    assert_eq!(out.spec.shape, [0, 3]);
}

#[test]
fn batch_matmul_broadcasts_batch_dimensions_and_honours_adj_attributes() {
    let cases: &[(&[i64], &[i64])] = &[
        (&[2, 1, 3, 4], &[3, 4, 5]),
        (&[3, 4], &[2, 4, 5]),
        (&[2, 3, 4], &[4, 5]),
        (&[1, 3, 4], &[6, 4, 2]),
        (&[0, 3, 4], &[1, 4, 2]),
        (&[2, 3, 0], &[2, 0, 5]),
    ];
    let mut seed = 900;
    for dtype in [DType::F32, DType::F16, DType::BF16, DType::I32] {
        for (sa, sb) in cases {
            for (t1, t2) in [(false, false), (true, false), (false, true), (true, true)] {
                seed += 1;
                let swap = |s: &[i64], tr: bool| {
                    let mut s = s.to_vec();
                    let r = s.len();
                    if tr {
                        s.swap(r - 1, r - 2);
                    }
                    s
                };
                let (lo, hi) = if dtype == DType::I32 {
                    (-9.0, 9.0)
                } else {
                    (-1.0, 1.0)
                };
                let a = rand_t(dtype, &swap(sa, t1), seed, lo, hi);
                let b = rand_t(dtype, &swap(sb, t2), seed + 1, lo, hi);
                let at = attrs(&[
                    ("adj_x1", AttrValue::Bool(t1)),
                    ("adj_x2", AttrValue::Bool(t2)),
                ]);
                let out = exec("BatchMatMul", &[&a, &b], &at).unwrap();
                let (shape, want) = matmul_ref(&a, &b, None, t1, t2);
                assert_eq!(out.spec, spec(dtype, &shape));
                assert_close(
                    &format!("BatchMatMul {dtype:?} {sa:?} {sb:?} ({t1},{t2})"),
                    &out,
                    &want,
                );
            }
        }
    }
}

#[test]
fn batch_matmul_with_incompatible_batch_dimensions_is_an_input_error() {
    let a = rand_t(DType::F32, &[2, 3, 4], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[3, 4, 5], 2, -1.0, 1.0);
    let e = expect_err(exec("BatchMatMul", &[&a, &b], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "BatchMatMul: the batch dimensions of x1 is [2] and those of x2 is [3]: \
             dimension 0 of the broadcast shape (sizes 2 and 3) cannot be broadcast"
                .into()
        )
    );
}

/// Release-mode throughput of the f32 GEMM: 512x512x512 on one core.
/// `cargo test -p cann-sim --release ops::tests::matmul_f32_512_throughput -- --ignored --nocapture`
#[test]
#[ignore = "benchmark: run in release mode with --ignored --nocapture"]
fn matmul_f32_512_throughput() {
    let n = 512i64;
    let a = rand_t(DType::F32, &[n, n], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[n, n], 2, -1.0, 1.0);
    let inputs = [
        Input {
            spec: &a.spec,
            data: &a.data,
        },
        Input {
            spec: &b.spec,
            data: &b.data,
        },
    ];
    let out_spec = spec(DType::F32, &[n, n]);
    let mut data = vec![0u8; out_spec.bytes()];
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        let mut outs = [Output {
            spec: &out_spec,
            data: &mut data,
        }];
        run("MatMul", &inputs, &no_attrs(), &mut outs).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
    }
    let gflops = 2.0 * (n as f64).powi(3) / best / 1e9;
    println!(
        "MatMul f32 512x512x512: {:.2} ms, {gflops:.2} GFLOP/s",
        best * 1e3
    );
    // f32 accumulation over K = 512: allow K * eps-sized differences.
    let out = T {
        spec: out_spec,
        data,
    }
    .vals();
    let (_, want) = matmul_ref(&a, &b, None, false, false);
    for (g, w) in out.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} vs {w}");
    }
}

/// Release-mode throughput of an element-wise op on 1M float32.
#[test]
#[ignore = "benchmark: run in release mode with --ignored --nocapture"]
fn elementwise_f32_1m_throughput() {
    let n = 1 << 20;
    let a = rand_t(DType::F32, &[n], 1, -1.0, 1.0);
    let b = rand_t(DType::F32, &[n], 2, -1.0, 1.0);
    let inputs = [
        Input {
            spec: &a.spec,
            data: &a.data,
        },
        Input {
            spec: &b.spec,
            data: &b.data,
        },
    ];
    let out_spec = spec(DType::F32, &[n]);
    let mut data = vec![0u8; out_spec.bytes()];
    for op in ["Add", "Mul"] {
        let mut best = f64::MAX;
        for _ in 0..20 {
            let start = std::time::Instant::now();
            let mut outs = [Output {
                spec: &out_spec,
                data: &mut data,
            }];
            run(op, &inputs, &no_attrs(), &mut outs).unwrap();
            best = best.min(start.elapsed().as_secs_f64());
        }
        let gbs = 3.0 * 4.0 * n as f64 / best / 1e9;
        println!(
            "{op} f32 1M: {:.3} ms, {gbs:.2} GB/s (2 reads + 1 write)",
            best * 1e3
        );
    }
    let x = [Input {
        spec: &a.spec,
        data: &a.data,
    }];
    let mut best = f64::MAX;
    for _ in 0..20 {
        let start = std::time::Instant::now();
        let mut outs = [Output {
            spec: &out_spec,
            data: &mut data,
        }];
        run("Relu", &x, &no_attrs(), &mut outs).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "Relu f32 1M: {:.3} ms, {:.2} GB/s",
        best * 1e3,
        8.0 * n as f64 / best / 1e9
    );
}

// ---------------------------------------------------------------- reduce

fn reduce_ref(op: &str, x: &T, mask: &[bool], keep: bool) -> (Vec<i64>, Vec<f64>) {
    let shape = &x.spec.shape;
    let out_shape: Vec<i64> = shape
        .iter()
        .zip(mask)
        .filter_map(|(&d, &r)| if r { keep.then_some(1) } else { Some(d) })
        .collect();
    let kept_shape: Vec<i64> = shape
        .iter()
        .zip(mask)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let n_out = numel(&out_shape);
    let int = !x.spec.dtype.is_f32_family();
    let mut acc = vec![
        if op == "ReduceMax" {
            f64::NEG_INFINITY
        } else {
            0.0
        };
        n_out
    ];
    let xv = x.vals();
    for (i, &v) in xv.iter().enumerate() {
        let idx = unravel(i, shape);
        let o = bcast_offset(&idx, &kept_shape);
        acc[o] = if op == "ReduceMax" {
            acc[o].max(v)
        } else {
            acc[o] + v
        };
    }
    let count: usize = shape
        .iter()
        .zip(mask)
        .filter(|p| *p.1)
        .map(|(&d, _)| d as usize)
        .product();
    if op == "ReduceMean" {
        for a in &mut acc {
            *a = if int {
                if count == 0 {
                    0.0
                } else {
                    (*a / count as f64).trunc()
                }
            } else {
                *a / count as f64
            };
        }
    }
    if op == "ReduceMax" && int {
        let low = if x.spec.dtype == DType::I32 {
            i32::MIN as f64
        } else {
            i64::MIN as f64
        };
        for a in &mut acc {
            if a.is_infinite() {
                *a = low;
            }
        }
    }
    (out_shape, acc)
}

#[test]
fn reductions_match_the_reference_for_axes_negative_axes_keep_dims_and_dtypes() {
    let axes_cases: &[&[i64]] = &[&[1], &[-1], &[0, 2], &[-3, 1], &[0, 1, 2], &[2, -1], &[-2]];
    let mut seed = 3000;
    for op in ["ReduceSum", "ReduceMean", "ReduceMax"] {
        for dtype in NUMERIC {
            for shape in [&[2, 3, 4][..], &[3, 1, 5], &[2, 0, 3]] {
                for axes in axes_cases {
                    for keep in [false, true] {
                        for axes_dtype in [DType::I32, DType::I64] {
                            seed += 1;
                            let x = rand_t(dtype, shape, seed, -10.0, 10.0);
                            let ax = idx_t(axes_dtype, axes);
                            let a = attrs(&[("keep_dims", AttrValue::Bool(keep))]);
                            let out = exec(op, &[&x, &ax], &a).unwrap();
                            let mut mask = vec![false; 3];
                            for &v in *axes {
                                mask[v.rem_euclid(3) as usize] = true;
                            }
                            let (shape_w, want) = reduce_ref(op, &x, &mask, keep);
                            assert_eq!(out.spec, spec(dtype, &shape_w), "{op} {axes:?} {keep}");
                            assert_close(
                                &format!("{op} {dtype:?} {shape:?} axes {axes:?} keep {keep}"),
                                &out,
                                &rounded(dtype, &want),
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn reduce_with_empty_axes_is_the_identity_unless_noop_with_empty_axes_is_false() {
    let x = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let empty = idx_t(DType::I32, &[]);
    let out = exec("ReduceSum", &[&x, &empty], &no_attrs()).unwrap();
    assert_eq!(out.spec, x.spec);
    assert_eq!(out.data, x.data);
    let a = attrs(&[("noop_with_empty_axes", AttrValue::Bool(false))]);
    let out = exec("ReduceSum", &[&x, &empty], &a).unwrap();
    assert_eq!(out.spec.shape, Vec::<i64>::new());
    let s: f64 = x.vals().iter().sum();
    assert_close("sum all", &out, &[s]);
    let a = attrs(&[
        ("noop_with_empty_axes", AttrValue::Bool(false)),
        ("keep_dims", AttrValue::Bool(true)),
    ]);
    let out = exec("ReduceMax", &[&x, &empty], &a).unwrap();
    assert_eq!(out.spec.shape, [1, 1]);
    // A scalar x reduces to itself.
    let s = t(DType::F16, &[], &[2.5]);
    for noop in [true, false] {
        let a = attrs(&[("noop_with_empty_axes", AttrValue::Bool(noop))]);
        let out = exec("ReduceMean", &[&s, &empty], &a).unwrap();
        assert_eq!(out.vals(), [2.5]);
        assert_eq!(out.spec.shape, Vec::<i64>::new());
    }
}

#[test]
fn reduce_over_a_zero_sized_dimension_gives_the_identity_of_the_reduction() {
    let x = t(DType::F32, &[0, 2], &[]);
    let ax = idx_t(DType::I64, &[0]);
    let get = |op| exec(op, &[&x, &ax], &no_attrs()).unwrap().vals();
    assert_eq!(get("ReduceSum"), [0.0, 0.0]);
    assert!(get("ReduceMean").iter().all(|v| v.is_nan()));
    assert_eq!(get("ReduceMax"), [f64::NEG_INFINITY; 2]);
    let xi = t(DType::I32, &[0, 2], &[]);
    let out = exec("ReduceMax", &[&xi, &ax], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [i32::MIN as f64; 2]);
    let out = exec("ReduceMean", &[&xi, &ax], &no_attrs()).unwrap();
    assert_eq!(out.vals(), [0.0; 2]);
}

#[test]
fn reduce_axes_out_of_range_or_of_the_wrong_type_are_rejected() {
    let x = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let e = expect_err(exec(
        "ReduceSum",
        &[&x, &idx_t(DType::I32, &[2])],
        &no_attrs(),
    ));
    assert_eq!(
        e,
        OpError::Input(
            "ReduceSum: axes value 2 is out of range [-2, 1] for x of shape [2,3]".into()
        )
    );
    let e = expect_err(exec(
        "ReduceMean",
        &[&x, &idx_t(DType::I64, &[-3])],
        &no_attrs(),
    ));
    assert!(matches!(&e, OpError::Input(m) if m.contains("axes value -3 is out of range")));
    let fax = t(DType::F32, &[1], &[0.0]);
    let e = expect_err(exec("ReduceMax", &[&x, &fax], &no_attrs()));
    assert_eq!(
        e,
        OpError::DType(
            "ReduceMax: input axes has dtype float32, which the operator does not support \
             (supported: int32, int64)"
                .into()
        )
    );
    let ax2 = t(DType::I32, &[1, 1], &[0.0]);
    let e = expect_err(exec("ReduceSum", &[&x, &ax2], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input(
            "ReduceSum: input axes has shape [1,1]: it must be 1-D (or a scalar)".into()
        )
    );
    // A 0-D axes tensor is one axis.
    let out = exec("ReduceSum", &[&x, &t(DType::I32, &[], &[1.0])], &no_attrs()).unwrap();
    assert_eq!(out.spec.shape, [2]);
    let xb = t(DType::Bool, &[2], &[1.0, 0.0]);
    assert!(matches!(
        expect_err(exec(
            "ReduceSum",
            &[&xb, &idx_t(DType::I32, &[0])],
            &no_attrs()
        )),
        OpError::DType(_)
    ));
}

#[test]
fn reduce_infer_without_axes_values_reports_unknown_dims() {
    let x = spec(DType::F32, &[2, 1, 3]);
    let ax = spec(DType::I32, &[1]);
    let y = infer("ReduceSum", &[x.clone(), ax.clone()], &no_attrs()).unwrap();
    assert_eq!(y[0], spec(DType::F32, &[UNKNOWN_RANK]));
    let keep = attrs(&[("keep_dims", AttrValue::Bool(true))]);
    let y = infer("ReduceSum", &[x.clone(), ax], &keep).unwrap();
    assert_eq!(y[0], spec(DType::F32, &[-1, 1, -1]));
    let y = infer(
        "ReduceSum",
        &[x.clone(), spec(DType::I64, &[0])],
        &no_attrs(),
    )
    .unwrap();
    assert_eq!(y[0], x);
}

#[test]
fn reduce_sum_of_int32_wraps_and_mean_truncates() {
    let x = t(DType::I32, &[2], &[i32::MAX as f64, 1.0]);
    let ax = idx_t(DType::I32, &[0]);
    assert_eq!(
        exec("ReduceSum", &[&x, &ax], &no_attrs()).unwrap().vals(),
        [i32::MIN as f64]
    );
    let x = t(DType::I32, &[3], &[1.0, 2.0, -6.0]);
    assert_eq!(
        exec("ReduceMean", &[&x, &ax], &no_attrs()).unwrap().vals(),
        [-1.0]
    );
}

// ---------------------------------------------------------------- softmax

fn softmax_ref(x: &T, mask: &[bool], log: bool) -> Vec<f64> {
    let shape = &x.spec.shape;
    let kept: Vec<i64> = shape
        .iter()
        .zip(mask)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let xv = x.vals();
    let groups = numel(&kept);
    let g = |i: usize| bcast_offset(&unravel(i, shape), &kept);
    let mut m = vec![f64::NEG_INFINITY; groups];
    for (i, &v) in xv.iter().enumerate() {
        m[g(i)] = m[g(i)].max(v);
    }
    let mut s = vec![0.0; groups];
    for (i, &v) in xv.iter().enumerate() {
        s[g(i)] += (v - m[g(i)]).exp();
    }
    xv.iter()
        .enumerate()
        .map(|(i, &v)| {
            let gi = g(i);
            if log {
                v - m[gi] - s[gi].ln()
            } else {
                (v - m[gi]).exp() / s[gi]
            }
        })
        .collect()
}

#[test]
fn softmax_and_log_softmax_match_the_reference_on_default_negative_and_multiple_axes() {
    let cases: &[Option<&[i64]>] = &[
        None,
        Some(&[-1]),
        Some(&[1]),
        Some(&[0]),
        Some(&[0, 2]),
        Some(&[-1, -2]),
        Some(&[0, 1, 2]),
    ];
    let mut seed = 5000;
    for op in ["SoftmaxV2", "LogSoftmaxV2"] {
        for dtype in FLOATS {
            for shape in [&[2, 3, 4][..], &[1, 5, 1], &[2, 0, 3]] {
                for axes in cases {
                    seed += 1;
                    let x = rand_t(dtype, shape, seed, -5.0, 5.0);
                    let a = match axes {
                        None => no_attrs(),
                        Some(v) => attrs(&[("axes", AttrValue::ListInt(v.to_vec()))]),
                    };
                    let out = exec(op, &[&x], &a).unwrap();
                    assert_eq!(out.spec, x.spec);
                    let mut mask = vec![false; 3];
                    for &v in axes.unwrap_or(&[-1]) {
                        mask[v.rem_euclid(3) as usize] = true;
                    }
                    let want = softmax_ref(&x, &mask, op == "LogSoftmaxV2");
                    assert_close(&format!("{op} {dtype:?} {shape:?} {axes:?}"), &out, &want);
                }
            }
        }
    }
}

#[test]
fn softmax_half_to_float_outputs_float32_for_a_float16_input_only() {
    let a = attrs(&[("half_to_float", AttrValue::Bool(true))]);
    let x = rand_t(DType::F16, &[2, 3], 1, -2.0, 2.0);
    let out = exec("SoftmaxV2", &[&x], &a).unwrap();
    assert_eq!(out.spec, spec(DType::F32, &[2, 3]));
    let want = softmax_ref(&x, &[false, true], false);
    assert_close("half_to_float", &out, &want);
    let xb = rand_t(DType::BF16, &[2, 3], 1, -2.0, 2.0);
    assert_eq!(
        exec("SoftmaxV2", &[&xb], &a).unwrap().spec.dtype,
        DType::BF16
    );
}

#[test]
fn softmax_rejects_bad_axes_and_integer_inputs() {
    let x = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let e = expect_err(exec(
        "SoftmaxV2",
        &[&x],
        &attrs(&[("axes", AttrValue::ListInt(vec![2]))]),
    ));
    assert_eq!(
        e,
        OpError::Attr(
            "SoftmaxV2: attribute axes value 2 is out of range [-2, 1] for x of shape [2,3]".into()
        )
    );
    let e = expect_err(exec(
        "LogSoftmaxV2",
        &[&x],
        &attrs(&[("axes", AttrValue::ListInt(vec![]))]),
    ));
    assert_eq!(
        e,
        OpError::Attr("LogSoftmaxV2: attribute axes is empty".into())
    );
    let s = t(DType::F32, &[], &[1.0]);
    let e = expect_err(exec("SoftmaxV2", &[&s], &no_attrs()));
    assert!(matches!(&e, OpError::Attr(m) if m.contains("value -1 is out of range")));
    let xi = t(DType::I32, &[2], &[1.0, 2.0]);
    let e = expect_err(exec("LogSoftmaxV2", &[&xi], &no_attrs()));
    assert_eq!(
        e,
        OpError::DType(
            "LogSoftmaxV2: input logits has dtype int32, which the operator does not support \
             (supported: float32, float16, bfloat16)"
                .into()
        )
    );
}

// ---------------------------------------------------------------- transpose

#[test]
fn transpose_matches_the_reference_for_every_dtype_and_permutation() {
    let perms: [[i64; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut seed = 7000;
    for dtype in ALL_DTYPES {
        for shape in [[2, 3, 4], [1, 5, 2], [2, 0, 3]] {
            for perm in perms {
                for perm_dtype in [DType::I32, DType::I64] {
                    seed += 1;
                    let x = rand_t(dtype, &shape, seed, -50.0, 50.0);
                    let p = idx_t(perm_dtype, &perm);
                    let out = exec("Transpose", &[&x, &p], &no_attrs()).unwrap();
                    let out_shape: Vec<i64> = perm.iter().map(|&i| shape[i as usize]).collect();
                    assert_eq!(out.spec, spec(dtype, &out_shape));
                    let xv = x.vals();
                    let want: Vec<f64> = (0..numel(&out_shape))
                        .map(|i| {
                            let oi = unravel(i, &out_shape);
                            let mut xi = [0usize; 3];
                            for (d, &pd) in perm.iter().enumerate() {
                                xi[pd as usize] = oi[d];
                            }
                            xv[ravel(&xi, &shape)]
                        })
                        .collect();
                    assert_close(
                        &format!("Transpose {dtype:?} {shape:?} {perm:?}"),
                        &out,
                        &want,
                    );
                }
            }
        }
    }
    // Scalars and 1-D.
    let s = t(DType::F32, &[], &[3.0]);
    let out = exec("Transpose", &[&s, &idx_t(DType::I32, &[])], &no_attrs()).unwrap();
    assert_eq!(out.data, s.data);
    let v = rand_t(DType::F16, &[5], 3, -1.0, 1.0);
    let out = exec("Transpose", &[&v, &idx_t(DType::I64, &[0])], &no_attrs()).unwrap();
    assert_eq!(out.data, v.data);
}

#[test]
fn transpose_rejects_perms_that_are_not_permutations_of_the_rank() {
    let x = rand_t(DType::F32, &[2, 3], 1, -1.0, 1.0);
    let cases: [(&[i64], &str); 4] = [
        (
            &[0, 0],
            "Transpose: perm [0,0] does not fit x of shape [2,3]: 0 appears twice",
        ),
        (
            &[0, 2],
            "Transpose: perm [0,2] does not fit x of shape [2,3]: 2 is not in [0, 1]",
        ),
        (
            &[-1, 0],
            "Transpose: perm [-1,0] does not fit x of shape [2,3]: -1 is not in [0, 1]",
        ),
        (
            &[1, 0, 2],
            "Transpose: perm [1,0,2] does not fit x of shape [2,3]: it has 3 entries, x has rank 2",
        ),
    ];
    for (perm, msg) in cases {
        let e = expect_err(exec(
            "Transpose",
            &[&x, &idx_t(DType::I32, perm)],
            &no_attrs(),
        ));
        assert_eq!(e, OpError::Input(msg.into()));
    }
    let e = expect_err(exec(
        "Transpose",
        &[&x, &t(DType::I32, &[], &[0.0])],
        &no_attrs(),
    ));
    assert_eq!(
        e,
        OpError::Input("Transpose: input perm has shape []: it must be 1-D".into())
    );
}

#[test]
fn transpose_infer_without_perm_values_reports_unknown_dims_of_known_rank() {
    let y = infer(
        "Transpose",
        &[spec(DType::F32, &[2, 3]), spec(DType::I32, &[2])],
        &no_attrs(),
    )
    .unwrap();
    assert_eq!(y[0], spec(DType::F32, &[UNKNOWN_DIM, UNKNOWN_DIM]));
    let y = infer(
        "Transpose",
        &[spec(DType::F32, &[4, 4]), spec(DType::I64, &[2])],
        &no_attrs(),
    )
    .unwrap();
    assert_eq!(y[0], spec(DType::F32, &[4, 4]));
    let e = infer(
        "Transpose",
        &[spec(DType::F32, &[4, 4]), spec(DType::I64, &[3])],
        &no_attrs(),
    )
    .unwrap_err();
    assert!(matches!(e, OpError::Input(_)));
}

// ---------------------------------------------------------------- fill

#[test]
fn fill_repeats_the_value_over_dims_for_every_dtype() {
    for dtype in ALL_DTYPES {
        for dims_dtype in [DType::I32, DType::I64] {
            for value_shape in [&[][..], &[1]] {
                let v = t(dtype, value_shape, &[1.0]);
                let dims = idx_t(dims_dtype, &[2, 3]);
                let out = exec("Fill", &[&dims, &v], &no_attrs()).unwrap();
                assert_eq!(out.spec, spec(dtype, &[2, 3]));
                assert_eq!(out.vals(), [1.0; 6], "{dtype:?}");
            }
        }
    }
    let v = t(DType::F32, &[], &[-2.5]);
    let out = exec("Fill", &[&idx_t(DType::I32, &[]), &v], &no_attrs()).unwrap();
    assert_eq!((out.spec.shape.len(), out.vals()), (0, vec![-2.5]));
    let out = exec("Fill", &[&idx_t(DType::I32, &[4, 0]), &v], &no_attrs()).unwrap();
    assert_eq!(out.spec.shape, [4, 0]);
    assert!(out.data.is_empty());
}

#[test]
fn fill_rejects_negative_or_huge_dims_and_non_scalar_values() {
    let v = t(DType::F32, &[], &[1.0]);
    let e = expect_err(exec(
        "Fill",
        &[&idx_t(DType::I32, &[2, -1]), &v],
        &no_attrs(),
    ));
    assert_eq!(
        e,
        OpError::Input("Fill: dims [2,-1] has the negative size -1".into())
    );
    let e = expect_err(exec(
        "Fill",
        &[&idx_t(DType::I64, &[1 << 40, 1 << 40]), &v],
        &no_attrs(),
    ));
    assert_eq!(
        e,
        OpError::Input("Fill: dims [1099511627776,1099511627776] is too large".into())
    );
    let v2 = t(DType::F32, &[2], &[1.0, 2.0]);
    let e = expect_err(exec("Fill", &[&idx_t(DType::I32, &[2]), &v2], &no_attrs()));
    assert_eq!(
        e,
        OpError::Input("Fill: value has shape [2]: it must be a scalar ([] or [1])".into())
    );
    let fdims = t(DType::F32, &[1], &[2.0]);
    assert!(matches!(
        expect_err(exec("Fill", &[&fdims, &v], &no_attrs())),
        OpError::DType(_)
    ));
}

#[test]
fn fill_infer_without_dims_values_reports_unknown_dims_of_known_rank() {
    let y = infer(
        "Fill",
        &[spec(DType::I32, &[3]), spec(DType::F16, &[])],
        &no_attrs(),
    )
    .unwrap();
    assert_eq!(y[0], spec(DType::F16, &[UNKNOWN_DIM; 3]));
}

#[test]
fn zeros_like_and_ones_like_keep_the_spec_for_every_dtype() {
    for dtype in ALL_DTYPES {
        for shape in [&[2, 3][..], &[], &[0]] {
            let x = rand_t(dtype, shape, 4, 1.0, 9.0);
            let z = exec("ZerosLike", &[&x], &no_attrs()).unwrap();
            assert_eq!(z.spec, x.spec);
            assert!(z.vals().iter().all(|&v| v == 0.0));
            let o = exec("OnesLike", &[&x], &no_attrs()).unwrap();
            assert_eq!(o.spec, x.spec);
            assert!(o.vals().iter().all(|&v| v == 1.0), "{dtype:?}");
        }
    }
}

// ---------------------------------------------------------------- robustness

fn attr_strategy() -> impl Strategy<Value = AttrValue> {
    prop_oneof![
        any::<bool>().prop_map(AttrValue::Bool),
        (-4i64..30).prop_map(AttrValue::Int),
        prop_oneof![Just(-1.0f32), Just(0.0), Just(2.0), Just(f32::NAN)].prop_map(AttrValue::Float),
        prop::collection::vec(-4i64..4, 0..4).prop_map(AttrValue::ListInt),
        (-1i32..30).prop_map(AttrValue::DataType),
        Just(AttrValue::String("x".into())),
    ]
}

fn input_strategy() -> impl Strategy<Value = (usize, Vec<i64>, u64, bool)> {
    (
        // Mostly float32 and int32 (index inputs), sometimes anything.
        prop_oneof![4 => Just(0usize), 3 => Just(4usize), 3 => 0..ALL_DTYPES.len()],
        prop::collection::vec(
            prop_oneof![12 => 1i64..4, 3 => Just(0i64), 1 => Just(-1i64), 1 => Just(1i64 << 62)],
            0..4,
        ),
        any::<u64>(),
        prop::bool::weighted(0.03),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// No operator panics, whatever the inputs, attributes and buffers: every
    /// outcome is a value or an `OpError`, and a successful `run` writes
    /// exactly the inferred output.
    #[test]
    fn prop_no_operator_panics_on_arbitrary_inputs(
        op in 0..OP_TYPES.len(),
        ins in prop::collection::vec(input_strategy(), 4),
        count in 0usize..12,
        attr_list in prop::collection::vec(
            (prop::sample::select(vec![
                "keep_dims", "noop_with_empty_axes", "axes", "transpose_x1", "transpose_x2",
                "adj_x1", "adj_x2", "dst_type", "half_to_float", "base", "scale", "shift",
                "epsilon", "mode", "dim", "dtype", "batch_dims",
            ]), attr_strategy()),
            0..4,
        ),
    ) {
        let op = OP_TYPES[op];
        // Usually the operator's own input count.
        let own = Op::parse(op).map_or(1, |o| o.input_names().len());
        let count = if count < 9 { own } else { count - 9 };
        let tensors: Vec<T> = ins
            .iter()
            .take(count)
            .map(|(d, shape, seed, bad_len)| {
                let dtype = ALL_DTYPES[*d];
                let s = spec(dtype, shape);
                let mut data = match s.checked_numel() {
                    Some(n) if n <= 4096 => enc(dtype, &rand_vals(n, *seed, -3.0, 5.0, dtype)),
                    _ => vec![0u8; (*seed % 17) as usize],
                };
                if *bad_len {
                    data.push(0);
                }
                T { spec: s, data }
            })
            .collect();
        let a: Attrs = attr_list.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
        let specs: Vec<TensorSpec> = tensors.iter().map(|t| t.spec.clone()).collect();
        let _ = infer(op, &specs, &a);
        let inputs: Vec<Input<'_>> = tensors
            .iter()
            .map(|t| Input { spec: &t.spec, data: &t.data })
            .collect();
        if let Ok(outs) = infer_with_values(op, &inputs, &a) {
            let sizes: Option<Vec<usize>> = outs
                .iter()
                .map(|o| o.checked_bytes().filter(|&n| n <= 1 << 20))
                .collect();
            if let Some(sizes) = sizes {
                let mut bufs: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
                let mut o: Vec<Output<'_>> = outs
                    .iter()
                    .zip(&mut bufs)
                    .map(|(spec, data)| Output { spec, data })
                    .collect();
                prop_assert_eq!(run(op, &inputs, &a, &mut o), Ok(()));
            }
        }
    }
}

#[test]
fn axpy_adds_alpha_times_x2_with_broadcasting_and_needs_integral_alpha_for_integers() {
    let x1 = spec(DType::F32, &[2, 2]);
    let x2 = spec(DType::F32, &[2]);
    let a = enc(DType::F32, &[1.0, 2.0, 3.0, 4.0]);
    let b = enc(DType::F32, &[10.0, 100.0]);
    let attrs = Attrs::from([("alpha".to_string(), AttrValue::Float(-0.5))]);
    let inputs = [
        Input {
            spec: &x1,
            data: &a,
        },
        Input {
            spec: &x2,
            data: &b,
        },
    ];
    let out_spec = spec(DType::F32, &[2, 2]);
    let mut out = vec![0u8; 16];
    run(
        "Axpy",
        &inputs,
        &attrs,
        &mut [Output {
            spec: &out_spec,
            data: &mut out,
        }],
    )
    .unwrap();
    assert_eq!(dec(DType::F32, &out), [-4.0, -48.0, -2.0, -46.0]);
    let i1 = spec(DType::I32, &[2]);
    let ia = enc(DType::I32, &[1.0, 2.0]);
    let ints = [
        Input {
            spec: &i1,
            data: &ia,
        },
        Input {
            spec: &i1,
            data: &ia,
        },
    ];
    let mut iout = vec![0u8; 8];
    let e = run(
        "Axpy",
        &ints,
        &attrs,
        &mut [Output {
            spec: &i1,
            data: &mut iout,
        }],
    )
    .unwrap_err();
    assert!(matches!(e, OpError::Attr(_)), "{}", e.message());
    let three = Attrs::from([("alpha".to_string(), AttrValue::Float(3.0))]);
    run(
        "Axpy",
        &ints,
        &three,
        &mut [Output {
            spec: &i1,
            data: &mut iout,
        }],
    )
    .unwrap();
    assert_eq!(dec(DType::I32, &iout), [4.0, 8.0]);
}

// ------------------------------------------------- transformer operators

#[test]
fn gather_v2_takes_slices_along_any_axis_with_negative_indices() {
    let x = t(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    for it in [DType::I32, DType::I64] {
        let idx = t(it, &[2], &[2.0, -3.0]);
        let y = exec(
            "GatherV2",
            &[&x, &idx, &idx_t(DType::I64, &[1])],
            &no_attrs(),
        )
        .unwrap();
        assert_eq!(y.spec, spec(DType::F32, &[2, 2]));
        assert_close("GatherV2 axis 1", &y, &[3.0, 1.0, 6.0, 4.0]);
    }
    let idx = t(DType::I64, &[1, 1], &[1.0]);
    let y = exec(
        "GatherV2",
        &[&x, &idx, &idx_t(DType::I32, &[0])],
        &no_attrs(),
    )
    .unwrap();
    assert_eq!(y.spec.shape, [1, 1, 3]);
    assert_close("GatherV2 axis 0", &y, &[4.0, 5.0, 6.0]);
    // Without the axis' value the rank is unknown.
    let plain = [x.spec.clone(), idx.spec.clone(), spec(DType::I64, &[1])];
    assert_eq!(
        infer("GatherV2", &plain, &no_attrs()).unwrap()[0].shape,
        [UNKNOWN_RANK]
    );
    let bad = t(DType::I64, &[1], &[2.0]);
    let e = expect_err(exec(
        "GatherV2",
        &[&x, &bad, &idx_t(DType::I64, &[0])],
        &no_attrs(),
    ));
    assert!(
        matches!(&e, OpError::Input(m) if m.contains("index 2 is out of range")),
        "{e:?}"
    );
    let e = expect_err(exec(
        "GatherV2",
        &[&x, &x, &idx_t(DType::I64, &[0])],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::DType(_)), "{e:?}");
    let e = expect_err(exec(
        "GatherV2",
        &[&x, &idx, &idx_t(DType::I64, &[2])],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let a = attrs(&[("batch_dims", AttrValue::Int(1))]);
    let e = expect_err(exec("GatherV2", &[&x, &idx, &idx_t(DType::I64, &[0])], &a));
    assert!(matches!(e, OpError::Attr(_)), "{e:?}");
}

#[test]
fn arg_max_v2_picks_the_first_maximum_and_treats_nan_as_largest() {
    for dtype in NUMERIC {
        let x = t(dtype, &[2, 3], &[1.0, 7.0, 7.0, 2.0, 0.0, 9.0]);
        let y = exec("ArgMaxV2", &[&x, &idx_t(DType::I64, &[-1])], &no_attrs()).unwrap();
        assert_eq!(y.spec, spec(DType::I64, &[2]));
        assert_close("ArgMaxV2", &y, &[1.0, 2.0]);
    }
    let x = t(DType::F32, &[3], &[1.0, f64::NAN, 5.0]);
    let a = attrs(&[("dtype", AttrValue::DataType(3))]);
    let y = exec("ArgMaxV2", &[&x, &t(DType::I32, &[], &[0.0])], &a).unwrap();
    assert_eq!(y.spec, spec(DType::I32, &[]));
    assert_close("ArgMaxV2 NaN", &y, &[1.0]);
    let e = expect_err(exec(
        "ArgMaxV2",
        &[&x, &idx_t(DType::I64, &[1])],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let a = attrs(&[("dtype", AttrValue::DataType(0))]);
    let e = expect_err(exec("ArgMaxV2", &[&x, &idx_t(DType::I64, &[0])], &a));
    assert!(matches!(e, OpError::Attr(_)), "{e:?}");
    let empty = t(DType::F32, &[2, 0], &[]);
    let e = expect_err(exec(
        "ArgMaxV2",
        &[&empty, &idx_t(DType::I64, &[1])],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
}

#[test]
fn rms_norm_has_two_outputs_y_and_a_float32_rstd() {
    for dtype in FLOATS {
        let x = t(dtype, &[2, 2], &[3.0, 4.0, 0.0, 0.0]);
        let g = t(dtype, &[2], &[1.0, 2.0]);
        let a = attrs(&[("epsilon", AttrValue::Float(0.0))]);
        let specs = infer("RmsNorm", &[x.spec.clone(), g.spec.clone()], &a).unwrap();
        assert_eq!(specs, [spec(dtype, &[2, 2]), spec(DType::F32, &[2, 1])]);
        let (mut y, mut r) = (vec![0u8; specs[0].bytes()], vec![0u8; 8]);
        let inputs = [
            Input {
                spec: &x.spec,
                data: &x.data,
            },
            Input {
                spec: &g.spec,
                data: &g.data,
            },
        ];
        {
            let mut outs = [
                Output {
                    spec: &specs[0],
                    data: &mut y,
                },
                Output {
                    spec: &specs[1],
                    data: &mut r,
                },
            ];
            // With epsilon 0 an all-zero row divides by zero: inf·0 = NaN.
            run("RmsNorm", &inputs, &a, &mut outs).unwrap();
        }
        let y = T {
            spec: specs[0].clone(),
            data: y,
        };
        let r = T {
            spec: specs[1].clone(),
            data: r,
        };
        let r0 = 1.0 / 12.5f64.sqrt();
        assert_close("RmsNorm y", &y, &[3.0 * r0, 8.0 * r0, f64::NAN, f64::NAN]);
        assert_close("RmsNorm rstd", &r, &[r0, f64::INFINITY]);
        // One output is not enough.
        let mut y = vec![0u8; specs[0].bytes()];
        let mut one = [Output {
            spec: &specs[0],
            data: &mut y,
        }];
        let e = run("RmsNorm", &inputs, &a, &mut one).unwrap_err();
        assert!(matches!(e, OpError::Output(_)), "{e:?}");
    }
    let x = t(DType::F32, &[2, 2], &[1.0; 4]);
    let g = t(DType::F32, &[3], &[1.0; 3]);
    let e = infer("RmsNorm", &[x.spec.clone(), g.spec], &no_attrs()).unwrap_err();
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let gh = t(DType::F16, &[2], &[1.0; 2]);
    let e = infer("RmsNorm", &[x.spec, gh.spec], &no_attrs()).unwrap_err();
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
}

#[test]
fn rotary_position_embedding_rotates_halves_or_pairs() {
    let x = t(DType::F32, &[1, 1, 1, 4], &[1.0, 2.0, 3.0, 4.0]);
    let cos = t(DType::F32, &[1, 1, 1, 4], &[0.0; 4]);
    let sin = t(DType::F32, &[1, 1, 1, 4], &[1.0; 4]);
    let y = exec("RotaryPositionEmbedding", &[&x, &cos, &sin], &no_attrs()).unwrap();
    assert_close("rope half", &y, &[-3.0, -4.0, 1.0, 2.0]);
    let a = attrs(&[("mode", AttrValue::Int(1))]);
    let y = exec("RotaryPositionEmbedding", &[&x, &cos, &sin], &a).unwrap();
    assert_close("rope interleave", &y, &[-2.0, 1.0, -4.0, 3.0]);
    for mode in [2, 3, 7] {
        let a = attrs(&[("mode", AttrValue::Int(mode))]);
        let e = expect_err(exec("RotaryPositionEmbedding", &[&x, &cos, &sin], &a));
        assert!(matches!(e, OpError::Attr(_)), "{e:?}");
    }
    let x3 = t(DType::F32, &[1, 1, 4], &[1.0; 4]);
    let e = expect_err(exec(
        "RotaryPositionEmbedding",
        &[&x3, &x3, &x3],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let odd = t(DType::F32, &[1, 1, 1, 3], &[1.0; 3]);
    let e = expect_err(exec(
        "RotaryPositionEmbedding",
        &[&odd, &odd, &odd],
        &no_attrs(),
    ));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
}

#[test]
fn swi_glu_halves_its_dimension() {
    for dtype in FLOATS {
        let x = t(dtype, &[1, 4], &[1.0, -2.0, 3.0, 0.5]);
        let y = exec("SwiGlu", &[&x], &no_attrs()).unwrap();
        assert_eq!(y.spec, spec(dtype, &[1, 2]));
        let silu = |a: f64| a / (1.0 + (-a).exp());
        assert_close("SwiGlu", &y, &[silu(1.0) * 3.0, silu(-2.0) * 0.5]);
    }
    let x = t(DType::F32, &[3, 2], &[1.0; 6]);
    let e = expect_err(exec("SwiGlu", &[&x], &attrs(&[("dim", AttrValue::Int(0))])));
    assert!(matches!(e, OpError::Input(_)), "{e:?}");
    let e = expect_err(exec("SwiGlu", &[&x], &attrs(&[("dim", AttrValue::Int(2))])));
    assert!(matches!(e, OpError::Attr(_)), "{e:?}");
    let i = t(DType::I32, &[2], &[1.0; 2]);
    assert!(matches!(
        expect_err(exec("SwiGlu", &[&i], &no_attrs())),
        OpError::DType(_)
    ));
}

#[test]
fn masked_fill_writes_value_where_the_broadcast_mask_is_true() {
    for dtype in NUMERIC {
        let x = t(dtype, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let mask = t(DType::Bool, &[2], &[0.0, 1.0]);
        let v = t(dtype, &[], &[9.0]);
        let y = exec("MaskedFill", &[&x, &mask, &v], &no_attrs()).unwrap();
        assert_eq!(y.spec, x.spec);
        assert_close("MaskedFill", &y, &[1.0, 9.0, 3.0, 9.0]);
    }
    let x = t(DType::F32, &[2], &[1.0; 2]);
    let v = t(DType::F32, &[], &[0.0]);
    for (mask, value) in [
        (t(DType::F32, &[2], &[1.0; 2]), &v),
        (t(DType::Bool, &[3], &[1.0; 3]), &v),
        (t(DType::Bool, &[2, 2], &[1.0; 4]), &v),
        (t(DType::Bool, &[2], &[1.0; 2]), &t(DType::F16, &[], &[0.0])),
        (
            t(DType::Bool, &[2], &[1.0; 2]),
            &t(DType::F32, &[2], &[0.0; 2]),
        ),
    ] {
        let e = expect_err(exec("MaskedFill", &[&x, &mask, value], &no_attrs()));
        assert!(matches!(e, OpError::Input(_) | OpError::DType(_)), "{e:?}");
    }
}
