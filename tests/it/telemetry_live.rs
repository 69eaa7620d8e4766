//! The live view end to end: an engine streams its frames over puffin's wire protocol and a
//! client (`puffin_http::Client`, puffin_viewer's) decodes them: the owner and a lane worker
//! are threads, the engine's spans and the game's systems are scopes by name.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use lanegraph::hooks::telemetry::spans;
use lanegraph::systems::SystemDef;

/// A port free right now (bound and released; the server binds it again at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Alone in its own process: span collection is process-wide, so another test's engine
/// collecting at the same moment would take this engine's spans.
#[test]
fn a_puffin_client_decodes_the_engines_lanes_and_spans_by_name() {
    lanegraph_tests::isolated(
        "telemetry_live::a_puffin_client_decodes_the_engines_lanes_and_spans_by_name",
        decodes,
    );
}

fn decodes() {
    let _serial = crate::telemetry_trace::serial();
    spans::set_enabled(true);
    // A render pass, so the render lane's worker records spans of its own every frame.
    let mut engine = lanegraph_tests::engine_with_pass(lanegraph_tests::NullPass, 120);
    engine
        .world_mut()
        .register_system(SystemDef::new("live_system", 5.0, |_, _| {}))
        .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    engine.serve_puffin(&addr).unwrap();
    // puffin_viewer's own client: it connects, decodes every frame and keeps a frame view.
    let client = puffin_http::Client::new(addr.clone());
    let (mut threads, mut names) = (BTreeSet::new(), BTreeSet::new());
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline
        && !(threads.contains("owner")
            && threads.contains("render 0")
            && ["live_system", "frame", "render.frame"]
                .iter()
                .all(|n| names.contains(*n)))
    {
        engine.frame().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let view = client.frame_view();
        for frame in view.recent_frames() {
            let unpacked = frame.unpacked().unwrap();
            for (info, s) in &unpacked.thread_streams {
                threads.insert(info.name.clone());
                let mut todo = vec![puffin::Reader::from_start(&s.stream)
                    .read_top_scopes()
                    .unwrap()];
                while let Some(scopes) = todo.pop() {
                    for sc in scopes {
                        names.insert(sc.record.data.to_string());
                        if let Some(d) = view.scope_collection().fetch_by_id(&sc.id) {
                            names.insert(d.name().to_string());
                        }
                        todo.push(
                            puffin::Reader::with_offset(&s.stream, sc.child_begin_position)
                                .unwrap()
                                .read_top_scopes()
                                .unwrap(),
                        );
                    }
                }
            }
        }
    }
    assert!(client.connected(), "the client never connected to {addr}");
    assert!(threads.contains("owner"), "threads {threads:?}");
    assert!(threads.contains("render 0"), "threads {threads:?}");
    for n in ["frame", "live_system", "render.frame"] {
        assert!(names.contains(n), "no `{n}` scope in {names:?}");
    }
}

/// A live view asked for on a port another program holds is the servers' one typed error,
/// naming the address and the fix; the engine runs on without it.
#[test]
fn a_taken_port_is_a_typed_endpoint_error_naming_the_address() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let mut engine = lanegraph::Engine::builder().build().unwrap();
    let err = engine.serve_puffin(&addr).unwrap_err();
    assert!(
        matches!(&err, lanegraph::telemetry::EndpointError::Puffin { addr: a, .. } if *a == addr),
        "{err:?}"
    );
    assert!(err.to_string().contains("fix: pick a free port"), "{err}");
    engine.frame().unwrap();
}
