//! The six axis directions of a grid (2D models use the first four).

/// One of the six axis directions of a grid; 2D models use only the first four.
///
/// `y` grows downwards (image rows), `z` grows away from the viewer (3D layers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Towards `x - 1`.
    Left = 0,
    /// Towards `x + 1`.
    Right = 1,
    /// Towards `y - 1`.
    Up = 2,
    /// Towards `y + 1`.
    Down = 3,
    /// Towards `z - 1`.
    Back = 4,
    /// Towards `z + 1`.
    Front = 5,
}

impl Direction {
    /// All six directions in index order.
    pub const ALL: [Direction; 6] = [
        Direction::Left,
        Direction::Right,
        Direction::Up,
        Direction::Down,
        Direction::Back,
        Direction::Front,
    ];

    /// The direction's index (0..6).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction with the given index; `None` past 5.
    pub fn from_index(index: usize) -> Option<Direction> {
        Self::ALL.get(index).copied()
    }

    /// The opposite direction.
    #[inline]
    pub fn opposite(self) -> Direction {
        Self::ALL[self.index() ^ 1]
    }

    /// The unit offset `(dx, dy, dz)`.
    pub fn offset(self) -> (isize, isize, isize) {
        match self {
            Direction::Left => (-1, 0, 0),
            Direction::Right => (1, 0, 0),
            Direction::Up => (0, -1, 0),
            Direction::Down => (0, 1, 0),
            Direction::Back => (0, 0, -1),
            Direction::Front => (0, 0, 1),
        }
    }
}
