//! Custom kernels through the safe API on the simulator: loading from a file
//! and from memory, typed arguments (memory, scalars, placeholders),
//! launches ordered with the memory's other queued accesses, and every misuse with
//! its exact error.

mod common;

use acl::kernel::{Kernel, KernelArgs, KernelBinary, MAX_KERNEL_PARAMS};
use acl::{DeviceBuffer, Error, ErrorCode};

fn binary(npu: &acl::Device) -> KernelBinary {
    let path = cann_sim::sample_kernels().expect("the sample kernels were built");
    KernelBinary::load_file(npu, path).unwrap()
}

#[test]
fn handles_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<KernelBinary>();
    both::<Kernel>();
    both::<KernelArgs<'static>>();
}

#[test]
fn vadd_adds_on_a_stream() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let vadd = binary(&npu).kernel("vadd_f32").unwrap();
    assert_eq!(vadd.name(), "vadd_f32");
    let n = 4099usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let dx = stream.clone_from_host(&x).unwrap();
    let dy = stream.clone_from_host(&y).unwrap();
    let mut dz = stream.alloc_zeros::<f32>(n).unwrap();
    let args = KernelArgs::new()
        .input(&dx)
        .input(&dy)
        .output(&mut dz)
        .scalar(n as u64);
    // SAFETY: vadd_f32(x, y, z, n) reads n floats of x, y and writes n of z.
    unsafe { vadd.launch(&stream, 8, args).unwrap() };
    let z = dz.to_host_vec().unwrap();
    assert!(z.iter().enumerate().all(|(i, &v)| v == (3 * i) as f32));
}

#[test]
fn a_binary_loaded_from_memory_works_like_one_from_a_file() {
    cann_sim::sim_only!("launches the simulator's sample kernels");
    let npu = common::device(0);
    let bytes = std::fs::read(cann_sim::sample_kernels().unwrap()).unwrap();
    let bin = KernelBinary::load_data(&npu, &bytes).unwrap();
    let k = bin.kernel("record_blocks").unwrap();
    let stream = npu.default_stream();
    let mut out = stream.alloc_zeros::<u32>(5).unwrap();
    // SAFETY: record_blocks(out) writes out[block] for each of the 5 blocks.
    unsafe {
        k.launch(&stream, 5, KernelArgs::new().output(&mut out))
            .unwrap()
    };
    assert_eq!(out.to_host_vec().unwrap(), [5000, 5001, 5002, 5003, 5004]);
    bin.close().unwrap();
}

#[test]
fn placeholder_data_reaches_the_kernel() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let k = binary(&npu).kernel("scale_add").unwrap();
    let x = stream.clone_from_host(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = stream.clone_from_host(&[1.0f32; 3]).unwrap();
    // ScaleTiling { float alpha; uint32_t reserved; uint64_t n; }
    let tiling = [u64::from(2.0f32.to_bits()), 3];
    let args = KernelArgs::new()
        .input(&x)
        .output(&mut y)
        .placeholder(&tiling);
    // SAFETY: scale_add(x, y, tiling) reads/writes tiling.n floats.
    unsafe { k.launch(&stream, 2, args).unwrap() };
    assert_eq!(y.to_host_vec().unwrap(), [3.0, 5.0, 7.0]);
}

#[test]
fn scalars_of_every_size_and_float_bits_arrive_in_order() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let k = binary(&npu).kernel("sum20").unwrap();
    let mut out = stream.alloc_zeros::<u64>(2).unwrap();
    let mut args = KernelArgs::new().output(&mut out).scalar(0.75f32);
    for i in 1..=20u64 {
        args = match i % 3 {
            0 => args.scalar(i),
            1 => args.scalar(i as u32),
            _ => args.scalar(i as u8),
        };
    }
    assert_eq!(args.len(), 22);
    // SAFETY: sum20(out, fbits, a0..a19) writes out[0..2] from block 0.
    unsafe { k.launch(&stream, 1, args).unwrap() };
    let got = out.to_host_vec().unwrap();
    assert_eq!(got[0], 210);
    assert_eq!(f32::from_bits(got[1] as u32), 1.5);
}

