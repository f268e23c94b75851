//! The aclmdl* exports on the simulator: messages of misuse, queued
//! executions that outlive an unload, memory freed before a queued
//! execution runs (a fault with the check mode off, a refused free with it
//! on), and a node that fails at run time.
//!
//! Tests only set device 0 and never reset it.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_MODEL_INPUT_NOT_MATCH, ACL_ERROR_RT_AICORE_EXCEPTION,
    ACL_ERROR_RT_PARAM_INVALID, aclmdlDataset,
};
use cann_sim::acl::*;
use cann_sim::check::{Kind, Mode};
use cann_sim::model::{IoDesc, ModelDesc, Node};
use common::*;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// out = relu(x), x: float32 [4].
fn relu_model() -> Vec<u8> {
    let mut m = ModelDesc::new("relu");
    let io = |name: &str| IoDesc {
        name: name.into(),
        dtype: "float32".into(),
        format: "ND".into(),
        shape: vec![4],
    };
    m.inputs.push(io("x"));
    m.outputs.push(io("y"));
    m.nodes.push(Node {
        name: "act".into(),
        op: "Relu".into(),
        inputs: vec!["x".into()],
        outputs: vec!["y".into()],
        attrs: BTreeMap::new(),
    });
    m.to_bytes()
}

fn load(bytes: &[u8]) -> u32 {
    let mut id = 0;
    // SAFETY: valid bytes and out-pointer.
    ok(unsafe { aclmdlLoadFromMem(bytes.as_ptr().cast(), bytes.len(), &mut id) });
    id
}

fn dataset(bufs: &[(*mut u8, usize)]) -> *mut aclmdlDataset {
    // SAFETY: plain calls; the buffers only record addresses.
    unsafe {
        let ds = aclmdlCreateDataset();
        for &(p, n) in bufs {
            ok(aclmdlAddDatasetBuffer(
                ds,
                aclCreateDataBuffer(p.cast::<c_void>(), n),
            ));
        }
        ds
    }
}

fn upload(p: *mut u8, v: &[f32]) {
    // SAFETY: `p` is device memory of at least `v`'s size.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            std::mem::size_of_val(v),
            v.as_ptr().cast(),
            std::mem::size_of_val(v),
            acl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

fn download(p: *mut u8) -> [f32; 4] {
    let mut out = [0f32; 4];
    // SAFETY: `p` is device memory of 16 bytes.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            16,
            p.cast(),
            16,
            acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    out
}

#[test]
fn misuse_is_reported_with_its_code_and_a_message() {
    use_device(0);
    // SAFETY: plain calls with valid or deliberately
    // wrong (looked-up) arguments.
    unsafe {
        let msg = assert_fails(
            aclmdlUnload(987_654),
            ACL_ERROR_INVALID_MODEL_ID,
            "aclmdlUnload",
        );
        assert_contains(&msg, "model id 987654 names no loaded model");
        let id = load(&relu_model());
        let x = malloc(16);
        let y = malloc(16);
        let small = dataset(&[(x, 8)]);
        let out = dataset(&[(y, 16)]);
        let msg = assert_fails(
            aclmdlExecute(id, small, out),
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            "aclmdlExecute",
        );
        assert_eq!(
            msg,
            "aclmdlExecute: the buffer of input 0 (x) holds 8 bytes, but the model needs 16 at \
             this gear"
        );
        let two = dataset(&[(x, 16), (y, 16)]);
        let msg = assert_fails(
            aclmdlExecute(id, two, out),
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            "aclmdlExecute",
        );
        assert_eq!(
            msg,
            "aclmdlExecute: the input dataset holds 2 buffers, but the model has 1 inputs"
        );
        let same = dataset(&[(x, 16)]);
        // In place (the output is the input) is fine.
        upload(x, &[-1.0, 2.0, -3.0, 4.0]);
        ok(aclmdlExecute(id, same, same));
        assert_eq!(download(x), [0.0, 2.0, 0.0, 4.0]);
        let msg = assert_fails(
            aclmdlSetDynamicBatchSize(id, same, 0, 1),
            acl_sys::ACL_ERROR_MODEL_NOT_DYNAMIC,
            "aclmdlSetDynamicBatchSize",
        );
        assert_contains(&msg, "has no dynamic batch gears");
        for ds in [small, out, two, same] {
            destroy_dataset(ds);
        }
        ok(aclmdlUnload(id));
        free(x);
        free(y);
    }
}

/// Destroys `ds` and its data buffers.
///
/// # Safety
///
/// `ds` is a live dataset of the caller's.
unsafe fn destroy_dataset(ds: *mut aclmdlDataset) {
    // SAFETY: a live dataset and its buffers (the caller's).
    unsafe {
        for i in 0..aclmdlGetDatasetNumBuffers(ds) {
            ok(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i)));
        }
        ok(aclmdlDestroyDataset(ds));
    }
}

