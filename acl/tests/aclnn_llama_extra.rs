//! The aclnn operators llama.cpp's CANN backend calls that the first table
//! lacked (`Addmm` / `InplaceAddmm`, `InplaceEqTensor`, `Ger`,
//! `CalculateMatmulWeightSizeV2`) through `acl::aclnn`: values against host
//! references, broadcasting, the release's beta = 0 / alpha = 0 paths, and
//! misuse with its exact status.

mod common;

use acl::aclnn::{self, CubeMathType, Layout, Scalar, TensorArg, TensorArgMut};
use acl::memory::{DeviceMemory, DeviceMemoryMut, Element};
use acl::{DataType, DeviceBuffer, Error, Stream};
use half::{bf16, f16};

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn status(e: Error) -> (i32, String) {
    match e {
        Error::Acl { code, message, .. } => (code.raw(), message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

/// A contiguous tensor of `shape` over the first elements of `mem`.
fn arg<'a, T: Element>(
    mem: &'a impl DeviceMemory<T>,
    shape: &[usize],
) -> acl::Result<TensorArg<'a>> {
    TensorArg::with_layout(mem, &Layout::contiguous(shape)?)
}

/// [`arg`], written by the operator.
fn arg_mut<'a, T: Element>(
    mem: &'a mut impl DeviceMemoryMut<T>,
    shape: &[usize],
) -> acl::Result<TensorArgMut<'a>> {
    TensorArgMut::with_layout(mem, &Layout::contiguous(shape)?)
}

fn buf(s: &Stream, v: &[f32]) -> DeviceBuffer<f32> {
    s.clone_from_host(v).expect("upload")
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

/// `beta · self + alpha · (a @ b)` on the host, `self` of shape `sshape`
/// broadcasting to `[m, n]`.
#[allow(clippy::too_many_arguments)]
fn addmm_ref(
    sv: &[f32],
    sshape: &[usize],
    a: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
    beta: f64,
    alpha: f64,
) -> Vec<f64> {
    let (sr, sc) = match sshape {
        [c] => (1, *c),
        [r, c] => (*r, *c),
        _ => unreachable!(),
    };
    let mut out = vec![0.0; m * n];
    for r in 0..m {
        for c in 0..n {
            let dot: f64 = (0..k)
                .map(|p| f64::from(a[r * k + p]) * f64::from(b[p * n + c]))
                .sum();
            let s = sv[if sr == 1 { 0 } else { r } * sc + if sc == 1 { 0 } else { c }];
            out[r * n + c] = beta * f64::from(s) + alpha * dot;
        }
    }
    out
}

fn values(len: usize, scale: f32) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 % 11) as f32 - 5.0) * scale)
        .collect()
}

#[test]
fn addmm_matches_the_host_reference_for_every_broadcast_of_self_in_f32() {
    let s = stream();
    let (m, k, n) = (3, 4, 5);
    let (av, bv) = (values(m * k, 0.5), values(k * n, 0.25));
    let (a, b) = (buf(&s, &av), buf(&s, &bv));
    let (beta, alpha) = (Scalar::new(0.5f32).unwrap(), Scalar::new(2.0f64).unwrap());
    for sshape in [vec![n], vec![1, n], vec![m, 1], vec![m, n], vec![1, 1]] {
        let sv = values(sshape.iter().product(), 1.0);
        let sb = buf(&s, &sv);
        let mut o = s.alloc_zeros::<f32>(m * n).unwrap();
        {
            let ts = arg(&sb, &sshape).unwrap();
            let (ta, tb) = (arg(&a, &[m, k]).unwrap(), arg(&b, &[k, n]).unwrap());
            let mut to = arg_mut(&mut o, &[m, n]).unwrap();
            aclnn::addmm(
                &s,
                &ts,
                &ta,
                &tb,
                &beta,
                &alpha,
                &mut to,
                CubeMathType::KeepDtype,
            )
            .unwrap_or_else(|e| panic!("self {sshape:?}: {e}"));
        }
        let got: Vec<f64> = o
            .to_host_vec()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let want = addmm_ref(&sv, &sshape, &av, &bv, (m, k, n), 0.5, 2.0);
        close(&got, &want, 1e-6, &format!("self {sshape:?}"));
    }
}

