//! Adversarial safe code against the ordering of collectives with the other
//! uses of their buffers (`hccl::collectives::{ordered, group, end_group}`
//! over `acl::memory::track`). Each test fails if cann-sim's check mode
//! reports a race or a free under queued work, the data is wrong, or a call
//! hangs. Tests that found a break say so in their doc comment.

mod common;

use acl::{PinnedHostBuffer, Stream};
use hccl::{CommConfig, ReduceOp};
use std::sync::{Arc, Barrier, mpsc};
use std::time::Duration;

const N: usize = 1024;

fn reports() -> u64 {
    cann_sim::check::reports().count
}

fn recent() -> Vec<String> {
    cann_sim::check::reports()
        .recent
        .into_iter()
        .map(|r| r.message)
        .collect()
}

fn config() -> CommConfig {
    CommConfig::default().exec_timeout(Duration::from_secs(5))
}

/// Blocks `stream` behind a host function until the sender is dropped (or
/// 20 s pass). cann-sim runs a device's host functions on one thread: one
/// blocked stream per device at a time.
fn block(stream: &Stream) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv_timeout(Duration::from_secs(20));
        })
        .unwrap();
    tx
}

/// Multi-stream mode: two streams queued tracked work.
fn warm_up(a: &Stream, b: &Stream) {
    for s in [a, b] {
        let mut x = s.alloc_zeros::<u8>(16).unwrap();
        s.memset(&mut x, 1).unwrap();
        s.synchronize().unwrap();
    }
}

/// Regression (found in review). Inside a group, the crate defers the ordering of *every*
/// collective to the group's end, but cann-sim (like `HcclAllReduce`
/// outside a send/receive batch) queues a collective at its call: a host
/// read of its output inside the group does not wait for it.
#[test]
fn a_host_read_inside_a_group_does_not_race_the_groups_collective() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let before = reports();
    let got = common::threads(2, config(), |comm, dev, s| {
        let other = dev.new_stream().unwrap();
        warm_up(s, &other);
        let r = comm.rank();
        let x = s.clone_from_host(&[r as f32 + 1.0; N]).unwrap();
        let mut y = s.alloc_zeros::<f32>(N).unwrap();
        s.synchronize().unwrap();
        if r == 1 {
            std::thread::sleep(Duration::from_millis(300));
        }
        let inside = hccl::group(|| {
            comm.all_reduce(&x, &mut y, ReduceOp::Sum, s)?;
            Ok(if r == 0 { Some(y.to_host_vec()?) } else { None })
        });
        let synced = s.synchronize_timeout(Duration::from_secs(10));
        (
            inside.map_err(|e| e.to_string()),
            synced.map_err(|e| e.to_string()),
            y.to_host_vec().unwrap(),
        )
    });
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    for (inside, synced, y) in got {
        synced.unwrap();
        assert_eq!(y, vec![3.0f32; N]);
        if let Some(v) = inside.unwrap() {
            // Before the collective (deferred) or after it: never a mix.
            assert!(
                v == vec![0.0f32; N] || v == vec![3.0f32; N],
                "a torn read: {:?}",
                &v[..4]
            );
        }
    }
}

/// Regression (found in review). The same cause: a collective inside a group whose buffer has a
/// write queued on another stream is queued at once by HCCL, but its stream
/// waits for that write only at the group's end, after it.
#[test]
fn a_collective_inside_a_group_waits_for_a_queued_write_on_another_stream() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let before = reports();
    let got = common::threads(2, config(), |comm, dev, s| {
        let other = dev.new_stream().unwrap();
        warm_up(s, &other);
        let mut x = s.clone_from_host(&[1.0f32; N]).unwrap();
        let release = block(&other);
        other.memset(&mut x, 0).unwrap(); // queued, other blocked
        let r = hccl::group(|| comm.all_reduce_in_place(&mut x, ReduceOp::Sum, s));
        drop(release);
        let synced = s.synchronize_timeout(Duration::from_secs(10));
        let _ = other.synchronize();
        (
            r.map_err(|e| e.to_string()),
            synced.map_err(|e| e.to_string()),
            x.to_host_vec().map_err(|e| e.to_string()),
        )
    });
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    for (r, synced, x) in got {
        r.unwrap();
        synced.unwrap();
        assert_eq!(x.unwrap(), vec![0.0f32; N], "the sum of the zero fills");
    }
}

