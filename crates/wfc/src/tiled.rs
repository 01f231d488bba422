//! The simple tiled model: tile sets in the format of mxgmn's samples (tiles with X/L/T/I/\/F
//! symmetry and weights, left–right neighbour pairs, named subsets) compiled into [`Rules`]
//! over oriented tiles. 3D tile sets are given directly as [`Rules::from_adjacency`].

use std::collections::BTreeMap;

use crate::error::WfcError;
use crate::rules::{Direction, GridShape, Rules};
use crate::solver::{Solution, Solver, SolverConfig};

/// The symmetry class of a tile, which fixes how many distinct orientations it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileSymmetry {
    /// Fully symmetric: 1 orientation.
    X,
    /// Like the letter L: 4 orientations.
    L,
    /// Like the letter T: 4 orientations.
    T,
    /// Like the letter I: 2 orientations.
    I,
    /// Like a backslash: 2 orientations.
    Backslash,
    /// No symmetry: 8 orientations.
    F,
}

impl TileSymmetry {
    /// Parses the `symmetry` attribute (`X`, `L`, `T`, `I`, `\`, `F`).
    pub fn from_char(c: char) -> Option<Self> {
        Some(match c {
            'X' => Self::X,
            'L' => Self::L,
            'T' => Self::T,
            'I' => Self::I,
            '\\' => Self::Backslash,
            'F' => Self::F,
            _ => return None,
        })
    }

    /// Number of distinct orientations.
    pub fn cardinality(self) -> usize {
        match self {
            Self::X => 1,
            Self::I | Self::Backslash => 2,
            Self::L | Self::T => 4,
            Self::F => 8,
        }
    }

    /// Rotation by 90° (`a`) and reflection (`b`) acting on orientation indices.
    fn actions(self, i: usize) -> (usize, usize) {
        match self {
            Self::X => (i, i),
            Self::L => ((i + 1) % 4, if i.is_multiple_of(2) { i + 1 } else { i - 1 }),
            Self::T => ((i + 1) % 4, if i.is_multiple_of(2) { i } else { 4 - i }),
            Self::I => (1 - i, i),
            Self::Backslash => (1 - i, 1 - i),
            Self::F => (
                if i < 4 { (i + 1) % 4 } else { 4 + (i - 1) % 4 },
                if i < 4 { i + 4 } else { i - 4 },
            ),
        }
    }
}

/// One tile of a set.
#[derive(Clone, Debug, PartialEq)]
pub struct TileDesc {
    /// Name, unique in the set.
    pub name: String,
    /// Symmetry class.
    pub symmetry: TileSymmetry,
    /// Weight of each of its orientations (default 1).
    pub weight: f64,
}

/// A `<neighbor left="a 1" right="b"/>` entry: oriented tile `right` may sit to the right of
/// oriented tile `left`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighborRule {
    /// Left tile name and orientation.
    pub left: (String, usize),
    /// Right tile name and orientation.
    pub right: (String, usize),
}

impl NeighborRule {
    /// Parses the attribute pair, e.g. `("corner 1", "t")`.
    pub fn parse(left: &str, right: &str) -> Result<Self, WfcError> {
        let one = |s: &str| -> Result<(String, usize), WfcError> {
            let mut it = s.split_whitespace();
            let name = it
                .next()
                .ok_or_else(|| WfcError::BadTileSet(format!("empty neighbour tile {s:?}")))?;
            let rot = match it.next() {
                None => 0,
                Some(r) => r
                    .parse()
                    .map_err(|_| WfcError::BadTileSet(format!("bad orientation in {s:?}")))?,
            };
            Ok((name.to_owned(), rot))
        };
        Ok(NeighborRule {
            left: one(left)?,
            right: one(right)?,
        })
    }
}

/// A tile set: tiles, neighbour rules and named subsets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileSet {
    /// Tiles in file order.
    pub tiles: Vec<TileDesc>,
    /// Neighbour rules in file order.
    pub neighbors: Vec<NeighborRule>,
    /// Named subsets: the tile names each allows.
    pub subsets: Vec<(String, Vec<String>)>,
}

/// A compiled 2D tile set: oriented tiles (named `"tile k"`) and their rules.
#[derive(Clone, Debug)]
pub struct TiledModel {
    names: Vec<String>,
    orientation: Vec<(usize, usize)>,
    rules: Rules,
}

