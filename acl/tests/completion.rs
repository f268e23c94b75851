//! Stream and event completion as futures (feature `async`), on a
//! current-thread executor: awaiting device work parks no thread.

#![cfg(feature = "async")]

mod common;

use acl::{Error, Event, EventFlags};
use std::sync::mpsc;
use std::time::Duration;

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn awaiting_a_stream_does_not_block_the_executor_thread() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    // The stream is held by a host function until the second task, on the
    // same executor thread, lets it go: a completion that blocked the
    // thread would never let that task run.
    let (release, held) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = held.recv_timeout(Duration::from_secs(20));
        })
        .unwrap();
    let x = stream.clone_from_host(&[7u32; 64]).unwrap();
    let mut y = stream.alloc_zeros::<u32>(64).unwrap();
    stream.copy_dtod(&x, &mut y).unwrap();
    let done = stream.completion().unwrap();
    let rt = current_thread();
    let order = rt.block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let tx2 = tx.clone();
                let waiter = tokio::task::spawn_local(async move {
                    done.await.unwrap();
                    tx.send("device work done").unwrap();
                });
                let releaser = tokio::task::spawn_local(async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    tx2.send("released").unwrap();
                    release.send(()).unwrap();
                });
                tokio::time::timeout(Duration::from_secs(15), async {
                    waiter.await.unwrap();
                    releaser.await.unwrap();
                })
                .await
                .expect("the completion resolved without blocking the executor");
                let mut order = Vec::new();
                while let Ok(m) = rx.try_recv() {
                    order.push(m);
                }
                order
            })
            .await
    });
    assert_eq!(order, ["released", "device work done"]);
    assert_eq!(y.to_host_vec().unwrap(), [7u32; 64]);
}

#[test]
fn a_completion_reports_a_host_function_panic_before_it() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    stream
        .launch_host_fn(|| panic!("boom in a host fn"))
        .unwrap();
    let done = stream.completion().unwrap();
    let err = current_thread().block_on(done).unwrap_err();
    assert!(
        matches!(&err, Error::HostFunctionPanicked { message } if message.contains("boom")),
        "{err}"
    );
    // Reported once, as `synchronize` does.
    stream.synchronize().unwrap();
}

#[test]
fn a_completion_works_on_a_stream_that_runs_callbacks() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel();
    stream
        .launch_callback(acl::CallbackMode::Blocking, move || tx.send(1).unwrap())
        .unwrap();
    // Host functions are refused on this stream; the completion uses a
    // callback instead.
    let done = stream.completion().unwrap();
    current_thread().block_on(done).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
fn event_completion_resolves_after_the_recorded_work() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let (release, held) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = held.recv_timeout(Duration::from_secs(20));
        })
        .unwrap();
    let event = Event::new(&npu, EventFlags::default()).unwrap();
    event.record(&stream).unwrap();
    let done = event.completion(&stream).unwrap();
    assert!(!event.is_complete().unwrap());
    release.send(()).unwrap();
    current_thread().block_on(done).unwrap();
    assert!(event.is_complete().unwrap());
}

#[test]
fn event_completion_on_another_devices_stream_is_refused() {
    cann_sim::require_devices!(2);
    let a = common::device(0);
    let b = common::device(1);
    let event = Event::new(&a, EventFlags::default()).unwrap();
    let err = event.completion(&b.new_stream().unwrap()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { function, .. } if *function == "Event::completion"),
        "{err}"
    );
}

#[test]
fn dropping_a_completion_before_it_resolves_is_harmless() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let (release, held) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = held.recv_timeout(Duration::from_secs(20));
        })
        .unwrap();
    drop(stream.completion().unwrap());
    release.send(()).unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn completions_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<acl::completion::Completion>();
}
