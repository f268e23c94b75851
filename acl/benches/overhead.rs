//! The safe layer's overhead over the raw -sys calls, for instruction counts
//! under callgrind (`cargo xtask bench-overhead` runs it and computes the
//! ratios; see BENCHMARKS.md).
//!
//! ```text
//! overhead <op> <raw|safe> <iterations> [--multi] [--calls]
//!   op: event-record | stream-query | htod-64 | cached-alloc-free | copy-then-use
//!       | aclop-add | aclop-matmul | aclnn-add | aclnn-matmul | ops-add | ops-matmul
//!       | fills-100 | graph-100
//! ```
//!
//! `--multi`: a second stream (a copy stream, as every framework has) has
//! queued tracked work before the loop, so the safe layer is in
//! multi-stream mode (marks carry events). `copy-then-use` needs it: each
//! iteration copies 16 floats from pinned memory into a buffer on the copy
//! stream, then copies that buffer into another on the compute stream (each
//! waits for the other's last access of the buffer: the ordering every
//! framework's copy stream needs). `--calls`: count the runtime calls the
//! loop made (`cann_sim::calls::count`) and print them, one `call <name>
//! <count>` line each.
//!
//! `fills-100` queues 100 fills of 64-byte buffers per iteration; `graph-100`
//! launches a graph that captured the same 100 fills (`aclmdlRIExecuteAsync`)
//! once per iteration: the two compare issuing work one call at a time with
//! launching it captured.
//!
//! Each run sets up on the simulator, then performs the operation
//! `iterations` times. Two runs with different iteration counts give the
//! per-operation instruction count without the setup.

use acl::{
    Device, DeviceBuffer, Event, EventFlags, PinnedHostBuffer, Runtime, Tensor, aclnn, aclop, ops,
};
use acl_sys as sys;
use std::hint::black_box;

/// Held by `main` while the measured loop queues work (see `held`).
static HOLD: std::sync::Mutex<()> = std::sync::Mutex::new(());

extern "C" fn wait_for_release(_: *mut std::ffi::c_void) {
    drop(HOLD.lock());
}

/// Host functions that have run at the end of the work queued before them
/// (see `drain`).
static DRAINED: (std::sync::Mutex<u32>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

extern "C" fn signal_drained(_: *mut std::ffi::c_void) {
    *DRAINED.0.lock().expect("drained") += 1;
    DRAINED.1.notify_all();
}

/// Releases the streams held during the loop and blocks until the work
/// queued on them has run: a raw host function at the end of each queue
/// wakes this thread once, where a synchronisation would wake it after
/// every task (as many times as the worker happened to finish tasks
/// while it slept, which changed the whole-process count from run to run).
fn drain(hold: &mut Option<std::sync::MutexGuard<'static, ()>>, streams: &[sys::aclrtStream]) {
    if hold.is_none() {
        return;
    }
    let before = *DRAINED.0.lock().expect("drained");
    for &s in streams {
        // SAFETY: a live stream; the function takes no argument.
        let rc = unsafe { sys::aclrtLaunchHostFunc(s, Some(signal_drained), std::ptr::null_mut()) }
            .expect("loaded");
        assert_eq!(rc, 0);
    }
    drop(hold.take());
    let target = before + streams.len() as u32;
    let mut done = DRAINED.0.lock().expect("drained");
    while *done < target {
        done = DRAINED.1.wait(done).expect("drained");
    }
}

/// Runs the measured loop. Not inlined, so that callgrind counts the
/// calling thread's instructions in it alone (`--toggle-collect=*measured*`):
/// the work of the safe layer and of the simulator's entry points, without
/// the setup and the final wait, whose cost depends on how the simulator's
/// worker threads were scheduled.
#[inline(never)]
fn measured<R>(f: impl FnOnce() -> R) -> R {
    black_box(f())
}

/// Holds `streams` until `drain`: queued work (records, copies, kernels)
/// runs only after the loop, so that the simulator's workers never run
/// tasks while the loop queues them. Otherwise how often they wake, and how
/// their locks contend with the caller's, changes each run's count by up to
/// 20%. The safe layer does not see these raw calls, so a one-stream
/// program stays in single-stream mode as a plain program would.
fn hold_streams(streams: &[sys::aclrtStream]) -> Option<std::sync::MutexGuard<'static, ()>> {
    let hold = HOLD.lock().expect("hold");
    for &s in streams {
        // SAFETY: a live stream; the function takes no argument and
        // returns once the guard is released (`drain`).
        let rc =
            unsafe { sys::aclrtLaunchHostFunc(s, Some(wait_for_release), std::ptr::null_mut()) }
                .expect("loaded");
        assert_eq!(rc, 0);
    }
    Some(hold)
}

