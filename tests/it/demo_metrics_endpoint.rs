//! `--metrics-addr`: the demo serves its metrics on loopback while it runs, and refuses a
//! non-loopback address unless exposure is asked for (nothing is bound, nothing is sent).

use lanegraph_demo::{self as demo, DemoError, DemoOptions};

#[test]
fn a_non_loopback_metrics_address_is_refused_with_a_typed_error() {
    let opts = DemoOptions {
        frames: Some(2),
        entities: 100,
        out: None,
        progress: false,
        pace: false,
        no_gpu: true,
        metrics_addr: Some("10.0.0.1:9".parse().unwrap()),
        ..DemoOptions::default()
    };
    match demo::run(&opts) {
        Err(DemoError::Endpoint(e)) => assert!(e.to_string().contains("loopback"), "{e}"),
        other => panic!("expected an endpoint error, got {other:?}"),
    }
}

#[test]
fn a_loopback_metrics_address_serves_during_the_run() {
    let opts = DemoOptions {
        frames: Some(5),
        entities: 100,
        out: None,
        progress: false,
        pace: false,
        no_gpu: true,
        metrics_addr: Some("127.0.0.1:0".parse().unwrap()),
        ..DemoOptions::default()
    };
    let run = demo::run(&opts).expect("the demo runs with a metrics endpoint");
    assert_eq!(run.summary.run.frames, 5);
}
