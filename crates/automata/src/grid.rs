//! The cell mask shared by every stage of the cave pipeline, in 2D ([`Grid`]) and 3D
//! ([`Grid3`]): one type over a [`Topology`].

use std::fmt;

use crate::topology::{Plane, Topology, Volume};

/// A floor (open, walkable) cell.
pub const FLOOR: u8 = 0;
/// A wall (solid) cell; the "alive" state for birth/survival rules.
pub const WALL: u8 = 1;

/// A mask of [`FLOOR`]/[`WALL`] cells over the shape `T`, stored in the shape's order
/// (x fastest, then y, then z).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GridOf<T: Topology> {
    shape: T,
    cells: Vec<u8>,
}

/// A `width × height` mask of cells, stored **row-major**: cell `(x, y)` is at index
/// `y * width + x`, `x` growing to the right and `y` growing downwards when rendered.
/// Every cell is [`FLOOR`] or [`WALL`].
pub type Grid = GridOf<Plane>;

/// A `width × height × depth` voxel mask of [`FLOOR`]/[`WALL`], stored x-fastest then y then
/// z: voxel `(x, y, z)` is at `(z * height + y) * width + x`.
pub type Grid3 = GridOf<Volume>;

impl<T: Topology> GridOf<T> {
    /// A grid of `shape` with every cell set to `value` (any non-zero is wall).
    pub fn filled(shape: T, value: u8) -> Self {
        GridOf {
            shape,
            cells: vec![u8::from(value != FLOOR); shape.len()],
        }
    }

    /// Cells already normalised to [`FLOOR`]/[`WALL`], `shape.len()` of them.
    pub(crate) fn from_parts(shape: T, cells: Vec<u8>) -> Self {
        debug_assert_eq!(cells.len(), shape.len());
        GridOf { shape, cells }
    }

    /// The grid's shape.
    #[inline]
    pub fn shape(&self) -> T {
        self.shape
    }

    /// The cells in storage order (see the type docs).
    #[inline]
    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    /// Mutable cells in storage order; callers must store only [`FLOOR`] or [`WALL`].
    #[inline]
    pub fn cells_mut(&mut self) -> &mut [u8] {
        &mut self.cells
    }

    /// Number of floor cells.
    pub fn floor_count(&self) -> usize {
        self.cells.iter().filter(|&&c| c == FLOOR).count()
    }

    /// A stable 64-bit FNV-1a fingerprint of the extent (each axis as a little-endian `u64`,
    /// x first) and the cells, for golden tests.
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let extent = self
            .shape
            .extent()
            .iter()
            .flat_map(|&v| (v as u64).to_le_bytes());
        for b in extent.chain(self.cells.iter().copied()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}

impl Grid {
    /// A grid with every cell set to `value` ([`FLOOR`] or [`WALL`]; any non-zero is wall).
    pub fn new(width: usize, height: usize, value: u8) -> Self {
        GridOf::filled(Plane::new(width, height), value)
    }

    /// Builds a grid from row-major cells; non-zero bytes become [`WALL`].
    /// Returns `None` when `cells.len() != width * height`.
    pub fn from_cells(width: usize, height: usize, cells: Vec<u8>) -> Option<Self> {
        if width.checked_mul(height) != Some(cells.len()) {
            return None;
        }
        let cells = cells.into_iter().map(|c| u8::from(c != FLOOR)).collect();
        Some(GridOf::from_parts(Plane::new(width, height), cells))
    }

    /// Parses the [`Grid::to_ascii`] form: rows separated by newlines, `#` wall, `.` floor.
    /// Returns `None` for ragged rows or other characters.
    pub fn from_ascii(text: &str) -> Option<Self> {
        let rows: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let width = rows.first().map_or(0, |r| r.len());
        let mut cells = Vec::with_capacity(width * rows.len());
        for row in &rows {
            if row.len() != width {
                return None;
            }
            for b in row.bytes() {
                cells.push(match b {
                    b'#' => WALL,
                    b'.' => FLOOR,
                    _ => return None,
                });
            }
        }
        Some(GridOf::from_parts(Plane::new(width, rows.len()), cells))
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.shape.width()
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.shape.height()
    }

    /// The cell at `(x, y)`, or `None` outside the grid.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> Option<u8> {
        self.shape.index((x, y)).map(|i| self.cells[i])
    }

    /// Whether `(x, y)` is inside and a wall.
    #[inline]
    pub fn is_wall(&self, x: usize, y: usize) -> bool {
        self.get(x, y) == Some(WALL)
    }

    /// Sets `(x, y)`; does nothing outside the grid.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, value: u8) {
        if let Some(i) = self.shape.index((x, y)) {
            self.cells[i] = u8::from(value != FLOOR);
        }
    }

    /// Renders rows of `#` (wall) and `.` (floor), each row ending in `\n`.
    pub fn to_ascii(&self) -> String {
        let mut s = String::with_capacity((self.width() + 1) * self.height());
        for row in self.cells.chunks(self.width().max(1)) {
            for &c in row {
                s.push(if c == WALL { '#' } else { '.' });
            }
            s.push('\n');
        }
        s
    }
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Grid {}x{}", self.width(), self.height())?;
        f.write_str(&self.to_ascii())
    }
}

impl Grid3 {
    /// A grid with every voxel set to `value` (non-zero is wall).
    pub fn new(width: usize, height: usize, depth: usize, value: u8) -> Self {
        GridOf::filled(Volume::new(width, height, depth), value)
    }

    /// `(width, height, depth)`.
    #[inline]
    pub fn dims(&self) -> (usize, usize, usize) {
        self.shape.dims()
    }

    /// The voxel at `(x, y, z)`, or `None` outside.
    #[inline]
    pub fn get(&self, x: usize, y: usize, z: usize) -> Option<u8> {
        self.shape.index((x, y, z)).map(|i| self.cells[i])
    }

    /// Sets `(x, y, z)`; does nothing outside.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, z: usize, value: u8) {
        if let Some(i) = self.shape.index((x, y, z)) {
            self.cells[i] = u8::from(value != FLOOR);
        }
    }
}

impl fmt::Debug for Grid3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (width, height, depth) = self.dims();
        f.debug_struct("Grid3")
            .field("width", &width)
            .field("height", &height)
            .field("depth", &depth)
            .field("cells", &self.cells)
            .finish()
    }
}
