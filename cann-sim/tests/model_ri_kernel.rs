//! The kernel tasks of a captured model through the C ABI:
//! `aclmdlRITaskGetParams`/`SetParams` of a kernel launch and
//! `aclmdlRIKernelTaskGetAttribute`, with the release's codes (hicann/runtime
//! `src/runtime/core/src/kernel/kernel_utils.cc` `GetKernelTaskParams`,
//! `UpdateKernelParams`, `GetKernelAttribute`).
//!
//! Each test works in a context of its own (a capture blocks synchronous
//! calls in its context).

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_EXECUTE, ACL_ERROR_RT_MODEL_UPDATE_FAILED, ACL_ERROR_RT_PARAM_INVALID,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED, ACL_MODEL_RI_TASK_KERNEL,
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE,
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, aclError, aclmdlRI,
    aclmdlRITask, aclmdlRITaskParams, aclrtBinHandle, aclrtContext, aclrtFuncHandle,
    aclrtLaunchKernelAttr, aclrtLaunchKernelAttrValue, aclrtLaunchKernelCfg, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ffi::{CString, c_void};
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);

/// A context of its own on device 0, current on this thread.
fn own_context() -> aclrtContext {
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    ctx
}

/// The sample kernels, loaded, and the kernel `name` of them.
fn kernel(name: &str) -> (aclrtBinHandle, aclrtFuncHandle) {
    let p = cann_sim::sample_kernels().expect("the sample kernels were built");
    let path = CString::new(p.to_str().unwrap()).unwrap();
    let mut b = null_mut();
    // SAFETY: valid path and out-pointer.
    ok(unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), null_mut(), &mut b) });
    let c = CString::new(name).unwrap();
    let mut f = null_mut();
    // SAFETY: valid name and out-pointer.
    ok(unsafe { aclrtBinaryGetFunction(b, c.as_ptr(), &mut f) });
    (b, f)
}

/// A model of one `aclrtLaunchKernel` of `f` with `words`, captured on
/// `s` (with launch attributes `attrs` through
/// `aclrtLaunchKernelWithConfig`'s raw form when given), and its task.
fn capture_kernel(
    s: aclrtStream,
    f: aclrtFuncHandle,
    blocks: u32,
    words: &[u64],
) -> (aclmdlRI, aclmdlRITask) {
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    // SAFETY: `words` is readable for its size; live function.
    ok(unsafe { aclrtLaunchKernel(f, blocks, words.as_ptr().cast(), words.len() * 8, s) });
    end_and_task(s)
}

fn end_and_task(s: aclrtStream) -> (aclmdlRI, aclmdlRITask) {
    let mut m = null_mut();
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    let mut ms = null_mut();
    let mut n = 1u32;
    // SAFETY: one entry of room.
    ok(unsafe { aclmdlRIGetStreams(m, &mut ms, &mut n) });
    let mut t = null_mut();
    let mut k = 1u32;
    // SAFETY: one entry of room.
    ok(unsafe { aclmdlRIGetTasksByStream(ms, &mut t, &mut k) });
    (m, t)
}

fn params_of(t: aclmdlRITask) -> aclmdlRITaskParams {
    let mut p = aclmdlRITaskParams::default();
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclmdlRITaskGetParams(t, &mut p) });
    p
}

/// Kernel parameters launching `f` on `blocks` blocks with `words` (host
/// arguments).
fn kernel_params(f: aclrtFuncHandle, blocks: u32, words: &mut [u64]) -> aclmdlRITaskParams {
    let mut p = aclmdlRITaskParams {
        type_: ACL_MODEL_RI_TASK_KERNEL,
        ..Default::default()
    };
    p.__bindgen_anon_1.kernelTaskParams = acl_sys::aclmdlRIKernelTaskParams {
        funcHandle: f,
        cfg: null_mut(),
        args: words.as_mut_ptr().cast(),
        isHostArgs: 1,
        argsSize: words.len() * 8,
        numBlocks: blocks,
        rsv: [0; 10],
    };
    p
}

fn set(t: aclmdlRITask, p: &mut aclmdlRITaskParams) -> aclError {
    // SAFETY: the handle is validated; `p` is readable.
    unsafe { aclmdlRITaskSetParams(t, p) }
}

