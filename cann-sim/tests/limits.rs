//! Per-device stream and event limits (`CANN_SIM_MAX_STREAMS`,
//! `CANN_SIM_MAX_EVENTS`). The configuration is read once per process: one
//! test in this binary, setting the variables first.

mod common;

use acl_sys::{ACL_ERROR_RT_NO_EVENT_RESOURCE, ACL_ERROR_RT_NO_STREAM_RESOURCE};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

#[test]
fn streams_and_events_beyond_the_device_limits_are_refused() {
    // SAFETY: the only test of this binary, before any other thread reads
    // the environment.
    unsafe {
        std::env::set_var("CANN_SIM_MAX_STREAMS", "4");
        std::env::set_var("CANN_SIM_MAX_EVENTS", "3");
    }
    use_device(0);
    // The primary context's default stream is one of the 4.
    let streams: Vec<_> = (0..3).map(|_| create_stream()).collect();
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtCreateStream(&mut s) };
    let msg = assert_fails(r, rc(ACL_ERROR_RT_NO_STREAM_RESOURCE), "aclrtCreateStream");
    assert_contains(&msg, "CANN_SIM_MAX_STREAMS");
    // A context needs a default stream too.
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtCreateContext(&mut ctx, 0) };
    assert_fails(r, rc(ACL_ERROR_RT_NO_STREAM_RESOURCE), "aclrtCreateContext");
    // Other devices have their own budget.
    on_new_thread(|| {
        use_device(1);
        destroy_stream(create_stream());
    });
    destroy_stream(streams[0]);
    let again = create_stream();
    assert_eq!(cann_sim::stats().device(0).streams, 4);

    let events: Vec<_> = (0..3).map(|_| create_event()).collect();
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtCreateEventWithFlag(&mut e, 1) };
    let msg = assert_fails(
        r,
        rc(ACL_ERROR_RT_NO_EVENT_RESOURCE),
        "aclrtCreateEventWithFlag",
    );
    assert_contains(&msg, "CANN_SIM_MAX_EVENTS");
    destroy_event(events[0]);
    let e2 = create_event();
    for e in [events[1], events[2], e2] {
        destroy_event(e);
    }
    for s in [streams[1], streams[2], again] {
        destroy_stream(s);
    }
    let st = cann_sim::stats().device(0);
    assert_eq!((st.streams, st.events), (1, 0));
}
