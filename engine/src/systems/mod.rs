//! Systems: definitions, registration, per-system timing windows and budget enforcement. (Being built: issue 3.)
