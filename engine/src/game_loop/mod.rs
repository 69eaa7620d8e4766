//! The fixed-timestep game loop: accumulator, steps, interpolation alpha, injectable clock. (Being built: issue 3.)