/// Addmm with `self` `[n]`, `mat1` `[m, k]`, `mat2` `[k, n]` in the half
/// type `T` (`to`/`from` convert), beta = alpha = 1 (llama.cpp's call).
fn addmm_half<T: Element + Copy + Default>(
    s: &Stream,
    host: [&[f32]; 3],
    (m, k, n): (usize, usize, usize),
    cube: CubeMathType,
    to: fn(f32) -> T,
    from: fn(T) -> f64,
) -> Vec<f64> {
    let dev = |v: &[f32]| {
        s.clone_from_host(&v.iter().map(|&x| to(x)).collect::<Vec<T>>())
            .unwrap()
    };
    let (bias, a, b) = (dev(host[0]), dev(host[1]), dev(host[2]));
    let one = Scalar::new(1.0f32).unwrap();
    let mut o = s.alloc_zeros::<T>(m * n).unwrap();
    {
        let (ts, ta, tb) = (
            arg(&bias, &[n]).unwrap(),
            arg(&a, &[m, k]).unwrap(),
            arg(&b, &[k, n]).unwrap(),
        );
        let mut t = arg_mut(&mut o, &[m, n]).unwrap();
        aclnn::addmm(s, &ts, &ta, &tb, &one, &one, &mut t, cube).unwrap();
    }
    o.to_host_vec().unwrap().into_iter().map(from).collect()
}

#[test]
fn addmm_in_f16_and_bf16_matches_the_host_reference_within_rounding() {
    let s = stream();
    let (m, k, n) = (4, 8, 3);
    let (av, bv, sv) = (values(m * k, 0.25), values(k * n, 0.5), values(n, 1.0));
    let want = addmm_ref(&sv, &[n], &av, &bv, (m, k, n), 1.0, 1.0);
    let host = [&sv[..], &av, &bv];
    let got = addmm_half(
        &s,
        host,
        (m, k, n),
        CubeMathType::KeepDtype,
        f16::from_f32,
        |x| x.to_f64(),
    );
    close(&got, &want, 1e-3, "f16");
    // USE_FP32_ADD (4) is an Addmm option the page documents.
    let got = addmm_half(
        &s,
        host,
        (m, k, n),
        CubeMathType::UseFp32Add,
        bf16::from_f32,
        |x| x.to_f64(),
    );
    close(&got, &want, 8e-3, "bf16");
}

#[test]
fn addmm_with_beta_zero_ignores_nan_in_self_and_alpha_zero_ignores_nan_in_the_matrices() {
    let s = stream();
    let (m, k, n) = (2, 2, 2);
    let (a, b) = (
        buf(&s, &[1.0, 2.0, 3.0, 4.0]),
        buf(&s, &[1.0, 0.0, 0.0, 1.0]),
    );
    let nan = buf(&s, &[f32::NAN; 4]);
    let bias = buf(&s, &[10.0, 20.0]);
    let (zero, three) = (Scalar::new(0.0f32).unwrap(), Scalar::new(3.0f32).unwrap());
    let mut o = s.alloc_zeros::<f32>(4).unwrap();
    {
        let (ts, ta, tb) = (
            arg(&nan, &[m, n]).unwrap(),
            arg(&a, &[m, k]).unwrap(),
            arg(&b, &[k, n]).unwrap(),
        );
        let mut to = arg_mut(&mut o, &[m, n]).unwrap();
        aclnn::addmm(
            &s,
            &ts,
            &ta,
            &tb,
            &zero,
            &three,
            &mut to,
            CubeMathType::KeepDtype,
        )
        .unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [3.0, 6.0, 9.0, 12.0]);
    {
        let (ts, ta, tb) = (
            arg(&bias, &[n]).unwrap(),
            arg(&nan, &[m, k]).unwrap(),
            arg(&nan, &[k, n]).unwrap(),
        );
        let mut to = arg_mut(&mut o, &[m, n]).unwrap();
        aclnn::addmm(
            &s,
            &ts,
            &ta,
            &tb,
            &three,
            &zero,
            &mut to,
            CubeMathType::KeepDtype,
        )
        .unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [30.0, 60.0, 30.0, 60.0]);
}

