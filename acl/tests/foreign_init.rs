//! When someone else in the process initialised AscendCL first (aclInit
//! answers ACL_ERROR_REPEAT_INITIALIZE), the crate shares that session and
//! never finalizes it. Its own test binary: the session is process-wide.

#[test]
fn someone_elses_session_is_used_and_never_finalized() {
    cann_sim::install().unwrap();
    // Another library initialises AscendCL directly.
    // SAFETY: a null config path is allowed.
    assert_eq!(unsafe { acl_sys::aclInit(std::ptr::null()) }.unwrap(), 0);
    {
        let rt = acl::Runtime::init().expect("a repeat initialisation is not an error");
        assert!(!rt.owns_initialization());
        let npu = acl::Device::new(&rt, 0).unwrap();
        let buf = acl::DeviceBuffer::from_host(&npu, &[1u8, 2, 3]).unwrap();
        assert_eq!(buf.to_host_vec().unwrap(), [1, 2, 3]);
    }
    // Every handle is gone; the other owner's session must still be alive,
    // so its aclFinalize succeeds (a second one would be 100037).
    // SAFETY: no arguments.
    assert_eq!(unsafe { acl_sys::aclFinalize() }.unwrap(), 0);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn version_displays_as_dotted_triple() {
    let v = acl::Version {
        major: 1,
        minor: 17,
        patch: 0,
    };
    assert_eq!(v.to_string(), "1.17.0");
}
