//! Rust-side conversion tests: `lua_to_variant`, `lua_to_attribute`, `validate_attribute_name`,
//! `variant_to_lua` round trips, enum counts against the reflection database and `type_name`.

use mlua::{Lua, UserData, UserDataFields, Value};
use procmodel_luau_types::rbx_reflection::DataType;
use procmodel_luau_types::{
    ConvertError, lua_to_attribute, lua_to_variant, register, type_name, validate_attribute_name,
    variant_to_lua,
};
use rbx_types::{Variant, VariantType};

fn vm() -> Lua {
    let lua = Lua::new();
    register(&lua).expect("register");
    lua
}

fn eval(lua: &Lua, expr: &str) -> Value {
    lua.load(format!("return {expr}")).eval().expect(expr)
}

/// One `lua_to_variant` case: the Luau expression converts to `expected` for `ty`.
fn check(lua: &Lua, expr: &str, ty: DataType, expected: Variant) {
    let v = eval(lua, expr);
    let got = lua_to_variant(&v, &ty).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert_eq!(got, expected, "{expr}");
}

/// One failing `lua_to_variant` case with its exact message.
fn check_err(lua: &Lua, expr: &str, ty: DataType, message: &str) {
    let v = eval(lua, expr);
    let err = lua_to_variant(&v, &ty).expect_err(expr);
    assert_eq!(err.to_string(), message, "{expr}");
}

fn val(ty: VariantType) -> DataType<'static> {
    DataType::Value(ty)
}