/// Regression (found in review). One group receives the two halves of one buffer on two streams.
/// `end_group` prepares every stream's accesses before committing any, so
/// neither stream waits for the other (fine: disjoint bytes), but then each
/// commit *replaces* the buffer's write mark: the first receive is
/// forgotten, and a host read waits only for the second.
#[test]
fn a_group_receiving_two_halves_on_two_streams_keeps_both_writes() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let before = reports();
    let got = common::threads(2, config(), |comm, dev, s| {
        let s2 = dev.new_stream().unwrap();
        warm_up(s, &s2);
        if comm.rank() == 0 {
            let mut x = s.alloc_zeros::<f32>(2 * N).unwrap();
            s.synchronize().unwrap();
            hccl::group(|| {
                let whole = x.slice_mut(..)?;
                let (mut a, mut b) = whole.split_at_mut(N)?;
                comm.recv(&mut a, 1, s)?;
                comm.recv(&mut b, 1, &s2)?;
                Ok(())
            })
            .unwrap();
            // The second half has arrived; the first is still on its way.
            s2.synchronize_timeout(Duration::from_secs(10)).unwrap();
            let got = x.to_host_vec().map_err(|e| e.to_string());
            let _ = s.synchronize_timeout(Duration::from_secs(10));
            Some(got)
        } else {
            let p = s.clone_from_host(&[1.0f32; N]).unwrap();
            let q = s2.clone_from_host(&[2.0f32; N]).unwrap();
            let release = block(s);
            comm.send(&p, 0, s).unwrap(); // matches the first receive, held back
            comm.send(&q, 0, &s2).unwrap(); // matches the second, at once
            std::thread::sleep(Duration::from_millis(500));
            drop(release);
            s.synchronize_timeout(Duration::from_secs(10)).unwrap();
            s2.synchronize_timeout(Duration::from_secs(10)).unwrap();
            None
        }
    });
    let r0 = got[0].clone().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    let mut want = vec![1.0f32; N];
    want.extend_from_slice(&[2.0f32; N]);
    assert_eq!(r0.unwrap(), want);
}

/// Regression (found in review). When a stream's device-side wait fails at the group's end,
/// `end_group` synchronises the *stream's* device on the host and lets
/// HCCL queue the group anyway — but the conflicting work may be on
/// another device (a peer copy reading the buffer; CANN cannot wait for it
/// on the device, hence the failure), which that synchronisation does not
/// wait for: the receive overwrites the buffer under the peer's read.
#[test]
fn a_group_whose_wait_fails_across_devices_does_not_overwrite_a_peers_read() {
    cann_sim::require_devices!(3);
    let _g = common::serial();
    let before = reports();
    let rt = common::runtime();
    let got = common::threads(2, config(), move |comm, dev, s| {
        let other = dev.new_stream().unwrap();
        warm_up(s, &other);
        if comm.rank() == 0 {
            let peer = acl::Device::new(&rt, 2).unwrap();
            let _ = peer.enable_peer_access(dev);
            let t = peer.new_stream().unwrap();
            let mut x = s.clone_from_host(&[5.0f32; N]).unwrap();
            let mut z = t.alloc_zeros::<f32>(N).unwrap();
            t.synchronize().unwrap();
            let release = block(&t);
            t.copy_dtod(&x, &mut z).unwrap(); // device 2 reads x, held back
            let r = hccl::group(|| comm.recv(&mut x, 1, s));
            std::thread::sleep(Duration::from_millis(100));
            drop(release);
            let _ = t.synchronize();
            let _ = s.synchronize_timeout(Duration::from_secs(10));
            Some((r.map_err(|e| e.to_string()), z.to_host_vec().unwrap()))
        } else {
            let p = s.clone_from_host(&[1.0f32; N]).unwrap();
            let _ = comm.send(&p, 0, s);
            let _ = s.synchronize_timeout(Duration::from_secs(10));
            None
        }
    });
    let (r, z) = got[0].clone().unwrap();
    assert_eq!(
        reports(),
        before,
        "group: {r:?}; check reports: {:#?}",
        recent()
    );
    assert_eq!(z, vec![5.0f32; N], "the peer read x before the receive");
}