#[test]
fn memory_written_on_another_stream_is_ordered_with_the_launch() {
    let npu = common::device(0);
    let home = npu.new_stream().unwrap();
    let other = npu.new_stream().unwrap();
    let k = binary(&npu).kernel("vadd_f32").unwrap();
    let n = 1 << 16;
    // Queued on `home`: a fill the kernel (on `other`) must see.
    let mut x = home.alloc_zeros::<f32>(n).unwrap();
    let ones = acl::PinnedHostBuffer::from_slice(&npu, &vec![1.0f32; n]).unwrap();
    home.copy_htod(&ones, &mut x).unwrap();
    let mut z = home.alloc_zeros::<f32>(n).unwrap();
    let args = KernelArgs::new()
        .input(&x)
        .input(&x)
        .output(&mut z)
        .scalar(n as u64);
    // SAFETY: vadd_f32 as above.
    unsafe { k.launch(&other, 4, args).unwrap() };
    // Reading z waits for its last write: the kernel.
    assert!(z.to_host_vec().unwrap().iter().all(|&v| v == 2.0));
}

#[test]
fn a_missing_kernel_is_param_invalid_naming_it() {
    let npu = common::device(0);
    let err = binary(&npu).kernel("nope").unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid));
    assert_eq!(err.function(), Some("aclrtBinaryGetFunction"));
    assert!(err.message().unwrap().contains("\"nope\""), "{err}");
    let err = binary(&npu).kernel("").unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            function: "KernelBinary::kernel",
            ..
        }
    ));
}

#[test]
fn malformed_binaries_are_rejected() {
    let npu = common::device(0);
    let err = KernelBinary::load_data(&npu, b"not a shared library").unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid));
    assert_eq!(err.function(), Some("aclrtBinaryLoadFromData"));
    let err = KernelBinary::load_data(&npu, b"").unwrap_err();
    assert_eq!(
        err.to_string(),
        "KernelBinary::load_data: the binary is empty"
    );
    let err = KernelBinary::load_file(&npu, "/nonexistent/k.so").unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid));
    assert!(err.message().unwrap().contains("cannot read"), "{err}");
}

#[test]
fn launch_misuse_is_refused_before_any_call() {
    cann_sim::require_devices!(2);
    let npu = common::device(0);
    let k = binary(&npu).kernel("record_blocks").unwrap();
    let stream = npu.default_stream();
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    // SAFETY: refused before the kernel could run.
    let err = unsafe { k.launch(&stream, 0, KernelArgs::new().output(&mut out)) }.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Kernel::launch: the block count must be positive"
    );
    let mut args = KernelArgs::new();
    for _ in 0..=MAX_KERNEL_PARAMS {
        args = args.scalar(0u8);
    }
    // SAFETY: refused before the kernel could run.
    let err = unsafe { k.launch(&stream, 1, args) }.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Kernel::launch: 129 parameters; a kernel takes at most 128"
    );
    let big = vec![0u8; 70_000];
    // SAFETY: refused before the kernel could run.
    let err = unsafe { k.launch(&stream, 1, KernelArgs::new().placeholder(&big)) }.unwrap_err();
    assert!(err.to_string().contains("at most 65536"), "{err}");
    // SAFETY: refused before the kernel could run.
    let err =
        unsafe { k.launch(&stream, 1, KernelArgs::new().placeholder::<u8>(&[])) }.unwrap_err();
    assert!(err.to_string().contains("argument 0 is empty"), "{err}");
    // Another device's stream or memory.
    let npu1 = common::device(1);
    let s1 = npu1.default_stream();
    // SAFETY: refused before the kernel could run.
    let err = unsafe { k.launch(&s1, 1, KernelArgs::new().output(&mut out)) }.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Kernel::launch: kernel record_blocks is loaded on device 0, but the stream is on device 1"
    );
    let mut other = DeviceBuffer::<u32>::zeroed(&npu1, 4).unwrap();
    // SAFETY: refused before the kernel could run.
    let err = unsafe { k.launch(&stream, 1, KernelArgs::new().output(&mut other)) }.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Kernel::launch: an argument is memory of device 1, but the kernel runs on device 0"
    );
}

#[test]
fn kernels_keep_their_binary_loaded_after_it_is_dropped() {
    let npu = common::device(0);
    let k = binary(&npu).kernel("record_blocks").unwrap();
    let stream = npu.new_stream().unwrap();
    let mut out = stream.alloc_zeros::<u32>(2).unwrap();
    // SAFETY: record_blocks writes out[block] for 2 blocks.
    unsafe {
        k.launch(&stream, 2, KernelArgs::new().output(&mut out))
            .unwrap()
    };
    let from_another_thread = std::thread::spawn(move || {
        let stream = k.binary().device().new_stream().unwrap();
        let mut out = stream.alloc_zeros::<u32>(1).unwrap();
        // SAFETY: as above, 1 block.
        unsafe {
            k.launch(&stream, 1, KernelArgs::new().output(&mut out))
                .unwrap()
        };
        out.to_host_vec().unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(from_another_thread, [1000]);
    assert_eq!(out.to_host_vec().unwrap(), [2000, 2001]);
}
