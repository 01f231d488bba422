//! The solver: a wave of bitsets, AC-4 support counts (u8 or u16), minimum-entropy observation
//! with seeded noise, a ban trail for backtracking, and restarts with derived seeds.
//!
//! Search: a contradiction undoes the last choice and excludes it (chronological, sound). When
//! contradictions keep coming with fewer than 16 good observations in between, the solver
//! instead undoes the last 2, 4, 8, … choices without excluding anything (a local restart;
//! the stream has moved on so they are drawn again differently). `max_backtracks` per attempt,
//! then a full restart from `derive_seed_index(seed, attempt)`, up to `max_attempts`.
//!
//! Cell choice: untouched cells all share the initial entropy and are taken in the attempt's
//! cell order (by distance from an origin — a seeded random cell when the grid wraps, the first
//! corner otherwise — ties in a seeded random order), so the decided region grows as one
//! compact blob; touched cells sit in an indexed min-heap keyed by entropy plus a per-cell
//! noise below 1e-6 (the rank in that order), ties to the lower index. Nothing depends on
//! hash order.

use procmodel_base::{Pcg32, derive_seed_index};

use crate::counts::{Count, Counts};
use crate::error::{Contradiction, WfcError};
use crate::heap::CellHeap;
use crate::rules::{Direction, GridShape, Rules};

/// Search limits and the seed of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolverConfig {
    /// The run's seed; attempt `k` draws from `derive_seed_index(seed, k)`.
    pub seed: u64,
    /// Backtracks allowed in one attempt before restarting with the next derived seed.
    pub max_backtracks: u32,
    /// Attempts (the first one plus restarts) before giving up.
    pub max_attempts: u32,
}

impl SolverConfig {
    /// Default limits with the given seed.
    pub fn with_seed(seed: u64) -> Self {
        SolverConfig {
            seed,
            ..Self::default()
        }
    }
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            seed: 0,
            max_backtracks: 1000,
            max_attempts: 20,
        }
    }
}

/// What one call to [`Solver::step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A cell was collapsed to a pattern and the change propagated.
    Observed {
        /// The collapsed cell (flat index).
        cell: usize,
        /// The pattern chosen.
        pattern: usize,
    },
    /// The last choice led to a contradiction and was undone (and excluded).
    Backtracked(Contradiction),
    /// The backtracking budget ran out; the wave was reset with the next derived seed.
    Restarted {
        /// The attempt now running (1-based count of restarts).
        attempt: u32,
        /// The contradiction that ended the previous attempt.
        last: Contradiction,
    },
    /// Every cell holds exactly one pattern.
    Done,
}

/// A finished run: one pattern (or oriented tile) index per cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The grid the patterns fill.
    pub shape: GridShape,
    /// Pattern per cell, flat index `x + width * (y + height * z)`.
    pub patterns: Vec<u32>,
    /// Attempts used (1 when no restart happened).
    pub attempts: u32,
    /// Backtracks over all attempts.
    pub backtracks: u32,
}

/// The scalars of one cell: remaining pattern count, the sums of `w` and `w ln w` over them
/// (for the entropy), the cell's noise (its rank in the attempt's order, below 1e-6) and the
/// flush generation that last saw it change.
#[derive(Clone, Copy, Debug, Default)]
struct CellState {
    sum_w: f64,
    sum_wlw: f64,
    noise: f64,
    n: u32,
    touch: u32,
}

#[derive(Clone, Copy, Debug)]
struct Decision {
    mark: usize,
    cell: u32,
    pattern: u32,
}

const NONE: u32 = u32::MAX;

