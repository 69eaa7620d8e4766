//! A game in a window on a virtual display (Xvfb, with the openbox window manager so that
//! minimising is real) with Mesa's lavapipe: 300 presented frames through 3 resizes and a
//! minimise/restore, 0 validation messages with synchronization validation on, input events in
//! the engine's log, and a screenshot of the X display (`xwd`) that shows the particles.
//!
//! The window runs in a child process (`isolated_with_env`): winit allows one event loop per
//! process, and `DISPLAY` must name this test's own display.

use std::process::Command;
use std::time::{Duration, Instant};

use lanegraph::hooks::EngineHooks;
use lanegraph::input::InputEvent;
use lanegraph::window::winit::dpi::PhysicalSize;
use lanegraph::window::{GameWindow, WindowConfig, WindowStatus};
use lanegraph::Engine;
use lanegraph_demo::{physics, render, world};
use lanegraph_tests::display::VirtualDisplay;

/// Runs `body` alone in a child process of this test binary (winit allows one event loop per
/// process) with `DISPLAY` naming a virtual display of its own (`tools` installed besides Xvfb
/// and openbox).
fn on_virtual_display(name: &str, tools: &[&str], body: fn()) {
    if std::env::var("LANEGRAPH_ISOLATED_TEST").as_deref() == Ok(name) {
        body();
        return;
    }
    let Some(display) = VirtualDisplay::for_test(name, tools) else {
        return;
    };
    lanegraph_tests::isolated_with_env(name, &[("DISPLAY", &display.name)], body);
}

/// Pixels of the X display (`xwd -root`), as (width, height, RGB rows).
fn screenshot() -> (usize, usize, Vec<[u8; 3]>) {
    let out = Command::new("xwd")
        .args(["-root", "-silent"])
        .output()
        .expect("xwd runs");
    assert!(out.status.success(), "xwd failed: {out:?}");
    let d = out.stdout;
    let be = |i: usize| u32::from_be_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]]) as usize;
    // XWD header: 25 big-endian u32 (X11 XWDFileHeader), the window name, the colour map.
    let (header, width, height) = (be(0), be(16), be(20));
    let (byte_order, bits_per_pixel, bytes_per_line, ncolors) = (be(28), be(44), be(48), be(76));
    let (red_mask, green_mask, blue_mask) = (be(56), be(60), be(64));
    assert_eq!(
        bits_per_pixel, 32,
        "a 24-bit Xvfb screen stores 32 bits per pixel"
    );
    assert_eq!(
        (red_mask, green_mask, blue_mask),
        (0xff0000, 0xff00, 0xff),
        "a TrueColor visual"
    );
    let pixels = &d[header + ncolors * 12..];
    assert!(pixels.len() >= bytes_per_line * height, "a whole image");
    let mut rgb = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            let p = &pixels[y * bytes_per_line + x * 4..][..4];
            let v = if byte_order == 0 {
                u32::from_le_bytes([p[0], p[1], p[2], p[3]])
            } else {
                u32::from_be_bytes([p[0], p[1], p[2], p[3]])
            };
            rgb.push([(v >> 16) as u8, (v >> 8) as u8, v as u8]);
        }
    }
    (width, height, rgb)
}

/// Runs frames until `until` holds (at most `max` frames), pumping the window before each.
fn frames_until(
    win: &mut GameWindow,
    engine: &mut Engine,
    max: u32,
    mut until: impl FnMut(&WindowStatus, &Engine) -> bool,
) -> bool {
    for _ in 0..max {
        let status = win.pump(engine);
        engine.frame().expect("a frame");
        // Paced like a game at about 60 fps, so FIFO presents have a display to follow.
        std::thread::sleep(Duration::from_millis(12));
        if until(&status, engine) {
            return true;
        }
    }
    false
}

fn presented(engine: &Engine) -> u64 {
    engine.render_stats().present.map_or(0, |p| p.presented)
}

