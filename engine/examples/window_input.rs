//! A window with input: a winit window (X11) pumped once per frame by the game's loop; its
//! keys, mouse and focus become input events the systems read with typed keys.
//!
//! `cargo run -p lanegraph --features window --example window_input [FRAMES]`: arrows move the
//! player, Space jumps, closing the window ends the run (FRAMES: stop after that many frames
//! too; default: run until closed). Needs an X display (`xvfb-run` works headless). Prints the
//! player's moves and the events seen; exits 2 without a display, saying what is missing.

use lanegraph::prelude::*;
use lanegraph::window::{GameWindow, WindowConfig};

/// The player the keys move.
#[derive(Debug, Default, Resource, StateHash)]
#[resource(domains(GAMEPLAY))]
struct Player {
    x: i64,
    jumps: u64,
    clicks: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: Option<u64> = std::env::args().nth(1).map(|a| a.parse()).transpose()?;
    let config = WindowConfig {
        title: "lanegraph: window_input (arrows, Space, click)".into(),
        ..WindowConfig::default()
    };
    let mut window = match GameWindow::open(&config) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut engine = Engine::builder().target_fps(60.0).build()?;
    let w = engine.world_mut();
    w.insert_resource(Player::default())?;
    w.register_system(SystemDef::new("control", 0.2, |w: &mut World, _| {
        // The resource and the input at once: `split` lends both.
        if let Ok((_, (player,), input)) = w.split::<(&mut Player,)>() {
            player.x += input.is_down(KeyCode::ArrowRight) as i64
                - input.is_down(KeyCode::ArrowLeft) as i64;
            if input.just_pressed(KeyCode::Space) {
                player.jumps += 1;
                println!("jump at x = {}", player.x);
            }
            // Every event of this step, in order, for what the state queries do not cover.
            player.clicks += input
                .events()
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        InputEvent::MouseButton {
                            button: MouseButton::Left,
                            pressed: true
                        }
                    )
                })
                .count() as u64;
        }
    }))?;

    let pace = std::time::Duration::from_secs_f64(1.0 / 60.0);
    let status = loop {
        let started = std::time::Instant::now();
        // Handles the queued events without waiting and pushes them as input for this frame.
        let status = window.pump(&mut engine);
        if status.close_requested || frames.is_some_and(|n| engine.frames() >= n) {
            break status;
        }
        engine.frame()?;
        std::thread::sleep(pace.saturating_sub(started.elapsed()));
    };
    let p = engine.world().resource::<Player>()?;
    println!(
        "{} frames in a {}x{} window: player at x = {}, {} jumps, {} clicks, {} window events",
        engine.frames(),
        status.size.0,
        status.size.1,
        p.x,
        p.jumps,
        p.clicks,
        status.events
    );
    Ok(())
}