/// A queued execution runs after its model was unloaded; memory freed
/// between the call and the run is, with the check off (in a child
/// process), the released runtime's fault of the task at the next
/// synchronisation; with the check on, the free is refused and the
/// execution runs.
#[test]
fn a_queued_execution_outlives_the_unload_and_faults_on_freed_memory() {
    let mode = check_mode_with_off_in_a_child(
        "a_queued_execution_outlives_the_unload_and_faults_on_freed_memory",
    );
    let reports = count_reports();
    use_device(0);
    // SAFETY: plain calls with valid arguments.
    unsafe {
        let id = load(&relu_model());
        let x = malloc(16);
        let y = malloc(16);
        upload(x, &[1.0, -1.0, 5.0, -5.0]);
        let input = dataset(&[(x, 16)]);
        let output = dataset(&[(y, 16)]);
        let mut s = std::ptr::null_mut();
        ok(aclrtCreateStream(&mut s));
        // Queued, then unloaded: the execution still runs.
        ok(aclmdlExecuteAsync(id, input, output, s));
        ok(aclmdlUnload(id));
        ok(aclrtSynchronizeStream(s));
        assert_eq!(download(y), [1.0, 0.0, 5.0, 0.0]);

        // Memory freed between the call and the run: a fault of the task.
        let id = load(&relu_model());
        let z = malloc(16);
        let out2 = dataset(&[(z, 16)]);
        ok(aclrtSynchronizeStream(s));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        extern "C" fn wait_fn(arg: *mut c_void) {
            // SAFETY: `arg` is the boxed receiver below, alive until the
            // stream is synchronised.
            let rx = unsafe { &*(arg as *const std::sync::mpsc::Receiver<()>) };
            let _ = rx.recv();
        }
        let rx = Box::new(rx);
        ok(aclrtLaunchHostFunc(
            s,
            Some(wait_fn),
            (&*rx as *const std::sync::mpsc::Receiver<()>)
                .cast_mut()
                .cast(),
        ));
        ok(aclmdlExecuteAsync(id, input, out2, s));
        let freed = aclrtFree(z.cast());
        if mode == Mode::Off {
            ok(freed);
            tx.send(()).unwrap();
            let msg = assert_fails(
                aclrtSynchronizeStream(s),
                rc(ACL_ERROR_RT_AICORE_EXCEPTION),
                "aclrtSynchronizeStream",
            );
            assert_contains(&msg, "aclmdlExecuteAsync");
        } else {
            let msg = assert_free_refused(
                freed,
                "aclrtFree",
                z,
                "aclmdlExecuteAsync task #3",
                s,
                &format!(
                    "writes {} of device memory on device 0, model output)",
                    byte_range(z, 16)
                ),
            );
            reports.assert_made(1, Kind::FreeWhilePending, &msg);
            tx.send(()).unwrap();
            ok(aclrtSynchronizeStream(s));
            assert_eq!(download(z), [1.0, 0.0, 5.0, 0.0], "the execution ran");
            free(z);
        }
        drop(rx);
        ok(aclmdlUnload(id));
        // Host memory is not device memory.
        let id = load(&relu_model());
        let host = malloc_host(16);
        let hin = dataset(&[(host, 16)]);
        assert_fails(
            aclmdlExecuteAsync(id, hin, output, s),
            rc(ACL_ERROR_RT_PARAM_INVALID),
            "aclmdlExecuteAsync",
        );
        ok(aclmdlUnload(id));
        for ds in [input, output, out2, hin] {
            destroy_dataset(ds);
        }
        free_host(host);
        ok(aclrtDestroyStream(s));
        free(x);
        free(y);
    }
    assert_eq!(reports.made(), u64::from(mode != Mode::Off));
}

/// c = a · b, a: [-1, 2], b: [2, -1]; dims gears (a's rows, b's columns).
fn dims_model() -> Vec<u8> {
    let mut m = ModelDesc::new("dims");
    let io = |name: &str, shape: &[i64]| IoDesc {
        name: name.into(),
        dtype: "float32".into(),
        format: "ND".into(),
        shape: shape.to_vec(),
    };
    m.inputs.push(io("a", &[-1, 2]));
    m.inputs.push(io("b", &[2, -1]));
    m.outputs.push(io("c", &[-1, -1]));
    m.nodes.push(Node {
        name: "mm".into(),
        op: "MatMul".into(),
        inputs: vec!["a".into(), "b".into()],
        outputs: vec!["c".into()],
        attrs: BTreeMap::new(),
    });
    m.dynamic_dims = vec![vec![1, 3], vec![3, 2]];
    m.to_bytes()
}

fn host_matmul(a: &[f32], b: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut c = vec![0f32; rows * cols];
    for r in 0..rows {
        for j in 0..cols {
            c[r * cols + j] = (0..2).map(|k| a[r * 2 + k] * b[k * cols + j]).sum();
        }
    }
    c
}

