//! The fused-optimizer and loss-scaling kernels: `aclnnApplyAdamW`,
//! `aclnnApplyAdamWV2`, `aclnnFusedAdamw`,
//! `aclnnForeachNonFiniteCheckAndUnscale` and `aclnnAmpUpdateScale`.
//!
//! The arithmetic is the released kernels' (hicann/ops-nn and ops-math,
//! cited per function), where a kernel and its page disagree the kernel's:
//! the step count of `ApplyAdamWV2` and `FusedAdamw` is the tensor's value
//! plus one (`apply_adam_w_v2_fp.h` `Init`, `fused_adamw_kernel.h`: "kernel
//! 内部会 +1"; torch_npu passes `state_steps − 1`, op-plugin
//! `FusedAdamWKernelNpuOpApi.cpp`), and `ApplyAdamW` with `amsgrad` writes
//! the new second moment to `vRef` and uses its maximum with
//! `maxGradNormOptional` only for the step (`apply_adam_w_dag.h`,
//! `ApplyAdamWAmsGradDAG`). Values are computed in f64 and rounded once to
//! the tensors' type (the device computes in f32: results agree to the
//! type's precision).
//!
//! Every step-size or scale operand is read from device memory when the
//! kernel runs, so a captured graph replays them with the values of each
//! launch: a loss-scaled training step needs no host round trip.

use super::native::{Native, read, write, write_i64};
use super::{DType, Input, OpError, Output, TensorSpec, fmt_shape};
use crate::ops::nn::Kernel;

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

use DType::*;

/// The parameter types of the AdamW operators (their pages: FLOAT16,
/// BFLOAT16, FLOAT32).
const PARAM_TYPES: &[DType] = &[F16, BF16, F32];

fn param_type(name: &str, what: &str, d: DType) -> Res<()> {
    if PARAM_TYPES.contains(&d) {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} is {}; it must be float16, bfloat16 or float32",
            d.name()
        ))
    }
}

fn same_type(name: &str, what: &str, s: &TensorSpec, var: &TensorSpec) -> Res<()> {
    if s.dtype == var.dtype {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} is {}, not {} as varRef",
            s.dtype.name(),
            var.dtype.name()
        ))
    }
}

fn same_shape(name: &str, what: &str, s: &TensorSpec, var: &TensorSpec, var_name: &str) -> Res<()> {
    if s.shape == var.shape {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} has shape {}, not {var_name}'s {}",
            fmt_shape(&s.shape),
            fmt_shape(&var.shape)
        ))
    }
}

fn one_element(name: &str, what: &str, s: &TensorSpec) -> Res<()> {
    if s.numel() == 1 {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} has shape {}; it must hold one element",
            fmt_shape(&s.shape)
        ))
    }
}

fn param_rank(name: &str, var: &TensorSpec) -> Res<()> {
    if (1..=8).contains(&var.shape.len()) {
        Ok(())
    } else {
        err(format!(
            "{name}: varRef has shape {}; 1 to 8 dimensions are supported",
            fmt_shape(&var.shape)
        ))
    }
}

/// The hyper-parameters of one AdamW update.
#[derive(Debug, Clone, Copy)]
struct Hyper {
    lr: f64,
    beta1: f64,
    beta2: f64,
    weight_decay: f64,
    eps: f64,
    /// `1 − β1ᵗ`, `1 − β2ᵗ`.
    bc1: f64,
    bc2: f64,
    maximize: bool,
}

/// One AdamW update of `var`, `m`, `v` by `grad` (decoupled weight decay,
/// bias correction); `vmax` for AMSGrad: the running maximum the step uses
/// (updated in place). Returns nothing: the slices are the results.
fn adamw(
    h: Hyper,
    var: &mut [f64],
    m: &mut [f64],
    v: &mut [f64],
    grad: &[f64],
    mut vmax: Option<&mut [f64]>,
) {
    for i in 0..var.len() {
        let g = if h.maximize { -grad[i] } else { grad[i] };
        m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g;
        v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g * g;
        let second = match vmax.as_deref_mut() {
            Some(mx) => {
                mx[i] = mx[i].max(v[i]);
                mx[i]
            }
            None => v[i],
        };
        let denom = (second / h.bc2).sqrt() + h.eps;
        var[i] = var[i] * (1.0 - h.lr * h.weight_decay) - h.lr / h.bc1 * m[i] / denom;
    }
}

