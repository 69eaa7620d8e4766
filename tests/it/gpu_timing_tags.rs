//! GPU readings reach the budget controller as the frame whose draw they measured: the render
//! lane hands each draw its `frame` (`DrawOutput::frame`), the pass tags the timings it reads
//! back later with the `frame` of the draw that recorded them, and the engine feeds that frame,
//! however many draws later the reading came (not "this frame minus the usual lag").

use std::collections::VecDeque;

use lanegraph::hooks::{ControllerDriver, EngineHooks};
use lanegraph::runtime::{DrawOutput, GpuFrame, RenderDevice, RenderPass, RenderSettings};

/// A pass "on a GPU" whose timings come back `lag` draws after the draw that recorded them,
/// tagged with that draw's frame plus `skew` (0 for a pass that tags as the contract says).
struct LateReadings {
    lag: usize,
    skew: u64,
    recorded: VecDeque<u64>,
}

impl RenderPass<Vec<f32>> for LateReadings {
    fn draw(
        &mut self,
        v: &Vec<f32>,
        _: &RenderSettings,
        out: &mut DrawOutput,
    ) -> Result<(), String> {
        out.instances = v.len() as u64;
        self.recorded.push_back(out.frame);
        if self.recorded.len() > self.lag {
            let measured = self.recorded.pop_front().expect("longer than the lag");
            out.gpu = Some(GpuFrame {
                frame: measured + self.skew,
                total_ms: 1.0,
                passes: Vec::new(),
            });
        }
        Ok(())
    }

    fn device(&self) -> RenderDevice {
        RenderDevice {
            name: Some("late readings".into()),
            ..RenderDevice::default()
        }
    }
}

fn engine(lag: usize, skew: u64) -> lanegraph::Engine {
    let pass = LateReadings {
        lag,
        skew,
        recorded: VecDeque::new(),
    };
    lanegraph_tests::engine_with_pass(pass, 8)
}

/// One lockstep frame whose view is drawn before the next frame starts.
fn frame(engine: &mut lanegraph::Engine) {
    // A new entity each frame changes the view: every frame is drawn.
    engine.world_mut().spawn();
    engine.frame().unwrap();
    engine.finish_render();
}

#[test]
fn a_reading_is_fed_as_the_frame_whose_draw_it_measured() {
    // Read three draws late. Frame k feeds the reading of the newest draw done when it looks:
    // draw k-1 (finished before frame k began) or draw k (when the render lane beat the owner
    // to it), which measured the draw of frame k-4 or k-3. "This frame minus the usual lag of two" would be
    // k-2, and is wrong.
    // A frame whose owner found the render job writing the pulse (`pulse_skips`, a `try_lock`
    // that would block) reads the pulse it read last, so it feeds nothing newer: under load
    // that is the one other outcome, and it must be exactly the previous frame's.
    let mut e = engine(3, 0);
    let mut last = None;
    for k in 1..=20u64 {
        let skips = e.render_stats().pulse_skips;
        frame(&mut e);
        let skipped = e.render_stats().pulse_skips > skips;
        let fed = e.controller().last_gpu().map(|(f, _)| f);
        if k >= 5 {
            assert!(
                fed == Some(k - 4) || fed == Some(k - 3) || (skipped && fed == last),
                "after frame {k}: fed {fed:?} (pulse read skipped: {skipped}, last fed {last:?})"
            );
        }
        last = fed;
    }
}

#[test]
fn a_tag_ahead_of_the_frame_is_not_fed() {
    // A pass that does not tag by the draw's frame (here: five frames ahead) feeds the controller
    // nothing rather than a figure for the wrong frame.
    let mut e = engine(1, 5);
    for _ in 0..12 {
        frame(&mut e);
    }
    assert_eq!(e.controller().last_gpu(), None);
}
