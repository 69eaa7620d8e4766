//! The live view: each frame's spans streamed, while the game runs, over puffin's wire
//! protocol (`puffin_http`), so `puffin_viewer --url 127.0.0.1:8585` shows the owner and every
//! lane worker as threads and every span by name.
//!
//! Owns: [`PuffinServer`], which turns one frame's collected spans into puffin streams (one
//! per track) and ends a puffin frame. Must never: cost anything when not started (the engine
//! holds none by default), block the frame on a slow viewer (the `puffin_http` server sends
//! from its own thread), or send a stream whose scopes do not nest (a child that outlives its
//! parent is clipped to the parent's end).
//!
//! Each span name is registered with puffin once, as a user scope; its name is also written as
//! the scope's data, so a client reads it from the stream itself. Puffin's own
//! `profile_scope!` data recorded in the process joins the same frames.

use std::collections::HashMap;

use puffin::{GlobalProfiler, ScopeDetails, ScopeId, Stream, StreamInfo, ThreadInfo};

use super::spans::{self, SpanRecord, TrackInfo};
use super::FrameSpans;

/// A `puffin_http` server fed with the engine's spans, one puffin frame per engine frame.
pub struct PuffinServer {
    server: puffin_http::Server,
    addr: String,
    /// Span name (by address: names are `&'static str`) -> its puffin scope.
    scopes: HashMap<(usize, usize), ScopeId>,
    /// puffin's clock (`puffin::now_ns`, from the Unix epoch) minus the engine's (from its
    /// start), read once: the engine's stamps are moved onto puffin's timeline, so data a game
    /// records with `puffin::profile_scope!` lines up with the engine's.
    offset_ns: i64,
    /// One frame's spans, sorted (reused).
    scratch: Vec<SpanRecord>,
}

impl std::fmt::Debug for PuffinServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PuffinServer")
            .field("addr", &self.addr)
            .field("clients", &self.clients())
            .finish_non_exhaustive()
    }
}

impl PuffinServer {
    /// Listens on `addr` (`"127.0.0.1:8585"`, puffin's usual port).
    pub fn start(addr: &str) -> Result<PuffinServer, crate::EndpointError> {
        let server = puffin_http::Server::new(addr).map_err(|e| crate::EndpointError::Puffin {
            addr: addr.to_string(),
            why: e.to_string(),
        })?;
        let offset_ns = puffin::now_ns() - lanegraph_jobs::clock::now().as_ns() as i64;
        Ok(PuffinServer {
            server,
            addr: addr.to_string(),
            scopes: HashMap::new(),
            offset_ns,
            scratch: Vec::new(),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Viewers connected now.
    pub(crate) fn clients(&self) -> usize {
        self.server.num_clients()
    }

    /// The body of [`PuffinHooks::publish`](crate::hooks::PuffinHooks::publish), which documents it.
    pub(crate) fn publish(&mut self, frame: &FrameSpans<'_>, tracks: &[TrackInfo]) {
        self.scratch.clear();
        self.scratch.extend_from_slice(frame.spans);
        spans::sort_for_export(&mut self.scratch);
        // Scopes first (puffin's lock only for names not seen before), then the streams,
        // built without the lock, then one short lock to report them and end the frame.
        let new: Vec<&'static str> = {
            let mut seen = std::collections::HashSet::new();
            self.scratch
                .iter()
                .map(|s| s.name)
                .filter(|n| !self.scopes.contains_key(&(n.as_ptr() as usize, n.len())))
                .filter(|n| seen.insert((n.as_ptr() as usize, n.len())))
                .collect()
        };
        if !new.is_empty() {
            let details: Vec<ScopeDetails> = new
                .iter()
                .map(|n| ScopeDetails::from_scope_name(*n))
                .collect();
            let ids = GlobalProfiler::lock().register_user_scopes(&details);
            for (n, id) in new.iter().zip(ids) {
                self.scopes.insert((n.as_ptr() as usize, n.len()), id);
            }
        }
        let mut streams = Vec::new();
        let mut i = 0;
        while i < self.scratch.len() {
            let track = self.scratch[i].track;
            let end = self.scratch[i..]
                .iter()
                .position(|s| s.track != track)
                .map_or(self.scratch.len(), |k| i + k);
            let mut stream = Stream::default();
            // Open scopes: (end ns, offset of the scope's size field).
            let mut open: Vec<(i64, usize)> = Vec::new();
            for s in &self.scratch[i..end] {
                let start = s.start.as_ns() as i64 + self.offset_ns;
                while open.last().is_some_and(|&(e, _)| e <= start) {
                    let (e, off) = open.pop().expect("checked non-empty");
                    stream.end_scope(off, e);
                }
                let Some(&id) = self.scopes.get(&(s.name.as_ptr() as usize, s.name.len())) else {
                    continue;
                };
                let parent_end = open.last().map_or(i64::MAX, |&(e, _)| e);
                let stop = (s.end.as_ns() as i64 + self.offset_ns)
                    .min(parent_end)
                    .max(start);
                let (off, _) = stream.begin_scope(|| start, id, s.name);
                open.push((stop, off));
            }
            while let Some((e, off)) = open.pop() {
                stream.end_scope(off, e);
            }
            let name = tracks
                .iter()
                .find(|t| t.id == track)
                .map_or_else(|| format!("track {}", track.0), |t| t.name.clone());
            if let Ok(info) = StreamInfo::parse(stream) {
                streams.push((
                    ThreadInfo {
                        start_time_ns: None,
                        name,
                    },
                    info,
                ));
            }
            i = end;
        }
        let mut profiler = GlobalProfiler::lock();
        for (info, stream) in streams {
            profiler.report_user_scopes(info, &stream.as_stream_into_ref());
        }
        profiler.new_frame();
    }
}
