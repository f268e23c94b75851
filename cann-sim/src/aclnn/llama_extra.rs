//! The planning functions (and one plain export) of the aclnn operators
//! llama.cpp's CANN backend calls beyond the first table: `Addmm` /
//! `InplaceAddmm`, `Ger` and `aclnnCalculateMatmulWeightSizeV2`. The
//! kernels are in [`crate::ops::llama_extra`]; the table's `sim` entries
//! call these as `super::llama_extra::...`.

#![allow(non_snake_case)]

use super::exec::bound;
use super::exec::int_array_arg;
use super::inplace::inplace_binary;
use super::nn::{bin, input, invalid, output, planned, scalar};
use super::operators::Planned;
use crate::ops::llama_extra;
use crate::ops::nn::BinaryKind;
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_RUNTIME_ERROR, ACLNN_SUCCESS, aclIntArray, aclScalar,
    aclTensor, aclnnStatus,
};

/// aclnnAddmm / aclnnInplaceAddmm (`out` is `selfRef` for the in-place
/// form, as hicann/ops-nn `matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.cpp`
/// `aclnnInplaceAddmmGetWorkspaceSize` passes it). Every pointer is checked
/// for null first (`CheckNotNull`: self, mat1, mat2, beta, alpha, out:
/// 161001), then `cubeMathType` at most 4 (`CheckCubeMathTypeForAddMm`;
/// the simulator also refuses a negative one), then the shapes
/// ([`llama_extra::addmm`]): 161002.
#[allow(clippy::too_many_arguments)]
pub(super) fn addmm(
    f: &'static str,
    self_: *const aclTensor,
    mat1: *const aclTensor,
    mat2: *const aclTensor,
    beta: *const aclScalar,
    alpha: *const aclScalar,
    out: *const aclTensor,
    cube: i8,
) -> Planned {
    let inplace = self_ == out;
    let (sname, oname) = if inplace {
        ("selfRef", "selfRef")
    } else {
        ("self", "out")
    };
    for (what, null) in [
        (sname, self_.is_null()),
        ("mat1", mat1.is_null()),
        ("mat2", mat2.is_null()),
        ("beta", beta.is_null()),
        ("alpha", alpha.is_null()),
        (oname, out.is_null()),
    ] {
        if null {
            return Err(fail(
                ACLNN_ERR_PARAM_NULLPTR,
                format!("{f}: {what} is null"),
            ));
        }
    }
    let sv = input(f, sname, self_)?;
    let (av, bv) = (input(f, "mat1", mat1)?, input(f, "mat2", mat2)?);
    let (_, b) = scalar(f, "beta", beta)?;
    let (_, a) = scalar(f, "alpha", alpha)?;
    let ov = output(f, oname, out)?;
    if !(0..=4).contains(&cube) {
        return Err(invalid(
            f,
            &format!(
                "cubeMathType {cube} is not one of 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, \
                 2 USE_FP16, 3 USE_HF32, 4 USE_FP32_ADD"
            ),
        ));
    }
    let k = llama_extra::addmm(&sv.spec, &av.spec, &bv.spec, b, a, ov.spec.dtype);
    let names: &'static [&'static str] = if inplace { &["selfRef"] } else { &["out"] };
    planned(f, names, vec![sv, av, bv], vec![ov], k)
}

/// aclnnGer: the outer product of two vectors ([`llama_extra::ger`]).
pub(super) fn ger(
    f: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (av, bv) = (input(f, "self", a)?, input(f, "vec2", b)?);
    let ov = output(f, "out", out)?;
    let k = llama_extra::ger(&av.spec, &bv.spec, &ov.spec);
    planned(f, &["out"], vec![av, bv], vec![ov], k)
}

