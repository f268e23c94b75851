//! Settings outside the communicator config (process-wide and per
//! communicator), registered windows, and communicators of several root
//! infos, on thread ranks of the simulator.

mod common;

use acl::{Device, DeviceBuffer};
use common::{runtime, serial, threads};
use hccl::config::{self as settings, config_capability};
use hccl::{Accelerator, Comm, CommConfig, ConfigItem, Error, ErrorCode, ReduceOp, RootInfo};

#[track_caller]
fn expect_hccl(r: hccl::Result<()>, code: ErrorCode, function: &str) {
    match r {
        Err(Error::Hccl {
            code: c,
            function: f,
            ..
        }) if c == code && f == function => {}
        other => panic!("expected {function} to fail with {code}, got {other:?}"),
    }
}

#[track_caller]
fn expect_invalid(r: hccl::Result<()>, function: &str) {
    match r {
        Err(Error::InvalidArgument { function: f, .. }) if f == function => {}
        other => panic!("expected {function} to reject its arguments, got {other:?}"),
    }
}

#[test]
fn config_capability_covers_every_item_comm_config_sets() {
    runtime();
    let cap = config_capability().unwrap();
    for item in [
        ConfigItem::BufferSize,
        ConfigItem::Deterministic,
        ConfigItem::CommName,
        ConfigItem::ExecTimeout,
    ] {
        assert!(cap.supports(item), "{item:?} unsupported ({})", cap.raw());
    }
    assert!(!cap.supports(ConfigItem::Algo));
}

#[test]
fn process_wide_deterministic_is_the_default_of_new_communicators() {
    cann_sim::require_devices!(2);
    let _s = serial();
    runtime();
    settings::set_deterministic(true).unwrap();
    assert!(settings::deterministic().unwrap());
    let out = threads(2, CommConfig::default(), |comm, _, _| {
        let inherited = comm.deterministic().unwrap();
        comm.set_deterministic(false).unwrap();
        (inherited, comm.deterministic().unwrap())
    });
    settings::set_deterministic(false).unwrap();
    assert!(!settings::deterministic().unwrap());
    assert_eq!(out, vec![(true, false); 2]);
    let out = threads(
        2,
        CommConfig::default().deterministic(true),
        |comm, _, _| comm.deterministic().unwrap(),
    );
    assert_eq!(
        out,
        vec![true; 2],
        "the config overrides the process default"
    );
}

#[test]
fn an_accelerator_the_simulator_lacks_is_not_supported_and_changes_nothing() {
    let _s = serial();
    runtime();
    expect_hccl(
        settings::set_accelerator(Accelerator::Aiv),
        ErrorCode::NotSupport,
        "HcclSetConfig",
    );
    assert_eq!(settings::accelerator().unwrap(), Accelerator::Default);
    settings::set_accelerator(Accelerator::Default).unwrap();
    let out = threads(1, CommConfig::default(), |comm, _, _| {
        let r = comm.set_accelerator(Accelerator::Aicpu);
        (r, comm.accelerator().unwrap())
    });
    let (r, now) = out.into_iter().next().unwrap();
    expect_hccl(r, ErrorCode::NotSupport, "HcclSetCommConfig");
    assert_eq!(now, Accelerator::Default);
}

#[test]
fn windows_register_exchange_with_peers_and_deregister_on_drop() {
    cann_sim::require_devices!(3);
    let _s = serial();
    let _ = hccl::take_release_errors();
    let out = threads(3, CommConfig::default(), |comm, dev, _| {
        let buf = DeviceBuffer::<f32>::zeroed(dev, 256).unwrap();
        let w = comm.register(&buf).unwrap();
        assert_eq!(w.size_bytes(), 1024);
        let peers: Vec<u32> = (0..3).filter(|&p| p != comm.rank()).collect();
        w.exchange(&peers).unwrap();
        expect_invalid(w.exchange(&[comm.rank()]), "Window::exchange");
        expect_invalid(w.exchange(&[3]), "Window::exchange");
        expect_invalid(w.exchange(&[peers[0], peers[0]]), "Window::exchange");
        // A second window, exchanged with one peer in a ring, deregistered
        // explicitly.
        let part = buf.slice(..64).unwrap();
        let w2 = comm.register(&part).unwrap();
        let (next, prev) = ((comm.rank() + 1) % 3, (comm.rank() + 2) % 3);
        w2.exchange(&[next, prev]).unwrap();
        w2.deregister().unwrap();
        let empty = DeviceBuffer::<f32>::zeroed(dev, 0).unwrap();
        let e = comm.register(&empty).map(drop);
        expect_invalid(e, "Comm::register");
    });
    assert_eq!(out.len(), 3);
    assert_eq!(hccl::take_release_errors(), vec![]);
}