/// Regression (found in review). When the device-side wait fails at the group's end (an injected
/// `aclrtStreamWaitEvent` failure), HCCL still queues the group's sends,
/// but their accesses are never recorded: the host then rewrites the send
/// buffer under the queued send, and a buffer dropped inside the group is
/// freed under its send.
#[test]
fn a_group_whose_device_wait_fails_still_records_its_sends() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _g = common::serial();
    cann_sim::faults::clear();
    let before = reports();
    let _ = acl::take_release_errors();
    let ready = Arc::new(Barrier::new(2));
    let got = common::threads(2, config(), move |comm, dev, s| {
        let other = dev.new_stream().unwrap();
        warm_up(s, &other);
        if comm.rank() == 0 {
            let pinned = PinnedHostBuffer::from_slice(dev, &[1.0f32; N]).unwrap();
            let mut x = s.alloc_zeros::<f32>(N).unwrap();
            let mut x2 = s.alloc_zeros::<f32>(N).unwrap();
            other.copy_htod(&pinned, &mut x).unwrap(); // last write on `other`
            other.copy_htod(&pinned, &mut x2).unwrap();
            other.synchronize().unwrap();
            s.synchronize().unwrap();
            ready.wait();
            // Each send waits for its buffer's write on `other` when it is
            // called (waits 1 and 2) and again at the group's end, where
            // HCCL queues it: those (3 and 4) fail.
            cann_sim::faults::inject_from("aclrtStreamWaitEvent", 3, 507899);
            let r = hccl::group(|| {
                comm.send(&x2, 1, s)?;
                comm.send(&x, 1, s)?;
                drop(x2); // kept alive by the group until its end
                Ok(())
            });
            cann_sim::faults::clear();
            // An allocation frees what waited for finished work: x2, whose
            // only recorded use (a copy on `other`) has run.
            other.synchronize().unwrap();
            let _ = s.alloc_zeros::<u8>(16);
            // The sends are queued (rank 1 receives later): rewriting x now
            // must wait for its send.
            let host = x
                .copy_from_host(&[7.0f32; N])
                .map(|()| "host write done".to_string())
                .map_err(|e| e.to_string());
            let _ = s.synchronize_timeout(Duration::from_secs(10));
            Some((r.map_err(|e| e.to_string()), host))
        } else {
            ready.wait();
            std::thread::sleep(Duration::from_millis(500));
            let mut a = s.alloc_zeros::<f32>(N).unwrap();
            let mut b = s.alloc_zeros::<f32>(N).unwrap();
            let r = hccl::group(|| {
                comm.recv(&mut a, 0, s)?;
                comm.recv(&mut b, 0, s)?;
                Ok(())
            });
            let synced = s.synchronize_timeout(Duration::from_secs(10));
            Some((
                r.and(synced.map_err(Into::into)).map_err(|e| e.to_string()),
                Ok(format!(
                    "{:?} {:?}",
                    &a.to_host_vec().unwrap()[..2],
                    &b.to_host_vec().unwrap()[..2]
                )),
            ))
        }
    });
    let released = acl::take_release_errors();
    assert_eq!(
        reports(),
        before,
        "ranks: {got:?}; release errors: {released:?}; check reports: {:#?}",
        recent()
    );
    let (_, received) = got[1].clone().unwrap();
    assert_eq!(received.unwrap(), "[1.0, 1.0] [1.0, 1.0]", "{got:?}");
}

