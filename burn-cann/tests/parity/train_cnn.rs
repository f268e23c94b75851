//! The `burn_cnn` example as a test: a CNN trained with Adam on
//! `Autodiff<Cann>` follows `Autodiff<NdArray>`'s loss curve and classifies
//! held-out images on the device.

// Both examples load their shared `common` module, so it is in this
// binary twice (each copy private to its example).
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../examples/burn_cnn.rs"]
mod example;

#[test]
fn a_cnn_trained_with_burn_optim_on_the_npu_follows_ndarray_and_reaches_90_percent() {
    cann_sim::install().expect("cann-sim installs");
    let r = example::run();
    assert!(r.worst < 1e-3, "loss curves differ by {}", r.worst);
    assert!(r.losses.0.last() < r.losses.0.first(), "the loss falls");
    assert!(r.accuracy >= 0.9, "held-out accuracy {}", r.accuracy);
}
