//! The single-operator path (`acl::aclop`) end to end on the simulator:
//! descriptions, attributes, execution on a stream, refreshed output
//! descriptions, handles, cast; every error path with its exact code, and
//! the checks made before any C call.

mod common;

use acl::aclop::{CompileFlag, Format, OpAttr, OpHandle, Operator, TensorDesc, UNKNOWN_DIM};
use acl::{DataType, Device, Error, ErrorCode, Stream};
use half::f16;
use std::sync::mpsc;

fn setup() -> (Device, Stream) {
    let npu = common::device(0);
    let s = npu.new_stream().expect("stream");
    (npu, s)
}

fn desc(dt: DataType, dims: &[i64]) -> TensorDesc {
    TensorDesc::new(dt, dims, Format::Nd).expect("desc")
}

fn acl_code(e: &Error) -> i32 {
    e.code().map(|c| c.raw()).unwrap_or(-1)
}

fn invalid(e: &Error) -> (&'static str, &str) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

#[test]
fn add_runs_on_the_stream_and_matches_the_host() {
    let (_npu, s) = setup();
    let a = s
        .clone_from_host(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let b = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    let mut c = s.alloc_zeros::<f32>(6).unwrap();
    let (da, db, mut dc) = (
        desc(DataType::Float, &[2, 3]),
        desc(DataType::Float, &[3]),
        desc(DataType::Float, &[2, 3]),
    );
    Operator::new("Add")
        .input(&da, &a)
        .input(&db, &b)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap();
    assert_eq!(
        c.to_host_vec().unwrap(),
        [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
    );
}

#[test]
fn matmul_with_transpose_attributes_matches_the_host() {
    let (_npu, s) = setup();
    // a is stored as [3, 2] and transposed to [2, 3].
    let a = s
        .clone_from_host(&[1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0])
        .unwrap();
    let b = s
        .clone_from_host(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])
        .unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let (da, db, mut dc) = (
        desc(DataType::Float, &[3, 2]),
        desc(DataType::Float, &[3, 2]),
        desc(DataType::Float, &[2, 2]),
    );
    let mut attr = OpAttr::new().unwrap();
    attr.set_bool("transpose_x1", true)
        .unwrap()
        .set_bool("transpose_x2", false)
        .unwrap();
    Operator::new("MatMul")
        .input(&da, &a)
        .input(&db, &b)
        .output(&mut dc, &mut c)
        .attr(&attr)
        .compile_and_execute(&s)
        .unwrap();
    // [[1,2,3],[4,5,6]] @ [[1,0],[0,1],[1,1]]
    assert_eq!(c.to_host_vec().unwrap(), [4.0, 5.0, 10.0, 11.0]);
}

#[test]
fn output_with_unknown_dims_is_refreshed_by_execute() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32, -2.0, 3.0, -4.0]).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, UNKNOWN_DIM]);
    // At most 2 × 2 floats: the 16 bytes of `y`.
    dy.set_shape_range(&[(1, 2), (1, 2)]).unwrap();
    assert_eq!((dy.size_bytes(), dy.max_size_bytes()), (None, Some(16)));
    Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap();
    assert_eq!(dy.dims(), [2, 2]);
    assert_eq!(dy.size_bytes(), Some(16));
    assert_eq!(y.to_host_vec().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn operators_are_asynchronous_and_ordered_on_their_stream() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let d = desc(DataType::Float, &[4]);
    let mut dc = desc(DataType::Float, &[4]);
    let (open, gate) = mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = gate.recv();
    })
    .unwrap();
    Operator::new("Add")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap();
    // The operator is queued behind the closed gate: not run yet.
    assert!(!s.is_complete().unwrap());
    open.send(()).unwrap();
    s.synchronize().unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [2.0; 4]);
}

#[test]
fn buffers_homed_on_another_stream_are_ordered_with_events() {
    let (npu, home) = setup();
    let other = npu.new_stream().unwrap();
    let a = home.clone_from_host(&[3.0f32, 4.0]).unwrap();
    let mut c = home.alloc_zeros::<f32>(2).unwrap();
    let d = desc(DataType::Float, &[2]);
    let mut dc = desc(DataType::Float, &[2]);
    Operator::new("Mul")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&other)
        .unwrap();
    // Reading on the home stream sees the result: the home waits for `other`.
    assert_eq!(c.to_host_vec().unwrap(), [9.0, 16.0]);
}

