//! Runtime objects kept per thread for reuse: the aclnn tensor descriptors
//! (`acl::aclnn::descriptors`) and the aclop data buffers. A dropped
//! argument's descriptor serves the next identical one, never two live
//! arguments at once, never after a tensor list took it; results stay
//! right when memory is freed and another buffer gets its address; the
//! pools stay bounded and give everything back.

mod common;

use acl::DeviceMemory;
use acl::aclnn::{self, Scalar, TensorArg, TensorArgMut, TensorList};
use std::sync::Mutex;

/// Some tests count the simulator's live aclnn handles (process-wide).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> common::Serial {
    common::Serial::lock(&SERIAL)
}

#[test]
fn a_dropped_argument_s_descriptor_serves_the_next_identical_argument() {
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    let a = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let first = TensorArg::new(&a, &[2, 3]).unwrap().as_raw();
    let (again, calls) = cann_sim::calls::count(|| TensorArg::new(&a, &[2, 3]).unwrap());
    assert_eq!(again.as_raw(), first, "the idle descriptor is reused");
    assert_eq!(calls.get("aclCreateTensor"), 0, "{calls}");
    // Any other argument (shape, dtype view, offset) gets its own.
    let other_shape = TensorArg::new(&a, &[3, 2]).unwrap();
    assert_ne!(other_shape.as_raw(), first);
    let col = a.slice(1..6).unwrap();
    let offset = TensorArg::new(&col, &[5]).unwrap();
    assert_ne!(offset.as_raw(), first);
}

