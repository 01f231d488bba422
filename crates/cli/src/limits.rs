//! The limits every command that runs Luau shares (`--timeout`, `--max-run-time`,
//! `--max-wait`, `--max-instances`, `--max-output-mb`, `--max-terrain-mb`, `--max-memory-mb`),
//! flattened into each subcommand's arguments.

use procmodel_luau::HostConfig;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct Limits {
    /// Seconds a generator or script may run without yielding (params:Pause() counts as a
    /// yield point).
    #[arg(long, default_value = "10", allow_hyphen_values = true, value_parser = crate::flags::seconds)]
    pub timeout: Duration,
    /// Seconds one run may compute without finishing even while it calls params:Pause()
    /// (which restarts --timeout).
    #[arg(long, default_value = "600", allow_hyphen_values = true, value_parser = crate::flags::seconds)]
    pub max_run_time: Duration,
    /// Seconds of virtual time (task.wait, frames) one run may wait in total before it is
    /// stopped: waiting costs no real time, so a run that waits forever ends at once.
    #[arg(long, default_value = "3600", allow_hyphen_values = true, value_parser = crate::flags::seconds)]
    pub max_wait: Duration,
    /// Most instances one run may create.
    #[arg(long, default_value = "2000000", allow_hyphen_values = true, value_parser = crate::flags::count)]
    pub max_instances: u64,
    /// Most megabytes of instance data one run may create (about 1 KB per instance plus the
    /// strings it writes).
    #[arg(long = "max-output-mb", value_name = "MB", default_value = "4096", allow_hyphen_values = true, value_parser = crate::flags::megabytes)]
    pub max_output_bytes: u64,
    /// Most megabytes of voxels one Terrain may hold (workspace.Terrain in a script, a run's
    /// params.Terrain): voxels are outside the Luau heap's limit.
    #[arg(long = "max-terrain-mb", value_name = "MB", default_value = "4096", allow_hyphen_values = true, value_parser = crate::flags::megabytes)]
    pub max_terrain_bytes: u64,
    /// Most megabytes the Luau heap of one VM may hold (tables, strings, closures): a run
    /// that needs more fails with "not enough memory".
    #[arg(long = "max-memory-mb", value_name = "MB", default_value = "1024", allow_hyphen_values = true, value_parser = crate::flags::megabytes)]
    pub max_memory_bytes: u64,
}

impl Limits {
    /// Engine frames a settle may take: every frame of virtual time a run may wait, and a
    /// margin (a run that waits longer has already failed with the wait limit).
    pub fn max_frames(&self) -> usize {
        (self.max_wait.as_secs_f64() / procmodel_luau::FRAME).ceil() as usize + 64
    }

    /// Puts these limits into a host configuration.
    pub fn apply(&self, host: &mut HostConfig) {
        host.timeout = self.timeout;
        host.run_limit = self.max_run_time;
        host.max_wait = self.max_wait.as_secs_f64();
        host.instance_limit = Some(usize::try_from(self.max_instances).unwrap_or(usize::MAX));
        host.max_output_bytes = Some(usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX));
        host.max_terrain_bytes =
            Some(usize::try_from(self.max_terrain_bytes).unwrap_or(usize::MAX));
        host.memory_limit = usize::try_from(self.max_memory_bytes).unwrap_or(usize::MAX);
    }
}
