//! The `burn_mlp` example as a test: Adam on `Autodiff<Cann>` reaches 95%
//! and follows `Autodiff<NdArray>`'s loss curve.

// Both examples load their shared `common` module, so it is in this
// binary twice (each copy private to its example).
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../examples/burn_mlp.rs"]
mod example;

#[test]
fn an_mlp_trained_with_burn_optim_on_the_npu_reaches_95_percent_and_follows_ndarray() {
    cann_sim::install().expect("cann-sim installs");
    let r = example::run();
    assert!(r.worst < 1e-3, "loss curves differ by {}", r.worst);
    assert!(r.losses.0.last() < r.losses.0.first(), "the loss falls");
    assert!(r.accuracy >= 0.95, "accuracy {}", r.accuracy);
}
