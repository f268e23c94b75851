//! Collectives under adversarial safe code: buffers dropped inside a group,
//! a panicking group closure, communicators dropped with collectives queued.

mod common;

use acl::allocator::AllocatorConfig;
use hccl::{CommConfig, ReduceOp};
use std::time::Duration;

const N: usize = 4096;

#[test]
fn a_buffer_dropped_inside_a_group_is_sent_intact() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let got = common::threads(2, CommConfig::default(), |comm, dev, s| {
        // Cached blocks are reused at once on their stream: the bug this
        // guards against handed the dropped send buffer to the next tensor.
        let _ = dev.enable_caching_allocator(AllocatorConfig::default());
        if comm.rank() == 0 {
            hccl::group(|| {
                let x = s.clone_from_host(&[1.0f32; N]).unwrap();
                comm.send(&x, 1, s)?;
                drop(x);
                let y = s.clone_from_host(&[2.0f32; N]).unwrap();
                drop(y);
                Ok(())
            })
            .unwrap();
            s.synchronize().unwrap();
            None
        } else {
            let mut r = s.alloc_zeros::<f32>(N).unwrap();
            hccl::group(|| comm.recv(&mut r, 0, s)).unwrap();
            Some(r.to_host_vec().unwrap())
        }
    });
    let r = got[1].as_ref().unwrap();
    let wrong = r.iter().filter(|&&v| v != 1.0).count();
    assert_eq!(
        wrong, 0,
        "{wrong} of {N} received values are not the sent 1.0"
    );
}

#[test]
fn a_panic_inside_a_group_ends_the_group() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let got = common::threads(2, CommConfig::default(), |comm, _dev, s| {
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hccl::group(|| -> hccl::Result<()> { panic!("boom inside a group") })
        }));
        assert!(panicked.is_err());
        // The group is closed: this send/receive is queued now, not at a
        // group end that never comes.
        let mut y = s.alloc_zeros::<f32>(8).unwrap();
        if comm.rank() == 0 {
            let x = s.clone_from_host(&[3.0f32; 8]).unwrap();
            comm.send(&x, 1, s).unwrap();
        } else {
            comm.recv(&mut y, 0, s).unwrap();
        }
        s.synchronize_timeout(Duration::from_secs(10))
            .expect("the send/receive ran");
        y.to_host_vec().unwrap()
    });
    assert_eq!(got[1], vec![3.0f32; 8]);
}

#[test]
fn dropping_a_comm_waits_for_its_queued_collectives() {
    let _g = common::serial();
    let rt = common::runtime();
    let root = hccl::RootInfo::for_device(&acl::Device::new(&rt, 0).unwrap()).unwrap();
    let ranks: Vec<_> = (0..2u32)
        .map(|r| {
            let (rt, root) = (rt.clone(), root.clone());
            std::thread::spawn(move || {
                let dev = acl::Device::new(&rt, r).unwrap();
                let comm =
                    hccl::Comm::init_root_info(&dev, &root, 2, r, &CommConfig::default()).unwrap();
                let s = dev.new_stream().unwrap();
                let x = s.clone_from_host(&[2.0f32; N]).unwrap();
                let mut y = s.alloc_zeros::<f32>(N).unwrap();
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                s.launch_host_fn(move || {
                    let _ = rx.recv_timeout(Duration::from_secs(30));
                })
                .unwrap();
                comm.all_reduce(&x, &mut y, ReduceOp::Sum, &s).unwrap();
                let release = std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(100));
                    drop(tx);
                });
                // The collective is still queued behind the host function:
                // the communicator must outlive it, so dropping it waits.
                drop(comm);
                let done_at_drop = s.is_complete().unwrap();
                release.join().unwrap();
                assert!(
                    done_at_drop,
                    "the communicator was destroyed under a queued collective"
                );
                s.synchronize().unwrap();
                y.to_host_vec().unwrap()
            })
        })
        .collect();
    for h in ranks {
        assert_eq!(h.join().unwrap(), vec![4.0f32; N]);
    }
    assert!(hccl::take_release_errors().is_empty());
}
