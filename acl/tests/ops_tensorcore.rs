//! The tensor-core operators of the training set (gather/scatter, masked
//! selection, min/argmin/max/min-with-indices, products and cumulative
//! scans, the cross product) and the activation backwards and losses,
//! through their `acl::aclnn` wrappers on cann-sim: values against host
//! references written here (torch semantics, the pages' formulas), integer
//! dtypes where the pages list them, strided views, the exact status of
//! misuse, and every backward operator checked by central finite
//! differences of its forward operator.

mod common;

use acl::aclnn::{self, IntArray, Scalar, TensorArg, TensorArgMut};
use acl::memory::{Bool, DeviceRepr, Element};
use acl::{DataType, DeviceBuffer, Error, Stream, Tensor};
use half::f16;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn up<T: DeviceRepr>(s: &Stream, v: &[T]) -> DeviceBuffer<T> {
    s.clone_from_host(v).expect("upload")
}

fn zeros<T: DeviceRepr>(s: &Stream, n: usize) -> DeviceBuffer<T> {
    s.alloc_zeros::<T>(n).expect("alloc")
}

fn arg<'a, T: Element>(b: &'a DeviceBuffer<T>, shape: &[usize]) -> TensorArg<'a> {
    TensorArg::new(b, shape).expect("tensor")
}

fn out<'a, T: Element>(b: &'a mut DeviceBuffer<T>, shape: &[usize]) -> TensorArgMut<'a> {
    TensorArgMut::new(b, shape).expect("tensor")
}

fn host<T: DeviceRepr>(b: &DeviceBuffer<T>) -> Vec<T> {
    b.to_host_vec().expect("download")
}

fn sc<T: Element>(v: T) -> Scalar {
    Scalar::new(v).expect("scalar")
}

/// The status, function and message of a refused call.
fn status(r: acl::Result<()>) -> (i32, &'static str, String) {
    match r {
        Err(Error::Acl {
            code,
            function,
            message,
            ..
        }) => (code.raw(), function, message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

/// `r` is 161002 from `function`, with a message containing `why`.
fn refused(r: acl::Result<()>, function: &str, why: &str) {
    let (code, f, msg) = status(r);
    assert_eq!((code, f), (161002, function), "{msg}");
    assert!(
        msg.contains(why),
        "{function}: {msg:?} does not say {why:?}"
    );
}

fn close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (f64::from(*g) - w).abs() <= tol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}[{i}]: got {g}, want {w}");
    }
}

// ---------------------------------------------------------------------------
// Gather, scatter, index add, masked select.
// ---------------------------------------------------------------------------

#[test]
fn gather_picks_along_dim_as_the_page_examples_do() {
    let s = stream();
    let x = up(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let i = up(&s, &[0i64, 2, 1, 0]);
    let mut o = zeros::<f32>(&s, 4);
    aclnn::gather(
        &s,
        &arg(&x, &[3, 3]),
        0,
        &arg(&i, &[2, 2]),
        &mut out(&mut o, &[2, 2]),
    )
    .unwrap();
    assert_eq!(host(&o), [1.0, 8.0, 4.0, 2.0], "page example 1 (dim 0)");
    aclnn::gather(
        &s,
        &arg(&x, &[3, 3]),
        1,
        &arg(&i, &[2, 2]),
        &mut out(&mut o, &[2, 2]),
    )
    .unwrap();
    assert_eq!(host(&o), [1.0, 3.0, 5.0, 4.0], "page example 2 (dim 1)");
    // int32 self, int32 index with a negative value (the page's range is
    // [-size, size)), dim -1.
    let xi = up(&s, &[10i32, 20, 30, 40, 50, 60]);
    let ii = up(&s, &[-1i32, 0, 1, -3]);
    let mut oi = zeros::<i32>(&s, 4);
    aclnn::gather(
        &s,
        &arg(&xi, &[2, 3]),
        -1,
        &arg(&ii, &[2, 2]),
        &mut out(&mut oi, &[2, 2]),
    )
    .unwrap();
    assert_eq!(host(&oi), [30, 10, 50, 40]);
    // A transposed (strided) self: x^T gathered along dim 0.
    let t = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let tv = t.view().transpose(0, 1).unwrap(); // [[1,4],[2,5],[3,6]]
    let i2 = up(&s, &[2i64, 0]);
    let mut o2 = zeros::<f32>(&s, 2);
    aclnn::gather(
        &s,
        &TensorArg::from_view(&tv).unwrap(),
        0,
        &arg(&i2, &[1, 2]),
        &mut out(&mut o2, &[1, 2]),
    )
    .unwrap();
    assert_eq!(host(&o2), [3.0, 4.0]);
}

#[test]
fn gather_refuses_what_its_page_refuses() {
    let s = stream();
    let f = "aclnnGatherGetWorkspaceSize";
    let x = up(&s, &[1.0f32; 6]);
    let i = up(&s, &[0i64; 4]);
    let fi = up(&s, &[0.0f32; 4]);
    let mut o = zeros::<f32>(&s, 4);
    let mut oi = zeros::<i32>(&s, 4);
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &arg(&fi, &[2, 2]),
            &mut out(&mut o, &[2, 2]),
        ),
        f,
        "index is float32; the operator takes int32, int64",
    );
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &arg(&i, &[4]),
            &mut out(&mut o, &[4]),
        ),
        f,
        "must have the same number of dimensions",
    );
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            2,
            &arg(&i, &[2, 2]),
            &mut out(&mut o, &[2, 2]),
        ),
        f,
        "dim 2 is out of range for a tensor of rank 2",
    );
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &arg(&i, &[2, 2]),
            &mut out(&mut oi, &[2, 2]),
        ),
        f,
        "out is int32 but self is float32",
    );
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &arg(&i, &[2, 2]),
            &mut out(&mut o, &[4]),
        ),
        f,
        "out is float32 [4], but the result is float32 [2, 2]",
    );
    let wide = up(&s, &[0i64; 8]);
    let mut o8 = zeros::<f32>(&s, 8);
    refused(
        aclnn::gather(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &arg(&wide, &[2, 4]),
            &mut out(&mut o8, &[2, 4]),
        ),
        f,
        "larger than self [2,3] in dimension 1",
    );
    // An index beyond the dimension fails the kernel, reported when the
    // stream synchronises.
    let bad = up(&s, &[5i64, 0, 0, 0]);
    aclnn::gather(
        &s,
        &arg(&x, &[2, 3]),
        0,
        &arg(&bad, &[2, 2]),
        &mut out(&mut o, &[2, 2]),
    )
    .unwrap();
    assert!(s.synchronize().is_err());
}

