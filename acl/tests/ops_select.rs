//! The typed tensor-core operators of `acl::ops`: comparisons and
//! predicates into `Bool` tensors, selection, clamping, gather/scatter/
//! index_add/flip, and the unary and binary math added beside `add`/`exp`;
//! values against host references, and each misuse's exact error.

use acl::memory::Bool;
use acl::{Device, Runtime, Stream, Tensor, ops};

fn stream() -> (Device, Stream) {
    cann_sim::install().expect("cann-sim installs");
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    let s = npu.new_stream().unwrap();
    (npu, s)
}

fn t<T: acl::memory::Element>(s: &Stream, data: &[T], shape: &[usize]) -> Tensor<T> {
    Tensor::from_host(s, data, shape).unwrap()
}

fn bools(v: Vec<Bool>) -> Vec<bool> {
    v.into_iter().map(bool::from).collect()
}

#[test]
fn comparisons_broadcast_into_bool_tensors() {
    let (_d, s) = stream();
    let a = t(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = t(&s, &[2.0f32, 2.0, 7.0], &[3]);
    let check = |got: Tensor<Bool>, want: [bool; 6]| {
        assert_eq!(got.shape(), &[2, 3]);
        assert_eq!(bools(got.to_host_vec().unwrap()), want);
    };
    check(
        ops::eq_new(&s, &a, &b).unwrap(),
        [false, true, false, false, false, false],
    );
    check(
        ops::ne_new(&s, &a, &b).unwrap(),
        [true, false, true, true, true, true],
    );
    check(
        ops::gt_new(&s, &a, &b).unwrap(),
        [false, false, false, true, true, false],
    );
    check(
        ops::ge_new(&s, &a, &b).unwrap(),
        [false, true, false, true, true, false],
    );
    check(
        ops::lt_new(&s, &a, &b).unwrap(),
        [true, false, true, false, false, true],
    );
    check(
        ops::le_new(&s, &a, &b).unwrap(),
        [true, true, true, false, false, true],
    );
    let gt = ops::gt_new(&s, &a, &b).unwrap();
    let lt = ops::lt_new(&s, &a, &b).unwrap();
    check(
        ops::logical_or_new(&s, &gt, &lt).unwrap(),
        [true, false, true, true, true, true],
    );
    check(ops::logical_and_new(&s, &gt, &lt).unwrap(), [false; 6]);
    let not = ops::logical_not_new(&s, &gt).unwrap();
    assert_eq!(
        bools(not.to_host_vec().unwrap()),
        [true, true, true, false, false, true]
    );
}

#[test]
fn predicates_find_infinities_and_non_finite_values() {
    let (_d, s) = stream();
    let x = t(&s, &[1.0f32, f32::INFINITY, f32::NAN, -f32::INFINITY], &[4]);
    let inf = ops::is_inf_new(&s, &x).unwrap();
    assert_eq!(
        bools(inf.to_host_vec().unwrap()),
        [false, true, false, true]
    );
    let fin = ops::is_finite_new(&s, &x).unwrap();
    assert_eq!(
        bools(fin.to_host_vec().unwrap()),
        [true, false, false, false]
    );
}

#[test]
fn where_picks_by_a_broadcast_condition_and_clamp_bounds() {
    let (_d, s) = stream();
    let cond = t(&s, &[Bool::TRUE, Bool::from(false)], &[2, 1]);
    let a = t(&s, &[1i32, 2, 3], &[3]);
    let b = t(&s, &[-1i32], &[1]);
    let w = ops::where_new(&s, &cond, &a, &b).unwrap();
    assert_eq!(w.shape(), &[2, 3]);
    assert_eq!(w.to_host_vec().unwrap(), [1, 2, 3, -1, -1, -1]);
    let x = t(&s, &[-2.0f32, 0.5, 3.0], &[3]);
    let c = ops::clamp_new(&s, &x, -1.0, 1.0).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [-1.0, 0.5, 1.0]);
}

