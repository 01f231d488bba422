//! `procmodel new`: write a commented template generator, like the one Studio inserts.

use crate::output::write_atomic;
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the generator (Name.luau).
    pub path: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

pub const TEMPLATE: &str = r#"--!strict
-- A procedural generator module (Roblox ProceduralModel protocol).
--
-- `Attributes` lists the inputs with their defaults; the engine passes the model's current
-- values in `params.Attributes` (missing ones filled from these defaults). Changing any of
-- them, or the model's Size, regenerates the model.
--
-- `OnGenerate(params, targetContainer)` builds the result around the origin at scale 1 and
-- parents everything to `targetContainer`. The engine then moves it to the model's pivot,
-- applies the model's Scale and replaces the previous results.
--
-- Try it:  procmodel generate __FILE__ --attr Count=20 -o out.rbxm

local Generator = {}

Generator.Attributes = {
	RandomSeed = 1, -- the same seed and inputs give the same output, bit for bit
	Count = 10,
	Color = Color3.fromRGB(163, 162, 165),
}

function Generator.OnGenerate(params, targetContainer: Instance)
	local attrs = params.Attributes
	local size: Vector3 = params.Size -- the box to generate in (Size ÷ Scale)
	local rng = Random.new(attrs.RandomSeed)

	for i = 1, attrs.Count do
		-- Pause() almost always returns at once; it lets the engine keep its frame budget
		-- and cancel stale work. Call it at the top of every loop.
		params:Pause()

		local part = Instance.new("Part")
		part.Name = `Block{i}`
		part.Anchored = true
		part.Size = Vector3.new(1, rng:NextNumber(1, size.Y), 1)
		part.Position = Vector3.new(
			rng:NextNumber(-size.X / 2, size.X / 2),
			part.Size.Y / 2 - size.Y / 2,
			rng:NextNumber(-size.Z / 2, size.Z / 2)
		)
		part.Color = attrs.Color
		part.Parent = targetContainer
	end
end

return Generator
"#;

pub fn run(args: Args) -> Result<ExitCode> {
    if args.path.exists() && !args.force {
        bail!(
            "{} already exists (use --force to overwrite)",
            args.path.display()
        );
    }
    let text = TEMPLATE.replace("__FILE__", &args.path.display().to_string());
    write_atomic(&args.path, text.as_bytes())?;
    eprintln!("wrote {}", args.path.display());
    Ok(ExitCode::SUCCESS)
}
