//! The second game (`engine/examples/swarm`), run as a new user's game: many bodies, its own
//! agent, scripted input, no physics hook, no render pass, no built-in agent; five-wide
//! queries, commands from inside a query, an event, ordered systems and typed keys. Its run
//! replays bit for bit from its own `summary.json` on three lane plans, and with the
//! controller active its fixed step never changes and its agent settles.

#[allow(dead_code)]
#[path = "../../engine/examples/swarm/game.rs"]
mod game;

use lanegraph::hooks::ControllerDriver;
use lanegraph::hooks::EngineHooks;
use lanegraph::runtime::{RunLog, RunSummary};

const PLANS: [Option<&str>; 3] = [
    None,
    Some("physics=1,render=1,asset=1"),
    Some("physics=2,render=1,asset=1"),
];

fn opts(lanes: Option<&str>, target_fps: f64) -> game::SwarmOptions {
    game::SwarmOptions {
        bodies: 5_000,
        seed: 7,
        lanes: lanes.map(str::to_string),
        target_fps,
        lockstep: true,
        sync_test: None,
    }
}

#[test]
fn the_second_game_replays_from_its_own_summary_on_three_plans() {
    // A 1 ms budget (1000 fps) makes the controller act on the game's own agent.
    let mut live = game::build(&opts(None, 1000.0)).unwrap();
    // A pin mid-run too (decisions of every source replay through one path).
    live.run(100).unwrap();
    // Pinned to the strategy not in force, so the pin is a real switch.
    let other = match live.engine.strategy(live.collide).map(|s| s.get()) {
        Some(0) => "every_other",
        _ => "every_step",
    };
    live.engine.pin(live.collide, other).unwrap();
    live.run(50).unwrap();
    live.engine.unpin(live.collide);
    live.run(150).unwrap();
    let summary = RunSummary::from_engine(&live.engine);
    // The game's events and commands did their work (crowds read, sparks spawned and faded).
    let score = live.engine.world().resource::<game::Score>().unwrap();
    assert!(score.crowds > 0, "no crowd event was read");
    assert!(live.engine.world().command_failures().0 == 0);
    // The typed keys steered the wind (left for 30 frames, right for 60: net +15), and the
    // five-wide query moved every body and counted its bounces.
    assert_eq!(
        live.engine.world().resource::<game::Wind>().unwrap().0,
        15.0
    );
    let w = live.engine.world_mut();
    let mut bounces = 0u64;
    let moved = w
        .query::<(&game::Bounces, &game::Mass)>()
        .unwrap()
        .for_each(|(b, _)| bounces += u64::from(b.0));
    assert_eq!(moved, 5_000);
    assert!(bounces > 0, "no body reached a wall in 300 frames");
    assert!(!summary.inputs.is_empty(), "the scripted input is logged");
    assert!(
        summary
            .decisions
            .iter()
            .any(|d| d.reason == "manual: pinned"),
        "{:?}",
        summary.decisions
    );
    // The game writes its summary.json and reads its run log back from it.
    let json = serde_json::to_string_pretty(&summary).unwrap();
    let log: RunLog = serde_json::from_str(&json).unwrap();
    let whole: RunSummary = serde_json::from_str(&json).unwrap();
    assert_eq!(lanegraph::runtime::RunLog::from(&whole), log);
    for plan in PLANS {
        let mut replay = game::build(&opts(plan, 1000.0)).unwrap();
        replay.engine.replay(&log).unwrap();
        replay.run(300).unwrap();
        assert_eq!(
            format!("{:#018x}", replay.engine.world().state_hash()),
            summary.world_hash,
            "replayed on {plan:?}"
        );
    }
}

#[test]
fn the_second_game_keeps_its_step_and_its_agent_settles() {
    // Real clock: the controller adapts to this machine's frame times.
    let mut o = opts(None, 60.0);
    o.lockstep = false;
    o.bodies = 20_000;
    let mut swarm = game::build(&o).unwrap();
    let step = swarm.engine.world().fixed_step();
    swarm.run(600).unwrap();
    assert_eq!(
        swarm.engine.world().fixed_step(),
        step,
        "no agent changed the step"
    );
    assert!(swarm.engine.builtin_agents().is_empty());
    let steps = swarm.engine.loop_totals().steps;
    let score = swarm.engine.world().resource::<game::Score>().unwrap();
    // Sim time = steps x the configured step: every step ran at the configured step.
    assert_eq!(score.steps, steps);
    // Settled: after the first 120 frames, at most one change (a minute of frames allows one).
    let late = swarm
        .engine
        .controller()
        .log()
        .iter()
        .filter(|d| d.frame > 120)
        .count();
    assert!(
        late <= 1,
        "{late} changes after settling: {:?}",
        swarm
            .engine
            .controller()
            .log()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    );
}

