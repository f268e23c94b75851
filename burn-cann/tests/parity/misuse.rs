//! Bad input ends in a panic naming the op, as Burn's own backends do;
//! the public types are `Send + Sync`.

use crate::common::*;
use burn_tensor::backend::Backend;

#[test]
fn a_device_that_does_not_exist_panics_naming_it() {
    dev();
    let msg = panic_message(|| {
        let _ = Tensor::<C, 1>::zeros([2], &CannDevice::new(97));
    });
    assert!(msg.contains("burn-cann: NPU 97 cannot be opened"), "{msg}");
}

#[test]
fn a_shape_mismatch_burn_does_not_catch_names_the_op() {
    // Two-sided broadcast that does not fit, built from primitives so that
    // Burn's own checks do not stop it first.
    use burn_tensor::TensorPrimitive;
    let (a, _) = floats([2, 3], 1, 0.0, 1.0);
    let (b, _) = floats([4, 3], 2, 0.0, 1.0);
    let msg = panic_message(move || {
        let (TensorPrimitive::Float(a), TensorPrimitive::Float(b)) =
            (a.into_primitive(), b.into_primitive())
        else {
            unreachable!()
        };
        let _ = <C as burn_tensor::ops::FloatTensorOps<C>>::float_add(a, b);
    });
    assert!(
        msg.starts_with("burn-cann float_add: ") && msg.contains("do not broadcast"),
        "{msg}"
    );
}

#[test]
fn quantization_is_refused_by_name() {
    use burn_tensor::quantization::QuantScheme;
    let (a, _) = floats([2, 3], 1, 0.0, 1.0);
    let msg = panic_message(move || {
        let _ = a.quantize_dynamic(&QuantScheme::default());
    });
    assert!(
        msg.contains("is not supported: quantized tensors are not implemented"),
        "{msg}"
    );
}

#[test]
fn sync_waits_for_queued_work_and_the_backend_names_its_device() {
    let d = dev();
    let (a, _) = floats([64, 64], 3, -1.0, 1.0);
    let b = a.clone().matmul(a);
    C::sync(&d).expect("sync");
    assert_eq!(b.dims(), [64, 64]);
    assert_eq!(C::name(&d), "cann<npu:0>");
    assert!(C::device_count(0) >= 1);
}

#[test]
fn public_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Cann>();
    both::<CannDevice>();
    both::<burn_cann::CannTensor>();
    both::<burn_cann::CannQTensor>();
}

#[test]
fn views_share_memory_and_writes_copy_first() {
    let (a, an) = floats([3, 4], 4, -1.0, 1.0);
    let view = a.clone().slice([0..2, 1..3]);
    let written = view
        .clone()
        .slice_assign([0..1, 0..1], Tensor::<C, 2>::full([1, 1], 9.0, &dev()));
    // Neither the base nor the view changed.
    same(a, an.clone());
    same(view, an.clone().slice([0..2, 1..3]));
    let expect = an.clone().slice([0..2, 1..3]).slice_assign(
        [0..1, 0..1],
        Tensor::<N, 2>::full([1, 1], 9.0, &NdArrayDevice::Cpu),
    );
    same(written, expect);
}

#[test]
fn scatter_nd_with_a_multiplying_update_is_refused_by_name() {
    use burn_tensor::IndexingUpdateOp;
    let (x, _) = floats([3, 2], 1, 0.0, 1.0);
    let device = dev();
    let msg = panic_message(move || {
        let i = Tensor::<C, 2, Int>::from_data(TensorData::from([[1i64], [0]]), &device);
        let v = Tensor::<C, 2>::ones([2, 2], &device);
        let _ = x.scatter_nd(i, v, IndexingUpdateOp::Mul);
    });
    assert_eq!(
        msg,
        "burn-cann: `float_scatter_nd` is not supported: Mul updates: CANN's index operators add \
         (aclnnIndexAdd) or copy (aclnnInplaceIndexCopy) only"
    );
}