fn execute(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

/// Destroys the model, then frees `memory` and the rest.
fn release(m: aclmdlRI, memory: &[*mut u8], b: aclrtBinHandle, s: aclrtStream, ctx: aclrtContext) {
    // SAFETY: a live model of the test's.
    ok(unsafe { aclmdlRIDestroy(m) });
    for &p in memory {
        free(p);
    }
    // SAFETY: a live binary of the test's.
    ok(unsafe { aclrtBinaryUnLoad(b) });
    destroy_stream(s);
    // SAFETY: a live context of the test's.
    ok(unsafe { aclrtDestroyContext(ctx) });
}

#[test]
fn a_captured_kernel_reports_its_function_arguments_and_block_count() {
    let ctx = own_context();
    let s = create_stream();
    let (b, f) = kernel("vadd_f32");
    let (x, y, z) = (upload_f32(&[1.0, 2.0]), upload_f32(&[3.0, 4.0]), malloc(8));
    let words = [x as u64, y as u64, z as u64, 2];
    let (m, t) = capture_kernel(s, f, 3, &words);
    let p = params_of(t);
    assert_eq!(p.type_, ACL_MODEL_RI_TASK_KERNEL);
    assert!(p.taskGrp.is_null() && p.opInfoPtr.is_null() && p.opInfoSize == 0);
    // SAFETY: a kernel task's parameters are the kernel member.
    let k = unsafe { p.__bindgen_anon_1.kernelTaskParams };
    assert_eq!(k.funcHandle, f);
    assert!(k.cfg.is_null());
    assert_eq!((k.isHostArgs, k.argsSize, k.numBlocks), (0, 32, 3));
    // SAFETY: the task's argument copy, 32 bytes, alive with the model.
    let args = unsafe { std::slice::from_raw_parts(k.args.cast::<u64>(), 4) };
    assert_eq!(args, words);
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(f32s(z, 2), [4.0, 6.0]);
    release(m, &[x, y, z], b, s, ctx);
}

#[test]
fn a_kernel_task_set_to_another_kernel_and_arguments_runs_them_after_update() {
    let ctx = own_context();
    let s = create_stream();
    let (b, vadd) = kernel("vadd_f32");
    let mut record = null_mut();
    let name = CString::new("record_blocks").unwrap();
    // SAFETY: valid name and out-pointer.
    ok(unsafe { aclrtBinaryGetFunction(b, name.as_ptr(), &mut record) });
    let (x, y, z) = (upload_f32(&[1.0, 2.0]), upload_f32(&[3.0, 4.0]), malloc(8));
    let (m, t) = capture_kernel(s, vadd, 1, &[x as u64, y as u64, z as u64, 2]);
    // The same kernel on other arguments: z = x + x.
    let mut words = [x as u64, x as u64, z as u64, 2];
    ok(set(t, &mut kernel_params(vadd, 1, &mut words)));
    words[1] = y as u64; // copied at the call: this change is not seen
    std::hint::black_box(&words);
    assert_fails(
        execute(m, s),
        rc(ACL_ERROR_RT_MODEL_EXECUTE),
        "aclmdlRIExecuteAsync",
    );
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIUpdate(m) });
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(f32s(z, 2), [2.0, 4.0]);
    // Another kernel, with device arguments: record_blocks on 3 blocks.
    let out = malloc(12);
    let dev_args = malloc(8);
    let addr = (out as u64).to_le_bytes();
    // SAFETY: 8 device bytes from 8 host bytes.
    ok(unsafe {
        aclrtMemcpy(
            dev_args.cast(),
            8,
            addr.as_ptr().cast(),
            8,
            acl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    let mut p = kernel_params(record, 3, &mut []);
    // SAFETY: the kernel member of a KERNEL task's parameters.
    unsafe {
        let k = &mut p.__bindgen_anon_1.kernelTaskParams;
        k.args = dev_args.cast::<c_void>();
        k.argsSize = 8;
        k.isHostArgs = 0;
    }
    ok(set(t, &mut p));
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIUpdate(m) });
    ok(execute(m, s));
    ok(sync(s));
    let got: Vec<u32> = to_host(out, 12)
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, [3000, 3001, 3002]);
    // SAFETY: a kernel task's parameters are the kernel member.
    let k = unsafe { params_of(t).__bindgen_anon_1.kernelTaskParams };
    assert_eq!((k.funcHandle, k.argsSize, k.numBlocks), (record, 8, 3));
    release(m, &[x, y, z, out, dev_args], b, s, ctx);
}

