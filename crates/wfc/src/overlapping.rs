//! The overlapping model: N×N patterns learned from a sample image (with reflections and
//! rotations), their overlap rules, and the conversion of a solved wave back into colours.

use std::collections::HashMap;

use crate::error::WfcError;
use crate::rules::{Direction, GridShape, Rules};
use crate::solver::{Solution, Solver, SolverConfig};

/// Settings of the overlapping model (the attributes of `samples.xml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverlappingConfig {
    /// Pattern side `N` (2..=8 in practice).
    pub n: usize,
    /// How many of the 8 dihedral variants of each pattern to learn: 1, 2, 4 or 8.
    pub symmetry: usize,
    /// Whether patterns wrap around the sample's borders.
    pub periodic_input: bool,
    /// Whether the output wraps around.
    pub periodic_output: bool,
    /// Whether the last learned pattern is forced along the bottom row (and banned elsewhere).
    pub ground: bool,
}

impl Default for OverlappingConfig {
    /// The reference defaults: N=3, symmetry 8, periodic input, non-periodic output, no ground.
    fn default() -> Self {
        OverlappingConfig {
            n: 3,
            symmetry: 8,
            periodic_input: true,
            periodic_output: false,
            ground: false,
        }
    }
}

/// A sample image as row-major RGBA (or any 32-bit colour) values.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    /// Pixels, `width * height` of them, row by row.
    pub pixels: &'a [u32],
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

/// Patterns learned from a sample plus their compiled rules.
#[derive(Clone, Debug)]
pub struct OverlappingModel {
    config: OverlappingConfig,
    colours: Vec<u32>,
    /// Colour index per pattern pixel, `n * n` per pattern, row-major.
    patterns: Vec<u32>,
    rules: Rules,
}

impl OverlappingModel {
    /// Learns patterns and rules from a sample. Patterns are numbered in order of first
    /// appearance (scanning rows, then the symmetry variants), weights are occurrence counts.
    pub fn new(sample: Sample<'_>, config: OverlappingConfig) -> Result<Self, WfcError> {
        let Sample {
            pixels,
            width: sx,
            height: sy,
        } = sample;
        let n = config.n;
        if pixels.len() != sx * sy || sx == 0 || sy == 0 {
            return Err(WfcError::BadSample(format!(
                "{} pixels for a {sx}x{sy} sample",
                pixels.len()
            )));
        }
        if n == 0 || n > sx || n > sy {
            return Err(WfcError::BadSample(format!(
                "pattern size {n} does not fit a {sx}x{sy} sample"
            )));
        }
        if ![1, 2, 4, 8].contains(&config.symmetry) {
            return Err(WfcError::BadSample(format!(
                "symmetry {} is not 1, 2, 4 or 8",
                config.symmetry
            )));
        }
        let mut colours = Vec::new();
        let mut colour_index = HashMap::new();
        let sample: Vec<u32> = pixels
            .iter()
            .map(|&c| {
                *colour_index.entry(c).or_insert_with(|| {
                    colours.push(c);
                    colours.len() as u32 - 1
                })
            })
            .collect();
        let (xmax, ymax) = if config.periodic_input {
            (sx, sy)
        } else {
            (sx - n + 1, sy - n + 1)
        };
        let mut index: HashMap<Vec<u32>, usize> = HashMap::new();
        let mut patterns: Vec<u32> = Vec::new();
        let mut weights: Vec<f64> = Vec::new();
        let build = |f: &dyn Fn(usize, usize) -> u32| -> Vec<u32> {
            let mut p = vec![0; n * n];
            for y in 0..n {
                for x in 0..n {
                    p[x + y * n] = f(x, y);
                }
            }
            p
        };
        let rotate = |p: &[u32]| build(&|x, y| p[n - 1 - y + x * n]);
        let reflect = |p: &[u32]| build(&|x, y| p[n - 1 - x + y * n]);
        for y in 0..ymax {
            for x in 0..xmax {
                let p0 = build(&|dx, dy| sample[(x + dx) % sx + (y + dy) % sy * sx]);
                let mut ps = Vec::with_capacity(8);
                ps.push(p0);
                ps.push(reflect(&ps[0]));
                ps.push(rotate(&ps[0]));
                ps.push(reflect(&ps[2]));
                ps.push(rotate(&ps[2]));
                ps.push(reflect(&ps[4]));
                ps.push(rotate(&ps[4]));
                ps.push(reflect(&ps[6]));
                for p in ps.into_iter().take(config.symmetry) {
                    match index.get(&p) {
                        Some(&k) => weights[k] += 1.0,
                        None => {
                            index.insert(p.clone(), weights.len());
                            weights.push(1.0);
                            patterns.extend_from_slice(&p);
                        }
                    }
                }
            }
        }
        let nn = n * n;
        let agrees = |a: usize, b: usize, dx: isize, dy: isize| -> bool {
            let p1 = &patterns[a * nn..(a + 1) * nn];
            let p2 = &patterns[b * nn..(b + 1) * nn];
            let n = n as isize;
            let (xmin, xmax) = if dx < 0 { (0, dx + n) } else { (dx, n) };
            let (ymin, ymax) = if dy < 0 { (0, dy + n) } else { (dy, n) };
            for y in ymin..ymax {
                for x in xmin..xmax {
                    if p1[(x + n * y) as usize] != p2[(x - dx + n * (y - dy)) as usize] {
                        return false;
                    }
                }
            }
            true
        };
        let rules = Rules::from_fn(weights, 4, |d, a, b| {
            let (dx, dy, _) = d.offset();
            agrees(a, b, dx, dy)
        })?;
        Ok(OverlappingModel {
            config,
            colours,
            patterns,
            rules,
        })
    }

