//! A virtual X display for the window tests: Xvfb with the openbox window manager (so that
//! minimising and closing go through a real window manager), on a display of its own.
//!
//! Owns: starting both, waiting until they serve, and killing them on drop. Must never: let
//! two tests of one process share a display (one at a time, under a process-wide lock).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Xvfb and openbox on `name`; killed on drop.
pub struct VirtualDisplay {
    /// The display, e.g. `:123` (set `DISPLAY` to it).
    pub name: String,
    children: Vec<Child>,
    _one_at_a_time: MutexGuard<'static, ()>,
}

static DISPLAYS: Mutex<()> = Mutex::new(());

impl Drop for VirtualDisplay {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Whether `tool` is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl VirtualDisplay {
    /// Starts Xvfb (1024x768, 24-bit) and openbox on a free display, once `tools` (and both of
    /// them) are installed; otherwise says which is missing.
    pub fn start(tools: &[&str]) -> Result<VirtualDisplay, String> {
        let guard = DISPLAYS.lock().unwrap_or_else(|p| p.into_inner());
        for tool in ["Xvfb", "openbox"].iter().chain(tools) {
            if !have(tool) {
                return Err(format!(
                    "`{tool}` is not installed (scripts/test installs xvfb, openbox, x11-apps, wmctrl and xdotool)"
                ));
            }
        }
        let n = (100 + std::process::id() % 800..)
            .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())
            .unwrap_or(999);
        let name = format!(":{n}");
        let xvfb = Command::new("Xvfb")
            .args([&name, "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("Xvfb did not start: {e}"))?;
        let mut d = VirtualDisplay {
            name: name.clone(),
            children: vec![xvfb],
            _one_at_a_time: guard,
        };
        let socket = format!("/tmp/.X11-unix/X{n}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Path::new(&socket).exists() {
            if Instant::now() > deadline {
                return Err(format!("Xvfb {name} did not open {socket} within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let wm = Command::new("openbox")
            .arg("--sm-disable")
            .env("DISPLAY", &name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("openbox did not start: {e}"))?;
        d.children.push(wm);
        // Give the window manager time to take the root window before a game's window maps.
        std::thread::sleep(Duration::from_millis(1500));
        Ok(d)
    }

    /// Starts one, or: under `CI=true` fails the test (CI installs the tools); otherwise
    /// prints `SKIPPED test: why` and returns `None`.
    pub fn for_test(test: &str, tools: &[&str]) -> Option<VirtualDisplay> {
        match VirtualDisplay::start(tools) {
            Ok(d) => Some(d),
            Err(why) => {
                let ci = std::env::var("CI").is_ok_and(|v| v == "true");
                assert!(!ci, "{test} is required under CI=true: {why}");
                eprintln!("SKIPPED {test}: {why}");
                None
            }
        }
    }
}
