//! The `lanegraph` binary as a user drives it: hostile flags are usage errors (exit 2, a
//! `fix:`, nothing run or written), and SIGINT / SIGTERM stop the demo at a frame boundary
//! with a complete, verified output set and the temporary texture folder removed.

// The integration suite's virtual display, compiled into this test by path: the app's crate
// depends on no test crate.
#[path = "../../../tests/src/display.rs"]
mod display;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lanegraph"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lanegraph-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn demo(out: &Path, extra: &[&str]) -> Output {
    let mut c = bin();
    c.args(["demo", "--no-gpu", "--out"]).arg(out).args(extra);
    if !extra.contains(&"--entities") {
        c.args(["--entities", "500"]);
    }
    c.output().expect("the binary runs")
}

/// Polls `done` every 100 ms until it holds; fails, naming what it waited for, after 60 s.
fn poll_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "waited 60 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A player at the demo's window: a press of Space (real X input, `xdotool`) fires a burst,
/// and closing the window (through the window manager, as a click on the close button does)
/// ends the run cleanly: exit 0, "window closed after N frames", and a complete output set
/// whose `inputs` hold the key press.
#[test]
fn closing_the_window_ends_the_run_and_writes_the_outputs() {
    use display::VirtualDisplay;
    let test = "closing_the_window_ends_the_run_and_writes_the_outputs";
    let Some(display) = VirtualDisplay::for_test(test, &["wmctrl", "xdotool"]) else {
        return;
    };
    let out = scratch("close");
    let mut child = bin()
        .args([
            "demo",
            "--window",
            "--frames",
            "100000",
            "--entities",
            "2000",
            "--out",
        ])
        .arg(&out)
        .env("DISPLAY", &display.name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Wait for the window to be mapped and managed, then ask the window manager to close it.
    let listed = || {
        Command::new("wmctrl")
            .arg("-l")
            .env("DISPLAY", &display.name)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("lanegraph demo"))
            .unwrap_or(false)
    };
    poll_until("the demo's window to appear", || {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the demo exited before its window appeared"
        );
        listed()
    });
    // Let it run some frames, give it the focus (a loaded machine's window manager may not
    // have yet: the key would go nowhere), press Space, let the burst happen.
    std::thread::sleep(Duration::from_millis(1000));
    let activated = Command::new("wmctrl")
        .args(["-a", "lanegraph demo"])
        .env("DISPLAY", &display.name)
        .status()
        .expect("wmctrl runs");
    assert!(activated.success());
    std::thread::sleep(Duration::from_millis(300));
    let pressed = Command::new("xdotool")
        .args(["key", "space"])
        .env("DISPLAY", &display.name)
        .status()
        .expect("xdotool runs");
    assert!(pressed.success());
    // Generous: the press must reach a frame before the close does (a loaded CI machine).
    std::thread::sleep(Duration::from_millis(2500));
    let closed = Command::new("wmctrl")
        .args(["-c", "lanegraph demo"])
        .env("DISPLAY", &display.name)
        .status()
        .expect("wmctrl runs");
    assert!(closed.success());
    poll_until("the demo to stop after the close", || {
        child.try_wait().unwrap().is_some()
    });
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("window closed after"), "{stdout}\n{stderr}");
    for f in [
        "summary.json",
        "report.html",
        "trace.json",
        "metrics.prom",
        "manifest.json",
    ] {
        assert!(out.join(f).exists(), "{f} missing: {stdout}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let frames = summary["frames"].as_u64().unwrap();
    assert!(frames > 0 && frames < 100_000, "{frames} frames");
    assert!(summary["present"]["presented"].as_u64().unwrap() > 0);
    // The key press went window -> input queue -> the demo's system -> the score, and the log.
    assert_eq!(summary["score"]["bursts"].as_u64(), Some(1), "{summary}");
    let inputs = summary["inputs"].as_array().unwrap();
    assert!(
        inputs.iter().any(|i| i["event"]["kind"] == "key"
            && i["event"]["key"] == "Space"
            && i["event"]["pressed"] == true),
        "{inputs:?}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--window` without a display is a usage error that names what is missing and how to run
/// it anyway, before anything runs or is written.
#[test]
fn a_window_without_a_display_says_what_is_missing() {
    let out = scratch("nodisplay");
    let o = bin()
        .args([
            "demo",
            "--window",
            "--frames",
            "5",
            "--entities",
            "100",
            "--out",
        ])
        .arg(&out)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no display") && err.contains("DISPLAY"),
        "{err}"
    );
    assert!(err.contains("fix:") && err.contains("xvfb-run"), "{err}");
    assert!(!out.join("summary.json").exists(), "it ran anyway");
}

#[test]
fn hostile_flags_are_usage_errors_before_anything_runs() {
    let long_name = format!("physics=1,{}=1", "a".repeat(200));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--frames", "0"], "--frames"),
        (vec!["--seconds", "nan"], "--seconds"),
        (vec!["--seconds", "inf"], "--seconds"),
        (vec!["--seconds", "0"], "--seconds"),
        (vec!["--entities", "18446744073709551615"], "--entities"),
        (vec!["--lanes", "physics=10000000000"], "workers"),
        (vec!["--lanes", "physics=999"], "workers"),
        (vec!["--lanes", "foo=1"], "physics"),
        (vec!["--lanes", &long_name], "lane name"),
        (vec!["--target-fps", "0"], "--target-fps"),
        (vec!["--puffin-addr", "0.0.0.0:8585"], "loopback"),
        // (`demo` adds --no-gpu: a window needs the GPU.)
        (vec!["--window"], "--window"),
        (
            vec!["--present-mode", "vsync"],
            "fifo, mailbox or immediate",
        ),
        (vec!["--present-mode", "mailbox"], "without --window"),
        (vec!["--pin", "physics"], "AGENT=STRATEGY"),
        (vec!["--pin", "physics=full@soon"], "frame number"),
        (vec!["--pin", "nobody=full"], "--pin"),
        (vec!["--pin", "physics=fastest"], "detail_4_8"),
    ];
    for (args, mentions) in cases {
        let out = scratch("flags");
        let o = demo(&out, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(mentions),
            "{args:?} should mention {mentions}: {err}"
        );
        assert!(err.contains("fix:"), "{args:?} says how to fix it: {err}");
        assert!(!out.join("summary.json").exists(), "{args:?} ran anyway");
    }
    for (args, mentions) in [
        (vec!["stress", "--seconds", "nan"], "--seconds"),
        (vec!["stress", "--seconds", "inf"], "--seconds"),
        (vec!["stress", "--lanes", "physics=999"], "workers"),
        (vec!["bench", "nosuchsuite"], "unknown bench suite"),
    ] {
        let o = bin().args(&args).output().expect("the binary runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(mentions), "{args:?}: {err}");
    }
    // A bad config file is a usage error too (exit 2, like the same bad value as a flag), and
    // names the key and the line.
    let cfg_dir = scratch("cfg");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg = cfg_dir.join("bad.toml");
    std::fs::write(&cfg, "[engine]\n\ntarget_fps = 0.5\n").unwrap();
    let o = demo(&scratch("cfg-out"), &["--config", cfg.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("engine.target_fps") && err.contains("line 3"),
        "{err}"
    );
    // A non-loopback metrics address says which flag allows it.
    let o = demo(
        &scratch("remote"),
        &["--frames", "1", "--metrics-addr", "0.0.0.0:0"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--metrics-remote"), "{err}");
    std::fs::remove_dir_all(&cfg_dir).unwrap();
    // An --out that is a file fails at once, not after the run.
    let dir = scratch("outfile");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let t0 = Instant::now();
    let o = demo(&file, &["--frames", "100000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a folder"));
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "the run happened first"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Starts a long demo, waits until it runs frames, sends `signals` (0.2 s apart), and returns
/// its exit code, its output folder and its pid.
fn interrupted_demo(tag: &str, signals: &[&str]) -> (Option<i32>, PathBuf, u32) {
    let out = scratch(tag);
    let mut demo = bin();
    demo.args([
        "demo",
        "--no-gpu",
        "--entities",
        "500",
        "--seconds",
        "300",
        "--out",
    ])
    .arg(&out);
    let (code, pid) = interrupted(demo, tag, signals);
    (code, out, pid)
}

/// Starts `cmd` (a demo or a replay), waits until it runs frames, sends `signals` (0.2 s
/// apart), and returns its exit code and its pid.
fn interrupted(mut cmd: Command, tag: &str, signals: &[&str]) -> (Option<i32>, u32) {
    let log = scratch(&format!("{tag}-log"));
    std::fs::create_dir_all(&log).unwrap();
    let stderr = std::fs::File::create(log.join("stderr")).unwrap();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("the binary starts");
    let pid = child.id();
    let t0 = Instant::now();
    // Running frames once the lane plan is printed (it is printed just before the first frame).
    while !std::fs::read_to_string(log.join("stderr"))
        .unwrap_or_default()
        .contains("lane plan")
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{tag}: the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    for sig in signals {
        let sent = Command::new("kill")
            .args([*sig, pid.to_string().as_str()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(200));
    }
    let t0 = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{tag}: the run did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::remove_dir_all(&log).unwrap();
    (code, pid)
}

/// The demo's temporary texture folders of process `pid` that still exist, made at or after
/// `since`. (Pids are reused: a folder a killed process left behind long ago, such as the
/// "second signal exits at once" run's, can carry the same pid; it is not this run's.)
fn texture_folders_of(pid: u32, since: std::time::SystemTime) -> Vec<PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("lanegraph-demo-{pid}-"))
            })
        })
        .filter(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since)
        })
        .collect()
}