#[test]
fn in_place_add_reads_inputs_before_writing() {
    let (_npu, s) = setup();
    let mut a = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let d = desc(DataType::Float, &[2]);
    let dc = desc(DataType::Float, &[2]);
    let raw = a.as_raw_mut_ptr();
    // Through the raw API: the same buffer as both inputs and the output.
    // SAFETY: data buffers only record the address and size.
    let (ad, ab) = unsafe {
        (
            acl_sys::aclCreateDataBuffer(raw, 8).unwrap(),
            acl_sys::aclCreateDataBuffer(raw, 8).unwrap(),
        )
    };
    let mut in_d = [d.as_raw(), d.as_raw()];
    let mut in_b = [ad, ad];
    let mut out_d = [dc.as_raw()];
    let mut out_b = [ab];
    // SAFETY: live descriptions and data buffers, arrays valid for their
    // counts; `a` outlives the operator (synchronised below).
    let rc = unsafe {
        acl_sys::aclopExecuteV2(
            c"Add".as_ptr(),
            2,
            in_d.as_mut_ptr(),
            in_b.as_mut_ptr(),
            1,
            out_d.as_mut_ptr(),
            out_b.as_mut_ptr(),
            std::ptr::null_mut(),
            s.as_raw(),
        )
        .unwrap()
    };
    assert_eq!(rc, 0);
    // SAFETY: made above, destroyed once; the call that used them returned.
    unsafe {
        acl_sys::aclDestroyDataBuffer(ad).unwrap();
        acl_sys::aclDestroyDataBuffer(ab).unwrap();
    }
    s.synchronize().unwrap();
    assert_eq!(a.to_host_vec().unwrap(), [2.0, 4.0]);
}

#[test]
fn unknown_operator_is_op_not_found_with_its_name() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32]).unwrap();
    let mut c = s.alloc_zeros::<f32>(1).unwrap();
    let d = desc(DataType::Float, &[1]);
    let mut dc = desc(DataType::Float, &[1]);
    let e = Operator::new("NoSuchOp")
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::OpNotFound), "{e}");
    assert_eq!(acl_code(&e), 100024);
    assert_eq!(e.function(), Some("aclopExecuteV2"));
    assert!(e.message().unwrap().contains("NoSuchOp"), "{e}");
}

#[test]
fn wrong_input_count_is_input_not_match() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32]).unwrap();
    let mut c = s.alloc_zeros::<f32>(1).unwrap();
    let d = desc(DataType::Float, &[1]);
    let mut dc = desc(DataType::Float, &[1]);
    let e = Operator::new("Add")
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(acl_code(&e), 100021, "{e}");
    assert!(e.message().unwrap().contains("Add"), "{e}");
}

#[test]
fn shapes_that_do_not_broadcast_are_input_not_match() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let b = s.clone_from_host(&[1.0f32; 2]).unwrap();
    let mut c = s.alloc_zeros::<f32>(6).unwrap();
    let (da, db, mut dc) = (
        desc(DataType::Float, &[2, 3]),
        desc(DataType::Float, &[2]),
        desc(DataType::Float, &[2, 3]),
    );
    let e = Operator::new("Add")
        .input(&da, &a)
        .input(&db, &b)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(acl_code(&e), 100021, "{e}");
}

#[test]
fn output_of_the_wrong_shape_is_output_not_match() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let d = desc(DataType::Float, &[4]);
    let mut dc = desc(DataType::Float, &[2, 2]);
    let e = Operator::new("Add")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(acl_code(&e), 100022, "{e}");
    assert!(e.message().unwrap().contains("[2, 2]"), "{e}");
}

#[test]
fn ill_typed_attribute_is_attr_not_match() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let d = desc(DataType::Float, &[2, 2]);
    let mut dc = desc(DataType::Float, &[2, 2]);
    let mut attr = OpAttr::new().unwrap();
    attr.set_int("transpose_x1", 1).unwrap();
    let e = Operator::new("MatMul")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .attr(&attr)
        .execute(&s)
        .unwrap_err();
    assert_eq!(acl_code(&e), 100023, "{e}");
    assert!(e.message().unwrap().contains("transpose_x1"), "{e}");
}

