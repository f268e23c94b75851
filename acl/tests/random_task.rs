//! The runtime's random-number task (`Stream::random_fill`,
//! `Stream::dropout_bitmask`): distributions, the device-side counter that
//! makes a captured task draw new numbers at every launch, and each
//! misuse's exact error.

use acl::graph::CaptureMode;
use acl::random::task::{Distribution, RandomCounter};
use acl::{Device, ErrorCode, Runtime};

fn device() -> Device {
    cann_sim::install().expect("cann-sim installs");
    let rt = Runtime::init().expect("aclInit");
    Device::new(&rt, 0).expect("device 0")
}

#[test]
fn random_fill_draws_in_range_and_advances_its_counter() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mut counter = RandomCounter::new(&s).unwrap();
    let mut x = s.alloc_zeros::<f32>(4096).unwrap();
    let uniform = Distribution::Uniform {
        low: 2.0,
        high: 3.0,
    };
    s.random_fill(&mut x, uniform, 5, &mut counter).unwrap();
    let first = x.to_host_vec().unwrap();
    assert!(first.iter().all(|v| (2.0..3.0).contains(v)));
    let mean = first.iter().map(|&v| f64::from(v)).sum::<f64>() / 4096.0;
    assert!((mean - 2.5).abs() < 0.02, "mean {mean}");
    assert_eq!(counter.to_host().unwrap()[0], 4);
    s.random_fill(&mut x, uniform, 5, &mut counter).unwrap();
    assert_ne!(x.to_host_vec().unwrap(), first, "the counter moved on");
    counter.reset(&s).unwrap();
    s.random_fill(&mut x, uniform, 5, &mut counter).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), first, "a reset counter repeats");
}

#[test]
fn normal_numbers_in_f16_have_the_asked_mean_and_deviation() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mut counter = RandomCounter::new(&s).unwrap();
    let mut x = s.alloc_zeros::<half::f16>(8192).unwrap();
    let (mean, std) = (half::f16::from_f32(-1.0), half::f16::from_f32(0.5));
    s.random_fill(&mut x, Distribution::Normal { mean, std }, 9, &mut counter)
        .unwrap();
    let v: Vec<f64> = x
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|h| h.to_f64())
        .collect();
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
    assert!(
        (m + 1.0).abs() < 0.03 && (sd - 0.5).abs() < 0.03,
        "{m} {sd}"
    );
}

#[test]
fn a_captured_random_task_draws_new_numbers_at_every_launch() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mut counter = RandomCounter::new(&s).unwrap();
    let mut mask = s.alloc_zeros::<u8>(128).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::ThreadLocal, |s| {
            s.dropout_bitmask(&mut mask, 1024, 0.5, 3, &mut counter)
        })
        .unwrap();
    let mut masks = Vec::new();
    for _ in 0..3 {
        graph.launch(&s).unwrap();
        masks.push(mask.to_host_vec().unwrap());
    }
    assert_ne!(masks[0], masks[1]);
    assert_ne!(masks[1], masks[2]);
    let kept: u32 = masks.iter().flatten().map(|b| b.count_ones()).sum();
    let rate = f64::from(kept) / 3072.0;
    assert!((rate - 0.5).abs() < 0.05, "kept {rate}");
    assert_eq!(
        counter.to_host().unwrap()[0],
        12,
        "three launches, three draws"
    );
}

#[test]
fn dropout_bitmask_refuses_a_short_mask_and_a_ratio_outside_0_1() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mut counter = RandomCounter::new(&s).unwrap();
    let mut mask = s.alloc_zeros::<u8>(2).unwrap();
    let e = s
        .dropout_bitmask(&mut mask, 17, 0.1, 0, &mut counter)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Stream::dropout_bitmask: 17 elements need 3 mask bytes; the mask has 2"
    );
    let e = s
        .dropout_bitmask(&mut mask, 16, 1.5, 0, &mut counter)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Stream::dropout_bitmask: ratio 1.5 is not a fraction in [0, 1]"
    );
    assert_eq!(counter.to_host().unwrap(), [0, 0], "nothing ran");
}

#[test]
fn normal_numbers_of_an_integer_type_are_the_runtimes_error() {
    cann_sim::sim_only!("asserts the simulated A2's code");
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mut counter = RandomCounter::new(&s).unwrap();
    let mut x = s.alloc_zeros::<i32>(4).unwrap();
    let e = s
        .random_fill(
            &mut x,
            Distribution::Normal { mean: 0, std: 1 },
            0,
            &mut counter,
        )
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtParamInvalid), "{e}");
    let mut y = s.alloc_zeros::<i8>(4).unwrap();
    let e = s
        .random_fill(
            &mut y,
            Distribution::Uniform { low: 0, high: 3 },
            0,
            &mut counter,
        )
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
}
