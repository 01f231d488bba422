//! The Roblox datatype conformance corpus: one #[test] per script in tests/roblox/datatypes.
mod common;
roblox_tests!("datatypes": axes, brickcolor, content, enums, faces, font, number_range,
    physical_properties, profiler, property_values, ray, rect, region3, region3int16, type_names,
    vector2int16, vector3_enums, vector3int16, math_random, datetime, os_library, security_capabilities,
    method_calls, utf8_library, shared_table, numeric_strings);