/// One entry of the flattened propagator: pattern `pattern` may sit in direction `dir` of the
/// pattern owning the arc; `offset = dir * T + pattern` locates its counter in a cell's block.
#[derive(Clone, Copy, Debug)]
struct Arc {
    offset: u32,
    pattern: u32,
    dir: u32,
}
/// Consecutive contradictions answered by chronological refutation before jumping back.
const STREAK_BEFORE_JUMP: u32 = 3;
/// Successful observations in a row that end a streak of contradictions.
const CALM_RESETS_STREAK: u32 = 16;
/// Flag on a trail entry's pattern: its support decrements were never applied (it was still
/// pending when a contradiction stopped propagation). Patterns are below `u16::MAX`.
const UNPROCESSED: u32 = 1 << 31;
/// Trail bounds from which the trail is reserved up front (8 MiB), and the most reserved
/// (128 MiB); past it the trail grows as needed.
const TRAIL_RESERVE_MIN: usize = 1 << 20;
const TRAIL_RESERVE_MAX: usize = 1 << 24;

/// A run over one grid. Build with [`Solver::new`], add constraints with [`Solver::ban`] or
/// [`Solver::restrict`] before the first step, then call [`Solver::step`] (animation) or
/// [`Solver::run`].
pub struct Solver<'r> {
    rules: &'r Rules,
    shape: GridShape,
    config: SolverConfig,
    t: usize,
    dirs: usize,
    words: usize,
    neighbours: Vec<u32>,
    wlogw: Vec<f64>,
    init_counts: Vec<u16>,
    zero_support: Vec<(u8, u32)>,
    /// The propagator flattened per pattern: `arcs[arc_start[p]..arc_start[p + 1]]` lists,
    /// direction by direction, every pattern allowed next to `p` (one loop per removal instead
    /// of one per direction, and the counter offset precomputed).
    arcs: Vec<Arc>,
    arc_start: Vec<u32>,
    wave: Vec<u64>,
    counts: Counts,
    /// Per-cell scalars, together so that a removal touches one cache line for them.
    st: Vec<CellState>,
    /// Cells by ascending noise: the untouched cells, all at `entropy0`, are taken from here
    /// in order instead of sitting in the heap.
    order: Vec<u32>,
    cursor: usize,
    entropy0: f64,
    heap: CellHeap,
    touched: Vec<u32>,
    touch_gen: u32,
    /// Every removal `(cell, pattern)` in order: the undo log, and (through `pending`) the
    /// work list of propagation.
    trail: Vec<(u32, u32)>,
    pending: Vec<u32>,
    decisions: Vec<Decision>,
    constraints: Vec<(u32, u32)>,
    rng: Pcg32,
    attempt: u32,
    attempt_backtracks: u32,
    streak: u32,
    calm: u32,
    backtracks: u32,
    started: bool,
    done: bool,
}

