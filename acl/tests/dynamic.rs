//! Run-time-typed tensors (`DynTensor`, `DynView`, `DynViewMut`) and
//! `ops::dynamic` on cann-sim, and the allocating `_new` forms of the typed
//! operators: the same values as the typed calls, dtype mismatches refused
//! with the exact message, views as inputs and outputs.

mod common;

use acl::ops::{self, dynamic};
use acl::{DataType, DynTensor, DynView, DynViewMut, Error, Stream, Tensor, TensorView, aclnn};
use half::f16;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn f32s(s: &Stream, v: &[f32], shape: &[usize]) -> DynTensor {
    DynTensor::from(Tensor::from_host(s, v, shape).expect("upload"))
}

fn host_f32(d: DynTensor) -> Vec<f32> {
    Tensor::<f32>::try_from(d)
        .expect("f32")
        .to_host_vec()
        .expect("download")
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("not an InvalidArgument: {other:?}"),
    }
}

#[test]
fn binary_ops_broadcast_and_match_the_typed_calls_for_every_float_dtype() {
    let s = stream();
    let a: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
    let b = [2.0f32, -0.5, 4.0];
    let ta = Tensor::from_host(&s, &a, &[2, 3]).unwrap();
    let tb = Tensor::from_host(&s, &b, &[3]).unwrap();
    type Pair = (
        fn(&Stream, &DynView<'_>, &DynView<'_>) -> acl::Result<DynTensor>,
        fn(&Stream, &Tensor<f32>, &Tensor<f32>) -> acl::Result<Tensor<f32>>,
    );
    let pairs: [(&str, Pair); 6] = [
        ("add", (dynamic::add_new, |s, a, b| ops::add_new(s, a, b))),
        ("sub", (dynamic::sub_new, |s, a, b| ops::sub_new(s, a, b))),
        ("mul", (dynamic::mul_new, |s, a, b| ops::mul_new(s, a, b))),
        ("div", (dynamic::div_new, |s, a, b| ops::div_new(s, a, b))),
        (
            "maximum",
            (dynamic::maximum_new, |s, a, b| ops::maximum_new(s, a, b)),
        ),
        (
            "minimum",
            (dynamic::minimum_new, |s, a, b| ops::minimum_new(s, a, b)),
        ),
    ];
    for (name, (dyn_op, typed_op)) in pairs {
        let typed = typed_op(&s, &ta, &tb).unwrap();
        assert_eq!(typed.shape(), &[2, 3], "{name}");
        let want = typed.to_host_vec().unwrap();
        let host: Vec<f32> = (0..6)
            .map(|i| {
                let (x, y) = (a[i], b[i % 3]);
                match name {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "div" => x / y,
                    "maximum" => x.max(y),
                    _ => x.min(y),
                }
            })
            .collect();
        assert_eq!(want, host, "{name}: typed _new form against the host");
        for dtype in [DataType::Float, DataType::Float16, DataType::BFloat16] {
            let da = dynamic::cast_new(
                &s,
                &DynTensor::from(ta.view().to_tensor(&s).unwrap()).view(),
                dtype,
            )
            .unwrap();
            let db = dynamic::cast_new(&s, &DynView::from(tb.view()), dtype).unwrap();
            let got = dyn_op(&s, &da.view(), &db.view()).unwrap();
            assert_eq!((got.dtype(), got.shape()), (dtype, &[2, 3][..]), "{name}");
            let got = host_f32(dynamic::cast_new(&s, &got.view(), DataType::Float).unwrap());
            let tol = if dtype == DataType::Float { 0.0 } else { 0.05 };
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= tol * (1.0 + w.abs()),
                    "{name} {dtype}: {got:?} vs {want:?}"
                );
            }
        }
    }
}

