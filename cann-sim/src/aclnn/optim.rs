//! The planning functions of the fused optimizers and of loss scaling
//! (`acl-sys/operators.toml`'s `sim` entries call them by path): each looks
//! up its C arguments, asks the engine ([`crate::ops::optim`]) for the
//! kernel (which checks dtypes and shapes as the page does: 161002) and
//! builds its plan. A null argument is 161001; the rules the pages assign
//! to the tiling are 561002, checked here (cited per operator).

#![allow(non_snake_case)]

use super::exec::{View, bound_list_as};
use super::nn::{input, invalid, output, planned};
use super::operators::Planned;
use crate::ops::TensorSpec;
use crate::ops::optim::{self, AdamHyper, FusedAdamwSpecs, NON_FINITE_MAX_TENSORS};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_NULLPTR, aclTensor, aclTensorList, aclnnStatus,
};

/// `Xxx` of `aclnnXxxGetWorkspaceSize`: the kernel runs under it.
fn op(f: &'static str) -> &'static str {
    let a = f.strip_suffix("GetWorkspaceSize").unwrap_or(f);
    a.strip_prefix("aclnn").unwrap_or(a)
}

fn tiling(f: &str, msg: String) -> aclnnStatus {
    fail(ACLNN_ERR_INNER_TILING_ERROR, format!("{f}: {msg}"))
}

/// An optional tensor the operator needs when `needed` (161001 if null
/// then, as the AdamW pages say for `maxGradNormOptional`).
fn needed_when(
    f: &str,
    what: &str,
    h: *const aclTensor,
    needed: bool,
    out: bool,
) -> Result<Option<View>, aclnnStatus> {
    if h.is_null() {
        if needed {
            return Err(fail(
                ACLNN_ERR_PARAM_NULLPTR,
                format!("{f}: {what} is null, but amsgrad needs it"),
            ));
        }
        return Ok(None);
    }
    let v = if out {
        output(f, what, h)?
    } else {
        input(f, what, h)?
    };
    Ok(needed.then_some(v))
}

/// `aclnnApplyAdamW`.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn apply_adam_w(
    f: &'static str,
    varRef: *const aclTensor,
    mRef: *const aclTensor,
    vRef: *const aclTensor,
    beta1Power: *const aclTensor,
    beta2Power: *const aclTensor,
    lr: *const aclTensor,
    weightDecay: *const aclTensor,
    beta1: *const aclTensor,
    beta2: *const aclTensor,
    eps: *const aclTensor,
    grad: *const aclTensor,
    maxGradNormOptional: *const aclTensor,
    amsgrad: bool,
    maximize: bool,
) -> Planned {
    let (var, m, v) = (
        output(f, "varRef", varRef)?,
        output(f, "mRef", mRef)?,
        output(f, "vRef", vRef)?,
    );
    let mut ins = vec![var.clone(), m.clone(), v.clone()];
    for (what, h) in [
        ("beta1Power", beta1Power),
        ("beta2Power", beta2Power),
        ("lr", lr),
        ("weightDecay", weightDecay),
        ("beta1", beta1),
        ("beta2", beta2),
        ("eps", eps),
        ("grad", grad),
    ] {
        ins.push(input(f, what, h)?);
    }
    if let Some(mx) = needed_when(
        f,
        "maxGradNormOptional",
        maxGradNormOptional,
        amsgrad,
        false,
    )? {
        ins.push(mx);
    }
    let specs: Vec<&TensorSpec> = ins.iter().map(|v| &v.spec).collect();
    let k = optim::apply_adam_w(op(f), &specs, amsgrad, maximize);
    planned(f, &["varRef", "mRef", "vRef"], ins, vec![var, m, v], k)
}

