//! `FloatTensorOps` for [`Cann`].

use super::*;
use crate::Cann;
use crate::kernel::unsupported;
use burn_backend::ops::FloatTensorOps;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn_backend::{BoolDType, Distribution, FloatDType, IntDType, Scalar as BScalar};

pub(crate) fn fk(op: &str, d: FloatDType) -> Kind {
    Kind::expect(op, d.into())
}

pub(crate) fn ik(op: &str, d: IntDType) -> Kind {
    Kind::expect(op, d.into())
}

pub(crate) fn bk(op: &str, d: BoolDType) -> Kind {
    Kind::expect(op, d.into())
}

/// The float kind of incoming data: its own when stored, else f32.
fn data_kind(data: &TensorData) -> Kind {
    Kind::of(data.dtype)
        .filter(|k| k.is_float())
        .unwrap_or(Kind::F32)
}

impl FloatTensorOps<Cann> for Cann {
    fn float_from_data(data: TensorData, device: &CannDevice) -> FloatTensor<Cann> {
        let k = data_kind(&data);
        from_data("float_from_data", data, k, device)
    }

    fn float_random(
        shape: Shape,
        distribution: Distribution,
        device: &CannDevice,
        dtype: FloatDType,
    ) -> FloatTensor<Cann> {
        random(
            "float_random",
            shape,
            distribution,
            device,
            fk("float_random", dtype),
        )
    }

    fn float_zeros(shape: Shape, device: &CannDevice, dtype: FloatDType) -> FloatTensor<Cann> {
        full(
            "float_zeros",
            shape,
            device,
            fk("float_zeros", dtype),
            &BScalar::Float(0.0),
        )
    }

    fn float_ones(shape: Shape, device: &CannDevice, dtype: FloatDType) -> FloatTensor<Cann> {
        full(
            "float_ones",
            shape,
            device,
            fk("float_ones", dtype),
            &BScalar::Float(1.0),
        )
    }

    fn float_full(
        shape: Shape,
        fill_value: BScalar,
        device: &CannDevice,
        dtype: FloatDType,
    ) -> FloatTensor<Cann> {
        full(
            "float_full",
            shape,
            device,
            fk("float_full", dtype),
            &fill_value,
        )
    }

    fn float_into_data(
        tensor: FloatTensor<Cann>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        into_data(tensor)
    }

    fn float_device(tensor: &FloatTensor<Cann>) -> CannDevice {
        tensor.device
    }

    fn float_to_device(tensor: FloatTensor<Cann>, device: &CannDevice) -> FloatTensor<Cann> {
        to_device("float_to_device", tensor, device)
    }

    fn float_into_int(tensor: FloatTensor<Cann>, out_dtype: IntDType) -> IntTensor<Cann> {
        cast("float_into_int", tensor, ik("float_into_int", out_dtype))
    }

    fn float_empty(shape: Shape, device: &CannDevice, dtype: FloatDType) -> FloatTensor<Cann> {
        empty("float_empty", shape, device, fk("float_empty", dtype))
    }

    fn float_add(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_add", lhs, rhs, add)
    }

    fn float_add_scalar(lhs: FloatTensor<Cann>, rhs: BScalar) -> FloatTensor<Cann> {
        bin_scalar("float_add_scalar", lhs, rhs, adds)
    }

    fn float_clamp_min(tensor: FloatTensor<Cann>, min: BScalar) -> FloatTensor<Cann> {
        clamp("float_clamp_min", tensor, Some(min), None)
    }

    fn float_clamp_max(tensor: FloatTensor<Cann>, max: BScalar) -> FloatTensor<Cann> {
        clamp("float_clamp_max", tensor, None, Some(max))
    }

    fn float_clamp(tensor: FloatTensor<Cann>, min: BScalar, max: BScalar) -> FloatTensor<Cann> {
        clamp("float_clamp", tensor, Some(min), Some(max))
    }

    fn float_sub(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_sub", lhs, rhs, sub)
    }

    fn float_sub_scalar(lhs: FloatTensor<Cann>, rhs: BScalar) -> FloatTensor<Cann> {
        bin_scalar("float_sub_scalar", lhs, rhs, subs)
    }

    fn float_mul(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_mul", lhs, rhs, aclnn::mul)
    }

    fn float_mul_scalar(lhs: FloatTensor<Cann>, rhs: BScalar) -> FloatTensor<Cann> {
        bin_scalar("float_mul_scalar", lhs, rhs, aclnn::muls)
    }

    fn float_div(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_div", lhs, rhs, aclnn::div)
    }

    fn float_div_scalar(lhs: FloatTensor<Cann>, rhs: BScalar) -> FloatTensor<Cann> {
        bin_scalar("float_div_scalar", lhs, rhs, aclnn::divs)
    }

