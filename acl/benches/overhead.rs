//! The safe layer's overhead over the raw -sys calls, for instruction counts
//! under callgrind (`cargo xtask bench-overhead` runs it and computes the
//! ratios; see BENCHMARKS.md).
//!
//! ```text
//! overhead <op> <raw|safe> <iterations>
//!   op: event-record | stream-query | htod-64 | cached-alloc-free
//! ```
//!
//! Each run sets up on the simulator, then performs the operation
//! `iterations` times. Two runs with different iteration counts give the
//! per-operation instruction count without the setup.

use acl::{Device, DeviceBuffer, Event, EventFlags, PinnedHostBuffer, Runtime};
use acl_sys as sys;
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 {
        eprintln!(
            "usage: overhead <event-record|stream-query|htod-64|cached-alloc-free> <raw|safe> <iterations>"
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
            stream.synchronize().expect("sync");
        }
        "cached-alloc-free" => {
            npu.enable_caching_allocator(Default::default())
                .expect("caching");
            let alloc = npu.caching_allocator().expect("allocator");
            let key = acl::memory::stream_key(&stream);
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
        other => {
            eprintln!("unknown op {other}");
            std::process::exit(2);
        }
    }
    drop(stream);
    drop(npu);
    let _ = black_box(DeviceBuffer::<u8>::uninit);
}