#[test]
fn integer_tensors_add_through_the_same_entry() {
    let s = stream();
    let a = DynTensor::from(Tensor::from_host(&s, &[1i32, -2, 3, 40], &[4]).unwrap());
    let b = DynTensor::from(Tensor::from_host(&s, &[10i32, 20, 30, 40], &[4]).unwrap());
    let c = dynamic::add_new(&s, &a.view(), &b.view()).unwrap();
    assert_eq!(c.dtype(), DataType::Int32);
    let c = Tensor::<i32>::try_from(c).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [11, 18, 33, 80]);
}

#[test]
fn mixed_dtypes_are_refused_naming_each_operand() {
    let s = stream();
    let x = f32s(&s, &[1.0, 2.0], &[2]);
    let h = DynTensor::zeros(&s, DataType::Float16, &[2]).unwrap();
    let (f, reason) = invalid(dynamic::mul_new(&s, &x.view(), &h.view()).unwrap_err());
    assert_eq!(f, "ops::mul");
    assert_eq!(
        reason,
        "the operands must have one dtype: a is float32, b is float16 (cast one first)"
    );
    let mut out = DynTensor::zeros(&s, DataType::Int64, &[2]).unwrap();
    let (f, reason) = invalid(dynamic::exp(&s, &x.view(), &mut out.view_mut()).unwrap_err());
    assert_eq!(f, "ops::exp");
    assert_eq!(
        reason,
        "the operands must have one dtype: x is float32, out is int64 (cast one first)"
    );
    let mut y = DynTensor::zeros(&s, DataType::Float16, &[2]).unwrap();
    let (f, _) = invalid(dynamic::add_(&s, &mut y.view_mut(), &x.view()).unwrap_err());
    assert_eq!(f, "ops::add_");
    let (f, reason) = invalid(Tensor::<f32>::try_from(h).unwrap_err());
    assert_eq!(f, "Tensor::try_from");
    assert_eq!(reason, "the tensor holds float16 elements, not float32");
    let (f, _) = invalid(TensorView::<i8>::try_from(x.view()).unwrap_err());
    assert_eq!(f, "TensorView::try_from");
}

#[test]
fn shape_errors_are_the_typed_functions_errors() {
    let s = stream();
    let a = f32s(&s, &[0.0; 6], &[2, 3]);
    let b = f32s(&s, &[0.0; 4], &[4]);
    let (f, reason) = invalid(dynamic::add_new(&s, &a.view(), &b.view()).unwrap_err());
    assert_eq!(f, "ops::add");
    assert!(
        reason.contains("[2, 3]") && reason.contains("[4]"),
        "{reason}"
    );
    let (f, _) =
        invalid(dynamic::matmul_t_new(&s, &a.view(), false, &a.view(), false).unwrap_err());
    assert_eq!(f, "ops::matmul");
    let (f, reason) = invalid(dynamic::transpose_new(&s, &a.view(), &[0, 0]).unwrap_err());
    assert_eq!(f, "ops::transpose");
    assert_eq!(reason, "perm [0, 0] is not a permutation of 0..2");
    let (f, _) = invalid(dynamic::reduce_sum_new(&s, &a.view(), &[2], false).unwrap_err());
    assert_eq!(f, "ops::reduce_sum");
}