#[test]
fn scatter_replaces_adds_and_multiplies_and_scatter_add_accumulates() {
    let s = stream();
    let x = up(&s, &[1.0f32; 6]);
    let i = up(&s, &[1i64, 0, 2, 0]);
    let src = up(&s, &[10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0]);
    let mut o = zeros::<f32>(&s, 6);
    // index [2, 2] scatters src's top-left [2, 2] block along dim 1.
    let run = |reduce: i64, o: &mut DeviceBuffer<f32>| {
        aclnn::scatter(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i, &[2, 2]),
            &arg(&src, &[2, 3]),
            reduce,
            &mut out(o, &[2, 3]),
        )
        .unwrap();
        host(o)
    };
    assert_eq!(run(0, &mut o), [20.0, 10.0, 1.0, 50.0, 1.0, 40.0]);
    assert_eq!(run(1, &mut o), [21.0, 11.0, 1.0, 51.0, 1.0, 41.0]);
    assert_eq!(run(2, &mut o), [20.0, 10.0, 1.0, 50.0, 1.0, 40.0]);
    // scatter_add: two src values to one place add up (int64 tensors).
    let xi = up(&s, &[0i64; 3]);
    let ii = up(&s, &[2i64, 2, 0, 2]);
    let si = up(&s, &[1i64, 2, 3, 4]);
    let mut oi = zeros::<i64>(&s, 3);
    aclnn::scatter_add(
        &s,
        &arg(&xi, &[3]),
        0,
        &arg(&ii, &[4]),
        &arg(&si, &[4]),
        &mut out(&mut oi, &[3]),
    )
    .unwrap();
    assert_eq!(host(&oi), [3, 0, 7]);
    let f = "aclnnScatterGetWorkspaceSize";
    refused(
        aclnn::scatter(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i, &[2, 2]),
            &arg(&src, &[2, 3]),
            3,
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "reduce 3 is not 0 (replace), 1 (add) or 2 (multiply)",
    );
    let srci = up(&s, &[1i32; 6]);
    refused(
        aclnn::scatter(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i, &[2, 2]),
            &arg(&srci, &[2, 3]),
            0,
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "src is int32 but self is float32",
    );
    refused(
        aclnn::scatter(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i, &[4]),
            &arg(&src, &[2, 3]),
            0,
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "must have the same number of dimensions",
    );
    let small = up(&s, &[1.0f32; 2]);
    refused(
        aclnn::scatter_add(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i, &[2, 2]),
            &arg(&small, &[2, 1]),
            &mut out(&mut o, &[2, 3]),
        ),
        "aclnnScatterAddGetWorkspaceSize",
        "index.size(d) <= src.size(d)",
    );
    // A negative index is out of the page's range [0, size): a kernel fault.
    let neg = up(&s, &[-1i64, 0, 0, 0]);
    aclnn::scatter(
        &s,
        &arg(&x, &[2, 3]),
        1,
        &arg(&neg, &[2, 2]),
        &arg(&src, &[2, 3]),
        0,
        &mut out(&mut o, &[2, 3]),
    )
    .unwrap();
    assert!(s.synchronize().is_err());
}

#[test]
fn index_add_adds_scaled_slices_and_checks_alpha_and_shapes() {
    let s = stream();
    let x = up(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let i = up(&s, &[2i32, 0, 2]);
    let src = up(&s, &[1.0f32, 10.0, 100.0, 1.0, 10.0, 100.0]);
    let mut o = zeros::<f32>(&s, 6);
    aclnn::index_add(
        &s,
        &arg(&x, &[2, 3]),
        1,
        &arg(&i, &[3]),
        &arg(&src, &[2, 3]),
        &sc(0.5f32),
        &mut out(&mut o, &[2, 3]),
    )
    .unwrap();
    // Column 2 gets (1 + 100)/2, column 0 gets 10/2.
    assert_eq!(host(&o), [6.0, 2.0, 53.5, 9.0, 5.0, 56.5]);
    // int32 with an integer alpha.
    let xi = up(&s, &[0i32; 3]);
    let si = up(&s, &[1i32, 2, 3]);
    let ii = up(&s, &[1i64, 1, 0]);
    let mut oi = zeros::<i32>(&s, 3);
    aclnn::index_add(
        &s,
        &arg(&xi, &[3]),
        0,
        &arg(&ii, &[3]),
        &arg(&si, &[3]),
        &sc(2i32),
        &mut out(&mut oi, &[3]),
    )
    .unwrap();
    assert_eq!(host(&oi), [6, 6, 0]);
    let f = "aclnnIndexAddGetWorkspaceSize";
    refused(
        aclnn::index_add(
            &s,
            &arg(&xi, &[3]),
            0,
            &arg(&ii, &[3]),
            &arg(&si, &[3]),
            &sc(0.5f32),
            &mut out(&mut oi, &[3]),
        ),
        f,
        "the result is float32 but out is int32",
    );
    refused(
        aclnn::index_add(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&ii, &[3]),
            &arg(&src, &[3, 2]),
            &sc(1.0f32),
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "source [3,2] must be self [2,3] outside dim 1",
    );
    let i2 = up(&s, &[0i64, 1]);
    refused(
        aclnn::index_add(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&i2, &[2]),
            &arg(&src, &[2, 3]),
            &sc(1.0f32),
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "index has 2 elements but source [2,3] has 3 along dim 1",
    );
    refused(
        aclnn::index_add(
            &s,
            &arg(&x, &[2, 3]),
            -3,
            &arg(&i, &[3]),
            &arg(&src, &[2, 3]),
            &sc(1.0f32),
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "dim -3 is out of range",
    );
}

#[test]
fn masked_select_puts_the_selected_elements_first_in_a_broadcast_sized_out() {
    cann_sim::sim_only!(
        "the release refreshes out's view shape to the selected count; cann-sim zeroes the tail"
    );
    let s = stream();
    let x = up(&s, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // A mask of one row, broadcast over the two rows of x.
    let m = up(&s, &[Bool::TRUE, Bool::FALSE, Bool::TRUE]);
    let mut o = up(&s, &[-1.0f32; 6]);
    aclnn::masked_select(
        &s,
        &arg(&x, &[2, 3]),
        &arg(&m, &[3]),
        &mut out(&mut o, &[6]),
    )
    .unwrap();
    // Four selected; the rest of out (sized for the broadcast shape, as the
    // page requires) is zero on cann-sim.
    assert_eq!(host(&o), [1.0, 3.0, 4.0, 6.0, 0.0, 0.0]);
    // A uint8 mask and int64 data.
    let xi = up(&s, &[7i64, 8, 9]);
    let mu = up(&s, &[0u8, 1, 1]);
    let mut oi = zeros::<i64>(&s, 3);
    aclnn::masked_select(
        &s,
        &arg(&xi, &[3]),
        &arg(&mu, &[3]),
        &mut out(&mut oi, &[3]),
    )
    .unwrap();
    assert_eq!(host(&oi), [8, 9, 0]);
    let f = "aclnnMaskedSelectGetWorkspaceSize";
    let mut o4 = zeros::<f32>(&s, 4);
    refused(
        aclnn::masked_select(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&m, &[3]),
            &mut out(&mut o4, &[4]),
        ),
        f,
        "out [4] must be 1-D with the 6 elements of self and mask broadcast ([2,3])",
    );
    let mf = up(&s, &[1.0f32; 3]);
    refused(
        aclnn::masked_select(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&mf, &[3]),
            &mut out(&mut o, &[6]),
        ),
        f,
        "mask is float32; the operator takes uint8, bool",
    );
    let m2 = up(&s, &[Bool::TRUE; 2]);
    refused(
        aclnn::masked_select(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&m2, &[2]),
            &mut out(&mut o, &[6]),
        ),
        f,
        "do not broadcast",
    );
}

// ---------------------------------------------------------------------------
// Reductions.
// ---------------------------------------------------------------------------

