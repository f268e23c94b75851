//! Burn's `tests/tensor/bool/ops` modules: every bool op on `Cann` against
//! `NdArray` (exact).

use super::{Cases, Fill, binary_cases, dim_cases, index, indices, unary_cases};
use crate::common::*;

const EXACT: fn() -> Tolerance<f32> = Tolerance::default;

/// `logical` (not), `cast`, `all`/`any`, `comparison` with a scalar,
/// `mask`, `permute`/`transpose`/`flip`/`repeat`/`expand`/`reshape`,
/// `tri_mask`.
#[test]
fn burn_bool_unary_modules_match_ndarray() {
    let mut cases = Cases::new("bool logical/cast/all/any/mask/permute/flip/repeat/...");
    unary_cases! { cases, Bool, Fill::Bool, EXACT();
        "bool_not": |x| x.bool_not();
        "int": |x| x.int();
        "float": |x| x.float();
        "any": |x| x.any();
        "all": |x| x.all();
        "argwhere": |x| x.argwhere();
        "nonzero": |x| x.nonzero();
        "equal_elem": |x| x.equal_elem(true);
        "not_equal_elem": |x| x.not_equal_elem(true);
        "permute": |x| x.permute([2, 1, 0]);
        "transpose": |x| x.transpose();
        "flip": |x| x.flip([1]);
        "repeat": |x| x.repeat(&[2, 1, 2]);
        "expand": |x| x.unsqueeze_dim::<4>(2).expand([-1, -1, 3, -1]);
        "reshape": |x| x.reshape([-1, 1]);
        "mask_fill": |x| { let m = x.clone().bool_not(); x.mask_fill(m.clone(), true).bool_and(m.bool_not()) };
        "tril_mask and": |x| { let (dims, device) = (x.dims(), x.device()); x.bool_and(Tensor::<B, 3, Bool>::tril_mask(dims, 0, &device)) };
    }
    cases.finish();
}

/// `logical` (and, or, xor), `comparison` and `mask_where` between bool
/// tensors, with broadcasting.
#[test]
fn burn_bool_binary_modules_match_ndarray_with_broadcasting() {
    let mut cases = Cases::new("bool logical/comparison/mask_where");
    binary_cases! { cases, Bool, Fill::Bool, Fill::Bool, EXACT();
        "bool_and": |x, y| x.bool_and(y);
        "bool_or": |x, y| x.bool_or(y);
        "bool_xor": |x, y| x.bool_xor(y);
        "equal": |x, y| x.equal(y);
        "not_equal": |x, y| x.not_equal(y);
        "mask_where (expanded operands)": |x, y| {
            let d = super::bdims(x.dims(), y.dims());
            let (x, y) = (x.expand(d), y.expand(d));
            y.clone().bool_not().mask_where(y, x)
        };
    }
    cases.finish();
}

/// Along every dim: `all`/`any` by dim, `cat`, `stack`, `flip`,
/// `repeat_dim`, `select`, `gather_scatter` (gather), `take`, `movedim`,
/// `unfold`, `slice`.
#[test]
fn burn_bool_dim_modules_match_ndarray_over_each_dim() {
    let mut cases =
        Cases::new("bool all_dim/any_dim/cat/stack/flip/repeat_dim/select/gather/take/...");
    dim_cases! { cases, Bool, Fill::Bool, EXACT();
        "any_dim": |x, d| x.any_dim(d);
        "all_dim": |x, d| x.all_dim(d);
        "cat": |x, d| Tensor::cat(vec![x.clone(), x.bool_not()], d);
        "stack": |x, d| Tensor::stack::<4>(vec![x.clone(), x], d);
        "flip": |x, d| x.flip([d as isize]);
        "repeat_dim": |x, d| x.repeat_dim(d, 2);
        "select": |x, d| { let i = indices::<B>(&[1, 0, 1], &x.device()); x.select(d, i) };
        "gather": |x, d| { let i = index::<B, 3>(x.dims(), d, 2, &x.device()); x.gather(d, i) };
        "take": |x, d| { let i = indices::<B>(&[0, 2], &x.device()); x.take::<1, 3>(d, i) };
        "movedim": |x, d| x.movedim(d, 1);
        "unfold": |x, d| x.unfold::<4, _>(d, 2, 1);
        "slice_dim": |x, d| x.slice_dim(d, 1..3);
        "narrow": |x, d| x.narrow(d, 0, 2);
    }
    cases.finish();
}
