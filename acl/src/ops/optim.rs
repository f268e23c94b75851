//! Fused optimizer steps and dynamic loss scaling, on the device only: a
//! mixed-precision training step with loss scaling needs no host round
//! trip, so it can be captured in a graph ([`Stream::capture`]).
//!
//! The pieces of a loss-scaled step, as torch's `GradScaler` with a fused
//! optimizer does them (op-plugin: `AmpForeachNonFiniteCheckAndUnscale…`,
//! `AmpUpdateScale…KernelNpuOpApi.cpp`):
//!
//! 1. backward on `loss · scale`;
//! 2. [`non_finite_check_and_unscale`]: `found_inf = 1` when a gradient
//!    overflowed, gradients multiplied by `1 / scale` (or leave them scaled
//!    and give the scale to the optimizer);
//! 3. [`adamw_step`] with `found_inf` (and the scale): nothing changes
//!    when `found_inf` is 1 (`aclnnFusedAdamw`);
//! 4. [`amp_update_scale`]: the scale backs off after an overflow and grows
//!    after `growth_interval` clean steps (`aclnnAmpUpdateScale`).
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, ops::{self, AdamW, AdamWParam}};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let mut w = Tensor::from_host(&s, &[1.0f32, -1.0], &[2])?;
//! let g = Tensor::from_host(&s, &[0.5f32, 0.5], &[2])?;
//! let (mut m, mut v) = (Tensor::<f32>::zeros(&s, &[2])?, Tensor::<f32>::zeros(&s, &[2])?);
//! let mut step = Tensor::<f32>::zeros(&s, &[1])?;
//! let hyper = AdamW { lr: 0.1, weight_decay: 0.0, ..AdamW::default() };
//! let p = AdamWParam::new(w.view_mut(), g.view(), m.view_mut(), v.view_mut());
//! ops::adamw_step(&s, vec![p], &mut step, &hyper, None, None)?;
//! // The first AdamW step moves each weight by lr against its gradient's sign.
//! let w = w.to_host_vec()?;
//! assert!((w[0] - 0.9).abs() < 1e-5 && (w[1] + 1.1).abs() < 1e-5);
//! assert_eq!(step.to_host_vec()?, [1.0]);
//! # Ok::<(), acl::Error>(())
//! ```

use super::*;
use crate::aclnn::{Scalar, TensorArg, TensorArgMut, TensorList};
use crate::memory::Access;

/// AdamW's hyper-parameters (torch's `AdamW` defaults: `lr` 1e-3, betas
/// 0.9 and 0.999, `eps` 1e-8, `weight_decay` 1e-2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamW {
    /// Learning rate.
    pub lr: f64,
    /// Decay of the first moment.
    pub beta1: f64,
    /// Decay of the second moment.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// Decoupled weight decay: each step multiplies the weights by `1 −
    /// lr · weight_decay`.
    pub weight_decay: f64,
    /// AMSGrad: the step uses the running maximum of the second moment.
    pub amsgrad: bool,
    /// Ascend the gradient instead.
    pub maximize: bool,
}

impl Default for AdamW {
    fn default() -> AdamW {
        AdamW {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 1e-2,
            amsgrad: false,
            maximize: false,
        }
    }
}

/// One parameter of an AdamW step: its weights, gradient and moments, all
/// of one shape and element type.
#[derive(Debug)]
pub struct AdamWParam<'a, T: Element> {
    /// The weights, updated.
    pub param: TensorViewMut<'a, T>,
    /// The gradient.
    pub grad: TensorView<'a, T>,
    /// The first moment, updated.
    pub exp_avg: TensorViewMut<'a, T>,
    /// The second moment, updated.
    pub exp_avg_sq: TensorViewMut<'a, T>,
    /// AMSGrad's running maximum of the second moment, updated (required
    /// with [`AdamW::amsgrad`], ignored without).
    pub max_exp_avg_sq: Option<TensorViewMut<'a, T>>,
}

impl<'a, T: Element> AdamWParam<'a, T> {
    /// A parameter without AMSGrad state.
    pub fn new(
        param: TensorViewMut<'a, T>,
        grad: TensorView<'a, T>,
        exp_avg: TensorViewMut<'a, T>,
        exp_avg_sq: TensorViewMut<'a, T>,
    ) -> AdamWParam<'a, T> {
        AdamWParam {
            param,
            grad,
            exp_avg,
            exp_avg_sq,
            max_exp_avg_sq: None,
        }
    }
}

fn one_element(function: &'static str, what: &str, shape: &[usize]) -> Result<()> {
    if shape.iter().product::<usize>() == 1 {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("{what} has shape {shape:?}; it must hold one element"),
        ))
    }
}

