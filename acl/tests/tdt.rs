//! Data-transfer channels (`acl::tdt`): datasets go through in order, with
//! their markers; timeouts end in the runtime's full/empty codes; a sender
//! and a receiver on two threads meet; misuse is refused by name.

mod common;

use acl::tdt::{Channel, HostTensor, TensorKind};
use acl::{DataType, ErrorCode};
use std::time::Duration;

#[test]
fn datasets_arrive_in_order_with_their_end_of_sequence_marker() {
    let npu = common::device(0);
    let ch = Channel::with_capacity(&npu, "acl-tdt-order", 4).unwrap();
    let a = HostTensor::from_slice(&[2, 3], &[1i32, 2, 3, 4, 5, 6]);
    let b = HostTensor::from_slice(&[2], &[half::f16::from_f32(0.5), half::f16::from_f32(-2.0)]);
    ch.send(&[a.clone(), b.clone()], None).unwrap();
    ch.send(&[HostTensor::marker(TensorKind::EndOfSequence)], None)
        .unwrap();
    assert_eq!(ch.len().unwrap(), 2);
    let first = ch.receive(Some(Duration::ZERO)).unwrap();
    assert_eq!(first, vec![a, b]);
    assert_eq!(first[1].dtype, Some(DataType::Float16));
    let end = ch.receive(Some(Duration::ZERO)).unwrap();
    assert_eq!(end.len(), 1);
    assert_eq!(end[0].kind, TensorKind::EndOfSequence);
    assert_eq!(end[0].dtype, None);
    assert!(ch.is_empty().unwrap());
}

#[test]
fn a_full_or_empty_channel_times_out_with_the_runtimes_codes() {
    let npu = common::device(0);
    let ch = Channel::with_capacity(&npu, "acl-tdt-timeouts", 2).unwrap();
    let e = ch.receive(Some(Duration::ZERO)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtQueueEmpty), "{e}");
    let t = HostTensor::from_slice(&[1], &[7u8]);
    ch.send(std::slice::from_ref(&t), None).unwrap();
    ch.send(std::slice::from_ref(&t), None).unwrap();
    let e = ch.send(&[t], Some(Duration::from_millis(20))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtQueueFull), "{e}");
}

#[test]
fn a_receiver_on_another_thread_gets_what_is_sent_later() {
    let npu = common::device(0);
    let ch = std::sync::Arc::new(Channel::with_capacity(&npu, "acl-tdt-threads", 2).unwrap());
    let rx = {
        let ch = ch.clone();
        std::thread::spawn(move || ch.receive(Some(Duration::from_secs(30))))
    };
    std::thread::sleep(Duration::from_millis(50));
    let t = HostTensor::from_slice(&[3], &[1.0f64, 2.0, 3.0]);
    ch.send(std::slice::from_ref(&t), None).unwrap();
    assert_eq!(rx.join().unwrap().unwrap(), vec![t]);
}

#[test]
fn misuse_is_refused_before_the_runtime_is_asked() {
    let npu = common::device(0);
    let e = Channel::with_capacity(&npu, "a\0b", 2).unwrap_err();
    assert!(matches!(e, acl::Error::InvalidArgument { .. }), "{e}");
    let ch = Channel::with_capacity(&npu, "acl-tdt-misuse", 2).unwrap();
    let e = ch.send(&[], None).unwrap_err();
    assert!(e.to_string().contains("at least one item"), "{e}");
    let mut bad = HostTensor::from_slice(&[4], &[1u16, 2, 3, 4]);
    bad.dims = vec![5];
    let e = ch.send(&[bad], None).unwrap_err();
    assert!(e.to_string().contains("needs Some(10) bytes"), "{e}");
    // A capacity the runtime refuses (2 to 8192).
    let e = Channel::with_capacity(&npu, "acl-tdt-cap", 1).unwrap_err();
    assert!(
        e.to_string().contains("acltdtCreateChannelWithCapacity"),
        "{e}"
    );
}

#[test]
fn channels_are_send_and_sync_and_drop_without_release_errors() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Channel>();
    send_sync::<HostTensor>();
    let npu = common::device(0);
    drop(Channel::with_capacity(&npu, "acl-tdt-drop", 2).unwrap());
    // The name is free again once dropped.
    drop(Channel::with_capacity(&npu, "acl-tdt-drop", 2).unwrap());
    assert!(
        acl::take_release_errors()
            .iter()
            .all(|r| !r.resource.starts_with("tdt::"))
    );
}
