//! Hostile input, replayed and fuzzed: the checked-in corpus (`tests/corpus/`) and property
//! tests with large case counts, through every parser a user's file, flag or socket reaches:
//! the lane spec, the engine config, the PNG loader and the metrics endpoint's request parser.
//! The bar: never a panic, a hang or an allocation sized from unchecked input; always a typed
//! error that says how to fix it, or a valid result within the bounds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lanegraph::hooks::telemetry::{EndpointOptions, MetricsEndpoint, Registry};
use lanegraph::hooks::PngLoader;
use lanegraph::jobs::{max_workers_per_lane, LanePlan, MAX_LANE_NAME};
use lanegraph::runtime::{AssetLimits, AssetLoader, EngineConfig};
use proptest::prelude::*;

fn corpus(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("corpus folder {}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "empty corpus folder {}", root.display());
    files
}

/// A lane spec either fails with a typed error or yields a plan within every bound.
fn check_spec(spec: &str) {
    let cores = [0usize, 1];
    match LanePlan::from_spec(spec, &cores) {
        Ok(plan) => {
            for l in plan.lanes() {
                assert!(
                    !l.name.is_empty() && l.name.len() <= MAX_LANE_NAME,
                    "{spec:?}"
                );
                assert!(
                    !l.worker_cores.is_empty()
                        && l.worker_cores.len() <= max_workers_per_lane(cores.len()),
                    "{spec:?}"
                );
            }
        }
        Err(e) => assert!(e.to_string().contains("fix:"), "{spec:?}: {e}"),
    }
}

fn check_config(text: &str) {
    match EngineConfig::from_toml(text) {
        Ok(c) => assert!(c.validate().is_ok(), "an accepted config validates"),
        Err(e) => assert!(e.to_string().contains("fix"), "{e}"),
    }
}

fn check_png(name: &str, bytes: &[u8]) {
    let limits = AssetLimits::default();
    match PngLoader.decode(Path::new(name), bytes, &limits) {
        Ok(lanegraph::runtime::Asset::Image(img)) => {
            let pixels = u64::from(img.width) * u64::from(img.height);
            assert!(pixels <= limits.max_image_pixels, "{name}");
            assert_eq!(img.rgba.len() as u64, pixels * 4, "{name}");
        }
        Ok(other) => panic!("{name}: the PNG loader returned {other:?}"),
        Err(e) => assert!(e.to_string().contains("fix:"), "{name}: {e}"),
    }
}

/// Sends `bytes` to a live endpoint; the answer (within 20 s, or the test fails) is a status
/// line, or the connection is closed without one (a head over the limit may be cut off).
fn check_http(addr: std::net::SocketAddr, bytes: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("no answer for {:?}: {e}", String::from_utf8_lossy(bytes)),
    }
    if !out.is_empty() {
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("HTTP/1.1 "), "{text}");
    }
}

