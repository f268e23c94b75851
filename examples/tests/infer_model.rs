//! The `infer_model` example's logic on the simulator: it builds the model
//! file once, describes it, matches the host at every batch gear, and
//! refuses a batch that is not a gear.

use acl::{Device, Runtime};
use examples::infer_model::{Config, GEARS, run};

fn stream() -> acl::Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

#[test]
fn infers_at_every_gear_and_matches_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        path: dir.path().join("mlp.json"),
        runs: 3,
        ..Config::default()
    };
    let s = stream();
    for (i, batch) in GEARS.into_iter().enumerate() {
        let report = run(
            &s,
            &Config {
                batch,
                ..cfg.clone()
            },
        )
        .unwrap();
        assert_eq!(report.built, i == 0, "built on first run only");
        assert!(report.max_abs_diff <= 1e-4, "{report}");
        assert_eq!(report.runs, 3);
        assert!(report.min <= report.mean && report.mean <= report.max);
        assert!(report.throughput() > 0.0);
        assert!(
            report.description.contains("input[0] name: x"),
            "{}",
            report.description
        );
        assert!(
            report
                .description
                .contains("dynamic batch gears: [1, 2, 4, 8, 16, 32]"),
            "{}",
            report.description
        );
    }
    let err = run(
        &s,
        &Config {
            batch: 3,
            ..cfg.clone()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch 3 is not one of the model's gears [1, 2, 4, 8, 16, 32]"
    );
}
