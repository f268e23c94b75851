//! Kernel binaries and launches on the simulator: loading (file, memory,
//! malformed input), looking kernels up, building argument lists (values,
//! placeholders, updates, ordering rules), and launching them on a stream's
//! worker once per block, with the runtime's codes for misuse.
//!
//! Tests only set device 0 and 1 and never reset them.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID,
    ACL_RT_BINARY_LOAD_OPT_MAGIC, aclrtArgsHandle, aclrtBinHandle, aclrtBinaryLoadOption,
    aclrtBinaryLoadOptions, aclrtFuncHandle, aclrtParamHandle,
};
use cann_sim::acl::*;
use cann_sim::check::{Kind, Mode};
use common::*;
use std::ffi::{CString, c_void};
use std::ptr::{null, null_mut};

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);

fn samples() -> CString {
    let p = cann_sim::sample_kernels().expect("the sample kernels were built");
    CString::new(p.to_str().unwrap()).unwrap()
}

fn load() -> aclrtBinHandle {
    let mut h = null_mut();
    // SAFETY: valid path and out-pointer.
    ok(unsafe { aclrtBinaryLoadFromFile(samples().as_ptr(), null_mut(), &mut h) });
    h
}

fn function(b: aclrtBinHandle, name: &str) -> aclrtFuncHandle {
    let mut f = null_mut();
    let c = CString::new(name).unwrap();
    // SAFETY: valid name and out-pointer.
    ok(unsafe { aclrtBinaryGetFunction(b, c.as_ptr(), &mut f) });
    f
}

fn args_init(f: aclrtFuncHandle) -> aclrtArgsHandle {
    let mut a = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    a
}

fn append<T: Copy>(a: aclrtArgsHandle, v: T) -> aclrtParamHandle {
    let mut v = v;
    let mut p = null_mut();
    // SAFETY: `v` is valid for its size; valid out-pointer.
    ok(unsafe { aclrtKernelArgsAppend(a, (&raw mut v).cast(), std::mem::size_of::<T>(), &mut p) });
    p
}

