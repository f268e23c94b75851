//! `BoolTensorOps` for [`Cann`].

use super::float::{fk, ik};
use super::*;
use crate::Cann;
use burn_backend::ops::BoolTensorOps;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn_backend::{BoolDType, FloatDType, IntDType, Scalar as BScalar};

fn bk(op: &str, d: BoolDType) -> Kind {
    Kind::expect(op, d.into())
}

impl BoolTensorOps<Cann> for Cann {
    fn bool_empty(shape: Shape, device: &CannDevice, dtype: BoolDType) -> BoolTensor<Cann> {
        empty("bool_empty", shape, device, bk("bool_empty", dtype))
    }

    fn bool_zeros(shape: Shape, device: &CannDevice, dtype: BoolDType) -> BoolTensor<Cann> {
        full(
            "bool_zeros",
            shape,
            device,
            bk("bool_zeros", dtype),
            &BScalar::Bool(false),
        )
    }

    fn bool_ones(shape: Shape, device: &CannDevice, dtype: BoolDType) -> BoolTensor<Cann> {
        full(
            "bool_ones",
            shape,
            device,
            bk("bool_ones", dtype),
            &BScalar::Bool(true),
        )
    }

    fn bool_into_data(
        tensor: BoolTensor<Cann>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        into_data(tensor)
    }

    fn bool_from_data(data: TensorData, device: &CannDevice) -> BoolTensor<Cann> {
        from_data("bool_from_data", data, Kind::Bool, device)
    }

    fn bool_into_int(tensor: BoolTensor<Cann>, out_dtype: IntDType) -> IntTensor<Cann> {
        cast("bool_into_int", tensor, ik("bool_into_int", out_dtype))
    }

    fn bool_into_float(tensor: BoolTensor<Cann>, out_dtype: FloatDType) -> FloatTensor<Cann> {
        cast("bool_into_float", tensor, fk("bool_into_float", out_dtype))
    }

    fn bool_device(tensor: &BoolTensor<Cann>) -> CannDevice {
        tensor.device
    }

    fn bool_to_device(tensor: BoolTensor<Cann>, device: &CannDevice) -> BoolTensor<Cann> {
        to_device("bool_to_device", tensor, device)
    }

    fn bool_reshape(tensor: BoolTensor<Cann>, shape: Shape) -> BoolTensor<Cann> {
        reshape("bool_reshape", tensor, shape)
    }

    fn bool_slice(tensor: BoolTensor<Cann>, slices: &[Slice]) -> BoolTensor<Cann> {
        slice("bool_slice", tensor, slices)
    }

    fn bool_slice_assign(
        tensor: BoolTensor<Cann>,
        slices: &[Slice],
        value: BoolTensor<Cann>,
    ) -> BoolTensor<Cann> {
        slice_assign("bool_slice_assign", tensor, slices, value)
    }

    fn bool_mask_where(
        tensor: BoolTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: BoolTensor<Cann>,
    ) -> BoolTensor<Cann> {
        mask_where("bool_mask_where", tensor, mask, value)
    }

    fn bool_mask_fill(
        tensor: BoolTensor<Cann>,
        mask: BoolTensor<Cann>,
        value: BScalar,
    ) -> BoolTensor<Cann> {
        mask_fill("bool_mask_fill", tensor, mask, value)
    }

    fn bool_gather(
        dim: usize,
        tensor: BoolTensor<Cann>,
        indices: IntTensor<Cann>,
    ) -> BoolTensor<Cann> {
        gather("bool_gather", dim, tensor, indices)
    }

    fn bool_scatter_or(
        dim: usize,
        tensor: BoolTensor<Cann>,
        indices: IntTensor<Cann>,
        value: BoolTensor<Cann>,
    ) -> BoolTensor<Cann> {
        // OR of bools is their sum, clamped: scatter-add in i32, then `!= 0`.
        let t = cast("bool_scatter_or", tensor, Kind::I32);
        let v = cast("bool_scatter_or", value, Kind::I32);
        let s = scatter_add("bool_scatter_or", dim, t, indices, v);
        compare_elem("bool_scatter_or", Cmp::Ne, s, BScalar::Int(0))
    }

    fn bool_select(
        tensor: BoolTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
    ) -> BoolTensor<Cann> {
        select("bool_select", tensor, dim, indices)
    }

    fn bool_select_or(
        tensor: BoolTensor<Cann>,
        dim: usize,
        indices: IntTensor<Cann>,
        value: BoolTensor<Cann>,
    ) -> BoolTensor<Cann> {
        let t = cast("bool_select_or", tensor, Kind::I32);
        let v = cast("bool_select_or", value, Kind::I32);
        let s = select_add("bool_select_or", t, dim, indices, v);
        compare_elem("bool_select_or", Cmp::Ne, s, BScalar::Int(0))
    }

    fn bool_cat(tensors: Vec<BoolTensor<Cann>>, dim: usize) -> BoolTensor<Cann> {
        cat("bool_cat", tensors, dim)
    }

    fn bool_equal(lhs: BoolTensor<Cann>, rhs: BoolTensor<Cann>) -> BoolTensor<Cann> {
        compare("bool_equal", Cmp::Eq, lhs, rhs)
    }

    fn bool_not_equal(lhs: BoolTensor<Cann>, rhs: BoolTensor<Cann>) -> BoolTensor<Cann> {
        compare("bool_not_equal", Cmp::Ne, lhs, rhs)
    }

    fn bool_equal_elem(lhs: BoolTensor<Cann>, rhs: BScalar) -> BoolTensor<Cann> {
        compare_elem("bool_equal_elem", Cmp::Eq, lhs, rhs)
    }

    fn bool_not(tensor: BoolTensor<Cann>) -> BoolTensor<Cann> {
        un("bool_not", tensor, aclnn::logical_not)
    }

    fn bool_and(lhs: BoolTensor<Cann>, rhs: BoolTensor<Cann>) -> BoolTensor<Cann> {
        bin("bool_and", lhs, rhs, aclnn::logical_and)
    }

    fn bool_or(lhs: BoolTensor<Cann>, rhs: BoolTensor<Cann>) -> BoolTensor<Cann> {
        bin("bool_or", lhs, rhs, aclnn::logical_or)
    }

    fn bool_xor(lhs: BoolTensor<Cann>, rhs: BoolTensor<Cann>) -> BoolTensor<Cann> {
        compare("bool_xor", Cmp::Ne, lhs, rhs)
    }

    fn bool_swap_dims(tensor: BoolTensor<Cann>, dim1: usize, dim2: usize) -> BoolTensor<Cann> {
        swap_dims("bool_swap_dims", tensor, dim1, dim2)
    }

    fn bool_permute(tensor: BoolTensor<Cann>, axes: &[usize]) -> BoolTensor<Cann> {
        permute("bool_permute", tensor, axes)
    }

    fn bool_flip(tensor: BoolTensor<Cann>, axes: &[usize]) -> BoolTensor<Cann> {
        flip("bool_flip", tensor, axes)
    }

    fn bool_expand(tensor: BoolTensor<Cann>, shape: Shape) -> BoolTensor<Cann> {
        expand("bool_expand", tensor, shape)
    }

    fn bool_unfold(
        tensor: BoolTensor<Cann>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> BoolTensor<Cann> {
        unfold("bool_unfold", tensor, dim, size, step)
    }
}
