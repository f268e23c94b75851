//! `IntTensorOps` for [`Cann`].

use super::float::{bk, fk, ik};
use super::*;
use crate::Cann;
use crate::kernel::unsupported;
use burn_backend::ops::IntTensorOps;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn_backend::{BoolDType, Distribution, FloatDType, IntDType, Scalar as BScalar};

/// The int kind of incoming data: its own when stored, else i64.
fn data_kind(data: &TensorData) -> Kind {
    Kind::of(data.dtype)
        .filter(|k| matches!(k, Kind::I64 | Kind::I32))
        .unwrap_or(Kind::I64)
}

impl IntTensorOps<Cann> for Cann {
    fn int_empty(shape: Shape, device: &CannDevice, dtype: IntDType) -> IntTensor<Cann> {
        empty("int_empty", shape, device, ik("int_empty", dtype))
    }

    fn int_into_data(
        tensor: IntTensor<Cann>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        into_data(tensor)
    }

    fn int_from_data(data: TensorData, device: &CannDevice) -> IntTensor<Cann> {
        let k = data_kind(&data);
        from_data("int_from_data", data, k, device)
    }

    fn int_device(tensor: &IntTensor<Cann>) -> CannDevice {
        tensor.device
    }

    fn int_to_device(tensor: IntTensor<Cann>, device: &CannDevice) -> IntTensor<Cann> {
        to_device("int_to_device", tensor, device)
    }

    fn int_reshape(tensor: IntTensor<Cann>, shape: Shape) -> IntTensor<Cann> {
        reshape("int_reshape", tensor, shape)
    }

    fn int_slice(tensor: IntTensor<Cann>, slices: &[Slice]) -> IntTensor<Cann> {
        slice("int_slice", tensor, slices)
    }

    fn int_slice_assign(
        tensor: IntTensor<Cann>,
        slices: &[Slice],
        value: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        slice_assign("int_slice_assign", tensor, slices, value)
    }

    fn int_into_float(tensor: IntTensor<Cann>, out_dtype: FloatDType) -> FloatTensor<Cann> {
        cast("int_into_float", tensor, fk("int_into_float", out_dtype))
    }

    fn int_mask_where(
        tensor: IntTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        mask_where("int_mask_where", tensor, mask, value)
    }

    fn int_mask_fill(
        tensor: IntTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: BScalar,
    ) -> IntTensor<Cann> {
        mask_fill("int_mask_fill", tensor, mask, value)
    }

    fn int_gather(
        dim: usize,
        tensor: IntTensor<Cann>,
        indices: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        gather("int_gather", dim, tensor, indices)
    }

    fn int_scatter_add(
        dim: usize,
        tensor: IntTensor<Cann>,
        indices: IntTensor<Cann>,
        value: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        scatter_add("int_scatter_add", dim, tensor, indices, value)
    }

    fn int_gather_nd(data: IntTensor<Cann>, indices: IntTensor<Cann>) -> IntTensor<Cann> {
        super::nd::gather_nd("int_gather_nd", data, indices)
    }

    fn int_scatter_nd(
        data: IntTensor<Cann>,
        indices: IntTensor<Cann>,
        values: IntTensor<Cann>,
        reduction: burn_backend::tensor::IndexingUpdateOp,
    ) -> IntTensor<Cann> {
        super::nd::scatter_nd("int_scatter_nd", data, indices, values, reduction)
    }

    fn int_select(
        tensor: IntTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        select("int_select", tensor, dim, indices)
    }

    fn int_select_add(
        tensor: IntTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
        value: IntTensor<Cann>,
    ) -> IntTensor<Cann> {
        select_add("int_select_add", tensor, dim, indices, value)
    }

    fn int_cat(tensors: Vec<IntTensor<Cann>>, dim: usize) -> IntTensor<Cann> {
        cat("int_cat", tensors, dim)
    }

    fn int_equal(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_equal", out_dtype);
        compare("int_equal", Cmp::Eq, lhs, rhs)
    }

    fn int_not_equal(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_not_equal", out_dtype);
        compare("int_not_equal", Cmp::Ne, lhs, rhs)
    }