#[test]
fn buffer_of_another_element_type_is_rejected_before_c() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1i32; 4]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let d = desc(DataType::Float, &[4]);
    let mut dc = desc(DataType::Float, &[4]);
    let e = Operator::new("Add")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::input",
            "input 0: the buffer holds int32, the description says float32"
        )
    );
}

#[test]
fn buffer_of_another_size_is_rejected_before_c() {
    let (_npu, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 3]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    let d = desc(DataType::Float, &[4]);
    let mut dc = desc(DataType::Float, &[4]);
    let e = Operator::new("Add")
        .input(&d, &a)
        .input(&d, &a)
        .output(&mut dc, &mut c)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::input",
            "input 0: the buffer holds 12 bytes, but float32 of shape [4] is 16 bytes"
        )
    );
}

#[test]
fn input_whose_storage_shape_exceeds_the_buffer_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let mut y = s.alloc_zeros::<f32>(6).unwrap();
    let mut dx = desc(DataType::Float, &[2, 3]);
    // The data is stored padded to 2 × 16 elements: 128 bytes, not 24.
    dx.set_storage_shape(&[2, 16]).unwrap();
    let mut dy = desc(DataType::Float, &[2, 3]);
    let e = Operator::new("Relu")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::input",
            "input 0: the buffer holds 24 bytes, but float32 of shape [2, 3] with storage shape \
             [2, 16] is 128 bytes"
        )
    );
}

#[test]
fn output_whose_storage_shape_exceeds_the_buffer_is_rejected_even_with_unknown_dims() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let mut y = s.alloc_zeros::<f32>(6).unwrap();
    let dx = desc(DataType::Float, &[2, 3]);
    // Unknown dimensions leave the shape's size open, but the storage shape
    // fixes what the buffer must hold.
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, 3]);
    dy.set_storage_shape(&[4, 16]).unwrap();
    let e = Operator::new("Relu")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::output",
            "output 0: the buffer holds 24 bytes, but float32 of shape [-1, 3] with storage shape \
             [4, 16] is 256 bytes"
        )
    );
}

#[test]
fn handle_slot_whose_storage_shape_exceeds_the_buffer_is_rejected_before_c() {
    let (_npu, s) = setup();
    let mut d = desc(DataType::Float, &[3]);
    d.set_storage_shape(&[16]).unwrap();
    let plain = desc(DataType::Float, &[3]);
    let h = OpHandle::new("Relu", &[&d], &[&plain], None).unwrap();
    let x = s.clone_from_host(&[1.0f32; 3]).unwrap();
    let mut y = s.alloc_zeros::<f32>(3).unwrap();
    let e = h.launch().input(&x).output(&mut y).execute(&s).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "HandleLaunch",
            "input 0: the buffer holds 12 bytes, but float32 of shape [3] with storage shape [16] \
             is 64 bytes"
        )
    );
}

#[test]
fn size_bytes_follows_the_storage_shape_once_set() {
    common::device(0);
    let mut d = desc(DataType::Float16, &[3, 5]);
    assert_eq!(d.size_bytes(), Some(30));
    assert_eq!((d.storage_dims(), d.storage_format()), (None, None));
    d.set_storage_shape(&[1, 1, 16, 16]).unwrap();
    d.set_storage_format(Format::FractalNz).unwrap();
    assert_eq!(d.size_bytes(), Some(512));
    assert_eq!(d.storage_dims(), Some(&[1, 1, 16, 16][..]));
    assert_eq!(d.storage_format(), Some(Format::FractalNz));
    // A plain storage layout needs no storage shape.
    let mut p = desc(DataType::Float, &[2, 3]);
    p.set_storage_format(Format::Nchw).unwrap();
    assert_eq!(p.size_bytes(), Some(24));
}

#[test]
fn padded_storage_format_before_a_storage_shape_is_rejected() {
    common::device(0);
    for f in [Format::Nc1hwc0, Format::FractalZ, Format::FractalNz] {
        let mut d = desc(DataType::Float16, &[3, 5]);
        let e = d.set_storage_format(f).unwrap_err();
        assert_eq!(
            invalid(&e),
            (
                "TensorDesc::set_storage_format",
                format!(
                    "{f:?} pads the data, so the buffer size follows from the storage shape: \
                     call set_storage_shape first"
                )
                .as_str()
            )
        );
        assert_eq!(d.storage_format(), None);
    }
}

