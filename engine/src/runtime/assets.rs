//! The asset stream: requests go through one prebuilt graph across two lanes (decode on the
//! asset lane, upload on the render lane), and completions come back to the owner, at most the
//! asset budget's worth per frame.
//!
//! Owns: the request queue, the load graph and its batch, the completion channel, and the typed
//! errors of a load (the decoders are the game's registered loaders: [`super::loaders`]). Must never: stop the game over a bad file (a missing,
//! unreadable, corrupt or panicking load is a completion with an error), lose a request (every
//! issued request completes exactly once, also when its decode panics), or block the owner on a
//! load.
//!
//! # Protocol
//! 1. `request` queues a path on the owner.
//! 2. `pump` (owner, once per frame): when no batch is in flight, fills up to `jobs_per_frame`
//!    (at most [`BATCH`]) slots of the batch, sets `in_flight`, and spawns one detached job on
//!    the asset lane. The job runs the load graph: `decode.i` (asset lane: read, decode inside
//!    `catch_unwind`, with the loader of the file's extension) -> `upload.i` (render lane: a
//!    decoded image goes to the game's render pass). Unused slots' nodes do nothing.
//! 3. After the run the job sends exactly one completion per filled slot, drops its lanes
//!    handle, then clears `in_flight` (release). The owner never drops the last lanes handle
//!    while a run is in flight ([`AssetStream`]'s drop waits for it first), and should a job
//!    still end up holding the last one, `Lanes` detaches rather than joins its own worker.
//! 4. `drain` (owner) takes at most `jobs_per_frame` completions, for the totals and the log.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender};
use lanegraph_jobs::{Graph, GraphBuilder, LaneId, Lanes};

pub use super::loaders::AssetError;
use super::loaders::{Asset, DecodedImage, Loaders};

/// Loads per batch at most (the graph's width; the asset strategies ask for 1 to 4 a frame).
pub(crate) const BATCH: usize = 4;

/// Where a decoded image goes from the upload node (the render lane's texture intake).
pub(crate) type TextureSink = Arc<dyn Fn(Arc<DecodedImage>) + Send + Sync>;

/// One finished request.
#[derive(Debug, Clone)]
pub(crate) struct AssetCompletion {
    /// The request's path.
    pub(crate) path: PathBuf,
    /// What loaded, or why nothing did.
    pub(crate) result: Result<Asset, AssetError>,
}

/// Totals of the engine's asset stream ([`Engine::asset_report`](crate::Engine::asset_report)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssetTotals {
    /// Requests made.
    pub requested: u64,
    /// Requests issued to the lane.
    pub issued: u64,
    /// Completions drained that loaded.
    pub loaded: u64,
    /// Completions drained that failed.
    pub failed: u64,
}

/// One slot of the batch: the request and, after its decode node, the result.
#[derive(Default)]
struct Slot {
    /// The request's path (`None`: unused this run). Writer: `pump` (owner thread, step 2).
    /// Readers: `decode_slot` (asset lane); `run_batch` takes it (asset lane, step 3).
    path: Option<PathBuf>,
    /// The decode's result (`None` until `decode.i` ran). Writers: `decode_slot` (asset lane),
    /// `pump` (clears it). Readers: the `upload.i` node (render lane); `run_batch` takes it.
    result: Option<Result<Asset, AssetError>>,
}