    fn float_remainder(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_remainder", lhs, rhs, aclnn::remainder_tensor_tensor)
    }

    fn float_remainder_scalar(lhs: FloatTensor<Cann>, rhs: BScalar) -> FloatTensor<Cann> {
        bin_scalar(
            "float_remainder_scalar",
            lhs,
            rhs,
            aclnn::remainder_tensor_scalar,
        )
    }

    fn float_matmul(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        ok("float_matmul", kernel::matmul(&lhs, &rhs))
    }

    fn float_cross(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        dim: usize,
    ) -> FloatTensor<Cann> {
        let f: TT = match dim {
            0 => |s, a, b, o| aclnn::linalg_cross(s, a, b, 0, o),
            1 => |s, a, b, o| aclnn::linalg_cross(s, a, b, 1, o),
            2 => |s, a, b, o| aclnn::linalg_cross(s, a, b, 2, o),
            3 => |s, a, b, o| aclnn::linalg_cross(s, a, b, 3, o),
            _ => unsupported("float_cross", "only dims 0 to 3"),
        };
        bin("float_cross", lhs, rhs, f)
    }

    fn float_neg(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_neg", tensor, aclnn::neg)
    }

    fn float_recip(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_recip", tensor, aclnn::reciprocal)
    }

    fn float_swap_dims(tensor: FloatTensor<Cann>, dim1: usize, dim2: usize) -> FloatTensor<Cann> {
        swap_dims("float_swap_dims", tensor, dim1, dim2)
    }

    fn float_permute(tensor: FloatTensor<Cann>, axes: &[usize]) -> FloatTensor<Cann> {
        permute("float_permute", tensor, axes)
    }

    fn float_flip(tensor: FloatTensor<Cann>, axes: &[usize]) -> FloatTensor<Cann> {
        flip("float_flip", tensor, axes)
    }

    fn float_reshape(tensor: FloatTensor<Cann>, shape: Shape) -> FloatTensor<Cann> {
        reshape("float_reshape", tensor, shape)
    }

    fn float_gather(
        dim: usize,
        tensor: FloatTensor<Cann>,
        indices: IntTensor<Cann>,
    ) -> FloatTensor<Cann> {
        gather("float_gather", dim, tensor, indices)
    }

    fn float_scatter_add(
        dim: usize,
        tensor: FloatTensor<Cann>,
        indices: IntTensor<Cann>,
        value: FloatTensor<Cann>,
    ) -> FloatTensor<Cann> {
        scatter_add("float_scatter_add", dim, tensor, indices, value)
    }

    fn float_gather_nd(data: FloatTensor<Cann>, indices: IntTensor<Cann>) -> FloatTensor<Cann> {
        super::nd::gather_nd("float_gather_nd", data, indices)
    }

    fn float_scatter_nd(
        data: FloatTensor<Cann>,
        indices: IntTensor<Cann>,
        values: FloatTensor<Cann>,
        reduction: burn_backend::tensor::IndexingUpdateOp,
    ) -> FloatTensor<Cann> {
        super::nd::scatter_nd("float_scatter_nd", data, indices, values, reduction)
    }

    fn float_select(
        tensor: FloatTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
    ) -> FloatTensor<Cann> {
        select("float_select", tensor, dim, indices)
    }

    fn float_select_add(
        tensor: FloatTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
        value: FloatTensor<Cann>,
    ) -> FloatTensor<Cann> {
        select_add("float_select_add", tensor, dim, indices, value)
    }

    fn float_slice(tensor: FloatTensor<Cann>, slices: &[Slice]) -> FloatTensor<Cann> {
        slice("float_slice", tensor, slices)
    }

    fn float_slice_assign(
        tensor: FloatTensor<Cann>,
        slices: &[Slice],
        value: FloatTensor<Cann>,
    ) -> FloatTensor<Cann> {
        slice_assign("float_slice_assign", tensor, slices, value)
    }

    fn float_mask_where(
        tensor: FloatTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: FloatTensor<Cann>,
    ) -> FloatTensor<Cann> {
        mask_where("float_mask_where", tensor, mask, value)
    }

    fn float_mask_fill(
        tensor: FloatTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: BScalar,
    ) -> FloatTensor<Cann> {
        mask_fill("float_mask_fill", tensor, mask, value)
    }

    fn float_equal(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_equal", out_dtype);
        compare("float_equal", Cmp::Eq, lhs, rhs)
    }

    fn float_not_equal(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_not_equal", out_dtype);
        compare("float_not_equal", Cmp::Ne, lhs, rhs)
    }