/// `aclnnApplyAdamW` (hicann/ops-nn `optim/apply_adam_w`): inputs `varRef,
/// mRef, vRef, beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps,
/// grad[, maxGradNormOptional]`, outputs `varRef, mRef, vRef`. The powers
/// are `β^(t−1)`: the kernel multiplies them by β (`apply_adam_w_dag.h`
/// `CalcDenom`, `CalcDataVarOut`).
pub fn apply_adam_w(
    name: &'static str,
    specs: &[&TensorSpec],
    amsgrad: bool,
    maximize: bool,
) -> Res<Kernel> {
    const NAMES: [&str; 12] = [
        "varRef",
        "mRef",
        "vRef",
        "beta1Power",
        "beta2Power",
        "lr",
        "weightDecay",
        "beta1",
        "beta2",
        "eps",
        "grad",
        "maxGradNormOptional",
    ];
    let var = specs[0];
    param_type(name, "varRef", var.dtype)?;
    param_rank(name, var)?;
    for (i, s) in specs.iter().enumerate().skip(1) {
        same_type(name, NAMES[i], s, var)?;
        match i {
            3..=9 => one_element(name, NAMES[i], s)?,
            _ => same_shape(name, NAMES[i], s, var, "varRef")?,
        }
    }
    let outputs = vec![var.clone(), var.clone(), var.clone()];
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let s = |i: usize| read(&ins[i])[0];
        let (b1, b2) = (s(7), s(8));
        let h = Hyper {
            lr: s(5),
            beta1: b1,
            beta2: b2,
            weight_decay: s(6),
            eps: s(9),
            bc1: 1.0 - s(3) * b1,
            bc2: 1.0 - s(4) * b2,
            maximize,
        };
        let (mut var, mut m, mut v) = (read(&ins[0]), read(&ins[1]), read(&ins[2]));
        let grad = read(&ins[10]);
        if amsgrad {
            // The maximum is the step's only: vRef gets the new moment.
            let mut mx = read(&ins[11]);
            let mut v_out = v.clone();
            adamw(h, &mut var, &mut m, &mut v_out, &grad, Some(&mut mx));
            v = v_out;
        } else {
            adamw(h, &mut var, &mut m, &mut v, &grad, None);
        }
        write(&mut outs[0], &var);
        write(&mut outs[1], &m);
        write(&mut outs[2], &v);
        Ok(())
    });
    Ok(Kernel { outputs, native })
}

/// The scalar hyper-parameters of `aclnnApplyAdamWV2` and `aclnnFusedAdamw`.
#[derive(Debug, Clone, Copy)]
pub struct AdamHyper {
    /// `lr`.
    pub lr: f64,
    /// `beta1`.
    pub beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `weightDecay`.
    pub weight_decay: f64,
    /// `eps`.
    pub eps: f64,
    /// `amsgrad`.
    pub amsgrad: bool,
    /// `maximize`.
    pub maximize: bool,
}

impl AdamHyper {
    /// The update's constants at step count `step` (the kernel's `t =
    /// step + 1`).
    fn at(self, step: f64) -> Hyper {
        let t = step + 1.0;
        Hyper {
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            weight_decay: self.weight_decay,
            eps: self.eps,
            bc1: 1.0 - self.beta1.powf(t),
            bc2: 1.0 - self.beta2.powf(t),
            maximize: self.maximize,
        }
    }
}

fn step_spec(name: &str, what: &str, s: &TensorSpec) -> Res<()> {
    if !matches!(s.dtype, I64 | F32) {
        return err(format!(
            "{name}: {what} is {}; it must be int64 or float32",
            s.dtype.name()
        ));
    }
    one_element(name, what, s)
}

/// `aclnnApplyAdamWV2` (hicann/ops-nn `optim/apply_adam_w_v2`): inputs
/// `varRef, mRef, vRef, grad, step[, maxGradNormOptionalRef]`, outputs
/// `varRef, mRef, vRef[, maxGradNormOptionalRef]` (the running maximum with
/// `amsgrad`, `apply_adam_w_v2_fp.h`).
pub fn apply_adam_w_v2(name: &'static str, specs: &[&TensorSpec], h: AdamHyper) -> Res<Kernel> {
    const NAMES: [&str; 6] = [
        "varRef",
        "mRef",
        "vRef",
        "grad",
        "step",
        "maxGradNormOptionalRef",
    ];
    let var = specs[0];
    param_type(name, "varRef", var.dtype)?;
    param_rank(name, var)?;
    for i in [1, 2, 3, 5] {
        if let Some(s) = specs.get(i) {
            same_type(name, NAMES[i], s, var)?;
            same_shape(name, NAMES[i], s, var, "varRef")?;
        }
    }
    step_spec(name, "step", specs[4])?;
    let n_out = if h.amsgrad { 4 } else { 3 };
    let outputs = vec![var.clone(); n_out];
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let hy = h.at(read(&ins[4])[0]);
        let (mut var, mut m, mut v) = (read(&ins[0]), read(&ins[1]), read(&ins[2]));
        let grad = read(&ins[3]);
        let mut mx = h.amsgrad.then(|| read(&ins[5]));
        adamw(hy, &mut var, &mut m, &mut v, &grad, mx.as_deref_mut());
        write(&mut outs[0], &var);
        write(&mut outs[1], &m);
        write(&mut outs[2], &v);
        if let Some(mx) = mx {
            write(&mut outs[3], &mx);
        }
        Ok(())
    });
    Ok(Kernel { outputs, native })
}

