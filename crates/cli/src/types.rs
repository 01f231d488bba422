//! `procmodel types`: editor support for generators. Writes a luau-lsp definitions file
//! (`procmodel.d.luau`: the Roblox globals, instance classes and datatypes this engine
//! implements, the generator protocol and the `@procmodel/*` toolkit types), typed stub
//! modules for the toolkit and a `.luaurc` whose `procmodel` alias points at them.
//!
//! What is declared comes from the code, never from a hand list: the classes `Instance.new`
//! and `GetService` accept and the members the host answers are probed in a real VM; method
//! names come from the host's method registry; the datatypes and toolkit declarations are
//! the files their crates keep in step with their registries by test. Must never declare a
//! class, member or global the engine does not implement, nor write outside the chosen folder.

use crate::output::write_atomic;
use anyhow::{Context, Result, anyhow, bail};
use procmodel_luau::{Host, HostConfig};
use rbx_dom_weak::ustr;
use rbx_reflection::{ClassTag, DataType, PropertyKind, PropertyTag, Scriptability};
use rbx_types::Variant;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The folder to write into (procmodel.d.luau, .luaurc, .procmodel/*.luau).
    #[arg(short, long, default_value = ".")]
    pub output: PathBuf,
}

/// The datatypes' declarations (crates/luau-types keeps them in step with its `register`).
const DATATYPES: &str = include_str!("../../luau-types/types/datatypes.d.luau");
/// The toolkit modules' types (crates/luau keeps them in step with the module tables).
const TOOLKIT: &str = include_str!("../../luau/types/procmodel.d.luau");
/// The folder (under the output) holding one typed stub per `@procmodel/*` module.
pub const STUB_DIR: &str = ".procmodel";

/// Globals of Luau itself: luau-lsp knows them, so they are not declared again.
const LUAU_GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "assert",
    "bit32",
    "buffer",
    "collectgarbage",
    "coroutine",
    "debug",
    "error",
    "gcinfo",
    "getfenv",
    "getmetatable",
    "ipairs",
    "math",
    "newproxy",
    "next",
    "os",
    "pairs",
    "pcall",
    "print",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "require",
    "select",
    "setfenv",
    "setmetatable",
    "string",
    "table",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "utf8",
    "vector",
    "xpcall",
];

/// Events the host serves besides those of Roblox's API (`procmodel_luau::declared_events`),
/// by declaring class, checked in the VM before they are declared.
const EVENT_CANDIDATES: &[(&str, &[&str])] = &[
    (
        "Instance",
        &[
            "AncestryChanged",
            "AttributeChanged",
            "Changed",
            "ChildAdded",
            "ChildRemoved",
            "DescendantAdded",
            "DescendantRemoving",
            "Destroying",
        ],
    ),
    ("BindableEvent", &["Event"]),
    ("RunService", &["Heartbeat", "Stepped"]),
];

/// Yielding methods (Luau functions outside the method registry), checked in the VM.
const YIELDING_CANDIDATES: &[(&str, &[&str])] = &[
    ("Instance", &["WaitForChild"]),
    ("ProceduralModel", &["WaitForGenerationAsync"]),
];

fn is_yielding_candidate(class: &str, name: &str) -> bool {
    YIELDING_CANDIDATES
        .iter()
        .any(|(c, names)| *c == class && names.contains(&name))
}

fn is_event_candidate(class: &str, name: &str) -> bool {
    EVENT_CANDIDATES
        .iter()
        .any(|(c, names)| *c == class && names.contains(&name))
        || procmodel_luau::declared_events(class).contains(&name)
}

/// Signal members the host may serve, checked in the VM on a real signal.
const SIGNAL_CANDIDATES: &[&str] = &["Connect", "ConnectParallel", "Once", "Wait"];

pub fn run(args: Args) -> Result<ExitCode> {
    let out = &args.output;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    // A .luaurc that cannot be updated stops everything before a file is written.
    let rc = out.join(".luaurc");
    let rc_text = luaurc(&rc)?;
    let probe = probe()?;
    let text = definitions(&probe)?;
    let defs = out.join("procmodel.d.luau");
    write_atomic(&defs, text.as_bytes())?;
    let stubs = out.join(STUB_DIR);
    std::fs::create_dir_all(&stubs)
        .with_context(|| format!("cannot create {}", stubs.display()))?;
    for (module, alias) in toolkit_modules() {
        let stub = format!(
            "--!strict\n-- Editor stub: `require(\"@procmodel/{module}\")` is built into procmodel (the\n-- engine never reads this file); it gives the editor the module's type.\nreturn (nil :: any) :: {alias}\n"
        );
        write_atomic(&stubs.join(format!("{module}.luau")), stub.as_bytes())?;
    }
    write_atomic(&rc, rc_text.as_bytes())?;
    eprintln!(
        "wrote {} ({} classes, {} globals), {} and {}/ — point luau-lsp's definition files at procmodel.d.luau",
        defs.display(),
        probe.classes.len(),
        probe.globals.len(),
        rc.display(),
        stubs.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The toolkit modules and their type aliases, as `procmodel.d.luau` declares them
/// (`type ProcmodelNoise = {` is the type of `@procmodel/noise`).
pub fn toolkit_modules() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = TOOLKIT
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("type Procmodel")?;
            let name = rest.split_once(" = {")?.0;
            Some((name.to_ascii_lowercase(), format!("Procmodel{name}")))
        })
        .collect();
    out.sort();
    out
}

/// The `.luaurc` at `path` with the `procmodel` alias set (other settings kept).
fn luaurc(path: &Path) -> Result<String> {
    let mut json = match std::fs::read_to_string(path) {
        Ok(text) => match procmodel_luau::luaurc::parse_luaurc(&text) {
            Ok((_, true)) => bail!(
                "{}: holds comments, which rewriting it would drop; left as it is: add \"procmodel\": \"./{STUB_DIR}\" to its \"aliases\" yourself",
                path.display()
            ),
            Ok((json, false)) => json,
            Err(e) => bail!(
                "{}: not a .luaurc Luau reads, left as it is: {e}",
                path.display()
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let Some(obj) = json.as_object_mut() else {
        bail!("{}: expected a JSON object, left as it is", path.display());
    };
    let aliases = obj
        .entry("aliases")
        .or_insert_with(|| serde_json::json!({}));
    let Some(aliases) = aliases.as_object_mut() else {
        bail!(
            "{}: \"aliases\" must be an object, left as it is",
            path.display()
        );
    };
    aliases.insert(
        "procmodel".into(),
        serde_json::Value::String(format!("./{STUB_DIR}")),
    );
    Ok(serde_json::to_string_pretty(&json)? + "\n")
}

/// What the VM answers: instantiable classes, members per declaring class, globals.
pub struct Probe {
    /// Class name → how scripts get one ("new", "service" or "workspace": a child of
    /// Workspace named after its class, such as `workspace.Terrain`).
    pub classes: BTreeMap<String, String>,
    /// Declaring class → members the host served on an instance of it or a subclass.
    pub members: BTreeMap<String, BTreeSet<String>>,
    /// Global name → its `typeof` (`Instance:<ClassName>` for instances).
    pub globals: BTreeMap<String, String>,
    /// Global table name → field → its `typeof`.
    pub fields: BTreeMap<String, BTreeMap<String, String>>,
    /// Members a signal has.
    pub signal: BTreeSet<String>,
}

/// Scriptable, current properties of `class` itself (not inherited), sorted.
fn own_properties(class: &str) -> Vec<&'static str> {
    let Some(c) = procmodel_dom::db().classes.get(class) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = c
        .properties
        .values()
        .filter(|p| {
            matches!(p.kind, PropertyKind::Canonical { .. })
                && !matches!(p.scriptability, Scriptability::None | Scriptability::Write)
                && !p.tags.contains(&PropertyTag::Deprecated)
                && !p.tags.contains(&PropertyTag::Hidden)
                && !p.tags.contains(&PropertyTag::NotScriptable)
                && is_identifier(p.name)
        })
        .map(|p| p.name)
        .collect();
    out.sort_unstable();
    out
}

/// `class` and its superclasses, most derived first.
fn chain(class: &str) -> Vec<&'static str> {
    let db = procmodel_dom::db();
    let mut out = Vec::new();
    let mut cur = db.classes.get(class);
    while let Some(c) = cur {
        out.push(c.name);
        cur = c.superclass.and_then(|s| db.classes.get(s));
    }
    out
}

fn lua_string(s: &str) -> String {
    format!("{s:?}")
}

fn lua_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let v: Vec<String> = items.into_iter().map(lua_string).collect();
    format!("{{{}}}", v.join(","))
}

/// Classes scripts cannot create that the host serves as the Workspace child of that name
/// (`workspace.Terrain`, and `params.Terrain` in a generator).
const WORKSPACE_CHILDREN: &[&str] = &["Terrain"];

/// Runs the probe module in a fresh VM and parses what it recorded.
pub fn probe() -> Result<Probe> {
    let db = procmodel_dom::db();
    let mut candidates: Vec<(&str, &str)> = db
        .classes
        .values()
        .filter(|c| !c.tags.contains(&ClassTag::Deprecated))
        .filter_map(|c| {
            if c.name == "DataModel" {
                Some((c.name, "game"))
            } else if c.tags.contains(&ClassTag::Service) {
                Some((c.name, "service"))
            } else if WORKSPACE_CHILDREN.contains(&c.name) {
                Some((c.name, "workspace"))
            } else if !c.tags.contains(&ClassTag::NotCreatable) {
                Some((c.name, "new"))
            } else {
                None
            }
        })
        .collect();
    candidates.sort_unstable();
    let mut ancestors: BTreeSet<&str> = BTreeSet::new();
    for (c, _) in &candidates {
        ancestors.extend(chain(c));
    }
    let mut methods: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (class, name) in instance_methods() {
        methods.entry(class).or_default().push(name);
    }
    let mut src = String::from("local CLASSES = {\n");
    for (c, how) in &candidates {
        let _ = writeln!(src, "{{{},{}}},", lua_string(c), lua_string(how));
    }
    src.push_str("}\nlocal CHAIN = {\n");
    for (c, _) in &candidates {
        let _ = writeln!(src, "[{}]={},", lua_string(c), lua_list(chain(c)));
    }
    src.push_str("}\nlocal OWN = {\n");
    for a in &ancestors {
        let mut own: Vec<&str> = own_properties(a);
        own.extend(methods.get(a).into_iter().flatten());
        for (c, names) in EVENT_CANDIDATES.iter().chain(YIELDING_CANDIDATES) {
            if c == a {
                own.extend(names.iter().copied());
            }
        }
        // Every event Roblox's API gives the class (the VM serves those of the outside world
        // as signals that never fire; the probe keeps the ones it finds).
        for e in procmodel_luau::declared_events(a) {
            if !own.contains(e) {
                own.push(e);
            }
        }
        let _ = writeln!(src, "[{}]={},", lua_string(a), lua_list(own));
    }
    src.push_str("}\n");
    let _ = writeln!(
        src,
        "local SIGNAL = {}",
        lua_list(SIGNAL_CANDIDATES.iter().copied())
    );
    src.push_str(PROBE);
    let host = Host::new(HostConfig::default())?;
    // ProceduralModel's members as the engine's hosts have them.
    host.manage(procmodel_engine::PROCEDURAL_MODEL)?;
    let root = host.with_dom_ref(|dom| dom.root_ref());
    let module = host.add_module_script(root, "ProcmodelTypesProbe", &src, None);
    host.require(module)
        .map_err(|e| anyhow!("the types probe failed in the VM: {e}"))?;
    let text = host.with_dom_ref(|dom| {
        let inst = dom.get_by_ref(module)?;
        match inst.properties.get(&ustr("Attributes")) {
            Some(Variant::Attributes(a)) => match a.get("Probe") {
                Some(Variant::String(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    });
    let text = text.ok_or_else(|| anyhow!("the types probe recorded nothing"))?;
    let mut p = Probe {
        classes: BTreeMap::new(),
        members: BTreeMap::new(),
        globals: BTreeMap::new(),
        fields: BTreeMap::new(),
        signal: BTreeSet::new(),
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["class", c, how] => {
                p.classes.insert(c.to_string(), how.to_string());
            }
            ["member", c, m] => {
                p.members
                    .entry(c.to_string())
                    .or_default()
                    .insert(m.to_string());
            }
            ["global", g, t] => {
                p.globals.insert(g.to_string(), t.to_string());
            }
            ["field", g, k, t] => {
                p.fields
                    .entry(g.to_string())
                    .or_default()
                    .insert(k.to_string(), t.to_string());
            }
            ["signal", m] => {
                p.signal.insert(m.to_string());
            }
            _ => bail!("the types probe wrote an unexpected line: {line:?}"),
        }
    }
    if p.classes.is_empty() || p.globals.is_empty() {
        bail!("the types probe found no classes or no globals");
    }
    Ok(p)
}

/// The probe's body (its data tables are generated before it). It records one line per
/// finding in the module's `Probe` attribute.
const PROBE: &str = r#"
local out = {}
local function emit(...)
	table.insert(out, table.concat({ ... }, "\t"))
end
local function kind(v)
	local t = typeof(v)
	if t == "Instance" then
		return "Instance:" .. v.ClassName
	end
	return t
end
-- Globals: the script's own environment, then what it reads through to.
local seen = {}
local env = getfenv(1)
for _ = 1, 8 do
	if type(env) ~= "table" then
		break
	end
	for k, v in env do
		if type(k) == "string" and not seen[k] then
			seen[k] = true
			emit("global", k, kind(v))
			if type(v) == "table" and k ~= "_G" and k ~= "shared" then
				for f, fv in v do
					if type(f) == "string" then
						emit("field", k, f, kind(fv))
					end
				end
			end
		end
	end
	local mt = getmetatable(env)
	env = if type(mt) == "table" then rawget(mt, "__index") else nil
end
-- Classes: one instance of each, and every member of its chain it answers.
local confirmed = {}
for _, spec in CLASSES do
	local name, how = spec[1], spec[2]
	local ok, inst
	if how == "service" then
		ok, inst = pcall(function()
			return game:GetService(name)
		end)
	elseif how == "game" then
		ok, inst = true, game
	elseif how == "workspace" then
		ok, inst = pcall(function()
			return workspace[name]
		end)
	else
		ok, inst = pcall(Instance.new, name)
	end
	if ok and typeof(inst) == "Instance" then
		emit("class", name, how)
		for _, base in CHAIN[name] do
			confirmed[base] = confirmed[base] or {}
			for _, m in OWN[base] or {} do
				if not confirmed[base][m] then
					local got = pcall(function()
						return inst[m]
					end)
					if got then
						confirmed[base][m] = true
						emit("member", base, m)
					end
				end
			end
		end
	end
end
local signal = game.ChildAdded
for _, m in SIGNAL do
	if pcall(function()
		return signal[m]
	end) then
		emit("signal", m)
	end
end
script:SetAttribute("Probe", table.concat(out, "\n"))
return nil
"#;

fn is_identifier(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in",
        "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ];
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// The Luau type of a property of `class`.
fn property_type(class: &str, name: &str) -> String {
    let Some(p) = procmodel_dom::db()
        .classes
        .get(class)
        .and_then(|c| c.properties.get(name))
    else {
        return "any".into();
    };
    match &p.data_type {
        DataType::Enum(_) => "EnumItem".into(),
        DataType::Value(v) => {
            let t = format!("{v:?}");
            match t.as_str() {
                "Bool" => "boolean".into(),
                "Float32" | "Float64" | "Int32" | "Int64" => "number".into(),
                "String" | "BinaryString" | "ContentId" => "string".into(),
                "Ref" => "Instance?".into(),
                "OptionalCFrame" => "CFrame?".into(),
                "Color3uint8" => "Color3".into(),
                "EnumItem" | "Enum" => "EnumItem".into(),
                "Axes" | "BrickColor" | "CFrame" | "Color3" | "ColorSequence" | "Content"
                | "Faces" | "Font" | "NumberRange" | "NumberSequence" | "PhysicalProperties"
                | "Ray" | "Rect" | "Region3" | "Region3int16" | "UDim" | "UDim2" | "Vector2"
                | "Vector2int16" | "Vector3" | "Vector3int16" => t,
                _ => "any".into(),
            }
        }
        _ => "any".into(),
    }
}

/// Signatures of well-known methods; a method the registry has and this map lacks is
/// declared with any arguments (the map never adds a method).
fn method_signature(name: &str) -> &'static str {
    match name {
        "ClearAllChildren" | "Destroy" | "Remove" => "(self): ()",
        "Clone" => "(self): Instance",
        "FindFirstChild" => "(self, name: string, recursive: boolean?): Instance?",
        "FindFirstChildOfClass" | "FindFirstChildWhichIsA" => {
            "(self, className: string, recursive: boolean?): Instance?"
        }
        "FindFirstAncestor" | "FindFirstDescendant" => "(self, name: string): Instance?",
        "FindFirstAncestorOfClass" | "FindFirstAncestorWhichIsA" => {
            "(self, className: string): Instance?"
        }
        "GetAttribute" => "(self, name: string): any",
        "GetAttributes" => "(self): { [string]: any }",
        "GetAttributeChangedSignal" => "(self, name: string): RBXScriptSignal",
        "GetPropertyChangedSignal" => "(self, property: string): RBXScriptSignal",
        "GetChildren" | "GetDescendants" => "(self): { Instance }",
        "GetFullName" => "(self): string",
        "GetService" | "getService" | "service" | "FindService" => {
            "(self, className: string): Instance"
        }
        "IsA" => "(self, className: string): boolean",
        "IsAncestorOf" | "IsDescendantOf" => "(self, other: Instance): boolean",
        "SetAttribute" => "(self, name: string, value: any): ()",
        "GetPivot" => "(self): CFrame",
        "PivotTo" => "(self, target: CFrame): ()",
        "GetBoundingBox" => "(self): (CFrame, Vector3)",
        "GetExtentsSize" => "(self): Vector3",
        "ScaleTo" => "(self, scale: number): ()",
        "TranslateBy" => "(self, delta: Vector3): ()",
        "SetPrimaryPartCFrame" => "(self, cframe: CFrame): ()",
        "GetPrimaryPartCFrame" => "(self): CFrame",
        "GetScale" => "(self): number",
        "Raycast" => {
            "(self, origin: Vector3, direction: Vector3, params: RaycastParams?): RaycastResult?"
        }
        "GetPartBoundsInBox" => {
            "(self, cframe: CFrame, size: Vector3, params: OverlapParams?): { BasePart }"
        }
        "GetPartBoundsInRadius" => {
            "(self, position: Vector3, radius: number, params: OverlapParams?): { BasePart }"
        }
        "GetPartsInPart" => "(self, part: BasePart, params: OverlapParams?): { BasePart }",
        "GetTouchingParts" => "(self): { BasePart }",
        "GetMass" => "(self): number",
        "Resize" => "(self, normalId: EnumItem, deltaAmount: number): boolean",
        "Spherecast" => {
            "(self, position: Vector3, radius: number, direction: Vector3, params: RaycastParams?): RaycastResult?"
        }
        "Blockcast" => {
            "(self, cframe: CFrame, size: Vector3, direction: Vector3, params: RaycastParams?): RaycastResult?"
        }
        "Shapecast" => {
            "(self, part: BasePart, direction: Vector3, params: RaycastParams?): RaycastResult?"
        }
        "ArePartsTouchingOthers" => {
            "(self, partList: { BasePart }, overlapIgnored: number?): boolean"
        }
        "BulkMoveTo" => {
            "(self, partList: { BasePart }, cframeList: { CFrame }, eventMode: EnumItem?): ()"
        }
        "AddItem" | "addItem" => "(self, item: Instance, lifetime: number?): ()",
        "MoveTo" | "moveTo" => "(self, position: Vector3): ()",
        "FindPartOnRay" | "findPartOnRay" => {
            "(self, ray: Ray, ignore: Instance?, terrainCellsAreCubes: boolean?, ignoreWater: boolean?): (BasePart?, Vector3, Vector3, EnumItem)"
        }
        "FindPartOnRayWithIgnoreList" => {
            "(self, ray: Ray, ignore: { Instance }, terrainCellsAreCubes: boolean?, ignoreWater: boolean?): (BasePart?, Vector3, Vector3, EnumItem)"
        }
        "FindPartOnRayWithWhitelist" => {
            "(self, ray: Ray, include: { Instance }, ignoreWater: boolean?): (BasePart?, Vector3, Vector3, EnumItem)"
        }
        "FindPartsInRegion3" | "findPartsInRegion3" => {
            "(self, region: Region3, ignore: Instance?, maxParts: number?): { BasePart }"
        }
        "FindPartsInRegion3WithIgnoreList" | "FindPartsInRegion3WithWhiteList" => {
            "(self, region: Region3, list: { Instance }, maxParts: number?): { BasePart }"
        }
        "IsRegion3Empty" => "(self, region: Region3, ignore: Instance?): boolean",
        "IsRegion3EmptyWithIgnoreList" => "(self, region: Region3, ignore: { Instance }): boolean",
        "SetPrimaryPart" => "(self, part: BasePart?): ()",
        "AddTag" | "RemoveTag" => "(self, tag: string): ()",
        "HasTag" => "(self, tag: string): boolean",
        "GetTags" => "(self): { string }",
        "Fire" => "(self, ...any): ()",
        "ForceGeneration" => "(self): ()",
        "Invoke" => "(self, ...any): ...any",
        "WaitForChild" => "(self, name: string, timeout: number?): Instance",
        "RegisterCollisionGroup" | "UnregisterCollisionGroup" | "RemoveCollisionGroup" => {
            "(self, name: string): ()"
        }
        "CreateCollisionGroup" | "GetCollisionGroupId" => "(self, name: string): number",
        "RenameCollisionGroup" => "(self, from: string, to: string): ()",
        "CollisionGroupSetCollidable" => {
            "(self, group1: string, group2: string, collidable: boolean): ()"
        }
        "CollisionGroupsAreCollidable" => "(self, group1: string, group2: string): boolean",
        "IsCollisionGroupRegistered" => "(self, name: string): boolean",
        "GetRegisteredCollisionGroups" | "GetCollisionGroups" => {
            "(self): { { id: number, mask: number, name: string } }"
        }
        "GetMaxCollisionGroups" | "GetServerTimeNow" | "GetMinutesAfterMidnight" => {
            "(self): number"
        }
        "SetMinutesAfterMidnight" => "(self, minutes: number): ()",
        "GetJoints" => "(self): { Instance }",
        "GetValue" => {
            "(self, alpha: number, easingStyle: EnumItem, easingDirection: EnumItem): number"
        }
        "Create" => {
            "(self, instance: Instance, tweenInfo: TweenInfo, propertyTable: { [string]: any }): any"
        }
        "Get" => "(self): { Instance }",
        "Set" | "Add" => "(self, instances: { Instance }): ()",
        "GetConnectedParts" => "(self, recursive: boolean?): { BasePart }",
        "IsGrounded" => "(self): boolean",
        "GetRootPart" => "(self): BasePart",
        "GetModelCFrame" => "(self): CFrame",
        "GetModelSize" => "(self): Vector3",
        "GetCollisionGroupName" => "(self, id: number): string?",
        "SetPartCollisionGroup" => "(self, part: BasePart, name: string): ()",
        "CollisionGroupContainsPart" => "(self, name: string, part: BasePart): boolean",
        "CreateEditableMesh" => "(self, options: { [string]: any }?): EditableMesh?",
        "CreateEditableMeshAsync" => {
            "(self, content: Content, options: { [string]: any }?): EditableMesh"
        }
        "CreateMeshPartAsync" => "(self, content: Content, options: { [string]: any }?): MeshPart",
        "CreateEditableImage" => "(self, options: { [string]: any }?): EditableImage?",
        "CreateEditableImageAsync" => {
            "(self, content: Content, options: { [string]: any }?): EditableImage?"
        }
        "ApplyMesh" => "(self, meshPart: MeshPart): ()",
        "SubstituteGeometry" => "(self, source: PartOperation): ()",
        "TakeDamage" => "(self, amount: number): ()",
        "AddAccessory" => "(self, accessory: Accessory): ()",
        "GetAccessories" => "(self): { Accessory }",
        "RemoveAccessories" | "BuildRigFromAttachments" => "(self): ()",
        "GetLimb" => "(self, part: BasePart): EnumItem",
        "SetStateEnabled" => "(self, state: EnumItem, enabled: boolean): ()",
        "GetStateEnabled" => "(self, state: EnumItem): boolean",
        "GetBodyPartR15" => "(self, part: BasePart): EnumItem",
        "GetTeams" => "(self): { Team }",
        "GetPlayers" => "(self): { Player }",
        "GetMaterialVariant" => "(self, material: EnumItem, name: string): MaterialVariant?",
        "GetBaseMaterialOverride" => "(self, material: EnumItem): string",
        "SetBaseMaterialOverride" => "(self, material: EnumItem, name: string): ()",
        _ => "(self, ...any): ...any",
    }
}

/// The Luau type of a global the probe saw, by its `typeof`.
fn global_type(probe: &Probe, name: &str, kind: &str) -> String {
    match (name, kind) {
        ("script", _) => "LuaSourceContainer".into(),
        ("Instance", "table") => {
            let mut news: Vec<String> = probe
                .classes
                .iter()
                .filter(|(_, how)| *how == "new")
                .map(|(c, _)| format!("((className: \"{c}\", parent: Instance?) -> {c})"))
                .collect();
            news.push("((className: string, parent: Instance?) -> Instance)".into());
            let mut extra = String::new();
            for (f, t) in probe.fields.get(name).into_iter().flatten() {
                if f != "new" && is_identifier(f) {
                    let _ = write!(extra, ", {f}: {}", value_type(t));
                }
            }
            format!("{{ new: {}{extra} }}", news.join(" & "))
        }
        (_, "table") => {
            let fields: Vec<String> = probe
                .fields
                .get(name)
                .into_iter()
                .flatten()
                .filter(|(f, _)| is_identifier(f))
                .map(|(f, t)| format!("{f}: {}", task_or_value(name, f, t)))
                .collect();
            if fields.is_empty() {
                "{ [any]: any }".into()
            } else {
                format!("{{ {} }}", fields.join(", "))
            }
        }
        ("typeof", "function") => "(value: any) -> string".into(),
        ("warn", "function") => "(...any) -> ()".into(),
        ("tick" | "time" | "elapsedTime", "function") => "() -> number".into(),
        ("version", "function") => "() -> string".into(),
        ("printidentity", "function") => "(prefix: string?) -> ()".into(),
        ("stats", "function") => "() -> Instance".into(),
        ("wait", "function") => "(seconds: number?) -> (number, number)".into(),
        ("loadstring", "function") => {
            "(contents: string, chunkname: string?) -> (((...any) -> ...any)?, string?)".into()
        }
        _ => value_type(kind),
    }
}

fn task_or_value(table: &str, field: &str, kind: &str) -> String {
    if table == "task" && kind == "function" {
        return match field {
            "wait" => "(seconds: number?) -> number".into(),
            "spawn" | "defer" => "(f: ((...any) -> ...any) | thread, ...any) -> thread".into(),
            "delay" => {
                "(seconds: number?, f: ((...any) -> ...any) | thread, ...any) -> thread".into()
            }
            "cancel" => "(thread: thread) -> ()".into(),
            "synchronize" | "desynchronize" => "() -> ()".into(),
            _ => value_type(kind),
        };
    }
    value_type(kind)
}

fn value_type(kind: &str) -> String {
    match kind {
        "function" => "(...any) -> ...any".into(),
        "number" | "string" | "boolean" | "buffer" | "thread" => kind.into(),
        "table" => "{ [any]: any }".into(),
        k if k.starts_with("Instance:") => k["Instance:".len()..].to_owned(),
        k if is_identifier(k) && DATATYPES.contains(&format!("declare class {k}\n")) => k.into(),
        _ => "any".into(),
    }
}

/// The whole definitions file.
pub fn definitions(probe: &Probe) -> Result<String> {
    let mut s = String::new();
    s.push_str(
        "-- procmodel definitions for luau-lsp, written by `procmodel types`: the Roblox API this engine\n\
         -- implements (probed from the engine itself, so it is exactly what a generator can use\n\
         -- here), the generator protocol and the @procmodel/* toolkit types. Regenerate it after\n\
         -- upgrading procmodel. Use it in luau-lsp's standard (non-Roblox) mode:\n\
         --   \"luau-lsp.platform.type\": \"standard\",\n\
         --   \"luau-lsp.types.definitionFiles\": [\"procmodel.d.luau\"]\n\n",
    );
    let _ = writeln!(
        s,
        "-- Datatypes -------------------------------------------------------------------------\n"
    );
    s.push_str(DATATYPES.trim_end());
    s.push_str("\n\n-- Signals ---------------------------------------------------------------------------\n\n");
    s.push_str("declare class RBXScriptConnection\n\tConnected: boolean\n\tfunction Disconnect(self): ()\nend\n\n");
    s.push_str("declare class RBXScriptSignal\n");
    for m in &probe.signal {
        let sig = match m.as_str() {
            "Wait" => "(self): ...any",
            _ => "(self, callback: (...any) -> ()): RBXScriptConnection",
        };
        let _ = writeln!(s, "\tfunction {m}{sig}");
    }
    s.push_str("end\n\n-- Instance classes --------------------------------------------------------------------\n\n");
    // Every class declared is instantiable or the base of one; bases come first.
    let mut declared: BTreeSet<&str> = BTreeSet::new();
    for c in probe.classes.keys() {
        declared.extend(chain(c));
    }
    let mut order: Vec<&str> = declared.iter().copied().collect();
    order.sort_by_key(|c| (chain(c).len(), *c));
    for class in order {
        let parent = procmodel_dom::db()
            .classes
            .get(class)
            .and_then(|c| c.superclass);
        match parent {
            Some(p) => {
                let _ = writeln!(s, "declare class {class} extends {p}");
            }
            None => {
                let _ = writeln!(s, "declare class {class}");
            }
        }
        if class == "Instance" {
            s.push_str("\tClassName: string\n");
        }
        let members = probe.members.get(class);
        let methods: BTreeSet<&str> = instance_methods()
            .into_iter()
            .filter(|(c, _)| *c == class)
            .map(|(_, n)| n)
            .collect();
        for m in members.into_iter().flatten() {
            if class == "Instance" && m == "ClassName" {
                continue;
            }
            if methods.contains(m.as_str()) || is_yielding_candidate(class, m) {
                let _ = writeln!(s, "\tfunction {m}{}", method_signature(m));
            } else if is_event_candidate(class, m) {
                let _ = writeln!(s, "\t{m}: RBXScriptSignal");
            } else {
                let _ = writeln!(s, "\t{m}: {}", property_type(class, m));
            }
        }
        // Callbacks (`OnInvoke`, `OnServerInvoke`, `ProcessReceipt`, ...): set, never read,
        // so the probe cannot see them.
        for c in procmodel_luau::declared_callbacks(class) {
            let _ = writeln!(s, "\t{c}: (...any) -> ...any");
        }
        s.push_str("end\n\n");
    }
    // `params.Terrain` is a Terrain when the VM served one (the probe reached workspace.Terrain).
    let terrain = if probe.classes.contains_key("Terrain") {
        "Terrain"
    } else {
        "Instance"
    };
    let _ = write!(
        s,
        "-- The generator protocol -----------------------------------------------------------------\n\n\
         -- `params` of OnGenerate: the model's Size (divided by its Scale) and its attributes\n\
         -- (missing ones filled from the module's Attributes). Call Pause in every loop.\n\
         -- Terrain: the run's own voxels, in the model's local space (docs/toolkit.md).\n\
         declare class GeneratorParams\n\
         \tSize: Vector3\n\
         \tAttributes: {{ [string]: any }}\n\
         \tTerrain: {terrain}\n\
         \tfunction Pause(self): ()\n\
         end\n\n\
         -- What a generator ModuleScript returns.\n\
         type GeneratorModule = {{\n\
         \tAttributes: {{ [string]: any }}?,\n\
         \tOnGenerate: (params: GeneratorParams, targetContainer: Instance) -> (),\n\
         }}\n\n"
    );
    s.push_str("-- Globals ---------------------------------------------------------------------------\n\n");
    for (name, kind) in &probe.globals {
        if LUAU_GLOBALS.contains(&name.as_str())
            || procmodel_luau::MISSING_GLOBALS
                .iter()
                .any(|(g, _)| g == name)
            || !is_identifier(name)
            || DATATYPES.contains(&format!("declare {name}:"))
            || TOOLKIT.contains(&format!("declare {name}:"))
        {
            continue;
        }
        let _ = writeln!(s, "declare {name}: {}", global_type(probe, name, kind));
    }
    s.push_str("\n-- @procmodel/* toolkit ----------------------------------------------------------------\n\n");
    s.push_str(TOOLKIT.trim_end());
    s.push('\n');
    Ok(s)
}

/// The host's methods per class, and the method the engine's ProceduralModel rules add
/// (its yielding method is a [`YIELDING_CANDIDATES`] entry).
fn instance_methods() -> Vec<(&'static str, &'static str)> {
    let m = procmodel_engine::PROCEDURAL_MODEL;
    let mut all = procmodel_luau::instance_methods();
    all.push((m.class, m.force_method));
    all.sort_unstable();
    all
}