/// The load graph's context: [`BATCH`] slots, the loaders, the sink and the fault-injection hook.
struct Batch {
    /// One slot per column `i` of the graph, each under its own lock. Writers: `pump` (owner
    /// thread), `decode_slot`, `run_batch` (asset lane). Readers: those, and the `upload.i` nodes
    /// (render lane).
    slots: [Mutex<Slot>; BATCH],
    /// The game's registered loaders, by file extension. Writer: `AssetStream::new`.
    /// Reader: `decode_slot` (asset lane).
    loaders: Loaders,
    /// Where decoded images go (the render lane's texture intake). Writer: `AssetStream::new`.
    /// Reader: the `upload.i` nodes (render lane).
    sink: TextureSink,
    /// Fault injection (feature `testing`): decodes whose path contains this panic (the
    /// stress run injects them). Writer: `inject_panics_for` (owner thread). Reader:
    /// `decode_slot` (asset lane).
    #[cfg(feature = "testing")]
    panic_marker: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The graph, its batch and the in-flight flag (writer: the owner sets it, the job clears it).
struct Pipeline {
    asset: LaneId,
    graph: Arc<Mutex<Graph<Batch>>>,
    batch: Arc<Batch>,
    in_flight: Arc<AtomicBool>,
}

/// The owner's side of the asset pipeline (see the module docs).
pub(crate) struct AssetStream {
    /// The load graph, its batch and the in-flight flag (`None`: see `unavailable`). Writer: `new`.
    /// Readers: `pump`, `in_flight`, `inject_panics_for` (owner thread).
    pipeline: Option<Pipeline>,
    /// Why there is no pipeline (no asset lane, or the graph did not build).
    /// Writer: `new`. Readers: `pump` (the error of each failed request), `Debug`.
    unavailable: Option<String>,
    /// Requested paths not yet issued, oldest first. Writers: `request` (step 1, pushes), `pump`
    /// (step 2, pops), both on the owner thread. Readers: `pump`, `Debug`.
    queue: VecDeque<PathBuf>,
    /// The completion channel's sending end; each batch job gets a clone. Writers: `run_batch`
    /// (asset lane, step 3), `fail_request` from `pump` (owner thread). Reader: `rx`.
    tx: Sender<AssetCompletion>,
    /// The completion channel's receiving end (kept as long as the stream). Writers: see `tx`.
    /// Reader: `drain` (owner thread, step 4).
    rx: Receiver<AssetCompletion>,
    /// Requests made, issued, loaded and failed. Writers: `request`, `pump`, `drain` (owner
    /// thread). Readers: `pending`, `totals`, `Debug`.
    totals: AssetTotals,
}

impl std::fmt::Debug for AssetStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssetStream")
            .field("queued", &self.queue.len())
            .field("totals", &self.totals)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

impl AssetStream {
    /// A stream whose graph decodes on lane `asset` with `loaders` and hands images to `sink`
    /// on lane `upload` (the render lane; the asset lane again when the plan has none). Without
    /// an asset lane requests fail at `pump` with a clear error rather than queue forever.
    pub(crate) fn new(
        lanes: &Lanes,
        asset: Option<LaneId>,
        upload: Option<LaneId>,
        sink: TextureSink,
        loaders: Loaders,
    ) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        let (pipeline, unavailable) = match asset {
            None => (None, Some("the lane plan has no `asset` lane".to_string())),
            Some(asset) => match build_graph(lanes, asset, upload.unwrap_or(asset)) {
                Ok(graph) => (
                    Some(Pipeline {
                        asset,
                        graph: Arc::new(Mutex::new(graph)),
                        batch: Arc::new(Batch {
                            slots: Default::default(),
                            loaders,
                            sink,
                            #[cfg(feature = "testing")]
                            panic_marker: Mutex::new(None),
                        }),
                        in_flight: Arc::new(AtomicBool::new(false)),
                    }),
                    None,
                ),
                Err(e) => (None, Some(format!("the asset graph did not build: {e}"))),
            },
        };
        AssetStream {
            pipeline,
            unavailable,
            queue: VecDeque::new(),
            tx,
            rx,
            totals: AssetTotals::default(),
        }
    }

    /// Makes decodes panic for paths containing `marker` (fault injection for stress runs).
    #[cfg(feature = "testing")]
    pub(crate) fn inject_panics_for(&mut self, marker: &str) {
        if let Some(p) = &self.pipeline {
            *lock(&p.batch.panic_marker) = Some(marker.to_string());
        }
    }

    /// Queues a load of `path` (step 1).
    pub(crate) fn request(&mut self, path: impl Into<PathBuf>) {
        self.totals.requested += 1;
        self.queue.push_back(path.into());
    }