impl<'r> Solver<'r> {
    /// A solver for `rules` over `shape`. 2D rules need `depth == 1`.
    pub fn new(rules: &'r Rules, shape: GridShape, config: SolverConfig) -> Result<Self, WfcError> {
        if shape.is_empty() {
            return Err(WfcError::BadGrid("the grid has no cell".into()));
        }
        if rules.directions() == 4 && shape.depth != 1 {
            return Err(WfcError::BadGrid(format!(
                "2D rules need depth 1, got {}",
                shape.depth
            )));
        }
        if shape.len() >= NONE as usize {
            return Err(WfcError::BadGrid("too many cells".into()));
        }
        let t = rules.len();
        let dirs = rules.directions();
        let cells = shape.len();
        let neighbours = shape.neighbour_table(dirs);
        let wlogw = rules.weights().iter().map(|w| w * w.ln()).collect();
        let mut init_counts = vec![0u16; dirs * t];
        let mut zero_support = Vec::new();
        for d in 0..dirs {
            for t2 in 0..t {
                // Supporters of t2 arriving in direction d come from the opposite side.
                let c = rules.allowed_raw(d ^ 1, t2).len();
                init_counts[d * t + t2] = c as u16;
                if c == 0 {
                    zero_support.push((d as u8, t2 as u32));
                }
            }
        }
        let words = t.div_ceil(64);
        // A cell loses each pattern at most once between undos, so the trail never holds more
        // than `cells * (t - 1)` entries. Large bounds (Cat or Skyline at 128x128 and up) are
        // reserved up front: ~25 % faster there than doubling. Small ones are not: an 18 KiB
        // reservation made Chess at 48x48 fault pages on every run (27 faults a run,
        // +30 % time), where a doubling vector reuses freed heap.
        let trail_bound = cells.saturating_mul(t.saturating_sub(1));
        let trail_reserve = if trail_bound >= TRAIL_RESERVE_MIN {
            trail_bound.min(TRAIL_RESERVE_MAX)
        } else {
            0
        };
        let mut arcs = Vec::new();
        let mut arc_start = Vec::with_capacity(t + 1);
        for p in 0..t {
            arc_start.push(arcs.len() as u32);
            for d in 0..dirs {
                for &p2 in rules.allowed_raw(d, p) {
                    arcs.push(Arc {
                        offset: (d * t) as u32 + p2,
                        pattern: p2,
                        dir: d as u32,
                    });
                }
            }
        }
        arc_start.push(arcs.len() as u32);
        let max_count = init_counts.iter().copied().max().unwrap_or(0) as usize;
        Ok(Solver {
            rules,
            shape,
            config,
            t,
            dirs,
            words,
            neighbours,
            wlogw,
            init_counts,
            zero_support,
            arcs,
            arc_start,
            wave: vec![0; cells * words],
            counts: Counts::new(cells * dirs * t, max_count),
            st: vec![CellState::default(); cells],
            order: Vec::with_capacity(cells),
            cursor: 0,
            entropy0: 0.0,
            heap: CellHeap::new(cells),
            touched: Vec::new(),
            touch_gen: 1,
            trail: Vec::with_capacity(trail_reserve),
            pending: Vec::new(),
            decisions: Vec::new(),
            constraints: Vec::new(),
            rng: Pcg32::from_seed_bits(0),
            attempt: 0,
            attempt_backtracks: 0,
            streak: 0,
            calm: 0,
            backtracks: 0,
            started: false,
            done: false,
        })
    }

    /// The grid.
    pub fn shape(&self) -> GridShape {
        self.shape
    }