/// One AdamW step over `params` in one operator (`aclnnFusedAdamw`), then
/// `step += 1`, all on the device.
///
/// `step` (one element) counts the steps taken: this one is step `step +
/// 1` for the bias corrections. With `grad_scale`, the gradients are
/// divided by it first; with `found_inf` (one element, 0 or 1), a 1 skips
/// the step entirely: weights, moments and `step` keep their values.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for no parameters, a gradient or moment of
/// another shape than its weights, a missing AMSGrad maximum with
/// `amsgrad`, or a `step`, `grad_scale` or `found_inf` that is not one
/// element; the aclnn status (161002 for element types other than f16,
/// bf16, f32, or a negative `lr`, betas or `weight_decay`).
#[doc(alias = "aclnnFusedAdamw")]
pub fn adamw_step<T: Element>(
    stream: &Stream,
    params: Vec<AdamWParam<'_, T>>,
    step: &mut impl AsViewMut<f32>,
    hyper: &AdamW,
    grad_scale: Option<&TensorView<'_, f32>>,
    found_inf: Option<&TensorView<'_, f32>>,
) -> Result<()> {
    const F: &str = "ops::adamw_step";
    if params.is_empty() {
        return Err(Error::invalid(F, "no parameters"));
    }
    let step = step.view_mut();
    one_element(F, "step", step.shape())?;
    for (what, t) in [("grad_scale", grad_scale), ("found_inf", found_inf)] {
        if let Some(t) = t {
            one_element(F, what, t.shape())?;
        }
    }
    for (i, p) in params.iter().enumerate() {
        let want = p.param.shape();
        let mut parts = vec![
            ("grad", p.grad.shape()),
            ("exp_avg", p.exp_avg.shape()),
            ("exp_avg_sq", p.exp_avg_sq.shape()),
        ];
        match (&p.max_exp_avg_sq, hyper.amsgrad) {
            (Some(m), true) => parts.push(("max_exp_avg_sq", m.shape())),
            (None, true) => {
                return Err(Error::invalid(
                    F,
                    format!("parameter {i} has no max_exp_avg_sq, which amsgrad needs"),
                ));
            }
            _ => {}
        }
        for (what, shape) in parts {
            if shape != want {
                return Err(Error::invalid(
                    F,
                    format!("parameter {i}: {what} has shape {shape:?}, the weights {want:?}"),
                ));
            }
        }
    }
    {
        let n = params.len();
        let (mut ps, mut gs, mut ms, mut vs, mut xs) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::new(),
        );
        for p in params {
            ps.push(nn_mut(p.param)?);
            gs.push(nn(&p.grad)?);
            ms.push(nn_mut(p.exp_avg)?);
            vs.push(nn_mut(p.exp_avg_sq)?);
            if hyper.amsgrad
                && let Some(x) = p.max_exp_avg_sq
            {
                xs.push(nn_mut(x)?);
            }
        }
        let step_view = step.as_view();
        let steps = (0..n)
            .map(|_| nn(&step_view))
            .collect::<Result<Vec<TensorArg<'_>>>>()?;
        let (ps, gs, ms, vs) = (
            TensorList::new_mut(ps)?,
            TensorList::new(gs)?,
            TensorList::new_mut(ms)?,
            TensorList::new_mut(vs)?,
        );
        let xs = if hyper.amsgrad {
            Some(TensorList::new_mut(xs)?)
        } else {
            None
        };
        let steps = TensorList::new(steps)?;
        let scale = grad_scale.map(nn).transpose()?;
        let inf = found_inf.map(nn).transpose()?;
        fused_adamw(
            stream,
            [&ps, &gs, &ms, &vs],
            xs.as_ref(),
            &steps,
            scale.as_ref(),
            inf.as_ref(),
            hyper,
        )?;
    }
    // step += 1 − found_inf: a skipped step is not counted.
    let one = Scalar::new(1.0f32)?;
    let mut st = nn_mut(step)?;
    aclnn::adds_(stream, &mut st, &one, &one)?;
    if let Some(inf) = found_inf {
        aclnn::sub_(stream, &mut st, &nn(inf)?, &one)?;
    }
    Ok(())
}

