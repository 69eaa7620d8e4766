//! The integration suite of lanegraph: every cross-crate test in one binary (one link instead
//! of one per file). Each module is one area; `cargo test -p lanegraph-tests MODULE::` runs one.
//!
//! The binary installs the tracking allocator, as a game would: per-thread allocation counts
//! (`lanegraph_tests::count_allocs`) are exact whatever other tests do, and tests that read
//! process-wide figures run alone in a child process (`lanegraph_tests::isolated`).

/// The runtime's heap tracking, as any game binary installs it.
#[global_allocator]
static ALLOC: lanegraph::hooks::telemetry::TrackingAllocator =
    lanegraph::hooks::telemetry::TrackingAllocator::new();

mod budget_adaptation;
mod budget_control;
mod budget_cost_model;
mod budget_demo_trace;
mod budget_determinism;
mod budget_ladder;
mod budget_pins;
mod budget_pools;
mod budget_seeds;
mod budget_settling;
mod demo_determinism;
mod demo_metrics_endpoint;
mod demo_outputs;
mod docs_blocks;
mod engine_api;
mod engine_steady;
mod engine_stress;
mod fixed_step;
mod game_loop_determinism;
mod game_loop_steps;
mod gpu_memory_monitor;
mod gpu_timing_tags;
mod hostile_input;
mod input_replay;
mod module_tables;
mod patterns_by_mode;
mod report_chromium;
mod rollback_ggrs;
mod second_game;
mod systems_alloc_free;
mod systems_order;
mod systems_registration;
mod telemetry_alloc;
mod telemetry_live;
mod telemetry_metrics;
mod telemetry_openmetrics;
mod telemetry_trace;
mod window_present;
mod world_changed;
mod world_commands_events;
mod world_entities;
mod world_layout_advice;
mod world_par_query;
mod world_query;
mod world_savegame;
mod world_savegame_integrity;
mod world_snapshot;
mod world_soa;
mod world_spawn_batch;
mod world_sync_test;