    /// The rules.
    pub fn rules(&self) -> &'r Rules {
        self.rules
    }

    /// Forbids `pattern` at `cell` in every attempt (an initial constraint).
    pub fn ban(&mut self, cell: usize, pattern: usize) -> Result<(), WfcError> {
        if cell >= self.shape.len() {
            return Err(WfcError::UnknownCell {
                index: cell,
                len: self.shape.len(),
            });
        }
        if pattern >= self.t {
            return Err(WfcError::UnknownPattern {
                index: pattern,
                count: self.t,
            });
        }
        self.constraints.push((cell as u32, pattern as u32));
        self.started = false;
        self.done = false;
        Ok(())
    }

    /// Keeps only the patterns for which `keep` is true at `cell` (an initial constraint).
    pub fn restrict(
        &mut self,
        cell: usize,
        mut keep: impl FnMut(usize) -> bool,
    ) -> Result<(), WfcError> {
        for p in 0..self.t {
            if !keep(p) {
                self.ban(cell, p)?;
            }
        }
        Ok(())
    }

    /// Whether `pattern` is still possible at `cell`.
    #[inline]
    pub fn is_possible(&self, cell: usize, pattern: usize) -> bool {
        self.wave[cell * self.words + (pattern >> 6)] >> (pattern & 63) & 1 == 1
    }

    /// Number of patterns still possible at `cell`.
    pub fn remaining(&self, cell: usize) -> usize {
        self.st[cell].n as usize
    }

    /// The patterns still possible at `cell`, ascending.
    pub fn possible(&self, cell: usize) -> impl Iterator<Item = usize> + '_ {
        let w = &self.wave[cell * self.words..(cell + 1) * self.words];
        w.iter().enumerate().flat_map(|(k, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(k * 64 + b)
            })
        })
    }

    /// The pattern of a cell once it is decided.
    pub fn observed(&self, cell: usize) -> Option<usize> {
        (self.st[cell].n == 1).then(|| self.possible(cell).next().unwrap_or(0))
    }

    /// Runs until every cell is decided.
    pub fn run(&mut self) -> Result<Solution, WfcError> {
        loop {
            if self.step()? == Step::Done {
                return Ok(self.solution_unchecked());
            }
        }
    }

    /// The solution once [`Step::Done`] was returned.
    pub fn solution(&self) -> Option<Solution> {
        self.done.then(|| self.solution_unchecked())
    }

    fn solution_unchecked(&self) -> Solution {
        let patterns = (0..self.shape.len())
            .map(|i| self.observed(i).unwrap_or(0) as u32)
            .collect();
        Solution {
            shape: self.shape,
            patterns,
            attempts: self.attempt + 1,
            backtracks: self.backtracks,
        }
    }

    /// One observation plus its propagation, or one backtrack/restart after a contradiction.
    pub fn step(&mut self) -> Result<Step, WfcError> {
        if !self.started {
            self.attempt = 0;
            self.backtracks = 0;
            self.reset()?;
        }
        if self.done {
            return Ok(Step::Done);
        }
        let Some(cell) = self.pick_cell() else {
            self.done = true;
            return Ok(Step::Done);
        };
        let pattern = self.pick_pattern(cell);
        self.decisions.push(Decision {
            mark: self.trail.len(),
            cell: cell as u32,
            pattern: pattern as u32,
        });
        for p in 0..self.t {
            if p != pattern && self.is_possible(cell, p) {
                self.remove(cell, p);
            }
        }
        match self.propagate() {
            Ok(()) => {
                self.flush_touched();
                self.calm += 1;
                if self.calm >= CALM_RESETS_STREAK {
                    self.streak = 0;
                }
                Ok(Step::Observed { cell, pattern })
            }
            Err(c) => self.backtrack(c),
        }
    }

    fn backtrack(&mut self, mut contradiction: Contradiction) -> Result<Step, WfcError> {
        self.backtracks += 1;
        self.attempt_backtracks += 1;
        if self.attempt_backtracks > self.config.max_backtracks {
            if self.attempt + 1 >= self.config.max_attempts {
                return Err(WfcError::GaveUp {
                    attempts: self.attempt + 1,
                    last: contradiction,
                });
            }
            self.attempt += 1;
            self.reset()?;
            return Ok(Step::Restarted {
                attempt: self.attempt,
                last: contradiction,
            });
        }
        // Repeated contradictions with little progress in between mean the culprit is older
        // than the last few choices: undo an exponentially growing number of recent choices
        // (without excluding them; the stream has moved on, so they are drawn again
        // differently). Otherwise refute the last choice, chronologically.
        self.streak += 1;
        self.calm = 0;
        if self.streak > STREAK_BEFORE_JUMP && !self.decisions.is_empty() {
            let jump = 1usize << (self.streak - STREAK_BEFORE_JUMP).min(20);
            let keep = self.decisions.len().saturating_sub(jump);
            let mark = self.decisions[keep].mark;
            self.decisions.truncate(keep);
            self.undo(mark);
            self.flush_touched();
            return Ok(Step::Backtracked(contradiction));
        }
        loop {
            let Some(dec) = self.decisions.pop() else {
                return Err(WfcError::Unsatisfiable(contradiction));
            };
            self.undo(dec.mark);
            self.remove(dec.cell as usize, dec.pattern as usize);
            match self.propagate() {
                Ok(()) => {
                    self.flush_touched();
                    return Ok(Step::Backtracked(contradiction));
                }
                Err(c) => contradiction = c,
            }
        }
    }

    fn reset(&mut self) -> Result<(), WfcError> {
        let seed = derive_seed_index(self.config.seed, self.attempt as u64);
        self.rng = Pcg32::from_seed_bits(seed);
        self.started = true;
        self.done = false;
        self.attempt_backtracks = 0;
        self.streak = 0;
        self.calm = 0;
        let cells = self.shape.len();
        let full_last = if self.t.is_multiple_of(64) {
            u64::MAX
        } else {
            (1u64 << (self.t % 64)) - 1
        };
        for i in 0..cells {
            let w = &mut self.wave[i * self.words..(i + 1) * self.words];
            w.fill(u64::MAX);
            w[self.words - 1] = full_last;
        }
        self.counts.fill_from(&self.init_counts);
        let sw: f64 = self.rules.weights().iter().sum();
        let swl: f64 = self.wlogw.iter().sum();
        let t = self.t as u32;
        for c in &mut self.st {
            *c = CellState {
                sum_w: sw,
                sum_wlw: swl,
                noise: 0.0,
                n: t,
                touch: 0,
            };
        }
        self.seed_order();
        for (r, &c) in self.order.iter().enumerate() {
            self.st[c as usize].noise = r as f64 / cells as f64 * 1e-6;
        }
        self.cursor = 0;
        self.entropy0 = sw.ln() - swl / sw;
        self.heap.clear();
        self.touched.clear();
        self.touch_gen = 1;
        self.trail.clear();
        self.pending.clear();
        self.decisions.clear();
        let contradiction = self.apply_constraints();
        if let Err(c) = contradiction {
            return Err(WfcError::Unsatisfiable(c));
        }
        self.flush_touched();
        Ok(())
    }

    /// The attempt's cell order (the tie-break below every entropy difference): by distance
    /// from an origin, ties in a seeded random order. The origin is a seeded random cell on a
    /// periodic grid and the first corner otherwise. Growing the decided region as one
    /// compact blob keeps every new choice next to what constrains it; a uniformly random
    /// order seeds independent regions along the frontier, and global constraints (RedMaze's
    /// lattice phase, Rule126's rows that each determine the next) then contradict where they
    /// meet, far from any recent choice.
    fn seed_order(&mut self) {
        let shape = self.shape;
        let cells = shape.len();
        self.order.clear();
        self.order.extend(0..cells as u32);
        self.rng.shuffle(&mut self.order);
        let [ox, oy, oz] = if shape.periodic {
            let o = (self.rng.next_f64() * cells as f64) as usize;
            shape.coords(o.min(cells - 1))
        } else {
            [0, 0, 0]
        };
        let axis = |v: usize, o: usize, n: usize| -> u64 {
            let d = v.abs_diff(o);
            let d = if shape.periodic { d.min(n - d) } else { d };
            (d * d) as u64
        };
        // Distances per rank of the shuffled order; a stable counting sort by distance keeps
        // that order among equals. Past a few buckets per cell (very thin grids), a sort of
        // (distance, rank) gives the same order.
        let far = |n: usize| {
            let d = if shape.periodic { n / 2 } else { n - 1 };
            (d * d) as u64
        };
        let max_d2 = far(shape.width) + far(shape.height) + far(shape.depth);
        // Distance per cell by walking the grid in index order (no division per cell), then
        // per rank of the shuffled order.
        let mut by_cell = Vec::with_capacity(cells);
        for z in 0..shape.depth {
            let dz = axis(z, oz, shape.depth);
            for y in 0..shape.height {
                let dyz = dz + axis(y, oy, shape.height);
                by_cell.extend((0..shape.width).map(|x| dyz + axis(x, ox, shape.width)));
            }
        }
        let dist: Vec<u64> = self.order.iter().map(|&c| by_cell[c as usize]).collect();
        let shuffled = std::mem::take(&mut self.order);
        if max_d2 <= 4 * cells as u64 {
            let mut start = vec![0u32; max_d2 as usize + 2];
            for &d in &dist {
                start[d as usize + 1] += 1;
            }
            for k in 1..start.len() {
                start[k] += start[k - 1];
            }
            self.order.resize(cells, 0);
            for (&c, &d) in shuffled.iter().zip(&dist) {
                let at = &mut start[d as usize];
                self.order[*at as usize] = c;
                *at += 1;
            }
        } else {
            let mut keys: Vec<u64> = dist
                .iter()
                .enumerate()
                .map(|(rank, &d)| d << 32 | rank as u64)
                .collect();
            keys.sort_unstable();
            self.order.extend(
                keys.iter()
                    .map(|&k| shuffled[(k & u64::from(u32::MAX)) as usize]),
            );
        }
    }

    fn apply_constraints(&mut self) -> Result<(), Contradiction> {
        for k in 0..self.constraints.len() {
            let (i, p) = self.constraints[k];
            if self.is_possible(i as usize, p as usize) && self.remove(i as usize, p as usize) {
                self.abandon_pending();
                return Err(self.report(i as usize, p as usize, None));
            }
        }
        for i in 0..self.shape.len() {
            for k in 0..self.zero_support.len() {
                let (d, p) = self.zero_support[k];
                if self.neighbours[i * self.dirs + d as usize] != NONE
                    && self.is_possible(i, p as usize)
                    && self.remove(i, p as usize)
                {
                    self.abandon_pending();
                    return Err(self.report(i, p as usize, None));
                }
            }
        }
        self.propagate()
    }

    fn report(&self, cell: usize, pattern: usize, from: Option<(usize, usize)>) -> Contradiction {
        Contradiction {
            cell: self.shape.coords(cell),
            pattern,
            neighbour: from.map(|(d, j)| {
                (
                    Direction::from_index(d).unwrap_or(Direction::Left),
                    self.shape.coords(j),
                )
            }),
        }
    }

    /// Removes a possible pattern; returns whether the cell became empty.
    #[inline]
    fn remove(&mut self, i: usize, p: usize) -> bool {
        self.wave[i * self.words + (p >> 6)] &= !(1u64 << (p & 63));
        let w = self.rules.weights()[p];
        self.st[i].n -= 1;
        self.st[i].sum_w -= w;
        self.st[i].sum_wlw -= self.wlogw[p];
        self.pending.push(self.trail.len() as u32);
        self.trail.push((i as u32, p as u32));
        if self.st[i].touch != self.touch_gen {
            self.st[i].touch = self.touch_gen;
            self.touched.push(i as u32);
        }
        self.st[i].n == 0
    }

    /// Processes pending bans (last in, first out): AC-4 support decrements, removing
    /// unsupported patterns.
    fn propagate(&mut self) -> Result<(), Contradiction> {
        let mut counts = std::mem::take(&mut self.counts);
        let result = match &mut counts {
            Counts::Narrow(c) => self.propagate_with(c),
            Counts::Wide(c) => self.propagate_with(c),
        };
        self.counts = counts;
        result
    }

    fn propagate_with<C: Count>(&mut self, counts: &mut [C]) -> Result<(), Contradiction> {
        // Split borrows: with the fields as separate locals the hot loop keeps its pointers in
        // registers instead of reloading them through `self` after every removal.
        let Solver {
            rules,
            t,
            dirs,
            words,
            ref neighbours,
            ref wlogw,
            ref arcs,
            ref arc_start,
            ref mut wave,
            ref mut st,
            ref mut touched,
            touch_gen,
            ref mut trail,
            ref mut pending,
            ..
        } = *self;
        let weights = rules.weights();
        let block = dirs * t;
        let mut failed = None;
        while let Some(k) = pending.pop() {
            let (i1, p1) = trail[k as usize];
            let (i1, p1) = (i1 as usize, p1 as usize);
            let nbs = &neighbours[i1 * dirs..(i1 + 1) * dirs];
            for arc in &arcs[arc_start[p1] as usize..arc_start[p1 + 1] as usize] {
                let i2 = nbs[arc.dir as usize];
                if i2 == NONE {
                    continue;
                }
                let i2 = i2 as usize;
                let d = arc.dir as usize;
                {
                    let p2 = arc.pattern as usize;
                    if !counts[i2 * block + arc.offset as usize].dec() {
                        continue;
                    }
                    let word = &mut wave[i2 * words + (p2 >> 6)];
                    let bit = 1u64 << (p2 & 63);
                    if *word & bit == 0 {
                        continue;
                    }
                    // The removal (as `remove`): wave bit, entropy sums, trail, touched.
                    *word &= !bit;
                    st[i2].n -= 1;
                    st[i2].sum_w -= weights[p2];
                    st[i2].sum_wlw -= wlogw[p2];
                    pending.push(trail.len() as u32);
                    trail.push((i2 as u32, p2 as u32));
                    if st[i2].touch != touch_gen {
                        st[i2].touch = touch_gen;
                        touched.push(i2 as u32);
                    }
                    if st[i2].n == 0 {
                        failed.get_or_insert((i2, p2, d ^ 1, i1));
                    }
                }
            }
            if failed.is_some() {
                break;
            }
        }
        if let Some((i2, p2, d, j)) = failed {
            self.abandon_pending();
            return Err(self.report(i2, p2, Some((d, j))));
        }
        Ok(())
    }

    /// Drops the pending bans after a contradiction, flagging them so that `undo` does not
    /// re-add support they never took away.
    fn abandon_pending(&mut self) {
        for &k in &self.pending {
            self.trail[k as usize].1 |= UNPROCESSED;
        }
        self.pending.clear();
    }

    /// Restores the wave to the trail length `mark`, re-adding support of processed bans.
    fn undo(&mut self, mark: usize) {
        let mut counts = std::mem::take(&mut self.counts);
        match &mut counts {
            Counts::Narrow(c) => self.undo_with(c, mark),
            Counts::Wide(c) => self.undo_with(c, mark),
        }
        self.counts = counts;
    }

    fn undo_with<C: Count>(&mut self, counts: &mut [C], mark: usize) {
        let rules = self.rules;
        let (t, dirs) = (self.t, self.dirs);
        let block = dirs * t;
        for k in (mark..self.trail.len()).rev() {
            let (i1, p1) = self.trail[k];
            let processed = p1 & UNPROCESSED == 0;
            let (i1, p1) = (i1 as usize, (p1 & !UNPROCESSED) as usize);
            if processed {
                let nbs = &self.neighbours[i1 * dirs..(i1 + 1) * dirs];
                for arc in &self.arcs[self.arc_start[p1] as usize..self.arc_start[p1 + 1] as usize]
                {
                    let i2 = nbs[arc.dir as usize];
                    if i2 != NONE {
                        counts[i2 as usize * block + arc.offset as usize].inc();
                    }
                }
            }
            self.wave[i1 * self.words + (p1 >> 6)] |= 1u64 << (p1 & 63);
            self.st[i1].n += 1;
            self.st[i1].sum_w += rules.weights()[p1];
            self.st[i1].sum_wlw += self.wlogw[p1];
            if self.st[i1].touch != self.touch_gen {
                self.st[i1].touch = self.touch_gen;
                self.touched.push(i1 as u32);
            }
        }
        self.trail.truncate(mark);
    }

    /// Pushes fresh heap entries for the cells changed since the last flush.
    fn flush_touched(&mut self) {
        for k in 0..self.touched.len() {
            let i = self.touched[k] as usize;
            if self.st[i].n as usize == self.t {
                self.heap.set(i, self.entropy0 + self.st[i].noise);
            } else if self.st[i].n > 1 {
                let sw = self.st[i].sum_w;
                self.heap
                    .set(i, sw.ln() - self.st[i].sum_wlw / sw + self.st[i].noise);
            } else {
                self.heap.remove(i);
            }
        }
        self.touched.clear();
        self.touch_gen = self.touch_gen.wrapping_add(1);
        if self.touch_gen == 0 {
            for c in &mut self.st {
                c.touch = 0;
            }
            self.touch_gen = 1;
        }
    }

    /// The undecided cell of lowest entropy (plus noise): the heap's top or the next
    /// untouched cell in noise order, whichever is lower (ties to the lower cell index).
    fn pick_cell(&mut self) -> Option<usize> {
        let full = self.t as u32;
        while let Some(&c) = self.order.get(self.cursor) {
            if full > 1 && self.st[c as usize].n == full && !self.heap.contains(c as usize) {
                break;
            }
            self.cursor += 1;
        }
        let pool = self.order.get(self.cursor).map(|&c| c as usize);
        match (pool, self.heap.peek()) {
            (None, None) => None,
            (Some(c), Some((h, key))) => {
                let pool_key = self.entropy0 + self.st[c].noise;
                if key < pool_key || (key == pool_key && h < c) {
                    self.heap.pop()
                } else {
                    self.cursor += 1;
                    Some(c)
                }
            }
            (Some(c), None) => {
                self.cursor += 1;
                Some(c)
            }
            (None, Some(_)) => self.heap.pop(),
        }
    }

    fn pick_pattern(&mut self, cell: usize) -> usize {
        let weights = self.rules.weights();
        let mut total = 0.0;
        for p in self.possible(cell) {
            total += weights[p];
        }
        let mut r = self.rng.next_f64() * total;
        let mut last = 0;
        for p in self.possible(cell) {
            last = p;
            r -= weights[p];
            if r < 0.0 {
                return p;
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OverlappingConfig, OverlappingModel, Sample};

    impl Solver<'_> {
        /// Whether every support counter equals its definition: the number of patterns still
        /// possible at the neighbour that supports it (true whenever nothing is pending).
        fn counts_match_wave(&self) -> bool {
            let (t, dirs) = (self.t, self.dirs);
            let get = |k: usize| match &self.counts {
                Counts::Narrow(c) => c[k] as usize,
                Counts::Wide(c) => c[k] as usize,
            };
            for j in 0..self.shape.len() {
                for d in 0..dirs {
                    let i = self.neighbours[j * dirs + (d ^ 1)];
                    if i == NONE {
                        continue;
                    }
                    for p in 0..t {
                        let want = self
                            .possible(i as usize)
                            .filter(|&q| self.rules.allowed_raw(d, q).contains(&(p as u32)))
                            .count();
                        if get((j * dirs + d) * t + p) != want {
                            return false;
                        }
                    }
                }
            }
            true
        }
    }

    /// A noisy 3-colour sample: many patterns with sparse overlaps, so runs hit contradictions.
    fn noisy_model() -> OverlappingModel {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let pixels: Vec<u32> = (0..14 * 14)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 5).min(2) as u32
            })
            .collect();
        let sample = Sample {
            pixels: &pixels,
            width: 14,
            height: 14,
        };
        let config = OverlappingConfig {
            n: 3,
            symmetry: 2,
            periodic_output: true,
            ..Default::default()
        };
        OverlappingModel::new(sample, config).expect("model")
    }

    /// The flattened propagator, the pending-ban flags and the undo after contradictions keep
    /// the AC-4 counters exact: checked after every step, backtracks and restarts included.
    #[test]
    fn support_counts_stay_exact_through_backtracks() {
        let model = noisy_model();
        let mut backtracks = 0;
        for seed in 0..6 {
            let config = SolverConfig {
                seed,
                max_backtracks: 10,
                max_attempts: 2,
            };
            let mut solver = model.solver(8, 8, config).expect("solver");
            for _ in 0..2000 {
                let check = match solver.step() {
                    Ok(Step::Done) | Err(_) => break,
                    Ok(Step::Backtracked(_) | Step::Restarted { .. }) => {
                        backtracks += 1;
                        true
                    }
                    Ok(Step::Observed { cell, .. }) => cell % 4 == 0,
                };
                if check {
                    assert!(solver.counts_match_wave(), "seed {seed}");
                }
            }
        }
        eprintln!(
            "{backtracks} backtracks or restarts, {} patterns",
            model.pattern_count()
        );
        assert!(
            backtracks >= 5,
            "the sample should cause contradictions ({backtracks})"
        );
    }
}