#[test]
fn lua_to_variant_accepts_each_value_type() {
    use rbx_types as t;
    let lua = vm();
    check(&lua, "true", val(VariantType::Bool), Variant::Bool(true));
    check(
        &lua,
        "1.5",
        val(VariantType::Float32),
        Variant::Float32(1.5),
    );
    check(
        &lua,
        "0.1",
        val(VariantType::Float64),
        Variant::Float64(0.1),
    );
    check(&lua, "7", val(VariantType::Int32), Variant::Int32(7));
    check(&lua, "-7.9", val(VariantType::Int32), Variant::Int32(-7));
    check(
        &lua,
        "2^40",
        val(VariantType::Int64),
        Variant::Int64(1 << 40),
    );
    check(
        &lua,
        "'hi'",
        val(VariantType::String),
        Variant::String("hi".into()),
    );
    check(
        &lua,
        "12",
        val(VariantType::String),
        Variant::String("12".into()),
    );
    check(
        &lua,
        "'rbxassetid://1'",
        val(VariantType::ContentId),
        Variant::ContentId("rbxassetid://1".into()),
    );
    check(
        &lua,
        "'rbxassetid://2'",
        val(VariantType::Content),
        Variant::Content(t::Content::from_uri("rbxassetid://2")),
    );
    check(
        &lua,
        "'\\0\\1'",
        val(VariantType::BinaryString),
        Variant::BinaryString(vec![0u8, 1].into()),
    );
    check(
        &lua,
        "Vector3.new(1, 2, 3)",
        val(VariantType::Vector3),
        Variant::Vector3(t::Vector3::new(1.0, 2.0, 3.0)),
    );
    check(
        &lua,
        "Vector2.new(1, 2)",
        val(VariantType::Vector2),
        Variant::Vector2(t::Vector2::new(1.0, 2.0)),
    );
    check(
        &lua,
        "Vector3int16.new(1.4, 2.6, -3)",
        val(VariantType::Vector3int16),
        Variant::Vector3int16(t::Vector3int16::new(1, 2, -3)),
    );
    check(
        &lua,
        "Vector2int16.new(-1.5, 40000)",
        val(VariantType::Vector2int16),
        Variant::Vector2int16(t::Vector2int16::new(-2, -25536)),
    );
    check(
        &lua,
        "Region3int16.new(Vector3int16.new(1, 2, 3), Vector3int16.new(-1, 0, 9))",
        val(VariantType::Region3int16),
        Variant::Region3int16(t::Region3int16::new(
            t::Vector3int16::new(1, 2, 3),
            t::Vector3int16::new(-1, 0, 9),
        )),
    );
    check(
        &lua,
        "Region3.new(Vector3.new(1, 2, 3), Vector3.new(0, 0, 0))",
        val(VariantType::Region3),
        Variant::Region3(t::Region3::new(
            t::Vector3::new(1.0, 2.0, 3.0),
            t::Vector3::new(0.0, 0.0, 0.0),
        )),
    );
    check(
        &lua,
        "Content.fromUri('rbxassetid://3')",
        val(VariantType::Content),
        Variant::Content(t::Content::from_uri("rbxassetid://3")),
    );
    check(
        &lua,
        "Content.none",
        val(VariantType::Content),
        Variant::Content(t::Content::none()),
    );
    check(
        &lua,
        "''",
        val(VariantType::Content),
        Variant::Content(t::Content::none()),
    );
    check(
        &lua,
        "PhysicalProperties.new(Enum.Material.Ice)",
        val(VariantType::PhysicalProperties),
        Variant::PhysicalProperties(t::PhysicalProperties::Custom(
            t::CustomPhysicalProperties::new(0.919, 0.02, 0.15, 3.0, 1.0, 1.0),
        )),
    );
    check(
        &lua,
        "CFrame.new(1, 2, 3)",
        val(VariantType::CFrame),
        Variant::CFrame(t::CFrame::new(
            t::Vector3::new(1.0, 2.0, 3.0),
            t::Matrix3::identity(),
        )),
    );
    check(
        &lua,
        "nil",
        val(VariantType::OptionalCFrame),
        Variant::OptionalCFrame(None),
    );
    check(
        &lua,
        "Color3.new(1, 0.5, 0)",
        val(VariantType::Color3),
        Variant::Color3(t::Color3::new(1.0, 0.5, 0.0)),
    );
    check(
        &lua,
        "Color3.fromRGB(10, 20, 30)",
        val(VariantType::Color3uint8),
        Variant::Color3uint8(t::Color3uint8::new(10, 20, 30)),
    );
    check(
        &lua,
        "BrickColor.new(21)",
        val(VariantType::BrickColor),
        Variant::BrickColor(t::BrickColor::BrightRed),
    );
    check(
        &lua,
        "UDim.new(0.5, 3)",
        val(VariantType::UDim),
        Variant::UDim(t::UDim::new(0.5, 3)),
    );
    check(
        &lua,
        "UDim2.new(0.5, 3, 1, -2)",
        val(VariantType::UDim2),
        Variant::UDim2(t::UDim2::new(t::UDim::new(0.5, 3), t::UDim::new(1.0, -2))),
    );
    check(
        &lua,
        "NumberRange.new(1, 2)",
        val(VariantType::NumberRange),
        Variant::NumberRange(t::NumberRange::new(1.0, 2.0)),
    );
    check(
        &lua,
        "NumberSequence.new(1, 2)",
        val(VariantType::NumberSequence),
        Variant::NumberSequence(t::NumberSequence {
            keypoints: vec![
                t::NumberSequenceKeypoint::new(0.0, 1.0, 0.0),
                t::NumberSequenceKeypoint::new(1.0, 2.0, 0.0),
            ],
        }),
    );
    check(
        &lua,
        "ColorSequence.new(Color3.new(1, 0, 0))",
        val(VariantType::ColorSequence),
        Variant::ColorSequence(t::ColorSequence {
            keypoints: vec![
                t::ColorSequenceKeypoint::new(0.0, t::Color3::new(1.0, 0.0, 0.0)),
                t::ColorSequenceKeypoint::new(1.0, t::Color3::new(1.0, 0.0, 0.0)),
            ],
        }),
    );
    check(
        &lua,
        "Rect.new(1, 2, 3, 4)",
        val(VariantType::Rect),
        Variant::Rect(t::Rect::new(
            t::Vector2::new(1.0, 2.0),
            t::Vector2::new(3.0, 4.0),
        )),
    );
    check(
        &lua,
        "Font.new('x', Enum.FontWeight.Bold)",
        val(VariantType::Font),
        Variant::Font(t::Font::new("x", t::FontWeight::Bold, t::FontStyle::Normal)),
    );
    check(
        &lua,
        "{'a', 'b'}",
        val(VariantType::Tags),
        Variant::Tags(vec!["a".to_string(), "b".to_string()].into()),
    );
    check(
        &lua,
        "Faces.new(Enum.NormalId.Top)",
        val(VariantType::Faces),
        Variant::Faces(t::Faces::TOP),
    );
    check(
        &lua,
        "Axes.new(Enum.Axis.Z)",
        val(VariantType::Axes),
        Variant::Axes(t::Axes::Z),
    );
    check(
        &lua,
        "nil",
        val(VariantType::PhysicalProperties),
        Variant::PhysicalProperties(t::PhysicalProperties::Default),
    );
    check(
        &lua,
        "Ray.new(Vector3.new(1, 2, 3), Vector3.new(0, -1, 0))",
        val(VariantType::Ray),
        Variant::Ray(t::Ray::new(
            t::Vector3::new(1.0, 2.0, 3.0),
            t::Vector3::new(0.0, -1.0, 0.0),
        )),
    );
}

