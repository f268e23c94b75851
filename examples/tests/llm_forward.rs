//! The `llm_forward` example's logic on the simulator: in f32, f16 and
//! bf16 every step's logits stay within the type's bound of the host
//! reference, and in f32 the device chooses the reference's tokens.

use acl::{Device, Runtime};
use examples::llm_forward::{Config, Float, run};
use half::{bf16, f16};

fn stream() -> acl::Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

fn decodes<T: Float>() -> examples::llm_forward::Report {
    let cfg = Config {
        generate: 6,
        ..Config::default()
    };
    let mut seen = 0;
    let report = run::<T>(&stream(), &cfg, |_| seen += 1).unwrap();
    assert_eq!((seen, report.steps.len()), (6, 6));
    assert_eq!(report.prompt.len(), cfg.prompt);
    // The prompt is one step (prefill), then one token per step.
    let positions: Vec<usize> = report.steps.iter().map(|s| s.pos).collect();
    assert_eq!(positions, [7, 8, 9, 10, 11, 12]);
    let bound = Config::tolerance(T::NAME);
    assert!(
        report.max_abs_err() <= bound,
        "{}: {} > {bound}",
        T::NAME,
        report.max_abs_err()
    );
    assert!(report.steps.iter().all(|s| (0..256).contains(&s.token)));
    assert!(report.tokens_per_second() > 0.0);
    report
}

#[test]
fn greedy_decoding_matches_the_host_reference_in_every_dtype() {
    let r = decodes::<f32>();
    assert_eq!(
        r.agreements(),
        r.steps.len(),
        "f32 picks the reference's tokens"
    );
    decodes::<f16>();
    decodes::<bf16>();
}

#[test]
fn a_head_width_that_does_not_split_is_refused() {
    let cfg = Config {
        heads: 3,
        ..Config::default()
    };
    let e = run::<f32>(&stream(), &cfg, |_| {}).unwrap_err();
    assert!(e.to_string().contains("heads"), "{e}");
}