/// Coverage: outside groups, a collective waits on the device for a write
/// queued on another stream, and the host waits for the collective; a
/// buffer dropped right after a collective is freed after it.
#[test]
fn collectives_outside_groups_are_ordered_with_other_streams_and_the_host() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let before = reports();
    let got = common::threads(2, config(), |comm, dev, s| {
        let other = dev.new_stream().unwrap();
        warm_up(s, &other);
        let r = comm.rank();
        let mut x = s.clone_from_host(&[9.0f32; N]).unwrap();
        let release = block(&other);
        let fill = PinnedHostBuffer::from_slice(dev, &[r as f32 + 1.0; N]).unwrap();
        other.copy_htod(&fill, &mut x).unwrap(); // queued, other blocked
        comm.all_reduce_in_place(&mut x, ReduceOp::Sum, s).unwrap();
        let y = s.clone_from_host(&[1.0f32; N]).unwrap();
        let mut z = s.alloc_zeros::<f32>(N).unwrap();
        comm.all_reduce(&y, &mut z, ReduceOp::Sum, s).unwrap();
        drop(y); // freed after the collective
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(release);
        });
        let got = x.to_host_vec().unwrap(); // waits for the collective
        releaser.join().unwrap();
        s.synchronize_timeout(Duration::from_secs(10)).unwrap();
        dev.synchronize().unwrap();
        (got, z.to_host_vec().unwrap())
    });
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    for (x, z) in got {
        assert_eq!(x, vec![3.0f32; N]);
        assert_eq!(z, vec![2.0f32; N]);
    }
}

/// Issue 22 (read in the code, not shown by the simulator). A communicator
/// dropped inside a group was destroyed at once, before HCCL queues the
/// group's send at its end (the real library does; cann-sim queues it at
/// the call, so this passed before the fix too). It is now destroyed at
/// the group's end, after the send is queued: this checks that deferred
/// destroy delivers the data, reports nothing and records no release error.
#[test]
fn a_comm_dropped_inside_a_group_is_destroyed_after_the_groups_send() {
    cann_sim::require_devices!(2);
    let _g = common::serial();
    let rt = common::runtime();
    let root = hccl::RootInfo::for_device(&acl::Device::new(&rt, 0).unwrap()).unwrap();
    let before = reports();
    let hs: Vec<_> = (0..2u32)
        .map(|r| {
            let (rt, root) = (rt.clone(), root.clone());
            std::thread::spawn(move || -> Result<Vec<f32>, String> {
                let dev = acl::Device::new(&rt, r).unwrap();
                let comm = hccl::Comm::init_root_info(&dev, &root, 2, r, &config()).unwrap();
                let s = dev.new_stream().unwrap();
                if r == 0 {
                    let x = s.clone_from_host(&[1.0f32; N]).unwrap();
                    hccl::group(move || {
                        comm.send(&x, 1, &s)?;
                        drop(comm); // inside the group, before its end
                        Ok(())
                    })
                    .map_err(|e| e.to_string())?;
                    Ok(Vec::new())
                } else {
                    let mut y = s.alloc_zeros::<f32>(N).unwrap();
                    comm.recv(&mut y, 0, &s).map_err(|e| e.to_string())?;
                    s.synchronize_timeout(Duration::from_secs(10))
                        .map_err(|e| e.to_string())?;
                    y.to_host_vec().map_err(|e| e.to_string())
                }
            })
        })
        .collect();
    let got: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(got[0], Ok(Vec::new()));
    assert_eq!(got[1], Ok(vec![1.0f32; N]));
    assert_eq!(reports(), before, "{:#?}", recent());
    assert!(hccl::take_release_errors().is_empty());
}
