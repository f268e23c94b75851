//! The module operators of the training set and their backwards through
//! the `acl::aclnn` wrappers on cann-sim: every backward's gradients
//! against central finite differences of its forward operator (f32, random
//! inputs of a fixed seed), the new forward operators against host
//! references, and the exact status of each misuse.

mod common;

use acl::aclnn::{self, BoolArray, CubeMathType, IntArray, TensorArg, TensorArgMut};
use acl::{DeviceBuffer, Error, Stream};

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn code(e: Error) -> (i32, String) {
    match e {
        Error::Acl { code, message, .. } => (code.raw(), message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

/// A fixed-seed generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn up(s: &Stream, v: &[f32]) -> DeviceBuffer<f32> {
    s.clone_from_host(v).expect("upload")
}

fn zeros(s: &Stream, n: usize) -> DeviceBuffer<f32> {
    s.alloc_zeros::<f32>(n).expect("alloc")
}

fn arg<'a>(b: &'a DeviceBuffer<f32>, shape: &[usize]) -> TensorArg<'a> {
    TensorArg::new(b, shape).expect("tensor")
}

fn out<'a>(b: &'a mut DeviceBuffer<f32>, shape: &[usize]) -> TensorArgMut<'a> {
    TensorArgMut::new(b, shape).expect("tensor")
}

fn host(b: &DeviceBuffer<f32>) -> Vec<f32> {
    b.to_host_vec().expect("download")
}

fn ints(v: &[i64]) -> IntArray {
    IntArray::new(v).expect("int array")
}

