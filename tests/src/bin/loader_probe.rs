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
    match acl_sys::aclnn::library() {
        Ok(lib) => println!("aclnn.source: {}", lib.source()),
        Err(e) => println!("aclnn.error: {}", e.to_string().replace('\n', " | ")),
    }
    // Which library each operator came from: the fake operator packages of
    // the loader tests set the workspace size to their own number.
    type GetWorkspaceSize = unsafe fn(
        *const acl_sys::aclnn::aclTensor,
        *mut acl_sys::aclnn::aclTensor,
        *mut u64,
        *mut *mut acl_sys::aclnn::aclOpExecutor,
    )
        -> Result<acl_sys::aclnn::aclnnStatus, acl_sys::LoadError>;
    let ops: [(&str, GetWorkspaceSize); 2] = [
        (
            "aclnnAbsGetWorkspaceSize",
            acl_sys::aclnn::aclnnAbsGetWorkspaceSize,
        ),
        (
            "aclnnNegGetWorkspaceSize",
            acl_sys::aclnn::aclnnNegGetWorkspaceSize,
        ),
    ];
    for (name, f) in ops {
        let (mut size, mut executor) = (0u64, std::ptr::null_mut());
        // SAFETY: null tensors (the fake packages ignore them; a real
        // library refuses them with a status) and valid out-pointers.
        match unsafe {
            f(
                std::ptr::null(),
                std::ptr::null_mut(),
                &mut size,
                &mut executor,
            )
        } {
            Ok(rc) => println!("{name}: rc={rc} size={size}"),
            Err(e) => println!("{name}: error {e}"),
        }
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