/// aclnnInplaceEqTensor: `selfRef = (selfRef == other)` as 1/0 in
/// selfRef's dtype, `other` broadcasting to `selfRef`
/// ([`inplace_binary`]); the page
/// (`math/equal/docs/aclnnEqTensor&aclnnInplaceEqTensor.md`) also refuses
/// exactly one of the two being empty (161002).
pub(super) fn eq_tensor_inplace(
    f: &'static str,
    self_ref: *const aclTensor,
    other: *const aclTensor,
) -> Planned {
    let (s, o) = (
        bound(f, "selfRef", self_ref as usize, true)?,
        bound(f, "other", other as usize, false)?,
    );
    if (s.spec.numel() == 0) != (o.spec.numel() == 0) {
        return Err(invalid(
            f,
            &format!(
                "selfRef {:?} and other {:?}: exactly one of them is empty",
                s.spec.shape, o.spec.shape
            ),
        ));
    }
    inplace_binary(f, self_ref, other, || {
        bin(
            f,
            self_ref,
            other,
            self_ref,
            BinaryKind::Predicate,
            |a, b| f64::from(u8::from(a == b)),
        )
    })
}

/// Whether the release's `aclnnCalculateMatmulWeightSizeV2` runs on the
/// simulated SoC: hicann/ops-math
/// `conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp`
/// `CheckSocValid` takes Ascend310P, Ascend910B, Ascend910_93 and the
/// register-based parts (Ascend950); the Atlas training parts (Ascend910A
/// ...) are 361001, as the page's product list says ("不支持").
fn weight_size_soc_supported(soc: &str) -> bool {
    ["Ascend310P", "Ascend910B", "Ascend910_93", "Ascend950"]
        .iter()
        .any(|p| soc.starts_with(p))
}

/// `aclnnCalculateMatmulWeightSizeV2`: the number of elements a matmul
/// weight of `tensorShape` and `dataType` occupies after
/// `aclnnTransMatmulWeight` (not a two-phase operator: no workspace, no
/// executor).
///
/// hicann/ops-math `conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp`
/// (`aclnnCalculateMatmulWeightSizeV2`): the SoC check first (361001), a
/// null `tensorShape` or `weightTensorSize` 161001, then 2 to 6 dimensions
/// and no 0 dimension (161002); the rule is
/// [`llama_extra::matmul_weight_nz_elements`]. The simulator's
/// `aclnnTransMatmulWeight` keeps the weight in ND (its matmuls read ND), so
/// it needs `numel` elements; the answer here is the release's NZ size,
/// which is never smaller, so a buffer sized by it serves both.
///
/// # Safety
///
/// `weightTensorSize` must be null or writable; `tensorShape` is looked up,
/// never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnCalculateMatmulWeightSizeV2(
    tensorShape: *const aclIntArray,
    dataType: acl_sys::aclDataType,
    weightTensorSize: *mut u64,
) -> aclnnStatus {
    const F: &str = "aclnnCalculateMatmulWeightSizeV2";
    let soc = crate::config::get().map_or(crate::config::DEFAULT_SOC_NAME, |c| c.soc_name.as_str());
    if !weight_size_soc_supported(soc) {
        return fail(
            ACLNN_ERR_RUNTIME_ERROR,
            format!("{F}: not supported on {soc} (Atlas training parts)"),
        );
    }
    if tensorShape.is_null() {
        return fail(ACLNN_ERR_PARAM_NULLPTR, format!("{F}: tensorShape is null"));
    }
    if weightTensorSize.is_null() {
        return fail(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{F}: weightTensorSize is null"),
        );
    }
    let shape = match int_array_arg(F, "tensorShape", tensorShape as usize) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let half = dataType == acl_sys::ACL_FLOAT16 || dataType == acl_sys::ACL_BF16;
    match llama_extra::matmul_weight_nz_elements(&shape, half) {
        Ok(n) => {
            // SAFETY: checked non-null above; the caller guarantees it is
            // writable, as documented.
            unsafe { weightTensorSize.write(n) };
            ACLNN_SUCCESS
        }
        Err(msg) => invalid(F, &msg),
    }
}

#[cfg(test)]
mod tests {
    use super::weight_size_soc_supported;

    #[test]
    fn weight_size_runs_on_the_socs_the_release_checks_for() {
        for soc in [
            "Ascend910B3",
            "Ascend910_9391",
            "Ascend310P3",
            "Ascend950PR",
        ] {
            assert!(weight_size_soc_supported(soc), "{soc}");
        }
        for soc in ["Ascend910A", "Ascend910ProB", "Ascend310B1"] {
            assert!(!weight_size_soc_supported(soc), "{soc}");
        }
    }
}
