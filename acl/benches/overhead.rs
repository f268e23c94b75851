//! The safe layer's overhead over the raw -sys calls, for instruction counts
//! under callgrind (`cargo xtask bench-overhead` runs it and computes the
//! ratios; see BENCHMARKS.md).
//!
//! ```text
//! overhead <op> <raw|safe> <iterations>
//!   op: event-record | stream-query | htod-64 | cached-alloc-free | aclop-add | aclop-matmul | aclnn-add | aclnn-matmul
//!       | ops-add | ops-matmul
//!       | fills-100 | graph-100
//! ```
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 {
        eprintln!(
            "usage: overhead <event-record|stream-query|htod-64|cached-alloc-free|aclop-add|aclop-matmul|aclnn-add|aclnn-matmul|fills-100|graph-100> <raw|safe> <iterations>"
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
    // Queued work (records, copies) runs only after the loop: a raw host
    // function holds the stream until then, so that the simulator's worker
    // never runs tasks while the loop queues them. Otherwise how often it
    // wakes, and how its lock contends with the caller's, changes each
    // run's count by up to 20%. The safe layer does not see the raw call,
    // so it stays in single-stream mode as a plain program would.
    let held = matches!(
        args[0].as_str(),
        "event-record" | "htod-64" | "fills-100" | "graph-100"
    );
    let mut hold = Some(HOLD.lock().expect("hold"));
    if held {
        // SAFETY: a live stream; the function takes no argument and
        // returns once `hold` is released below.
        let rc = unsafe {
            sys::aclrtLaunchHostFunc(raw_stream, Some(wait_for_release), std::ptr::null_mut())
        }
        .expect("loaded");
        assert_eq!(rc, 0);
    }
    match args[0].as_str() {
        "event-record" => {
            let ev = Event::new(&npu, EventFlags::SYNC).expect("event");
            let raw_ev = ev.as_raw();
            for _ in 0..n {
                if safe {
                    ev.record(&stream).expect("record");
                } else {
                    // SAFETY: live handles.
                    let rc = unsafe { sys::aclrtRecordEvent(raw_ev, raw_stream) }.expect("loaded");
                    assert_eq!(rc, 0);
                }
            }
            drop(hold.take());
            stream.synchronize().expect("sync");
        }
        "stream-query" => {
            for _ in 0..n {
                if safe {
                    black_box(stream.is_complete().expect("query"));
                } else {
                    let mut status = 0;
                    // SAFETY: live handle, valid out-pointer.
                    let rc =
                        unsafe { sys::aclrtStreamQuery(raw_stream, &mut status) }.expect("loaded");
                    assert_eq!(rc, 0);
                    black_box(status);
                }
            }
        }
        "htod-64" => {
            let host = PinnedHostBuffer::from_slice(&npu, &[7u8; 64]).expect("pinned");
            let mut dev = stream.alloc_zeros::<u8>(64).expect("alloc");
            let (h, d) = (
                host.as_slice().expect("host").as_ptr(),
                dev.as_raw_mut_ptr(),
            );
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
            drop(hold.take());
            stream.synchronize().expect("sync");
        }
        "cached-alloc-free" => {
            npu.enable_caching_allocator(Default::default())
                .expect("caching");
            let handle = npu.caching_allocator().expect("allocator");
            // SAFETY: the key is the live stream's handle; blocks are used
            // on it only (never, in fact) and freed to this allocator.
            let alloc = unsafe { handle.raw() };
            let key = stream.as_raw() as usize;
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
                            sys::aclopSetAttrBool(at, c"transpose_x1".as_ptr(), 0).expect("loaded");
                            sys::aclopSetAttrBool(at, c"transpose_x2".as_ptr(), 0).expect("loaded");
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
                        aclnn::matmul(&stream, &ta, &tb, &mut tc, aclnn::CubeMathType::KeepDtype)
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
                            let rc =
                                sys::aclnn::aclnnMatmul(std::ptr::null_mut(), ws, ex, raw_stream)
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
                            let rc = sys::aclnn::aclnnAdd(std::ptr::null_mut(), ws, ex, raw_stream)
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
                for _ in 0..n {
                    if safe {
                        for b in &mut bufs {
                            stream.fill(b, 7u8).expect("fill");
                        }
                    } else {
                        raw_fills();
                    }
                }
            } else if safe {
                let (graph, ()) = stream
                    .capture(acl::graph::CaptureMode::Global, |s| {
                        bufs.iter_mut().try_for_each(|b| s.fill(b, 7u8))
                    })
                    .expect("capture");
                for _ in 0..n {
                    graph.launch(&stream).expect("launch");
                }
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
                    for _ in 0..n {
                        let rc = sys::aclmdlRIExecuteAsync(model, raw_stream).expect("loaded");
                        assert_eq!(rc, 0);
                    }
                }
                drop(hold.take());
                stream.synchronize().expect("sync");
                // SAFETY: made above; its executions have run.
                let rc = unsafe { sys::aclmdlRIDestroy(model) }.expect("loaded");
                assert_eq!(rc, 0);
            }
            drop(hold.take());
            stream.synchronize().expect("sync");
        }
        other => {
            eprintln!("unknown op {other}");
            std::process::exit(2);
        }
    }
    drop(stream);
    drop(npu);
    let _ = black_box(DeviceBuffer::<u8>::uninit);
}
