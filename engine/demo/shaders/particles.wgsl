// Render pass: one instanced quad per surviving particle, drawn as a disc.
//
// Instance k draws particle visible[k] at (xs, ys), a triangle strip of 4 vertices spanning
// +- view.radius around it. World space is y-up; the view maps center +- half_extent to the
// whole target (x right, y up). Fragments outside the unit disc are discarded.
//
// The push-constant block must match `ViewParams` in src/passes/mod.rs byte for byte.

struct View {
    color: vec4<f32>,
    center: vec2<f32>,
    half_extent: vec2<f32>,
    radius: f32,
    count: u32,
}

@group(0) @binding(0) var<storage, read> xs: array<f32>;
@group(0) @binding(1) var<storage, read> ys: array<f32>;
@group(0) @binding(2) var<storage, read> visible: array<u32>;
var<push_constant> view: View;

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) local: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) v: u32, @builtin(instance_index) k: u32) -> VsOut {
    let i = visible[k];
    // Strip order (-1,-1), (1,-1), (-1,1), (1,1).
    let corner = vec2<f32>(f32(v & 1u), f32(v >> 1u)) * 2.0 - vec2<f32>(1.0, 1.0);
    let world = vec2<f32>(xs[i], ys[i]) + corner * view.radius;
    var out: VsOut;
    out.position = vec4<f32>((world - view.center) / view.half_extent, 0.0, 1.0);
    out.local = corner;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    if (dot(in.local, in.local) > 1.0) {
        discard;
    }
    return view.color;
}
