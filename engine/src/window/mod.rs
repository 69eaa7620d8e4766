//! A window for the game: `winit`'s window and event loop, its events turned into the engine's
//! input queue, and the figures the render lane needs to present to it (feature `window`).
//!
//! Owns: [`GameWindow`] (opening the window, pumping or running its event loop, translating
//! events into [`InputEvent`]s pushed with [`Engine::push_input`]), [`SurfaceState`] (size and
//! minimised state, shared lock-free with whatever presents on another thread), and the clear
//! error when there is no display. Must never: draw or present (the game's render pass does,
//! through `lanegraph::vk::Swapchain`, on the render lane), block the owner thread while events
//! wait (pumping returns at once), or run a frame itself in the pumped form.
//!
//! # Two ways to drive the engine
//! - **The game's loop pumps the window** ([`GameWindow::pump`]): call it once per frame before
//!   [`Engine::frame`]; it handles whatever events are queued, pushes them as input, and
//!   returns the window's [`WindowStatus`]. The demo does this (`engine/demo/src/lib.rs`): its
//!   loop keeps its pacing, its Ctrl-C handling and its frame count.
//! - **The event loop runs the frames** ([`GameWindow::run`]): winit calls back in
//!   `about_to_wait`; each call runs your closure (which calls `Engine::frame`), then the loop
//!   sleeps until the next frame is due at the engine's target rate (`ControlFlow::WaitUntil`,
//!   no spinning, also while minimised). Return `std::ops::ControlFlow::Break(())` or close
//!   the window to stop.
//!
//! Either way input reaches systems as [`crate::input`] describes, and closing the window is a
//! [`WindowStatus::close_requested`] (and an [`InputEvent::CloseRequested`]) the game answers by
//! finishing its run: the demo then writes its outputs as for any other end.
//!
//! # Platforms
//! X11 (and XWayland). `winit` is built with its X11 backend only: the one window system the
//! project's CPU-only test machines can exercise (Xvfb with Mesa's lavapipe).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use winit;
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::PhysicalKey;
use winit::platform::pump_events::{EventLoopExtPumpEvents, PumpStatus};
use winit::platform::run_on_demand::EventLoopExtRunOnDemand;
use winit::window::{Window, WindowAttributes, WindowId};

use crate::input::{InputEvent, Key, MouseButton};
use crate::runtime::Engine;

/// How to open the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowConfig {
    /// The title bar's text.
    pub title: String,
    /// The drawable area asked for, physical pixels (the window manager may give another).
    pub size: (u32, u32),
    /// Whether the player may resize it.
    pub resizable: bool,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            title: "lanegraph".into(),
            size: (1280, 720),
            resizable: true,
        }
    }
}

/// Why no window opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// There is no display to open a window on.
    #[error("window: no display: {why} (fix: run inside a desktop session, or under a virtual display, e.g. `xvfb-run -a lanegraph demo --window`; or run headless without the window)")]
    NoDisplay {
        /// What is missing.
        why: String,
    },
    /// The event loop would not start (a second one in this process, or the display refused).
    #[error("window: the event loop could not start: {why} (fix: open one window per process, and check the display is reachable)")]
    EventLoop {
        /// winit's reason.
        why: String,
    },
    /// The window could not be created.
    #[error(
        "window: creating the window failed: {why} (fix: check the display accepts new windows)"
    )]
    Create {
        /// winit's reason.
        why: String,
    },
}

/// The window's size and minimised state, shared lock-free with the thread that presents
/// (the render lane): written by the window on the owner thread, read per frame there.
#[derive(Debug, Default)]
pub struct SurfaceState {
    width: AtomicU32,
    height: AtomicU32,
    minimised: AtomicBool,
    resizes: AtomicU64,
}

impl SurfaceState {
    /// The drawable area, physical pixels.
    pub fn size(&self) -> (u32, u32) {
        (
            self.width.load(Ordering::Relaxed),
            self.height.load(Ordering::Relaxed),
        )
    }

    /// Whether the window is minimised (or has no area): present nothing.
    pub fn minimised(&self) -> bool {
        self.minimised.load(Ordering::Relaxed)
    }