#[test]
fn refused_kernel_parameters_fail_with_the_release_codes_and_fault_the_model() {
    let ctx = own_context();
    let s = create_stream();
    let (b, f) = kernel("record_blocks");
    let out = malloc(16);
    let good = || [out as u64];
    type Spoil = fn(&mut acl_sys::aclmdlRIKernelTaskParams, &mut aclmdlRITaskParams);
    let cases: [(&str, i32, Spoil); 5] = [
        ("null funcHandle", PARAM_INVALID, |k, _| {
            k.funcHandle = null_mut()
        }),
        (
            "stale funcHandle",
            rc(ACL_ERROR_RT_INVALID_HANDLE),
            |k, _| k.funcHandle = 8usize as aclrtFuncHandle,
        ),
        ("null args", PARAM_INVALID, |k, _| k.args = null_mut()),
        ("argsSize 0", PARAM_INVALID, |k, _| k.argsSize = 0),
        ("taskGrp set", PARAM_INVALID, |_, p| {
            p.taskGrp = 8usize as acl_sys::aclrtTaskGrp
        }),
    ];
    for (what, code, spoil) in cases {
        let (m, t) = capture_kernel(s, f, 1, &good());
        let mut words = good();
        let mut p = kernel_params(f, 1, &mut words);
        // SAFETY: the kernel member of a KERNEL task's parameters.
        let mut k = unsafe { p.__bindgen_anon_1.kernelTaskParams };
        spoil(&mut k, &mut p);
        p.__bindgen_anon_1.kernelTaskParams = k;
        let msg = assert_fails(set(t, &mut p), code, "aclmdlRITaskSetParams");
        assert!(!msg.is_empty(), "{what}");
        // SAFETY: the handle is validated.
        let updated = unsafe { aclmdlRIUpdate(m) };
        assert_eq!(
            updated,
            rc(ACL_ERROR_RT_MODEL_UPDATE_FAILED),
            "{what}: the model is FAULT"
        );
        discard_recent_error();
        // SAFETY: the handle is validated.
        ok(unsafe { aclmdlRIDestroy(m) });
    }
    // Kernel parameters for a task that is not a kernel.
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    // SAFETY: the address is validated.
    ok(unsafe { aclrtValueWrite(out.cast(), 1, 0, s) });
    let (m, t) = end_and_task(s);
    let mut words = good();
    assert_fails(
        set(t, &mut kernel_params(f, 1, &mut words)),
        PARAM_INVALID,
        "aclmdlRITaskSetParams",
    );
    release(m, &[out], b, s, ctx);
}

fn attr(id: u32, value: aclrtLaunchKernelAttrValue) -> aclrtLaunchKernelAttr {
    aclrtLaunchKernelAttr { id, value }
}

fn get_attr(t: aclmdlRITask, id: u32) -> Result<aclrtLaunchKernelAttrValue, aclError> {
    let mut v = aclrtLaunchKernelAttrValue { rsv: [7; 4] };
    // SAFETY: the handle is validated; valid out-pointer.
    match unsafe { aclmdlRIKernelTaskGetAttribute(t, id, &mut v) } {
        0 => Ok(v),
        e => Err(e),
    }
}

/// The schedule mode and the data-dump flag of a kernel task.
fn mode_and_dump(t: aclmdlRITask) -> (u8, u8) {
    let mode = get_attr(t, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE).unwrap();
    let dump = get_attr(t, ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP).unwrap();
    // SAFETY: each read is the member its id names.
    unsafe { (mode.schemMode, dump.isDataDump) }
}

/// The code of a read that must fail.
fn attr_fails(t: aclmdlRITask, id: u32) -> aclError {
    get_attr(t, id).err().expect("the attribute read fails")
}