/// The tensor lists of one `aclnnFusedAdamw` call, by member.
#[derive(Debug)]
pub struct FusedAdamwSpecs<'a> {
    /// `paramsRef`.
    pub params: Vec<&'a TensorSpec>,
    /// `grads`.
    pub grads: Vec<&'a TensorSpec>,
    /// `expAvgsRef`.
    pub exp_avgs: Vec<&'a TensorSpec>,
    /// `expAvgSqsRef`.
    pub exp_avg_sqs: Vec<&'a TensorSpec>,
    /// `maxExpAvgSqsRef` (empty: absent).
    pub max_exp_avg_sqs: Vec<&'a TensorSpec>,
    /// `stateSteps`.
    pub steps: Vec<&'a TensorSpec>,
    /// `gradScaleOptional`.
    pub grad_scale: Option<&'a TensorSpec>,
    /// `foundInfOptional`.
    pub found_inf: Option<&'a TensorSpec>,
}

/// `aclnnFusedAdamw` (hicann/ops-nn `optim/fused_adamw`, its op_api
/// checks in `aclnn_fused_adamw.cpp`): every parameter of the lists in one
/// call; grads divided by `gradScaleOptional`; nothing written when
/// `foundInfOptional` is 1 (`fused_adamw_kernel.h`, `foundInfValue ==
/// 1.0f`).
///
/// Kernel inputs, in order: the `n` params, exp_avgs, exp_avg_sqs,
/// max_exp_avg_sqs (amsgrad only), grads, steps, then grad_scale and
/// found_inf when given; outputs: params, exp_avgs, exp_avg_sqs,
/// max_exp_avg_sqs (amsgrad only).
pub fn fused_adamw(name: &'static str, l: &FusedAdamwSpecs<'_>, h: AdamHyper) -> Res<Kernel> {
    let n = l.params.len();
    if n == 0 {
        return err(format!("{name}: paramsRef is empty"));
    }
    let lists = [
        ("grads", &l.grads),
        ("expAvgsRef", &l.exp_avgs),
        ("expAvgSqsRef", &l.exp_avg_sqs),
        ("stateSteps", &l.steps),
    ];
    for (what, list) in lists {
        if list.len() != n {
            return err(format!(
                "{name}: {what} holds {} tensors, paramsRef {n}",
                list.len()
            ));
        }
    }
    let amsgrad = h.amsgrad;
    if amsgrad && l.max_exp_avg_sqs.len() != n {
        return err(format!(
            "{name}: with amsgrad, maxExpAvgSqsRef must hold {n} tensors, it holds {}",
            l.max_exp_avg_sqs.len()
        ));
    }
    for (what, v) in [
        ("lr", h.lr),
        ("beta1", h.beta1),
        ("beta2", h.beta2),
        ("weightDecay", h.weight_decay),
    ] {
        if v.is_nan() || v < 0.0 {
            return err(format!("{name}: {what} = {v} is negative"));
        }
    }
    let p0 = l.params[0];
    param_type(name, "paramsRef[0]", p0.dtype)?;
    let step_type = l.steps[0].dtype;
    for i in 0..n {
        let p = l.params[i];
        let mut members = vec![
            ("grads", l.grads[i]),
            ("expAvgsRef", l.exp_avgs[i]),
            ("expAvgSqsRef", l.exp_avg_sqs[i]),
        ];
        if amsgrad {
            members.push(("maxExpAvgSqsRef", l.max_exp_avg_sqs[i]));
        }
        for (what, s) in std::iter::once(("paramsRef", p)).chain(members.iter().copied()) {
            if s.dtype != p0.dtype {
                return err(format!(
                    "{name}: {what}[{i}] is {}, not {} as paramsRef[0]",
                    s.dtype.name(),
                    p0.dtype.name()
                ));
            }
        }
        for (what, s) in members {
            same_shape(
                name,
                &format!("{what}[{i}]"),
                s,
                p,
                &format!("paramsRef[{i}]"),
            )?;
        }
        step_spec(name, &format!("stateSteps[{i}]"), l.steps[i])?;
        if l.steps[i].dtype != step_type {
            return err(format!("{name}: the stateSteps tensors differ in type"));
        }
    }
    for (what, s) in [
        ("gradScaleOptional", l.grad_scale),
        ("foundInfOptional", l.found_inf),
    ] {
        if let Some(s) = s
            && s.dtype != F32
        {
            return err(format!("{name}: {what} is {}, not float32", s.dtype.name()));
        }
    }
    let lists_in = if amsgrad { 4 } else { 3 };
    let mut outputs = Vec::with_capacity(lists_in * n);
    for list in [&l.params, &l.exp_avgs, &l.exp_avg_sqs, &l.max_exp_avg_sqs]
        .into_iter()
        .take(lists_in)
    {
        outputs.extend(list.iter().map(|s| (*s).clone()));
    }
    let (has_scale, has_inf) = (l.grad_scale.is_some(), l.found_inf.is_some());
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let grads_at = lists_in * n;
        let steps_at = grads_at + n;
        let mut extra = steps_at + n;
        let scale = has_scale.then(|| {
            extra += 1;
            read(&ins[extra - 1]).first().copied().unwrap_or(1.0)
        });
        let found = has_inf && read(&ins[extra]).first().copied() == Some(1.0);
        if found {
            // Skipped: every output keeps its value.
            for (o, i) in outs.iter_mut().zip(ins) {
                o.data.copy_from_slice(i.data);
            }
            return Ok(());
        }
        for i in 0..n {
            let hy = h.at(read(&ins[steps_at + i])[0]);
            let mut var = read(&ins[i]);
            let mut m = read(&ins[n + i]);
            let mut v = read(&ins[2 * n + i]);
            let mut mx = amsgrad.then(|| read(&ins[3 * n + i]));
            let mut grad = read(&ins[grads_at + i]);
            if let Some(s) = scale {
                grad.iter_mut().for_each(|g| *g /= s);
            }
            adamw(hy, &mut var, &mut m, &mut v, &grad, mx.as_deref_mut());
            write(&mut outs[i], &var);
            write(&mut outs[n + i], &m);
            write(&mut outs[2 * n + i], &v);
            if let Some(mx) = mx {
                write(&mut outs[3 * n + i], &mx);
            }
        }
        Ok(())
    });
    Ok(Kernel { outputs, native })
}