    /// How many size changes the window has seen: a presenter that remembers the last value it
    /// acted on knows when to rebuild its swapchain.
    pub fn resizes(&self) -> u64 {
        self.resizes.load(Ordering::Acquire)
    }

    fn set_size(&self, w: u32, h: u32) {
        self.width.store(w, Ordering::Relaxed);
        self.height.store(h, Ordering::Relaxed);
        // Release: a reader that sees the new count sees the new size.
        self.resizes.fetch_add(1, Ordering::Release);
    }
}

/// The window as the last pump left it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowStatus {
    /// The drawable area, physical pixels.
    pub size: (u32, u32),
    /// Minimised (or without area).
    pub minimised: bool,
    /// Has keyboard focus.
    pub focused: bool,
    /// The player asked to close it (sticky): finish the run.
    pub close_requested: bool,
    /// Events handled so far.
    pub events: u64,
}

/// The window's side of winit's callbacks: creates the window, translates events.
struct Host {
    attrs: WindowAttributes,
    window: Option<Arc<Window>>,
    error: Option<String>,
    events: Vec<InputEvent>,
    status: WindowStatus,
    surface: Arc<SurfaceState>,
    /// Hand-overs to the engine so far (paces the minimised poll).
    hand_overs: u64,
}

/// Hand-overs between two minimised polls when no event came in (8 frames: a minimise is
/// seen within about 130 ms at 60 fps even without a focus change).
const MINIMISED_POLL_EVERY: u64 = 8;

impl Host {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.window.is_some() || self.error.is_some() {
            return;
        }
        match el.create_window(self.attrs.clone()) {
            Ok(w) => {
                let size = w.inner_size();
                self.surface.set_size(size.width, size.height);
                self.status.size = (size.width, size.height);
                self.window = Some(Arc::new(w));
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn window_event(&mut self, event: WindowEvent) {
        let input = match event {
            WindowEvent::Resized(s) => {
                self.status.size = (s.width, s.height);
                self.surface.set_size(s.width, s.height);
                self.set_minimised(s.width == 0 || s.height == 0);
                Some(InputEvent::Resized {
                    width: s.width,
                    height: s.height,
                })
            }
            WindowEvent::CloseRequested => {
                self.status.close_requested = true;
                Some(InputEvent::CloseRequested)
            }
            WindowEvent::Focused(focused) => {
                self.status.focused = focused;
                Some(InputEvent::Focused { focused })
            }
            WindowEvent::KeyboardInput { event, .. } => {
                let key = match event.physical_key {
                    PhysicalKey::Code(code) => Key::named(&format!("{code:?}")),
                    PhysicalKey::Unidentified(_) => None,
                }
                .or_else(|| Key::named("Unidentified"));
                key.map(|key| InputEvent::Key {
                    key,
                    pressed: event.state == ElementState::Pressed,
                    repeat: event.repeat,
                })
            }
            WindowEvent::CursorMoved { position, .. } => Some(InputEvent::CursorMoved {
                x: position.x as f32,
                y: position.y as f32,
            }),
            WindowEvent::MouseInput { state, button, .. } => Some(InputEvent::MouseButton {
                button: match button {
                    winit::event::MouseButton::Left => MouseButton::Left,
                    winit::event::MouseButton::Right => MouseButton::Right,
                    winit::event::MouseButton::Middle => MouseButton::Middle,
                    winit::event::MouseButton::Back => MouseButton::Back,
                    winit::event::MouseButton::Forward => MouseButton::Forward,
                    winit::event::MouseButton::Other(n) => MouseButton::Other(n),
                },
                pressed: state == ElementState::Pressed,
            }),
            WindowEvent::MouseWheel { delta, .. } => {
                let (dx, dy) = match delta {
                    MouseScrollDelta::LineDelta(x, y) => (x, y),
                    MouseScrollDelta::PixelDelta(p) => (p.x as f32 / 20.0, p.y as f32 / 20.0),
                };
                Some(InputEvent::Wheel { dx, dy })
            }
            _ => None,
        };
        if let Some(e) = input {
            self.status.events += 1;
            self.events.push(e);
        }
    }

    fn set_minimised(&mut self, minimised: bool) {
        if minimised != self.status.minimised {
            self.status.minimised = minimised;
            self.surface.minimised.store(minimised, Ordering::Relaxed);
            self.status.events += 1;
            self.events.push(InputEvent::Minimised { minimised });
        }
    }

    /// X11 sends no event when the window manager iconifies a window: ask (one round trip).
    fn poll_minimised(&mut self) {
        let Some(w) = &self.window else { return };
        let hidden = w.is_minimized().unwrap_or(false);
        let (width, height) = self.status.size;
        self.set_minimised(hidden || width == 0 || height == 0);
    }

    fn hand_over(&mut self, engine: &mut Engine) {
        // The round trip is not free on the owner thread: ask when events came in (an iconify
        // comes with a focus change) and every `MINIMISED_POLL_EVERY` hand-overs otherwise.
        self.hand_overs = self.hand_overs.wrapping_add(1);
        if !self.events.is_empty() || self.hand_overs % MINIMISED_POLL_EVERY == 0 {
            self.poll_minimised();
        }
        for e in self.events.drain(..) {
            engine.push_input(e);
        }
    }
}

impl ApplicationHandler for Host {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        Host::resumed(self, el);
    }

    fn window_event(&mut self, _el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        Host::window_event(self, event);
    }
}

/// A window and its event loop (see the module docs for the two ways to drive a game with it).
pub struct GameWindow {
    host: Host,
    /// Last: the window (in `host`) closes before the loop's display connection.
    event_loop: EventLoop<()>,
}

impl std::fmt::Debug for GameWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameWindow")
            .field("status", &self.host.status)
            .finish_non_exhaustive()
    }
}