#[test]
fn storage_shape_with_unknown_or_overflowing_dims_is_rejected() {
    common::device(0);
    let mut d = desc(DataType::Float, &[2, 3]);
    let e = d.set_storage_shape(&[UNKNOWN_DIM, 3]).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "TensorDesc::set_storage_shape",
            "storage shape [-1, 3] has unknown dimensions; a storage shape describes the buffer \
             and must be concrete"
        )
    );
    let e = d.set_storage_shape(&[i64::MAX, 4]).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "TensorDesc::set_storage_shape",
            "shape [9223372036854775807, 4]: the element count overflows"
        )
    );
    assert_eq!((d.storage_dims(), d.size_bytes()), (None, Some(24)));
}

#[test]
fn max_size_bytes_bounds_unknown_dims_by_their_ranges() {
    common::device(0);
    let mut d = desc(DataType::Float, &[UNKNOWN_DIM, 8]);
    assert_eq!((d.size_bytes(), d.max_size_bytes()), (None, None));
    d.set_shape_range(&[(1, 64), (8, 8)]).unwrap();
    assert_eq!(d.max_size_bytes(), Some(64 * 8 * 4));
    d.set_shape_range(&[(1, -1), (8, 8)]).unwrap();
    assert_eq!(d.max_size_bytes(), None, "an unbounded range");
    d.set_shape_range(&[(1, 2), (8, 8)]).unwrap();
    d.set_shape(&[UNKNOWN_DIM, 4]).unwrap();
    assert_eq!(
        d.max_size_bytes(),
        None,
        "ranges of the old shape are forgotten"
    );
    d.set_shape(&[2, 4]).unwrap();
    assert_eq!(d.max_size_bytes(), Some(32));
    let mut r = desc(DataType::Float, &[acl::aclop::UNKNOWN_RANK]);
    r.set_shape_range(&[(1, 4)]).unwrap();
    assert_eq!(r.max_size_bytes(), None, "an unknown rank has no bound");
}

#[test]
fn operator_name_with_a_nul_byte_is_rejected_before_c() {
    let (_npu, s) = setup();
    let e = Operator::new("Ad\0d").execute(&s).unwrap_err();
    assert_eq!(invalid(&e).0, "Operator::new");
}

#[test]
fn descriptions_reject_invalid_shapes_and_formats_before_c() {
    cann_sim::install().unwrap();
    let e = TensorDesc::new(DataType::Float, &[2, -3], Format::Nd).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "TensorDesc::new",
            "shape [2, -3]: dimension -3 is invalid (expected >= 0, -1 for unknown, or [-2] alone for unknown rank)"
        )
    );
    let e = TensorDesc::new(DataType::Float, &[2, -2], Format::Nd).unwrap_err();
    assert_eq!(invalid(&e).0, "TensorDesc::new");
    let e = TensorDesc::new(DataType::Float, &[1; 129], Format::Nd).unwrap_err();
    assert!(invalid(&e).1.contains("ACL_MAX_DIM_CNT"), "{e}");
    let e = TensorDesc::new(DataType::Float, &[i64::MAX, 4], Format::Nd).unwrap_err();
    assert!(invalid(&e).1.contains("overflows"), "{e}");
    let e = TensorDesc::new(DataType::Float, &[2], Format::Undefined).unwrap_err();
    assert_eq!(invalid(&e).0, "TensorDesc::new");
    let mut d = desc(DataType::Float, &[2]);
    assert_eq!(
        invalid(&d.set_name("a\0b").unwrap_err()).0,
        "TensorDesc::set_name"
    );
    let long = "n".repeat(129);
    assert!(invalid(&d.set_name(&long).unwrap_err()).1.contains("128"));
    let e = d.set_const(&[1i32, 2]).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "TensorDesc::set_const",
            "the values are int32, the description is float32"
        )
    );
    let e = d.set_const(&[1.0f32]).unwrap_err();
    assert_eq!(
        invalid(&e),
        ("TensorDesc::set_const", "1 values for shape [2]")
    );
    let e = d.set_shape_range(&[(3, 1)]).unwrap_err();
    assert_eq!(invalid(&e).0, "TensorDesc::set_shape_range");
    let e = d.set_shape_range(&[(1, 2), (1, 2)]).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "TensorDesc::set_shape_range",
            "2 ranges for a 1-dimensional tensor"
        )
    );
}

