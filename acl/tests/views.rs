//! Typed operators over views: strided, sliced, transposed and broadcast
//! operands and outputs give the host's answer, write only what they
//! cover, and views that would reach outside their memory (or an output
//! that reaches an element twice) are refused with the exact error.

use acl::tensor::{AsView, AsViewMut};
use acl::{Device, Error, Stream, Tensor, TensorView, TensorViewMut, ops};

fn stream() -> (Device, Stream) {
    cann_sim::install().unwrap();
    let rt = acl::Runtime::init().unwrap();
    let npu = Device::new(&rt, 0).unwrap();
    let s = npu.new_stream().unwrap();
    (npu, s)
}

fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

fn reason(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

#[test]
fn narrow_select_and_permute_read_the_elements_numpy_would() {
    let (_npu, s) = stream();
    // x[i, j, k] = 12 i + 4 j + k, shape [2, 3, 4].
    let x = Tensor::from_host(&s, &iota(24), &[2, 3, 4]).unwrap();
    let v = x.view();
    assert_eq!(
        v.narrow(2, 1, 2).unwrap().to_host_vec(&s).unwrap(),
        [
            1.0, 2.0, 5.0, 6.0, 9.0, 10.0, 13.0, 14.0, 17.0, 18.0, 21.0, 22.0
        ]
    );
    let row = v.select(0, 1).unwrap().select(0, 2).unwrap();
    assert_eq!(row.shape(), [4]);
    assert_eq!(row.offset(), 20);
    assert_eq!(row.to_host_vec(&s).unwrap(), [20.0, 21.0, 22.0, 23.0]);
    let p = v.permute(&[2, 0, 1]).unwrap();
    assert_eq!((p.shape(), p.strides()), (&[4, 2, 3][..], &[1, 12, 4][..]));
    assert!(!p.is_contiguous());
    let host: Vec<f32> = (0..4)
        .flat_map(|k| (0..2).flat_map(move |i| (0..3).map(move |j| (12 * i + 4 * j + k) as f32)))
        .collect();
    assert_eq!(p.to_host_vec(&s).unwrap(), host);
    // A zero-length narrowing is an empty view, not an error.
    assert!(v.narrow(1, 3, 0).unwrap().is_empty());
}

#[test]
fn matmul_reads_transposed_and_sliced_operands_in_place() {
    let (_npu, s) = stream();
    // a = [[0, 1, 2], [3, 4, 5]], b = [[0..4], [4..8], [8..12]].
    let a = Tensor::from_host(&s, &iota(6), &[2, 3]).unwrap();
    let b = Tensor::from_host(&s, &iota(12), &[3, 4]).unwrap();
    // aᵀ (3×2) @ a[:, :2]... use aᵀ @ [first two columns of b's first 2 rows]
    let at = a.view().transpose(0, 1).unwrap();
    let b2 = b.view().narrow(0, 0, 2).unwrap().narrow(1, 1, 2).unwrap(); // [[1, 2], [5, 6]]
    let mut c = Tensor::<f32>::zeros(&s, &[3, 2]).unwrap();
    ops::matmul(&s, &at, &b2, &mut c).unwrap();
    // aᵀ = [[0, 3], [1, 4], [2, 5]].
    let want = [15.0, 18.0, 21.0, 26.0, 27.0, 34.0];
    assert_eq!(c.to_host_vec().unwrap(), want);
    // The same through matmul_t, which makes the transposed view itself.
    let b2c = b2.to_tensor(&s).unwrap();
    ops::matmul_t(&s, &a, true, &b2c, false, &mut c).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), want);
}

#[test]
fn an_output_view_writes_only_the_elements_it_covers() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &[-1.0f32, 2.0, -3.0, 4.0], &[2, 2]).unwrap();
    let mut y = Tensor::from_host(&s, &[9.0f32; 12], &[3, 4]).unwrap();
    // Rows 1..3, columns 1..3 of y.
    let mut window = y
        .view_mut()
        .narrow(0, 1, 2)
        .unwrap()
        .narrow(1, 1, 2)
        .unwrap();
    ops::relu(&s, &x, &mut window).unwrap();
    // Every other column of row 0, through explicit strides.
    let mut whole = y.buffer_mut();
    let mut every_other = TensorViewMut::strided(&mut whole, &[2], &[2], 0).unwrap();
    ops::fill(&s, -5.0f32, &mut every_other).unwrap();
    assert_eq!(
        y.to_host_vec().unwrap(),
        [-5.0, 9.0, -5.0, 9.0, 9.0, 0.0, 2.0, 9.0, 9.0, 0.0, 4.0, 9.0]
    );
}