fn mask(v: &[bool]) -> BoolArray {
    BoolArray::new(v).expect("bool array")
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Checks `grad`, the backward's gradient of `L = Σ r·f(inputs)` with
/// respect to `inputs[which]`, against central differences of the forward
/// `f` (step `h`): every coordinate of a small input, 40 drawn ones of a
/// larger. The tolerance (5e-3 + 1 % of the value) is far below any
/// gradient's size, so a wrong sign, a missing term or a misplaced element
/// fails; the check also requires gradients that are not all small.
#[allow(clippy::too_many_arguments)]
fn check_grad(
    what: &str,
    inputs: &[Vec<f32>],
    which: usize,
    r: &[f32],
    grad: &[f32],
    h: f32,
    rng: &mut Rng,
    f: &dyn Fn(&[Vec<f32>]) -> Vec<f32>,
) {
    let n = inputs[which].len();
    assert_eq!(grad.len(), n, "{what}: gradient length");
    let loss = |xs: &[Vec<f32>]| -> f64 {
        let y = f(xs);
        assert_eq!(y.len(), r.len(), "{what}: forward length");
        y.iter()
            .zip(r)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum()
    };
    let coords: Vec<usize> = if n <= 48 {
        (0..n).collect()
    } else {
        (0..40).map(|_| rng.below(n)).collect()
    };
    let mut largest = 0f64;
    for k in coords {
        let mut xs = inputs.to_vec();
        xs[which][k] = inputs[which][k] + h;
        let lp = loss(&xs);
        xs[which][k] = inputs[which][k] - h;
        let lm = loss(&xs);
        let fd = (lp - lm) / (2.0 * f64::from(h));
        let g = f64::from(grad[k]);
        largest = largest.max(fd.abs());
        assert!(
            (fd - g).abs() <= 5e-3 + 1e-2 * g.abs(),
            "{what}: d/dx[{k}]: backward {g}, finite difference {fd}"
        );
    }
    assert!(
        largest > 0.05,
        "{what}: the checked gradients are all near 0 ({largest}); the check would prove nothing"
    );
}

/// [`check_grad`] for each input in turn: `grads[k]` (named `names[k]`)
/// is the gradient with respect to `inputs[k]`.
fn check_grads(
    what: &str,
    inputs: &[Vec<f32>],
    r: &[f32],
    names: &[&str],
    grads: &[Vec<f32>],
    rng: &mut Rng,
    f: &dyn Fn(&[Vec<f32>]) -> Vec<f32>,
) {
    for (k, (name, grad)) in names.iter().zip(grads).enumerate() {
        check_grad(&format!("{what} d{name}"), inputs, k, r, grad, 1e-2, rng, f);
    }
}

// ---------------------------------------------------------------------------
// Convolution.
// ---------------------------------------------------------------------------

/// One convolution case: shapes and attributes.
struct Conv {
    x: Vec<usize>,
    w: Vec<usize>,
    stride: i64,
    pad: i64,
    dil: i64,
    groups: usize,
    transposed: bool,
    out_pad: i64,
}

impl Conv {
    fn cout(&self) -> usize {
        if self.transposed {
            self.w[1] * self.groups
        } else {
            self.w[0]
        }
    }

    fn y_shape(&self) -> Vec<usize> {
        let mut y = vec![self.x[0], self.cout()];
        for d in 2..self.x.len() {
            let (i, k) = (self.x[d] as i64, self.w[d] as i64);
            let span = self.dil * (k - 1) + 1;
            y.push(if self.transposed {
                ((i - 1) * self.stride - 2 * self.pad + span + self.out_pad) as usize
            } else {
                ((i + 2 * self.pad - span) / self.stride + 1) as usize
            });
        }
        y
    }

    fn forward(&self, s: &Stream, v: &[Vec<f32>]) -> Vec<f32> {
        let (x, w, b) = (up(s, &v[0]), up(s, &v[1]), up(s, &v[2]));
        let ys = self.y_shape();
        let mut y = zeros(s, numel(&ys));
        aclnn::convolution(
            s,
            &arg(&x, &self.x),
            &arg(&w, &self.w),
            Some(&arg(&b, &[self.cout()])),
            &ints(&[self.stride]),
            &ints(&[self.pad]),
            &ints(&[self.dil]),
            self.transposed,
            &ints(&[self.out_pad]),
            self.groups as i64,
            &mut out(&mut y, &ys),
            CubeMathType::KeepDtype,
        )
        .expect("convolution");
        host(&y)
    }

    /// The backward's three gradients for `gy`.
    fn backward(&self, s: &Stream, v: &[Vec<f32>], gy: &[f32]) -> [Vec<f32>; 3] {
        let (x, w, g) = (up(s, &v[0]), up(s, &v[1]), up(s, gy));
        let (mut dx, mut dw, mut db) = (
            zeros(s, v[0].len()),
            zeros(s, v[1].len()),
            zeros(s, self.cout()),
        );
        aclnn::convolution_backward(
            s,
            &arg(&g, &self.y_shape()),
            &arg(&x, &self.x),
            &arg(&w, &self.w),
            &ints(&[self.cout() as i64]),
            &ints(&[self.stride]),
            &ints(&[self.pad]),
            &ints(&[self.dil]),
            self.transposed,
            &ints(&[self.out_pad]),
            self.groups as i32,
            &mask(&[true, true, true]),
            CubeMathType::KeepDtype,
            Some(&mut out(&mut dx, &self.x)),
            Some(&mut out(&mut dw, &self.w)),
            Some(&mut out(&mut db, &[self.cout()])),
        )
        .expect("convolution_backward");
        [host(&dx), host(&dw), host(&db)]
    }
}

#[test]
fn convolution_backward_matches_finite_differences_in_1d_2d_3d_transposed_grouped_dilated() {
    let s = stream();
    let mut rng = Rng(0xC0FF_EE01);
    let cases = [
        // 1-D, stride 2, padding 1.
        Conv {
            x: vec![2, 2, 7],
            w: vec![3, 2, 3],
            stride: 2,
            pad: 1,
            dil: 1,
            groups: 1,
            transposed: false,
            out_pad: 0,
        },
        // 2-D, two groups, stride 2.
        Conv {
            x: vec![2, 4, 5, 6],
            w: vec![4, 2, 3, 3],
            stride: 2,
            pad: 1,
            dil: 1,
            groups: 2,
            transposed: false,
            out_pad: 0,
        },
        // 2-D, dilation 2, padding 2.
        Conv {
            x: vec![1, 2, 6, 6],
            w: vec![3, 2, 3, 3],
            stride: 1,
            pad: 2,
            dil: 2,
            groups: 1,
            transposed: false,
            out_pad: 0,
        },
        // 2-D transposed, two groups, stride 2, output padding 1.
        Conv {
            x: vec![1, 4, 3, 4],
            w: vec![4, 2, 3, 3],
            stride: 2,
            pad: 1,
            dil: 1,
            groups: 2,
            transposed: true,
            out_pad: 1,
        },
        // 3-D.
        Conv {
            x: vec![1, 2, 4, 4, 3],
            w: vec![2, 2, 2, 2, 2],
            stride: 1,
            pad: 0,
            dil: 1,
            groups: 1,
            transposed: false,
            out_pad: 0,
        },
    ];
    for c in cases {
        let what = format!(
            "conv x{:?} w{:?} s{} p{} d{} g{} t{}",
            c.x, c.w, c.stride, c.pad, c.dil, c.groups, c.transposed
        );
        let v = vec![
            rng.vec(numel(&c.x)),
            rng.vec(numel(&c.w)),
            rng.vec(c.cout()),
        ];
        let gy = rng.vec(numel(&c.y_shape()));
        let grads = c.backward(&s, &v, &gy);
        let f = |xs: &[Vec<f32>]| c.forward(&s, xs);
        let names = ["input", "weight", "bias"];
        check_grads(&what, &v, &gy, &names, &grads, &mut rng, &f);
    }
}

#[test]
fn convolution_backward_computes_only_the_gradients_output_mask_selects() {
    let s = stream();
    let mut rng = Rng(7);
    let c = Conv {
        x: vec![1, 2, 4, 4],
        w: vec![2, 2, 3, 3],
        stride: 1,
        pad: 1,
        dil: 1,
        groups: 1,
        transposed: false,
        out_pad: 0,
    };
    let v = vec![rng.vec(32), rng.vec(36), rng.vec(2)];
    let gy = rng.vec(32);
    let all = c.backward(&s, &v, &gy);
    let (x, w, g) = (up(&s, &v[0]), up(&s, &v[1]), up(&s, &gy));
    let mut dw = zeros(&s, 36);
    // Only the weight's gradient; the other outputs are null.
    aclnn::convolution_backward(
        &s,
        &arg(&g, &[1, 2, 4, 4]),
        &arg(&x, &c.x),
        &arg(&w, &c.w),
        &ints(&[2]),
        &ints(&[1]),
        &ints(&[1]),
        &ints(&[1]),
        false,
        &ints(&[0]),
        1,
        &mask(&[false, true, false]),
        CubeMathType::KeepDtype,
        None,
        Some(&mut out(&mut dw, &c.w)),
        None,
    )
    .expect("weight gradient alone");
    assert_eq!(host(&dw), all[1]);
}

#[test]
fn convolution_backward_misuse_has_the_release_status() {
    let s = stream();
    let x = zeros(&s, 32);
    let w = zeros(&s, 36);
    let g = zeros(&s, 32);
    let mut dx = zeros(&s, 32);
    let call = |gshape: &[usize],
                m: &[bool],
                dx: Option<&mut TensorArgMut<'_>>,
                cube: CubeMathType|
     -> acl::Result<()> {
        aclnn::convolution_backward(
            &s,
            &arg(&g, gshape),
            &arg(&x, &[1, 2, 4, 4]),
            &arg(&w, &[2, 2, 3, 3]),
            &ints(&[2]),
            &ints(&[1]),
            &ints(&[1]),
            &ints(&[1]),
            false,
            &ints(&[0]),
            1,
            &mask(m),
            cube,
            dx,
            None,
            None,
        )
    };
    // hicann/ops-nn convolution_backward_checker.cpp CheckNotNull: the
    // mask's length is checked with the null pointers (161001).
    let (c, msg) = code(
        call(
            &[1, 2, 4, 4],
            &[true, false],
            Some(&mut out(&mut dx, &[1, 2, 4, 4])),
            CubeMathType::KeepDtype,
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161001, "{msg}");
    assert!(msg.contains("outputMask has 2 entries"), "{msg}");
    // A selected gradient without its output: 161001.
    let (c, msg) = code(
        call(
            &[1, 2, 4, 4],
            &[true, true, false],
            Some(&mut out(&mut dx, &[1, 2, 4, 4])),
            CubeMathType::KeepDtype,
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161001, "{msg}");
    assert!(msg.contains("gradWeight is null"), "{msg}");
    // gradOutput of a shape the convolution does not produce: 161002.
    let (c, msg) = code(
        call(
            &[1, 2, 2, 8],
            &[true, false, false],
            Some(&mut out(&mut dx, &[1, 2, 4, 4])),
            CubeMathType::KeepDtype,
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("gradOutput is [1,2,2,8]"), "{msg}");
    // A double gradOutput: 161002.
    let g64 = s.alloc_zeros::<f64>(32).unwrap();
    let mut dx2 = zeros(&s, 32);
    let e = aclnn::convolution_backward(
        &s,
        &TensorArg::new(&g64, &[1, 2, 4, 4]).unwrap(),
        &arg(&x, &[1, 2, 4, 4]),
        &arg(&w, &[2, 2, 3, 3]),
        &ints(&[2]),
        &ints(&[1]),
        &ints(&[1]),
        &ints(&[1]),
        false,
        &ints(&[0]),
        1,
        &mask(&[true, false, false]),
        CubeMathType::KeepDtype,
        Some(&mut out(&mut dx2, &[1, 2, 4, 4])),
        None,
        None,
    )
    .unwrap_err();
    let (c, msg) = code(e);
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("gradOutput is float64"), "{msg}");
}

// ---------------------------------------------------------------------------
// Pooling.
// ---------------------------------------------------------------------------

#[test]
fn max_pool2d_with_indices_backward_matches_finite_differences_and_refuses_int64_indices_on_a2() {
    let s = stream();
    let mut rng = Rng(11);
    let xs = [2usize, 2, 5, 6];
    // Distinct values 0.05 apart, shuffled: a step of 1e-2 never changes
    // which element is a window's maximum.
    let n = numel(&xs);
    let mut x: Vec<f32> = (0..n).map(|i| i as f32 * 0.05 - 1.0).collect();
    for i in (1..n).rev() {
        x.swap(i, rng.below(i + 1));
    }
    let ys = [2usize, 2, 3, 3];
    let (k, st, p, d) = (ints(&[3, 3]), ints(&[2, 2]), ints(&[1]), ints(&[1]));
    // int32 indices: the backward of the Atlas A2/A3 parts takes no other.
    let forward = |v: &[Vec<f32>]| -> (Vec<f32>, DeviceBuffer<i32>) {
        let xb = up(&s, &v[0]);
        let mut y = zeros(&s, numel(&ys));
        let mut idx = s.alloc_zeros::<i32>(numel(&ys)).unwrap();
        aclnn::max_pool2d_with_indices(
            &s,
            &arg(&xb, &xs),
            &k,
            &st,
            &p,
            &d,
            false,
            &mut out(&mut y, &ys),
            &mut TensorArgMut::new(&mut idx, &ys).unwrap(),
        )
        .expect("max pool");
        (host(&y), idx)
    };
    let gy = rng.vec(numel(&ys));
    let (_, idx) = forward(std::slice::from_ref(&x));
    let (xb, gb) = (up(&s, &x), up(&s, &gy));
    let mut dx = zeros(&s, n);
    // The backward with `indices`, into `dx`.
    let mut backward = |indices: &TensorArg<'_>| {
        aclnn::max_pool2d_with_indices_backward(
            &s,
            &arg(&gb, &ys),
            &arg(&xb, &xs),
            indices,
            &k,
            &st,
            &p,
            &d,
            false,
            &mut out(&mut dx, &xs),
        )
    };
    backward(&TensorArg::new(&idx, &ys).unwrap()).expect("max pool backward");
    let refused = |r: Result<(), Error>, want: &str| {
        let (c, msg) = code(r.unwrap_err());
        assert_eq!(c, 161002, "{msg}");
        assert!(msg.contains(want), "{want:?} in {msg}");
    };
    // Indices of another shape: 161002.
    let short = s.alloc_zeros::<i32>(4).unwrap();
    refused(
        backward(&TensorArg::new(&short, &[1, 1, 2, 2]).unwrap()),
        "indices is [1,1,2,2]",
    );
    // Float indices: 161002.
    let fidx = zeros(&s, numel(&ys));
    refused(backward(&arg(&fidx, &ys)), "indices is float32");
    // int64 indices: 161002 on the Atlas A2/A3 parts (the default SoC is
    // an A2 part), which take int32 only.
    let idx64 = s.alloc_zeros::<i64>(numel(&ys)).unwrap();
    refused(
        backward(&TensorArg::new(&idx64, &ys).unwrap()),
        "indices is int64",
    );
    check_grad(
        "max_pool2d dself",
        std::slice::from_ref(&x),
        0,
        &gy,
        &host(&dx),
        1e-2,
        &mut rng,
        &|v| forward(v).0,
    );
}

#[test]
fn avg_pool2d_backward_matches_finite_differences_with_padding_ceil_and_divisors() {
    let s = stream();
    let mut rng = Rng(12);
    let xs = [2usize, 1, 5, 6];
    let x = rng.vec(numel(&xs));
    // (count_include_pad, divisor_override, ceil_mode)
    for (count_pad, divisor, ceil) in [(false, 0, true), (true, 0, false), (true, 3, true)] {
        let (k, st, p) = (ints(&[3, 2]), ints(&[2, 2]), ints(&[1, 1]));
        let oh = |len: usize, kk: usize| {
            let num = len as i64 + 2 - kk as i64;
            let mut o = if ceil { (num + 1) / 2 + 1 } else { num / 2 + 1 };
            if ceil && (o - 1) * 2 > len as i64 {
                o -= 1;
            }
            o as usize
        };
        let ys = [2usize, 1, oh(5, 3), oh(6, 2)];
        let forward = |v: &[Vec<f32>]| {
            let xb = up(&s, &v[0]);
            let mut y = zeros(&s, numel(&ys));
            aclnn::avg_pool2d(
                &s,
                &arg(&xb, &xs),
                &k,
                &st,
                &p,
                ceil,
                count_pad,
                divisor,
                CubeMathType::KeepDtype,
                &mut out(&mut y, &ys),
            )
            .expect("avg pool");
            host(&y)
        };
        let gy = rng.vec(numel(&ys));
        let (xb, gb) = (up(&s, &x), up(&s, &gy));
        let mut dx = zeros(&s, x.len());
        aclnn::avg_pool2d_backward(
            &s,
            &arg(&gb, &ys),
            &arg(&xb, &xs),
            &k,
            &st,
            &p,
            ceil,
            count_pad,
            divisor,
            CubeMathType::KeepDtype,
            &mut out(&mut dx, &xs),
        )
        .expect("avg pool backward");
        check_grad(
            &format!("avg_pool2d pad {count_pad} div {divisor} ceil {ceil}"),
            std::slice::from_ref(&x),
            0,
            &gy,
            &host(&dx),
            1e-2,
            &mut rng,
            &forward,
        );
    }
    // A gradOutput of the wrong shape: 161002.
    let (xb, gb) = (up(&s, &x), zeros(&s, 8));
    let mut dx = zeros(&s, x.len());
    let (c, msg) = code(
        aclnn::avg_pool2d_backward(
            &s,
            &arg(&gb, &[2, 1, 2, 2]),
            &arg(&xb, &xs),
            &ints(&[2, 2]),
            &ints(&[2, 2]),
            &ints(&[0]),
            false,
            true,
            0,
            CubeMathType::KeepDtype,
            &mut out(&mut dx, &xs),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("gradOutput is [2,1,2,2]"), "{msg}");
}

/// Adaptive average pooling on the host: window `floor(i·L/o)` to
/// `ceil((i+1)·L/o)`.
fn adaptive_host(
    x: &[f32],
    planes: usize,
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
) -> Vec<f64> {
    let mut y = Vec::new();
    for p in 0..planes {
        for a in 0..oh {
            let (h0, h1) = (a * h / oh, ((a + 1) * h).div_ceil(oh));
            for b in 0..ow {
                let (w0, w1) = (b * w / ow, ((b + 1) * w).div_ceil(ow));
                let mut sum = 0.0;
                for yy in h0..h1 {
                    for xx in w0..w1 {
                        sum += f64::from(x[p * h * w + yy * w + xx]);
                    }
                }
                y.push(sum / ((h1 - h0) * (w1 - w0)) as f64);
            }
        }
    }
    y
}

#[test]
fn adaptive_avg_pool2d_matches_the_host_and_its_backward_finite_differences() {
    let s = stream();
    let mut rng = Rng(13);
    let (xs, ys) = ([1usize, 2, 5, 7], [1usize, 2, 3, 4]);
    let x = rng.vec(numel(&xs));
    let size = ints(&[3, 4]);
    let forward = |v: &[Vec<f32>]| {
        let xb = up(&s, &v[0]);
        let mut y = zeros(&s, numel(&ys));
        aclnn::adaptive_avg_pool2d(&s, &arg(&xb, &xs), &size, &mut out(&mut y, &ys))
            .expect("adaptive avg pool");
        host(&y)
    };
    let want = adaptive_host(&x, 2, (5, 7), (3, 4));
    for (i, (g, w)) in forward(std::slice::from_ref(&x))
        .iter()
        .zip(&want)
        .enumerate()
    {
        assert!(
            (f64::from(*g) - w).abs() < 1e-6,
            "adaptive[{i}]: {g} vs {w}"
        );
    }
    let gy = rng.vec(numel(&ys));
    let (xb, gb) = (up(&s, &x), up(&s, &gy));
    let mut dx = zeros(&s, x.len());
    aclnn::adaptive_avg_pool2d_backward(&s, &arg(&gb, &ys), &arg(&xb, &xs), &mut out(&mut dx, &xs))
        .expect("adaptive backward");
    check_grad(
        "adaptive_avg_pool2d",
        std::slice::from_ref(&x),
        0,
        &gy,
        &host(&dx),
        1e-2,
        &mut rng,
        &forward,
    );
    // gradOutput with other leading dimensions than self: 161002.
    let g2 = zeros(&s, 12);
    let (c, msg) = code(
        aclnn::adaptive_avg_pool2d_backward(
            &s,
            &arg(&g2, &[1, 1, 3, 4]),
            &arg(&xb, &xs),
            &mut out(&mut dx, &xs),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    // outputSize of one entry: 161002.
    let mut y = zeros(&s, 6);
    let (c, msg) = code(
        aclnn::adaptive_avg_pool2d(
            &s,
            &arg(&xb, &xs),
            &ints(&[3]),
            &mut out(&mut y, &[1, 2, 3]),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("outputSize [3]"), "{msg}");
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

#[test]
fn layer_norm_backward_matches_finite_differences_of_layer_norm() {
    let s = stream();
    let mut rng = Rng(21);
    let (xs, norm) = ([3usize, 2, 5], [2usize, 5]);
    let (rows, inner) = (3usize, 10usize);
    let stat = [3usize, 1, 1];
    let v = vec![rng.vec(rows * inner), rng.vec(inner), rng.vec(inner)];
    let shape = ints(&[2, 5]);
    let forward_stats = |v: &[Vec<f32>]| -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (x, w, b) = (up(&s, &v[0]), up(&s, &v[1]), up(&s, &v[2]));
        let (mut y, mut m, mut r) = (zeros(&s, rows * inner), zeros(&s, rows), zeros(&s, rows));
        aclnn::layer_norm(
            &s,
            &arg(&x, &xs),
            &shape,
            Some(&arg(&w, &norm)),
            Some(&arg(&b, &norm)),
            1e-5,
            &mut out(&mut y, &xs),
            Some(&mut out(&mut m, &stat)),
            Some(&mut out(&mut r, &stat)),
        )
        .expect("layer_norm");
        (host(&y), host(&m), host(&r))
    };
    let (_, mean, rstd) = forward_stats(&v);
    let gy = rng.vec(rows * inner);
    let (x, w, b, g, mb, rb) = (
        up(&s, &v[0]),
        up(&s, &v[1]),
        up(&s, &v[2]),
        up(&s, &gy),
        up(&s, &mean),
        up(&s, &rstd),
    );
    let (mut dx, mut dw, mut db) = (zeros(&s, rows * inner), zeros(&s, inner), zeros(&s, inner));
    aclnn::layer_norm_backward(
        &s,
        &arg(&g, &xs),
        &arg(&x, &xs),
        &shape,
        &arg(&mb, &stat),
        &arg(&rb, &stat),
        Some(&arg(&w, &norm)),
        Some(&arg(&b, &norm)),
        &mask(&[true, true, true]),
        Some(&mut out(&mut dx, &xs)),
        Some(&mut out(&mut dw, &norm)),
        Some(&mut out(&mut db, &norm)),
    )
    .expect("layer_norm_backward");
    let f = |xs: &[Vec<f32>]| forward_stats(xs).0;
    check_grads(
        "layer_norm",
        &v,
        &gy,
        &["input", "weight", "bias"],
        &[host(&dx), host(&dw), host(&db)],
        &mut rng,
        &f,
    );
    // Misuse, with gradInputOut alone given.
    let mut misuse = |gshape: &[usize], m: &[bool]| {
        code(
            aclnn::layer_norm_backward(
                &s,
                &arg(&g, gshape),
                &arg(&x, &xs),
                &shape,
                &arg(&mb, &stat),
                &arg(&rb, &stat),
                None,
                None,
                &mask(m),
                Some(&mut out(&mut dx, &xs)),
                None,
                None,
            )
            .unwrap_err(),
        )
    };
    // An outputMask of two entries: 161002 (aclnn_layer_norm_backward.cpp).
    let (c, msg) = misuse(&xs, &[true, true]);
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("outputMask has 2 entries"), "{msg}");
    // A selected gradient whose output is null: 161001.
    let (c, msg) = misuse(&xs, &[true, false, true]);
    assert_eq!(c, 161001, "{msg}");
    assert!(msg.contains("gradBiasOut is null"), "{msg}");
    // gradOut of another shape than input: 161002.
    let (c, msg) = misuse(&[3, 10], &[true, false, false]);
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("gradOut is [3,10]"), "{msg}");
}

#[test]
fn rms_norm_grad_matches_finite_differences_of_rms_norm() {
    let s = stream();
    let mut rng = Rng(22);
    let (xs, gs) = ([4usize, 6], [6usize]);
    let v = vec![rng.vec(24), rng.vec(6)];
    let forward = |v: &[Vec<f32>]| -> (Vec<f32>, Vec<f32>) {
        let (x, gm) = (up(&s, &v[0]), up(&s, &v[1]));
        let (mut y, mut r) = (zeros(&s, 24), zeros(&s, 4));
        aclnn::rms_norm(
            &s,
            &arg(&x, &xs),
            &arg(&gm, &gs),
            1e-6,
            &mut out(&mut y, &xs),
            &mut out(&mut r, &[4, 1]),
        )
        .expect("rms_norm");
        (host(&y), host(&r))
    };
    let (_, rstd) = forward(&v);
    let gy = rng.vec(24);
    let (g, x, r, gm) = (up(&s, &gy), up(&s, &v[0]), up(&s, &rstd), up(&s, &v[1]));
    let (mut dx, mut dg) = (zeros(&s, 24), zeros(&s, 6));
    aclnn::rms_norm_grad(
        &s,
        &arg(&g, &xs),
        &arg(&x, &xs),
        &arg(&r, &[4]),
        &arg(&gm, &gs),
        &mut out(&mut dx, &xs),
        &mut out(&mut dg, &gs),
    )
    .expect("rms_norm_grad");
    let f = |v: &[Vec<f32>]| forward(v).0;
    check_grad("rms_norm dx", &v, 0, &gy, &host(&dx), 1e-2, &mut rng, &f);
    check_grad(
        "rms_norm dgamma",
        &v,
        1,
        &gy,
        &host(&dg),
        1e-2,
        &mut rng,
        &f,
    );
    // A float16 rstd: 161002 (rstd is float32 only).
    let r16 = s.alloc_zeros::<half::f16>(4).unwrap();
    let (c, msg) = code(
        aclnn::rms_norm_grad(
            &s,
            &arg(&g, &xs),
            &arg(&x, &xs),
            &TensorArg::new(&r16, &[4]).unwrap(),
            &arg(&gm, &gs),
            &mut out(&mut dx, &xs),
            &mut out(&mut dg, &gs),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("rstd is float16"), "{msg}");
}

#[test]
fn group_norm_backward_matches_finite_differences_of_group_norm() {
    let s = stream();
    let mut rng = Rng(23);
    let (n, c, hw, group) = (2usize, 4usize, 3usize, 2usize);
    let xs = [n, c, hw];
    let v = vec![rng.vec(n * c * hw), rng.vec(c), rng.vec(c)];
    let forward = |v: &[Vec<f32>]| -> [Vec<f32>; 3] {
        let (x, gm, bt) = (up(&s, &v[0]), up(&s, &v[1]), up(&s, &v[2]));
        let (mut y, mut m, mut r) = (
            zeros(&s, n * c * hw),
            zeros(&s, n * group),
            zeros(&s, n * group),
        );
        aclnn::group_norm(
            &s,
            &arg(&x, &xs),
            Some(&arg(&gm, &[c])),
            Some(&arg(&bt, &[c])),
            n as i64,
            c as i64,
            hw as i64,
            group as i64,
            1e-5,
            &mut out(&mut y, &xs),
            &mut out(&mut m, &[n, group]),
            &mut out(&mut r, &[n, group]),
        )
        .expect("group_norm");
        [host(&y), host(&m), host(&r)]
    };
    let [_, mean, rstd] = forward(&v);
    let gy = rng.vec(n * c * hw);
    let (g, x, mb, rb, gm) = (
        up(&s, &gy),
        up(&s, &v[0]),
        up(&s, &mean),
        up(&s, &rstd),
        up(&s, &v[1]),
    );
    let (mut dx, mut dg, mut db) = (zeros(&s, n * c * hw), zeros(&s, c), zeros(&s, c));
    let call = |m: &[bool],
                dx: Option<&mut TensorArgMut<'_>>,
                dg: Option<&mut TensorArgMut<'_>>,
                db: Option<&mut TensorArgMut<'_>>| {
        aclnn::group_norm_backward(
            &s,
            &arg(&g, &xs),
            &arg(&x, &xs),
            &arg(&mb, &[n, group]),
            &arg(&rb, &[n, group]),
            &arg(&gm, &[c]),
            n as i64,
            c as i64,
            hw as i64,
            group as i64,
            &mask(m),
            dx,
            dg,
            db,
        )
    };
    call(
        &[true, true, true],
        Some(&mut out(&mut dx, &xs)),
        Some(&mut out(&mut dg, &[c])),
        Some(&mut out(&mut db, &[c])),
    )
    .expect("group_norm_backward");
    let f = |v: &[Vec<f32>]| forward(v)[0].clone();
    check_grads(
        "group_norm",
        &v,
        &gy,
        &["input", "gamma", "beta"],
        &[host(&dx), host(&dg), host(&db)],
        &mut rng,
        &f,
    );
    // The page: an outputMask not 3 long is 161002; a selected gradient
    // with a null output 161001.
    let (code1, msg) = code(call(&[true], Some(&mut out(&mut dx, &xs)), None, None).unwrap_err());
    assert_eq!(code1, 161002, "{msg}");
    let (code2, msg) = code(
        call(
            &[true, true, false],
            Some(&mut out(&mut dx, &xs)),
            None,
            None,
        )
        .unwrap_err(),
    );
    assert_eq!(code2, 161001, "{msg}");
    assert!(msg.contains("gradGammaOut is null"), "{msg}");
}

/// BatchNorm on the host: per channel of `[N, C, L]` the mean and biased
/// variance, the normalised output.
fn batch_norm_host(
    x: &[f32],
    (n, c, l): (usize, usize, usize),
    w: &[f32],
    b: &[f32],
    eps: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut mean, mut var) = (vec![0.0; c], vec![0.0; c]);
    let cnt = (n * l) as f64;
    for ch in 0..c {
        let vals: Vec<f64> = (0..n)
            .flat_map(|s| (0..l).map(move |k| (s, k)))
            .map(|(s, k)| f64::from(x[(s * c + ch) * l + k]))
            .collect();
        mean[ch] = vals.iter().sum::<f64>() / cnt;
        var[ch] = vals.iter().map(|v| (v - mean[ch]).powi(2)).sum::<f64>() / cnt;
    }
    let y = x
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let ch = (k / l) % c;
            (f64::from(v) - mean[ch]) / (var[ch] + eps).sqrt() * f64::from(w[ch]) + f64::from(b[ch])
        })
        .collect();
    (y, mean, var)
}

fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

#[test]
fn batch_norm_training_normalises_by_batch_statistics_and_updates_running_ones() {
    let s = stream();
    let mut rng = Rng(24);
    let (n, c, l) = (3usize, 2usize, 4usize);
    let xs = [n, c, l];
    let (x, w, b) = (rng.vec(n * c * l), rng.vec(c), rng.vec(c));
    let (rm0, rv0) = (vec![0.5f32, -0.25], vec![2.0f32, 0.5]);
    let (xb, wb, bb) = (up(&s, &x), up(&s, &w), up(&s, &b));
    let (mut rm, mut rv) = (up(&s, &rm0), up(&s, &rv0));
    let (mut y, mut sm, mut si) = (zeros(&s, x.len()), zeros(&s, c), zeros(&s, c));
    let (eps, momentum) = (1e-5, 0.1);
    aclnn::batch_norm(
        &s,
        &arg(&xb, &xs),
        Some(&arg(&wb, &[c])),
        Some(&arg(&bb, &[c])),
        Some(&mut out(&mut rm, &[c])),
        Some(&mut out(&mut rv, &[c])),
        true,
        momentum,
        eps,
        &mut out(&mut y, &xs),
        Some(&mut out(&mut sm, &[c])),
        Some(&mut out(&mut si, &[c])),
    )
    .expect("batch_norm training");
    let (want_y, mean, var) = batch_norm_host(&x, (n, c, l), &w, &b, eps);
    assert_close("output", &host(&y), &want_y, 1e-5);
    assert_close("saveMean", &host(&sm), &mean, 1e-6);
    // The A2/A3 release stores the batch variance in saveInvstd.
    assert_close("saveInvstd (variance)", &host(&si), &var, 1e-6);
    let m = (n * l) as f64;
    let want_rm: Vec<f64> = (0..c)
        .map(|ch| (1.0 - momentum) * f64::from(rm0[ch]) + momentum * mean[ch])
        .collect();
    let want_rv: Vec<f64> = (0..c)
        .map(|ch| (1.0 - momentum) * f64::from(rv0[ch]) + momentum * var[ch] * m / (m - 1.0))
        .collect();
    assert_close("runningMean", &host(&rm), &want_rm, 1e-6);
    assert_close("runningVar (unbiased)", &host(&rv), &want_rv, 1e-6);
    // Training without saveMean: 161001 (aclnn_batch_norm.cpp CheckNotNull).
    let (code1, msg) = code(
        aclnn::batch_norm(
            &s,
            &arg(&xb, &xs),
            None,
            None,
            None,
            None,
            true,
            momentum,
            eps,
            &mut out(&mut y, &xs),
            None,
            Some(&mut out(&mut si, &[c])),
        )
        .unwrap_err(),
    );
    assert_eq!(code1, 161001, "{msg}");
    assert!(msg.contains("saveMean is null"), "{msg}");
    // A weight of the wrong length: 161002.
    let w1 = up(&s, &[1.0]);
    let (code2, msg) = code(
        aclnn::batch_norm(
            &s,
            &arg(&xb, &xs),
            Some(&arg(&w1, &[1])),
            None,
            None,
            None,
            true,
            momentum,
            eps,
            &mut out(&mut y, &xs),
            Some(&mut out(&mut sm, &[c])),
            Some(&mut out(&mut si, &[c])),
        )
        .unwrap_err(),
    );
    assert_eq!(code2, 161002, "{msg}");
    assert!(msg.contains("weight [1] must be [C=2]"), "{msg}");
}

#[test]
fn batch_norm_inference_uses_the_running_statistics_and_leaves_them() {
    let s = stream();
    let mut rng = Rng(25);
    let (n, c, l) = (2usize, 3usize, 2usize);
    let xs = [n, c, l];
    let x = rng.vec(n * c * l);
    let (rm0, rv0) = (vec![0.1f32, -0.2, 0.3], vec![0.5f32, 1.5, 2.5]);
    let xb = up(&s, &x);
    let (mut rm, mut rv) = (up(&s, &rm0), up(&s, &rv0));
    let mut y = zeros(&s, x.len());
    aclnn::batch_norm(
        &s,
        &arg(&xb, &xs),
        None,
        None,
        Some(&mut out(&mut rm, &[c])),
        Some(&mut out(&mut rv, &[c])),
        false,
        0.1,
        1e-5,
        &mut out(&mut y, &xs),
        None,
        None,
    )
    .expect("batch_norm inference");
    let want: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let ch = (k / l) % c;
            (f64::from(v) - f64::from(rm0[ch])) / (f64::from(rv0[ch]) + 1e-5).sqrt()
        })
        .collect();
    assert_close("inference output", &host(&y), &want, 1e-5);
    assert_eq!(host(&rm), rm0);
    assert_eq!(host(&rv), rv0);
}