#[test]
fn descriptions_round_trip_through_the_runtime() {
    cann_sim::install().unwrap();
    let mut d = TensorDesc::new(DataType::BFloat16, &[4, 8], Format::Nchw).unwrap();
    d.set_name("weight").unwrap();
    d.set_storage_shape(&[1, 1, 16, 16]).unwrap();
    d.set_storage_format(Format::FractalNz).unwrap();
    d.set_origin_format(Format::Nd).unwrap();
    d.set_origin_shape(&[4, 8]).unwrap();
    d.set_shape(&[UNKNOWN_DIM, 8]).unwrap();
    d.set_shape_range(&[(1, 64), (8, 8)]).unwrap();
    assert_eq!(d.name().unwrap(), "weight");
    assert_eq!(d.dims(), [UNKNOWN_DIM, 8]);
    assert_eq!(d.format(), Format::Nchw);
    assert_eq!(d.data_type(), Some(DataType::BFloat16));
    // The runtime's view agrees.
    // SAFETY: `d` is a live description.
    unsafe {
        assert_eq!(
            acl_sys::aclGetTensorDescType(d.as_raw()).unwrap(),
            acl_sys::ACL_BF16
        );
        assert_eq!(
            acl_sys::aclGetTensorDescFormat(d.as_raw()).unwrap(),
            acl_sys::ACL_FORMAT_NCHW
        );
        assert_eq!(acl_sys::aclGetTensorDescNumDims(d.as_raw()).unwrap(), 2);
        let mut range = [0i64; 2];
        assert_eq!(
            acl_sys::aclGetTensorDescDimRange(d.as_raw(), 0, 2, range.as_mut_ptr()).unwrap(),
            0
        );
        assert_eq!(range, [1, 64]);
    }
    let mut c = desc(DataType::Int64, &[3]);
    c.set_const(&[1i64, 2, 3]).unwrap();
    assert_eq!(
        acl::aclop::Format::from_raw(acl_sys::ACL_FORMAT_FRACTAL_NZ),
        Some(Format::FractalNz)
    );
}

#[test]
fn attributes_of_every_kind_are_accepted() {
    cann_sim::install().unwrap();
    let mut a = OpAttr::new().unwrap();
    a.set_bool("b", true)
        .unwrap()
        .set_int("i", -3)
        .unwrap()
        .set_float("f", 0.5)
        .unwrap()
        .set_str("s", "x")
        .unwrap()
        .set_data_type("t", DataType::Float16)
        .unwrap()
        .set_list_bool("lb", &[true, false])
        .unwrap()
        .set_list_int("li", &[1, 2])
        .unwrap()
        .set_list_float("lf", &[1.5])
        .unwrap()
        .set_list_str("ls", &["a", "b"])
        .unwrap()
        .set_list_data_type("lt", &[DataType::Int32])
        .unwrap()
        .set_list_list_int("lli", &[&[1, 2], &[3]])
        .unwrap();
    assert_eq!(invalid(&a.set_int("", 1).unwrap_err()).0, "OpAttr::set_int");
    assert_eq!(
        invalid(&a.set_str("s", "a\0").unwrap_err()),
        ("OpAttr::set_str", "the value \"a\\0\" contains a NUL byte")
    );
    assert_eq!(
        invalid(&a.set_list_str("ls", &["\0"]).unwrap_err()).0,
        "OpAttr::set_list_str"
    );
}

