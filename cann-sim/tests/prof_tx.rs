//! msproftx and step markers at the C level: the release's -1 failures and
//! their order, stamps outside a run, and the pairing rules. The profiling
//! session is process-wide: the tests take one lock.

mod common;

use acl_sys::{ACL_ERROR_INVALID_PARAM, ACL_PROF_MSPROFTX, ACL_STEP_END, ACL_STEP_START, aclError};
use cann_sim::acl::*;
use common::{assert_fails, create_stream, destroy_stream, ok, on_new_thread, use_device};
use std::ffi::CString;
use std::ptr::{null, null_mut};

const FAILED: aclError = -1;
const INVALID_PARAM: aclError = ACL_ERROR_INVALID_PARAM as aclError;

/// Runs `f` inside a profiling run of device 0 with `data`, in a temporary
/// directory; returns the run's `msprof_tx` summary, if it wrote one.
fn in_run(data: u32, f: impl FnOnce() + Send + 'static) -> Option<String> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let path = CString::new(dir.path().to_str().unwrap()).unwrap();
    on_new_thread(move || {
        use_device(0);
        // SAFETY: a NUL-terminated path of the length given.
        ok(unsafe { aclprofInit(path.as_ptr(), path.as_bytes().len()) });
        let mut ids = [0u32];
        // SAFETY: one id; null events.
        let c = unsafe {
            aclprofCreateConfig(
                ids.as_mut_ptr(),
                1,
                acl_sys::ACL_AICORE_NONE,
                null(),
                u64::from(data),
            )
        };
        // SAFETY: the config is looked up.
        ok(unsafe { aclprofStart(c) });
        f();
        // SAFETY: as above.
        ok(unsafe { aclprofStop(c) });
        // SAFETY: as above.
        ok(unsafe { aclprofDestroyConfig(c) });
        ok(aclprofFinalize());
    });
    tx_summary(dir.path())
}

/// The `msprof_tx_*.csv` under `dir` (searched recursively).
fn tx_summary(dir: &std::path::Path) -> Option<String> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = tx_summary(&path) {
                return Some(found);
            }
        } else if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("msprof_tx_"))
        {
            return std::fs::read_to_string(path).ok();
        }
    }
    None
}

#[test]
fn outside_a_msproftx_run_stamps_are_null_and_marks_fail_with_minus_one() {
    in_run(acl_sys::ACL_PROF_TASK_TIME, || {
        assert!(aclprofCreateStamp().is_null());
        assert!(common::recent_error().starts_with("aclprofCreateStamp"));
        assert_fails(aclprofPop(), FAILED, "aclprofPop");
        assert_fails(aclprofRangeStop(1), FAILED, "aclprofRangeStop");
    });
}

#[test]
fn stamps_mark_push_pop_and_range_with_the_releases_rules() {
    in_run(ACL_PROF_MSPROFTX, || {
        let stamp = aclprofCreateStamp();
        assert!(!stamp.is_null());
        let msg = "step";
        // SAFETY: `msg` holds the length given.
        ok(unsafe { aclprofSetStampTraceMessage(stamp, msg.as_ptr().cast(), msg.len() as u32) });
        let long = "x".repeat(128);
        // SAFETY: as above.
        let rc = unsafe { aclprofSetStampTraceMessage(stamp, long.as_ptr().cast(), 128) };
        assert_fails(rc, FAILED, "aclprofSetStampTraceMessage");
        ok(aclprofMark(stamp));
        ok(aclprofPush(stamp));
        ok(aclprofPop());
        assert_fails(aclprofPop(), FAILED, "aclprofPop");
        assert_fails(aclprofPush(null_mut()), INVALID_PARAM, "aclprofPush");
        let mut id = 0u32;
        // SAFETY: a live stamp and an out-pointer.
        ok(unsafe { aclprofRangeStart(stamp, &mut id) });
        // SAFETY: refused before use.
        assert_fails(
            unsafe { aclprofRangeStart(stamp, null_mut()) },
            INVALID_PARAM,
            "aclprofRangeStart",
        );
        ok(aclprofRangeStop(id));
        assert_fails(aclprofRangeStop(id), FAILED, "aclprofRangeStop");
        // MarkEx: the length must be the string's, within 1..=127, with a stream.
        let s = create_stream();
        let text = CString::new("point").unwrap();
        // SAFETY: a NUL-terminated string and a live stream.
        ok(unsafe { aclprofMarkEx(text.as_ptr(), 5, s) });
        // SAFETY: as above.
        assert_fails(
            unsafe { aclprofMarkEx(text.as_ptr(), 4, s) },
            FAILED,
            "aclprofMarkEx",
        );
        // SAFETY: refused before use.
        assert_fails(
            unsafe { aclprofMarkEx(text.as_ptr(), 5, null_mut()) },
            FAILED,
            "aclprofMarkEx",
        );
        ok(common::sync(s));
        destroy_stream(s);
        aclprofDestroyStamp(stamp);
        // A destroyed stamp is refused, not dereferenced.
        assert_fails(aclprofMark(stamp), FAILED, "aclprofMark");
    });
}