/// `aclnnApplyAdamWV2`.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn apply_adam_w_v2(
    f: &'static str,
    varRef: *const aclTensor,
    mRef: *const aclTensor,
    vRef: *const aclTensor,
    maxGradNormOptionalRef: *const aclTensor,
    grad: *const aclTensor,
    step: *const aclTensor,
    lr: f32,
    beta1: f32,
    beta2: f32,
    weightDecay: f32,
    eps: f32,
    amsgrad: bool,
    maximize: bool,
) -> Planned {
    let (var, m, v) = (
        output(f, "varRef", varRef)?,
        output(f, "mRef", mRef)?,
        output(f, "vRef", vRef)?,
    );
    let mx = needed_when(
        f,
        "maxGradNormOptionalRef",
        maxGradNormOptionalRef,
        amsgrad,
        true,
    )?;
    let (g, s) = (input(f, "grad", grad)?, input(f, "step", step)?);
    let mut ins = vec![var.clone(), m.clone(), v.clone(), g, s];
    let mut outs = vec![var, m, v];
    if let Some(mx) = mx {
        ins.push(mx.clone());
        outs.push(mx);
    }
    let specs: Vec<&TensorSpec> = ins.iter().map(|v| &v.spec).collect();
    let h = AdamHyper {
        lr: f64::from(lr),
        beta1: f64::from(beta1),
        beta2: f64::from(beta2),
        weight_decay: f64::from(weightDecay),
        eps: f64::from(eps),
        amsgrad,
        maximize,
    };
    let k = optim::apply_adam_w_v2(op(f), &specs, h);
    planned(
        f,
        &["varRef", "mRef", "vRef", "maxGradNormOptionalRef"],
        ins,
        outs,
        k,
    )
}

/// An optional one-element tensor the release treats as absent when empty
/// (`aclnn_fused_adamw.cpp` `CheckOptionalTensorEmpty`).
fn optional_nonempty(
    f: &str,
    what: &str,
    h: *const aclTensor,
) -> Result<Option<View>, aclnnStatus> {
    if h.is_null() {
        return Ok(None);
    }
    let v = input(f, what, h)?;
    Ok((v.spec.numel() > 0).then_some(v))
}

fn refs(l: &[TensorSpec]) -> Vec<&TensorSpec> {
    l.iter().collect()
}

/// `aclnnFusedAdamw`.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn fused_adamw(
    f: &'static str,
    paramsRef: *const aclTensorList,
    grads: *const aclTensorList,
    expAvgsRef: *const aclTensorList,
    expAvgSqsRef: *const aclTensorList,
    maxExpAvgSqsRef: *const aclTensorList,
    stateSteps: *const aclTensorList,
    gradScaleOptional: *const aclTensor,
    foundInfOptional: *const aclTensor,
    h: AdamHyper,
) -> Planned {
    let list =
        |what: &str, l: *const aclTensorList, out: bool| bound_list_as(f, what, l as usize, out);
    let params = list("paramsRef", paramsRef, true)?;
    let grads = list("grads", grads, false)?;
    let m = list("expAvgsRef", expAvgsRef, true)?;
    let v = list("expAvgSqsRef", expAvgSqsRef, true)?;
    let steps = list("stateSteps", stateSteps, false)?;
    let mx = if maxExpAvgSqsRef.is_null() {
        Vec::new()
    } else {
        list("maxExpAvgSqsRef", maxExpAvgSqsRef, true)?
    };
    if h.amsgrad && maxExpAvgSqsRef.is_null() {
        // aclnn_fused_adamw.cpp `CheckAttr`: ACLNN_ERR_PARAM_INVALID.
        return Err(invalid(f, "amsgrad is true but maxExpAvgSqsRef is null"));
    }
    let scale = optional_nonempty(f, "gradScaleOptional", gradScaleOptional)?;
    let found = optional_nonempty(f, "foundInfOptional", foundInfOptional)?;
    let specs = |l: &[View]| l.iter().map(|v| v.spec.clone()).collect::<Vec<_>>();
    let (ps, gs, ms, vs, xs, ss) = (
        specs(&params),
        specs(&grads),
        specs(&m),
        specs(&v),
        specs(&mx),
        specs(&steps),
    );
    let l = FusedAdamwSpecs {
        params: refs(&ps),
        grads: refs(&gs),
        exp_avgs: refs(&ms),
        exp_avg_sqs: refs(&vs),
        max_exp_avg_sqs: if h.amsgrad { refs(&xs) } else { Vec::new() },
        steps: refs(&ss),
        grad_scale: scale.as_ref().map(|v| &v.spec),
        found_inf: found.as_ref().map(|v| &v.spec),
    };
    let k = optim::fused_adamw(op(f), &l, h);
    let mut outs: Vec<View> = params.iter().chain(&m).chain(&v).cloned().collect();
    if h.amsgrad {
        outs.extend(mx.iter().cloned());
    }
    let mut ins = outs.clone();
    ins.extend(grads);
    ins.extend(steps);
    ins.extend(scale);
    ins.extend(found);
    planned(f, &[], ins, outs, k)
}

