//! Prints what the loaders of the three -sys crates find in this process's
//! environment, and the outcome of a few calls, one `key: value` line each.
//! The loader tests run it with different environments.

fn main() {
    match acl_sys::library() {
        Ok(lib) => println!("acl.source: {}", lib.source()),
        Err(e) => println!("acl.error: {}", e.to_string().replace('\n', " | ")),
    }
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    match unsafe { acl_sys::aclrtGetVersion(&mut a, &mut b, &mut c) } {
        Ok(rc) => println!("aclrtGetVersion: rc={rc} {a}.{b}.{c}"),
        Err(e) => println!("aclrtGetVersion: error {e}"),
    }
    let mut n = 0u32;
    // SAFETY: a valid out-pointer.
    match unsafe { acl_sys::aclrtGetDeviceCount(&mut n) } {
        Ok(rc) => println!("aclrtGetDeviceCount: rc={rc} n={n}"),
        Err(e) => println!("aclrtGetDeviceCount: error {e}"),
    }
    // SAFETY: a null stream; the call is refused before it reaches a
    // library that declares the function differently.
    match unsafe { acl_sys::aclrtUnuseStreamResInCurrentThread(std::ptr::null_mut()) } {
        Ok(rc) => println!("aclrtUnuseStreamResInCurrentThread: rc={rc}"),
        Err(e) => println!("aclrtUnuseStreamResInCurrentThread: error {e}"),
    }
    match hccl_sys::library() {
        Ok(lib) => println!("hccl.source: {}", lib.source()),
        Err(e) => println!("hccl.error: {}", e.to_string().replace('\n', " | ")),
    }
    match dcmi_sys::library() {
        Ok(lib) => println!("dcmi.source: {}", lib.source()),
        Err(e) => println!("dcmi.error: {}", e.to_string().replace('\n', " | ")),
    }
}