#[test]
fn the_checked_in_corpus_is_refused_cleanly() {
    for f in corpus("lane_specs") {
        for spec in std::fs::read_to_string(&f).unwrap().lines() {
            check_spec(spec);
        }
    }
    for f in corpus("configs") {
        check_config(&String::from_utf8_lossy(&std::fs::read(&f).unwrap()));
    }
    for f in corpus("assets") {
        check_png(&f.display().to_string(), &std::fs::read(&f).unwrap());
    }
    let ep = MetricsEndpoint::start(
        "127.0.0.1:0".parse().unwrap(),
        Registry::default(),
        EndpointOptions::default(),
    )
    .unwrap();
    for f in corpus("http") {
        check_http(ep.local_addr(), &std::fs::read(&f).unwrap());
    }
    // The endpoint still serves after all of it.
    let mut s = TcpStream::connect(ep.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
    let mut ok = String::new();
    s.read_to_string(&mut ok).unwrap();
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
}

#[test]
fn a_fifo_named_like_an_asset_is_refused_not_waited_on() {
    let dir = std::env::temp_dir().join(format!("lanegraph-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("texture.png");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED a_fifo_named_like_an_asset: mkfifo unavailable");
        return;
    }
    let mut engine = lanegraph::runtime::Engine::builder()
        .lockstep(true)
        .build()
        .unwrap();
    engine.request_asset(&fifo);
    let t0 = std::time::Instant::now();
    while engine.asset_report().0.failed < 1 {
        engine.frame().unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the FIFO blocked the asset lane"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let (_, failures) = engine.asset_report();
    assert!(failures[0].contains("not a regular file"), "{failures:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lane specs from a small alphabet that reaches every branch of the parser.
fn spec_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("physics".to_string()),
            Just("render".to_string()),
            Just("asset".to_string()),
            "[a-z_]{0,40}",
            "[0-9]{1,25}",
            Just("=".to_string()),
            Just(",".to_string()),
            Just(":bg".to_string()),
            Just(":fc".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            "\\PC{0,3}",
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// A valid 3x2 PNG to mutate.
fn valid_png() -> Vec<u8> {
    lanegraph::runtime::encode_png(3, 2, &[77u8; 24]).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn any_lane_spec_is_a_bounded_plan_or_a_typed_error(spec in spec_strategy()) {
        check_spec(&spec);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3_000, ..ProptestConfig::default() })]

    #[test]
    fn any_config_text_is_a_valid_config_or_a_typed_error(
        key in prop_oneof![
            Just("target_fps"), Just("fixed_step_hz"), Just("vulkan"), Just("lanes"),
            Just("pin"), Just("adaptive"), Just("spans"), Just("trace_frames"), Just("nonsense"),
        ],
        section in prop_oneof![Just("engine"), Just("telemetry"), Just("budget"), Just("x")],
        value in prop_oneof![
            any::<i64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| format!("{v:?}")),
            "\"\\PC{0,20}\"",
            Just("true".to_string()),
            Just("nan".to_string()),
            Just("inf".to_string()),
            "\\PC{0,10}",
        ],
    ) {
        check_config(&format!("[{section}]\n{key} = {value}\n"));
    }

    #[test]
    fn any_mutation_of_a_png_decodes_within_limits_or_fails_typed(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = valid_png();
        for (at, b) in flips {
            let i = at % bytes.len();
            bytes[i] = b;
        }
        bytes.truncate(1 + cut % bytes.len());
        check_png("mutant.png", &bytes);
    }

    #[test]
    fn any_declared_png_size_is_checked_before_allocating(w in any::<u32>(), h in any::<u32>()) {
        // A valid PNG whose header is rewritten (CRC fixed) to any size.
        let mut bytes = valid_png();
        bytes[16..20].copy_from_slice(&w.to_be_bytes());
        bytes[20..24].copy_from_slice(&h.to_be_bytes());
        let crc = crc32(&bytes[12..29]);
        bytes[29..33].copy_from_slice(&crc.to_be_bytes());
        check_png("resized.png", &bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn any_request_bytes_get_an_answer_or_a_close(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..600),
            ("[A-Z]{0,8}", "[ -~]{0,40}", "[ -~]{0,12}")
                .prop_map(|(m, p, v)| format!("{m} {p} {v}\r\n\r\n").into_bytes()),
        ],
    ) {
        thread_local! {
            static EP: MetricsEndpoint = MetricsEndpoint::start(
                "127.0.0.1:0".parse().unwrap(),
                Registry::default(),
                EndpointOptions {
                    request_deadline: Duration::from_millis(200),
                    ..EndpointOptions::default()
                },
            )
            .unwrap();
        }
        let addr = EP.with(|e| e.local_addr());
        check_http(addr, &bytes);
    }
}

/// CRC-32 (IEEE), as PNG chunks use it.
fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A config path that is a FIFO, a folder or a file over 1 MiB is refused before it is read
/// (never waited on), and an error quotes at most 80 characters of a key and 240 of its
/// message, control characters escaped: a 10 MB value cannot flood stderr and an escaped
/// newline cannot forge a log line.
#[test]
fn config_files_and_values_are_bounded_in_what_they_read_and_echo() {
    let dir = std::env::temp_dir().join(format!("lanegraph-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.toml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let huge = dir.join("huge.toml");
    std::fs::write(&huge, vec![b'#'; (1 << 20) + 1]).unwrap();
    for path in [&fifo, &dir, &huge] {
        let err = EngineConfig::from_file(path).unwrap_err();
        assert!(err.to_string().contains("cannot read the file"), "{err}");
    }
    let long = format!("[engine]\nlanes = \"{}\"\n", "x".repeat(10 << 20));
    let err = EngineConfig::from_toml(&long).unwrap_err().to_string();
    assert!(err.len() < 1_000, "{} bytes of error", err.len());
    // Whichever way a long value reaches the message (a type error quotes it, a range error
    // names it), at most 80 of its characters are quoted.
    let longest_run = |e: &str, c: char| {
        e.split(|x| x != c)
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(0)
    };
    for (text, c) in [
        (long.clone(), 'x'),
        (
            format!("[engine]\ntarget_fps = \"{}\"\n", "y".repeat(5_000)),
            'y',
        ),
        (
            format!("[window]\npresent_mode = \"{}\"\n", "z".repeat(5_000)),
            'z',
        ),
    ] {
        let err = EngineConfig::from_toml(&text).unwrap_err().to_string();
        assert!(
            longest_run(&err, c) <= 80,
            "{} quoted: {err}",
            longest_run(&err, c)
        );
    }
    let forged = "[engine]\n\"target_fps\\nWARN forged = 1\" = 3\n";
    let err = EngineConfig::from_toml(forged).unwrap_err().to_string();
    assert!(!err.contains('\n'), "a newline in the error: {err:?}");
    let key = format!("[engine]\n{} = 1\n", "k".repeat(5_000));
    let err = EngineConfig::from_toml(&key).unwrap_err().to_string();
    assert!(err.len() < 1_000, "{} bytes of error", err.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
