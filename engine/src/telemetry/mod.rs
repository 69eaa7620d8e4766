//! Telemetry: metrics registry, tracking allocator, trace spans, exporters. (Being built: issue 4.)