#[test]
fn a_kv_cache_slot_is_written_through_a_narrowed_view() {
    let (_npu, s) = stream();
    // cache[layer=1][pos][dim], 4 positions of 3; write position 2.
    let mut cache = Tensor::<f32>::zeros(&s, &[1, 4, 3]).unwrap();
    let k = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0], &[1, 1, 3]).unwrap();
    ops::copy(&s, &k, &mut cache.view_mut().narrow(1, 2, 1).unwrap()).unwrap();
    // A broadcast source: one value into position 0's three dims.
    let one = Tensor::from_host(&s, &[7.0f32], &[1]).unwrap();
    ops::copy(&s, &one, &mut cache.view_mut().select(1, 0).unwrap()).unwrap();
    assert_eq!(
        cache.to_host_vec().unwrap(),
        [7.0, 7.0, 7.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn a_broadcast_view_repeats_an_input_with_stride_zero() {
    let (_npu, s) = stream();
    let bias = Tensor::from_host(&s, &[10.0f32, 20.0, 30.0], &[3]).unwrap();
    let wide = bias.view().broadcast_to(&[2, 3]).unwrap();
    assert_eq!(wide.strides(), [0, 1]);
    let x = Tensor::from_host(&s, &iota(6), &[2, 3]).unwrap();
    let mut out = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    ops::add(&s, &x, &wide, &mut out).unwrap();
    assert_eq!(
        out.to_host_vec().unwrap(),
        [10.0, 21.0, 32.0, 13.0, 24.0, 35.0]
    );
    assert_eq!(
        reason(bias.view().broadcast_to(&[3, 2]).unwrap_err()),
        (
            "TensorView::broadcast_to",
            "shape [3] does not broadcast to [3, 2]".into()
        )
    );
}

#[test]
fn unary_reduce_and_softmax_take_strided_views() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &iota(6), &[2, 3]).unwrap();
    let xt = x.view().transpose(0, 1).unwrap(); // [[0, 3], [1, 4], [2, 5]]
    let mut sums = Tensor::<f32>::zeros(&s, &[3]).unwrap();
    ops::reduce_sum(&s, &xt, &[1], false, &mut sums).unwrap();
    assert_eq!(sums.to_host_vec().unwrap(), [3.0, 5.0, 7.0]);
    let mut all = Tensor::<f32>::zeros(&s, &[]).unwrap();
    ops::reduce_sum(&s, &xt, &[], false, &mut all).unwrap();
    assert_eq!(all.to_host_vec().unwrap(), [15.0]);
    let mut neg = Tensor::<f32>::zeros(&s, &[3, 2]).unwrap();
    ops::neg(&s, &xt, &mut neg).unwrap();
    assert_eq!(
        neg.to_host_vec().unwrap(),
        [-0.0, -3.0, -1.0, -4.0, -2.0, -5.0]
    );
    let mut p = Tensor::<f32>::zeros(&s, &[3, 2]).unwrap();
    ops::softmax(&s, &xt, -1, &mut p).unwrap();
    let p = p.to_host_vec().unwrap();
    let e = 1.0 / (1.0 + 3f32.exp());
    for row in p.chunks(2) {
        assert!(
            (row[0] - e).abs() < 1e-6 && (row[1] - (1.0 - e)).abs() < 1e-6,
            "{p:?}"
        );
    }
}