    fn int_equal_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_equal_elem", out_dtype);
        compare_elem("int_equal_elem", Cmp::Eq, lhs, rhs)
    }

    fn int_not_equal_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_not_equal_elem", out_dtype);
        compare_elem("int_not_equal_elem", Cmp::Ne, lhs, rhs)
    }

    fn int_greater(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_greater", out_dtype);
        compare("int_greater", Cmp::Gt, lhs, rhs)
    }

    fn int_greater_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_greater_elem", out_dtype);
        compare_elem("int_greater_elem", Cmp::Gt, lhs, rhs)
    }

    fn int_greater_equal(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_greater_equal", out_dtype);
        compare("int_greater_equal", Cmp::Ge, lhs, rhs)
    }

    fn int_greater_equal_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_greater_equal_elem", out_dtype);
        compare_elem("int_greater_equal_elem", Cmp::Ge, lhs, rhs)
    }

    fn int_lower(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_lower", out_dtype);
        compare("int_lower", Cmp::Lt, lhs, rhs)
    }

    fn int_lower_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_lower_elem", out_dtype);
        compare_elem("int_lower_elem", Cmp::Lt, lhs, rhs)
    }

    fn int_lower_equal(
        lhs: IntTensor<Cann>,
        rhs: IntTensor<Cann>,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_lower_equal", out_dtype);
        compare("int_lower_equal", Cmp::Le, lhs, rhs)
    }

    fn int_lower_equal_elem(
        lhs: IntTensor<Cann>,
        rhs: BScalar,
        out_dtype: BoolDType,
    ) -> BoolTensor<Cann> {
        bk("int_lower_equal_elem", out_dtype);
        compare_elem("int_lower_equal_elem", Cmp::Le, lhs, rhs)
    }

    fn int_add(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("int_add", lhs, rhs, add)
    }

    fn int_add_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("int_add_scalar", lhs, rhs, adds)
    }

    fn int_clamp_min(tensor: IntTensor<Cann>, min: BScalar) -> IntTensor<Cann> {
        clamp("int_clamp_min", tensor, Some(min), None)
    }

    fn int_clamp_max(tensor: IntTensor<Cann>, max: BScalar) -> IntTensor<Cann> {
        clamp("int_clamp_max", tensor, None, Some(max))
    }

    fn int_clamp(tensor: IntTensor<Cann>, min: BScalar, max: BScalar) -> IntTensor<Cann> {
        clamp("int_clamp", tensor, Some(min), Some(max))
    }

    fn int_sub(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("int_sub", lhs, rhs, sub)
    }

    fn int_sub_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("int_sub_scalar", lhs, rhs, subs)
    }

    fn int_mul(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("int_mul", lhs, rhs, aclnn::mul)
    }

    fn int_mul_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("int_mul_scalar", lhs, rhs, aclnn::muls)
    }

    fn int_div(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        int_div(lhs, rhs)
    }

    fn int_div_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        let device = lhs.device;
        let k = lhs.kind();
        let r = full("int_div_scalar", Shape::from(vec![1]), &device, k, &rhs);
        int_div(lhs, r)
    }

    fn int_remainder(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("int_remainder", lhs, rhs, aclnn::remainder_tensor_tensor)
    }

    fn int_remainder_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar(
            "int_remainder_scalar",
            lhs,
            rhs,
            aclnn::remainder_tensor_scalar,
        )
    }

    fn int_matmul(_lhs: IntTensor<Cann>, _rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        unsupported(
            "int_matmul",
            "CANN's aclnnMatmul takes f32, f16 and bf16 only",
        )
    }

    fn int_neg(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        un("int_neg", tensor, aclnn::neg)
    }

    fn int_zeros(shape: Shape, device: &CannDevice, dtype: IntDType) -> IntTensor<Cann> {
        full(
            "int_zeros",
            shape,
            device,
            ik("int_zeros", dtype),
            &BScalar::Int(0),
        )
    }

    fn int_ones(shape: Shape, device: &CannDevice, dtype: IntDType) -> IntTensor<Cann> {
        full(
            "int_ones",
            shape,
            device,
            ik("int_ones", dtype),
            &BScalar::Int(1),
        )
    }

    fn int_full(
        shape: Shape,
        fill_value: BScalar,
        device: &CannDevice,
        dtype: IntDType,
    ) -> IntTensor<Cann> {
        full(
            "int_full",
            shape,
            device,
            ik("int_full", dtype),
            &fill_value,
        )
    }

    fn int_sum(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        sum("int_sum", tensor, None)
    }

    fn int_sum_dim(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        sum("int_sum_dim", tensor, Some(dim))
    }

    fn int_prod(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        prod("int_prod", tensor)
    }

    fn int_prod_dim(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        prod_dim("int_prod_dim", tensor, dim)
    }

    fn int_mean_dim(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        // Burn's integer mean: the sum divided, truncating.
        let n = tensor.shape.get(dim).copied().unwrap_or(1).max(1) as i64;
        let s = sum("int_mean_dim", tensor, Some(dim));
        Self::int_div_scalar(s, BScalar::Int(n))
    }

    fn int_cumsum(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        cumsum("int_cumsum", tensor, dim)
    }

    fn int_cumprod(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        cumprod("int_cumprod", tensor, dim)
    }

    fn int_cummin(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        cum_extreme("int_cummin", tensor, dim, false)
    }

    fn int_cummax(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        cum_extreme("int_cummax", tensor, dim, true)
    }

    fn int_argmax(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        let k = tensor.kind();
        arg("int_argmax", tensor, dim, false, k)
    }

    fn int_argtopk(tensor: IntTensor<Cann>, dim: usize, k: usize) -> IntTensor<Cann> {
        let kind = tensor.kind();
        topk("int_argtopk", tensor, dim, k, kind).1
    }

    fn int_argmin(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        let k = tensor.kind();
        arg("int_argmin", tensor, dim, true, k)
    }

    fn int_max(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        max("int_max", tensor, None)
    }

    fn int_max_dim(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        max("int_max_dim", tensor, Some(dim))
    }

    fn int_min(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        min("int_min", tensor, None)
    }

    fn int_min_dim(tensor: IntTensor<Cann>, dim: usize) -> IntTensor<Cann> {
        min("int_min_dim", tensor, Some(dim))
    }

    fn int_abs(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        un("int_abs", tensor, aclnn::abs)
    }

    fn int_swap_dims(tensor: IntTensor<Cann>, dim1: usize, dim2: usize) -> IntTensor<Cann> {
        swap_dims("int_swap_dims", tensor, dim1, dim2)
    }

    fn int_permute(tensor: IntTensor<Cann>, axes: &[usize]) -> IntTensor<Cann> {
        permute("int_permute", tensor, axes)
    }

    fn int_flip(tensor: IntTensor<Cann>, axes: &[usize]) -> IntTensor<Cann> {
        flip("int_flip", tensor, axes)
    }

    fn int_random(
        shape: Shape,
        distribution: Distribution,
        device: &CannDevice,
        dtype: IntDType,
    ) -> IntTensor<Cann> {
        random(
            "int_random",
            shape,
            distribution,
            device,
            ik("int_random", dtype),
        )
    }

    fn int_expand(tensor: IntTensor<Cann>, shape: Shape) -> IntTensor<Cann> {
        expand("int_expand", tensor, shape)
    }

    fn int_sort(tensor: IntTensor<Cann>, dim: usize, descending: bool) -> IntTensor<Cann> {
        sort("int_sort", tensor, dim, descending, Kind::I64).0
    }

    fn int_sort_with_indices(
        tensor: IntTensor<Cann>,
        dim: usize,
        descending: bool,
    ) -> (IntTensor<Cann>, IntTensor<Cann>) {
        let k = tensor.kind();
        sort("int_sort_with_indices", tensor, dim, descending, k)
    }

    fn int_argsort(tensor: IntTensor<Cann>, dim: usize, descending: bool) -> IntTensor<Cann> {
        let k = tensor.kind();
        sort("int_argsort", tensor, dim, descending, k).1
    }

    fn bitwise_and(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("bitwise_and", lhs, rhs, aclnn::bitwise_and_tensor)
    }

    fn bitwise_and_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("bitwise_and_scalar", lhs, rhs, aclnn::bitwise_and_scalar)
    }

    fn bitwise_or(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("bitwise_or", lhs, rhs, aclnn::bitwise_or_tensor)
    }

    fn bitwise_or_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("bitwise_or_scalar", lhs, rhs, aclnn::bitwise_or_scalar)
    }

    fn bitwise_xor(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("bitwise_xor", lhs, rhs, aclnn::bitwise_xor_tensor)
    }

    fn bitwise_xor_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        bin_scalar("bitwise_xor_scalar", lhs, rhs, aclnn::bitwise_xor_scalar)
    }

    fn bitwise_not(tensor: IntTensor<Cann>) -> IntTensor<Cann> {
        un("bitwise_not", tensor, aclnn::bitwise_not)
    }

    fn bitwise_left_shift(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("bitwise_left_shift", lhs, rhs, aclnn::left_shift)
    }

    fn bitwise_left_shift_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        let r = full(
            "bitwise_left_shift_scalar",
            Shape::from(vec![1]),
            &lhs.device.clone(),
            lhs.kind(),
            &rhs,
        );
        bin("bitwise_left_shift_scalar", lhs, r, aclnn::left_shift)
    }

    fn bitwise_right_shift(lhs: IntTensor<Cann>, rhs: IntTensor<Cann>) -> IntTensor<Cann> {
        bin("bitwise_right_shift", lhs, rhs, aclnn::right_shift)
    }

    fn bitwise_right_shift_scalar(lhs: IntTensor<Cann>, rhs: BScalar) -> IntTensor<Cann> {
        let r = full(
            "bitwise_right_shift_scalar",
            Shape::from(vec![1]),
            &lhs.device.clone(),
            lhs.kind(),
            &rhs,
        );
        bin("bitwise_right_shift_scalar", lhs, r, aclnn::right_shift)
    }

    fn int_cast(tensor: IntTensor<Cann>, dtype: IntDType) -> IntTensor<Cann> {
        cast("int_cast", tensor, ik("int_cast", dtype))
    }

    fn int_unfold(
        tensor: IntTensor<Cann>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> IntTensor<Cann> {
        unfold("int_unfold", tensor, dim, size, step)
    }
}

/// Burn's integer division (truncating, as Rust's `/`): `aclnnDiv` into
/// an output of the operands' integer type.
fn int_div(lhs: CannTensor, rhs: CannTensor) -> CannTensor {
    bin("int_div", lhs, rhs, aclnn::div)
}
