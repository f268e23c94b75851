//! `aclrtRandomNumAsync` at the C level: each distribution's values at a
//! fixed seed, the counter that makes successive tasks draw new numbers,
//! parameters given by device address, and each argument check with the
//! release's code.
//!
//! Each test runs on a thread of its own and uses device 0, one at a time:
//! one of them makes a task fail on purpose, and the device-wide
//! synchronize the others download with would report that failure as theirs
//! (as the release's `aclrtSynchronizeDevice` does for any stream's failed task).

#[path = "common/aclnn.rs"]
#[allow(dead_code, reason = "shared helpers this file does not use")]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, ACL_FLOAT, ACL_INT8, ACL_INT32,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
    aclError, aclrtRandomNumTaskInfo, aclrtRandomParaInfo,
};
use aclnn_common::{download, upload};
use cann_sim::acl::*;
use common::{assert_fails, ok, on_new_thread, use_device};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;

const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const INVALID_PARAM: aclError = ACL_ERROR_INVALID_PARAM as aclError;

/// Runs `f` on a thread of its own once no other test of this file runs.
fn serially(f: impl FnOnce() + Send + 'static) {
    static SERIAL: Mutex<()> = Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    on_new_thread(f);
}

/// A parameter given by value (`bytes` little-endian).
fn value(bytes: &[u8]) -> aclrtRandomParaInfo {
    let mut p = aclrtRandomParaInfo::default();
    p.valueOrAddr[..bytes.len()].copy_from_slice(bytes);
    p.size = bytes.len() as u8;
    p
}

/// A parameter read from device address `addr` when the task runs.
fn at(addr: *mut u8) -> aclrtRandomParaInfo {
    let mut p = value(&(addr as u64).to_le_bytes());
    p.isAddr = 1;
    p
}

/// A task of `func` over `n` elements of `ty` into `result`, with the
/// 16-byte `counter`, seed 7 and both function parameters `a`, `b`.
fn task(
    func: u32,
    ty: i32,
    n: u64,
    result: *mut u8,
    counter: *mut u8,
    a: aclrtRandomParaInfo,
    b: aclrtRandomParaInfo,
) -> aclrtRandomNumTaskInfo {
    // SAFETY: a C struct of integers, pointers and bytes: all zero is valid.
    let mut t: aclrtRandomNumTaskInfo = unsafe { std::mem::zeroed() };
    t.dataType = ty;
    t.randomNumFuncParaInfo.funcType = func;
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = a;
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = b;
    t.randomResultAddr = result.cast();
    t.randomCounterAddr = counter.cast();
    t.randomSeed = value(&7u64.to_le_bytes());
    t.randomNum = value(&n.to_le_bytes());
    t
}

fn launch(t: &aclrtRandomNumTaskInfo) -> aclError {
    // SAFETY: `t` is a valid task description; its addresses are checked.
    unsafe { aclrtRandomNumAsync(t, null_mut(), null_mut()) }
}

fn mean_std(v: &[f32]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = v
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var.sqrt())
}

#[test]
fn the_runtime_samples_normal_task_draws_mean_3_stddev_2_and_advances_the_counter() {
    serially(|| {
        use_device(0);
        let n = 8192;
        let out = upload(&vec![0.0f32; n]);
        let counter = upload(&[0u64; 2]);
        let (mean, std) = (value(&3.0f32.to_le_bytes()), value(&2.0f32.to_le_bytes()));
        let t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
            ACL_FLOAT,
            n as u64,
            out,
            counter,
            mean,
            std,
        );
        ok(launch(&t));
        let first = download::<f32>(out, n);
        let (m, s) = mean_std(&first);
        assert!(
            (m - 3.0).abs() < 0.1 && (s - 2.0).abs() < 0.1,
            "mean {m}, std {s}"
        );
        assert_eq!(download::<u64>(counter, 2), [4, 0], "the offset grew by 4");
        // The same counter draws new numbers; reset, it draws the same ones.
        ok(launch(&t));
        assert_ne!(download::<f32>(out, n), first);
        // SAFETY: the counter's 16 bytes of device memory.
        ok(unsafe { aclrtMemset(counter.cast(), 16, 0, 16) });
        ok(launch(&t));
        assert_eq!(
            download::<f32>(out, n),
            first,
            "a seeded task is reproducible"
        );
        common::free(out);
        common::free(counter);
    });
}

#[test]
fn uniform_and_truncated_normal_tasks_stay_in_their_ranges() {
    serially(|| {
        use_device(0);
        let n = 4096;
        let out = upload(&vec![0i32; n]);
        let counter = upload(&[0u64; 2]);
        let (lo, hi) = (value(&(-5i32).to_le_bytes()), value(&5i32.to_le_bytes()));
        let t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
            ACL_INT32,
            n as u64,
            out,
            counter,
            lo,
            hi,
        );
        ok(launch(&t));
        let ints = download::<i32>(out, n);
        assert!(ints.iter().all(|v| (-5..5).contains(v)), "{ints:?}");
        for v in -5..5 {
            assert!(ints.contains(&v), "{v} never drawn");
        }
        let (mean, std) = (value(&1.0f32.to_le_bytes()), value(&0.5f32.to_le_bytes()));
        let t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
            ACL_FLOAT,
            n as u64,
            out,
            counter,
            mean,
            std,
        );
        ok(launch(&t));
        let floats = download::<f32>(out, n);
        assert!(
            floats.iter().all(|v| (0.0..=2.0).contains(v)),
            "beyond 2 stddev"
        );
        let (m, _) = mean_std(&floats);
        assert!((m - 1.0).abs() < 0.05, "mean {m}");
        common::free(out);
        common::free(counter);
    });
}