#[test]
fn views_that_reach_outside_their_memory_are_refused() {
    let (_npu, s) = stream();
    let mut buf = s.clone_from_host(&iota(10)).unwrap();
    let cases: [(&[usize], &[usize], usize, &str); 4] = [
        (
            &[2, 5],
            &[5, 1],
            1,
            "the view [2, 5] (strides [5, 1], offset 1) reaches beyond the memory's 10 elements",
        ),
        (
            &[3, 4],
            &[4, 1],
            0,
            "the view [3, 4] (strides [4, 1], offset 0) reaches beyond the memory's 10 elements",
        ),
        (
            &[2, 2],
            &[usize::MAX, 1],
            0,
            "the view [2, 2] (strides [18446744073709551615, 1], offset 0) reaches beyond the \
             memory's 10 elements",
        ),
        (&[2], &[1, 1], 0, "1 dimensions but 2 strides"),
    ];
    for (shape, strides, offset, want) in cases {
        let e = TensorView::strided(&buf, shape, strides, offset).unwrap_err();
        assert_eq!(reason(e), ("TensorView::strided", want.to_string()));
    }
    // The element just past the end: one element too far.
    TensorView::strided(&buf, &[3, 3], &[3, 1], 1).unwrap();
    assert!(TensorView::strided(&buf, &[3, 3], &[3, 1], 2).is_err());
    // Contiguous views must cover the memory exactly.
    assert_eq!(
        reason(TensorView::new(&buf, &[3, 3]).unwrap_err()),
        (
            "TensorView::new",
            "shape [3, 3] (9 elements) does not cover the memory's 10 elements".into()
        )
    );
    assert_eq!(
        reason(TensorViewMut::new(&mut buf, &[1; 9]).unwrap_err()),
        (
            "TensorViewMut::new",
            "9 dimensions; at most 8 (aclnn's aclTensor limit)".into()
        )
    );
    // A view of a slice stays inside the slice: the buffer's other elements
    // are out of its reach.
    let part = buf.slice(2..6).unwrap();
    let e = TensorView::strided(&part, &[5], &[1], 0).unwrap_err();
    assert_eq!(
        reason(e).1,
        "the view [5] (strides [1], offset 0) reaches beyond the memory's 4 elements"
    );
    assert_eq!(
        TensorView::new(&part, &[4])
            .unwrap()
            .to_host_vec(&s)
            .unwrap(),
        [2.0, 3.0, 4.0, 5.0]
    );
}

#[test]
fn an_output_view_that_reaches_an_element_twice_is_refused() {
    let (_npu, s) = stream();
    let mut buf = s.alloc_zeros::<f32>(8).unwrap();
    for (shape, strides) in [
        (&[2, 2][..], &[1, 1][..]),
        (&[3][..], &[0][..]),
        (&[2, 3], &[2, 1]),
    ] {
        let e = TensorViewMut::strided(&mut buf, shape, strides, 0).unwrap_err();
        assert_eq!(
            reason(e),
            (
                "TensorViewMut::strided",
                format!(
                    "shape {shape:?} with strides {strides:?} reaches some elements twice; an \
                     output view must not (only inputs may broadcast)"
                )
            )
        );
    }
    // The same layouts are fine to read.
    TensorView::strided(&buf, &[2, 2], &[1, 1], 0).unwrap();
    // Non-overlapping interleavings are fine to write.
    TensorViewMut::strided(&mut buf, &[2, 2], &[1, 4], 0).unwrap();
    TensorViewMut::strided(&mut buf, &[4], &[2], 1).unwrap();
}

