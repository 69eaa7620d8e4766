//! The World: entities with generational handles, component columns, change epochs, the state hash and access telemetry. (Being built: issue 3.)