#[test]
fn vadd_runs_on_the_stream_once_per_block_and_adds() {
    use_device(0);
    let b = load();
    let f = function(b, "vadd_f32");
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let (dx, dy, dz) = (upload_f32(&x), upload_f32(&y), malloc(n * 4));
    let s = create_stream();
    let a = args_init(f);
    append(a, dx as u64);
    append(a, dy as u64);
    append(a, dz as u64);
    append(a, n as u64);
    // SAFETY: live handles.
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    // SAFETY: live handles; no cfg, null reserve.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 7, s, null_mut(), a, null_mut()) });
    ok(sync(s));
    let z = f32s(dz, n);
    assert!(z.iter().enumerate().all(|(i, &v)| v == 1.5 * i as f32));
    destroy_stream(s);
    for p in [dx, dy, dz] {
        free(p);
    }
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn every_block_runs_once_with_its_index_and_the_block_count() {
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let out = malloc(16 * 4);
    let a = args_init(f);
    append(a, out as u64);
    // SAFETY: live handles; default stream.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 16, null_mut(), null_mut(), a, null_mut()) });
    ok(sync(null_mut()));
    let got: Vec<u32> = to_host(out, 64)
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (0..16).map(|i| 16_000 + i).collect::<Vec<u32>>());
    free(out);
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn placeholder_data_reaches_the_kernel_as_a_pointer() {
    use_device(0);
    let b = load();
    let f = function(b, "scale_add");
    let x = upload_f32(&[1.0, 2.0, 3.0, 4.0]);
    let y = upload_f32(&[10.0; 4]);
    let a = args_init(f);
    append(a, x as u64);
    append(a, y as u64);
    let mut ph = null_mut();
    // SAFETY: live list; valid out-pointer.
    ok(unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) });
    let mut buf: *mut c_void = null_mut();
    // SAFETY: live list and placeholder; valid out-pointer.
    ok(unsafe { aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 16, &mut buf) });
    let mut tiling = [0u8; 16];
    tiling[..4].copy_from_slice(&3.0f32.to_le_bytes());
    tiling[8..].copy_from_slice(&4u64.to_le_bytes());
    // SAFETY: the runtime gave 16 writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(tiling.as_ptr(), buf.cast::<u8>(), 16) };
    // SAFETY: live handles.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 2, null_mut(), null_mut(), a, null_mut()) });
    ok(sync(null_mut()));
    assert_eq!(f32s(y, 4), [13.0, 16.0, 19.0, 22.0]);
    free(x);
    free(y);
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn twenty_integer_arguments_and_float_bits_are_passed_in_order() {
    use_device(0);
    let b = load();
    let f = function(b, "sum20");
    let out = malloc(16);
    let a = args_init(f);
    append(a, out as u64);
    append(a, 1.25f32.to_bits());
    for i in 1..=20u64 {
        append(a, i);
    }
    // SAFETY: live handles.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 1, null_mut(), null_mut(), a, null_mut()) });
    ok(sync(null_mut()));
    let got = to_host(out, 16);
    assert_eq!(u64::from_le_bytes(got[..8].try_into().unwrap()), 210);
    assert_eq!(
        f32::from_bits(u64::from_le_bytes(got[8..].try_into().unwrap()) as u32),
        2.5
    );
    free(out);
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn launch_kernel_with_a_raw_argument_buffer_runs_the_kernel() {
    use_device(0);
    let b = load();
    let f = function(b, "vadd_f32");
    let (dx, dy, dz) = (upload_f32(&[1.0, 2.0]), upload_f32(&[3.0, 4.0]), malloc(8));
    let words = [dx as u64, dy as u64, dz as u64, 2];
    // SAFETY: `words` is 32 readable bytes; live function.
    ok(unsafe { aclrtLaunchKernel(f, 1, words.as_ptr().cast(), 32, null_mut()) });
    ok(sync(null_mut()));
    assert_eq!(f32s(dz, 2), [4.0, 6.0]);
    // SAFETY: null argsData.
    let r = unsafe { aclrtLaunchKernel(f, 1, null(), 0, null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel");
    let big = [0u64; 25];
    // SAFETY: 200 readable bytes.
    let r = unsafe { aclrtLaunchKernel(f, 1, big.as_ptr().cast(), 200, null_mut()) };
    assert_contains(&assert_fails(r, PARAM_INVALID, "aclrtLaunchKernel"), "24");
    for p in [dx, dy, dz] {
        free(p);
    }
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn load_from_data_loads_the_same_kernels() {
    use_device(0);
    let bytes = std::fs::read(cann_sim::sample_kernels().unwrap()).unwrap();
    let mut h = null_mut();
    // SAFETY: `bytes` is readable for its length; valid out-pointer.
    ok(unsafe { aclrtBinaryLoadFromData(bytes.as_ptr().cast(), bytes.len(), null(), &mut h) });
    function(h, "record_blocks");
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(h) });
}

#[test]
fn malformed_binaries_and_bad_arguments_are_rejected_with_the_runtime_codes() {
    use_device(0);
    let mut h = null_mut();
    let missing = CString::new("/nonexistent/cann-sim/kernel.so").unwrap();
    // SAFETY: valid path and out-pointer.
    let r = unsafe { aclrtBinaryLoadFromFile(missing.as_ptr(), null_mut(), &mut h) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtBinaryLoadFromFile"),
        "cannot read",
    );
    // A file that is not ELF.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = dir.join("not_elf.so");
    std::fs::write(&text, b"hello").unwrap();
    let c = CString::new(text.to_str().unwrap()).unwrap();
    // SAFETY: valid path and out-pointer.
    let r = unsafe { aclrtBinaryLoadFromFile(c.as_ptr(), null_mut(), &mut h) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtBinaryLoadFromFile"),
        "no ELF header",
    );
    // ELF magic but truncated: dlopen refuses, no crash.
    let trunc = b"\x7fELF\x02\x01\x01\0garbage";
    // SAFETY: readable bytes; valid out-pointer.
    let r = unsafe { aclrtBinaryLoadFromData(trunc.as_ptr().cast(), trunc.len(), null(), &mut h) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtBinaryLoadFromData"),
        "not a loadable kernel binary",
    );
    // SAFETY: zero length.
    let r = unsafe { aclrtBinaryLoadFromData(trunc.as_ptr().cast(), 0, null(), &mut h) };
    assert_fails(r, PARAM_INVALID, "aclrtBinaryLoadFromData");
    // SAFETY: null arguments.
    unsafe {
        assert_fails(
            aclrtBinaryLoadFromFile(null(), null_mut(), &mut h),
            ACL_ERROR_INVALID_PARAM,
            "aclrtBinaryLoadFromFile",
        );
        assert_fails(
            aclrtBinaryLoadFromData(null(), 4, null(), &mut h),
            ACL_ERROR_INVALID_PARAM,
            "aclrtBinaryLoadFromData",
        );
    }
    // A bad magic option.
    let mut opt = aclrtBinaryLoadOption {
        type_: ACL_RT_BINARY_LOAD_OPT_MAGIC,
        ..Default::default()
    };
    opt.value.magic = 42;
    let mut opts = aclrtBinaryLoadOptions {
        options: &mut opt,
        numOpt: 1,
    };
    // SAFETY: valid options and out-pointer.
    let r = unsafe { aclrtBinaryLoadFromFile(samples().as_ptr(), &mut opts, &mut h) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtBinaryLoadFromFile"),
        "magic",
    );
}

#[test]
fn loading_needs_a_current_context() {
    on_new_thread(|| {
        let mut h = null_mut();
        // SAFETY: valid path and out-pointer.
        let r = unsafe { aclrtBinaryLoadFromFile(samples().as_ptr(), null_mut(), &mut h) };
        assert_fails(r, rc(ACL_ERROR_RT_CONTEXT_NULL), "aclrtBinaryLoadFromFile");
    });
}

#[test]
fn a_missing_kernel_name_is_param_invalid_and_names_the_kernel() {
    use_device(0);
    let b = load();
    let mut f = null_mut();
    let name = CString::new("no_such_kernel").unwrap();
    // SAFETY: valid name and out-pointer.
    let r = unsafe { aclrtBinaryGetFunction(b, name.as_ptr(), &mut f) };
    let msg = assert_fails(r, PARAM_INVALID, "aclrtBinaryGetFunction");
    assert_contains(&msg, "no_such_kernel");
    // SAFETY: null name.
    let r = unsafe { aclrtBinaryGetFunction(b, null(), &mut f) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtBinaryGetFunction");
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn unloading_invalidates_the_binary_and_its_functions() {
    use_device(0);
    let b = load();
    let f = function(b, "vadd_f32");
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
    // SAFETY: a destroyed handle is looked up, not dereferenced.
    let r = unsafe { aclrtBinaryUnLoad(b) };
    assert_contains(
        &assert_fails(r, INVALID_HANDLE, "aclrtBinaryUnLoad"),
        "destroyed",
    );
    let mut a = null_mut();
    // SAFETY: valid out-pointer; the function is looked up.
    let r = unsafe { aclrtKernelArgsInit(f, &mut a) };
    assert_fails(r, INVALID_HANDLE, "aclrtKernelArgsInit");
    let name = CString::new("vadd_f32").unwrap();
    let mut f2 = null_mut();
    // SAFETY: valid arguments; the binary is looked up.
    let r = unsafe { aclrtBinaryGetFunction(b, name.as_ptr(), &mut f2) };
    assert_fails(r, INVALID_HANDLE, "aclrtBinaryGetFunction");
}

#[test]
fn argument_list_rules_follow_the_runtime() {
    use_device(0);
    let b = load();
    let f = function(b, "scale_add");
    let a = args_init(f);
    let p0 = append(a, 1u64);
    let mut ph = null_mut();
    // SAFETY: live list.
    ok(unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) });
    let mut v = 7u64;
    // Update: same size only, not a placeholder.
    // SAFETY: `v` is 8 readable bytes.
    unsafe {
        ok(aclrtKernelArgsParaUpdate(a, p0, (&raw mut v).cast(), 8));
        assert_fails(
            aclrtKernelArgsParaUpdate(a, p0, (&raw mut v).cast(), 4),
            PARAM_INVALID,
            "aclrtKernelArgsParaUpdate",
        );
        assert_fails(
            aclrtKernelArgsParaUpdate(a, ph, (&raw mut v).cast(), 8),
            PARAM_INVALID,
            "aclrtKernelArgsParaUpdate",
        );
        assert_fails(
            aclrtKernelArgsParaUpdate(a, p0, (&raw mut v).cast(), 0),
            ACL_ERROR_INVALID_PARAM,
            "aclrtKernelArgsParaUpdate",
        );
    }
    let mut buf = null_mut();
    // A plain parameter has no buffer; a placeholder does.
    // SAFETY: valid out-pointers.
    unsafe {
        assert_fails(
            aclrtKernelArgsGetPlaceHolderBuffer(a, p0, 8, &mut buf),
            PARAM_INVALID,
            "aclrtKernelArgsGetPlaceHolderBuffer",
        );
        ok(aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 16, &mut buf));
    }
    // No parameter after a placeholder buffer was taken.
    let mut p = null_mut();
    // SAFETY: `v` readable; valid out-pointer.
    let r = unsafe { aclrtKernelArgsAppend(a, (&raw mut v).cast(), 8, &mut p) };
    assert_fails(
        r,
        rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        "aclrtKernelArgsAppend",
    );
    // SAFETY: live list.
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut p) };
    assert_fails(
        r,
        rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        "aclrtKernelArgsAppendPlaceHolder",
    );
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn a_list_holds_at_most_128_parameters() {
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let a = args_init(f);
    for _ in 0..128 {
        append(a, 0u8);
    }
    let mut v = 0u8;
    let mut p = null_mut();
    // SAFETY: readable byte; valid out-pointer.
    let r = unsafe { aclrtKernelArgsAppend(a, (&raw mut v).cast(), 1, &mut p) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtKernelArgsAppend"),
        "128",
    );
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn a_new_list_on_the_same_thread_invalidates_the_previous_one() {
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let first = args_init(f);
    let _second = args_init(f);
    let mut v = 0u64;
    let mut p = null_mut();
    // SAFETY: readable bytes; the list is looked up.
    let r = unsafe { aclrtKernelArgsAppend(first, (&raw mut v).cast(), 8, &mut p) };
    assert_contains(
        &assert_fails(r, INVALID_HANDLE, "aclrtKernelArgsAppend"),
        "one argument list per thread",
    );
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

#[test]
fn launch_checks_blocks_reserve_list_and_device() {
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let g = function(b, "vadd_f32");
    let out = malloc(64);
    let a = args_init(f);
    append(a, out as u64);
    // SAFETY: live handles; bad values are checked.
    unsafe {
        assert_fails(
            aclrtLaunchKernelWithConfig(f, 0, null_mut(), null_mut(), a, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtLaunchKernelWithConfig",
        );
        let mut x = 0u8;
        assert_fails(
            aclrtLaunchKernelWithConfig(f, 1, null_mut(), null_mut(), a, (&raw mut x).cast()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtLaunchKernelWithConfig",
        );
        assert_fails(
            aclrtLaunchKernelWithConfig(f, 1, null_mut(), null_mut(), null_mut(), null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtLaunchKernelWithConfig",
        );
        let msg = assert_fails(
            aclrtLaunchKernelWithConfig(g, 1, null_mut(), null_mut(), a, null_mut()),
            PARAM_INVALID,
            "aclrtLaunchKernelWithConfig",
        );
        assert_contains(&msg, "made for kernel record_blocks");
    }
    // A placeholder without data cannot be launched.
    let a = args_init(f);
    let mut ph = null_mut();
    // SAFETY: live list.
    ok(unsafe { aclrtKernelArgsAppendPlaceHolder(a, &mut ph) });
    // SAFETY: live handles.
    let r = unsafe { aclrtLaunchKernelWithConfig(f, 1, null_mut(), null_mut(), a, null_mut()) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtLaunchKernelWithConfig"),
        "has no data",
    );
    // The binary was loaded on device 0: device 1's stream is refused.
    let a = args_init(f);
    append(a, out as u64);
    use_device(1);
    // SAFETY: live handles.
    let r = unsafe { aclrtLaunchKernelWithConfig(f, 1, null_mut(), null_mut(), a, null_mut()) };
    assert_contains(
        &assert_fails(r, PARAM_INVALID, "aclrtLaunchKernelWithConfig"),
        "loaded on device 0",
    );
    use_device(0);
    free(out);
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
}

/// Device memory a queued kernel's argument points to, freed before the
/// kernel runs: with the check off (in a child process), the released
/// runtime's fault of the kernel reported at the next synchronisation; with
/// it on, the free is refused and the kernel runs.
#[test]
fn memory_freed_before_the_kernel_runs_is_a_fault_reported_at_sync() {
    let mode = check_mode_with_off_in_a_child(
        "memory_freed_before_the_kernel_runs_is_a_fault_reported_at_sync",
    );
    let reports = count_reports();
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let g = function(b, "vadd_f32");
    let out = malloc(64);
    let s = create_stream();
    // Hold the stream so that the kernel runs after the free.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    ok(host_fn(s, move || {
        let _ = rx.recv();
    }));
    let a = args_init(f);
    append(a, out as u64);
    // SAFETY: live handles.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 4, s, null_mut(), a, null_mut()) });
    // SAFETY: looked up by the simulator.
    let freed = unsafe { aclrtFree(out.cast()) };
    if mode == Mode::Off {
        ok(freed);
        tx.send(()).unwrap();
        let msg = assert_fails(
            sync(s),
            rc(ACL_ERROR_RT_AICORE_EXCEPTION),
            "aclrtSynchronizeStream",
        );
        assert_contains(&msg, "freed before the task ran");
    } else {
        let msg = assert_free_refused(
            freed,
            "aclrtFree",
            out,
            "aclrtLaunchKernelWithConfig task #2",
            s,
            &format!(
                "uses the allocation containing {out:p} (device memory on device 0, kernel \
                 argument: which bytes it touches is unknown)"
            ),
        );
        reports.assert_made(1, Kind::FreeWhilePending, &msg);
        tx.send(()).unwrap();
        ok(sync(s));
        let recorded: Vec<u32> = to_host(out, 16)
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(recorded, [4000, 4001, 4002, 4003], "the kernel ran");
        free(out);
    }
    // The stream keeps working.
    let (dx, dz) = (upload_f32(&[1.0]), malloc(4));
    let a = args_init(g);
    for w in [dx as u64, dx as u64, dz as u64, 1] {
        append(a, w);
    }
    // SAFETY: live handles.
    ok(unsafe { aclrtLaunchKernelWithConfig(g, 1, s, null_mut(), a, null_mut()) });
    ok(sync(s));
    assert_eq!(f32s(dz, 1), [2.0]);
    destroy_stream(s);
    free(dx);
    free(dz);
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
    assert_eq!(reports.made(), u64::from(mode != Mode::Off));
}

#[test]
fn an_unloaded_binary_stays_loaded_for_launches_already_queued() {
    use_device(0);
    let b = load();
    let f = function(b, "record_blocks");
    let out = malloc(16);
    let s = create_stream();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    ok(host_fn(s, move || {
        let _ = rx.recv();
    }));
    let a = args_init(f);
    append(a, out as u64);
    // SAFETY: live handles.
    ok(unsafe { aclrtLaunchKernelWithConfig(f, 2, s, null_mut(), a, null_mut()) });
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(b) });
    tx.send(()).unwrap();
    ok(sync(s));
    assert_eq!(to_host(out, 4), 2000u32.to_le_bytes());
    destroy_stream(s);
    free(out);
}
