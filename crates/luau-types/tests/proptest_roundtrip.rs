//! Property tests: Variant → Lua → Variant is bit-exact for Vector3, CFrame and Color3.

use mlua::Lua;
use procmodel_luau_types::rbx_reflection::DataType;
use procmodel_luau_types::{lua_to_variant, register, variant_to_lua};
use proptest::prelude::*;
use rbx_types::{Variant, VariantType};

fn round_trip(lua: &Lua, v: &Variant) -> Variant {
    let lv = variant_to_lua(lua, v, None).expect("to lua");
    lua_to_variant(&lv, &DataType::Value(v.ty())).expect("from lua")
}

fn bits(v: &Variant) -> Vec<u32> {
    match v {
        Variant::Vector3(v) => vec![v.x.to_bits(), v.y.to_bits(), v.z.to_bits()],
        Variant::Color3(c) => vec![c.r.to_bits(), c.g.to_bits(), c.b.to_bits()],
        Variant::CFrame(c) => {
            let o = c.orientation;
            [c.position, o.x, o.y, o.z]
                .iter()
                .flat_map(|v| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()])
                .collect()
        }
        _ => vec![],
    }
}

fn vec3() -> impl Strategy<Value = rbx_types::Vector3> {
    (any::<f32>(), any::<f32>(), any::<f32>())
        .prop_filter("finite", |(x, y, z)| {
            x.is_finite() && y.is_finite() && z.is_finite()
        })
        .prop_map(|(x, y, z)| rbx_types::Vector3::new(x, y, z))
}

proptest! {
    #[test]
    fn vector3_is_bit_exact(v in vec3()) {
        let lua = Lua::new();
        register(&lua).unwrap();
        let var = Variant::Vector3(v);
        prop_assert_eq!(bits(&round_trip(&lua, &var)), bits(&var));
        prop_assert_eq!(round_trip(&lua, &var).ty(), VariantType::Vector3);
    }

    #[test]
    fn color3_is_bit_exact(r in any::<f32>(), g in any::<f32>(), b in any::<f32>()) {
        let lua = Lua::new();
        register(&lua).unwrap();
        let var = Variant::Color3(rbx_types::Color3::new(r, g, b));
        prop_assert_eq!(bits(&round_trip(&lua, &var)), bits(&var));
    }

    #[test]
    fn cframe_is_bit_exact(p in vec3(), x in vec3(), y in vec3(), z in vec3()) {
        let lua = Lua::new();
        register(&lua).unwrap();
        let var = Variant::CFrame(rbx_types::CFrame::new(p, rbx_types::Matrix3::new(x, y, z)));
        prop_assert_eq!(bits(&round_trip(&lua, &var)), bits(&var));
    }
}
