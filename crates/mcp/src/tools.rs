//! The tools the server offers: names, descriptions and JSON Schemas of their arguments. The
//! argument names a tool accepts are the properties of its schema (one list, so the schema
//! a client reads and the check a call meets cannot disagree).

use serde_json::{Value, json};

/// One tool.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Value,
}

impl Tool {
    /// The argument names of the schema.
    pub fn arguments(&self) -> Vec<&str> {
        self.schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

fn model() -> Value {
    json!({ "type": "string", "description": "The ProceduralModel: its full path (e.g. \"Workspace.Stairs\", as list_models shows) or its Name. May be left out when the scene has one model." })
}

fn size() -> Value {
    json!({
        "description": "Size in studs: [x, y, z] or \"x,y,z\", each 0.001 to 1000000 (the box the generator fills; default 12,12,12).",
        "oneOf": [
            { "type": "array", "items": { "type": "number" }, "minItems": 3, "maxItems": 3 },
            { "type": "string" }
        ]
    })
}

fn attributes() -> Value {
    json!({
        "type": "object",
        "description": "Attribute name -> value, parsed by the type of the generator's declared default: numbers, true/false, text, colours as [R,G,B] 0-255 or \"#rrggbb\", vectors as [x,y,z] or \"x,y,z\", BrickColor names. null resets an attribute to its default.",
        "additionalProperties": { "type": ["string", "number", "boolean", "array", "null"] }
    })
}

fn path(what: &str) -> Value {
    json!({ "type": "string", "description": format!("{what}, relative to the server's root directory (files are never written outside it)") })
}

/// Every tool, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        Tool {
            name: "create_generator",
            description: "Create a procedural generator from Luau source: a ModuleScript returning { Attributes = {...}, OnGenerate = function(params, container) ... end }, and a ProceduralModel in Workspace that uses it (named after the generator). If a model of that name already exists, its generator's source is replaced. The model is generated at once; the result reports instances, time and content hash, or the error with file and line.",
            schema: object(
                json!({
                    "name": { "type": "string", "description": "Name of the generator and its model (letters, digits, _ and -)." },
                    "source": { "type": "string", "description": "The generator's Luau source." },
                    "size": size(),
                    "scale": { "type": "number", "description": "The model's Scale (0.000001 to 1000000; default 1): the generator sees Size / Scale and its results are scaled back." },
                    "attributes": attributes(),
                }),
                &["name", "source"],
            ),
        },
        Tool {
            name: "list_models",
            description: "List the scene's ProceduralModels: path, generator, Size, Scale, status (fresh, dirty, generating, failed, no generator), instance count, error with file and line, and attributes with types, values and defaults.",
            schema: object(json!({}), &[]),
        },
        Tool {
            name: "get_attributes",
            description: "The attributes a model's generator declares: name, type, default, current value and the syntax set_attributes accepts for it.",
            schema: object(json!({ "model": model() }), &[]),
        },
        Tool {
            name: "set_attributes",
            description: "Set (or reset with null) attributes of a model, typed by the generator's declared defaults, as one undo step; the model regenerates and the report is returned. A value that does not fit its type changes nothing and names the attribute and the expected syntax.",
            schema: object(
                json!({ "model": model(), "attributes": attributes() }),
                &["attributes"],
            ),
        },
        Tool {
            name: "set_size",
            description: "Set a model's Size and/or Scale (one undo step). A new Size regenerates it; a new Scale scales its results.",
            schema: object(
                json!({
                    "model": model(),
                    "size": size(),
                    "scale": { "type": "number", "description": "Scale, 0.000001 to 1000000." },
                }),
                &[],
            ),
        },
        Tool {
            name: "regenerate",
            description: "Regenerate one model (or all) even if nothing changed, stepping until settled; reports instance count, time and content hash per model, or the error with file, line and traceback.",
            schema: object(json!({ "model": model() }), &[]),
        },
        Tool {
            name: "get_errors",
            description: "The models whose last generation failed: the error message with its traceback, and the file and line it names.",
            schema: object(json!({}), &[]),
        },
        Tool {
            name: "undo",
            description: "Undo the last change (attributes, Size, Scale, generator source): inputs and results come back without running the generator.",
            schema: object(json!({}), &[]),
        },
        Tool {
            name: "redo",
            description: "Redo the last undone change.",
            schema: object(json!({}), &[]),
        },
        Tool {
            name: "export",
            description: "Write a model (or every model of Workspace) as .glb, .gltf, .obj (3D tools), or .rbxm/.rbxmx (Roblox Studio), under the root directory.",
            schema: object(
                json!({ "path": path("The file to write (.glb, .gltf, .obj, .rbxm or .rbxmx)"), "model": model() }),
                &["path"],
            ),
        },
        Tool {
            name: "pack",
            description: "Pack a model's generator as a ProceduralModel package for Roblox Studio (.rbxm/.rbxmx): the generator module, its attributes, Size and freshly generated results, as `procmodel pack` writes it.",
            schema: object(
                json!({
                    "path": path("The package to write (.rbxm or .rbxmx)"),
                    "model": model(),
                    "sandboxed": { "type": "boolean", "description": "Mark the module Sandboxed with the minimal capabilities (default false)." },
                }),
                &["path"],
            ),
        },
        Tool {
            name: "save_scene",
            description: "Save the whole scene (.rbxl, .rbxlx, .rbxm or .rbxmx) atomically under the root directory; without a path, over the scene that was opened.",
            schema: object(json!({ "path": path("The scene file to write") }), &[]),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_with_described_arguments() {
        let tools = all();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools.len(), "tool names are unique");
        for t in &tools {
            assert_eq!(t.schema["type"], "object", "{}", t.name);
            for a in t.arguments() {
                let d = &t.schema["properties"][a]["description"];
                assert!(d.as_str().is_some_and(|d| !d.is_empty()), "{}.{a}", t.name);
            }
            for r in t.schema["required"].as_array().unwrap() {
                assert!(t.arguments().contains(&r.as_str().unwrap()), "{}", t.name);
            }
        }
    }
}