#[test]
fn lua_to_variant_enums_accept_item_name_and_number() {
    let lua = vm();
    let plastic = Variant::Enum(rbx_types::Enum::from_u32(256));
    let ty = DataType::Enum("Material");
    check(&lua, "Enum.Material.Plastic", ty.clone(), plastic.clone());
    check(&lua, "'Plastic'", ty.clone(), plastic.clone());
    check(&lua, "256", ty.clone(), plastic);
    check_err(
        &lua,
        "Enum.PartType.Block",
        ty.clone(),
        "Enum.Material expected, got Enum.PartType",
    );
    check_err(
        &lua,
        "'Nope'",
        ty.clone(),
        "Nope is not a valid member of Enum.Material",
    );
    check_err(
        &lua,
        "3",
        ty.clone(),
        "3 is not a valid value of Enum.Material",
    );
    check_err(
        &lua,
        "Vector3.zero",
        ty,
        "Enum.Material expected, got Vector3",
    );
}

#[test]
fn lua_to_variant_wrong_types_name_expected_and_given() {
    let lua = vm();
    check_err(
        &lua,
        "'x'",
        val(VariantType::Vector3),
        "Vector3 expected, got string",
    );
    check_err(
        &lua,
        "Vector2.zero",
        val(VariantType::Vector3),
        "Vector3 expected, got Vector2",
    );
    check_err(
        &lua,
        "1",
        val(VariantType::CFrame),
        "CFrame expected, got number",
    );
    check_err(
        &lua,
        "1",
        val(VariantType::Bool),
        "boolean expected, got number",
    );
    check_err(
        &lua,
        "true",
        val(VariantType::Float32),
        "number expected, got boolean",
    );
    check_err(
        &lua,
        "{}",
        val(VariantType::String),
        "string expected, got table",
    );
    check_err(
        &lua,
        "Color3.new()",
        val(VariantType::BrickColor),
        "BrickColor expected, got Color3",
    );
    check_err(
        &lua,
        "BrickColor.new(1)",
        val(VariantType::Color3uint8),
        "Color3 expected, got BrickColor",
    );
    check_err(
        &lua,
        "nil",
        val(VariantType::UDim2),
        "UDim2 expected, got nil",
    );
    check_err(
        &lua,
        "Enum",
        val(VariantType::Rect),
        "Rect expected, got Enums",
    );
    check_err(
        &lua,
        "Enum.Material",
        val(VariantType::EnumItem),
        "EnumItem expected, got Enum",
    );
    check_err(
        &lua,
        "Vector3.new(1, 2, 3)",
        val(VariantType::Vector3int16),
        "Vector3int16 expected, got Vector3",
    );
    check_err(
        &lua,
        "Vector2int16.new()",
        val(VariantType::Vector2),
        "Vector2 expected, got Vector2int16",
    );
    check_err(
        &lua,
        "Region3.new(Vector3.zero, Vector3.one)",
        val(VariantType::Region3int16),
        "Region3int16 expected, got Region3",
    );
    check_err(
        &lua,
        "5",
        val(VariantType::Content),
        "Content expected, got number",
    );
    check_err(
        &lua,
        "Axes.new()",
        val(VariantType::Faces),
        "Faces expected, got Axes",
    );
    let err = lua_to_variant(&eval(&lua, "'x'"), &val(VariantType::Vector3)).unwrap_err();
    assert!(
        matches!(err, ConvertError::Type { ref expected, ref given } if expected == "Vector3" && given == "string")
    );
    assert!(lua_to_variant(&Value::Nil, &val(VariantType::Ref)).is_err());
}