#[test]
fn amin_argmin_max_dim_and_min_dim_reduce_as_torch_does() {
    let s = stream();
    let v = [3.0f32, 1.0, 2.0, 1.0, 5.0, 0.5];
    let x = up(&s, &v);
    let mut o = zeros::<f32>(&s, 3);
    aclnn::amin(
        &s,
        &arg(&x, &[2, 3]),
        &IntArray::new(&[0]).unwrap(),
        false,
        &mut out(&mut o, &[3]),
    )
    .unwrap();
    assert_eq!(host(&o), [1.0, 1.0, 0.5]);
    // Every dimension (an empty dim list), kept: [1, 1].
    let mut o1 = zeros::<f32>(&s, 1);
    aclnn::amin(
        &s,
        &arg(&x, &[2, 3]),
        &IntArray::new(&[]).unwrap(),
        true,
        &mut out(&mut o1, &[1, 1]),
    )
    .unwrap();
    assert_eq!(host(&o1), [0.5]);
    // int8 amin over dim 1.
    let xb = up(&s, &[4i8, -2, 7, 0, 9, -8]);
    let mut ob = zeros::<i8>(&s, 2);
    aclnn::amin(
        &s,
        &arg(&xb, &[2, 3]),
        &IntArray::new(&[-1]).unwrap(),
        false,
        &mut out(&mut ob, &[2]),
    )
    .unwrap();
    assert_eq!(host(&ob), [-2, -8]);
    // argmin: the first minimum (row 0 has 1.0 at column 1 only).
    let mut ai = zeros::<i64>(&s, 2);
    aclnn::arg_min(&s, &arg(&x, &[2, 3]), 1, false, &mut out(&mut ai, &[2])).unwrap();
    assert_eq!(host(&ai), [1, 2]);
    let ties = up(&s, &[2i32, 1, 1, 3]);
    let mut a32 = zeros::<i32>(&s, 1);
    aclnn::arg_min(&s, &arg(&ties, &[4]), 0, true, &mut out(&mut a32, &[1])).unwrap();
    assert_eq!(host(&a32), [1], "ties: the first index");
    // max_dim / min_dim with values and int64/int32 indices, keepdim.
    let mut mv = zeros::<f32>(&s, 3);
    let mut mi = zeros::<i64>(&s, 3);
    aclnn::max_dim(
        &s,
        &arg(&x, &[2, 3]),
        0,
        true,
        &mut out(&mut mv, &[1, 3]),
        &mut out(&mut mi, &[1, 3]),
    )
    .unwrap();
    assert_eq!((host(&mv), host(&mi)), (vec![3.0, 5.0, 2.0], vec![0, 1, 0]));
    let mut nv = zeros::<f32>(&s, 2);
    let mut ni = zeros::<i32>(&s, 2);
    aclnn::min_dim(
        &s,
        &arg(&x, &[2, 3]),
        1,
        false,
        &mut out(&mut nv, &[2]),
        &mut out(&mut ni, &[2]),
    )
    .unwrap();
    assert_eq!((host(&nv), host(&ni)), (vec![1.0, 0.5], vec![1, 2]));
    // A strided input: max over the columns of x^T is max over x's rows.
    let t = Tensor::from_host(&s, &v, &[2, 3]).unwrap();
    let tv = t.view().transpose(0, 1).unwrap();
    let mut tvv = zeros::<f32>(&s, 2);
    let mut tvi = zeros::<i64>(&s, 2);
    aclnn::max_dim(
        &s,
        &TensorArg::from_view(&tv).unwrap(),
        0,
        false,
        &mut out(&mut tvv, &[2]),
        &mut out(&mut tvi, &[2]),
    )
    .unwrap();
    assert_eq!((host(&tvv), host(&tvi)), (vec![3.0, 5.0], vec![0, 1]));
}

#[test]
fn reductions_refuse_duplicate_dims_wrong_dtypes_and_empty_axes() {
    let s = stream();
    let x = up(&s, &[1.0f32; 6]);
    let mut o = zeros::<f32>(&s, 3);
    refused(
        aclnn::amin(
            &s,
            &arg(&x, &[2, 3]),
            &IntArray::new(&[0, -2]).unwrap(),
            false,
            &mut out(&mut o, &[3]),
        ),
        "aclnnAminGetWorkspaceSize",
        "names dimension 0 twice",
    );
    let mut oi = zeros::<i32>(&s, 3);
    refused(
        aclnn::amin(
            &s,
            &arg(&x, &[2, 3]),
            &IntArray::new(&[0]).unwrap(),
            false,
            &mut out(&mut oi, &[3]),
        ),
        "aclnnAminGetWorkspaceSize",
        "out is int32 but self is float32",
    );
    let mut of = zeros::<f32>(&s, 2);
    refused(
        aclnn::arg_min(&s, &arg(&x, &[2, 3]), 1, false, &mut out(&mut of, &[2])),
        "aclnnArgMinGetWorkspaceSize",
        "out is float32; the operator takes int32, int64",
    );
    let b = up(&s, &[Bool::TRUE; 2]);
    let mut bi = zeros::<i64>(&s, 1);
    refused(
        aclnn::arg_min(&s, &arg(&b, &[2]), 0, false, &mut out(&mut bi, &[])),
        "aclnnArgMinGetWorkspaceSize",
        "self is bool",
    );
    let e = zeros::<f32>(&s, 0);
    let mut eo = zeros::<i64>(&s, 2);
    refused(
        aclnn::arg_min(&s, &arg(&e, &[2, 0]), 1, false, &mut out(&mut eo, &[2])),
        "aclnnArgMinGetWorkspaceSize",
        "dimension 1 of self [2,0] to reduce is empty",
    );
    // MaxDim on int32 (not on A2) and a bad dim.
    let xi = up(&s, &[1i32; 6]);
    let (mut v, mut i) = (zeros::<i32>(&s, 3), zeros::<i64>(&s, 3));
    refused(
        aclnn::max_dim(
            &s,
            &arg(&xi, &[2, 3]),
            0,
            false,
            &mut out(&mut v, &[3]),
            &mut out(&mut i, &[3]),
        ),
        "aclnnMaxDimGetWorkspaceSize",
        "self is int32",
    );
    let mut vf = zeros::<f32>(&s, 3);
    refused(
        aclnn::min_dim(
            &s,
            &arg(&x, &[2, 3]),
            2,
            false,
            &mut out(&mut vf, &[3]),
            &mut out(&mut i, &[3]),
        ),
        "aclnnMinDimGetWorkspaceSize",
        "dim 2 is out of range",
    );
}