/// `aclnnFusedAdamw` with a null `maxExpAvgSqsRef` when AMSGrad is off (its
/// page allows it; the table's wrapper, [`aclnn::fused_adamw`], has no
/// optional lists yet).
fn fused_adamw(
    stream: &Stream,
    [ps, gs, ms, vs]: [&TensorList<'_>; 4],
    xs: Option<&TensorList<'_>>,
    steps: &TensorList<'_>,
    scale: Option<&TensorArg<'_>>,
    inf: Option<&TensorArg<'_>>,
    h: &AdamW,
) -> Result<()> {
    let mut uses = Vec::new();
    for l in [Some(ps), Some(gs), Some(ms), Some(vs), xs, Some(steps)]
        .into_iter()
        .flatten()
    {
        uses.extend(l.accesses().iter().map(Access::as_use));
    }
    uses.extend(scale.map(|t| t.mem_use()));
    uses.extend(inf.map(|t| t.mem_use()));
    let null = std::ptr::null();
    let (names, plan, launch) = crate::result::aclnn_op!(
        aclnnFusedAdamwGetWorkspaceSize(
            ps.as_raw(),
            gs.as_raw(),
            ms.as_raw(),
            vs.as_raw(),
            xs.map_or(null, |l| l.as_raw()),
            steps.as_raw(),
            scale.map_or(std::ptr::null(), |t| t.as_raw()),
            inf.map_or(std::ptr::null(), |t| t.as_raw()),
            h.lr,
            h.beta1,
            h.beta2,
            h.weight_decay,
            h.eps,
            h.amsgrad,
            h.maximize
        ),
        aclnnFusedAdamw
    );
    aclnn::two_phase(stream, names, &uses, plan, launch)
}

/// Checks `grads` for infinities and NaNs and unscales them in place
/// (`aclnnForeachNonFiniteCheckAndUnscale`, torch's
/// `_amp_foreach_non_finite_check_and_unscale_`): `found_inf` becomes 1
/// when any element is not finite (else keeps its value), every gradient
/// is multiplied by `inv_scale`. Lists longer than the operator's 256 are
/// split, as op-plugin does.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for no gradients or a `found_inf` or
/// `inv_scale` that is not one element; the aclnn status (161002 for
/// gradients other than f32, f16, bf16; 561002 for gradients of mixed
/// types).
#[doc(alias = "aclnnForeachNonFiniteCheckAndUnscale")]
pub fn non_finite_check_and_unscale<T: Element>(
    stream: &Stream,
    grads: Vec<TensorViewMut<'_, T>>,
    found_inf: &mut impl AsViewMut<f32>,
    inv_scale: &impl AsView<f32>,
) -> Result<()> {
    const F: &str = "ops::non_finite_check_and_unscale";
    const MAX: usize = 256;
    if grads.is_empty() {
        return Err(Error::invalid(F, "no gradients"));
    }
    let (mut found, inv) = (found_inf.view_mut(), inv_scale.view());
    one_element(F, "found_inf", found.shape())?;
    one_element(F, "inv_scale", inv.shape())?;
    let inv = nn(&inv)?;
    let mut grads = grads.into_iter().peekable();
    while grads.peek().is_some() {
        let chunk = grads
            .by_ref()
            .take(MAX)
            .map(nn_mut)
            .collect::<Result<Vec<TensorArgMut<'_>>>>()?;
        let list = TensorList::new_mut(chunk)?;
        aclnn::foreach_non_finite_check_and_unscale(
            stream,
            &list,
            &mut nn_mut(found.reborrow())?,
            &inv,
        )?;
    }
    Ok(())
}

/// Updates the loss scale in place (`aclnnAmpUpdateScale`, torch's
/// `_amp_update_scale_`): after an overflow (`found_inf ≠ 0`) `scale ·=
/// backoff_factor` and the tracker restarts; after `growth_interval` clean
/// steps in a row `scale ·= growth_factor` (kept when that is not finite)
/// and the tracker restarts; otherwise the tracker counts the clean step.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a `scale`, `growth_tracker` or
/// `found_inf` that is not `[1]`; the aclnn status (161002 for a scale
/// other than f32, f16, bf16; 561002 for `growth_interval` outside `[1,
/// 2³¹ − 1]`).
#[doc(alias = "aclnnAmpUpdateScale")]
pub fn amp_update_scale<T: Element>(
    stream: &Stream,
    scale: &mut impl AsViewMut<T>,
    growth_tracker: &mut impl AsViewMut<i32>,
    found_inf: &impl AsView<T>,
    growth_factor: f64,
    backoff_factor: f64,
    growth_interval: i64,
) -> Result<()> {
    const F: &str = "ops::amp_update_scale";
    let (scale, tracker, found) = (
        scale.view_mut(),
        growth_tracker.view_mut(),
        found_inf.view(),
    );
    for (what, shape) in [
        ("scale", scale.shape()),
        ("growth_tracker", tracker.shape()),
        ("found_inf", found.shape()),
    ] {
        if shape != [1] {
            return Err(Error::invalid(
                F,
                format!("{what} has shape {shape:?}; it must be [1]"),
            ));
        }
    }
    // The operator writes its own outputs: the results go to scratch
    // tensors first, then back (both stream-ordered), since one buffer
    // cannot be borrowed as the input and the output at once.
    let mut new_scale = Tensor::<T>::zeros(stream, &[1])?;
    let mut new_tracker = Tensor::<i32>::zeros(stream, &[1])?;
    aclnn::amp_update_scale(
        stream,
        &nn(&scale.as_view())?,
        &nn(&tracker.as_view())?,
        &nn(&found)?,
        growth_factor,
        backoff_factor,
        growth_interval,
        &mut nn_mut(new_scale.view_mut())?,
        &mut nn_mut(new_tracker.view_mut())?,
    )?;
    aclnn::copy_(stream, &mut nn_mut(scale)?, &nn(&new_scale.view())?)?;
    aclnn::copy_(stream, &mut nn_mut(tracker)?, &nn(&new_tracker.view())?)
}
