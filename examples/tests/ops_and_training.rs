//! The `ops` example and the `mlp_sgd` MLP (data-parallel training's base)
//! on the simulator: every operator of the `ops` example matches the host,
//! and training lowers the loss and ends above 90% accuracy in both
//! precisions, with the f16 run's loss scaler actually reacting to
//! overflow. (The `train_mlp` example's tests: `train_acceptance.rs`.)

use acl::{Device, Runtime};
use examples::mlp_sgd::{Config, Precision, train};

fn stream() -> acl::Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

#[test]
fn ops_example_matches_the_host_for_every_operator() {
    let checks = examples::ops_demo::run(&stream()).unwrap();
    assert_eq!(checks.len(), 10);
    for c in &checks {
        assert!(c.ok, "{c}");
    }
}

fn trains(precision: Precision) -> Vec<examples::mlp_sgd::EpochReport> {
    let cfg = Config {
        precision,
        ..Config::default()
    };
    let mut seen = 0;
    let reports = train(&stream(), &cfg, |_| seen += 1).unwrap();
    assert_eq!(seen, cfg.epochs);
    assert_eq!(reports.len(), cfg.epochs);
    let (first, last) = (&reports[0], &reports[cfg.epochs - 1]);
    assert!(
        last.loss < first.loss * 0.5,
        "loss did not fall: {first} -> {last}"
    );
    assert!(last.accuracy > 0.90, "final accuracy too low: {last}");
    reports
}

#[test]
fn f32_training_lowers_the_loss_and_ends_above_90_percent() {
    let reports = trains(Precision::F32);
    assert!(reports.iter().all(|r| r.scale.is_none() && r.skipped == 0));
}

#[test]
fn f16_training_with_loss_scaling_lowers_the_loss_and_ends_above_90_percent() {
    let reports = trains(Precision::F16);
    // The scale grew after good steps and was halved on overflow.
    let skipped: usize = reports.iter().map(|r| r.skipped).sum();
    assert!(skipped > 0, "no overflow was ever detected: {reports:?}");
    let scales: Vec<f32> = reports.iter().filter_map(|r| r.scale).collect();
    assert!(scales.iter().any(|&s| s > 65536.0), "{scales:?}");
}

#[test]
fn f16_training_skips_steps_and_lowers_the_scale_when_it_starts_too_high() {
    // A scale far above f16's range overflows at once: the first steps are
    // skipped (the weights untouched) until the scale has come down.
    let cfg = Config {
        precision: Precision::F16,
        epochs: 2,
        init_scale: 1.0e12,
        ..Config::default()
    };
    let reports = train(&stream(), &cfg, |_| {}).unwrap();
    assert!(reports[0].skipped >= 10, "{reports:?}");
    assert!(reports[0].scale.unwrap() < 1.0e12);
    assert!(reports[1].loss.is_finite());
}

#[test]
fn a_sample_count_that_is_not_a_multiple_of_the_batch_is_refused() {
    let cfg = Config {
        samples: 100,
        batch: 64,
        ..Config::default()
    };
    match train(&stream(), &cfg, |_| {}) {
        Err(acl::Error::InvalidArgument { function, reason }) => {
            assert_eq!(function, "mlp_sgd::train");
            assert_eq!(reason, "samples (100) must be a multiple of batch (64)");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}
