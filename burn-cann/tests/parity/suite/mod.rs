//! A walk through Burn 0.21's backend test suite (`crates/burn-backend-tests`,
//! `tests/tensor/{float,int,bool}/ops/*.rs` and `tests/autodiff/*.rs`),
//! module by module: each Burn module's ops on `Cann` against `NdArray` (and
//! `Autodiff<Cann>` against `Autodiff<NdArray>`), over several shapes, every
//! dim, and five memory layouts of a logical input (contiguous, a permuted
//! view, an offset slice, a slice with a step of 2, one with a step of -1). Inputs come from the seeded generator of
//! [`crate::common::values`].
//!
//! Each module is one test that runs all its cases and reports every case
//! that differs (not only the first), with the count of cases it ran.

pub mod autodiff;
pub mod bool_ops;
pub mod float_ops;
pub mod int_ops;

use crate::common::*;
use burn_tensor::backend::Backend;
use burn_tensor::{BasicOps, DType, TensorKind};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The cases of one of Burn's test modules: each runs, a failure is kept
/// with its name and message, and [`Cases::finish`] fails the test with all
/// of them.
pub struct Cases {
    module: &'static str,
    run: usize,
    failed: Vec<String>,
}

impl Cases {
    pub fn new(module: &'static str) -> Cases {
        Cases {
            module,
            run: 0,
            failed: Vec::new(),
        }
    }

    /// Runs one case; a panic (a mismatch, or an op that failed) is recorded.
    pub fn case(&mut self, name: impl std::fmt::Display, f: impl FnOnce()) {
        self.run += 1;
        if let Err(e) = catch_unwind(AssertUnwindSafe(f)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let first = msg.lines().take(6).collect::<Vec<_>>().join(" | ");
            self.failed.push(format!("{name}: {first}"));
        }
    }

    /// Fails when any case failed, listing each; returns the count run.
    #[track_caller]
    pub fn finish(self) -> usize {
        eprintln!("burn module {}: {} cases", self.module, self.run);
        assert!(
            self.failed.is_empty(),
            "{} of {} cases of Burn's {} module differ from NdArray:\n{}",
            self.failed.len(),
            self.run,
            self.module,
            self.failed.join("\n")
        );
        self.run
    }
}

/// How the logical input sits in device memory.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Row-major from offset 0.
    Contiguous,
    /// Stored as `[d2, d0, d1]` and permuted back (non-contiguous strides).
    Permuted,
    /// A `[1.., .., 1..]` slice of a larger tensor (an offset and gaps).
    Sliced,
    /// Every other row of a tensor twice as long in dim 1 (a step of 2).
    Stepped,
    /// The last dim read backwards (a step of -1, which `Cann` copies
    /// through `aclnnFlip`).
    Reversed,
}

pub const LAYOUTS: [Layout; 5] = [
    Layout::Contiguous,
    Layout::Permuted,
    Layout::Sliced,
    Layout::Stepped,
    Layout::Reversed,
];

/// The rank-3 shapes each unary case runs on (one with a unit dim, which
/// broadcasting and squeezing treat apart).
pub const SHAPES: [[usize; 3]; 3] = [[2, 3, 4], [3, 1, 5], [4, 2, 2]];

/// Shape pairs of binary cases: equal, one side broadcast, both broadcast.
pub const PAIRS: [([usize; 3], [usize; 3]); 3] = [
    ([2, 3, 4], [2, 3, 4]),
    ([2, 3, 4], [1, 3, 1]),
    ([2, 1, 4], [1, 3, 1]),
];

/// The element data of an input (values of the seeded generator).
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// Floats in `[lo, hi)`.
    Float(f32, f32),
    /// Integers in `[lo, hi)`.
    Int(i64, i64),
    /// Booleans, about half true.
    Bool,
}