#[test]
fn handles_run_repeatedly_and_check_their_buffers() {
    let (_npu, s) = setup();
    let d = desc(DataType::Float, &[3]);
    let h = OpHandle::new("Relu", &[&d], &[&d], None).unwrap();
    assert_eq!(h.op_type(), "Relu");
    let x = s.clone_from_host(&[-1.0f32, 0.5, 2.0]).unwrap();
    let mut y = s.alloc_zeros::<f32>(3).unwrap();
    for _ in 0..3 {
        h.launch().input(&x).output(&mut y).execute(&s).unwrap();
    }
    assert_eq!(y.to_host_vec().unwrap(), [0.0, 0.5, 2.0]);
    let short = s.clone_from_host(&[1.0f32; 2]).unwrap();
    let e = h
        .launch()
        .input(&short)
        .output(&mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "HandleLaunch",
            "input 0: the buffer holds 8 bytes, but float32 of shape [3] is 12 bytes"
        )
    );
    let e = h.launch().output(&mut y).execute(&s).unwrap_err();
    assert_eq!(invalid(&e).0, "HandleLaunch::execute");
    // The runtime checks the operator at creation.
    let e = OpHandle::new("NoSuchOp", &[&d], &[&d], None).unwrap_err();
    assert_eq!(
        (acl_code(&e), e.function()),
        (100024, Some("aclopCreateHandle"))
    );
    let bad = desc(DataType::Float, &[4]);
    let e = OpHandle::new("Relu", &[&d], &[&bad], None).unwrap_err();
    assert_eq!(acl_code(&e), 100022, "{e}");
}

#[test]
fn cast_converts_f32_to_f16_through_aclop_cast_and_its_handle() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.5f32, -2.25, 65504.0]).unwrap();
    let mut y = s.alloc_zeros::<f16>(3).unwrap();
    let (dx, dy) = (desc(DataType::Float, &[3]), desc(DataType::Float16, &[3]));
    acl::aclop::cast(&s, &dx, &x, &dy, &mut y, false).unwrap();
    let want: Vec<f16> = [1.5f32, -2.25, 65504.0]
        .iter()
        .map(|&v| f16::from_f32(v))
        .collect();
    assert_eq!(y.to_host_vec().unwrap(), want);
    let h = OpHandle::for_cast(&dx, &dy, false).unwrap();
    let mut z = s.alloc_zeros::<f16>(3).unwrap();
    h.launch().input(&x).output(&mut z).execute(&s).unwrap();
    assert_eq!(z.to_host_vec().unwrap(), want);
    let e = acl::aclop::cast(&s, &dx, &x, &dx, &mut y, false).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "aclop::cast",
            "output 0: the buffer holds float16, the description says float32"
        )
    );
}

#[test]
fn compile_flag_accepts_both_modes() {
    cann_sim::install().unwrap();
    acl::aclop::set_compile_flag(CompileFlag::Fuzz).unwrap();
    acl::aclop::set_compile_flag(CompileFlag::Default).unwrap();
    // SAFETY: a plain integer argument (an invalid one, refused).
    let rc = unsafe { acl_sys::aclopSetCompileFlag(7).unwrap() };
    assert_eq!(rc, acl_sys::ACL_ERROR_INVALID_PARAM);
}

