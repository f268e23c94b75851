//! The kernels of the aclnn operators llama.cpp's CANN backend calls beyond
//! the first table: `Addmm` (and its in-place form), `Ger`, and the size rule
//! of `aclnnCalculateMatmulWeightSizeV2`. Each function checks one call's
//! shapes, dtypes and attributes (an [`OpError`] is 161002 at the export)
//! and returns the output specs with the kernel that computes them.

use super::native::{Native, read, read_i64, write, write_i64};
use super::nn::{Kernel, check_cast, is_float, matmul_f64, promote, spec};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// `Addmm`: `out = beta · self + alpha · (mat1 @ mat2)`, accumulated in f64.
///
/// hicann/ops-nn `matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.cpp`:
/// `CheckMatmul` (mat1 and mat2 2-D, equal k), `CheckBroadcast` (self 1-D or
/// 2-D, broadcasting to `[m, n]`), `CheckOutShape` (out `[m, n]`);
/// `CreateAddmmGraphImpl`: with `alpha == 0` (or an empty k) the result is
/// `beta · self` and the matrices are not read, with `beta == 0` it is
/// `alpha · (mat1 @ mat2)` and `self` is not read (a NaN there does not
/// reach `out`); both compared to 0 within f32's epsilon, as the release
/// does (`fabs(x->ToFloat()) <= epsilon`).
pub fn addmm(
    self_: &TensorSpec,
    mat1: &TensorSpec,
    mat2: &TensorSpec,
    beta: f64,
    alpha: f64,
    out: DType,
) -> Res<Kernel> {
    let name = "Addmm";
    for (what, t) in [("self", self_), ("mat1", mat1), ("mat2", mat2)] {
        if !is_float(t.dtype) || t.dtype == DType::F64 {
            return err(format!(
                "{name}: {what} is {}; it must be float16, bfloat16 or float32",
                t.dtype.name()
            ));
        }
    }
    if mat1.shape.len() != 2 || mat2.shape.len() != 2 || mat1.shape[1] != mat2.shape[0] {
        return err(format!(
            "{name}: mat1 {} and mat2 {} do not multiply (both 2-D, mat1's columns mat2's rows)",
            fmt_shape(&mat1.shape),
            fmt_shape(&mat2.shape)
        ));
    }
    let (m, k, n) = (mat1.shape[0], mat1.shape[1], mat2.shape[1]);
    let r = self_.shape.len();
    // hicann/ops-nn aclnn_addmm.cpp CheckBroadcast: 1-D or 2-D, and
    // broadcasting to the product's shape (self's dimensions 1 or equal).
    let fits = |d: i64, want: i64| d == want || d == 1;
    let ok = match r {
        1 => fits(self_.shape[0], n),
        2 => fits(self_.shape[0], m) && fits(self_.shape[1], n),
        _ => false,
    };
    if !ok {
        return err(format!(
            "{name}: self {} must be 1-D or 2-D and broadcast to the product's shape [{m}, {n}]",
            fmt_shape(&self_.shape)
        ));
    }
    check_cast(
        name,
        "out",
        promote(self_.dtype, promote(mat1.dtype, mat2.dtype)),
        out,
    )?;
    let (m, k, n) = (m as usize, k as usize, n as usize);
    // self as [rows, cols] with 1 for a broadcast dimension.
    let (sr, sc) = match r {
        1 => (1, self_.shape[0] as usize),
        _ => (self_.shape[0] as usize, self_.shape[1] as usize),
    };
    let eps = f64::from(f32::EPSILON);
    let (beta_zero, alpha_zero) = (beta.abs() <= eps, alpha.abs() <= eps);
    Ok(Kernel {
        outputs: vec![spec(out, vec![m as i64, n as i64])],
        native: Native::new(name, move |i, o| {
            let mut v = if !alpha_zero && k > 0 {
                let mut p = matmul_f64(&read(&i[1]), &read(&i[2]), (m, k, n));
                p.iter_mut().for_each(|e| *e *= alpha);
                p
            } else {
                vec![0.0; m * n]
            };
            if !beta_zero {
                let s = read(&i[0]);
                for r in 0..m {
                    for c in 0..n {
                        let at = if sr == 1 { 0 } else { r } * sc + if sc == 1 { 0 } else { c };
                        v[r * n + c] += beta * s[at];
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// `Ger`: the outer product `out[i][j] = self[i] · vec2[j]`, in the type
/// `self` and `vec2` promote to (integers exactly, with wrapping; bool as
/// logical and), converted to `out`'s.
///
/// hicann/ops-math `math/ger/docs/aclnnGer.md`: self and vec2 1-D, out 2-D
/// `[self.len, vec2.len]`, the promoted type castable to out's.
pub fn ger(a: &TensorSpec, b: &TensorSpec, out: &TensorSpec) -> Res<Kernel> {
    let name = "Ger";
    if a.shape.len() != 1 || b.shape.len() != 1 {
        return err(format!(
            "{name}: self {} and vec2 {} must be 1-D",
            fmt_shape(&a.shape),
            fmt_shape(&b.shape)
        ));
    }
    let want = vec![a.shape[0], b.shape[0]];
    if out.shape != want {
        return err(format!(
            "{name}: out is {} but the outer product is {}",
            fmt_shape(&out.shape),
            fmt_shape(&want)
        ));
    }
    let result = promote(a.dtype, b.dtype);
    check_cast(name, "out", result, out.dtype)?;
    let (m, n) = (a.shape[0] as usize, b.shape[0] as usize);
    Ok(Kernel {
        outputs: vec![spec(out.dtype, want)],
        native: Native::new(name, move |i, o| {
            if is_float(result) {
                let (x, y) = (read(&i[0]), read(&i[1]));
                let v: Vec<f64> = (0..m * n).map(|e| x[e / n] * y[e % n]).collect();
                write(&mut o[0], &v);
            } else {
                // Integer (and bool: 1·1 = 1, else 0) products, exact.
                let (x, y) = (read_i64(&i[0]), read_i64(&i[1]));
                let v: Vec<i64> = (0..m * n)
                    .map(|e| x[e / n].wrapping_mul(y[e % n]))
                    .collect();
                write_i64(&mut o[0], &v);
            }
            Ok(())
        }),
    })
}

/// The elements a matmul weight of `shape` and `dtype` occupies once
/// converted to FRACTAL_NZ (`aclnnCalculateMatmulWeightSizeV2`);
/// `half` when its type is float16 or bfloat16.
///
/// hicann/ops-math `conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp`
/// (`CalculateMatmulWeightSize`, `CheckShapeDimV2`, `CheckNonZeroShape`) and
/// the page `conversion/trans_data/docs/aclnnCalculateMatmulWeightSizeV2.md`:
/// 2 to 6 dimensions, none 0; the batch dimensions multiply as they are,
/// the last two are aligned: to 16 and 16 for float16/bfloat16, to 16 and
/// 32 for every other type (the release applies the int8 rule to any type
/// that is not float16/bfloat16, and does not check `dataType` further).
/// The unit is elements, as the page says ("单位为元素个数").
///
/// # Errors
///
/// A message for the 161002 cases: a rank outside 2..=6, a 0 dimension, and
/// (stricter than the release, whose result would wrap) a negative
/// dimension or a size beyond `u64`.
pub fn matmul_weight_nz_elements(shape: &[i64], half: bool) -> Result<u64, String> {
    if !(2..=6).contains(&shape.len()) {
        return Err(format!(
            "tensorShape {} must have 2 to 6 dimensions",
            fmt_shape(shape)
        ));
    }
    if let Some(d) = shape.iter().find(|&&d| d <= 0) {
        return Err(format!(
            "tensorShape {} has a dimension {d}; every dimension must be positive",
            fmt_shape(shape)
        ));
    }
    let last = if half { 16 } else { 32 };
    let r = shape.len();
    let mut total: u64 = 1;
    for (i, &d) in shape.iter().enumerate() {
        let d = d as u64;
        let d = match i {
            _ if i == r - 1 => d.div_ceil(last) * last,
            _ if i == r - 2 => d.div_ceil(16) * 16,
            _ => d,
        };
        total = total
            .checked_mul(d)
            .ok_or_else(|| format!("tensorShape {} overflows u64", fmt_shape(shape)))?;
    }
    Ok(total)
}