fn data(fill: Fill, shape: [usize; 3], seed: u64) -> TensorData {
    let n = shape.iter().product();
    match fill {
        Fill::Float(lo, hi) => TensorData::new(values(n, seed, lo, hi), shape),
        Fill::Int(lo, hi) => TensorData::new(
            values(n, seed, 0.0, 1.0)
                .into_iter()
                .map(|u| lo + ((hi - lo) as f32 * u) as i64)
                .collect::<Vec<i64>>(),
            shape,
        ),
        Fill::Bool => TensorData::new(
            values(n, seed, 0.0, 1.0)
                .into_iter()
                .map(|u| u < 0.5)
                .collect::<Vec<bool>>(),
            shape,
        ),
    }
}

/// A rank-3 input of logical `shape` on backend `B`, laid out as `layout`.
pub fn input<B: Backend, K: TensorKind<B> + BasicOps<B>>(
    fill: Fill,
    [a, b, c]: [usize; 3],
    seed: u64,
    layout: Layout,
    device: &B::Device,
) -> Tensor<B, 3, K> {
    match layout {
        Layout::Contiguous => Tensor::from_data(data(fill, [a, b, c], seed), device),
        Layout::Permuted => {
            Tensor::<B, 3, K>::from_data(data(fill, [c, a, b], seed), device).permute([1, 2, 0])
        }
        Layout::Sliced => Tensor::<B, 3, K>::from_data(data(fill, [a + 1, b, c + 2], seed), device)
            .slice([1..a + 1, 0..b, 1..c + 1]),
        Layout::Stepped => Tensor::<B, 3, K>::from_data(data(fill, [a, 2 * b, c], seed), device)
            .slice(burn_tensor::s![.., ..;2, ..]),
        Layout::Reversed => Tensor::<B, 3, K>::from_data(data(fill, [a, b, c], seed), device)
            .slice(burn_tensor::s![.., .., ..;-1]),
    }
}

/// The same input on both backends: on `Cann` laid out as `layout`, on
/// NdArray (the reference) contiguous, with the same logical values
/// (NdArray's `gather_nd` and `scatter_nd` refuse other layouts: "ndarray
/// gather_nd requires contiguous data").
pub fn pair<K>(
    fill: Fill,
    shape: [usize; 3],
    seed: u64,
    layout: Layout,
) -> (Tensor<C, 3, K>, Tensor<N, 3, K>)
where
    K: TensorKind<C> + BasicOps<C> + TensorKind<N> + BasicOps<N>,
{
    (
        input::<C, K>(fill, shape, seed, layout, &dev()),
        Tensor::from_data(
            input::<N, K>(fill, shape, seed, layout, &NdArrayDevice::Cpu).into_data(),
            &NdArrayDevice::Cpu,
        ),
    )
}

/// What a case returns: one tensor of any rank and kind, or several.
pub trait Output {
    fn data(self) -> Vec<TensorData>;
}

impl<B: Backend, const D: usize, K: TensorKind<B> + BasicOps<B>> Output for Tensor<B, D, K> {
    fn data(self) -> Vec<TensorData> {
        vec![self.into_data()]
    }
}

impl<T: Output> Output for Vec<T> {
    fn data(self) -> Vec<TensorData> {
        self.into_iter().flat_map(Output::data).collect()
    }
}

impl<T: Output, U: Output> Output for (T, U) {
    fn data(self) -> Vec<TensorData> {
        let mut v = self.0.data();
        v.extend(self.1.data());
        v
    }
}

/// Device results against NdArray's: floats within `tol`, ints and bools
/// exactly; shapes always.
#[track_caller]
pub fn agree(c: impl Output, n: impl Output, tol: Tolerance<f32>) {
    let (c, n) = (c.data(), n.data());
    assert_eq!(c.len(), n.len(), "the number of outputs");
    for (c, n) in c.into_iter().zip(n) {
        assert_eq!(c.shape, n.shape, "shapes");
        match n.dtype {
            DType::Bool(_) => c.assert_eq(&n, false),
            d if d.is_float() => c
                .convert::<f32>()
                .assert_approx_eq::<f32>(&n.convert::<f32>(), tol),
            _ => c.convert::<i64>().assert_eq(&n.convert::<i64>(), false),
        }
    }
}

