//! Source 1 of the search order: a table installed in code wins over every
//! file source, and a library loaded from elsewhere cannot be replaced.

use acl_sys::loader::Source;

#[test]
fn installed_table_is_used_without_searching_and_reinstall_is_harmless() {
    cann_sim::sim_only!("installs and inspects the simulator's own tables");
    // This process never loads a file: the installed table answers.
    cann_sim::install().expect("install");
    let lib = acl_sys::library().expect("installed");
    assert_eq!(lib.source(), &Source::Installed("cann-sim"));
    assert_eq!(lib.version(), "ACL 1.17.0");
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { acl_sys::aclrtGetVersion(&mut a, &mut b, &mut c) }.unwrap();
    assert_eq!((rc, a, b, c), (0, 1, 17, 0));
    cann_sim::install().expect("a second install of the same provider is a no-op");
    // SAFETY: an empty table has no function pointer that could break a
    // contract (and it is refused anyway).
    let other = unsafe { acl_sys::install(acl_sys::Api::empty(), "someone-else") }.unwrap_err();
    assert_eq!(
        other.to_string(),
        "cannot install someone-else as AscendCL: AscendCL was already loaded from table installed in code by \
         cann-sim; install the table before the first call"
    );
}