#[test]
fn sigint_and_sigterm_stop_at_a_frame_boundary_with_a_complete_output_set() {
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        // A second of slack: some filesystems keep coarse modification times.
        let since = std::time::SystemTime::now() - Duration::from_secs(1);
        let (got, out, pid) = interrupted_demo(&format!("sig{code}"), &[sig]);
        assert_eq!(got, Some(code), "{sig}");
        let manifest = lanegraph_demo::outputs::verify(&out).expect("a complete, verified set");
        let names: Vec<_> = manifest.files.iter().map(|f| f.name.as_str()).collect();
        for want in ["summary.json", "trace.json", "metrics.prom", "report.html"] {
            assert!(names.contains(&want), "{sig}: {names:?}");
        }
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert!(
            summary["frames"].as_u64().unwrap() > 0,
            "{sig}: the frames run are reported"
        );
        assert!(
            texture_folders_of(pid, since).is_empty(),
            "{sig}: temp folder left behind"
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[test]
fn a_second_signal_exits_at_once_and_never_leaves_a_mixed_set() {
    let (got, out, _) = interrupted_demo("twice", &["-INT", "-INT"]);
    assert_eq!(got, Some(130));
    // Either the set was published before the second signal, or it has no manifest: a reader
    // never trusts a mixed or cut-off set.
    if out.join(lanegraph_demo::outputs::MANIFEST).exists() {
        lanegraph_demo::outputs::verify(&out).expect("a manifest vouches only for its files");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `kill -9` at any moment of a run, outputs included: whatever is left is either a set its
/// manifest vouches for (the old one or the new one) or a set without a manifest, and no file
/// under an output's name is ever cut off.
#[test]
fn kill_9_at_any_moment_never_leaves_a_cut_off_file_or_a_false_manifest() {
    let out = scratch("kill9");
    // An old, complete set first.
    let o = demo(&out, &["--frames", "3"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    lanegraph_demo::outputs::verify(&out).expect("the first run's set");
    let mut killed_mid_run = 0;
    for step in 0..14u64 {
        let mut child = bin()
            .args([
                "demo",
                "--no-gpu",
                "--entities",
                "3000",
                "--frames",
                "20",
                "--out",
            ])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        std::thread::sleep(Duration::from_millis(step * 60));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        if out.join(lanegraph_demo::outputs::MANIFEST).exists() {
            lanegraph_demo::outputs::verify(&out)
                .unwrap_or_else(|e| panic!("after a kill at {} ms: {e}", step * 60));
        }
        for name in ["summary.json", "trace.json"] {
            if let Ok(bytes) = std::fs::read(out.join(name)) {
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_else(|e| {
                    panic!("{name} cut off after a kill at {} ms: {e}", step * 60)
                });
            }
        }
    }
    assert!(killed_mid_run > 0, "no kill landed during a run");
    let _ = std::fs::remove_dir_all(&out);
}

/// A write that fails mid-set (here the file-size limit, `ulimit -f`, whose `EFBIG` takes the
/// same path as a full disk's `ENOSPC`): exit 1 naming the file and a fix, no cut-off file, no
/// temporary file left, no manifest vouching for the mixed folder.
#[test]
fn a_write_failing_mid_set_leaves_no_cut_off_file_and_no_manifest() {
    let out = scratch("efbig");
    let o = demo(&out, &["--frames", "3"]);
    assert_eq!(o.status.code(), Some(0));
    let names = ["summary.json", "trace.json", "metrics.prom", "report.html"];
    let old: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(out.join(n)).unwrap())
        .collect();
    // `trap '' XFSZ` ignores the signal (inherited across exec), so a write past the limit
    // fails with EFBIG. bash counts the limit in KiB: 12 KiB passes the demo's generated
    // textures and stops at the report.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 12; exec '{}' demo --no-gpu --entities 500 --frames 3 --out '{}'",
            env!("CARGO_BIN_EXE_lanegraph"),
            out.display()
        ))
        .output()
        .expect("sh runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("fix:"), "{err}");
    let failed = names
        .iter()
        .position(|n| err.contains(&format!("{}`", out.join(n).display())))
        .unwrap_or_else(|| panic!("the error names the output that failed: {err}"));
    assert_eq!(
        std::fs::read(out.join(names[failed])).unwrap(),
        old[failed],
        "{} was not kept whole",
        names[failed]
    );
    assert!(
        !out.join(lanegraph_demo::outputs::MANIFEST).exists(),
        "a manifest vouches for a mixed set"
    );
    for name in ["summary.json", "trace.json"] {
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(out.join(name)).unwrap())
            .unwrap_or_else(|e| panic!("{name} cut off: {e}"));
    }
    let temps: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// `lanegraph replay summary.json` reproduces an adaptive lockstep run's world hash on another
/// lane plan (exit 0), and says so when it does not (a tampered hash: exit 1).
#[test]
fn replay_reproduces_a_recorded_run_and_reports_a_mismatch() {
    let out = scratch("replay");
    let o = demo(
        &out,
        &[
            "--frames",
            "60",
            "--entities",
            "5000",
            "--target-fps",
            "1000",
            "--no-pace",
            "--lanes",
            "physics=1,render=1,asset=1",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = out.join("summary.json");
    let replay_out = scratch("replay-out");
    let o = bin()
        .args([
            "replay",
            "--no-gpu",
            "--lanes",
            "physics=2,render=1,asset=1",
            "--out",
        ])
        .arg(&replay_out)
        .arg(&summary)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("equal to"), "{text}");
    // A summary whose hash was changed: the replay says it differs.
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    v["world_hash"] = serde_json::json!("0x0000000000000000");
    let tampered = out.join("tampered.json");
    std::fs::write(&tampered, v.to_string()).unwrap();
    let o = bin()
        .args(["replay", "--no-gpu", "--out"])
        .arg(&replay_out)
        .arg(&tampered)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("DIFFERS"));
    // A summary written before the hash format was recorded (format 1): its hash is another
    // function of the world, so the replay refuses to compare rather than say it differs.
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(v["world_hash_format"], serde_json::json!(2));
    v.as_object_mut().unwrap().remove("world_hash_format");
    let older = out.join("older.json");
    std::fs::write(&older, v.to_string()).unwrap();
    let o = bin()
        .args(["replay", "--no-gpu", "--out"])
        .arg(&replay_out)
        .arg(&older)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("format 1") && err.contains("cannot be compared"),
        "{err}"
    );
    // Logs it refuses exit 3, before a frame runs: frames past what a run can record (an
    // edited log would run for ever), more decisions than a run writes, a folder, a FIFO.
    let refuse = |path: &std::path::Path, what: &str| {
        let o = bin()
            .args(["replay", "--no-gpu", "--out"])
            .arg(&replay_out)
            .arg(path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{what}: {err}");
        assert!(err.contains("fix:"), "{what}: {err}");
        assert!(
            err.lines().all(|l| l.chars().count() < 400),
            "{what}: {err}"
        );
    };
    let mut forever = v.clone();
    forever["frames"] = serde_json::json!(u64::MAX);
    let path = out.join("forever.json");
    std::fs::write(&path, forever.to_string()).unwrap();
    refuse(&path, "frames = u64::MAX");
    let mut flood = v.clone();
    let one = flood["decisions"][0].clone();
    flood["decisions"] = serde_json::Value::Array(vec![one; 1_025]);
    let path = out.join("flood.json");
    std::fs::write(&path, flood.to_string()).unwrap();
    refuse(&path, "1,025 decisions");
    refuse(&out, "a folder");
    let fifo = out.join("fifo.json");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success();
    assert!(made, "mkfifo");
    refuse(&fifo, "a FIFO (would block for ever if opened)");
    // A bad flag stays a usage error (exit 2), whatever the log.
    let o = bin()
        .args(["replay", "--no-gpu", "--lanes", "render=1", "--out"])
        .arg(&replay_out)
        .arg(&summary)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // SIGINT stops a replay as it stops the demo: exit 130, a complete output set.
    let mut long = v.clone();
    long["frames"] = serde_json::json!(5_000_000u64);
    let path = out.join("long.json");
    std::fs::write(&path, long.to_string()).unwrap();
    let mut replay = bin();
    replay
        .args(["replay", "--no-gpu", "--out"])
        .arg(&replay_out)
        .arg(&path);
    let (code, _) = interrupted(replay, "replay-sigint", &["-INT"]);
    assert_eq!(code, Some(130));
    lanegraph_demo::outputs::verify(&replay_out).expect("a complete, verified set");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&replay_out);
}

/// `--fail-on-budget`: exit 4 naming what missed (here the frame p99 under a 1 ms budget), exit
/// 0 with "within budget" when the run held it.
#[test]
fn the_budget_gate_exits_4_naming_the_breach_and_0_within_budget() {
    let out = scratch("gate");
    let o = demo(
        &out,
        &[
            "--frames",
            "40",
            "--entities",
            "20000",
            "--target-fps",
            "1000",
            "--no-pace",
            "--fail-on-budget",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("over budget: frame p99"), "{err}");
    // The outputs are still written: the gate reads them, it does not replace them.
    lanegraph_demo::outputs::verify(&out).expect("a complete set");
    let o = demo(
        &out,
        &[
            "--frames",
            "20",
            "--no-pace",
            "--fail-on-budget",
            "--target-fps",
            "4",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("within budget"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}

/// The binary's log output goes to stderr: warnings by default, `RUST_LOG` widens it, a bad
/// `RUST_LOG` is said (with a fix) and the default used; stdout stays free of it.
#[test]
fn rust_log_selects_what_the_binary_prints_on_stderr() {
    let out = scratch("log");
    let run = |rust_log: Option<&str>| {
        let mut c = bin();
        c.args([
            "demo",
            "--no-gpu",
            "--frames",
            "3",
            "--entities",
            "500",
            "--out",
        ])
        .arg(&out);
        match rust_log {
            Some(v) => c.env("RUST_LOG", v),
            None => c.env_remove("RUST_LOG"),
        };
        let o = c.output().expect("the binary runs");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        assert!(o.status.success(), "{rust_log:?}: {}", text(&o.stderr));
        (text(&o.stdout), text(&o.stderr))
    };
    let (_, quiet) = run(None);
    assert!(
        !quiet.contains("engine started"),
        "info printed by default: {quiet}"
    );
    let (stdout, info) = run(Some("info"));
    assert!(
        info.contains("engine started") && info.contains("lanes="),
        "RUST_LOG=info: {info}"
    );
    assert!(
        !stdout.contains("engine started"),
        "logs on stdout: {stdout}"
    );
    let (_, bad) = run(Some("lanegraph=notalevel"));
    assert!(
        bad.contains("not a valid filter") && bad.contains("fix:"),
        "a bad RUST_LOG is said: {bad}"
    );
    assert!(
        !bad.contains("engine started"),
        "fell back to warnings: {bad}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// A reader that stops early (`lanegraph demo 2>&1 | head -1`) costs the run nothing: the
/// lines it no longer reads are dropped, the outputs are written and the exit status is the
/// run's, not a panic's 101.
#[test]
fn a_reader_that_stops_early_loses_neither_the_run_nor_its_exit_status() {
    use std::io::BufRead;
    let out = scratch("closed-pipe");
    let mut child = bin()
        .args([
            "demo",
            "--no-gpu",
            "--frames",
            "3",
            "--entities",
            "500",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().expect("piped"))
        .read_line(&mut first)
        .expect("a first progress line");
    // Both readers gone: every later line (progress, summary, `wrote:`) meets a closed pipe.
    drop(child.stdout.take());
    let status = child.wait().expect("the binary exits");
    assert_eq!(status.code(), Some(0), "after {first:?}");
    assert!(
        out.join("manifest.json").is_file(),
        "the output set was written"
    );
    let _ = std::fs::remove_dir_all(&out);
}