#[test]
fn view_transforms_with_bad_axes_or_shapes_are_errors_not_panics() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &iota(6), &[2, 3]).unwrap();
    let v = x.view();
    let cases = [
        (
            v.narrow(2, 0, 1).unwrap_err(),
            "TensorView::narrow",
            "axis 2 is out of range for a 2-dimensional view",
        ),
        (
            v.narrow(1, 2, 2).unwrap_err(),
            "TensorView::narrow",
            "2..2+2 is out of range for axis 1 of size 3",
        ),
        (
            v.narrow(1, usize::MAX, 2).unwrap_err(),
            "TensorView::narrow",
            "18446744073709551615..18446744073709551615+2 is out of range for axis 1 of size 3",
        ),
        (
            v.select(0, 2).unwrap_err(),
            "TensorView::select",
            "2..2+1 is out of range for axis 0 of size 2",
        ),
        (
            v.permute(&[0, 0]).unwrap_err(),
            "TensorView::permute",
            "[0, 0] is not a permutation of 0..2",
        ),
        (
            v.permute(&[1]).unwrap_err(),
            "TensorView::permute",
            "[1] is not a permutation of 0..2",
        ),
        (
            v.transpose(0, 5).unwrap_err(),
            "TensorView::transpose",
            "axis 5 is out of range for a 2-dimensional view",
        ),
        (
            v.unsqueeze(3).unwrap_err(),
            "TensorView::unsqueeze",
            "axis 3 is out of range for adding a dimension to a 2-dimensional view",
        ),
        (
            v.reshape(&[4]).unwrap_err(),
            "TensorView::reshape",
            "shape [4] (4 elements) does not hold the view's 6 elements",
        ),
        (
            v.transpose(0, 1).unwrap().reshape(&[6]).unwrap_err(),
            "TensorView::reshape",
            "a view with strides [1, 3] is not contiguous; copy it first (TensorView::to_tensor, ops::copy)",
        ),
    ];
    for (e, function, want) in cases {
        assert_eq!(reason(e), (function, want.to_string()));
    }
    // A contiguous view reshapes, and unsqueeze up to 8 dimensions.
    assert_eq!(v.reshape(&[3, 2]).unwrap().shape(), [3, 2]);
    let mut u = v;
    for _ in 0..6 {
        u = u.unsqueeze(0).unwrap();
    }
    assert_eq!(u.shape(), [1, 1, 1, 1, 1, 1, 2, 3]);
    assert_eq!(
        reason(u.unsqueeze(0).unwrap_err()).1,
        "9 dimensions; at most 8 (aclnn's aclTensor limit)"
    );
}

#[test]
fn operators_check_view_shapes_before_any_c_call() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &iota(6), &[2, 3]).unwrap();
    let mut out = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    // xᵀ is [3, 2]: not the output's shape.
    let e = ops::relu(&s, &x.view().transpose(0, 1).unwrap(), &mut out).unwrap_err();
    assert_eq!(
        reason(e),
        (
            "ops::relu",
            "the output has shape [2, 3], the result has shape [3, 2]".into()
        )
    );
    let e = ops::copy(&s, &x, &mut out.view_mut().narrow(0, 0, 1).unwrap()).unwrap_err();
    assert_eq!(
        reason(e),
        (
            "ops::copy",
            "the output has shape [1, 3], the result has shape [2, 3]".into()
        )
    );
}

#[test]
fn a_view_of_a_tensor_borrows_it_so_it_outlives_no_write() {
    // What the borrow checker enforces, shown with reborrows: a writable
    // view can be lent out and used again; its read-only form is a shared
    // borrow. (Holding a `TensorView` across a write of the same tensor
    // does not compile.)
    let (_npu, s) = stream();
    let mut t = Tensor::<f32>::zeros(&s, &[4]).unwrap();
    let mut w = t.view_mut();
    ops::fill(&s, 1.0f32, &mut w.reborrow()).unwrap();
    let r = w.as_view();
    assert_eq!(r.to_host_vec(&s).unwrap(), [1.0; 4]);
    let mut w2 = w.narrow(0, 1, 2).unwrap();
    ops::fill(&s, 2.0f32, &mut w2).unwrap();
    assert_eq!(
        AsView::view(&t).to_host_vec(&s).unwrap(),
        [1.0, 2.0, 2.0, 1.0]
    );
    let _ = AsViewMut::view_mut(&mut t);
}