/// The body, in the child process with `DISPLAY` set.
fn window_run() {
    let mut win = GameWindow::open(&WindowConfig {
        title: "lanegraph window test".into(),
        size: (640, 480),
        resizable: true,
    })
    .expect("the window opens on the virtual display");
    let renderer = render::ParticleRenderer::windowed(
        win.window().clone(),
        win.surface_state(),
        lanegraph::vk::PresentMode::Fifo,
        true,
    )
    .expect("lavapipe presents to the Xvfb window");
    let hints = renderer.resize_hints_switch().expect("a windowed renderer");
    let mut engine = Engine::builder()
        .lockstep(true)
        .lanes_spec("physics=1,render=1,asset=1")
        .render(render::VIEW_DOMAINS, render::derive_view, renderer)
        .build()
        .expect("the engine builds");
    world::setup(engine.world_mut(), 4000, 7).expect("the world sets up");
    let mut phys = physics::DemoPhysics::default();
    engine.set_physics(move |w, s| phys.step(w, s));

    // Three resizes, each seen by the swapchain before the next. The second is left to the
    // driver alone (the window's resize event is not passed on): its OUT_OF_DATE or SUBOPTIMAL
    // must rebuild the swapchain by itself.
    for (i, (w, h)) in [(800u32, 600u32), (500, 700), (720, 400)]
        .into_iter()
        .enumerate()
    {
        hints.store(i != 1, std::sync::atomic::Ordering::Relaxed);
        let stale_before = engine.render_stats().present.map_or(0, |p| p.stale_results);
        let before = engine.render_stats().present.map_or(0, |p| p.recreated);
        let _ = win.window().request_inner_size(PhysicalSize::new(w, h));
        let ok = frames_until(&mut win, &mut engine, 300, |_, e| {
            e.render_stats()
                .present
                .is_some_and(|p| p.recreated > before && p.extent == (w, h))
        });
        assert!(
            ok,
            "resize {i} to {w}x{h}: the swapchain was not rebuilt at that size ({:?})",
            engine.render_stats().present
        );
        if i == 1 {
            let stale = engine.render_stats().present.map_or(0, |p| p.stale_results);
            assert!(stale > stale_before, "the driver reported nothing stale");
        }
    }
    hints.store(true, std::sync::atomic::Ordering::Relaxed);

    // Minimise: the window manager iconifies it; nothing is presented until it is restored.
    win.window().set_minimized(true);
    assert!(
        frames_until(&mut win, &mut engine, 300, |s, _| s.minimised),
        "the window manager did not minimise the window"
    );
    // A view published before the minimise may still be drawing: let it land.
    engine.finish_render();
    let at_minimise = presented(&engine);
    frames_until(&mut win, &mut engine, 30, |_, _| false);
    engine.finish_render();
    assert_eq!(
        presented(&engine),
        at_minimise,
        "frames were presented while minimised"
    );
    let skipped = engine
        .render_stats()
        .present
        .map_or(0, |p| p.skipped_minimised);
    assert!(skipped > 0, "minimised draws are counted as skipped");
    win.window().set_minimized(false);
    win.window().focus_window();
    assert!(
        frames_until(&mut win, &mut engine, 300, |s, _| !s.minimised),
        "the window was not restored"
    );

    // Up to 300 presented frames in all.
    assert!(
        frames_until(&mut win, &mut engine, 2000, |_, e| presented(e) >= 300),
        "300 frames were not presented: {:?}",
        engine.render_stats()
    );

    // The X display shows the particles: the demo's particle colour (0.35, 0.75, 1.0) on its
    // near-black clear colour, inside the window.
    let (w, h, rgb) = screenshot();
    let particle = |p: &[u8; 3]| p[2] > 150 && p[1] > 90 && p[0] < 160 && p[2] > p[0] + 60;
    let lit = rgb.iter().filter(|p| particle(p)).count();
    assert!(
        lit > 300,
        "the screenshot ({w}x{h}) shows {lit} particle-coloured pixels: the particles are not on screen"
    );
    let background = rgb
        .iter()
        .filter(|p| p[0] < 16 && p[1] < 16 && (8..32).contains(&p[2]))
        .count();
    assert!(
        background > 10_000,
        "the screenshot shows {background} pixels of the clear colour: the window is not on screen"
    );

    engine.finish_render();
    let device = engine.render_device();
    assert_eq!(
        device.validation_messages,
        Some(0),
        "validation (with synchronization validation) reported messages: see the log above"
    );
    let stats = engine.render_stats();
    assert!(stats.errors.is_empty(), "render errors: {:?}", stats.errors);
    let p = stats.present.expect("present figures");
    assert!(p.recreated >= 3, "{p:?}");
    assert_eq!(p.mode, "fifo");

    // Present pacing is in every telemetry output: the intervals for the report, the metrics,
    // and the trace's own `present` track (acquire and present spans, frames in flight as n).
    let intervals = engine.present_intervals_ms();
    assert!(intervals.len() >= 290, "{} intervals", intervals.len());
    assert!(intervals.iter().all(|ms| *ms > 0.0 && ms.is_finite()));
    let prom = lanegraph::hooks::telemetry::openmetrics::render(engine.metrics());
    for family in [
        "lanegraph_present_frames_total",
        "lanegraph_present_interval_seconds_count",
        "lanegraph_present_acquire_wait_seconds",
        "lanegraph_present_frames_in_flight",
    ] {
        assert!(prom.contains(family), "{family} missing from:\n{prom}");
    }
    let trace: serde_json::Value =
        serde_json::from_str(&engine.chrome_trace()).expect("the trace is JSON");
    let events = trace["traceEvents"].as_array().expect("trace events");
    let present_spans = |name: &str| {
        events
            .iter()
            .filter(|e| e["cat"] == "present" && e["name"] == name && e["ph"] == "X")
            .count()
    };
    assert!(present_spans("acquire") > 0 && present_spans("present") > 0);

    // The window's events reached the engine's input log: the resizes and the minimise.
    let log = engine.input_log();
    let resized = log
        .iter()
        .filter(|r| matches!(r.event, InputEvent::Resized { .. }))
        .count();
    assert!(resized >= 3, "{resized} resize events logged");
    assert!(log
        .iter()
        .any(|r| r.event == InputEvent::Minimised { minimised: true }));
    assert!(log
        .iter()
        .any(|r| r.event == InputEvent::Minimised { minimised: false }));
    assert!(log.windows(2).all(|w| w[0].frame <= w[1].frame));
}