#[test]
fn prod_and_cumprod_multiply_in_the_requested_type() {
    let s = stream();
    let x = up(&s, &[1.5f32, -2.0, 3.0, 0.5]);
    let mut o = zeros::<f32>(&s, 1);
    aclnn::prod(
        &s,
        &arg(&x, &[2, 2]),
        DataType::Float,
        &mut out(&mut o, &[]),
    )
    .unwrap();
    assert_eq!(host(&o), [-4.5]);
    // int32 product into int64 (a shape [1] out of one element is taken).
    let xi = up(&s, &[2i32, -3, 4]);
    let mut oi = zeros::<i64>(&s, 1);
    aclnn::prod(
        &s,
        &arg(&xi, &[3]),
        DataType::Int64,
        &mut out(&mut oi, &[1]),
    )
    .unwrap();
    assert_eq!(host(&oi), [-24]);
    // An empty tensor's product is 1.
    let e = zeros::<f32>(&s, 0);
    aclnn::prod(
        &s,
        &arg(&e, &[0, 3]),
        DataType::Float,
        &mut out(&mut o, &[]),
    )
    .unwrap();
    assert_eq!(host(&o), [1.0]);
    refused(
        aclnn::prod(
            &s,
            &arg(&x, &[2, 2]),
            DataType::Double,
            &mut out(&mut o, &[]),
        ),
        "aclnnProdGetWorkspaceSize",
        "out is float32 but dtype is float64",
    );
    let mut o2 = zeros::<f32>(&s, 2);
    refused(
        aclnn::prod(
            &s,
            &arg(&x, &[2, 2]),
            DataType::Float,
            &mut out(&mut o2, &[2]),
        ),
        "aclnnProdGetWorkspaceSize",
        "out [2] must hold one element",
    );
    // cumprod along dim 1 (an int64 dim scalar) and dim 0 (int32), f32 and
    // int16.
    let mut c = zeros::<f32>(&s, 4);
    aclnn::cumprod(
        &s,
        &arg(&x, &[2, 2]),
        &sc(1i64),
        DataType::Float,
        &mut out(&mut c, &[2, 2]),
    )
    .unwrap();
    assert_eq!(host(&c), [1.5, -3.0, 3.0, 1.5]);
    let h = up(&s, &[2i16, 3, -1, 5]);
    let mut ch = zeros::<i16>(&s, 4);
    aclnn::cumprod(
        &s,
        &arg(&h, &[2, 2]),
        &sc(0i32),
        DataType::Int16,
        &mut out(&mut ch, &[2, 2]),
    )
    .unwrap();
    assert_eq!(host(&ch), [2, 3, -2, 15]);
    let f = "aclnnCumprodGetWorkspaceSize";
    refused(
        aclnn::cumprod(
            &s,
            &arg(&x, &[2, 2]),
            &sc(1.0f32),
            DataType::Float,
            &mut out(&mut c, &[2, 2]),
        ),
        f,
        "dim is a float32 scalar; it must be int32 or int64",
    );
    refused(
        aclnn::cumprod(
            &s,
            &arg(&x, &[2, 2]),
            &sc(2i64),
            DataType::Float,
            &mut out(&mut c, &[2, 2]),
        ),
        f,
        "dim 2 is out of range",
    );
    let b = up(&s, &[Bool::TRUE; 4]);
    let mut cb = zeros::<Bool>(&s, 4);
    refused(
        aclnn::cumprod(
            &s,
            &arg(&b, &[4]),
            &sc(0i64),
            DataType::Bool,
            &mut out(&mut cb, &[4]),
        ),
        f,
        "input is bool",
    );
}

#[test]
fn cummax_and_cummin_keep_the_running_extreme_and_its_latest_index() {
    let s = stream();
    let x = up(&s, &[1.0f32, 3.0, 2.0, 3.0, 0.0, f32::NAN, 4.0]);
    let (mut v, mut i) = (zeros::<f32>(&s, 7), zeros::<i64>(&s, 7));
    aclnn::cummax(
        &s,
        &arg(&x, &[7]),
        0,
        &mut out(&mut v, &[7]),
        &mut out(&mut i, &[7]),
    )
    .unwrap();
    let got = host(&v);
    assert_eq!(&got[..5], [1.0, 3.0, 3.0, 3.0, 3.0]);
    assert!(
        got[5].is_nan() && got[6].is_nan(),
        "NaN propagates: {got:?}"
    );
    // A tie takes the later index (torch); the NaN's index stays.
    assert_eq!(host(&i), [0, 1, 1, 3, 3, 5, 5]);
    let xi = up(&s, &[5i32, 2, 7, 2, 1, 4]);
    let (mut vi, mut ii) = (zeros::<i32>(&s, 6), zeros::<i32>(&s, 6));
    aclnn::cummin(
        &s,
        &arg(&xi, &[2, 3]),
        1,
        &mut out(&mut vi, &[2, 3]),
        &mut out(&mut ii, &[2, 3]),
    )
    .unwrap();
    assert_eq!(
        (host(&vi), host(&ii)),
        (vec![5, 2, 2, 2, 1, 1], vec![0, 1, 1, 0, 1, 1])
    );
    let mut bad = zeros::<f32>(&s, 6);
    refused(
        aclnn::cummin(
            &s,
            &arg(&xi, &[2, 3]),
            1,
            &mut out(&mut vi, &[2, 3]),
            &mut out(&mut bad, &[2, 3]),
        ),
        "aclnnCumminGetWorkspaceSize",
        "indicesOut is float32; the operator takes int32, int64",
    );
    refused(
        aclnn::cummax(
            &s,
            &arg(&xi, &[2, 3]),
            -3,
            &mut out(&mut vi, &[2, 3]),
            &mut out(&mut ii, &[2, 3]),
        ),
        "aclnnCummaxGetWorkspaceSize",
        "dim -3 is out of range",
    );
    let (mut v7, mut i7) = (zeros::<i32>(&s, 7), zeros::<i64>(&s, 7));
    refused(
        aclnn::cummax(
            &s,
            &arg(&x, &[7]),
            0,
            &mut out(&mut v7, &[7]),
            &mut out(&mut i7, &[7]),
        ),
        "aclnnCummaxGetWorkspaceSize",
        "the result is float32 but valuesOut is int32",
    );
}