#[test]
fn batch_norm_backward_matches_finite_differences_in_training_and_inference() {
    let s = stream();
    let mut rng = Rng(26);
    let (n, c, l) = (3usize, 2usize, 3usize);
    let xs = [n, c, l];
    let eps = 1e-5;
    let v = vec![rng.vec(n * c * l), rng.vec(c), rng.vec(c)];
    let (rm0, rv0) = (vec![0.2f32, -0.1], vec![0.8f32, 1.3]);
    for training in [true, false] {
        let forward = |v: &[Vec<f32>]| -> [Vec<f32>; 3] {
            let (x, w, b) = (up(&s, &v[0]), up(&s, &v[1]), up(&s, &v[2]));
            let (mut rm, mut rv) = (up(&s, &rm0), up(&s, &rv0));
            let (mut y, mut sm, mut si) = (zeros(&s, n * c * l), zeros(&s, c), zeros(&s, c));
            aclnn::batch_norm(
                &s,
                &arg(&x, &xs),
                Some(&arg(&w, &[c])),
                Some(&arg(&b, &[c])),
                Some(&mut out(&mut rm, &[c])),
                Some(&mut out(&mut rv, &[c])),
                training,
                0.1,
                eps,
                &mut out(&mut y, &xs),
                Some(&mut out(&mut sm, &[c])),
                Some(&mut out(&mut si, &[c])),
            )
            .expect("batch_norm");
            [host(&y), host(&sm), host(&si)]
        };
        let [_, save_mean, save_var] = forward(&v);
        let gy = rng.vec(n * c * l);
        let (g, x, w) = (up(&s, &gy), up(&s, &v[0]), up(&s, &v[1]));
        let (rm, rv, sm, si) = (
            up(&s, &rm0),
            up(&s, &rv0),
            up(&s, &save_mean),
            up(&s, &save_var),
        );
        let (mut dx, mut dw, mut db) = (zeros(&s, n * c * l), zeros(&s, c), zeros(&s, c));
        aclnn::batch_norm_backward(
            &s,
            &arg(&g, &xs),
            &arg(&x, &xs),
            Some(&arg(&w, &[c])),
            Some(&arg(&rm, &[c])),
            Some(&arg(&rv, &[c])),
            Some(&arg(&sm, &[c])),
            Some(&arg(&si, &[c])),
            training,
            eps,
            &mask(&[true, true, true]),
            Some(&mut out(&mut dx, &xs)),
            Some(&mut out(&mut dw, &[c])),
            Some(&mut out(&mut db, &[c])),
        )
        .expect("batch_norm_backward");
        let f = |v: &[Vec<f32>]| forward(v)[0].clone();
        check_grads(
            &format!("batch_norm training {training}"),
            &v,
            &gy,
            &["input", "weight", "bias"],
            &[host(&dx), host(&dw), host(&db)],
            &mut rng,
            &f,
        );
    }
    // A mask of two entries: 161001 (aclnn_batch_norm_backward.cpp
    // CheckMaskNotNull).
    let (g, x) = (zeros(&s, n * c * l), zeros(&s, n * c * l));
    let mut dx = zeros(&s, n * c * l);
    let (c1, msg) = code(
        aclnn::batch_norm_backward(
            &s,
            &arg(&g, &xs),
            &arg(&x, &xs),
            None,
            None,
            None,
            None,
            None,
            true,
            eps,
            &mask(&[true, false]),
            Some(&mut out(&mut dx, &xs)),
            None,
            None,
        )
        .unwrap_err(),
    );
    assert_eq!(c1, 161001, "{msg}");
    // Training without the saved statistics: 161002.
    let (c2, msg) = code(
        aclnn::batch_norm_backward(
            &s,
            &arg(&g, &xs),
            &arg(&x, &xs),
            None,
            None,
            None,
            None,
            None,
            true,
            eps,
            &mask(&[true, false, false]),
            Some(&mut out(&mut dx, &xs)),
            None,
            None,
        )
        .unwrap_err(),
    );
    assert_eq!(c2, 161002, "{msg}");
    assert!(
        msg.contains("training needs saveMean and saveInvstd"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------
// Upsampling.
// ---------------------------------------------------------------------------

/// torch's source coordinate of output index `o` (`area_pixel_compute_scale`
/// and `area_pixel_compute_source_index`); `cubic` keeps negative sources.
fn source(o: usize, len: usize, out: usize, align: bool, scale: f64, cubic: bool) -> f64 {
    let step = if align {
        if out > 1 {
            (len - 1) as f64 / (out - 1) as f64
        } else {
            0.0
        }
    } else if scale > 0.0 {
        1.0 / scale
    } else {
        len as f64 / out as f64
    };
    if align {
        step * o as f64
    } else {
        let s = step * (o as f64 + 0.5) - 0.5;
        if cubic { s } else { s.max(0.0) }
    }
}

/// Bilinear or bicubic upsampling of one `h×w` plane on the host, element
/// by element (torch's `upsample_bilinear2d` / `upsample_bicubic2d`).
#[allow(clippy::too_many_arguments)]
fn upsample_host(
    x: &[f32],
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
    align: bool,
    (sh, sw): (f64, f64),
    cubic: bool,
) -> Vec<f64> {
    let at = |y: i64, xx: i64| {
        let (y, xx) = (y.clamp(0, h as i64 - 1), xx.clamp(0, w as i64 - 1));
        f64::from(x[y as usize * w + xx as usize])
    };
    let a = -0.75;
    let near = |t: f64| ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    let far = |t: f64| ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    let mut y = Vec::with_capacity(oh * ow);
    for i in 0..oh {
        let sy = source(i, h, oh, align, sh, cubic);
        for j in 0..ow {
            let sx = source(j, w, ow, align, sw, cubic);
            let (y0, x0) = (sy.floor() as i64, sx.floor() as i64);
            let (ty, tx) = (sy - y0 as f64, sx - x0 as f64);
            y.push(if cubic {
                let wy = [far(ty + 1.0), near(ty), near(1.0 - ty), far(2.0 - ty)];
                let wx = [far(tx + 1.0), near(tx), near(1.0 - tx), far(2.0 - tx)];
                let mut v = 0.0;
                for (p, wyp) in wy.iter().enumerate() {
                    for (q, wxq) in wx.iter().enumerate() {
                        v += wyp * wxq * at(y0 - 1 + p as i64, x0 - 1 + q as i64);
                    }
                }
                v
            } else {
                (1.0 - ty) * ((1.0 - tx) * at(y0, x0) + tx * at(y0, x0 + 1))
                    + ty * ((1.0 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1))
            });
        }
    }
    y
}

/// Upsamples `[1, 2, h, w]` with the bilinear or bicubic forward.
fn upsample_dev(
    s: &Stream,
    x: &[f32],
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
    align: bool,
    (sh, sw): (f64, f64),
    cubic: bool,
) -> Vec<f32> {
    let xb = up(s, x);
    let mut y = zeros(s, 2 * oh * ow);
    let size = ints(&[oh as i64, ow as i64]);
    {
        let (ta, mut to) = (arg(&xb, &[1, 2, h, w]), out(&mut y, &[1, 2, oh, ow]));
        if cubic {
            aclnn::upsample_bicubic2d(s, &ta, &size, align, sh, sw, &mut to)
        } else {
            aclnn::upsample_bilinear2d(s, &ta, &size, align, sh, sw, &mut to)
        }
        .expect("upsample");
    }
    host(&y)
}

#[test]
fn bilinear_and_bicubic_upsampling_match_the_host_and_their_backwards_finite_differences() {
    let s = stream();
    let mut rng = Rng(31);
    let (h, w) = (3usize, 4usize);
    let x = rng.vec(2 * h * w);
    // (output size, alignCorners, scales): up, down, with the scales given.
    let cases = [
        ((5usize, 7usize), false, (0.0, 0.0)),
        ((5, 7), true, (0.0, 0.0)),
        ((2, 3), false, (0.0, 0.0)),
        ((6, 8), false, (2.0, 2.0)),
        ((7, 9), false, (2.5, 2.3)),
    ];
    for cubic in [false, true] {
        for ((oh, ow), align, scales) in cases {
            let what = format!(
                "{} {h}x{w}->{oh}x{ow} align {align} scales {scales:?}",
                if cubic { "bicubic" } else { "bilinear" }
            );
            let got = upsample_dev(&s, &x, (h, w), (oh, ow), align, scales, cubic);
            let want: Vec<f64> = (0..2)
                .flat_map(|p| {
                    upsample_host(
                        &x[p * h * w..(p + 1) * h * w],
                        (h, w),
                        (oh, ow),
                        align,
                        scales,
                        cubic,
                    )
                })
                .collect();
            assert_close(&what, &got, &want, 1e-5);
            // The backward against finite differences of the forward.
            let gy = rng.vec(2 * oh * ow);
            let g = up(&s, &gy);
            let mut dx = zeros(&s, x.len());
            let (os, is) = (
                ints(&[oh as i64, ow as i64]),
                ints(&[1, 2, h as i64, w as i64]),
            );
            let (tg, mut td) = (arg(&g, &[1, 2, oh, ow]), out(&mut dx, &[1, 2, h, w]));
            if cubic {
                aclnn::upsample_bicubic2d_backward(
                    &s, &tg, &os, &is, align, scales.0, scales.1, &mut td,
                )
            } else {
                aclnn::upsample_bilinear2d_backward(
                    &s, &tg, &os, &is, align, scales.0, scales.1, &mut td,
                )
            }
            .expect("upsample backward");
            drop(td);
            check_grad(
                &what,
                std::slice::from_ref(&x),
                0,
                &gy,
                &host(&dx),
                1e-2,
                &mut rng,
                &|v| upsample_dev(&s, &v[0], (h, w), (oh, ow), align, scales, cubic),
            );
        }
    }
}

#[test]
fn upsample_nearest2d_backward_matches_finite_differences() {
    let s = stream();
    let mut rng = Rng(32);
    let (h, w) = (3usize, 4usize);
    let x = rng.vec(2 * h * w);
    for (oh, ow) in [(5usize, 7usize), (2, 3), (6, 8)] {
        let forward = |v: &[Vec<f32>]| {
            let xb = up(&s, &v[0]);
            let mut y = zeros(&s, 2 * oh * ow);
            aclnn::upsample_nearest2d(
                &s,
                &arg(&xb, &[1, 2, h, w]),
                &ints(&[oh as i64, ow as i64]),
                &mut out(&mut y, &[1, 2, oh, ow]),
            )
            .expect("nearest");
            host(&y)
        };
        let gy = rng.vec(2 * oh * ow);
        let g = up(&s, &gy);
        let mut dx = zeros(&s, x.len());
        aclnn::upsample_nearest2d_backward(
            &s,
            &arg(&g, &[1, 2, oh, ow]),
            &ints(&[oh as i64, ow as i64]),
            &ints(&[1, 2, h as i64, w as i64]),
            0.0,
            0.0,
            &mut out(&mut dx, &[1, 2, h, w]),
        )
        .expect("nearest backward");
        check_grad(
            &format!("nearest {h}x{w}->{oh}x{ow}"),
            std::slice::from_ref(&x),
            0,
            &gy,
            &host(&dx),
            1e-2,
            &mut rng,
            &forward,
        );
    }
}

#[test]
fn upsampling_misuse_has_the_documented_status() {
    let s = stream();
    let x = zeros(&s, 12);
    let g = zeros(&s, 2 * 5 * 7);
    let mut dx = zeros(&s, 24);
    let mut y = zeros(&s, 35);
    let mut nearest = |is: &[i64], gshape: &[usize]| {
        code(
            aclnn::upsample_nearest2d_backward(
                &s,
                &arg(&g, gshape),
                &ints(&[5, 7]),
                &ints(is),
                0.0,
                0.0,
                &mut out(&mut dx, &[1, 2, 3, 4]),
            )
            .unwrap_err(),
        )
    };
    // inputSize not [N, C, H, W]: 161002.
    let (c, msg) = nearest(&[2, 3, 4], &[1, 2, 5, 7]);
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("inputSize [2, 3, 4]"), "{msg}");
    // gradOut not [N, C, outputSize]: 161002.
    let (c, msg) = nearest(&[1, 2, 3, 4], &[2, 1, 5, 7]);
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("gradOut is [2,1,5,7]"), "{msg}");
    // Negative scales: 161002.
    let (c, msg) = code(
        aclnn::upsample_bilinear2d(
            &s,
            &arg(&x, &[1, 1, 3, 4]),
            &ints(&[5, 7]),
            false,
            -1.0,
            0.0,
            &mut out(&mut y, &[1, 1, 5, 7]),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("must not be negative"), "{msg}");
    // An out of another dtype than self: 161002.
    let mut y16 = s.alloc_zeros::<half::f16>(35).unwrap();
    let (c, msg) = code(
        aclnn::upsample_bicubic2d(
            &s,
            &arg(&x, &[1, 1, 3, 4]),
            &ints(&[5, 7]),
            false,
            0.0,
            0.0,
            &mut TensorArgMut::new(&mut y16, &[1, 1, 5, 7]).unwrap(),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(
        msg.contains("the output is float16 but self is float32"),
        "{msg}"
    );
    // A 3-D self: 161002.
    let (c, msg) = code(
        aclnn::upsample_bicubic2d(
            &s,
            &arg(&x, &[1, 3, 4]),
            &ints(&[5, 7]),
            false,
            0.0,
            0.0,
            &mut out(&mut y, &[1, 5, 7]),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("must be 4-D"), "{msg}");
    // An empty plane (H = 0): 161002, not a kernel reading past its input.
    let e0 = zeros(&s, 1);
    let (c, msg) = code(
        aclnn::upsample_bilinear2d(
            &s,
            &TensorArg::new(&e0.slice(0..0).unwrap(), &[1, 1, 0, 4]).unwrap(),
            &ints(&[5, 7]),
            false,
            0.0,
            0.0,
            &mut out(&mut y, &[1, 1, 5, 7]),
        )
        .unwrap_err(),
    );
    assert_eq!(c, 161002, "{msg}");
    assert!(msg.contains("H and W at least 1"), "{msg}");
}

#[test]
fn convolution_backward_in_float16_agrees_with_float32() {
    use half::f16;
    let s = stream();
    let mut rng = Rng(41);
    let c = Conv {
        x: vec![2, 4, 5, 5],
        w: vec![4, 2, 3, 3],
        stride: 2,
        pad: 1,
        dil: 1,
        groups: 2,
        transposed: false,
        out_pad: 0,
    };
    // Values that float16 holds exactly, so both runs see the same inputs.
    let q =
        |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(|x| f16::from_f32(x).to_f32()).collect() };
    let v = vec![
        q(rng.vec(numel(&c.x))),
        q(rng.vec(numel(&c.w))),
        q(rng.vec(c.cout())),
    ];
    let ys = c.y_shape();
    let gy = q(rng.vec(numel(&ys)));
    let want = c.backward(&s, &v, &gy);
    let h = |v: &[f32]| -> DeviceBuffer<f16> {
        s.clone_from_host(&v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>())
            .unwrap()
    };
    let (x, w, g) = (h(&v[0]), h(&v[1]), h(&gy));
    let mut dx = s.alloc_zeros::<f16>(v[0].len()).unwrap();
    let mut dw = s.alloc_zeros::<f16>(v[1].len()).unwrap();
    let mut db = s.alloc_zeros::<f16>(c.cout()).unwrap();
    aclnn::convolution_backward(
        &s,
        &TensorArg::new(&g, &ys).unwrap(),
        &TensorArg::new(&x, &c.x).unwrap(),
        &TensorArg::new(&w, &c.w).unwrap(),
        &ints(&[c.cout() as i64]),
        &ints(&[c.stride]),
        &ints(&[c.pad]),
        &ints(&[c.dil]),
        false,
        &ints(&[0]),
        c.groups as i32,
        &mask(&[true, true, true]),
        CubeMathType::KeepDtype,
        Some(&mut TensorArgMut::new(&mut dx, &c.x).unwrap()),
        Some(&mut TensorArgMut::new(&mut dw, &c.w).unwrap()),
        Some(&mut TensorArgMut::new(&mut db, &[c.cout()]).unwrap()),
    )
    .expect("float16 convolution_backward");
    for (name, got, want) in [
        ("dx", dx, &want[0]),
        ("dw", dw, &want[1]),
        ("db", db, &want[2]),
    ] {
        let got: Vec<f32> = got
            .to_host_vec()
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect();
        let want: Vec<f64> = want.iter().map(|&v| f64::from(v)).collect();
        assert_close(&format!("float16 {name}"), &got, &want, 2e-3);
    }
}

#[test]
fn batch_norm_updates_strided_running_statistics_in_place() {
    let s = stream();
    let mut rng = Rng(42);
    let (n, c, l) = (2usize, 2usize, 3usize);
    let xs = [n, c, l];
    let x = rng.vec(n * c * l);
    // Running statistics every other element of a buffer; the gaps hold 99.
    let (mut rm, mut rv) = (
        up(&s, &[0.5, 99.0, -0.5, 99.0]),
        up(&s, &[2.0, 99.0, 3.0, 99.0]),
    );
    let layout = aclnn::Layout {
        dims: vec![2],
        strides: vec![2],
        offset: 0,
        format: 2, // ACL_FORMAT_ND
        storage_dims: vec![4],
    };
    let xb = up(&s, &x);
    let (mut y, mut sm, mut si) = (zeros(&s, x.len()), zeros(&s, c), zeros(&s, c));
    let momentum = 0.25;
    aclnn::batch_norm(
        &s,
        &arg(&xb, &xs),
        None,
        None,
        Some(&mut TensorArgMut::with_layout(&mut rm, &layout).unwrap()),
        Some(&mut TensorArgMut::with_layout(&mut rv, &layout).unwrap()),
        true,
        momentum,
        1e-5,
        &mut out(&mut y, &xs),
        Some(&mut out(&mut sm, &[c])),
        Some(&mut out(&mut si, &[c])),
    )
    .expect("batch_norm with strided running statistics");
    let (_, mean, var) = batch_norm_host(&x, (n, c, l), &[1.0; 2], &[0.0; 2], 1e-5);
    let m = (n * l) as f64;
    let want_rm = [
        0.75 * 0.5 + momentum * mean[0],
        99.0,
        0.75 * -0.5 + momentum * mean[1],
        99.0,
    ];
    let want_rv = [
        0.75 * 2.0 + momentum * var[0] * m / (m - 1.0),
        99.0,
        0.75 * 3.0 + momentum * var[1] * m / (m - 1.0),
        99.0,
    ];
    assert_close("strided runningMean", &host(&rm), &want_rm, 1e-6);
    assert_close("strided runningVar", &host(&rv), &want_rv, 1e-6);
}