#[test]
fn in_place_operators_update_a_tensor_or_a_view_and_nothing_else() {
    let (_npu, s) = stream();
    let mut x = Tensor::from_host(&s, &[-2.0f32, -1.0, 0.0, 1.0, 2.0, 3.0], &[2, 3]).unwrap();
    ops::relu_(&s, &mut x).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    // A broadcast row added to every row, in place.
    let row = Tensor::from_host(&s, &[10.0f32, 20.0, 30.0], &[3]).unwrap();
    ops::add_(&s, &mut x, &row).unwrap();
    assert_eq!(
        x.to_host_vec().unwrap(),
        [10.0, 20.0, 30.0, 11.0, 22.0, 33.0]
    );
    ops::sub_(&s, &mut x, &row).unwrap();
    ops::mul_(&s, &mut x, &row).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), [0.0, 0.0, 0.0, 10.0, 40.0, 90.0]);
    ops::div_(&s, &mut x, &row).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    // Column 2 only (a strided view): the other columns keep their values.
    let mut col = x.view_mut().select(1, 2).unwrap();
    ops::muls_(&s, &mut col, -1.0f32).unwrap();
    ops::neg_(&s, &mut col.reborrow()).unwrap();
    ops::muls_(&s, &mut col, 4.0f32).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), [0.0, 0.0, 0.0, 1.0, 2.0, 12.0]);
    // The transcendental ones against the host.
    let host = [0.25f32, 0.5, 1.0, 2.0];
    type Inplace = fn(&Stream, &mut Tensor<f32>) -> acl::Result<()>;
    type Host = fn(f32) -> f32;
    let cases: [(&str, Inplace, Host); 6] = [
        ("exp_", |s, t| ops::exp_(s, t), f32::exp),
        ("log_", |s, t| ops::log_(s, t), f32::ln),
        ("sqrt_", |s, t| ops::sqrt_(s, t), f32::sqrt),
        ("rsqrt_", |s, t| ops::rsqrt_(s, t), |v| 1.0 / v.sqrt()),
        ("tanh_", |s, t| ops::tanh_(s, t), f32::tanh),
        (
            "sigmoid_",
            |s, t| ops::sigmoid_(s, t),
            |v| 1.0 / (1.0 + (-v).exp()),
        ),
    ];
    for (name, op, f) in cases {
        let mut t = Tensor::from_host(&s, &host, &[4]).unwrap();
        op(&s, &mut t).unwrap();
        for (got, v) in t.to_host_vec().unwrap().iter().zip(host) {
            assert!(
                (got - f(v)).abs() < 1e-6,
                "{name}({v}) = {got}, host {}",
                f(v)
            );
        }
    }
}

#[test]
fn an_in_place_operand_that_does_not_broadcast_to_the_target_is_refused() {
    let (_npu, s) = stream();
    let mut x = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    // [2, 1] broadcasts to [2, 3]; [2, 3] does not broadcast to [3] (the
    // result would be larger than the target).
    ops::add_(&s, &mut x, &Tensor::<f32>::zeros(&s, &[2, 1]).unwrap()).unwrap();
    let mut small = Tensor::<f32>::zeros(&s, &[3]).unwrap();
    let e = ops::add_(&s, &mut small, &x).unwrap_err();
    assert_eq!(
        reason(e),
        (
            "ops::add_",
            "the output has shape [3], the result has shape [2, 3]".into()
        )
    );
    // An integer target takes no transcendental operator: the aclnn status.
    let mut i = Tensor::from_host(&s, &[1i32, 2], &[2]).unwrap();
    let e = ops::exp_(&s, &mut i).unwrap_err();
    assert_eq!(e.code(), Some(acl::ErrorCode::Unknown(161002)), "{e}");
    assert_eq!(e.function(), Some("aclnnInplaceExpGetWorkspaceSize"));
}

#[test]
fn an_operand_on_another_device_is_refused_before_the_operator_is_planned() {
    cann_sim::install().unwrap();
    cann_sim::require_devices!(2);
    let rt = acl::Runtime::init().unwrap();
    let (d0, d1) = (Device::new(&rt, 0).unwrap(), Device::new(&rt, 1).unwrap());
    let (s0, s1) = (d0.new_stream().unwrap(), d1.new_stream().unwrap());
    let a = Tensor::from_host(&s0, &[1.0f32, -2.0], &[2]).unwrap();
    let mut c = Tensor::from_host(&s1, &[7.0f32, 7.0], &[2]).unwrap();
    let e = ops::relu(&s1, &a.view(), &mut c).unwrap_err();
    assert_eq!(
        reason(e),
        (
            "aclnnReluGetWorkspaceSize",
            "argument 0 is memory of device 0, but the stream is on device 1".into()
        )
    );
    assert_eq!(c.to_host_vec().unwrap(), [7.0, 7.0]);
}