impl TiledModel {
    /// Compiles a tile set, optionally restricted to a named subset, exactly as the
    /// reference's `SimpleTiledModel` does (oriented tiles in tile order, each neighbour pair
    /// expanded by the dihedral symmetries of the pair).
    pub fn new(set: &TileSet, subset: Option<&str>) -> Result<Self, WfcError> {
        let allowed: Option<&Vec<String>> = match subset {
            None => None,
            Some(s) => Some(
                set.subsets
                    .iter()
                    .find(|(n, _)| n == s)
                    .map(|(_, v)| v)
                    .ok_or_else(|| WfcError::BadTileSet(format!("no subset named {s:?}")))?,
            ),
        };
        let keep = |name: &str| allowed.is_none_or(|v| v.iter().any(|n| n == name));
        let mut action: Vec<[usize; 8]> = Vec::new();
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        let mut names = Vec::new();
        let mut orientation = Vec::new();
        let mut weights = Vec::new();
        for (k, tile) in set.tiles.iter().enumerate() {
            if !keep(&tile.name) {
                continue;
            }
            if !(tile.weight.is_finite() && tile.weight > 0.0) {
                return Err(WfcError::BadTileSet(format!(
                    "tile {:?} has weight {}",
                    tile.name, tile.weight
                )));
            }
            let base = action.len();
            if first.insert(&tile.name, base).is_some() {
                return Err(WfcError::BadTileSet(format!(
                    "tile {:?} is defined twice",
                    tile.name
                )));
            }
            let sym = tile.symmetry;
            let a = |i| sym.actions(i).0;
            let b = |i| sym.actions(i).1;
            for t in 0..sym.cardinality() {
                let m = [
                    t,
                    a(t),
                    a(a(t)),
                    a(a(a(t))),
                    b(t),
                    b(a(t)),
                    b(a(a(t))),
                    b(a(a(a(t)))),
                ];
                action.push(m.map(|v| v + base));
                names.push(format!("{} {t}", tile.name));
                orientation.push((k, t));
                weights.push(tile.weight);
            }
        }
        let t_count = action.len();
        if t_count == 0 {
            return Err(WfcError::BadTileSet("no tile selected".into()));
        }
        // dense[d][t1][t2] with the reference's directions: 0 = left, 1 = down.
        let mut horizontal = vec![false; t_count * t_count];
        let mut vertical = vec![false; t_count * t_count];
        let resolve = |(name, rot): &(String, usize)| -> Result<Option<usize>, WfcError> {
            if !keep(name) {
                return Ok(None);
            }
            let &base = first
                .get(name.as_str())
                .ok_or_else(|| WfcError::BadTileSet(format!("unknown neighbour tile {name:?}")))?;
            if *rot >= 8 {
                return Err(WfcError::BadTileSet(format!(
                    "orientation {rot} of {name:?} is past 7"
                )));
            }
            Ok(Some(action[base][*rot]))
        };
        for rule in &set.neighbors {
            let (Some(l), Some(r)) = (resolve(&rule.left)?, resolve(&rule.right)?) else {
                continue;
            };
            let d = action[l][1];
            let u = action[r][1];
            let mut h = |a: usize, b: usize| horizontal[a * t_count + b] = true;
            h(r, l);
            h(action[r][6], action[l][6]);
            h(action[l][4], action[r][4]);
            h(action[l][2], action[r][2]);
            let mut v = |a: usize, b: usize| vertical[a * t_count + b] = true;
            v(u, d);
            v(action[d][6], action[u][6]);
            v(action[u][4], action[d][4]);
            v(action[d][2], action[u][2]);
        }
        // Reference direction 0 (dx = -1) is our Left, 1 (dy = +1) our Down; 2 and 3 are the
        // transposes.
        let rules = Rules::from_fn(weights, 4, |dir, a, b| match dir {
            Direction::Left => horizontal[a * t_count + b],
            Direction::Right => horizontal[b * t_count + a],
            Direction::Down => vertical[a * t_count + b],
            Direction::Up => vertical[b * t_count + a],
            _ => false,
        })?;
        Ok(TiledModel {
            names,
            orientation,
            rules,
        })
    }

    /// The compiled rules over oriented tiles.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Name of an oriented tile, e.g. `"corner 3"`.
    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    /// `(tile index in the set, orientation)` of an oriented tile.
    pub fn orientation(&self, index: usize) -> (usize, usize) {
        self.orientation[index]
    }

    /// A solver for a `width × height` grid.
    pub fn solver(
        &self,
        width: usize,
        height: usize,
        periodic: bool,
        config: SolverConfig,
    ) -> Result<Solver<'_>, WfcError> {
        Solver::new(
            &self.rules,
            GridShape::new_2d(width, height, periodic),
            config,
        )
    }

    /// Solves a `width × height` grid.
    pub fn run(
        &self,
        width: usize,
        height: usize,
        periodic: bool,
        config: SolverConfig,
    ) -> Result<Solution, WfcError> {
        self.solver(width, height, periodic, config)?.run()
    }
}

/// Checks a solution against rules: the first cell and direction whose neighbour pair is not
/// allowed, if any. Works for 2D and 3D.
pub fn check_solution(rules: &Rules, solution: &Solution) -> Option<(usize, Direction)> {
    let shape = solution.shape;
    for i in 0..shape.len() {
        for d in Direction::ALL.iter().take(rules.directions()) {
            if let Some(j) = shape.neighbour(i, *d) {
                let (a, b) = (solution.patterns[i], solution.patterns[j]);
                if !rules.is_allowed(a as usize, *d, b as usize) {
                    return Some((i, *d));
                }
            }
        }
    }
    None
}