/// Removes `flag` from `args`; whether it was there.
fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let before = args.len();
    args.retain(|a| a != flag);
    args.len() != before
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let multi = take_flag(&mut args, "--multi");
    let count_calls = take_flag(&mut args, "--calls");
    if args.len() != 3 {
        eprintln!(
            "usage: overhead <event-record|stream-query|htod-64|cached-alloc-free|copy-then-use|aclop-add|aclop-matmul|aclnn-add|aclnn-matmul|ops-add|ops-matmul|fills-100|graph-100> <raw|safe> <iterations> [--multi] [--calls]"
        );
        std::process::exit(2);
    }
    let Ok(n) = args[2].parse::<u64>() else {
        eprintln!("iterations must be a number");
        std::process::exit(2);
    };
    let safe = match args[1].as_str() {
        "raw" => false,
        "safe" => true,
        other => {
            eprintln!("unknown variant {other}");
            std::process::exit(2);
        }
    };
    cann_sim::install().expect("cann-sim");
    let rt = Runtime::init().expect("init");
    let npu = Device::new(&rt, 0).expect("device");
    let stream = npu.new_stream().expect("stream");
    let raw_stream = stream.as_raw();
    // The copy stream: with `--multi` it queues tracked work before the
    // loop (after the compute stream), which turns multi-stream mode on.
    let copy = npu.new_stream().expect("copy stream");
    let raw_copy = copy.as_raw();
    if multi {
        drop(stream.alloc_zeros::<u8>(64).expect("compute stream use"));
        drop(copy.alloc_zeros::<u8>(64).expect("copy stream use"));
        stream.synchronize().expect("sync");
        copy.synchronize().expect("sync");
    } else if args[0] == "copy-then-use" {
        eprintln!("copy-then-use needs --multi (a second stream)");
        std::process::exit(2);
    }
    // Each loop runs while both streams are held (`hold_streams`), in
    // `measured`, then `drain` lets the queued work run.
    let body = || match args[0].as_str() {
        "event-record" => {
            let ev = Event::new(&npu, EventFlags::SYNC).expect("event");
            let raw_ev = ev.as_raw();
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        ev.record(&stream).expect("record");
                    } else {
                        // SAFETY: live handles.
                        let rc =
                            unsafe { sys::aclrtRecordEvent(raw_ev, raw_stream) }.expect("loaded");
                        assert_eq!(rc, 0);
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
            stream.synchronize().expect("sync");
        }
        "stream-query" => {
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        black_box(stream.is_complete().expect("query"));
                    } else {
                        let mut status = 0;
                        // SAFETY: live handle, valid out-pointer.
                        let rc = unsafe { sys::aclrtStreamQuery(raw_stream, &mut status) }
                            .expect("loaded");
                        assert_eq!(rc, 0);
                        black_box(status);
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
        }
        "htod-64" => {
            let host = PinnedHostBuffer::from_slice(&npu, &[7u8; 64]).expect("pinned");
            let mut dev = stream.alloc_zeros::<u8>(64).expect("alloc");
            let (h, d) = (
                host.as_slice().expect("host").as_ptr(),
                dev.as_raw_mut_ptr(),
            );
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        stream.copy_htod(&host, &mut dev).expect("copy");
                    } else {
                        // SAFETY: live pinned and device memory of 64 bytes.
                        let rc = unsafe {
                            sys::aclrtMemcpyAsync(
                                d,
                                64,
                                h.cast(),
                                64,
                                sys::ACL_MEMCPY_HOST_TO_DEVICE,
                                raw_stream,
                            )
                        }
                        .expect("loaded");
                        assert_eq!(rc, 0);
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
            stream.synchronize().expect("sync");
        }
        "copy-then-use" => {
            // Per iteration, two operations: 16 floats copied from pinned
            // memory into `a` on the copy stream, then `a` copied into `c`
            // on the compute stream. The raw variant makes the two bare
            // calls (a correct raw program would add an event record and a
            // wait to each, as the safe layer does).
            let host = PinnedHostBuffer::from_slice(&npu, &[7.0f32; 16]).expect("pinned");
            let mut a = copy.alloc_zeros::<f32>(16).expect("a");
            let mut c = stream.alloc_zeros::<f32>(16).expect("c");
            copy.synchronize().expect("sync");
            stream.synchronize().expect("sync");
            let h = host.as_slice().expect("host").as_ptr();
            let (pa, pc) = (a.as_raw_mut_ptr(), c.as_raw_mut_ptr());
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        copy.copy_htod(&host, &mut a).expect("h2d");
                        stream.copy_dtod(&a, &mut c).expect("d2d");
                    } else {
                        // SAFETY: live pinned and device memory of 64 bytes.
                        unsafe {
                            let rc = sys::aclrtMemcpyAsync(
                                pa,
                                64,
                                h.cast(),
                                64,
                                sys::ACL_MEMCPY_HOST_TO_DEVICE,
                                raw_copy,
                            )
                            .expect("loaded");
                            assert_eq!(rc, 0);
                            let rc = sys::aclrtMemcpyAsync(
                                pc,
                                64,
                                pa,
                                64,
                                sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                                raw_stream,
                            )
                            .expect("loaded");
                            assert_eq!(rc, 0);
                        }
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
            stream.synchronize().expect("sync");
            copy.synchronize().expect("sync");
        }
        "cached-alloc-free" => {
            npu.enable_caching_allocator(Default::default())
                .expect("caching");
            let handle = npu.caching_allocator().expect("allocator");
            // SAFETY: the key is the live stream's handle; blocks are used
            // on it only (never, in fact) and freed to this allocator.
            let alloc = unsafe { handle.raw() };
            let key = stream.as_raw() as usize;
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        // SAFETY: never read.
                        let b = unsafe { stream.alloc::<u8>(4096) }.expect("alloc");
                        black_box(&b);
                        drop(b);
                    } else {
                        let b = alloc.allocate(4096, key).expect("alloc");
                        black_box(&b);
                        alloc.free(b).expect("free");
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
        }
        "aclop-add" | "aclop-matmul" => {
            let matmul = args[0] == "aclop-matmul";
            let (dims, op): (&[i64], &std::ffi::CStr) = if matmul {
                (&[4, 4], c"MatMul")
            } else {
                (&[16], c"Add")
            };
            let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let a = Tensor::from_host(&stream, &[1.0f32; 16], &shape).expect("a");
            let b = Tensor::from_host(&stream, &[2.0f32; 16], &shape).expect("b");
            let mut c = Tensor::<f32>::zeros(&stream, &shape).expect("c");
            let (pa, pb, pc) = (
                a.buffer().as_raw_ptr().cast_mut(),
                b.buffer().as_raw_ptr().cast_mut(),
                c.buffer().as_raw_ptr().cast_mut(),
            );
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe {
                        // The aclop API: descriptions and attributes made per
                        // call, as the raw path does.
                        let desc = || {
                            aclop::TensorDesc::new(acl::DataType::Float, dims, aclop::Format::Nd)
                                .expect("desc")
                        };
                        let (da, db, mut dc) = (desc(), desc(), desc());
                        let mut attr = None;
                        if matmul {
                            let mut at = aclop::OpAttr::new().expect("attr");
                            at.set_bool("transpose_x1", false).expect("attr");
                            at.set_bool("transpose_x2", false).expect("attr");
                            attr = Some(at);
                        }
                        let mut out = c.buffer_mut();
                        let mut call = aclop::Operator::from_c_str(op)
                            .input(&da, a.buffer())
                            .input(&db, b.buffer())
                            .output(&mut dc, &mut out);
                        if let Some(at) = &attr {
                            call = call.attr(at);
                        }
                        call.execute(&stream).expect("execute");
                    } else {
                        // The same C calls as the safe path: three descriptions,
                        // three data buffers, (attributes,) execute, release.
                        // SAFETY: live device buffers of 64 bytes; every handle
                        // is created and destroyed here.
                        unsafe {
                            let desc = || {
                                sys::aclCreateTensorDesc(
                                    sys::ACL_FLOAT,
                                    dims.len() as i32,
                                    dims.as_ptr(),
                                    sys::ACL_FORMAT_ND,
                                )
                                .expect("loaded")
                            };
                            let (da, db, dc) = (desc(), desc(), desc());
                            let ba = sys::aclCreateDataBuffer(pa, 64).expect("loaded");
                            let bb = sys::aclCreateDataBuffer(pb, 64).expect("loaded");
                            let bc = sys::aclCreateDataBuffer(pc, 64).expect("loaded");
                            let attr = if matmul {
                                let at = sys::aclopCreateAttr().expect("loaded");
                                sys::aclopSetAttrBool(at, c"transpose_x1".as_ptr(), 0)
                                    .expect("loaded");
                                sys::aclopSetAttrBool(at, c"transpose_x2".as_ptr(), 0)
                                    .expect("loaded");
                                at
                            } else {
                                std::ptr::null_mut()
                            };
                            let mut in_d = [da, db];
                            let mut in_b = [ba, bb];
                            let mut out_d = [dc];
                            let mut out_b = [bc];
                            let rc = sys::aclopExecuteV2(
                                op.as_ptr(),
                                2,
                                in_d.as_mut_ptr(),
                                in_b.as_mut_ptr(),
                                1,
                                out_d.as_mut_ptr(),
                                out_b.as_mut_ptr(),
                                attr,
                                raw_stream,
                            )
                            .expect("loaded");
                            assert_eq!(rc, 0);
                            for buf in [ba, bb, bc] {
                                sys::aclDestroyDataBuffer(buf).expect("loaded");
                            }
                            if matmul {
                                sys::aclopDestroyAttr(attr).expect("loaded");
                            }
                            for d in [da, db, dc] {
                                sys::aclDestroyTensorDesc(d).expect("loaded");
                            }
                        }
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
            stream.synchronize().expect("sync");
        }
        "aclnn-add" | "aclnn-matmul" | "ops-add" | "ops-matmul" => {
            let matmul = args[0].ends_with("matmul");
            let typed = args[0].starts_with("ops-");
            let dims: &[i64] = if matmul { &[4, 4] } else { &[16] };
            let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let a = stream.clone_from_host(&[1.0f32; 16]).expect("a");
            let b = stream.clone_from_host(&[2.0f32; 16]).expect("b");
            let mut c = stream.alloc_zeros::<f32>(16).expect("c");
            let (pa, pb) = (a.as_raw_ptr().cast_mut(), b.as_raw_ptr().cast_mut());
            let pc = c.as_raw_mut_ptr();
            let strides: &[i64] = if matmul { &[4, 1] } else { &[1] };
            let (ta, tb) = (
                Tensor::from_host(&stream, &[1.0f32; 16], &shape).expect("a"),
                Tensor::from_host(&stream, &[2.0f32; 16], &shape).expect("b"),
            );
            let mut tc = Tensor::<f32>::zeros(&stream, &shape).expect("c");
            let (pa, pb, pc) = if typed {
                (
                    ta.buffer().as_raw_ptr().cast_mut(),
                    tb.buffer().as_raw_ptr().cast_mut(),
                    tc.buffer().as_raw_ptr().cast_mut(),
                )
            } else {
                (pa, pb, pc)
            };
            let mut hold = hold_streams(&[raw_stream, raw_copy]);
            measured(|| {
                for _ in 0..n {
                    if safe && typed {
                        // Typed operators over tensors: shapes checked, views
                        // made, then the same aclnn calls.
                        if matmul {
                            ops::matmul(&stream, &ta, &tb, &mut tc).expect("matmul");
                        } else {
                            ops::add(&stream, &ta, &tb, &mut tc).expect("add");
                        }
                    } else if safe {
                        let ta = aclnn::TensorArg::new(&a, &shape).expect("a");
                        let tb = aclnn::TensorArg::new(&b, &shape).expect("b");
                        let mut tc = aclnn::TensorArgMut::new(&mut c, &shape).expect("c");
                        if matmul {
                            aclnn::matmul(
                                &stream,
                                &ta,
                                &tb,
                                &mut tc,
                                aclnn::CubeMathType::KeepDtype,
                            )
                            .expect("matmul");
                        } else {
                            let one = aclnn::Scalar::new(1.0f32).expect("alpha");
                            aclnn::add(&stream, &ta, &tb, &one, &mut tc).expect("add");
                        }
                    } else {
                        // The same C calls as the safe path: three tensors,
                        // (an alpha scalar for Add,) both phases, destroys.
                        // SAFETY: live device buffers of 64 bytes; every handle
                        // is created and destroyed here.
                        unsafe {
                            let tensor = |p: *mut std::ffi::c_void| {
                                sys::aclnn::aclCreateTensor(
                                    dims.as_ptr(),
                                    dims.len() as u64,
                                    sys::ACL_FLOAT,
                                    strides.as_ptr(),
                                    0,
                                    sys::ACL_FORMAT_ND,
                                    [16i64].as_ptr(),
                                    1,
                                    p,
                                )
                                .expect("loaded")
                            };
                            let (ta, tb, tc) = (tensor(pa), tensor(pb), tensor(pc));
                            let mut ws = 0u64;
                            let mut ex = std::ptr::null_mut();
                            if matmul {
                                let rc = sys::aclnn::aclnnMatmulGetWorkspaceSize(
                                    ta, tb, tc, 0, &mut ws, &mut ex,
                                )
                                .expect("loaded");
                                assert_eq!(rc, 0);
                                let rc = sys::aclnn::aclnnMatmul(
                                    std::ptr::null_mut(),
                                    ws,
                                    ex,
                                    raw_stream,
                                )
                                .expect("loaded");
                                assert_eq!(rc, 0);
                            } else {
                                let mut one = 1.0f32;
                                let alpha = sys::aclnn::aclCreateScalar(
                                    (&mut one as *mut f32).cast(),
                                    sys::ACL_FLOAT,
                                )
                                .expect("loaded");
                                let rc = sys::aclnn::aclnnAddGetWorkspaceSize(
                                    ta, tb, alpha, tc, &mut ws, &mut ex,
                                )
                                .expect("loaded");
                                assert_eq!(rc, 0);
                                let rc =
                                    sys::aclnn::aclnnAdd(std::ptr::null_mut(), ws, ex, raw_stream)
                                        .expect("loaded");
                                assert_eq!(rc, 0);
                                sys::aclnn::aclDestroyScalar(alpha).expect("loaded");
                            }
                            for t in [ta, tb, tc] {
                                sys::aclnn::aclDestroyTensor(t).expect("loaded");
                            }
                        }
                    }
                }
            });
            drain(&mut hold, &[raw_stream, raw_copy]);
            stream.synchronize().expect("sync");
        }
        "fills-100" | "graph-100" => {
            let mut bufs: Vec<DeviceBuffer<u8>> = (0..100)
                .map(|_| stream.alloc_zeros::<u8>(64).expect("alloc"))
                .collect();
            let ptrs: Vec<*mut std::ffi::c_void> =
                bufs.iter_mut().map(|b| b.as_raw_mut_ptr().cast()).collect();
            let raw_fills = || {
                for &p in &ptrs {
                    // SAFETY: live device buffers of 64 bytes.
                    let rc =
                        unsafe { sys::aclrtMemsetAsync(p, 64, 7, 64, raw_stream) }.expect("loaded");
                    assert_eq!(rc, 0);
                }
            };
            if args[0] == "fills-100" {
                let mut hold = hold_streams(&[raw_stream, raw_copy]);
                measured(|| {
                    for _ in 0..n {
                        if safe {
                            for b in &mut bufs {
                                stream.fill(b, 7u8).expect("fill");
                            }
                        } else {
                            raw_fills();
                        }
                    }
                });
                drain(&mut hold, &[raw_stream, raw_copy]);
            } else if safe {
                let (graph, ()) = stream
                    .capture(acl::graph::CaptureMode::Global, |s| {
                        bufs.iter_mut().try_for_each(|b| s.fill(b, 7u8))
                    })
                    .expect("capture");
                let mut hold = hold_streams(&[raw_stream, raw_copy]);
                measured(|| {
                    for _ in 0..n {
                        graph.launch(&stream).expect("launch");
                    }
                });
                drain(&mut hold, &[raw_stream, raw_copy]);
            } else {
                let mut model = std::ptr::null_mut();
                // SAFETY: a live stream; the model is made, run and
                // destroyed here.
                unsafe {
                    let rc = sys::aclmdlRICaptureBegin(raw_stream, 0).expect("loaded");
                    assert_eq!(rc, 0);
                    raw_fills();
                    let rc = sys::aclmdlRICaptureEnd(raw_stream, &mut model).expect("loaded");
                    assert_eq!(rc, 0);
                    let mut hold = hold_streams(&[raw_stream, raw_copy]);
                    measured(|| {
                        for _ in 0..n {
                            let rc = sys::aclmdlRIExecuteAsync(model, raw_stream).expect("loaded");
                            assert_eq!(rc, 0);
                        }
                    });
                    drain(&mut hold, &[raw_stream, raw_copy]);
                }
                stream.synchronize().expect("sync");
                // SAFETY: made above; its executions have run.
                let rc = unsafe { sys::aclmdlRIDestroy(model) }.expect("loaded");
                assert_eq!(rc, 0);
            }
            stream.synchronize().expect("sync");
        }
        other => {
            eprintln!("unknown op {other}");
            std::process::exit(2);
        }
    };
    if count_calls {
        // Counting costs instructions (a map update per call): only when asked.
        let ((), calls) = cann_sim::calls::count(body);
        for (api, n) in calls.iter() {
            println!("call {api} {n}");
        }
    } else {
        body();
    }
    drop(copy);
    drop(stream);
    drop(npu);
    let _ = black_box(DeviceBuffer::<u8>::uninit);
}