#[test]
fn a_window_presents_300_frames_through_resizes_and_a_minimise_validation_clean() {
    on_virtual_display(
        "window_present::a_window_presents_300_frames_through_resizes_and_a_minimise_validation_clean",
        &["xwd"],
        window_run,
    );
}

/// The event-loop form: winit drives, the closure runs one frame per call at most at the
/// target rate (the loop sleeps between), input reaches the engine, `ControlFlow::Break` leaves.
fn event_loop_run() {
    use std::ops::ControlFlow;
    let mut win = GameWindow::open(&WindowConfig::default()).expect("the window opens");
    let mut engine = lanegraph_tests::engine_with_pass(lanegraph_tests::NullPass, 8);
    let _ = win
        .window()
        .request_inner_size(PhysicalSize::new(300u32, 200u32));
    let t0 = Instant::now();
    let mut calls = 0u32;
    win.run(&mut engine, |engine, _status| {
        calls += 1;
        engine.frame().expect("a frame");
        if calls == 30 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .expect("the event loop runs");
    let elapsed = t0.elapsed();
    // winit allows one event loop per process: a second window is a typed error, not a panic.
    assert!(
        matches!(
            GameWindow::open(&WindowConfig::default()),
            Err(lanegraph::window::WindowError::EventLoop { .. })
        ),
        "a second event loop in one process"
    );
    assert_eq!(calls, 30);
    assert_eq!(engine.frames(), 30);
    // 30 frames at the 60 fps target cannot end before 29 periods have passed: the loop
    // waited between frames instead of running them back to back (a lower bound only).
    assert!(
        elapsed >= Duration::from_secs_f64(29.0 / 60.0),
        "30 frames in {elapsed:?}: not paced"
    );
    // The window's events (its first size, focus, the resize) reached the input log.
    assert!(
        engine
            .input_log()
            .iter()
            .any(|r| matches!(r.event, InputEvent::Resized { .. })),
        "{:?}",
        engine.input_log()
    );
}

#[test]
fn the_event_loop_runs_frames_at_the_target_rate_until_exit() {
    on_virtual_display(
        "window_present::the_event_loop_runs_frames_at_the_target_rate_until_exit",
        &[],
        event_loop_run,
    );
}

/// A failed submit between acquire and present (injected) gives the image up and the next
/// frames present again, with no validation message: the acquire semaphore is made anew.
fn recovery_run() {
    use lanegraph::vk::{Gpu, GpuConfig, PresentMode, Swapchain, SwapchainConfig};
    use lanegraph_demo::gpu::{ParticleView, Renderer, RendererConfig};
    let win = GameWindow::open(&WindowConfig {
        size: (320, 240),
        ..WindowConfig::default()
    })
    .expect("the window opens");
    let (gpu, surface) = Gpu::with_window(
        &GpuConfig {
            validation: true,
            ..GpuConfig::default()
        },
        win.window().clone(),
    )
    .expect("lavapipe presents to the Xvfb window");
    let counts = gpu.validation_counter();
    let mut r = Renderer::new(
        &gpu,
        RendererConfig {
            width: 64,
            height: 64,
            capacity: 1024,
            frames_in_flight: 2,
            clear: [0.0, 0.0, 0.1, 1.0],
        },
    )
    .unwrap();
    let mut sc = Swapchain::new(
        surface,
        SwapchainConfig {
            mode: PresentMode::Fifo,
            frames_in_flight: 2,
            extent: (320, 240),
        },
    )
    .unwrap();
    let xs: Vec<f32> = (0..256).map(|i| (i as f32 / 128.0) - 1.0).collect();
    let ys: Vec<f32> = xs.iter().map(|x| x * 0.5).collect();
    let view = ParticleView {
        xs: &xs,
        ys: &ys,
        center: [0.0, 0.0],
        half_extent: [1.0, 1.0],
        radius: 0.02,
        color: [0.35, 0.75, 1.0, 1.0],
    };
    for _ in 0..10 {
        r.render_to(&view, Some(&mut sc)).expect("a frame");
    }
    r.fail_next_submit();
    assert!(
        r.render_to(&view, Some(&mut sc)).is_err(),
        "the injected failure"
    );
    assert_eq!(sc.stats().abandoned, 1);
    for _ in 0..10 {
        r.render_to(&view, Some(&mut sc))
            .expect("presenting goes on");
    }
    r.finish().unwrap();
    assert_eq!(sc.stats().presented, 20, "{:?}", sc.stats());
    drop(sc);
    drop(r);
    drop(gpu);
    assert_eq!(
        counts.total(),
        0,
        "validation (with synchronization validation) reported messages: see the log above"
    );
}

#[test]
fn a_failed_submit_while_presenting_recovers_validation_clean() {
    on_virtual_display(
        "window_present::a_failed_submit_while_presenting_recovers_validation_clean",
        &[],
        recovery_run,
    );
}