fn download_n(p: *mut u8, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; n];
    // SAFETY: `p` is device memory of at least `4 * n` bytes.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            4 * n,
            p.cast(),
            4 * n,
            acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    out
}

#[test]
fn dims_gears_are_described_set_and_run_at() {
    use_device(0);
    // SAFETY: plain calls with valid or deliberately
    // wrong (looked-up) arguments; out-pointers valid.
    unsafe {
        let id = load(&dims_model());
        let d = aclmdlCreateDesc();
        ok(aclmdlGetDesc(d, id));
        assert_eq!(aclmdlGetNumInputs(d), 3, "a, b and the gear input");
        let mut n = 0;
        ok(aclmdlGetInputDynamicGearCount(d, usize::MAX, &mut n));
        assert_eq!(n, 2);
        let mut gears = [acl_sys::aclmdlIODims::default(); 2];
        ok(aclmdlGetInputDynamicDims(
            d,
            usize::MAX,
            gears.as_mut_ptr(),
            2,
        ));
        let shown: Vec<Vec<i64>> = gears
            .iter()
            .map(|g| g.dims[..g.dimCount].to_vec())
            .collect();
        assert_eq!(shown, [vec![1, 2, 2, 3], vec![3, 2, 2, 2]]);
        let msg = assert_fails(
            aclmdlGetInputDynamicDims(d, usize::MAX, gears.as_mut_ptr(), 1),
            acl_sys::ACL_ERROR_INVALID_PARAM,
            "aclmdlGetInputDynamicDims",
        );
        assert_contains(&msg, "gearCount is 1; the model has 2 dims gears");
        let mut gi = 0;
        ok(aclmdlGetInputIndexByName(
            d,
            c"ascend_mbatch_shape_data".as_ptr(),
            &mut gi,
        ));
        assert_eq!(gi, 2);
        ok(aclmdlDestroyDesc(d));

        let a = malloc(4 * 6);
        let b = malloc(4 * 6);
        let g = malloc(16);
        let c = malloc(4 * 9);
        let ins = dataset(&[(a, 4 * 6), (b, 4 * 6), (g, 16)]);
        let outs = dataset(&[(c, 4 * 9)]);
        let msg = assert_fails(
            aclmdlExecute(id, ins, outs),
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            "aclmdlExecute",
        );
        assert_contains(&msg, "set it with aclmdlSetInputDynamicDims");
        let av = [1.0f32, -2.0, 3.0, 0.5, -1.5, 4.0];
        let bv = [2.0f32, 1.0, -1.0, 0.5, 3.0, 2.0];
        upload(a, &av);
        upload(b, &bv);
        for (rows, cols) in [(1usize, 3usize), (3, 2)] {
            let mut dims = acl_sys::aclmdlIODims {
                dimCount: 4,
                ..Default::default()
            };
            dims.dims[..4].copy_from_slice(&[rows as i64, 2, 2, cols as i64]);
            ok(aclmdlSetInputDynamicDims(id, ins, 2, &dims));
            ok(aclmdlExecute(id, ins, outs));
            assert_eq!(
                download_n(c, rows * cols),
                host_matmul(&av, &bv, rows, cols),
                "gear ({rows}, {cols})"
            );
        }
        let mut dims = acl_sys::aclmdlIODims {
            dimCount: 4,
            ..Default::default()
        };
        dims.dims[..4].copy_from_slice(&[2, 2, 2, 2]);
        let msg = assert_fails(
            aclmdlSetInputDynamicDims(id, ins, 2, &dims),
            acl_sys::ACL_ERROR_INVALID_PARAM,
            "aclmdlSetInputDynamicDims",
        );
        assert_eq!(
            msg,
            "aclmdlSetInputDynamicDims: dims [2, 2, 2, 2] is not one of the model's gears \
             [[1, 2, 2, 3], [3, 2, 2, 2]] (as dims of all inputs)"
        );
        let static_id = load(&relu_model());
        let msg = assert_fails(
            aclmdlSetInputDynamicDims(static_id, ins, 2, &dims),
            acl_sys::ACL_ERROR_MODEL_NOT_DYNAMIC,
            "aclmdlSetInputDynamicDims",
        );
        assert_contains(&msg, "has no dynamic dims gears");
        assert_fails(
            aclmdlSetDynamicBatchSize(id, ins, 2, 1),
            acl_sys::ACL_ERROR_MODEL_NOT_DYNAMIC,
            "aclmdlSetDynamicBatchSize",
        );
        for ds in [ins, outs] {
            destroy_dataset(ds);
        }
        ok(aclmdlUnload(static_id));
        ok(aclmdlUnload(id));
        for p in [a, b, g, c] {
            free(p);
        }
    }
}
