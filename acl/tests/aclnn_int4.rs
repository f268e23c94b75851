//! Packed int4 weights through `acl::aclnn` on cann-sim:
//! `TensorArg::packed_int4` (contiguous) and `packed_int4_with_layout`
//! (the transposed `[k, n]` view of an `[n, k]` weight) in
//! `aclnnWeightQuantBatchMatmulV2`, against a host reference, and the
//! exact errors of shapes that do not fit.

mod common;

use acl::aclnn::{self, Layout, TensorArg, TensorArgMut};
use acl::{DataType, DynTensor, Error, Stream};
use half::f16;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

/// Two signed 4-bit values per byte, the even index in the low nibble.
fn pack(values: &[i8]) -> Vec<u8> {
    values
        .chunks(2)
        .map(|p| (p[0] as u8 & 0x0F) | ((p[1] as u8 & 0x0F) << 4))
        .collect()
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("not InvalidArgument: {other:?}"),
    }
}

#[test]
fn int4_weights_multiply_contiguous_and_transposed() {
    let s = stream();
    let (m, k, n) = (2usize, 4usize, 2usize);
    // The weight [k, n] row-major, and the same weight stored [n, k].
    let w_kn: Vec<i8> = vec![1, -2, 3, 4, -8, 7, 0, -1];
    let w_nk: Vec<i8> = (0..n * k).map(|i| w_kn[(i % k) * n + i / k]).collect();
    let x: Vec<f32> = vec![0.5, -1.0, 2.0, 1.5, 1.0, 0.0, -0.5, 2.0];
    let scale = [0.5f32, 2.0];
    let want: Vec<f32> = (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            (0..k)
                .map(|p| x[r * k + p] * f32::from(w_kn[p * n + c]) * scale[c])
                .sum()
        })
        .collect();
    let dx = s
        .clone_from_host(&x.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>())
        .unwrap();
    let ds = s.clone_from_host(&scale.map(f16::from_f32)).unwrap();
    let (w1, w2) = (
        s.clone_from_host(&pack(&w_kn)).unwrap(),
        s.clone_from_host(&pack(&w_nk)).unwrap(),
    );
    let transposed = Layout {
        dims: vec![k as i64, n as i64],
        strides: vec![1, k as i64],
        offset: 0,
        format: acl_sys::ACL_FORMAT_ND,
        storage_dims: vec![(n * k) as i64],
    };
    for (what, w) in [
        ("contiguous", TensorArg::packed_int4(&w1, &[k, n]).unwrap()),
        (
            "transposed",
            TensorArg::packed_int4_with_layout(&w2, &transposed).unwrap(),
        ),
    ] {
        assert_eq!(w.data_type(), DataType::Int4);
        let mut y = s.alloc_zeros::<f16>(m * n).unwrap();
        {
            let mut ty = TensorArgMut::new(&mut y, &[m, n]).unwrap();
            aclnn::weight_quant_batch_matmul_v2(
                &s,
                &TensorArg::new(&dx, &[m, k]).unwrap(),
                &w,
                &TensorArg::new(&ds, &[n]).unwrap(),
                None,
                None,
                None,
                None,
                0,
                &mut ty,
            )
            .unwrap();
        }
        let got: Vec<f32> = y
            .to_host_vec()
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn int4_shapes_that_do_not_fit_are_refused_with_their_reason() {
    let s = stream();
    let w = s.clone_from_host(&[0u8; 4]).unwrap();
    // 4 bytes hold 8 values, not 4.
    let (function, reason) = invalid(TensorArg::packed_int4(&w, &[2, 2]).unwrap_err());
    assert_eq!(function, "aclCreateTensor");
    assert_eq!(reason, "shape [2, 2] does not hold the buffer's 8 elements");
    let (function, reason) = invalid(TensorArg::packed_int4(&w, &[8, 1]).unwrap_err());
    assert_eq!(function, "TensorArg::packed_int4");
    assert_eq!(
        reason,
        "shape [8, 1]: the last dimension must be even (whole bytes per row)"
    );
    let (function, reason) = invalid(DynTensor::zeros(&s, DataType::Int4, &[2]).unwrap_err());
    assert_eq!(function, "DynTensor");
    assert!(reason.starts_with("int4 has no element type"), "{reason}");
}
