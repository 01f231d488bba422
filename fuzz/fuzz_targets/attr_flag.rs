//! Fuzz target: `--attr Name=Value` parsing, against a default of each attribute type the
//! parser knows (the command line's own splitting, compiled in here, and the parser it and
//! the MCP server share, `procmodel_dom::attrs`). Any text parses or is an error; a parsed
//! value has the default's type.

#![no_main]

#[path = "../../crates/cli/src/attrs.rs"]
#[allow(dead_code, unused_imports)]
mod attrs;

use libfuzzer_sys::fuzz_target;
use rbx_types::{
    BrickColor, CFrame, Color3, ColorSequence, Font, NumberRange, NumberSequence, Rect, UDim,
    UDim2, Variant, Vector2, Vector3,
};

fuzz_target!(|data: &[u8]| {
    let Ok(arg) = std::str::from_utf8(data) else {
        return;
    };
    let defaults = [
        Variant::Bool(false),
        Variant::Float64(1.0),
        Variant::String(String::new()),
        Variant::Vector3(Vector3::new(0.0, 0.0, 0.0)),
        Variant::Vector2(Vector2::new(0.0, 0.0)),
        Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
        Variant::BrickColor(BrickColor::MediumStoneGrey),
        Variant::CFrame(CFrame::new(
            Vector3::new(0.0, 0.0, 0.0),
            rbx_types::Matrix3::identity(),
        )),
        Variant::NumberRange(NumberRange::new(0.0, 1.0)),
        Variant::UDim(UDim::new(0.0, 0)),
        Variant::UDim2(UDim2::new(UDim::new(0.0, 0), UDim::new(0.0, 0))),
        Variant::Rect(Rect::new(Vector2::new(0.0, 0.0), Vector2::new(1.0, 1.0))),
        Variant::NumberSequence(NumberSequence { keypoints: vec![] }),
        Variant::ColorSequence(ColorSequence { keypoints: vec![] }),
        Variant::Font(Font::default()),
    ];
    let Ok((name, text)) = attrs::split(arg) else {
        return;
    };
    for default in &defaults {
        if let Ok(v) = procmodel_dom::attrs::parse(name, text, default) {
            assert_eq!(v.ty(), default.ty(), "{arg}");
            let _ = attrs::show(&v);
            let _ = attrs::to_json(&v);
            // What the text form of a parsed value reads back as, it reads back as again.
            if let Some(t) = procmodel_dom::attrs::text(&v) {
                let again = procmodel_dom::attrs::parse(name, &t, default);
                assert!(again.is_ok(), "{arg}: {t}");
            }
        }
    }
});