#[test]
fn linalg_cross_is_the_right_handed_cross_product_with_broadcasting() {
    let s = stream();
    // e_x × e_y = e_z and e_y × e_x = −e_z, other broadcast over two rows.
    let a = up(&s, &[1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let b = up(&s, &[0.0f32, 1.0, 0.0]);
    let mut o = zeros::<f32>(&s, 6);
    aclnn::linalg_cross(
        &s,
        &arg(&a, &[2, 3]),
        &arg(&b, &[3]),
        1,
        &mut out(&mut o, &[2, 3]),
    )
    .unwrap();
    assert_eq!(host(&o), [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    // Along dim 0 of int64 tensors: (1,2,3) × (4,5,6) = (−3, 6, −3).
    let ai = up(&s, &[1i64, 2, 3]);
    let bi = up(&s, &[4i64, 5, 6]);
    let mut oi = zeros::<i64>(&s, 3);
    aclnn::linalg_cross(
        &s,
        &arg(&ai, &[3, 1]),
        &arg(&bi, &[3, 1]),
        0,
        &mut out(&mut oi, &[3, 1]),
    )
    .unwrap();
    assert_eq!(host(&oi), [-3, 6, -3]);
    let f = "aclnnLinalgCrossGetWorkspaceSize";
    let mut o2 = zeros::<f32>(&s, 6);
    refused(
        aclnn::linalg_cross(
            &s,
            &arg(&a, &[3, 2]),
            &arg(&a, &[3, 2]),
            1,
            &mut out(&mut o2, &[3, 2]),
        ),
        f,
        "whose dim 1 is not of size 3",
    );
    let bd = up(&s, &[0.0f64, 1.0, 0.0]);
    refused(
        aclnn::linalg_cross(
            &s,
            &arg(&a, &[2, 3]),
            &arg(&bd, &[3]),
            1,
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "other is float64 but self is float32",
    );
}

// ---------------------------------------------------------------------------
// Backwards: values, misuse, and finite differences of the forward.
// ---------------------------------------------------------------------------

/// Runs a one-input forward operator `fwd` over `x` (f32, shape `shape`).
fn forward(
    s: &Stream,
    x: &[f32],
    shape: &[usize],
    fwd: &dyn Fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
) -> Vec<f32> {
    let b = up(s, x);
    let mut o = zeros::<f32>(s, x.len());
    fwd(s, &arg(&b, shape), &mut out(&mut o, shape)).expect("forward");
    host(&o)
}

/// The vector-Jacobian product `gᵀ·∂fwd/∂x` by central differences: for
/// each element of x, `(L(x + h) − L(x − h)) / 2h` with `L = Σ g·fwd(x)`.
fn numeric_vjp(
    s: &Stream,
    x: &[f32],
    shape: &[usize],
    g: &[f32],
    h: f32,
    fwd: &dyn Fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
) -> Vec<f64> {
    let loss = |xs: &[f32]| -> f64 {
        forward(s, xs, shape, fwd)
            .iter()
            .zip(g)
            .map(|(&y, &w)| f64::from(y) * f64::from(w))
            .sum()
    };
    (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            (loss(&p) - loss(&m)) / (2.0 * f64::from(h))
        })
        .collect()
}

const X6: [f32; 6] = [-2.0, -0.7, -0.1, 0.3, 1.1, 2.4];
const G6: [f32; 6] = [0.5, -1.0, 2.0, 0.25, -0.75, 1.5];

/// An element-wise backward `(g, x_or_y) → dx` against the finite
/// differences of its forward; `from_output` when the backward takes the
/// forward's output.
fn check_act_grad(
    what: &str,
    fwd: &dyn Fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
    bwd: &dyn Fn(&Stream, &TensorArg<'_>, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
    from_output: bool,
) {
    let s = stream();
    let shape = [2, 3];
    let want = numeric_vjp(&s, &X6, &shape, &G6, 1e-2, fwd);
    let second = if from_output {
        forward(&s, &X6, &shape, fwd)
    } else {
        X6.to_vec()
    };
    let (g, x) = (up(&s, &G6), up(&s, &second));
    let mut o = zeros::<f32>(&s, 6);
    bwd(
        &s,
        &arg(&g, &shape),
        &arg(&x, &shape),
        &mut out(&mut o, &shape),
    )
    .expect(what);
    close(&host(&o), &want, 2e-3, what);
}

#[test]
fn activation_backwards_match_finite_differences_of_their_forwards() {
    check_act_grad("gelu_backward", &aclnn::gelu, &aclnn::gelu_backward, false);
    check_act_grad("silu_backward", &aclnn::silu, &aclnn::silu_backward, false);
    check_act_grad(
        "sigmoid_backward",
        &aclnn::sigmoid,
        &aclnn::sigmoid_backward,
        true,
    );
    check_act_grad("tanh_backward", &aclnn::tanh, &aclnn::tanh_backward, true);
    let slope = sc(0.2f32);
    check_act_grad(
        "leaky_relu_backward",
        &|s, x, o| aclnn::leaky_relu(s, x, &slope, o),
        &|s, g, x, o| aclnn::leaky_relu_backward(s, g, x, &slope, false, o),
        false,
    );
    for dim in [0, 1, -1] {
        check_act_grad(
            "softmax_backward",
            &|s, x, o| aclnn::softmax(s, x, dim, o),
            &|s, g, y, o| aclnn::softmax_backward(s, g, y, dim, o),
            true,
        );
        check_act_grad(
            "log_softmax_backward",
            &|s, x, o| aclnn::log_softmax(s, x, dim, o),
            &|s, g, y, o| aclnn::log_softmax_backward(s, g, y, dim, o),
            true,
        );
    }
}

#[test]
fn activation_backwards_broadcast_take_f64_and_refuse_bad_input() {
    let s = stream();
    // sigmoid_backward in f64, gradOutput broadcast over the rows.
    let g = up(&s, &[1.0f64, 2.0]);
    let y = up(&s, &[0.5f64, 0.25, 0.9, 0.1]);
    let mut o = zeros::<f64>(&s, 4);
    aclnn::sigmoid_backward(
        &s,
        &arg(&g, &[2]),
        &arg(&y, &[2, 2]),
        &mut out(&mut o, &[2, 2]),
    )
    .unwrap();
    let got = host(&o);
    for (k, (gk, yk)) in [(1.0, 0.5), (2.0, 0.25), (1.0, 0.9), (2.0, 0.1)]
        .iter()
        .enumerate()
    {
        let want: f64 = gk * yk * (1.0 - yk);
        assert!(
            (got[k] - want).abs() < 1e-15,
            "sigmoid_backward f64 [{k}]: {}",
            got[k]
        );
    }
    // tanh_backward over a transposed output view.
    let t = Tensor::from_host(&s, &[0.0f32, 0.5, 0.1, 0.2, 0.9, 0.3], &[2, 3]).unwrap();
    let tv = t.view().transpose(0, 1).unwrap(); // [[0, .2], [.5, .9], [.1, .3]]
    let ones = up(&s, &[1.0f32; 6]);
    let mut ot = zeros::<f32>(&s, 6);
    aclnn::tanh_backward(
        &s,
        &arg(&ones, &[3, 2]),
        &TensorArg::from_view(&tv).unwrap(),
        &mut out(&mut ot, &[3, 2]),
    )
    .unwrap();
    let yv = [0.0, 0.2, 0.5, 0.9, 0.1, 0.3];
    let want: Vec<f64> = yv.iter().map(|y: &f64| 1.0 - y * y).collect();
    close(&host(&ot), &want, 1e-6, "tanh_backward strided");
    // leaky_relu_backward with selfIsResult refuses a negative slope.
    let x = up(&s, &X6);
    let gg = up(&s, &G6);
    let mut o6 = zeros::<f32>(&s, 6);
    refused(
        aclnn::leaky_relu_backward(
            &s,
            &arg(&gg, &[6]),
            &arg(&x, &[6]),
            &sc(-0.1f32),
            true,
            &mut out(&mut o6, &[6]),
        ),
        "aclnnLeakyReluBackwardGetWorkspaceSize",
        "negativeSlope -0.1",
    );
    // silu_backward wants one dtype for the three; gelu an allowed dtype.
    let h = up(&s, &[f16::ONE; 6]);
    refused(
        aclnn::silu_backward(&s, &arg(&gg, &[6]), &arg(&h, &[6]), &mut out(&mut o6, &[6])),
        "aclnnSiluBackwardGetWorkspaceSize",
        "self is float16 but gradOutput is float32",
    );
    let xi = up(&s, &[1i32; 6]);
    refused(
        aclnn::gelu_backward(
            &s,
            &arg(&gg, &[6]),
            &arg(&xi, &[6]),
            &mut out(&mut o6, &[6]),
        ),
        "aclnnGeluBackwardGetWorkspaceSize",
        "self is int32; the operator takes float32, float16, bfloat16",
    );
    let g4 = up(&s, &[1.0f32; 4]);
    refused(
        aclnn::gelu_backward(&s, &arg(&g4, &[4]), &arg(&x, &[6]), &mut out(&mut o6, &[6])),
        "aclnnGeluBackwardGetWorkspaceSize",
        "do not broadcast",
    );
    // softmax_backward: shapes must match, dim in range.
    refused(
        aclnn::softmax_backward(
            &s,
            &arg(&gg, &[2, 3]),
            &arg(&x, &[3, 2]),
            1,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnSoftmaxBackwardGetWorkspaceSize",
        "gradOutput [2,3] and output [3,2] must have one shape",
    );
    refused(
        aclnn::log_softmax_backward(
            &s,
            &arg(&gg, &[2, 3]),
            &arg(&x, &[2, 3]),
            2,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnLogSoftmaxBackwardGetWorkspaceSize",
        "dim 2 is out of range",
    );
}

#[test]
fn prelu_scales_negatives_per_channel() {
    let s = stream();
    let x = up(&s, &[-1.0f32, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0]);
    let w = up(&s, &[0.5f32, 0.1]);
    let mut o = zeros::<f32>(&s, 8);
    // [N=2, C=2, L=2]: channel = dimension 1.
    aclnn::prelu(
        &s,
        &arg(&x, &[2, 2, 2]),
        &arg(&w, &[2]),
        &mut out(&mut o, &[2, 2, 2]),
    )
    .unwrap();
    close(
        &host(&o),
        &[-0.5, 2.0, -0.3, 4.0, -2.5, 6.0, -0.7, 8.0],
        1e-7,
        "prelu per channel",
    );
    let w1 = up(&s, &[0.25f32]);
    aclnn::prelu(&s, &arg(&x, &[8]), &arg(&w1, &[1]), &mut out(&mut o, &[8])).unwrap();
    close(
        &host(&o),
        &[-0.25, 2.0, -0.75, 4.0, -1.25, 6.0, -1.75, 8.0],
        1e-7,
        "prelu one weight",
    );
    let w3 = up(&s, &[0.1f32; 3]);
    refused(
        aclnn::prelu(
            &s,
            &arg(&x, &[2, 2, 2]),
            &arg(&w3, &[3]),
            &mut out(&mut o, &[2, 2, 2]),
        ),
        "aclnnPreluGetWorkspaceSize",
        "weight [3] must have 1 element or one per channel (2)",
    );
    let xd = up(&s, &[1.0f64; 8]);
    let mut od = zeros::<f64>(&s, 8);
    refused(
        aclnn::prelu(
            &s,
            &arg(&xd, &[8]),
            &arg(&w1, &[1]),
            &mut out(&mut od, &[8]),
        ),
        "aclnnPreluGetWorkspaceSize",
        "self is float64",
    );
}

#[test]
fn embedding_dense_backward_is_the_gradient_of_embedding() {
    let s = stream();
    // 4 rows of width 2; indices [3, 1, 3] (row 3 twice).
    let idx = [3i64, 1, 3];
    let g = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let w0 = [0.1f32, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8];
    let (di, dg) = (up(&s, &idx), up(&s, &g));
    let mut o = zeros::<f32>(&s, 8);
    aclnn::embedding_dense_backward(
        &s,
        &arg(&dg, &[3, 2]),
        &arg(&di, &[3]),
        4,
        u64::MAX,
        false,
        &mut out(&mut o, &[4, 2]),
    )
    .unwrap();
    let analytic = host(&o);
    // L(W) = Σ g · embedding(W, idx): linear in W, so central differences
    // are exact up to rounding.
    let embed = |w: &[f32]| -> f64 {
        let dw = up(&s, w);
        let mut e = zeros::<f32>(&s, 6);
        aclnn::embedding(
            &s,
            &arg(&dw, &[4, 2]),
            &arg(&di, &[3]),
            &mut out(&mut e, &[3, 2]),
        )
        .unwrap();
        host(&e)
            .iter()
            .zip(&g)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum()
    };
    let h = 0.5f32;
    let numeric: Vec<f64> = (0..8)
        .map(|i| {
            let (mut p, mut m) = (w0.to_vec(), w0.to_vec());
            p[i] += h;
            m[i] -= h;
            (embed(&p) - embed(&m)) / f64::from(2.0 * h)
        })
        .collect();
    close(
        &analytic,
        &numeric,
        1e-5,
        "embedding backward vs finite differences",
    );
    assert_eq!(analytic, [0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 6.0, 8.0]);
    // paddingIdx 3 drops row 3; scaleGradByFreq divides by the count.
    aclnn::embedding_dense_backward(
        &s,
        &arg(&dg, &[3, 2]),
        &arg(&di, &[3]),
        4,
        3,
        false,
        &mut out(&mut o, &[4, 2]),
    )
    .unwrap();
    assert_eq!(host(&o), [0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
    aclnn::embedding_dense_backward(
        &s,
        &arg(&dg, &[3, 2]),
        &arg(&di, &[3]),
        4,
        u64::MAX,
        true,
        &mut out(&mut o, &[4, 2]),
    )
    .unwrap();
    assert_eq!(host(&o), [0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 3.0, 4.0]);
    let f = "aclnnEmbeddingDenseBackwardGetWorkspaceSize";
    refused(
        aclnn::embedding_dense_backward(
            &s,
            &arg(&dg, &[2, 3]),
            &arg(&di, &[3]),
            4,
            u64::MAX,
            false,
            &mut out(&mut o, &[4, 2]),
        ),
        f,
        "grad [2,3] has 2 rows but indices [3] has 3 elements",
    );
    refused(
        aclnn::embedding_dense_backward(
            &s,
            &arg(&dg, &[3, 2]),
            &arg(&di, &[3]),
            5,
            u64::MAX,
            false,
            &mut out(&mut o, &[4, 2]),
        ),
        f,
        "out is float32 [4, 2], but the result is float32 [5, 2]",
    );
    let gd = up(&s, &[1.0f64; 6]);
    let mut od = zeros::<f64>(&s, 8);
    refused(
        aclnn::embedding_dense_backward(
            &s,
            &arg(&gd, &[3, 2]),
            &arg(&di, &[3]),
            4,
            u64::MAX,
            false,
            &mut out(&mut od, &[4, 2]),
        ),
        f,
        "grad is float64",
    );
}

// ---------------------------------------------------------------------------
// Losses.
// ---------------------------------------------------------------------------

/// log-probabilities of 2 samples over 3 classes, targets and weights.
const LOGP: [f32; 6] = [-1.2, -0.4, -2.3, -0.9, -1.6, -0.8];
const WEIGHT: [f32; 3] = [0.5, 2.0, 1.0];

fn nll(s: &Stream, x: &[f32], t: &[i64], reduction: i64, ignore: i64) -> (Vec<f32>, f32) {
    let (dx, dt, dw) = (up(s, x), up(s, t), up(s, &WEIGHT));
    let n = if reduction == 0 { 2 } else { 1 };
    let oshape: &[usize] = if reduction == 0 { &[2] } else { &[] };
    let (mut o, mut tw) = (zeros::<f32>(s, n), zeros::<f32>(s, 1));
    aclnn::nll_loss(
        s,
        &arg(&dx, &[2, 3]),
        &arg(&dt, &[2]),
        &arg(&dw, &[3]),
        reduction,
        ignore,
        &mut out(&mut o, oshape),
        &mut out(&mut tw, &[1]),
    )
    .expect("nll_loss");
    (host(&o), host(&tw)[0])
}

#[test]
fn nll_loss_weights_ignores_and_reduces() {
    let s = stream();
    let t = [1i64, 2];
    // l = [-2·(-0.4), -1·(-0.8)] = [0.8, 0.8]; Σw = 3.
    let (l, _) = nll(&s, &LOGP, &t, 0, -100);
    close(&l, &[0.8, 0.8], 1e-6, "none");
    let (l, tw) = nll(&s, &LOGP, &t, 1, -100);
    close(&l, &[1.6 / 3.0], 1e-6, "mean");
    assert_eq!(tw, 3.0);
    let (l, _) = nll(&s, &LOGP, &t, 2, -100);
    close(&l, &[1.6], 1e-6, "sum");
    // ignoreIndex 2 drops sample 1.
    let (l, tw) = nll(&s, &LOGP, &t, 1, 2);
    close(&l, &[0.4], 1e-6, "mean with an ignored sample");
    assert_eq!(tw, 2.0);
    let f = "aclnnNLLLossGetWorkspaceSize";
    let (dx, dt, dw) = (up(&s, &LOGP), up(&s, &t), up(&s, &WEIGHT));
    let (mut o, mut tw1) = (zeros::<f32>(&s, 2), zeros::<f32>(&s, 1));
    refused(
        aclnn::nll_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&dw, &[3]),
            3,
            -100,
            &mut out(&mut o, &[2]),
            &mut out(&mut tw1, &[1]),
        ),
        f,
        "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)",
    );
    refused(
        aclnn::nll_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&dw, &[3]),
            1,
            -100,
            &mut out(&mut o, &[2]),
            &mut out(&mut tw1, &[1]),
        ),
        f,
        "out [2] must be one element of rank 0 or 1",
    );
    let w2 = up(&s, &[1.0f32; 2]);
    refused(
        aclnn::nll_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&w2, &[2]),
            0,
            -100,
            &mut out(&mut o, &[2]),
            &mut out(&mut tw1, &[1]),
        ),
        f,
        "weight [2] must be (3), one weight per class",
    );
    let tf = up(&s, &[1.0f32, 2.0]);
    refused(
        aclnn::nll_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&tf, &[2]),
            &arg(&dw, &[3]),
            0,
            -100,
            &mut out(&mut o, &[2]),
            &mut out(&mut tw1, &[1]),
        ),
        f,
        "target is float32; the operator takes int64, uint8, int32",
    );
    // A class beyond C fails the kernel at synchronisation.
    let bad = up(&s, &[1i64, 3]);
    aclnn::nll_loss(
        &s,
        &arg(&dx, &[2, 3]),
        &arg(&bad, &[2]),
        &arg(&dw, &[3]),
        0,
        -100,
        &mut out(&mut o, &[2]),
        &mut out(&mut tw1, &[1]),
    )
    .unwrap();
    assert!(s.synchronize().is_err());
}

#[test]
fn nll_loss_backward_matches_finite_differences_of_nll_loss() {
    let s = stream();
    let t = [1i64, 0];
    for (reduction, ignore) in [(1, -100), (2, -100), (0, -100), (1, 0)] {
        // Upstream gradient: per sample for none, one value otherwise.
        let gvals: Vec<f32> = if reduction == 0 {
            vec![0.7, -1.3]
        } else {
            vec![0.7]
        };
        let loss = |x: &[f32]| -> f64 {
            let (l, _) = nll(&s, x, &t, reduction, ignore);
            l.iter()
                .zip(&gvals)
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum()
        };
        let h = 0.25f32;
        let numeric: Vec<f64> = (0..6)
            .map(|i| {
                let (mut p, mut m) = (LOGP.to_vec(), LOGP.to_vec());
                p[i] += h;
                m[i] -= h;
                (loss(&p) - loss(&m)) / f64::from(2.0 * h)
            })
            .collect();
        let (_, total) = nll(&s, &LOGP, &t, reduction, ignore);
        let (dg, dx, dt, dw, dtw) = (
            up(&s, &gvals),
            up(&s, &LOGP),
            up(&s, &t),
            up(&s, &WEIGHT),
            up(&s, &[total]),
        );
        let gshape: &[usize] = if reduction == 0 { &[2] } else { &[] };
        let mut o = zeros::<f32>(&s, 6);
        aclnn::nll_loss_backward(
            &s,
            &arg(&dg, gshape),
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&dw, &[3]),
            reduction,
            ignore,
            &arg(&dtw, &[1]),
            &mut out(&mut o, &[2, 3]),
        )
        .unwrap();
        close(
            &host(&o),
            &numeric,
            1e-5,
            &format!("nll_loss_backward reduction {reduction} ignore {ignore}"),
        );
    }
    let f = "aclnnNLLLossBackwardGetWorkspaceSize";
    let (dg, dx, dt, dw, dtw) = (
        up(&s, &[1.0f32, 1.0]),
        up(&s, &LOGP),
        up(&s, &t),
        up(&s, &WEIGHT),
        up(&s, &[3.0f32]),
    );
    let mut o = zeros::<f32>(&s, 6);
    refused(
        aclnn::nll_loss_backward(
            &s,
            &arg(&dg, &[2]),
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&dw, &[3]),
            1,
            -100,
            &arg(&dtw, &[1]),
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "gradOutput [2] must be one element of rank 0 or 1",
    );
    let wh = up(&s, &[f16::ONE; 3]);
    refused(
        aclnn::nll_loss_backward(
            &s,
            &arg(&dg, &[2]),
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[2]),
            &arg(&wh, &[3]),
            0,
            -100,
            &arg(&dtw, &[1]),
            &mut out(&mut o, &[2, 3]),
        ),
        f,
        "weight is float16 but self is float32",
    );
}