/// The longest list `aclnnForeachNonFiniteCheckAndUnscale` takes (its
/// page: "支持的最大长度为256个").
pub const NON_FINITE_MAX_TENSORS: usize = 256;

/// `aclnnForeachNonFiniteCheckAndUnscale` (hicann/ops-nn
/// `foreach/foreach_non_finite_check_and_unscale`): `foundInf = 1` when any
/// element of `scaledGrads` is infinite or NaN (else unchanged), and every
/// gradient multiplied by `invScale`. Inputs: the grads, `foundInf`,
/// `invScale`; outputs: the grads, `foundInf`. The dtype rules (161002) are
/// checked here; the list's length, its mixed types and the one-element
/// rule are the tiling's (561002), checked by the caller.
pub fn non_finite_check_and_unscale(
    name: &'static str,
    grads: &[&TensorSpec],
    found_inf: &TensorSpec,
    inv_scale: &TensorSpec,
) -> Res<Kernel> {
    for (i, g) in grads.iter().enumerate() {
        if !PARAM_TYPES.contains(&g.dtype) {
            return err(format!(
                "{name}: scaledGrads[{i}] is {}; it must be float32, float16 or bfloat16",
                g.dtype.name()
            ));
        }
    }
    for (what, s) in [("foundInf", found_inf), ("invScale", inv_scale)] {
        if s.dtype != F32 {
            return err(format!("{name}: {what} is {}, not float32", s.dtype.name()));
        }
    }
    let n = grads.len();
    let mut outputs: Vec<TensorSpec> = grads.iter().map(|s| (*s).clone()).collect();
    outputs.push(found_inf.clone());
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let inv = read(&ins[n + 1]).first().copied().unwrap_or(1.0);
        let mut found = read(&ins[n]).first().copied().unwrap_or(0.0);
        for i in 0..n {
            let g = read(&ins[i]);
            if g.iter().any(|v| !v.is_finite()) {
                found = 1.0;
            }
            let scaled: Vec<f64> = g.iter().map(|v| v * inv).collect();
            write(&mut outs[i], &scaled);
        }
        write(&mut outs[n], &[found]);
        Ok(())
    });
    Ok(Kernel { outputs, native })
}