/// Savegames as a new user writes them from docs/systems.md: register the game's types, save
/// mid-run, load into a fresh instance of the game: the same world, in both forms.
#[test]
fn the_second_game_saves_and_loads_mid_run() {
    use lanegraph::world::SaveSchema;
    let schema = SaveSchema::default()
        .component::<game::Pos>()
        .component::<game::Vel>()
        .component::<game::Mass>()
        .component::<game::Drag>()
        .component::<game::Bounces>()
        .component::<game::Spark>()
        .resource::<game::Wind>()
        .resource::<game::Score>()
        // The event queue: its events in flight and its sequence counter.
        .resource::<lanegraph::world::Events<game::Crowded>>()
        .resource::<game::CrowdReader>();
    let mut live = game::build(&opts(None, 60.0)).unwrap();
    live.run(120).unwrap();
    assert!(
        live.engine
            .world()
            .events::<game::Crowded>()
            .unwrap()
            .iter()
            .count()
            > 0,
        "events in flight at the save"
    );
    let mut file = Vec::new();
    schema.save(live.engine.world_mut(), &mut file).unwrap();
    let mut text = Vec::new();
    schema
        .save_text(live.engine.world_mut(), &mut text)
        .unwrap();
    let sparks = live
        .engine
        .world_mut()
        .query::<&game::Spark>()
        .unwrap()
        .count();
    for bytes in [&file, &text] {
        let mut fresh = game::build(&opts(None, 60.0)).unwrap();
        let report = schema
            .load_into(fresh.engine.world_mut(), &bytes[..])
            .unwrap();
        assert!(report.migrated.is_empty());
        let (a, b) = (live.engine.world(), fresh.engine.world());
        assert_eq!(b.state_hash(), a.state_hash(), "the saved state hash");
        assert_eq!(b.len(), a.len());
        assert_eq!(b.tick(), a.tick());
        assert_eq!(
            b.resource::<game::Score>().unwrap().bumps,
            a.resource::<game::Score>().unwrap().bumps
        );
        assert_eq!(
            fresh
                .engine
                .world_mut()
                .query::<&game::Spark>()
                .unwrap()
                .count(),
            sparks
        );
        // Component by component too.
        let mut pa = Vec::new();
        live.engine
            .world_mut()
            .query::<(lanegraph::world::Entity, &game::Pos, &game::Vel)>()
            .unwrap()
            .for_each(|(e, p, v)| pa.push((e, p.x, p.y, v.x, v.y)));
        let mut pb = Vec::new();
        fresh
            .engine
            .world_mut()
            .query::<(lanegraph::world::Entity, &game::Pos, &game::Vel)>()
            .unwrap()
            .for_each(|(e, p, v)| pb.push((e, p.x, p.y, v.x, v.y)));
        assert_eq!(pa, pb, "the same bodies, ids and row order");
    }
}

/// The second game writes the same report as the demo, from its own engine and run record:
/// its systems, its agent's decisions and its lanes' timeline are on the page.
#[test]
fn the_second_game_writes_its_own_report() {
    let mut swarm = game::build(&opts(None, 1000.0)).unwrap();
    // A 1 ms budget lets the controller decide when this machine's frames pass it; a pin to
    // the strategy not in force is a decision whatever the machine (a loaded one may run
    // these frames inside 1 ms, and then the controller rightly holds).
    swarm.run(60).unwrap();
    let other = match swarm.engine.strategy(swarm.collide).map(|s| s.get()) {
        Some(0) => "every_other",
        _ => "every_step",
    };
    swarm.engine.pin(swarm.collide, other).unwrap();
    swarm.run(60).unwrap();
    let data = lanegraph_report::ReportData::from_engine(&swarm.engine, "swarm", "the second game");
    assert!(!data.timeline.is_empty(), "the trace held frames");
    let html = lanegraph_report::render_html(&data);
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    for system in ["steer", "integrate", "collide", "score"] {
        assert!(
            html.contains(system),
            "system {system} missing from the report"
        );
    }
    assert!(html.contains("<svg"), "charts drawn");
    let decisions = &data.decisions;
    assert!(
        !decisions.is_empty(),
        "the pin, at least, is a decision on the page"
    );
    assert!(
        decisions
            .iter()
            .all(|d| d.agent == "collide" && html.contains(&d.to)),
        "every decision on the page: {decisions:?}"
    );
}

/// The second game under the SyncTest mode, turned on as a newcomer would (its options set
/// `EngineConfig::sync_test`): its systems, events, scripted input and its own agent's
/// switches (pinned here) re-simulate without a desync.
#[test]
fn the_second_game_runs_clean_under_the_sync_test_mode() {
    let mut o = opts(None, 60.0);
    o.bodies = 600;
    o.sync_test = Some(4);
    let mut swarm = game::build(&o).unwrap();
    swarm.run(30).unwrap();
    swarm.engine.pin(swarm.collide, "every_other").unwrap();
    swarm.run(30).unwrap();
    swarm.engine.pin(swarm.collide, "every_step").unwrap();
    swarm.run(30).unwrap();
    let summary = RunSummary::from_engine(&swarm.engine);
    assert!(!summary.inputs.is_empty(), "the scripted input ran");
    assert!(summary.decisions.len() >= 2, "{:?}", summary.decisions);
    assert_eq!(summary.sync_test, None);
}

/// The run summary covers the game's own agent like the built-in ones: its strategy at the
/// end, and its adaptation figures (overrun probes, settling, flips after settling).
#[test]
fn the_second_games_own_agent_is_in_the_summarys_strategies_and_adaptation() {
    use lanegraph::hooks::RunSummaryHooks;
    let mut swarm = game::build(&opts(None, 60.0)).unwrap();
    swarm.run(200).unwrap();
    let summary = lanegraph::runtime::RunSummary::from_engine(&swarm.engine);
    assert!(
        summary.strategies.contains_key("collide"),
        "{:?}",
        summary.strategies
    );
    let a = &summary.detail().adaptation.agents["collide"];
    // 200 frames at 60 fps hold a quiet window of 120 frames: it settled somewhere.
    assert!(a.settled_at.is_some(), "{a:?}");
    let json = serde_json::to_value(&summary).unwrap();
    assert!(
        json["adaptation"]["agents"]["collide"]["flips_after_settling"].is_u64(),
        "{json}"
    );
    assert!(summary
        .rows()
        .iter()
        .any(|(k, v)| *k == "adaptation" && v.contains("collide")));
}