#[test]
fn a_tensor_info_range_appears_in_the_tx_summary_under_its_op_name() {
    let tx = in_run(ACL_PROF_MSPROFTX, || {
        let name = CString::new("MatMul_7").unwrap();
        // SAFETY: NUL-terminated strings.
        let (id, again, empty) = unsafe {
            (
                aclprofStr2Id(name.as_ptr()),
                aclprofStr2Id(name.as_ptr()),
                aclprofStr2Id(c"".as_ptr()),
            )
        };
        assert_eq!(id, again, "one id per string");
        assert_eq!(empty, u64::MAX, "an empty string has no id");
        let s = create_stream();
        let mut info = acl_sys::aclprofTensorInfo {
            opNameId: id,
            opTypeId: 0,
            resv: 0,
            tensorNum: 0,
            kernelType: 0,
            blockNums: 1,
            stream: s,
            tensors: null_mut(),
        };
        let mut attr = acl_sys::aclprofEventAttributes {
            version: 1,
            size: std::mem::size_of::<acl_sys::aclprofEventAttributes>() as u16,
            messageType: acl_sys::ACL_PROF_MESSAGE_TYPE_TENSOR_INFO,
            message: acl_sys::aclprofEventAttributes_Message {
                tensorInfo: &mut info,
            },
        };
        // SAFETY: `attr` and `info` outlive the pops.
        unsafe {
            ok(aclprofRangePushEx(&mut attr));
            ok(aclprofRangePop());
        }
        destroy_stream(s);
    })
    .expect("a msproftx run writes its summary");
    assert!(tx.contains("push_pop_ex,\"MatMul_7\""), "{tx}");
}

#[test]
fn range_push_ex_and_pop_refuse_what_the_release_refuses() {
    in_run(ACL_PROF_MSPROFTX, || {
        // SAFETY: null on purpose; then a readable struct.
        unsafe {
            assert_fails(
                aclprofRangePushEx(null_mut()),
                INVALID_PARAM,
                "aclprofRangePushEx",
            );
            let mut attr = acl_sys::aclprofEventAttributes {
                version: 1,
                size: 0,
                messageType: 1,
                message: acl_sys::aclprofEventAttributes_Message {
                    tensorInfo: null_mut(),
                },
            };
            assert_fails(aclprofRangePushEx(&mut attr), FAILED, "aclprofRangePushEx");
            // A tensor-info push without tensor info: its pop fails with -1.
            attr.messageType = acl_sys::ACL_PROF_MESSAGE_TYPE_TENSOR_INFO;
            ok(aclprofRangePushEx(&mut attr));
            assert_fails(aclprofRangePop(), FAILED, "aclprofRangePop");
        }
    });
}

#[test]
fn a_step_info_takes_each_timestamp_once() {
    on_new_thread(|| {
        use_device(0);
        let s = create_stream();
        let step = aclprofCreateStepInfo();
        assert!(!step.is_null());
        ok(aclprofGetStepTimestamp(step, ACL_STEP_START, s));
        assert_fails(
            aclprofGetStepTimestamp(step, ACL_STEP_START, s),
            INVALID_PARAM,
            "aclprofGetStepTimestamp",
        );
        ok(aclprofGetStepTimestamp(step, ACL_STEP_END, s));
        assert_fails(
            aclprofGetStepTimestamp(step, 7, s),
            INVALID_PARAM,
            "aclprofGetStepTimestamp",
        );
        assert_fails(
            aclprofGetStepTimestamp(null_mut(), ACL_STEP_START, s),
            INVALID_PARAM,
            "aclprofGetStepTimestamp",
        );
        ok(common::sync(s));
        aclprofDestroyStepInfo(step);
        destroy_stream(s);
    });
}