#[test]
fn attributes_accept_the_roblox_types_only() {
    let lua = vm();
    let ok = [
        ("'s'", Variant::String("s".into())),
        ("true", Variant::Bool(true)),
        ("3", Variant::Float64(3.0)),
        ("0.1", Variant::Float64(0.1)),
    ];
    for (expr, want) in ok {
        assert_eq!(lua_to_attribute(&eval(&lua, expr)).unwrap(), want, "{expr}");
    }
    let typed = [
        ("UDim.new(1, 2)", VariantType::UDim),
        ("UDim2.new(1, 2, 3, 4)", VariantType::UDim2),
        ("BrickColor.new(1)", VariantType::BrickColor),
        ("Color3.new(1, 0, 0)", VariantType::Color3),
        ("Vector2.new(1, 2)", VariantType::Vector2),
        ("Vector3.new(1, 2, 3)", VariantType::Vector3),
        ("CFrame.new(1, 2, 3)", VariantType::CFrame),
        ("NumberSequence.new(1)", VariantType::NumberSequence),
        (
            "ColorSequence.new(Color3.new())",
            VariantType::ColorSequence,
        ),
        ("NumberRange.new(1, 2)", VariantType::NumberRange),
        ("Rect.new(1, 2, 3, 4)", VariantType::Rect),
        ("Font.new('x')", VariantType::Font),
        ("Enum.Material.Plastic", VariantType::EnumItem),
    ];
    for (expr, ty) in typed {
        let got = lua_to_attribute(&eval(&lua, expr)).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(got.ty(), ty, "{expr}");
    }
    let rejected = [
        ("{}", "table"),
        ("print", "function"),
        ("Random.new(1)", "Random"),
        ("Enum.Material", "Enum"),
        ("Ray.new(Vector3.zero, Vector3.zero)", "Ray"),
        ("coroutine.create(print)", "thread"),
        ("NumberSequenceKeypoint.new(0, 1)", "NumberSequenceKeypoint"),
    ];
    for (expr, given) in rejected {
        let err = lua_to_attribute(&eval(&lua, expr)).expect_err(expr);
        assert_eq!(
            err.to_string(),
            format!("type {given} is not supported as an attribute value")
        );
    }
}

#[test]
fn attribute_names_follow_roblox_rules() {
    for ok in [
        "a",
        "Seed",
        "My_Attr.v2-x/y",
        "A1",
        &"x".repeat(100),
        "rbxLower",
    ] {
        assert!(validate_attribute_name(ok).is_ok(), "{ok}");
    }
    let bad = [
        ("", "is empty"),
        (&"x".repeat(101), "longer than 100"),
        ("RBXThing", "reserved prefix RBX"),
        ("has space", "invalid character ' '"),
        ("tab\t", "invalid character"),
        ("é", "invalid character"),
        ("a:b", "invalid character ':'"),
    ];
    for (name, why) in bad {
        let err = validate_attribute_name(name).expect_err(name).to_string();
        assert!(err.contains(why), "{name:?}: {err}");
        assert!(err.starts_with("attribute name '"), "{err}");
    }
}