fn mse(s: &Stream, x: &[f32], t: &[f32], tshape: &[usize], reduction: i64) -> Vec<f32> {
    let (dx, dt) = (up(s, x), up(s, t));
    let (n, oshape): (usize, &[usize]) = if reduction == 0 {
        (6, &[2, 3])
    } else {
        (1, &[])
    };
    let mut o = zeros::<f32>(s, n);
    aclnn::mse_loss(
        s,
        &arg(&dx, &[2, 3]),
        &arg(&dt, tshape),
        reduction,
        &mut out(&mut o, oshape),
    )
    .expect("mse_loss");
    host(&o)
}

#[test]
fn mse_loss_and_its_backward_agree_with_the_formula_and_finite_differences() {
    let s = stream();
    // target [3] broadcast over the two rows of self.
    let t = [0.5f32, -1.0, 2.0];
    let d: Vec<f64> = X6
        .iter()
        .enumerate()
        .map(|(i, &x)| f64::from(x) - f64::from(t[i % 3]))
        .collect();
    let sq: Vec<f64> = d.iter().map(|v| v * v).collect();
    close(&mse(&s, &X6, &t, &[3], 0), &sq, 1e-6, "mse none");
    close(
        &mse(&s, &X6, &t, &[3], 1),
        &[sq.iter().sum::<f64>() / 6.0],
        1e-6,
        "mse mean",
    );
    close(
        &mse(&s, &X6, &t, &[3], 2),
        &[sq.iter().sum::<f64>()],
        1e-6,
        "mse sum",
    );
    for reduction in 0..=2 {
        let g: Vec<f32> = if reduction == 0 {
            G6.to_vec()
        } else {
            vec![0.8]
        };
        let loss = |x: &[f32]| -> f64 {
            mse(&s, x, &t, &[3], reduction)
                .iter()
                .zip(if reduction == 0 { &g[..] } else { &g[..1] })
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum()
        };
        let h = 0.125f32;
        let numeric: Vec<f64> = (0..6)
            .map(|i| {
                let (mut p, mut m) = (X6.to_vec(), X6.to_vec());
                p[i] += h;
                m[i] -= h;
                (loss(&p) - loss(&m)) / f64::from(2.0 * h)
            })
            .collect();
        let (dg, dx, dt) = (up(&s, &g), up(&s, &X6), up(&s, &t));
        let gshape: &[usize] = if reduction == 0 { &[2, 3] } else { &[] };
        let mut o = zeros::<f32>(&s, 6);
        aclnn::mse_loss_backward(
            &s,
            &arg(&dg, gshape),
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[3]),
            reduction,
            &mut out(&mut o, &[2, 3]),
        )
        .unwrap();
        close(
            &host(&o),
            &numeric,
            1e-4,
            &format!("mse backward reduction {reduction}"),
        );
    }
    let (dx, dt) = (up(&s, &X6), up(&s, &t));
    let mut o6 = zeros::<f32>(&s, 6);
    refused(
        aclnn::mse_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[3]),
            1,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnMseLossGetWorkspaceSize",
        "out is float32 [2, 3], but the result is float32 []",
    );
    refused(
        aclnn::mse_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&dt, &[3]),
            -1,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnMseLossGetWorkspaceSize",
        "reduction -1 is not 0 (none), 1 (mean) or 2 (sum)",
    );
    let th = up(&s, &[f16::ONE; 3]);
    let g = up(&s, &G6);
    refused(
        aclnn::mse_loss_backward(
            &s,
            &arg(&g, &[2, 3]),
            &arg(&dx, &[2, 3]),
            &arg(&th, &[3]),
            0,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnMseLossBackwardGetWorkspaceSize",
        "target is float16 but self is float32",
    );
    let t2 = up(&s, &[0.0f32; 2]);
    refused(
        aclnn::mse_loss(
            &s,
            &arg(&dx, &[2, 3]),
            &arg(&t2, &[2]),
            0,
            &mut out(&mut o6, &[2, 3]),
        ),
        "aclnnMseLossGetWorkspaceSize",
        "self of shape [2,3] and target of shape [2] do not broadcast",
    );
}

