//! The checked-in SPIR-V is exactly what `naga` makes of the WGSL sources.
//!
//! `LANEGRAPH_BLESS_SHADERS=1 cargo test -p lanegraph-demo --test it shaders_current` rewrites the
//! `.spv` files after a shader edit (see `src/shaders.rs` for the route and why).

use std::path::PathBuf;

fn compile(source: &str, name: &str) -> Vec<u8> {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::PUSH_CONSTANT,
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    // These settings are documented in lanegraph::vk::shaders::SPIRV_OPTIONS.
    let options = naga::back::spv::Options {
        lang_version: (1, 3),
        flags: naga::back::spv::WriterFlags::ADJUST_COORDINATE_SPACE
            | naga::back::spv::WriterFlags::LABEL_VARYINGS,
        ..Default::default()
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, None)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn checked_in_spirv_matches_sources() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let bless = std::env::var_os("LANEGRAPH_BLESS_SHADERS").is_some();
    for blob in lanegraph_demo::gpu::shaders::ALL {
        let src_path = dir.join(blob.source);
        let source = std::fs::read_to_string(&src_path).expect("shader source readable");
        let fresh = compile(&source, blob.source);
        let spv_path = src_path.with_extension("spv");
        if bless {
            std::fs::write(&spv_path, &fresh).expect("write spv");
            eprintln!("blessed {}", spv_path.display());
            continue;
        }
        assert!(
            fresh == blob.spirv,
            "{} is stale: the source compiles to {} bytes, the checked-in SPIR-V has {}; run \
             LANEGRAPH_BLESS_SHADERS=1 cargo test -p lanegraph-demo --test it shaders_current",
            spv_path.display(),
            fresh.len(),
            blob.spirv.len()
        );
    }
}