/// Cases of ops of one rank-3 input (`|x| body`, `x: Tensor<B, 3, K>`), run
/// for each of [`SHAPES`] and [`LAYOUTS`].
macro_rules! unary_cases {
    ($cases:ident, $kind:ty, $fill:expr, $tol:expr; $($name:literal: |$x:ident| $body:expr;)*) => {$({
        fn f<B: burn_tensor::backend::Backend>($x: Tensor<B, 3, $kind>) -> impl $crate::suite::Output {
            $body
        }
        for shape in $crate::suite::SHAPES {
            for layout in $crate::suite::LAYOUTS {
                $cases.case(format_args!("{} {shape:?} {layout:?}", $name), || {
                    let (c, n) = $crate::suite::pair::<$kind>($fill, shape, 7, layout);
                    $crate::suite::agree(f(c), f(n), $tol);
                });
            }
        }
    })*};
}
pub(crate) use unary_cases;

/// The shape two rank-3 shapes broadcast to.
pub fn bdims(a: [usize; 3], b: [usize; 3]) -> [usize; 3] {
    [0, 1, 2].map(|i| a[i].max(b[i]))
}

/// Cases of ops of two rank-3 inputs (`|x, y| body`), run for each of
/// [`PAIRS`] (broadcasting) and [`LAYOUTS`] (the second input contiguous).
/// On `Cann` the operands broadcast inside the op; NdArray's reference gets
/// them expanded to the output shape first (the same values), because its
/// broadcasting of `remainder`, `powf`, `atan2` and the bitwise ops panics
/// (ndarray's `Zip`: "Producer dimension mismatch").
macro_rules! binary_cases {
    ($cases:ident, $kind:ty, $fill:expr, $fill2:expr, $tol:expr; $($name:literal: |$x:ident, $y:ident| $body:expr;)*) => {$({
        fn f<B: burn_tensor::backend::Backend>($x: Tensor<B, 3, $kind>, $y: Tensor<B, 3, $kind>) -> impl $crate::suite::Output {
            $body
        }
        for (sa, sb) in $crate::suite::PAIRS {
            for layout in $crate::suite::LAYOUTS {
                $cases.case(format_args!("{} {sa:?}·{sb:?} {layout:?}", $name), || {
                    let (c, n) = $crate::suite::pair::<$kind>($fill, sa, 8, layout);
                    let (c2, n2) = $crate::suite::pair::<$kind>($fill2, sb, 9, $crate::suite::Layout::Contiguous);
                    let shape = $crate::suite::bdims(sa, sb);
                    $crate::suite::agree(f(c, c2), f(n.expand(shape), n2.expand(shape)), $tol);
                });
            }
        }
    })*};
}
pub(crate) use binary_cases;

/// Cases of ops along a dim (`|x, d| body`), run for every dim of a
/// `[3, 4, 5]` input, contiguous, permuted and stepped.
macro_rules! dim_cases {
    ($cases:ident, $kind:ty, $fill:expr, $tol:expr; $($name:literal: |$x:ident, $d:ident| $body:expr;)*) => {$({
        fn f<B: burn_tensor::backend::Backend>($x: Tensor<B, 3, $kind>, $d: usize) -> impl $crate::suite::Output {
            $body
        }
        for d in 0..3 {
            for layout in [$crate::suite::Layout::Contiguous, $crate::suite::Layout::Permuted, $crate::suite::Layout::Stepped] {
                $cases.case(format_args!("{} dim {d} {layout:?}", $name), || {
                    let (c, n) = $crate::suite::pair::<$kind>($fill, [3, 4, 5], 10, layout);
                    $crate::suite::agree(f(c, d), f(n, d), $tol);
                });
            }
        }
    })*};
}
pub(crate) use dim_cases;

/// Valid indices into dim `d` of a tensor of `dims`, of shape `dims` with
/// dim `d` of length `len` (for gather, scatter and select).
pub fn index<B: Backend, const D: usize>(
    dims: [usize; D],
    d: usize,
    len: usize,
    device: &B::Device,
) -> Tensor<B, D, Int> {
    let mut shape = dims;
    shape[d] = len;
    let n: usize = shape.iter().product();
    let v: Vec<i64> = (0..n).map(|i| ((i * 7 + 3) % dims[d]) as i64).collect();
    Tensor::from_data(TensorData::new(v, shape), device)
}

