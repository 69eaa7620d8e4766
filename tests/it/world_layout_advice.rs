//! The layout advisor fed from the World's own access telemetry: which components it tells to go
//! field-SoA + SIMD, which it leaves alone, and how a window of telemetry is taken.

use lanegraph::hooks::{ColumnAccess, WorldHooks};
use lanegraph::simd::advisor::{LayoutRecommendation, MIN_QUERIES, SIMD_MIN_ROWS_PER_QUERY};
use lanegraph::world::{Component, StateHash, World};

/// All-`f32`, stored AoS: a field-SoA candidate once it is swept in big batches.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(PHYSICS))]
struct Heat {
    value: f32,
    rate: f32,
}

/// Not all-`f32` (the default): never advised field-SoA, however it is swept.
#[derive(Debug, Clone, Copy, PartialEq, Component, StateHash)]
#[component(domains(GAMEPLAY))]
struct Team {
    id: u32,
    weight: f32,
}

fn world_with(rows: usize) -> World {
    let mut w = World::new();
    for i in 0..rows {
        let e = w.spawn();
        w.insert(
            e,
            Heat {
                value: i as f32,
                rate: 0.5,
            },
        )
        .unwrap();
        w.insert(
            e,
            Team {
                id: i as u32,
                weight: 1.0,
            },
        )
        .unwrap();
    }
    w
}

fn sweep(w: &mut World, times: u64) {
    for _ in 0..times {
        let mut heat = 0.0f32;
        w.query::<&Heat>().unwrap().for_each(|h| heat += h.value);
        let mut team = 0u32;
        w.query::<&Team>().unwrap().for_each(|t| team += t.id);
        std::hint::black_box((heat, team));
    }
}

fn advice_for(w: &World, name: &str) -> (LayoutRecommendation, String) {
    let a = w
        .layout_advice()
        .into_iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no advice for {name}"));
    (a.recommendation, a.reason)
}

#[test]
fn big_all_f32_sweeps_are_advised_field_soa_and_others_are_left_alone() {
    let mut w = world_with(SIMD_MIN_ROWS_PER_QUERY as usize * 4);
    sweep(&mut w, MIN_QUERIES);
    let (heat, why) = advice_for(&w, "Heat");
    assert_eq!(heat, LayoutRecommendation::SimdFieldSoa, "{why}");
    assert!(
        why.contains("1024 rows/query"),
        "the reason gives the figures: {why}"
    );
    let (team, why) = advice_for(&w, "Team");
    assert_eq!(team, LayoutRecommendation::KeepAos, "not all-f32: {why}");
}

#[test]
fn too_few_queries_or_too_few_rows_keep_the_column() {
    let mut w = world_with(SIMD_MIN_ROWS_PER_QUERY as usize * 4);
    sweep(&mut w, MIN_QUERIES - 1);
    let (heat, why) = advice_for(&w, "Heat");
    assert_eq!(heat, LayoutRecommendation::KeepAos, "{why}");
    assert!(why.contains("fewer than"), "{why}");

    let mut small = world_with(SIMD_MIN_ROWS_PER_QUERY as usize / 2);
    sweep(&mut small, MIN_QUERIES * 2);
    let (heat, why) = advice_for(&small, "Heat");
    assert_eq!(heat, LayoutRecommendation::KeepAos, "128 rows/query: {why}");
}

#[test]
fn a_window_counts_only_what_happened_inside_it() {
    let mut w = world_with(SIMD_MIN_ROWS_PER_QUERY as usize * 4);
    sweep(&mut w, MIN_QUERIES * 2);
    let before: Vec<ColumnAccess> = w.component_access();
    sweep(&mut w, 3);
    let now = w.component_access();
    let heat_before = before.iter().find(|a| a.name == "Heat").unwrap();
    let heat_now = now.iter().find(|a| a.name == "Heat").unwrap();
    let window = heat_now.since(heat_before);
    assert_eq!(window.query_count, 3);
    assert_eq!(window.rows_scanned, 3 * 1024);
    assert_eq!(window.bytes_scanned, 3 * 1024 * 8);
    assert!(window.all_f32);
    // Over the whole run the evidence suffices; inside the 3-query window it does not.
    assert_eq!(
        heat_now.advice().recommendation,
        LayoutRecommendation::SimdFieldSoa
    );
    assert_eq!(
        window.advice().recommendation,
        LayoutRecommendation::KeepAos
    );
    // Another component's snapshot is no baseline: zero counts, not a wrapped difference.
    let team_before = before.iter().find(|a| a.name == "Team").unwrap();
    assert_eq!(heat_now.since(team_before).query_count, 0);
}