#[test]
fn zero_dimensional_and_empty_tensors_follow_the_page_rules() {
    let s = stream();
    // A 0-d self gathered with a 0-d index; dim 0 (or -1) is its only axis.
    let x = up(&s, &[4.5f32]);
    let i = up(&s, &[-1i64]);
    let mut o = zeros::<f32>(&s, 1);
    aclnn::gather(&s, &arg(&x, &[]), 0, &arg(&i, &[]), &mut out(&mut o, &[])).unwrap();
    assert_eq!(host(&o), [4.5]);
    aclnn::amin(
        &s,
        &arg(&x, &[]),
        &IntArray::new(&[]).unwrap(),
        false,
        &mut out(&mut o, &[]),
    )
    .unwrap();
    assert_eq!(host(&o), [4.5]);
    aclnn::cumprod(
        &s,
        &arg(&x, &[]),
        &sc(-1i64),
        DataType::Float,
        &mut out(&mut o, &[]),
    )
    .unwrap();
    assert_eq!(host(&o), [4.5]);
    let (mut v, mut vi) = (zeros::<f32>(&s, 1), zeros::<i64>(&s, 1));
    aclnn::cummax(
        &s,
        &arg(&x, &[]),
        -1,
        &mut out(&mut v, &[]),
        &mut out(&mut vi, &[]),
    )
    .unwrap();
    assert_eq!((host(&v), host(&vi)), (vec![4.5], vec![0]));
    // Empty tensors: an empty index gathers nothing, an empty softmax
    // gradient is empty, max_dim of an empty self returns at once (the
    // release's early return) without failing the stream.
    let e = zeros::<f32>(&s, 0);
    let ei = zeros::<i64>(&s, 0);
    let mut eo = zeros::<f32>(&s, 0);
    aclnn::gather(
        &s,
        &arg(&e, &[2, 0]),
        1,
        &arg(&ei, &[2, 0]),
        &mut out(&mut eo, &[2, 0]),
    )
    .unwrap();
    aclnn::softmax_backward(
        &s,
        &arg(&e, &[0, 3]),
        &arg(&e, &[0, 3]),
        1,
        &mut out(&mut eo, &[0, 3]),
    )
    .unwrap();
    let (mut mv, mut mi) = (zeros::<f32>(&s, 3), zeros::<i64>(&s, 3));
    aclnn::max_dim(
        &s,
        &arg(&e, &[3, 0]),
        1,
        false,
        &mut out(&mut mv, &[3]),
        &mut out(&mut mi, &[3]),
    )
    .unwrap_or_else(|e| panic!("max_dim of an empty self: {e}"));
    s.synchronize().unwrap();
}