#[test]
fn memory_freed_before_the_operator_runs_faults_at_synchronize() {
    cann_sim::sim_only!("configures the simulator through CANN_SIM_* variables");
    // The released runtime's behaviour shows with cann-sim's check off;
    // with it on (CANN_SIM_CHECK, "report" under cargo) the free itself is
    // refused. Then the test also runs in a child process with it off.
    const NAME: &str = "memory_freed_before_the_operator_runs_faults_at_synchronize";
    use cann_sim::check::{self, Mode};
    let mode = check::mode();
    if mode != Mode::Off {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([NAME, "--exact", "--test-threads=1"])
            .env(check::ENV, "off")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("test result: ok. 1 passed"),
            "{NAME} with {}=off: {}\n{stdout}\n{}",
            check::ENV,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (_npu, s) = setup();
    let d = desc(DataType::Float, &[4]);
    let dc = desc(DataType::Float, &[4]);
    let a = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    s.synchronize().unwrap();
    // Hold the stream, queue the operator, free an input under it (raw
    // free, bypassing the buffer's stream ordering), then let it run.
    let (open, gate) = mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = gate.recv();
    })
    .unwrap();
    let raw = acl::result::malloc(16, acl_sys::ACL_MEM_MALLOC_HUGE_FIRST).unwrap();
    // SAFETY: live descriptions; data buffers over live device memory
    // (`raw`, `c`) that outlives the queued operator (the stream is
    // synchronised before either is released, except the free under test).
    let rc = unsafe {
        let ib = acl_sys::aclCreateDataBuffer(raw, 16).unwrap();
        let ob = acl_sys::aclCreateDataBuffer(c.as_raw_mut_ptr(), 16).unwrap();
        let mut in_d = [d.as_raw(), d.as_raw()];
        let mut in_b = [ib, ib];
        let mut out_d = [dc.as_raw()];
        let mut out_b = [ob];
        let rc = acl_sys::aclopExecuteV2(
            c"Add".as_ptr(),
            2,
            in_d.as_mut_ptr(),
            in_b.as_mut_ptr(),
            1,
            out_d.as_mut_ptr(),
            out_b.as_mut_ptr(),
            std::ptr::null_mut(),
            s.as_raw(),
        )
        .unwrap();
        acl_sys::aclDestroyDataBuffer(ib).unwrap();
        acl_sys::aclDestroyDataBuffer(ob).unwrap();
        rc
    };
    assert_eq!(rc, 0);
    // SAFETY: `raw` came from `malloc` and is freed once here (or, when the
    // check refuses, once below); the queued operator's use of it is the
    // misuse under test, which the runtime reports.
    let freed = unsafe { acl::result::free(raw) };
    if mode == Mode::Off {
        freed.unwrap();
        open.send(()).unwrap();
        let e = s.synchronize().unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::RtAicoreException), "{e}");
        assert!(
            e.message().unwrap().contains("freed before the task ran"),
            "{e}"
        );
    } else {
        let e = freed.unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::RtMemoryFree), "{e}");
        assert!(
            e.message()
                .unwrap()
                .contains("CANN_SIM_CHECK free-while-pending"),
            "{e}"
        );
        open.send(()).unwrap();
        s.synchronize().unwrap();
        // SAFETY: the refused free left `raw` allocated; nothing uses it now.
        unsafe { acl::result::free(raw) }.unwrap();
    }
    drop(a);
}

#[test]
fn host_memory_as_an_operator_buffer_is_param_invalid() {
    let (_npu, s) = setup();
    let d = desc(DataType::Float, &[2]);
    let dc = desc(DataType::Float, &[2]);
    let host = [1.0f32, 2.0];
    let mut c = s.alloc_zeros::<f32>(2).unwrap();
    // SAFETY: live descriptions and buffers; the host array is the misuse
    // under test, refused by the runtime before anything reads it.
    let rc = unsafe {
        let ib = acl_sys::aclCreateDataBuffer(host.as_ptr().cast_mut().cast(), 8).unwrap();
        let ob = acl_sys::aclCreateDataBuffer(c.as_raw_mut_ptr(), 8).unwrap();
        let mut in_d = [d.as_raw(), d.as_raw()];
        let mut in_b = [ib, ib];
        let mut out_d = [dc.as_raw()];
        let mut out_b = [ob];
        let rc = acl_sys::aclopExecuteV2(
            c"Add".as_ptr(),
            2,
            in_d.as_mut_ptr(),
            in_b.as_mut_ptr(),
            1,
            out_d.as_mut_ptr(),
            out_b.as_mut_ptr(),
            std::ptr::null_mut(),
            s.as_raw(),
        )
        .unwrap();
        acl_sys::aclDestroyDataBuffer(ib).unwrap();
        acl_sys::aclDestroyDataBuffer(ob).unwrap();
        rc
    };
    assert_eq!(rc, acl_sys::ACL_ERROR_RT_PARAM_INVALID as i32);
}

#[test]
fn output_with_unknown_dims_and_no_bounded_range_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32, -2.0, 3.0, -4.0]).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, 2]);
    let want = (
        "Operator::output",
        "output 0: shape [-1, 2] has unknown dimensions and no bounded shape range, so the \
         operator could write more than the buffer's 16 bytes; set \
         TensorDesc::set_shape_range with a maximum for each unknown dimension",
    );
    let e = Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(invalid(&e), want);
    // A range without a maximum (-1) bounds nothing either.
    dy.set_shape_range(&[(1, -1), (2, 2)]).unwrap();
    let e = Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .compile_and_execute(&s)
        .unwrap_err();
    assert_eq!(invalid(&e), want);
    assert_eq!(dy.dims(), [UNKNOWN_DIM, 2], "nothing ran");
    assert_eq!(y.to_host_vec().unwrap(), [0.0; 4]);
}