#[test]
fn two_live_arguments_over_the_same_memory_never_share_a_descriptor() {
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    let a = s.clone_from_host(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut c = s.alloc_zeros::<f32>(3).unwrap();
    drop(TensorArg::new(&a, &[3]).unwrap());
    let (x, y) = (
        TensorArg::new(&a, &[3]).unwrap(),
        TensorArg::new(&a, &[3]).unwrap(),
    );
    assert_ne!(x.as_raw(), y.as_raw());
    let mut out = TensorArgMut::new(&mut c, &[3]).unwrap();
    aclnn::add(&s, &x, &y, &Scalar::new(1.0f32).unwrap(), &mut out).unwrap();
    drop(out);
    assert_eq!(c.to_host_vec().unwrap(), [2.0, 4.0, 6.0]);
}

#[test]
fn a_descriptor_a_tensor_list_took_is_never_lent_again() {
    cann_sim::sim_only!("counts the simulator's live aclnn handles");
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    aclnn::release_cached_descriptors();
    let before = cann_sim::aclnn::live_handles();
    let a = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let cached = TensorArg::new(&a, &[2]).unwrap().as_raw();
    let member = TensorArg::new(&a, &[2]).unwrap();
    assert_eq!(member.as_raw(), cached);
    let list = TensorList::new(vec![member]).unwrap();
    // The list destroys its member with itself (as CANN's does): the next
    // argument must not get that handle.
    drop(list);
    let next = TensorArg::new(&a, &[2]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    let mut o = TensorArgMut::new(&mut out, &[2]).unwrap();
    aclnn::abs(&s, &next, &mut o).unwrap();
    drop((next, o));
    assert_eq!(out.to_host_vec().unwrap(), [1.0, 2.0]);
    aclnn::release_cached_descriptors();
    assert_eq!(cann_sim::aclnn::live_handles(), before);
}

#[test]
fn memory_freed_and_reallocated_at_the_same_address_computes_with_its_own_contents() {
    let _g = serial();
    // The caching allocator hands a freed block to the next allocation (a
    // device of its own here, so the other tests keep direct memory).
    let d = common::device(1);
    let _ = d.enable_caching_allocator(acl::allocator::AllocatorConfig::default());
    let s = d.new_stream().unwrap();
    let mut out = s.alloc_zeros::<f32>(4).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut reused = false;
    for round in 0..8 {
        let v = round as f32;
        let a = s.clone_from_host(&[v, -v, v, -v]).unwrap();
        reused |= !seen.insert(a.as_raw_ptr() as usize);
        {
            let ta = TensorArg::new(&a, &[4]).unwrap();
            let mut o = TensorArgMut::new(&mut out, &[4]).unwrap();
            aclnn::abs(&s, &ta, &mut o).unwrap();
        }
        assert_eq!(out.to_host_vec().unwrap(), [v; 4], "round {round}");
        drop(a);
    }
    assert!(
        reused,
        "the stream's allocator gave no address twice: the test proves nothing"
    );
}

#[test]
fn the_cache_keeps_at_most_its_capacity_and_gives_every_idle_descriptor_back() {
    cann_sim::sim_only!("counts the simulator's live aclnn handles");
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    aclnn::release_cached_descriptors();
    let before = cann_sim::aclnn::live_handles();
    let a = s.clone_from_host(&[0.0f32; 64]).unwrap();
    // 40 distinct arguments, one at a time: the cache keeps at most 16.
    for n in 1..=40usize {
        drop(TensorArg::new(&a.slice(0..n).unwrap(), &[n]).unwrap());
    }
    let kept = cann_sim::aclnn::live_handles() - before;
    assert_eq!(kept, aclnn::descriptors::CAPACITY);
    // While more than the capacity is live, the rest are made and destroyed
    // per argument.
    let slices: Vec<_> = (1..=20usize).map(|n| a.slice(0..n).unwrap()).collect();
    let live: Vec<_> = slices
        .iter()
        .map(|m| TensorArg::new(m, &[m.len()]).unwrap())
        .collect();
    assert_eq!(cann_sim::aclnn::live_handles() - before, 20);
    drop(live);
    assert_eq!(
        aclnn::release_cached_descriptors(),
        aclnn::descriptors::CAPACITY
    );
    assert_eq!(cann_sim::aclnn::live_handles(), before);
    assert_eq!(aclnn::release_cached_descriptors(), 0);
}

#[test]
fn repeated_calls_over_the_same_buffers_make_no_descriptor_calls() {
    cann_sim::sim_only!("counts the simulator's runtime calls");
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    let a = s.clone_from_host(&[1.0f32; 16]).unwrap();
    let b = s.clone_from_host(&[2.0f32; 16]).unwrap();
    let mut c = s.alloc_zeros::<f32>(16).unwrap();
    let mut step = || {
        let (ta, tb) = (
            TensorArg::new(&a, &[16]).unwrap(),
            TensorArg::new(&b, &[16]).unwrap(),
        );
        let mut tc = TensorArgMut::new(&mut c, &[16]).unwrap();
        aclnn::add(&s, &ta, &tb, &Scalar::new(1.0f32).unwrap(), &mut tc).unwrap();
    };
    step();
    let ((), calls) = cann_sim::calls::count(|| {
        for _ in 0..10 {
            step();
        }
    });
    assert_eq!(calls.get("aclCreateTensor"), 0, "{calls}");
    assert_eq!(calls.get("aclDestroyTensor"), 0, "{calls}");
    // (The alpha scalar is the caller's: made per call here.)
    assert_eq!(calls.get("aclCreateScalar"), 10, "{calls}");
    assert_eq!(c.to_host_vec().unwrap(), [3.0; 16]);
}

#[test]
fn descriptors_of_a_thread_that_ended_are_destroyed() {
    cann_sim::sim_only!("counts the simulator's live aclnn handles");
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    let a = s.clone_from_host(&[1.0f32; 4]).unwrap();
    aclnn::release_cached_descriptors();
    let before = cann_sim::aclnn::live_handles();
    std::thread::scope(|t| {
        // `join` returns after the thread's thread-local destructors ran.
        t.spawn(|| {
            drop(TensorArg::new(&a, &[4]).unwrap());
            drop(TensorArg::new(&a, &[2, 2]).unwrap());
            assert_eq!(cann_sim::aclnn::live_handles(), before + 2);
        })
        .join()
        .unwrap();
    });
    assert_eq!(cann_sim::aclnn::live_handles(), before);
}

#[test]
fn aclop_calls_over_the_same_memory_reuse_their_data_buffers() {
    cann_sim::sim_only!("counts the simulator's runtime calls");
    use acl::aclop::{self, Format, Operator, TensorDesc};
    let _g = serial();
    let s = common::device(0).new_stream().unwrap();
    let a = s.clone_from_host(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    let mut c = s.alloc_zeros::<f32>(3).unwrap();
    let d = TensorDesc::new(acl::DataType::Float, &[3], Format::Nd).unwrap();
    let mut dc = TensorDesc::new(acl::DataType::Float, &[3], Format::Nd).unwrap();
    let mut add = |c: &mut acl::DeviceBuffer<f32>| {
        Operator::new("Add")
            .input(&d, &a)
            .input(&d, &b)
            .output(&mut dc, c)
            .execute(&s)
            .unwrap();
    };
    aclop::release_cached_buffers();
    let ((), first) = cann_sim::calls::count(|| add(&mut c));
    assert_eq!(first.get("aclCreateDataBuffer"), 3, "{first}");
    let ((), again) = cann_sim::calls::count(|| {
        for _ in 0..5 {
            add(&mut c);
        }
    });
    assert_eq!(again.get("aclCreateDataBuffer"), 0, "{again}");
    assert_eq!(again.get("aclDestroyDataBuffer"), 0, "{again}");
    assert_eq!(c.to_host_vec().unwrap(), [11.0, 22.0, 33.0]);
    // Another output buffer: a data buffer of its own.
    let mut other = s.alloc_zeros::<f32>(3).unwrap();
    let ((), calls) = cann_sim::calls::count(|| add(&mut other));
    assert_eq!(calls.get("aclCreateDataBuffer"), 1, "{calls}");
    assert_eq!(other.to_host_vec().unwrap(), [11.0, 22.0, 33.0]);
    assert_eq!(aclop::release_cached_buffers(), 4);
    assert_eq!(aclop::release_cached_buffers(), 0);
}
