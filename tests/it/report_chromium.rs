//! `report.html` in a real browser: headless Chromium loads it with no console errors, its DOM
//! holds every chart, and a screenshot shows them (chart colours on the page).
//!
//! Needs Debian's `chromium` (installed by `scripts/test`). Without it the test prints that it
//! was skipped, and fails under `CI=true`, where nothing may be skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lanegraph_demo::{self as demo, DemoOptions};

/// How long one Chromium run may take (a cold start on a 2-core machine takes ~4 s).
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Runs headless Chromium on `page` with `extra` flags; returns (stdout, stderr).
fn run_chromium(bin: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(["--window-size=1000,2400", "--hide-scrollbars"])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("wait on chromium").is_some() {
            break;
        }
        if t0.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            panic!("chromium did not finish within {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("chromium output");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The page's console messages and load failures, from Chromium's stderr log.
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains(":CONSOLE")
                || l.contains("Uncaught")
                || l.contains("Failed to load resource")
        })
        .collect()
}

fn skip_or_fail(why: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{why}; CI=true: this test may not be skipped (scripts/test installs chromium)");
    }
    eprintln!("skipped: {why}");
}

#[test]
fn the_report_loads_clean_and_shows_its_charts() {
    let Some(bin) = chromium() else {
        skip_or_fail("chromium is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("lanegraph-report-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = DemoOptions {
        frames: Some(20),
        entities: 2_000,
        out: Some(dir.clone()),
        no_gpu: true,
        progress: false,
        pace: false,
        ..DemoOptions::default()
    };
    demo::run(&opts).expect("the demo runs");
    let page = dir.join("report.html");

    // The detector finds a real console error (so a clean result means something).
    let bad = dir.join("broken.html");
    std::fs::write(
        &bad,
        "<html><body><script>undefinedFunction();</script></body></html>",
    )
    .unwrap();
    let (_, err) = run_chromium(&bin, &bad, &["--dump-dom".into()]);
    assert!(
        !console_errors(&err).is_empty(),
        "the console check missed a known error:\n{err}"
    );

    // The report: no console errors, every chart in the DOM.
    let (dom, err) = run_chromium(&bin, &page, &["--dump-dom".into()]);
    let errors = console_errors(&err);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    for id in [
        "overview",
        "timeline",
        "frame-time",
        "frame-histogram",
        "systems",
        "lane-busy",
        "memory",
        "gpu",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "the DOM lacks #{id}");
    }
    assert!(
        dom.matches("<svg").count() >= 5,
        "fewer than five charts in the DOM"
    );

    // A screenshot shows the charts: pixels of the chart blue, the target red and the span fills.
    let shot = dir.join("report.png");
    let (_, err) = run_chromium(&bin, &page, &[format!("--screenshot={}", shot.display())]);
    let bytes = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}):\n{err}"));
    let img = lanegraph::hooks::decode_png(&shot, &bytes, &Default::default())
        .expect("the screenshot decodes");
    let count = |rgb: [u8; 3]| {
        img.rgba
            .chunks_exact(4)
            .filter(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= 24))
            .count()
    };
    let blue = count([0x2f, 0x6f, 0xd6]);
    let red = count([0xd2, 0x45, 0x2f]);
    assert!(
        blue > 500,
        "only {blue} chart-blue pixels: the charts did not draw"
    );
    assert!(
        red > 50,
        "only {red} target-red pixels: the frame-time chart did not draw"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