#[test]
fn variants_round_trip_through_lua() {
    use rbx_types as t;
    let lua = vm();
    let cases: Vec<Variant> = vec![
        Variant::Bool(false),
        Variant::Float64(0.25),
        Variant::String("x".into()),
        Variant::Vector3(t::Vector3::new(1.5, -2.0, 3.25)),
        Variant::Vector2(t::Vector2::new(1.5, -2.0)),
        Variant::Color3(t::Color3::new(0.1, 0.2, 0.3)),
        Variant::Color3uint8(t::Color3uint8::new(1, 2, 250)),
        Variant::BrickColor(t::BrickColor::ReallyBlack),
        Variant::UDim(t::UDim::new(0.5, -4)),
        Variant::UDim2(t::UDim2::new(t::UDim::new(0.5, -4), t::UDim::new(0.0, 9))),
        Variant::NumberRange(t::NumberRange::new(-1.0, 1.0)),
        Variant::Rect(t::Rect::new(
            t::Vector2::new(0.0, 1.0),
            t::Vector2::new(2.0, 3.0),
        )),
        Variant::Font(t::Font::new(
            "f",
            t::FontWeight::Heavy,
            t::FontStyle::Italic,
        )),
        Variant::Tags(vec!["a".to_string()].into()),
        Variant::Faces(t::Faces::all()),
        Variant::Axes(t::Axes::all()),
        Variant::Ray(t::Ray::new(
            t::Vector3::new(1.0, 2.0, 3.0),
            t::Vector3::new(4.0, 5.0, 6.0),
        )),
        Variant::PhysicalProperties(t::PhysicalProperties::Custom(
            t::CustomPhysicalProperties::new(0.7, 0.3, 0.5, 1.0, 2.0, 1.0),
        )),
        Variant::OptionalCFrame(None),
        Variant::Vector3int16(t::Vector3int16::new(-32768, 0, 32767)),
        Variant::Vector2int16(t::Vector2int16::new(7, -7)),
        Variant::Region3int16(t::Region3int16::new(
            t::Vector3int16::new(4, 4, 4),
            t::Vector3int16::new(0, 0, -3),
        )),
        Variant::Region3(t::Region3::new(
            t::Vector3::new(1.0, 2.0, 3.0),
            t::Vector3::new(-1.0, 0.0, 9.0),
        )),
        Variant::Content(t::Content::from_uri("rbxassetid://9")),
        Variant::Content(t::Content::none()),
    ];
    for v in cases {
        let lv = variant_to_lua(&lua, &v, None).unwrap_or_else(|e| panic!("{v:?}: {e}"));
        let back =
            lua_to_variant(&lv, &DataType::Value(v.ty())).unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert_eq!(back, v);
    }
    // Enums become EnumItems when the enum is named, numbers otherwise.
    let e = Variant::Enum(rbx_types::Enum::from_u32(256));
    let item = variant_to_lua(&lua, &e, Some("Material")).unwrap();
    assert_eq!(type_name(&item), "EnumItem");
    assert_eq!(
        lua_to_variant(&item, &DataType::Enum("Material")).unwrap(),
        e
    );
    assert_eq!(
        variant_to_lua(&lua, &e, None).unwrap(),
        Value::Number(256.0)
    );
    let ei = Variant::EnumItem(rbx_types::EnumItem {
        ty: "Material".into(),
        value: 256,
    });
    let lv = variant_to_lua(&lua, &ei, None).unwrap();
    lua.globals().set("item", lv).unwrap();
    assert!(
        lua.load("return item == Enum.Material.Plastic")
            .eval::<bool>()
            .unwrap()
    );
    // The 16-bit and Content values read back as their own datatypes.
    for (v, want) in [
        (
            Variant::Vector3int16(t::Vector3int16::new(1, 2, 3)),
            "Vector3int16",
        ),
        (
            Variant::Vector2int16(t::Vector2int16::new(1, 2)),
            "Vector2int16",
        ),
        (
            Variant::Region3int16(t::Region3int16::new(
                t::Vector3int16::new(0, 0, 0),
                t::Vector3int16::new(1, 1, 1),
            )),
            "Region3int16",
        ),
        (Variant::Content(t::Content::none()), "Content"),
    ] {
        assert_eq!(type_name(&variant_to_lua(&lua, &v, None).unwrap()), want);
    }
    // Object Content is the host's job, as is Ref.
    assert!(
        variant_to_lua(
            &lua,
            &Variant::Content(t::Content::from_referent(rbx_types::Ref::new())),
            None
        )
        .is_err()
    );
    // Ref is the host's job.
    assert!(variant_to_lua(&lua, &Variant::Ref(rbx_types::Ref::none()), None).is_err());
}