/// Issue 22 (read in the code): dropping or deregistering a window did not
/// wait for the collectives queued on its memory, which may rely on the
/// registration until they have run. `deregister` now returns only after
/// them (here: after the host function holding the stream is released).
#[test]
fn deregistering_a_window_waits_for_the_collectives_queued_on_its_memory() {
    cann_sim::require_devices!(2);
    let _s = serial();
    let _ = hccl::take_release_errors();
    let out = threads(2, CommConfig::default(), |comm, _, s| {
        let buf = s.clone_from_host(&[1.0f32; 256]).unwrap();
        let mut sum = s.alloc_zeros::<f32>(256).unwrap();
        s.synchronize().unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        s.launch_host_fn(move || {
            let _ = held.recv_timeout(std::time::Duration::from_secs(20));
        })
        .unwrap();
        let w = comm.register(&buf).unwrap();
        // Queued behind the host function: reads the window's memory.
        comm.all_reduce(&buf, &mut sum, ReduceOp::Sum, s).unwrap();
        let t0 = std::time::Instant::now();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(release);
        });
        w.deregister().unwrap();
        let waited = t0.elapsed();
        releaser.join().unwrap();
        (waited, sum.to_host_vec().unwrap())
    });
    for (waited, v) in out {
        assert!(
            waited >= std::time::Duration::from_millis(150),
            "deregistered after {waited:?}, before the queued all-reduce ran"
        );
        assert_eq!(v, vec![2.0f32; 256]);
    }
    assert_eq!(hccl::take_release_errors(), vec![]);
}

#[test]
fn a_communicator_of_several_root_infos_all_reduces() {
    let _s = serial();
    let rt = runtime();
    // HcclGetRootInfoScalable needs a device bound to this thread.
    let dev0 = acl::Device::new(&rt, 0).unwrap();
    dev0.bind().unwrap();
    let roots = vec![
        RootInfo::new_scalable().unwrap(),
        RootInfo::new_scalable().unwrap(),
    ];
    let hs: Vec<_> = (0..3u32)
        .map(|r| {
            let (rt, roots) = (rt.clone(), roots.clone());
            std::thread::spawn(move || {
                let dev = Device::new(&rt, r).unwrap();
                let comm =
                    Comm::init_root_infos(&dev, &roots, 3, r, &CommConfig::default()).unwrap();
                let s = dev.new_stream().unwrap();
                let mut buf = s.clone_from_host(&[r as i32 + 1; 5]).unwrap();
                comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)
                    .unwrap();
                (comm.rank(), comm.size(), buf.to_host_vec().unwrap())
            })
        })
        .collect();
    for (r, h) in hs.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), (r as u32, 3, vec![6; 5]));
    }
    let dev = Device::new(&rt, 0).unwrap();
    let cfg = CommConfig::default();
    expect_invalid(
        Comm::init_root_infos(&dev, &[], 2, 0, &cfg).map(drop),
        "Comm::init_root_infos",
    );
    expect_invalid(
        Comm::init_root_infos(&dev, &roots, 1, 0, &cfg).map(drop),
        "Comm::init_root_infos",
    );
}

#[test]
fn windows_and_settings_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<hccl::Window<'static>>();
    both::<hccl::MemoryRange<'static>>();
    both::<hccl::ActiveMemory<'static>>();
    both::<Accelerator>();
    both::<hccl::ConfigCapability>();
}

#[test]
fn virtual_memory_is_given_to_a_communicator_and_activated() {
    cann_sim::require_devices!(2);
    use acl::vmm::{PhysicalMemory, VirtualRange, granularity};
    let _s = serial();
    let _ = hccl::take_release_errors();
    let out = threads(2, CommConfig::default(), |comm, dev, _| {
        let g = granularity(dev).unwrap();
        let range = VirtualRange::reserve(dev, 2 * g).unwrap();
        let memory = PhysicalMemory::new(dev, g).unwrap();
        let mapping = range.map(0, &memory).unwrap();
        let given = comm.set_memory_range(&range).unwrap();
        let again = comm.set_memory_range(&range).map(drop);
        expect_hccl(again, ErrorCode::Para, "HcclCommSetMemoryRange");
        let active = given.activate(&mapping, &memory).unwrap();
        // Another physical allocation is not what is mapped there.
        let other = PhysicalMemory::new(dev, g).unwrap();
        let wrong = given.activate(&mapping, &other).map(drop);
        expect_hccl(wrong, ErrorCode::Para, "HcclCommActivateCommMemory");
        let big = PhysicalMemory::new(dev, 2 * g).unwrap();
        expect_invalid(
            given.activate(&mapping, &big).map(drop),
            "MemoryRange::activate",
        );
        active.deactivate().unwrap();
        given.unset().unwrap();
        // A range of the other rank's device is refused.
        let peer = Device::new(&runtime(), 1 - comm.rank()).unwrap();
        let far = VirtualRange::reserve(&peer, g).unwrap();
        dev.bind().unwrap();
        let r = comm.set_memory_range(&far).map(drop);
        expect_hccl(r, ErrorCode::Para, "HcclCommSetMemoryRange");
        // Drop order: the activation, range and mapping go before the
        // memory and the reservation (the borrows see to it).
        let given = comm.set_memory_range(&range).unwrap();
        let _active = given.activate(&mapping, &memory).unwrap();
    });
    assert_eq!(out.len(), 2);
    assert_eq!(hccl::take_release_errors(), vec![]);
}
