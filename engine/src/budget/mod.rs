//! The adaptive budget controller: agents, strategies, cost models, PID, arbitration. (Being built: issue 5.)