/// `n` different `k`-tuples of indices into the first `k` dims of `dims`
/// (shape `[n, k]`), for `gather_nd` and `scatter_nd`.
pub fn tuples<B: Backend>(
    k: usize,
    n: usize,
    dims: [usize; 3],
    device: &B::Device,
) -> Tensor<B, 2, Int> {
    let lead: usize = dims[..k].iter().product();
    let mut v = Vec::with_capacity(n * k);
    for j in 0..n {
        // 7 is prime to every `lead` here, so the tuples differ.
        let mut l = (j * 7 + 1) % lead;
        let mut t = vec![0i64; k];
        for i in (0..k).rev() {
            t[i] = (l % dims[i]) as i64;
            l /= dims[i];
        }
        v.extend(t);
    }
    Tensor::from_data(TensorData::new(v, [n, k]), device)
}

/// A 1-D index tensor of `values` on `device`.
pub fn indices<B: Backend>(values: &[i64], device: &B::Device) -> Tensor<B, 1, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), [values.len()]), device)
}

/// Cases of float ops (`|x| body`) with the `Cann` input cast to `f16` and
/// to `bf16`, against NdArray in `f32` (on the same input, rounded through
/// the half type) at `tol`, for each of [`LAYOUTS`].
macro_rules! half_cases {
    ($cases:ident, $tol:expr; $($name:literal: |$x:ident| $body:expr;)*) => {$({
        fn f<B: burn_tensor::backend::Backend>($x: Tensor<B, 3>) -> impl $crate::suite::Output {
            $body
        }
        for dt in [burn_tensor::DType::F16, burn_tensor::DType::BF16] {
            for layout in $crate::suite::LAYOUTS {
                $cases.case(format_args!("{} {dt:?} {layout:?}", $name), || {
                    let (c, n) = $crate::suite::pair::<burn_tensor::Float>(
                        $crate::suite::Fill::Float(-2.0, 2.0), [3, 4, 5], 16, layout);
                    // The reference input rounded through `dt` too: a value
                    // next to a comparison's threshold compares alike.
                    let n = Tensor::<N, 3>::from_data(
                        n.into_data().convert_dtype(dt).convert_dtype(burn_tensor::DType::F32),
                        &NdArrayDevice::Cpu,
                    );
                    $crate::suite::agree(f(c.cast(dt)), f(n), $tol);
                });
            }
        }
    })*};
}
pub(crate) use half_cases;

/// The harness itself: a case whose results differ, and one that panics,
/// are both reported by name, and the module's test fails.
#[test]
fn a_differing_or_panicking_case_fails_its_module_naming_the_case() {
    let msg = panic_message(|| {
        let mut cases = Cases::new("harness");
        cases.case("equal", || {
            let (c, n) =
                pair::<burn_tensor::Float>(Fill::Float(0.0, 1.0), [2, 2, 2], 1, Layout::Sliced);
            agree(c, n, Tolerance::default());
        });
        cases.case("off by one", || {
            let (c, n) =
                pair::<burn_tensor::Float>(Fill::Float(0.0, 1.0), [2, 2, 2], 1, Layout::Permuted);
            agree(c + 1.0, n, Tolerance::default());
        });
        cases.case("int off by one", || {
            let (c, n) = pair::<Int>(Fill::Int(0, 9), [2, 2, 2], 1, Layout::Contiguous);
            agree(c + 1, n, Tolerance::default());
        });
        cases.case("panics", || panic!("boom"));
        cases.finish();
    });
    assert!(
        msg.starts_with("3 of 4 cases of Burn's harness module differ from NdArray:\n"),
        "{msg}"
    );
    assert!(msg.contains("\noff by one: "), "{msg}");
    assert!(msg.contains("\nint off by one: "), "{msg}");
    assert!(msg.contains("\npanics: boom"), "{msg}");
    assert!(!msg.contains("\nequal: "), "{msg}");
}