#[test]
fn kernel_task_attributes_are_those_of_its_launch() {
    let ctx = own_context();
    let s = create_stream();
    let (b, f) = kernel("record_blocks");
    let out = malloc(16);
    let mut attrs = [
        attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
            aclrtLaunchKernelAttrValue { schemMode: 1 },
        ),
        attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE,
            aclrtLaunchKernelAttrValue { dynUBufSize: 256 },
        ),
        attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
            aclrtLaunchKernelAttrValue { isDataDump: 1 },
        ),
        attr(
            ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US,
            aclrtLaunchKernelAttrValue {
                timeoutUs: acl_sys::aclrtTimeoutUs {
                    timeoutLow: 2_500_000,
                    timeoutHigh: 0,
                },
            },
        ),
    ];
    let mut cfg = aclrtLaunchKernelCfg {
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len(),
    };
    let mut a = null_mut();
    // SAFETY: valid out-pointer; live function.
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    let mut word = out as u64;
    let mut param = null_mut();
    // SAFETY: `word` is 8 readable bytes; valid out-pointer.
    ok(unsafe { aclrtKernelArgsAppend(a, (&raw mut word).cast(), 8, &mut param) });
    // SAFETY: live handles.
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    // SAFETY: live handles; `cfg` valid with its attributes.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 2, s, &mut cfg, a, null_mut()) });
    let (m, t) = end_and_task(s);
    // SAFETY: each read is the member its id names.
    unsafe {
        assert_eq!(mode_and_dump(t), (1, 1));
        assert_eq!(
            get_attr(t, ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE)
                .unwrap()
                .dynUBufSize,
            256
        );
        let us = get_attr(t, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US)
            .unwrap()
            .timeoutUs;
        assert_eq!((us.timeoutLow, us.timeoutHigh), (2_500_000, 0));
        assert_eq!(
            get_attr(t, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT)
                .unwrap()
                .timeout,
            2
        );
    }
    let e = attr_fails(t, ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE);
    assert_fails(e, PARAM_INVALID, "aclmdlRIKernelTaskGetAttribute");
    let e = attr_fails(t, 99);
    assert_fails(e, PARAM_INVALID, "aclmdlRIKernelTaskGetAttribute");
    // SAFETY: null on purpose.
    let e = unsafe {
        aclmdlRIKernelTaskGetAttribute(t, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, null_mut())
    };
    assert_fails(e, ACL_ERROR_INVALID_PARAM, "aclmdlRIKernelTaskGetAttribute");
    let e = attr_fails(null_mut(), ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE);
    assert_fails(e, ACL_ERROR_INVALID_PARAM, "aclmdlRIKernelTaskGetAttribute");
    release(m, &[out], b, s, ctx);
}

#[test]
fn a_launch_without_attributes_reads_defaults_and_a_value_task_is_refused() {
    let ctx = own_context();
    let s = create_stream();
    let (b, f) = kernel("record_blocks");
    let out = malloc(16);
    let (m, t) = capture_kernel(s, f, 1, &[out as u64]);
    assert_eq!(mode_and_dump(t), (0, 0));
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    // SAFETY: the address is validated.
    ok(unsafe { aclrtValueWrite(out.cast(), 1, 0, s) });
    let (vm, vt) = end_and_task(s);
    let e = attr_fails(vt, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE);
    assert_fails(e, PARAM_INVALID, "aclmdlRIKernelTaskGetAttribute");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(vm) });
    release(m, &[out], b, s, ctx);
}

#[test]
fn an_unset_timeout_is_not_simulated() {
    cann_sim::sim_only!(
        "the default operator timeout comes from the device's kernel credit, which cann-sim does \
         not model (207000)"
    );
    let ctx = own_context();
    let s = create_stream();
    let (b, f) = kernel("record_blocks");
    let out = malloc(16);
    let (m, t) = capture_kernel(s, f, 1, &[out as u64]);
    let e = attr_fails(t, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT);
    assert_fails(
        e,
        rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        "aclmdlRIKernelTaskGetAttribute",
    );
    release(m, &[out], b, s, ctx);
}