#[test]
fn inplace_addmm_accumulates_into_self_ref() {
    let s = stream();
    let (a, b) = (
        buf(&s, &[1.0, 2.0, 3.0, 4.0]),
        buf(&s, &[5.0, 6.0, 7.0, 8.0]),
    );
    let mut c = buf(&s, &[1.0, 1.0, 1.0, 1.0]);
    let (beta, alpha) = (Scalar::new(2i32).unwrap(), Scalar::new(1.0f32).unwrap());
    {
        let (ta, tb) = (arg(&a, &[2, 2]).unwrap(), arg(&b, &[2, 2]).unwrap());
        let mut tc = arg_mut(&mut c, &[2, 2]).unwrap();
        aclnn::addmm_(
            &s,
            &mut tc,
            &ta,
            &tb,
            &beta,
            &alpha,
            CubeMathType::KeepDtype,
        )
        .unwrap();
    }
    // [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]], plus 2.
    assert_eq!(c.to_host_vec().unwrap(), [21.0, 24.0, 45.0, 52.0]);
}

#[test]
fn addmm_refuses_what_the_page_lists_with_161002() {
    let s = stream();
    let x = buf(&s, &[0.0; 24]);
    let one = Scalar::new(1.0f32).unwrap();
    let mut o = s.alloc_zeros::<f32>(24).unwrap();
    let mut case =
        |sshape: &[usize], ashape: &[usize], bshape: &[usize], oshape: &[usize], cube| {
            let (ts, ta, tb) = (
                arg(&x, sshape).unwrap(),
                arg(&x, ashape).unwrap(),
                arg(&x, bshape).unwrap(),
            );
            let mut to = arg_mut(&mut o, oshape).unwrap();
            let (code, msg) =
                status(aclnn::addmm(&s, &ts, &ta, &tb, &one, &one, &mut to, cube).unwrap_err());
            assert_eq!(code, 161002, "{msg}");
            msg
        };
    let k = CubeMathType::KeepDtype;
    // mat1 and mat2 do not multiply (k differs; mat1 3-D).
    let msg = case(&[3], &[2, 4], &[3, 3], &[2, 3], k);
    assert!(msg.contains("do not multiply"), "{msg}");
    let msg = case(&[3], &[1, 2, 4], &[4, 3], &[2, 3], k);
    assert!(msg.contains("do not multiply"), "{msg}");
    // self does not broadcast to [m, n], or is 3-D.
    let msg = case(&[2], &[2, 4], &[4, 3], &[2, 3], k);
    assert!(
        msg.contains("broadcast to the product's shape [2, 3]"),
        "{msg}"
    );
    let msg = case(&[1, 2, 3], &[2, 4], &[4, 3], &[2, 3], k);
    assert!(msg.contains("must be 1-D or 2-D"), "{msg}");
    // out is not mat1 @ mat2's shape.
    let msg = case(&[3], &[2, 4], &[4, 3], &[3, 2], k);
    assert!(msg.contains("out is float32 [3, 2]"), "{msg}");
    // In place: a selfRef that only broadcasts is not the result's shape.
    let (ta, tb) = (arg(&x, &[2, 4]).unwrap(), arg(&x, &[4, 3]).unwrap());
    let mut tc = arg_mut(&mut o, &[1, 3]).unwrap();
    let (code, msg) = status(
        aclnn::addmm_(&s, &mut tc, &ta, &tb, &one, &one, CubeMathType::KeepDtype).unwrap_err(),
    );
    assert_eq!(code, 161002, "{msg}");
    assert!(msg.contains("selfRef is float32 [1, 3]"), "{msg}");
}