/// `aclnnAmpUpdateScale` (hicann/ops-math `math/amp_update_scale`, its
/// page's formula): with `foundInf ≠ 0` the scale backs off and the tracker
/// restarts; else after `growthInterval` clean steps the scale grows (kept
/// when the grown value is not finite) and the tracker restarts; else the
/// tracker counts. Inputs `currentScale, growthTracker, foundInf`; outputs
/// `updatedScale, updatedGrowthTracker`. The dtype rules (161002) are
/// checked here; shapes and `growthInterval` are the tiling's (561002),
/// checked by the caller.
pub fn amp_update_scale(
    name: &'static str,
    specs: [&TensorSpec; 5],
    growth_factor: f64,
    backoff_factor: f64,
    growth_interval: i64,
) -> Res<Kernel> {
    let [scale, tracker, found, new_scale, new_tracker] = specs;
    if !PARAM_TYPES.contains(&scale.dtype) {
        return err(format!(
            "{name}: currentScale is {}; it must be float32, float16 or bfloat16",
            scale.dtype.name()
        ));
    }
    for (what, s) in [("foundInf", found), ("updatedScale", new_scale)] {
        if s.dtype != scale.dtype {
            return err(format!(
                "{name}: {what} is {}, not {} as currentScale",
                s.dtype.name(),
                scale.dtype.name()
            ));
        }
    }
    for (what, s) in [
        ("growthTracker", tracker),
        ("updatedGrowthTracker", new_tracker),
    ] {
        if s.dtype != I32 {
            return err(format!("{name}: {what} is {}, not int32", s.dtype.name()));
        }
    }
    let outputs = vec![new_scale.clone(), new_tracker.clone()];
    let scale_type = scale.dtype;
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let first = |i: usize| read(&ins[i]).first().copied().unwrap_or(0.0);
        let (s, t, inf) = (first(0), first(1) as i64, first(2));
        let (s2, t2) = if inf != 0.0 {
            (s * backoff_factor, 0)
        } else if t + 1 == growth_interval {
            let grown = s * growth_factor;
            (
                if finite_as(scale_type, grown) {
                    grown
                } else {
                    s
                },
                0,
            )
        } else {
            (s, t + 1)
        };
        write(&mut outs[0], &[s2]);
        write_i64(&mut outs[1], &[t2]);
        Ok(())
    });
    Ok(Kernel { outputs, native })
}

/// Whether `v` is finite once stored as `dtype`.
fn finite_as(dtype: DType, v: f64) -> bool {
    match dtype {
        F16 => half::f16::from_f64(v).is_finite(),
        BF16 => half::bf16::from_f64(v).is_finite(),
        F32 => (v as f32).is_finite(),
        _ => v.is_finite(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dtype: DType, shape: &[i64]) -> TensorSpec {
        TensorSpec {
            dtype,
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn one_adamw_step_matches_the_formula() {
        let h = AdamHyper {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.99,
            weight_decay: 0.01,
            eps: 1e-8,
            amsgrad: false,
            maximize: false,
        }
        .at(0.0);
        let (mut var, mut m, mut v) = (vec![1.0], vec![0.0], vec![0.0]);
        adamw(h, &mut var, &mut m, &mut v, &[0.5], None);
        // t = 1: m̂ = g, v̂ = g², so the step is lr · g / (|g| + eps).
        let want = 1.0 * (1.0 - 0.1 * 0.01) - 0.1 * 0.5 / (0.5 + 1e-8);
        assert!((var[0] - want).abs() < 1e-12, "{var:?} vs {want}");
        assert!((m[0] - 0.05).abs() < 1e-12);
        assert!((v[0] - 0.0025).abs() < 1e-12);
    }

    #[test]
    fn amp_update_scale_refuses_mixed_scale_types() {
        let (f, h, i) = (spec(F32, &[1]), spec(F16, &[1]), spec(I32, &[1]));
        let e = amp_update_scale("AmpUpdateScale", [&f, &i, &h, &f, &i], 2.0, 0.5, 2).unwrap_err();
        assert_eq!(
            e.message(),
            "AmpUpdateScale: foundInf is float16, not float32 as currentScale"
        );
    }
}