    /// Step 2: issues at most `jobs` (and at most `BATCH`) queued requests as one run of the
    /// load graph, unless the previous run is still in flight; returns how many.
    pub(crate) fn pump(&mut self, lanes: &Arc<Lanes>, jobs: u32) -> u32 {
        let Some(p) = &self.pipeline else {
            // No pipeline to run on: nothing is lost, every request fails visibly.
            let why = self.unavailable.clone().unwrap_or_default();
            let mut issued = 0;
            while issued < jobs {
                let Some(path) = self.queue.pop_front() else {
                    break;
                };
                fail_request(&self.tx, path, why.clone());
                self.totals.issued += 1;
                issued += 1;
            }
            return issued;
        };
        if self.queue.is_empty() || p.in_flight.load(Ordering::Acquire) {
            return 0;
        }
        let want = (jobs as usize).clamp(1, BATCH);
        let mut issued = 0;
        for slot in &p.batch.slots {
            let mut s = lock(slot);
            *s = Slot::default();
            if issued < want {
                if let Some(path) = self.queue.pop_front() {
                    s.path = Some(path);
                    issued += 1;
                }
            }
        }
        p.in_flight.store(true, Ordering::Release);
        let job = {
            let handle = Arc::clone(lanes);
            let graph = Arc::clone(&p.graph);
            let batch = Arc::clone(&p.batch);
            let in_flight = Arc::clone(&p.in_flight);
            let tx = self.tx.clone();
            move || run_batch(handle, &graph, &batch, &in_flight, &tx)
        };
        if lanes.spawn_detached(p.asset, job).is_err() {
            // Unreachable with a lane from this plan; if it happens, fail the batch visibly.
            for slot in &p.batch.slots {
                if let Some(path) = lock(slot).path.take() {
                    fail_request(&self.tx, path, "the asset lane refused the job".into());
                }
            }
            p.in_flight.store(false, Ordering::Release);
        }
        self.totals.issued += issued as u64;
        issued as u32
    }

    /// Takes at most `max` completions (step 4).
    pub(crate) fn drain(&mut self, max: u32, out: &mut Vec<AssetCompletion>) {
        for _ in 0..max {
            match self.rx.try_recv() {
                Ok(c) => {
                    if c.result.is_ok() {
                        self.totals.loaded += 1;
                    } else {
                        self.totals.failed += 1;
                    }
                    out.push(c);
                }
                Err(_) => break,
            }
        }
    }

    /// Requests issued whose completion has not been drained yet, plus those still queued.
    pub(crate) fn pending(&self) -> u64 {
        self.totals.requested - self.totals.loaded - self.totals.failed
    }

    /// Totals so far.
    pub(crate) fn totals(&self) -> AssetTotals {
        self.totals
    }

    /// Whether a run of the load graph is in flight.
    pub(crate) fn in_flight(&self) -> bool {
        self.pipeline
            .as_ref()
            .is_some_and(|p| p.in_flight.load(Ordering::Acquire))
    }
}

