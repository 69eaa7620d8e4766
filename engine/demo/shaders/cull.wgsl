// Compute pass: frustum-cull the frame's particles into a compacted index list and the
// instance count of an indirect draw.
//
// Input is field-SoA, straight from the World's position columns (no per-frame transpose):
// xs[i], ys[i] for i < view.count. A particle survives when its disc (radius view.radius)
// overlaps the view rectangle center +- half_extent. Survivors append their index to
// `visible` through an atomic on `draw.instance_count`; order is unspecified (all particles
// share one colour, so the picture does not depend on it).
//
// The push-constant block must match `ViewParams` in src/passes/mod.rs byte for byte.

struct View {
    color: vec4<f32>,
    center: vec2<f32>,
    half_extent: vec2<f32>,
    radius: f32,
    count: u32,
}

struct DrawIndirect {
    vertex_count: u32,
    instance_count: atomic<u32>,
    first_vertex: u32,
    first_instance: u32,
}

@group(0) @binding(0) var<storage, read> xs: array<f32>;
@group(0) @binding(1) var<storage, read> ys: array<f32>;
@group(0) @binding(2) var<storage, read_write> visible: array<u32>;
@group(0) @binding(3) var<storage, read_write> draw: DrawIndirect;
var<push_constant> view: View;

@compute @workgroup_size(64)
fn cull(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= view.count) {
        return;
    }
    let d = abs(vec2<f32>(xs[i], ys[i]) - view.center);
    let reach = view.half_extent + vec2<f32>(view.radius, view.radius);
    if (d.x > reach.x || d.y > reach.y) {
        return;
    }
    let slot = atomicAdd(&draw.instance_count, 1u);
    visible[slot] = i;
}