#[test]
fn enum_counts_match_the_reflection_database() {
    let lua = vm();
    let db = procmodel_luau_types::enums::database();
    let n: usize = lua.load("return #Enum:GetEnums()").eval().unwrap();
    assert_eq!(n, db.enums.len());
    let check: mlua::Function = lua
        .load("return function(name) return #Enum[name]:GetEnumItems() end")
        .eval()
        .unwrap();
    for (name, desc) in &db.enums {
        let count: usize = check.call::<usize>(name.to_string()).unwrap();
        assert_eq!(count, desc.items.len(), "Enum.{name}");
    }
}

/// Every property type of the bundled database has a zero value that Luau can read back as
/// the type itself (never `false` for a non-boolean), except the types Luau never sees.
#[test]
fn zero_values_exist_for_every_readable_property_type() {
    use procmodel_luau_types::zero_value;
    let lua = vm();
    let db = procmodel_luau_types::enums::database();
    let mut types: Vec<(String, DataType<'static>)> = Vec::new();
    for class in db.classes.values() {
        for prop in class.properties.values() {
            let key = format!("{:?}", prop.data_type);
            if !types.iter().any(|(k, _)| *k == key) {
                types.push((key, prop.data_type.clone()));
            }
        }
    }
    types.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, ty) in &types {
        let Some(zero) = zero_value(ty) else {
            // Types with no Luau value.
            assert!(
                matches!(
                    ty,
                    DataType::Value(
                        VariantType::MaterialColors
                            | VariantType::UniqueId
                            | VariantType::NetAssetRef
                            | VariantType::EnumItem
                    )
                ),
                "no zero value for {key}"
            );
            continue;
        };
        if let DataType::Value(VariantType::Ref) = ty {
            continue;
        }
        let enum_name = match ty {
            DataType::Enum(n) => Some(*n),
            _ => None,
        };
        let v = variant_to_lua(&lua, &zero, enum_name).unwrap_or_else(|e| panic!("{key}: {e}"));
        if !matches!(ty, DataType::Value(VariantType::Bool)) {
            assert_ne!(v, Value::Boolean(false), "{key}");
        }
    }
    assert_eq!(
        zero_value(&DataType::Enum("Material")),
        Some(Variant::Enum(rbx_types::Enum::from_u32(256)))
    );
    assert_eq!(
        zero_value(&DataType::Value(VariantType::Color3)),
        Some(Variant::Color3(rbx_types::Color3::new(0.0, 0.0, 0.0)))
    );
}

struct FakeInstance;

impl UserData for FakeInstance {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(mlua::MetaMethod::Type, "Instance");
    }
}

#[test]
fn type_name_reads_the_type_metafield() {
    let lua = vm();
    let inst = Value::UserData(lua.create_userdata(FakeInstance).unwrap());
    assert_eq!(type_name(&inst), "Instance");
    lua.globals().set("inst", inst).unwrap();
    assert_eq!(
        lua.load("return typeof(inst)").eval::<String>().unwrap(),
        "Instance"
    );
    for (expr, want) in [
        ("1", "number"),
        ("'a'", "string"),
        ("nil", "nil"),
        ("{}", "table"),
        ("print", "function"),
        ("Vector3.one", "Vector3"),
        ("CFrame.identity", "CFrame"),
        ("Enum.Material.Plastic", "EnumItem"),
        // Roblox's Vector3 is Luau's native vector, so every vector is a Vector3.
        ("vector.create(1, 2, 3)", "Vector3"),
        ("buffer.create(1)", "buffer"),
    ] {
        assert_eq!(type_name(&eval(&lua, expr)), want, "{expr}");
    }
}

