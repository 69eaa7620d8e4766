//! Test support: capture `tracing` events (level and fields) from a closure.

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// One captured event: level and every field rendered as text (`message` included).
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    pub(crate) level: tracing::Level,
    pub(crate) fields: Vec<(String, String)>,
}

impl Captured {
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Capture(Arc<Mutex<Vec<Captured>>>);

struct FieldsVisitor<'a>(&'a mut Vec<(String, String)>);

impl Visit for FieldsVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .push((field.name().to_string(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_string(), value.to_string()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Vec::new();
        event.record(&mut FieldsVisitor(&mut fields));
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            fields,
        });
    }
}

pub(crate) fn capturing<R>(f: impl FnOnce() -> R) -> (R, Vec<Captured>) {
    let sink = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Capture(sink.clone()));
    let r = tracing::subscriber::with_default(subscriber, f);
    let events = sink.lock().unwrap().clone();
    (r, events)
}
