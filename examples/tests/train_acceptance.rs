//! The acceptance of issue 24 item 6 on the simulator: the `train_mlp`
//! (LayerNorm, GELU, dropout, fused AdamW, f16 loss scaling) and
//! `train_cnn` (convolution, batch norm, max pooling) training steps are
//! each one captured graph (the MLP's dropout mask drawn inside it), a
//! step's host calls (batch copies, launch) never synchronise the host, and
//! a few steps lower the loss.

use acl::{Device, Runtime, Stream};
use examples::{train_cnn, train_mlp};
use train_mlp::Precision;

fn stream() -> Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

fn short_mlp(precision: Precision) -> train_mlp::Config {
    train_mlp::Config {
        precision,
        epochs: 2,
        samples: 512,
        ..train_mlp::Config::default()
    }
}

/// Runs the MLP and checks what every run must show: one graph launch and
/// no host synchronisation per step, a falling loss.
fn mlp_steps_without_host_syncs(cfg: &train_mlp::Config) -> Vec<train_mlp::EpochReport> {
    let trained = train_mlp::train_measured(&stream(), cfg, |_| {}).unwrap();
    let step = &trained.first_step;
    assert_eq!(step.host_syncs(), 0, "{step:?}");
    assert_eq!(step.host_polls(), 0, "{step:?}");
    assert_eq!(
        step.get("aclmdlRIExecuteAsync"),
        1,
        "one graph launch: {step:?}"
    );
    let r = &trained.reports;
    assert_eq!(r.len(), cfg.epochs);
    assert!(r.iter().all(|e| e.host_syncs == 0), "{r:?}");
    assert!(r[1].loss < r[0].loss, "the loss did not fall: {r:?}");
    trained.reports
}

#[test]
fn the_f32_mlp_step_is_one_graph_without_host_syncs_and_lowers_the_loss() {
    cann_sim::sim_only!("counts the step's runtime calls with cann_sim::calls");
    let r = mlp_steps_without_host_syncs(&short_mlp(Precision::F32));
    assert!(r.iter().all(|e| e.scale.is_none() && e.skipped == 0));
    assert!(r[1].accuracy > 0.85, "{r:?}");
}

#[test]
fn the_f16_mlp_step_scales_the_loss_on_the_device_without_host_syncs() {
    cann_sim::sim_only!("counts the step's runtime calls with cann_sim::calls");
    let r = mlp_steps_without_host_syncs(&short_mlp(Precision::F16));
    // With a growth interval of 4 good steps (of the 8 an epoch), the
    // scale doubles on the device.
    assert!(r.iter().all(|e| e.scale.is_some()), "{r:?}");
    let grow = train_mlp::Config {
        growth_interval: 4,
        ..short_mlp(Precision::F16)
    };
    let r = mlp_steps_without_host_syncs(&grow);
    let scale = r[1].scale.unwrap();
    assert!(scale > 65536.0, "the scale never grew: {r:?}");
}

#[test]
fn an_f16_loss_scale_far_too_high_skips_steps_and_backs_off_inside_the_graph() {
    // 1e9 overflows f16 at once: the graph's check flags it, the fused
    // AdamW skips the step and the scale halves, all without the host,
    // until the scale fits (32 steps an epoch).
    let cfg = train_mlp::Config {
        init_scale: 1.0e9,
        batch: 16,
        ..short_mlp(Precision::F16)
    };
    let trained = train_mlp::train_measured(&stream(), &cfg, |_| {}).unwrap();
    let r = &trained.reports;
    assert!((10..32).contains(&r[0].skipped), "{r:?}");
    assert!(r[0].scale.unwrap() < 1.0e9 / 1000.0, "{r:?}");
    assert!(r.iter().all(|e| e.host_syncs == 0), "{r:?}");
    assert!(
        r[1].loss < r[0].loss && r[1].skipped < r[0].skipped,
        "{r:?}"
    );
}

#[test]
fn the_cnn_step_is_one_graph_without_host_syncs_and_lowers_the_loss() {
    let cfg = train_cnn::Config {
        epochs: 2,
        samples: 256,
        test_samples: 64,
        ..train_cnn::Config::default()
    };
    let mut seen = 0;
    let r = train_cnn::train(&stream(), &cfg, |_| seen += 1).unwrap();
    assert_eq!(seen, 2);
    assert!(r.iter().all(|e| e.host_syncs == 0), "{r:?}");
    assert!(r[1].loss < r[0].loss, "the loss did not fall: {r:?}");
    assert!(r[1].accuracy > 0.5, "{r:?}");
}

#[test]
fn training_configurations_that_do_not_fit_are_refused_with_the_reason() {
    let s = stream();
    let bad = train_mlp::Config {
        samples: 100,
        ..train_mlp::Config::default()
    };
    match train_mlp::train(&s, &bad, |_| {}) {
        Err(acl::Error::InvalidArgument { function, reason }) => {
            assert_eq!(function, "train_mlp::train");
            assert_eq!(reason, "samples (100) must be a multiple of batch (64)");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    let bad = train_mlp::Config {
        dropout: 1.0,
        ..train_mlp::Config::default()
    };
    match train_mlp::train(&s, &bad, |_| {}) {
        Err(acl::Error::InvalidArgument { reason, .. }) => {
            assert_eq!(reason, "dropout (1) must be in [0, 1)");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    let bad = train_cnn::Config {
        samples: 100,
        ..train_cnn::Config::default()
    };
    match train_cnn::train(&s, &bad, |_| {}) {
        Err(acl::Error::InvalidArgument { function, reason }) => {
            assert_eq!(function, "train_cnn::train");
            assert!(
                reason.starts_with("samples (100) must be a multiple of batch (32)"),
                "{reason}"
            );
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}
