//! The planning functions of the random-number and optimizer operators of
//! the table (`acl-sys/operators.toml`'s `sim` entries call them by path):
//! each looks up its C arguments, asks the engine ([`crate::ops::random`],
//! [`crate::ops::optim`]) for the kernel of the call, which checks shapes,
//! dtypes and values as the operator's page does, and builds its plan.
//!
//! Codes: a null argument is 161001, a rule of the page 161002 (the
//! engine's checks), except where the page says otherwise (cited).
//!
//! `seed` and `offset` are the release's: the kernel reads the words
//! `offset..offset + 4` of each element's subsequence of `seed`'s Philox
//! stream ([`crate::ops::random`] states the contract and what differs from
//! the device). A negative `int64_t` seed or offset is its two's-complement
//! `uint64_t`, as torch_npu passes them (op-plugin
//! `op_plugin/ops/opapi/*KernelNpuOpApi.cpp` cast the generator's
//! `uint64_t` pair).

#![allow(non_snake_case)]

use super::nn::{input, ints, output, planned, scalar};
use super::operators::Planned;
use crate::ops::random as rng;
use acl_sys::aclnn::{aclIntArray, aclScalar, aclTensor};

/// `aclnnInplaceUniform`.
pub(super) fn uniform(
    f: &'static str,
    x: *const aclTensor,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
) -> Planned {
    let xv = output(f, "selfRef", x)?;
    let k = rng::uniform(api(f), &xv.spec, from, to, seed, offset);
    planned(f, &["selfRef"], vec![], vec![xv], k)
}

/// `aclnnInplaceNormal`.
pub(super) fn normal(
    f: &'static str,
    x: *const aclTensor,
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
) -> Planned {
    let xv = output(f, "selfRef", x)?;
    let k = rng::normal(
        api(f),
        &xv.spec,
        f64::from(mean),
        f64::from(std),
        seed as u64,
        offset as u64,
    );
    planned(f, &["selfRef"], vec![], vec![xv], k)
}

/// `aclnnInplaceBernoulli`.
pub(super) fn bernoulli(
    f: &'static str,
    x: *const aclTensor,
    prob: *const aclScalar,
    seed: i64,
    offset: i64,
) -> Planned {
    let xv = output(f, "selfRef", x)?;
    let (pd, p) = scalar(f, "prob", prob)?;
    if !crate::ops::nn::is_float(pd) {
        return Err(super::nn::invalid(
            f,
            &format!("prob is {}, not a float", pd.name()),
        ));
    }
    let k = rng::bernoulli(api(f), &xv.spec, p, seed as u64, offset as u64);
    planned(f, &["selfRef"], vec![], vec![xv], k)
}

/// `aclnnRandperm`.
pub(super) fn randperm(
    f: &'static str,
    n: i64,
    seed: i64,
    offset: i64,
    out: *const aclTensor,
) -> Planned {
    let ov = output(f, "out", out)?;
    let k = rng::randperm(api(f), n, &ov.spec, seed as u64, offset as u64);
    planned(f, &["out"], vec![], vec![ov], k)
}

/// `aclnnMultinomial`.
pub(super) fn multinomial(
    f: &'static str,
    probs: *const aclTensor,
    numsamples: i64,
    replacement: bool,
    seed: i64,
    offset: i64,
    out: *const aclTensor,
) -> Planned {
    let (pv, ov) = (input(f, "self", probs)?, output(f, "out", out)?);
    let k = rng::multinomial(
        api(f),
        &pv.spec,
        numsamples,
        replacement,
        &ov.spec,
        seed as u64,
        offset as u64,
    );
    planned(f, &["out"], vec![pv], vec![ov], k)
}

/// `aclnnDropout`.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn dropout(
    f: &'static str,
    x: *const aclTensor,
    p: f64,
    train: bool,
    seed: i64,
    offset: i64,
    out: *const aclTensor,
    mask: *const aclTensor,
) -> Planned {
    let xv = input(f, "input", x)?;
    let (ov, mv) = (output(f, "out", out)?, output(f, "maskOut", mask)?);
    let k = rng::dropout(
        api(f),
        &xv.spec,
        p,
        train,
        (seed as u64, offset as u64),
        &ov.spec,
        &mv.spec,
    );
    planned(f, &["out", "maskOut"], vec![xv], vec![ov, mv], k)
}

/// `aclnnDropoutGenMask`.
pub(super) fn dropout_gen_mask(
    f: &'static str,
    shape: *const aclIntArray,
    prob: f64,
    seed: i64,
    offset: i64,
    out: *const aclTensor,
) -> Planned {
    let dims = ints(f, "shape", shape)?;
    let ov = output(f, "out", out)?;
    let k = rng::dropout_gen_mask(api(f), &dims, prob, seed as u64, offset as u64, &ov.spec);
    planned(f, &["out"], vec![], vec![ov], k)
}

/// `aclnnDropoutDoMask`.
pub(super) fn dropout_do_mask(
    f: &'static str,
    x: *const aclTensor,
    mask: *const aclTensor,
    prob: f64,
    out: *const aclTensor,
) -> Planned {
    let (xv, mv) = (input(f, "self", x)?, input(f, "mask", mask)?);
    let ov = output(f, "out", out)?;
    let k = rng::dropout_do_mask(api(f), &xv.spec, &mv.spec, prob, &ov.spec);
    planned(f, &["out"], vec![xv, mv], vec![ov], k)
}

/// `Xxx` of `aclnnXxxGetWorkspaceSize`: the kernel runs under it.
fn api(f: &'static str) -> &'static str {
    let a = f.strip_suffix("GetWorkspaceSize").unwrap_or(f);
    a.strip_prefix("aclnn").unwrap_or(a)
}