    /// The compiled rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The settings used.
    pub fn config(&self) -> OverlappingConfig {
        self.config
    }

    /// Number of learned patterns.
    pub fn pattern_count(&self) -> usize {
        self.rules.len()
    }

    /// Distinct colours of the sample in order of first appearance.
    pub fn colours(&self) -> &[u32] {
        &self.colours
    }

    /// Colour indices of a pattern, `n * n`, row-major.
    pub fn pattern(&self, index: usize) -> &[u32] {
        let nn = self.config.n * self.config.n;
        &self.patterns[index * nn..(index + 1) * nn]
    }

    /// The wave grid for an output image of `width × height` pixels: one cell per pixel when
    /// the output is periodic, `(width - n + 1) × (height - n + 1)` cells otherwise.
    pub fn wave_shape(&self, width: usize, height: usize) -> Result<GridShape, WfcError> {
        let n = self.config.n;
        if self.config.periodic_output {
            Ok(GridShape::new_2d(width, height, true))
        } else if width < n || height < n {
            Err(WfcError::BadGrid(format!(
                "a {width}x{height} output is smaller than the {n}x{n} patterns"
            )))
        } else {
            Ok(GridShape::new_2d(width - n + 1, height - n + 1, false))
        }
    }

    /// A solver for a `width × height` output with the model's initial constraints (ground).
    pub fn solver(
        &self,
        width: usize,
        height: usize,
        config: SolverConfig,
    ) -> Result<Solver<'_>, WfcError> {
        let shape = self.wave_shape(width, height)?;
        let mut solver = Solver::new(&self.rules, shape, config)?;
        if self.config.ground {
            let ground = self.rules.len() - 1;
            for x in 0..shape.width {
                for y in 0..shape.height {
                    let cell = shape.index(x, y, 0);
                    if y == shape.height - 1 {
                        solver.restrict(cell, |p| p == ground)?;
                    } else {
                        solver.ban(cell, ground)?;
                    }
                }
            }
        }
        Ok(solver)
    }

    /// Solves a `width × height` output.
    pub fn run(
        &self,
        width: usize,
        height: usize,
        config: SolverConfig,
    ) -> Result<Solution, WfcError> {
        self.solver(width, height, config)?.run()
    }

    /// The output image of a solution: `width × height` colours, row-major. Non-periodic
    /// outputs fill the last `n - 1` rows and columns from the patterns of the border cells.
    pub fn colourise(&self, solution: &Solution) -> Vec<u32> {
        let n = self.config.n;
        let shape = solution.shape;
        let (w, h) = if shape.periodic {
            (shape.width, shape.height)
        } else {
            (shape.width + n - 1, shape.height + n - 1)
        };
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                let (cx, cy) = (x.min(shape.width - 1), y.min(shape.height - 1));
                let p = solution.patterns[shape.index(cx, cy, 0)] as usize;
                out.push(self.colours[self.pattern(p)[(x - cx) + (y - cy) * n] as usize]);
            }
        }
        out
    }

    /// Checks a solution against the raw overlap definition (independently of the compiled
    /// rules): every pair of neighbouring cells must agree on their overlapping pixels.
    /// Returns the first violating cell and direction.
    pub fn check(&self, solution: &Solution) -> Option<(usize, Direction)> {
        let shape = solution.shape;
        let n = self.config.n as isize;
        for i in 0..shape.len() {
            let a = self.pattern(solution.patterns[i] as usize);
            for d in [Direction::Right, Direction::Down] {
                let Some(j) = shape.neighbour(i, d) else {
                    continue;
                };
                let b = self.pattern(solution.patterns[j] as usize);
                let (dx, dy, _) = d.offset();
                for y in dy..n {
                    for x in dx..n {
                        if a[(x + n * y) as usize] != b[(x - dx + n * (y - dy)) as usize] {
                            return Some((i, d));
                        }
                    }
                }
            }
        }
        None
    }
}