impl GameWindow {
    /// Opens the window and shows it.
    ///
    /// Errors: [`WindowError::NoDisplay`] without `DISPLAY` (or when the display cannot be
    /// reached); [`WindowError::EventLoop`] for a second window in one process (winit allows one
    /// event loop per process); [`WindowError::Create`] when the display refuses the window.
    pub fn open(config: &WindowConfig) -> Result<GameWindow, WindowError> {
        match std::env::var_os("DISPLAY") {
            Some(d) if !d.is_empty() => {}
            _ => {
                return Err(WindowError::NoDisplay {
                    why: "DISPLAY is not set (this build opens X11 windows)".into(),
                })
            }
        }
        let mut builder = EventLoop::builder();
        // Any thread may own the loop: a game's main thread usually does, tests run elsewhere.
        winit::platform::x11::EventLoopBuilderExtX11::with_any_thread(&mut builder, true);
        // winit reports an unreachable display by panicking in some paths: keep it an error.
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.build()));
        let event_loop = match built {
            Ok(Ok(el)) => el,
            Ok(Err(winit::error::EventLoopError::RecreationAttempt)) => {
                return Err(WindowError::EventLoop {
                    why: "an event loop already ran in this process".into(),
                })
            }
            Ok(Err(e)) => {
                return Err(WindowError::NoDisplay {
                    why: format!("the display could not be opened: {e}"),
                })
            }
            Err(_) => {
                return Err(WindowError::NoDisplay {
                    why: "the display could not be opened (winit panicked while connecting)".into(),
                })
            }
        };
        let attrs = Window::default_attributes()
            .with_title(config.title.clone())
            .with_inner_size(PhysicalSize::new(
                config.size.0.max(1),
                config.size.1.max(1),
            ))
            .with_resizable(config.resizable);
        let mut me = GameWindow {
            host: Host {
                attrs,
                window: None,
                error: None,
                events: Vec::new(),
                status: WindowStatus {
                    focused: true,
                    ..WindowStatus::default()
                },
                surface: Arc::new(SurfaceState::default()),
                hand_overs: 0,
            },
            event_loop,
        };
        // The window is created in `resumed`, which the first pumps deliver.
        let deadline = Instant::now() + Duration::from_secs(5);
        while me.host.window.is_none() && me.host.error.is_none() {
            if Instant::now() > deadline {
                return Err(WindowError::Create {
                    why: "the event loop did not resume within 5 s".into(),
                });
            }
            if let PumpStatus::Exit(code) = me
                .event_loop
                .pump_app_events(Some(Duration::from_millis(10)), &mut me.host)
            {
                return Err(WindowError::EventLoop {
                    why: format!("the event loop exited (code {code}) before the window opened"),
                });
            }
        }
        if let Some(why) = me.host.error.take() {
            return Err(WindowError::Create { why });
        }
        Ok(me)
    }

    /// The window (for its raw handles: `lanegraph::vk::Gpu::with_window`, and for requests
    /// such as `request_inner_size`). Keep the returned `Arc` at least as long as any surface
    /// made from it.
    pub fn window(&self) -> &Arc<Window> {
        self.host
            .window
            .as_ref()
            .expect("open returns only once the window exists")
    }

    /// The size and minimised state, for the presenting thread.
    pub fn surface_state(&self) -> Arc<SurfaceState> {
        self.host.surface.clone()
    }

    /// The pumped form (module docs): handles queued events without waiting, pushes them to
    /// `engine` as input, and returns the window's status. Call once per frame, before
    /// [`Engine::frame`], on the thread that opened the window.
    pub fn pump(&mut self, engine: &mut Engine) -> WindowStatus {
        if let PumpStatus::Exit(_) = self
            .event_loop
            .pump_app_events(Some(Duration::ZERO), &mut self.host)
        {
            self.host.status.close_requested = true;
        }
        self.host.hand_over(engine);
        self.host.status
    }

    /// The event-loop form (module docs): winit drives; `frame` runs once per frame, at most
    /// at the engine's target rate, until it returns `ControlFlow::Break(())` (`std::ops`;
    /// `Continue(())` runs another frame when it is due) or the window is closed
    /// (`frame` still runs once after the close, with `close_requested` set, to finish).
    ///
    /// Terminal: once it returns the game is over for this window. winit keeps the loop's
    /// exit state, so a later [`pump`](Self::pump) reports `close_requested`; do not mix the
    /// two forms on one window.
    ///
    /// Errors: [`WindowError::EventLoop`] when winit's loop fails.
    pub fn run(
        &mut self,
        engine: &mut Engine,
        mut frame: impl FnMut(&mut Engine, &WindowStatus) -> std::ops::ControlFlow<()>,
    ) -> Result<(), WindowError> {
        let period = Duration::from_secs_f64(1.0 / engine.config().target_fps.max(1.0));
        let mut driven = Driven {
            host: &mut self.host,
            engine,
            frame: &mut frame,
            period,
            next: Instant::now(),
        };
        self.event_loop
            .run_app_on_demand(&mut driven)
            .map_err(|e| WindowError::EventLoop { why: e.to_string() })
    }
}

/// [`GameWindow::run`]'s handler: the host's callbacks plus a frame per `about_to_wait`.
struct Driven<'a, F> {
    host: &'a mut Host,
    engine: &'a mut Engine,
    frame: &'a mut F,
    period: Duration,
    next: Instant,
}

impl<F: FnMut(&mut Engine, &WindowStatus) -> std::ops::ControlFlow<()>> ApplicationHandler
    for Driven<'_, F>
{
    fn resumed(&mut self, el: &ActiveEventLoop) {
        self.host.resumed(el);
    }

    fn window_event(&mut self, _el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        self.host.window_event(event);
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        let now = Instant::now();
        if now < self.next && !self.host.status.close_requested {
            el.set_control_flow(ControlFlow::WaitUntil(self.next));
            return;
        }
        self.host.hand_over(self.engine);
        let status = self.host.status;
        let flow = (self.frame)(self.engine, &status);
        if flow.is_break() || status.close_requested {
            el.exit();
            return;
        }
        // The next frame is due one period after this one was; a late frame does not make
        // the following ones rush to catch up.
        self.next = (self.next + self.period).max(now);
        el.set_control_flow(ControlFlow::WaitUntil(self.next));
    }
}