#[test]
fn reductions_softmax_and_matmuls_allocate_the_right_shapes() {
    let s = stream();
    let x = f32s(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let sum = dynamic::reduce_sum_new(&s, &x.view(), &[1], true).unwrap();
    assert_eq!(sum.shape(), &[2, 1]);
    assert_eq!(host_f32(sum), [6.0, 15.0]);
    let mean = dynamic::reduce_mean_new(&s, &x.view(), &[], false).unwrap();
    assert_eq!(mean.shape(), &[] as &[usize]);
    assert_eq!(host_f32(mean), [3.5]);
    let max = dynamic::reduce_max_new(&s, &x.view(), &[0], false).unwrap();
    assert_eq!(host_f32(max), [4.0, 5.0, 6.0]);
    let sm = host_f32(dynamic::softmax_new(&s, &x.view(), -1).unwrap());
    let z: f32 = (1.0f32.exp() + 2.0f32.exp() + 3.0f32.exp()).ln();
    assert!((sm[0] - (1.0 - z).exp()).abs() < 1e-6, "{sm:?}");
    let lsm = host_f32(dynamic::log_softmax_new(&s, &x.view(), 1).unwrap());
    assert!((lsm[2] - (3.0 - z)).abs() < 1e-5, "{lsm:?}");
    // x @ xᵀ through a transposed operand.
    let g = dynamic::matmul_t_new(&s, &x.view(), false, &x.view(), true).unwrap();
    assert_eq!(g.shape(), &[2, 2]);
    assert_eq!(host_f32(g), [14.0, 32.0, 32.0, 77.0]);
    let bx = f32s(&s, &[1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0], &[2, 2, 2]);
    let y = f32s(&s, &[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let bm = dynamic::batch_matmul_adj_new(&s, &bx.view(), false, &y.view(), false).unwrap();
    assert_eq!(bm.shape(), &[2, 2, 2]);
    assert_eq!(host_f32(bm), [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]);
    let t = dynamic::transpose_new(&s, &x.view(), &[1, 0]).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(host_f32(t), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn typed_new_forms_match_their_out_forms() {
    let s = stream();
    let a = Tensor::from_host(&s, &[1.0f32, -2.0, 3.0, -4.0], &[2, 2]).unwrap();
    let b = Tensor::from_host(&s, &[0.5f32, 0.25], &[2]).unwrap();
    let mut out = Tensor::zeros(&s, &[2, 2]).unwrap();
    ops::mul(&s, &a, &b, &mut out).unwrap();
    assert_eq!(
        ops::mul_new(&s, &a, &b).unwrap().to_host_vec().unwrap(),
        out.to_host_vec().unwrap()
    );
    ops::matmul(&s, &a, &a, &mut out).unwrap();
    assert_eq!(
        ops::matmul_new(&s, &a, &a).unwrap().to_host_vec().unwrap(),
        out.to_host_vec().unwrap()
    );
    assert_eq!(
        ops::batch_matmul_new(&s, &a, &a)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        out.to_host_vec().unwrap()
    );
    ops::relu(&s, &a, &mut out).unwrap();
    assert_eq!(
        ops::relu_new(&s, &a).unwrap().to_host_vec().unwrap(),
        out.to_host_vec().unwrap()
    );
    assert_eq!(
        ops::relu_grad_new(&s, &b, &a)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        [0.5, 0.0, 0.5, 0.0]
    );
    assert_eq!(
        ops::muls_new(&s, &a, 2.0).unwrap().to_host_vec().unwrap(),
        [2.0, -4.0, 6.0, -8.0]
    );
    let h: Tensor<f16> = ops::cast_new(&s, &a).unwrap();
    assert_eq!(h.to_host_vec().unwrap()[1], f16::from_f32(-2.0));
    let cols = ops::reduce_sum_new(&s, &a, &[0], false).unwrap();
    assert_eq!(cols.to_host_vec().unwrap(), [4.0, -6.0]);
    let sm = ops::softmax_new(&s, &a, 0).unwrap().to_host_vec().unwrap();
    assert!((sm[0] + sm[2] - 1.0).abs() < 1e-6, "{sm:?}");
    let lsm = ops::log_softmax_new(&s, &a, 0)
        .unwrap()
        .to_host_vec()
        .unwrap();
    assert!((lsm[0].exp() - sm[0]).abs() < 1e-6, "{lsm:?}");
    let t = ops::transpose_new(&s, &a, &[1, 0]).unwrap();
    assert_eq!(t.to_host_vec().unwrap(), [1.0, 3.0, -2.0, -4.0]);
    let tt = ops::matmul_t_new(&s, &a, true, &a, false).unwrap();
    let at = t.to_host_vec().unwrap();
    let av = a.to_host_vec().unwrap();
    let want: Vec<f32> = (0..4)
        .map(|ij| {
            (0..2)
                .map(|k| at[(ij / 2) * 2 + k] * av[k * 2 + ij % 2])
                .sum()
        })
        .collect();
    assert_eq!(tt.to_host_vec().unwrap(), want);
}

#[test]
fn views_transform_and_feed_operators_without_copies() {
    let s = stream();
    let x = f32s(&s, &(0..12).map(|i| i as f32).collect::<Vec<_>>(), &[3, 4]);
    // Column 1..3 of the transposed matrix: a strided view.
    let v = x.view().transpose(0, 1).unwrap().narrow(0, 1, 2).unwrap();
    assert_eq!(
        (v.shape(), v.strides(), v.offset()),
        (&[2, 3][..], &[1, 4][..], 1)
    );
    assert!(!v.is_contiguous());
    assert_eq!(
        host_f32(v.to_tensor(&s).unwrap()),
        [1.0, 5.0, 9.0, 2.0, 6.0, 10.0]
    );
    let n = dynamic::neg_new(&s, &v).unwrap();
    assert_eq!(host_f32(n), [-1.0, -5.0, -9.0, -2.0, -6.0, -10.0]);
    // Write into a slice of a larger tensor.
    let mut big = DynTensor::zeros(&s, DataType::Float, &[2, 4]).unwrap();
    let row = v.select(1, 0).unwrap(); // [1, 2]
    dynamic::copy(
        &s,
        &row.unsqueeze(0).unwrap(),
        &mut big.view_mut().narrow(1, 2, 2).unwrap(),
    )
    .unwrap();
    assert_eq!(host_f32(big), [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]);
    // Any aclnn operator takes run-time-typed views.
    let mut out = DynTensor::zeros(&s, DataType::Float, &[2, 3]).unwrap();
    aclnn::abs(
        &s,
        &dynamic::neg_new(&s, &v).unwrap().view().arg().unwrap(),
        &mut out.view_mut().arg_mut().unwrap(),
    )
    .unwrap();
    assert_eq!(host_f32(out), [1.0, 5.0, 9.0, 2.0, 6.0, 10.0]);
}

#[test]
fn in_place_fill_and_scalar_ops_convert_the_scalar_to_the_tensor_type() {
    let s = stream();
    let mut x = f32s(&s, &[1.0, 4.0, 9.0], &[3]);
    dynamic::sqrt_(&s, &mut x.view_mut()).unwrap();
    let y = f32s(&s, &[1.0, 1.0, 1.0], &[3]);
    dynamic::add_(&s, &mut x.view_mut(), &y.view()).unwrap();
    assert_eq!(
        host_f32(dynamic::muls_new(&s, &x.view(), 0.5).unwrap()),
        [1.0, 1.5, 2.0]
    );
    let mut i = DynTensor::zeros(&s, DataType::Int32, &[2, 2]).unwrap();
    dynamic::fill(&s, 7.0, &mut i.view_mut()).unwrap();
    // A whole scalar times an int32 tensor stays int32.
    let tripled = dynamic::muls_new(&s, &i.view(), 3.0).unwrap();
    assert_eq!(
        Tensor::<i32>::try_from(tripled)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        [21; 4]
    );
    assert_eq!(
        Tensor::<i32>::try_from(i).unwrap().to_host_vec().unwrap(),
        [7; 4]
    );
    let mut h = DynTensor::zeros(&s, DataType::Float16, &[2]).unwrap();
    dynamic::fill(&s, -1.5, &mut h.view_mut()).unwrap();
    let h = Tensor::<f16>::try_from(h).unwrap();
    assert_eq!(h.to_host_vec().unwrap(), [f16::from_f32(-1.5); 2]);
}

#[test]
fn zeros_of_every_dtype_have_its_size_and_round_trip_to_the_typed_tensor() {
    let s = stream();
    for d in DataType::ALL {
        let t = DynTensor::zeros(&s, d, &[2, 3]).unwrap();
        assert_eq!((t.dtype(), t.shape(), t.len()), (d, &[2, 3][..], 6), "{d}");
        assert_eq!(t.view().dtype(), d);
        let r = t.reshape(&[3, 2]).unwrap();
        assert_eq!(r.shape(), &[3, 2]);
    }
    let bytes = acl::dispatch_dtype!(DynTensor, &DynTensor::zeros(&s, DataType::Int16, &[5]).unwrap(), v => v.len() * std::mem::size_of_val(&v.to_host_vec().unwrap()[0]));
    assert_eq!(bytes, 10);
}

#[test]
fn the_math_operators_added_to_ops_dispatch_over_run_time_types() {
    let s = stream();
    let x = f32s(&s, &[-1.5, 0.25, 2.5], &[3]);
    let y = f32s(&s, &[2.0, 2.0, 2.0], &[3]);
    assert_eq!(
        host_f32(dynamic::floor_new(&s, &x.view()).unwrap()),
        [-2.0, 0.0, 2.0]
    );
    assert_eq!(
        host_f32(dynamic::pow_new(&s, &y.view(), &x.view()).unwrap())[2],
        2f32.powf(2.5)
    );
    let i = DynTensor::from(Tensor::from_host(&s, &[6i32, 5], &[2]).unwrap());
    let j = DynTensor::from(Tensor::from_host(&s, &[3i32, 3], &[2]).unwrap());
    let and = dynamic::bitwise_and_new(&s, &i.view(), &j.view()).unwrap();
    assert_eq!(and.dtype(), DataType::Int32);
    let and = Tensor::<i32>::try_from(and).unwrap().to_host_vec().unwrap();
    assert_eq!(and, [2, 1]);
    let (function, reason) = invalid(dynamic::atan2_new(&s, &x.view(), &i.view()).unwrap_err());
    assert_eq!(function, "ops::atan2");
    assert!(reason.contains("int32"), "{reason}");
}

#[test]
fn strided_views_over_a_dyn_tensor_read_the_elements_their_layout_names() {
    let s = stream();
    // Storage of six elements, viewed as a transposed 2x3, a row at an
    // offset, and a broadcast column (stride 0), for a float, an int and a
    // bool dtype.
    let vals = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    // (shape, strides, offset, the elements read).
    type Case = (&'static [usize], &'static [usize], usize, [f32; 6]);
    let cases: [Case; 3] = [
        (&[3, 2], &[1, 3], 0, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]),
        (&[2, 3], &[0, 1], 3, [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]),
        (&[3, 2], &[2, 0], 1, [1.0, 1.0, 3.0, 3.0, 5.0, 5.0]),
    ];
    for dtype in [DataType::Float, DataType::Int64, DataType::Bool] {
        let t = dynamic::cast_new(&s, &f32s(&s, &vals, &[2, 3]).view(), dtype).unwrap();
        for (shape, strides, offset, want) in cases {
            let v = DynView::strided(&t, shape, strides, offset).unwrap();
            assert_eq!(
                (v.dtype(), v.shape(), v.strides(), v.offset()),
                (dtype, shape, strides, offset)
            );
            let c = v.to_tensor(&s).unwrap();
            let got = host_f32(dynamic::cast_new(&s, &c.view(), DataType::Float).unwrap());
            let want: Vec<f32> = if dtype == DataType::Bool {
                want.iter()
                    .map(|&x| f32::from(u8::from(x != 0.0)))
                    .collect()
            } else {
                want.to_vec()
            };
            assert_eq!(got, want, "{dtype} {shape:?} {strides:?} +{offset}");
        }
    }
}

#[test]
fn strided_views_outside_the_memory_are_refused_with_the_exact_error() {
    let s = stream();
    let t = f32s(&s, &[0.0; 6], &[2, 3]);
    let (f, reason) = invalid(DynView::strided(&t, &[2, 3], &[3, 1], 1).unwrap_err());
    assert_eq!(f, "DynView::strided");
    assert_eq!(
        reason,
        "the view [2, 3] (strides [3, 1], offset 1) reaches beyond the memory's 6 elements"
    );
    let (f, reason) = invalid(DynView::strided(&t, &[2, 3], &[1], 0).unwrap_err());
    assert_eq!(f, "DynView::strided");
    assert_eq!(reason, "2 dimensions but 1 strides");
    let (f, reason) = invalid(DynView::strided(&t, &[1; 9], &[1; 9], 0).unwrap_err());
    assert_eq!(f, "DynView::strided");
    assert!(reason.contains("9"), "{reason}");
    // An empty view reaches nothing, so any offset up to the end is fine.
    let e = DynView::strided(&t, &[0, 3], &[3, 1], 6).unwrap();
    assert!(e.is_empty());
}

#[test]
fn strided_writable_views_write_only_their_elements_and_refuse_overlap() {
    let s = stream();
    let mut t = f32s(&s, &[0.0; 6], &[2, 3]);
    {
        // The middle column of the 2x3 storage.
        let mut col = DynViewMut::strided(&mut t, &[2], &[3], 1).unwrap();
        dynamic::fill(&s, 7.0, &mut col).unwrap();
    }
    assert_eq!(host_f32(t), [0.0, 7.0, 0.0, 0.0, 7.0, 0.0]);
    let mut t = f32s(&s, &[0.0; 6], &[6]);
    let (f, reason) = invalid(DynViewMut::strided(&mut t, &[2, 2], &[0, 1], 0).unwrap_err());
    assert_eq!(f, "DynViewMut::strided");
    assert_eq!(
        reason,
        "shape [2, 2] with strides [0, 1] reaches some elements twice; an output view must not \
         (only inputs may broadcast)"
    );
    let (f, _) = invalid(DynViewMut::strided(&mut t, &[7], &[1], 0).unwrap_err());
    assert_eq!(f, "DynViewMut::strided");
}

#[test]
fn uninit_tensors_have_the_dtype_and_shape_and_hold_what_an_operator_writes() {
    let s = stream();
    for dtype in [DataType::Float16, DataType::Int32, DataType::Bool] {
        // SAFETY: every element is written by the fill before it is read.
        let mut t = unsafe { DynTensor::uninit(&s, dtype, &[2, 3]) }.unwrap();
        assert_eq!((t.dtype(), t.shape(), t.len()), (dtype, &[2, 3][..], 6));
        dynamic::fill(&s, 1.0, &mut t.view_mut()).unwrap();
        let got = host_f32(dynamic::cast_new(&s, &t.view(), DataType::Float).unwrap());
        assert_eq!(got, [1.0; 6], "{dtype}");
    }
    // SAFETY: an empty tensor has no element to read.
    let e = unsafe { DynTensor::uninit(&s, DataType::Float, &[0, 4]) }.unwrap();
    assert!(e.is_empty());
    assert_eq!(e.shape(), &[0, 4]);
    // SAFETY: refused before anything is allocated.
    let err = unsafe { DynTensor::uninit(&s, DataType::Float, &[1; 9]) }.unwrap_err();
    let (f, _) = invalid(err);
    assert_eq!(f, "DynTensor::uninit");
    let huge = [usize::MAX / 2, 4];
    // SAFETY: refused before anything is allocated.
    let err = unsafe { DynTensor::uninit(&s, DataType::Float, &huge) }.unwrap_err();
    let (f, reason) = invalid(err);
    assert_eq!(f, "DynTensor::uninit");
    assert_eq!(
        reason,
        "shape [9223372036854775807, 4]: the element count overflows"
    );
}
