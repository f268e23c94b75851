//! The in-place aclnn operators of `acl::aclnn` (`add_` ... `tanh_`) on
//! cann-sim against host references: values, a broadcast `other`, strided
//! views, bad input with its exact error, and every aclnn handle released.

mod common;

use acl::aclnn::{self, Layout, Scalar, TensorArg, TensorArgMut};
use acl::{Device, Error, Stream};
use std::sync::Mutex;

/// The tests count live aclnn handles: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (common::Serial, Device, Stream) {
    let g = common::Serial::lock(&SERIAL);
    let d = common::device(0);
    let s = d.new_stream().expect("stream");
    (g, d, s)
}

/// The aclnn status and function of an error.
fn status(e: Error) -> (i32, &'static str) {
    match e {
        Error::Acl { code, function, .. } => (code.raw(), function),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

#[track_caller]
fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

type Binary = fn(&Stream, &mut TensorArgMut<'_>, &TensorArg<'_>) -> acl::Result<()>;
type Unary = fn(&Stream, &mut TensorArgMut<'_>) -> acl::Result<()>;
/// A host reference of a binary operator.
type Ref2 = fn(f32, f32) -> f32;
/// A host reference of a unary operator.
type Ref1 = fn(f32) -> f32;

const X: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
const ROW: [f32; 3] = [10.0, 20.0, 40.0];

/// `op` over `X` as [2, 3] in place, with `ROW` as a [3] `other`
/// (broadcast over the rows).
fn run_binary(s: &Stream, op: impl FnOnce(&mut TensorArgMut<'_>, &TensorArg<'_>)) -> Vec<f32> {
    let mut x = s.clone_from_host(&X).unwrap();
    let row = s.clone_from_host(&ROW).unwrap();
    {
        let mut tx = TensorArgMut::new(&mut x, &[2, 3]).unwrap();
        let tr = TensorArg::new(&row, &[3]).unwrap();
        op(&mut tx, &tr);
    }
    // `other` is only read.
    assert_eq!(row.to_host_vec().unwrap(), ROW);
    x.to_host_vec().unwrap()
}

fn expect(f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    X.iter()
        .enumerate()
        .map(|(i, &a)| f(a, ROW[i % 3]))
        .collect()
}

#[test]
fn inplace_binary_operators_write_self_with_other_broadcast_to_it() {
    let (_g, _d, s) = setup();
    let cases: [(&str, Binary, Ref2); 4] = [
        (
            "add_",
            |s, x, r| aclnn::add_(s, x, r, &Scalar::new(1.0f32).unwrap()),
            |a, b| a + b,
        ),
        (
            "sub_",
            |s, x, r| aclnn::sub_(s, x, r, &Scalar::new(1.0f32).unwrap()),
            |a, b| a - b,
        ),
        ("mul_", aclnn::mul_, |a, b| a * b),
        ("div_", aclnn::div_, |a, b| a / b),
    ];
    for (name, op, f) in cases {
        let got = run_binary(&s, |x, r| op(&s, x, r).unwrap());
        assert_close(&got, &expect(f), name);
    }
    let half = Scalar::new(0.5f32).unwrap();
    let got = run_binary(&s, |x, r| aclnn::add_(&s, x, r, &half).unwrap());
    assert_close(&got, &expect(|a, b| a + 0.5 * b), "add_scaled_");
    let got = run_binary(&s, |x, r| aclnn::sub_(&s, x, r, &half).unwrap());
    assert_close(&got, &expect(|a, b| a - 0.5 * b), "sub_scaled_");
    let got = run_binary(&s, |x, _| aclnn::muls_(&s, x, &half).unwrap());
    assert_close(&got, &expect(|a, _| a * 0.5), "muls_");
}

#[test]
fn inplace_unary_operators_write_self() {
    let (_g, _d, s) = setup();
    let cases: [(&str, Unary, Ref1); 8] = [
        ("relu_", aclnn::relu_, |x| x.max(0.0)),
        ("sigmoid_", aclnn::sigmoid_, |x| 1.0 / (1.0 + (-x).exp())),
        ("exp_", aclnn::exp_, f32::exp),
        ("log_", aclnn::log_, f32::ln),
        ("sqrt_", aclnn::sqrt_, f32::sqrt),
        ("rsqrt_", aclnn::rsqrt_, |x| 1.0 / x.sqrt()),
        ("neg_", aclnn::neg_, |x| -x),
        ("tanh_", aclnn::tanh_, f32::tanh),
    ];
    // Positive values, for log and the roots; relu and neg see a negative too.
    let x = [0.25f32, 1.0, 2.0, 4.0];
    for (name, op, f) in cases {
        let input: Vec<f32> = if matches!(name, "relu_" | "neg_") {
            vec![-1.5, 0.0, 2.0, -4.0]
        } else {
            x.to_vec()
        };
        let mut m = s.clone_from_host(&input).unwrap();
        {
            let mut t = TensorArgMut::new(&mut m, &[2, 2]).unwrap();
            op(&s, &mut t).unwrap();
        }
        let want: Vec<f32> = input.iter().map(|&v| f(v)).collect();
        assert_close(&m.to_host_vec().unwrap(), &want, name);
    }
}

/// A [3] view of every other element of a buffer of 6, from element 1.
fn odd_elements() -> Layout {
    Layout {
        dims: vec![3],
        strides: vec![2],
        offset: 1,
        format: 2,
        storage_dims: vec![6],
    }
}

#[test]
fn inplace_operators_on_a_strided_view_write_only_its_elements() {
    let (_g, _d, s) = setup();
    let mut x = s.clone_from_host(&X).unwrap();
    let other = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    {
        let mut odd = TensorArgMut::with_layout(&mut x, &odd_elements()).unwrap();
        let t = TensorArg::new(&other, &[3]).unwrap();
        aclnn::add_(&s, &mut odd, &t, &Scalar::new(2.0f32).unwrap()).unwrap();
    }
    assert_eq!(x.to_host_vec().unwrap(), [1.0, 22.0, 3.0, 44.0, 5.0, 66.0]);
    {
        let mut odd = TensorArgMut::with_layout(&mut x, &odd_elements()).unwrap();
        aclnn::neg_(&s, &mut odd).unwrap();
        // A broadcast other (one element) into the strided view.
        let one = s.clone_from_host(&[2.0f32]).unwrap();
        aclnn::div_(&s, &mut odd, &TensorArg::new(&one, &[1]).unwrap()).unwrap();
    }
    assert_eq!(
        x.to_host_vec().unwrap(),
        [1.0, -11.0, 3.0, -22.0, 5.0, -33.0]
    );
}

#[test]
fn inplace_operators_refuse_bad_input_with_the_exact_status() {
    let (_g, _d, s) = setup();
    // Counted without descriptors an earlier test on this thread left cached.
    aclnn::release_cached_descriptors();
    let before = cann_sim::aclnn::live_handles();
    let mut x = s.clone_from_host(&X).unwrap();
    let four = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let big = s.clone_from_host(&[1.0f32; 12]).unwrap();
    let mut ints = s.clone_from_host(&[1i32; 6]).unwrap();
    let int_row = s.clone_from_host(&[1i32; 3]).unwrap();
    {
        let mut tx = TensorArgMut::new(&mut x, &[2, 3]).unwrap();
        // An other that does not broadcast to self_: 161002 from planning.
        let t4 = TensorArg::new(&four, &[4]).unwrap();
        let e = aclnn::add_(&s, &mut tx, &t4, &Scalar::new(1.0f32).unwrap()).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceAddGetWorkspaceSize"));
        let e = aclnn::mul_(&s, &mut tx, &t4).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceMulGetWorkspaceSize"));
        // One that broadcasts, but to a larger shape than self_'s: 161002.
        let t223 = TensorArg::new(&big, &[2, 2, 3]).unwrap();
        let e = aclnn::sub_(&s, &mut tx, &t223, &Scalar::new(1.0f32).unwrap()).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceSubGetWorkspaceSize"));
        let e = aclnn::div_(&s, &mut tx, &t223).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceDivGetWorkspaceSize"));
    }
    {
        // An int32 self_ cannot hold a float result: 161002.
        let mut ti = TensorArgMut::new(&mut ints, &[2, 3]).unwrap();
        let tf = TensorArg::new(&x, &[2, 3]).unwrap();
        let e = aclnn::add_(&s, &mut ti, &tf, &Scalar::new(1.0f32).unwrap()).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceAddGetWorkspaceSize"));
        let e = aclnn::mul_(&s, &mut ti, &tf).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceMulGetWorkspaceSize"));
        // A non-integral alpha with integer operands: 161002.
        let t1 = TensorArg::new(&int_row, &[3]).unwrap();
        let half = Scalar::new(0.5f32).unwrap();
        let e = aclnn::add_(&s, &mut ti, &t1, &half).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceAddGetWorkspaceSize"));
        // The transcendental operators take floating types only: 161002.
        let e = aclnn::exp_(&s, &mut ti).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceExpGetWorkspaceSize"));
        let e = aclnn::sqrt_(&s, &mut ti).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnInplaceSqrtGetWorkspaceSize"));
    }
    // Nothing ran: self_ is unchanged; every handle was released.
    assert_eq!(x.to_host_vec().unwrap(), X);
    assert_eq!(ints.to_host_vec().unwrap(), [1; 6]);
    aclnn::release_cached_descriptors();
    assert_eq!(cann_sim::aclnn::live_handles(), before);
}