#[test]
fn a_dropout_bitmask_keeps_one_minus_the_ratio_and_writes_only_its_bytes() {
    serially(|| {
        use_device(0);
        let bits = 8192u64;
        let out = upload(&vec![0xAAu8; 1025]);
        let counter = upload(&[0u64; 2]);
        let ratio = value(&0.25f32.to_le_bytes());
        let t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
            ACL_FLOAT,
            bits,
            out,
            counter,
            ratio,
            value(&[0]),
        );
        ok(launch(&t));
        let mask = download::<u8>(out, 1025);
        let kept: u32 = mask[..1024].iter().map(|b| b.count_ones()).sum();
        let rate = f64::from(kept) / bits as f64;
        assert!((rate - 0.75).abs() < 0.02, "kept {rate}");
        assert_eq!(mask[1024], 0xAA, "the byte after the mask is untouched");
        common::free(out);
        common::free(counter);
    });
}

#[test]
fn parameters_given_by_address_are_read_when_the_task_runs() {
    serially(|| {
        use_device(0);
        let out = upload(&[0.0f32; 64]);
        let counter = upload(&[0u64; 2]);
        let lo = upload(&[10.0f32]);
        let hi = upload(&[11.0f32]);
        let n = upload(&[64u64]);
        let mut t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
            ACL_FLOAT,
            0,
            out,
            counter,
            at(lo),
            at(hi),
        );
        t.randomNum = at(n);
        ok(launch(&t));
        let v = download::<f32>(out, 64);
        assert!(v.iter().all(|x| (10.0..11.0).contains(x)), "{v:?}");
        // A count given by address that the result cannot hold fails the task.
        let s = common::create_stream();
        // SAFETY: 8 bytes of device memory and of a host word.
        ok(unsafe {
            aclrtMemcpy(
                n.cast(),
                8,
                (&65u64 as *const u64).cast(),
                8,
                acl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        });
        // SAFETY: as `launch`, on a stream of its own.
        ok(unsafe { aclrtRandomNumAsync(&t, s, null_mut()) });
        assert_ne!(
            common::sync(s),
            0,
            "65 floats do not fit the 64 of the result"
        );
        common::destroy_stream(s);
        for p in [out, counter, lo, hi, n] {
            common::free(p);
        }
    });
}

#[test]
fn bad_task_descriptions_fail_with_the_releases_codes() {
    serially(|| {
        use_device(0);
        let out = upload(&[0.0f32; 4]);
        let counter = upload(&[0u64; 2]);
        let f = |v: f32| value(&v.to_le_bytes());
        let uniform = |ty, n| {
            task(
                ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                ty,
                n,
                out,
                counter,
                f(0.0),
                f(1.0),
            )
        };
        // SAFETY: refused before use.
        let rc = unsafe { aclrtRandomNumAsync(std::ptr::null(), null_mut(), null_mut()) };
        assert_fails(rc, INVALID_PARAM, "aclrtRandomNumAsync");
        assert_fails(
            launch(&uniform(ACL_INT8, 4)),
            INVALID_PARAM,
            "aclrtRandomNumAsync",
        );
        let t = uniform(ACL_FLOAT, 4);
        let mut junk = 0u8;
        // SAFETY: refused before use.
        let rc = unsafe { aclrtRandomNumAsync(&t, null_mut(), (&raw mut junk).cast::<c_void>()) };
        assert_fails(rc, PARAM_INVALID, "aclrtRandomNumAsync");
        let mut t = uniform(ACL_FLOAT, 4);
        t.randomNumFuncParaInfo.funcType = 4;
        assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        let t = task(
            ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
            ACL_INT32,
            4,
            out,
            counter,
            f(0.0),
            f(1.0),
        );
        let msg = assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        assert!(msg.contains("int32"), "{msg}");
        let mut t = uniform(ACL_FLOAT, 4);
        t.randomCounterAddr = null_mut();
        assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        let mut t = uniform(ACL_FLOAT, 4);
        t.randomSeed.isAddr = 2;
        assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        let mut t = uniform(ACL_FLOAT, 4);
        t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.size = 5;
        let msg = assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        assert!(msg.contains("max.size is 5; expected [1, 4]"), "{msg}");
        // More numbers than the result holds, and a result in host memory.
        assert_fails(
            launch(&uniform(ACL_FLOAT, 5)),
            PARAM_INVALID,
            "aclrtRandomNumAsync",
        );
        let mut host = [0.0f32; 4];
        let mut t = uniform(ACL_FLOAT, 4);
        t.randomResultAddr = host.as_mut_ptr().cast();
        assert_fails(launch(&t), PARAM_INVALID, "aclrtRandomNumAsync");
        assert_eq!(download::<u64>(counter, 2), [0, 0], "no refused task ran");
        common::free(out);
        common::free(counter);
    });
}