#[test]
fn more_misuse_is_refused_with_161002_naming_the_argument() {
    let s = stream();
    let x = up(&s, &[1.0f32; 6]);
    let i = up(&s, &[0i64; 6]);
    let mut o = zeros::<f32>(&s, 6);
    refused(
        aclnn::scatter_add(
            &s,
            &arg(&x, &[2, 3]),
            2,
            &arg(&i, &[2, 3]),
            &arg(&x, &[2, 3]),
            &mut out(&mut o, &[2, 3]),
        ),
        "aclnnScatterAddGetWorkspaceSize",
        "dim 2 is out of range for a tensor of rank 2",
    );
    let fi = up(&s, &[0.0f32; 3]);
    refused(
        aclnn::index_add(
            &s,
            &arg(&x, &[2, 3]),
            1,
            &arg(&fi, &[3]),
            &arg(&x, &[2, 3]),
            &sc(1.0f32),
            &mut out(&mut o, &[2, 3]),
        ),
        "aclnnIndexAddGetWorkspaceSize",
        "index is float32; the operator takes int64, int32",
    );
    let mut o3 = zeros::<f32>(&s, 3);
    refused(
        aclnn::amin(
            &s,
            &arg(&x, &[2, 3]),
            &IntArray::new(&[-3]).unwrap(),
            false,
            &mut out(&mut o3, &[3]),
        ),
        "aclnnAminGetWorkspaceSize",
        "dim -3 is out of range for a tensor of rank 2",
    );
    let mut a2 = zeros::<i64>(&s, 2);
    refused(
        aclnn::arg_min(&s, &arg(&x, &[2, 3]), 5, false, &mut out(&mut a2, &[2])),
        "aclnnArgMinGetWorkspaceSize",
        "dim 5 is out of range for a tensor of rank 2",
    );
    refused(
        aclnn::arg_min(&s, &arg(&x, &[2, 3]), 0, false, &mut out(&mut a2, &[2])),
        "aclnnArgMinGetWorkspaceSize",
        "out is int64 [2], but the result is int64 [3]",
    );
    let mut ci = zeros::<i64>(&s, 6);
    refused(
        aclnn::cummin(
            &s,
            &arg(&x, &[2, 3]),
            0,
            &mut out(&mut o, &[3, 2]),
            &mut out(&mut ci, &[2, 3]),
        ),
        "aclnnCumminGetWorkspaceSize",
        "valuesOut is float32 [3, 2], but the result is float32 [2, 3]",
    );
    refused(
        aclnn::linalg_cross(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&x, &[2, 3]),
            2,
            &mut out(&mut o, &[2, 3]),
        ),
        "aclnnLinalgCrossGetWorkspaceSize",
        "dim 2 is out of range for a tensor of rank 2",
    );
    let d = up(&s, &[0.5f64; 6]);
    refused(
        aclnn::tanh_backward(&s, &arg(&x, &[6]), &arg(&d, &[6]), &mut out(&mut o, &[6])),
        "aclnnTanhBackwardGetWorkspaceSize",
        "output is float64 but gradOutput is float32",
    );
    refused(
        aclnn::sigmoid_backward(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&x, &[2, 3]),
            &mut out(&mut o, &[6]),
        ),
        "aclnnSigmoidBackwardGetWorkspaceSize",
        "gradInput is float32 [6], but the result is float32 [2, 3]",
    );
    let mut ob = zeros::<Bool>(&s, 6);
    refused(
        aclnn::softmax_backward(
            &s,
            &arg(&x, &[2, 3]),
            &arg(&x, &[2, 3]),
            1,
            &mut out(&mut ob, &[2, 3]),
        ),
        "aclnnSoftmaxBackwardGetWorkspaceSize",
        "out is bool",
    );
}
