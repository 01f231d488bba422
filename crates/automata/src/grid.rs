//! The 2D cell mask shared by every stage of the cave pipeline.

use std::fmt;

/// A floor (open, walkable) cell.
pub const FLOOR: u8 = 0;
/// A wall (solid) cell; the "alive" state for birth/survival rules.
pub const WALL: u8 = 1;

/// A `width × height` mask of cells, stored **row-major**: cell `(x, y)` is at index
/// `y * width + x`, `x` growing to the right and `y` growing downwards when rendered.
/// Every cell is [`FLOOR`] or [`WALL`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Grid {
    width: usize,
    height: usize,
    cells: Vec<u8>,
}

impl Grid {
    /// A grid with every cell set to `value` ([`FLOOR`] or [`WALL`]; any non-zero is wall).
    pub fn new(width: usize, height: usize, value: u8) -> Self {
        Grid {
            width,
            height,
            cells: vec![u8::from(value != FLOOR); width * height],
        }
    }

    /// Builds a grid from row-major cells; non-zero bytes become [`WALL`].
    /// Returns `None` when `cells.len() != width * height`.
    pub fn from_cells(width: usize, height: usize, cells: Vec<u8>) -> Option<Self> {
        if width.checked_mul(height) != Some(cells.len()) {
            return None;
        }
        let cells = cells.into_iter().map(|c| u8::from(c != FLOOR)).collect();
        Some(Grid {
            width,
            height,
            cells,
        })
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
        Some(Grid {
            width,
            height: rows.len(),
            cells,
        })
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }

    /// Row-major cells (see the type docs).
    #[inline]
    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    /// Mutable row-major cells; callers must store only [`FLOOR`] or [`WALL`].
    #[inline]
    pub fn cells_mut(&mut self) -> &mut [u8] {
        &mut self.cells
    }

    /// The cell at `(x, y)`, or `None` outside the grid.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> Option<u8> {
        (x < self.width && y < self.height).then(|| self.cells[y * self.width + x])
    }

    /// Whether `(x, y)` is inside and a wall.
    #[inline]
    pub fn is_wall(&self, x: usize, y: usize) -> bool {
        self.get(x, y) == Some(WALL)
    }

    /// Sets `(x, y)`; does nothing outside the grid.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, value: u8) {
        if x < self.width && y < self.height {
            self.cells[y * self.width + x] = u8::from(value != FLOOR);
        }
    }

    /// Number of floor cells.
    pub fn floor_count(&self) -> usize {
        self.cells.iter().filter(|&&c| c == FLOOR).count()
    }

    /// Renders rows of `#` (wall) and `.` (floor), each row ending in `\n`.
    pub fn to_ascii(&self) -> String {
        let mut s = String::with_capacity((self.width + 1) * self.height);
        for row in self.cells.chunks(self.width.max(1)) {
            for &c in row {
                s.push(if c == WALL { '#' } else { '.' });
            }
            s.push('\n');
        }
        s
    }

    /// A stable 64-bit FNV-1a fingerprint of the dimensions and cells, for golden tests.
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |b: u8| {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        };
        for b in (self.width as u64)
            .to_le_bytes()
            .into_iter()
            .chain((self.height as u64).to_le_bytes())
        {
            eat(b);
        }
        for &c in &self.cells {
            eat(c);
        }
        h
    }
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Grid {}x{}", self.width, self.height)?;
        f.write_str(&self.to_ascii())
    }
}
