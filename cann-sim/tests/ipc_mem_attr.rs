//! `aclrtIpcMemSetAttr`: the access link of exported IPC memory, settable on
//! Atlas A3 parts only (hicann/runtime `src/runtime/api/impl/api_impl.cc`
//! `ApiImpl::IpcSetMemoryAttr`); the A3 half runs in a child process with
//! `CANN_SIM_SOC_NAME=Ascend910_9391`.

mod common;

use acl_sys::*;
use common::{loader_recent, loader_set_device};
use std::ffi::{CString, c_char};
use std::ptr::null_mut;

fn export_2mib() -> (*mut std::ffi::c_void, CString) {
    let mut d = null_mut();
    let mut key = [0 as c_char; 65];
    // SAFETY: valid out-pointers; the key buffer holds 65 bytes.
    unsafe {
        assert_eq!(
            aclrtMalloc(&mut d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST).unwrap(),
            0
        );
        let rc = aclrtIpcMemGetExportKey(d, 2 << 20, key.as_mut_ptr(), 65, 0).unwrap();
        assert_eq!(rc, 0, "{}", loader_recent());
        (d, std::ffi::CStr::from_ptr(key.as_ptr()).to_owned())
    }
}

#[test]
fn the_default_a2_part_refuses_to_set_the_link_with_207000() {
    loader_set_device(0);
    let (d, key) = export_2mib();
    // SAFETY: a valid key string; the memory is freed after its key closed.
    unsafe {
        let rc = aclrtIpcMemSetAttr(key.as_ptr(), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 1).unwrap();
        assert_eq!(rc, 207000);
        assert!(loader_recent().contains("Atlas A3 parts only"));
        // The argument checks come first.
        assert_eq!(aclrtIpcMemSetAttr(std::ptr::null(), 0, 0).unwrap(), 107000);
        assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 1, 0).unwrap(), 107000);
        assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 4).unwrap(), 107000);
        assert_eq!(aclrtIpcMemClose(key.as_ptr()).unwrap(), 0);
        assert_eq!(aclrtFree(d).unwrap(), 0);
    }
}

#[test]
#[ignore = "run by an_a3_part_sets_the_link_of_its_own_keys_only"]
fn child_on_an_a3_part() {
    loader_set_device(0);
    let (d, key) = export_2mib();
    // SAFETY: valid key strings; the memory is freed after its key closed.
    unsafe {
        for link in [
            ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO,
            ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS,
        ] {
            let rc = aclrtIpcMemSetAttr(key.as_ptr(), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, link.into());
            assert_eq!(rc.unwrap(), 0, "{}", loader_recent());
        }
        // A UB path is an Ascend 950 attribute.
        assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 2).unwrap(), 207000);
        let other = CString::new("never-exported").unwrap();
        assert_eq!(aclrtIpcMemSetAttr(other.as_ptr(), 0, 0).unwrap(), 107000);
        assert!(loader_recent().contains("not a key this process exported"));
        assert_eq!(aclrtIpcMemClose(key.as_ptr()).unwrap(), 0);
        assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 0).unwrap(), 107000); // withdrawn
        assert_eq!(aclrtFree(d).unwrap(), 0);
    }
}

#[test]
fn an_a3_part_sets_the_link_of_its_own_keys_only() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_on_an_a3_part",
            "--include-ignored",
            "--nocapture",
        ])
        .env("CANN_SIM_SOC_NAME", "Ascend910_9391")
        .env_remove("CANN_BACKEND")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