impl Drop for AssetStream {
    /// Waits (at most 30 s) for a run in flight, so its job drops its lanes handle before the
    /// engine drops its own (protocol step 3).
    fn drop(&mut self) {
        let t0 = std::time::Instant::now();
        while self.in_flight() {
            if t0.elapsed() > std::time::Duration::from_secs(30) {
                tracing::warn!("an asset batch did not finish within 30 s of shutdown");
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

/// Completes a request that never reached a decoder, with why.
fn fail_request(tx: &Sender<AssetCompletion>, path: PathBuf, why: String) {
    let _ = tx.send(AssetCompletion {
        path: path.clone(),
        result: Err(AssetError::NoAssetLane { path, why }),
    });
}

/// The load graph: `decode.i` on `asset` -> `upload.i` on `upload`, for each of [`BATCH`] slots.
fn build_graph(
    lanes: &Lanes,
    asset: LaneId,
    upload: LaneId,
) -> Result<Graph<Batch>, lanegraph_jobs::GraphError> {
    let name_of = |id: LaneId| lanes.plan().lanes()[id.index()].name.clone();
    let (asset, upload) = (name_of(asset), name_of(upload));
    let mut b = GraphBuilder::<Batch>::new("assets.load");
    for i in 0..BATCH {
        let d = b.node(&format!("decode.{i}"), &asset, move |_, batch: &Batch| {
            decode_slot(batch, i)
        });
        let u = b.node(&format!("upload.{i}"), &upload, move |_, batch: &Batch| {
            let _span = crate::span!("asset.upload");
            let s = lock(&batch.slots[i]);
            if let Some(Ok(Asset::Image(img))) = &s.result {
                (batch.sink)(Arc::clone(img));
            }
        });
        b.edge(d, u);
    }
    b.build(lanes)
}

/// Node `decode.i`: reads and decodes slot `i`'s file; the result always lands in the slot.
fn decode_slot(batch: &Batch, i: usize) {
    let Some(path) = lock(&batch.slots[i]).path.clone() else {
        return;
    };
    let _span = crate::span!("asset.decode");
    #[cfg(feature = "testing")]
    let marker = lock(&batch.panic_marker).clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        #[cfg(feature = "testing")]
        if let Some(m) = &marker {
            if path.to_string_lossy().contains(m.as_str()) {
                panic!("injected fault for `{}`", path.display());
            }
        }
        batch.loaders.load(&path)
    }))
    .unwrap_or_else(|p| {
        Err(AssetError::Panicked {
            path: path.clone(),
            why: lanegraph_jobs::error::panic_message(&*p),
        })
    });
    let mut s = lock(&batch.slots[i]);
    s.result = Some(result);
}

/// The detached job of steps 2-3: runs the graph, sends one completion per filled slot, drops
/// the lanes handle, then clears `in_flight`.
fn run_batch(
    lanes: Arc<Lanes>,
    graph: &Mutex<Graph<Batch>>,
    batch: &Batch,
    in_flight: &AtomicBool,
    tx: &Sender<AssetCompletion>,
) {
    let ran = lock(graph)
        .run(&lanes, batch)
        .map(|_| ())
        .map_err(|e| e.to_string());
    drop(lanes);
    for slot in &batch.slots {
        let mut s = lock(slot);
        let Some(path) = s.path.take() else {
            continue;
        };
        // A slot without a result: its node did not run (the graph caught a panic outside
        // the decode's own `catch_unwind`); still exactly one completion.
        let result = s.result.take().unwrap_or_else(|| {
            Err(AssetError::Panicked {
                path: path.clone(),
                why: ran
                    .clone()
                    .err()
                    .unwrap_or_else(|| "the decode did not run".into()),
            })
        });
        // The receiver lives as long as the stream; a send after it is gone has no one left
        // to tell.
        let _ = tx.send(AssetCompletion { path, result });
    }
    in_flight.store(false, Ordering::Release);
}

#[cfg(all(test, feature = "png"))]
mod pipeline_tests {
    use super::*;
    #[cfg(feature = "testing")]
    use crate::runtime::encode_png;
    use lanegraph_jobs::{LaneKind, LanePlan};

    fn lanes() -> Arc<Lanes> {
        let plan = LanePlan::empty(&[0])
            .with_lane("render", LaneKind::FrameCritical, vec![None])
            .and_then(|p| p.with_lane("asset", LaneKind::Background, vec![None]))
            .expect("plan");
        Arc::new(Lanes::start(plan).expect("lanes"))
    }