#[test]
fn addmm_refuses_an_int32_matrix_by_its_documented_dtype_list() {
    let s = stream();
    let f = buf(&s, &[0.0; 4]);
    let i = s.clone_from_host(&[0i32; 4]).unwrap();
    let one = Scalar::new(1.0f32).unwrap();
    let mut o = s.alloc_zeros::<f32>(4).unwrap();
    let (ts, ta, tb) = (
        arg(&f, &[2, 2]).unwrap(),
        arg(&i, &[2, 2]).unwrap(),
        arg(&f, &[2, 2]).unwrap(),
    );
    let mut to = arg_mut(&mut o, &[2, 2]).unwrap();
    let (code, msg) = status(
        aclnn::addmm(
            &s,
            &ts,
            &ta,
            &tb,
            &one,
            &one,
            &mut to,
            CubeMathType::KeepDtype,
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002, "{msg}");
    assert!(msg.contains("mat1"), "{msg}");
}

#[test]
fn inplace_eq_tensor_writes_one_or_zero_in_self_ref_dtype_with_a_broadcast_other() {
    let s = stream();
    let mut x = buf(&s, &[1.0, 2.0, 3.0, 1.0, 5.0, 3.0]);
    let other = buf(&s, &[1.0, 0.0, 3.0]);
    {
        let mut tx = arg_mut(&mut x, &[2, 3]).unwrap();
        let to = arg(&other, &[3]).unwrap();
        aclnn::eq_tensor_(&s, &mut tx, &to).unwrap();
    }
    assert_eq!(x.to_host_vec().unwrap(), [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    // int32 selfRef, float other: compared as values, written as int32.
    let mut xi = s.clone_from_host(&[4i32, 7, -1]).unwrap();
    let of = buf(&s, &[4.0, 7.5, -1.0]);
    {
        let mut tx = arg_mut(&mut xi, &[3]).unwrap();
        let to = arg(&of, &[3]).unwrap();
        aclnn::eq_tensor_(&s, &mut tx, &to).unwrap();
    }
    assert_eq!(xi.to_host_vec().unwrap(), [1, 0, 1]);
    // An other that broadcasts only to a larger shape than selfRef: 161002.
    let wide = buf(&s, &[1.0; 6]);
    let mut tx = arg_mut(&mut x, &[3]).unwrap();
    let to = arg(&wide, &[2, 3]).unwrap();
    let (code, msg) = status(aclnn::eq_tensor_(&s, &mut tx, &to).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("does not broadcast to selfRef"), "{msg}");
    // Exactly one of the two empty: 161002 (the page's last refusal).
    drop(tx);
    let empty = s.alloc_zeros::<f32>(0).unwrap();
    let mut tx = arg_mut(&mut x, &[1]).unwrap();
    let to = arg(&empty, &[0]).unwrap();
    let (code, msg) = status(aclnn::eq_tensor_(&s, &mut tx, &to).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("exactly one of them is empty"), "{msg}");
}

#[test]
fn ger_is_the_outer_product_in_float_and_exact_in_int64() {
    let s = stream();
    let (a, b) = (buf(&s, &[1.0, -2.0, 3.0]), buf(&s, &[0.5, 4.0]));
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    {
        let (ta, tb) = (arg(&a, &[3]).unwrap(), arg(&b, &[2]).unwrap());
        let mut to = arg_mut(&mut o, &[3, 2]).unwrap();
        aclnn::ger(&s, &ta, &tb, &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [0.5, 4.0, -1.0, -8.0, 1.5, 12.0]);
    // Integers beyond f64's 53 bits stay exact.
    let big = (1i64 << 53) + 1;
    let (ai, bi) = (
        s.clone_from_host(&[big, -3]).unwrap(),
        s.clone_from_host(&[1i64, 2]).unwrap(),
    );
    let mut oi = s.alloc_zeros::<i64>(4).unwrap();
    {
        let (ta, tb) = (arg(&ai, &[2]).unwrap(), arg(&bi, &[2]).unwrap());
        let mut to = arg_mut(&mut oi, &[2, 2]).unwrap();
        aclnn::ger(&s, &ta, &tb, &mut to).unwrap();
    }
    assert_eq!(oi.to_host_vec().unwrap(), [big, 2 * big, -3, -6]);
}

#[test]
fn ger_refuses_non_vectors_a_wrong_out_shape_and_a_narrowing_out() {
    let s = stream();
    let x = buf(&s, &[1.0; 6]);
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    let mut case = |ashape: &[usize], oshape: &[usize]| {
        let (ta, tb) = (arg(&x, ashape).unwrap(), arg(&x, &[2]).unwrap());
        let mut to = arg_mut(&mut o, oshape).unwrap();
        let (code, msg) = status(aclnn::ger(&s, &ta, &tb, &mut to).unwrap_err());
        assert_eq!(code, 161002, "{msg}");
        msg
    };
    let msg = case(&[3, 1], &[3, 2]);
    assert!(msg.contains("must be 1-D"), "{msg}");
    let msg = case(&[3], &[2, 3]);
    assert!(
        msg.contains("out is [2,3] but the outer product is [3,2]"),
        "{msg}"
    );
    // A float product cannot go to an int32 out.
    let mut oi = s.alloc_zeros::<i32>(6).unwrap();
    let (ta, tb) = (arg(&x, &[3]).unwrap(), arg(&x, &[2]).unwrap());
    let mut to = arg_mut(&mut oi, &[3, 2]).unwrap();
    let (code, msg) = status(aclnn::ger(&s, &ta, &tb, &mut to).unwrap_err());
    assert_eq!(code, 161002, "{msg}");
    assert!(msg.contains("cannot hold it"), "{msg}");
}

#[test]
fn calculate_matmul_weight_size_v2_aligns_the_last_two_dimensions_as_the_page_says() {
    let _s = stream();
    let size = aclnn::calculate_matmul_weight_size_v2;
    // The page's examples: f16/bf16 [510, 510] is 512 · 512, int8 [510, 270]
    // is 512 · 288.
    assert_eq!(size(&[510, 510], DataType::Float16).unwrap(), 262_144);
    assert_eq!(size(&[510, 510], DataType::BFloat16).unwrap(), 262_144);
    assert_eq!(size(&[510, 270], DataType::Int8).unwrap(), 147_456);
    // Aligned shapes are unchanged; batch dimensions multiply as they are.
    assert_eq!(size(&[32, 64], DataType::Float16).unwrap(), 2048);
    assert_eq!(size(&[3, 17, 33], DataType::Float16).unwrap(), 3 * 32 * 48);
    assert_eq!(size(&[2, 3, 1, 1], DataType::Int8).unwrap(), 6 * 16 * 32);
}

#[test]
fn calculate_matmul_weight_size_v2_is_enough_for_trans_matmul_weight() {
    // A buffer of the answer's elements takes the conversion in place.
    let s = stream();
    let shape = [20usize, 30];
    let n = aclnn::calculate_matmul_weight_size_v2(&[20, 30], DataType::Float16).unwrap();
    assert!(n >= 600, "{n}");
    let host: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32)).collect();
    let mut w = s.clone_from_host(&host).unwrap();
    {
        let mut tw = arg_mut(&mut w, &shape).unwrap();
        aclnn::trans_matmul_weight(&s, &mut tw).unwrap();
    }
    assert_eq!(w.len(), n as usize);
}

#[test]
fn calculate_matmul_weight_size_v2_refuses_bad_shapes_with_161002() {
    let _s = stream();
    for (shape, want) in [
        (&[16i64][..], "2 to 6 dimensions"),
        (&[1, 1, 1, 1, 1, 16, 16][..], "2 to 6 dimensions"),
        (&[0, 16][..], "every dimension must be positive"),
    ] {
        let (code, msg) =
            status(aclnn::calculate_matmul_weight_size_v2(shape, DataType::Float16).unwrap_err());
        assert_eq!(code, 161002, "{shape:?}: {msg}");
        assert!(msg.contains(want), "{shape:?}: {msg}");
    }
}