#[test]
fn register_is_fast() {
    // Warm process-wide lazies (none are touched by register, but keep the measure honest).
    let _ = vm();
    let runs = 20;
    let start = std::time::Instant::now();
    for _ in 0..runs {
        let lua = Lua::new();
        register(&lua).unwrap();
    }
    let per_vm = start.elapsed() / runs;
    let lua = Lua::new();
    let start = std::time::Instant::now();
    register(&lua).unwrap();
    let reg = start.elapsed();
    println!("register: {reg:?} (Lua::new + register: {per_vm:?})");
    // Debug builds are slow; the bar here only catches accidental eager enum building.
    assert!(
        reg < std::time::Duration::from_millis(50),
        "register took {reg:?}"
    );
}

/// The tagged datatypes are read back from mlua values through Luau's userdata header
/// (`procmodel_luau_types::tagged`): this pins the header layout the reader assumes, for every
/// tagged type and against userdata that must not match (mlua's own, zero-sized proxies).
#[test]
fn tagged_values_read_back_through_the_userdata_header() {
    use mlua::FromLua;
    use procmodel_luau_types::{CFrame, Color3, EnumItem};
    let lua = mlua::Lua::new();
    procmodel_luau_types::register(&lua).unwrap();
    let cf: CFrame = lua
        .load("CFrame.new(1, 2, 3) * CFrame.Angles(0.1, 0.2, 0.3)")
        .eval()
        .unwrap();
    let want = CFrame::from_position(glam::Vec3::new(1.0, 2.0, 3.0))
        .mul(&CFrame::angles_xyz(0.1, 0.2, 0.3));
    assert_eq!(cf, want);
    let c: Color3 = lua.load("Color3.fromRGB(255, 0, 51)").eval().unwrap();
    assert_eq!(c, Color3::from_rgb(255.0, 0.0, 51.0));
    let e: EnumItem = lua.load("Enum.Material.Slate").eval().unwrap();
    assert_eq!((e.enum_name, e.name), ("Material", "Slate"));
    // Round trip through IntoLua and a Luau function.
    let f: mlua::Function = lua.load("function(x) return x end").eval().unwrap();
    assert_eq!(f.call::<CFrame>(want).unwrap(), want);
    // Not ours: mlua userdata and a zero-sized proxy.
    for expr in ["Vector2.new(1, 2)", "newproxy()"] {
        let v: mlua::Value = lua.load(expr).eval().unwrap();
        assert!(CFrame::from_lua(v.clone(), &lua).is_err(), "{expr}");
        assert!(Color3::from_lua(v.clone(), &lua).is_err(), "{expr}");
        assert!(EnumItem::from_lua(v, &lua).is_err(), "{expr}");
    }
}

/// The hot callbacks read their arguments' stack slots in place (`raw::arg`): the check that
/// turns that on compares every kind of slot with the C API, so on this Luau it must pass,
/// and the constructors read through it must give what the C API path gives.
#[test]
fn direct_argument_reads_are_checked_and_on() {
    let lua = vm();
    assert!(procmodel_luau_types::tagged::enable_direct_reads(&lua));
    assert!(procmodel_luau_types::raw::direct_reads());
    let src = "local c = CFrame.new(1, 2, 3) * CFrame.Angles(0, math.rad(30), 0) \
               local k = Color3.fromRGB(10, 20, 30) \
               return c.X, c.Y, c.Z, c.LookVector.X, k.R, k.G, k.B";
    let direct: [f64; 7] = eval7(&lua, src);
    procmodel_luau_types::raw::set_direct_reads_for_tests(false);
    let api: [f64; 7] = eval7(&lua, src);
    assert!(procmodel_luau_types::tagged::enable_direct_reads(&lua));
    assert_eq!(direct, api);
    assert_eq!(&direct[..3], &[1.0, 2.0, 3.0]);
}

fn eval7(lua: &Lua, src: &str) -> [f64; 7] {
    let (a, b, c, d, e, f, g): (f64, f64, f64, f64, f64, f64, f64) = lua.load(src).eval().unwrap();
    [a, b, c, d, e, f, g]
}