    /// Five good PNGs, a corrupt one, a missing one and one named to panic, in a fresh
    /// folder.
    #[cfg(feature = "testing")]
    fn asset_files() -> (PathBuf, Vec<PathBuf>) {
        let dir = std::env::temp_dir().join(format!("lanegraph-assets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let png = encode_png(2, 2, &[7u8; 16]).unwrap();
        let mut files = Vec::new();
        for i in 0..5 {
            let p = dir.join(format!("good{i}.png"));
            std::fs::write(&p, &png).unwrap();
            files.push(p);
        }
        let corrupt = dir.join("corrupt.png");
        std::fs::write(&corrupt, &png[..png.len() / 2]).unwrap();
        let boom = dir.join("panic_me.png");
        std::fs::write(&boom, &png).unwrap();
        files.extend([corrupt, dir.join("missing.png"), boom]);
        (dir, files)
    }

    /// Decode on the asset lane, upload on the render lane, one graph: every request completes
    /// exactly once (good, corrupt, missing, panicking), only good images reach the sink, and
    /// they reach it on a render-lane thread.
    #[test]
    #[cfg(feature = "testing")]
    fn one_graph_decodes_on_asset_and_uploads_on_render() {
        let (dir, files) = asset_files();

        let lanes = lanes();
        let uploads: Arc<Mutex<Vec<(PathBuf, String)>>> = Arc::default();
        let sink: TextureSink = {
            let uploads = Arc::clone(&uploads);
            Arc::new(move |img: Arc<DecodedImage>| {
                let thread = std::thread::current().name().unwrap_or("?").to_string();
                lock(&uploads).push((img.path.clone(), thread));
            })
        };
        let mut s = AssetStream::new(
            &lanes,
            lanes.lane("asset"),
            lanes.lane("render"),
            sink,
            crate::runtime::png_loader::tests::with_png(),
        );
        s.inject_panics_for("panic_");
        for f in &files {
            s.request(f);
        }
        let mut done = Vec::new();
        let t0 = std::time::Instant::now();
        let mut batches = 0;
        while done.len() < files.len() {
            assert!(t0.elapsed().as_secs() < 20, "loads hung: {done:?}");
            let issued = s.pump(&lanes, 3);
            assert!(issued <= 3, "a batch is at most the asked jobs");
            if issued > 0 {
                batches += 1;
                assert_eq!(s.pump(&lanes, 3), 0, "one batch in flight at a time");
            }
            s.drain(8, &mut done);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(
            batches >= 3,
            "8 requests at 3 a batch take 3 batches, got {batches}"
        );
        let mut paths: Vec<_> = done.iter().map(|c| c.path.clone()).collect();
        paths.sort();
        let mut want = files.clone();
        want.sort();
        assert_eq!(paths, want, "each request completes exactly once");
        let failed: Vec<_> = done.iter().filter(|c| c.result.is_err()).collect();
        assert_eq!(failed.len(), 3);
        assert!(failed
            .iter()
            .any(|c| matches!(c.result, Err(AssetError::Panicked { .. }))));
        assert!(failed
            .iter()
            .any(|c| matches!(c.result, Err(AssetError::Missing { .. }))));
        assert!(failed
            .iter()
            .any(|c| matches!(c.result, Err(AssetError::Corrupt { .. }))));
        let up = lock(&uploads).clone();
        assert_eq!(up.len(), 5, "only the good images are uploaded: {up:?}");
        assert!(
            up.iter().all(|(_, t)| t.contains("render")),
            "uploads run on the render lane: {up:?}"
        );
        assert_eq!(s.totals().loaded, 5);
        assert_eq!(s.pending(), 0);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_an_asset_lane_requests_fail_visibly() {
        let lanes = lanes();
        let mut s = AssetStream::new(
            &lanes,
            None,
            lanes.lane("render"),
            Arc::new(|_| {}),
            crate::runtime::png_loader::tests::with_png(),
        );
        s.request("a.png");
        assert_eq!(s.pump(&lanes, 4), 1);
        let mut out = Vec::new();
        s.drain(4, &mut out);
        assert_eq!(out.len(), 1);
        let e = out[0].result.as_ref().unwrap_err().to_string();
        assert!(
            matches!(out[0].result, Err(AssetError::NoAssetLane { .. })),
            "{e}"
        );
        assert!(
            e.contains("no `asset` lane") && e.contains("fix: give the lane plan an `asset` lane"),
            "{e}"
        );
    }
}