#[test]
fn output_with_unknown_rank_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[acl::aclop::UNKNOWN_RANK]);
    dy.set_shape_range(&[(1, 4)]).unwrap();
    let e = Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::output",
            "output 0: shape [-2] has an unknown rank, which bounds no size, so the operator \
             could write more than the buffer's 16 bytes; give the output its rank, with \
             UNKNOWN_DIM for the unknown dimensions and TensorDesc::set_shape_range for their \
             maxima"
        )
    );
}

#[test]
fn output_whose_shape_range_maximum_exceeds_the_buffer_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32, -2.0, 3.0, -4.0]).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, 2]);
    // Up to 4 × 2 floats: 32 bytes, but the buffer holds 16.
    dy.set_shape_range(&[(1, 4), (2, 2)]).unwrap();
    let e = Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::output",
            "output 0: the buffer holds 16 bytes, but float32 of shape [-1, 2] at the maxima of \
             its shape ranges is 32 bytes; the operator could write past the buffer"
        )
    );
    assert_eq!(y.to_host_vec().unwrap(), [0.0; 4], "nothing ran");
}

#[test]
fn output_buffer_holding_the_shape_range_maximum_is_accepted_and_refreshed() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32, -2.0, 3.0, -4.0]).unwrap();
    // Room for up to 3 × 2 floats; the operator gives 2 × 2.
    let mut y = s.alloc_zeros::<f32>(6).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, 2]);
    dy.set_shape_range(&[(1, 3), (2, 2)]).unwrap();
    Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap();
    assert_eq!(dy.dims(), [2, 2]);
    assert_eq!(y.to_host_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
}

#[test]
fn handles_with_unknown_dims_are_rejected_before_c() {
    let (_npu, _s) = setup();
    let unknown = desc(DataType::Float, &[UNKNOWN_DIM]);
    let known = desc(DataType::Float, &[3]);
    let e = OpHandle::new("Relu", &[&unknown], &[&known], None).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "OpHandle::new",
            "input 0: shape [-1] has unknown dimensions; a handle needs concrete shapes"
        )
    );
    let e = OpHandle::new("Relu", &[&known], &[&unknown], None).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "OpHandle::new",
            "output 0: shape [-1] has unknown dimensions; a handle needs concrete shapes"
        )
    );
    let half = desc(DataType::Float16, &[UNKNOWN_DIM]);
    let e = OpHandle::for_cast(&unknown, &half, false).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "OpHandle::for_cast",
            "input 0: shape [-1] has unknown dimensions; a handle needs concrete shapes"
        )
    );
}

#[test]
fn cast_with_unknown_dims_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32; 3]).unwrap();
    let mut y = s.alloc_zeros::<f16>(3).unwrap();
    let (dx, dy) = (
        desc(DataType::Float, &[UNKNOWN_DIM]),
        desc(DataType::Float16, &[UNKNOWN_DIM]),
    );
    let e = acl::aclop::cast(&s, &dx, &x, &dy, &mut y, false).unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "aclop::cast",
            "input 0: shape [-1] has unknown dimensions; inputs need concrete shapes"
        )
    );
}

#[test]
fn output_whose_shape_range_maxima_overflow_is_rejected_before_c() {
    let (_npu, s) = setup();
    let x = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let dx = desc(DataType::Float, &[2, 2]);
    let mut dy = desc(DataType::Float, &[UNKNOWN_DIM, UNKNOWN_DIM]);
    dy.set_shape_range(&[(1, i64::MAX), (1, i64::MAX)]).unwrap();
    let e = Operator::new("Abs")
        .input(&dx, &x)
        .output(&mut dy, &mut y)
        .execute(&s)
        .unwrap_err();
    assert_eq!(
        invalid(&e),
        (
            "Operator::output",
            "output 0: float32 of shape [-1, -1] at the maxima of its shape ranges is more \
             bytes than usize holds; set smaller maxima with TensorDesc::set_shape_range"
        )
    );
}