    fn float_equal_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_equal_elem", out_dtype);
        compare_elem("float_equal_elem", Cmp::Eq, lhs, rhs)
    }

    fn float_not_equal_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_not_equal_elem", out_dtype);
        compare_elem("float_not_equal_elem", Cmp::Ne, lhs, rhs)
    }

    fn float_greater(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_greater", out_dtype);
        compare("float_greater", Cmp::Gt, lhs, rhs)
    }

    fn float_greater_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_greater_elem", out_dtype);
        compare_elem("float_greater_elem", Cmp::Gt, lhs, rhs)
    }

    fn float_greater_equal(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_greater_equal", out_dtype);
        compare("float_greater_equal", Cmp::Ge, lhs, rhs)
    }

    fn float_greater_equal_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_greater_equal_elem", out_dtype);
        compare_elem("float_greater_equal_elem", Cmp::Ge, lhs, rhs)
    }

    fn float_lower(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_lower", out_dtype);
        compare("float_lower", Cmp::Lt, lhs, rhs)
    }

    fn float_lower_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_lower_elem", out_dtype);
        compare_elem("float_lower_elem", Cmp::Lt, lhs, rhs)
    }

    fn float_lower_equal(
        lhs: FloatTensor<Cann>,
        rhs: FloatTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_lower_equal", out_dtype);
        compare("float_lower_equal", Cmp::Le, lhs, rhs)
    }

    fn float_lower_equal_elem(
        lhs: FloatTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("float_lower_equal_elem", out_dtype);
        compare_elem("float_lower_equal_elem", Cmp::Le, lhs, rhs)
    }

    fn float_sum(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        sum("float_sum", tensor, None)
    }

    fn float_sum_dim(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        sum("float_sum_dim", tensor, Some(dim))
    }

    fn float_prod(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        prod("float_prod", tensor)
    }

    fn float_prod_dim(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        prod_dim("float_prod_dim", tensor, dim)
    }

    fn float_mean(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        mean("float_mean", tensor, None)
    }

    fn float_mean_dim(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        mean("float_mean_dim", tensor, Some(dim))
    }

    fn float_cumsum(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        cumsum("float_cumsum", tensor, dim)
    }

    fn float_cumprod(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        cumprod("float_cumprod", tensor, dim)
    }

    fn float_cummin(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        cum_extreme("float_cummin", tensor, dim, false)
    }

    fn float_cummax(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        cum_extreme("float_cummax", tensor, dim, true)
    }

    fn float_cast(tensor: FloatTensor<Cann>, dtype: FloatDType) -> FloatTensor<Cann> {
        cast("float_cast", tensor, fk("float_cast", dtype))
    }

    fn float_exp(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_exp", tensor, aclnn::exp)
    }

    fn float_log(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_log", tensor, aclnn::log)
    }

    fn float_log1p(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_log1p", tensor, aclnn::log1p)
    }

    fn float_powf(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_powf", lhs, rhs, aclnn::pow_tensor_tensor)
    }

    fn float_powf_scalar_impl(tensor: FloatTensor<Cann>, value: BScalar) -> FloatTensor<Cann> {
        bin_scalar("float_powf_scalar", tensor, value, aclnn::pow_tensor_scalar)
    }

    fn float_sqrt(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_sqrt", tensor, aclnn::sqrt)
    }

    fn float_abs(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_abs", tensor, aclnn::abs)
    }

    fn float_cos(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_cos", tensor, aclnn::cos)
    }

    fn float_sin(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_sin", tensor, aclnn::sin)
    }

    fn float_tan(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_tan", tensor, aclnn::tan)
    }

    fn float_cosh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_cosh", tensor, aclnn::cosh)
    }

    fn float_sinh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_sinh", tensor, aclnn::sinh)
    }

    fn float_tanh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_tanh", tensor, aclnn::tanh)
    }

    fn float_acos(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_acos", tensor, aclnn::acos)
    }

    fn float_acosh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_acosh", tensor, aclnn::acosh)
    }

    fn float_asin(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_asin", tensor, aclnn::asin)
    }

    fn float_asinh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_asinh", tensor, aclnn::asinh)
    }

    fn float_atan(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_atan", tensor, aclnn::atan)
    }

    fn float_atanh(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_atanh", tensor, aclnn::atanh)
    }

    fn float_atan2(lhs: FloatTensor<Cann>, rhs: FloatTensor<Cann>) -> FloatTensor<Cann> {
        bin("float_atan2", lhs, rhs, aclnn::atan2)
    }

    fn float_round(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_round", tensor, aclnn::round)
    }

    fn float_floor(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_floor", tensor, aclnn::floor)
    }

    fn float_ceil(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_ceil", tensor, aclnn::ceil)
    }

    fn float_trunc(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_trunc", tensor, aclnn::trunc)
    }

    fn float_erf(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_erf", tensor, aclnn::erf)
    }

    fn float_sign(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("float_sign", tensor, aclnn::sign)
    }

    fn float_cat(tensors: Vec<FloatTensor<Cann>>, dim: usize) -> FloatTensor<Cann> {
        cat("float_cat", tensors, dim)
    }

    fn float_argmax(tensor: FloatTensor<Cann>, dim: usize, out_dtype: IntDType) -> IntTensor<Cann> {
        arg(
            "float_argmax",
            tensor,
            dim,
            false,
            ik("float_argmax", out_dtype),
        )
    }

    /// `argmax(-x)`: negation is exact, so the first smallest element is the
    /// first largest of the negation.
    fn float_argmin(tensor: FloatTensor<Cann>, dim: usize, out_dtype: IntDType) -> IntTensor<Cann> {
        let n = un("float_argmin", tensor, aclnn::neg);
        arg("float_argmin", n, dim, false, ik("float_argmin", out_dtype))
    }

    fn float_argtopk(
        tensor: FloatTensor<Cann>,
        dim: usize,
        k: usize,
        out_dtype: IntDType,
    ) -> IntTensor<Cann> {
        topk(
            "float_argtopk",
            tensor,
            dim,
            k,
            ik("float_argtopk", out_dtype),
        )
        .1
    }

    fn float_topk(tensor: FloatTensor<Cann>, dim: usize, k: usize) -> FloatTensor<Cann> {
        topk("float_topk", tensor, dim, k, Kind::I64).0
    }

    fn float_max(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        max("float_max", tensor, None)
    }

    fn float_max_dim(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        max("float_max_dim", tensor, Some(dim))
    }

    fn float_max_dim_with_indices(
        tensor: FloatTensor<Cann>,
        dim: usize,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Cann>, IntTensor<Cann>) {
        let i = arg(
            "float_max_dim_with_indices",
            tensor.clone(),
            dim,
            false,
            ik("float_max_dim_with_indices", indices_dtype),
        );
        (max("float_max_dim_with_indices", tensor, Some(dim)), i)
    }

    /// `-amax(-x)` (negation is exact for floats).
    fn float_min(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        let n = un("float_min", tensor, aclnn::neg);
        un("float_min", max("float_min", n, None), aclnn::neg)
    }

    /// `-amax(-x)` along `dim`.
    fn float_min_dim(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        let n = un("float_min_dim", tensor, aclnn::neg);
        un(
            "float_min_dim",
            max("float_min_dim", n, Some(dim)),
            aclnn::neg,
        )
    }

    fn float_min_dim_with_indices(
        tensor: FloatTensor<Cann>,
        dim: usize,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Cann>, IntTensor<Cann>) {
        let i = Self::float_argmin(tensor.clone(), dim, indices_dtype);
        (Self::float_min_dim(tensor, dim), i)
    }

    fn float_expand(tensor: FloatTensor<Cann>, shape: Shape) -> FloatTensor<Cann> {
        expand("float_expand", tensor, shape)
    }

    fn float_sort(tensor: FloatTensor<Cann>, dim: usize, descending: bool) -> FloatTensor<Cann> {
        sort("float_sort", tensor, dim, descending, Kind::I64).0
    }

    fn float_sort_with_indices(
        tensor: FloatTensor<Cann>,
        dim: usize,
        descending: bool,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Cann>, IntTensor<Cann>) {
        sort(
            "float_sort_with_indices",
            tensor,
            dim,
            descending,
            ik("float_sort_with_indices", indices_dtype),
        )
    }

    fn float_argsort(
        tensor: FloatTensor<Cann>,
        dim: usize,
        descending: bool,
        out_dtype: IntDType,
    ) -> IntTensor<Cann> {
        sort(
            "float_argsort",
            tensor,
            dim,
            descending,
            ik("float_argsort", out_dtype),
        )
        .1
    }

    fn float_unfold(
        tensor: FloatTensor<Cann>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> FloatTensor<Cann> {
        unfold("float_unfold", tensor, dim, size, step)
    }

    fn float_is_nan(tensor: FloatTensor<Cann>, out_dtype: BoolDType) -> BoolTensor<Cann> {
        bk("float_is_nan", out_dtype);
        compare("float_is_nan", Cmp::Ne, tensor.clone(), tensor)
    }

    fn float_is_inf(tensor: FloatTensor<Cann>, out_dtype: BoolDType) -> BoolTensor<Cann> {
        bk("float_is_inf", out_dtype);
        ok(
            "float_is_inf",
            kernel::unary(&tensor, Some(Kind::Bool), aclnn::is_inf),
        )
    }
}