#[test]
fn gather_scatter_add_index_add_and_flip_match_torch() {
    let (_d, s) = stream();
    let x = t(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let idx = t(&s, &[2i64, 0, 1, 1], &[2, 2]);
    // torch.gather(x, 1, [[2, 0], [1, 1]]) = [[3, 1], [5, 5]]
    let g = ops::gather_new(&s, &x, 1, &idx).unwrap();
    assert_eq!(g.to_host_vec().unwrap(), [3.0, 1.0, 5.0, 5.0]);
    // scatter_add: duplicates accumulate.
    let src = t(&s, &[10.0f32, 20.0, 30.0, 40.0], &[2, 2]);
    let sa = ops::scatter_add_new(&s, &x, 1, &idx, &src).unwrap();
    assert_eq!(sa.to_host_vec().unwrap(), [21.0, 2.0, 13.0, 4.0, 75.0, 6.0]);
    // index_add along 0 with alpha 2: row 1 += 2 · [1, 1, 1].
    let rows = t(&s, &[1i64], &[1]);
    let ones = t(&s, &[1.0f32; 3], &[1, 3]);
    let mut out = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    ops::index_add(&s, &x, 0, &rows, &ones, 2.0, &mut out).unwrap();
    assert_eq!(out.to_host_vec().unwrap(), [1.0, 2.0, 3.0, 6.0, 7.0, 8.0]);
    let f = ops::flip_new(&s, &x, &[0, 1]).unwrap();
    assert_eq!(f.to_host_vec().unwrap(), [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
}

#[test]
fn the_new_math_operators_compute_like_the_host() {
    let (_d, s) = stream();
    let x = t(&s, &[-1.5f32, -0.5, 0.5, 2.5], &[4]);
    let close = |got: Vec<f32>, want: Vec<f32>| {
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
    };
    let host = [-1.5f32, -0.5, 0.5, 2.5];
    close(
        ops::floor_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(f32::floor).to_vec(),
    );
    close(
        ops::ceil_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(f32::ceil).to_vec(),
    );
    close(
        ops::trunc_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(f32::trunc).to_vec(),
    );
    // Half to even: -1.5 → -2, -0.5 → -0, 0.5 → 0, 2.5 → 2.
    close(
        ops::round_new(&s, &x).unwrap().to_host_vec().unwrap(),
        vec![-2.0, -0.0, 0.0, 2.0],
    );
    close(
        ops::sign_new(&s, &x).unwrap().to_host_vec().unwrap(),
        vec![-1.0, -1.0, 1.0, 1.0],
    );
    close(
        ops::reciprocal_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(|v| 1.0 / v).to_vec(),
    );
    close(
        ops::atan_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(f32::atan).to_vec(),
    );
    close(
        ops::sinh_new(&s, &x).unwrap().to_host_vec().unwrap(),
        host.map(f32::sinh).to_vec(),
    );
    let y = t(&s, &[2.0f32, 2.0, 2.0, 2.0], &[4]);
    close(
        ops::pow_new(&s, &y, &x).unwrap().to_host_vec().unwrap(),
        host.map(|v| 2f32.powf(v)).to_vec(),
    );
    close(
        ops::atan2_new(&s, &x, &y).unwrap().to_host_vec().unwrap(),
        host.map(|v| v.atan2(2.0)).to_vec(),
    );
    // Python's %: the sign of the divisor.
    close(
        ops::remainder_new(&s, &x, &y)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        vec![0.5, 1.5, 0.5, 0.5],
    );
    let a = t(&s, &[0b1100i32, 0b1010], &[2]);
    let b = t(&s, &[0b1010i32, 0b0110], &[2]);
    assert_eq!(
        ops::bitwise_and_new(&s, &a, &b)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        [0b1000, 0b0010]
    );
    assert_eq!(
        ops::bitwise_or_new(&s, &a, &b)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        [0b1110, 0b1110]
    );
    assert_eq!(
        ops::bitwise_xor_new(&s, &a, &b)
            .unwrap()
            .to_host_vec()
            .unwrap(),
        [0b0110, 0b1100]
    );
    assert_eq!(
        ops::bitwise_not_new(&s, &a).unwrap().to_host_vec().unwrap(),
        [!0b1100, !0b1010]
    );
}

#[test]
fn misuse_is_an_error_naming_the_op_and_the_shapes() {
    let (_d, s) = stream();
    let x = t(&s, &[1.0f32; 6], &[2, 3]);
    let idx3 = t(&s, &[0i64; 3], &[3]);
    let e = ops::gather_new(&s, &x, 1, &idx3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ops::gather: index has 1 dimensions and the tensor 2; they must be equal"
    );
    let big = t(&s, &[0i64; 9], &[3, 3]);
    let e = ops::gather_new(&s, &x, 1, &big).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ops::gather: index is [3, 3], larger than the tensor [2, 3] along axis 0 (only axis 1 may differ)"
    );
    let e = ops::gather_new(&s, &x, 2, &big).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ops::gather: axis 2 is out of range for a 2-dimensional tensor"
    );
    let e = ops::flip_new(&s, &x, &[1, -1]).unwrap_err();
    assert_eq!(e.to_string(), "ops::flip: axis -1 is given twice");
    let y = t(&s, &[1.0f32; 4], &[4]);
    let e = ops::eq_new(&s, &x, &y).unwrap_err();
    assert!(e.to_string().starts_with("ops::eq: "), "{e}");
    let mut small = Tensor::<Bool>::zeros(&s, &[3]).unwrap();
    let e = ops::is_inf(&s, &x, &mut small).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ops::is_inf: the output has shape [3], the result has shape [2, 3]"
    );
    let rows = t(&s, &[0i64, 1], &[2]);
    let src = t(&s, &[1.0f32; 3], &[1, 3]);
    let mut out = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    let e = ops::index_add(&s, &x, 0, &rows, &src, 1.0, &mut out).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ops::index_add: source is [1, 3]; it must be [2, 3]"
    );
}