/// `aclnnForeachNonFiniteCheckAndUnscale`. The page's 561002 rules: more
/// than 256 tensors, tensors of different types, a `foundInf` or
/// `invScale` that is not one element.
pub(super) fn non_finite_check_and_unscale(
    f: &'static str,
    scaledGrads: *const aclTensorList,
    foundInf: *const aclTensor,
    invScale: *const aclTensor,
) -> Planned {
    let grads = bound_list_as(f, "scaledGrads", scaledGrads as usize, true)?;
    let found = output(f, "foundInf", foundInf)?;
    let inv = input(f, "invScale", invScale)?;
    let specs: Vec<&TensorSpec> = grads.iter().map(|v| &v.spec).collect();
    let k = optim::non_finite_check_and_unscale(op(f), &specs, &found.spec, &inv.spec);
    if k.is_ok() {
        if grads.len() > NON_FINITE_MAX_TENSORS {
            return Err(tiling(
                f,
                format!(
                    "scaledGrads holds {} tensors; at most {NON_FINITE_MAX_TENSORS} are supported",
                    grads.len()
                ),
            ));
        }
        if let Some(d) = specs.iter().find(|s| s.dtype != specs[0].dtype) {
            return Err(tiling(
                f,
                format!(
                    "the tensors of scaledGrads differ in type ({} and {})",
                    specs[0].dtype.name(),
                    d.dtype.name()
                ),
            ));
        }
        for (what, s) in [("foundInf", &found.spec), ("invScale", &inv.spec)] {
            if s.numel() != 1 {
                return Err(tiling(
                    f,
                    format!("{what} has {} elements; it must hold one", s.numel()),
                ));
            }
        }
    }
    let mut ins = grads.clone();
    ins.push(found.clone());
    ins.push(inv);
    let mut outs = grads;
    outs.push(found);
    planned(f, &[], ins, outs, k)
}

/// `aclnnAmpUpdateScale`. The page's 561002 rules: `currentScale`,
/// `growthTracker`, `foundInf` not of shape `[1]`; `growthInterval` outside
/// `[1, 2147483647]`.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn amp_update_scale(
    f: &'static str,
    currentScale: *const aclTensor,
    growthTracker: *const aclTensor,
    foundInf: *const aclTensor,
    growthFactor: f64,
    backoffFactor: f64,
    growthInterval: i64,
    updatedScale: *const aclTensor,
    updatedGrowthTracker: *const aclTensor,
) -> Planned {
    let scale = input(f, "currentScale", currentScale)?;
    let tracker = input(f, "growthTracker", growthTracker)?;
    let found = input(f, "foundInf", foundInf)?;
    let new_scale = output(f, "updatedScale", updatedScale)?;
    let new_tracker = output(f, "updatedGrowthTracker", updatedGrowthTracker)?;
    let k = optim::amp_update_scale(
        op(f),
        [
            &scale.spec,
            &tracker.spec,
            &found.spec,
            &new_scale.spec,
            &new_tracker.spec,
        ],
        growthFactor,
        backoffFactor,
        growthInterval,
    );
    if k.is_ok() {
        for (what, s) in [
            ("currentScale", &scale.spec),
            ("growthTracker", &tracker.spec),
            ("foundInf", &found.spec),
        ] {
            if s.shape != [1] {
                return Err(tiling(
                    f,
                    format!("{what} has shape {:?}; it must be [1]", s.shape),
                ));
            }
        }
        if !(1..=i64::from(i32::MAX)).contains(&growthInterval) {
            return Err(tiling(
                f,
                format!("growthInterval {growthInterval} is not in [1, 2147483647]"),
            ));
        }
    }
    planned(
        f,
        &["updatedScale", "updatedGrowthTracker"],
        vec![scale, tracker, found],
        vec![new_scale, new_tracker],
        k,
    )
}

/// [`AdamHyper`] of the C arguments.
#[allow(clippy::too_many_arguments)] // the C signature's
pub(super) fn hyper(
    lr: f64,
    beta1: f64,
    beta2: f64,
    weight_decay: f64,
    eps: f64,
    amsgrad: bool,
    maximize: bool,
) -> AdamHyper {
    AdamHyper {
        lr,
        beta1,
        beta2,
        weight_decay,
        eps,
        amsgrad,
        maximize,
    }
}
