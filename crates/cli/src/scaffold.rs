//! The generator templates `procmodel new --template` writes: one small, commented, working
//! generator per technique of the toolkit (the sources are `templates/*.luau`, embedded).
//!
//! Must never hold a template that does not generate at its defaults (the `templates`
//! integration test generates every one).

/// A template of `procmodel new`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Template {
    /// Random blocks: the generator protocol, attributes, Size and Pause, commented.
    Blank,
    /// Boulders clumped by fractal noise (@procmodel/noise).
    Noise,
    /// A bush grown by a bracketed, stochastic L-system (@procmodel/lsystem).
    Lsystem,
    /// Roads and plazas laid out by Wave Function Collapse (@procmodel/wfc).
    Wfc,
    /// A connected cave from a cellular automaton (@procmodel/automata).
    Cave,
    /// A heightmap landscape of Part columns with water (@procmodel/noise grids).
    Terrain,
}

impl Template {
    /// The template's Luau source; `__FILE__` stands for the path it is written to.
    pub fn source(self) -> &'static str {
        match self {
            Template::Blank => include_str!("templates/blank.luau"),
            Template::Noise => include_str!("templates/noise.luau"),
            Template::Lsystem => include_str!("templates/lsystem.luau"),
            Template::Wfc => include_str!("templates/wfc.luau"),
            Template::Cave => include_str!("templates/cave.luau"),
            Template::Terrain => include_str!("templates/terrain.luau"),
        }
    }
}
